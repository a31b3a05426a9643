"""The hand-off of the barrier ops, barrier-tracked copies and TDM stores to
Triton (part of ``convert-tile-to-triton-gpu``; :data:`HANDLERS` joins its
handler table).

The tile semantics are Gluon's Hopper ``mbarrier`` (see
:mod:`gemm_opt.dialect.barrier`): a phase completes when its arrivals reach
the init count and every byte announced by ``tile.barrier_expect`` has been
delivered by the copies tracked on the barrier.

**cuda:90** is that model, op for op: ``ttng.init_barrier`` (then
``fence.proxy.async``, so TMA sees the initialised barrier),
``ttng.barrier_expect`` (``mbarrier.arrive.expect_tx``),
``ttng.arrive_barrier``, ``ttng.wait_barrier`` (``mbarrier.try_wait.parity``).
A barrier-tracked copy is a TMA copy that completes its bytes on the barrier
(``ttng.async_tma_copy_global_to_local``, ``cp.async.bulk.tensor ...
mbarrier::complete_tx::bytes``). The TDM store is a TMA store:
``ttng.fence_async_shared`` (the TMA engine must see what registers wrote to
the buffer), then ``ttng.async_tma_copy_local_to_global``
(``cp.async.bulk.tensor`` in its ``global.shared`` form); a
``tile.async_tdm_wait`` in a function that stores also waits until every
store has read its buffer (``ttng.async_tma_store_wait {pendings = 0}``: at
most ``num`` operations in flight then holds whatever the loads do). Their
descriptors become TMA descriptors and their buffers NVMMA shared layouts
(:func:`prescan_barriers`), with or without ``lds-copies=tma``; what TMA
cannot take (bounds, a descriptor not made in the function, rank other than
2) is an error at the op. Under ``lds-copies=tma`` the untracked copies'
ring of barriers leaves tracked copies out of its count
(:mod:`gemm_opt.lowering.tma_plan`): both kinds mix in one function.

**gfx1250** has LDS barriers without a transaction count: a TDM copy on a
barrier arrives once per warp that issues it, when its data has landed (each
warp's TDM instruction carries the barrier), and ``amdg.arrive_barrier
{count}`` arrives ``count`` times from each warp (Triton 3.9.0 emits an
unpredicated ``llvm.amdgcn.ds.atomic.barrier.arrive.rtn.b64`` per wave). The
byte model maps onto it exactly when every tracked copy is *covered* by the
expect before it: in one block, the ops on that barrier value after a
``tile.barrier_expect`` are the tracked copies that deliver exactly its bytes,
issued by all ``nw`` warps (no ``warp_used_hint`` narrower than the warps, no
``pred``, a block of at least ``nw`` elements). With ``M`` the most copies one
expect covers in the module, one tile arrival is ``S = nw * M`` hardware
arrivals: ``init {count = C}`` initialises ``C * M`` (times the ``nw`` warps
that arrive), ``arrive {count = c}`` arrives ``c * M`` from each warp, and an
expect covering ``n`` copies arrives ``M - n`` from each warp at once, so the
phase completes exactly when the tile phase would: after the arrivals and
after the ``n * nw`` arrivals of the copies' landed data. Anything outside
that pattern is an error at the op. The TDM store is
``amdg.async_tdm_copy_local_to_global`` (``tensor_store_from_lds``) and its
wait the shared ``amdg.async_tdm_wait`` (``s_wait_tensorcnt``); that counter
also counts tracked copies, which the tile wait does not, so the wait is
only ever stronger than the tile op asks.

gfx950 and gfx942 have neither (the verifier refuses the ops for them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect.barrier import (
    MAX_ARRIVALS,
    AsyncTDMCopyLocalToGlobalOp,
    BarrierAllocOp,
    BarrierArriveOp,
    BarrierExpectOp,
    BarrierIndexOp,
    BarrierInitOp,
    BarrierWaitOp,
    LocalStoreOp,
)
from gemm_opt.dialect.tile import AsyncTDMCopyGlobalToLocalOp, AsyncTDMWaitOp, element_bits
from gemm_opt.lowering.tma_plan import TmaRefusal
from gemm_opt.passes.common import descriptor_root

COPY = AsyncTDMCopyGlobalToLocalOp.OPERATION_NAME
STORE = AsyncTDMCopyLocalToGlobalOp.OPERATION_NAME
EXPECT = BarrierExpectOp.OPERATION_NAME
BARRIER_OPS = (
    BarrierInitOp.OPERATION_NAME,
    EXPECT,
    BarrierArriveOp.OPERATION_NAME,
    BarrierWaitOp.OPERATION_NAME,
    COPY,
)


class BarrierRefusal(Exception):
    """A barrier pattern the gfx1250 mapping cannot keep exact (why, at ``op``)."""

    def __init__(self, op: ir.Operation, message: str) -> None:
        super().__init__(message)
        self.op = op


@dataclass
class BarrierPlan:
    """gfx1250: how tile arrivals scale to per-warp hardware arrivals."""

    #: ``M``: the most tracked copies one expect covers (1 when none).
    per_arrival: int = 1
    #: expect -> the number of tracked copies it covers.
    covered: dict[ir.Operation, int] = field(default_factory=dict)
    #: Functions that issue TDM stores (cuda:90: their waits also wait for stores).
    storing: set[ir.Operation] = field(default_factory=set)


def _bytes(desc_type: Any) -> int:
    return int(numpy.prod(desc_type.shape)) * element_bits(desc_type.element_type) // 8


def _barrier_uses(op: ir.Operation) -> ir.Value | None:
    """The barrier value a barrier op or a tracked copy names (None: none)."""
    return op.opview.barrier if op.name in BARRIER_OPS else None


def _walk(op: ir.Operation):
    for region in op.regions:
        for block in region.blocks:
            yield block
            for inner in block.operations:
                yield from _walk(inner.operation)


def plan_barriers(
    module: ir.Operation,
    num_warps: int,
    tdm: bool,
    user_pred: Callable[[ir.Operation], ir.Value | None] = lambda op: op.opview.pred,
) -> BarrierPlan:
    """Find the functions that store, and on gfx1250 (``tdm``) the copies each
    expect covers; raise :class:`BarrierRefusal` where the mapping is not exact.
    ``user_pred`` gives a copy's own pred (a warp predicate the lowering strips
    is not the user's)."""
    plan = BarrierPlan()
    for fn in module.regions[0].blocks[0].operations:
        fn = fn.operation
        for block in _walk(fn):
            open_expect: dict[ir.Value, tuple[ir.Operation, int, int]] = {}
            for op in block.operations:
                op = op.operation
                if op.name == STORE:
                    plan.storing.add(fn)
                if not tdm:
                    continue
                bar = _barrier_uses(op)
                if bar is None:
                    continue
                if op.name == COPY:
                    _check_tracked_copy(op, num_warps, user_pred(op))
                    if bar not in open_expect:
                        raise BarrierRefusal(
                            op,
                            "on gfx1250 a barrier-tracked copy must follow the "
                            "tile.barrier_expect that announces its bytes, in the same block "
                            "(LDS barriers count arrivals, not bytes)",
                        )
                    expect, want, got = open_expect[bar]
                    open_expect[bar] = (expect, want, got + _bytes(op.opview.desc.type))
                    plan.covered[expect] = plan.covered.get(expect, 0) + 1
                    continue
                _close(open_expect, bar)
                if op.name == EXPECT:
                    if op.opview.pred is not None:
                        raise BarrierRefusal(
                            op, "a predicated tile.barrier_expect has no gfx1250 form yet"
                        )
                    open_expect[bar] = (op, op.opview.bytes, 0)
            for bar in list(open_expect):
                _close(open_expect, bar)
    plan.per_arrival = max(plan.covered.values(), default=1)
    return plan


def _close(open_expect: dict, bar: ir.Value) -> None:
    if bar not in open_expect:
        return
    expect, want, got = open_expect.pop(bar)
    if want != got:
        raise BarrierRefusal(
            expect,
            f"on gfx1250 the tracked copies after a tile.barrier_expect must deliver its "
            f"bytes: it announces {want}, the copies that follow it deliver {got}",
        )


def _check_tracked_copy(op: ir.Operation, num_warps: int, pred: ir.Value | None) -> None:
    view = op.opview
    hint = view.warp_used_hint
    if hint is not None and hint != (1 << num_warps) - 1:
        raise BarrierRefusal(
            op,
            "on gfx1250 a barrier-tracked copy is issued by every warp (each arrives once); "
            f"warp_used_hint = {hint:#x} leaves warps out",
        )
    if pred is not None:
        raise BarrierRefusal(op, "a predicated barrier-tracked copy has no gfx1250 form yet")
    if int(numpy.prod(view.desc.type.shape)) < num_warps:
        raise BarrierRefusal(
            op,
            f"on gfx1250 a barrier-tracked copy needs a block of at least {num_warps} elements "
            "(one per warp: every warp must arrive)",
        )


# ---- handlers ------------------------------------------------------------------------


def prescan_barriers(low: Any) -> None:
    """Before any type is converted, on cuda:90: a barrier-tracked copy is a
    TMA copy and a TDM store a TMA store, so the buffers they write or read
    take NVMMA shared layouts (the set of the buffers wgmma reads), and the
    descriptors they use get TMA descriptors."""
    if not low.target.nvidia:
        return
    for block in _walk(low.module):
        for op in block.operations:
            op = op.operation
            if op.name == STORE or (op.name == COPY and op.opview.barrier is not None):
                if len(op.opview.desc.type.shape) == 2:  # the rank TMA takes here
                    low.wgmma_shared.add(str(op.opview.desc.type.layout_attr))
                low.tma_descs.add(descriptor_root(op.opview.desc)[0])


def _plan(low: Any) -> BarrierPlan:
    if low.barrier_plan is None:
        try:
            low.barrier_plan = plan_barriers(
                low.module, low.num_warps, low.target.tdm, lambda op: low.user_pred(op.opview)
            )
        except BarrierRefusal as e:
            raise low.fail(e.op, str(e)) from None
    return low.barrier_plan


def _supported(low: Any, op: Any, what: str) -> None:
    if not (low.target.tdm or low.target.nvidia):
        raise low.fail(op, f"{what} needs TDM (gfx1250) or TMA (cuda:90), not {low.target.name}")


def _pred(low: Any, op: Any) -> Any:
    return low.b.get_int1(True) if op.pred is None else low.v(op.pred)


def barrier_type(low: Any, shape: list[int]) -> Any:
    layout = low.layout(low.tt.layouts.MBarrierLayout())
    return low.b.get_shared_mem_desc_ty(low.i64(), shape, layout, shape)


def lower_barrier_alloc(low: Any, op: Any) -> Any:
    _supported(low, op, "a shared-memory barrier")
    return low.b.create_local_alloc(barrier_type(low, [op.result.type.num, 1]))


def lower_barrier_index(low: Any, op: Any) -> Any:
    return low.b.create_memdesc_index(barrier_type(low, [1]), low.v(op.ring), low.v(op.index))


def lower_barrier_init(low: Any, op: Any) -> None:
    _supported(low, op, "a shared-memory barrier")
    bar = low.v(op.barrier)
    if low.target.nvidia:
        low.b.create_mbarrier_init(bar, op.count)
        low.b.create_fence_async_shared(False)
        return
    count = op.count * _plan(low).per_arrival * low.num_warps
    if count > MAX_ARRIVALS:
        raise low.fail(
            op,
            f"count {op.count} is {count} warp arrivals on gfx1250 ({low.num_warps} warps, "
            f"{_plan(low).per_arrival} copies per expect), more than {MAX_ARRIVALS}",
        )
    low.b.create_lds_barrier_init(bar, count)


def lower_barrier_expect(low: Any, op: Any) -> None:
    _supported(low, op, "a shared-memory barrier")
    bar = low.v(op.barrier)
    if low.target.nvidia:
        low.b.create_mbarrier_expect(bar, op.bytes, _pred(low, op))
        return
    plan = _plan(low)
    rest = plan.per_arrival - plan.covered.get(op.operation, 0)
    if rest > 0:
        low.b.create_lds_barrier_arrive(bar, rest)


def lower_barrier_arrive(low: Any, op: Any) -> None:
    _supported(low, op, "a shared-memory barrier")
    bar = low.v(op.barrier)
    if low.target.nvidia:
        low.b.create_mbarrier_arrive(bar, op.count, _pred(low, op))
        return
    count = op.count * _plan(low).per_arrival
    if op.pred is None:
        low.b.create_lds_barrier_arrive(bar, count)
        return
    if_op = low.b.create_if_op([], low.v(op.pred), False)
    saved = low.b.get_insertion_point()
    low.b.set_insertion_point_to_start(if_op.get_then_block())
    low.b.create_lds_barrier_arrive(bar, count)
    low.b.restore_insertion_point(saved)


def _phase(low: Any, op: Any) -> Any:
    phase = low.v(op.phase)
    if ir.IntegerType(op.phase.type).width == 1:
        phase = low.b.create_int_cast(phase, low.i32(), False)
    return phase


def lower_barrier_wait(low: Any, op: Any) -> None:
    _supported(low, op, "a shared-memory barrier")
    bar = low.v(op.barrier)
    if low.target.nvidia:
        low.b.create_mbarrier_wait(bar, _phase(low, op), _pred(low, op), [])
        return
    if op.pred is None:
        low.b.create_lds_barrier_wait(bar, _phase(low, op))
        return
    if_op = low.b.create_if_op([], low.v(op.pred), False)
    saved = low.b.get_insertion_point()
    low.b.set_insertion_point_to_start(if_op.get_then_block())
    low.b.create_lds_barrier_wait(bar, _phase(low, op))
    low.b.restore_insertion_point(saved)


def lower_make_desc(low: Any, op: Any) -> Any:
    """The main lowering's descriptor; on cuda:90 also a TMA descriptor when a
    tracked copy or a TDM store uses it (``lds-copies=tma`` makes one for all)."""
    result = low.lower_make_desc(op)
    info = low.descs.get(op.result)
    if low.target.nvidia and info is not None and info.tma is None and op.result in low.tma_descs:
        info.tma = low.tma_descriptor(op, info)
    return result


def _tma_info(low: Any, op: Any, what: str) -> Any:
    """The descriptor of a TMA copy or store (refused where TMA cannot take it)."""
    try:
        low.tma_refusal(op)
    except TmaRefusal as e:
        raise low.fail(op, f"{what} on cuda:90: {e}") from None
    info = low.descs.get(op.desc)
    if info is None or info.tma is None:
        raise low.fail(op, low._untracked())
    return info


def lower_copy(low: Any, op: Any) -> None:
    """A copy without a barrier is the main lowering's; a tracked one is ours."""
    if op.barrier is None:
        low.lower_copy(op)
        return
    if low.target.nvidia:
        info = _tma_info(low, op, "a barrier-tracked copy is a TMA copy")
        user = low.user_pred(op)
        preds = [p for p in (info.pred, None if user is None else low.v(user)) if p is not None]
        pred = low.b.create_and(*preds) if len(preds) == 2 else (preds or [None])[0]
        coords = info.origin or [low.const(0)] * len(op.desc.type.shape)
        low.b.create_async_tma_copy_global_to_local(
            info.tma,
            list(coords),
            low.v(op.barrier),
            low.v(op.dest),
            low.b.get_int1(True) if pred is None else pred,
            False,
            None,
        )
        return
    if not low.target.tdm:
        raise low.fail(op, f"a barrier-tracked copy needs TDM (gfx1250), not {low.target.name}")
    _plan(low)  # checks that the copy is covered by an expect
    info = low.descs.get(op.desc)
    if info is not None and info.pred is not None:
        raise low.fail(
            op,
            "on gfx1250 a barrier-tracked copy's descriptor takes no pred (a copy that does "
            "not issue would not arrive)",
        )
    low.b.create_async_tdm_copy_global_to_local(
        low.v(op.desc), low.v(op.dest), low.v(op.barrier), low._cache(op), None
    )


def lower_store(low: Any, op: Any) -> None:
    _supported(low, op, "a TDM store")
    if low.target.tdm:
        low.b.create_async_tdm_copy_local_to_global(
            low.v(op.desc), low.v(op.src), low.tt.ir.value(), low._cache(op)
        )
        return
    info = _tma_info(low, op, "a TDM store is a TMA store")
    if info.pred is not None:
        raise low.fail(op, "a TMA store takes no pred on its descriptor")
    if "cache" in op.operation.attributes:
        raise low.fail(op, "a TMA store takes no cache modifier here")
    coords = info.origin or [low.const(0)] * len(op.desc.type.shape)
    low.b.create_fence_async_shared(False)
    low.b.create_async_tma_copy_local_to_global(info.tma, list(coords), low.v(op.src))


def lower_wait(low: Any, op: Any) -> None:
    """The main lowering's wait; on cuda:90, in a function that stores, the
    TMA stores are waited for as well (their own counter)."""
    low.lower_wait(op)
    if not low.target.nvidia:
        return
    fn = op.operation
    while fn.name != "func.func":
        fn = fn.parent
    if fn in _plan(low).storing:
        low.b.create_async_tma_store_wait(0, True)


def lower_local_store(low: Any, op: Any) -> None:
    low.b.create_local_store(low.v(op.dest), low.v(op.value))


HANDLERS = {
    BarrierAllocOp.OPERATION_NAME: lower_barrier_alloc,
    BarrierIndexOp.OPERATION_NAME: lower_barrier_index,
    BarrierInitOp.OPERATION_NAME: lower_barrier_init,
    BarrierExpectOp.OPERATION_NAME: lower_barrier_expect,
    BarrierArriveOp.OPERATION_NAME: lower_barrier_arrive,
    BarrierWaitOp.OPERATION_NAME: lower_barrier_wait,
    LocalStoreOp.OPERATION_NAME: lower_local_store,
    STORE: lower_store,
    "tile.make_tensor_descriptor": lower_make_desc,
    # These extend the main lowering's handlers (TMA descriptors, tracked copies, store waits).
    COPY: lower_copy,
    AsyncTDMWaitOp.OPERATION_NAME: lower_wait,
}

__all__ = ["HANDLERS", "BarrierPlan", "BarrierRefusal", "plan_barriers", "prescan_barriers"]
