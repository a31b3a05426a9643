"""A bundle with every field in use, for the reader's tests: the metadata of a real TMA
GEMM spec (its arguments and divisibility facts) with host descriptors as the compiler
records them, constexprs, scratch, a cdiv grid and nested meta, around a stand-in binary."""

from __future__ import annotations

import dataclasses
from typing import Any

from gemm_opt.core import schedules as S
from gemm_opt.runtime import Arg, Bundle, BundleKernel, GridDim, Scratch
from gemm_opt.runtime.bundle import TensorMap
from support.fake_bundles import launch_kernel

#: The aligned TMA twin of the persistent fp16 GEMM.
SPEC = S.KernelSpec(
    "persistent", None, "none", "fp16", 128, 128, 64, 8, 8, None, aligned=True, tma=True
)
#: ``CU_TENSOR_MAP_DATA_TYPE_FLOAT16`` and 128-byte swizzle.
FP16, SWIZZLE_128B = 6, 3


def full_kernel(**changes: Any) -> BundleKernel:
    base = launch_kernel(SPEC)
    fields: dict[str, Any] = {
        "args": (
            *base.args,
            Arg("BLOCK_M", "i32", constexpr=128),
            Arg("SCALE", "fp32", constexpr=0.5),
            Arg("FLAG", "i1"),
        ),
        "grid": (GridDim(arg="M", block=128), GridDim(arg="N", block=128), GridDim(constant=1)),
        "shared_bytes": 196608,
        "global_scratch": Scratch(256, 128),
        "tensormaps": (
            TensorMap("a", ("M", "K"), ("lda", 1), (128, 64), SWIZZLE_128B, 2, FP16),
            TensorMap("b", ("K", "N"), ("ldb", 1), (64, 128), SWIZZLE_128B, 2, FP16),
        ),
        "triton_hash": "f" * 64,
        "meta": {"kind": "schedule", "block": {"M": 128, "N": 128}, "stages": [3, None, 1.5]},
    }
    fields.update(changes)
    return dataclasses.replace(base, **fields)


def document() -> dict[str, Any]:
    """The JSON document of a two-kernel bundle (the second one plain)."""
    plain = dataclasses.replace(launch_kernel(SPEC), name="plain")
    return Bundle((full_kernel(), plain)).to_json()
