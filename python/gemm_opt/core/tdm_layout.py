"""The per-warp TDM warp layout of a (hinted) global-to-shared copy.

Pure Python, no MLIR. Given a block shape, ``num_warps``, an optional
``warp_used_hint`` and the destination shared layout, this module computes
what each warp of one TDM copy does, matching the gfx1250 lowering of
Triton 3.9.0:

1. ``K`` = popcount(hint), or ``num_warps`` without a hint. The K warps are
   distributed over the block dims (``warp_distribution`` /
   ``partitioned_warp_distribution`` from :mod:`gemm_opt.core.warp_hint`); since
   the post-#11749 rule, surplus warps are not folded into any dim.
2. Each warp moves ``tile[d] = block[d] // warps_per_dim[d]`` elements per dim.
3. The distribution becomes an identity warp layout over the dim order
   ``[0]`` (rank 1), ``[0, 1]`` (rank 2), ``[r-2, r-1, r-3, ..., 0]`` (rank
   >= 3). Its ``A = log2(prod(warps_per_dim))`` rows are placed on warp-id
   bits: on the hint's support bits in ascending order (hinted), or on bits
   ``0..A-1`` (unhinted; bits above are surplus warps). Every other bit is
   *free* and has a zero base.
4. A warp ``w`` is mapped through ``w ^ anchor`` (``anchor`` = lowest active
   warp; 0 without a hint): its start is the sum of the bases of the set bits
   of ``w ^ anchor``, and it is active iff ``((w ^ anchor) & free_mask) == 0``.
   Inactive warps still name a tile (their masked index's) but copy nothing.

Hint legality (including "block too small for K warps") is decided by
:func:`gemm_opt.core.warp_hint.check_warp_used_hint`, which raises
:class:`gemm_opt.core.warp_hint.WarpHintError`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from gemm_opt.core.layouts import PaddedShared, PartitionedShared, SwizzledShared
from gemm_opt.core.warp_hint import (
    WarpHint,
    check_fused_warp_hints,
    check_warp_used_hint,
    partitioned_warp_distribution,
    warp_distribution,
)

SharedLayoutLike = SwizzledShared | PaddedShared | PartitionedShared | None


def tdm_dim_order(rank: int) -> tuple[int, ...]:
    """Order in which block dims take warp-id bits: [0], [0,1], [r-2,r-1,r-3..0]."""
    if rank <= 0:
        raise ValueError(f"rank must be positive, got {rank}")
    if rank == 1:
        return (0,)
    if rank == 2:
        return (0, 1)
    return (rank - 2, rank - 1, *range(rank - 3, -1, -1))


def _log2_exact(n: int, what: str) -> int:
    if n <= 0 or n & (n - 1):
        raise ValueError(f"{what} must be a positive power of two, got {n}")
    return n.bit_length() - 1


@dataclass(frozen=True)
class TdmWarpLayout:
    """How the warps of one TDM copy split its block.

    ``warp_bases[b]`` is the element offset (one entry per dim) that warp-id
    bit ``b`` contributes after the XOR anchor; it is the zero vector for a
    free bit (pinned by the hint, or a surplus warp).
    """

    block_shape: tuple[int, ...]
    num_warps: int
    hint: WarpHint
    warps_per_dim: tuple[int, ...]
    tile: tuple[int, ...]
    warp_bases: tuple[tuple[int, ...], ...]
    dim_order: tuple[int, ...]
    anchor: int
    free_mask: int

    @property
    def rank(self) -> int:
        return len(self.block_shape)

    @property
    def num_active(self) -> int:
        """Warps that copy data: ``prod(warps_per_dim)``."""
        return math.prod(self.warps_per_dim)

    def _check_warp(self, warp: int) -> None:
        if not 0 <= warp < self.num_warps:
            raise ValueError(f"warp {warp} out of range for {self.num_warps} warps")

    def start(self, warp: int) -> tuple[int, ...]:
        """Block-relative start of ``warp``'s tile (XOR-anchored).

        Defined for inactive warps too: the tile their masked index maps to.
        """
        self._check_warp(warp)
        # Equivalent mutant: `warp | self.anchor` (the anchor has bits only where
        # the bases are zero, so XOR and OR agree on every bit that moves the tile).
        x = warp ^ self.anchor
        out = [0] * self.rank
        for b, base in enumerate(self.warp_bases):
            if x >> b & 1:
                for d, v in enumerate(base):
                    out[d] += v
        return tuple(out)

    def active(self, warp: int) -> bool:
        """Whether ``warp`` copies data: ``((w ^ anchor) & free_mask) == 0``."""
        self._check_warp(warp)
        return ((warp ^ self.anchor) & self.free_mask) == 0

    def active_warps(self) -> tuple[int, ...]:
        return tuple(w for w in range(self.num_warps) if self.active(w))


def tdm_warp_layout(
    block_shape: Sequence[int],
    num_warps: int,
    warp_used_hint: int | None = None,
    shared_layout: SharedLayoutLike = None,
) -> TdmWarpLayout:
    """The TDM warp layout Triton 3.9.0 lowers this copy to.

    Raises :class:`~gemm_opt.core.warp_hint.WarpHintError` for an illegal hint,
    including a hint whose K warps cannot all be placed on the block.
    """
    block = tuple(int(s) for s in block_shape)
    if not 1 <= len(block) <= 5:
        raise ValueError(f"TDM copies have rank 1 to 5, got block shape {list(block)}")
    for s in block:
        _log2_exact(s, "block dims")
    hint = check_warp_used_hint(warp_used_hint, num_warps, block, shared_layout)
    total_bits = _log2_exact(num_warps, "num_warps")
    k = hint.k

    if isinstance(shared_layout, PartitionedShared):
        wpd, num_instructions = partitioned_warp_distribution(block, k, shared_layout)
        if num_instructions != 1:
            # Only reachable without a hint (the hinted path requires
            # numLogicalPieces | K): Triton then slices the copy into several
            # TDM instructions, which this one-instruction layout does not model.
            raise ValueError(
                f"a copy of {list(block)} into {shared_layout} with {k} warps "
                f"needs {num_instructions} TDM instructions; only single-instruction "
                "copies are modelled"
            )
    else:
        wpd = warp_distribution(block, k)
    # Equivalent mutant: strict=False (the length test before it short-circuits);
    # or -> and, any -> all: an internal check that no input fails (the distributions
    # above return one whole divisor per dim).
    if len(wpd) != len(block) or any(b % w for b, w in zip(block, wpd, strict=True)):
        raise AssertionError(f"bad warp distribution {wpd} for block {block}")
    tile = tuple(b // w for b, w in zip(block, wpd, strict=True))  # Equivalent mutant: strict.

    order = tdm_dim_order(len(block))
    rows: list[tuple[int, ...]] = []
    for d in order:
        for b in range(_log2_exact(wpd[d], "warps per dim")):
            row = [0] * len(block)
            row[d] = tile[d] << b
            rows.append(tuple(row))
    num_rows = len(rows)

    if hint.explicit:
        # check_warp_used_hint (given the block) rejects K > placed warps
        # (block-too-small), so the rows fill exactly the hint's support bits.
        row_bits = hint.varying_bits
        anchor = hint.anchor
    else:
        row_bits = tuple(range(num_rows))
        anchor = 0

    zero = (0,) * len(block)
    bases = [zero] * total_bits
    # Equivalent mutant: strict=False; the rows fill the hint's support bits exactly.
    for bit, row in zip(row_bits, rows, strict=True):
        bases[bit] = row
    free_mask = 0
    for bit in range(total_bits):
        if bases[bit] == zero:
            free_mask |= 1 << bit

    return TdmWarpLayout(
        block_shape=block,
        num_warps=num_warps,
        hint=hint,
        warps_per_dim=wpd,
        tile=tile,
        warp_bases=tuple(bases),
        dim_order=order,
        anchor=anchor,
        free_mask=free_mask,
    )


# ---------------------------------------------------------------------------
# Per-warp plans
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class WarpPlanEntry:
    """What one warp does in a single TDM copy."""

    warp: int
    active: bool
    start: tuple[int, ...]
    tile: tuple[int, ...]


@dataclass(frozen=True)
class FusedWarpPlanEntry:
    """What one warp does in a fused TDM copy.

    ``member`` is the member whose descriptor the warp issues: the first
    member whose hint contains the warp, else the last member (with
    ``active`` False, i.e. predicate 0).
    """

    warp: int
    member: int
    active: bool
    start: tuple[int, ...]
    tile: tuple[int, ...]


def plan_from_layout(layout: TdmWarpLayout) -> list[WarpPlanEntry]:
    return [
        WarpPlanEntry(w, layout.active(w), layout.start(w), layout.tile)
        for w in range(layout.num_warps)
    ]


def warp_plan(
    block_shape: Sequence[int],
    num_warps: int,
    warp_used_hint: int | None = None,
    shared_layout: SharedLayoutLike = None,
) -> list[WarpPlanEntry]:
    """One entry per warp (``0..num_warps-1``) of a single TDM copy."""
    return plan_from_layout(tdm_warp_layout(block_shape, num_warps, warp_used_hint, shared_layout))


FusedMember = tuple[Sequence[int], int, SharedLayoutLike]


def fused_member_layouts(members: Sequence[FusedMember], num_warps: int) -> list[TdmWarpLayout]:
    """Each member's own layout, after the fused-op hint checks."""
    members = [tuple(m) for m in members]
    check_fused_warp_hints(
        [m[1] for m in members],
        num_warps,
        [tuple(m[0]) for m in members],
        [m[2] if len(m) > 2 else None for m in members],
    )
    return [tdm_warp_layout(m[0], num_warps, m[1], m[2] if len(m) > 2 else None) for m in members]


def select_fused_member(layouts: Sequence[TdmWarpLayout], warp: int) -> int:
    """The member whose descriptor ``warp`` issues (first containing it, else last)."""
    for i, layout in enumerate(layouts):
        if layout.hint.hint >> warp & 1:
            return i
    return len(layouts) - 1


def fused_plan_from_layouts(
    layouts: Sequence[TdmWarpLayout], num_warps: int
) -> list[FusedWarpPlanEntry]:
    out = []
    for w in range(num_warps):
        i = select_fused_member(layouts, w)
        lay = layouts[i]
        out.append(FusedWarpPlanEntry(w, i, lay.active(w), lay.start(w), lay.tile))
    return out


def fused_warp_plan(members: Sequence[FusedMember], num_warps: int) -> list[FusedWarpPlanEntry]:
    """Per-warp selection of a fused copy of ``(block_shape, hint, shared_layout)``.

    Each member is lowered like a standalone hinted copy; a warp issues the
    descriptor of the first member whose hint contains it, or, if none does,
    the last member's descriptor, whose predicate is then 0.
    """
    return fused_plan_from_layouts(fused_member_layouts(members, num_warps), num_warps)


def _fmt_tuple(t: Sequence[int]) -> str:
    return "[" + ", ".join(str(x) for x in t) + "]"


def format_warp_plan(
    entries: Sequence[WarpPlanEntry | FusedWarpPlanEntry],
) -> str:
    """A fixed-width table, one row per warp."""
    fused = any(isinstance(e, FusedWarpPlanEntry) for e in entries)
    header = ["warp", *(["member"] if fused else []), "active", "start", "tile"]
    rows = []
    for e in entries:
        row = [str(e.warp)]
        if fused:
            row.append(str(getattr(e, "member", "")))
        row += ["yes" if e.active else "no", _fmt_tuple(e.start), _fmt_tuple(e.tile)]
        rows.append(row)
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    return "\n".join(line.rstrip() for line in lines)


__all__ = [
    "FusedWarpPlanEntry",
    "TdmWarpLayout",
    "WarpPlanEntry",
    "format_warp_plan",
    "fused_member_layouts",
    "fused_warp_plan",
    "select_fused_member",
    "tdm_dim_order",
    "tdm_warp_layout",
    "warp_plan",
]
