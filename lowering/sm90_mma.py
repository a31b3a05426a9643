"""cuda:90's MMA choice: wgmma or mma.sync, per accumulator layout, in one place.

A ``#tile.wmma_layout`` becomes ``nvidia_mma`` v3 (wgmma) when every ``tile.wmma``
accumulating in it can take wgmma (:meth:`WgmmaChoice.wgmma_refusal`: both operands
single-use ``tile.local_load`` s of row-major rank-2 shared buffers, or of their
``[1, 0]`` transposed views, f16 or bf16 alike, or one 8-bit type read K-major (A an
(M, K) buffer, B the transposed view of an (N, K) one), whole warpgroups, a shape
:func:`~gemm_opt.lowering.layouts.wgmma_shape` accepts) and they agree on its shape; else
v2 (mma.sync). Then the MMA becomes ``ttng.warp_group_dot`` on the buffers themselves and
``ttng.warp_group_dot_wait {pendings = 0}``, and the loads vanish. ``tile.async_wmma``
becomes the ``warp_group_dot`` alone and ``tile.async_wmma_wait {num}`` its
``warp_group_dot_wait {pendings = num}``. The buffers wgmma reads take NVMMA shared
layouts. ``mma=wgmma`` makes every misfit an error, ``mma=mma_v2`` never picks wgmma.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from gemm_opt.core.contract import IMPRECISE_ACC
from gemm_opt.core.ext_compat import cast, ir
from gemm_opt.core.targets import TARGETS
from gemm_opt.dialect.async_ops import AsyncWmmaOp
from gemm_opt.dialect.tile import DotOperandAttr, SharedType, viewed_block
from gemm_opt.lowering.context import HandOffContext
from gemm_opt.lowering.ir_match import const_int, defining_op, user_of
from gemm_opt.lowering.layouts import element_bits, wgmma_buffer_refusal, wgmma_shape
from gemm_opt.passes.common import collect_ops, num_warps_of

#: The input types wgmma takes here: 16-bit floats and cuda:90's 8-bit ones
#: (the target table's ``fp8_types``).
WGMMA_INPUTS = ("f16", "bf16", *TARGETS["cuda:90"].fp8_types)


#: The K of one 8-bit wgmma (32 bytes of K).
WGMMA_FP8_K = 32
#: ``maxNumImpreciseAcc`` past any K: the MMA's whole sum in the tensor core.
NO_PROMOTION = 2**30


class MmaOption(StrEnum):
    """The ``mma`` option: which NVIDIA MMA a ``tile.wmma`` becomes on cuda:90."""

    AUTO = "auto"
    MMA_V2 = "mma_v2"
    WGMMA = "wgmma"


class WgmmaChoice:
    """Which MMAs, accumulator layouts, loads and buffers are wgmma's."""

    def __init__(self, mma: MmaOption) -> None:
        self.mma = mma
        #: str(#tile.wmma_layout) -> (warpsPerCTA, instrShape) of its ``nvidia_mma`` v3
        #: (absent: mma.sync).
        self.acc: dict[str, tuple[list[int], list[int]]] = {}
        #: str(tile shared layout) of buffers wgmma (or TMA) reads or writes: NVMMA shared.
        self.shared: set[str] = set()
        #: ``tile.wmma`` ops lowered to wgmma, and the ``tile.local_load`` s they absorb.
        self.ops: set[ir.Operation] = set()
        self.loads: set[ir.Operation] = set()
        #: ``tile.async_wmma`` ops lowered to an asynchronous wgmma.
        self.async_ops: set[ir.Operation] = set()

    def choose(self, ctx: HandOffContext, mmas: list[Any]) -> None:
        """Pick wgmma or mma.sync for each accumulator layout (the one place)."""
        if self.mma == MmaOption.MMA_V2:
            return
        by_layout: dict[str, list[Any]] = {}
        for op in mmas:
            by_layout.setdefault(str(ir.RankedTensorType(op.c.type).encoding), []).append(op)
        in_registers = self._register_operand_parents(ctx)
        for key, ops in by_layout.items():
            shapes = set()
            refusal = None
            for op in ops:
                refusal = self.wgmma_refusal(op)
                if refusal is not None:
                    break
                shapes.add(self._wgmma_shape(op))
            if refusal is None and len(shapes) > 1:
                refusal = "the MMAs sharing its accumulator layout need different wgmma shapes"
            if refusal is None and key in in_registers:
                refusal = (
                    "a dot-operand tensor of its layout is held in registers elsewhere "
                    "(only mma.sync has a register operand layout here)"
                )
            if refusal is not None:
                if self.mma == MmaOption.WGMMA:
                    raise ctx.fail(op, f"mma=wgmma: this MMA cannot use wgmma: {refusal}")
                continue
            warps, instr = next(iter(shapes))
            self.acc[key] = (list(warps), list(instr))
            for op in ops:
                self.ops.add(op.operation)
                for operand in (op.a, op.b):
                    load = defining_op(operand, "tile.local_load")
                    self.loads.add(load)
                    self.shared.add(str(viewed_block(load.opview.src).type.layout_attr))

    def _register_operand_parents(self, ctx: HandOffContext) -> set[str]:
        """str(#tile.wmma_layout) of every dot-operand tensor that is not the
        single-use ``tile.local_load`` of an MMA operand (wgmma would leave
        it in registers, in a layout only mma.sync gives it)."""
        parents: set[str] = set()

        def note(value: ir.Value, owner: Any) -> None:
            rt = cast(value.type, ir.RankedTensorType)
            enc = None if rt is None else ir.RankedTensorType(value.type).encoding
            if not isinstance(enc, DotOperandAttr):
                return
            uses = list(value.uses)
            absorbed = (
                owner is not None
                and owner.name == "tile.local_load"
                and len(uses) == 1
                and user_of(uses[0]).name == "tile.wmma"
            )
            if not absorbed:
                parents.add(str(enc.field_values().get("parent")))

        def visit(op: ir.Operation) -> ir.WalkResult:
            for r in op.results:
                note(r, op)
            for region in op.regions:
                for block in region.blocks:
                    for a in block.arguments:
                        note(a, None)
            return ir.WalkResult.ADVANCE

        ctx.module.walk(visit, ir.WalkOrder.PRE_ORDER)
        return parents

    def _wgmma_shape(self, op: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
        m, n = ir.RankedTensorType(op.c.type).shape
        a = ir.RankedTensorType(op.a.type)
        # Equivalent mutant: or 17; the hand-off verifies the module for cuda:90 first, so A
        # is f16, bf16 or an 8-bit float, whose width element_bits always gives.
        bits = element_bits(a.element_type) or 16
        warps, instr = wgmma_shape(m, n, a.shape[1], num_warps_of(op), bits)
        return tuple(warps), tuple(instr)

    def wgmma_refusal(self, op: Any) -> str | None:
        """Why a ``tile.wmma`` cannot be a wgmma (None: it can)."""
        elems = []
        for idx, (name, operand) in enumerate((("A", op.a), ("B", op.b))):
            load = defining_op(operand, "tile.local_load")
            if load is None:
                return f"operand {name} is not a tile.local_load of a shared buffer"
            if len(list(operand.uses)) != 1:
                return f"operand {name} has other uses than this MMA"
            src = load.opview.src.type
            problem = wgmma_buffer_refusal(load.opview.src, idx)
            if problem is not None:
                return f"operand {name}'s {problem}"
            elems.append(str(src.element_type))
        # Equivalent mutant: and, elems[1] != elems[1], elems[1] not in; the hand-off verifies
        # the module for cuda:90 first, whose tile.wmma rule makes A and B one type out of
        # WGMMA_INPUTS, so the test is false for every input, mutated or not.
        if elems[0] != elems[1] or elems[0] not in WGMMA_INPUTS:
            return f"operands are {elems[0]} and {elems[1]}, not both of one of {WGMMA_INPUTS}"
        acc = str(ir.RankedTensorType(op.c.type).element_type)
        if acc not in ("f32", "f16"):
            return f"the accumulator is {acc}, not f32 or f16"
        try:
            self._wgmma_shape(op)
        except ValueError as e:
            return str(e)
        return None

    def choose_async(self, ctx: HandOffContext, mmas: list[Any]) -> None:
        """Make each ``tile.async_wmma`` an asynchronous wgmma where it fits.

        It reads its buffers as they lie (no loads to absorb) and shares its
        accumulator layout's ``nvidia_mma`` v3 with the ``tile.wmma`` s of that layout;
        where wgmma does not fit the MMA is lowered synchronously, as on the AMD
        targets (``mma=wgmma`` makes that an error).
        """
        sync_layouts = {
            str(ir.RankedTensorType(op.c.type).encoding)
            for op in collect_ops(ctx.module, ("tile.wmma",))
        }
        for op in mmas:
            if not isinstance(op, AsyncWmmaOp):
                continue
            refusal = self.async_refusal(op, sync_layouts)
            if refusal is not None:
                if self.mma == MmaOption.WGMMA:
                    raise ctx.fail(op, f"mma=wgmma: this MMA cannot use wgmma: {refusal}")
                continue
            m, n = ir.RankedTensorType(op.c.type).shape
            # Equivalent mutant: or 17; verified for cuda:90, A is f16, bf16 or an 8-bit
            # float, whose width element_bits always gives.
            bits = element_bits(op.a.type.element_type) or 16
            warps, instr = wgmma_shape(m, n, op.a.type.shape[1], num_warps_of(op), bits)
            self.acc[str(ir.RankedTensorType(op.c.type).encoding)] = (warps, instr)
            self.async_ops.add(op.operation)
            for buf in (op.a, op.b):
                self.shared.add(str(viewed_block(buf).type.layout_attr))

    def async_refusal(self, op: Any, sync_layouts: set[str]) -> str | None:
        """Why a ``tile.async_wmma`` cannot be a wgmma (None: it can)."""
        if self.mma == MmaOption.MMA_V2:
            return "mma=mma_v2 asks for mma.sync"
        key = str(ir.RankedTensorType(op.c.type).encoding)
        if key in sync_layouts and key not in self.acc:
            return "tile.wmma ops of its accumulator layout use mma.sync"
        for idx, (name, buf) in enumerate((("A", op.a), ("B", op.b))):
            problem = wgmma_buffer_refusal(buf, idx)
            if problem is not None:
                return f"operand {name}'s {problem}"
        m, n = ir.RankedTensorType(op.c.type).shape
        # Equivalent mutant: or 17; verified for cuda:90, A is f16, bf16 or an 8-bit float,
        # whose width element_bits always gives.
        bits = element_bits(op.a.type.element_type) or 16
        try:
            shape = wgmma_shape(m, n, op.a.type.shape[1], num_warps_of(op), bits)
        except ValueError as e:
            return str(e)
        if self.acc.get(key, shape) != shape:
            return "the MMAs sharing its accumulator layout need different wgmma shapes"
        return None

    # -- lowering --

    @staticmethod
    def max_imprecise_acc(op: Any) -> int:
        """wgmma's ``maxNumImpreciseAcc``: 0 for 16-bit inputs; for 8-bit ones the
        op's ``tile.imprecise_acc`` or else one instruction's K (32), so that each wgmma's
        sum is added into the fp32 accumulator (Hopper's tensor cores add 8-bit products
        with fewer bits than fp32 carries; Triton's default, 2**30, would leave all of K
        to them). ``tile.wmma`` means fp32 accumulation unless the op allows more."""
        t = op.a.type
        elem = t.element_type if isinstance(t, SharedType) else ir.RankedTensorType(t).element_type
        if element_bits(elem) != 8:
            return 0
        attrs = op.operation.attributes
        if IMPRECISE_ACC not in attrs:
            return WGMMA_FP8_K
        limit = ir.IntegerAttr(attrs[IMPRECISE_ACC]).value
        use_acc = getattr(op, "use_acc", None)
        k = t.shape[1] if isinstance(t, SharedType) else ir.RankedTensorType(t).shape[1]
        if use_acc is not None and const_int(use_acc) == 0 and limit >= k:
            # A fresh accumulator summed over no more than the interval: nothing to
            # promote inside the MMA. Triton adds a partial accumulator, and a wait
            # for it, whenever the interval is at most the MMA's K; past K it adds none.
            return NO_PROMOTION
        return limit

    def wmma(self, ctx: HandOffContext, op: Any) -> Any:
        if op.operation not in self.ops:
            return None
        a, b = ctx.v(op.a), ctx.v(op.b)
        d = ctx.b.create_warpgroup_mma(
            a,
            b,
            ctx.v(op.c),
            ctx.true(),
            ctx.tt.ir.INPUT_PRECISION.IEEE,
            self.max_imprecise_acc(op),
            True,
        )
        # Synchronous for now: wait until none is in flight (the buffers
        # are kept alive until then).
        return ctx.b.create_warpgroup_mma_wait([d, a, b], 0)[0]

    def async_wmma(self, ctx: HandOffContext, op: Any) -> Any:
        if op.operation not in self.async_ops:
            return None
        a, b, c = ctx.v(op.a), ctx.v(op.b), ctx.v(op.c)
        use_acc = None if op.use_acc is None else ctx.v(op.use_acc)
        # use_acc is wgmma's useC: false multiplies without reading C, so a
        # new accumulation needs no zeroed registers.
        use_c = ctx.true() if use_acc is None else use_acc
        return ctx.b.create_warpgroup_mma(
            a, b, c, use_c, ctx.tt.ir.INPUT_PRECISION.IEEE, self.max_imprecise_acc(op), True
        )


__all__ = ["MmaOption", "WgmmaChoice"]
