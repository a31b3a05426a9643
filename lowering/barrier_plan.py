"""Barrier analysis of the hand-off: which functions issue TDM stores, and on gfx1250
how tile arrivals scale to per-warp hardware arrivals (see
:mod:`gemm_opt.lowering.convert_barrier_ops` for the mapping and why it is exact)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect.barrier import (
    AsyncTDMCopyLocalToGlobalOp,
    BarrierArriveOp,
    BarrierExpectOp,
    BarrierInitOp,
    BarrierWaitOp,
)
from gemm_opt.dialect.tile import AsyncTDMCopyGlobalToLocalOp, element_bits

COPY = AsyncTDMCopyGlobalToLocalOp.OPERATION_NAME
STORE = AsyncTDMCopyLocalToGlobalOp.OPERATION_NAME
EXPECT = BarrierExpectOp.OPERATION_NAME
BARRIER_OPS = (
    BarrierInitOp.OPERATION_NAME,
    EXPECT,
    BarrierArriveOp.OPERATION_NAME,
    BarrierWaitOp.OPERATION_NAME,
    COPY,
)


class BarrierRefusal(Exception):
    """A barrier pattern the gfx1250 mapping cannot keep exact (why, at ``op``)."""

    def __init__(self, op: ir.Operation, message: str) -> None:
        super().__init__(message)
        self.op = op


@dataclass
class BarrierPlan:
    """gfx1250: how tile arrivals scale to per-warp hardware arrivals."""

    #: ``M``: the most tracked copies one expect covers (1 when none).
    per_arrival: int = 1
    #: expect -> the number of tracked copies it covers.
    covered: dict[ir.Operation, int] = field(default_factory=dict)
    #: Functions that issue TDM stores (cuda:90: their waits also wait for stores).
    storing: set[ir.Operation] = field(default_factory=set)


def _bytes(desc_type: Any) -> int:
    return int(numpy.prod(desc_type.shape)) * element_bits(desc_type.element_type) // 8


def _barrier_uses(op: ir.Operation) -> ir.Value | None:
    """The barrier value a barrier op or a tracked copy names (None: none)."""
    return op.opview.barrier if op.name in BARRIER_OPS else None


def walk_blocks(op: ir.Operation):
    for region in op.regions:
        for block in region.blocks:
            yield block
            for inner in block.operations:
                yield from walk_blocks(inner.operation)


def plan_barriers(
    module: ir.Operation,
    num_warps: int,
    tdm: bool,
    user_pred: Callable[[ir.Operation], ir.Value | None] = lambda op: op.opview.pred,
) -> BarrierPlan:
    """Find the functions that store, and on gfx1250 (``tdm``) the copies each
    expect covers; raise :class:`BarrierRefusal` where the mapping is not exact.
    ``user_pred`` gives a copy's own pred (a warp predicate the lowering strips
    is not the user's)."""
    plan = BarrierPlan()
    for fn in module.regions[0].blocks[0].operations:
        fn = fn.operation
        for block in walk_blocks(fn):
            open_expect: dict[ir.Value, tuple[ir.Operation, int, int]] = {}
            for op in block.operations:
                op = op.operation
                if op.name == STORE:
                    plan.storing.add(fn)
                if not tdm:
                    continue
                bar = _barrier_uses(op)
                if bar is None:
                    continue
                if op.name == COPY:
                    _check_tracked_copy(op, num_warps, user_pred(op))
                    if bar not in open_expect:
                        raise BarrierRefusal(
                            op,
                            "on gfx1250 a barrier-tracked copy must follow the "
                            "tile.barrier_expect that announces its bytes, in the same block "
                            "(LDS barriers count arrivals, not bytes)",
                        )
                    expect, want, got = open_expect[bar]
                    open_expect[bar] = (expect, want, got + _bytes(op.opview.desc.type))
                    plan.covered[expect] = plan.covered.get(expect, 0) + 1
                    continue
                _close(open_expect, bar)
                if op.name == EXPECT:
                    if op.opview.pred is not None:
                        raise BarrierRefusal(
                            op, "a predicated tile.barrier_expect has no gfx1250 form yet"
                        )
                    open_expect[bar] = (op, op.opview.bytes, 0)
            for bar in list(open_expect):
                _close(open_expect, bar)
    plan.per_arrival = max(plan.covered.values(), default=1)
    return plan


def _close(open_expect: dict, bar: ir.Value) -> None:
    if bar not in open_expect:
        return
    expect, want, got = open_expect.pop(bar)
    if want != got:
        raise BarrierRefusal(
            expect,
            f"on gfx1250 the tracked copies after a tile.barrier_expect must deliver its "
            f"bytes: it announces {want}, the copies that follow it deliver {got}",
        )


def _check_tracked_copy(op: ir.Operation, num_warps: int, pred: ir.Value | None) -> None:
    view = op.opview
    hint = view.warp_used_hint
    if hint is not None and hint != (1 << num_warps) - 1:
        raise BarrierRefusal(
            op,
            "on gfx1250 a barrier-tracked copy is issued by every warp (each arrives once); "
            f"warp_used_hint = {hint:#x} leaves warps out",
        )
    if pred is not None:
        raise BarrierRefusal(op, "a predicated barrier-tracked copy has no gfx1250 form yet")
    if int(numpy.prod(view.desc.type.shape)) < num_warps:
        raise BarrierRefusal(
            op,
            f"on gfx1250 a barrier-tracked copy needs a block of at least {num_warps} elements "
            "(one per warp: every warp must arrive)",
        )


__all__ = [
    "BARRIER_OPS",
    "COPY",
    "EXPECT",
    "STORE",
    "BarrierPlan",
    "BarrierRefusal",
    "plan_barriers",
    "walk_blocks",
]
