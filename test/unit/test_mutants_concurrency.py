"""The model's happens-before bookkeeping at its edges (found by ``benchmarks/mutation.py``).

``GlobalMemory`` packs who accessed each element, at which epoch and with
which op into one int64 tag; these tests drive it directly with a few
programs' clocks: accesses that cover elements never touched next to touched
ones, one program's own earlier writes next to another's, one element ordered
by a release -> acquire chain next to one that is not, and every capacity
limit of the packing at its last accepted value and its first refused one.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from gemm_opt.model import concurrency as cc
from gemm_opt.model.concurrency import GlobalMemory, Inline, ProgramClock, SyncStats, Waiting
from gemm_opt.model.errors import ModelError
from gemm_opt.model.interpreter import run_function

PIDS = [(0, 0, 0), (1, 0, 0)]
KERNELS = Path(__file__).resolve().parent / "data" / "model_concurrency.mlir"


def _grid() -> tuple[GlobalMemory, ProgramClock, ProgramClock, np.ndarray]:
    gm = GlobalMemory(PIDS)
    return gm, ProgramClock(0, PIDS[0]), ProgramClock(1, PIDS[1]), np.zeros(4, np.int32)


def _at(*elems: int) -> np.ndarray:
    return np.array(elems, dtype=np.int64)


def test_a_write_over_a_fresh_element_and_a_racing_one_is_reported() -> None:
    gm, p0, p1, c = _grid()
    gm.write(p1, c, "c", _at(1), "P1")
    with pytest.raises(ModelError, match=r"'c'\[1\] that program \(1, 0, 0\) wrote at P1"):
        gm.write(p0, c, "c", _at(0, 1), "P0")


def test_a_read_over_a_fresh_element_and_a_racing_one_is_reported() -> None:
    gm, p0, p1, c = _grid()
    gm.write(p1, c, "c", _at(1), "P1")
    with pytest.raises(ModelError, match="partial read before its release"):
        gm.read(p0, c, "c", _at(0, 1), "P0")


def test_own_writes_next_to_fresh_elements_do_not_race() -> None:
    gm, p0, _, c = _grid()
    gm.write(p0, c, "c", _at(0), "P0:1")
    gm.write(p0, c, "c", _at(0, 1), "P0:2")
    gm.read(p0, c, "c", _at(0, 1, 2), "P0:3")


def test_a_write_over_own_and_another_programs_elements_is_reported() -> None:
    gm, p0, p1, c = _grid()
    gm.write(p1, c, "c", _at(0), "P1")
    gm.write(p0, c, "c", _at(1), "P0:1")
    with pytest.raises(ModelError, match=r"'c'\[0\] that program \(1, 0, 0\) wrote"):
        gm.write(p0, c, "c", _at(0, 1), "P0:2")


def test_one_ordered_and_one_unordered_element_is_a_race() -> None:
    """Program 1 writes c[0], releases, then writes c[1]; program 0 acquires
    in between: c[0] is ordered before program 0's write, c[1] is not."""
    gm, p0, p1, c = _grid()
    flag = np.zeros(1, np.int32)
    gm.write(p1, c, "c", _at(0), "P1:1")
    gm.release(p1, flag, _at(0))
    gm.acquire(p0, flag, _at(0))
    gm.write(p1, c, "c", _at(1), "P1:2")
    gm.read(p0, c, "c", _at(0), "P0:1")  # ordered: no report
    with pytest.raises(ModelError, match=r"'c'\[1\] that program \(1, 0, 0\) wrote at P1:2"):
        gm.write(p0, c, "c", _at(0, 1), "P0:2")


def test_an_atomic_after_another_programs_plain_write_is_reported() -> None:
    gm, p0, p1, c = _grid()
    gm.write(p1, c, "c", _at(0), "P1")
    with pytest.raises(ModelError, match="atomic racing a write of another program"):
        gm.write(p0, c, "c", _at(0), "P0", atomic=True, scope="gpu")


def test_a_programs_clock_counts_its_releases() -> None:
    """Epochs start at 0 and step by one release: the epoch limit counts releases."""
    gm, p0, _, _ = _grid()
    flag = np.zeros(1, np.int32)
    assert p0.clock == 0
    for n in range(1, 4):
        gm.release(p0, flag, _at(0))
        assert p0.clock == n


def test_the_epoch_limit() -> None:
    gm, p0, _, c = _grid()
    p0.vc[p0.index] = cc._EPOCH_MASK
    gm.write(p0, c, "c", _at(0), "P0")
    p0.vc[p0.index] += 1
    with pytest.raises(ModelError, match=f"released more than {cc._EPOCH_MASK} times"):
        gm.write(p0, c, "c", _at(0), "P0")


def test_the_op_limit() -> None:
    """Each distinct op gets an id in the tag's op field: 2**14 of them fit."""
    gm, p0, _, c = _grid()
    for op in range(cc._OP_MASK + 1):
        gm.write(p0, c, "c", _at(0), f"op{op}")
    with pytest.raises(ModelError, match=f"at most {cc._OP_MASK + 1} ops"):
        gm.write(p0, c, "c", _at(0), "one more")


def test_the_program_limit() -> None:
    most = (1 << cc._PROG_BITS) - 2
    GlobalMemory([(0, 0, 0)] * most)
    with pytest.raises(ModelError, match=f"at most {most} programs"):
        GlobalMemory([(0, 0, 0)] * (most + 1))


def test_what_wakes_a_flag_wait() -> None:
    flag, other = np.zeros(2, np.int32), np.zeros(2, np.int32)
    w = Waiting((0, 0, 0), flag, "flag", 0, 0, "P0")
    assert not w.woken_by(flag)
    other[0] = 1  # another array's element 0 moved: not this flag
    assert not w.woken_by(other)
    flag[1] = 1  # another element of the flag's array: not polled
    assert not w.woken_by(flag)
    flag[0] = 1
    assert w.woken_by(flag)


def test_one_moved_flag_of_those_polled_wakes_a_wait() -> None:
    flag, second, third = (np.zeros(1, np.int32) for _ in range(3))
    w = Waiting((0, 0, 0), flag, "flag", 0, 0, "P0", also=[(second, 0, 0), (third, 0, 0)])
    assert not w.woken_by(second)
    second[0] = 3
    assert w.woken_by(second)
    assert not w.woken_by(flag)


def test_any_write_wakes_a_wait_on_a_plain_load() -> None:
    w = Waiting((0, 0, 0), None, "", 0, 0, "P0")
    assert w.woken_by(np.zeros(1, np.int32))


def test_a_wait_with_no_other_program_is_one_wait_and_a_deadlock() -> None:
    stats = SyncStats(seed=None, num_resident=4)
    inline = Inline(stats, lambda: 2)
    flag = np.zeros(1, np.int32)
    with pytest.raises(ModelError) as e:
        inline.wait_change(ProgramClock(0, PIDS[0]), Waiting(PIDS[0], flag, "flag", 0, 0, "P0"))
    assert stats.waits == 1
    assert str(e.value).endswith(
        "to change from 0; 2 program(s) finished (no other program runs concurrently)"
    )


def _program_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("program (")]


@pytest.mark.parametrize("resident", [6, 2])
def test_a_run_leaves_no_program_thread_behind(resident: int) -> None:
    """Every program's thread has ended when a run returns or reports (a
    chain of six flags completes with six resident programs, deadlocks with two)."""
    flags = np.zeros(6 * 64, dtype=np.int32)
    kernels = KERNELS.read_text()
    try:
        run_function(kernels, "reverse_chain", {"flags": flags}, (6, 1, 1), num_resident=resident)
    except ModelError as e:
        assert resident == 2 and str(e).startswith("deadlock:")
    assert _program_threads() == []


def test_hand_overs_are_counted_once_each() -> None:
    """Without a seed, the chain of six flags hands over exactly five times
    (each program waits for the next one's flag); a seeded run with one
    resident program has no one to hand over to."""
    kernels = KERNELS.read_text()
    flags = np.zeros(6 * 64, dtype=np.int32)
    r = run_function(kernels, "reverse_chain", {"flags": flags}, (6, 1, 1), num_resident=6)
    assert r.sync.switches == 5
    for seed in range(4):
        r = run_function(
            kernels,
            "bump",
            {"flags": np.zeros(4, np.int32), "at": 0},
            (3, 1, 1),
            num_resident=1,
            seed=seed,
        )
        assert r.sync.switches == 0


MAX_MIN = """
module attributes {tile.num_warps = 1 : i32} {
  func.func @max_min(%flags: !tile.ptr<i32>, %value: i32, %out: !tile.ptr<i32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %hi = "tile.atomic_rmw"(%flags, %c0, %value) {kind = "max", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    %lo = "tile.atomic_rmw"(%flags, %c1, %value) {kind = "min", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    %r0 = "tile.atomic_rmw"(%out, %c0, %hi) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    %r1 = "tile.atomic_rmw"(%out, %c1, %lo) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    return
  }
}
"""


@pytest.mark.parametrize("value", [-7, 3, 5, 9])
def test_atomic_max_and_min(value: int) -> None:
    """Signed max and min of 5 and ``value``; each returns the old 5."""
    flags, out = np.full(2, 5, np.int32), np.zeros(2, np.int32)
    run_function(MAX_MIN, "max_min", {"flags": flags, "value": value, "out": out})
    assert out.tolist() == [5, 5]
    assert flags.tolist() == [max(5, value), min(5, value)]


PROGRESS = """
#bl = #tile.blocked<{size_per_thread = array<i64: 1>, threads_per_warp = array<i64: 32>, warps_per_cta = array<i64: 1>, order = array<i64: 0>}>
!t = tensor<1xi32, #bl>
!f = tensor<1xf32, #bl>
module attributes {tile.num_warps = 1 : i32} {
  // while (atomic_add(count, 1) < 3) out[0] = old;
  func.func @rmw_and_store(%count: !tile.ptr<i32>, %out: !tile.ptr<i32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %one = arith.constant 1 : i64
    %last = scf.while : () -> i32 {
      %old = "tile.atomic_rmw"(%count, %c0, %c1) {kind = "add", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %more = arith.cmpi slt, %old, %c3 : i32
      scf.condition(%more) %old : i32
    } do {
    ^bb0(%v: i32):
      %t = tensor.splat %v : !t
      "tile.store_block"(%out, %c1, %one, %c0, %t) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (!tile.ptr<i32>, i32, i64, i32, !t) -> ()
      scf.yield
    }
    return
  }

  // while ((v = count[0]) < 3) { atomic_add_block(count, [1]); out[0] = v; }
  func.func @block_add_and_store(%count: !tile.ptr<f32>, %out: !tile.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %i0 = arith.constant 0 : index
    %three = arith.constant 3.0 : f32
    %one = arith.constant 1 : i64
    %ones = arith.constant dense<1.0> : !f
    %last = scf.while : () -> f32 {
      %b = "tile.load_block"(%count, %c1, %one, %c0) {operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!tile.ptr<f32>, i32, i64, i32) -> !f
      %v = tensor.extract %b[%i0] : !f
      %more = arith.cmpf olt, %v, %three : f32
      scf.condition(%more) %v : f32
    } do {
    ^bb0(%v: f32):
      "tile.atomic_add_block"(%count, %c1, %one, %c0, %ones) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>, sem = "relaxed", scope = "gpu"} : (!tile.ptr<f32>, i32, i64, i32, !f) -> ()
      %t = tensor.splat %v : !f
      "tile.store_block"(%out, %c1, %one, %c0, %t) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (!tile.ptr<f32>, i32, i64, i32, !f) -> ()
      scf.yield
    }
    return
  }
}
"""


@pytest.mark.parametrize("func", ["rmw_and_store", "block_add_and_store"])
def test_an_atomic_and_a_store_per_iteration_are_progress(func: str) -> None:
    """Each iteration starts with the same (no) values but changes memory
    twice: an atomic and a store each count as an effect, so the loop is not
    taken for a spin on plain memory."""
    dtype = np.int32 if func == "rmw_and_store" else np.float32
    count, out = np.zeros(1, dtype), np.full(1, -1, dtype)
    run_function(PROGRESS, func, {"count": count, "out": out})
    assert count[0] == (4 if func == "rmw_and_store" else 3)
    assert out[0] == 2
