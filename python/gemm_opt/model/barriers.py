"""The model of shared-memory barriers, barrier-tracked copies and TDM stores
(the ops of :mod:`gemm_opt.dialect.barrier`; builders joined to the interpreter's).

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

A TDM store (``tile.async_tdm_copy_local_to_global``) writes global memory
from the shared buffer as issued (its elements inside the tensor), and reads
the buffer until a ``tile.async_tdm_wait`` retires it (each warp issues one
instruction, which counts like a copy's): a copy into, or a
``tile.local_store`` to, that region before the wait is a race.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gemm_opt.core.contract import WARP_LAYOUT, WARP_PREDICATED
from gemm_opt.dialect.tile import element_bits
from gemm_opt.model.errors import ModelError
from gemm_opt.model.interpreter import (
    _BUILDERS,
    Descriptor,
    SharedView,
    _Compiler,
    _InFlight,
    _issue,
    _location,
    _member,
    _mma_race_message,
    _Program,
    _read_shared,
    _res,
    _store_race_message,
    _to_storage,
    _uniform,
    _uniform_rows,
    _value_elem,
    _where,
)

Exec = Any


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
    records: list[_InFlight]
    #: The program's in-flight tracked instructions (these records leave it on landing).
    tracked: list[_InFlight]

    def land(self) -> None:
        """Complete the copy's instructions: its data lands, its bytes are delivered."""
        mine = {id(rec) for rec in self.records}
        self.tracked[:] = [rec for rec in self.tracked if id(rec) not in mine]
        for rec in self.records:
            rec.complete()


@dataclass
class _StoreInFlight(_InFlight):
    """One warp's TDM store instruction: it reads ``reads[read_index]``."""

    reads: Any = None
    read_index: tuple = ()


def _program_level(mask: np.ndarray, where: str) -> bool:
    """Whether the program executes the op (all warps, or none)."""
    if not mask.any():
        return False
    if not mask.all():
        raise ModelError(
            f"{where}: barrier ops and TDM stores are the program's; under warp-divergent "
            "control flow they are not modelled"
        )
    return True


def _pred(p: _Program, slot: int | None, mask: np.ndarray, where: str) -> bool:
    return slot is None or bool(_uniform(p.env[slot] != 0, mask, "the pred", where))


def _optional_slot(c: _Compiler, value: Any) -> int | None:
    return None if value is None else c.slot(value)


# ---- barriers ----------------------------------------------------------------------


def _point(p: _Program) -> None:
    """An interleaving point of the warp partition running ``p``, if any
    (:mod:`gemm_opt.model.warp_specialize`): another partition may run first."""
    if p.agent is not None:
        p.agent.sched.point(p.agent)


def _b_barrier_alloc(c: _Compiler, op: Any) -> Exec:
    r = _res(c, op)
    n = op.result.type.num
    label = f"barrier_alloc at {_location(op.operation)}"

    def run(p: _Program, mask: np.ndarray) -> None:
        p.env[r] = [Barrier(f"barrier {i} of the {label}") for i in range(n)]

    return run


def _b_barrier_index(c: _Compiler, op: Any) -> Exec:
    ring, idx = c.slot(op.ring), c.slot(op.index)
    r = _res(c, op)
    where = _where(op)

    def run(p: _Program, mask: np.ndarray) -> None:
        bars: list[Barrier] = p.env[ring]
        i = int(_uniform(p.env[idx], mask, "the barrier index", where))
        if not 0 <= i < len(bars):
            raise ModelError(f"{where}: index {i} out of range for {len(bars)} barriers")
        p.env[r] = bars[i]

    return run


def _b_barrier_init(c: _Compiler, op: Any) -> Exec:
    bar = c.slot(op.barrier)
    count = op.count
    where = _where(op)

    def run(p: _Program, mask: np.ndarray) -> None:
        if not _program_level(mask, where):
            return
        _point(p)
        b: Barrier = p.env[bar]
        if b.copies:
            raise ModelError(f"{where}: {b.label} is re-initialised while copies track it")
        b.count, b.phase, b.arrivals, b.tx = count, 0, count, 0

    return run


def _b_barrier_expect(c: _Compiler, op: Any) -> Exec:
    bar, pred = c.slot(op.barrier), _optional_slot(c, op.pred)
    nbytes = op.bytes
    where = _where(op)

    def run(p: _Program, mask: np.ndarray) -> None:
        if not _program_level(mask, where) or not _pred(p, pred, mask, where):
            return
        _point(p)
        b: Barrier = p.env[bar]
        b.ready(where)
        b.tx += nbytes
        b.arrive(1, where)
        _point(p)  # a partition waiting on this phase may run now

    return run


def _b_barrier_arrive(c: _Compiler, op: Any) -> Exec:
    bar, pred = c.slot(op.barrier), _optional_slot(c, op.pred)
    count = op.count
    where = _where(op)

    def run(p: _Program, mask: np.ndarray) -> None:
        if _program_level(mask, where) and _pred(p, pred, mask, where):
            _point(p)
            p.env[bar].arrive(count, where)
            _point(p)  # a partition waiting on this phase may run now

    return run


def _b_barrier_wait(c: _Compiler, op: Any) -> Exec:
    bar, phase, pred = c.slot(op.barrier), c.slot(op.phase), _optional_slot(c, op.pred)
    where = _where(op)

    def run(p: _Program, mask: np.ndarray) -> None:
        if not _program_level(mask, where) or not _pred(p, pred, mask, where):
            return
        _point(p)
        b: Barrier = p.env[bar]
        b.ready(where)
        parity = int(_uniform(p.env[phase], mask, "the phase", where)) & 1
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
                f"{parity}) of the {b.label}, which can never complete: {b.arrivals} of "
                f"{b.count} arrivals missing, {max(b.tx, 0)} announced bytes not delivered "
                "by any copy in flight"
            )

    return run


# ---- copies tracked by a barrier ---------------------------------------------------------

_untracked_copy = _BUILDERS["tile.async_tdm_copy_global_to_local"]


def _b_tdm_copy(c: _Compiler, op: Any) -> Exec:
    """A copy on a barrier: the interpreter's copy, plus the barrier's bookkeeping."""
    if op.barrier is None:
        return _untracked_copy(c, op)
    where = _where(op)
    attrs = op.operation.attributes
    layout_attr = attrs[WARP_LAYOUT] if WARP_LAYOUT in attrs else None
    members = [_member(c, op.desc, op.dest, op.warp_used_hint, layout_attr, where)]
    pred = _optional_slot(c, op.pred)
    predicated = WARP_PREDICATED in attrs
    bar = c.slot(op.barrier)
    desc_slot = c.slot(op.desc)
    t = op.desc.type
    block_bytes = int(np.prod(t.shape)) * element_bits(t.element_type) // 8

    def run(p: _Program, mask: np.ndarray) -> None:
        if not _program_level(mask, where):
            return
        _point(p)
        b: Barrier = p.env[bar]
        b.ready(where)
        d: Descriptor = p.env[desc_slot]
        on = bool(_uniform(d.pred, mask, "the descriptor's pred", where))
        on = on and _pred(p, pred, mask, where)
        _issue(p, mask, members, lambda w: 0, pred, predicated, where)
        # The barrier, not the warps' TDM counters, tracks the copy.
        records = [p.queues[w].pop() for w in range(p.W)]
        p.tracked.extend(records)
        copy = TrackedCopy(where, b, block_bytes if on else 0, records, p.tracked)
        left = [len(copy.records)]

        def one_landed() -> None:
            left[0] -= 1
            if left[0] == 0:
                b.deliver(copy)

        for rec in copy.records:
            rec.on_complete = one_landed
        b.copies.append(copy)

    return run


# ---- stores from shared memory -----------------------------------------------------------


def _b_local_store(c: _Compiler, op: Any) -> Exec:
    value, dest = c.slot(op.value), c.slot(op.dest)
    where = _where(op)
    elem, _ = _value_elem(op.value.type)

    def run(p: _Program, mask: np.ndarray) -> None:
        if not _program_level(mask, where):
            return
        v: SharedView = p.env[dest]
        v.writable(where)
        prefix = _uniform_rows(v.prefix, mask, "the buffer index", where)
        buf = v.buffer
        if buf.pending[prefix].any():
            raise ModelError(
                "write of shared memory still being written by an in-flight TDM copy: "
                f"{where} in program {p.pid} writes slot {list(prefix)} of the {buf.label} "
                "before a wait completes the copy into it"
            )
        if buf.mma_reading[prefix].any():
            raise ModelError(_mma_race_message(p, buf, prefix, where))
        if buf.store_reading[prefix].any():
            raise ModelError(_store_race_message(p, buf, prefix, where))
        buf.data[prefix] = _to_storage(np.asarray(p.env[value]), elem)
        buf.written[prefix] = True

    return run


def _b_tdm_store(c: _Compiler, op: Any) -> Exec:
    desc, src = c.slot(op.desc), c.slot(op.src)
    where = _where(op)
    t = op.desc.type
    block = tuple(t.shape)

    def run(p: _Program, mask: np.ndarray) -> None:
        if not _program_level(mask, where):
            return
        d: Descriptor = p.env[desc]
        view: SharedView = p.env[src]
        buf, prefix = _read_shared(p, view, mask, "the buffer index", where)
        if bool(_uniform(d.pred, mask, "the descriptor's pred", where)):
            _store_global(p, d, mask, block, view.read(prefix), where)
        buf.store_reading[prefix] += 1
        left = [p.W]

        def one_retired() -> None:
            left[0] -= 1
            if left[0] == 0:
                buf.store_reading[prefix] -= 1

        for w in range(p.W):
            rec = _StoreInFlight(where, w, p.pid, reads=buf, read_index=prefix)
            rec.on_complete = one_retired
            p.queues[w].append(rec)

    return run


def _store_global(
    p: _Program, d: Descriptor, mask: np.ndarray, block: tuple, data: np.ndarray, where: str
) -> None:
    """Write ``data`` (storage values) to the block's elements inside the tensor."""
    origin = np.array(_uniform_rows(d.origin, mask, "the block origin", where))
    extent = np.array(
        _uniform_rows(d.bounds if d.bounds is not None else d.shape, mask, "the bounds", where)
    )
    strides = np.array(_uniform_rows(d.strides, mask, "the strides", where))
    ptr = d.base
    base = int(_uniform(ptr.offset, mask, "the base pointer", where))
    coords = np.indices(block).reshape(len(block), -1).T + origin
    inside = ((coords >= 0) & (coords < extent)).all(axis=1)
    flat = base + coords[inside] @ strides
    if flat.size and (flat.min() < 0 or flat.max() >= ptr.array.size):
        raise ModelError(f"{where}: the store reaches outside the '{ptr.name}' array")
    sync = p.run.sync
    if sync is not None and sync.memory is not None:
        sync.memory.write(p.clock, ptr.array, ptr.name, flat, where)
    ptr.array[flat] = data.reshape(-1)[inside]


_BUILDERS.update(
    {
        "tile.barrier_alloc": _b_barrier_alloc,
        "tile.barrier_index": _b_barrier_index,
        "tile.barrier_init": _b_barrier_init,
        "tile.barrier_expect": _b_barrier_expect,
        "tile.barrier_arrive": _b_barrier_arrive,
        "tile.barrier_wait": _b_barrier_wait,
        "tile.async_tdm_copy_global_to_local": _b_tdm_copy,
        "tile.local_store": _b_local_store,
        "tile.async_tdm_copy_local_to_global": _b_tdm_store,
    }
)

__all__ = ["Barrier", "TrackedCopy"]
