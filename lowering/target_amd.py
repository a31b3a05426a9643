"""The AMD strategies: TDM and WMMA (gfx1250), and MFMA with portable copies (gfx950,
gfx942).

gfx1250: descriptors are ``tt.make_tensor_descriptor`` values; a copy is
``amdg.async_tdm_copy_global_to_local`` with its ``warp_used_hint`` (a user pred travels
in the descriptor, as Triton predicates TDM copies), a fused copy
``amdg.async_tdm_fused_copy_global_to_local``, a wait ``amdg.async_tdm_wait``;
``#tile.wmma_layout`` becomes ``#ttg.amd_wmma`` and warps have 32 lanes. Barriers are LDS
barriers, which count arrivals, not bytes (:mod:`gemm_opt.lowering.convert_barrier_ops`
has the mapping; :mod:`gemm_opt.lowering.barrier_plan` the analysis).

gfx950 and gfx942 have no TDM: copies are :class:`PortableCopies` (direct to LDS on gfx950
when the kernel states the alignment, else through registers), ``#tile.wmma_layout``
becomes ``#ttg.amd_mfma`` (the target table's version and K; ``16x16`` when a warp's
tile is narrower than 32), dot operands take the MFMA's ``kWidth``, warps have 64 lanes.
A partitioned shared layout keeps only its inner layout (partitions are a TDM notion),
and direct-to-LDS copies, which write each warp's 1 KiB contiguously, cannot write padded
rows: there a padded layout becomes the unswizzled ``swizzled_shared`` of 16-byte vectors.
"""

from __future__ import annotations

from typing import Any

from gemm_opt.core.ext_compat import ir
from gemm_opt.core.scaling import MX_BLOCK
from gemm_opt.core.targets import Target
from gemm_opt.dialect.barrier import MAX_ARRIVALS, BarrierWaitOp
from gemm_opt.dialect.scaled_mma import ScaledWmmaOp
from gemm_opt.dialect.tile import (
    PaddedSharedAttr,
    PartitionedSharedAttr,
    SharedType,
    VerifyError,
    WmmaAttr,
)
from gemm_opt.lowering.barrier_plan import (
    BARRIER_OPS,
    BarrierPlan,
    BarrierRefusal,
    plan_barriers,
)
from gemm_opt.lowering.context import Desc, HandOffContext, TargetStrategy
from gemm_opt.lowering.ir_match import const_int, signed
from gemm_opt.lowering.layouts import (
    row_major,
    shared_layout,
    unswizzled_layout,
    wmma_warp_bases,
)
from gemm_opt.lowering.target_portable import PortableCopies


def _transposed(ctx: HandOffContext, attr: WmmaAttr, op: Any) -> bool:
    """``attr``'s ``transposed`` on the target: the dialect's rule
    (:meth:`~gemm_opt.dialect.tile.WmmaAttr.transposed`), its refusal located at ``op``."""
    try:
        return attr.transposed(ctx.target)
    except VerifyError as e:
        raise ctx.fail(op, str(e)) from None


class AmdTdmStrategy(TargetStrategy):
    """gfx1250: TDM copies and stores, WMMA v3, LDS barriers."""

    def __init__(self) -> None:
        #: How tile arrivals scale to per-warp arrivals (built on first use).
        self.barrier_plan: BarrierPlan | None = None

    # -- layouts --

    def mma_layout(self, ctx: HandOffContext, attr: WmmaAttr, op: Any) -> Any:
        v = attr.field_values()
        return ctx.tt.layouts.AMDWMMALayout(
            int(v.get("version", 3)),
            _transposed(ctx, attr, op),
            wmma_warp_bases(list(attr.warps_per_cta())),
            [],
            list(attr.instr_shape()),
        )

    def dot_k_width(self, ctx: HandOffContext, fields: dict, elem_bits: int) -> int:
        return fields.get("k_width", 8)

    def scale_layout(self, ctx: HandOffContext, attr: Any, shape: Any, op: Any) -> Any:
        """Gluon's ``get_wmma_scale_layout``: each lane holds the scales of its rows."""
        acc = attr.parent_layout()
        m, n, _ = acc.instr_shape()
        return ctx.tt.layouts.amd_wmma_scale_layout(
            attr.op_idx(),
            list(shape),
            m,
            n,
            _transposed(ctx, acc, op),
            MX_BLOCK,
            [],
            wmma_warp_bases(list(acc.warps_per_cta())),
            [],
        )

    def shared_layout(self, ctx: HandOffContext, t: Any, op: Any) -> Any:
        """TDM writes every tile layout."""
        return shared_layout(ctx.tt.layouts, t.layout_attr, t.shape)

    def descriptor_values(self) -> bool:
        return True

    def stores_from_mma(self) -> bool:
        return True

    # -- descriptors and copies --

    def make_descriptor(self, ctx: HandOffContext, op: Any, info: Desc) -> Any:
        if const_int(op.strides[-1]) != 1:
            raise ctx.fail(
                op,
                "TDM copies need a unit innermost stride: the last stride must be the constant 1",
            )
        ctx.descs[op.result] = info
        return ctx.b.create_make_tensor_descriptor(
            ctx.must_type(op.result.type, op),
            info.base,
            info.shape,
            info.strides,
            ctx.tt.ir.PADDING_OPTION.PAD_ZERO,
        )

    def update_descriptor(
        self, ctx: HandOffContext, op: Any, src: Desc | None, info: Desc | None
    ) -> Any:
        offsets = [ctx.v(x) for x in op.offsets]
        bounds = [ctx.v(x) for x in op.bounds]
        pred = None if op.pred is None else ctx.v(op.pred)
        if pred is not None and info is not None:
            pred = info.pred  # the source's pred ANDed in (Triton's update sets the field)
        desc = ctx.v(op.desc)
        if bounds:
            if src is None:
                raise ctx.fail(
                    op,
                    "bounds on a descriptor carried through block arguments are not "
                    "supported (its origin is unknown here)",
                )
            rel = bounds
            if src.origin is not None:
                zero = ctx.const(0)
                # Equivalent mutant: strict=False; the verifier gives one bound and the
                # origin one entry per dim.
                rel = [
                    ctx.b.create_maxsi(ctx.b.create_sub(b, o), zero)
                    for b, o in zip(bounds, src.origin, strict=True)
                ]
            desc = self._update(ctx, desc, set_bounds=rel)
        new = self._update(
            ctx,
            desc,
            add_offsets=offsets,
            pred=None if pred is None else ctx.b.create_int_cast(pred, ctx.i32(), False),
            clamp=True,
        )
        if info is not None:
            ctx.descs[op.result] = info
        return new

    def _update(self, ctx, desc, add_offsets=(), set_bounds=(), pred=None, clamp=False) -> Any:
        return ctx.b.create_update_tensor_descriptor(
            desc,
            list(add_offsets),
            list(set_bounds),
            ctx.tt.ir.value() if pred is None else pred,
            clamp,
        )

    def copy(self, ctx: HandOffContext, op: Any, pred: ir.Value | None) -> None:
        desc = ctx.v(op.desc)
        if pred is not None:
            info = ctx.descs.get(op.desc)
            if info is None:
                raise ctx.fail(
                    op,
                    "a pred on a copy whose descriptor is carried through block arguments "
                    "is not supported (Triton predicates through the descriptor)",
                )
            p = ctx.v(pred)
            if info.pred is not None:
                p = ctx.b.create_and(info.pred, p)
            zero = ctx.const(0)
            rank = len(op.desc.type.shape)
            desc = self._update(
                ctx,
                desc,
                add_offsets=[zero] * rank,
                pred=ctx.b.create_int_cast(p, ctx.i32(), False),
            )
        hint = op.warp_used_hint
        # Equivalent mutant: signed(hint, 33); a hint addresses at most 16 warps (the
        # verifier), so its bit 31 is clear and both read it alike.
        ctx.b.create_async_tdm_copy_global_to_local(
            desc,
            ctx.v(op.dest),
            ctx.tt.ir.value(),
            ctx.cache(op),
            None if hint is None else signed(hint, 32),
        )

    def fused_copy(self, ctx: HandOffContext, op: Any) -> None:
        # Equivalent mutant: signed(h, 33); as for a single copy's hint.
        ctx.b.create_async_tdm_fused_copy_global_to_local(
            [ctx.v(d) for d in op.descs],
            [ctx.v(d) for d in op.dests],
            [signed(h, 32) for h in op.warp_used_hints],
            ctx.cache(op),
        )

    def tracked_copy(self, ctx: HandOffContext, op: Any) -> None:
        self.plan(ctx)  # checks that the copy is covered by an expect
        info = ctx.descs.get(op.desc)
        if info is not None and info.pred is not None:
            raise ctx.fail(
                op,
                "on gfx1250 a barrier-tracked copy's descriptor takes no pred (a copy that does "
                "not issue would not arrive)",
            )
        ctx.b.create_async_tdm_copy_global_to_local(
            ctx.v(op.desc), ctx.v(op.dest), ctx.v(op.barrier), ctx.cache(op), None
        )

    def store(self, ctx: HandOffContext, op: Any) -> None:
        ctx.b.create_async_tdm_copy_local_to_global(
            ctx.v(op.desc), ctx.v(op.src), ctx.tt.ir.value(), ctx.cache(op)
        )

    def wait(self, ctx: HandOffContext, op: Any, num: int) -> None:
        ctx.b.create_async_tdm_wait(num)

    # -- LDS barriers --

    def plan(self, ctx: HandOffContext) -> BarrierPlan:
        if self.barrier_plan is None:
            try:
                self.barrier_plan = plan_barriers(
                    ctx.module, ctx.num_warps, True, lambda op: ctx.user_pred(op.opview)
                )
            except BarrierRefusal as e:
                raise ctx.fail(e.op, str(e)) from None
        return self.barrier_plan

    def barriers(self) -> bool:
        return True

    def barrier_init(self, ctx: HandOffContext, op: Any, bar: Any) -> None:
        count = op.count * self.plan(ctx).per_arrival * ctx.num_warps
        if count > MAX_ARRIVALS:
            raise ctx.fail(
                op,
                f"count {op.count} is {count} warp arrivals on gfx1250 ({ctx.num_warps} warps, "
                f"{self.plan(ctx).per_arrival} copies per expect), more than {MAX_ARRIVALS}",
            )
        ctx.b.create_lds_barrier_init(bar, count)

    def barrier_expect(self, ctx: HandOffContext, op: Any, bar: Any) -> None:
        plan = self.plan(ctx)
        # Equivalent mutant: default 1; every expect the plan accepts covers a copy (its
        # bytes are at least 1, and the copies after it must deliver them).
        rest = plan.per_arrival - plan.covered.get(op.operation, 0)
        if rest > 0:
            ctx.b.create_lds_barrier_arrive(bar, rest)

    def barrier_arrive(self, ctx: HandOffContext, op: Any, bar: Any) -> None:
        count = op.count * self.plan(ctx).per_arrival
        if op.pred is None:
            ctx.b.create_lds_barrier_arrive(bar, count)
            return
        self._guarded(ctx, op, lambda: ctx.b.create_lds_barrier_arrive(bar, count))

    def barrier_wait(self, ctx: HandOffContext, op: Any, bar: Any) -> None:
        if op.pred is None:
            ctx.b.create_lds_barrier_wait(bar, _phase(ctx, op))
            return
        self._guarded(ctx, op, lambda: ctx.b.create_lds_barrier_wait(bar, _phase(ctx, op)))

    def _guarded(self, ctx: HandOffContext, op: Any, build: Any) -> None:
        if_op = ctx.b.create_if_op([], ctx.v(op.pred), False)
        saved = ctx.b.get_insertion_point()
        ctx.b.set_insertion_point_to_start(if_op.get_then_block())
        build()
        ctx.b.restore_insertion_point(saved)

    def check_partition(self, ctx: HandOffContext, worker: Any) -> None:
        """An LDS barrier counts one arrival per warp, and its count is scaled by the
        function's warps: a worker of other warps cannot arrive on it exactly."""
        warps = worker.warps()
        if warps == ctx.num_warps:
            return
        found: list[ir.Operation] = []

        def visit(inner: ir.Operation) -> ir.WalkResult:
            if (
                inner.name in BARRIER_OPS
                and inner.name != BarrierWaitOp.OPERATION_NAME
                and inner.opview.barrier is not None
            ):
                found.append(inner)
                return ir.WalkResult.INTERRUPT
            return ir.WalkResult.ADVANCE

        worker.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        if found:
            raise ctx.fail(
                found[0],
                f"on gfx1250 a barrier arrival must come from {ctx.num_warps} warps (the "
                f"function's: LDS barriers count per-warp arrivals), but this partition has "
                f"{warps}; give the partition {ctx.num_warps} warps or arrive from the default "
                "partition",
            )


def _phase(ctx: HandOffContext, op: Any) -> Any:
    """A barrier wait's phase as i32."""
    phase = ctx.v(op.phase)
    if ir.IntegerType(op.phase.type).width == 1:
        phase = ctx.b.create_int_cast(phase, ctx.i32(), False)
    return phase


class AmdMfmaStrategy(PortableCopies):
    """gfx950 and gfx942: MFMA, portable copies, no barriers."""

    def __init__(self, direct_copies: bool = False) -> None:
        super().__init__(direct_copies)
        #: str(#tile.wmma_layout) -> smallest per-warp M/N tile of its dots.
        self.min_warp_tile: dict[str, int] = {}
        #: str(#tile.wmma_layout) -> the inputs of its dots: 16-bit, 8-bit or
        #: block-scaled 8-bit (each its own MFMA instruction).
        self.input_kind: dict[str, str] = {}

    def prescan_mma(self, ctx: HandOffContext, mmas: list[Any]) -> None:
        for op in mmas:
            c = ir.RankedTensorType(op.c.type)
            acc = c.encoding
            if not isinstance(acc, WmmaAttr):
                continue
            wm, wn = acc.warps_per_cta()
            m, n = c.shape
            key = str(acc)
            # Equivalent mutant: 2 << 30 or 1 << 31; any start above every warp tile.
            self.min_warp_tile[key] = min(self.min_warp_tile.get(key, 1 << 30), m // wm, n // wn)
            a = op.a.type  # a register tensor, or the shared buffer of an async MMA
            elem = (
                a.element_type if isinstance(a, SharedType) else ir.RankedTensorType(a).element_type
            )
            kind = "16-bit" if ctx.bits(elem, op) == 16 else "8-bit"
            if op.operation.name == ScaledWmmaOp.OPERATION_NAME:
                kind = "block-scaled 8-bit"
            if self.input_kind.setdefault(key, kind) != kind:
                raise ctx.fail(
                    op,
                    f"on {ctx.target.name} an accumulator layout is one MFMA instruction: "
                    f"its MMAs cannot mix {self.input_kind[key]} and {kind} inputs (give "
                    "them distinct #tile.wmma_layout s)",
                )

    def _mfma_mn(self, attr: WmmaAttr) -> int:
        return 32 if self.min_warp_tile.get(str(attr), 32) >= 32 else 16

    def _mfma_k(self, t: Target, attr: WmmaAttr, mn: int) -> tuple[int, int]:
        """(instruction K, dot-operand kWidth) on ``t`` of the MMAs accumulating in ``attr``."""
        kind = self.input_kind.get(str(attr), "16-bit")
        if kind == "block-scaled 8-bit":
            return (t.mfma_mx_k32 if mn == 32 else t.mfma_mx_k16), t.mfma_mx_k_width
        if kind == "8-bit":
            return (t.mfma_fp8_k32 if mn == 32 else t.mfma_fp8_k16), t.mfma_fp8_k_width
        return (t.mfma_k32 if mn == 32 else t.mfma_k16), t.mfma_k_width

    def mma_layout(self, ctx: HandOffContext, attr: WmmaAttr, op: Any) -> Any:
        mn = self._mfma_mn(attr)
        k, _ = self._mfma_k(ctx.target, attr, mn)
        return ctx.tt.layouts.AMDMFMALayout(
            ctx.target.mfma_version,
            [mn, mn, k],
            _transposed(ctx, attr, op),
            list(attr.warps_per_cta()),
        )

    def stores_from_mma(self) -> bool:
        return True

    def dot_k_width(self, ctx: HandOffContext, fields: dict, elem_bits: int) -> int:
        parent = fields["parent"]
        return self._mfma_k(ctx.target, parent, self._mfma_mn(parent))[1]

    def scale_layout(self, ctx: HandOffContext, attr: Any, shape: Any, op: Any) -> Any:
        """Gluon's ``get_mfma_scale_layout`` (one MFMA tile per warp and step)."""
        acc = attr.parent_layout()
        return ctx.tt.layouts.amd_mfma_scale_layout(
            attr.op_idx(), list(shape), self._mfma_mn(acc), [1, 1], list(acc.warps_per_cta())
        )

    def shared_layout(self, ctx: HandOffContext, t: Any, op: Any) -> Any:
        lay = ctx.tt.layouts
        attr = t.layout_attr
        if isinstance(attr, PartitionedSharedAttr):
            inner = attr.field_values().get("layout")
            if inner is None:
                return unswizzled_layout(lay, row_major(len(t.shape)))
            attr = inner
        if self.direct_copies and isinstance(attr, PaddedSharedAttr):
            # Equivalent mutant: max(2, ...) or 129 // bits; a shared buffer's elements
            # are 8 to 64 bits wide (the verifier), so 128 // bits is 2 to 16 either way.
            vec = max(1, 128 // ctx.bits(t.element_type, op))
            return unswizzled_layout(lay, attr.to_layout().order, vec)
        return shared_layout(lay, attr, t.shape)


__all__ = ["AmdMfmaStrategy", "AmdTdmStrategy"]
