"""The model of shared-memory barriers and of the copies they track (the
barrier ops of :mod:`gemm_opt.dialect.barrier`; the copies themselves are
:mod:`gemm_opt.model.tdm`'s, which hands a tracked copy to :func:`track_copy`).

Barriers
--------
A barrier holds its init count, the index of its current phase, the arrivals
the phase still needs and the bytes announced but not yet delivered. A phase
completes when both reach zero; the next one starts with the same count.
``tile.barrier_expect {bytes}`` announces bytes and arrives once,
``tile.barrier_arrive {count}`` arrives ``count`` times, and a copy tracked by
the barrier delivers the bytes of its block when all its warps' TDM
instructions have landed (a copy whose predicate is false delivers none).
The ops are the program's: all warps execute them together.

``tile.barrier_wait(%bar, %parity)`` returns at once if the current phase's
parity differs from ``parity`` (that phase has completed). Otherwise only the
tracked copies in flight can complete the phase (no other agent arrives on a
program's barrier): they land, in issue order, until it completes. If it
cannot, the wait never returns and the model reports a deadlock naming the
barrier, its phase, and the arrivals and bytes still missing.

Races
-----
A tracked copy's writes land only when a barrier wait completes it (it does
not count for ``tile.async_tdm_wait``), so a read of its buffer before the
wait that orders it is the interpreter's race ("read of shared memory still
being written by an in-flight TDM copy ... no tile.barrier_wait has completed
the barrier phase the copy is tracked by"), and race-free after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gemm_opt.model.core import (
    Compiler,
    Exec,
    Program,
    op_location,
    op_where,
    optional_slot,
    partition_point,
    pred_holds,
    program_level,
    result_slot,
    uniform,
)
from gemm_opt.model.errors import ModelError
from gemm_opt.model.registry import OpImpls
from gemm_opt.model.values import InFlight

IMPLS = OpImpls("barrier")
"""The barrier family's implementations."""


@dataclass(eq=False)
class Barrier:
    """One shared-memory barrier of one program."""

    label: str
    count: int | None = None
    phase: int = 0
    arrivals: int = 0
    #: Bytes announced by expects and not yet delivered (negative: delivered first).
    tx: int = 0
    #: Tracked copies in flight, in issue order.
    copies: list[TrackedCopy] = field(default_factory=list)

    def ready(self, where: str) -> None:
        if self.count is None:
            raise ModelError(f"{where}: {self.label} is used before tile.barrier_init")

    def arrive(self, n: int, where: str) -> None:
        self.ready(where)
        self.arrivals -= n
        if self.arrivals < 0:
            raise ModelError(
                f"{where}: {self.label} gets more arrivals than its count ({self.count}) in "
                f"phase {self.phase}"
            )
        self._settle()

    def deliver(self, copy: TrackedCopy) -> None:
        self.copies = [c for c in self.copies if c is not copy]
        self.tx -= copy.bytes
        self._settle()

    def missing(self) -> str:
        """What the current phase still lacks, for a deadlock report: its
        arrivals, and the bytes announced but not delivered (or delivered
        beyond those announced: the count is below zero and the phase cannot
        complete until another expect announces them)."""
        arrivals = f"{self.arrivals} of {self.count} arrivals missing"
        if self.tx < 0:
            return f"{arrivals}, {-self.tx} bytes delivered beyond those announced"
        return f"{arrivals}, {self.tx} announced bytes not delivered"

    def _settle(self) -> None:
        if self.arrivals == 0 and self.tx == 0:
            assert self.count is not None
            self.phase += 1
            self.arrivals = self.count


@dataclass(eq=False)
class TrackedCopy:
    """A barrier-tracked copy in flight: its warps' instructions and its bytes."""

    where: str
    barrier: Barrier
    bytes: int
    records: list[InFlight]
    #: The program's in-flight tracked instructions (these records leave it on landing).
    tracked: list[InFlight]

    def land(self) -> None:
        """Complete the copy's instructions: its data lands, its bytes are delivered."""
        mine = {id(rec) for rec in self.records}
        self.tracked[:] = [rec for rec in self.tracked if id(rec) not in mine]
        for rec in self.records:
            rec.complete()


# ---- barriers ----------------------------------------------------------------------


@IMPLS.impl("tile.barrier_alloc")
def _b_barrier_alloc(c: Compiler, op: Any) -> Exec:
    r = result_slot(c, op)
    n = op.result.type.num
    label = f"barrier_alloc at {op_location(op.operation)}"

    def run(p: Program, mask: np.ndarray) -> None:
        p.env[r] = [Barrier(f"barrier {i} of the {label}") for i in range(n)]

    return run


@IMPLS.impl("tile.barrier_index")
def _b_barrier_index(c: Compiler, op: Any) -> Exec:
    ring, idx = c.slot(op.ring), c.slot(op.index)
    r = result_slot(c, op)
    where = op_where(op)

    def run(p: Program, mask: np.ndarray) -> None:
        bars: list[Barrier] = p.env[ring]
        i = int(uniform(p.env[idx], mask, "the barrier index", where))
        if not 0 <= i < len(bars):
            raise ModelError(f"{where}: index {i} out of range for {len(bars)} barriers")
        p.env[r] = bars[i]

    return run


@IMPLS.impl("tile.barrier_init")
def _b_barrier_init(c: Compiler, op: Any) -> Exec:
    bar = c.slot(op.barrier)
    count = op.count
    where = op_where(op)

    def run(p: Program, mask: np.ndarray) -> None:
        if not program_level(mask, where):
            return
        partition_point(p)
        b: Barrier = p.env[bar]
        if b.copies:
            raise ModelError(f"{where}: {b.label} is re-initialised while copies track it")
        b.count, b.phase, b.arrivals, b.tx = count, 0, count, 0

    return run


@IMPLS.impl("tile.barrier_expect")
def _b_barrier_expect(c: Compiler, op: Any) -> Exec:
    bar, pred = c.slot(op.barrier), optional_slot(c, op.pred)
    nbytes = op.bytes
    where = op_where(op)

    def run(p: Program, mask: np.ndarray) -> None:
        if not program_level(mask, where) or not pred_holds(p, pred, mask, where):
            return
        partition_point(p)
        b: Barrier = p.env[bar]
        b.ready(where)
        b.tx += nbytes
        b.arrive(1, where)
        partition_point(p)  # a partition waiting on this phase may run now

    return run


@IMPLS.impl("tile.barrier_arrive")
def _b_barrier_arrive(c: Compiler, op: Any) -> Exec:
    bar, pred = c.slot(op.barrier), optional_slot(c, op.pred)
    count = op.count
    where = op_where(op)

    def run(p: Program, mask: np.ndarray) -> None:
        if program_level(mask, where) and pred_holds(p, pred, mask, where):
            partition_point(p)
            p.env[bar].arrive(count, where)
            partition_point(p)  # a partition waiting on this phase may run now

    return run


@IMPLS.impl("tile.barrier_wait")
def _b_barrier_wait(c: Compiler, op: Any) -> Exec:
    bar, phase, pred = c.slot(op.barrier), c.slot(op.phase), optional_slot(c, op.pred)
    where = op_where(op)

    def run(p: Program, mask: np.ndarray) -> None:
        if not program_level(mask, where) or not pred_holds(p, pred, mask, where):
            return
        partition_point(p)
        b: Barrier = p.env[bar]
        b.ready(where)
        parity = int(uniform(p.env[phase], mask, "the phase", where)) & 1
        start = b.phase
        while True:
            while b.phase == start and b.phase % 2 == parity and b.copies:
                b.copies[0].land()
            if b.phase != start or b.phase % 2 != parity or p.agent is None:
                break
            # Another partition may complete the phase (gemm_opt.model.warp_specialize).
            p.agent.sched.block(p.agent, b, parity, where)
        if b.phase == start and b.phase % 2 == parity:
            raise ModelError(
                f"deadlock: {where} in program {p.pid} waits for phase {b.phase} (parity "
                f"{parity}) of the {b.label}, which can never complete: {b.missing()}"
                + (" by any copy in flight" if b.tx >= 0 else "")
            )

    return run


def track_copy(
    p: Program, barrier: Barrier, records: list[InFlight], nbytes: int, where: str
) -> None:
    """Make ``barrier`` track the copy whose warps issued ``records``: the copy
    leaves the warps' TDM counters, and once every record has landed it
    delivers ``nbytes`` to the barrier's phase."""
    p.tracked.extend(records)
    copy = TrackedCopy(where, barrier, nbytes, records, p.tracked)
    left = [len(records)]

    def one_landed() -> None:
        left[0] -= 1
        if left[0] == 0:
            barrier.deliver(copy)

    for rec in records:
        rec.on_complete = one_landed
    barrier.copies.append(copy)


__all__ = ["IMPLS", "Barrier", "TrackedCopy", "track_copy"]
