"""The IR contract: names of the attributes the dialect, passes, lowering and
model agree on. Every module spells them through these constants.
"""

from __future__ import annotations

# ---- on the module (or any enclosing op) ----
#: Warps per program (i32).
NUM_WARPS = "tile.num_warps"
#: Threads per warp (i32); must equal the target's warp size.
THREADS_PER_WARP = "tile.threads_per_warp"
#: Target short name (string), a key of :data:`gemm_opt.core.targets.TARGETS`.
TARGET = "tile.target"

# ---- on function arguments ----
#: Divisibility fact of a pointer or integer argument (tile's spelling, and Triton's).
DIVISIBILITY = "tile.divisibility"
TRITON_DIVISIBILITY = "tt.divisibility"

# ---- on tile.wmma ----
#: 8-bit MMAs only (i32, a multiple of 32): K elements whose products the tensor
#: core may sum in its own accumulator, narrower than fp32, before each add into
#: the fp32 one (cuda:90 wgmma's ``maxNumImpreciseAcc``); absent: one
#: instruction's K (32), so every instruction's sum is added in fp32.
IMPRECISE_ACC = "tile.imprecise_acc"

# ---- on TDM copies ----
#: The optional i32 warp mask of a single copy (bit n = warp n takes part).
WARP_USED_HINT = "warp_used_hint"
#: The per-member warp masks of a fused copy (``array<i32: ...>``).
WARP_USED_HINTS = "warp_used_hints"
#: A single copy's ``#tile.tdm_warp_layout`` (set by tile-assign-tdm-warp-layout).
WARP_LAYOUT = "tile.warp_layout"
#: A fused copy's layouts, one per member.
WARP_LAYOUTS = "tile.warp_layouts"
#: Unit attribute: the copy's ``pred`` already carries its warp predicate.
WARP_PREDICATED = "tile.warp_predicated"

__all__ = [
    "DIVISIBILITY",
    "IMPRECISE_ACC",
    "NUM_WARPS",
    "TARGET",
    "THREADS_PER_WARP",
    "TRITON_DIVISIBILITY",
    "WARP_LAYOUT",
    "WARP_LAYOUTS",
    "WARP_PREDICATED",
    "WARP_USED_HINT",
    "WARP_USED_HINTS",
]
