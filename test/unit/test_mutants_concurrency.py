"""The model's happens-before bookkeeping at its edges (found by ``benchmarks/mutation.py``).

``GlobalMemory`` packs who accessed each element, at which epoch and with
which op into one int64 tag; these tests drive it directly with a few
programs' clocks: accesses that cover elements never touched next to touched
ones, one program's own earlier writes next to another's, one element ordered
by a release -> acquire chain next to one that is not, and every capacity
limit of the packing at its last accepted value and its first refused one.
"""

from __future__ import annotations

import numpy as np
import pytest

from gemm_opt.model import concurrency as cc
from gemm_opt.model.concurrency import GlobalMemory, Inline, ProgramClock, SyncStats, Waiting
from gemm_opt.model.errors import ModelError

PIDS = [(0, 0, 0), (1, 0, 0)]


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
