"""Warp-specialized Hopper GEMM written in Gluon: the level Triton 3.9.0's own
``gl.warp_specialize`` reaches on the H100, as a reference for our tile GEMM.

Our kernel (``examples/gemm_gfx1250.py`` lowered for cuda:90) is software
pipelined in one partition: every warp issues its share of the TMA copies,
waits for them and issues the wgmmas. The warp-specialized form splits the
roles between partitions that the hardware schedules independently:

* a **producer** partition of one warp (few registers, ``setmaxnreg`` gives the
  rest to the consumers) walks the same tiles and fills a ring of
  ``NUM_STAGES`` (A, B) shared buffers with TMA copies: it waits until a slot
  is ``empty``, states the bytes it expects on the slot's ``ready`` barrier
  and issues both copies, which complete that barrier;
* the **default partition** (``num_warps`` 4 or 8: one or two consumer
  warpgroups) waits for ``ready``, issues an asynchronous wgmma, keeps one in
  flight (``warpgroup_mma_wait(1)``) and then releases the previous slot on
  its ``empty`` barrier; after the K loop it converts the fp32 accumulator to
  C's element type and stores it, through shared memory and a TMA store
  (``EPILOGUE_TMA=1``) or directly from registers with masks. Before releasing
  a slot, Triton syncs the partition's warps (a named barrier), so the one
  thread that arrives does so after every warpgroup's wgmma has read it.

Persistent (``PERSISTENT=1``): one program per SM, each walking tiles
``pid, pid + programs, ...`` in the grouped ``GROUP_M`` order of
``triton_gemm.py``. The producer does not wait for the epilogue, so it is
already filling the ring with the next tile's operands while the consumers
convert and store the current one: the overlap that warp specialization is
for. Non-persistent (``PERSISTENT=0``): one program per tile, as
``triton_gemm.py`` launches.

One consumer partition, cooperative: all its warps work on each tile (two
warpgroups split its rows). There is no ping-pong form (two consumers taking
tiles in turn from one ring): a consumer that starts its tile while the
other's K loop still runs waits on ring barriers a phase or more ahead of
their current one, and an mbarrier's parity wait cannot tell those phases
apart, so it passes at once and reads slots not yet filled (measured: a
launch failure on 4112x1168x336 on the H100). Ping-pong needs an order
barrier that lets the consumers' K loops run strictly in turn.

The kernel builds its TMA descriptors on the device from pointers, shapes and
strides (``tma.make_tensor_descriptor``: 128 bytes of global scratch per
descriptor and program, which our launcher allocates), each in the partition
that uses it (whose warp then fences the tensormap before its copies), so
it takes the same
arguments as ``triton_gemm.matmul_kernel`` (row-major A (MxK), B (KxN), C
(MxN); pointers, ``M``, ``N``, ``K`` and the row strides stated multiples of
16, the unit column strides constexpr 1, as Triton's JIT would specialise
them) plus the constexprs of its config. TMA handles the edges: loads past
``M``, ``N`` or ``K`` read zeros, stores past ``M`` or ``N`` are dropped.

Compiled ahead of time here with the pinned Triton 3.9.0 (``triton.compile``
on a ``GluonASTSource`` for ``GPUTarget("cuda", 90, 32)``, no GPU needed) and
bundled by :func:`gemm_opt.runtime.build.bundle_triton_kernel` with meta kind
``gluon-ws``; ``build_bundle.py --gluon-ws`` adds them and ``bench_gemm.py``
times the best config per shape next to ours, Triton and cuBLAS.

    python benchmarks/h100/gluon_ws_gemm.py   # compile every config, print its facts
"""

from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # triton_gemm.py, beside this file
    sys.path.insert(0, str(HERE))
import triton_gemm  # noqa: E402  (the argument convention shared with the baseline)
from triton_gemm import DIVISIBLE_16, DTYPES, UNIT_STRIDES  # noqa: E402


@gluon.jit
def _tile_offsets(tile, M, N, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, GROUP_M: gl.constexpr):
    """Row and column offset of C tile ``tile`` in grouped order (``triton_gemm.py``'s)."""
    num_pid_m = gl.cdiv(M, BLOCK_M)
    num_pid_n = gl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = tile // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = gl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((tile % num_pid_in_group) % group_size_m)
    pid_n = (tile % num_pid_in_group) // group_size_m
    return pid_m * BLOCK_M, pid_n * BLOCK_N


@gluon.jit
def _producer(
    a_ptr,
    b_ptr,
    a_bufs,
    b_bufs,
    ready,
    empty,
    M,
    N,
    K,
    stride_am,
    stride_ak: gl.constexpr,
    stride_bk,
    stride_bn: gl.constexpr,
    first_tile,
    tile_step,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    BLOCK_K: gl.constexpr,
    GROUP_M: gl.constexpr,
    NUM_STAGES: gl.constexpr,
):
    """The TMA partition: fill the ring with every tile's (A, B) K slices, in order."""
    # The descriptors are made by the warp that uses them: its own tensormap
    # acquire fence orders their writes before its TMA copies.
    a_desc = tma.make_tensor_descriptor(
        a_ptr, [M, K], [stride_am, stride_ak], [BLOCK_M, BLOCK_K], a_bufs.type.layout
    )
    b_desc = tma.make_tensor_descriptor(
        b_ptr, [K, N], [stride_bk, stride_bn], [BLOCK_K, BLOCK_N], b_bufs.type.layout
    )
    num_tiles = gl.cdiv(M, BLOCK_M) * gl.cdiv(N, BLOCK_N)
    k_tiles = gl.cdiv(K, BLOCK_K)
    nbytes: gl.constexpr = a_desc.block_type.nbytes + b_desc.block_type.nbytes
    it = 0
    for tile in range(first_tile, num_tiles, tile_step):
        off_m, off_n = _tile_offsets(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        for ki in range(k_tiles):
            s = it % NUM_STAGES
            # A fresh mbarrier counts as having completed the phase before 0, so the
            # first pass over the ring does not wait.
            mbarrier.wait(empty.index(s), ((it // NUM_STAGES) & 1) ^ 1)
            mbarrier.expect(ready.index(s), nbytes)
            tma.async_load(a_desc, [off_m, ki * BLOCK_K], ready.index(s), a_bufs.index(s))
            tma.async_load(b_desc, [ki * BLOCK_K, off_n], ready.index(s), b_bufs.index(s))
            it += 1


@gluon.jit
def _consumer(
    a_bufs,
    b_bufs,
    ready,
    empty,
    c_ptr,
    M,
    N,
    K,
    stride_cm,
    stride_cn: gl.constexpr,
    first_tile,
    tile_step,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    BLOCK_K: gl.constexpr,
    GROUP_M: gl.constexpr,
    NUM_STAGES: gl.constexpr,
    EPILOGUE_TMA: gl.constexpr,
):
    """A wgmma partition: one wgmma in flight, then the epilogue of each of its tiles.

    The program's tiles are ``first_tile + j * tile_step``. Slices come through
    the ring in the producer's order, so tile ``j`` holds ring slots
    ``j * k_tiles ...``.
    """
    # The partition's warps stacked along M: a wgmma m64nBLOCK_Nk16 per warpgroup.
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[gl.num_warps(), 1], instr_shape=[16, BLOCK_N, 16]
    )
    dtype: gl.constexpr = c_ptr.dtype.element_ty
    if EPILOGUE_TMA:
        c_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_M, BLOCK_N], dtype)
        c_desc = tma.make_tensor_descriptor(
            c_ptr, [M, N], [stride_cm, stride_cn], [BLOCK_M, BLOCK_N], c_layout
        )
        c_smem = gl.allocate_shared_memory(dtype, [BLOCK_M, BLOCK_N], c_layout)
    num_tiles = gl.cdiv(M, BLOCK_M) * gl.cdiv(N, BLOCK_N)
    k_tiles = gl.cdiv(K, BLOCK_K)
    program_tiles = gl.cdiv(num_tiles - first_tile, tile_step)
    for j in range(program_tiles):
        off_m, off_n = _tile_offsets(first_tile + j * tile_step, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        acc = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, acc_layout)
        for ki in range(k_tiles):
            it = j * k_tiles + ki
            s = it % NUM_STAGES
            mbarrier.wait(ready.index(s), (it // NUM_STAGES) & 1)
            acc = warpgroup_mma(a_bufs.index(s), b_bufs.index(s), acc, is_async=True)
            # Every wgmma but this one has read its operands: give the previous slot back.
            acc, _, _ = warpgroup_mma_wait(1, deps=[acc, a_bufs.index(s), b_bufs.index(s)])
            mbarrier.arrive(empty.index((it + NUM_STAGES - 1) % NUM_STAGES), pred=ki > 0)
        acc = warpgroup_mma_wait(0, deps=[acc])
        last = j * k_tiles + k_tiles - 1
        mbarrier.arrive(empty.index(last % NUM_STAGES), pred=k_tiles > 0)

        c = acc.to(dtype)
        if EPILOGUE_TMA:
            tma.store_wait(0)  # the previous tile's store has read c_smem
            c_smem.store(c)
            fence_async_shared()
            tma.async_store(c_desc, [off_m, off_n], c_smem)
        else:
            offs_m = off_m + gl.arange(0, BLOCK_M, gl.SliceLayout(1, acc_layout))
            offs_n = off_n + gl.arange(0, BLOCK_N, gl.SliceLayout(0, acc_layout))
            ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
            gl.store(ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
    if EPILOGUE_TMA:
        tma.store_wait(0)


@gluon.jit
def gemm_ws_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak: gl.constexpr,
    stride_bk,
    stride_bn: gl.constexpr,
    stride_cm,
    stride_cn: gl.constexpr,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    BLOCK_K: gl.constexpr,
    GROUP_M: gl.constexpr,
    NUM_STAGES: gl.constexpr,
    PERSISTENT: gl.constexpr,
    EPILOGUE_TMA: gl.constexpr,
    PRODUCER_REGS: gl.constexpr,
    CONSUMER_REGS: gl.constexpr,
):
    """C (MxN) = A (MxK) @ B (KxN), fp32 accumulation, C in A's element type."""
    dtype: gl.constexpr = a_ptr.dtype.element_ty
    a_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_M, BLOCK_K], dtype)
    b_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_K, BLOCK_N], dtype)
    a_bufs = gl.allocate_shared_memory(dtype, [NUM_STAGES, BLOCK_M, BLOCK_K], a_layout)
    b_bufs = gl.allocate_shared_memory(dtype, [NUM_STAGES, BLOCK_K, BLOCK_N], b_layout)
    ready = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(NUM_STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)

    if PERSISTENT:
        first_tile = gl.program_id(0)
        tile_step = gl.num_programs(0)
    else:
        # A program per tile on a cdiv(M) x cdiv(N) grid, x fastest (triton_gemm.py's).
        first_tile = gl.program_id(1) * gl.num_programs(0) + gl.program_id(0)
        tile_step = gl.cdiv(M, BLOCK_M) * gl.cdiv(N, BLOCK_N)

    # (The partitions' arguments are written out in each call: a tuple built
    # beforehand would turn their constexprs into tensors.)
    gl.warp_specialize(
        [
            (
                _consumer,
                (
                    a_bufs,
                    b_bufs,
                    ready,
                    empty,
                    c_ptr,
                    M,
                    N,
                    K,
                    stride_cm,
                    stride_cn,
                    first_tile,
                    tile_step,
                    BLOCK_M,
                    BLOCK_N,
                    BLOCK_K,
                    GROUP_M,
                    NUM_STAGES,
                    EPILOGUE_TMA,
                ),
            ),
            (
                _producer,
                (
                    a_ptr,
                    b_ptr,
                    a_bufs,
                    b_bufs,
                    ready,
                    empty,
                    M,
                    N,
                    K,
                    stride_am,
                    stride_ak,
                    stride_bk,
                    stride_bn,
                    first_tile,
                    tile_step,
                    BLOCK_M,
                    BLOCK_N,
                    BLOCK_K,
                    GROUP_M,
                    NUM_STAGES,
                ),
            ),
        ],
        [1],
        [PRODUCER_REGS],
    )


#: Registers of one H100 SM (the kernel runs one CTA per SM).
SM_REGISTERS = 65536
#: Shared memory one CTA may use on the H100 (227 KiB).
MAX_SHARED_BYTES = 227 * 1024


@dataclass(frozen=True)
class Config:
    """One configuration of the warp-specialized kernel."""

    block_m: int
    block_n: int
    block_k: int
    num_stages: int
    """(A, B) slots in the ring (the kernel's NUM_STAGES)."""
    num_warps: int
    """Warps of a consumer partition: 4 or 8, one or two warpgroups (the default
    partition's, the kernel's ``num_warps``)."""
    persistent: bool = True
    epilogue_tma: bool = True
    """C staged in shared memory and written by a TMA store; False: masked stores
    from the accumulator's registers (no C buffer, room for a deeper ring)."""
    group_m: int = 8
    producer_regs: int = 40
    """Registers per thread of the producer warp (``setmaxnreg``; the rest go to
    the consumers)."""

    @property
    def tag(self) -> str:
        return (
            f"{self.block_m}x{self.block_n}x{self.block_k}"
            f"_s{self.num_stages}_w{self.num_warps}_g{self.group_m}"
            + ("_tmastore" if self.epilogue_tma else "")
            + ("_pers" if self.persistent else "")
        )

    @property
    def total_warps(self) -> int:
        """Warps of the CTA: the consumers plus the producer's warpgroup (Triton
        allocates registers by warpgroup, so the one producer warp takes four)."""
        return self.num_warps + 4

    @property
    def maxnreg(self) -> int:
        """The kernel's register limit per thread: the SM's registers over the CTA's
        threads, a multiple of 8, at most 256 (``setmaxnreg`` moves registers from
        the producer's warpgroup to the consumers within this budget)."""
        return min(256, SM_REGISTERS // (32 * self.total_warps) // 8 * 8)

    @property
    def consumer_regs(self) -> int:
        """Registers per thread of a consumer partition after ``setmaxnreg``: the
        CTA's budget less the producer warpgroup's, shared by the consumer warps."""
        budget = self.maxnreg * 32 * self.total_warps - self.producer_regs * 32 * 4
        return min(256, budget // (32 * self.num_warps) // 8 * 8)

    @property
    def shared_bytes(self) -> int:
        """Shared memory of the ring and the C buffer (barriers aside)."""
        ring = self.num_stages * (self.block_m + self.block_n) * self.block_k * 2
        c_buffer = self.block_m * self.block_n * 2 if self.epilogue_tma else 0
        return ring + c_buffer

    def grid(self) -> list[Any]:
        """The bundle's grid: a program per tile, or (persistent) one program, which
        launchers widen with ``benchlib.launch_options`` (one per SM)."""
        if self.persistent:
            return [1, 1, 1]
        return [("M", self.block_m), ("N", self.block_n), 1]


#: The configs compiled into bundles: the Hopper tile shapes of ``triton_gemm.py``,
#: persistent with both epilogues, and one non-persistent form for comparison.
CONFIGS = (
    Config(128, 256, 64, 3, 8),
    Config(128, 256, 64, 4, 8, epilogue_tma=False),
    Config(128, 128, 64, 4, 4),
    Config(128, 128, 64, 5, 4),
    Config(128, 128, 64, 5, 8),
    Config(128, 256, 64, 3, 8, persistent=False),
)
ARG_NAMES = tuple(gemm_ws_kernel.arg_names)
CONFIG_CONSTEXPRS = (
    "BLOCK_M",
    "BLOCK_N",
    "BLOCK_K",
    "GROUP_M",
    "NUM_STAGES",
    "PERSISTENT",
    "EPILOGUE_TMA",
    "PRODUCER_REGS",
    "CONSUMER_REGS",
)
CONSTEXPRS = (*UNIT_STRIDES, *CONFIG_CONSTEXPRS)


def signature(dtype: str) -> dict[str, str]:
    """Triton's signature of the kernel for ``dtype`` (``triton_gemm.py``'s arguments,
    then this kernel's constexprs)."""
    return triton_gemm.signature(dtype, ARG_NAMES, CONSTEXPRS)


def constexprs(config: Config) -> dict[str, int]:
    """The kernel's constexprs for ``config`` (flags as 0/1: bundles carry numbers)."""
    return {
        **triton_gemm.constexprs(config),  # unit strides, block shape, GROUP_M
        "NUM_STAGES": config.num_stages,
        "PERSISTENT": int(config.persistent),
        "EPILOGUE_TMA": int(config.epilogue_tma),
        "PRODUCER_REGS": config.producer_regs,
        "CONSUMER_REGS": config.consumer_regs,
    }


def compile_config(config: Config, dtype: str, capability: int = 90) -> Any:
    """Compile one config with this machine's Triton (no GPU); its ``CompiledKernel``."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    if config.shared_bytes > MAX_SHARED_BYTES:
        raise ValueError(f"{config.tag}: {config.shared_bytes} B of shared memory > 227 KiB")
    attrs = {(ARG_NAMES.index(n),): [["tt.divisibility", 16]] for n in DIVISIBLE_16}
    src = GluonASTSource(gemm_ws_kernel, signature(dtype), constexprs(config), attrs)
    return triton.compile(
        src,
        target=GPUTarget("cuda", capability, 32),
        options={"num_warps": config.num_warps, "maxnreg": config.maxnreg},
    )


def ptx_facts(ptx: str) -> dict[str, Any]:
    """What the PTX says the kernel is: wgmma and TMA counts, the ``setmaxnreg``
    register moves, and local memory (a spill or stack frame) declared or used."""
    return {
        "wgmma": len(re.findall(r"\bwgmma\.mma_async\.", ptx)),
        "tma_loads": len(re.findall(r"\bcp\.async\.bulk\.tensor\.\dd\.shared::cta\.global\b", ptx)),
        "tma_stores": len(
            re.findall(r"\bcp\.async\.bulk\.tensor\.\dd\.global\.shared::cta\b", ptx)
        ),
        "setmaxnreg": sorted(
            {
                f"{d} {n}"
                for d, n in re.findall(r"setmaxnreg\.(inc|dec)\.sync\.aligned\.u32\s+(\d+)", ptx)
            }
        ),
        "local": bool(re.search(r"\.local\b", ptx)),
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
            facts = ptx_facts(compiled.asm["ptx"])
            k = bundle_triton_kernel(
                compiled,
                ARG_NAMES,
                signature(dtype),
                constexprs=constexprs(config),
                divisibility={n: 16 for n in DIVISIBLE_16},
                name=f"gluon_ws_{dtype}_{config.tag}",
                grid=config.grid(),
                meta={
                    **triton_gemm.bundle_meta("gluon-ws", "gluon_ws_gemm.py", dtype, config),
                    "persistent": config.persistent,
                    "epilogue": "tma-store" if config.epilogue_tma else "registers",
                    "consumer_warps": config.num_warps,
                    "producer_warps": 1,
                    "maxnreg": config.maxnreg,
                    "producer_regs": config.producer_regs,
                    "consumer_regs": config.consumer_regs,
                },
            )
            out.append(k)
            if not quiet:
                print(
                    f"compiled {k.name}: {k.sm}, {k.num_warps} warps "
                    f"({config.num_warps} consumer + producer warpgroup), "
                    f"{k.shared_bytes} B shared, "
                    f"{_resources(k.binary)}, maxnreg {config.maxnreg}, "
                    f"setmaxnreg {', '.join(facts['setmaxnreg']) or 'none'}, "
                    f"{facts['wgmma']} wgmma, {facts['tma_loads']} TMA loads, "
                    f"{facts['tma_stores']} TMA stores, local memory: "
                    f"{'yes' if facts['local'] else 'none'} "
                    f"({time.perf_counter() - start:.1f} s)",
                    flush=True,
                )
    return out


def _resources(cubin: bytes) -> str:
    """Registers and stack/local bytes of a cubin (``cubin_usage.resource_usage``)."""
    from cubin_usage import resource_usage

    return resource_usage(cubin)


def main() -> int:
    bundle_kernels()
    return 0


if __name__ == "__main__":
    sys.exit(main())
