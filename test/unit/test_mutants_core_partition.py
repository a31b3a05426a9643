"""The schedule math at its edges (found by ``benchmarks/mutation.py`` in
``gemm_opt.core.schedules.partition``).

Each rule is checked against what it promises, read off the partition
itself: stream-K's ranges, owners and reduction trees over every small
split, split-K's slices and program numbering over every small shape, the
exact bounds of the split-K and slack checks, the workspace indices, and
the fix-up model's critical path on splits worked out by hand.
"""

from __future__ import annotations

import itertools
import math

import pytest

from gemm_opt.core.modes import Kind, Reduction
from gemm_opt.core.schedules.partition import (
    MAX_SPLIT_K,
    aligned_stream_k_programs,
    check_split_k,
    grid_size,
    grouped_tiles,
    grouped_tiles_bound,
    split_k_count,
    split_k_partition,
    stream_k_partition,
    workspace_layout,
)

SMALL = [
    (t, i, p) for t in range(0, 9) for i in range(0, 7) for p in range(1, 9)
]  # fmt: skip


@pytest.mark.parametrize(("tiles", "programs"), [(3, 8), (8, 3), (5, 5), (0, 4)])
def test_a_persistent_grid_is_at_most_one_program_per_tile(tiles: int, programs: int) -> None:
    assert grid_size(Kind.PERSISTENT, tiles, programs) == min(tiles, programs)
    assert grid_size(Kind.DATA_PARALLEL, tiles, programs) == tiles
    assert grid_size(Kind.STREAM_K, tiles, programs) == programs


def _sk_ranges(part) -> list[tuple[int, int]]:
    return [part.sk_range(p) for p in range(part.num_programs)]


def test_aligned_means_every_stream_k_range_is_in_one_tile_or_whole_tiles() -> None:
    """Over every small split: a stream-K phase whose ranges all have one length
    and each lie inside one tile or are whole tiles."""
    for t, i, p in SMALL:
        part = stream_k_partition(t, i, p)
        ranges = _sk_ranges(part)
        same = len({e - b for b, e in ranges}) == 1
        in_one = all(e > b and b // i == (e - 1) // i for b, e in ranges)
        whole = all(b % i == 0 and e % i == 0 for b, e in ranges) if i else False
        want = part.sk_tiles > 0 and same and (in_one or whole)
        assert part.aligned == want, (t, i, p, ranges)


def test_stream_k_ranges_cover_the_stream_k_iterations_once() -> None:
    for t, i, p in SMALL:
        part = stream_k_partition(t, i, p)
        ranges = _sk_ranges(part)
        if part.fallback:
            assert ranges == [(0, 0)] * p, (t, i, p)
            continue
        assert ranges[0][0] == 0 and ranges[-1][1] == part.total_sk_iters, (t, i, p)
        assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges)), (t, i, p)
        assert all(e > b for b, e in ranges), (t, i, p)  # every program has work


def test_contributors_are_the_programs_whose_range_meets_the_tile() -> None:
    for t, i, p in SMALL:
        part = stream_k_partition(t, i, p)
        ranges = _sk_ranges(part)
        for tile in range(part.dp_tiles, t):
            lo, hi = (tile - part.dp_tiles) * i, (tile - part.dp_tiles + 1) * i
            meets = [q for q, (b, e) in enumerate(ranges) if b < hi and lo < e]
            assert part.contributors(tile) == meets[::-1], (t, i, p, tile)


def test_a_tree_reduction_has_one_level_per_halving() -> None:
    """``n`` contributors: ``ceil(log2 n)`` levels, none empty, every
    non-owner sending exactly once."""
    for t, i, p in SMALL:
        part = stream_k_partition(t, i, p)
        for tile in range(part.dp_tiles, t):
            progs = part.contributors(tile)
            levels = part.tree_steps(tile)
            assert len(levels) == math.ceil(math.log2(len(progs))), (t, i, p, tile)
            assert all(levels), (t, i, p, tile)
            senders = sorted(s for level in levels for _, s in level)
            assert senders == sorted(progs[1:]), (t, i, p, tile)


def test_the_last_program_count_that_leaves_each_program_one_iteration_splits() -> None:
    """One tile of 2 iterations over 2 programs: one iteration each (not a fallback)."""
    part = stream_k_partition(1, 2, 2)
    assert (part.sk_tiles, part.q, part.r) == (1, 1, 0)
    assert stream_k_partition(1, 1, 2).sk_tiles == 0  # one iteration for two programs


@pytest.mark.parametrize(
    ("reduction", "want"),
    [(Reduction.ATOMIC, 2.0), (Reduction.LINEAR, 3.0), (Reduction.TREE, 3.0)],
)
def test_the_critical_path_of_one_tile_over_three_programs(reduction: str, want: float) -> None:
    """6 iterations over 3 programs, 2 each, adding a partial costs 0.5.
    Linear: the owner waits for both partials (at 2) and adds them: 2 + 2 * 0.5.
    Tree: the owner adds program 1's (2 + 0.5), then program 0's (+ 0.5)."""
    part = stream_k_partition(1, 6, 3)
    assert part.critical_path(reduction, add_cost=0.5) == want
    assert part.critical_path(reduction) == 2.0


def test_a_later_contributor_delays_the_owner_by_its_own_wait() -> None:
    """2 tiles of 3 iterations over 3 programs (2 each): program 1 owns tile 0
    (waits for program 0 at 2, adds: 2.5, then works on) while program 2
    owns tile 1 and waits for program 1's partial of tile 1, published at 2."""
    part = stream_k_partition(2, 3, 3)
    assert part.critical_path(Reduction.LINEAR, add_cost=0.5) == part.critical_path(
        Reduction.TREE, add_cost=0.5
    )
    assert part.critical_path(Reduction.LINEAR, add_cost=0.5) > part.critical_path(
        Reduction.ATOMIC, add_cost=0.5
    )


@pytest.mark.parametrize("slack", [0.1, 0.5, 0.9, 1.0])
def test_aligned_programs_is_the_most_aligned_count_within_the_slack(slack: float) -> None:
    """Every count from ``ceil(slack * P)`` to ``P`` is tried, 1 included."""
    for t, i, most in itertools.product(range(0, 10), range(0, 7), range(1, 11)):
        got = aligned_stream_k_programs(t, i, most, slack)
        lo = max(1, math.ceil(slack * most))
        assert lo <= got <= most, (t, i, most)
        if stream_k_partition(t, i, most).sk_tiles == 0:
            assert got == most, (t, i, most)
            continue
        aligned = [p for p in range(lo, most + 1) if stream_k_partition(t, i, p).aligned]
        assert got == (max(aligned) if aligned else most), (t, i, most, aligned)


@pytest.mark.parametrize("slack", [0.0, -0.5, 1.0000001, 1.5, 2.0])
def test_a_slack_outside_zero_one_is_refused(slack: float) -> None:
    with pytest.raises(ValueError, match=r"slack must be in \(0, 1\]"):
        aligned_stream_k_programs(5, 4, 8, slack)


def test_a_slack_of_one_keeps_the_program_count() -> None:
    assert aligned_stream_k_programs(5, 4, 8, 1.0) == 8


# ---- split-K ---------------------------------------------------------------------------


def test_split_k_slices_are_balanced_in_order_and_cover_the_tile() -> None:
    for iters in range(0, 13):
        for s in range(1, max(iters, 1) + 1):
            part = split_k_partition(3, iters, s)
            ranges = [part.slice_range(j) for j in range(s)]
            assert ranges[0][0] == 0 and ranges[-1][1] == iters, (iters, s)
            assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges)), (iters, s)
            sizes = [e - b for b, e in ranges]
            assert max(sizes) - min(sizes) <= 1 and sorted(sizes, reverse=True) == sizes
            for j in (-1, s):
                with pytest.raises(ValueError, match=rf"slice must be in \[0, {s}\)"):
                    part.slice_range(j)


@pytest.mark.parametrize(("tiles", "s"), [(1, 1), (3, 2), (2, 5), (4, 3)])
def test_split_k_programs_are_slice_major(tiles: int, s: int) -> None:
    part = split_k_partition(tiles, 8, s)
    assert part.num_programs == tiles * s
    for program in range(tiles * s):
        tile, sl = part.place(program)
        assert (tile, sl) == (program % tiles, program // tiles)
        assert part.program(tile, sl) == program
    for program in (-1, tiles * s):
        with pytest.raises(ValueError, match=rf"program must be in \[0, {tiles * s}\)"):
            part.place(program)
    for tile, sl in ((-1, 0), (tiles, 0), (0, -1), (0, s)):
        with pytest.raises(ValueError, match=r"\(tile, slice\) must be below"):
            part.program(tile, sl)


@pytest.mark.parametrize(("iters", "most"), [(0, 1), (1, 1), (5, 5), (256, 256), (1000, 256)])
def test_split_k_is_at_most_the_iterations_and_the_limit(iters: int, most: int) -> None:
    check_split_k(most, iters)
    with pytest.raises(ValueError, match=f"split_k must be at most {most} "):
        check_split_k(most + 1, iters)


def test_the_split_k_limit_is_256() -> None:
    assert MAX_SPLIT_K == 256
    check_split_k(256, 10**6)
    with pytest.raises(ValueError, match="split_k must be at most 256 "):
        check_split_k(257, 10**6)


def test_split_k_count_is_the_most_slices_that_fit_the_programs() -> None:
    for tiles, iters, programs in itertools.product(range(0, 6), range(0, 9), range(1, 30)):
        most = min(max(iters, 1), MAX_SPLIT_K)
        fits = [s for s in range(1, most + 1) if max(tiles, 1) * s <= programs]
        want = max(fits) if fits else 1
        assert split_k_count(tiles, iters, programs) == want, (tiles, iters, programs)
    assert split_k_count(1, 10**4, 10**4) == MAX_SPLIT_K


# ---- grouped GEMM ----------------------------------------------------------------------


def test_group_tile_counts_and_the_last_tile() -> None:
    g = grouped_tiles("m", [5, 0, 17, 8], m=0, n=20, k=4, block_m=8, block_n=16)
    assert [g.tiles_of(i) for i in range(4)] == [2, 0, 6, 2]
    assert g.tile(g.total_tiles - 1).group == 3
    for bad in (-1, g.total_tiles):
        with pytest.raises(ValueError, match=rf"tile_id must be in \[0, {g.total_tiles}\)"):
            g.tile(bad)


def test_the_grouped_tile_bound_holds_and_is_tight_for_one_row_groups() -> None:
    """G groups of one row each take G row tiles: the bound (rows + G(bm - 1)) // bm."""
    for lens in ([1, 1, 1], [5, 0, 17, 8], [8, 8], [0, 0], [9, 1, 15, 2, 30]):
        for bm, bn in ((8, 16), (4, 4), (1, 3)):
            exact = grouped_tiles("m", lens, m=0, n=20, k=4, block_m=bm, block_n=bn).total_tiles
            bound = grouped_tiles_bound("m", len(lens), rows=sum(lens), m=0, n=20,
                                        block_m=bm, block_n=bn)  # fmt: skip
            assert exact <= bound, (lens, bm, bn)
    assert grouped_tiles_bound("m", 3, rows=3, m=0, n=16, block_m=4, block_n=16) == 3


# ---- workspace -------------------------------------------------------------------------


def test_counter_indices_and_their_bounds() -> None:
    ws = workspace_layout(Kind.WORK_STEALING, None, 16, 4, 8, 8)
    assert [ws.counter_index(x) for x in range(4)] == [x * ws.counter_stride for x in range(4)]
    for bad in (-1, 4):
        with pytest.raises(ValueError, match=r"xcd must be in \[0, 4\)"):
            ws.counter_index(bad)


def test_flag_and_partial_indices_and_their_bounds() -> None:
    ws = workspace_layout(Kind.STREAM_K, Reduction.TREE, 5, 1, 4, 8)
    assert [ws.flag_index(p) for p in range(5)] == [ws.flag_offset + p for p in range(5)]
    assert [ws.partial_index(p) for p in range(5)] == [32 * p for p in range(5)]
    assert ws.flag_index(4) == ws.sync_elements - 1
    for bad in (-1, 5):
        with pytest.raises(ValueError, match=r"program must be in \[0, 5\)"):
            ws.flag_index(bad)
        with pytest.raises(ValueError, match=r"program must be in \[0, 5\)"):
            ws.partial_index(bad)


def test_a_flag_stride_scales_the_flag_index() -> None:
    from dataclasses import replace

    ws = replace(workspace_layout(Kind.STREAM_K, Reduction.LINEAR, 4, 1, 4, 4), flag_stride=3)
    assert [ws.flag_index(p) for p in range(4)] == [ws.flag_offset + 3 * p for p in range(4)]


@pytest.mark.parametrize(
    ("kind", "reduction", "zero"),
    [(Kind.STREAM_K, Reduction.ATOMIC, True), (Kind.STREAM_K, Reduction.LINEAR, False),
     (Kind.STREAM_K, Reduction.TREE, False), (Kind.STREAM_K, None, False),
     (Kind.SPLIT_K, None, False), (Kind.PERSISTENT, None, False)],
)  # fmt: skip
def test_only_atomic_stream_k_zeroes_the_output(kind: str, reduction: str | None, zero: bool):
    assert workspace_layout(kind, reduction, 4, 1, 8, 8).zero_output is zero
