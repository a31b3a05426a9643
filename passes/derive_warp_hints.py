"""``tile-derive-warp-hints``: split the warps between copies issued together.

Triton leaves unhinted copies on all warps. When two to four copies are
issued back to back (the A and B tiles of a GEMM step), giving each a
disjoint group of warps changes no data but lets ``tile-fuse-tdm-copies``
issue them as one TDM instruction. This pass chooses those hints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from gemm_opt.core.contract import WARP_LAYOUT
from gemm_opt.core.ext_compat import ir
from gemm_opt.core.pass_base import TilePass
from gemm_opt.passes.common import (
    Member,
    fusable_with,
    module_runs,
    set_copy_layout,
)

#: Largest ``tile.num_warps`` the pass derives hints for.
MAX_NUM_WARPS = 16


def contiguous_hints(num_warps: int, size: int) -> list[int] | None:
    """Disjoint hints of contiguous warps for ``size`` copies, or None.

    2 copies: low half, high half. 3: half, third quarter, fourth quarter.
    4: the quarters. Every group pins the top warp-id bits, so it is legal.
    """
    if size == 2 and num_warps >= 2:
        half = (1 << (num_warps // 2)) - 1
        return [half, half << (num_warps // 2)]
    if size in (3, 4) and num_warps >= 4:
        q = num_warps // 4
        quarter = (1 << q) - 1
        if size == 3:
            return [(1 << (2 * q)) - 1, quarter << (2 * q), quarter << (3 * q)]
        return [quarter << (i * q) for i in range(4)]
    return None


def is_derive_candidate(op: Any) -> bool:
    """An unhinted single copy with no mbarrier and no predicate operand."""
    return op.warp_used_hint is None and op.barrier is None and op.pred is None


def _group_fits(group: list[Member], hints: list[int], num_warps: int) -> bool:
    for i in range(1, len(group)):
        if not fusable_with(group[:i], group[i], num_warps, hints[: i + 1]):
            return False
    return True


@dataclass(frozen=True)
class DeriveWarpHintsPass(TilePass):
    """Give runs of unhinted TDM copies disjoint contiguous warp groups.

    Heuristic. A run is what ``tile-fuse-tdm-copies`` could fuse, except that
    its copies have no hint: consecutive ``tile.async_tdm_copy_global_to_local``
    ops in one block with no ``warp_used_hint``, no mbarrier and no ``pred``
    operand, separated only by pure ops and loads of other buffers. Each run
    is cut greedily from its head into groups of ``max-group`` down to
    ``min-group`` copies, and a group's copies get contiguous warp groups:

    * 2 copies: the low and the high half (8 warps: ``0x0F``, ``0xF0``);
    * 3 copies: a half and two quarters (``0x0F``, ``0x30``, ``0xC0``);
    * 4 copies: the quarters (``0x03``, ``0x0C``, ``0x30``, ``0xC0``).

    Contiguous groups spread the descriptor-carrying warps evenly over the
    SIMDs, which measured better than alternating warps (``0x55``/``0xAA``).
    A group is only formed when it would verify as a fused copy: each block is
    large enough for its K warps (and a partitioned destination has K a
    multiple of its pieces), the same rank and cache modifier, distinct
    destinations. Otherwise a smaller group is tried, and a copy no group
    takes keeps all warps. Pairs need ``tile.num_warps >= 2``, groups of 3 or
    4 need ``>= 4``; modules with more than 16 warps are left alone.

    The data a copy writes never depends on its hint, so the pass is always
    safe; it never changes a hint the user wrote (a hinted copy ends a run),
    and a copy's ``tile.warp_layout``, if present, is recomputed.

    Before:

    ```mlir
    "tile.async_tdm_copy_global_to_local"(%da, %a)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_copy_global_to_local"(%db, %b)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!db, !bb) -> ()
    ```

    After (8 warps):

    ```mlir
    "tile.async_tdm_copy_global_to_local"(%da, %a)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32}
      : (!da, !ba) -> ()
    "tile.async_tdm_copy_global_to_local"(%db, %b)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32}
      : (!db, !bb) -> ()
    ```
    """

    name: ClassVar[str] = "tile-derive-warp-hints"

    min_group: int = 2
    """Smallest group of copies to split the warps over (2 to 4)."""

    max_group: int = 4
    """Largest group of copies to split the warps over (2 to 4)."""

    def __post_init__(self) -> None:
        # A bad option is misuse, refused with the pipeline before any input is read.
        if not 2 <= self.min_group <= self.max_group <= 4:
            raise ValueError(
                f"pass '{self.name}': min-group and max-group must satisfy "
                f"2 <= min-group <= max-group <= 4, got {self.min_group} and {self.max_group}"
            )

    def run(self, module: ir.Operation) -> None:
        for run, nw in module_runs(module, is_derive_candidate):
            # Equivalent mutant: and->or, nw - 1 -> nw - 2 (a skip, not a rule:
            # fusable_with's hint check refuses every group of other warp counts).
            if nw <= MAX_NUM_WARPS and nw & (nw - 1) == 0:
                self._assign(run, nw)

    def _assign(self, run: list[Member], num_warps: int) -> None:
        i = 0
        # Equivalent mutant: < -> <= (at the end every slice is short: i += 1).
        while i < len(run):
            for size in range(self.max_group, self.min_group - 1, -1):
                hints = contiguous_hints(num_warps, size)
                group = run[i : i + size]
                if hints is None or len(group) < size or not _group_fits(group, hints, num_warps):
                    continue
                # Equivalent mutant: strict=False (group and hints both have `size` items).
                for m, hint in zip(group, hints, strict=True):
                    _set_hint(m.op, hint)
                i += size
                break
            else:
                i += 1


def _set_hint(op: Any, hint: int) -> None:
    attrs = op.operation.attributes
    i32 = ir.IntegerType.get_signless(32, context=op.operation.context)
    attrs["warp_used_hint"] = ir.IntegerAttr.get(i32, hint)
    if WARP_LAYOUT in attrs:
        set_copy_layout(op)


__all__ = ["MAX_NUM_WARPS", "DeriveWarpHintsPass", "contiguous_hints", "is_derive_candidate"]
