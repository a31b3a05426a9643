"""Launch bundle kernels on PyTorch tensors, with the calling convention of Triton's launcher.

Triton 3.9.0's CUDA launcher (``triton/backends/nvidia/driver.py`` and its
``driver.c``) passes, in order: every argument that is not a specialized
constexpr, each as its own C type (pointers as 64-bit device addresses, ``i1``
as a 32-bit integer, ``bf16`` as the top half of its fp32 bits), then the
global scratch pointer and the profile scratch pointer, each null unless the
kernel asks for scratch (``grid size x num_ctas x bytes per CTA``, allocated
on the launch stream). The block is ``num_warps x 32`` threads, the dynamic
shared memory the compiled ``shared`` size (opted in with
``cuFuncSetAttribute`` above 48 KiB), and an empty grid launches nothing.
:func:`pack_arguments` reproduces that byte for byte from the bundle's
metadata, so no Triton is needed at run time.

Everything that can go wrong is checked before the launch, because a kernel
run on wrong arguments does not fail, it writes garbage: argument count,
tensor device and element type, integer range, and the divisibility the
kernel was compiled to assume. When the driver can say (CUDA 12.4 and
later), the binary's own parameter sizes are checked against the metadata
when it is loaded.

Only :class:`Kernel` launches need ``torch``; this module imports it then.
"""

from __future__ import annotations

import math
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gemm_opt.runtime import cuda
from gemm_opt.runtime.bundle import (
    SCALAR_TYPES,
    SCRATCH_PARAMS,
    Arg,
    Bundle,
    BundleError,
    BundleKernel,
    read_bundle,
)

#: Element types of pointer arguments and the torch dtype (name) each takes.
TORCH_DTYPES = {
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32",
    "fp64": "float64",
    "i1": "bool",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "fp8e4nv": "float8_e4m3fn",
    "fp8e5": "float8_e5m2",
}
#: Grid limits of a launch (x, y, z).
MAX_GRID = (2**31 - 1, 65535, 65535)


class ArgumentError(TypeError):
    """A launch's arguments do not fit the kernel."""


def _int_range(ty: str) -> tuple[int, int]:
    if ty in ("i1", "u1"):
        return 0, 1
    bits = int(ty[1:])
    if ty[0] == "u":
        return 0, 2**bits - 1
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def _pointer(kernel: BundleKernel, arg: Arg, value: Any) -> tuple[int, int | None]:
    """(address, device index or None) of a pointer argument."""
    where = f"{kernel.name}: argument {arg.name!r} ({arg.type})"
    if isinstance(value, int) and not isinstance(value, bool):
        address, device = value, None
    elif hasattr(value, "data_ptr"):
        dev = getattr(value, "device", None)
        if dev is not None and getattr(dev, "type", "cuda") != "cuda":
            raise ArgumentError(f"{where}: the tensor is on {dev}, not on a CUDA device")
        dtype = getattr(value, "dtype", None)
        want = TORCH_DTYPES.get(arg.type[1:])
        if dtype is not None and want is not None and str(dtype) != f"torch.{want}":
            raise ArgumentError(f"{where}: expected a torch.{want} tensor, got {dtype}")
        address = int(value.data_ptr())
        device = getattr(dev, "index", None)
    else:
        raise ArgumentError(
            f"{where}: expected a tensor or a device address, got {type(value).__name__}"
        )
    if not 0 <= address < 2**64:
        raise ArgumentError(f"{where}: address {address:#x} is not a 64-bit address")
    if address % arg.divisibility:
        raise ArgumentError(
            f"{where}: address {address:#x} is not a multiple of {arg.divisibility} bytes, "
            "which the kernel was compiled to assume"
        )
    return address, device


def _scalar(kernel: BundleKernel, arg: Arg, value: Any) -> bytes:
    where = f"{kernel.name}: argument {arg.name!r} ({arg.type})"
    fmt = SCALAR_TYPES[arg.type]
    if arg.type.startswith(("i", "u")):
        if not isinstance(value, int):
            raise ArgumentError(f"{where}: expected an int, got {type(value).__name__}")
        low, high = _int_range(arg.type)
        if not low <= value <= high:
            raise ArgumentError(f"{where}: {value} does not fit ({low} to {high})")
        if value % arg.divisibility:
            raise ArgumentError(
                f"{where}: {value} is not a multiple of {arg.divisibility}, "
                "which the kernel was compiled to assume"
            )
        return struct.pack(fmt, int(value))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ArgumentError(f"{where}: expected a number, got {type(value).__name__}")
    if arg.type == "bf16":
        bits = struct.unpack("<I", struct.pack("<f", float(value)))[0]
        return struct.pack(fmt, bits >> 16)
    try:
        return struct.pack(fmt, float(value))
    except OverflowError:
        raise ArgumentError(f"{where}: {value} overflows {arg.type}") from None


def pack_arguments(
    kernel: BundleKernel, args: Sequence[Any], scratch: tuple[int, int] = (0, 0)
) -> tuple[list[bytes], int | None]:
    """The kernel's parameters as bytes, in order, and the device the tensors are on.

    ``args`` are all of the kernel's arguments in source order, constexpr ones
    too (each must equal the value it was specialized to); pointers are
    tensors or raw device addresses. ``scratch`` holds the addresses of the
    global and profile scratch buffers (0: none).
    """
    if len(args) != len(kernel.args):
        names = ", ".join(a.name for a in kernel.args)
        raise ArgumentError(
            f"{kernel.name}: expected {len(kernel.args)} arguments ({names}), got {len(args)}"
        )
    params: list[bytes] = []
    devices: set[int] = set()
    for arg, value in zip(kernel.args, args, strict=True):
        if arg.constexpr is not None:
            if value != arg.constexpr:
                raise ArgumentError(
                    f"{kernel.name}: argument {arg.name!r} was specialized to "
                    f"{arg.constexpr!r} at compile time; got {value!r}"
                )
            continue
        if arg.is_pointer:
            address, device = _pointer(kernel, arg, value)
            if device is not None:
                devices.add(device)
            params.append(struct.pack("<Q", address))
        else:
            params.append(_scalar(kernel, arg, value))
    if len(devices) > 1:
        raise ArgumentError(f"{kernel.name}: tensors on several devices: {sorted(devices)}")
    params += [struct.pack("<Q", address) for address in scratch]
    return params, (devices.pop() if devices else None)


def parameter_sizes(kernel: BundleKernel) -> list[int]:
    """Byte size of each kernel parameter, as :func:`pack_arguments` packs it."""
    sizes = [8 if a.is_pointer else struct.calcsize(SCALAR_TYPES[a.type]) for a in kernel.params]
    return sizes + [8] * len(SCRATCH_PARAMS)


def grid_of(kernel: BundleKernel, args: Sequence[Any]) -> tuple[int, int, int]:
    """The launch grid the bundle states, evaluated on the call's arguments."""
    scalars = {
        a.name: v
        for a, v in zip(kernel.args, args, strict=False)
        if not a.is_pointer and isinstance(v, int)
    }
    grid = tuple(d.evaluate(scalars) for d in kernel.grid)
    return grid  # type: ignore[return-value]


@dataclass(frozen=True)
class _Loaded:
    """A binary loaded on one device: its module and kernel function handles."""

    module: Any
    function: Any


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise cuda.DeviceError(
            "launching bundle kernels needs PyTorch (import torch failed)"
        ) from None
    return torch


class Kernel:
    """A bundle kernel, loaded on each device the first time it runs there.

    Call it like the kernel's source: ``kernel(a, b, c, M, N, K, lda, ldb, ldc)``;
    ``grid=`` overrides the bundle's grid, ``stream=`` (a ``torch.cuda.Stream``)
    PyTorch's current stream of the tensors' device.
    """

    def __init__(self, spec: BundleKernel) -> None:
        self.spec = spec
        self._loaded: dict[int, _Loaded] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<gemm_opt.runtime.Kernel {self.spec.name} ({self.spec.sm})>"

    @property
    def name(self) -> str:
        return self.spec.name

    def _function(self, device: int) -> _Loaded:
        fn = self._loaded.get(device)
        if fn is not None:
            return fn
        with self._lock:
            fn = self._loaded.get(device)
            if fn is None:
                fn = self._load(device)
                self._loaded[device] = fn
        return fn

    def _load(self, device: int) -> _Loaded:
        k = self.spec
        drv = cuda.driver()
        if device >= drv.device_count():
            raise cuda.DeviceError(f"{k.name}: no CUDA device {device}")
        cap = drv.capability(device)
        if not k.runs_on(cap):
            raise cuda.DeviceError(
                f"{k.name}: compiled for {k.sm} (target {k.target}); "
                f"CUDA device {device} is sm_{cap[0]}{cap[1]}"
            )
        if k.num_ctas != 1:
            raise cuda.DeviceError(
                f"{k.name}: needs clusters of {k.num_ctas} CTAs, which this launcher does not set"
            )
        drv.make_current(device)
        module = drv.load_module(k.binary)
        fn = drv.function(module, k.symbol)
        sizes = drv.parameter_sizes(fn)
        if sizes is not None and sizes != parameter_sizes(k):
            raise BundleError(
                f"{k.name}: the binary's parameters (sizes {sizes}) do not match its "
                f"arguments in the bundle (sizes {parameter_sizes(k)}: "
                f"{', '.join(a.type for a in k.params)}, then 2 scratch pointers)"
            )
        if k.shared_bytes > cuda.DEFAULT_SHARED_LIMIT:
            limit = drv.device_attribute(cuda.DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device)
            static = drv.function_attribute(fn, cuda.FUNC_SHARED_SIZE_BYTES)
            if k.shared_bytes + static > limit:
                raise cuda.DeviceError(
                    f"{k.name}: needs {k.shared_bytes + static} bytes of shared memory per "
                    f"CTA; CUDA device {device} allows {limit}"
                )
            drv.set_function_attribute(fn, cuda.FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, k.shared_bytes)
        return _Loaded(module, fn)

    def attributes(self, device: int = 0) -> dict[str, int]:
        """Registers, spill bytes and shared memory of the loaded binary on ``device``."""
        fn = self._function(device).function
        drv = cuda.driver()
        return {
            "registers": drv.function_attribute(fn, cuda.FUNC_NUM_REGS),
            "local_bytes": drv.function_attribute(fn, cuda.FUNC_LOCAL_SIZE_BYTES),
            "static_shared_bytes": drv.function_attribute(fn, cuda.FUNC_SHARED_SIZE_BYTES),
            "dynamic_shared_bytes": self.spec.shared_bytes,
            "max_threads": drv.function_attribute(fn, cuda.FUNC_MAX_THREADS_PER_BLOCK),
        }

    def __call__(
        self,
        *args: Any,
        grid: Sequence[int] | None = None,
        stream: Any = None,
    ) -> None:
        torch = _torch()
        k = self.spec
        params, device = pack_arguments(k, args)  # checks before touching the GPU
        if not torch.cuda.is_available():
            raise cuda.DeviceError(f"{k.name}: PyTorch sees no CUDA GPU")
        if device is None:
            device = torch.cuda.current_device()
        launch_grid = tuple(grid) if grid is not None else grid_of(k, args)
        if len(launch_grid) != 3 or any(
            not isinstance(g, int) or not 0 <= g <= m
            for g, m in zip(launch_grid, MAX_GRID, strict=False)
        ):
            raise ArgumentError(f"{k.name}: grid {launch_grid} is not 3 sizes within {MAX_GRID}")
        if math.prod(launch_grid) == 0:
            return
        fn = self._function(device)
        torch_stream = stream if stream is not None else torch.cuda.current_stream(device)
        keep = []
        if k.global_scratch.bytes or k.profile_scratch.bytes:
            scratch = []
            for spec, zero in ((k.global_scratch, False), (k.profile_scratch, True)):
                if not spec.bytes:
                    scratch.append(0)
                    continue
                size = math.prod(launch_grid) * k.num_ctas * spec.bytes + spec.align
                with torch.cuda.stream(torch_stream):
                    make = torch.zeros if zero else torch.empty
                    buf = make(size, dtype=torch.uint8, device=f"cuda:{device}")
                keep.append(buf)
                scratch.append(-(-buf.data_ptr() // spec.align) * spec.align)
            params[-2:] = [struct.pack("<Q", address) for address in scratch]
        drv = cuda.driver()
        drv.make_current(device)
        drv.launch(
            fn.function, launch_grid, k.threads, k.shared_bytes, torch_stream.cuda_stream, params
        )
        del keep  # the caching allocator orders reuse after this launch on the stream


class LoadedBundle:
    """The kernels of a bundle file, launchable by name."""

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle
        self.kernels = {k.name: Kernel(k) for k in bundle}

    def __getitem__(self, name: str) -> Kernel:
        if name not in self.kernels:
            self.bundle[name]  # raises KeyError naming the kernels there are
        return self.kernels[name]

    def __iter__(self):
        return iter(self.kernels.values())

    def __len__(self) -> int:
        return len(self.kernels)


def load_bundle(path: Any) -> LoadedBundle:
    """Read, validate and wrap a bundle file; binaries load on a kernel's first launch."""
    return LoadedBundle(read_bundle(path))
