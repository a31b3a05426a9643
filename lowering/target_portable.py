"""Copies without TDM: what gfx950, gfx942 and cuda:90 share.

A descriptor is not a value of the lowered code: the lowering tracks where it points
(:class:`~gemm_opt.lowering.context.Desc`) and a copy addresses the block itself. A copy
is a masked load of the block (out-of-bounds elements read zero) into shared memory:
straight to LDS (``ttg.async_copy_global_to_local``: gfx950's direct-to-LDS loads,
cuda:90's ``cp.async``), one ``ttg.async_commit_group`` per copy (a fused copy is one
group) so that ``tile.async_tdm_wait {num}`` is ``ttg.async_wait {num}`` unchanged; or
through registers (``tt.load`` then ``ttg.local_store``), complete when it returns, so
waits vanish. A false pred skips the copy under ``scf.if`` (the buffer keeps its data).
"""

from __future__ import annotations

from typing import Any

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect.tile import TensorDescType
from gemm_opt.lowering.access import block_access, masked_load, no_cache_policy
from gemm_opt.lowering.context import Desc, HandOffContext, TargetStrategy


class PortableCopies(TargetStrategy):
    """Descriptors known to the lowering only; copies as masked loads of the block."""

    def __init__(self, direct_copies: bool = False) -> None:
        #: Copies go straight to shared memory (else through registers).
        self.direct_copies = direct_copies

    def make_descriptor(self, ctx: HandOffContext, op: Any, info: Desc) -> Any:
        ctx.descs[op.result] = info
        return None

    def update_descriptor(
        self, ctx: HandOffContext, op: Any, src: Desc | None, info: Desc | None
    ) -> Any:
        if info is None:
            raise ctx.fail(op, ctx.untracked())
        ctx.descs[op.result] = info
        return None

    def copy(self, ctx: HandOffContext, op: Any, pred: ir.Value | None) -> None:
        self.copy_block(ctx, op, [(op.desc, op.dest)], pred)

    def fused_copy(self, ctx: HandOffContext, op: Any) -> None:
        # Equivalent mutant: strict=False; the verifier gives one destination per descriptor.
        self.copy_block(ctx, op, list(zip(op.descs, op.dests, strict=True)), None)

    def wait(self, ctx: HandOffContext, op: Any, num: int) -> None:
        if self.direct_copies:
            ctx.b.create_async_wait_group(num)
        # Register copies are complete when issued.

    def copy_block(
        self,
        ctx: HandOffContext,
        op: Any,
        members: list[tuple[ir.Value, ir.Value]],
        pred: ir.Value | None,
    ) -> None:
        """Each member's block, guarded by its descriptor's and the user's pred."""
        infos = []
        for desc, _dest in members:
            info = ctx.descs.get(desc)
            if info is None:
                raise ctx.fail(op, ctx.untracked())
            infos.append(info)
        user = None if pred is None else ctx.v(pred)
        # Equivalent mutant: strict=False; infos has one entry per member (the loop above).
        for (desc, dest), info in zip(members, infos, strict=True):
            # A false pred makes the copy a no-op (the buffer keeps its data),
            # so it guards the member rather than masking it to zeros.
            cond = ctx.and_all([p for p in (info.pred, user) if p is not None])
            saved = None
            if cond is not None:
                if_op = ctx.b.create_if_op([], cond, False)
                saved = ctx.b.get_insertion_point()
                ctx.b.set_insertion_point_to_start(if_op.get_then_block())
            self._copy_member(ctx, op, desc.type, info, ctx.v(dest))
            if saved is not None:
                ctx.b.restore_insertion_point(saved)
        if self.direct_copies:
            # One group per copy (a fused copy is one), as TDM waits count copies.
            ctx.b.create_async_commit_group()

    def _copy_member(
        self, ctx: HandOffContext, op: Any, dtype: TensorDescType, info: Desc, dest: Any
    ) -> None:
        shape = list(dtype.shape)
        elem = dtype.element_type
        layout = ctx.blocked(shape, ctx.bits(elem, op))
        origin = info.origin or [ctx.const(0)] * len(shape)
        extents = info.bounds or info.shape
        addr, mask = block_access(
            ctx, op, shape, layout, info.base, extents, info.strides, info.unit, origin
        )
        zero = ctx.zeros(shape, elem, layout, op)
        if self.direct_copies:
            policy = no_cache_policy(ctx)
            ctx.b.create_async_copy_global_to_local(dest, addr, mask, zero, policy, False)
            return
        val = masked_load(ctx, addr, mask, zero)
        ctx.b.create_local_store(dest, val)


__all__ = ["PortableCopies"]
