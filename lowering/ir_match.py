"""Small questions the hand-off asks of tile IR: which op defines a value, which constant
it is, what a function argument states, and the warp-predicate pattern of a copy."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from gemm_opt.core.contract import DIVISIBILITY, TRITON_DIVISIBILITY
from gemm_opt.core.ext_compat import cast, ir
from gemm_opt.core.targets import VECTOR_BYTES

#: Argument attributes that state a divisibility fact (tile's and Triton's).
DIVISIBILITY_ATTRS = (DIVISIBILITY, TRITON_DIVISIBILITY)


def defining_any(value: ir.Value) -> ir.Operation | None:
    """The op defining ``value`` (None for a block argument)."""
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def defining_op(value: ir.Value, name: str) -> ir.Operation | None:
    """The op defining ``value`` if it is named ``name``."""
    op = defining_any(value)
    return op if op is not None and op.name == name else None


def const_int(value: ir.Value | None) -> int | None:
    if value is None:
        return None
    op = defining_op(value, "arith.constant")
    if op is None:
        return None
    a = cast(op.attributes["value"], ir.IntegerAttr)
    return None if a is None else ir.IntegerAttr(a).value


def commuted(op: ir.Operation) -> list[tuple[ir.Value, ir.Value]]:
    a, b = op.operands[0], op.operands[1]
    return [(a, b), (b, a)]


def match_warp_test(pred: ir.Value, chain: set[ir.Operation]) -> tuple[int, int] | None:
    """``((warp_id ^ anchor) & free_mask) == 0`` -> (anchor, free_mask), adding its ops."""
    cmp = defining_op(pred, "arith.cmpi")
    if cmp is None or ir.IntegerAttr(cmp.attributes["predicate"]).value != 0:
        return None
    for masked, zero in commuted(cmp):
        if const_int(zero) != 0:
            continue
        andi = defining_op(masked, "arith.andi")
        if andi is None:
            continue
        for x, fm in commuted(andi):
            free_mask = const_int(fm)
            if free_mask is None:
                continue
            ops = {
                cmp,
                andi,
                defining_op(zero, "arith.constant"),
                defining_op(fm, "arith.constant"),
            }
            if defining_op(x, "tile.warp_id") is not None:
                chain |= ops | {defining_op(x, "tile.warp_id")}
                return 0, free_mask
            xor = defining_op(x, "arith.xori")
            if xor is None:
                continue
            for w, an in commuted(xor):
                anchor = const_int(an)
                wid = defining_op(w, "tile.warp_id")
                if anchor is not None and wid is not None:
                    chain |= ops | {xor, wid, defining_op(an, "arith.constant")}
                    return anchor, free_mask
    return None


def user_of(use: Any) -> ir.Operation:
    """The operation of an operand use."""
    owner = use.owner
    # Equivalent mutant: negated; an OpView and its ir.Operation compare and hash alike.
    return owner.operation if hasattr(owner, "operation") else owner


def dead_ops(
    candidates: set[ir.Operation], stripped: Mapping[ir.Operation, ir.Value | None]
) -> set[ir.Operation]:
    """The candidates all of whose uses are by other dead candidates or by the copies
    whose preds were stripped (``stripped``: copy -> the user's pred it keeps). A kept
    user's pred stays, and what it reads with it, even when it is part of a warp test
    (``user_pred & on`` with ``on`` for ``user_pred``)."""
    kept = {defining_any(v) for v in stripped.values() if v is not None}
    dead = set(candidates) - kept
    changed = True
    while changed:
        changed = False
        for op in list(dead):
            for r in op.results:
                for use in r.uses:
                    user = use.owner
                    # Equivalent mutant: negated; an OpView and its ir.Operation compare and
                    # hash alike.
                    user = user.operation if hasattr(user, "operation") else user
                    if user not in dead and user not in stripped:
                        dead.discard(op)
                        changed = True
                        break
                # Equivalent mutant: negated or 'in'; every candidate (a warp test's
                # cmpi, andi, xori, constants, tile.warp_id) has one result.
                if op not in dead:
                    break
    return dead


def whole_vectors(value: ir.Value, elem_bytes: int, vector_bytes: int = VECTOR_BYTES) -> bool:
    """Whether ``value`` elements of ``elem_bytes`` bytes are provably a multiple of
    ``vector_bytes`` (a constant, or an argument whose stated divisibility is): a
    copy row bounded or strided by it moves in whole vectors of that many bytes
    (16 bytes: 8 elements of a 16-bit type, 16 of an 8-bit one)."""
    c = const_int(value)
    n = c if c is not None else arg_divisibility(value)
    # Equivalent mutant: >=; no element is narrower than a byte (the descriptor's
    # verifier), and tma_facts_ok refuses a width of 0 itself.
    return elem_bytes > 0 and n * elem_bytes % vector_bytes == 0


def arg_divisibility(value: ir.Value) -> int:
    """The divisibility a function argument states (``tile.divisibility`` or
    ``tt.divisibility``); 1 for anything else."""
    owner = value.owner
    if not isinstance(owner, ir.Block):
        return 1
    fn = owner.owner
    fn = fn.operation if hasattr(fn, "operation") else fn
    if fn.name != "func.func" or "arg_attrs" not in fn.attributes:
        return 1
    idx = ir.BlockArgument(value).arg_number
    stated = stated_divisibility(ir.DictAttr(ir.ArrayAttr(fn.attributes["arg_attrs"])[idx]))
    return 1 if stated is None else stated


def stated_divisibility(attrs: ir.DictAttr) -> int | None:
    """The divisibility an argument's attributes state: the lcm of its positive
    ``tile.divisibility`` and ``tt.divisibility`` (every stated fact holds); None
    when neither states one (a 0 or a negative value is no fact)."""
    stated = [ir.IntegerAttr(attrs[name]).value for name in DIVISIBILITY_ATTRS if name in attrs]
    # Equivalent mutant: > 1; a stated 1 changes no lcm.
    stated = [d for d in stated if d > 0]
    return math.lcm(*stated) if stated else None


def same_type(a: Any, b: Any) -> bool:
    """Whether two Triton types are the same (types are uniqued; pybind
    compares the wrappers, so compare what they denote)."""
    # Equivalent mutant: 'and'; Triton 3.9's types compare equal whenever they print alike.
    return a == b or str(a) == str(b)


def signed(value: int, bits: int) -> int:
    """``value`` as a signed ``bits``-bit integer (what Triton's int builders take)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def loc_filename(loc: ir.Location) -> str:
    """The file of a file location ("" for other kinds)."""
    try:
        return str(loc.filename)
    except (AttributeError, ValueError, RuntimeError):
        return ""


__all__ = [
    "DIVISIBILITY_ATTRS",
    "arg_divisibility",
    "commuted",
    "const_int",
    "dead_ops",
    "defining_any",
    "defining_op",
    "loc_filename",
    "match_warp_test",
    "same_type",
    "signed",
    "stated_divisibility",
    "user_of",
    "whole_vectors",
]
