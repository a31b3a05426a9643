"""The lowered stream-K schedule visits each program's work in the order of
:meth:`gemm_opt.core.schedules.StreamKPartition.segments`.

That order is what keeps the linear and tree fix-ups free of wait chains
(stream-K tiles last to first: a program publishes before it reaches the
tile it owns; ``critical_path`` in test_schedules_math.py pins the timing
consequence). The kernels of ``data/stream_k_order.mlir`` have a body that
logs each call's (m_off, n_off, k_off, k_end) per program; run on the model
after ``tile-lower-gemm-schedule``, the logs must be the host partition's
segments, in order, for every reduction, under interleavings.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gemm_opt.core import schedules as S
from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context
from gemm_opt.model.interpreter import run_function
from gemm_opt.passes.lower_gemm_schedule import LowerGemmSchedulePass

DATA = Path(__file__).resolve().parent / "data" / "stream_k_order.mlir"
BLOCK = 16  # block_m = block_n = block_k of the data file's schedules
GROUP_M = 2
LOG = 128  # i32 of log per program: a count, then 4 per body call

#: (M, N, K, programs): all tiles split (fewer tiles than programs), whole
#: tiles then a split wave, programs spanning three tiles, ragged K, fallback.
SHAPES = [(32, 48, 160, 5), (64, 64, 96, 6), (16, 32, 320, 3), (40, 24, 100, 4), (32, 32, 16, 8)]


def _lowered() -> ir.Module:
    with make_context():
        module = ir.Module.parseFile(str(DATA))
    LowerGemmSchedulePass().run(module.operation)
    assert module.operation.verify()
    return module


def _expected(m: int, n: int, k: int, programs: int) -> list[list[tuple[int, int, int, int]]]:
    """Each program's body calls (m_off, n_off, k_off, k_end), from the host partition."""
    pm, pn = S.tile_grid(m, n, BLOCK, BLOCK)
    ipt = S.iters_per_tile(k, BLOCK)
    part = S.stream_k_partition(pm * pn, ipt, programs)
    out = []
    for p in range(programs):
        calls = []
        for s in part.segments(p):
            i, j = S.tile_coords(s.tile, pm, pn, GROUP_M)
            calls.append((i * BLOCK, j * BLOCK, s.k_begin * BLOCK, min(s.k_end * BLOCK, k)))
        out.append(calls)
    return out


def _logged(log: np.ndarray, programs: int) -> list[list[tuple[int, int, int, int]]]:
    out = []
    for p in range(programs):
        base = p * LOG
        entries = log[base + 1 : base + 1 + 4 * log[base]].reshape(-1, 4)
        out.append([tuple(int(v) for v in e) for e in entries])
    return out


@pytest.mark.parametrize("seed", [None, 0, 1])
@pytest.mark.parametrize("reduction", S.REDUCTIONS)
@pytest.mark.parametrize(("m", "n", "k", "programs"), SHAPES)
def test_programs_visit_segments_in_the_partition_order(m, n, k, programs, reduction, seed):
    module = _lowered()
    fixup = reduction in S.FIXUP_REDUCTIONS
    c = np.full((m, n), np.nan, np.float16) if fixup else np.zeros((m, n), np.float16)
    args: list = [m, n, k, c, n]
    layout = S.workspace_layout("stream-k", reduction, programs, 1, BLOCK, BLOCK)
    if fixup:
        args += [np.zeros(layout.sync_elements, np.int32)]
        args += [np.zeros(layout.partial_elements, np.float32)]
    log = np.zeros(programs * LOG, np.int32)
    run_function(module, reduction, [*args, log], (programs, 1, 1), seed=seed)
    want = _expected(m, n, k, programs)
    assert max(len(calls) for calls in want) * 4 < LOG
    assert _logged(log, programs) == want
    assert not c.any()  # every tile stored (the body yields zeros), none left NaN


def test_a_program_spanning_tiles_visits_its_last_tile_first():
    """16x32x320 on 3 programs: 2 tiles of 20 iterations; program 1 holds
    iterations 14-26, so it computes tile 1's first 7 (its partial, published
    first), then tile 0's last 6 (it owns tile 0)."""
    assert _expected(16, 32, 320, 3)[1] == [(0, 16, 0, 112), (0, 0, 224, 320)]
