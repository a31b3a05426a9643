"""Helpers the TDM passes share; not a pass.

Passes do not import each other: what several of them (and the lowering)
read is here. The warp-layout attributes and how a copy's layout is computed
and stored (``tile-assign-tdm-warp-layout`` writes them, the predicates, the
plan remarks, the hint derivation and the lowering read them); the
``tile.warp_predicated`` marker (``tile-emit-warp-predicates`` writes it, the
lowering reads it); and the scanner for runs of copies issued together with
the check that a copy may join a fused group (``tile-fuse-tdm-copies`` fuses
the runs, ``tile-derive-warp-hints`` gives them hints it can fuse).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from gemm_opt.core.contract import NUM_WARPS, WARP_LAYOUT, WARP_LAYOUTS
from gemm_opt.core.ext_compat import cast, ir
from gemm_opt.core.tdm_layout import TdmWarpLayout, fused_member_layouts, tdm_warp_layout
from gemm_opt.core.warp_hint import WarpHintError, check_fused_warp_hints
from gemm_opt.dialect.tile import (
    AsyncTDMCopyGlobalToLocalOp,
    AsyncTDMFusedCopyGlobalToLocalOp,
    LocalLoadOp,
    MemdescIndexOp,
    MemdescTransOp,
    TdmWarpLayoutAttr,
    cache_modifier,
    running_num_warps,
    viewed_block,
    warp_layout_fields,
)

# ---- warp layouts -------------------------------------------------------------------

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
    """The warps that run ``op`` (its worker partition's, else the enclosing
    ``tile.num_warps``); LayoutError when there is none."""
    nw = running_num_warps(op.operation)
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


# ---- shared memory ----------------------------------------------------------------


def _const_int(value: ir.Value) -> int | None:
    owner = value.owner
    if not isinstance(owner, ir.OpView | ir.Operation):
        return None
    op = owner.operation
    if op.name != "arith.constant":
        return None
    attr = cast(op.attributes["value"], ir.IntegerAttr)
    return None if attr is None else attr.value


def descriptor_root(desc: ir.Value) -> tuple[ir.Value, list[ir.Operation]]:
    """The descriptor value ``desc`` was made as (through any number of
    ``tile.update_tensor_descriptor``) and those updates, the outermost first."""
    updates: list[ir.Operation] = []
    while True:
        owner = desc.owner
        if not isinstance(owner, ir.OpView | ir.Operation):
            return desc, updates
        op = owner.operation
        if op.name != "tile.update_tensor_descriptor":
            return desc, updates
        updates.append(op)
        desc = op.operands[0]


def buffer_root(value: ir.Value) -> tuple[ir.Value, tuple[ir.Value, ...]]:
    """The allocation a shared view comes from, and the ``memdesc_index`` path.

    A ``tile.memdesc_trans`` view is the memory it permutes: it adds nothing
    to the path, so a transposed view aliases its block (it never makes a
    read look like one of another buffer)."""
    path: tuple[ir.Value, ...] = ()
    while True:
        owner = value.owner
        if not isinstance(owner, ir.OpView | ir.Operation):
            return value, path
        op = owner.operation
        if op.name == MemdescTransOp.OPERATION_NAME:
            value = viewed_block(value)
            continue
        if op.name != MemdescIndexOp.OPERATION_NAME:
            return value, path
        path = (op.operands[1], *path)
        value = op.operands[0]


def may_alias(a: ir.Value, b: ir.Value) -> bool:
    """Whether two shared buffers may overlap.

    Views of different roots (allocations or function arguments) are
    distinct buffers: all shared memory of a kernel comes from
    ``tile.local_alloc``, and distinct buffer arguments are taken as
    distinct. Views of one root are disjoint only when, at some level,
    their ``memdesc_index`` indices are different constants.
    """
    ra, pa = buffer_root(a)
    rb, pb = buffer_root(b)
    if ra != rb:
        return False
    for ia, ib in zip(pa, pb, strict=False):
        ca, cb = _const_int(ia), _const_int(ib)
        if ca is not None and cb is not None and ca != cb:
            return False
    return True


#: Tile ops without memory effects: a fusion run may step over them.
PURE_TILE_OPS = frozenset(
    {
        "tile.warp_id",
        "tile.program_id",
        "tile.make_tensor_descriptor",
        "tile.update_tensor_descriptor",
        "tile.memdesc_index",
        "tile.memdesc_trans",
        "tile.convert_layout",
        "tile.wmma",
    }
)


def is_pure(op: ir.Operation) -> bool:
    """Ops a run may step over: no memory effects, no regions."""
    if len(op.regions):
        return False
    return op.name.startswith("arith.") or op.name in PURE_TILE_OPS


# ---- runs of copies -----------------------------------------------------------------


@dataclass
class Member:
    """A single copy considered for a run, with what fusion needs of it."""

    op: Any
    hint: int | None
    shape: tuple[int, ...]
    layout: Any
    cache: str

    @property
    def dest(self) -> ir.Value:
        return self.op.dest


def member_of(op: Any) -> Member:
    shape, layout = block_of(op.desc)
    return Member(op, op.warp_used_hint, shape, layout, cache_modifier(op))


def fusable_with(group: list[Member], cand: Member, num_warps: int, hints: list[int]) -> bool:
    """Whether ``cand`` can join ``group`` (whose members get ``hints``).

    Same cache modifier, a destination distinct from every member's, and a
    fused op that verifies: same rank, every hint legal, pairwise disjoint.
    """
    if cand.cache != group[0].cache:
        return False
    if any(may_alias(cand.dest, m.dest) for m in group):
        return False
    try:
        check_fused_warp_hints(
            hints,
            num_warps,
            [m.shape for m in [*group, cand]],
            [m.layout for m in [*group, cand]],
        )
    except (WarpHintError, ValueError):
        return False
    return True


def scan_runs(block: ir.Block, is_candidate: Callable[[Any], bool]) -> Iterator[list[Member]]:
    """Maximal runs of candidate copies in ``block``, in program order.

    Between two copies of a run there may only be pure ops (arith, descriptor
    and view ops, ids, register compute) and ``tile.local_load``s of buffers
    that cannot alias the run's destinations so far (fusion moves the earlier
    copies down to the last one). Anything else (a wait, a barrier, another
    kind of copy, a store, an op with regions) ends the run.
    """
    run: list[Member] = []
    for view in block.operations:
        op = view.operation
        if op.name == COPY_OP and is_candidate(view):
            run.append(member_of(view))
            continue
        if not run:
            continue
        if is_pure(op):
            continue
        if op.name == LocalLoadOp.OPERATION_NAME and not any(
            may_alias(op.operands[0], m.dest) for m in run
        ):
            continue
        yield run
        run = []
    if run:
        yield run


def all_blocks(root: ir.Operation) -> Iterator[ir.Block]:
    """Every block under ``root`` (pre-order)."""
    for region in root.regions:
        for block in region.blocks:
            yield block
            for view in block.operations:
                yield from all_blocks(view.operation)


def module_runs(
    module: ir.Operation, is_candidate: Callable[[Any], bool]
) -> Iterator[tuple[list[Member], int]]:
    """Every run of candidate copies under ``module`` (see :func:`scan_runs`)
    with its enclosing ``tile.num_warps``; runs without one are skipped."""
    for block in list(all_blocks(module)):
        for run in scan_runs(block, is_candidate):
            try:
                nw = num_warps_of(run[0].op)
            except LayoutError:
                continue
            yield run, nw


__all__ = [
    "COPY_OP",
    "FUSED_OP",
    "PURE_TILE_OPS",
    "LayoutError",
    "Member",
    "all_blocks",
    "block_of",
    "buffer_root",
    "collect_ops",
    "copy_layout",
    "fusable_with",
    "fused_layouts",
    "is_pure",
    "layout_attr",
    "layout_fields",
    "may_alias",
    "member_of",
    "module_runs",
    "num_warps_of",
    "scan_runs",
    "set_copy_layout",
]
