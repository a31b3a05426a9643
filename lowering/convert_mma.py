"""The hand-off of the MMA ops: ``tile.wmma``, ``tile.async_wmma`` and its wait,
``tile.scaled_wmma``.

Where the target strategy has no form of its own (cuda:90's wgmma, see
:mod:`gemm_opt.lowering.sm90_mma`) an MMA is a ``tt.dot`` of register operands: a
``tile.wmma`` as it is, a ``tile.async_wmma`` synchronously (both buffers loaded in the
MMA's dot-operand layouts, zeros selected for C where ``use_acc`` is false), and its
wait then emits nothing. A ``tile.scaled_wmma`` is Triton's ``tt.dot_scaled`` (both
operands K-packed, its scales i8 codes in the layout the target strategy gives
``#tile.scale_layout``), which gfx1250 and gfx950 lower to their scaled WMMA / MFMA.
"""

from __future__ import annotations

from typing import Any

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect.async_ops import AsyncWmmaOp, AsyncWmmaWaitOp
from gemm_opt.dialect.scaled_mma import ScaledWmmaOp
from gemm_opt.dialect.tile import DotOperandAttr, WmmaOp
from gemm_opt.lowering.context import Handler, HandOffContext


def lower_wmma(ctx: HandOffContext, op: Any) -> Any:
    own = ctx.strategy.wmma(ctx, op)
    if own is not None:
        return own
    return ctx.b.create_dot(
        ctx.v(op.a), ctx.v(op.b), ctx.v(op.c), ctx.tt.ir.INPUT_PRECISION.IEEE, 0
    )


#: ``tt.dot_scaled``'s operand format by 8-bit element type.
SCALED_FORMATS = {"f8E4M3FN": "E4M3", "f8E5M2": "E5M2"}


def lower_scaled_wmma(ctx: HandOffContext, op: Any) -> Any:
    formats = []
    for operand in (op.a, op.b):
        name = SCALED_FORMATS.get(str(ir.RankedTensorType(operand.type).element_type))
        if name is None:  # the verifier admits only these
            raise ctx.fail(op, f"no scaled-dot format for {operand.type}")
        formats.append(getattr(ctx.tt.ir.ScaleDotElemTypeTY, name))
    a, sa, b, sb, c = (ctx.v(v) for v in (op.a, op.a_scale, op.b, op.b_scale, op.c))
    return ctx.b.create_dot_scaled(a, sa, formats[0], b, sb, formats[1], False, True, True, c)


def lower_async_wmma(ctx: HandOffContext, op: Any) -> Any:
    own = ctx.strategy.async_wmma(ctx, op)
    if own is not None:
        return own
    a, b, c = ctx.v(op.a), ctx.v(op.b), ctx.v(op.c)
    use_acc = None if op.use_acc is None else ctx.v(op.use_acc)
    if use_acc is not None:
        # A dot always adds C: select zeros in its place where use_acc is false.
        ct = ir.RankedTensorType(op.c.type)
        # Equivalent mutant: 32->33; C's layout is a #tile.wmma_layout (the verifier's),
        # whose conversion takes no element width.
        layout = ctx.convert_encoding(ct.encoding, op, 32)
        zeros = ctx.zeros(ct.shape, ct.element_type, layout, op)
        cond = ctx.b.create_splat(ctx.tensor(ct.shape, ctx.b.get_int1_ty(), layout), use_acc)
        c = ctx.b.create_select(cond, c, zeros)
    # Synchronous: load both operands in the MMA's register layout, then a dot.
    acc = ir.RankedTensorType(op.c.type).encoding
    operands = []
    for idx, (buf, value) in enumerate(((op.a, a), (op.b, b))):
        t = buf.type
        layout = DotOperandAttr.build(op_idx=idx, parent=acc, k_width=op.k_width())
        elem_bits = ctx.bits(t.element_type, op)
        enc = ctx.convert_encoding(layout, op, elem_bits)
        ty = ctx.tensor(t.shape, ctx.elem(t.element_type, op), enc)
        operands.append(ctx.b.create_local_load(ty, value))
    return ctx.b.create_dot(*operands, c, ctx.tt.ir.INPUT_PRECISION.IEEE, 0)


def lower_async_wmma_wait(ctx: HandOffContext, op: Any) -> Any:
    value = ctx.v(op.value)
    if not ctx.strategy.async_in_flight(ir.RankedTensorType(op.value.type).encoding):
        return value  # its MMAs were synchronous: nothing is in flight
    num = ir.IntegerAttr(op.operation.attributes["num"]).value
    return ctx.b.create_warpgroup_mma_wait([value], num)[0]


HANDLERS: dict[str, Handler] = {
    WmmaOp.OPERATION_NAME: lower_wmma,
    AsyncWmmaOp.OPERATION_NAME: lower_async_wmma,
    AsyncWmmaWaitOp.OPERATION_NAME: lower_async_wmma_wait,
    ScaledWmmaOp.OPERATION_NAME: lower_scaled_wmma,
}

__all__ = ["HANDLERS"]
