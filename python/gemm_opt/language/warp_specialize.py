"""Shared-memory barriers and warp specialization in the front end, as Gluon
spells them (``mbarrier.*``, ``gl.warp_specialize``).

```python
ready = tl.allocate_mbarrier(NUM_STAGES)
tl.mbarrier.init(ready.index(0), count=1)

def consumer(bufs, ready, empty, ...):   # the default partition: the kernel's warps
    tl.mbarrier.wait(ready.index(s), phase)
    ...
    tl.mbarrier.arrive(empty.index(s))
    return acc

def producer(ptr, bufs, ready, empty, ...):   # a worker: its own warps
    tl.mbarrier.wait(empty.index(s), phase ^ 1)
    tl.mbarrier.expect(ready.index(s), nbytes)
    tl.async_copy(desc, bufs.index(s), barrier=ready.index(s))

acc = tl.warp_specialize(
    [(consumer, (bufs, ready, empty, ...)), (producer, (ptr, bufs, ready, empty, ...))],
    [1],     # worker_num_warps
    [24],    # worker_num_regs (optional)
)
```

:func:`warp_specialize` traces the default partition first (its return value
is the op's: None, a value or a tuple), then each worker in a
``tile.warp_partition`` of its warp count. The traced values among the
workers' arguments are the op's captures (each worker's block receives all of
them); Python values (constexprs, layouts) pass through as they are, so a
worker specialises on them (Gluon's caveat does not apply: no argument tuple
turns them into tensors). Inside a worker, :func:`tl.num_warps` is the
worker's, constants are made in the worker (it is isolated from above), and a
traced value of the enclosing kernel that is not one of its arguments is an
error at the call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import barrier as bar_ops
from gemm_opt.dialect import warp_specialize as ws_ops
from gemm_opt.dialect.tile import MBarrierType
from gemm_opt.language.arguments import (
    I32_MAX,
    call_user,
    constexpr_ints,
    i32_attr,
    is_int,
    sequence,
)
from gemm_opt.language.builder import current
from gemm_opt.language.dtypes import int32, int64
from gemm_opt.language.errors import fail, user_pos
from gemm_opt.language.layouts import is_pow2
from gemm_opt.language.values import Tensor, Value, int_operand, pred_operand


class MBarrier(Value):
    """One shared-memory barrier (``!tile.mbarrier<i64>``)."""


class MBarrierRing(Value):
    """A ring of shared-memory barriers (``tl.allocate_mbarrier``)."""

    def __init__(self, handle: ir.Value, dtype_: Any, num: int) -> None:
        super().__init__(handle, dtype_)
        self.num = num

    def _with(self, handle: ir.Value) -> Any:
        return MBarrierRing(handle, self.dtype, self.num)

    def index(self, i: Any) -> MBarrier:
        """Barrier ``i`` of the ring."""
        if isinstance(i, int) and not 0 <= i < self.num:
            raise fail(f"barrier index {i} is out of range for a ring of {self.num}")
        b = current()
        t = MBarrierType.get(ir.IntegerType.get_signless(64))
        idx = int_operand(i, int32, "barrier index")
        op = bar_ops.BarrierIndexOp(self.handle, idx, t, loc=b.loc())
        return MBarrier(b.checked(op).result, int64)


def allocate_mbarrier(num: int) -> MBarrierRing:
    """A ring of ``num`` shared-memory barriers (Gluon: ``allocate_shared_memory(
    gl.int64, [num, 1], MBarrierLayout())``)."""
    if not is_int(num) or not 1 <= num <= bar_ops.MAX_RING:
        raise fail(f"allocate_mbarrier takes 1 to {bar_ops.MAX_RING} barriers, got {num!r}")
    b = current()
    t = bar_ops.MBarrierRingType.get(ir.IntegerAttr.get(ir.IntegerType.get_signless(32), num))
    op = bar_ops.BarrierAllocOp(t, loc=b.loc())
    return MBarrierRing(b.checked(op).result, int64, num)


def _barrier(v: Any, what: str) -> MBarrier:
    if not isinstance(v, MBarrier):
        raise fail(f"{what} must be one barrier of a ring (ring.index(i)), got {v!r}")
    return v


def _init(bar: MBarrier, count: int) -> None:
    b = current()
    op = bar_ops.BarrierInitOp(_barrier(bar, "mbarrier.init barrier").handle, loc=b.loc())
    op.operation.attributes["count"] = i32_attr(
        count, "mbarrier.init count", 1, bar_ops.MAX_ARRIVALS
    )
    b.checked(op)


def _expect(bar: MBarrier, nbytes: int, pred: Any = None) -> None:
    b = current()
    h = _barrier(bar, "mbarrier.expect barrier").handle
    op = bar_ops.BarrierExpectOp(h, pred=pred_operand(pred), loc=b.loc())
    op.operation.attributes["bytes"] = i32_attr(
        nbytes, "mbarrier.expect bytes", 1, bar_ops.MAX_BYTES
    )
    b.checked(op)


def _arrive(bar: MBarrier, count: int = 1, pred: Any = None) -> None:
    b = current()
    h = _barrier(bar, "mbarrier.arrive barrier").handle
    op = bar_ops.BarrierArriveOp(h, pred=pred_operand(pred), loc=b.loc())
    op.operation.attributes["count"] = i32_attr(
        count, "mbarrier.arrive count", 1, bar_ops.MAX_ARRIVALS
    )
    b.checked(op)


def _wait(bar: MBarrier, phase: Any, pred: Any = None) -> None:
    b = current()
    h = _barrier(bar, "mbarrier.wait barrier").handle
    ph = int_operand(phase, int32, "mbarrier.wait phase")
    b.checked(bar_ops.BarrierWaitOp(h, ph, pred=pred_operand(pred), loc=b.loc()))


#: ``tl.mbarrier.init / expect / arrive / wait`` (Gluon's ``mbarrier`` module).
mbarrier = SimpleNamespace(init=_init, expect=_expect, arrive=_arrive, wait=_wait)


# ---- warp specialization ------------------------------------------------------------


def _segments(n: int, cap: int) -> ir.Attribute:
    """The segment sizes of ``n`` of ``cap`` optional operands or results."""
    return ir.DenseI32ArrayAttr.get([1] * n + [0] * (cap - n))


def _pair(item: Any, i: int) -> tuple[Callable[..., Any], tuple]:
    if not isinstance(item, tuple | list) or len(item) != 2:
        raise fail(f"warp_specialize partition {i} must be (function, args), got {item!r}")
    fn, args = item
    if not callable(fn):
        raise fail(f"warp_specialize partition {i}'s function is not callable: {fn!r}")
    if not isinstance(args, tuple | list):
        raise fail(f"warp_specialize partition {i}'s arguments must be a tuple, got {args!r}")
    return fn, tuple(args)


def _yields(out: Any) -> tuple[list[Value], bool]:
    """The default partition's return value as values, and whether it was one."""
    if out is None:
        return [], False
    single = not isinstance(out, tuple | list)
    values = [out] if single else list(out)
    for v in values:
        if not isinstance(v, Value):
            raise fail(
                "the default partition must return None, a traced value or a tuple of "
                f"them, got {out!r}"
            )
    return values, single


def warp_specialize(
    functions_and_args: Sequence[Any],
    worker_num_warps: Sequence[int],
    worker_num_regs: Sequence[int] | None = None,
) -> Any:
    """Run ``functions_and_args[0]`` on the kernel's warps and each other
    ``(function, args)`` on a worker of ``worker_num_warps[i]`` warps,
    concurrently (``tile.warp_specialize``); returns what the default
    partition returns. See the module doc."""
    b = current()
    pos = user_pos()
    items = sequence(functions_and_args, "warp_specialize partitions")
    if len(items) < 2:
        raise fail("warp_specialize needs the default partition and at least one worker")
    pairs = [_pair(item, i) for i, item in enumerate(items)]
    workers = pairs[1:]
    warps = constexpr_ints(worker_num_warps, "worker_num_warps", 1)
    if len(warps) != len(workers):
        raise fail(f"warp_specialize got {len(workers)} workers but {len(warps)} warp counts")
    for i, n in enumerate(warps):
        if not is_pow2(n):
            raise fail(f"worker_num_warps[{i}] must be a power of two >= 1, got {n!r}")
    regs = None
    if worker_num_regs is not None:
        regs = constexpr_ints(worker_num_regs, "worker_num_regs", 0, I32_MAX)
        if len(regs) != len(workers):
            raise fail(
                f"warp_specialize got {len(workers)} workers but {len(regs)} register counts"
            )
    captures: list[Value] = []
    for i, (_, args) in enumerate(workers, start=1):
        for a in args:
            if isinstance(a, Tensor):
                raise fail(
                    f"warp_specialize partition {i} takes a register tensor {a!r}; workers "
                    "take scalars, pointers, shared buffers, barriers and descriptors "
                    "(store the tensor to a shared buffer and pass that)"
                )
            if isinstance(a, Value):
                captures.append(a)
    if len(captures) > ws_ops.MAX_CAPTURES:
        raise fail(
            f"warp_specialize workers capture {len(captures)} traced values, at most "
            f"{ws_ops.MAX_CAPTURES}"
        )
    handles = [v.handle for v in captures]
    loc = pos.location()

    def make(result_types: list[ir.Type]) -> ir.Operation:
        return ir.Operation.create(
            ws_ops.WarpSpecializeOp.OPERATION_NAME,
            results=result_types,
            operands=handles,
            attributes={
                "operandSegmentSizes": _segments(len(handles), ws_ops.MAX_CAPTURES),
                "resultSegmentSizes": _segments(len(result_types), ws_ops.MAX_RESULTS),
            },
            regions=2,
            loc=loc,
        )

    # The default partition first (its results are the op's), in a probe op.
    probe = make([])
    default = probe.regions[0].blocks.append()
    default_fn, default_args = pairs[0]
    with ir.InsertionPoint(default):
        values, single = _yields(call_user(default_fn, default_args, "warp_specialize partition 0"))
    if len(values) > ws_ops.MAX_RESULTS:
        raise fail(
            f"the default partition returns {len(values)} values, at most {ws_ops.MAX_RESULTS}"
        )
    op = make([v.handle.type for v in values])
    block = op.regions[0].blocks.append()
    for inner in list(default.operations):
        block.append(inner)
    with ir.InsertionPoint(block):
        ir.Operation.create(
            ws_ops.WarpYieldOp.OPERATION_NAME,
            operands=[v.handle for v in values],
            attributes={"operandSegmentSizes": _segments(len(values), ws_ops.MAX_RESULTS)},
            loc=loc,
        )
    probe.erase()
    holder = op.regions[1].blocks.append()
    for i, ((fn, args), n) in enumerate(zip(workers, warps, strict=True)):
        with ir.InsertionPoint(holder):
            part = ir.Operation.create(ws_ops.WarpPartitionOp.OPERATION_NAME, regions=1, loc=loc)
        part.attributes["num_warps"] = i32_attr(n, f"worker_num_warps[{i}]", 1)
        if regs is not None:
            part.attributes["num_regs"] = i32_attr(regs[i], f"worker_num_regs[{i}]")
        body = part.regions[0].blocks.append(*[h.type for h in handles])
        inner_of = {id(v): v._with(arg) for v, arg in zip(captures, body.arguments, strict=True)}
        mapped = tuple(inner_of.get(id(a), a) if isinstance(a, Value) else a for a in args)
        with b.scope(body, n), ir.InsertionPoint(body):
            out = call_user(fn, mapped, f"warp_specialize partition {i + 1}")
            if out is not None:
                raise fail(f"warp_specialize worker {i} must return None, got {out!r}")
            ir.Operation.create(ws_ops.WarpReturnOp.OPERATION_NAME, loc=loc)
    with ir.InsertionPoint(holder):
        ir.Operation.create(ws_ops.PartitionsEndOp.OPERATION_NAME, loc=loc)
    b.verify(op)
    results = [v._with(r) for v, r in zip(values, op.results, strict=True)]
    if not results:
        return None
    return results[0] if single else tuple(results)


__all__ = ["MBarrier", "MBarrierRing", "allocate_mbarrier", "mbarrier", "warp_specialize"]
