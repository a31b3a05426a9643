"""Split-K: the host partition, the lowered kernel on the model against numpy, its
fixed-order reduction bit for bit across interleavings, the ordering atomics it
needs, every target, and the API.

Integer-valued inputs make every product and fp32 partial sum exact, so C must
equal numpy exactly; random floats check that the result does not depend on the
order programs arrive in (the model interleaves them by seed).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gemm_opt
from gemm_opt.core import schedules as S
from gemm_opt.core.ext_compat import ir
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.kernels.build_bundles import bundle_specs
from gemm_opt.kernels.schedule_gemm import build_gemm_module
from gemm_opt.lowering.compile import compile_tile_module
from gemm_opt.model.interpreter import ModelError, run_function
from gemm_opt.passes.lower_gemm_schedule import LowerGemmSchedulePass
from gemm_opt.runtime import plan as plans

BM = BN = BK = 32
#: (M, N, K, S): ragged edges, K below one block (S = 1), S = iterations per
#: tile, uneven slices, one tile, K = 0, many tiles.
SHAPES = [
    (45, 70, 300, 3),
    (17, 9, 20, 1),
    (64, 96, 256, 8),
    (33, 33, 100, 3),
    (20, 20, 300, 5),
    (5, 7, 0, 1),
    (96, 96, 512, 2),
]


# ---- the partition ---------------------------------------------------------------------


def _check_partition(tiles: int, ipt: int, split_k: int) -> None:
    part = S.split_k_partition(tiles, ipt, split_k)
    assert part.num_programs == tiles * split_k
    seen = [[0] * ipt for _ in range(tiles)]
    for p in range(part.num_programs):
        (seg,) = part.segments(p)
        tile, s = part.place(p)
        assert seg.tile == tile and part.program(tile, s) == p
        for it in range(seg.k_begin, seg.k_end):
            seen[tile][it] += 1
    assert all(v == 1 for row in seen for v in row), "every (tile, iteration) exactly once"
    ranges = [part.slice_range(s) for s in range(split_k)]
    assert ranges[0][0] == 0 and ranges[-1][1] == ipt
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges)), "contiguous, in order"
    sizes = [e - b for b, e in ranges]
    assert max(sizes) - min(sizes) <= 1, "balanced"
    assert ipt == 0 or min(sizes) >= 1, "no empty slice while K has work"
    for t in range(tiles):
        assert [part.place(p) for p in part.sum_order(t)] == [(t, s) for s in range(split_k)]


def test_split_k_covers_everything_exhaustively_on_small_sizes() -> None:
    for tiles, ipt in itertools.product(range(0, 9), range(0, 13)):
        for split_k in range(1, max(ipt, 1) + 1):
            _check_partition(tiles, ipt, split_k)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 300), st.integers(0, 400), st.integers(1, S.MAX_SPLIT_K))
def test_split_k_covers_everything(tiles: int, ipt: int, split_k: int) -> None:
    split_k = min(split_k, max(ipt, 1))
    _check_partition(tiles, ipt, split_k)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 5000), st.integers(0, 400), st.integers(1, 2**31 - 1))
def test_the_default_split_fills_the_programs(tiles: int, ipt: int, programs: int) -> None:
    s = S.split_k_count(tiles, ipt, programs)
    S.check_split_k(s, ipt)  # always a valid split
    if s < min(max(ipt, 1), S.MAX_SPLIT_K):  # not capped: one more slice would not fit
        assert max(tiles, 1) * (s + 1) > programs
    assert s == 1 or tiles * s <= programs


def test_split_k_bounds_name_the_argument() -> None:
    with pytest.raises(ValueError, match=r"split_k must be at most 4 \(the 4 block_k"):
        S.split_k_partition(3, 4, 5)
    with pytest.raises(ValueError, match="split_k must be at most 1 "):
        S.check_split_k(2, 0)  # K = 0: one slice
    with pytest.raises(ValueError, match=f"at most {S.MAX_SPLIT_K}"):
        S.check_split_k(S.MAX_SPLIT_K + 1, 10**6)
    with pytest.raises(ValueError, match="split_k must be a positive integer"):
        S.check_split_k(0, 8)
    with pytest.raises(ValueError, match="program must be in"):
        S.split_k_partition(2, 8, 2).place(4)


def test_split_k_workspace_and_arguments() -> None:
    """A counter per tile (flags, tiles <= programs) and a partial slot per
    program; no reduction; C needs no zeroing."""
    assert S.needs_sync("split-k", None) and S.needs_partials("split-k", None)
    ws = S.workspace_layout("split-k", None, 12, 1, 64, 32)
    assert (ws.num_flags, ws.flag_offset, ws.sync_elements) == (12, 0, 12)
    assert ws.partial_elements == 12 * 64 * 32 and not ws.zero_output
    assert S.kernel_args("split-k", None)[-2:] == ("sync", "partials")
    with pytest.raises(ValueError, match="needs schedule='stream-k'"):
        S.workspace_layout("split-k", "linear", 12, 1, 64, 32)
    assert S.grid_size("split-k", 4, 12) == 12


# ---- the lowered kernel on the model ---------------------------------------------------


def _lowered(body: str = "auto", split_k: int | None = None, dtype: str = "fp16") -> ir.Module:
    module = build_gemm_module(
        kind="split-k", dtype=dtype, body=body, block_m=BM, block_n=BN, block_k=BK,
        group_m=2, num_warps=4,
    )  # fmt: skip
    if split_k is not None:
        op = _schedule_op(module)
        with module.context:
            op.attributes["split_k"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), split_k)
    LowerGemmSchedulePass().run(module.operation)
    assert module.operation.verify()
    return module


def _schedule_op(module: ir.Module) -> ir.Operation:
    fn = module.body.operations[0]
    return next(
        op.operation
        for op in fn.regions[0].blocks[0].operations
        if op.operation.name == "tile.gemm_schedule"
    )


def _run(module, a, b, split_k, *, seed=None, sync=None, grid=None):
    """C of one launch of ``tiles * split_k`` programs (or ``grid``), and the counters."""
    m, k = a.shape
    n = b.shape[1]
    tiles = S.tile_count(m, n, BM, BN)
    grid = grid or tiles * split_k
    layout = S.workspace_layout("split-k", None, grid, 1, BM, BN)
    if sync is None:
        sync = np.zeros(layout.sync_elements, np.int32)
    c = np.full((m, n), np.nan, a.dtype)
    partials = np.full(layout.partial_elements, np.nan, np.float32)  # never read unwritten
    args = [a, b, c, m, n, k, k, n, n, sync, partials]
    run_function(module, "gemm", args, (grid, 1, 1), seed=seed)
    return c, sync


def _ints(rng, m, n, k):
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    return a, b, a.astype(np.float64) @ b.astype(np.float64)


@pytest.mark.parametrize("body", ["blocks", "pipelined"])
def test_split_k_equals_numpy_on_ragged_shapes(body):
    """S from the grid, in program order and two interleavings; the counters are
    back to zero after every launch."""
    module = _lowered(body)
    rng = np.random.default_rng(5)
    for m, n, k, split_k in SHAPES:
        a, b, ref = _ints(rng, m, n, k)
        for seed in (None, 1, 2):
            c, sync = _run(module, a, b, split_k, seed=seed)
            assert np.array_equal(c.astype(np.float64), ref), (m, n, k, split_k, seed)
            assert not sync.any(), "each tile's last program resets its counter"


def test_split_k_attribute_fixes_the_slices():
    """``split_k = 3`` compiled in: the grid's extra programs find no work."""
    module = _lowered(split_k=3)
    rng = np.random.default_rng(6)
    a, b, ref = _ints(rng, 45, 70, 300)
    tiles = S.tile_count(45, 70, BM, BN)
    for grid in (tiles * 3, tiles * 3 + 5):
        c, _ = _run(module, a, b, 3, grid=grid)
        assert np.array_equal(c.astype(np.float64), ref), grid


def test_split_k_grid_past_a_whole_multiple_runs_the_whole_slices():
    """S = floor(programs / tiles): a grid of 2 * tiles + 1 runs S = 2, and the
    one extra program does nothing."""
    module = _lowered()
    rng = np.random.default_rng(8)
    a, b, ref = _ints(rng, 40, 40, 200)
    tiles = S.tile_count(40, 40, BM, BN)
    c, sync = _run(module, a, b, 2, grid=2 * tiles + 1)
    assert np.array_equal(c.astype(np.float64), ref) and not sync.any()


@pytest.mark.parametrize("split_k", [2, 3, 7])
def test_split_k_is_bitwise_the_same_under_every_interleaving(split_k):
    """Random floats, many seeds: the model's happens-before checks pass (a partial
    is read only after its release), and C is the same bits whichever program of a
    tile arrives last: the one fixed slice order, in float64 terms ``((p0 + p1) +
    p2) + ...`` rounded to fp32 at each add."""
    module = _lowered()
    rng = np.random.default_rng(split_k)
    m, n, k = 40, 50, 7 * BK + 5
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    first, _ = _run(module, a, b, split_k)
    for seed in range(8):
        again, sync = _run(module, a, b, split_k, seed=seed)
        assert np.array_equal(first, again), seed
        assert not sync.any()
    ref = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    assert np.all(np.abs(first - ref) <= 2.0**-10 * np.abs(ref) + 2.0**-12 * scale)


@pytest.mark.parametrize("seed", [None, 0, 1, 2, 3])
def test_split_k_sums_the_slices_in_slice_order(seed):
    """Three one-block slices whose partials are 2^24, 1 and -2^24 (every product
    and in-block sum exact): in slice order fp32 gives ``(2^24 + 1) - 2^24 = 0``
    (2^24 + 1 rounds to 2^24), in reverse ``(-2^24 + 1) + 2^24 = 1``, in any order
    that adds 1 last 1: C is 0 whichever program arrives last."""
    from gemm_opt.model.interpreter import bf16_round

    module = _lowered(body="blocks", dtype="bf16")
    m = n = 32
    a = np.ones((m, 3 * BK), np.float32)
    b = np.zeros((3 * BK, n), np.float32)
    b[:BK] = 2.0**19  # 32 rows: 2^24
    b[BK] = 1.0
    b[2 * BK :] = -(2.0**19)
    a, b = bf16_round(a), bf16_round(b)
    c, sync = _run(module, a, b, 3, seed=seed)
    assert not c.any() and not sync.any()


def _ordering(module: ir.Module) -> list[ir.Operation]:
    out = []

    def walk(op: ir.Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    o = inner.operation
                    if o.name == "tile.atomic_rmw" and "acq_rel" in str(o.attributes["sem"]):
                        out.append(o)
                    walk(o)

    walk(module.operation)
    return out


@pytest.mark.parametrize("weaker", ["release", "acquire"])
def test_the_counters_acq_rel_is_needed(weaker):
    """Mutation check: the arrival count only released (the last program's reads
    of the others' partials are not ordered after their stores) or only acquired
    (the stores are not published): the model reports the partial read."""
    rng = np.random.default_rng(4)
    a, b, _ = _ints(rng, 40, 50, 200)
    module = _lowered()
    (op,) = _ordering(module)
    with op.context:
        op.attributes["sem"] = ir.StringAttr.get(weaker)
    with pytest.raises(ModelError, match="partial read before its release"):
        for seed in (None, 0, 1, 2):
            _run(module, a, b, 3, seed=seed)


def test_stale_counters_leave_tiles_unwritten():
    """A counter not zeroed (the host's duty, or the last launch's reset) makes the
    wrong program believe it is last: C is wrong, which is why the host zeroes
    ``sync`` before every launch as for the other kinds."""
    module = _lowered()
    rng = np.random.default_rng(3)
    a, b, ref = _ints(rng, 32, 32, 128)
    stale = np.full(S.workspace_layout("split-k", None, 2, 1, BM, BN).sync_elements, 5, np.int32)
    c, _ = _run(module, a, b, 2, sync=stale)
    assert not np.array_equal(c.astype(np.float64), ref)


# ---- every target ------------------------------------------------------------------------

TARGET_ATOMICS = {
    "gfx1250": ("amdgcn", "global_atomic_add_u32"),
    "gfx950": ("amdgcn", "global_atomic_add"),
    "gfx942": ("amdgcn", "global_atomic_add"),
    "cuda:90": ("ptx", "atom.global.gpu.acq_rel.add"),
}


@pytest.mark.parametrize("target", list(TARGET_ATOMICS))
def test_split_k_compiles_for_every_target(target):
    kernel = compile_tile_module(build_gemm_module(kind="split-k", target=target), target)
    asm_kind, count = TARGET_ATOMICS[target]
    asm = kernel.asm[asm_kind]
    assert count in asm, "the arrival count"
    reset = "atom.global.gpu.relaxed.exch" if target == "cuda:90" else "global_atomic_swap"
    assert reset in asm, "the counter's reset"
    if target == "gfx942":  # acq_rel: write back before the add, invalidate after it
        assert "buffer_wbl2" in asm and "buffer_inv" in asm


# ---- the API and the bundles -----------------------------------------------------------


def test_api_split_k_on_the_model_equals_numpy_and_repeats_bitwise():
    rng = np.random.default_rng(12)
    a = rng.standard_normal((40, 300)).astype(np.float16)
    b = rng.standard_normal((300, 70)).astype(np.float16)
    cfg = {"block_m": 32, "block_n": 32, "block_k": 32, "group_m": 1, "num_warps": 4}
    outs = [
        gemm_opt.matmul(a, b, schedule="split-k", config=cfg, num_programs=20, seed=seed)
        for seed in (None, 0, 1, 2)
    ]
    assert all(np.array_equal(outs[0], o) for o in outs[1:])
    ref = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    assert np.all(np.abs(outs[0] - ref) <= 2.0**-10 * np.abs(ref) + 2.0**-12 * scale)


@pytest.mark.parametrize(
    ("num_programs", "programs"),
    [(None, 6), (7, 6), (20, 18), (1000, 60)],  # 6 tiles of 10 iterations; S <= 10
)
def test_api_split_k_runs_tiles_times_the_slices_that_fill_the_programs(num_programs, programs):
    a = np.zeros((40, 300), np.float16)
    b = np.zeros((300, 70), np.float16)
    cfg = {"block_m": 32, "block_n": 32, "block_k": 32, "group_m": 1, "num_warps": 4}
    kw = dict(schedule="split-k", reduction=None, num_programs=num_programs, num_xcds=1,
              config=cfg, out=None, seed=None)  # fmt: skip
    p = plans.plan("matmul", a, b, **kw)
    assert p.total_tiles == 6 and p.programs == p.grid == programs
    assert p.layout == S.workspace_layout("split-k", None, programs, 1, 32, 32)


def test_api_split_k_takes_no_reduction():
    a = np.zeros((8, 8), np.float16)
    with pytest.raises(ValueError, match="reduction='linear' needs schedule='stream-k'"):
        gemm_opt.matmul(a, a, schedule="split-k", reduction="linear")


def test_split_k_is_bundled_for_the_decode_classes():
    """The narrow and small classes (few tiles: what split-K is for), with their
    aligned and TMA twins; a decode shape picks one of them."""
    specs = [s for s in bundle_specs(("bf16",)) if s.kind == "split-k" and not s.trans_c]
    shapes = {(s.block_m, s.block_n, s.block_k) for s in specs}
    want = {(c.block_m, c.block_n, c.block_k) for n, c in h100.GPU_CONFIGS.items()}
    assert (
        shapes
        == {
            (h100.GPU_CONFIGS[n].block_m, h100.GPU_CONFIGS[n].block_n, h100.GPU_CONFIGS[n].block_k)
            for n in h100.SPLIT_K_CLASSES
        }
        and shapes < want
    )
    assert {(s.aligned, s.tma) for s in specs} == {(False, False), (True, False), (True, True)}
    for m, n in ((16, 4096), (512, 512), (128, 7168), (4096, 4096)):
        assert h100.gpu_config_name(m, n, kind="split-k") in h100.SPLIT_K_CLASSES
