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
from gemm_opt.passes.common import descriptor_root

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
    is not the user's). Without TDM (cuda:90, whose mbarriers count bytes) the
    expects whose bytes the copies after them certainly do not deliver are refused
    (:func:`_check_expected_bytes`)."""
    plan = BarrierPlan()
    for fn in module.regions[0].blocks[0].operations:
        fn = fn.operation
        for block in walk_blocks(fn):
            if any(op.operation.name == STORE for op in block.operations):
                plan.storing.add(fn)
            if tdm:
                _plan_tdm_block(block, num_warps, user_pred, plan)
            else:
                _check_expected_bytes(block, user_pred)
    plan.per_arrival = max(plan.covered.values(), default=1)
    return plan


def _plan_tdm_block(
    block: ir.Block,
    num_warps: int,
    user_pred: Callable[[ir.Operation], ir.Value | None],
    plan: BarrierPlan,
) -> None:
    open_expect: dict[ir.Value, tuple[ir.Operation, int, int]] = {}
    for op in block.operations:
        op = op.operation
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
        _close(open_expect, bar, "gfx1250")
        if op.name == EXPECT:
            if op.opview.pred is not None:
                raise BarrierRefusal(op, "a predicated tile.barrier_expect has no gfx1250 form yet")
            open_expect[bar] = (op, op.opview.bytes, 0)
    for bar in list(open_expect):
        _close(open_expect, bar, "gfx1250")


def _check_expected_bytes(
    block: ir.Block, user_pred: Callable[[ir.Operation], ir.Value | None]
) -> None:
    """cuda:90: an mbarrier phase completes when the bytes an expect announces have
    landed, so an expect followed, in its block, by tracked copies on its barrier
    that deliver other bytes waits forever. Refused where that is certain: an
    unpredicated expect, then unpredicated copies on the same barrier value and no
    nested op that could copy to it, up to the next barrier op on it or the block's
    end. (Copies issued elsewhere, a partition's say, leave the expect unchecked.)"""
    #: barrier -> (expect, bytes announced, bytes delivered, copies; None: uncertain)
    open_expect: dict[ir.Value, list[Any]] = {}
    for op in block.operations:
        op = op.operation
        # Equivalent mutant: 'or'; with no open expect, or no regions, the loop finds
        # nothing to mark. The 'and' only skips the walk.
        if open_expect and op.regions:
            for inner in _nested_copies(op):
                if inner.opview.barrier in open_expect:
                    open_expect[inner.opview.barrier][3] = None
        bar = _barrier_uses(op)
        if bar is None:
            continue
        if op.name == COPY:
            entry = open_expect.get(bar)
            if entry is None or entry[3] is None:
                continue
            if user_pred(op) is not None or _descriptor_pred(op):
                entry[3] = None  # a copy predicated off delivers nothing: not certain
                continue
            entry[2] += _bytes(op.opview.desc.type)
            # Equivalent mutant: -= 1 or += 2; the count is only tested for being non-zero,
            # and it moves away from zero either way.
            entry[3] += 1
            continue
        _close_exact(open_expect, bar)
        if op.name == EXPECT and op.opview.pred is None:
            open_expect[bar] = [op, op.opview.bytes, 0, 0]
    for bar in list(open_expect):
        _close_exact(open_expect, bar)


def _nested_copies(op: ir.Operation) -> list[ir.Operation]:
    found: list[ir.Operation] = []
    for block in walk_blocks(op):
        found += [o.operation for o in block.operations if o.operation.name == COPY]
    return [o for o in found if o.opview.barrier is not None]


def _descriptor_pred(op: ir.Operation) -> bool:
    """Whether an update of the copy's descriptor carries a pred."""
    _, updates = descriptor_root(op.opview.desc)
    return any(u.opview.pred is not None for u in updates)


def _close_exact(open_expect: dict, bar: ir.Value) -> None:
    if bar not in open_expect:
        return
    expect, want, got, copies = open_expect.pop(bar)
    if copies and want != got:
        raise BarrierRefusal(expect, _bytes_message("cuda:90", want, got))


def _close(open_expect: dict, bar: ir.Value, target: str) -> None:
    if bar not in open_expect:
        return
    expect, want, got = open_expect.pop(bar)
    if want != got:
        raise BarrierRefusal(expect, _bytes_message(target, want, got))


def _bytes_message(target: str, want: int, got: int) -> str:
    return (
        f"on {target} the tracked copies after a tile.barrier_expect must deliver its "
        f"bytes: it announces {want}, the copies that follow it deliver {got}"
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
