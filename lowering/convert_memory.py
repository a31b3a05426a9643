"""The hand-off of shared-memory buffers, layouts and block accesses.

``tile.local_alloc``, ``tile.memdesc_index``, ``tile.memdesc_trans``, ``tile.local_load``
and ``tile.local_store`` become their ``ttg`` ops (types and shared layouts by the
target strategy; a load wgmma reads from shared memory itself vanishes),
``tile.convert_layout`` a ``ttg.convert_layout`` unless the layouts agree on the target,
and ``tile.load_block`` / ``tile.store_block`` masked ``tt.load`` / ``tt.store`` of the
block (:mod:`gemm_opt.lowering.access`).
"""

from __future__ import annotations

from typing import Any

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect.barrier import LocalStoreOp
from gemm_opt.dialect.tile import (
    ConvertLayoutOp,
    LoadBlockOp,
    LocalAllocOp,
    LocalLoadOp,
    MemdescIndexOp,
    MemdescTransOp,
    StoreBlockOp,
)
from gemm_opt.lowering.access import (
    access_layout,
    broadcast,
    broadcast_dims,
    masked_load,
    op_block_access,
    store_layout,
)
from gemm_opt.lowering.context import Handler, HandOffContext
from gemm_opt.lowering.ir_match import const_int, same_type


def lower_local_alloc(ctx: HandOffContext, op: Any) -> Any:
    return ctx.b.create_local_alloc(ctx.must_type(op.result.type, op))


def lower_memdesc_index(ctx: HandOffContext, op: Any) -> Any:
    return ctx.b.create_memdesc_index(
        ctx.must_type(op.result.type, op), ctx.v(op.src), ctx.v(op.index)
    )


def lower_memdesc_trans(ctx: HandOffContext, op: Any) -> Any:
    """``ttg.memdesc_trans``: Triton infers the view's layout (an NVMMA
    layout's ``transposed`` flag flips, a swizzled or padded one's order
    is renamed), the same placement as the tile layout's renamed order."""
    return ctx.b.create_memdesc_trans(ctx.v(op.src), op.permutation())


def lower_local_load(ctx: HandOffContext, op: Any) -> Any:
    if ctx.strategy.absorbs_load(op):
        return ctx.v(op.src)  # the buffer itself: the MMA reads shared memory
    return ctx.b.create_local_load(ctx.must_type(op.result.type, op), ctx.v(op.src))


def lower_local_store(ctx: HandOffContext, op: Any) -> None:
    ctx.b.create_local_store(ctx.v(op.dest), ctx.v(op.value))


def lower_convert_layout(ctx: HandOffContext, op: Any) -> Any:
    src = ctx.v(op.src)
    ty = ctx.must_type(op.result.type, op)
    if same_type(src.get_type(), ty):
        return src
    return ctx.b.create_convert_layout(ty, src)


def lower_load_block(ctx: HandOffContext, op: Any) -> Any:
    """A masked ``tt.load``. Dims that :func:`broadcast_dims` allows (stride 0,
    in bounds by constants: an FP8 scale read over a tile) are loaded with size 1
    and broadcast (the same values, fewer loads). Any other broadcast (a
    constant-zero stride: an epilogue's bias or scale vector read over the
    tile's rows or columns) loads in the value's own layout: its rows repeat one
    vector, so a coalesced layout saves no sectors and its conversion would be a
    shared-memory round trip of the whole tile."""
    rt = ir.RankedTensorType(op.result.type)
    shape = list(rt.shape)
    elem = rt.element_type
    want = ctx.must_type(rt, op)
    thin = broadcast_dims(op, shape)
    if not thin and any(const_int(s) == 0 for s in op.strides):
        layout = ctx.convert_encoding(rt.encoding, op)
    else:
        layout = access_layout(ctx, op, rt, shape, elem)
    loaded = [1 if d in thin else s for d, s in enumerate(shape)]
    ptrs, mask = op_block_access(ctx, op, loaded, layout)
    val = masked_load(ctx, ptrs, mask, ctx.zeros(loaded, elem, layout, op))
    if thin:
        val = broadcast(ctx, val, shape, layout, ctx.elem(elem, op))
    if not same_type(val.get_type(), want):
        val = ctx.b.create_convert_layout(want, val)
    return val


def lower_store_block(ctx: HandOffContext, op: Any) -> None:
    rt = ir.RankedTensorType(op.value.type)
    shape = list(rt.shape)
    elem = rt.element_type
    layout = store_layout(ctx, op, rt, shape, elem)
    value = ctx.v(op.value)
    vt = ctx.tensor(shape, ctx.elem(elem, op), layout)
    if not same_type(value.get_type(), vt):
        value = ctx.b.create_convert_layout(vt, value)
    ptrs, mask = op_block_access(ctx, op, shape, layout)
    ctx.b.create_masked_store(ptrs, value, mask, ctx.b.get_cache_policy("none", "evict_normal"))


HANDLERS: dict[str, Handler] = {
    LocalAllocOp.OPERATION_NAME: lower_local_alloc,
    MemdescIndexOp.OPERATION_NAME: lower_memdesc_index,
    MemdescTransOp.OPERATION_NAME: lower_memdesc_trans,
    LocalLoadOp.OPERATION_NAME: lower_local_load,
    LocalStoreOp.OPERATION_NAME: lower_local_store,
    ConvertLayoutOp.OPERATION_NAME: lower_convert_layout,
    LoadBlockOp.OPERATION_NAME: lower_load_block,
    StoreBlockOp.OPERATION_NAME: lower_store_block,
}

__all__ = ["HANDLERS"]
