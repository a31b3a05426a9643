"""The bundle launcher's rules past the argument checks (found by ``benchmarks/mutation.py``
in ``gemm_opt.runtime.launch``): the host TMA descriptors and their cache, the parameter
block's layout, loading a binary (device count, parameter sizes, shared memory), and a
launch's device, grid, scratch buffers and stream.

No GPU is needed: :class:`Driver` records the driver calls (the launches with their
parameter bytes, the descriptors it is asked to encode) and :class:`FakeTorch` stands
for what a launch uses of PyTorch on a machine with one (its CUDA device, streams and
the caching allocator), as ``launch._torch`` hands it over.
"""

from __future__ import annotations

import contextlib
import ctypes
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from support.fake_bundles import DeviceTensor, RecordingDriver

from gemm_opt.core.targets import MAX_GRID
from gemm_opt.runtime import (
    Arg,
    ArgumentError,
    Bundle,
    BundleError,
    BundleKernel,
    DeviceError,
    GridDim,
    Kernel,
    LoadedBundle,
    Scratch,
    cuda,
    grid_of,
    pack_arguments,
)
from gemm_opt.runtime import launch as L
from gemm_opt.runtime.bundle import TensorMap

ELF = b"\x7fELF" + bytes(60)
ONE = (GridDim(), GridDim(), GridDim())
ONE_ARG = (Arg("a", "*fp16", 16),)
#: An H100's opt-in shared memory per block.
OPTIN = 232448


def kernel(args: tuple[Arg, ...], **changes: Any) -> BundleKernel:
    fields: dict[str, Any] = {
        "name": "k",
        "symbol": "k",
        "target": "cuda:90",
        "sm": "sm_90a",
        "num_warps": 4,
        "threads_per_warp": 32,
        "shared_bytes": 1024,
        "args": args,
        "grid": ONE,
        "binary": ELF,
    }
    return BundleKernel(**{**fields, **changes})


#: Two host descriptors: A's sized by arguments (one a constexpr, which is no
#: parameter), B's partly by constants.
TMA = kernel(
    (
        Arg("a", "*fp16", 16),
        Arg("BLOCK", "i32", constexpr=64),
        Arg("M", "i32"),
        Arg("K", "i32", 16),
        Arg("lda", "i64", 16),
        Arg("b", "*fp16", 16),
    ),
    tensormaps=(
        TensorMap("a", ("M", "K"), ("lda", 1), (128, 64), 3, 2, 6),
        TensorMap("b", ("K", "BLOCK"), (64, 1), (64, 64), 2, 2, 6),
    ),
)


def blob(address, dtype, elem_bytes, shape, strides, block, swizzle) -> bytes:
    """The stand-in of an encoded descriptor: 128 bytes that tell every input apart."""
    fields = (address, dtype, elem_bytes, *shape, *strides, *block, swizzle)
    return struct.pack(f"<Q{len(fields) - 1}q", *fields).ljust(128, b"\xee")


class Driver(RecordingDriver):
    """A driver of ``devices`` sm_90 GPUs that records what a launch asks of it."""

    def __init__(self, devices: int = 1) -> None:
        super().__init__()
        self.devices = devices
        self.sizes: list[int] | None = None  # read each launch parameter at these sizes
        self.binary_sizes: list[int] | None = None  # what the binary says (None: old driver)
        self.static_shared = 0
        self.current: list[int] = []
        self.encoded: list[tuple] = []
        self.set_attributes: list[tuple[int, int]] = []
        self.asked: list[int] = []  # device attributes read
        self.unloaded = 0
        self.streams: list[int] = []

    def device_count(self) -> int:
        return self.devices

    def make_current(self, ordinal: int) -> None:
        self.current.append(ordinal)

    def parameter_sizes(self, fn: object) -> list[int] | None:
        return self.binary_sizes

    def unload_module(self, module: object) -> None:
        self.unloaded += 1

    def device_attribute(self, attribute: int, ordinal: int) -> int:
        self.asked.append(attribute)
        assert attribute == cuda.DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
        return OPTIN

    def function_attribute(self, fn: object, attribute: int) -> int:
        return self.static_shared if attribute == cuda.FUNC_SHARED_SIZE_BYTES else 7

    def set_function_attribute(self, fn: object, attribute: int, value: int) -> None:
        self.set_attributes.append((attribute, value))

    def encode_tensormap(self, address, dtype, elem_bytes, shape, strides, block, swizzle):
        call = (address, dtype, elem_bytes, shape, strides, block, swizzle)
        self.encoded.append(call)
        return blob(*call)

    def launch_packed(self, fn, gx, gy, gz, threads, shared, stream, pointers) -> None:
        sizes = self.sizes or [8] * len(pointers)
        self.grids.append((gx, gy, gz))
        self.params.append([ctypes.string_at(p, n) for p, n in zip(pointers, sizes, strict=True)])
        self.streams.append(stream)


class FakeTorch:
    """What a launch uses of ``torch`` on a machine with CUDA devices: the current
    device, streams (a raw handle from ``torch._C`` where ``raw`` says it is there) and
    the allocator, whose buffers start one byte past ``0x10000 x (n + 1)``."""

    def __init__(self, current: int = 0, raw: bool = True) -> None:
        self.allocations: list[tuple[str, int, Any, Any, Any]] = []
        self.stream_now: Any = None
        self.cuda = SimpleNamespace(
            is_available=lambda: True,
            current_device=lambda: current,
            stream=self._stream,
            current_stream=lambda d: SimpleNamespace(cuda_stream=2000 + d),
        )
        self._C = SimpleNamespace()
        if raw:
            self._C._cuda_getCurrentRawStream = lambda d: 1000 + d

    def __getattr__(self, name: str) -> Any:
        return getattr(torch, name)  # dtypes and torch.device

    @contextlib.contextmanager
    def _stream(self, stream: Any) -> Iterator[None]:
        before, self.stream_now = self.stream_now, stream
        try:
            yield
        finally:
            self.stream_now = before

    def _allocate(self, how: str, size: int, dtype: Any, device: Any) -> DeviceTensor:
        self.allocations.append((how, size, dtype, device, self.stream_now))
        return DeviceTensor(0x10000 * len(self.allocations) + 1)

    def empty(self, size: int, *, dtype: Any, device: Any) -> DeviceTensor:
        return self._allocate("empty", size, dtype, device)

    def zeros(self, size: int, *, dtype: Any, device: Any) -> DeviceTensor:
        return self._allocate("zeros", size, dtype, device)


@dataclass
class Gpu:
    driver: Driver
    torch: FakeTorch

    def kernel(self, spec: BundleKernel) -> Kernel:
        self.driver.sizes = L.parameter_sizes(spec)
        return Kernel(spec)


@pytest.fixture
def gpu(monkeypatch: pytest.MonkeyPatch) -> Gpu:
    g = Gpu(Driver(devices=3), FakeTorch())
    monkeypatch.setattr(cuda, "driver", lambda: g.driver)
    monkeypatch.setattr(L, "_torch", lambda: g.torch)
    return g


def _on(device: int, address: int) -> DeviceTensor:
    t = DeviceTensor(address)
    t.device = torch.device("cuda", device)
    return t


def re_escape(value: Any) -> str:
    return re.escape(str(value))


# -- host descriptors --


@pytest.mark.parametrize(("m", "extent"), [(0, 1), (1, 1), (1000, 1000)])
def test_host_descriptors_follow_the_arguments(gpu: Gpu, m: int, extent: int) -> None:
    """Each descriptor is encoded from its tensor's address and the call's sizes (a
    zero extent as 1, which the driver takes), then passed with its true shape as
    i32s and strides as i64s, after the arguments and before the scratch pointers."""
    a = _on(0, 0x7F00_0000_0000)
    args = (a, 64, m, 256, 320, 0x7F00_0010_0000)
    params, device = pack_arguments(TMA, args, scratch=(0x100, 0x200))
    maps = gpu.driver.encoded
    assert maps == [
        (0x7F00_0000_0000, 6, 2, [extent, 256], [320, 1], [128, 64], 3),
        (0x7F00_0010_0000, 6, 2, [256, 64], [64, 1], [64, 64], 2),
    ]
    blobs = [blob(*call) for call in maps]
    assert params == [
        struct.pack("<Q", 0x7F00_0000_0000),
        struct.pack("<i", m),
        struct.pack("<i", 256),
        struct.pack("<q", 320),
        struct.pack("<Q", 0x7F00_0010_0000),
        blobs[0],
        *[struct.pack("<i", d) for d in (m, 256)],
        *[struct.pack("<q", d) for d in (320, 1)],
        blobs[1],
        *[struct.pack("<i", d) for d in (256, 64)],
        *[struct.pack("<q", d) for d in (64, 1)],
        struct.pack("<Q", 0x100),
        struct.pack("<Q", 0x200),
    ]
    assert device == 0
    assert gpu.kernel(TMA).pack(args, scratch=(0x100, 0x200)) == params  # the fast path


def test_a_launch_passes_the_host_descriptors(gpu: Gpu) -> None:
    args = (_on(1, 0x10000), 64, 100, 64, 64, _on(1, 0x20000))
    gpu.kernel(TMA)(*args)
    assert gpu.driver.params == [pack_arguments(TMA, args)[0]]


def test_descriptors_are_encoded_once_per_address_shape_and_strides(gpu: Gpu) -> None:
    """Up to TENSORMAP_CACHE encodings per descriptor are kept; one more starts over."""
    k = gpu.kernel(TMA)

    def call(address: int, m: int = 100) -> None:
        k.pack((address, 64, m, 64, 64, 0x20000))

    def encodings_of_a() -> int:
        return sum(1 for e in gpu.driver.encoded if e[-1] == 3)

    addresses = [0x100000 + 16 * i for i in range(L.TENSORMAP_CACHE + 1)]
    call(addresses[0])
    call(addresses[0])
    assert encodings_of_a() == 1 and len(gpu.driver.encoded) == 2  # B's once too
    call(addresses[0], m=101)  # another shape: another encoding
    assert encodings_of_a() == 2
    for address in addresses[1 : L.TENSORMAP_CACHE - 1]:
        call(address)
    assert encodings_of_a() == L.TENSORMAP_CACHE  # full now
    call(addresses[0])
    call(addresses[1])
    assert encodings_of_a() == L.TENSORMAP_CACHE  # all kept
    call(addresses[-1])  # one more: the cache starts over with it
    assert encodings_of_a() == L.TENSORMAP_CACHE + 1
    call(addresses[-1])
    call(addresses[1])
    assert encodings_of_a() == L.TENSORMAP_CACHE + 2


def test_parameters_sit_at_their_natural_alignment() -> None:
    """Pointers and i64s at 8 bytes, i32s at 4, a CUtensorMap at 64, each at the first
    such offset after the one before (the block the launch passes pointers into)."""
    _, block, offsets, sizes = L._plan(TMA)
    assert sizes == [8, 4, 4, 8, 8, 128, 4, 4, 8, 8, 128, 4, 4, 8, 8, 8, 8]
    assert offsets == [0, 8, 12, 16, 24, 64, 192, 196, 200, 208, 256, 384, 388, 392, 400, 408, 416]
    assert block.size == 424


# -- argument checks --


@pytest.mark.parametrize(("address", "fits"), [(2**64 - 16, True), (2**64, False)])
def test_an_address_must_fit_64_bits(address: int, fits: bool) -> None:
    k = kernel(ONE_ARG)
    assert Kernel(k).accepts(address) is fits
    if fits:
        assert pack_arguments(k, (address,))[0][0] == struct.pack("<Q", address)
    else:
        with pytest.raises(ArgumentError, match=r"'a' \(\*fp16\): address 0x1(0){16} is not a"):
            pack_arguments(k, (address,))


@pytest.mark.parametrize("has", [("data_ptr",), ("data_ptr", "device"), ("device", "dtype")])
def test_a_pointer_is_a_tensor_only_with_an_address_device_and_dtype(has) -> None:
    full = {
        "data_ptr": lambda: 0x1000,
        "device": torch.device("cuda", 0),
        "dtype": torch.float16,
    }
    value = SimpleNamespace(**{name: full[name] for name in has})
    k = kernel(ONE_ARG)
    with pytest.raises(
        ArgumentError,
        match=r"^k: argument 'a' \(\*fp16\): expected a CUDA tensor or a device address, "
        r"got SimpleNamespace$",
    ):
        pack_arguments(k, (value,))
    assert not Kernel(k).accepts(value)


@pytest.mark.parametrize("ty", ["fp32", "bf16", "fp16", "fp64"])
@pytest.mark.parametrize(("value", "got"), [(True, "bool"), ("1.0", "str")])
def test_a_float_argument_takes_numbers_not_bools_or_text(ty: str, value: Any, got: str) -> None:
    k = kernel((Arg("x", ty),))
    with pytest.raises(ArgumentError, match=rf"'x' \({ty}\): expected a number, got {got}$"):
        pack_arguments(k, (value,))
    assert not Kernel(k).accepts(value)
    assert Kernel(k).accepts(1) and Kernel(k).accepts(1.5)


def test_tensors_on_two_devices_are_refused() -> None:
    k = kernel((Arg("a", "*fp16", 16), Arg("b", "*fp16", 16)))
    with pytest.raises(ArgumentError, match=r"^k: tensors on several devices: \[0, 1\]$"):
        pack_arguments(k, (_on(0, 0x1000), _on(1, 0x2000)))
    assert not Kernel(k).accepts(_on(0, 0x1000), _on(1, 0x2000))
    assert pack_arguments(k, (_on(1, 0x1000), _on(1, 0x2000)))[1] == 1


def test_the_grid_may_follow_the_first_argument() -> None:
    k = kernel((Arg("M", "i32"), Arg("N", "i32")), grid=(GridDim(arg="M", block=128), *ONE[1:]))
    assert Kernel(k).launch_grid((1000, 5)) == grid_of(k, (1000, 5)) == (8, 1, 1)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((1000.0, 5), r"argument 'M' sizes the grid: expected an int, got float"),
        (("1000", 5), r"argument 'M' sizes the grid: expected an int, got str"),
        ((1000,), r"expected 2 arguments \(M, N\), got 1"),
        ((1000, 5, 6), r"expected 2 arguments \(M, N\), got 3"),
    ],
)
def test_the_grid_of_arguments_a_launch_refuses_is_an_argument_error(args, message: str) -> None:
    k = kernel((Arg("M", "i32"), Arg("N", "i32")), grid=(GridDim(arg="M", block=128), *ONE[1:]))
    with pytest.raises(ArgumentError, match=rf"^k: {message}$"):
        grid_of(k, args)
    assert grid_of(k, (True, 5.0)) == (1, 1, 1)  # N sizes nothing; a bool is an int


# -- loading --


def test_a_device_past_the_last_is_refused(gpu: Gpu) -> None:
    k = gpu.kernel(kernel(ONE_ARG))
    with pytest.raises(DeviceError, match=r"^k: no CUDA device 3$"):
        k.attributes(3)
    assert k.attributes(2)["registers"] == 7


@pytest.mark.parametrize("matches", [True, False])
def test_the_binary_parameters_must_match_the_bundle(gpu: Gpu, matches: bool) -> None:
    spec = kernel((Arg("a", "*fp16", 16), Arg("n", "i32")))
    gpu.driver.binary_sizes = [8, 4, 8, 8] if matches else [8, 8, 8, 8]
    k = gpu.kernel(spec)
    if matches:
        k.attributes(0)
        assert gpu.driver.unloaded == 0
    else:
        with pytest.raises(
            BundleError, match=r"sizes \[8, 8, 8, 8\]\) do not match .*\[8, 4, 8, 8\]"
        ):
            k.attributes(0)
        assert gpu.driver.unloaded == 1


@pytest.mark.parametrize(
    ("shared", "static", "opt_in"),
    [
        (cuda.DEFAULT_SHARED_LIMIT, 1024, False),  # within the default: no opt-in
        (cuda.DEFAULT_SHARED_LIMIT + 16, 0, True),
        (OPTIN - 2048, 2048, True),  # exactly the device's limit with the static part
        (65536, 0, True),
    ],
)
def test_shared_memory_above_48_kib_is_opted_in(
    gpu: Gpu, shared: int, static: int, opt_in: bool
) -> None:
    gpu.driver.static_shared = static
    gpu.kernel(kernel(ONE_ARG, shared_bytes=shared)).attributes(0)
    assert gpu.driver.set_attributes == (
        [(cuda.FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared)] if opt_in else []
    )
    assert gpu.driver.asked == ([cuda.DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN] if opt_in else [])


@pytest.mark.parametrize(("shared", "static"), [(OPTIN - 2047, 2048), (200000, 40000)])
def test_shared_memory_beyond_the_device_is_refused(gpu: Gpu, shared: int, static: int) -> None:
    gpu.driver.static_shared = static
    k = gpu.kernel(kernel(ONE_ARG, shared_bytes=shared))
    with pytest.raises(
        DeviceError,
        match=rf"^k: needs {shared + static} bytes of shared memory per CTA; "
        rf"CUDA device 0 allows {OPTIN}$",
    ):
        k.attributes(0)
    assert gpu.driver.set_attributes == [] and gpu.driver.unloaded == 1


# -- launching --


def test_a_launch_runs_on_its_tensors_device_else_the_current_one(gpu: Gpu) -> None:
    gpu.torch.cuda.current_device = lambda: 2
    k = gpu.kernel(kernel(ONE_ARG))
    k(_on(1, 0x1000))
    k(0x2000)  # a raw address names no device
    assert gpu.driver.current == [1, 1, 2, 2]  # current to load there, then to launch
    assert gpu.driver.streams == [1001, 1002]
    assert [p[0] for p in gpu.driver.params] == [
        struct.pack("<Q", 0x1000),
        struct.pack("<Q", 0x2000),
    ]


@pytest.mark.parametrize("raw", [True, False])
def test_the_default_stream_is_torchs_current_one(gpu: Gpu, raw: bool) -> None:
    gpu.torch = FakeTorch(raw=raw)
    gpu.kernel(kernel(ONE_ARG))(_on(1, 0x1000))
    assert gpu.driver.streams == [1001 if raw else 2001]


def test_a_given_grid_replaces_the_bundles(gpu: Gpu) -> None:
    spec = kernel((Arg("M", "i32"),), grid=(GridDim(arg="M", block=16), GridDim(2), GridDim(3)))
    k = gpu.kernel(spec)
    k(100)
    k(100, grid=(4, 5, 6))
    k(100, grid=[1, 1, 1])
    k(100, grid=MAX_GRID)
    assert gpu.driver.grids == [(7, 2, 3), (4, 5, 6), (1, 1, 1), MAX_GRID]


@pytest.mark.parametrize(
    "grid",
    [
        (1, 2),
        (1, 2, 3, 4),
        (2.0, 1, 1),
        (1, True, 1),
        (1, 1, "1"),
        (-1, 1, 1),
        (1, -1, 1),
        (MAX_GRID[0] + 1, 1, 1),
        (1, MAX_GRID[1] + 1, 1),
        (1, 1, MAX_GRID[2] + 1),
    ],
)
def test_a_given_grid_must_be_three_sizes_within_the_limits(gpu: Gpu, grid) -> None:
    k = gpu.kernel(kernel((Arg("M", "i32"),)))
    with pytest.raises(
        ArgumentError, match=rf"^k: grid {re_escape(tuple(grid))} is not 3 sizes within"
    ):
        k(100, grid=grid)
    assert gpu.driver.grids == []


@pytest.mark.parametrize("grid", [(0, 1, 1), (1, 0, 1), (1, 1, 0), (0, 0, 0)])
def test_an_empty_given_grid_launches_nothing(gpu: Gpu, grid) -> None:
    gpu.kernel(kernel((Arg("M", "i32"),)))(100, grid=grid)
    assert gpu.driver.grids == [] and gpu.driver.current == []


XYZ = kernel(
    (Arg("X", "i64"), Arg("Y", "i64"), Arg("Z", "i64")),
    grid=(GridDim(arg="X"), GridDim(arg="Y"), GridDim(arg="Z")),
)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_the_bundles_grid_launches_up_to_the_limit_of_each_dimension(gpu: Gpu, dim: int) -> None:
    k = gpu.kernel(XYZ)
    for size in (MAX_GRID[dim], 1, 2):
        args = [1, 1, 1]
        args[dim] = size
        k(*args)
        assert gpu.driver.grids[-1] == tuple(args)
    k(*[0 if d == dim else 1 for d in range(3)])  # an empty dimension: nothing
    assert len(gpu.driver.grids) == 3
    for size in (MAX_GRID[dim] + 1, -1):
        args = [1, 1, 1]
        args[dim] = size
        with pytest.raises(
            ArgumentError,
            match=rf"^k: grid {re_escape(tuple(args))} is not within 0 to {re_escape(MAX_GRID)}$",
        ):
            k(*args)
    assert len(gpu.driver.grids) == 3


@pytest.mark.parametrize("given", [False, True])
def test_scratch_is_allocated_per_launch_on_its_stream(gpu: Gpu, given: bool) -> None:
    """Global scratch uninitialized, profile scratch zeroed, each grid x bytes per CTA
    plus the alignment, on the launch's stream; the kernel gets each rounded up to its
    alignment (the allocator's buffers start at 0x10001 and 0x20001 here)."""
    spec = kernel(
        (Arg("a", "*fp16", 16),),
        global_scratch=Scratch(96, 128),
        profile_scratch=Scratch(32, 64),
    )
    stream = SimpleNamespace(cuda_stream=77) if given else None
    gpu.kernel(spec)(_on(1, 0x1000), grid=(2, 3, 4), stream=stream)
    where = torch.device("cuda", 1)
    assert gpu.torch.allocations == [
        ("empty", 2 * 3 * 4 * 96 + 128, torch.uint8, where, stream),
        ("zeros", 2 * 3 * 4 * 32 + 64, torch.uint8, where, stream),
    ]
    assert gpu.driver.params[0][-2:] == [struct.pack("<Q", 0x10080), struct.pack("<Q", 0x20040)]
    assert gpu.driver.streams == [77 if given else 1001]


def test_a_kernel_without_scratch_gets_null_scratch_pointers(gpu: Gpu) -> None:
    gpu.kernel(kernel(ONE_ARG))(_on(0, 0x1000))
    assert gpu.torch.allocations == []
    assert gpu.driver.params == [[struct.pack("<Q", 0x1000), bytes(8), bytes(8)]]


# -- bundles --


def test_a_loaded_bundle_names_the_kernels_it_has() -> None:
    loaded = LoadedBundle(Bundle((kernel(ONE_ARG, name="k1"), kernel(ONE_ARG, name="k2"))))
    assert loaded["k2"].name == "k2" and loaded["k2"] is loaded.kernels["k2"]
    with pytest.raises(KeyError, match=r"has no kernel 'k3' \(it has: k1, k2\)"):
        loaded["k3"]
