"""Warp specialization in the executable model (``gemm_opt.model.warp_specialize``).

``data/warp_specialize_ring.mlir``: a one-warp producer partition fills a
two-slot ring through barrier-tracked copies while the default partition
waits for each slot's ``ready`` phase, sums the tile and gives the slot back
on ``empty``. The partitions interleave at their barrier ops, by seed. The
kernel must equal numpy under every interleaving; each broken variant, made
with the IR bindings, must be reported under every interleaving (a deadlock
naming the partitions and barriers, an over-arrival, a race or an
uninitialized read) or, where an interleaving does not expose it, computed
right: never a wrong result. ``data/warp_specialize_mma_ring.mlir`` is the
same ring feeding asynchronous MMAs: giving a slot back before its MMA has
retired lets the producer's next copy race that MMA.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context
from gemm_opt.dialect.edit import erase_ops, ops_named
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
    """Seed 63 runs the producer's copy before the read: the race names it."""
    module = _load()
    assert erase_ops(module, "tile.barrier_wait", _in_partition("tile.warp_specialize")) == 1
    with pytest.raises(ModelError) as err:
        _run(module, 3, 63)
    msg = str(err.value)
    assert "read of shared memory still being written by an in-flight TDM copy" in msg
    assert "1 in-flight TDM instruction(s) write it ('tile.async_tdm_copy_global_to_local'" in msg
    assert "no tile.barrier_wait has completed the barrier phase the copy is tracked by" in msg


# ---- the asynchronous-MMA ring: a copy racing the other partition's MMA ----

MMA_DATA = DATA.with_name("warp_specialize_mma_ring.mlir")


def _run_mma(module: ir.Module, tiles: int, seed: int | None) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(tiles)
    k = 32 * tiles
    a = rng.integers(-4, 5, size=(64, k)).astype(np.float16)
    b = rng.integers(-4, 5, size=(k, 64)).astype(np.float16)
    c = np.full((64, 64), np.nan, dtype=np.float32)
    run_function(module, "ws_gemm", [a, b, c, k, k, 64, 64], seed=seed)
    return c, a.astype(np.float32) @ b.astype(np.float32)


def _early_release() -> ir.Module:
    """The consumer gives a slot back before the MMA reading it has retired."""
    with make_context():
        module = ir.Module.parseFile(str(MMA_DATA))
    (arrive,) = ops_named(module, "tile.barrier_arrive")
    (wait,) = ops_named(module, "tile.async_wmma_wait")
    arrive.operands[0].owner.move_before(wait)  # its tile.barrier_index
    arrive.move_before(wait)
    return module


@pytest.mark.parametrize("seed", SEEDS)
def test_mma_ring_equals_numpy(seed):
    with make_context():
        module = ir.Module.parseFile(str(MMA_DATA))
    got, want = _run_mma(module, 4, seed)
    np.testing.assert_array_equal(got, want)


def test_copy_into_a_slot_the_other_partitions_mma_reads_is_a_race():
    """Seed 25 runs the producer's next copy into the slot in the window
    between the early release and the MMA's retirement."""
    with pytest.raises(ModelError) as err:
        _run_mma(_early_release(), 8, 25)
    msg = str(err.value)
    assert msg.startswith("write of shared memory an in-flight MMA reads: ")
    assert "'tile.async_tdm_copy_global_to_local' at " in msg
    assert "1 in-flight async MMA(s) read it ('tile.async_wmma' at " in msg


def test_early_release_is_reported_or_harmless_under_every_seed():
    """An interleaving that does not hit the window computes the right product:
    the model never returns a wrong one."""
    module = _early_release()
    reported = 0
    for seed in range(40):
        try:
            got, want = _run_mma(module, 8, seed)
        except ModelError as e:
            assert "write of shared memory an in-flight MMA reads" in str(e)
            reported += 1
            continue
        np.testing.assert_array_equal(got, want)
    assert reported >= 1
