"""Run ahead-of-time compiled kernels: bundle files and a launcher that needs only PyTorch.

A *bundle* (:mod:`gemm_opt.runtime.bundle`) is one JSON file holding compiled
kernels (cubins) with what it takes to launch each: symbol, warps, shared
memory, scratch, argument list with types and divisibility, grid. It is
written where the compiler runs (:mod:`gemm_opt.runtime.build`, which
imports it) and launched anywhere with an NVIDIA driver and PyTorch::

    from gemm_opt.runtime import load_bundle
    kernels = load_bundle("gemm_cuda90.bundle")
    kernels["gemm_fp16_aligned"](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0))

Importing this package needs only the standard library: no Triton, no MLIR
bindings, no numpy; a launch imports torch and loads ``libcuda.so.1``.
"""

from __future__ import annotations

from gemm_opt.runtime.bundle import (
    FORMAT,
    VERSION,
    Arg,
    Bundle,
    BundleError,
    BundleKernel,
    GridDim,
    Scratch,
    loads,
    read_bundle,
)
from gemm_opt.runtime.cuda import CudaError, DeviceError
from gemm_opt.runtime.launch import (
    ArgumentError,
    Kernel,
    LoadedBundle,
    grid_of,
    load_bundle,
    pack_arguments,
    parameter_sizes,
)

__all__ = [
    "FORMAT",
    "VERSION",
    "Arg",
    "ArgumentError",
    "Bundle",
    "BundleError",
    "BundleKernel",
    "CudaError",
    "DeviceError",
    "GridDim",
    "Kernel",
    "LoadedBundle",
    "Scratch",
    "grid_of",
    "load_bundle",
    "loads",
    "pack_arguments",
    "parameter_sizes",
    "read_bundle",
]
