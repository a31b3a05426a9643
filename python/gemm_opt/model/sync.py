"""Programs that talk to each other in the model: ``tile.num_programs``,
``tile.atomic_rmw``, ``tile.atomic_add_block`` and ``tile.load_scalar``.

The atomics make the function run its programs concurrently; their ordering
(``sem``, ``scope``) is :mod:`gemm_opt.model.concurrency`'s happens-before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gemm_opt.core.ext_compat import cast, ir
from gemm_opt.model.core import (
    Compiler,
    Exec,
    Program,
    op_where,
    operand_slots,
    result_slot,
    uniform,
)
from gemm_opt.model.errors import ModelError
from gemm_opt.model.memory import block_indices
from gemm_opt.model.registry import OpImpls
from gemm_opt.model.values import (
    Pointer,
    round_to,
    to_storage,
    value_elem,
    wrap_int,
)

IMPLS = OpImpls("sync")
"""The sync family's implementations."""


def _str_attr(op: Any, name: str, allowed: tuple[str, ...], default: str | None) -> str:
    """A string attribute of ``op`` checked against ``allowed``."""
    attrs = op.operation.attributes
    if name not in attrs:
        if default is None:
            raise ModelError(f"{op_where(op)}: requires the attribute '{name}'")
        return default
    a = cast(attrs[name], ir.StringAttr)
    value = None if a is None else ir.StringAttr(a).value
    if value not in allowed:
        raise ModelError(f"{op_where(op)}: '{name}' must be one of {', '.join(allowed)}")
    return value


def _segments(op: Any, sizes_if_absent: Sequence[int]) -> list[list[ir.Value]]:
    """The operand groups of ``op`` (``operandSegmentSizes``, else the given sizes)."""
    operands = list(op.operation.operands)
    attrs = op.operation.attributes
    if "operandSegmentSizes" in attrs:
        sizes = [int(x) for x in ir.DenseI32ArrayAttr(attrs["operandSegmentSizes"])]
    else:
        sizes = list(sizes_if_absent)
    if sum(sizes) != len(operands):
        raise ModelError(f"{op_where(op)}: malformed operand segments {sizes}")
    out, i = [], 0
    for n in sizes:
        out.append(operands[i : i + n])
        i += n
    return out


_RMW_KINDS = ("add", "xchg", "max", "min")
_SEMS = ("relaxed", "acquire", "release", "acq_rel")
_SCOPES = ("cta", "gpu", "sys")


@IMPLS.impl("tile.num_programs")
def _b_num_programs(c: Compiler, op: Any) -> Exec:
    r = result_slot(c, op)
    axis = ir.IntegerAttr(op.operation.attributes["axis"]).value
    if axis not in (0, 1, 2):
        raise ModelError(f"{op_where(op)}: axis must be 0, 1 or 2, got {axis}")

    def run(p: Program, mask: np.ndarray) -> None:
        p.env[r] = np.full(p.W, p.run.grid[axis], dtype=np.int64)

    return run


@IMPLS.impl("tile.atomic_rmw")
def _b_atomic_rmw(c: Compiler, op: Any) -> Exec:
    where = op_where(op)
    operands = operand_slots(c, op)
    if len(operands) != 3 or len(op.operation.results) != 1:
        raise ModelError(f"{where}: expected (base, index, value) -> old value")
    base, index, value = operands
    r = result_slot(c, op)
    kind = _str_attr(op, "kind", _RMW_KINDS, None)
    sem = _str_attr(op, "sem", _SEMS, None)
    scope = _str_attr(op, "scope", _SCOPES, None)
    elem, shape = value_elem(op.operation.results[0].type)
    if elem is None or not elem.is_int or shape is not None:
        raise ModelError(f"{where}: only scalar integer atomics are modelled")
    width = elem.width

    def wrap(v: int) -> int:
        return wrap_int(v, width)

    c.concurrent = True

    def run(p: Program, mask: np.ndarray) -> None:
        ptr: Pointer = p.env[base]
        off = int(uniform(ptr.offset, mask, "the base pointer", where))
        i = int(uniform(p.env[index], mask, "the atomic's index", where))
        v = int(uniform(p.env[value], mask, "the atomic's value", where))
        loc = off + i
        if not 0 <= loc < ptr.array.size:
            raise ModelError(
                f"{where}: atomic on '{ptr.name}'[{loc}] outside its {ptr.array.size}-element array"
            )
        sync = p.run.sync
        assert sync is not None  # every run has one
        old = sync.atomic_rmw(p.clock, ptr.array, ptr.name, loc, kind, v, wrap, sem, scope, where)
        p.env[r] = np.full(p.W, old, dtype=np.int64)

    return run


@IMPLS.impl("tile.load_scalar")
def _b_load_scalar(c: Compiler, op: Any) -> Exec:
    """``base[index]`` (i32), once per program: device-side sizes (group_lens)."""
    where = op_where(op)
    base, index = operand_slots(c, op)
    r = result_slot(c, op)

    def run(p: Program, mask: np.ndarray) -> None:
        sync = p.run.sync
        if sync is not None:
            sync.scheduler.point(p.clock)
        ptr: Pointer = p.env[base]
        loc = int(uniform(ptr.offset, mask, "the base pointer", where))
        loc += int(uniform(p.env[index], mask, "the index", where))
        if not 0 <= loc < ptr.array.size:
            raise ModelError(
                f"{where}: load of '{ptr.name}'[{loc}] outside its {ptr.array.size}-element array"
            )
        if sync is not None and sync.memory is not None:
            sync.memory.read(p.clock, ptr.array, ptr.name, np.array([loc]), where)
        p.env[r] = np.full(p.W, int(ptr.array[loc]), dtype=np.int64)

    return run


@IMPLS.impl("tile.atomic_add_block")
def _b_atomic_add_block(c: Compiler, op: Any) -> Exec:
    where = op_where(op)
    base_v, shape_v, stride_v, off_v, value_v = _segments(op, ())
    if len(base_v) != 1 or len(value_v) != 1:
        raise ModelError(f"{where}: expected one base and one value")
    elem, block = value_elem(value_v[0].type)
    if elem is None or block is None or elem.name not in ("f32", "f16", "bf16"):
        raise ModelError(f"{where}: atomic add takes f32, f16 or bf16 blocks")
    slots = (
        c.slot(base_v[0]),
        [c.slot(v) for v in shape_v],
        [c.slot(v) for v in stride_v],
        [c.slot(v) for v in off_v],
    )
    value = c.slot(value_v[0])
    sem = _str_attr(op, "sem", _SEMS, "relaxed")
    scope = _str_attr(op, "scope", _SCOPES, "gpu")
    c.concurrent = True

    def run(p: Program, mask: np.ndarray) -> None:
        if not mask.all():
            raise ModelError(
                f"{where}: atomic_add_block under warp-divergent control flow is not modelled"
            )
        sync = p.run.sync
        assert sync is not None  # every run has one
        sync.scheduler.point(p.clock)
        ptr, inside, idx = block_indices(p, mask, block, slots, where)
        add = np.asarray(p.env[value], dtype=np.float32)[inside]
        arr = ptr.array
        # Element-wise atomics: an fp32 add, then one rounding to the element
        # type; an element the block covers twice (stride 0) is added twice.
        if np.unique(idx).size == idx.size:
            arr[idx] = to_storage(round_to(arr[idx].astype(np.float32) + add, elem), elem)
        else:
            # Equivalent mutant: strict=False; idx and add are both the block's inside elements.
            for k, a in zip(idx.tolist(), add.tolist(), strict=True):
                # (a one-element array: bf16 rounding makes a 0-d value 1-d)
                total = np.array([np.float32(arr[k]) + np.float32(a)])
                arr[k] = to_storage(round_to(total, elem), elem)[0]
        sync.atomic_block(p.clock, arr, ptr.name, idx, sem, scope, where)

    return run


__all__ = [
    "IMPLS",
]
