"""The TMA plan's windows across control flow: after an ``scf.if`` without else, after an
``scf.while`` (whose condition runs once more than its body), and at waits that allow
more copies than are in flight.

Each kernel is built through the dialect's builders; a plan's numbers are the copies a
wait may find not yet waited for (``W``) and the ring size (the most ever in flight),
worked out by hand from the tile rule in each test's docstring.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
import support.tile_build as tb
from support.tile_build import ops_named

from gemm_opt.core.ext_compat import ir, scf
from gemm_opt.dialect import make_context, tile
from gemm_opt.lowering.tma_plan import TmaRefusal, plan_tma


@dataclass
class Build:
    """What a test's body builds with: a descriptor, a buffer and a run-time flag."""

    desc: ir.Value
    buf: ir.Value
    flag: ir.Value

    def copy(self) -> None:
        tb.copy(self.desc, self.buf)

    def wait(self, num: int) -> None:
        tb.wait(num)

    def if_(self, then: Callable[[], None], other: Callable[[], None] | None = None) -> None:
        op = scf.IfOp(self.flag, [], has_else=other is not None)
        with tb.region(op.then_block):
            then()
        if other is not None:
            with tb.region(op.else_block):
                other()

    def while_(self, before: Callable[[], None], after: Callable[[], None]) -> None:
        op = scf.WhileOp([], [])
        with ir.InsertionPoint(op.before.blocks.append()):
            before()
            scf.ConditionOp(self.flag, [])
        with ir.InsertionPoint(op.after.blocks.append()):
            after()
            scf.YieldOp([])

    def for_(self, body: Callable[[], None]) -> None:
        with tb.for_loop(tb.const(0), tb.const(4), tb.const(1)):
            body()


def plan(body: Callable[[Build], None]) -> tuple[list[int], int, int]:
    """The windows of the function's waits in program order, its return's window, and the
    ring size, of a cuda:90 kernel whose body ``body`` builds."""
    with make_context(), ir.Location.unknown():
        layout = tile.SwizzledSharedAttr.build(vec=1, per_phase=1, max_phase=1, order=[1, 0])
        block = tb.block_type([64, 64], ir.F16Type.get(), layout)
        i1 = ir.IntegerType.get_signless(1)
        k = tb.kernel(
            [tb.desc_type(block), tb.shared_type(block), i1], num_warps=4, target="cuda:90"
        )
        with k.ip:
            body(Build(*k.args))
        assert k.module.operation.verify()
        fplan = plan_tma(k.module.operation).functions[k.fn.operation]
        waits = [fplan.windows[w] for w in ops_named(k.module, "tile.async_tdm_wait")]
        (ret,) = ops_named(k.module, "func.return")
        return waits, fplan.windows[ret], fplan.ring


def test_if_without_else_keeps_the_copies_of_the_path_that_skips_it() -> None:
    """copy; copy; if { wait 0 }; wait 1: the branch may not run, so 2 copies may be in
    flight at the last wait (not the 0 the branch leaves)."""

    def body(b: Build) -> None:
        b.copy()
        b.copy()
        b.if_(lambda: b.wait(0))
        b.wait(1)

    assert plan(body) == ([2, 2], 1, 2)


def test_if_without_else_that_copies() -> None:
    """copy; if { copy }; wait 0: 1 or 2 in flight, so W = 2 and a ring of 2."""

    def body(b: Build) -> None:
        b.copy()
        b.if_(b.copy)
        b.wait(0)

    assert plan(body) == ([2], 0, 2)


def test_if_with_else_takes_the_larger_branch() -> None:
    """copy; if { copy; copy } else { wait 0 }; wait 0: 3 after the then branch, 0 after
    the else branch."""

    def body(b: Build) -> None:
        b.copy()
        b.if_(lambda: (b.copy(), b.copy()), lambda: b.wait(0))
        b.wait(0)

    assert plan(body) == ([1, 3], 0, 3)


def test_after_a_while_its_condition_has_run_once_more() -> None:
    """copy in the condition, wait 0 in the body, wait 0 after the loop: the body always
    finds 1 copy in flight, and so does the wait after the loop (the last condition's
    copy, which no body waited for), although the loop's head has none."""

    def body(b: Build) -> None:
        b.while_(b.copy, lambda: b.wait(0))
        b.wait(0)

    assert plan(body) == ([1, 1], 0, 1)


def test_copies_a_while_body_leaves_in_flight_reach_its_condition() -> None:
    """copy; while (wait 1) { copy }: the condition's wait finds 1 copy the first time and
    2 after a body ran; the wait after the loop is from 1 (the condition waited)."""

    def body(b: Build) -> None:
        b.copy()
        b.while_(lambda: b.wait(1), b.copy)
        b.wait(0)

    assert plan(body) == ([2, 1], 0, 2)


def test_a_while_that_copies_in_both_regions_without_waiting_is_unbounded() -> None:
    """The count at the head grows every iteration: refused, not planned."""

    def body(b: Build) -> None:
        b.while_(b.copy, b.copy)

    with pytest.raises(TmaRefusal, match="not bounded"):
        plan(body)


def test_a_wait_for_more_than_is_in_flight_leaves_the_count() -> None:
    """copy; copy; wait 5; copy; wait 0: the wait for "at most 5" leaves the 2 in flight
    (not 5), so the next wait finds 3 and the ring is 3."""

    def body(b: Build) -> None:
        b.copy()
        b.copy()
        b.wait(5)
        b.copy()
        b.wait(0)

    assert plan(body) == ([2, 3], 0, 3)


def test_a_wait_for_more_than_is_in_flight_before_the_return() -> None:
    """copy; wait 3: the return waits for the one copy still in flight."""

    def body(b: Build) -> None:
        b.copy()
        b.wait(3)

    assert plan(body) == ([1], 1, 1)


def test_a_loop_whose_wait_allows_more_than_one_iteration_issues() -> None:
    """for { copy; wait 3 }: the count in flight grows by one an iteration up to 3 after
    the wait, so the wait's window and the ring reach 4; a wait after the loop finds 3,
    and one before it none."""

    def body(b: Build) -> None:
        b.wait(0)
        b.for_(lambda: (b.copy(), b.wait(3)))
        b.wait(2)

    assert plan(body) == ([0, 4, 3], 2, 4)


def test_a_wait_inside_a_branch_inside_a_loop_takes_every_visit() -> None:
    """for { copy; if { wait 2 } }; wait 0: the branch's wait may be skipped any number of
    times, so the copies in flight are not bounded by it: refused."""

    def body(b: Build) -> None:
        b.for_(lambda: (b.copy(), b.if_(lambda: b.wait(2))))

    with pytest.raises(TmaRefusal, match="not bounded"):
        plan(body)


def test_a_loop_that_may_not_run_keeps_the_copies_from_before_it() -> None:
    """copy; copy; for { wait 0; copy }; wait 0: an iteration leaves 1 copy in flight,
    but with no iteration the 2 from before the loop are still there, at the loop's
    wait and at the one after it."""

    def body(b: Build) -> None:
        b.copy()
        b.copy()
        b.for_(lambda: (b.wait(0), b.copy()))
        b.wait(0)

    assert plan(body) == ([2, 2], 0, 2)


def test_the_ring_holds_the_most_ever_in_flight_not_the_last() -> None:
    """copy; copy; wait 0; copy: 2 in flight before the wait, 1 at the end: a ring of 2."""

    def body(b: Build) -> None:
        b.copy()
        b.copy()
        b.wait(0)
        b.copy()

    assert plan(body) == ([2], 1, 2)
