"""gemm-opt: a research compiler for GPU GEMM kernels.

The package root re-exports the pure-Python public API (no MLIR import):
the warp-hint rule and the per-warp TDM plan; and, loaded on first use, the
GEMM API (``matmul``, ``linear``, ``grouped_matmul``, ``grouped_matmul_variable_k``,
``explain``, ``GemmConfig``: :mod:`gemm_opt.api`; ``quantize_fp8``: :mod:`gemm_opt.quantize`), so
``import gemm_opt`` stays cheap.
"""

from __future__ import annotations

import importlib

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

#: Names loaded on first access (PEP 562), with the module of the API layer holding each.
_LAZY = {
    "GemmConfig": "gemm_opt.api",
    "explain": "gemm_opt.api",
    "fp8_grouped_linear": "gemm_opt.api",
    "fp8_linear": "gemm_opt.api",
    "grouped_matmul": "gemm_opt.api",
    "grouped_matmul_variable_k": "gemm_opt.api",
    "linear": "gemm_opt.api",
    "matmul": "gemm_opt.api",
    "quantize_fp8": "gemm_opt.quantize",
}


def __getattr__(name: str):
    if name in _LAZY:
        # By name: the package root sits below every layer, the API above all of them.
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gemm_opt' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [  # noqa: RUF022 (the lazy names last)
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
    "GemmConfig",
    "explain",
    "fp8_grouped_linear",
    "fp8_linear",
    "grouped_matmul",
    "grouped_matmul_variable_k",
    "linear",
    "matmul",
    "quantize_fp8",
]
