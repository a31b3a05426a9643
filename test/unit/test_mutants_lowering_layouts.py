"""The layout rules of the hand-off (``lowering.layouts``), pinned where the lit files
left them open (found by ``benchmarks/mutation.py``): pure functions of shapes and
element widths, checked against written-out tables.
"""

from __future__ import annotations

import pytest

from gemm_opt.lowering.layouts import (
    blocked_params,
    mma_swizzle,
    nvmma_swizzle,
    row_major,
    wgmma_shape,
)


@pytest.mark.parametrize(
    ("rank", "order"), [(1, [0]), (2, [1, 0]), (3, [2, 1, 0]), (4, [3, 2, 1, 0])]
)
def test_row_major_is_the_last_dim_fastest(rank: int, order: list[int]) -> None:
    assert row_major(rank) == order


# (vec, per_phase, max_phase): 16-byte vectors along the contiguous dim, a phase over
# 128 bytes of rows, 8 phases of 16 bytes in all (fewer when a row is wider).
@pytest.mark.parametrize(
    ("shape", "bits", "swizzle"),
    [
        ((64, 64), 16, (8, 1, 8)),  # Triton's mma v2 operands: 128-byte rows
        ((64, 32), 16, (8, 2, 4)),  # 64-byte rows: two rows a phase
        ((64, 128), 16, (8, 1, 8)),
        ((64, 64), 32, (4, 1, 8)),
        ((64, 128), 8, (16, 1, 8)),  # one-byte elements: 16 to a vector
        ((64, 16), 8, (16, 8, 1)),  # 16-byte rows: a phase of 8 rows, one phase
        ((64, 4), 8, (4, 32, 1)),  # rows narrower than a vector
        ((64, 1), 8, (1, 128, 1)),  # one-element rows
        ((64, 1), 64, (1, 16, 1)),
    ],
)
def test_mma_swizzle_table(shape: tuple[int, int], bits: int, swizzle: tuple) -> None:
    assert mma_swizzle([1, 0], shape, bits) == swizzle


def test_mma_swizzle_reads_the_contiguous_dim_of_the_order() -> None:
    # Column-major (order [0, 1]): the rows of 64 elements run down dim 0.
    assert mma_swizzle([0, 1], (64, 32), 16) == (8, 1, 8)
    assert mma_swizzle([0, 1], (32, 64), 16) == (8, 2, 4)
    # The trailing dims of a deeper shape are the block's (a ring of 3 buffers).
    assert mma_swizzle([1, 0], (3, 64, 32), 16) == (8, 2, 4)


@pytest.mark.parametrize(
    ("mnk", "warps", "bits", "layout"),
    [
        ((128, 128, 64), 4, 16, ([4, 1], [16, 128, 16])),
        ((128, 128, 64), 8, 16, ([8, 1], [16, 128, 16])),  # M has rows for 8 warps
        ((64, 64, 32), 8, 16, ([4, 2], [16, 32, 16])),  # then along N
        ((128, 128, 64), 16, 16, ([8, 2], [16, 64, 16])),
        ((64, 256, 64), 4, 16, ([4, 1], [16, 256, 16])),
        ((64, 512, 16), 4, 16, ([4, 1], [16, 256, 16])),  # N of one instruction <= 256
        ((64, 24, 16), 4, 16, ([4, 1], [16, 24, 16])),  # the largest multiple of 8
        ((128, 256, 64), 8, 8, ([8, 1], [16, 256, 32])),  # 8-bit: K is 32 bytes too
    ],
)
def test_wgmma_shape_table(
    mnk: tuple[int, int, int], warps: int, bits: int, layout: tuple[list[int], list[int]]
) -> None:
    assert wgmma_shape(*mnk, warps, bits) == layout


@pytest.mark.parametrize(
    ("mnk", "warps", "why"),
    [
        ((128, 128, 64), 6, "6 warps are not whole warpgroups of 4"),
        ((256, 128, 64), 12, "12 warps are not a power of two"),
        ((48, 128, 64), 4, "M = 48 is not a multiple of the 64 rows of 4 warps"),
        # M past one warpgroup's 64 rows takes the next 4 warps along M first.
        ((66, 128, 64), 8, "M = 66 is not a multiple of the 128 rows of 8 warps"),
        ((64, 20, 64), 4, "N = 20 does not split into 1 warpgroup tiles of multiples of 8"),
        ((64, 40, 32), 8, "N = 40 does not split into 2 warpgroup tiles of multiples of 8"),
        ((64, 64, 24), 4, "K = 24 is not a multiple of 16"),
    ],
)
def test_wgmma_shape_refusals(mnk: tuple[int, int, int], warps: int, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        wgmma_shape(*mnk, warps)


@pytest.mark.parametrize(
    ("shape", "bits", "swizzle"),
    [
        ((64, 64), 16, 128),
        ((64, 32), 16, 64),
        ((64, 16), 16, 32),
        ((64, 8), 16, 0),  # 16-byte rows: unswizzled
        ((4, 64), 16, 0),  # fewer than 8 rows
        ((8, 32), 32, 128),
        ((64, 64), 8, 64),
        ((64,), 16, 0),  # rank 1
    ],
)
def test_nvmma_swizzle_table(shape: tuple[int, ...], bits: int, swizzle: int) -> None:
    assert nvmma_swizzle(shape, bits) == swizzle


# (sizePerThread, threadsPerWarp, warpsPerCTA, order) of the coalesced blocked layout:
# 16-byte vectors along the last dim (i1 counts as a byte), lanes along it as far as
# the row has vectors, the rest of the warp and every warp down the rows.
@pytest.mark.parametrize(
    ("shape", "bits", "warps", "lanes", "layout"),
    [
        ((64, 64), 16, 4, 32, ([1, 8], [4, 8], [4, 1], [1, 0])),
        ((64, 64), 16, 4, 64, ([1, 8], [8, 8], [4, 1], [1, 0])),
        ((64, 8), 16, 4, 32, ([1, 8], [32, 1], [4, 1], [1, 0])),
        ((64, 4), 32, 8, 32, ([1, 4], [32, 1], [8, 1], [1, 0])),
        ((64, 2), 64, 4, 32, ([1, 2], [32, 1], [4, 1], [1, 0])),
        ((64, 64), 1, 4, 32, ([1, 16], [8, 4], [4, 1], [1, 0])),
        ((64, 256), 8, 4, 64, ([1, 16], [4, 16], [4, 1], [1, 0])),
    ],
)
def test_blocked_params_table(
    shape: tuple[int, int], bits: int, warps: int, lanes: int, layout: tuple
) -> None:
    assert blocked_params(shape, bits, warps, lanes) == layout
