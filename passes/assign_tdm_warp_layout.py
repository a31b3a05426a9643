"""``tile-assign-tdm-warp-layout``: record which warp copies which tile.

Every TDM copy gets the per-warp layout Triton's gfx1250 lowering will use,
as a ``#tile.tdm_warp_layout`` attribute, so later passes (the warp
predicates, the plan remarks, the lowering) read one decision instead of
recomputing it. The layout comes from :func:`gemm_opt.core.tdm_layout.tdm_warp_layout`;
this module only moves it between Python and IR. The helpers here are shared
by the other TDM passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from gemm_opt.core.contract import NUM_WARPS, WARP_LAYOUT, WARP_LAYOUTS
from gemm_opt.core.ext_compat import ir
from gemm_opt.core.pass_base import TilePass
from gemm_opt.core.tdm_layout import TdmWarpLayout, fused_member_layouts, tdm_warp_layout
from gemm_opt.core.warp_hint import WarpHintError
from gemm_opt.dialect.tile import (
    AsyncTDMCopyGlobalToLocalOp,
    AsyncTDMFusedCopyGlobalToLocalOp,
    TdmWarpLayoutAttr,
    enclosing_int_attr,
    warp_layout_fields,
)

COPY_OP = AsyncTDMCopyGlobalToLocalOp.OPERATION_NAME
FUSED_OP = AsyncTDMFusedCopyGlobalToLocalOp.OPERATION_NAME


class LayoutError(Exception):
    """A copy whose warp layout cannot be computed; the message says why."""


def collect_ops(root: ir.Operation, names: tuple[str, ...]) -> list[Any]:
    """The ops named ``names`` under ``root``, in pre-order, as op views."""
    found: list[Any] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in names:
            found.append(op.opview)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def num_warps_of(op: Any) -> int:
    """The enclosing ``tile.num_warps``; LayoutError when there is none."""
    nw = enclosing_int_attr(op.operation, NUM_WARPS)
    if nw is None:
        raise LayoutError(f"needs '{NUM_WARPS}' on an enclosing op to lay out the warps")
    return nw


def block_of(desc: ir.Value) -> tuple[tuple[int, ...], Any]:
    """(block shape, pure-Python shared layout) of a descriptor value."""
    t = desc.type
    return tuple(t.shape), t.shared_layout()


def copy_layout(op: AsyncTDMCopyGlobalToLocalOp) -> TdmWarpLayout:
    """The warp layout of a single copy (hinted, or all warps)."""
    shape, layout = block_of(op.desc)
    return _layout(shape, num_warps_of(op), op.warp_used_hint, layout)


def fused_layouts(op: AsyncTDMFusedCopyGlobalToLocalOp) -> list[TdmWarpLayout]:
    """The warp layouts of a fused copy's members, in member order."""
    members = []
    for desc, hint in zip(op.descs, op.warp_used_hints, strict=True):
        shape, layout = block_of(desc)
        members.append((shape, hint, layout))
    try:
        return fused_member_layouts(members, num_warps_of(op))
    except (WarpHintError, ValueError) as e:
        raise LayoutError(str(e)) from None


def _layout(shape: tuple[int, ...], nw: int, hint: int | None, layout: Any) -> TdmWarpLayout:
    try:
        return tdm_warp_layout(shape, nw, hint, layout)
    except (WarpHintError, ValueError) as e:
        raise LayoutError(str(e)) from None


def layout_attr(layout: TdmWarpLayout) -> TdmWarpLayoutAttr:
    """``#tile.tdm_warp_layout<{...}>`` for ``layout`` (warp bases flattened)."""
    return TdmWarpLayoutAttr.build(**warp_layout_fields(layout))


def layout_fields(op: Any) -> dict[str, Any] | None:
    """The fields of the op's ``tile.warp_layout`` attribute, or None if absent."""
    attrs = op.operation.attributes
    if WARP_LAYOUT not in attrs:
        return None
    attr = attrs[WARP_LAYOUT]
    if not isinstance(attr, TdmWarpLayoutAttr):
        raise LayoutError(f"'{WARP_LAYOUT}' must be a #tile.tdm_warp_layout, got {attr}")
    return attr.field_values()


def set_copy_layout(op: Any) -> None:
    """Attach (or refresh) the layout attribute(s) of a single or fused copy."""
    if op.operation.name == FUSED_OP:
        attrs = [layout_attr(lay) for lay in fused_layouts(op)]
        op.operation.attributes[WARP_LAYOUTS] = ir.ArrayAttr.get(attrs)
    else:
        op.operation.attributes[WARP_LAYOUT] = layout_attr(copy_layout(op))


@dataclass(frozen=True)
class AssignTdmWarpLayoutPass(TilePass):
    """Attach the per-warp TDM layout to every global-to-shared copy.

    For each ``tile.async_tdm_copy_global_to_local`` the pass computes how
    its warps split the block, exactly as Triton 3.9.0's gfx1250 lowering
    does: ``K`` = popcount(``warp_used_hint``) warps (all ``tile.num_warps``
    without a hint) are distributed greedily over the block dims (the
    partition-aware distribution for ``#tile.partitioned_shared``), each
    takes ``block / warps_per_dim`` elements, and warp ``w`` copies iff
    ``((w ^ anchor) & free_mask) == 0``. The result is stored as
    ``tile.warp_layout``; a fused copy gets ``tile.warp_layouts``, one layout
    per member. Running the pass twice gives the same IR.

    Before:

    ```mlir
    "tile.async_tdm_copy_global_to_local"(%d, %b)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32}
      : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>) -> ()
    ```

    After:

    ```mlir
    "tile.async_tdm_copy_global_to_local"(%d, %b)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>,
         tile.warp_layout = #tile.tdm_warp_layout<{anchor = 4 : i64, free_mask = 4 : i64,
           tile = array<i64: 32, 64>, warp_bases = array<i64: 32, 0, 64, 0, 0, 0>,
           warps_per_dim = array<i64: 4, 1>}>,
         warp_used_hint = 240 : i32}
      : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>) -> ()
    ```

    Diagnostics (the pass fails at the op): no enclosing ``tile.num_warps``;
    a ``tile.num_warps`` that is not a power of two; an unhinted partitioned
    copy that needs several TDM instructions (more logical pieces than
    warps), which the single-instruction layout cannot describe. A hint too
    large for its block is already rejected by the op verifier.
    """

    name: ClassVar[str] = "tile-assign-tdm-warp-layout"

    def run(self, module: ir.Operation) -> None:
        for op in collect_ops(module, (COPY_OP, FUSED_OP)):
            try:
                set_copy_layout(op)
            except LayoutError as e:
                self.fail(op, f"cannot assign a TDM warp layout: {e}")


__all__ = [
    "COPY_OP",
    "FUSED_OP",
    "AssignTdmWarpLayoutPass",
    "LayoutError",
    "block_of",
    "collect_ops",
    "copy_layout",
    "fused_layouts",
    "layout_attr",
    "layout_fields",
    "num_warps_of",
    "set_copy_layout",
]
