"""The layout rules of the hand-off (``lowering.layouts``), pinned where the lit files
left them open (found by ``benchmarks/mutation.py``): pure functions of shapes and
element widths, checked against written-out tables.
"""

from __future__ import annotations

import pytest

from gemm_opt.lowering.layouts import mma_swizzle, row_major


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
