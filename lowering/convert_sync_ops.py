"""The hand-off of the tile synchronization ops to Triton (part of
``convert-tile-to-triton-gpu``; the same on every target).

* ``tile.num_programs`` -> ``tt.get_num_programs``.
* ``tile.atomic_rmw`` -> a scalar ``tt.atomic_rmw`` (add, xchg, max, min)
  with the op's ``sem`` and ``scope``. The tile op's semantics are the
  program's: a release orders *every* thread's earlier global writes, but
  Triton's scalar atomic is issued by one thread, so a release (or acq_rel)
  is preceded by a CTA barrier (``gpu.barrier``), which makes the other
  threads' writes happen-before it (release cumulativity). On the acquire
  side Triton broadcasts the old value through shared memory behind a
  barrier, so every thread's later reads follow the acquire.
* ``tile.load_scalar`` -> a scalar ``tt.load`` (device-side sizes).
* ``tile.atomic_add_block`` -> a masked tensor ``tt.atomic_rmw fadd`` over
  the block's pointers (the ``tile.store_block`` addressing and masks).
"""

from __future__ import annotations

from typing import Any

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect.sync import AtomicAddBlockOp, AtomicRmwOp, LoadScalarOp, NumProgramsOp
from gemm_opt.lowering.access import access_layout, no_cache_policy, op_block_access
from gemm_opt.lowering.context import Handler, HandOffContext

_KINDS = {"add": "ADD", "xchg": "XCHG", "max": "MAX", "min": "MIN"}
_SEMS = {
    "relaxed": "RELAXED",
    "acquire": "ACQUIRE",
    "release": "RELEASE",
    "acq_rel": "ACQUIRE_RELEASE",
}
_SCOPES = {"cta": "CTA", "gpu": "GPU", "sys": "SYSTEM"}


def _sem_scope(ctx: HandOffContext, op: Any) -> tuple[Any, Any]:
    tir = ctx.tt.ir
    sem = getattr(tir.MEM_SEMANTIC, _SEMS[op.sem])
    scope = getattr(tir.MEM_SYNC_SCOPE, _SCOPES[op.scope])
    return sem, scope


def lower_num_programs(ctx: HandOffContext, op: Any) -> Any:
    return ctx.b.create_get_num_programs(ir.IntegerAttr(op.operation.attributes["axis"]).value)


def lower_atomic_rmw(ctx: HandOffContext, op: Any) -> Any:
    b = ctx.b
    base, index, value = (ctx.v(x) for x in op.operation.operands)
    sem, scope = _sem_scope(ctx, op)
    if op.sem in ("release", "acq_rel"):
        b.create_barrier()
    ptr = b.create_addptr(base, index)
    kind = getattr(ctx.tt.ir.ATOMIC_OP, _KINDS[op.kind])
    return b.create_atomic_rmw(kind, ptr, value, b.get_int1(True), sem, scope)


def lower_atomic_add_block(ctx: HandOffContext, op: Any) -> None:
    rt = ir.RankedTensorType(op.value.type)
    shape = list(rt.shape)
    elem = rt.element_type
    layout = access_layout(ctx, op, rt, shape, elem)
    value = ctx.v(op.value)
    vt = ctx.tensor(shape, ctx.elem(elem, op), layout)
    if str(value.get_type()) != str(vt):
        value = ctx.b.create_convert_layout(vt, value)
    ptrs, mask = op_block_access(ctx, op, shape, layout)
    sem, scope = _sem_scope(ctx, op)
    ctx.b.create_atomic_rmw(ctx.tt.ir.ATOMIC_OP.FADD, ptrs, value, mask, sem, scope)


def lower_load_scalar(ctx: HandOffContext, op: Any) -> Any:
    b = ctx.b
    base, index = (ctx.v(x) for x in op.operation.operands)
    return b.create_load(b.create_addptr(base, index), no_cache_policy(ctx), False)


HANDLERS: dict[str, Handler] = {
    LoadScalarOp.OPERATION_NAME: lower_load_scalar,
    NumProgramsOp.OPERATION_NAME: lower_num_programs,
    AtomicRmwOp.OPERATION_NAME: lower_atomic_rmw,
    AtomicAddBlockOp.OPERATION_NAME: lower_atomic_add_block,
}

__all__ = ["HANDLERS"]
