"""Warp specialization in the model at its edges (found by ``benchmarks/mutation.py``).

The producer/consumer ring of ``data/warp_specialize_ring.mlir`` in program
order (no seed) hands the baton over a known number of times: the default
partition waits for the first slot (one hand-over to the producer), the
producer fills the two-slot ring and either finishes or waits for a slot to
come back (a second hand-over); each further pair of tiles repeats that.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gemm_opt.model.interpreter import run_function

DATA = Path(__file__).resolve().parent / "data" / "warp_specialize_ring.mlir"


@pytest.mark.parametrize(("tiles", "switches"), [(1, 2), (2, 2), (3, 4), (4, 4), (5, 6)])
def test_program_order_hand_overs(tiles: int, switches: int) -> None:
    rng = np.random.default_rng(tiles)
    a = rng.integers(-8, 9, size=(64, 32 * tiles)).astype(np.float16)
    c = np.full((64, 32), np.nan, dtype=np.float32)
    r = run_function(DATA.read_text(), "ws_sum", [a, c, 64, 32 * tiles, 32 * tiles, 32, tiles])
    np.testing.assert_array_equal(c, a.astype(np.float32).reshape(64, tiles, 32).sum(axis=1))
    assert r.sync.switches == switches
