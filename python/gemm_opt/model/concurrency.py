"""Concurrent programs of a grid: scheduling, flag waits and happens-before checks.

GEMM schedules make programs talk to each other through global memory: a
work-stealing program claims tiles from an atomic counter, a stream-K program
waits on the flag that says another program's partial tile is published. The
model therefore runs a grid the way a GPU does, as far as it matters for
correctness: ``num_resident`` programs (the compute units) are resident at
once and a new program starts only when a resident one finishes, so a program
that waits on one that never becomes resident deadlocks here as it would on
the device.

Interleaving
------------
Resident programs run interleaved at *interleaving points*: ``tile.atomic_rmw``,
``tile.atomic_add_block`` and the global ``tile.load_block`` /
``tile.store_block``. With ``seed=None`` a program runs until it waits or
finishes, then the lowest-numbered runnable program runs (program order); with
an integer seed a seeded ``random.Random`` picks the next program among the
runnable ones at every interleaving point, so each seed is one reproducible
interleaving.

Each resident program runs in its own Python thread, and exactly one thread
runs at a time: it holds a baton (a semaphore per program) that it hands over
only at an interleaving point, so the interleaving is decided by the scheduler
alone, never by the operating system, and the interpreter's state needs no
locks. Threads rather than generators: the interpreter compiles IR into nested
closures (``scf.for`` calls its body's closures); making each of them a
generator would slow every op of the single-program fast path and force every
op handler, including ones added later, into the generator protocol. A
function without atomics, or a one-program grid, runs inline in the caller's
thread exactly as before (no program can wait on another there).

Flag waits
----------
A flag wait is a loop on ``atomic_rmw add 0 acquire``. An atomic that would
not change the value and reads the same value the program read at that
address last time (with no modifying atomic of its own in between) is a spin:
the program stops being runnable until another program changes that element.
When every resident program waits, no program can make progress:
:class:`ModelError` names the waiting programs, the flags (argument and
element index) and the values they keep reading. (A bounded spin, one that
gives up after a number of reads, is taken for a wait too.) A ``scf.while``
iteration that starts with the same values as the previous one, with no
atomic or global write of the program in between, is a spin on plain memory
(or an endless loop): the program waits for any write of another program,
and a run where nobody can write is reported the same way instead of hanging.

Happens-before
--------------
Global memory carries vector clocks (FastTrack-style epochs per element). A
``release`` atomic (``release``/``acq_rel``, scope ``gpu`` or ``sys``) publishes
the program's clock at its address and then advances the program's clock; an
``acquire`` atomic joins the clock published there into the program's clock
(every atomic here is a read-modify-write, so a later atomic continues the
release sequence: the address keeps the join of all releases on it).
``relaxed`` atomics and ``cta``-scope ones order nothing between programs.
A plain read (``load_block``) of an element another program wrote must be
ordered after that write, else "partial read before its release"; a plain
write must be ordered after another program's last write and last read of
the element. Atomics of ``gpu`` or ``sys`` scope on the same element never
race with each other; an atomic and a plain access of another program do,
unless ordered. A ``cta``-scope atomic is atomic only within its program (its
scope does not include the other programs), so it races any unordered access
of another program to the element, atomics included. Program
completion orders nothing (a program that starts after another finished on
the same compute unit does not see its writes on the device either).
Reads by TDM copies are not checked (they read the operands A and B, which no
program writes), and for a write only the last reader of each element is
checked (an earlier concurrent reader may go unreported).
"""

from __future__ import annotations

import random
import threading
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gemm_opt.model.errors import ModelError

Pid = tuple[int, int, int]

#: ``sem`` values that make an atomic publish (release) or join (acquire) clocks.
RELEASE_SEMS = frozenset({"release", "acq_rel"})
ACQUIRE_SEMS = frozenset({"acquire", "acq_rel"})
#: Scopes that order memory between programs (``cta`` orders only inside one).
GRID_SCOPES = frozenset({"gpu", "sys"})


class _Abort(BaseException):
    """Unwinds a program's thread when the run stops (another program failed)."""


@dataclass
class SyncStats:
    """What the programs of one run did to each other.

    ``atomic_rmw`` counts executed ``tile.atomic_rmw`` by kind (``"add"``,
    ``"xchg"``, ...), ``atomic_rmw_sem`` by ``sem``; ``atomic_add_block``
    counts block adds; ``waits`` counts the times a program stopped at a flag
    that had not changed; ``switches`` the hand-overs between programs;
    ``start_order`` / ``finish_order`` the program ids in the order they
    became resident / finished; ``max_resident`` the most programs resident
    at once.
    """

    seed: int | None
    num_resident: int
    concurrent: bool = False
    atomic_rmw: Counter[str] = field(default_factory=Counter)
    atomic_rmw_sem: Counter[str] = field(default_factory=Counter)
    atomic_add_block: int = 0
    waits: int = 0
    switches: int = 0
    start_order: list[Pid] = field(default_factory=list)
    finish_order: list[Pid] = field(default_factory=list)
    max_resident: int = 0

    @property
    def atomics(self) -> int:
        """All atomic operations executed (scalar and block)."""
        return sum(self.atomic_rmw.values()) + self.atomic_add_block


class ProgramClock:
    """The synchronization state of one program: its vector clock and its polls."""

    __slots__ = ("effects", "index", "pid", "polls", "task", "vc")

    def __init__(self, index: int, pid: Pid) -> None:
        self.index = index
        self.pid = pid
        self.vc: dict[int, int] = {index: 0}
        # Atomics and global writes so far: a loop iteration that does
        # neither cannot change what the next one sees, unless others write.
        # Equivalent mutant: 0 -> 1; effects is only compared with an earlier value.
        self.effects = 0
        # (array id, element) -> (array, element, value) this program last
        # read there without modifying it, since its last modifying atomic
        # (spin detection).
        self.polls: dict[tuple[int, int], tuple[np.ndarray, int, int]] = {}
        self.task: _Task | None = None

    @property
    def clock(self) -> int:
        return self.vc[self.index]


def _kind(atomic: bool, narrow: bool) -> str:
    """How a race report names an access."""
    if not atomic:
        return "write"
    return "cta-scope atomic" if narrow else "atomic"


def _a(noun: str) -> str:
    return f"an {noun}" if noun[0] in "aeiou" else f"a {noun}"


def _join(into: dict[int, int], other: dict[int, int]) -> None:
    for k, v in other.items():
        # Equivalent mutant: < -> <= (stores the same value) or -1 -> -2 (epochs are >= 0).
        if into.get(k, -1) < v:
            into[k] = v


# ---------------------------------------------------------------------------
# Global memory: per-element epochs and per-address release clocks
# ---------------------------------------------------------------------------


# One int64 tag per element and access kind (last write, last read) packs
# who accessed it, at which epoch, with which op, whether atomically and
# whether at a scope narrower than the grid, so a check is one gather and an
# update one scatter. 0 = never accessed.
_EPOCH_BITS = 24
_ATOMIC_SHIFT = _EPOCH_BITS
_NARROW_SHIFT = _EPOCH_BITS + 1
_OP_SHIFT, _OP_BITS = _EPOCH_BITS + 2, 14
_PROG_SHIFT, _PROG_BITS = _OP_SHIFT + _OP_BITS, 23
_EPOCH_MASK = (1 << _EPOCH_BITS) - 1
_OP_MASK = (1 << _OP_BITS) - 1


class _Shadow:
    """Tags of the last write and the last plain read of every element of one array."""

    __slots__ = ("array", "read", "rtag", "written", "wtag")

    def __init__(self, array: np.ndarray) -> None:
        self.array = array  # keeps id(array) unique while the shadow lives
        self.wtag = np.zeros(array.size, dtype=np.int64)
        self.rtag = np.zeros(array.size, dtype=np.int64)
        # Whether any program wrote / plainly read the array yet: most arrays
        # are only written (C) or only read (A, B), so one check is skipped.
        # Equivalent mutant: False -> True; a check of all-zero tags finds nothing.
        self.written = False
        # Equivalent mutant: False -> True; a check of all-zero tags finds nothing.
        self.read = False


class GlobalMemory:
    """Happens-before checking of global accesses between the programs of a grid."""

    def __init__(self, pids: list[Pid]) -> None:
        if len(pids) >= (1 << _PROG_BITS) - 1:
            raise ModelError(f"the memory model tracks at most {(1 << _PROG_BITS) - 2} programs")
        self.pids = pids
        self._shadows: dict[int, _Shadow] = {}
        self._ops: list[str] = []
        self._op_ids: dict[str, int] = {}
        self._released: dict[tuple[int, int], dict[int, int]] = {}

    def _shadow(self, array: np.ndarray) -> _Shadow:
        sh = self._shadows.get(id(array))
        if sh is None:
            sh = self._shadows[id(array)] = _Shadow(array)
        return sh

    def _tag(self, p: ProgramClock, where: str, atomic: bool, narrow: bool = False) -> int:
        op = self._op_ids.get(where)
        if op is None:
            op = self._op_ids[where] = len(self._ops)
            self._ops.append(where)
            if op > _OP_MASK:
                raise ModelError(f"the memory model tracks at most {_OP_MASK + 1} ops")
        epoch = p.clock
        if epoch > _EPOCH_MASK:
            raise ModelError(f"program {p.pid} released more than {_EPOCH_MASK} times")
        return (
            ((p.index + 1) << _PROG_SHIFT)
            | (op << _OP_SHIFT)
            | (int(narrow) << _NARROW_SHIFT)
            | (int(atomic) << _ATOMIC_SHIFT)
            | epoch
        )

    def _conflict(
        self, p: ProgramClock, tags: np.ndarray, skip_atomic: bool
    ) -> tuple[int, int] | None:
        """(position, tag) of the first access in ``tags`` by another program
        that is not ordered before ``p``'s now (grid-scope atomics skipped if asked)."""
        if not tags.any():  # never accessed: the common case of a first write
            return None
        progs = (tags >> _PROG_SHIFT) - 1
        cand = (progs >= 0) & (progs != p.index)
        if skip_atomic:
            strong = (((tags >> _ATOMIC_SHIFT) & 1) == 1) & (((tags >> _NARROW_SHIFT) & 1) == 0)
            cand &= ~strong
        if not cand.any():
            return None
        pos = np.flatnonzero(cand)
        others = progs[pos]
        uniq, inv = np.unique(others, return_inverse=True)
        # Equivalent mutant: -1 -> -2; epochs are >= 0, so both mean "never seen".
        seen = np.array([p.vc.get(int(q), -1) for q in uniq], dtype=np.int64)
        bad = (tags[pos] & _EPOCH_MASK) > seen[inv]
        if not bad.any():
            return None
        k = int(pos[np.flatnonzero(bad)[0]])
        return k, int(tags[k])

    def _describe(self, tag: int) -> tuple[Pid, str, str]:
        """(program, op location, kind of access) of an access tag."""
        prog = (tag >> _PROG_SHIFT) - 1
        op = self._ops[(tag >> _OP_SHIFT) & _OP_MASK]
        return (
            self.pids[prog],
            op,
            _kind(bool((tag >> _ATOMIC_SHIFT) & 1), bool((tag >> _NARROW_SHIFT) & 1)),
        )

    def read(self, p: ProgramClock, array: np.ndarray, name: str, idx: np.ndarray, where: str):
        """A plain read of ``array[idx]`` by ``p``."""
        sh = self._shadow(array)
        hit = self._conflict(p, sh.wtag[idx], skip_atomic=False) if sh.written else None
        if hit is not None:
            k, tag = hit
            other, at, kind = self._describe(tag)
            raise ModelError(
                f"{where}: partial read before its release: program {p.pid} reads "
                f"'{name}'[{int(idx[k])}] that program {other} wrote ({kind} at {at}) with no "
                "release->acquire chain ordering that write before this read (the writer "
                "needs a release atomic after the write, the reader an acquire atomic that "
                "reads it before the read; relaxed atomics order nothing)"
            )
        # Equivalent mutant: False -> True; a read tag's atomic bit is never read (read
        # tags are checked with skip_atomic=False, and a read's report names no kind).
        sh.rtag[idx] = self._tag(p, where, False)
        sh.read = True

    def write(
        self,
        p: ProgramClock,
        array: np.ndarray,
        name: str,
        idx: np.ndarray,
        where: str,
        atomic: bool = False,
        scope: str = "gpu",
    ) -> None:
        """A write of ``array[idx]`` by ``p`` (``atomic``: an atomic read-modify-write
        of ``scope``; below the grid's scopes it is atomic only within ``p``)."""
        sh = self._shadow(array)
        narrow = atomic and scope not in GRID_SCOPES
        what = _kind(atomic, narrow)
        note = " (a cta-scope atomic is atomic only within its program)" if narrow else ""
        hit = (
            self._conflict(p, sh.wtag[idx], skip_atomic=atomic and not narrow)
            if sh.written
            else None
        )
        if hit is not None:
            k, tag = hit
            other, at, kind = self._describe(tag)
            if "cta-scope" in kind:
                note = " (a cta-scope atomic is atomic only within its program)"
            raise ModelError(
                f"{where}: {what} racing {_a(kind)} of another program: program {p.pid} "
                f"writes '{name}'[{int(idx[k])}] that program {other} wrote at {at}, and no "
                f"release->acquire chain orders the two{note}"
            )
        # Equivalent mutant: skip_atomic=True; read tags never carry the atomic bit.
        hit = self._conflict(p, sh.rtag[idx], skip_atomic=False) if sh.read else None
        if hit is not None:
            k, tag = hit
            other, at, _ = self._describe(tag)
            raise ModelError(
                f"{where}: {what} racing a read of another program: program {p.pid} writes "
                f"'{name}'[{int(idx[k])}] that program {other} read at {at}, and no "
                f"release->acquire chain orders the read before this write{note}"
            )
        sh.wtag[idx] = self._tag(p, where, atomic, narrow)
        sh.written = True

    def acquire(self, p: ProgramClock, array: np.ndarray, elems: np.ndarray) -> None:
        """``p`` joins the clocks released at ``array[elems]``."""
        for e in np.unique(elems).tolist():
            released = self._released.get((id(array), e))
            if released is not None:
                _join(p.vc, released)

    def release(self, p: ProgramClock, array: np.ndarray, elems: np.ndarray) -> None:
        """``p`` publishes its clock at ``array[elems]``, then starts a new epoch."""
        self._shadow(array)  # keeps id(array) valid for the keys below
        for e in np.unique(elems).tolist():
            _join(self._released.setdefault((id(array), e), {}), p.vc)
        p.vc[p.index] += 1


# ---------------------------------------------------------------------------
# Schedulers
# ---------------------------------------------------------------------------


@dataclass
class Waiting:
    """A program stopped at a flag: it waits for ``array[elem]`` to leave ``value``.

    ``array=None``: a loop that repeats itself without atomics or writes; it
    waits for any write of another program (a wait on a plain load).
    ``also``: the other elements (array, element, value) the program polled
    since its last modifying atomic; a change of any of them wakes it too (a
    loop may wait for one of several flags).
    """

    pid: Pid
    array: np.ndarray | None
    name: str
    elem: int
    value: Any
    where: str
    also: list[tuple[np.ndarray, int, Any]] = field(default_factory=list)

    def woken_by(self, array: np.ndarray) -> bool:
        """Whether a write to ``array`` ends this wait."""
        if self.array is None:
            return True
        if self.array is array and array[self.elem] != self.value:
            return True
        return any(a is array and a[e] != v for a, e, v in self.also)

    def describe(self) -> str:
        if self.array is None:
            return (
                f"program {self.pid} at {self.where} repeats a loop iteration with the same "
                "values and no atomic or global write (a wait on a plain load never sees "
                "another program's write in order: wait with an acquire atomic)"
            )
        return (
            f"program {self.pid} at {self.where} waits for '{self.name}'[{self.elem}] "
            f"(argument '{self.name}', element {self.elem}) to change from {self.value}"
        )


def deadlock_message(
    waiting: list[Waiting], not_started: int, finished: int, num_resident: int
) -> str:
    parts = [w.describe() for w in waiting]
    msg = (
        "deadlock: every resident program waits on a flag that no running program can "
        "change: " + "; ".join(parts) + f"; {finished} program(s) finished"
    )
    if not_started:
        msg += (
            f", {not_started} not started: all {num_resident} resident slots are held by "
            "waiting programs, and a program can only signal once it is resident"
        )
    return msg


class _Task:
    __slots__ = ("clock", "done", "go", "index", "result", "start", "thread", "waiting")

    def __init__(self, index: int, clock: ProgramClock, start: Callable[[], Any]) -> None:
        self.index = index
        self.clock = clock
        self.start = start
        self.go = threading.Semaphore(0)
        self.thread: threading.Thread | None = None
        self.waiting: Waiting | None = None
        self.result: Any = None
        self.done = False


class Inline:
    """Programs one after another in the caller's thread (no program can wait)."""

    threaded = False

    def __init__(self, stats: SyncStats, finished: Callable[[], int]) -> None:
        self.stats = stats
        self._finished = finished

    def point(self, p: ProgramClock) -> None:
        """An interleaving point: nothing to interleave with."""

    def changed(self, array: np.ndarray) -> None:
        """``array`` was modified: nobody waits inline."""

    def wait_change(self, p: ProgramClock, waiting: Waiting) -> None:
        self.stats.waits += 1
        raise ModelError(
            deadlock_message([waiting], 0, self._finished(), self.stats.num_resident)
            + " (no other program runs concurrently)"
        )


class Threaded:
    """``num_resident`` programs interleaved at interleaving points (see module doc)."""

    threaded = True

    def __init__(
        self,
        clocks: list[ProgramClock],
        execute: Callable[[ProgramClock], Any],
        num_resident: int,
        seed: int | None,
        stats: SyncStats,
    ) -> None:
        self.clocks = clocks
        self.execute = execute
        self.num_resident = num_resident
        self.rng = None if seed is None else random.Random(seed)
        self.stats = stats
        self.pending: deque[int] = deque(range(len(clocks)))
        self.resident: list[_Task] = []
        self.tasks: list[_Task] = []
        self.finished = 0
        self.error: BaseException | None = None
        self.abort = False
        self.all_done = threading.Event()

    # -- lifecycle ---------------------------------------------------------

    def run(self) -> list[Any]:
        """Run every program; the results in program order."""
        self._fill()
        first = self._choose(None)
        assert first is not None  # nothing waits before anything ran
        first.go.release()
        self.all_done.wait()
        if self.error is not None:
            self.abort = True
            for t in self.tasks:
                if not t.done:
                    t.go.release()
        for t in self.tasks:
            if t.thread is not None:
                t.thread.join()
        if self.error is not None:
            raise self.error
        return [t.result for t in self.tasks]

    def _fill(self) -> None:
        while self.pending and len(self.resident) < self.num_resident:
            i = self.pending.popleft()
            clock = self.clocks[i]
            task = _Task(i, clock, lambda c=clock: self.execute(c))
            clock.task = task
            # Equivalent mutant: daemon=False; run() joins every thread before it returns.
            task.thread = threading.Thread(
                target=self._body, args=(task,), name=f"program {clock.pid}", daemon=True
            )
            self.tasks.append(task)
            self.resident.append(task)
            self.stats.start_order.append(clock.pid)
            self.stats.max_resident = max(self.stats.max_resident, len(self.resident))
            task.thread.start()

    def _body(self, task: _Task) -> None:
        task.go.acquire()
        try:
            if self.abort:
                return
            with np.errstate(all="ignore"):
                task.result = task.start()
            self._finish(task)
        except _Abort:
            return
        except BaseException as e:  # reported by run() in the caller's thread
            if self.error is None:
                self.error = e
            self.all_done.set()

    def _finish(self, task: _Task) -> None:
        # Equivalent mutant: True -> False; run() reads done only to release the
        # semaphores of unfinished threads after an error, and a finished one has returned.
        task.done = True
        self.finished += 1
        self.resident.remove(task)
        self.stats.finish_order.append(task.clock.pid)
        self._fill()
        nxt = self._choose(None)
        if nxt is not None:
            nxt.go.release()
        elif self.resident:
            raise ModelError(self._deadlock())
        else:
            self.all_done.set()

    # -- choosing ------------------------------------------------------------

    def _choose(self, current: _Task | None) -> _Task | None:
        runnable = [t for t in self.resident if t.waiting is None]
        if not runnable:
            return None
        if self.rng is None:
            if current is not None and current.waiting is None:
                return current
            return min(runnable, key=lambda t: t.index)
        return runnable[self.rng.randrange(len(runnable))]

    def _switch(self, cur: _Task, nxt: _Task) -> None:
        self.stats.switches += 1
        nxt.go.release()
        cur.go.acquire()
        if self.abort:
            raise _Abort

    def _deadlock(self) -> str:
        waiting = [t.waiting for t in sorted(self.resident, key=lambda t: t.index)]
        return deadlock_message(
            [w for w in waiting if w is not None],
            len(self.pending),
            self.finished,
            self.num_resident,
        )

    # -- called by the running program -------------------------------------------

    def point(self, p: ProgramClock) -> None:
        """An interleaving point of ``p``: a seeded run may hand over here."""
        if self.rng is None:
            return
        cur = p.task
        assert cur is not None
        nxt = self._choose(cur)
        if nxt is not None and nxt is not cur:
            self._switch(cur, nxt)

    def wait_change(self, p: ProgramClock, waiting: Waiting) -> None:
        """``p`` spins on an unchanged flag: run others until someone changes it."""
        cur = p.task
        assert cur is not None
        self.stats.waits += 1
        cur.waiting = waiting
        nxt = self._choose(cur)
        if nxt is None:
            raise ModelError(self._deadlock())
        self._switch(cur, nxt)

    def changed(self, array: np.ndarray) -> None:
        """``array`` was modified: wake the programs whose flag left its value
        (and those waiting for any write)."""
        for t in self.resident:
            w = t.waiting
            if w is not None and w.woken_by(array):  # the writer runs, so it is not t
                t.waiting = None


Scheduler = Inline | Threaded


# ---------------------------------------------------------------------------
# Atomics
# ---------------------------------------------------------------------------


def _rmw(kind: str, old: int, value: int) -> int:
    if kind == "add":
        return old + value
    if kind == "xchg":
        return value
    if kind == "max":
        return max(old, value)
    if kind == "min":
        return min(old, value)
    raise ModelError(f"unknown atomic kind '{kind}'")


class Grid:
    """The shared state of one run: scheduler, memory model and statistics."""

    def __init__(
        self,
        pids: list[Pid],
        stats: SyncStats,
        scheduler: Scheduler | None,
        check_memory: bool,
    ) -> None:
        self.pids = pids
        self.stats = stats
        # Equivalent mutant: or -> and, 0 -> 1; the interpreter, the one caller, passes
        # None and sets the scheduler before any program runs.
        self.scheduler: Scheduler = scheduler or Inline(stats, lambda: 0)
        self.memory = GlobalMemory(pids) if check_memory else None

    def atomic_rmw(
        self,
        p: ProgramClock,
        array: np.ndarray,
        name: str,
        elem: int,
        kind: str,
        value: int,
        wrap: Callable[[int], int],
        sem: str,
        scope: str,
        where: str,
    ) -> int:
        """One program's ``tile.atomic_rmw`` on ``array[elem]``; the old value."""
        sched = self.scheduler
        sched.point(p)
        key = (id(array), elem)
        while True:
            old = int(array[elem])
            new = wrap(_rmw(kind, old, value))
            if new != old:
                array[elem] = new
                p.polls.clear()
                sched.changed(array)
                break
            seen = p.polls.get(key)
            if seen is None or seen[2] != old:
                p.polls[key] = (array, elem, old)
                break
            also = [v for k, v in p.polls.items() if k != key]
            if any(a[e] != v for a, e, v in also):
                break  # another polled flag moved: the loop will see it
            sched.wait_change(p, Waiting(p.pid, array, name, elem, old, where, also))
        p.effects += 1  # Equivalent mutant: += 2; effects only grows, by any step.
        self.stats.atomic_rmw[kind] += 1
        self.stats.atomic_rmw_sem[sem] += 1
        self._order(p, array, name, np.array([elem], dtype=np.int64), sem, scope, where)
        return old

    def atomic_block(
        self,
        p: ProgramClock,
        array: np.ndarray,
        name: str,
        idx: np.ndarray,
        sem: str,
        scope: str,
        where: str,
    ) -> None:
        """Bookkeeping of an atomic block add (the caller updated ``array[idx]``)."""
        self.stats.atomic_add_block += 1
        p.effects += 1  # Equivalent mutant: += 2; effects only grows, by any step.
        p.polls.clear()
        self._order(p, array, name, idx, sem, scope, where)
        self.scheduler.changed(array)

    def _order(
        self,
        p: ProgramClock,
        array: np.ndarray,
        name: str,
        idx: np.ndarray,
        sem: str,
        scope: str,
        where: str,
    ) -> None:
        mem = self.memory
        if mem is None:
            return
        mem.write(p, array, name, idx, where, atomic=True, scope=scope)
        if scope not in GRID_SCOPES:
            return
        if sem in ACQUIRE_SEMS:
            mem.acquire(p, array, idx)
        if sem in RELEASE_SEMS:
            mem.release(p, array, idx)


__all__ = [
    "ACQUIRE_SEMS",
    "GRID_SCOPES",
    "RELEASE_SEMS",
    "GlobalMemory",
    "Grid",
    "Inline",
    "ProgramClock",
    "SyncStats",
    "Threaded",
    "Waiting",
    "deadlock_message",
]
