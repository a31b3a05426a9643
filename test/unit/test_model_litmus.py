"""Litmus tests of the model's memory model between the programs of a grid
(``gemm_opt.model.concurrency``, driven by ``tile.atomic_rmw`` and the plain
accesses ``tile.store_block`` / ``tile.load_scalar``).

Each test builds a few programs with the dialect's builders (program ``i`` runs
under ``scf.if program_id == i``), runs them under many seeded interleavings
and asserts the exact set of outcomes: the values the programs recorded, or
the exact race report. The model interleaves whole ops, so its atomics are
sequentially consistent (store buffering never ends with both loads zero);
what it checks is whether plain accesses of different programs are ordered
by a release -> acquire chain at a scope that covers both programs (``gpu``
or ``sys``; a ``cta``-scope atomic orders nothing between programs and is
atomic only within one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from support import tile_build as tb

from gemm_opt.core.ext_compat import arith, ir, scf
from gemm_opt.dialect import make_context, tile
from gemm_opt.dialect.sync import AtomicRmwOp, LoadScalarOp
from gemm_opt.model.interpreter import ModelError, run_function

SEEDS = [None, *range(48)]
NOT_RECORDED = -1
#: The arrays every litmus kernel takes: two data words, two flags, the records.
ARRAYS = ("data", "flag", "flag2", "out")


class Program:
    """Builds one program's ops at the current insertion point; op ``n`` of
    program ``i`` is at location ``P{i}:{n}:1`` (race reports name it)."""

    def __init__(self, index: int, args: dict[str, ir.Value]) -> None:
        self.index = index
        self.args = args
        self.ops = 0
        self.i32 = ir.IntegerType.get_signless(32)

    def _loc(self) -> ir.Location:
        self.ops += 1
        return ir.Location.file(f"P{self.index}", self.ops, 1)

    def store(self, array: str, value: int, at: int = 0) -> None:
        """A plain write ``array[at] = value`` (a one-element ``tile.store_block``)."""
        loc = self._loc()
        with loc:
            layout = tile.BlockedAttr.build(
                size_per_thread=[1], threads_per_warp=[32], warps_per_cta=[1], order=[0]
            )
            t = ir.RankedTensorType.get([1], self.i32, layout)
            splat = ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(self.i32, value))
            block = arith.ConstantOp(t, splat).result
            tile.StoreBlockOp(
                self.args[array], [tb.const(at + 1)], [tb.const(1, 64)], [tb.const(at)], block
            )

    def load(self, array: str, at: int = 0) -> ir.Value:
        """A plain read of ``array[at]`` (``tile.load_scalar``)."""
        with self._loc():
            return LoadScalarOp(self.args[array], tb.const(at), self.i32).result

    def rmw(
        self, kind: str, array: str, value: int, sem: str, scope: str = "gpu", at: int = 0
    ) -> ir.Value:
        """``tile.atomic_rmw``; the old value."""
        with self._loc():
            op = AtomicRmwOp(self.args[array], tb.const(at), tb.const(value), self.i32)
            for name, v in (("kind", kind), ("sem", sem), ("scope", scope)):
                op.operation.attributes[name] = ir.StringAttr.get(v)
            return op.result

    def record(self, slot: int, value: ir.Value) -> None:
        """``out[slot] = value`` by a relaxed exchange (records never race)."""
        with ir.Location.name("record"):
            op = AtomicRmwOp(self.args["out"], tb.const(slot), value, self.i32)
            for name, v in (("kind", "xchg"), ("sem", "relaxed"), ("scope", "gpu")):
                op.operation.attributes[name] = ir.StringAttr.get(v)

    @contextmanager
    def when(self, value: ir.Value, equals: int) -> Iterator[None]:
        """Build the ops that run only if ``value == equals``."""
        cond = arith.CmpIOp(arith.CmpIPredicate.eq, value, tb.const(equals)).result
        branch = scf.IfOp(cond, [])
        with tb.region(branch.then_block):
            yield


Body = Callable[[Program], None]


def litmus(*bodies: Body, seeds: list[int | None] = SEEDS) -> set:
    """The outcomes of the programs ``bodies`` over ``seeds``: a tuple of the
    records (``NOT_RECORDED`` where a program recorded nothing) or a report."""
    with make_context(), ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)
        k = tb.kernel([tb.ptr_type(i32)] * len(ARRAYS), num_warps=1)
        args = dict(zip(ARRAYS, k.args, strict=True))
        with k.ip:
            pid = tile.ProgramIdOp(result=i32)
            pid.operation.attributes["axis"] = tb.i32_attr(0)
            for i, body in enumerate(bodies):
                prog = Program(i, args)
                with prog.when(pid.result, i):
                    body(prog)
        assert k.module.operation.verify()
        outcomes: set = set()
        for seed in seeds:
            arrays = [np.zeros(4, np.int32) for _ in ARRAYS]
            arrays[-1][:] = NOT_RECORDED
            try:
                run_function(
                    k.module,
                    "k",
                    arrays,
                    (len(bodies), 1, 1),
                    arg_names=ARRAYS,
                    seed=seed,
                    num_resident=len(bodies),
                )
            except ModelError as e:
                outcomes.add(str(e))
                continue
            outcomes.add(tuple(int(v) for v in arrays[-1][:3]))
        return outcomes


LOAD, STORE, RMW = "tile.load_scalar", "tile.store_block", "tile.atomic_rmw"
CTA_NOTE = " (a cta-scope atomic is atomic only within its program)"


def _op(name: str, loc: str) -> str:
    return f"'{name}' at {loc}"


def _pid(i: int) -> str:
    return f"program ({i}, 0, 0)"


def read_race(reader: tuple[int, str], writer: tuple[int, str, str], kind: str = "write") -> str:
    """The report of a read of ``data[0]`` (program, location) unordered after a
    write (program, op, location)."""
    (r, rloc), (w, wop, wloc) = reader, writer
    return (
        f"{_op(LOAD, rloc)}: partial read before its release: {_pid(r)} reads 'data'[0] that "
        f"{_pid(w)} wrote ({kind} at {_op(wop, wloc)}) with no release->acquire chain ordering "
        "that write before this read (the writer needs a release atomic after the write, the "
        "reader an acquire atomic that reads it before the read; relaxed atomics order nothing)"
    )


def write_race(
    writer: tuple[int, str, str], other: tuple[int, str, str], what: str, kind: str, note: str = ""
) -> str:
    """The report of a write (``what``) of ``data[0]`` unordered after another
    program's write (``kind``)."""
    (w, wop, wloc), (o, oop, oloc) = writer, other
    article = "an" if kind[0] in "aeiou" else "a"
    return (
        f"{_op(wop, wloc)}: {what} racing {article} {kind} of another program: {_pid(w)} writes "
        f"'data'[0] that {_pid(o)} wrote at {_op(oop, oloc)}, and no release->acquire chain "
        f"orders the two{note}"
    )


def write_after_read_race(writer: tuple[int, str, str], reader: tuple[int, str], what: str) -> str:
    """The report of a write (``what``) of ``data[0]`` unordered after another program's read."""
    (w, wop, wloc), (r, rloc) = writer, reader
    return (
        f"{_op(wop, wloc)}: {what} racing a read of another program: {_pid(w)} writes "
        f"'data'[0] that {_pid(r)} read at {_op(LOAD, rloc)}, and no release->acquire chain "
        "orders the read before this write"
    )


# ---- message passing ------------------------------------------------------------------


def _message_passing(release: str, rscope: str, acquire: str, ascope: str):
    def writer(p: Program) -> None:
        p.store("data", 42)
        p.rmw("xchg", "flag", 1, release, rscope)

    def reader(p: Program) -> None:
        seen = p.rmw("add", "flag", 0, acquire, ascope)
        p.record(0, seen)
        with p.when(seen, 1):
            p.record(1, p.load("data"))

    return writer, reader


SYNCHRONIZED = {(0, NOT_RECORDED, NOT_RECORDED), (1, 42, NOT_RECORDED)}
RACE = {(0, NOT_RECORDED, NOT_RECORDED), read_race((1, "P1:2:1"), (0, STORE, "P0:1:1"))}


@pytest.mark.parametrize(
    ("release", "rscope", "acquire", "ascope", "outcomes"),
    [
        ("release", "gpu", "acquire", "gpu", SYNCHRONIZED),
        ("acq_rel", "gpu", "acq_rel", "gpu", SYNCHRONIZED),
        ("release", "sys", "acquire", "sys", SYNCHRONIZED),
        ("release", "gpu", "acquire", "sys", SYNCHRONIZED),
        ("release", "sys", "acquire", "gpu", SYNCHRONIZED),
        # Relaxed (or the wrong direction) on either side orders nothing.
        ("relaxed", "gpu", "acquire", "gpu", RACE),
        ("release", "gpu", "relaxed", "gpu", RACE),
        ("acquire", "gpu", "acquire", "gpu", RACE),
        ("release", "gpu", "release", "gpu", RACE),
    ],
)
def test_message_passing(release, rscope, acquire, ascope, outcomes) -> None:
    assert litmus(*_message_passing(release, rscope, acquire, ascope)) == outcomes


def _flag_races(writer_kind: str, reader_kind: str) -> set[str]:
    """Both orders of the writer's publication (P0:2:1) and the reader's poll
    (P1:1:1) of ``flag``, one of them of cta scope: a race either way."""

    def race(first: tuple[int, str, str], second: tuple[int, str, str], what: str, kind: str):
        return write_race(first, second, what, kind, CTA_NOTE).replace("'data'", "'flag'")

    pub, poll = (0, RMW, "P0:2:1"), (1, RMW, "P1:1:1")
    return {race(pub, poll, writer_kind, reader_kind), race(poll, pub, reader_kind, writer_kind)}


@pytest.mark.parametrize(
    ("rscope", "ascope", "outcomes"),
    [
        ("cta", "gpu", _flag_races("cta-scope atomic", "atomic")),
        ("gpu", "cta", _flag_races("atomic", "cta-scope atomic")),
        ("cta", "cta", _flag_races("cta-scope atomic", "cta-scope atomic")),
    ],
)
def test_a_cta_scope_flag_does_not_reach_another_program(rscope, ascope, outcomes) -> None:
    """A release or acquire of cta scope does not include the other program:
    the flag itself is raced, so the data is never published."""
    assert litmus(*_message_passing("acq_rel", rscope, "acq_rel", ascope)) == outcomes


def test_publication_before_the_write_races() -> None:
    """The flag is released before the data is written: a reader that sees the
    flag reads data the release did not cover, whichever of the two runs first."""

    def writer(p: Program) -> None:
        p.rmw("xchg", "flag", 1, "release")
        p.store("data", 42)

    _, reader = _message_passing("release", "gpu", "acquire", "gpu")
    assert litmus(writer, reader) == {
        (0, NOT_RECORDED, NOT_RECORDED),
        read_race((1, "P1:2:1"), (0, STORE, "P0:2:1")),
        write_after_read_race((0, STORE, "P0:2:1"), (1, "P1:2:1"), "write"),
    }


# ---- chains and release sequences ---------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second", "ordered"),
    [
        ("acquire", "release", True),
        ("acq_rel", "acq_rel", True),
        ("acq_rel", "release", True),
        ("acquire", "acq_rel", True),
        ("relaxed", "release", False),
        ("acquire", "relaxed", False),
        ("release", "release", False),
        ("acquire", "acquire", False),
    ],
)
def test_acq_rel_chain_across_three_programs(first: str, second: str, ordered: bool) -> None:
    """P0 publishes data on ``flag``; P1 passes what it acquired on to ``flag2``;
    P2 acquires ``flag2`` and reads the data: ordered only through P1's clock."""

    def p0(p: Program) -> None:
        p.store("data", 42)
        p.rmw("xchg", "flag", 1, "release")

    def p1(p: Program) -> None:
        seen = p.rmw("add", "flag", 0, first)
        with p.when(seen, 1):
            p.rmw("xchg", "flag2", 1, second)

    def p2(p: Program) -> None:
        seen = p.rmw("add", "flag2", 0, "acquire")
        p.record(0, seen)
        with p.when(seen, 1):
            p.record(1, p.load("data"))

    quiet = (0, NOT_RECORDED, NOT_RECORDED)
    if ordered:
        expected = {quiet, (1, 42, NOT_RECORDED)}
    else:
        expected = {quiet, read_race((2, "P2:2:1"), (0, STORE, "P0:1:1"))}
    assert litmus(p0, p1, p2) == expected


def test_a_relaxed_rmw_continues_the_release_sequence() -> None:
    """P1's relaxed increment of the flag sits between P0's release and P2's
    acquire: P2 still synchronizes with P0 (every atomic is a read-modify-write)."""

    def p0(p: Program) -> None:
        p.store("data", 42)
        p.rmw("add", "flag", 1, "release")

    def p1(p: Program) -> None:
        p.rmw("add", "flag", 1, "relaxed")

    def p2(p: Program) -> None:
        seen = p.rmw("add", "flag", 0, "acquire")
        p.record(0, seen)
        with p.when(seen, 2):
            p.record(1, p.load("data"))

    quiet = {(0, NOT_RECORDED, NOT_RECORDED), (1, NOT_RECORDED, NOT_RECORDED)}
    assert litmus(p0, p1, p2) == quiet | {(2, 42, NOT_RECORDED)}


def test_a_counting_flag_publishes_every_release() -> None:
    """Two programs each publish their word with a release increment of one
    flag (stream-K's count of partials): the program that reads the count 2
    sees both words."""

    def publisher(word: int) -> Body:
        def body(p: Program) -> None:
            p.store("data", 42 + word, at=word)
            p.rmw("add", "flag", 1, "release")

        return body

    def consumer(p: Program) -> None:
        seen = p.rmw("add", "flag", 0, "acquire")
        p.record(0, seen)
        with p.when(seen, 2):
            p.record(1, p.load("data", at=0))
            p.record(2, p.load("data", at=1))

    quiet = {(n, NOT_RECORDED, NOT_RECORDED) for n in (0, 1)}
    assert litmus(publisher(0), publisher(1), consumer) == quiet | {(2, 42, 43)}


# ---- store buffering and atomicity ---------------------------------------------------------


@pytest.mark.parametrize("sem", ["relaxed", "acq_rel"])
def test_store_buffering_is_sequentially_consistent(sem: str) -> None:
    """The model interleaves atomics whole: never both loads zero."""

    def p0(p: Program) -> None:
        p.rmw("xchg", "flag", 1, sem)
        p.record(0, p.rmw("add", "flag2", 0, sem))

    def p1(p: Program) -> None:
        p.rmw("xchg", "flag2", 1, sem)
        p.record(1, p.rmw("add", "flag", 0, sem))

    assert litmus(p0, p1) == {(0, 1, NOT_RECORDED), (1, 0, NOT_RECORDED), (1, 1, NOT_RECORDED)}


@pytest.mark.parametrize("scope", ["gpu", "sys"])
def test_atomics_of_grid_scope_do_not_race(scope: str) -> None:
    def bump(p: Program) -> None:
        p.rmw("add", "data", 1, "relaxed", scope)

    def last(p: Program) -> None:
        p.record(0, p.rmw("add", "data", 1, "relaxed", scope))

    assert litmus(bump, bump, last) == {(n, NOT_RECORDED, NOT_RECORDED) for n in range(3)}


def test_cta_scope_atomics_of_two_programs_race() -> None:
    """A cta-scope atomic is atomic only within its program: two programs'
    increments of one word can lose one."""

    def bump(p: Program) -> None:
        p.rmw("add", "data", 1, "relaxed", "cta")

    what = "cta-scope atomic"
    assert litmus(bump, bump) == {
        write_race((1, RMW, "P1:1:1"), (0, RMW, "P0:1:1"), what, what, CTA_NOTE),
        write_race((0, RMW, "P0:1:1"), (1, RMW, "P1:1:1"), what, what, CTA_NOTE),
    }


def test_a_cta_scope_atomic_races_a_grid_scope_one() -> None:
    def narrow(p: Program) -> None:
        p.rmw("add", "data", 1, "relaxed", "cta")

    def wide(p: Program) -> None:
        p.rmw("add", "data", 1, "relaxed", "gpu")

    narrow_first = write_race((1, RMW, "P1:1:1"), (0, RMW, "P0:1:1"), "atomic", "cta-scope atomic")
    assert litmus(narrow, wide) == {
        narrow_first + CTA_NOTE,
        write_race((0, RMW, "P0:1:1"), (1, RMW, "P1:1:1"), "cta-scope atomic", "atomic", CTA_NOTE),
    }


# ---- plain accesses racing atomics ---------------------------------------------------------


def test_a_plain_write_races_an_atomic() -> None:
    def write(p: Program) -> None:
        p.store("data", 5)

    def bump(p: Program) -> None:
        p.rmw("add", "data", 1, "relaxed")

    assert litmus(write, bump) == {
        write_race((0, STORE, "P0:1:1"), (1, RMW, "P1:1:1"), "write", "atomic"),
        write_race((1, RMW, "P1:1:1"), (0, STORE, "P0:1:1"), "atomic", "write"),
    }


def test_a_plain_read_races_an_atomic() -> None:
    def read(p: Program) -> None:
        p.record(0, p.load("data"))

    def bump(p: Program) -> None:
        p.rmw("add", "data", 1, "release")

    assert litmus(read, bump) == {
        read_race((0, "P0:1:1"), (1, RMW, "P1:1:1"), kind="atomic"),
        write_after_read_race((1, RMW, "P1:1:1"), (0, "P0:1:1"), "atomic"),
    }


def test_a_plain_write_ordered_after_an_atomic_does_not_race() -> None:
    def bump(p: Program) -> None:
        p.rmw("add", "data", 1, "relaxed")
        p.rmw("xchg", "flag", 1, "release")

    def write(p: Program) -> None:
        seen = p.rmw("add", "flag", 0, "acquire")
        p.record(0, seen)
        with p.when(seen, 1):
            p.store("data", 7)
            p.record(1, p.load("data"))

    assert litmus(bump, write) == {(1, 7, NOT_RECORDED), (0, NOT_RECORDED, NOT_RECORDED)}
