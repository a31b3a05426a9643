"""Model building blocks on gemm-opt's GEMMs: ``Linear`` (a drop-in for
``torch.nn.Linear``) and ``MoE`` (top-k routed SwiGLU experts on the grouped GEMMs,
optionally sharded over a process group).

Needs torch (imported here); the GEMMs run where the tensors are: the bundled
kernels on CUDA, the executable model on CPU (small shapes: it interprets each
program). :mod:`gemm_opt.nn.functional` holds the GEMM calls the modules make,
:mod:`gemm_opt.nn.routing` the router and the token permutation,
:mod:`gemm_opt.nn.expert_parallel` the all-to-all exchange.
"""

from __future__ import annotations

from gemm_opt.nn.linear import Linear
from gemm_opt.nn.moe import MoE

__all__ = ["Linear", "MoE"]
