"""The copy model's shared-memory placement and argument checks at their edges.

Layouts are plain dataclasses nothing validates, so the model refuses what
it cannot place (a padding that is not a power of two) and reads a missing
or short ``order`` as row-major; a swizzle with one vector per row, one
phase or rank 1 is the linear layout, and a vector of one still swizzles.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gemm_opt.core.layouts import PaddedShared, PartitionedShared, SwizzledShared
from gemm_opt.core.tdm_layout import tdm_warp_layout
from gemm_opt.model.copy import (
    execute_tile,
    execute_warp,
    shared_offsets,
    simulate_fused_copy,
    tile_coords,
    warp_writes,
)


def _row_major(shape: tuple[int, ...]) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=np.int64)


@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 3, 4)])
def test_no_layout_and_a_layout_without_a_usable_order_are_row_major(
    shape: tuple[int, ...],
) -> None:
    coords = tile_coords([0] * len(shape), shape)
    want = _row_major(shape)
    np.testing.assert_array_equal(shared_offsets(coords, shape), want)
    for order in [(), tuple(range(len(shape) + 1))]:  # missing, or of another rank
        for layout in [SwizzledShared(order=order), PaddedShared(1, 1, order=order)]:
            got = shared_offsets(coords, shape, layout)
            if isinstance(layout, PaddedShared):  # one pad element after each
                want_padded = want * 2
                np.testing.assert_array_equal(got, want_padded)
            else:
                np.testing.assert_array_equal(got, want)


def test_an_order_of_the_blocks_rank_is_followed() -> None:
    """``order = (0, 1)``: dim 0 fastest (column-major)."""
    shape = (2, 3)
    coords = tile_coords([0, 0], shape)
    got = shared_offsets(coords, shape, SwizzledShared(order=(0, 1)))
    want = [i + 2 * j for i, j in coords.tolist()]
    np.testing.assert_array_equal(got, want)


def _swizzle(shape: tuple[int, int], vec: int, per_phase: int, max_phase: int) -> np.ndarray:
    """Row-major offsets of the XOR swizzle, written out element by element."""
    rows, cols = shape
    out = np.zeros(rows * cols, np.int64)
    for r, c in itertools.product(range(rows), range(cols)):
        phase = (r // per_phase) % max_phase
        sc = (((c // vec) ^ phase) * vec + c % vec) % cols
        out[r * cols + c] = r * cols + sc
    return out


@pytest.mark.parametrize(
    ("vec", "per_phase", "max_phase"),
    [(1, 1, 2), (1, 1, 4), (2, 1, 2), (1, 2, 4)],
)
def test_a_vector_of_one_and_two_phases_still_swizzle(
    vec: int, per_phase: int, max_phase: int
) -> None:
    shape = (4, 8)
    coords = tile_coords([0, 0], shape)
    got = shared_offsets(coords, shape, SwizzledShared(vec, per_phase, max_phase))
    want = _swizzle(shape, vec, per_phase, max_phase)
    assert not np.array_equal(want, _row_major(shape))  # the case does swizzle
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("shape", "layout"),
    [
        ((8,), SwizzledShared(2, 1, 4, order=(0,))),  # rank 1: no rows to phase
        ((4, 8), SwizzledShared(0, 1, 4)),  # no vector
        ((4, 8), SwizzledShared(-1, 1, 4)),
        ((4, 8), SwizzledShared(2, 1, 0)),  # no phase
    ],
)
def test_a_swizzle_without_rows_vectors_or_phases_is_linear(
    shape: tuple[int, ...], layout: SwizzledShared
) -> None:
    coords = tile_coords([0] * len(shape), shape)
    np.testing.assert_array_equal(shared_offsets(coords, shape, layout), _row_major(shape))


@pytest.mark.parametrize(("interval", "amount"), [(1, 1), (2, 1), (4, 2), (1, 4)])
def test_padding_by_powers_of_two(interval: int, amount: int) -> None:
    shape = (2, 4)
    coords = tile_coords([0, 0], shape)
    lin = _row_major(shape)
    want = lin + (lin // interval) * amount
    np.testing.assert_array_equal(
        shared_offsets(coords, shape, PaddedShared(interval, amount)), want
    )


@pytest.mark.parametrize("bad", [0, -2, 3, 6, 12])
@pytest.mark.parametrize("which", ["interval", "amount"])
def test_padding_not_by_a_positive_power_of_two_is_refused(bad: int, which: str) -> None:
    args = {"interval": 2, "amount": 2, which: bad}
    coords = tile_coords([0, 0], (2, 4))
    with pytest.raises(ValueError, match=f"expected a positive power of two, got {bad}$"):
        shared_offsets(coords, (2, 4), PaddedShared(**args))


@pytest.mark.parametrize(
    ("origin", "bounds"),
    [([0], [4, 4]), ([0, 0], [4]), ([0, 0, 0], [4, 4]), ([0, 0], [4, 4, 4])],
)
def test_a_tile_read_of_mixed_ranks_is_refused(origin: list[int], bounds: list[int]) -> None:
    g = np.arange(16, dtype=np.float32).reshape(4, 4)
    with pytest.raises(ValueError, match="must share one rank"):
        execute_tile(g, origin, [2, 2], bounds)
    with pytest.raises(ValueError, match="must share one rank"):
        execute_tile(g.reshape(-1), [0, 0], [2, 2], [4, 4])


def test_a_warp_copy_with_offsets_of_another_rank_is_refused() -> None:
    layout = tdm_warp_layout((4, 8), 1, 1)
    g = np.arange(32, dtype=np.float32).reshape(4, 8)
    block = np.zeros((4, 8), np.float32)
    with pytest.raises(ValueError):
        execute_warp(layout, 0, g, [0, 0, 0], block)
    assert not block.any()
    execute_warp(layout, 0, g, [0, 0], block)
    np.testing.assert_array_equal(block, g)


def test_a_fused_members_shared_layout_shapes_its_warp_tiles() -> None:
    """A member's fourth entry is its shared layout: a partitioned one keeps
    each warp's tile inside one piece, unlike the same member without it."""
    shape, layout = (16, 128), PartitionedShared(2, 1, 1)
    nw, hint = 8, 0x0F  # member 0 on warps 0-3, member 1 (no layout) on 4-7
    g = np.arange(shape[0] * shape[1], dtype=np.float32).reshape(shape)
    other = ((0, 0), shape, 0xF0)
    res = simulate_fused_copy([g, g], [((0, 0), shape, hint, layout), other], nw)
    plain = simulate_fused_copy([g, g], [((0, 0), shape, hint), other], nw)
    want = tdm_warp_layout(shape, nw, hint, layout)
    for w in range(4):
        assert res.writes[w][0] == 0
        np.testing.assert_array_equal(res.writes[w][1], warp_writes(want, w))
    assert any(
        not np.array_equal(res.writes[w][1], plain.writes[w][1]) for w in range(4)
    )  # the layout matters here
    np.testing.assert_array_equal(res.blocks[0], g)
