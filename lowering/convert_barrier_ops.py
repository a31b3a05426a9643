"""The hand-off of the barrier ops to Triton (part of ``convert-tile-to-triton-gpu``),
and the mapping of barrier-tracked copies and TDM stores, which
:mod:`gemm_opt.lowering.convert_copies` hands to the same target strategies
(:mod:`gemm_opt.lowering.target_nvidia`, :mod:`gemm_opt.lowering.target_amd`; the
analysis is :mod:`gemm_opt.lowering.barrier_plan`).

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
(chosen before any type is converted), with or without ``lds-copies=tma``; what TMA
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

from typing import Any

from gemm_opt.dialect.barrier import (
    BarrierAllocOp,
    BarrierArriveOp,
    BarrierExpectOp,
    BarrierIndexOp,
    BarrierInitOp,
    BarrierWaitOp,
)
from gemm_opt.lowering.context import Handler, HandOffContext


def _supported(ctx: HandOffContext, op: Any, what: str) -> None:
    if not ctx.strategy.barriers():
        raise ctx.fail(op, f"{what} needs TDM (gfx1250) or TMA (cuda:90), not {ctx.target.name}")


def lower_barrier_alloc(ctx: HandOffContext, op: Any) -> Any:
    _supported(ctx, op, "a shared-memory barrier")
    return ctx.b.create_local_alloc(ctx.barrier_type([op.result.type.num, 1]))


def lower_barrier_index(ctx: HandOffContext, op: Any) -> Any:
    return ctx.b.create_memdesc_index(ctx.barrier_type([1]), ctx.v(op.ring), ctx.v(op.index))


def lower_barrier_init(ctx: HandOffContext, op: Any) -> None:
    _supported(ctx, op, "a shared-memory barrier")
    ctx.strategy.barrier_init(ctx, op, ctx.v(op.barrier))


def lower_barrier_expect(ctx: HandOffContext, op: Any) -> None:
    _supported(ctx, op, "a shared-memory barrier")
    ctx.strategy.barrier_expect(ctx, op, ctx.v(op.barrier))


def lower_barrier_arrive(ctx: HandOffContext, op: Any) -> None:
    _supported(ctx, op, "a shared-memory barrier")
    ctx.strategy.barrier_arrive(ctx, op, ctx.v(op.barrier))


def lower_barrier_wait(ctx: HandOffContext, op: Any) -> None:
    _supported(ctx, op, "a shared-memory barrier")
    ctx.strategy.barrier_wait(ctx, op, ctx.v(op.barrier))


HANDLERS: dict[str, Handler] = {
    BarrierAllocOp.OPERATION_NAME: lower_barrier_alloc,
    BarrierIndexOp.OPERATION_NAME: lower_barrier_index,
    BarrierInitOp.OPERATION_NAME: lower_barrier_init,
    BarrierExpectOp.OPERATION_NAME: lower_barrier_expect,
    BarrierArriveOp.OPERATION_NAME: lower_barrier_arrive,
    BarrierWaitOp.OPERATION_NAME: lower_barrier_wait,
}

__all__ = ["HANDLERS"]
