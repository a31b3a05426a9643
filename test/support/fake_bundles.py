"""Bundle kernels without a compiler: metadata of a real spec around a stand-in binary."""

from __future__ import annotations

from gemm_opt.core import schedules as S
from gemm_opt.runtime import Arg, BundleKernel, GridDim


def fake_kernel(spec: S.KernelSpec, payload: bytes = b"\x7fELF cubin") -> BundleKernel:
    """A bundle kernel of ``spec`` (its name and meta as ``build_bundles`` writes them)
    whose binary is ``payload``: for bundle and cache logic, never for launching."""
    import gemm_opt

    return BundleKernel(
        name=spec.name,
        symbol="gemm",
        target="cuda:90",
        sm="sm_90a",
        num_warps=spec.num_warps,
        threads_per_warp=32,
        shared_bytes=0,
        args=(Arg("a", "*fp16", 16), Arg("M", "i32")),
        grid=(GridDim(1), GridDim(1), GridDim(1)),
        binary=payload,
        triton=_triton_version(),
        gemm_opt=gemm_opt.__version__,
        meta={"kind": "schedule", **spec.__dict__},
    )


def _triton_version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        return "none"
