"""A padded layout's interval and its row nest (one holds whole others), so
every row starts on a padding boundary: the rule at its edges, for plain,
multi-buffered, reordered and partitioned layouts (the verifier's located
error: test/lit/dialect/tile-shared-invalid.mlir)."""

from __future__ import annotations

import pytest

from gemm_opt.core.layouts import (
    LayoutError,
    PaddedShared,
    PartitionedShared,
    check_shared_layout,
)

ROW_RULE = "a row must hold whole intervals, or an interval whole rows"


@pytest.mark.parametrize(
    ("shape", "layout", "multi"),
    [
        ((128, 64), PaddedShared(64, 8), False),  # one interval per row
        ((128, 96), PaddedShared(32, 8), False),  # three per row
        ((256, 2), PaddedShared(64, 8), False),  # one pad every 32 rows
        ((64, 1), PaddedShared(2, 4), False),  # one pad every 2 rows
        ((48, 64), PaddedShared(16, 4, (0, 1)), False),  # rows along dim 0
        ((3, 32, 96), PaddedShared(32, 8), True),  # the buffer index is no row
        ((64, 96), PartitionedShared(2, 1, 1, PaddedShared(16, 4)), False),  # 48 = 3 x 16
        ((96, 64), PartitionedShared(2, 1, 0, PaddedShared(64, 8)), False),  # cut across rows
    ],
)
def test_nested_intervals_are_accepted(shape, layout, multi):
    check_shared_layout(layout, shape, multi_buffered=multi)


@pytest.mark.parametrize(
    ("shape", "layout", "multi", "row"),
    [
        ((128, 96), PaddedShared(64, 8), False, "the 96-element row (dimension 1"),
        ((128, 48), PaddedShared(32, 8), False, "the 48-element row (dimension 1"),
        ((96, 64), PaddedShared(64, 8, (0, 1)), False, "the 96-element row (dimension 0"),
        ((2, 8, 24), PaddedShared(16, 4), True, "the 24-element row (dimension 1"),
        (
            (64, 96),
            PartitionedShared(2, 1, 1, PaddedShared(32, 4)),
            False,
            "the 48-element row of each of 2 pieces",
        ),
        (
            (64, 192),
            PartitionedShared(2, 2, 1, PaddedShared(32, 4)),
            False,
            "the 48-element row of each of 4 pieces",
        ),
    ],
)
def test_intervals_that_do_not_fit_the_row_are_refused(shape, layout, multi, row):
    with pytest.raises(LayoutError) as info:
        check_shared_layout(layout, shape, multi_buffered=multi)
    message = str(info.value)
    assert f"does not fit {row}" in message, message
    assert ROW_RULE in message
