"""The NVIDIA Hopper strategy (cuda:90): wgmma or mma.sync, TMA or ``cp.async``, mbarriers.

No TDM and the hints dropped. The MMA is chosen per accumulator layout
(:mod:`gemm_opt.lowering.sm90_mma`); copies are TMA copies (:mod:`gemm_opt.lowering.sm90_tma`)
when planned, else :class:`~gemm_opt.lowering.target_portable.PortableCopies`
(``cp.async`` with the divisibility facts, else registers). Shared buffers wgmma or TMA
read or write take ``#ttg.nvmma_shared`` with the widest swizzle dividing a row; every
other the ``#ttg.swizzled_shared`` that ``ldmatrix`` reads without bank conflicts. An
accumulator layout becomes ``#ttg.nvidia_mma`` v3 (wgmma) or v2 (``m16n8k16``), dot
operands take ``kWidth = 32 / element bits``. Barrier ops are Gluon's Hopper
``mbarrier`` op for op; in a function that issues TMA stores a wait also waits for them.
"""

from __future__ import annotations

from typing import Any

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect.tile import WmmaAttr
from gemm_opt.lowering.barrier_plan import BarrierPlan, BarrierRefusal, plan_barriers
from gemm_opt.lowering.context import CopyCounter, Desc, HandOffContext
from gemm_opt.lowering.layouts import mma_swizzle, nvmma_swizzle, shared_order
from gemm_opt.lowering.sm90_mma import MmaOption, WgmmaChoice
from gemm_opt.lowering.sm90_tma import TmaCopies
from gemm_opt.lowering.target_portable import PortableCopies


class NvidiaSm90Strategy(PortableCopies):
    """cuda:90: the strategy's state is the MMA choice and the TMA copies."""

    def __init__(
        self, direct_copies: bool = False, mma: MmaOption = MmaOption.AUTO, tma: str = "auto"
    ) -> None:
        super().__init__(direct_copies)
        self.mma = WgmmaChoice(mma)
        self.tma = TmaCopies()
        #: ``lds-copies``: ``tma`` (required), ``auto`` (where the facts allow), else none.
        self.tma_mode = tma
        #: Which functions issue TMA stores (their waits wait for stores too); made
        #: before lowering, where it also refuses expects the copies cannot complete.
        self.barrier_plan: BarrierPlan | None = None

    @property
    def counter(self) -> CopyCounter | None:  # type: ignore[override]
        return self.tma.counter

    # -- layouts --

    def mma_layout(self, ctx: HandOffContext, attr: WmmaAttr, op: Any) -> Any:
        lay = ctx.tt.layouts
        if str(attr) in self.mma.acc:
            warps, instr = self.mma.acc[str(attr)]
            return lay.NVMMADistributedLayout([3, 0], warps, instr)
        return lay.NVMMADistributedLayout([2, 0], list(attr.warps_per_cta()), [16, 8])

    def dot_k_width(self, ctx: HandOffContext, fields: dict, elem_bits: int) -> int:
        # Triton's rule for mma v2: 32 bits of K per register.
        return max(1, 32 // elem_bits)

    def shared_layout(self, ctx: HandOffContext, t: Any, op: Any) -> Any:
        lay = ctx.tt.layouts
        attr = t.layout_attr
        if str(attr) in self.mma.shared:
            # Read by wgmma: NVMMA shared (see the module docstring).
            bits = ctx.bits(t.element_type, op)
            # Rank 2 for a buffer ring too: its leading dim counts buffers.
            return lay.NVMMASharedLayout(nvmma_swizzle(t.shape, bits), bits, 2)
        order = shared_order(attr, len(t.shape))
        vec, per_phase, max_phase = mma_swizzle(order, t.shape, ctx.bits(t.element_type, op))
        return lay.SwizzledSharedLayout(vec, per_phase, max_phase, order)

    def descriptor_values(self) -> bool:
        return self.tma.plan is not None

    def access_layout(self, ctx: HandOffContext, rt: Any, bits: int) -> bool:
        """32-bit values in an MMA accumulator layout keep it (stream-K's fp32 partial
        tiles: a quad of lanes covers whole 32-byte sectors there)."""
        return isinstance(rt.encoding, WmmaAttr) and bits == 32

    # -- before and around functions --

    def prescan_mma(self, ctx: HandOffContext, mmas: list[Any]) -> None:
        self.mma.choose(ctx, [op for op in mmas if op.operation.name == "tile.wmma"])
        self.mma.choose_async(ctx, mmas)

    def prescan_copies(self, ctx: HandOffContext) -> None:
        try:  # refuses an expect whose copies certainly deliver other bytes
            self.barrier_plan = plan_barriers(
                ctx.module, ctx.num_warps, False, lambda op: ctx.user_pred(op.opview)
            )
        except BarrierRefusal as e:
            raise ctx.fail(e.op, str(e)) from None
        self.tma.prescan_tracked(ctx, self.mma.shared)  # TMA stores read NVMMA buffers
        if self.tma_mode == "tma":
            self.tma.choose(ctx, self.mma.shared, required=True)
        elif self.tma_mode == "auto":
            self.tma.choose(ctx, self.mma.shared, required=False)

    def host_descriptors(self, ctx: HandOffContext, fn: ir.Operation) -> list[tuple[Any, Any]]:
        return self.tma.host_descriptors(fn)

    def host_descriptor_type(self, ctx: HandOffContext, op: Any) -> Any:
        return self.tma.desc_type(ctx, op, self.shared_layout(ctx, op.result.type, op))

    def begin_function(self, ctx: HandOffContext, fn: ir.Operation, new: Any) -> None:
        self.tma.begin_function(ctx, fn, new)

    def before_return(self, ctx: HandOffContext, op: Any) -> None:
        self.tma.before_return(ctx, op)

    # -- descriptors and copies --

    def make_descriptor(self, ctx: HandOffContext, op: Any, info: Desc) -> Any:
        if self.tma.plan is not None:
            self.tma.remade(ctx, op)
            info.tma = self._tma_descriptor(ctx, op, info)
        ctx.descs[op.result] = info
        if info.tma is None and op.result in self.tma.descs:
            # A tracked copy or a TDM store uses it.
            info.tma = self._tma_descriptor(ctx, op, info)
        return None

    def _tma_descriptor(self, ctx: HandOffContext, op: Any, info: Desc) -> Any:
        if op.operation in self.tma.host:
            return self.tma.host[op.operation]
        return self.tma.descriptor(ctx, op, info, self.shared_layout(ctx, op.result.type, op))

    def copy(self, ctx: HandOffContext, op: Any, pred: ir.Value | None) -> None:
        if self.tma.plan is not None:
            self.tma.copy(ctx, op, pred)
            return
        super().copy(ctx, op, pred)

    def tracked_copy(self, ctx: HandOffContext, op: Any) -> None:
        self.tma.tracked_copy(ctx, op, self.mma.shared)

    def store(self, ctx: HandOffContext, op: Any) -> None:
        self.tma.store(ctx, op, self.mma.shared)

    def wait(self, ctx: HandOffContext, op: Any, num: int) -> None:
        if not self.tma.wait(ctx, op, num):
            super().wait(ctx, op, num)
        fn = op.operation
        while fn.name != "func.func":
            fn = fn.parent
        assert self.barrier_plan is not None  # made before lowering
        if fn in self.barrier_plan.storing:
            ctx.b.create_async_tma_store_wait(0, True)

    # -- MMA --

    def wmma(self, ctx: HandOffContext, op: Any) -> Any:
        return self.mma.wmma(ctx, op)

    def async_wmma(self, ctx: HandOffContext, op: Any) -> Any:
        return self.mma.async_wmma(ctx, op)

    def async_in_flight(self, acc_layout: Any) -> bool:
        return str(acc_layout) in self.mma.acc

    def absorbs_load(self, op: Any) -> bool:
        return op.operation in self.mma.loads

    # -- mbarriers --

    def barriers(self) -> bool:
        return True

    def barrier_init(self, ctx: HandOffContext, op: Any, bar: Any) -> None:
        ctx.b.create_mbarrier_init(bar, op.count)
        ctx.b.create_fence_async_shared(False)

    def barrier_expect(self, ctx: HandOffContext, op: Any, bar: Any) -> None:
        ctx.b.create_mbarrier_expect(bar, op.bytes, _pred(ctx, op))

    def barrier_arrive(self, ctx: HandOffContext, op: Any, bar: Any) -> None:
        ctx.b.create_mbarrier_arrive(bar, op.count, _pred(ctx, op))

    def barrier_wait(self, ctx: HandOffContext, op: Any, bar: Any) -> None:
        ctx.b.create_mbarrier_wait(bar, _phase(ctx, op), _pred(ctx, op), [])


def _pred(ctx: HandOffContext, op: Any) -> Any:
    return ctx.true() if op.pred is None else ctx.v(op.pred)


def _phase(ctx: HandOffContext, op: Any) -> Any:
    phase = ctx.v(op.phase)
    if ir.IntegerType(op.phase.type).width == 1:
        phase = ctx.b.create_int_cast(phase, ctx.i32(), False)
    return phase


__all__ = ["NvidiaSm90Strategy"]
