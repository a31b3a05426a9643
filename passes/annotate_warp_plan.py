"""``tile-annotate-warp-plan``: explain, per copy, which warp moves what.

The per-warp plan of a TDM copy (who is active, where each tile starts) is
decided by the hint rule and the TDM warp distribution; this pass prints it
as a remark at each copy, so a user can read the split without running the
lowering, and lit tests can pin it with ``expected-remark``.

How remarks are emitted: the pinned MLIR Python bindings can emit errors at a
location (``Location.emit_error``) but have no ``emit_remark``. Upstream's
transform dialect does: ``transform.debug.emit_param_as_remark`` reports a
remark at a payload op's *location*. The pass builds, with the typed
builders, a scratch module holding one placeholder op per copy at the copy's
location and a transform script that splits the placeholders into one
handle each and emits each copy's messages there, and runs MLIR's
``transform-interpreter`` on it once. The remarks reach the context's
diagnostic handlers like any other diagnostic (``file:line:col: remark:
...``), and the annotated IR is never touched.

``emit_remark_at`` on the copies themselves is not used:
``Operation::emitRemark`` attaches a "see current operation" note, and
printing that op numbers and verifies its whole enclosing function, once per
remark, which made the pass quadratic in the number of copies
(``docs/results.md``, pass scaling). A location remark costs O(1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from gemm_opt.core.ext_compat import (
    MLIRError,
    PassManager,
    arith,
    ir,
    transform,
    transform_debug,
    transform_structured,
)
from gemm_opt.core.pass_base import TilePass
from gemm_opt.core.tdm_layout import (
    TdmWarpLayout,
    format_warp_plan,
    fused_plan_from_layouts,
    plan_from_layout,
)
from gemm_opt.core.warp_hint import format_mask, format_warps
from gemm_opt.passes.common import (
    COPY_OP,
    FUSED_OP,
    LayoutError,
    collect_ops,
    copy_layout,
    fused_layouts,
)

#: The scratch payload's op at each remark's location.
_ANCHOR_OP = "arith.constant"
#: An op name no module holds (an empty match feeds :func:`_empty_params`).
_NO_SUCH_OP = "tile.no_such_op"


def _shape(shape: tuple[int, ...]) -> str:
    return "x".join(str(s) for s in shape)


def _box(start: tuple[int, ...], tile: tuple[int, ...]) -> str:
    # Equivalent mutant: strict=False (a plan entry's start and tile both have the block's rank).
    return "[" + ", ".join(f"{s}:{s + t}" for s, t in zip(start, tile, strict=True)) + "]"


def plan_summary(layout: TdmWarpLayout, elem: str) -> str:
    """One line: block, hint, K and tile, each active warp's box, the idle warps.

    ``128x64xf16 hint 0b11110000 (4 of 8 warps, tile 32x64): warp 4 [0:32, 0:64],
    ...; warps {0..3} inactive``.
    """
    hint = layout.hint
    sel = format_mask(hint.hint, layout.num_warps) if hint.explicit else "none"
    head = (
        f"{_shape(layout.block_shape)}x{elem} hint {sel} "
        f"({layout.num_active} of {layout.num_warps} warps, tile {_shape(layout.tile)})"
    )
    entries = plan_from_layout(layout)
    active = [f"warp {e.warp} {_box(e.start, e.tile)}" for e in entries if e.active]
    idle = [e.warp for e in entries if not e.active]
    text = f"{head}: {', '.join(active)}"
    if idle:
        noun = "warp" if len(idle) == 1 else "warps"
        text += f"; {noun} {format_warps(idle)} inactive"
    return text


def _elem(desc: ir.Value) -> str:
    return str(desc.type.element_type)


def copy_remarks(op: Any) -> list[str]:
    """The remark(s) for one single or fused copy."""
    if op.operation.name == COPY_OP:
        layout = copy_layout(op)
        return [
            f"warp plan for {plan_summary(layout, _elem(op.desc))}\n"
            + format_warp_plan(plan_from_layout(layout))
        ]
    layouts = fused_layouts(op)
    n = len(layouts)
    # Equivalent mutant: 0->1 (a fused copy has 2 to 4 members, all of the module's warps).
    nw = layouts[0].num_warps
    uncovered = [w for w in range(nw) if not any(lay.hint.is_active(w) for lay in layouts)]
    plan = fused_plan_from_layouts(layouts, nw)
    out = []
    # Equivalent mutant: strict=False (fused_layouts gives one layout per descriptor).
    for i, (layout, desc) in enumerate(zip(layouts, op.descs, strict=True)):
        issuers = [e.warp for e in plan if e.member == i]
        text = (
            f"warp plan for fused member {i} of {n}, {plan_summary(layout, _elem(desc))}; "
            f"warps {format_warps(issuers)} issue its descriptor"
        )
        if i == n - 1 and uncovered:
            text += f" (warps {format_warps(uncovered)} with predicate 0)"
        if i == n - 1:
            text += "\n" + format_warp_plan(plan)
        out.append(text)
    return out


def emit_remarks(remarks: list[tuple[Any, list[str]]]) -> None:
    """Emit each (op, messages) pair's messages as remarks at the op's location.

    The payload of the transform script is a scratch module holding one
    ``arith.constant`` per op, at that op's location: the remark only needs
    the location, and the IR being annotated is never touched (so the pass
    also runs nested, ``func.func(tile-annotate-warp-plan)``).
    """
    if not remarks:
        return
    ctx = remarks[0][0].location.context
    with ctx, ir.Location.unknown(ctx):
        payload = ir.Module.create()
        # Equivalent mutant: 1->2 here and 0->1 in the constant below (an anchor
        # only lends its location to the remark).
        i1 = ir.IntegerType.get_signless(1)
        with ir.InsertionPoint(payload.body):
            for op, _ in remarks:
                arith.ConstantOp(i1, 0, loc=op.location)  # Equivalent mutant: see i1.
        payload.operation.attributes["transform.with_named_sequence"] = ir.UnitAttr.get()
        any_op = transform.AnyOpType.get()
        any_param = transform.AnyParamType.get()
        with ir.InsertionPoint(payload.body):
            main = transform.NamedSequenceOp(
                "__transform_main",
                [any_op],
                [],
                arg_attrs=[{"transform.readonly": ir.UnitAttr.get()}],
            )
        with ir.InsertionPoint(main.body):
            root = main.bodyTarget
            anchors = transform_structured.MatchOp(any_op, root, ops=[_ANCHOR_OP]).result
            handles = transform.SplitHandleOp([any_op] * len(remarks), anchors).results
            no_params = _empty_params(root, any_op, any_param)
            # Equivalent mutant: strict=False (one handle per remark, split above).
            for handle, (_, messages) in zip(handles, remarks, strict=True):
                for msg in messages:
                    transform_debug.EmitParamAsRemarkOp(no_params, anchor=handle, message=msg)
            transform.YieldOp()
        PassManager.parse("builtin.module(transform-interpreter)").run(payload.operation)


def _empty_params(root: ir.Value, any_op: ir.Type, any_param: ir.Type) -> ir.Value:
    """A handle to no parameters: a ``transform.foreach`` over no payload ops.

    ``emit_param_as_remark`` then reports its message alone (plus a separator
    space, which the diagnostic collector strips).
    """
    nothing = transform_structured.MatchOp(any_op, root, ops=[_NO_SUCH_OP]).result
    loop = transform.ForeachOp([any_param], [nothing])
    with ir.InsertionPoint(loop.body):
        # Equivalent mutant: 64->65, 0->1 (the body never runs: no op matches).
        zero = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 0)
        transform.YieldOp([transform.ParamConstantOp(any_param, zero).result])
    return loop.results[0]


@dataclass(frozen=True)
class AnnotateWarpPlanPass(TilePass):
    """Report each TDM copy's per-warp plan as a remark at the copy.

    For a ``tile.async_tdm_copy_global_to_local`` the remark's first line
    names the block, the hint (``none`` = all warps), how many warps copy and
    the tile each moves, then every active warp's box (``start:end`` per
    dim) and the inactive warps; the following lines are the
    :func:`gemm_opt.core.tdm_layout.format_warp_plan` table. A fused copy gets one
    remark per member, which also names the warps that issue the member's
    descriptor (the last member's also those that issue it with predicate 0,
    and the fused per-warp table). The IR is unchanged.

    Before:

    ```mlir
    "tile.async_tdm_copy_global_to_local"(%d, %b)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32}
      : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>) -> ()
    ```

    After: the same IR, and at the copy the remark
    (``gemm-opt --pass-pipeline='builtin.module(tile-annotate-warp-plan)'``):

    ```text
    copy.mlir:4:5: remark: warp plan for 128x64xf16 hint 0b11110000 (4 of 8 warps,
    tile 32x64): warp 4 [0:32, 0:64], warp 5 [32:64, 0:64], warp 6 [64:96, 0:64],
    warp 7 [96:128, 0:64]; warps {0..3} inactive
    warp  active  start    tile
    0     no      [0, 0]   [32, 64]
    ...
    ```
    """

    name: ClassVar[str] = "tile-annotate-warp-plan"

    def run(self, module: ir.Operation) -> None:
        remarks = []
        for op in collect_ops(module, (COPY_OP, FUSED_OP)):
            try:
                remarks.append((op, copy_remarks(op)))
            except LayoutError as e:
                self.fail(op, f"cannot compute the warp plan: {e}")
        try:
            emit_remarks(remarks)
        except MLIRError as e:
            self.fail(module, f"could not emit the warp-plan remarks: {e}")


__all__ = ["AnnotateWarpPlanPass", "copy_remarks", "emit_remarks", "plan_summary"]
