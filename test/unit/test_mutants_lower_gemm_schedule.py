"""What the schedule lowering hands its body, at the edges (found by
``benchmarks/mutation.py`` in ``passes/lower_gemm_schedule.py``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gemm_opt.core import schedules as S
from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context
from gemm_opt.model.interpreter import run_function
from gemm_opt.passes.lower_gemm_schedule import LowerGemmSchedulePass

#: A data-parallel schedule whose body records, per call, its group argument and
#: the bounds it is given (m_end, k_off, k_end) at ``log[4 * pid]``.
BODY_ARGS_KERNEL = """
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @dp(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %log: !tile.ptr<i32>) {
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %c3 = arith.constant 3 : i32
      %c4 = arith.constant 4 : i32
      %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
      %e0 = arith.muli %pid, %c4 : i32
      %e1 = arith.addi %e0, %c1 : i32
      %e2 = arith.addi %e0, %c2 : i32
      %e3 = arith.addi %e0, %c3 : i32
      %o0 = "tile.atomic_rmw"(%log, %e0, %g) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %o1 = "tile.atomic_rmw"(%log, %e1, %me) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %o2 = "tile.atomic_rmw"(%log, %e2, %ko) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %o3 = "tile.atomic_rmw"(%log, %e3, %ke) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %z = arith.constant dense<0.000000e+00> : tensor<16x16xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<16x16xf32, #acc>) -> ()
    }) {kind = "data-parallel", block_m = 16 : i32, block_n = 16 : i32, block_k = 16 : i32, group_m = 2 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}
"""


@pytest.mark.parametrize(("m", "n", "k"), [(32, 16, 40), (16, 48, 16)])
def test_a_plain_schedule_hands_its_body_group_0_and_the_whole_extents(
    m: int, n: int, k: int
) -> None:
    """One group: the body's group argument is 0, its row bound M and its K
    range the whole of K, for every tile."""
    with make_context():
        module = ir.Module.parse(BODY_ARGS_KERNEL)
        LowerGemmSchedulePass().run(module.operation)
        assert module.operation.verify()
        tiles = -(-m // 16) * -(-n // 16)
        log = np.full(4 * tiles, -1, np.int32)
        c = np.full((m, n), np.nan, np.float16)
        run_function(module, "dp", [m, n, k, c, n, log], (tiles, 1, 1), seed=None)
    assert log.reshape(tiles, 4).tolist() == [[0, m, 0, k]] * tiles
    assert not c.any()


FIXUPS = Path(__file__).resolve().parent / "data" / "stream_k_fixups.mlir"
BLOCK, GROUP_M, LOG = 16, 2, 128


@pytest.mark.parametrize("reduction", S.REDUCTIONS)
@pytest.mark.parametrize(("m", "n", "k", "programs"), [(32, 32, 64, 2), (32, 64, 48, 4)])
def test_tiles_a_multiple_of_the_programs_are_all_data_parallel(reduction, m, n, k, programs):
    """As many tiles per program and K at least the programs' iterations: the
    host partition splits no tile, so each program visits whole tiles only."""
    pm, pn = S.tile_grid(m, n, BLOCK, BLOCK)
    part = S.stream_k_partition(pm * pn, S.iters_per_tile(k, BLOCK), programs)
    want = []
    for p in range(programs):
        calls = []
        for s in part.segments(p):
            assert s.whole
            i, j = S.tile_coords(s.tile, pm, pn, GROUP_M)
            calls.append((i * BLOCK, j * BLOCK, s.k_begin * BLOCK, min(s.k_end * BLOCK, k)))
        want.append(calls)
    with make_context():
        module = ir.Module.parseFile(str(FIXUPS))
        LowerGemmSchedulePass().run(module.operation)
        c = np.full((m, n), np.nan, np.float16)
        args: list = [m, n, k, c, n]
        if reduction in S.FIXUP_REDUCTIONS:
            layout = S.workspace_layout("stream-k", reduction, programs, 1, BLOCK, BLOCK)
            args += [np.zeros(layout.sync_elements, np.int32)]
            args += [np.zeros(layout.partial_elements, np.float32)]
        log = np.zeros(programs * LOG, np.int32)
        run_function(module, reduction, [*args, log], (programs, 1, 1), seed=None)
    got = []
    for p in range(programs):
        entries = log[p * LOG + 1 : p * LOG + 1 + 4 * log[p * LOG]].reshape(-1, 4)
        got.append([tuple(int(v) for v in e) for e in entries])
    assert got == want
    assert not c.any()


def _split_k(m: int, n: int, k: int, grid: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """C = A @ B by a split-K kernel on ``grid`` programs (integer-valued inputs:
    exact); C, the sync words and the partial slots after the run, and the tiles."""
    from gemm_opt.kernels import cache

    spec = S.KernelSpec("split-k", None, "none", "fp16", 64, 16, 32, 2, 4, 2)
    rng = np.random.default_rng(k)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    tiles = S.tile_count(m, n, spec.block_m, spec.block_n)
    lay = S.workspace_layout(spec.kind, None, grid, 1, spec.block_m, spec.block_n)
    c = np.full((m, n), np.nan, np.float16)
    sync = np.zeros(max(lay.sync_elements, 1), np.int32)
    partials = np.full(max(lay.partial_elements, 1), np.nan, np.float32)
    values = dict(a=a, b=b, c=c, M=m, N=n, K=k, lda=k, ldb=n, ldc=n, sync=sync, partials=partials)
    cache.run_on_model(spec, values, grid=grid, num_resident=4, seed=1)
    assert np.array_equal(c.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64))
    return c, sync, partials.reshape(grid, -1), tiles


@pytest.mark.parametrize("slices", [1, 2, 4])
def test_split_k_by_the_grid_sums_every_slice_and_leaves_the_counters_at_0(slices: int) -> None:
    """No ``split_k`` attribute: the grid's programs per tile are the slices.
    Every program publishes its slice's partial (one tile, so the slot is the
    program), the last one sums them and resets the tile's counter."""
    _, sync, partials, tiles = _split_k(40, 16, 256, slices)
    assert tiles == 1
    assert not sync.any()
    assert np.isfinite(partials).all() == (slices > 1)
