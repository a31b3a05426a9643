"""The warp-hint rules at their exact edges (found by ``benchmarks/mutation.py``
in ``gemm_opt.core.warp_hint``)."""

from __future__ import annotations

import pytest

from gemm_opt.core.layouts import PartitionedShared
from gemm_opt.core.warp_hint import WarpHintError, check_warp_used_hint, warp_distribution


@pytest.mark.parametrize("shape", [(0, 16), (16, 0), (16, -1, 4)])
def test_one_empty_dim_is_refused(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="block dimensions must be positive"):
        warp_distribution(shape, 4)


def test_as_many_pieces_as_warps_leaves_a_hint() -> None:
    """4 pieces on 4 warps: the all-warps hint covers them, so the report of a
    two-warp hint suggests one instead of saying that no hint can."""
    assert check_warp_used_hint(0xF, 4, (128, 64), PartitionedShared(4, 1, 0)).k == 4
    with pytest.raises(WarpHintError, match="did you mean") as info:
        check_warp_used_hint(0x3, 4, (128, 64), PartitionedShared(4, 1, 0))
    assert "no hint can" not in str(info.value)
