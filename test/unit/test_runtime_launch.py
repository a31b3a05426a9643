"""Argument packing, grids and launch checks of the bundle launcher (no GPU needed).

The bytes must be exactly what Triton 3.9.0's launcher passes: every
non-constexpr argument as its C type, then the global and profile scratch
pointers. Everything a launch can get wrong is refused before the GPU is
touched; on a machine without a GPU the launcher says so.
"""

from __future__ import annotations

import struct

import pytest
import torch

from gemm_opt.runtime import (
    Arg,
    ArgumentError,
    BundleKernel,
    DeviceError,
    GridDim,
    Kernel,
    grid_of,
    pack_arguments,
    parameter_sizes,
)
from gemm_opt.runtime import cuda as rt_cuda

ELF = b"\x7fELF" + bytes(60)

GEMM_ARGS = (
    Arg("a", "*fp16", 16),
    Arg("b", "*fp16", 16),
    Arg("c", "*fp16", 16),
    Arg("M", "i32"),
    Arg("N", "i32", 16),
    Arg("K", "i32", 16),
    Arg("lda", "i64", 16),
    Arg("ldb", "i64", 16),
    Arg("ldc", "i64", 16),
)


def gemm(args: tuple[Arg, ...] = GEMM_ARGS, **changes) -> BundleKernel:
    fields = {
        "name": "gemm_fp16_aligned",
        "symbol": "gemm",
        "target": "cuda:90",
        "sm": "sm_90a",
        "num_warps": 8,
        "threads_per_warp": 32,
        "shared_bytes": 65536,
        "args": args,
        "grid": (GridDim(arg="M", block=128), GridDim(arg="N", block=128), GridDim()),
        "binary": ELF,
    }
    fields.update(changes)
    return BundleKernel(**fields)


def test_gemm_parameters_pack_like_tritons_launcher() -> None:
    a, b, c = 0x7F0000000000, 0x7F0000100000, 0x7F0000200010
    args = (a, b, c, 1000, 1008, 1024, 1024, 1008, 1008)
    params, device = pack_arguments(gemm(), args)
    assert device is None  # raw addresses name no device
    assert Kernel(gemm()).pack(args) == params  # the launch's fast path packs the same bytes
    assert b"".join(params) == struct.pack(
        "<QQQiiiqqqQQ", a, b, c, 1000, 1008, 1024, 1024, 1008, 1008, 0, 0
    )
    assert [len(p) for p in params] == parameter_sizes(gemm()) == [8, 8, 8, 4, 4, 4, 8, 8, 8, 8, 8]


def test_scratch_pointers_come_last() -> None:
    args = (0, 0, 0, 1, 16, 16, 16, 16, 16)
    params, _ = pack_arguments(gemm(), args, scratch=(0x1000, 0x2000))
    assert params[-2:] == [struct.pack("<Q", 0x1000), struct.pack("<Q", 0x2000)]
    assert Kernel(gemm()).pack(args, scratch=(0x1000, 0x2000)) == params


@pytest.mark.parametrize(
    ("ty", "value", "expected"),
    [
        ("i1", True, struct.pack("<i", 1)),  # i1 travels as a 32-bit int, as in Triton
        ("i8", -1, b"\xff"),
        ("i16", -2, struct.pack("<h", -2)),
        ("u16", 65535, b"\xff\xff"),
        ("u32", 2**32 - 1, b"\xff\xff\xff\xff"),
        ("i64", -(2**63), struct.pack("<q", -(2**63))),
        ("u64", 2**64 - 1, b"\xff" * 8),
        ("fp16", 1.5, struct.pack("<e", 1.5)),
        ("fp32", 0.1, struct.pack("<f", 0.1)),
        ("fp64", 0.1, struct.pack("<d", 0.1)),
        ("bf16", 1.0, struct.pack("<H", 0x3F80)),
        # bf16 keeps the top half of the fp32 bits (truncation, as Triton's launcher)
        ("bf16", 1.0 + 2.0**-8 + 2.0**-9, struct.pack("<H", 0x3F80)),
        ("bf16", -2.0, struct.pack("<H", 0xC000)),
        ("fp32", 3, struct.pack("<f", 3.0)),
    ],
)
def test_scalar_types(ty: str, value, expected: bytes) -> None:
    k = gemm(args=(Arg("x", ty),), grid=(GridDim(), GridDim(), GridDim()))
    params, _ = pack_arguments(k, (value,))
    assert params[0] == expected
    assert parameter_sizes(k)[0] == len(expected)
    assert Kernel(k).pack((value,)) == params


def test_constexpr_arguments_are_checked_and_not_passed() -> None:
    args = (Arg("x", "i32"), Arg("BLOCK", "i32", constexpr=64), Arg("y", "i64"))
    k = gemm(args=args, grid=(GridDim(), GridDim(), GridDim()))
    params, _ = pack_arguments(k, (7, 64, 9))
    assert params == [struct.pack("<i", 7), struct.pack("<q", 9), bytes(8), bytes(8)]
    assert parameter_sizes(k) == [4, 8, 8, 8]
    assert Kernel(k).pack((7, 64, 9)) == params
    with pytest.raises(
        ArgumentError, match=r"'BLOCK' was specialized to 64 at compile time; got 32"
    ):
        pack_arguments(k, (7, 32, 9))


def test_float_overflow_is_an_argument_error() -> None:
    k = gemm(args=(Arg("x", "fp16"),), grid=(GridDim(), GridDim(), GridDim()))
    with pytest.raises(ArgumentError, match=r"argument 'x' \(fp16\): 100000.0 overflows fp16"):
        Kernel(k).pack((1e5,))


def test_grid_from_the_bundle() -> None:
    assert grid_of(gemm(), (0, 0, 0, 1000, 1008, 1024, 1024, 1008, 1008)) == (8, 8, 1)
    assert grid_of(gemm(), (0, 0, 0, 128, 129, 64, 64, 129, 129)) == (1, 2, 1)
    assert grid_of(gemm(), (0, 0, 0, 0, 16, 16, 16, 16, 16)) == (0, 1, 1)
    args = (0, 0, 0, 1000, 1008, 1024, 1024, 1008, 1008)
    assert Kernel(gemm()).launch_grid(args) == grid_of(gemm(), args)


GOOD = (0x1000, 0x2000, 0x3000, 100, 64, 64, 64, 64, 64)


@pytest.mark.parametrize(
    ("index", "value", "message"),
    [
        (3, 2**31, r"argument 'M' \(i32\): 2147483648 does not fit \(-2147483648 to 2147483647\)"),
        (3, 1.0, r"argument 'M' \(i32\): expected an int, got float"),
        (
            4,
            1000,
            r"argument 'N' \(i32\): 1000 is not a multiple of 16, which the kernel was compiled to assume",
        ),
        (0, 0x1008, r"argument 'a' \(\*fp16\): address 0x1008 is not a multiple of 16 bytes"),
        (0, -1, r"argument .a. \(\*fp16\): address -0x1 is not a 64-bit address"),
        (
            0,
            "0x1000",
            r"argument 'a' \(\*fp16\): expected a CUDA tensor or a device address, got str",
        ),
        (
            0,
            torch.zeros(4, dtype=torch.float16),
            r"argument 'a' \(\*fp16\): the tensor is on cpu, not on a CUDA device",
        ),
    ],
)
def test_bad_arguments_are_refused_before_the_launch(index: int, value, message: str) -> None:
    args = list(GOOD)
    args[index] = value
    with pytest.raises(ArgumentError, match=f"gemm_fp16_aligned: {message}"):
        pack_arguments(gemm(), args)
    with pytest.raises(ArgumentError, match=f"gemm_fp16_aligned: {message}"):
        Kernel(gemm())(*args)  # the launch refuses it with the same message


def test_argument_count() -> None:
    with pytest.raises(
        ArgumentError, match=r"expected 9 arguments \(a, b, c, M, N, K, lda, ldb, ldc\), got 3"
    ):
        pack_arguments(gemm(), (1, 2, 3))
    with pytest.raises(ArgumentError, match="expected 9 arguments"):
        Kernel(gemm())(1, 2, 3)


def test_tensor_element_type_must_match() -> None:
    class Fake:  # a device tensor's surface, as the checks read it
        dtype = torch.bfloat16
        device = torch.device("cuda", 0)

        def data_ptr(self) -> int:
            return 0x10000

    args = list(GOOD)
    args[0] = Fake()
    with pytest.raises(
        ArgumentError, match=r"'a' \(\*fp16\): expected a torch.float16 tensor, got torch.bfloat16"
    ):
        pack_arguments(gemm(), args)
    with pytest.raises(ArgumentError, match=r"expected a torch.float16 tensor, got torch.bfloat16"):
        Kernel(gemm()).pack(args)
    Fake.dtype = torch.float16
    params, device = pack_arguments(gemm(), args)
    assert params[0] == struct.pack("<Q", 0x10000) and device == 0
    assert Kernel(gemm()).pack(args) == params


def test_launch_without_a_gpu_says_so() -> None:
    k = Kernel(gemm())
    # Bad arguments are reported first, GPU or not.
    with pytest.raises(ArgumentError, match="not on a CUDA device"):
        k(torch.zeros(4, dtype=torch.float16), *GOOD[1:])
    assert not torch.cuda.is_available()  # this suite runs on a CPU build of PyTorch
    with pytest.raises(DeviceError, match="gemm_fp16_aligned: PyTorch sees no CUDA GPU"):
        k(*GOOD)


def test_missing_driver_library_is_a_device_error() -> None:
    with pytest.raises(
        DeviceError, match=r"no NVIDIA driver on this machine: cannot load libcuda-missing\.so\.1"
    ):
        rt_cuda.Driver("libcuda-missing.so.1")
