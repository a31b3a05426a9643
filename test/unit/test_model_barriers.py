"""Barriers, barrier-tracked copies and TDM stores in the executable model
(``gemm_opt.model.barriers``).

``data/barrier_ring.mlir`` sums A's column tiles through a two-stage ring
with one barrier per stage (tile i + 1 is copied while tile i is summed) and
stores the sum with TDM. It must equal numpy for every trip count; each
broken variant, made with the IR bindings, must be reported: a missing wait
as a race, a phase that can never complete as a deadlock naming the barrier,
a write to a buffer a TDM store still reads as a race.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context
from gemm_opt.dialect.edit import erase_ops, ops_named
from gemm_opt.model.interpreter import ModelError, run_function

DATA = Path(__file__).resolve().parent / "data" / "barrier_ring.mlir"
BLOCK = (64, 32)


def _load() -> ir.Module:
    """A fresh parse of the kernel (tests edit their copy)."""
    with make_context():
        return ir.Module.parseFile(str(DATA))


def _run(module: ir.Module, tiles: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    m, n = BLOCK
    a = rng.integers(-8, 9, size=(m, n * tiles)).astype(np.float16)
    c = np.full(BLOCK, np.nan, dtype=np.float32)
    run_function(module, "ring_sum", [a, c, m, n * tiles, n * tiles, n, tiles])
    return c, a.astype(np.float32).reshape(m, tiles, n).sum(axis=1)


def _set_i32(op: ir.Operation, name: str, value: int) -> None:
    op.attributes[name] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32, op.context), value)


@pytest.mark.parametrize("tiles", [1, 2, 3, 4, 7])
def test_barrier_ring_equals_numpy(tiles):
    got, want = _run(_load(), tiles, seed=tiles)
    np.testing.assert_array_equal(got, want)


def test_missing_barrier_wait_is_a_race():
    module = _load()
    # The wait in the loop body orders tile i's copy before its read.
    assert erase_ops(module, "tile.barrier_wait", lambda op: op.parent.name == "scf.for") == 1
    with pytest.raises(
        ModelError, match="read of shared memory still being written by an in-flight TDM copy"
    ):
        _run(module, 3)


def test_wait_on_the_wrong_parity_is_a_race():
    """Parity 1 of a barrier in phase 0 names the phase before it, which has
    'completed': the wait returns at once and the read races the copy."""
    module = _load()
    wait = ops_named(module, "tile.barrier_wait")[-1]  # the last tile's wait
    with ir.InsertionPoint(wait), wait.location:
        one = ir.Operation.create(
            "arith.constant",
            results=[ir.IntegerType.get_signless(32)],
            attributes={"value": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1)},
        )
    wait.operands[1] = one.results[0]
    with pytest.raises(ModelError, match="in-flight TDM copy"):
        _run(module, 1)


def test_phase_missing_an_arrival_is_a_deadlock_naming_the_barrier():
    module = _load()
    for init in ops_named(module, "tile.barrier_init"):
        _set_i32(init, "count", 2)  # the expect is the phase's only arrival
    with pytest.raises(
        ModelError,
        match=r"deadlock: 'tile.barrier_wait' at .*barrier_ring.mlir:\d+:\d+ in program \(0, 0, 0\) waits for phase 0 \(parity 0\) of the barrier 0 of the barrier_alloc at .*barrier_ring.mlir:\d+:\d+, which can never complete: 1 of 2 arrivals missing",
    ):
        _run(module, 2)


def test_bytes_never_delivered_are_a_deadlock():
    module = _load()
    for expect in ops_named(module, "tile.barrier_expect"):
        _set_i32(expect, "bytes", 8192)  # twice the block the copy delivers
    with pytest.raises(
        ModelError, match="0 of 1 arrivals missing, 4096 announced bytes not delivered"
    ):
        _run(module, 2)


def test_write_to_a_buffer_a_tdm_store_reads_is_a_race():
    module = _load()
    (wait,) = ops_named(module, "tile.async_tdm_wait")
    (local_store,) = ops_named(module, "tile.local_store")
    # A second write to the store's source, after the store, before the wait retires it.
    local_store.clone(ip=ir.InsertionPoint(wait))
    with pytest.raises(ModelError, match="write of shared memory an in-flight TDM store reads"):
        _run(module, 1)


def test_store_wait_then_write_is_race_free():
    module = _load()
    (ret,) = ops_named(module, "func.return")
    (local_store,) = ops_named(module, "tile.local_store")
    local_store.clone(ip=ir.InsertionPoint(ret))  # after the wait
    got, want = _run(module, 2)
    np.testing.assert_array_equal(got, want)


def test_barrier_used_before_init_is_reported():
    module = _load()
    assert erase_ops(module, "tile.barrier_init") == 2
    with pytest.raises(ModelError, match=r"is used before tile\.barrier_init"):
        _run(module, 1)
