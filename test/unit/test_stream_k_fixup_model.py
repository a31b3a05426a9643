"""Stream-K's lowered fix-ups on the model: the order programs visit their
work, the waits they make and the ordering atomics they need.

The kernels of ``data/stream_k_fixups.mlir`` have a body that logs each
call's (m_off, n_off, k_off, k_end) per program and yields zeros; after
``tile-lower-gemm-schedule`` they run on the model. The logs must be the
host partition's :meth:`~gemm_opt.core.schedules.StreamKPartition.segments`,
in order (stream-K tiles last to first: a program publishes before it
reaches the tile it owns, so no wait chains through other tiles;
``critical_path`` in test_schedules_math.py pins the timing consequence).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gemm_opt.core import schedules as S
from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context
from gemm_opt.model.interpreter import ModelError, RunResult, run_function
from gemm_opt.passes.lower_gemm_schedule import LowerGemmSchedulePass

DATA = Path(__file__).resolve().parent / "data" / "stream_k_fixups.mlir"
BLOCK = 16  # block_m = block_n = block_k of the data file's schedules
GROUP_M = 2
LOG = 128  # i32 of log per program: a count, then 4 per body call

#: (M, N, K, programs): all tiles split (fewer tiles than programs), whole
#: tiles then a split wave, programs spanning three tiles, ragged K,
#: fallback, one tile over every program.
SHAPES = [
    (32, 48, 160, 5),
    (64, 64, 96, 6),
    (16, 32, 320, 3),
    (40, 24, 100, 4),
    (32, 32, 16, 8),
    (16, 16, 160, 4),
]


def _lowered() -> ir.Module:
    with make_context():
        module = ir.Module.parseFile(str(DATA))
    LowerGemmSchedulePass().run(module.operation)
    assert module.operation.verify()
    return module


def _partition(m: int, n: int, k: int, programs: int) -> S.StreamKPartition:
    pm, pn = S.tile_grid(m, n, BLOCK, BLOCK)
    return S.stream_k_partition(pm * pn, S.iters_per_tile(k, BLOCK), programs)


def _expected(m: int, n: int, k: int, programs: int) -> list[list[tuple[int, int, int, int]]]:
    """Each program's body calls (m_off, n_off, k_off, k_end), from the host partition."""
    pm, pn = S.tile_grid(m, n, BLOCK, BLOCK)
    part = _partition(m, n, k, programs)
    out = []
    for p in range(programs):
        calls = []
        for s in part.segments(p):
            i, j = S.tile_coords(s.tile, pm, pn, GROUP_M)
            calls.append((i * BLOCK, j * BLOCK, s.k_begin * BLOCK, min(s.k_end * BLOCK, k)))
        out.append(calls)
    return out


def _run(
    module: ir.Module, reduction: str, m: int, n: int, k: int, programs: int, seed: int | None
) -> tuple[RunResult, np.ndarray, list[list[tuple[int, int, int, int]]]]:
    """Run ``@reduction``: the result, C and each program's logged body calls."""
    fixup = reduction in S.FIXUP_REDUCTIONS
    c = np.full((m, n), np.nan, np.float16) if fixup else np.zeros((m, n), np.float16)
    args: list = [m, n, k, c, n]
    layout = S.workspace_layout("stream-k", reduction, programs, 1, BLOCK, BLOCK)
    if fixup:
        args += [np.zeros(layout.sync_elements, np.int32)]
        args += [np.zeros(layout.partial_elements, np.float32)]
    log = np.zeros(programs * LOG, np.int32)
    result = run_function(module, reduction, [*args, log], (programs, 1, 1), seed=seed)
    calls = []
    for p in range(programs):
        base = p * LOG
        entries = log[base + 1 : base + 1 + 4 * log[base]].reshape(-1, 4)
        calls.append([tuple(int(v) for v in e) for e in entries])
    return result, c, calls


@pytest.mark.parametrize("seed", [None, 0, 1])
@pytest.mark.parametrize("reduction", S.REDUCTIONS)
@pytest.mark.parametrize(("m", "n", "k", "programs"), SHAPES)
def test_programs_visit_segments_in_the_partition_order(m, n, k, programs, reduction, seed):
    _, c, calls = _run(_lowered(), reduction, m, n, k, programs, seed)
    want = _expected(m, n, k, programs)
    assert max(len(w) for w in want) * 4 < LOG
    assert calls == want
    assert not c.any()  # every tile stored (the body yields zeros), none left NaN


def test_a_program_spanning_tiles_visits_its_last_tile_first():
    """16x32x320 on 3 programs: 2 tiles of 20 iterations; program 1 holds
    iterations 14-26, so it computes tile 1's first 7 (its partial, published
    first), then tile 0's last 6 (it owns tile 0)."""
    assert _expected(16, 32, 320, 3)[1] == [(0, 16, 0, 112), (0, 0, 224, 320)]


@pytest.mark.parametrize(("m", "n", "k", "programs"), SHAPES)
def test_a_linear_owner_waits_once_per_tile(m, n, k, programs):
    """The others count into the owner's flag: in program order (every
    partial out before its owner runs) an owner reads its flag once, whatever
    the number of partials, and each other program adds to it once."""
    result, _, calls = _run(_lowered(), "linear", m, n, k, programs, None)
    part = _partition(m, n, k, programs)
    segs = [s for p in range(programs) for s in part.segments(p)]
    publishers = sum(not s.owner for s in segs)
    split = sum(s.owner and not s.whole for s in segs)
    body = sum(len(c) for c in calls)  # the log's own adds, one per body call
    assert result.sync.atomic_rmw["add"] == body + publishers + split
    assert result.sync.atomic_rmw_sem["release"] == publishers
    assert result.sync.atomic_rmw_sem["acquire"] == split
    assert result.sync.waits == 0


def _ordering(module: ir.Module, func: str) -> list[ir.Operation]:
    """The ``tile.atomic_rmw`` of ``func`` that order memory (not relaxed)."""
    out = []

    def walk(op: ir.Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    o = inner.operation
                    sem = o.attributes["sem"] if "sem" in o.attributes else None
                    if o.name == "tile.atomic_rmw" and ir.StringAttr(sem).value != "relaxed":
                        out.append(o)
                    walk(o)

    for f in module.body.operations:
        if ir.StringAttr(f.operation.attributes["sym_name"]).value == func:
            walk(f.operation)
    return out


@pytest.mark.parametrize("reduction", S.FIXUP_REDUCTIONS)
def test_every_ordering_atomic_of_a_lowered_fixup_is_needed(reduction):
    """Mutation check: make the publisher's release or the owner's acquire
    relaxed and the model reports the partial read."""
    assert len(_ordering(_lowered(), reduction)) == 2
    for i in range(2):
        module = _lowered()
        op = _ordering(module, reduction)[i]
        with op.context:
            op.attributes["sem"] = ir.StringAttr.get("relaxed")
        for seed in (None, 0):
            with pytest.raises(ModelError, match="partial read before its release"):
                _run(module, reduction, 32, 48, 160, 5, seed)
