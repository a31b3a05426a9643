"""``tile-emit-warp-predicates``: make a copy's warp selection explicit IR.

A hinted (or surplus-warp) TDM copy is issued by every warp, and the warps
outside the selection issue it with predicate 0. This pass writes that
predicate as ``arith`` ops on ``tile.warp_id`` and folds it into the copy's
``pred`` operand, so the selection is visible to IR-level reasoning (the
copy model, an interpreter, canonicalization) rather than hidden in the
lowering.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from gemm_opt.core.contract import WARP_LAYOUT, WARP_PREDICATED
from gemm_opt.core.ext_compat import arith, ir
from gemm_opt.core.pass_base import TilePass
from gemm_opt.dialect.tile import AsyncTDMCopyGlobalToLocalOp, WarpIdOp
from gemm_opt.passes.common import (
    COPY_OP,
    LayoutError,
    collect_ops,
    layout_fields,
)


def rebuild_copy(op: AsyncTDMCopyGlobalToLocalOp, pred: ir.Value | None) -> Any:
    """Replace ``op`` by the same copy with ``pred`` as its predicate operand.

    The new op is created in place (so ``operandSegmentSizes`` is rebuilt by
    the constructor) and takes over every other attribute; ``op`` is erased.
    """
    new = AsyncTDMCopyGlobalToLocalOp(
        op.desc,
        op.dest,
        pred=pred,
        barrier=op.barrier,
        loc=op.location,
        ip=ir.InsertionPoint(op),
    )
    old_attrs = op.operation.attributes
    for name in old_attrs:
        if name != "operandSegmentSizes":
            new.operation.attributes[name] = old_attrs[name]
    op.operation.erase()
    return new


def emit_warp_mask(
    anchor: int, free_mask: int, loc: ir.Location, ip: ir.InsertionPoint
) -> ir.Value:
    """``((tile.warp_id ^ anchor) & free_mask) == 0`` as i1, built at ``ip``."""
    i32 = ir.IntegerType.get_signless(32, context=loc.context)
    warp = WarpIdOp(loc=loc, ip=ip).result
    anchor_c = arith.ConstantOp(i32, anchor, loc=loc, ip=ip).result
    rel = arith.XOrIOp(warp, anchor_c, loc=loc, ip=ip).result
    mask_c = arith.ConstantOp(i32, free_mask, loc=loc, ip=ip).result
    masked = arith.AndIOp(rel, mask_c, loc=loc, ip=ip).result
    zero = arith.ConstantOp(i32, 0, loc=loc, ip=ip).result
    return arith.CmpIOp(arith.CmpIPredicate.eq, masked, zero, loc=loc, ip=ip).result


@dataclass(frozen=True)
class EmitWarpPredicatesPass(TilePass):
    """Materialize each TDM copy's warp mask as an explicit predicate.

    For every ``tile.async_tdm_copy_global_to_local`` whose
    ``tile.warp_layout`` has a non-zero ``free_mask`` (a hint selecting fewer
    warps than ``tile.num_warps``, or surplus warps on a small block), the
    pass emits, right before the copy,

    ``%on = ((tile.warp_id ^ anchor) & free_mask) == 0``

    ANDs it with the copy's own ``pred`` (user predicate first) when there is
    one, makes the result the copy's ``pred`` and marks the copy
    ``tile.warp_predicated``. The chain always has the same shape (``xori``
    even for anchor 0), so the lowering can recognize it, check its constants
    against the hint and strip it back to the user's predicate before
    emitting Triton's ``warp_used_hint``, which predicates itself. The XOR
    with the anchor (the lowest active warp) makes hints without warp 0
    (``0xF0``: anchor 4) and strided hints (``0x55``) come out right.

    Copies with ``free_mask = 0`` (all warps busy) get no code, and copies
    already marked ``tile.warp_predicated`` are left alone, so the pass is
    idempotent. Fused copies have no ``pred`` operand and are not touched:
    each member's selection is carried by per-warp descriptor selection (a
    warp takes the first member whose hint contains it; a warp in no member
    issues the last member's descriptor with predicate 0).

    Requires ``tile-assign-tdm-warp-layout`` first: a copy without
    ``tile.warp_layout`` is an error.

    Before:

    ```mlir
    "tile.async_tdm_copy_global_to_local"(%d, %b, %p)
        {operandSegmentSizes = array<i32: 1, 1, 1, 0>, warp_used_hint = 240 : i32,
         tile.warp_layout = #tile.tdm_warp_layout<{anchor = 4 : i64, free_mask = 4 : i64, ...}>}
      : (!desc, !buf, i1) -> ()
    ```

    After:

    ```mlir
    %w = "tile.warp_id"() : () -> i32
    %anchor = arith.constant 4 : i32
    %x = arith.xori %w, %anchor : i32
    %free = arith.constant 4 : i32
    %m = arith.andi %x, %free : i32
    %zero = arith.constant 0 : i32
    %on = arith.cmpi eq, %m, %zero : i32
    %pred = arith.andi %p, %on : i1
    "tile.async_tdm_copy_global_to_local"(%d, %b, %pred)
        {operandSegmentSizes = array<i32: 1, 1, 1, 0>, tile.warp_predicated,
         tile.warp_layout = #tile.tdm_warp_layout<{...}>, warp_used_hint = 240 : i32}
      : (!desc, !buf, i1) -> ()
    ```
    """

    name: ClassVar[str] = "tile-emit-warp-predicates"

    def run(self, module: ir.Operation) -> None:
        for op in collect_ops(module, (COPY_OP,)):
            if WARP_PREDICATED in op.operation.attributes:
                continue
            try:
                fields = layout_fields(op)
            except LayoutError as e:
                self.fail(op, str(e))
            if fields is None:
                self.fail(
                    op,
                    f"needs '{WARP_LAYOUT}' to emit its warp predicate; run "
                    "tile-assign-tdm-warp-layout first",
                )
            free_mask = fields.get("free_mask", 0)
            if free_mask == 0:
                continue
            ip = ir.InsertionPoint(op)
            loc = op.location
            # Equivalent mutant: 0->1; the copy verifier requires every field, anchor too.
            pred = emit_warp_mask(fields.get("anchor", 0), free_mask, loc, ip)
            if op.pred is not None:
                pred = arith.AndIOp(op.pred, pred, loc=loc, ip=ip).result
            new = rebuild_copy(op, pred)
            new.operation.attributes[WARP_PREDICATED] = ir.UnitAttr.get(context=loc.context)


__all__ = ["EmitWarpPredicatesPass", "emit_warp_mask", "rebuild_copy"]
