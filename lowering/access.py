"""Addressing blocks of global tensors: the pointers, in-bounds masks and layouts of the
masked loads, stores and atomics that targets without TDM or TMA (and every
``tile.load_block`` / ``tile.store_block``) lower to. Functions of the hand-off context,
shared by the op families and the strategies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect.tile import BlockedAttr, WmmaAttr
from gemm_opt.lowering.context import HandOffContext
from gemm_opt.lowering.ir_match import arg_divisibility, const_int
from gemm_opt.lowering.layouts import blocked_params


def index_vectors(
    ctx: HandOffContext, shape: Sequence[int], layout: Any, origin: Sequence[Any]
) -> list[Any]:
    """Per dim d: ``origin[d] + arange(shape[d])`` expanded to rank (i32)."""
    rank = len(shape)
    out = []
    for d in range(rank):
        enc = layout if rank == 1 else ctx.tt.layouts.SliceLayout(1 - d, layout)
        vt = ctx.tensor([shape[d]], ctx.i32(), enc)
        rng = ctx.b.create_make_range(vt, 0, int(shape[d]))
        idx = ctx.b.create_add(ctx.b.create_splat(vt, origin[d]), rng)
        if rank == 2:
            idx = ctx.b.create_expand_dims(idx, 1 - d)
        out.append(idx)
    return out


def block_access(
    ctx: HandOffContext,
    op: Any,
    shape: Sequence[int],
    layout: Any,
    base: Any,
    extents: Sequence[Any],
    strides: Sequence[Any],
    unit: Sequence[bool],
    origin: Sequence[Any],
    nonneg: Sequence[bool] | None = None,
) -> tuple[Any, Any]:
    """(pointers, in-bounds mask) of a block of a global tensor, in ``layout``.

    Element ``i`` is at ``origin + i``; it is in bounds when that is at least 0
    and below ``extents``: a block reaching out of the tensor on either side reads
    zeros there and writes nothing, as TMA does with negative coordinates and as the
    model defines ``tile.load_block`` / ``tile.store_block`` (a negative origin is a
    position before the tensor, not an address before its base). ``nonneg[d]``: dim
    ``d``'s coordinates are proven at least 0 in i32 (no wrap either; see
    :meth:`~gemm_opt.lowering.value_range.ValueRanges.nonnegative_span`), so its mask
    is ``< extent`` alone. The arithmetic runs
    per dim on the thin ``[n, 1]`` / ``[1, n]`` index tensors and is broadcast
    afterwards. Offsets are i64 for a non-unit stride (tile strides are i64, and
    Triton's axis analysis follows ``extsi`` and ``muli``, so stated divisibility
    still proves alignment); a constant unit stride adds the i32 index directly,
    which keeps the contiguity facts vector accesses need.
    ``unit[d]``: dim ``d``'s stride is the constant 1.
    """
    rank = len(shape)
    if rank not in (1, 2):
        raise ctx.fail(op, f"only rank-1 and rank-2 blocks lower to TritonGPU, got rank {rank}")
    shape = [int(s) for s in shape]
    mask: Any = None
    acc: Any = None
    for d, idx in enumerate(index_vectors(ctx, shape, layout, origin)):
        thin = idx.get_type()
        ge = None
        if not (nonneg and nonneg[d]):
            ge = ctx.b.create_icmpSGE(idx, ctx.b.create_splat(thin, ctx.const(0)))
        ok = ctx.b.create_icmpSLT(idx, ctx.b.create_splat(thin, extents[d]))
        if ge is not None:
            ok = ctx.b.create_and(ge, ok)
        ok = broadcast(ctx, ok, shape, layout, ctx.b.get_int1_ty())
        mask = ok if mask is None else ctx.b.create_and(mask, ok)
        if unit[d]:
            term = idx
        else:
            wide = ctx.b.create_int_cast(idx, like(ctx, idx, layout, ctx.i64()), True)
            term = ctx.b.create_mul(wide, ctx.b.create_splat(wide.get_type(), strides[d]))
        if acc is None:
            ptrs = ctx.b.create_splat(like(ctx, idx, layout, base.get_type()), base)
            acc = broadcast(ctx, ctx.b.create_addptr(ptrs, term), shape, layout, base.get_type())
        else:
            elem = ctx.i32() if unit[d] else ctx.i64()
            acc = ctx.b.create_addptr(acc, broadcast(ctx, term, shape, layout, elem))
    # Equivalent mutant: and->or; rank 1 or 2 sets both in the first pass.
    assert acc is not None and mask is not None
    return acc, mask


def like(ctx: HandOffContext, tensor: Any, layout: Any, elem: Any) -> Any:
    """A tensor type of ``tensor``'s shape in ``layout``, of ``elem``."""
    return ctx.tensor(tensor.get_shape(), elem, layout)


def broadcast(ctx: HandOffContext, v: Any, shape: Sequence[int], layout: Any, elem: Any) -> Any:
    """``v`` (a thin tensor of ``elem`` in ``layout``) broadcast to ``shape``."""
    if list(v.get_shape()) == list(shape):
        return v
    return ctx.b.create_broadcast(v, ctx.tensor(shape, elem, layout))


# -- copies without TDM --


def no_cache_policy(ctx: HandOffContext) -> Any:
    return ctx.b.get_cache_policy("none", "evict_normal")


def masked_load(ctx: HandOffContext, ptrs: Any, mask: Any, other: Any) -> Any:
    """``tt.load`` of ``ptrs`` under ``mask``, ``other`` where it is false."""
    policy = ctx.b.get_cache_policy("none", "evict_normal")
    return ctx.b.create_masked_load(ptrs, mask, other, policy, False)


# -- load_block / store_block --


def op_block_access(ctx: HandOffContext, op: Any, shape: Sequence[int], layout: Any):
    """:func:`block_access` of a ``tile.load_block`` / ``tile.store_block``, without the
    ``>= 0`` mask term along the dims whose offsets the hand-off proves non-negative."""
    offsets = list(op.offsets)
    return block_access(
        ctx,
        op,
        shape,
        layout,
        ctx.v(op.base),
        [ctx.v(x) for x in op.shape],
        [ctx.v(x) for x in op.strides],
        [const_int(x) == 1 for x in op.strides],
        [ctx.v(x) for x in offsets],
        [ctx.ranges.nonnegative_span(x, int(n)) for x, n in zip(offsets, shape, strict=True)],
    )


def broadcast_dims(op: Any, shape: Sequence[int]) -> set[int]:
    """The dims of a ``tile.load_block`` it may load once and broadcast: stride the
    constant 0 and the whole range in bounds by constants (origin >= 0, origin +
    size <= extent), so every element along the dim reads the same address unmasked.

    A scale broadcast over a tile (an FP8 GEMM's per-row or per-column scale
    read inside its K loop) then costs each thread one load per distinct row
    or column it holds, not one per element: Triton does not merge loads of
    equal addresses.
    """
    dims = set()
    for d, size in enumerate(shape):
        origin, extent = const_int(op.offsets[d]), const_int(op.shape[d])
        if (
            const_int(op.strides[d]) == 0
            and origin is not None
            and extent is not None
            and 0 <= origin
            and origin + int(size) <= extent
        ):
            dims.add(d)
    return dims


def access_layout(ctx: HandOffContext, op, rt, shape, elem) -> Any:
    """The value's own layout if blocked, else a coalesced blocked layout.

    Except 32-bit values in an NVIDIA MMA accumulator layout (stream-K's
    fp32 partial tiles): each thread holds pairs of adjacent columns, so
    a quad of lanes writes or reads whole 32-byte sectors in that layout;
    a blocked layout would add a shared-memory round trip (its scratch
    as large as the tile, which costs occupancy) for no fewer sectors.
    """
    if isinstance(rt.encoding, BlockedAttr):
        return ctx.convert_encoding(rt.encoding, op)
    bits = ctx.bits(elem, op)
    if ctx.strategy.access_layout(ctx, rt, bits):
        return ctx.convert_encoding(rt.encoding, op)
    return ctx.blocked(shape, bits)


def contiguous_per_thread(ctx: HandOffContext, layout: Any, shape: Sequence[int]) -> int:
    """Elements each thread holds contiguously along the last dim of a ``shape`` tensor in
    ``layout``: the leading register bases of Triton's linear layout of it that step
    that dim by 1, 2, 4, ... (Triton vectorises a store over those)."""
    dims = [int(s) for s in shape]
    bases = ctx.b.to_linear_layout(ctx.layout(layout), dims).reg_bases
    run = 1
    for basis in bases:
        if list(basis) != [0] * (len(dims) - 1) + [run]:
            break
        run *= 2
    return min(run, dims[-1])


def mask_bound(value: Any) -> int | None:
    """An upper bound on the divisibility Triton knows of a block extent, so on how
    many consecutive elements along that dim the in-bounds mask is constant: a
    constant's power-of-two part, a function argument's stated divisibility (1 when
    none is stated); None (no bound known) for a computed value."""
    c = const_int(value)
    if c is not None:
        return (c & -c) if c else None
    owner = value.owner
    if isinstance(owner, ir.Block) and owner.owner.operation.name == "func.func":
        return arg_divisibility(value)
    return None


def store_layout(ctx: HandOffContext, op: Any, rt: Any, shape: Sequence[int], elem: Any) -> Any:
    """The layout a ``tile.store_block`` stores from: :func:`access_layout`, except an
    MMA accumulator where the target stores from it
    (:meth:`~gemm_opt.lowering.context.TargetStrategy.stores_from_mma`) and its own
    layout stores vectors at least as wide as the blocked layout's.

    A masked store is vectorised over the elements a thread holds contiguously along
    the last dim, up to the span over which the mask is constant; the blocked
    layout's vector is 16 bytes. So the accumulator's layout stores as wide when its
    contiguous run reaches that vector or the bound :func:`mask_bound` puts on the
    mask's span (an extent of unstated divisibility: one element a store either
    way), and it saves the conversion, a round trip through shared memory with its
    barriers.
    """
    layout = access_layout(ctx, op, rt, shape, elem)
    if not isinstance(rt.encoding, WmmaAttr) or not ctx.strategy.stores_from_mma():
        return layout
    own = ctx.convert_encoding(rt.encoding, op)
    if layout == own:
        return layout
    vec = blocked_params(shape, ctx.bits(elem, op), ctx.num_warps, ctx.target.warp_size)[0][-1]
    bound = mask_bound(op.shape[-1])
    wanted = vec if bound is None else min(vec, bound)
    return own if contiguous_per_thread(ctx, own, shape) >= wanted else layout


def linear_index(ctx: HandOffContext, shape: Sequence[int], layout: Any) -> Any:
    """The row-major index of each element of a ``shape`` tensor in ``layout``."""
    zero = [ctx.const(0)] * len(shape)
    parts = index_vectors(ctx, shape, layout, zero)
    if len(shape) == 1:
        return parts[0]
    full = ctx.tensor(shape, ctx.i32(), layout)
    rows = ctx.b.create_broadcast(parts[0], full)
    cols = ctx.b.create_broadcast(parts[1], full)
    width = ctx.b.create_splat(full, ctx.const(shape[1]))
    return ctx.b.create_add(ctx.b.create_mul(rows, width), cols)


# -- scf --


__all__ = [
    "access_layout",
    "block_access",
    "broadcast",
    "broadcast_dims",
    "contiguous_per_thread",
    "index_vectors",
    "like",
    "linear_index",
    "mask_bound",
    "masked_load",
    "no_cache_policy",
    "op_block_access",
    "store_layout",
]
