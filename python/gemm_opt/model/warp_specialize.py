"""Warp specialization in the executable model: the partitions of one program
run concurrently (the implementation of ``tile.warp_specialize``).

Partitions as agents
--------------------
The default partition is the program itself (its warps and values); each
worker partition is a program of its own ``num_warps`` warps, sharing the
program's id, clock, shared buffers and barriers (the captured values; a
scalar, pointer, descriptor or view is the same on all of the program's
warps, so each worker warp gets the value of the program's first warp). The
partitions run interleaved at their barrier ops (``tile.barrier_init``,
``_expect``, ``_arrive``, ``_wait`` and barrier-tracked copies), one at a time:
each runs in its own Python thread and holds a baton while it runs, so the
interleaving is the scheduler's alone (as in :mod:`gemm_opt.model.concurrency`).
With ``seed=None`` a partition runs until it blocks or finishes, then the
lowest-numbered runnable one (the default partition first); with an integer
seed a seeded ``random.Random`` (one per program) picks the next partition at
every interleaving point.

A ``tile.barrier_wait`` on a phase that has not completed first lands the
copies in flight on that barrier (as without partitions); if the phase is still
open, the partition blocks until another partition's arrive, expect or copy
completes it. When every unfinished partition is blocked, the model reports a
deadlock naming each partition, its wait and the barrier's missing arrivals and
bytes. The op returns once every partition has finished (Triton joins them).

Races between partitions are the interpreter's shared-memory checks, which
look at the buffers themselves: a read of a slot a copy of another partition
still writes (its barrier phase not yet completed), a copy into a slot an
in-flight MMA of another partition still reads. Global memory accesses of the
partitions are the program's (no happens-before check between partitions),
and a function whose programs interleave at atomics cannot hold a
``tile.warp_specialize`` (the two schedulers do not nest).
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gemm_opt.dialect.warp_specialize import WarpSpecializeOp
from gemm_opt.model.core import Block, Compiler, Exec, Program, op_where
from gemm_opt.model.errors import ModelError
from gemm_opt.model.registry import OpImpls
from gemm_opt.model.values import Descriptor, Pointer, SharedView

IMPLS = OpImpls("warp specialization")
"""The warp specialization family's implementations."""


class _Abort(BaseException):
    """Unwinds a partition's thread when the run stops (another partition failed)."""


@dataclass(eq=False)
class Agent:
    """One partition of one program while its ``tile.warp_specialize`` runs."""

    name: str
    program: Program
    block: Block
    mask: np.ndarray
    sched: PartitionScheduler | None = None
    go: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))
    done: bool = False
    #: (barrier, phase at the wait, parity, where) while blocked at a wait.
    waiting: tuple[Any, int, int, str] | None = None
    result: list[Any] = field(default_factory=list)

    def runnable(self) -> bool:
        if self.done:
            return False
        if self.waiting is None:
            return True
        bar, start, _, _ = self.waiting
        return bar.phase != start or bool(bar.copies)


class PartitionScheduler:
    """The partitions of one ``tile.warp_specialize`` of one program, interleaved."""

    def __init__(self, agents: list[Agent], rng: random.Random | None, where: str, pid) -> None:
        self.agents = agents
        self.rng = rng
        self.where = where
        self.pid = pid
        self.error: BaseException | None = None
        self.finished = threading.Semaphore(0)
        self.switches = 0
        for a in agents:
            a.sched = self
            a.program.agent = a

    # -- choosing --

    def _next(self, current: Agent | None) -> Agent | None:
        ready = [a for a in self.agents if a.runnable()]
        if not ready:
            return None
        if self.rng is None:
            if current is not None and current in ready:
                return current
            return ready[0]
        return ready[self.rng.randrange(len(ready))]

    def _switch(self, me: Agent, to: Agent) -> None:
        if to is me:
            return
        self.switches += 1
        to.go.release()
        me.go.acquire()
        if self.error is not None:
            raise _Abort

    # -- hooks of the barrier ops --

    def point(self, me: Agent) -> None:
        """An interleaving point of ``me`` (it stays runnable)."""
        nxt = self._next(me)
        if nxt is not None:
            self._switch(me, nxt)

    def block(self, me: Agent, barrier: Any, parity: int, where: str) -> None:
        """``me`` waits for the current phase of ``barrier`` to complete: run
        others until it has (or its copies can land); deadlock when none can run."""
        me.waiting = (barrier, barrier.phase, parity, where)
        try:
            while not me.runnable():
                nxt = self._next(me)
                if nxt is None:
                    raise ModelError(self._deadlock())
                self._switch(me, nxt)
        finally:
            me.waiting = None

    def _deadlock(self) -> str:
        parts = []
        for a in self.agents:
            if a.done:
                parts.append(f"{a.name} finished")
                continue
            bar, _, parity, where = a.waiting  # type: ignore[misc]
            parts.append(
                f"{a.name} waits at {where} for phase {bar.phase} (parity {parity}) of the "
                f"{bar.label} ({bar.missing()})"
            )
        return (
            f"deadlock between the partitions of {self.where} in program {self.pid}: "
            + "; ".join(parts)
            + ": no partition can arrive on a barrier another one waits on"
        )

    # -- running --

    def _body(self, me: Agent) -> None:
        me.go.acquire()
        try:
            if self.error is not None:
                return
            with np.errstate(all="ignore"):
                me.result = me.program.exec_block(me.block, me.mask)
        except _Abort:
            return
        except BaseException as e:  # reported by run(), in the caller's thread
            if self.error is None:
                self.error = e
            self._wake_all()
            return
        me.done = True
        if all(a.done for a in self.agents):
            self.finished.release()
            return
        nxt = self._next(None)
        if nxt is None:
            self.error = ModelError(self._deadlock())
            self._wake_all()
            return
        self.switches += 1
        nxt.go.release()

    def _wake_all(self) -> None:
        for a in self.agents:
            if not a.done:
                a.go.release()
        self.finished.release()

    def run(self) -> list[Any]:
        """Run every partition to its end; the default partition's yielded values."""
        # Equivalent mutant: daemon=False; every thread is joined before run() returns
        # or raises (a woken thread of a failed run ends at once on _Abort).
        threads = [threading.Thread(target=self._body, args=(a,), daemon=True) for a in self.agents]
        for t in threads:
            t.start()
        first = self._next(None)
        assert first is not None
        first.go.release()
        self.finished.acquire()
        if self.error is not None:
            for t in threads:
                t.join(timeout=5)  # Equivalent mutant: 5 -> 6; woken threads end at once.
            raise self.error
        for t in threads:
            t.join()
        for a in self.agents:
            a.program.agent = None
        return self.agents[0].result


def _uniform_rows(values: np.ndarray, mask: np.ndarray, n: int, what: str, where: str):
    # Equivalent mutant: not, any -> all; run() refuses a mask that is not all true.
    rows = values[mask] if mask.any() else values
    if (rows != rows[0]).any():
        raise ModelError(
            f"{where}: the captured {what} differs between the program's warps; a worker "
            "partition captures values that are the same on every warp"
        )
    return np.repeat(rows[:1], n, axis=0)


def _capture(value: Any, mask: np.ndarray, n: int, where: str) -> Any:
    """``value`` as a worker of ``n`` warps sees it."""
    if isinstance(value, np.ndarray):
        return _uniform_rows(value, mask, n, "value", where)
    if isinstance(value, Pointer):
        offset = _uniform_rows(value.offset, mask, n, "pointer", where)
        return Pointer(value.array, offset, value.name, value.elem)
    if isinstance(value, Descriptor):
        rows = [
            None if f is None else _uniform_rows(f, mask, n, "descriptor", where)
            for f in (value.shape, value.strides, value.origin, value.bounds, value.pred)
        ]
        return Descriptor(_capture(value.base, mask, n, where), *rows)
    if isinstance(value, SharedView):
        prefix = _uniform_rows(value.prefix, mask, n, "shared view", where)
        return SharedView(value.buffer, prefix, value.perm)
    return value  # barriers and buffers: shared objects


def _rng(p: Program) -> random.Random | None:
    sync = p.run.sync
    seed = None if sync is None else sync.stats.seed
    return None if seed is None else random.Random(f"{seed}:{p.pid}")


@IMPLS.impl(WarpSpecializeOp.OPERATION_NAME)
def _b_warp_specialize(c: Compiler, op: WarpSpecializeOp) -> Exec:
    o = op.operation
    where = op_where(op)
    default = c.block(o.regions[0].blocks[0])
    workers: list[tuple[int, Block]] = []
    function_warps = c.num_warps
    for w in op.workers():
        n = w.opview.warps()
        c.num_warps = n
        try:
            workers.append((n, c.block(w.regions[0].blocks[0])))
        finally:
            c.num_warps = function_warps
    captures = [c.slot(v) for v in o.operands]
    results = [c.slot(v) for v in o.results]

    def run(p: Program, mask: np.ndarray) -> None:
        if not mask.all():
            raise ModelError(f"{where}: runs on only some of the program's warps")
        sync = p.run.sync
        if sync is not None and sync.scheduler is not None and sync.scheduler.threaded:
            raise ModelError(
                f"{where}: the model does not interleave warp partitions inside programs "
                "that interleave at atomics"
            )
        agents = [Agent("the default partition", p, default, mask)]
        for i, (n, block) in enumerate(workers):
            wp = Program(len(p.env), n, p.pid, p.run, p.clock)
            # Equivalent mutant: strict=False; the verifier matches captures and block args.
            for s, v in zip(block.arg_slots, captures, strict=True):
                wp.env[s] = _capture(p.env[v], mask, n, where)
            warps = "warp" if n == 1 else "warps"
            agents.append(Agent(f"worker partition {i} ({n} {warps})", wp, block, np.ones(n, bool)))
        sched = PartitionScheduler(agents, _rng(p), where, p.pid)
        try:
            out = sched.run()
        finally:
            if p.run.sync is not None:
                p.run.sync.stats.switches += sched.switches
        for a in agents[1:]:
            p.run.stats.in_flight_at_exit += sum(len(q) for q in a.program.queues)
        # Equivalent mutant: strict=False; the verifier matches results and yielded values.
        for s, v in zip(results, out, strict=True):
            p.env[s] = v

    return run


__all__ = ["IMPLS", "Agent", "PartitionScheduler"]
