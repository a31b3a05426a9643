"""The one table of GPU targets: every fact the project knows about a target.

The dialect verifiers (warp size, launchable thread counts, shared-memory
capacity), the front end, the named pipelines, the conversion to TritonGPU and
the Triton bridge all read this table; nothing else lists targets. Pure Python,
so it is usable without the MLIR bindings or Triton.

Shared-memory sizes are the most one workgroup (thread block) may allocate:
LDS is 320 KiB on gfx1250, 160 KiB on gfx950 and 64 KiB on gfx942 (LLVM's
AMDGPU limits); 227 KiB of opt-in dynamic shared memory on sm_90. An sm_90 SM
holds 228 KiB for all its blocks, 1 KiB of it reserved per block, and 64 Ki
registers, 255 at most a thread (CUDA's compute capability 9.0 limits); a
CDNA CU its LDS and 4 x 512 x 64 vector registers. gfx1250's SM is not
modelled (its copies are TDM's, never through registers).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import Enum

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # Python 3.10

    class StrEnum(str, Enum):
        """A string-valued enum whose members are their values (``enum.StrEnum``)."""

        def __str__(self) -> str:
            return str(self.value)

        def __format__(self, spec: str) -> str:
            return format(str(self.value), spec)


#: The widest global vector access of every target, in bytes: NVIDIA's
#: ``cp.async`` (4, 8 or 16 bytes) and 128-bit loads and stores, gfx950's
#: direct-to-LDS and every target's ``dwordx4`` / ``b128`` loads; the unit of
#: TMA strides and base addresses. A copy row whose start and bound are
#: multiples of it moves in whole vectors.
VECTOR_BYTES = 16
#: The narrowest vector NVIDIA's ``cp.async`` moves (4, 8 or 16 bytes).
CP_ASYNC_MIN_BYTES = 4
#: The most programs a launch has along each grid axis (x, y, z): CUDA's limits, which
#: the runtime checks before every launch. Kernels of every target are compiled for
#: grids within them: the hand-off proves an index non-negative from them (a
#: ``tile.program_id`` is below its axis's limit) and drops the mask term it would need.
MAX_GRID = (2**31 - 1, 65535, 65535)


class Mma(StrEnum):
    """The matrix instruction family ``tile.wmma`` lowers to on a target; the hand-off
    picks its target strategy by it."""

    WMMA_V3 = "wmma v3"
    MFMA_V4 = "mfma v4"
    MFMA_V3 = "mfma v3"
    #: wgmma, or mma.sync where it does not fit (the ``mma`` option chooses).
    WGMMA = "wgmma"


@dataclass(frozen=True)
class Target:
    """One GPU target, by its short name (``gfx1250``, ..., ``cuda:90``)."""

    name: str
    #: Triton backend: ``hip`` (AMD) or ``cuda`` (NVIDIA).
    backend: str
    #: Triton's architecture: ``"gfx1250"`` on AMD, the compute capability on NVIDIA.
    arch: str | int
    #: Threads per warp (wave): 32 on gfx1250 and NVIDIA, 64 on gfx950/gfx942.
    warp_size: int
    #: Whether the target has the Tensor Data Mover (so ``warp_used_hint`` is honoured).
    tdm: bool
    #: The matrix instruction family ``tile.wmma`` lowers to.
    mma: Mma
    #: Bytes of LDS / shared memory one workgroup may allocate.
    shared_memory_bytes: int
    #: Threads one workgroup (thread block) may launch.
    max_threads_per_block: int
    #: Whether global -> shared copies can bypass registers (``cp.async`` style).
    direct_to_lds: bool = False
    #: Whether global loads and stores of i1 elements lower (Triton 3.9.0's
    #: NVIDIA backend aborts on them).
    i1_memory: bool = True
    #: MFMA version, dot-operand kWidth, and the K of the 32x32 and 16x16
    #: 16-bit instructions (targets without TDM use MFMA instead of WMMA).
    mfma_version: int = 0
    mfma_k_width: int = 0
    mfma_k32: int = 0
    mfma_k16: int = 0
    #: Whether Triton 3.9.0's backend lowers ``ttg.warp_specialize`` for the target.
    warp_specialize: bool = False
    #: The 8-bit float element types (MLIR spelling) its MMA reads: the OCP
    #: ``f8E4M3FN``/``f8E5M2`` everywhere but gfx942, whose MFMA reads the FNUZ pair.
    fp8_types: tuple[str, ...] = ()
    #: The block-scale type of its block-scaled MMA (MXFP8: ``f8E8M0FNU``, one
    #: scale per 32 elements of K), or None where it has none.
    mx_scale_type: str | None = None
    #: MFMA targets: the K of the 32x32 and 16x16 instructions for 8-bit inputs,
    #: and the dot-operand kWidth of 8-bit operands; ``mfma_mx_*`` the same for the
    #: block-scaled instructions (gfx950's ``v_mfma_scale_*_f8f6f4``).
    mfma_fp8_k32: int = 0
    mfma_fp8_k16: int = 0
    mfma_fp8_k_width: int = 0
    mfma_mx_k32: int = 0
    mfma_mx_k16: int = 0
    mfma_mx_k_width: int = 0
    #: What one SM (CU) holds for all the workgroups resident on it: bytes of shared
    #: memory (LDS), of which the driver reserves ``shared_reserved_bytes`` per
    #: workgroup, and 32-bit registers, of which a thread holds at most
    #: ``max_thread_registers``; 0 where not modelled (:meth:`resident_blocks`).
    sm_shared_memory_bytes: int = 0
    shared_reserved_bytes: int = 0
    sm_registers: int = 0
    max_thread_registers: int = 0

    @property
    def nvidia(self) -> bool:
        """Whether Triton's NVIDIA backend compiles for this target."""
        return self.backend == "cuda"

    @property
    def triton_target(self) -> str:
        """The ``ttg.target`` value, e.g. ``"hip:gfx1250"`` or ``"cuda:90"``."""
        return f"{self.backend}:{self.arch}"

    def resident_blocks(self, threads: int, shared_bytes: int) -> int | None:
        """Workgroups of ``threads`` threads and ``shared_bytes`` of shared memory one SM
        holds at once, by its shared memory and by its registers with every thread at
        the most it may hold (a kernel's own count is known only once compiled); None
        where the table does not model the SM."""
        if not (self.sm_shared_memory_bytes and self.sm_registers and threads > 0):
            return None
        held = max(shared_bytes + self.shared_reserved_bytes, 1)
        by_shared = self.sm_shared_memory_bytes // held
        return min(by_shared, self.sm_registers // (threads * self.max_thread_registers))

    @property
    def direct_copy_bytes(self) -> int:
        """The narrowest vector a direct global -> shared copy moves: 4 bytes for
        ``cp.async`` (:data:`CP_ASYNC_MIN_BYTES`), 16 for AMD's direct-to-LDS loads
        (:data:`VECTOR_BYTES`); 0 where copies cannot bypass registers."""
        if not self.direct_to_lds:
            return 0
        return CP_ASYNC_MIN_BYTES if self.nvidia else VECTOR_BYTES


#: The OCP FP8 element types (MLIR spelling).
_OCP_FP8 = ("f8E4M3FN", "f8E5M2")
#: A CDNA3/CDNA4 CU's vector registers: 4 SIMDs of 512 per lane, 64 lanes (a wave's
#: lane holds at most 512: 256 architectural and 256 accumulation registers).
_CDNA_REGISTERS = 4 * 512 * 64

TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target(
            "gfx1250",
            backend="hip",
            arch="gfx1250",
            warp_size=32,
            tdm=True,
            mma=Mma.WMMA_V3,
            shared_memory_bytes=320 * 1024,
            max_threads_per_block=1024,
            warp_specialize=True,
            fp8_types=_OCP_FP8,
            mx_scale_type="f8E8M0FNU",
        ),
        Target(
            "gfx950",
            backend="hip",
            arch="gfx950",
            warp_size=64,
            tdm=False,
            mma=Mma.MFMA_V4,
            shared_memory_bytes=160 * 1024,
            max_threads_per_block=1024,
            sm_shared_memory_bytes=160 * 1024,
            sm_registers=_CDNA_REGISTERS,
            max_thread_registers=512,
            direct_to_lds=True,
            mfma_version=4,
            mfma_k_width=8,
            mfma_k32=16,
            mfma_k16=32,
            fp8_types=_OCP_FP8,
            mx_scale_type="f8E8M0FNU",
            mfma_fp8_k32=16,
            mfma_fp8_k16=32,
            mfma_fp8_k_width=8,
            mfma_mx_k32=64,
            mfma_mx_k16=128,
            mfma_mx_k_width=16,
        ),
        Target(
            "gfx942",
            backend="hip",
            arch="gfx942",
            warp_size=64,
            tdm=False,
            mma=Mma.MFMA_V3,
            shared_memory_bytes=64 * 1024,
            max_threads_per_block=1024,
            sm_shared_memory_bytes=64 * 1024,
            sm_registers=_CDNA_REGISTERS,
            max_thread_registers=512,
            mfma_version=3,
            mfma_k_width=4,
            mfma_k32=8,
            mfma_k16=16,
            fp8_types=("f8E4M3FNUZ", "f8E5M2FNUZ"),
            mfma_fp8_k32=16,
            mfma_fp8_k16=32,
            mfma_fp8_k_width=8,
        ),
        Target(
            "cuda:90",
            backend="cuda",
            arch=90,
            warp_size=32,
            tdm=False,
            mma=Mma.WGMMA,
            shared_memory_bytes=227 * 1024,
            max_threads_per_block=1024,
            sm_shared_memory_bytes=228 * 1024,
            shared_reserved_bytes=1024,
            sm_registers=65536,
            max_thread_registers=255,
            direct_to_lds=True,
            i1_memory=False,
            warp_specialize=True,
            fp8_types=_OCP_FP8,
        ),
    )
}
"""Every supported target, by short name."""

TARGET_NAMES: tuple[str, ...] = tuple(TARGETS)


def get_target(name: str) -> Target:
    """The target called ``name``; ValueError naming the known ones otherwise."""
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown target '{name}' (known: {', '.join(TARGETS)})") from None


__all__ = [
    "CP_ASYNC_MIN_BYTES",
    "MAX_GRID",
    "TARGETS",
    "TARGET_NAMES",
    "VECTOR_BYTES",
    "Mma",
    "StrEnum",
    "Target",
    "get_target",
]
