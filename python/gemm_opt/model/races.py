"""Shared-memory race checks shared by every op family that reads or writes a buffer.

A buffer counts the in-flight TDM writes (``pending``), async MMA reads
(``mma_reading``) and TDM store reads (``store_reading``) of each element;
these functions refuse an access that overlaps them and say which in-flight
instruction it races and what would order the two.
"""

from __future__ import annotations

import numpy as np

from gemm_opt.core.warp_hint import format_warps
from gemm_opt.model.core import (
    Program,
    uniform_rows,
)
from gemm_opt.model.errors import ModelError
from gemm_opt.model.values import (
    SharedBuffer,
    SharedView,
)


def read_shared(
    p: Program, v: SharedView, mask: np.ndarray, index: str, where: str
) -> tuple[SharedBuffer, tuple]:
    """The slot a shared-memory read takes (uniform over ``mask``), after the
    checks every read makes: no copy still writing it (a race), and, when the
    run checks it, every element written before."""
    prefix = uniform_rows(v.prefix, mask, index, where)
    buf = v.buffer
    if buf.pending[prefix].any():
        raise ModelError(race_message(p, buf, prefix, where))
    if p.run.check_uninitialized and not buf.written[prefix].all():
        missing = int((~buf.written[prefix]).sum())
        raise ModelError(
            f"{where}: read of uninitialized shared memory: {missing} elements of "
            f"slot {list(prefix)} of the {buf.label} were never written"
        )
    return buf, prefix


def race_message(p: Program, buf: SharedBuffer, prefix: tuple, where: str) -> str:
    region = np.zeros(buf.data.shape, dtype=np.bool_)
    region[prefix] = True
    culprits = []
    queues = [q for prog in p.partners() for q in (*prog.queues, prog.tracked)]
    tracked = {id(rec) for prog in p.partners() for rec in prog.tracked}
    for q in queues:
        for rec in q:
            # Equivalent mutant: any -> all. A copy writes inside one view (its target's
            # order has the target's rank, so memdesc_index never slices it) and a read
            # covers whole views, so the region holds all of a copy's elements or none.
            if rec.buffer is buf and region[rec.index].any():
                culprits.append(rec)
    shown = ", ".join(f"{rec.op} issued by warp {rec.warp}" for rec in culprits[:4]) + (
        ", ..." if len(culprits) > 4 else ""
    )
    fix = "the preceding tile.async_tdm_wait leaves too many copies outstanding"
    if any(id(rec) in tracked for rec in culprits):
        fix = "no tile.barrier_wait has completed the barrier phase the copy is tracked by"
    return (
        "read of shared memory still being written by an in-flight TDM copy: "
        f"{where} in program {p.pid} reads slot {list(prefix)} of the {buf.label} while "
        f"{len(culprits)} in-flight TDM instruction(s) write it ({shown}); {fix}"
    )


def check_write_race(
    p: Program, buf: SharedBuffer, index: tuple, data: np.ndarray, warp: int, where: str
) -> None:
    """Raise when ``warp`` writes elements another warp's in-flight copy writes
    with other values: which lands last is undefined. (Equal values, as warps
    that repeat a tile write, leave one defined result.)"""
    mine = np.full(buf.data.shape, np.nan)
    mine[index] = data
    others = set()
    for q in p.queues:
        for rec in q:
            if rec.warp == warp or rec.buffer is not buf:
                continue
            theirs = np.full(buf.data.shape, np.nan)
            theirs[rec.index] = rec.data
            both = ~np.isnan(mine) & ~np.isnan(theirs)
            if not np.array_equal(mine[both], theirs[both]):
                others.add(rec.warp)
    if not others:
        return
    raise ModelError(
        "write of shared memory still being written by another warp's in-flight TDM copy: "
        f"{where} in program {p.pid}: warp {warp} writes the {buf.label} where in-flight "
        f"TDM instruction(s) of warp(s) {format_warps(sorted(others))} write other values; "
        "copies of different warps complete in no defined order, so a tile.async_tdm_wait must "
        "retire the earlier copy first"
    )


def store_race_message(p: Program, buf: SharedBuffer, index: tuple, where: str) -> str:
    region = np.zeros(buf.data.shape, dtype=np.bool_)
    region[index] = True
    stores = [
        rec.op
        for q in p.queues
        for rec in q
        if getattr(rec, "reads", None) is buf and region[rec.read_index].any()
    ]
    return (
        "write of shared memory an in-flight TDM store reads: "
        f"{where} in program {p.pid} writes the {buf.label} while "
        f"{len(stores)} in-flight TDM store instruction(s) read it "
        f"({', '.join(dict.fromkeys(stores))}); a tile.async_tdm_wait must retire the store first"
    )


def mma_race_message(p: Program, buf: SharedBuffer, index: tuple, where: str) -> str:
    region = np.zeros(buf.data.shape, dtype=np.bool_)
    region[index] = True
    readers = [
        m.where
        for prog in p.partners()
        for m in prog.mmas
        for b, pre in m.reads
        if b is buf and region[pre].any()
    ]
    return (
        "write of shared memory an in-flight MMA reads: "
        f"{where} in program {p.pid} writes the {buf.label} while {len(readers)} in-flight "
        f"async MMA(s) read it ({', '.join(dict.fromkeys(readers))}); a tile.async_wmma_wait "
        "must retire that MMA before the copy is issued"
    )


__all__ = [
    "check_write_race",
    "mma_race_message",
    "race_message",
    "read_shared",
    "store_race_message",
]
