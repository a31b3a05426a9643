"""The TDM warp layout's input checks at their edges (found by
``benchmarks/mutation.py`` in ``gemm_opt.core.tdm_layout``)."""

from __future__ import annotations

import pytest

from gemm_opt.core.tdm_layout import tdm_warp_layout


@pytest.mark.parametrize("shape", [(0, 64), (64, 0), (3, 64), (64, -4)])
def test_block_dims_are_positive_powers_of_two(shape: tuple[int, int]) -> None:
    with pytest.raises(ValueError, match="block dims must be a positive power of two"):
        tdm_warp_layout(shape, 4)


def test_a_one_element_dim_is_a_power_of_two() -> None:
    assert tdm_warp_layout((1, 64), 4).active_warps() == (0, 1, 2, 3)


def test_ranks_one_to_five() -> None:
    assert tdm_warp_layout((2, 2, 2, 2, 64), 4).rank == 5
    with pytest.raises(ValueError, match="TDM copies have rank 1 to 5"):
        tdm_warp_layout((2, 2, 2, 2, 2, 64), 4)
    with pytest.raises(ValueError, match="TDM copies have rank 1 to 5"):
        tdm_warp_layout((), 4)
