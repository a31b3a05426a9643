"""A pipelined TDM + WMMA GEMM for gfx1250, written directly in Gluon.

This is the hand-written reference that our own TTGIR lowering is compared
against. It computes ``C = A @ B`` with A (M x K), B (K x N) and C (M x N), all
row-major, fp16 or bf16 inputs, fp32 accumulation, and C in the input dtype.

Kernel shape:

* ``num_warps = 8``, WMMA v3 (instruction 16x16x32) with warps laid out 4 x 2
  over the output tile, dot operands with ``kWidth = 8``;
* ``NUM_BUFFERS`` shared-memory buffers per operand (padded shared layouts);
* the Tensor Data Mover (TDM) copy of K tile ``k + 1`` is issued before the
  WMMA on K tile ``k``; the wait only requires tile ``k`` to have landed;
* out-of-bounds rows/columns/K are zero-filled by TDM through the descriptor
  bounds; the final store masks the M/N edges.

Three load variants (``variant``):

``"none"``
    two plain TDM copies; every warp moves 1/8 of A and 1/8 of B.
``"separate"``
    two hinted TDM copies; A on warps 0-3 (``0b00001111``) and B on warps 4-7
    (``0b11110000``). Every warp still issues both instructions; the half that
    is outside a hint is predicated off.
``"fused"``
    one ``async_load_fused`` with members ``(A, 0b00001111)`` and
    ``(B, 0b11110000)``: a single TDM instruction per K tile.

Two pipeline schedules (``schedule``); both keep the same copies in flight:

``"peeled"`` (default; the shape of upstream's gfx1250 Gluon GEMM examples)
    the prologue fills ``NUM_BUFFERS - 1`` slots, the loop runs
    ``num_k_tiles - (NUM_BUFFERS - 1)`` iterations, each copying tile
    ``k + NUM_BUFFERS - 1``, and an epilogue drains the last
    ``NUM_BUFFERS - 1`` tiles, so the WMMA block appears ``NUM_BUFFERS`` times
    in the code (32 ``v_wmma`` for 128x128x64, 16 of them in the loop).
``"predicated"`` (the schedule of our ``examples/gemm_gfx1250.mlir``)
    the prologue's copies are predicated on the tile existing, the loop runs
    over all ``num_k_tiles`` tiles and copies tile ``k + NUM_BUFFERS - 1``
    with its descriptor predicate off past the end, and there is no epilogue:
    the WMMA block appears once (16 ``v_wmma``, all in the loop). A predicated
    copy still issues its ``tensor_load_to_lds`` (the predicate travels in the
    descriptor), so the wait counts are the same as in the steady state.

Run ``python benchmarks/gluon_gemm_gfx1250.py`` to print ISA statistics per
variant; ``--dump DIR`` also writes the reference TTGIR and an ISA summary.
No GPU is needed: everything is compiled for ``hip:gfx1250`` on the host.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.amd.gfx1250 import tdm

#: Warps 0-3 copy A, warps 4-7 copy B (contiguous halves of an 8-warp CTA).
HINT_A = gl.constexpr(0b00001111)
HINT_B = gl.constexpr(0b11110000)
VARIANTS = ("fused", "separate", "none")
_VARIANT_CODE = {"none": 0, "separate": 1, "fused": 2}
SCHEDULES = ("peeled", "predicated")
_SCHEDULE_CODE = {"peeled": 0, "predicated": 1}
NUM_WARPS = 8


@gluon.constexpr_function
def _layouts(BLOCK_M, BLOCK_N, BLOCK_K):
    """Shared, accumulator and operand layouts for an 8-warp WMMA v3 GEMM."""
    # Pad each shared row so consecutive rows start on different LDS banks.
    shared_a = gl.PaddedSharedLayout.with_identity_for([[BLOCK_K, 8]], [BLOCK_M, BLOCK_K], [1, 0])
    shared_b = gl.PaddedSharedLayout.with_identity_for([[BLOCK_N, 16]], [BLOCK_K, BLOCK_N], [1, 0])
    # Warp bit 0 steps along N, bits 1-2 along M: warpsPerCTA = [4, 2].
    acc = gl.amd.AMDWMMALayout(3, True, [[0, 1], [1, 0], [2, 0]], [], [16, 16, 32])
    op_a = gl.DotOperandLayout(0, acc, 8)
    op_b = gl.DotOperandLayout(1, acc, 8)
    return shared_a, shared_b, acc, op_a, op_b


@gluon.jit
def _issue_tile_loads(
    a_desc,
    b_desc,
    a_bufs,
    b_bufs,
    off_m,
    off_n,
    k_tile,
    num_k_tiles,
    BLOCK_K: gl.constexpr,
    NUM_BUFFERS: gl.constexpr,
    VARIANT: gl.constexpr,
    PREDICATED: gl.constexpr,
):
    """Position both descriptors on K tile ``k_tile`` and start the copies.

    With ``PREDICATED``, the descriptors' predicate is ``k_tile < num_k_tiles``:
    past the end the copy is still issued, as a no-op.
    """
    slot = k_tile % NUM_BUFFERS
    # Offsets are added to the *base* descriptor (the one made in the kernel
    # prologue), so they are absolute tile coordinates; clamp_bounds shrinks
    # the bounds by the same amount, which is what makes TDM zero-fill the
    # out-of-range part of an edge tile.
    if PREDICATED:
        live = k_tile < num_k_tiles
        a_tile = tdm.update_tensor_descriptor(
            a_desc, add_offsets=[off_m, k_tile * BLOCK_K], pred=live, clamp_bounds=True
        )
        b_tile = tdm.update_tensor_descriptor(
            b_desc, add_offsets=[k_tile * BLOCK_K, off_n], pred=live, clamp_bounds=True
        )
    else:
        a_tile = tdm.update_tensor_descriptor(
            a_desc, add_offsets=[off_m, k_tile * BLOCK_K], clamp_bounds=True
        )
        b_tile = tdm.update_tensor_descriptor(
            b_desc, add_offsets=[k_tile * BLOCK_K, off_n], clamp_bounds=True
        )
    a_dst = a_bufs.index(slot)
    b_dst = b_bufs.index(slot)
    if VARIANT == 2:
        tdm.async_load_fused([(a_tile, a_dst, HINT_A), (b_tile, b_dst, HINT_B)])
    elif VARIANT == 1:
        tdm.async_load(a_tile, dest=a_dst, warp_used_hint=HINT_A)
        tdm.async_load(b_tile, dest=b_dst, warp_used_hint=HINT_B)
    else:
        tdm.async_load(a_tile, dest=a_dst)
        tdm.async_load(b_tile, dest=b_dst)


@gluon.jit
def gemm_tdm_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_bk,
    stride_cm,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    BLOCK_K: gl.constexpr,
    NUM_BUFFERS: gl.constexpr,
    VARIANT: gl.constexpr,
    SCHEDULE: gl.constexpr,
):
    """One output tile per program; see the module docstring."""
    layouts: gl.constexpr = _layouts(BLOCK_M, BLOCK_N, BLOCK_K)
    shared_a: gl.constexpr = layouts[0]
    shared_b: gl.constexpr = layouts[1]
    acc_layout: gl.constexpr = layouts[2]
    op_a: gl.constexpr = layouts[3]
    op_b: gl.constexpr = layouts[4]
    # TDM copies outstanding per K tile: one fused copy, or one copy per operand.
    LOADS_PER_TILE: gl.constexpr = 1 if VARIANT == 2 else 2

    pid = gl.program_id(0)
    num_pid_n = gl.cdiv(N, BLOCK_N)
    off_m = (pid // num_pid_n) * BLOCK_M
    off_n = (pid % num_pid_n) * BLOCK_N

    a_desc = tdm.make_tensor_descriptor(
        base=a_ptr,
        shape=(M, K),
        strides=(stride_am, 1),
        block_shape=(BLOCK_M, BLOCK_K),
        layout=shared_a,
    )
    b_desc = tdm.make_tensor_descriptor(
        base=b_ptr,
        shape=(K, N),
        strides=(stride_bk, 1),
        block_shape=(BLOCK_K, BLOCK_N),
        layout=shared_b,
    )
    a_bufs = gl.allocate_shared_memory(
        a_ptr.dtype.element_ty, [NUM_BUFFERS, BLOCK_M, BLOCK_K], shared_a
    )
    b_bufs = gl.allocate_shared_memory(
        b_ptr.dtype.element_ty, [NUM_BUFFERS, BLOCK_K, BLOCK_N], shared_b
    )

    num_k_tiles = gl.cdiv(K, BLOCK_K)
    PREDICATED: gl.constexpr = SCHEDULE == 1
    # Prologue: fill NUM_BUFFERS - 1 slots.
    for i in gl.static_range(NUM_BUFFERS - 1):
        _issue_tile_loads(
            a_desc, b_desc, a_bufs, b_bufs, off_m, off_n, i, num_k_tiles,
            BLOCK_K, NUM_BUFFERS, VARIANT, PREDICATED,
        )  # fmt: skip

    acc = gl.zeros((BLOCK_M, BLOCK_N), gl.float32, layout=acc_layout)
    if PREDICATED:
        # One loop over every K tile: start the (possibly predicated-off) copy
        # of tile k + NUM_BUFFERS - 1, wait for tile k only, run its WMMAs.
        for k in range(0, num_k_tiles):
            _issue_tile_loads(
                a_desc, b_desc, a_bufs, b_bufs, off_m, off_n, k + NUM_BUFFERS - 1,
                num_k_tiles, BLOCK_K, NUM_BUFFERS, VARIANT, PREDICATED,
            )  # fmt: skip
            tdm.async_wait((NUM_BUFFERS - 1) * LOADS_PER_TILE)
            a = a_bufs.index(k % NUM_BUFFERS).load(layout=op_a)
            b = b_bufs.index(k % NUM_BUFFERS).load(layout=op_b)
            acc = gl.amd.gfx1250.wmma(a, b, acc)
        tdm.async_wait(0)
    else:
        # Steady state: start the copy of tile k + NUM_BUFFERS - 1, then wait
        # for tile k only (the newer copies may stay in flight) and run its
        # WMMAs.
        for k in range(0, num_k_tiles - (NUM_BUFFERS - 1)):
            _issue_tile_loads(
                a_desc, b_desc, a_bufs, b_bufs, off_m, off_n, k + NUM_BUFFERS - 1,
                num_k_tiles, BLOCK_K, NUM_BUFFERS, VARIANT, PREDICATED,
            )  # fmt: skip
            tdm.async_wait((NUM_BUFFERS - 1) * LOADS_PER_TILE)
            a = a_bufs.index(k % NUM_BUFFERS).load(layout=op_a)
            b = b_bufs.index(k % NUM_BUFFERS).load(layout=op_b)
            acc = gl.amd.gfx1250.wmma(a, b, acc)

        # Epilogue: drain the last NUM_BUFFERS - 1 tiles.
        k_first = gl.maximum(num_k_tiles - (NUM_BUFFERS - 1), 0)
        for i in gl.static_range(NUM_BUFFERS - 1):
            k = k_first + i
            tdm.async_wait((NUM_BUFFERS - 2 - i) * LOADS_PER_TILE)
            a = a_bufs.index(k % NUM_BUFFERS).load(layout=op_a)
            b = b_bufs.index(k % NUM_BUFFERS).load(layout=op_b)
            acc = gl.amd.gfx1250.wmma(a, b, acc)

    rows = off_m + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, acc_layout))
    cols = off_n + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, acc_layout))
    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    gl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)


def _signature(dtype: str) -> dict[str, str]:
    """Triton signature of :func:`gemm_tdm_kernel`'s runtime arguments."""
    ptr = f"*{dtype}"
    names = ("M", "N", "K", "stride_am", "stride_bk", "stride_cm")
    return {"a_ptr": ptr, "b_ptr": ptr, "c_ptr": ptr, **dict.fromkeys(names, "i32")}


def compile_gluon_gemm(
    dtype: str = "fp16",
    variant: str = "fused",
    *,
    BLOCK_M: int = 128,
    BLOCK_N: int = 128,
    BLOCK_K: int = 64,
    NUM_BUFFERS: int = 2,
    aligned: bool = True,
    schedule: str = "peeled",
):
    """Compile the Gluon GEMM for ``hip:gfx1250`` and return the CompiledKernel.

    ``dtype`` is ``"fp16"`` or ``"bf16"``; ``variant`` is one of
    :data:`VARIANTS`; ``schedule`` is one of :data:`SCHEDULES` (see the module
    docstring; ``"predicated"`` is the schedule of ``examples/gemm_gfx1250.mlir``).
    Pointers and leading strides are always taken as 16-aligned.
    ``aligned=True`` also specialises M, N and K as multiples of 16, as
    Triton's launcher does for such sizes; then the masked C store is
    vectorised (the mask is constant over 8 columns). ``aligned=False`` is the
    general kernel, whose N-edge mask forces one predicated 16-bit store per
    element. Each call compiles into a private, empty Triton cache, so the
    wall time it stores as ``kernel.compile_seconds`` is a real compile and
    nothing lands in the user's cache.
    """
    import triton
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    if dtype not in ("fp16", "bf16"):
        raise ValueError(f"dtype must be fp16 or bf16, got {dtype!r}")
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    if NUM_BUFFERS < 2:
        raise ValueError("NUM_BUFFERS must be >= 2 for a pipelined kernel")
    sig = _signature(dtype)
    constexprs = {
        "BLOCK_M": BLOCK_M,
        "BLOCK_N": BLOCK_N,
        "BLOCK_K": BLOCK_K,
        "NUM_BUFFERS": NUM_BUFFERS,
        "VARIANT": _VARIANT_CODE[variant],
        "SCHEDULE": _SCHEDULE_CODE[schedule],
    }
    sig.update(dict.fromkeys(constexprs, "constexpr"))
    # Argument positions: pointers 0-2, M/N/K 3-5, strides 6-8.
    divisible = (0, 1, 2, 3, 4, 5, 6, 7, 8) if aligned else (0, 1, 2, 6, 7, 8)
    attrs = {(i,): [["tt.divisibility", 16]] for i in divisible}
    src = GluonASTSource(gemm_tdm_kernel, sig, constexprs, attrs)
    with tempfile.TemporaryDirectory(prefix="gluon_gemm_") as cache, knobs.cache.scope():
        knobs.cache.dir = cache
        start = time.perf_counter()
        kernel = triton.compile(
            src,
            target=GPUTarget("hip", "gfx1250", 32),
            options={"num_warps": NUM_WARPS, "enable_fp_fusion": True},
        )
        kernel.compile_seconds = time.perf_counter() - start
    return kernel


def strip_locations(mlir_text: str) -> str:
    """Drop ``#locN = loc(...)`` aliases and every `` loc(...)`` suffix."""
    out: list[str] = []
    for line in mlir_text.splitlines():
        if line.startswith("#loc"):
            continue
        pieces: list[str] = []
        i = 0
        while True:
            j = line.find(" loc(", i)
            if j < 0:
                pieces.append(line[i:])
                break
            pieces.append(line[i:j])
            depth, k = 0, j + 4
            while k < len(line):
                depth += {"(": 1, ")": -1}.get(line[k], 0)
                k += 1
                if depth == 0:
                    break
            i = k
        out.append("".join(pieces))
    return "\n".join(out) + "\n"


def _metrics(kernel) -> Any:
    from gemm_opt.lowering.isa_analysis import isa_metrics

    return isa_metrics(kernel.asm["amdgcn"], kernel.metadata._asdict())


def isa_summary(kernel, title: str, table: list[str] | None = None) -> str:
    """A short text summary of the compiled kernel (counts and the K loop)."""
    from gemm_opt.lowering.isa_analysis import innermost_loop_lines

    m = _metrics(kernel)
    lines = [
        f"# {title}",
        "# Generated by benchmarks/gluon_gemm_gfx1250.py --dump; a summary, not",
        "# the whole assembly.",
        f"kernel: {kernel.metadata.name}",
        f"target: {kernel.metadata.target.backend}:{kernel.metadata.target.arch}",
        f"num_warps: {kernel.metadata.num_warps}",
        f"vgprs: {m.vgprs}",
        f"sgprs: {m.sgprs}",
        f"lds_bytes: {m.lds_bytes}",
        f"spills: {m.spills}",
        f"code_bytes: {m.code_bytes}",
        f"instructions: {m.instructions}",
        f"tensor_load_to_lds: {m.tdm_loads} (in K loop: {m.tdm_loads_in_loop})",
        f"v_wmma: {m.wmma} (in K loop: {m.wmma_in_loop})",
        f"s_wait_tensorcnt: {m.waits.get('s_wait_tensorcnt', 0)}",
        f"waits: {dict(sorted(m.waits.items()))}",
        "",
        "# Innermost loop, with the instruction mix collapsed to opcodes:",
    ]
    body = innermost_loop_lines(kernel.asm["amdgcn"])
    mix: dict[str, int] = {}
    for line in body:
        op = line.split()[0]
        mix[op] = mix.get(op, 0) + 1
    for op, count in sorted(mix.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  {count:4d}  {op}")
    lines.append("")
    lines.append("# Loop lines that touch TDM, waits, barriers or branches:")
    keys = ("tensor_load", "s_wait", "barrier", "s_cbranch", "s_branch")
    for line in body:
        if any(key in line for key in keys) or line.endswith(":"):
            lines.append("  " + line)
    if table:
        lines += ["", "# All variants compiled in the same run:", *table]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Print ISA statistics for every dtype and variant."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", choices=("fp16", "bf16", "all"), default="all")
    parser.add_argument("--variant", choices=(*VARIANTS, "all"), default="all")
    parser.add_argument("--block-m", type=int, default=128)
    parser.add_argument("--block-n", type=int, default=128)
    parser.add_argument("--block-k", type=int, default=64)
    parser.add_argument("--num-buffers", type=int, default=2)
    parser.add_argument(
        "--schedule",
        choices=SCHEDULES,
        default="peeled",
        help="peeled epilogue (default) or one predicated loop, as examples/gemm_gfx1250.mlir",
    )
    parser.add_argument(
        "--unaligned",
        action="store_true",
        help="do not specialise M, N, K as multiples of 16",
    )
    parser.add_argument(
        "--dump",
        metavar="DIR",
        help="write the fp16 fused TTGIR and ISA summary into DIR",
    )
    args = parser.parse_args(argv)
    dtypes = ("fp16", "bf16") if args.dtype == "all" else (args.dtype,)
    variants = VARIANTS if args.variant == "all" else (args.variant,)
    blocks = {
        "BLOCK_M": args.block_m,
        "BLOCK_N": args.block_n,
        "BLOCK_K": args.block_k,
        "NUM_BUFFERS": args.num_buffers,
    }
    header = (
        f"{'dtype':5} {'variant':8} {'tdm':>4} {'tdm/K':>5} {'wmma':>5} "
        f"{'wmma/K':>6} {'vgpr':>5} {'sgpr':>5} {'lds':>6} {'spill':>5} "
        f"{'code':>6} {'insts':>6} {'loop':>5} {'compile_s':>9}"
    )
    shapes = "any M, N, K" if args.unaligned else "M, N, K multiples of 16"
    table = [
        f"blocks: {blocks}, num_warps={NUM_WARPS}, target=hip:gfx1250, {shapes}, "
        f"schedule={args.schedule}",
        header,
    ]
    print("\n".join(table), flush=True)
    reference = None
    for dtype in dtypes:
        for variant in variants:
            kernel = compile_gluon_gemm(
                dtype, variant, aligned=not args.unaligned, schedule=args.schedule, **blocks
            )
            m = _metrics(kernel)
            row = (
                f"{dtype:5} {variant:8} {m.tdm_loads:4d} {m.tdm_loads_in_loop:5d} "
                f"{m.wmma:5d} {m.wmma_in_loop:6d} {m.vgprs:5d} {m.sgprs:5d} "
                f"{m.lds_bytes:6d} {m.spills:5d} {m.code_bytes:6d} "
                f"{m.instructions:6d} {m.loop_instructions:5d} "
                f"{kernel.compile_seconds:9.2f}"
            )
            table.append(row)
            print(row, flush=True)
            if dtype == "fp16" and variant == "fused":
                reference = kernel
    if args.dump and reference is not None:
        out = Path(args.dump)
        out.mkdir(parents=True, exist_ok=True)
        stem = "gluon_gemm_gfx1250_fused"
        header_lines = (
            "// TTGIR produced by Gluon (triton 3.9.0) for the fp16 fused "
            f"variant, blocks {blocks}, {shapes}, {args.schedule} schedule.\n"
            "// Written by benchmarks/gluon_gemm_gfx1250.py --dump; "
            "source locations stripped.\n"
        )
        ttgir = header_lines + strip_locations(reference.asm["ttgir"])
        (out / f"{stem}.ttgir").write_text(ttgir)
        title = f"Gluon GEMM fp16, fused TDM, blocks {blocks}, {shapes}, {args.schedule} schedule"
        summary = isa_summary(reference, title, table)
        (out / f"{stem}.isa.txt").write_text(summary)


if __name__ == "__main__":
    main()
