"""Edges of the warp-layout rules that the main sweeps (power-of-two blocks)
never reach: non-power-of-two block dims, with and without a partitioned
shared layout.

The hint rule (``check_warp_used_hint``) only needs whole pieces and enough
placeable warps, so it accepts a 96-row block; the TDM warp layout
(``tdm_warp_layout``) needs every dim to be a power of two (its warp bases are
bit positions) and refuses it, and so does ``tile-assign-tdm-warp-layout``
(lit: tile-assign-tdm-warp-layout-non-pow2.mlir).
"""

from __future__ import annotations

import pytest

from gemm_opt.core.layouts import PaddedShared, PartitionedShared, SwizzledShared
from gemm_opt.core.tdm_layout import tdm_warp_layout
from gemm_opt.core.warp_hint import (
    WarpHintError,
    check_warp_used_hint,
    partitioned_warp_distribution,
    warp_distribution,
)

NON_POW2 = [(48, 64), (64, 48), (96, 64), (2, 3, 64), (3, 64, 64), (64, 12)]


@pytest.mark.parametrize("block", NON_POW2)
@pytest.mark.parametrize("hint", [None, 0x0F, 0x03])
def test_tdm_warp_layout_refuses_a_non_power_of_two_dim(block, hint):
    bad = next(d for d in block if d & (d - 1))
    with pytest.raises(ValueError, match=f"block dims must be a positive power of two, got {bad}"):
        tdm_warp_layout(block, 8, hint, SwizzledShared())


@pytest.mark.parametrize("block", [(0, 64), (64, 0), (-4, 64)])
def test_tdm_warp_layout_refuses_empty_dims(block):
    with pytest.raises(ValueError):
        tdm_warp_layout(block, 8, None, SwizzledShared())


def test_the_hint_rule_accepts_what_the_layout_refuses():
    # 96 rows, two pieces of 48 along dim 0: K = 2 covers both pieces.
    layout = PartitionedShared(2, 1, 0)
    hint = check_warp_used_hint(0x03, 8, (96, 64), layout)
    assert hint.k == 2
    assert partitioned_warp_distribution((96, 64), 2, layout) == ((2, 1), 1)
    with pytest.raises(ValueError, match="got 96"):
        tdm_warp_layout((96, 64), 8, 0x03, layout)


@pytest.mark.parametrize(
    ("block", "layout", "k", "expected"),
    [
        # 3 pieces of 32 rows: gcd(k, 3) = 1 warp along them, 3 instructions.
        ((96, 64), PartitionedShared(3, 1, 0), 8, ((1, 1), 3)),
        ((96, 64), PartitionedShared(3, 1, 0), 4, ((1, 1), 3)),
        # 2 pieces of 48: both covered, then doubled along dim 0 while 48 splits.
        ((96, 64), PartitionedShared(2, 1, 0), 2, ((2, 1), 1)),
        ((96, 64), PartitionedShared(2, 1, 0), 8, ((8, 1), 1)),
        # Partitioned along the innermost dim: the other dim takes the rest.
        ((48, 64), PartitionedShared(2, 1, 1), 8, ((4, 2), 1)),
        ((12, 96), PartitionedShared(2, 2, 1, PaddedShared(16, 4)), 8, ((2, 4), 1)),
    ],
)
def test_partitioned_distribution_of_non_power_of_two_extents(block, layout, k, expected):
    assert partitioned_warp_distribution(block, k, layout) == expected


@pytest.mark.parametrize(
    ("block", "layout", "message"),
    [
        ((96, 64), PartitionedShared(5, 1, 0), "does not divide the block extent 96"),
        ((48, 64), PartitionedShared(2, 1, 2), "has rank 2"),
        ((48, 60), PartitionedShared(8, 1, 1), "does not divide the block extent 60"),
    ],
)
def test_partitions_must_cut_whole_pieces(block, layout, message):
    with pytest.raises((ValueError, WarpHintError), match=message):
        check_warp_used_hint(0x01, 8, block, layout)


@pytest.mark.parametrize(
    ("block", "k", "expected"),
    [((48, 64), 8, (8, 1)), ((3, 64), 8, (2, 4)), ((6, 6), 16, (4, 4)), ((5, 1), 8, (4, 1))],
)
def test_warp_distribution_of_non_power_of_two_dims(block, k, expected):
    """Greedy doubling: a dim takes warps while the doubled count still fits."""
    assert warp_distribution(block, k) == expected


def test_one_piece_is_a_partition_and_zero_pieces_are_not():
    """The dialect accepts ``num_partitions = num_groups = 1`` (one piece: the
    whole block); zero pieces cut nothing."""
    assert check_warp_used_hint(0x03, 8, (96, 64), PartitionedShared(1, 1, 0)).k == 2
    with pytest.raises(ValueError, match="into 0 logical pieces"):
        check_warp_used_hint(0x03, 8, (96, 64), PartitionedShared(0, 1, 0))


def test_more_pieces_than_warps_says_no_hint_can():
    """8 pieces on 4 warps: no hint fits, and the message says so instead of
    suggesting one; 4 pieces on 8 warps: it suggests hints of 4 warps."""
    with pytest.raises(WarpHintError, match=r"no hint can: 8 pieces need more than num_warps = 4"):
        check_warp_used_hint(0x3, 4, (128, 64), PartitionedShared(8, 1, 0))
    with pytest.raises(WarpHintError, match="did you mean") as info:
        check_warp_used_hint(0x3, 8, (128, 64), PartitionedShared(4, 1, 0))
    assert "no hint can" not in str(info.value)


@pytest.mark.parametrize(
    ("block", "layout", "innermost"),
    [((2, 64), PartitionedShared(2, 1, 1), True), ((2, 2, 64), PartitionedShared(2, 1, 0), False)],
)
def test_block_too_small_names_an_innermost_partition(block, layout, innermost):
    """8 warps, only 4 placeable: the message explains the innermost partition
    dim (never split beyond the pieces) only when that is the partition dim."""
    with pytest.raises(WarpHintError, match="can place only 4 of them") as info:
        check_warp_used_hint(0xFF, 8, block, layout)
    assert ("the innermost dim, which is never split" in str(info.value)) == innermost
