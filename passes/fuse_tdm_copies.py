"""``tile-fuse-tdm-copies``: issue runs of hinted TDM copies as one instruction.

Two hinted copies whose warp sets are disjoint (A by warps 0-3, B by warps
4-7) cost every warp two TDM instructions, one of them with predicate 0.
``tile.async_tdm_fused_copy_global_to_local`` issues both with one: each
warp carries the descriptor of the member whose hint selects it. This pass
finds such runs, fuses them, and rewrites the ``tile.async_tdm_wait`` counts
the change in instruction count would otherwise break.

The run scanner (:func:`~gemm_opt.passes.common.module_runs`) and the fusion
check (:func:`~gemm_opt.passes.common.fusable_with`) live in
:mod:`gemm_opt.passes.common`, shared with ``tile-derive-warp-hints``, so that
the hints it derives are exactly the ones this pass can fuse.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from gemm_opt.core.contract import WARP_LAYOUT, WARP_LAYOUTS
from gemm_opt.core.ext_compat import ir
from gemm_opt.core.pass_base import TilePass
from gemm_opt.dialect.tile import AsyncTDMFusedCopyGlobalToLocalOp, AsyncTDMWaitOp
from gemm_opt.passes.common import (
    COPY_OP,
    FUSED_OP,
    Member,
    collect_ops,
    fusable_with,
    module_runs,
)

WAIT_OP = AsyncTDMWaitOp.OPERATION_NAME

#: Most paths the wait analysis follows before it gives up (and waits for all).
MAX_PATHS = 64


# ---- runs of copies -----------------------------------------------------------------


def is_fusion_candidate(op: Any) -> bool:
    """A hinted single copy with no mbarrier and no predicate operand."""
    return op.warp_used_hint is not None and op.barrier is None and op.pred is None


def split_run(run: list[Member], num_warps: int, max_members: int) -> list[list[Member]]:
    """Greedy groups from the run head: the longest fusable prefix, up to
    ``max_members``; a member that does not fit starts the next group."""
    groups: list[list[Member]] = []
    cur: list[Member] = []
    for m in run:
        if (
            cur
            and len(cur) < max_members
            and fusable_with(cur, m, num_warps, [c.hint for c in cur] + [m.hint])
        ):
            cur.append(m)
            continue
        if len(cur) >= 2:
            groups.append(cur)
        cur = [m]
    if len(cur) >= 2:
        groups.append(cur)
    return groups


# ---- wait counts --------------------------------------------------------------------


@dataclass(frozen=True)
class _Path:
    """TDM instructions before a wait, most recent first, and how the walk ended:
    ``complete`` (nothing earlier is in flight), ``enough`` (budget reached) or
    ``opaque`` (control flow the analysis does not follow)."""

    items: tuple[ir.Operation, ...]
    end: str


class _TooComplex(Exception):
    pass


def _contains_tdm(op: ir.Operation) -> bool:
    found = False

    def visit(inner: ir.Operation) -> ir.WalkResult:
        nonlocal found
        if inner.name in (COPY_OP, FUSED_OP):
            found = True
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return found


def _index_in_block(op: ir.Operation) -> int:
    for i, view in enumerate(op.block.operations):
        if view.operation == op:
            return i
    raise AssertionError("op not found in its block")


def backward_paths(wait: ir.Operation, budget: int) -> list[_Path]:
    """Every way execution can reach ``wait``, as the TDM instructions issued
    before it (up to ``budget``), most recent first.

    Walks the wait's block backwards. At the start of an ``scf.for`` body the
    path forks: into the previous iteration's tail (the body again, from its
    end) and into the code before the loop. At the start of an ``scf.if``
    branch it continues before the ``scf.if``; at a function entry, or at a
    ``tile.async_tdm_wait {num = 0}``, it is complete. An op with regions that
    contains TDM copies, or any other region owner, makes the path opaque.
    """
    paths: list[_Path] = []

    def go(block: ir.Block, end: int, items: tuple[ir.Operation, ...], seen: frozenset) -> None:
        if len(paths) > MAX_PATHS:
            raise _TooComplex
        ops = [v.operation for v in block.operations]
        # Equivalent mutant: stop -1->-2 (k = -1 is the block's terminator, a
        # yield or return: no copy, no wait, no region).
        for k in range(end - 1, -1, -1):
            if len(items) >= budget:
                paths.append(_Path(items, "enough"))
                return
            op = ops[k]
            if op.name in (COPY_OP, FUSED_OP):
                items = (*items, op)
            elif op.name == WAIT_OP and ir.IntegerAttr(op.attributes["num"]).value == 0:
                paths.append(_Path(items, "complete"))
                return
            elif len(op.regions) and _contains_tdm(op):
                paths.append(_Path(items, "opaque"))
                return
        if len(items) >= budget:
            paths.append(_Path(items, "enough"))
            return
        parent = block.owner
        name = parent.operation.name if parent is not None else ""
        if name == "func.func":
            paths.append(_Path(items, "complete"))
        elif name == "scf.for":
            outer = parent.operation
            state = (outer, len(items))
            # A body that issues nothing adds no instructions per iteration:
            # going round again is the same as the entry path.
            if state not in seen:
                go(block, len(ops), items, seen | {state})
            go(outer.block, _index_in_block(outer), items, seen)
        elif name == "scf.if":
            outer = parent.operation
            go(outer.block, _index_in_block(outer), items, seen)
        else:
            paths.append(_Path(items, "opaque"))

    go(wait.block, _index_in_block(wait), (), frozenset())
    return paths


def _fused_count(path: _Path, num: int, group_size: dict[ir.Operation, int]) -> int:
    """Instructions after fusion among the ``num`` most recent of ``path``,
    counting a fused group only when all its members are among them."""
    count = 0
    j = 0
    limit = min(num, len(path.items))
    while j < limit:
        size = group_size.get(path.items[j], 1)
        if j + size > num:
            return count  # the group straddles the window: wait for all of it
        count += 1
        j += size
    return count


def adjusted_wait(wait: ir.Operation, group_size: dict[ir.Operation, int]) -> int:
    """The new ``num`` of ``wait`` once the groups in ``group_size`` are fused.

    ``num = N`` lets the N most recent TDM instructions stay in flight; the
    result lets the most recent fused-program instructions stay in flight only
    while every copy they cover was among those N, on every path to the wait.
    Waiting for more than before is safe (less overlap); for less never is.
    """
    num = ir.IntegerAttr(wait.attributes["num"]).value
    if num == 0:
        return 0
    try:
        paths = backward_paths(wait, num + 4)
    except _TooComplex:
        return 0
    return min(_fused_count(p, num, group_size) for p in paths)


# ---- the pass ------------------------------------------------------------------------


def build_fused(group: list[Member]) -> Any:
    """Create the fused op for ``group`` at its last member; erase the members."""
    last = group[-1].op
    ctx = last.operation.context
    kwargs: dict[str, Any] = {}
    for i, m in enumerate(group):
        kwargs[f"desc{i}"] = m.op.desc
        kwargs[f"dest{i}"] = m.op.dest
    loc = ir.Location.fused([m.op.location for m in group], context=ctx)
    fused = AsyncTDMFusedCopyGlobalToLocalOp(**kwargs, loc=loc, ip=ir.InsertionPoint(last))
    attrs = fused.operation.attributes
    attrs["warp_used_hints"] = ir.DenseI32ArrayAttr.get([m.hint for m in group], context=ctx)
    # Equivalent mutant: 0->1 (a group's members share one cache modifier: fusable_with).
    cache = group[0].cache
    if cache:
        attrs["cache"] = ir.StringAttr.get(cache, context=ctx)
    layouts = [m.op.operation.attributes for m in group]
    if all(WARP_LAYOUT in a for a in layouts):
        attrs[WARP_LAYOUTS] = ir.ArrayAttr.get([a[WARP_LAYOUT] for a in layouts], context=ctx)
    for m in group:
        m.op.operation.erase()
    return fused


@dataclass(frozen=True)
class FuseTdmCopiesPass(TilePass):
    """Fuse runs of 2 to 4 hinted TDM copies into one fused copy.

    A run is a sequence of ``tile.async_tdm_copy_global_to_local`` ops in one
    block that

    * all carry a ``warp_used_hint`` (unhinted copies keep all warps busy;
      ``tile-derive-warp-hints`` can give them hints first);
    * have no mbarrier (the fused op completes through waits only) and no
      ``pred`` operand (the fused op has none; a predicate must already be on
      the member's descriptor, via ``tile.update_tensor_descriptor``);
    * have pairwise-disjoint hints, the same rank and the same cache modifier,
      and pairwise-distinct destinations (one instruction writing one buffer
      twice has no defined order);
    * are separated only by pure ops (arith, descriptor and view ops, ids,
      register compute) and by ``tile.local_load``s of other buffers. A wait,
      a load of a member's destination, another kind of copy or any other
      side-effecting op ends the run.

    Partitioned destinations are allowed: a hinted partitioned copy is already
    one instruction (its K is a multiple of the pieces), and each fused member
    is lowered as that standalone copy.

    Grouping is greedy from the head of a run: the longest prefix that still
    verifies as a fused op, up to ``max-members``; the next copy starts the
    next group (5 disjoint copies become 4 + 1). The fused op is inserted at
    the last member, so every operand dominates it, and takes the members'
    ``tile.warp_layout``s as ``tile.warp_layouts``.

    **Wait counts.** ``tile.async_tdm_wait {num = N}`` lets the N most recent
    TDM instructions of the warp stay in flight; a fused group of k copies is
    one instruction, so N must change. For each wait the pass lists the TDM
    instructions that can precede it, most recent first, on every path: back
    through its block, then, in an ``scf.for`` body, both through the previous
    iteration's tail and through the code before the loop (an ``scf.if``
    branch continues before the ``scf.if``; a function entry or a
    ``num = 0`` wait ends the path). Walking the N most recent old
    instructions, a copy or an existing fused op counts 1 and a new group
    counts 1 when all its members are among the N; the first group that
    straddles the boundary stops the count, so the program waits for the whole
    group: every copy that was awaited still is, and some others may be too.
    The new N is the minimum over paths (unfollowable control flow ends a path
    conservatively; too many paths give ``num = 0``). The pipelined GEMM's
    ``wait {num = 2}`` after the next tile's A and B copies becomes
    ``num = 1``.

    Before:

    ```mlir
    "tile.async_tdm_copy_global_to_local"(%da, %a)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32}
      : (!da, !ba) -> ()
    "tile.async_tdm_copy_global_to_local"(%db, %b)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32}
      : (!db, !bb) -> ()
    "tile.async_tdm_wait"() {num = 2 : i32} : () -> ()
    ```

    After:

    ```mlir
    "tile.async_tdm_fused_copy_global_to_local"(%da, %db, %a, %b)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>,
         warp_used_hints = array<i32: 15, 240>} : (!da, !db, !ba, !bb) -> ()
    "tile.async_tdm_wait"() {num = 1 : i32} : () -> ()
    ```
    """

    name: ClassVar[str] = "tile-fuse-tdm-copies"

    max_members: int = 4
    """Largest group to form (2 to 4)."""

    def __post_init__(self) -> None:
        # A bad option is misuse, refused with the pipeline before any input is read.
        if not 2 <= self.max_members <= 4:
            raise ValueError(
                f"pass '{self.name}': max-members must be 2, 3 or 4, got {self.max_members}"
            )

    def run(self, module: ir.Operation) -> None:
        groups = [
            group
            for run, nw in module_runs(module, is_fusion_candidate)
            for group in split_run(run, nw, self.max_members)
        ]
        if not groups:
            return
        group_size = {m.op.operation: len(g) for g in groups for m in g}
        waits = [view.operation for view in collect_ops(module, (WAIT_OP,))]
        new_nums = [(w, adjusted_wait(w, group_size)) for w in waits]
        for group in groups:
            build_fused(group)
        for w, num in new_nums:
            old = ir.IntegerAttr(w.attributes["num"])
            if old.value != num:
                w.attributes["num"] = ir.IntegerAttr.get(old.type, num)


__all__ = [
    "MAX_PATHS",
    "FuseTdmCopiesPass",
    "adjusted_wait",
    "backward_paths",
    "build_fused",
    "is_fusion_candidate",
    "split_run",
]
