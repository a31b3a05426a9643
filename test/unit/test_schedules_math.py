"""The host-side schedule math: every schedule covers every (tile, K iteration) exactly once.

Exhaustive over small sizes and property-based (hypothesis) over large ones;
the worked examples pin the formulas of the reference schedules (Triton's
GROUP_M order, tritonBLAS's stream-K split).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gemm_opt.core import schedules as S
from gemm_opt.kernels import h100_configs as h100

# ---- GROUP_M order ---------------------------------------------------------------------


@pytest.mark.parametrize("pm,pn,gm", list(itertools.product(range(1, 7), range(1, 6), range(1, 8))))
def test_tile_coords_is_a_bijection(pm: int, pn: int, gm: int) -> None:
    seen = {S.tile_coords(t, pm, pn, gm) for t in range(pm * pn)}
    assert seen == {(i, j) for i in range(pm) for j in range(pn)}


def test_tile_coords_walks_columns_inside_bands() -> None:
    # 5 tile rows, 3 columns, bands of 2 rows: (0,0) (1,0) (0,1) (1,1) (0,2) (1,2), then
    # (2,0) ..., and the last band has a single row.
    order = [S.tile_coords(t, 5, 3, 2) for t in range(15)]
    assert order[:6] == [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)]
    assert order[12:] == [(4, 0), (4, 1), (4, 2)]
    assert [S.tile_coords(t, 3, 2, 1) for t in range(6)] == [
        (0, 0),
        (0, 1),
        (1, 0),
        (1, 1),
        (2, 0),
        (2, 1),
    ]


@pytest.mark.parametrize(
    "call",
    [
        lambda: S.tile_coords(6, 2, 3, 1),
        lambda: S.tile_coords(-1, 2, 3, 1),
        lambda: S.tile_coords(0, 2, 3, 0),
        lambda: S.tile_count(4, 4, 0, 16),
        lambda: S.iters_per_tile(-1, 16),
    ],
)
def test_bad_arguments_name_themselves(call) -> None:
    with pytest.raises(ValueError, match="must be"):
        call()


# ---- stream-K --------------------------------------------------------------------------


def _check_partition(tiles: int, ipt: int, programs: int) -> S.StreamKPartition:
    part = S.stream_k_partition(tiles, ipt, programs)
    covered: Counter = Counter()
    for p in range(programs):
        segs = part.segments(p)
        non_owner = [i for i, s in enumerate(segs) if not s.owner]
        # at most one non-owner segment, and it is the program's first stream-K
        # segment: it publishes before the program reaches a tile it owns
        assert len(non_owner) <= 1
        if non_owner:
            assert segs[non_owner[0]].tile >= part.dp_tiles
            assert all(s.tile < part.dp_tiles for s in segs[: non_owner[0]])
        # whole tiles first, then stream-K tiles last to first
        sk = [s.tile for s in segs if s.tile >= part.dp_tiles]
        assert sk == sorted(sk, reverse=True)
        assert all(s.tile < part.dp_tiles for s in segs[: len(segs) - len(sk)])
        for s in segs:
            # K = 0: whole tiles with no iterations (still stored, as zeros)
            assert 0 <= s.k_begin < s.k_end <= ipt or (ipt == 0 and s.whole)
            assert p in part.contributors(s.tile)
            covered.update((s.tile, k) for k in range(s.k_begin, s.k_end))
    want = Counter((t, k) for t in range(tiles) for k in range(ipt))
    assert covered == want, "every (tile, iteration) exactly once"
    for t in range(tiles):
        owners = [p for p in range(programs) for s in part.segments(p) if s.tile == t and s.owner]
        if ipt:
            assert owners == [part.contributors(t)[0]], "one owner, listed first"
        contributors = part.contributors(t)
        # the owner is the last contributor: every wait is on a lower program
        assert contributors == sorted(contributors, reverse=True)
        # the tree visits every non-owner contributor exactly once as a sender
        senders = [s for level in part.tree_steps(t) for _, s in level]
        assert sorted(senders) == sorted(contributors[1:])
    if part.fallback:
        assert part.dp_tiles == tiles and all(
            s.whole for p in range(programs) for s in part.segments(p)
        )
    else:
        # the split is even: programs' stream-K iteration counts differ by at most one
        counts = [part.sk_range(p)[1] - part.sk_range(p)[0] for p in range(programs)]
        assert max(counts) - min(counts) <= 1 and min(counts) >= 1
    return part


def test_stream_k_covers_everything_exhaustively_on_small_sizes() -> None:
    for tiles, ipt, programs in itertools.product(range(0, 13), range(0, 9), range(1, 11)):
        _check_partition(tiles, ipt, programs)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 400), st.integers(0, 300), st.integers(1, 304))
def test_stream_k_covers_everything(tiles: int, ipt: int, programs: int) -> None:
    part = S.stream_k_partition(tiles, ipt, programs)
    covered = 0
    for p in range(programs):
        for s in part.segments(p):
            covered += s.k_end - s.k_begin
    assert covered == tiles * ipt
    # consecutive stream-K ranges tile [0, total_sk_iters) without gaps
    end = 0
    for p in range(programs):
        b, e = part.sk_range(p)
        if not part.fallback:
            assert b == end
            end = e
    assert part.fallback or end == part.total_sk_iters


def _most_work(part: S.StreamKPartition) -> int:
    """The iterations of the busiest program (whole tiles and its stream-K range)."""
    dp = S.cdiv(part.dp_tiles, part.num_programs) * part.iters_per_tile
    return dp + (0 if part.fallback else part.q + (part.r > 0))


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300), st.integers(1, 200), st.integers(1, 300))
def test_fixup_waits_never_outlast_the_busiest_program(tiles: int, ipt: int, programs: int) -> None:
    """Programs visit their stream-K tiles last to first, so every partial is
    published before its owner (or tree partner) can want it: with free adds
    no wait holds anyone past the busiest program's own work, and each added
    partial costs its own time once (no chain through other tiles' fix-ups)."""
    part = S.stream_k_partition(tiles, ipt, programs)
    work = _most_work(part)
    most = max((len(part.contributors(t)) for t in range(tiles)), default=1)
    for reduction in S.REDUCTIONS:
        assert part.critical_path(reduction) == work, reduction
    assert part.critical_path("atomic", 5.0) == work
    assert part.critical_path("linear", 5.0) <= work + 5.0 * (most - 1)
    assert part.critical_path("tree", 5.0) <= work + 5.0 * (most - 1).bit_length()


@pytest.mark.parametrize(
    ("tiles", "ipt", "programs", "contributors", "chain"),
    [
        # the grids the fix-ups were measured at (2 programs per SM at 64x64, 1 at
        # 64x128), and the atomic kernels' (3 and 2), which the fix-ups now get
        (64, 128, 264, (4, 6), 496),  # 512x512x8192 in 64x64x64 tiles
        (64, 128, 396, (7, 8), 231),
        (64, 112, 264, (4, 6), 378),  # 16x4096x7168 in 64x64x64 tiles
        (64, 112, 396, (6, 8), 90),
        (112, 32, 132, (2, 3), 378),  # 128x7168x2048 in 64x128x64 tiles
        (112, 32, 264, (3, 4), 91),
    ],
)
def test_fixup_critical_path_of_the_h100_shapes(tiles, ipt, programs, contributors, chain) -> None:
    """The shapes whose fix-ups were 10x slower than atomic stream-K: every
    tile is split over a few programs and the waits stay inside the tile.
    Visited first to last, each owner publishes its next tile's partial only
    after its own wait: one chain through all tiles, ``chain`` iterations
    (16 times the 31-32 each program computes for the first shape)."""
    part = S.stream_k_partition(tiles, ipt, programs)
    counts = {len(part.contributors(t)) for t in range(tiles)}
    assert (min(counts), max(counts)) == contributors
    work = _most_work(part)
    assert part.critical_path("linear") == part.critical_path("tree") == work
    assert part.critical_path("linear", 1.0) <= work + contributors[1] - 1
    assert part.critical_path("tree", 1.0) <= work + (contributors[1] - 1).bit_length()
    before = _FirstToLast(*(getattr(part, f.name) for f in dataclasses.fields(part)))
    assert before.critical_path("linear") == before.critical_path("tree") == chain


class _FirstToLast(S.StreamKPartition):
    """The order the fix-ups had before: stream-K tiles first to last."""

    def segments(self, program: int) -> list[S.Segment]:
        segs = super().segments(program)
        dp = [s for s in segs if s.tile < self.dp_tiles]
        return dp + segs[len(dp) :][::-1]


def test_stream_k_matches_the_reference_formulas() -> None:
    # 512x512x8192 with 128x128x64 blocks on 132 SMs: 16 tiles of 128 iterations, all stream-K
    part = S.stream_k_partition(16, 128, 132)
    assert (part.dp_tiles, part.sk_tiles, part.q, part.r) == (0, 16, 15, 68)
    assert part.sk_range(0) == (0, 16) and part.sk_range(68) == (16 * 68, 16 * 68 + 15)
    # whole waves first, the last full wave joins the ragged one: 300 tiles on 132
    # programs -> 132 data-parallel, 132 + 36 stream-K
    part = S.stream_k_partition(300, 10, 132)
    assert (part.dp_tiles, part.sk_tiles, part.fallback) == (132, 168, False)
    assert S.stream_k_partition(264, 10, 132).fallback  # whole waves: nothing to split
    # fallback: too little K work (3 tiles of 1 iteration < 4 programs)
    part = S.stream_k_partition(3, 1, 4)
    assert part.fallback and part.dp_tiles == 3


# ---- persistent and work stealing ------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2000), st.integers(1, 300))
def test_persistent_covers_each_tile_once(tiles: int, programs: int) -> None:
    grid = S.grid_size("persistent", tiles, programs)
    got = sorted(t for p in range(grid) for t in S.persistent_tiles(p, tiles, grid))
    assert got == list(range(tiles))


def _simulate_work_stealing(tiles: int, programs: int, xcds: int, rng: random.Random) -> Counter:
    """Programs claim from their chiplet's counter in a random interleaving until it runs out."""
    S.check_work_stealing(programs, xcds)
    ranges = S.work_stealing_ranges(tiles, xcds)
    counters = [0] * xcds
    done: Counter = Counter()
    live = list(range(programs))
    claims_after_empty = 0
    while live:
        p = rng.choice(live)
        x = p % xcds
        raw = counters[x]
        counters[x] += 1  # atomic_add(counter[x], 1)
        start, end = ranges[x]
        if start + raw < end:
            done[start + raw] += 1
        else:
            live.remove(p)  # stops grabbing as soon as its chiplet's tiles are gone
            claims_after_empty += 1
    assert claims_after_empty == programs, "each program makes exactly one failing claim"
    return done


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 500), st.integers(1, 64), st.integers(1, 8), st.integers(0, 2**32))
def test_work_stealing_covers_each_tile_once(tiles: int, programs: int, xcds: int, seed: int):
    if programs < xcds:
        with pytest.raises(ValueError, match="one program per chiplet"):
            S.check_work_stealing(programs, xcds)
        return
    done = _simulate_work_stealing(tiles, programs, xcds, random.Random(seed))
    assert done == Counter(range(tiles))


def test_work_stealing_ranges_partition_the_tiles() -> None:
    for tiles, xcds in itertools.product(range(0, 40), range(1, 10)):
        ranges = S.work_stealing_ranges(tiles, xcds)
        flat = [t for a, b in ranges for t in range(a, b)]
        assert flat == list(range(tiles))


# ---- grouped ---------------------------------------------------------------------------


lens_strategy = st.lists(st.integers(0, 70), min_size=1, max_size=9)


@settings(max_examples=200, deadline=None)
@given(lens_strategy, st.integers(1, 50), st.sampled_from([16, 32]), st.integers(1, 4))
def test_grouped_m_covers_every_output_element_once(lens, n, block, gm) -> None:
    gt = S.grouped_tiles("m", lens, m=0, n=n, k=7, block_m=block, block_n=16, group_m=gm)
    rows = sum(lens)
    cover = Counter()
    for t in range(gt.total_tiles):
        tile = gt.tile(t)
        start = gt.starts[tile.group]
        assert start <= tile.m_off < tile.m_end == start + lens[tile.group]
        assert (tile.k_off, tile.k_end) == (0, 7)
        for r in range(tile.m_off, min(tile.m_off + block, tile.m_end)):
            for c in range(tile.n_off, min(tile.n_off + 16, n)):
                cover[(r, c)] += 1
    assert cover == Counter((r, c) for r in range(rows) for c in range(n))


def test_empty_groups_shift_nothing() -> None:
    base = S.grouped_tiles("m", [5, 9], m=0, n=20, k=8, block_m=4, block_n=8)
    padded = S.grouped_tiles("m", [0, 5, 0, 0, 9, 0], m=0, n=20, k=8, block_m=4, block_n=8)
    assert padded.total_tiles == base.total_tiles
    a = [base.tile(t) for t in range(base.total_tiles)]
    b = [padded.tile(t) for t in range(padded.total_tiles)]
    assert [(x.m_off, x.m_end, x.n_off) for x in a] == [(x.m_off, x.m_end, x.n_off) for x in b]
    assert [x.group for x in b] == [{0: 1, 1: 4}[x.group] for x in a]
    all_empty = S.grouped_tiles("m", [0, 0, 0], m=0, n=20, k=8, block_m=4, block_n=8)
    assert all_empty.total_tiles == 0


@settings(max_examples=150, deadline=None)
@given(lens_strategy, st.integers(1, 40), st.integers(1, 40))
def test_grouped_k_gives_every_group_its_rows_and_its_k_range(lens, m, n) -> None:
    gt = S.grouped_tiles("k", lens, m=m, n=n, k=sum(lens), block_m=16, block_n=16)
    assert gt.total_tiles == len(lens) * S.tile_count(m, n, 16, 16)
    cover = Counter()
    for t in range(gt.total_tiles):
        tile = gt.tile(t)
        g = tile.group
        assert (tile.k_off, tile.k_end) == (gt.starts[g], gt.starts[g] + lens[g])
        assert tile.m_end == (g + 1) * m
        for r in range(tile.m_off, min(tile.m_off + 16, tile.m_end)):
            for c in range(tile.n_off, min(tile.n_off + 16, n)):
                cover[(r, c)] += 1
    assert cover == Counter((r, c) for r in range(len(lens) * m) for c in range(n))


@settings(max_examples=300, deadline=None)
@given(lens_strategy, st.integers(0, 50), st.integers(0, 40), st.sampled_from([16, 32, 64]))
def test_the_grouped_tile_bound_needs_no_lengths_and_is_never_below(lens, n, m, block) -> None:
    """What a host sizes a grid by when the lengths stay on the device: never fewer
    tiles than there are, at most one partial tile row per group more (grouped m)."""
    rows, g = sum(lens), len(lens)
    for grouped in ("m", "k"):
        exact = S.grouped_tiles(grouped, lens, m=m, n=n, k=rows, block_m=block, block_n=16)
        bound = S.grouped_tiles_bound(grouped, g, rows=rows, m=m, n=n, block_m=block, block_n=16)
        assert exact.total_tiles <= bound
        slack = 0 if grouped == "k" else g * S.cdiv(n, 16)
        assert bound <= exact.total_tiles + slack


def test_negative_group_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match=r"group_lens\[1\] must be a non-negative integer"):
        S.grouped_tiles("m", [3, -1], m=0, n=8, k=8, block_m=4, block_n=4)


# ---- workspace -------------------------------------------------------------------------


def test_workspace_layouts() -> None:
    dp = S.workspace_layout("data-parallel", None, 132, 1, 128, 128)
    assert dp.total_bytes == 0 and not dp.zero_output
    ws = S.workspace_layout("work-stealing", None, 304, 8, 128, 128)
    assert ws.num_counters == 8 and ws.sync_elements == 8 * S.COUNTER_STRIDE
    assert [ws.counter_index(x) for x in range(8)] == [64 * x for x in range(8)]
    assert ws.total_bytes == 8 * 256
    lin = S.workspace_layout("stream-k", "linear", 132, 1, 128, 64)
    assert (lin.num_flags, lin.flag_index(131), lin.partial_index(2)) == (132, 131, 2 * 8192)
    assert lin.sync_bytes == 132 * 4 and lin.partials_byte_offset == 768
    assert lin.total_bytes == 768 + 132 * 128 * 64 * 4
    # The lowering addresses partial tile p as rows [p*128, p*128 + 128), partial_ld apart.
    assert lin.partial_ld == 64 and lin.partial_stride == 128 * lin.partial_ld
    atomic = S.workspace_layout("stream-k", "atomic", 132, 1, 128, 64)
    assert atomic.total_bytes == 0 and atomic.zero_output
    assert S.workspace_layout("stream-k", None, 4, 1, 16, 16).num_flags == 4  # linear


@pytest.mark.parametrize(
    "args,match",
    [
        (("stream-k", "fast", 4, 1, 16, 16), "reduction must be one of"),
        (("persistent", "linear", 4, 1, 16, 16), "needs schedule='stream-k'"),
        (("split-n", None, 4, 1, 16, 16), "schedule must be one of"),
        (("work-stealing", None, 0, 1, 16, 16), "num_programs must be a positive"),
    ],
)
def test_workspace_refuses_bad_arguments(args, match) -> None:
    with pytest.raises(ValueError, match=match):
        S.workspace_layout(*args)


@pytest.mark.parametrize("module", ["gemm_opt.core.schedules", "gemm_opt.kernels.h100_configs"])
def test_schedules_import_nothing_heavy(module: str) -> None:
    """The schedule math, the ABI and the H100 configurations (which the runtime's
    autotune reads where no compiler is installed) load no compiler, bindings or numpy."""
    import subprocess
    import sys

    heavy = ("numpy", "torch", "torch_mlir", "triton", "gemm_opt.core.ext_compat")
    code = f"import sys, {module}\nprint(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_kernel_arguments_follow_the_workspace() -> None:
    """The kernel takes sync/partials exactly where the workspace has counters/flags/partials."""
    for kind in S.KINDS:
        for red in S.REDUCTIONS if kind == "stream-k" else (None,):
            names = S.kernel_args(kind, red)
            ws = S.workspace_layout(kind, red, 8, 2, 64, 64)
            assert ("sync" in names) == bool(ws.sync_elements), (kind, red)
            assert ("partials" in names) == bool(ws.partial_elements), (kind, red)
    spec = S.KernelSpec("persistent", None, "m", "bf16", 64, 64, 32, 4, 4, None)
    assert spec.arg_names == (*S.ARG_NAMES[:9], "group_lens", "num_groups")
    with pytest.raises(ValueError, match="dtype must be one of"):
        S.KernelSpec("persistent", None, "none", "f16", 64, 64, 32, 4, 4, None)


def test_gpu_shape_classes_pick_a_config_per_shape():
    """Large outputs take 128x256 tiles, mid-size 128x128, few-tile and
    few-row outputs 64-row tiles (more programs), dgrad and wgrad alike;
    fewer SMs, larger tiles."""
    pick = h100.gpu_config_name
    assert pick(4096, 4096) == pick(8192, 8192) == "wide"
    assert pick(2048, 2048) == "mid"  # 128 tiles of 128x256 < 132 SMs; 256 of 128x128
    assert pick(128, 7168) == "narrow"  # 112 tiles of 64x128 fill half a wave
    assert pick(512, 512) == "small"  # 32 tiles of 64x128 do not; 64 of 64x64
    assert pick(16, 4096) == "small"  # a 64-row tile would be mostly padding at 128
    assert pick(2048, 2048, sms=64) == "wide"
    # stream-K's fix-up holds a partial tile too: 128x256 would spill
    assert pick(4096, 4096, reduction="linear") == pick(4096, 4096, reduction="tree") == "mid"
    assert pick(4096, 4096, reduction="atomic") == "wide"
    assert not h100.config_serves("wide", "tree") and h100.config_serves("wide", "atomic")
    assert h100.config_serves("mid", "linear") and h100.config_serves("default", "tree")
    assert pick(32768, 4096, "m") == "wide"
    # dgrad and wgrad have the pipelined body: every class; wgrad's G grids count
    assert pick(32768, 4096, "m") == pick(4096, 4096, "k") == "wide"
    assert pick(256, 512, "k") == "small" and pick(256, 512, "k", groups=64) == "wide"
    for cfg in h100.GPU_CONFIGS.values():
        S.check_kernel_config(
            block_m=cfg.block_m,
            block_n=cfg.block_n,
            block_k=cfg.block_k,
            num_warps=cfg.num_warps,
            num_stages=cfg.num_stages,
        )
    with pytest.raises(ValueError, match="num_stages must be 2 to 6"):
        S.check_kernel_config(block_m=64, block_n=64, block_k=64, num_warps=4, num_stages=7)
    # dgrad and wgrad have the pipelined body too: the rule reads num_warps only.
    S.check_kernel_config(block_m=64, block_n=64, block_k=64, num_warps=4, num_stages=3)
    with pytest.raises(ValueError, match="num_stages must be 1"):
        S.check_kernel_config(block_m=16, block_n=16, block_k=32, num_warps=1, num_stages=3)


# ---- stream-K program counts of schedule="auto" -----------------------------------------


def test_aligned_stream_k_programs_on_the_measured_shapes() -> None:
    """512x512x8192 in 128x128x64 tiles (16 tiles of 128 iterations) and
    16x4096x7168 / 128x2048x7168 in 64x128x128 tiles (32 of 56): 128 programs
    on a 132-SM part give each program one range in one tile (16 and 14
    iterations); whole waves, too little K work, or nothing aligned within
    10% keep the count."""
    assert S.aligned_stream_k_programs(16, 128, 132) == 128
    assert S.aligned_stream_k_programs(32, 56, 132) == 128
    assert S.aligned_stream_k_programs(3 * 132, 10, 132) == 132  # whole waves: no stream-K tiles
    assert S.aligned_stream_k_programs(7, 3, 132) == 132  # 21 iterations: data-parallel fallback
    assert S.aligned_stream_k_programs(100, 7, 132) == 132  # none of 119..132 aligns
    assert S.aligned_stream_k_programs(16, 128, 132, slack=0.99) == 132
    with pytest.raises(ValueError, match="slack must be in"):
        S.aligned_stream_k_programs(16, 128, 132, slack=0.0)
    with pytest.raises(ValueError, match="max_programs must be a positive"):
        S.aligned_stream_k_programs(16, 128, 0)


@settings(max_examples=300, deadline=None)
@given(
    tiles=st.integers(1, 300),
    ipt=st.integers(0, 200),
    max_programs=st.integers(1, 264),
)
def test_aligned_stream_k_programs_give_one_range_per_program(tiles, ipt, max_programs) -> None:
    """The count is within [ceil(0.9 max), max]; below max, every program's
    stream-K work is one range inside one tile (or whole tiles) and the
    split still covers every (tile, iteration) once."""
    p = S.aligned_stream_k_programs(tiles, ipt, max_programs)
    assert math.ceil(0.9 * max_programs) <= p <= max_programs
    if p == max_programs:
        return
    part = S.stream_k_partition(tiles, ipt, p)
    assert part.sk_tiles > 0
    covered = set()
    for prog in range(p):
        split = [s for s in part.segments(prog) if not s.whole]
        assert len(split) <= 1
        for s in part.segments(prog):
            for it in range(s.k_begin, s.k_end):
                assert (s.tile, it) not in covered
                covered.add((s.tile, it))
    assert covered == {(t, i) for t in range(tiles) for i in range(ipt)}
