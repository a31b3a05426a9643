"""The hand-off of the tile synchronization ops to Triton (part of
``convert-tile-to-triton-gpu``; :data:`HANDLERS` joins its handler table).

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

from typing import Any

from gemm_opt.core.ext_compat import ir

_KINDS = {"add": "ADD", "xchg": "XCHG", "max": "MAX", "min": "MIN"}
_SEMS = {
    "relaxed": "RELAXED",
    "acquire": "ACQUIRE",
    "release": "RELEASE",
    "acq_rel": "ACQUIRE_RELEASE",
}
_SCOPES = {"cta": "CTA", "gpu": "GPU", "sys": "SYSTEM"}


def _sem_scope(low: Any, op: Any) -> tuple[Any, Any]:
    tir = low.tt.ir
    sem = getattr(tir.MEM_SEMANTIC, _SEMS[op.sem])
    scope = getattr(tir.MEM_SYNC_SCOPE, _SCOPES[op.scope])
    return sem, scope


def lower_num_programs(low: Any, op: Any) -> Any:
    return low.b.create_get_num_programs(ir.IntegerAttr(op.operation.attributes["axis"]).value)


def lower_atomic_rmw(low: Any, op: Any) -> Any:
    b = low.b
    base, index, value = (low.v(x) for x in op.operation.operands)
    sem, scope = _sem_scope(low, op)
    if op.sem in ("release", "acq_rel"):
        b.create_barrier()
    ptr = b.create_addptr(base, index)
    kind = getattr(low.tt.ir.ATOMIC_OP, _KINDS[op.kind])
    return b.create_atomic_rmw(kind, ptr, value, b.get_int1(True), sem, scope)


def lower_atomic_add_block(low: Any, op: Any) -> None:
    rt = ir.RankedTensorType(op.value.type)
    shape = list(rt.shape)
    elem = rt.element_type
    layout = low._access_layout(op, rt, shape, elem)
    value = low.v(op.value)
    vt = low.tensor(shape, low.elem(elem, op), layout)
    if str(value.get_type()) != str(vt):
        value = low.b.create_convert_layout(vt, value)
    ptrs, mask = low._op_block_access(op, shape, layout)
    sem, scope = _sem_scope(low, op)
    low.b.create_atomic_rmw(low.tt.ir.ATOMIC_OP.FADD, ptrs, value, mask, sem, scope)


def lower_load_scalar(low: Any, op: Any) -> Any:
    b = low.b
    base, index = (low.v(x) for x in op.operation.operands)
    return b.create_load(b.create_addptr(base, index), low._no_cache_policy(), False)


HANDLERS = {
    "tile.load_scalar": lower_load_scalar,
    "tile.num_programs": lower_num_programs,
    "tile.atomic_rmw": lower_atomic_rmw,
    "tile.atomic_add_block": lower_atomic_add_block,
}

__all__ = ["HANDLERS"]
