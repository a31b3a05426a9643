"""Executable per-warp model of TDM copies (numpy), at the level of one copy.

Built on :mod:`gemm_opt.core.tdm_layout`: every warp executes its own tile of a
(hinted or fused) global-to-shared copy the way the gfx1250 lowering issues
it, so tests can check exact-once coverage and data placement, and a later
whole-function interpreter can reuse the pieces:

* :func:`tile_coords` / :func:`copy_writes`: which block elements a warp writes;
* :func:`execute_tile`: one warp's read of global memory, with TDM's
  zero fill outside the per-warp re-clamped tensor bounds;
* :func:`simulate_tdm_copy` / :func:`simulate_fused_copy`: whole copies;
* :func:`shared_offset` / :func:`shared_offsets`: physical element offsets of
  the swizzled, padded and partitioned shared layouts.

Shared blocks are kept in logical (unswizzled) coordinates; physical
placement is a separate function of the coordinate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from gemm_opt.core.layouts import PaddedShared, PartitionedShared, SwizzledShared
from gemm_opt.core.tdm_layout import (
    SharedLayoutLike,
    TdmWarpLayout,
    fused_member_layouts,
    select_fused_member,
    tdm_warp_layout,
)

# ---------------------------------------------------------------------------
# Which elements each warp writes
# ---------------------------------------------------------------------------


def tile_coords(start: Sequence[int], tile: Sequence[int]) -> np.ndarray:
    """All coordinates ``start + i`` for ``i`` in the box ``tile``: shape [n, rank].

    Row-major order (last dim fastest).
    """
    rank = len(tile)
    if rank == 0:
        return np.zeros((1, 0), dtype=np.int64)
    grids = np.meshgrid(*[np.arange(t, dtype=np.int64) for t in tile], indexing="ij")
    # Equivalent mutant: reshape(-2); numpy infers any negative size.
    coords = np.stack([g.reshape(-1) for g in grids], axis=1)
    return coords + np.asarray(start, dtype=np.int64)


def _empty(rank: int) -> np.ndarray:
    return np.zeros((0, rank), dtype=np.int64)


def warp_writes(layout: TdmWarpLayout, warp: int, pred: bool = True) -> np.ndarray:
    """Block-relative coordinates ``warp`` writes ([n, rank]; empty if inactive)."""
    if not (pred and layout.active(warp)):
        return _empty(layout.rank)
    return tile_coords(layout.start(warp), layout.tile)


def copy_writes(layout: TdmWarpLayout, pred: bool = True) -> dict[int, np.ndarray]:
    """For every warp, the block-relative coordinates it writes.

    Inactive warps (hint, surplus, or ``pred`` False) map to an empty
    ``[0, rank]`` array.
    """
    return {w: warp_writes(layout, w, pred) for w in range(layout.num_warps)}


def write_counts(writes: Mapping[int, np.ndarray], block_shape: Sequence[int]) -> np.ndarray:
    """How many times each block element is written (array of ``block_shape``)."""
    counts = np.zeros(tuple(block_shape), dtype=np.int64)
    for coords in writes.values():
        if len(coords):
            np.add.at(counts, tuple(coords.T), 1)
    return counts


def writer_masks(writes: Mapping[int, np.ndarray], block_shape: Sequence[int]) -> np.ndarray:
    """Bitmask of the warps that wrote each block element (bit w = warp w)."""
    masks = np.zeros(tuple(block_shape), dtype=np.int64)
    for w, coords in writes.items():
        if len(coords):
            np.bitwise_or.at(masks, tuple(coords.T), 1 << w)
    return masks


# ---------------------------------------------------------------------------
# Executing a warp's tile
# ---------------------------------------------------------------------------


def execute_tile(
    global_tensor: np.ndarray,
    origin: Sequence[int],
    tile: Sequence[int],
    bounds: Sequence[int],
) -> np.ndarray:
    """One warp's TDM read: ``global[origin : origin + tile]`` with zero fill.

    ``origin`` is the absolute coordinate of the tile's first element (user
    offsets plus the warp's start). As in the lowering, the tensor dims are
    re-clamped per warp, ``dim_d = max(0, bounds_d - origin_d)``, and every
    element at tile index ``i`` with ``i_d >= dim_d`` for some d reads 0.
    """
    rank = len(tile)
    if global_tensor.ndim != rank or len(origin) != rank or len(bounds) != rank:
        raise ValueError("global tensor, origin, tile and bounds must share one rank")
    out = np.zeros(tuple(tile), dtype=global_tensor.dtype)
    src = []
    dst = []
    for d in range(rank):
        if origin[d] < 0:
            raise ValueError("negative tile origins are not modelled")
        if bounds[d] > global_tensor.shape[d]:
            raise ValueError(f"bounds {list(bounds)} exceed the tensor {list(global_tensor.shape)}")
        dim = max(0, bounds[d] - origin[d])
        n = min(tile[d], dim)
        src.append(slice(origin[d], origin[d] + n))
        dst.append(slice(0, n))
    out[tuple(dst)] = global_tensor[tuple(src)]
    return out


class TdmCopyResult(NamedTuple):
    """A simulated copy: the shared block (logical coordinates) and the writes.

    ``writes[w]`` holds the block-relative coordinates warp ``w`` wrote.
    """

    block: np.ndarray
    writes: dict[int, np.ndarray]

    @property
    def write_count(self) -> np.ndarray:
        """Number of writes per shared element."""
        return write_counts(self.writes, self.block.shape)

    @property
    def writers(self) -> np.ndarray:
        """Bitmask of the warps that wrote each shared element."""
        return writer_masks(self.writes, self.block.shape)


def run_layout_copy(
    layout: TdmWarpLayout,
    global_tensor: np.ndarray,
    offsets: Sequence[int],
    pred: bool = True,
    bounds: Sequence[int] | None = None,
    block: np.ndarray | None = None,
) -> TdmCopyResult:
    """Execute every warp of ``layout`` (see :func:`simulate_tdm_copy`).

    ``block`` (optional) is the destination to update in place, so a caller
    can model a copy into existing shared contents.
    """
    rank = layout.rank
    if len(offsets) != rank:
        raise ValueError(f"expected {rank} offsets, got {len(offsets)}")
    if bounds is None:
        bounds = global_tensor.shape
    if block is None:
        block = np.zeros(layout.block_shape, dtype=global_tensor.dtype)
    writes: dict[int, np.ndarray] = {}
    for w in range(layout.num_warps):
        writes[w] = execute_warp(layout, w, global_tensor, offsets, block, pred, bounds)
    return TdmCopyResult(block, writes)


def execute_warp(
    layout: TdmWarpLayout,
    warp: int,
    global_tensor: np.ndarray,
    offsets: Sequence[int],
    block: np.ndarray,
    pred: bool = True,
    bounds: Sequence[int] | None = None,
) -> np.ndarray:
    """Run ``warp``'s share of a copy into ``block``; returns the coords written.

    The building block of the whole-copy simulators: an inactive warp (or
    ``pred`` False) writes nothing and returns an empty ``[0, rank]`` array.
    """
    coords = warp_writes(layout, warp, pred)
    if not len(coords):
        return coords
    if bounds is None:
        bounds = global_tensor.shape
    start = layout.start(warp)
    origin = [o + s for o, s in zip(offsets, start, strict=True)]
    data = execute_tile(global_tensor, origin, layout.tile, bounds)
    # Equivalent mutant: strict=False; start and tile both have the layout's rank.
    dst = tuple(slice(s, s + t) for s, t in zip(start, layout.tile, strict=True))
    block[dst] = data
    return coords


def simulate_tdm_copy(
    global_tensor: np.ndarray,
    offsets: Sequence[int],
    block_shape: Sequence[int],
    num_warps: int,
    warp_used_hint: int | None = None,
    shared_layout: SharedLayoutLike = None,
    pred: bool = True,
    bounds: Sequence[int] | None = None,
) -> TdmCopyResult:
    """Simulate one TDM global-to-shared copy warp by warp.

    Each active warp reads ``global[offsets + start : offsets + start + tile]``
    (zero outside ``bounds``, which defaults to the tensor's shape, with the
    bounds re-clamped at the warp's own start) and writes it to its tile of
    the shared block. Returns ``(block, writes)``; the block is in logical
    coordinates (use :func:`shared_offsets` for physical placement).
    """
    layout = tdm_warp_layout(block_shape, num_warps, warp_used_hint, shared_layout)
    return run_layout_copy(layout, global_tensor, offsets, pred, bounds)


class FusedCopyResult(NamedTuple):
    """A simulated fused copy.

    ``blocks[i]`` is member i's shared block, ``writes[w]`` is
    ``(member, coords)`` for warp ``w`` (coords empty when its predicate is 0).
    """

    blocks: list[np.ndarray]
    writes: dict[int, tuple[int, np.ndarray]]

    def member_writes(self, member: int) -> dict[int, np.ndarray]:
        """The writes that landed in ``member``'s block, per warp."""
        return {w: c for w, (m, c) in self.writes.items() if m == member and len(c)}


def simulate_fused_copy(
    global_tensors: Sequence[np.ndarray],
    members: Sequence[tuple],
    num_warps: int,
    preds: Sequence[bool] | None = None,
    bounds: Sequence[Sequence[int] | None] | None = None,
) -> FusedCopyResult:
    """Simulate ``amdg.async_tdm_fused_copy_global_to_local``.

    ``members[i]`` is ``(offsets, block_shape, hint)`` or ``(offsets,
    block_shape, hint, shared_layout)``; member i reads
    ``global_tensors[i]``. Every warp issues exactly one descriptor: the
    first member whose hint contains it, else the last member's (pred 0).
    """
    if len(global_tensors) != len(members):
        raise ValueError("one global tensor per member is required")
    specs = [(tuple(m[1]), m[2], m[3] if len(m) > 3 else None) for m in members]
    layouts = fused_member_layouts(specs, num_warps)
    preds = list(preds) if preds is not None else [True] * len(members)
    bounds = list(bounds) if bounds is not None else [None] * len(members)
    blocks = [
        np.zeros(lay.block_shape, dtype=g.dtype)
        # Equivalent mutant: strict=False; one layout per member, one tensor per member (checked).
        for lay, g in zip(layouts, global_tensors, strict=True)
    ]
    writes: dict[int, tuple[int, np.ndarray]] = {}
    for w in range(num_warps):
        i = select_fused_member(layouts, w)
        coords = execute_warp(
            layouts[i],
            w,
            global_tensors[i],
            members[i][0],
            blocks[i],
            preds[i],
            bounds[i],
        )
        writes[w] = (i, coords)
    return FusedCopyResult(blocks, writes)


# ---------------------------------------------------------------------------
# Physical placement in shared memory
# ---------------------------------------------------------------------------


def _log2(n: int) -> int:
    if n <= 0 or n & (n - 1):
        raise ValueError(f"expected a positive power of two, got {n}")
    return n.bit_length() - 1


def _order(layout, rank: int) -> tuple[int, ...]:
    order = tuple(getattr(layout, "order", ()) or ())
    if len(order) != rank:
        return tuple(range(rank - 1, -1, -1))
    return order


def _linear(coords: np.ndarray, shape: Sequence[int], order: Sequence[int]) -> np.ndarray:
    """Linear offset with ``order[0]`` the fastest-varying dim."""
    out = np.zeros(len(coords), dtype=np.int64)
    stride = 1
    for d in order:
        out += coords[:, d] * stride
        stride *= shape[d]
    return out


def padded_size(num_elements: int, layout: PaddedShared) -> int:
    """Elements a padded allocation of ``num_elements`` occupies (trailing pad included)."""
    return num_elements + ((num_elements >> _log2(layout.interval)) << _log2(layout.amount))


def shared_alloc_size(block_shape: Sequence[int], layout: SharedLayoutLike) -> int:
    """Elements one block occupies in a non-partitioned layout (per piece otherwise)."""
    n = int(np.prod(block_shape))
    if isinstance(layout, PaddedShared):
        return padded_size(n, layout)
    if isinstance(layout, PartitionedShared):
        raise ValueError("use partition_piece_shape for partitioned layouts")
    return n


def partition_piece_shape(block_shape: Sequence[int], layout: PartitionedShared) -> tuple[int, ...]:
    """Shape of one logical piece of a partitioned block."""
    piece = list(block_shape)
    d = layout.partition_dim
    if piece[d] % layout.num_logical_pieces:
        raise ValueError(
            f"dim {d} of {list(block_shape)} is not divisible into "
            f"{layout.num_logical_pieces} pieces"
        )
    piece[d] //= layout.num_logical_pieces
    return tuple(piece)


def shared_offsets(
    coords: np.ndarray,
    block_shape: Sequence[int],
    shared_layout: SharedLayoutLike = None,
    partition_stride: int | None = None,
) -> np.ndarray:
    """Vectorized :func:`shared_offset` over ``coords`` of shape [n, rank]."""
    # Equivalent mutant: reshape(-2, ...); numpy infers any negative size.
    coords = np.asarray(coords, dtype=np.int64).reshape(-1, len(block_shape))
    layout = shared_layout
    rank = len(block_shape)
    if layout is None:
        return _linear(coords, block_shape, tuple(range(rank - 1, -1, -1)))
    if isinstance(layout, SwizzledShared):
        order = _order(layout, rank)
        # Equivalent mutant: max_phase < 1; with one phase the swizzle is the identity on every
        # coordinate inside the block, the only ones with a shared address.
        if rank == 1 or layout.vec <= 0 or layout.max_phase <= 1:
            return _linear(coords, block_shape, order)
        col_dim, row_dim = order[0], order[1]
        row = coords[:, row_dim]
        phase = (row // layout.per_phase) % layout.max_phase
        col = coords[:, col_dim]
        vec = layout.vec
        swizzled_col = ((col // vec) ^ phase) * vec + col % vec
        swizzled_col %= block_shape[col_dim]
        swizzled = coords.copy()
        swizzled[:, col_dim] = swizzled_col
        return _linear(swizzled, block_shape, order)
    if isinstance(layout, PaddedShared):
        lin = _linear(coords, block_shape, _order(layout, rank))
        return lin + ((lin >> _log2(layout.interval)) << _log2(layout.amount))
    if isinstance(layout, PartitionedShared):
        piece_shape = partition_piece_shape(block_shape, layout)
        d = layout.partition_dim
        piece = coords[:, d] // piece_shape[d]
        inner = coords.copy()
        inner[:, d] = coords[:, d] % piece_shape[d]
        inner_off = shared_offsets(inner, piece_shape, layout.inner)
        piece_size = shared_alloc_size(piece_shape, layout.inner)
        if partition_stride is None:
            partition_stride = layout.num_groups * piece_size
        partition = piece % layout.num_partitions
        group = piece // layout.num_partitions
        return partition * partition_stride + group * piece_size + inner_off
    raise TypeError(f"unsupported shared layout {layout!r}")


def shared_partitions(
    coords: np.ndarray, block_shape: Sequence[int], shared_layout: SharedLayoutLike
) -> np.ndarray:
    """Partition index of each coordinate (all 0 unless partitioned)."""
    # Equivalent mutant: reshape(-2, ...); numpy infers any negative size.
    coords = np.asarray(coords, dtype=np.int64).reshape(-1, len(block_shape))
    if not isinstance(shared_layout, PartitionedShared):
        return np.zeros(len(coords), dtype=np.int64)
    piece_len = partition_piece_shape(block_shape, shared_layout)[shared_layout.partition_dim]
    piece = coords[:, shared_layout.partition_dim] // piece_len
    return piece % shared_layout.num_partitions


def shared_offset(
    coord: Sequence[int],
    block_shape: Sequence[int],
    shared_layout: SharedLayoutLike = None,
    partition_stride: int | None = None,
) -> int:
    """Physical element offset of logical ``coord`` in a shared block.

    * swizzled (``order[0]`` fastest, ``order[1]`` the row): the column's
      vec-group index is XORed with ``phase = (row // per_phase) % max_phase``;
    * padded: the row-major offset ``o`` (by ``order``) becomes
      ``o + ((o >> log2(interval)) << log2(amount))``;
    * partitioned: the block is cut along ``partition_dim`` into
      ``num_partitions * num_groups`` pieces; piece ``p`` goes to partition
      ``p % num_partitions``, group ``p // num_partitions``. Its offset is
      ``partition * partition_stride + group * piece_size + inner offset``,
      where ``piece_size`` is the inner layout's allocation size of a piece
      (padding included). ``partition_stride`` defaults to
      ``num_groups * piece_size`` (partitions packed back to back). Triton's
      gfx1250 allocator instead gives each partition its own buffer in its
      own 64 KiB LDS region at an allocator-chosen base; pass
      ``partition_stride=0`` for the offset inside the partition and
      :func:`shared_partitions` for the partition index.
    """
    return int(shared_offsets(np.asarray([coord]), block_shape, shared_layout, partition_stride)[0])


__all__ = [
    "FusedCopyResult",
    "TdmCopyResult",
    "copy_writes",
    "execute_tile",
    "execute_warp",
    "padded_size",
    "partition_piece_shape",
    "run_layout_copy",
    "shared_alloc_size",
    "shared_offset",
    "shared_offsets",
    "shared_partitions",
    "simulate_fused_copy",
    "simulate_tdm_copy",
    "tile_coords",
    "warp_writes",
    "write_counts",
    "writer_masks",
]
