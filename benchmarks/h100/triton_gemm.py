"""Plain Triton ``tl.dot`` GEMM: the baseline a user would write instead of using gemm-opt.

The kernel is the standard grouped-order matmul (the shape of Triton's matmul
tutorial): pointer loads with a K mask, ``tl.dot`` with fp32 accumulation,
``GROUP_M`` rows of tiles visited together so that neighbouring programs
share A and B tiles in L2. Its program id is linearised from a 2-D grid
(``cdiv(M, BLOCK_M) x cdiv(N, BLOCK_N)``, x fastest, the order in which the
hardware starts them), which is the same schedule as the tutorial's 1-D grid
and lets the bundle state the grid as ``cdiv`` of the arguments.

It is compiled ahead of time here with the pinned Triton 3.9.0 for cuda:90
(``triton.compile`` on an ``ASTSource``, no GPU needed) and bundled by
:func:`gemm_opt.runtime.build.bundle_triton_kernel`, so the GPU machine runs
exactly what Triton 3.9.0 generates (wgmma and its software pipeline) through
the same launcher as our kernel, with no Triton installed there.

Specialisation is what Triton's JIT would do for row-major operands whose
sizes are multiples of 16: pointers and ``M``, ``N``, ``K`` and the row
strides are stated multiples of 16 (``tt.divisibility``), the unit column
strides are constexpr 1. The launcher refuses arguments that break either.

    python benchmarks/h100/triton_gemm.py   # compile every config, print resources
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any

import triton
import triton.language as tl


@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    """C (MxN) = A (MxK) @ B (KxN), fp32 accumulation, C in A's element type."""
    pid = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@dataclass(frozen=True)
class Config:
    """One standard Hopper configuration of the kernel."""

    block_m: int
    block_n: int
    block_k: int
    num_stages: int
    num_warps: int
    group_m: int = 8

    @property
    def tag(self) -> str:
        return (
            f"{self.block_m}x{self.block_n}x{self.block_k}"
            f"_s{self.num_stages}_w{self.num_warps}_g{self.group_m}"
        )


#: The standard configs: the large-tile Hopper configs of Triton's matmul
#: tutorial (03) with BLOCK_K = 64 (what its persistent-matmul tutorial uses on
#: Hopper), plus a square-K tile for narrow outputs.
CONFIGS = (
    Config(128, 256, 64, 3, 8),
    Config(128, 128, 64, 4, 4),
    Config(128, 128, 64, 3, 8),
    Config(64, 128, 64, 4, 4),
    Config(64, 64, 128, 4, 4),
)
DTYPES = {"fp16": "float16", "bf16": "bfloat16"}
ARG_NAMES = tuple(matmul_kernel.arg_names)
#: Arguments stated to be multiples of 16 (as the JIT specialises them).
DIVISIBLE_16 = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm")
#: Unit strides of row-major operands, specialised to 1 (as the JIT does).
UNIT_STRIDES = ("stride_ak", "stride_bn", "stride_cn")
CONSTEXPRS = (*UNIT_STRIDES, "BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")


def signature(
    dtype: str, arg_names: tuple[str, ...] = ARG_NAMES, constexprs: tuple[str, ...] = CONSTEXPRS
) -> dict[str, str]:
    """Triton's signature for ``dtype`` of a kernel taking this one's arguments
    (pointers ``*_ptr``, i32 sizes and strides) and then ``constexprs``."""
    out = {}
    for name in arg_names:
        if name.endswith("_ptr"):
            out[name] = "*" + dtype
        elif name in constexprs:
            out[name] = "constexpr"
        else:
            out[name] = "i32"
    return out


def constexprs(config: Config) -> dict[str, int]:
    return {
        "stride_ak": 1,
        "stride_bn": 1,
        "stride_cn": 1,
        "BLOCK_M": config.block_m,
        "BLOCK_N": config.block_n,
        "BLOCK_K": config.block_k,
        "GROUP_M": config.group_m,
    }


def compile_config(config: Config, dtype: str, capability: int = 90) -> Any:
    """Compile one config with this machine's Triton; returns its ``CompiledKernel``."""
    from triton.backends.compiler import GPUTarget

    attrs = {(ARG_NAMES.index(n),): [["tt.divisibility", 16]] for n in DIVISIBLE_16}
    src = triton.compiler.ASTSource(matmul_kernel, signature(dtype), constexprs(config), attrs)
    return triton.compile(
        src,
        target=GPUTarget("cuda", capability, 32),
        options={"num_warps": config.num_warps, "num_stages": config.num_stages},
    )


def bundle_meta(kind: str, source: str, dtype: str, config: Any) -> dict[str, Any]:
    """The bundle metadata every baseline kernel of ``benchmarks/h100/source`` carries
    (``config``: a config with this module's block, stage and GROUP_M fields)."""
    return {
        "kind": kind,
        "source": f"benchmarks/h100/{source}",
        "dtype": DTYPES[dtype],
        "config": config.tag,
        "block": {"M": config.block_m, "N": config.block_n, "K": config.block_k},
        "num_stages": config.num_stages,
        "group_m": config.group_m,
        "layout": "row-major A (MxK), B (KxN), C (MxN)",
    }


def bundle_kernels(
    dtypes: list[str] | None = None,
    configs: tuple[Config, ...] = CONFIGS,
    *,
    quiet: bool = False,
) -> list[Any]:
    """Every (config, dtype) compiled and described as a bundle kernel."""
    from gemm_opt.runtime.build import bundle_triton_kernel

    out = []
    for dtype in dtypes or list(DTYPES):
        for config in configs:
            start = time.perf_counter()
            compiled = compile_config(config, dtype)
            k = bundle_triton_kernel(
                compiled,
                ARG_NAMES,
                signature(dtype),
                constexprs=constexprs(config),
                divisibility={n: 16 for n in DIVISIBLE_16},
                name=f"triton_{dtype}_{config.tag}",
                grid=[("M", config.block_m), ("N", config.block_n), 1],
                meta=bundle_meta("triton", "triton_gemm.py", dtype, config),
            )
            out.append(k)
            if not quiet:
                print(
                    f"compiled {k.name}: {k.sm}, {k.num_warps} warps, {k.shared_bytes} B shared, "
                    f"triton {k.triton} ({time.perf_counter() - start:.1f} s)",
                    flush=True,
                )
    return out


def main() -> int:
    bundle_kernels()
    return 0


if __name__ == "__main__":
    sys.exit(main())
