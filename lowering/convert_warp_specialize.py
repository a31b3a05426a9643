"""The hand-off of warp specialization to Triton (part of
``convert-tile-to-triton-gpu``).

``tile.warp_specialize`` becomes ``ttg.warp_specialize`` built as Gluon's
``gl.warp_specialize`` builds it: the default region first (its
``tile.warp_yield`` becomes ``ttg.warp_yield``, whose types are the op's
results), then the op (``partitionNumWarps`` from the workers' ``num_warps``,
``requestedRegisters`` from their ``num_regs``), then one
``ttg.warp_specialize.partitions`` taking every captured value, with a region
per worker whose block takes them all (``tile.warp_return`` becomes
``ttg.warp_return``).

A worker's ops are lowered with its own warp count: layouts the lowering
derives (blocked access layouts, wgmma shapes, TDM warp layouts) are for the
partition's warps, as Gluon's caller context makes ``gl.num_warps()`` the
partition's. Triton's own passes then allocate the partitions' warps after
the default partition's and lower each region for its warps (NVIDIA:
``setmaxnreg`` where registers are requested; AMD: gfx1250).

On gfx1250 an LDS barrier counts one arrival per warp and its count is
scaled by the function's warps, so a worker that arrives on a barrier
(arrive, expect, tracked copy) must have the function's warps (a located
error otherwise); waiting is free. On cuda:90 an mbarrier arrival is one
thread's, whatever the partition. A TMA descriptor is made in the partition
that uses it (its warps then fence the tensormap before their copies).

Triton 3.9.0 lowers ``ttg.warp_specialize`` for cuda:90 and gfx1250 only (the target
table's ``warp_specialize``); on gfx950 and gfx942 the op is a located error naming the
target. ``tile.warp_partition`` and ``tile.warp_partitions_end`` are lowered here, as
parts of their ``tile.warp_specialize``.
"""

from __future__ import annotations

from typing import Any

from gemm_opt.core.targets import TARGETS
from gemm_opt.dialect.warp_specialize import WarpReturnOp, WarpSpecializeOp, WarpYieldOp
from gemm_opt.lowering.context import Handler, HandOffContext

#: Targets whose Triton 3.9.0 backend lowers ``ttg.warp_specialize``.
WARP_SPECIALIZE_TARGETS = tuple(sorted(name for name, t in TARGETS.items() if t.warp_specialize))


def lower_warp_specialize(ctx: HandOffContext, op: Any) -> list[Any]:
    o = op.operation
    b = ctx.b
    if not ctx.target.warp_specialize:
        raise ctx.fail(
            o,
            f"warp specialization has no lowering on {ctx.target.name}: Triton 3.9.0 "
            f"lowers ttg.warp_specialize for {' and '.join(WARP_SPECIALIZE_TARGETS)} only",
        )
    workers = [w.opview for w in op.workers()]
    for w in workers:
        ctx.strategy.check_partition(ctx, w)
    regs = [w.regs() for w in workers]
    if any(r is not None for r in regs) and any(r is None for r in regs):
        raise ctx.fail(
            o,
            "'num_regs' is given for some worker partitions but not all; Triton sets "
            "the registers of every partition or of none",
        )
    result_types = [ctx.must_type(r.type, o) for r in o.results]
    args = [ctx.v(x) for x in o.operands]
    # The default region first (Gluon's order), in a block of its own.
    saved = b.get_insertion_point()
    default_block = b.new_block()
    b.set_insertion_point_to_start(default_block)
    ctx.lower_block(o.regions[0].blocks[0])
    b.restore_insertion_point(saved)
    ctx.at(o)
    ws = b.create_warp_specialize(result_types, [w.warps() for w in workers])
    ws.get_default_region().push_back(default_block)
    if regs and regs[0] is not None:
        ws.set_requested_registers(regs)
    b.create_block_with_parent(ws.get_partition_op_holder(), [])
    partitions = b.create_warp_specialize_partitions(args, len(workers))
    arg_types = [a.get_type() for a in args]
    function_warps = ctx.num_warps
    try:
        for i, w in enumerate(workers):
            block = b.create_block_with_parent(partitions.get_region(i), arg_types)
            old = w.operation.regions[0].blocks[0]
            for j, a in enumerate(old.arguments):
                ctx.values[a] = block.get_argument(j)
            ctx.num_warps = w.warps()
            ctx.lower_block(old)
    finally:
        ctx.num_warps = function_warps
    b.set_insertion_point_after(ws.get_operation())
    return [ws.get_result(i) for i in range(len(result_types))]


def lower_warp_yield(ctx: HandOffContext, op: Any) -> None:
    ctx.b.create_warp_yield([ctx.v(x) for x in op.operation.operands])


def lower_warp_return(ctx: HandOffContext, op: Any) -> None:
    ctx.b.create_warp_return()


HANDLERS: dict[str, Handler] = {
    WarpSpecializeOp.OPERATION_NAME: lower_warp_specialize,
    WarpYieldOp.OPERATION_NAME: lower_warp_yield,
    WarpReturnOp.OPERATION_NAME: lower_warp_return,
}

__all__ = ["HANDLERS", "WARP_SPECIALIZE_TARGETS"]
