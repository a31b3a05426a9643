"""Small tile kernels built op by op through the dialect's op builders.

Property tests of the passes build many variants of one kernel shape (random
copies, waits, loops and branches); they name the pieces here rather than
print them: :func:`kernel` makes a module with one function and an insertion
point before its return, :func:`copy`, :func:`fused_copy` and :func:`wait`
make the TDM ops with their attributes, :func:`for_loop` and :func:`region`
fill ``scf`` regions; :func:`ops_named` finds ops and :func:`after_passes`
runs passes on a copy. The fuzzer's generator (:mod:`support.fuzz.generate`)
builds its modules the same way and shares :func:`i32_attr`.

Every helper builds at the current insertion point and location (``with
ctx, ir.Location.unknown(), kernel.ip: ...``); the ops are verified when a
pass manager runs on the module.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from gemm_opt import dialect
from gemm_opt.core.contract import (
    NUM_WARPS,
    TARGET,
    THREADS_PER_WARP,
    WARP_USED_HINT,
    WARP_USED_HINTS,
)
from gemm_opt.core.ext_compat import arith, func, ir, scf
from gemm_opt.core.pipeline import Registry, build_pass_manager
from gemm_opt.dialect import tile
from gemm_opt.passes import PASSES


def i32_attr(value: int) -> ir.Attribute:
    """An ``i32`` attribute of ``value`` modulo 2**32 (masks above bit 31 wrap)."""
    value &= 0xFFFFFFFF
    if value >= 1 << 31:
        value -= 1 << 32
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), value)


def const(value: int, width: int = 32) -> ir.Value:
    """An ``arith.constant`` of a signless integer type."""
    t = ir.IntegerType.get_signless(width)
    return arith.ConstantOp(t, ir.IntegerAttr.get(t, value)).result


def block_type(shape: Sequence[int], element: ir.Type, layout: ir.Attribute) -> ir.RankedTensorType:
    """A block: shape, element type and shared layout."""
    return ir.RankedTensorType.get(list(shape), element, layout)


def desc_type(block: ir.RankedTensorType) -> ir.Type:
    return tile.TensorDescType.get(ir.TypeAttr.get(block))


def shared_type(block: ir.RankedTensorType) -> ir.Type:
    return tile.SharedType.get(ir.TypeAttr.get(block))


def ptr_type(element: ir.Type) -> ir.Type:
    return tile.PtrType.get(ir.TypeAttr.get(element))


@dataclass
class Kernel:
    """A module with one function; ``ip`` inserts before its return."""

    module: ir.Module
    fn: func.FuncOp
    args: list[ir.Value]
    ip: ir.InsertionPoint


def kernel(
    arg_types: Sequence[ir.Type],
    *,
    num_warps: int,
    name: str = "k",
    threads_per_warp: int | None = None,
    target: str | None = None,
) -> Kernel:
    """A module of ``num_warps`` warps with ``func.func @name(arg_types)``
    that only returns."""
    module = ir.Module.create()
    attrs = module.operation.attributes
    attrs[NUM_WARPS] = i32_attr(num_warps)
    if threads_per_warp is not None:
        attrs[THREADS_PER_WARP] = i32_attr(threads_per_warp)
    if target is not None:
        attrs[TARGET] = ir.StringAttr.get(target)
    with ir.InsertionPoint(module.body):
        fn = func.FuncOp(name, ir.FunctionType.get(list(arg_types), []))
    entry = fn.add_entry_block()
    with ir.InsertionPoint(entry):
        ret = func.ReturnOp([])
    return Kernel(module, fn, list(entry.arguments), ir.InsertionPoint(ret))


def copy(
    desc: ir.Value,
    dest: ir.Value,
    *,
    hint: int | None = None,
    pred: ir.Value | None = None,
    loc: ir.Location | None = None,
) -> ir.Operation:
    """``tile.async_tdm_copy_global_to_local`` of ``desc`` into ``dest``."""
    op = tile.AsyncTDMCopyGlobalToLocalOp(desc, dest, pred=pred, loc=loc).operation
    if hint is not None:
        op.attributes[WARP_USED_HINT] = i32_attr(hint)
    return op


def fused_copy(
    descs: Sequence[ir.Value],
    dests: Sequence[ir.Value],
    hints: Sequence[int],
    *,
    loc: ir.Location | None = None,
) -> ir.Operation:
    """``tile.async_tdm_fused_copy_global_to_local``: member i copies
    ``descs[i]`` into ``dests[i]`` with ``hints[i]``."""
    members = {f"desc{i}": d for i, d in enumerate(descs)}
    members |= {f"dest{i}": b for i, b in enumerate(dests)}
    op = tile.AsyncTDMFusedCopyGlobalToLocalOp(**members, loc=loc).operation
    signed = [ir.IntegerAttr(i32_attr(h)).value for h in hints]
    op.attributes[WARP_USED_HINTS] = ir.DenseI32ArrayAttr.get(signed)
    return op


def wait(num: int) -> ir.Operation:
    """``tile.async_tdm_wait {num}``: at most ``num`` copies left in flight."""
    op = tile.AsyncTDMWaitOp().operation
    op.attributes["num"] = i32_attr(num)
    return op


@contextmanager
def region(block: ir.Block) -> Iterator[None]:
    """Build into ``block`` of an ``scf`` op, ending it with ``scf.yield``."""
    with ir.InsertionPoint(block):
        yield
        scf.YieldOp([])


@contextmanager
def for_loop(lo: ir.Value, hi: ir.Value, step: ir.Value) -> Iterator[ir.Value]:
    """``scf.for`` without carried values; builds its body, gives the induction variable."""
    loop = scf.ForOp(lo, hi, step)
    with region(loop.body):
        yield loop.induction_variable


__all__ = [
    "Kernel",
    "block_type",
    "const",
    "copy",
    "desc_type",
    "for_loop",
    "fused_copy",
    "i32_attr",
    "kernel",
    "ptr_type",
    "region",
    "shared_type",
    "wait",
]


def ops_named(module: ir.Module, name: str) -> list[ir.Operation]:
    """Every op called ``name`` in ``module``, in pre-order."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == name:
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def after_passes(module: ir.Module, passes: Sequence[str]) -> ir.Module:
    """A copy of ``module`` (in a fresh context) after ``passes`` of the registry, each
    verified by the pass manager; ``module`` itself is left as it is."""
    text = module.operation.get_asm(print_generic_op_form=True)
    with dialect.make_context():
        copy = ir.Module.parse(text)
        if passes:
            pm = build_pass_manager(f"builtin.module({','.join(passes)})", Registry(passes=PASSES))
            pm.run(copy.operation)
    return copy
