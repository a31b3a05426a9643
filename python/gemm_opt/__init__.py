"""gemm-opt: a research compiler for GPU GEMM kernels.

The package root re-exports the pure-Python public API (no MLIR import):
the warp-hint rule and the per-warp TDM plan.
"""

from __future__ import annotations

from gemm_opt.core.tdm_layout import (
    TdmWarpLayout,
    WarpPlanEntry,
    tdm_warp_layout,
    warp_plan,
)
from gemm_opt.core.warp_hint import (
    WarpHint,
    WarpHintError,
    check_fused_warp_hints,
    check_warp_used_hint,
    legal_hints,
)

__version__ = "0.1.0"

__all__ = [
    "TdmWarpLayout",
    "WarpHint",
    "WarpHintError",
    "WarpPlanEntry",
    "__version__",
    "check_fused_warp_hints",
    "check_warp_used_hint",
    "legal_hints",
    "tdm_warp_layout",
    "warp_plan",
]
