"""The hand-off of warp specialization to Triton (part of
``convert-tile-to-triton-gpu``; :data:`HANDLERS` joins its handler table).

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

Triton 3.9.0 lowers ``ttg.warp_specialize`` for cuda:90 and gfx1250 only;
on gfx950 and gfx942 the op is a located error naming the target.
"""

from typing import Any

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect.barrier import BarrierWaitOp
from gemm_opt.dialect.warp_specialize import WarpReturnOp, WarpSpecializeOp, WarpYieldOp
from gemm_opt.lowering.convert_barrier_ops import BARRIER_OPS

#: Targets whose Triton 3.9.0 backend lowers ``ttg.warp_specialize``.
WARP_SPECIALIZE_TARGETS = ("cuda:90", "gfx1250")


def lower_warp_specialize(low: Any, op: Any) -> list[Any]:
    o = op.operation
    b = low.b
    if low.target.name not in WARP_SPECIALIZE_TARGETS:
        raise low.fail(
            o,
            f"warp specialization has no lowering on {low.target.name}: Triton 3.9.0 "
            f"lowers ttg.warp_specialize for {' and '.join(WARP_SPECIALIZE_TARGETS)} only",
        )
    workers = [w.opview for w in op.workers()]
    if low.target.tdm:
        for w in workers:
            _check_lds_arrivals(low, w)
    regs = [w.regs() for w in workers]
    if any(r is not None for r in regs) and any(r is None for r in regs):
        raise low.fail(
            o,
            "'num_regs' is given for some worker partitions but not all; Triton sets "
            "the registers of every partition or of none",
        )
    result_types = [low.must_type(r.type, o) for r in o.results]
    args = [low.v(x) for x in o.operands]
    # The default region first (Gluon's order), in a block of its own.
    saved = b.get_insertion_point()
    default_block = b.new_block()
    b.set_insertion_point_to_start(default_block)
    low.lower_block(o.regions[0].blocks[0])
    b.restore_insertion_point(saved)
    low.at(o)
    ws = b.create_warp_specialize(result_types, [w.warps() for w in workers])
    ws.get_default_region().push_back(default_block)
    if regs and regs[0] is not None:
        ws.set_requested_registers(regs)
    b.create_block_with_parent(ws.get_partition_op_holder(), [])
    partitions = b.create_warp_specialize_partitions(args, len(workers))
    arg_types = [a.get_type() for a in args]
    function_warps = low.num_warps
    try:
        for i, w in enumerate(workers):
            block = b.create_block_with_parent(partitions.get_region(i), arg_types)
            old = w.operation.regions[0].blocks[0]
            for j, a in enumerate(old.arguments):
                low.values[a] = block.get_argument(j)
            low.num_warps = w.warps()
            low.lower_block(old)
    finally:
        low.num_warps = function_warps
    b.set_insertion_point_after(ws.get_operation())
    return [ws.get_result(i) for i in range(len(result_types))]


def _check_lds_arrivals(low: Any, worker: Any) -> None:
    """gfx1250's LDS barriers count one arrival per warp, and a barrier's count
    is scaled by the function's warps (:mod:`convert_barrier_ops`): a worker
    of other warps cannot arrive on it exactly."""
    warps = worker.warps()
    if warps == low.num_warps:
        return
    found: list[ir.Operation] = []

    def visit(inner: ir.Operation) -> ir.WalkResult:
        if (
            inner.name in BARRIER_OPS
            and inner.name != BarrierWaitOp.OPERATION_NAME
            and inner.opview.barrier is not None
        ):
            found.append(inner)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    worker.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    if found:
        raise low.fail(
            found[0],
            f"on gfx1250 a barrier arrival must come from {low.num_warps} warps (the "
            f"function's: LDS barriers count per-warp arrivals), but this partition has "
            f"{warps}; give the partition {low.num_warps} warps or arrive from the default "
            "partition",
        )


def lower_warp_yield(low: Any, op: Any) -> None:
    low.b.create_warp_yield([low.v(x) for x in op.operation.operands])


def lower_warp_return(low: Any, op: Any) -> None:
    low.b.create_warp_return()


#: (tile.warp_partition and tile.warp_partitions_end are lowered by lower_warp_specialize.)
HANDLERS = {
    WarpSpecializeOp.OPERATION_NAME: lower_warp_specialize,
    WarpYieldOp.OPERATION_NAME: lower_warp_yield,
    WarpReturnOp.OPERATION_NAME: lower_warp_return,
}
