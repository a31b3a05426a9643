"""A pipelined TDM + scaled-WMMA MXFP8 GEMM for gfx1250, written directly in Gluon.

The hand-written reference for ``examples/gemm_mxfp8_gfx1250.mlir`` (as
``gluon_gemm_gfx1250.py`` is for the 16-bit GEMM): the same blocks, layouts and
schedule, so their ISA compares instruction for instruction. It computes
``C = (A x SA) @ (B x SB)`` with A (M x K) and B (K x N) e4m3, SA (M x K/32) and
SB (N x K/32) e8m0 scales (K/32 contiguous), fp32 accumulation, bf16 C.

* ``num_warps = 8``, WMMA v3 16x16x128 scaled (``v_wmma_scale_f32_16x16x128_f8f6f4``),
  warps 4 x 2, dot operands with ``kWidth = 16``, scales in Gluon's
  ``get_wmma_scale_layout``;
* two shared buffers per operand and per scale tile; the predicated schedule of the
  example: the TDM copies of K tile ``k + 1`` (A, B and both scale tiles) are issued
  before the scaled WMMA on tile ``k``, predicated off past the end;
* ``hinted``: the four copies on a quarter of the warps each, issued as one fused
  TDM copy (what ``tile-derive-warp-hints`` and ``tile-fuse-tdm-copies`` make of the
  example); otherwise four plain copies on all warps.

Run ``python benchmarks/gluon_mxfp8_gfx1250.py`` to print its ISA statistics next to
the example's (``gemm-opt-isa-report`` rows ``fused`` and ``derived``). No GPU is
needed: everything is compiled for ``hip:gfx1250`` on the host.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from typing import Any

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.amd.gfx1250 import tdm

NUM_WARPS = 8
#: Quarters of the 8 warps: A, B, A's scales, B's scales.
HINTS = gl.constexpr((0x03, 0x0C, 0x30, 0xC0))


@gluon.constexpr_function
def _layouts(BLOCK_M, BLOCK_N, BLOCK_K):
    """Shared, accumulator, operand and scale layouts of the 8-warp scaled WMMA."""
    ks = BLOCK_K // 32
    shared_a = gl.PaddedSharedLayout.with_identity_for([[BLOCK_K, 16]], [BLOCK_M, BLOCK_K], [1, 0])
    shared_b = gl.PaddedSharedLayout.with_identity_for([[BLOCK_N, 16]], [BLOCK_K, BLOCK_N], [1, 0])
    shared_s = gl.PaddedSharedLayout.with_identity_for([[256, 8]], [BLOCK_M, ks], [1, 0])
    acc = gl.amd.AMDWMMALayout(3, True, [[0, 1], [1, 0], [2, 0]], [], [16, 16, 128])
    op_a = gl.DotOperandLayout(0, acc, 16)
    op_b = gl.DotOperandLayout(1, acc, 16)
    scale_a = gl.amd.gfx1250.get_wmma_scale_layout(op_a, [BLOCK_M, ks])
    scale_b = gl.amd.gfx1250.get_wmma_scale_layout(op_b, [BLOCK_N, ks])
    return shared_a, shared_b, shared_s, acc, op_a, op_b, scale_a, scale_b


@gluon.jit
def _issue(descs, bufs, origins, k_tile, num_k_tiles, BLOCK_K: gl.constexpr, HINTED: gl.constexpr):
    """Start the four copies of K tile ``k_tile`` (predicated off past the end)."""
    live = k_tile < num_k_tiles
    slot = k_tile % 2
    ks = k_tile * (BLOCK_K // 32)
    a = tdm.update_tensor_descriptor(
        descs[0], add_offsets=[origins[0], k_tile * BLOCK_K], pred=live, clamp_bounds=True
    )
    b = tdm.update_tensor_descriptor(
        descs[1], add_offsets=[k_tile * BLOCK_K, origins[1]], pred=live, clamp_bounds=True
    )
    sa = tdm.update_tensor_descriptor(
        descs[2], add_offsets=[origins[0], ks], pred=live, clamp_bounds=True
    )
    sb = tdm.update_tensor_descriptor(
        descs[3], add_offsets=[origins[1], ks], pred=live, clamp_bounds=True
    )
    dests = (bufs[0].index(slot), bufs[1].index(slot), bufs[2].index(slot), bufs[3].index(slot))
    if HINTED:
        tdm.async_load_fused(
            [
                (a, dests[0], HINTS[0]),
                (b, dests[1], HINTS[1]),
                (sa, dests[2], HINTS[2]),
                (sb, dests[3], HINTS[3]),
            ]
        )
    else:
        tdm.async_load(a, dest=dests[0])
        tdm.async_load(b, dest=dests[1])
        tdm.async_load(sa, dest=dests[2])
        tdm.async_load(sb, dest=dests[3])


@gluon.jit
def mxfp8_gemm_kernel(
    a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
    BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr, HINTED: gl.constexpr,
):  # fmt: skip
    """One output tile per program; see the module docstring."""
    L: gl.constexpr = _layouts(BLOCK_M, BLOCK_N, BLOCK_K)
    LOADS_PER_TILE: gl.constexpr = 1 if HINTED else 4
    pid = gl.program_id(0)
    num_pid_n = gl.cdiv(N, BLOCK_N)
    off_m = (pid // num_pid_n) * BLOCK_M
    off_n = (pid % num_pid_n) * BLOCK_N
    ks = K // 32
    a_desc = tdm.make_tensor_descriptor(
        base=a_ptr, shape=(M, K), strides=(stride_am, 1), block_shape=(BLOCK_M, BLOCK_K),
        layout=L[0],
    )  # fmt: skip
    b_desc = tdm.make_tensor_descriptor(
        base=b_ptr, shape=(K, N), strides=(stride_bk, 1), block_shape=(BLOCK_K, BLOCK_N),
        layout=L[1],
    )  # fmt: skip
    sa_desc = tdm.make_tensor_descriptor(
        base=sa_ptr, shape=(M, ks), strides=(ks, 1), block_shape=(BLOCK_M, BLOCK_K // 32),
        layout=L[2],
    )  # fmt: skip
    sb_desc = tdm.make_tensor_descriptor(
        base=sb_ptr, shape=(N, ks), strides=(ks, 1), block_shape=(BLOCK_N, BLOCK_K // 32),
        layout=L[2],
    )  # fmt: skip
    a_bufs = gl.allocate_shared_memory(a_ptr.dtype.element_ty, [2, BLOCK_M, BLOCK_K], L[0])
    b_bufs = gl.allocate_shared_memory(b_ptr.dtype.element_ty, [2, BLOCK_K, BLOCK_N], L[1])
    sa_bufs = gl.allocate_shared_memory(gl.uint8, [2, BLOCK_M, BLOCK_K // 32], L[2])
    sb_bufs = gl.allocate_shared_memory(gl.uint8, [2, BLOCK_N, BLOCK_K // 32], L[2])
    descs = (a_desc, b_desc, sa_desc, sb_desc)
    bufs = (a_bufs, b_bufs, sa_bufs, sb_bufs)
    origins = (off_m, off_n)
    num_k_tiles = gl.cdiv(K, BLOCK_K)
    _issue(descs, bufs, origins, 0, num_k_tiles, BLOCK_K, HINTED)
    acc = gl.zeros((BLOCK_M, BLOCK_N), gl.float32, layout=L[3])
    for k in range(0, num_k_tiles):
        _issue(descs, bufs, origins, k + 1, num_k_tiles, BLOCK_K, HINTED)
        tdm.async_wait(LOADS_PER_TILE)
        slot = k % 2
        a = a_bufs.index(slot).load(layout=L[4])
        b = b_bufs.index(slot).load(layout=L[5])
        sa = sa_bufs.index(slot).load(layout=L[6])
        sb = sb_bufs.index(slot).load(layout=L[7])
        acc = gl.amd.gfx1250.wmma_scaled(a, sa, "e4m3", b, sb, "e4m3", acc)
    tdm.async_wait(0)
    rows = off_m + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, L[3]))
    cols = off_n + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, L[3]))
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    gl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], acc.to(gl.bfloat16), mask=mask)


def compile_gluon_mxfp8(hinted: bool = True, *, BLOCK_M: int = 128, BLOCK_N: int = 128,
                        BLOCK_K: int = 128):  # fmt: skip
    """Compile the kernel for ``hip:gfx1250`` (a private, empty Triton cache) and return
    the CompiledKernel; ``kernel.compile_seconds`` is the wall time of the compile.
    Pointers and leading strides are taken as 16-aligned, as the example states."""
    import triton
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    sig = {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "sa_ptr": "*u8", "sb_ptr": "*u8"}
    sig["c_ptr"] = "*bf16"
    sig.update(dict.fromkeys(("M", "N", "K", "stride_am", "stride_bk", "stride_cm"), "i32"))
    constexprs = {"BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N, "BLOCK_K": BLOCK_K, "HINTED": hinted}
    sig.update(dict.fromkeys(constexprs, "constexpr"))
    attrs = {(i,): [["tt.divisibility", 16]] for i in (0, 1, 2, 3, 4, 8, 9, 10)}
    src = GluonASTSource(mxfp8_gemm_kernel, sig, constexprs, attrs)
    with tempfile.TemporaryDirectory(prefix="gluon_mxfp8_") as cache, knobs.cache.scope():
        knobs.cache.dir = cache
        start = time.perf_counter()
        kernel = triton.compile(
            src, target=GPUTarget("hip", "gfx1250", 32), options={"num_warps": NUM_WARPS}
        )
        kernel.compile_seconds = time.perf_counter() - start
    return kernel


def _row(name: str, m: Any, seconds: float) -> str:
    return (
        f"{name:28} {m.tdm_loads_in_loop:5d} {m.wmma_in_loop:6d} {m.vgprs:5d} {m.sgprs:5d} "
        f"{m.lds_bytes:6d} {m.spills:5d} {m.code_bytes:6d} {seconds:9.2f}"
    )


def main(argv: list[str] | None = None) -> None:
    """Print the ISA statistics of both Gluon variants and of the tile example's."""
    from gemm_opt.lowering.compile import compile_tile_module
    from gemm_opt.lowering.isa_analysis import isa_metrics
    from gemm_opt.tools.isa_report import FP8_INPUT

    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    print(
        f"{'kernel (gfx1250, 128x128x128)':28} {'tdm/K':>5} {'wmma/K':>6} {'vgpr':>5} "
        f"{'sgpr':>5} {'lds':>6} {'spill':>5} {'code':>6} {'compile_s':>9}"
    )
    for hinted in (False, True):
        k = compile_gluon_mxfp8(hinted)
        m = isa_metrics(k.asm["amdgcn"], k.metadata._asdict())
        print(
            _row(f"gluon {'fused hinted' if hinted else 'plain'}", m, k.compile_seconds), flush=True
        )
    for derive in (False, True):
        k = compile_tile_module(FP8_INPUT.read_text(), "gfx1250", derive_hints=derive)
        name = f"tile example {'derived' if derive else 'as written'}"
        print(_row(name, k.metrics, k.compile_seconds), flush=True)


if __name__ == "__main__":
    main()
