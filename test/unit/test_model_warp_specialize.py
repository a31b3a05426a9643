"""Warp specialization in the executable model (``gemm_opt.model.warp_specialize``).

``data/warp_specialize_ring.mlir``: a one-warp producer partition fills a
two-slot ring through barrier-tracked copies while the default partition
waits for each slot's ``ready`` phase, sums the tile and gives the slot back
on ``empty``. The partitions interleave at their barrier ops, by seed. The
kernel must equal numpy under every interleaving; each broken variant, made
with the IR bindings, must be reported under every interleaving (a deadlock
naming the partitions and barriers, an over-arrival, a race or an
uninitialized read), never computed silently.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context
from gemm_opt.dialect.edit import erase_ops
from gemm_opt.model.interpreter import ModelError, RunResult, run_function

DATA = Path(__file__).resolve().parent / "data" / "warp_specialize_ring.mlir"
SEEDS = [None, *range(8)]


def _load() -> ir.Module:
    """A fresh parse of the kernel (tests edit their copy)."""
    with make_context():
        return ir.Module.parseFile(str(DATA))


def _run(
    module: ir.Module, tiles: int, seed: int | None
) -> tuple[np.ndarray, np.ndarray, RunResult]:
    rng = np.random.default_rng(tiles)
    a = rng.integers(-8, 9, size=(64, 32 * tiles)).astype(np.float16)
    c = np.full((64, 32), np.nan, dtype=np.float32)
    result = run_function(
        module, "ws_sum", [a, c, 64, 32 * tiles, 32 * tiles, 32, tiles], seed=seed
    )
    return c, a.astype(np.float32).reshape(64, tiles, 32).sum(axis=1), result


def _in_partition(kind: str):
    """Matches an op directly in a worker partition's body or a loop of it."""

    def match(op: ir.Operation) -> bool:
        p = op.parent
        while p is not None and p.name not in ("tile.warp_partition", "tile.warp_specialize"):
            p = p.parent
        return p is not None and p.name == kind

    return match


@pytest.mark.parametrize("tiles", [1, 2, 5])
@pytest.mark.parametrize("seed", SEEDS)
def test_producer_consumer_ring_equals_numpy(tiles, seed):
    got, want, _ = _run(_load(), tiles, seed)
    np.testing.assert_array_equal(got, want)


def test_seeds_interleave_the_partitions():
    """A seeded run hands the baton between partitions more often than program order."""
    switches = {seed: _run(_load(), 5, seed)[2].sync.switches for seed in SEEDS}
    assert switches[None] > 0
    assert max(switches[s] for s in SEEDS[1:]) > switches[None]


@pytest.mark.parametrize("seed", SEEDS)
def test_consumer_without_empty_arrive_deadlocks_naming_partitions_and_barriers(seed):
    module = _load()
    assert erase_ops(module, "tile.barrier_arrive", _in_partition("tile.warp_specialize")) == 1
    with pytest.raises(ModelError) as err:
        _run(module, 5, seed)
    msg = str(err.value)
    assert msg.startswith("deadlock between the partitions of 'tile.warp_specialize' at ")
    assert "the default partition waits at 'tile.barrier_wait'" in msg
    assert "worker partition 0 (1 warp) waits at 'tile.barrier_wait'" in msg
    assert "of the barrier_alloc at" in msg and "arrivals missing" in msg


@pytest.mark.parametrize("seed", SEEDS)
def test_producer_without_empty_wait_is_reported_or_harmless(seed):
    """Without the wait the producer may run a full ring ahead: its expect then
    arrives on a phase still open (over-arrival); an interleaving where it does
    not run ahead computes the right sum. Program order runs it ahead."""
    module = _load()
    assert erase_ops(module, "tile.barrier_wait", _in_partition("tile.warp_partition")) == 1
    try:
        got, want, _ = _run(module, 5, seed)
    except ModelError as e:
        assert "gets more arrivals than its count" in str(e)
        return
    assert seed is not None, "program order must run the producer ahead"
    np.testing.assert_array_equal(got, want)


def test_producer_without_empty_wait_in_program_order_over_arrives():
    module = _load()
    assert erase_ops(module, "tile.barrier_wait", _in_partition("tile.warp_partition")) == 1
    with pytest.raises(ModelError, match="gets more arrivals than its count"):
        _run(module, 5, None)


@pytest.mark.parametrize("seed", SEEDS)
def test_consumer_without_ready_wait_reads_too_early(seed):
    """The read of a slot is ordered by nothing: before the producer's copy (an
    uninitialized read) or while it is in flight (the race detector's race)."""
    module = _load()
    assert erase_ops(module, "tile.barrier_wait", _in_partition("tile.warp_specialize")) == 1
    with pytest.raises(
        ModelError,
        match=r"read of uninitialized shared memory|read of shared memory still being written",
    ):
        _run(module, 3, seed)


def test_read_racing_the_other_partitions_copy_names_that_copy():
    """Seed 3 runs the producer's copy first: the race names it."""
    module = _load()
    assert erase_ops(module, "tile.barrier_wait", _in_partition("tile.warp_specialize")) == 1
    with pytest.raises(ModelError) as err:
        _run(module, 3, 3)
    msg = str(err.value)
    assert "read of shared memory still being written by an in-flight TDM copy" in msg
    assert "1 in-flight TDM instruction(s) write it ('tile.async_tdm_copy_global_to_local'" in msg
    assert "no tile.barrier_wait has completed the barrier phase the copy is tracked by" in msg
