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
    module: ir.Module,
    reduction: str,
    m: int,
    n: int,
    k: int,
    programs: int,
    seed: int | None,
    sync: np.ndarray | None = None,
) -> tuple[RunResult, np.ndarray, list[list[tuple[int, int, int, int]]]]:
    """Run ``@reduction``: the result, C and each program's logged body calls.
    ``sync``: the workspace's counters and flags (default: fresh zeros)."""
    c = np.full((m, n), np.nan, np.float16)  # every element must be written
    args: list = [m, n, k, c, n]
    layout = S.workspace_layout("stream-k", reduction, programs, 1, BLOCK, BLOCK)
    args += [np.zeros(layout.sync_elements, np.int32) if sync is None else sync]
    if reduction in S.FIXUP_REDUCTIONS:
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
    # every tile stored, none left NaN; @atomic's body yields its K range's length
    assert np.array_equal(c, np.full((m, n), k if reduction == "atomic" else 0, np.float16))


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


def _atomic_ops(module: ir.Module) -> dict[str, ir.Operation]:
    """@atomic's workspace atomics by role: the epoch read, the flag raise, the
    flag wait, the exit count, the exit reset and the epoch store."""
    ops = []

    def walk(op: ir.Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    o = inner.operation
                    if o.name == "tile.atomic_rmw" and o.operands[0] == func.arguments[5]:
                        ops.append(o)
                    walk(o)

    func = next(
        f for f in module.body.operations
        if ir.StringAttr(f.operation.attributes["sym_name"]).value == "atomic"
    )  # fmt: skip
    walk(func.operation)
    roles = ("epoch read", "flag raise", "flag wait", "exit count", "exit reset", "epoch store")
    assert len(ops) == len(roles)
    return dict(zip(roles, ops, strict=True))


def _launches(
    module: ir.Module, shapes, programs: int, seed: int | None, check_sync: bool = True
) -> np.ndarray:
    """Run @atomic on ``shapes`` one after another on one persisted ``sync``, as
    launches on one stream share it; each C must equal K everywhere (and, with
    ``check_sync``, the workspace be ready for the next launch)."""
    layout = S.workspace_layout("stream-k", "atomic", programs, 1, BLOCK, BLOCK)
    sync = np.zeros(layout.sync_elements, np.int32)
    for launch, (m, n, k) in enumerate(shapes, start=1):
        _, c, _ = _run(module, "atomic", m, n, k, programs, seed, sync)
        assert np.array_equal(c, np.full((m, n), k, np.float16)), (launch, m, n, k)
        if not check_sync:
            continue
        epoch = sync[layout.counter_index(S.EPOCH_COUNTER)]
        assert (epoch, sync[layout.counter_index(S.EXIT_COUNTER)]) == (launch, 0)
        assert sync[layout.flag_offset :].max() <= launch
    return sync


#: Launches of different shapes on one workspace: split tiles in each, a fallback
#: to whole tiles (fewer iterations than programs) in between.
LAUNCHES = [(32, 48, 160), (40, 24, 100), (32, 32, 16), (16, 32, 320), (32, 48, 160)]


@pytest.mark.parametrize("seed", [None, 0, 1, 2, 3])
def test_atomic_launches_share_one_workspace_with_no_memset(seed):
    """Atomic stream-K keeps its workspace: after each launch the epoch counts
    the launches, the exit count is back at 0 and no flag is past the epoch,
    so the next launch (any shape) needs no memset and C is exact."""
    _launches(_lowered(), LAUNCHES, 5, seed)


def test_atomic_first_contributor_stores_and_the_others_wait():
    """Each split tile: one store, one flag raised (release), and a wait
    (acquire) per other contributor; whole tiles are stored with no flag."""
    m, n, k, programs = 32, 48, 160, 5
    result, _, _ = _run(_lowered(), "atomic", m, n, k, programs, None)
    part = _partition(m, n, k, programs)
    segs = [s for p in range(programs) for s in part.segments(p)]
    heads = sum(s.k_begin == 0 and not s.whole for s in segs)
    adders = sum(s.k_begin > 0 for s in segs)
    assert heads and adders
    assert result.sync.atomic_rmw_sem["release"] == heads
    assert result.sync.atomic_rmw_sem["acquire"] >= adders
    assert result.sync.atomic_rmw_sem["acq_rel"] == programs


@pytest.mark.parametrize("role", ["flag raise", "flag wait"])
def test_every_ordering_atomic_of_atomic_stream_k_is_needed(role):
    """Mutation check: make the first contributor's release or a waiter's
    acquire relaxed and the model reports the unordered writes to C."""
    module = _lowered()
    op = _atomic_ops(module)[role]
    with op.context:
        op.attributes["sem"] = ir.StringAttr.get("relaxed")
    for seed in (None, 0):
        with pytest.raises(ModelError):
            _run(module, "atomic", 32, 48, 160, 5, seed)


@pytest.mark.parametrize("role", ["exit reset", "epoch store"])
def test_the_kernel_must_ready_its_workspace_for_the_next_launch(role):
    """Mutation check: drop the last program's exit-count reset or its epoch
    store and a later launch on the same workspace reuses a spent epoch:
    its waits pass before the first contributor's store, which the model
    reports under interleavings that run an add before that store (seeds 1
    and 2); the workspace check after the first launch fails too."""
    module = _lowered()
    _atomic_ops(module)[role].erase()
    for seed in (1, 2):
        with pytest.raises(ModelError, match=r"racing a (write|atomic) of another program"):
            _launches(module, LAUNCHES, 5, seed, check_sync=False)
    with pytest.raises(AssertionError):
        _launches(module, LAUNCHES[:1], 5, 0)
