"""Warp specialization in the model at its edges (found by ``benchmarks/mutation.py``).

The producer/consumer ring of ``data/warp_specialize_ring.mlir`` in program
order (no seed) hands the baton over a known number of times: the default
partition waits for the first slot (one hand-over to the producer), the
producer fills the two-slot ring and either finishes or waits for a slot to
come back (a second hand-over); each further pair of tiles repeats that.
Small front-end kernels pin what a worker captures (one warp's values),
where a warp specialization may run (on all of a program's warps, in a grid
that does not interleave at atomics) and the copies a worker leaves in
flight.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gemm_opt.language as tl
from gemm_opt.core.ext_compat import arith, ir
from gemm_opt.dialect import make_context
from gemm_opt.dialect.sync import AtomicRmwOp
from gemm_opt.model.interpreter import ModelError, run_function

DATA = Path(__file__).resolve().parent / "data" / "warp_specialize_ring.mlir"


@pytest.mark.parametrize(("tiles", "switches"), [(1, 2), (2, 2), (3, 4), (4, 4), (5, 6)])
def test_program_order_hand_overs(tiles: int, switches: int) -> None:
    rng = np.random.default_rng(tiles)
    a = rng.integers(-8, 9, size=(64, 32 * tiles)).astype(np.float16)
    c = np.full((64, 32), np.nan, dtype=np.float32)
    r = run_function(DATA.read_text(), "ws_sum", [a, c, 64, 32 * tiles, 32 * tiles, 32, tiles])
    np.testing.assert_array_equal(c, a.astype(np.float32).reshape(64, tiles, 32).sum(axis=1))
    assert r.sync.switches == switches


# ---- small kernels from the front end --------------------------------------------------

LANES = tl.SwizzledShared(vec=1, per_phase=1, max_phase=1, order=[0])


def _nothing() -> None:
    return None


def _copy(src, dst) -> None:
    layout = tl.Blocked([1], [32], [tl.num_warps()], [0])
    tl.store_block(dst, [32], [1], [0], tl.load_block(src, [32], [1], [0], [32], layout))


def _copy_in_flight(src, buf) -> None:
    desc = tl.make_tensor_descriptor(src, shape=[32], strides=[1], block_shape=[32], layout=LANES)
    tl.async_copy(desc, buf)


def _copy_through(desc, buf, dst) -> None:
    tl.async_copy(desc, buf)
    tl.async_wait(0)
    layout = tl.Blocked([1], [32], [tl.num_warps()], [0])
    tl.store_block(dst, [32], [1], [0], tl.local_load(buf, layout))


@tl.kernel
def ws_captured_descriptor(src: tl.ptr(tl.int32), dst: tl.ptr(tl.int32)):
    desc = tl.make_tensor_descriptor(src, shape=[32], strides=[1], block_shape=[32], layout=LANES)
    buf = tl.allocate_shared(tl.int32, [32], LANES)
    tl.warp_specialize([(_nothing, ()), (_copy_through, (desc, buf, dst))], [1])


@tl.kernel
def ws_copy(src: tl.ptr(tl.int32), dst: tl.ptr(tl.int32)):
    tl.warp_specialize([(_nothing, ()), (_copy, (src, dst))], [1])


@tl.kernel
def ws_on_warp_0(src: tl.ptr(tl.int32), dst: tl.ptr(tl.int32)):
    tl.if_(
        tl.warp_id() == 0,
        lambda: tl.warp_specialize([(_nothing, ()), (_copy, (src, dst))], [1]),
    )


@tl.kernel
def ws_copy_in_flight(src: tl.ptr(tl.int32)):
    buf = tl.allocate_shared(tl.int32, [32], LANES)
    tl.warp_specialize([(_nothing, ()), (_copy_in_flight, (src, buf))], [1])


SRC = np.arange(32, dtype=np.int32)


@pytest.mark.parametrize("num_warps", [1, 2, 4])
def test_a_worker_gets_the_programs_captured_values(num_warps: int) -> None:
    """A one-warp program has one row of each captured value (and no second)."""
    dst = np.zeros(32, np.int32)
    run_function(ws_copy.build_ir(num_warps=num_warps), "ws_copy", [SRC, dst])
    np.testing.assert_array_equal(dst, SRC)


def test_a_worker_copies_through_a_captured_descriptor() -> None:
    dst = np.zeros(32, np.int32)
    text = ws_captured_descriptor.build_ir(num_warps=2)
    run_function(text, "ws_captured_descriptor", [SRC, dst])
    np.testing.assert_array_equal(dst, SRC)


def test_a_warp_specialize_on_some_warps_is_refused() -> None:
    text = ws_on_warp_0.build_ir(num_warps=2)
    with pytest.raises(ModelError, match="runs on only some of the program's warps"):
        run_function(text, "ws_on_warp_0", [SRC, np.zeros(32, np.int32)])


def test_a_warp_specialize_in_a_grid_interleaving_at_atomics_is_refused() -> None:
    """An atomic makes the programs of a grid interleave: the two schedulers do not nest."""
    with make_context():
        module = ir.Module.parse(ws_copy.build_ir(num_warps=1))
        fn = module.body.operations[0]
        entry = fn.regions[0].blocks[0]
        with ir.InsertionPoint.at_block_begin(entry), ir.Location.unknown():
            i32 = ir.IntegerType.get_signless(32)
            zero = arith.ConstantOp(i32, ir.IntegerAttr.get(i32, 0)).result
            op = AtomicRmwOp(entry.arguments[1], zero, zero, i32)
            for name, v in (("kind", "add"), ("sem", "relaxed"), ("scope", "gpu")):
                op.operation.attributes[name] = ir.StringAttr.get(v)
        assert module.operation.verify()
        with pytest.raises(ModelError, match="does not interleave warp partitions inside"):
            run_function(module, "ws_copy", [SRC, np.zeros(32, np.int32)], (2, 1, 1))


def test_a_workers_copy_in_flight_at_exit_is_counted() -> None:
    r = run_function(ws_copy_in_flight.build_ir(num_warps=1), "ws_copy_in_flight", [SRC])
    assert r.stats.in_flight_at_exit == 1
