"""The executable per-warp copy model: exact-once coverage, data, placement.

``coverage_sweep()`` returns the number of (hint, shape) cases checked so it
can be quoted; run with ``-s`` to see it printed.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from gemm_opt.core.layouts import PaddedShared, PartitionedShared, SwizzledShared
from gemm_opt.core.tdm_layout import tdm_warp_layout
from gemm_opt.core.warp_hint import WarpHintError, legal_hints
from gemm_opt.model.copy import (
    copy_writes,
    execute_tile,
    shared_offset,
    shared_offsets,
    shared_partitions,
    simulate_fused_copy,
    simulate_tdm_copy,
    tile_coords,
    write_counts,
)

NUM_WARPS = (1, 2, 4, 8, 16)

SHAPES = [
    # rank 1
    (1,),
    (2,),
    (4,),
    (8,),
    (16,),
    (64,),
    # rank 2
    (1, 1),
    (1, 2),
    (2, 1),
    (2, 2),
    (4, 4),
    (1, 64),
    (4, 64),
    (16, 1),
    (8, 2),
    (128, 64),
    # rank 3
    (1, 1, 1),
    (2, 2, 2),
    (2, 4, 64),
    (1, 8, 64),
    (4, 1, 2),
    (16, 1, 1),
    # rank 4
    (1, 1, 1, 1),
    (2, 2, 2, 2),
    (2, 2, 2, 64),
    (1, 2, 4, 1),
    # rank 5
    (1, 1, 1, 1, 1),
    (1, 2, 2, 2, 32),
    (2, 2, 2, 2, 2),
    (2, 1, 2, 1, 2),
    (1, 1, 1, 1, 16),
]


def _hints(nw: int):
    return [None, *legal_hints(nw)]


def check_coverage(layout) -> None:
    """Active warps cover the block exactly once; inactive warps write nothing."""
    writes = copy_writes(layout)
    counts = write_counts(writes, layout.block_shape)
    assert (counts == 1).all(), (layout, counts)
    for w, coords in writes.items():
        if layout.active(w):
            assert len(coords) == math.prod(layout.tile)
        else:
            assert coords.shape == (0, layout.rank)
    # pred False: nobody writes.
    assert all(len(c) == 0 for c in copy_writes(layout, pred=False).values())


def coverage_sweep(shapes=SHAPES, num_warps=NUM_WARPS, shared_layout=None):
    """Check every legal hint (and no hint) on every shape.

    Returns ``(checked, skipped)``: cases whose coverage was checked, and
    (hint, shape) cases the hint check rejected as block-too-small. For a
    non-partitioned layout, the rejected ones are exactly those with
    K > prod(block).
    """
    checked = skipped = 0
    for nw in num_warps:
        for shape in shapes:
            for hint in _hints(nw):
                k = nw if hint is None else bin(hint).count("1")
                try:
                    layout = tdm_warp_layout(shape, nw, hint, shared_layout)
                except WarpHintError as exc:
                    assert exc.rule == "block-too-small", exc
                    assert hint is not None
                    if shared_layout is None:
                        assert k > math.prod(shape), (hint, shape)
                    skipped += 1
                    continue
                if hint is not None and shared_layout is None:
                    assert k <= math.prod(shape)
                check_coverage(layout)
                assert layout.num_active == min(k, math.prod(shape))
                checked += 1
    return checked, skipped


def test_exhaustive_coverage():
    checked, skipped = coverage_sweep()
    print(f"\ncoverage: {checked} (hint, shape) cases checked, {skipped} rejected")
    assert checked == 3308
    assert skipped == 598


def test_exhaustive_coverage_partitioned():
    cases = [
        ((128, 16), PartitionedShared(2, 1, 0)),
        ((128, 16), PartitionedShared(2, 2, 0, PaddedShared(16, 4))),
        ((16, 128), PartitionedShared(2, 1, 1)),
        ((2, 128), PartitionedShared(2, 1, 1)),
        ((4, 64, 64), PartitionedShared(2, 1, 1)),
        ((8, 4, 32), PartitionedShared(4, 1, 0)),
    ]
    total = 0
    for shape, layout in cases:
        for nw in NUM_WARPS:
            for hint in _hints(nw):
                try:
                    lay = tdm_warp_layout(shape, nw, hint, layout)
                except WarpHintError:
                    continue
                except ValueError as exc:  # several instructions (no hint)
                    assert hint is None and "TDM instructions" in str(exc)
                    continue
                check_coverage(lay)
                # every tile stays inside one logical piece
                piece_len = shape[layout.partition_dim] // layout.num_logical_pieces
                d = layout.partition_dim
                for w in lay.active_warps():
                    s = lay.start(w)[d]
                    assert s // piece_len == (s + lay.tile[d] - 1) // piece_len
                total += 1
    assert total > 100


@pytest.mark.slow
def test_exhaustive_coverage_all_small_shapes():
    shapes = [s for rank in range(1, 5) for s in itertools.product((1, 2, 4, 8), repeat=rank)]
    checked, skipped = coverage_sweep(shapes)
    print(f"\nslow coverage: {checked} cases checked, {skipped} rejected")
    assert checked > 30000


# ---------------------------------------------------------------------------
# Data movement
# ---------------------------------------------------------------------------


def _global(shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(1, 1000, size=shape).astype(np.float32)


@pytest.mark.parametrize(
    "shape,nw,hint",
    [
        ((128, 64), 8, None),
        ((128, 64), 8, 0x0F),
        ((128, 64), 8, 0xCC),
        ((128, 64), 16, 0x8888),
        ((2, 4, 64), 8, 0x0F),
        ((1, 2, 2, 2, 32), 8, 0xCC),
        ((2, 2), 8, None),
        ((64,), 4, 0xA),
    ],
)
def test_data_matches_global_block(shape, nw, hint):
    offsets = tuple(3 for _ in shape)
    g = _global(tuple(s + 7 for s in shape))
    res = simulate_tdm_copy(g, offsets, shape, nw, hint)
    block, writes = res  # unpacks as (block, writes)
    want = g[tuple(slice(o, o + s) for o, s in zip(offsets, shape, strict=True))]
    np.testing.assert_array_equal(block, want)
    assert (res.write_count == 1).all()
    lay = tdm_warp_layout(shape, nw, hint)
    for w in range(nw):
        if not lay.active(w):
            assert len(writes[w]) == 0


def test_writers_record_which_warp_wrote():
    res = simulate_tdm_copy(_global((128, 64)), (0, 0), (128, 64), 8, 0xF0)
    writers = res.writers
    for w in range(4, 8):
        rows = slice(32 * (w - 4), 32 * (w - 3))
        assert (writers[rows] == 1 << w).all()


def test_oob_zero_fill_is_relative_to_each_warp_start():
    g = _global((200, 100))
    shape = (128, 64)
    res = simulate_tdm_copy(g, (100, 50), shape, 8, 0x0F)
    want = np.zeros(shape, dtype=g.dtype)
    want[:100, :50] = g[100:200, 50:100]
    np.testing.assert_array_equal(res.block, want)
    # Explicit bounds smaller than the tensor
    res = simulate_tdm_copy(g, (0, 0), shape, 8, 0xCC, bounds=(70, 10))
    want = np.zeros(shape, dtype=g.dtype)
    want[:70, :10] = g[:70, :10]
    np.testing.assert_array_equal(res.block, want)
    assert (res.write_count == 1).all()


def test_pred_false_writes_nothing():
    res = simulate_tdm_copy(_global((8, 8)), (0, 0), (8, 8), 4, 0x5, pred=False)
    assert not res.block.any()
    assert (res.write_count == 0).all()


def test_execute_tile_clamps():
    g = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = execute_tile(g, (2, 2), (2, 4), (3, 4))
    np.testing.assert_array_equal(out, [[10, 11, 0, 0], [0, 0, 0, 0]])
    out = execute_tile(g, (5, 0), (2, 2), (3, 4))
    assert not out.any()


def test_tile_coords_order():
    c = tile_coords((1, 2), (2, 3))
    assert c.tolist() == [[1, 2], [1, 3], [1, 4], [2, 2], [2, 3], [2, 4]]


# ---------------------------------------------------------------------------
# Fused copies
# ---------------------------------------------------------------------------

FUSED_SETS = [
    (8, [0x0F, 0xF0], None),
    (8, [0x55, 0xAA], None),
    (8, [0x0F, 0x30, 0xC0], None),
    (8, [1, 2, 4, 8], None),
    (8, [0x03, 0x0C], None),
    (8, [0x01, 0x08], None),
    (8, [0x0F, 0xF0], [(64, 64), (32, 128)]),
    (8, [0x3, 0xC], [(128, 64), (16, 16)]),
    (8, [0x33, 0xCC], [(2, 4, 64), (8, 2, 32)]),
    (16, [0x00FF, 0xFF00], None),
    (16, [0x8888, 0x1111, 0x0044], [(128, 64), (4, 4), (2, 2)]),
    (4, [0x5, 0x2, 0x8], [(64,), (16,), (4,)]),
]


@pytest.mark.parametrize("nw,hints,shapes", FUSED_SETS)
def test_fused_members_covered_exactly_once(nw, hints, shapes):
    shapes = shapes or [(128, 64)] * len(hints)
    gs = [_global(s, seed=i) for i, s in enumerate(shapes)]
    members = [((0,) * len(s), s, h) for s, h in zip(shapes, hints, strict=True)]
    res = simulate_fused_copy(gs, members, nw)
    union = 0
    for h in hints:
        union |= h
    for i, (s, g) in enumerate(zip(shapes, gs, strict=True)):
        counts = write_counts(res.member_writes(i), s)
        assert (counts == 1).all()
        np.testing.assert_array_equal(res.blocks[i], g)
        # only the member's own warps wrote it
        for w in res.member_writes(i):
            assert hints[i] >> w & 1
    for w, (member, coords) in res.writes.items():
        if not union >> w & 1:
            assert len(coords) == 0 and member == len(hints) - 1


def test_fused_member_pred_false():
    gs = [_global((128, 64)), _global((128, 64), 1)]
    members = [((0, 0), (128, 64), 0x0F), ((0, 0), (128, 64), 0xF0)]
    res = simulate_fused_copy(gs, members, 8, preds=[True, False])
    np.testing.assert_array_equal(res.blocks[0], gs[0])
    assert not res.blocks[1].any()


# ---------------------------------------------------------------------------
# Physical placement
# ---------------------------------------------------------------------------


def _all_coords(shape):
    return tile_coords((0,) * len(shape), shape)


@pytest.mark.parametrize(
    "shape,layout",
    [
        ((128, 64), None),
        ((128, 64), SwizzledShared()),
        ((128, 64), SwizzledShared(8, 1, 8, (1, 0))),
        ((64, 32), SwizzledShared(4, 2, 4, (1, 0))),
        ((32, 64), SwizzledShared(8, 1, 8, (0, 1))),
        ((4, 16, 32), SwizzledShared(4, 1, 8, (2, 1, 0))),
        ((128, 64), PaddedShared(64, 8)),
        ((64, 64), PaddedShared(16, 4, (0, 1))),
        ((128, 16), PartitionedShared(2, 1, 0, PaddedShared(16, 4))),
        ((128, 16), PartitionedShared(2, 2, 0)),
        ((64, 64), PartitionedShared(2, 2, 1, PaddedShared(16, 4))),
    ],
)
def test_shared_offsets_are_distinct(shape, layout):
    offs = shared_offsets(_all_coords(shape), shape, layout)
    assert len(np.unique(offs)) == math.prod(shape)
    assert offs.min() >= 0


def test_swizzle_formula():
    layout = SwizzledShared(vec=2, per_phase=1, max_phase=4, order=(1, 0))
    shape = (8, 8)
    # row 0: phase 0 -> identity
    assert shared_offset((0, 3), shape, layout) == 3
    # row 1: phase 1 -> vec-group index ^ 1: col 0 -> 2, col 3 -> 1
    assert shared_offset((1, 0), shape, layout) == 8 + 2
    assert shared_offset((1, 3), shape, layout) == 8 + 1
    # row 5: phase 5 % 4 = 1
    assert shared_offset((5, 4), shape, layout) == 40 + 6
    # per_phase = 2: rows 2, 3 share phase 1
    layout2 = SwizzledShared(vec=2, per_phase=2, max_phase=4, order=(1, 0))
    assert shared_offset((3, 0), shape, layout2) == 24 + 2
    assert shared_offset((1, 0), shape, layout2) == 8


def test_padded_formula():
    layout = PaddedShared(interval=64, amount=8)
    # row 16 of a 64-wide block: 1024 + (1024 >> 6 << 3) = 1152
    assert shared_offset((16, 0), (128, 64), layout) == 1152
    assert shared_offset((0, 63), (128, 64), layout) == 63
    assert shared_offset((1, 0), (128, 64), layout) == 72


def test_partitioned_formula_matches_triton_placement():
    # [128, 16], 2 partitions x 2 groups along dim 0 (piece = 32 rows, 1 KiB
    # of f16): Triton places piece p in partition p % 2 at group p // 2 * 1 KiB.
    layout = PartitionedShared(2, 2, 0)
    shape = (128, 16)
    assert shared_offset((32, 0), shape, layout, 0) == 0
    assert shared_offset((64, 0), shape, layout, 0) == 512
    assert shared_offset((96, 0), shape, layout, 0) == 512
    assert shared_offset((16, 0), shape, layout, 0) == 256
    parts = shared_partitions(np.array([[0, 0], [32, 0], [64, 0], [96, 0]]), shape, layout)
    assert parts.tolist() == [0, 1, 0, 1]
    # default stride: partitions back to back
    assert shared_offset((32, 0), shape, layout) == 2 * 512
    # padded inner: group stride is the padded piece size (512 + 128)
    layout = PartitionedShared(2, 2, 0, PaddedShared(16, 4))
    assert shared_offset((64, 0), shape, layout, 0) == 640


# ---- edges of the helpers ------------------------------------------------------------------


def test_a_rank_0_box_has_one_empty_coordinate() -> None:
    coords = tile_coords((), ())
    assert coords.shape == (1, 0) and coords.dtype == np.int64


def test_a_box_is_every_coordinate_row_major() -> None:
    coords = tile_coords((5, -1), (2, 3))
    want = [(5 + i, -1 + j) for i in range(2) for j in range(3)]
    assert [tuple(c) for c in coords.tolist()] == want


@pytest.mark.parametrize(
    "layout",
    [
        SwizzledShared(vec=8, per_phase=1, max_phase=1, order=(1, 0)),  # one phase: no swizzle
        SwizzledShared(vec=0, per_phase=1, max_phase=8, order=(1, 0)),
        SwizzledShared(vec=8, per_phase=1, max_phase=8, order=(0,)),  # rank 1
    ],
)
def test_a_swizzle_without_phases_or_vectors_is_the_linear_layout(layout) -> None:
    shape = (16, 64) if len(layout.order) == 2 else (64,)
    coords = tile_coords((0,) * len(shape), shape)
    offsets = shared_offsets(coords, shape, layout)
    assert offsets.tolist() == list(range(math.prod(shape)))


def test_a_swizzle_with_phases_moves_vectors_of_the_rows_after_the_first() -> None:
    layout = SwizzledShared(vec=8, per_phase=1, max_phase=8, order=(1, 0))
    offsets = shared_offsets(tile_coords((0, 0), (16, 64)), (16, 64), layout).reshape(16, 64)
    assert offsets[0].tolist() == list(range(64))
    row = offsets[1] - 64  # row 1: its vectors of 8 XOR-ed with phase 1
    assert row.tolist() == [((c // 8) ^ 1) * 8 + c % 8 for c in range(64)]
    assert sorted(offsets.reshape(-1).tolist()) == list(range(16 * 64))
