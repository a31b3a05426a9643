"""Bundle kernels without a compiler: metadata of a real spec around a stand-in binary,
and the CUDA pieces a launch touches (driver, device tensors), recorded instead of run.

:func:`fake_kernel` is for bundle and cache logic; :func:`launch_kernel` has the
spec's real arguments and divisibility facts, for the launch path
(:func:`write_store` bundles several, :class:`RecordingDriver` takes the launches,
:class:`DeviceTensor` stands for a CUDA tensor). ``benchmarks/host_overhead.py``
times the launch path on these.
"""

from __future__ import annotations

import ctypes
import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gemm_opt.core import schedules as S
from gemm_opt.runtime import Arg, Bundle, BundleKernel, GridDim


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
        meta={"kind": "schedule", **dataclasses.asdict(spec)},
    )


def _triton_version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        return "none"


#: A pointer argument's pointee, by name (the element type of a, b and c is the spec's).
_POINTEES = {"group_lens": "i32", "sync": "i32", "partials": "fp32"}


def launch_kernel(spec: S.KernelSpec) -> BundleKernel:
    """A bundle kernel of ``spec`` with the arguments and divisibility facts its real
    kernel has (:attr:`~gemm_opt.core.schedules.KernelSpec.facts`) around a stand-in
    binary, which :class:`RecordingDriver` "loads"."""
    facts = spec.facts
    args = tuple(
        Arg(n, "*" + (spec.dtype if n in "abc" else _POINTEES[n]), 16)
        if n in ("a", "b", "c", *_POINTEES)
        else Arg(n, "i32", facts.get(n, 1))
        for n in spec.arg_names
    )
    return dataclasses.replace(
        fake_kernel(spec, b"\x7fELF" + bytes(60)),
        args=args,
        grid=(GridDim(), GridDim(), GridDim()),
        meta={"grid": "tiles"},
    )


def write_store(root: Path, specs: Iterable[S.KernelSpec]) -> Any:
    """A cuda:90 kernel store at ``root`` holding :func:`launch_kernel` of each spec."""
    from gemm_opt.runtime import gemm as rt

    (root / "cuda90").mkdir(parents=True, exist_ok=True)
    Bundle(tuple(launch_kernel(s) for s in specs)).write(root / "cuda90" / "schedules.bundle")
    return rt.KernelStore("cuda:90", root)


class RecordingDriver:
    """The driver calls of a launch, recorded instead of run: each launch's grid and its
    parameter bytes (8 from each parameter's address; cut them to the sizes)."""

    def __init__(self) -> None:
        self.grids: list[tuple[int, int, int]] = []
        self.params: list[list[bytes]] = []

    def device_count(self) -> int:
        return 1

    def capability(self, ordinal: int) -> tuple[int, int]:
        return (9, 0)

    def make_current(self, ordinal: int) -> None:
        pass

    def load_module(self, image: bytes) -> object:
        return object()

    def function(self, module: object, symbol: str) -> object:
        return object()

    def parameter_sizes(self, fn: object) -> None:
        return None

    def resident_blocks(self, fn: object, threads: int, shared_bytes: int) -> int:
        return 1

    def launch_packed(self, fn, gx, gy, gz, threads, shared, stream, pointers) -> None:
        self.grids.append((gx, gy, gz))
        self.params.append([ctypes.string_at(p, 8) for p in pointers])


class DeviceTensor:
    """What the launch path reads of a CUDA tensor: device, dtype and address (and a
    count of the zeroings it asked for)."""

    def __init__(self, address: int, dtype: Any = None) -> None:
        import torch

        self.device = torch.device("cuda", 0)
        self.dtype = dtype or torch.float16
        self.address = address
        self.zeroed = 0

    def data_ptr(self) -> int:
        return self.address

    def zero_(self) -> DeviceTensor:
        self.zeroed += 1
        return self
