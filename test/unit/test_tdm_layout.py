"""Concrete lowering cases of the TDM warp layout (reference doc §2.2-2.6,
§3.3 and §5.2 items 17-29), all verified against Triton 3.9.0."""

from __future__ import annotations

import pytest

from gemm_opt.core.layouts import PaddedShared, PartitionedShared
from gemm_opt.core.tdm_layout import (
    FusedWarpPlanEntry,
    TdmWarpLayout,
    WarpPlanEntry,
    format_warp_plan,
    fused_warp_plan,
    tdm_dim_order,
    tdm_warp_layout,
    warp_plan,
)
from gemm_opt.core.warp_hint import WarpHintError


def starts(plan, warps=None):
    warps = range(len(plan)) if warps is None else warps
    return [plan[w].start for w in warps]


def active_warps(plan):
    return [e.warp for e in plan if e.active]


def rows(plan, warps):
    return [plan[w].start[0] for w in warps]


# ---------------------------------------------------------------------------
# §5.2 items 17-27
# ---------------------------------------------------------------------------


def test_item17_unhinted_128x64():
    lay = tdm_warp_layout((128, 64), 8)
    assert lay.tile == (16, 64)
    assert lay.warps_per_dim == (8, 1)
    assert lay.free_mask == 0  # no predicate code
    assert lay.anchor == 0
    plan = warp_plan((128, 64), 8)
    assert active_warps(plan) == list(range(8))
    assert starts(plan) == [(16 * w, 0) for w in range(8)]


def test_item18_hint_0x0f():
    lay = tdm_warp_layout((128, 64), 8, 0x0F)
    assert lay.tile == (32, 64)
    assert lay.free_mask == 0b100
    plan = warp_plan((128, 64), 8, 0x0F)
    # pred = NOT bit2(w)
    assert [e.active for e in plan] == [not (w >> 2) & 1 for w in range(8)]
    assert rows(plan, range(4)) == [0, 32, 64, 96]


def test_item19_hint_0xf0_xor_anchor():
    lay = tdm_warp_layout((128, 64), 8, 0xF0)
    assert lay.anchor == 4
    plan = warp_plan((128, 64), 8, 0xF0)
    assert [e.active for e in plan] == [bool((w >> 2) & 1) for w in range(8)]
    assert rows(plan, range(4, 8)) == [32 * (w - 4) for w in range(4, 8)]


def test_item20_hint_0xcc():
    plan = warp_plan((128, 64), 8, 0xCC)
    assert [e.active for e in plan] == [bool((w >> 1) & 1) for w in range(8)]
    assert active_warps(plan) == [2, 3, 6, 7]
    assert rows(plan, [2, 3, 6, 7]) == [0, 32, 64, 96]


def test_item21_single_warp():
    plan = warp_plan((128, 64), 8, 0x10)
    assert active_warps(plan) == [4]
    assert plan[4].tile == (128, 64)
    assert plan[4].start == (0, 0)
    assert tdm_warp_layout((128, 64), 8, 0x10).free_mask == 0b111


def test_item22_rank3_order():
    lay = tdm_warp_layout((2, 4, 64), 8)
    assert lay.warps_per_dim == (2, 4, 1)
    assert lay.dim_order == (1, 2, 0)
    assert lay.start(1) == (0, 1, 0)
    assert lay.start(4) == (1, 0, 0)


def test_item23_surplus_warps_and_full_mask_on_2x2():
    plan = warp_plan((2, 2), 8)
    assert active_warps(plan) == [0, 1, 2, 3]
    assert tdm_warp_layout((2, 2), 8).free_mask == 0b100
    with pytest.raises(WarpHintError) as exc:
        warp_plan((2, 2), 8, 0xFF)
    assert exc.value.rule == "block-too-small"


def test_item24_1x1():
    plan = warp_plan((1, 1), 8, 0x1)
    assert active_warps(plan) == [0]
    assert plan[0].tile == (1, 1)
    with pytest.raises(WarpHintError, match="block"):
        warp_plan((1, 1), 8, 0x3)


def test_item25_partitioned_dim0():
    layout = PartitionedShared(2, 1, 0)
    lay = tdm_warp_layout((128, 16), 4, 0x3, layout)
    assert lay.free_mask == 2
    assert lay.tile == (64, 16)
    plan = warp_plan((128, 16), 4, 0x3, layout)
    assert active_warps(plan) == [0, 1]
    assert rows(plan, [0, 1]) == [0, 64]


def test_item26_partitioned_innermost_too_small():
    with pytest.raises(WarpHintError) as exc:
        warp_plan((1, 128), 4, 0xF, PartitionedShared(2, 1, 1))
    assert exc.value.rule == "block-too-small"


def test_item27_nw16_0x8888():
    plan = warp_plan((128, 64), 16, 0x8888)
    assert active_warps(plan) == [3, 7, 11, 15]
    assert rows(plan, [3, 7, 11, 15]) == [0, 32, 64, 96]
    assert plan[3].tile == (32, 64)


# ---------------------------------------------------------------------------
# §2.4 table (nw=8, block [128, 64])
# ---------------------------------------------------------------------------

TABLE_2_4 = [
    # hint, anchor, support bits, free mask, {active warp: start row}
    (None, 0, (0, 1, 2), 0, {w: 16 * w for w in range(8)}),
    (0x0F, 0, (0, 1), 0b100, {w: 32 * w for w in range(4)}),
    (0xF0, 4, (0, 1), 0b100, {w: 32 * (w - 4) for w in range(4, 8)}),
    (0x55, 0, (1, 2), 0b001, {w: 32 * (w >> 1) for w in range(0, 8, 2)}),
    (0xAA, 1, (1, 2), 0b001, {w: 32 * (w >> 1) for w in range(1, 8, 2)}),
    (0xCC, 2, (0, 2), 0b010, {2: 0, 3: 32, 6: 64, 7: 96}),
    (0x03, 0, (0,), 0b110, {0: 0, 1: 64}),
    (0x10, 4, (), 0b111, {4: 0}),
    (0xFF, 0, (0, 1, 2), 0, {w: 16 * w for w in range(8)}),
]


@pytest.mark.parametrize("hint,anchor,support,free,expected", TABLE_2_4)
def test_table_2_4(hint, anchor, support, free, expected):
    lay = tdm_warp_layout((128, 64), 8, hint)
    assert lay.anchor == anchor
    assert lay.hint.varying_bits == support
    assert lay.free_mask == free
    plan = warp_plan((128, 64), 8, hint)
    assert {e.warp: e.start[0] for e in plan if e.active} == expected
    assert all(e.start[1] == 0 for e in plan)
    # pred(w) == bit w of the hint (or all warps)
    mask = 0xFF if hint is None else hint
    assert [e.active for e in plan] == [bool(mask >> w & 1) for w in range(8)]


def test_inactive_warps_name_their_masked_tile():
    # 0x0F: warps 4..7 have pred 0 but still compute the tiles of 0..3.
    plan = warp_plan((128, 64), 8, 0x0F)
    assert starts(plan, range(4, 8)) == starts(plan, range(4))
    # 0xCC: warp 0 -> w ^ 2 = 2 -> bit 1 is free -> tile 0; warp 1 -> tile 1.
    plan = warp_plan((128, 64), 8, 0xCC)
    assert plan[0].start == (0, 0) and plan[1].start == (32, 0)


# ---------------------------------------------------------------------------
# §2.2 tiles and distributions
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "hint,tile",
    [
        (None, (16, 64)),
        (0x0F, (32, 64)),
        (0xF0, (32, 64)),
        (0x55, (32, 64)),
        (0xAA, (32, 64)),
        (0xCC, (32, 64)),
        (0x03, (64, 64)),
        (0x10, (128, 64)),
    ],
)
def test_tiles_2_2(hint, tile):
    assert tdm_warp_layout((128, 64), 8, hint).tile == tile


def test_4x64_with_8_warps():
    lay = tdm_warp_layout((4, 64), 8)
    assert lay.warps_per_dim == (4, 2)
    assert lay.tile == (1, 32)
    # rank 2 order [0, 1]: bits 0, 1 -> rows, bit 2 -> column halves
    assert lay.warp_bases == ((1, 0), (2, 0), (0, 32))


def test_dim_order():
    assert tdm_dim_order(1) == (0,)
    assert tdm_dim_order(2) == (0, 1)
    assert tdm_dim_order(3) == (1, 2, 0)
    assert tdm_dim_order(4) == (2, 3, 1, 0)
    assert tdm_dim_order(5) == (3, 4, 2, 1, 0)


# ---------------------------------------------------------------------------
# §2.4 higher-rank examples
# ---------------------------------------------------------------------------


def test_2x4x64_hint_0x0f():
    lay = tdm_warp_layout((2, 4, 64), 8, 0x0F)
    assert lay.warps_per_dim == (2, 2, 1)
    assert lay.tile == (1, 2, 64)
    assert lay.start(1) == (0, 2, 0)
    assert lay.start(2) == (1, 0, 0)
    assert [lay.active(w) for w in range(4, 8)] == [False] * 4


def test_2x2x2x64_unhinted_bases():
    lay = tdm_warp_layout((2, 2, 2, 64), 8)
    assert lay.warp_bases == ((0, 0, 1, 0), (0, 1, 0, 0), (1, 0, 0, 0))


def test_2x2x2x64_hint_0x55():
    lay = tdm_warp_layout((2, 2, 2, 64), 8, 0x55)
    assert lay.warps_per_dim == (2, 2, 1, 1)
    # support bits 1 and 2 map to dim1 and dim0; bit 0 is pinned (free)
    assert lay.warp_bases == ((0, 0, 0, 0), (0, 1, 0, 0), (1, 0, 0, 0))
    assert lay.active_warps() == (0, 2, 4, 6)


def test_1x2x2x2x32_hint_0xcc():
    lay = tdm_warp_layout((1, 2, 2, 2, 32), 8, 0xCC)
    assert lay.warps_per_dim == (1, 2, 2, 1, 1)
    assert lay.warp_bases[0] == (0, 0, 1, 0, 0)  # bit0 -> dim2
    assert lay.warp_bases[1] == (0, 0, 0, 0, 0)  # pinned
    assert lay.warp_bases[2] == (0, 1, 0, 0, 0)  # bit2 -> dim1
    assert lay.active_warps() == (2, 3, 6, 7)


# ---------------------------------------------------------------------------
# §2.5 block-shape-dependent rejection
# ---------------------------------------------------------------------------

SMALL_BLOCK_FAILURES = [
    ((2, 2), 8, 0xFF),
    ((4,), 8, 0xFF),
    *[((1, 1), 8, h) for h in (0xFF, 0xF, 0xF0, 0x55, 0xAA, 0xCC, 0x33, 0x3, 0xC, 0x11)],
    ((1, 1), 2, 0x3),
]


@pytest.mark.parametrize("shape,nw,hint", SMALL_BLOCK_FAILURES)
def test_block_too_small(shape, nw, hint):
    with pytest.raises(WarpHintError) as exc:
        tdm_warp_layout(shape, nw, hint)
    assert exc.value.rule == "block-too-small"


def test_small_blocks_that_work():
    assert tdm_warp_layout((1, 1), 8, 0x10).active_warps() == (4,)
    # Without a hint the same small blocks compile: surplus warps are off.
    assert tdm_warp_layout((2, 2), 8).active_warps() == (0, 1, 2, 3)
    assert tdm_warp_layout((1, 1), 8).active_warps() == (0,)
    assert tdm_warp_layout((4,), 8).active_warps() == (0, 1, 2, 3)


def test_partitioned_innermost_rejections():
    with pytest.raises(WarpHintError):
        tdm_warp_layout((2, 128), 8, 0xFF, PartitionedShared(2, 1, 1))
    lay = tdm_warp_layout((2, 128), 8, 0x0F, PartitionedShared(2, 1, 1))
    assert lay.warps_per_dim == (2, 2)
    with pytest.raises(WarpHintError):
        tdm_warp_layout((1, 128), 4, 0xF, PartitionedShared(2, 1, 1))
    lay = tdm_warp_layout((1, 128), 4, 0x3, PartitionedShared(2, 1, 1))
    assert lay.warps_per_dim == (1, 2)


# ---------------------------------------------------------------------------
# §2.6 partitioned examples
# ---------------------------------------------------------------------------


def test_partitioned_128x16_nw4():
    layout = PartitionedShared(2, 1, 0)
    assert tdm_warp_layout((128, 16), 4, None, layout).warps_per_dim == (4, 1)
    for hint, free in [(0x3, 2), (0x5, 1), (0xC, 2)]:
        lay = tdm_warp_layout((128, 16), 4, hint, layout)
        assert lay.warps_per_dim == (2, 1)
        assert lay.tile == (64, 16)
        assert lay.free_mask == free


def test_partitioned_2x2_pieces_nw8():
    layout = PartitionedShared(2, 2, 0)
    for hint in (0x0F, 0xF0, 0x55):
        assert tdm_warp_layout((128, 16), 8, hint, layout).warps_per_dim == (4, 1)
    assert tdm_warp_layout((128, 16), 8, 0xFF, layout).warps_per_dim == (8, 1)


def test_partitioned_innermost_16x128():
    layout = PartitionedShared(2, 1, 1)
    for hint in (0x3, 0x30):
        assert tdm_warp_layout((16, 128), 8, hint, layout).warps_per_dim == (1, 2)
    lay = tdm_warp_layout((16, 128), 8, 0x0F, layout)
    assert lay.warps_per_dim == (2, 2)
    assert lay.warp_bases[0] == (8, 0)
    assert lay.warp_bases[1] == (0, 64)


def test_partitioned_with_padding_inner():
    layout = PartitionedShared(2, 1, 0, PaddedShared(16, 4))
    assert tdm_warp_layout((128, 16), 4, 0x3, layout).tile == (64, 16)


def test_unhinted_partitioned_needing_several_instructions_is_rejected():
    # 4 pieces, 2 warps: Triton slices the copy into 2 TDM instructions.
    with pytest.raises(ValueError, match="2 TDM instructions"):
        tdm_warp_layout((128, 16), 2, None, PartitionedShared(2, 2, 0))


# ---------------------------------------------------------------------------
# §3.3 fused selection (§5.2 item 29)
# ---------------------------------------------------------------------------

B = (128, 64)


def fused(hints, shapes=None, nw=8):
    shapes = shapes or [B] * len(hints)
    return fused_warp_plan([(s, h, None) for s, h in zip(shapes, hints, strict=True)], nw)


def test_fused_0f_f0():
    plan = fused([0x0F, 0xF0])
    assert [e.member for e in plan] == [0] * 4 + [1] * 4
    assert all(e.active for e in plan)
    assert [e.start[0] for e in plan] == [32 * (w % 4) for w in range(8)]


def test_fused_55_aa():
    plan = fused([0x55, 0xAA])
    assert [e.member for e in plan] == [w & 1 for w in range(8)]
    assert [e.start[0] for e in plan] == [32 * (w >> 1) for w in range(8)]
    assert all(e.active for e in plan)


def test_fused_different_k():
    plan = fused([0x0F, 0x30, 0xC0])
    assert [e.member for e in plan] == [0, 0, 0, 0, 1, 1, 2, 2]
    assert [e.tile for e in plan] == [(32, 64)] * 4 + [(64, 64)] * 4
    assert [e.start[0] for e in plan] == [0, 32, 64, 96, 0, 64, 0, 64]


def test_fused_four_singletons():
    plan = fused([1, 2, 4, 8])
    assert [e.member for e in plan] == [0, 1, 2, 3, 3, 3, 3, 3]
    assert [e.active for e in plan] == [True] * 4 + [False] * 4
    assert all(e.tile == (128, 64) for e in plan)


def test_fused_partial_coverage():
    plan = fused([0x03, 0x0C])
    assert [e.member for e in plan] == [0, 0, 1, 1, 1, 1, 1, 1]
    assert [e.active for e in plan] == [True] * 4 + [False] * 4


def test_fused_union_not_a_coset():
    plan = fused([0x01, 0x08])
    assert [e.member for e in plan] == [0, 1, 1, 1, 1, 1, 1, 1]
    assert active_warps(plan) == [0, 3]


def test_fused_heterogeneous_shapes():
    plan = fused([0x0F, 0xF0], shapes=[(64, 64), (32, 128)])
    assert [e.tile for e in plan] == [(16, 64)] * 4 + [(8, 128)] * 4
    plan = fused([0x3, 0xC], shapes=[(128, 64), (16, 16)])
    assert plan[0].tile == (64, 64) and plan[2].tile == (8, 16)


def test_fused_hint_errors():
    with pytest.raises(WarpHintError):
        fused([0x0F, 0x03])  # overlap
    with pytest.raises(WarpHintError):
        fused([0x07, 0x08])  # popcount
    with pytest.raises(WarpHintError):
        fused([0x0F])  # one member
    with pytest.raises(WarpHintError):
        fused([0x03, 0x0C], shapes=[(128, 64), (64,)])  # rank


# ---------------------------------------------------------------------------
# API shape
# ---------------------------------------------------------------------------


def test_plan_entries_and_layout_types():
    plan = warp_plan([128, 64], 8, 0x0F)
    assert all(isinstance(e, WarpPlanEntry) for e in plan)
    assert [e.warp for e in plan] == list(range(8))
    lay = tdm_warp_layout([128, 64], 8, 0x0F)
    assert isinstance(lay, TdmWarpLayout)
    assert lay.block_shape == (128, 64)
    assert len(lay.warp_bases) == 3
    assert all(isinstance(e, FusedWarpPlanEntry) for e in fused([0x0F, 0xF0]))


def test_start_and_active_reject_bad_warps():
    lay = tdm_warp_layout((128, 64), 8)
    with pytest.raises(ValueError):
        lay.start(8)
    with pytest.raises(ValueError):
        lay.active(-1)


def test_format_warp_plan():
    text = format_warp_plan(warp_plan((128, 64), 8, 0xF0))
    lines = text.splitlines()
    assert lines[0].split() == ["warp", "active", "start", "tile"]
    assert len(lines) == 9
    assert lines[5].split()[:2] == ["4", "yes"]
    assert "[0, 0]" in lines[5] and "[32, 64]" in lines[5]
    assert lines[1].split()[1] == "no"
    fused_text = format_warp_plan(fused([1, 2, 4, 8]))
    assert fused_text.splitlines()[0].split() == [
        "warp",
        "member",
        "active",
        "start",
        "tile",
    ]


def test_package_root_exports():
    import gemm_opt

    for name in ("warp_plan", "tdm_warp_layout", "WarpPlanEntry", "TdmWarpLayout"):
        assert hasattr(gemm_opt, name), name
