"""What stream-K's linear and tree fix-ups cost on cuda:90, read from the PTX.

The fix-ups move fp32 partial tiles through global memory and wait on
flags. Two costs are pinned here: a wait polls from one thread (an acquire
load, not an atomic) and shares the value through a CTA barrier, and the
partial tiles are stored and loaded in the accumulator's own MMA layout
(quads of lanes cover whole 32-byte sectors), so a fix-up kernel needs no
shared memory beyond the atomic one's (a blocked layout would convert
through a tile-sized scratch buffer and lower the occupancy, that is the
number of resident programs).
"""

from __future__ import annotations

import pytest

from gemm_opt.kernels.schedule_gemm import build_gemm_module
from gemm_opt.lowering.compile import compile_tile_module

CONFIG = dict(block_m=64, block_n=64, block_k=64, num_warps=4, num_stages=4, dtype="bf16")


@pytest.fixture(scope="module")
def kernels():
    out = {}
    for reduction in ("atomic", "linear", "tree"):
        module = build_gemm_module(kind="stream-k", reduction=reduction, target="cuda:90", **CONFIG)
        out[reduction] = compile_tile_module(module, "cuda:90")
    return out


def _loop_of(ptx: str, needle: str) -> list[str]:
    """The instructions of the innermost loop (label to back branch) holding ``needle``."""
    lines = [ln.split("//")[0].strip() for ln in ptx.splitlines()]
    at = next(i for i, ln in enumerate(lines) if needle in ln)
    start = max(i for i in range(at) if lines[i].startswith("$L__BB") and lines[i].endswith(":"))
    label = lines[start][:-1]
    end = next(
        i for i in range(at, len(lines)) if "bra" in lines[i] and lines[i].endswith(f"{label};")
    )
    return [ln for ln in lines[start + 1 : end + 1] if ln]


@pytest.mark.parametrize("reduction", ["linear", "tree"])
def test_a_flag_wait_polls_from_one_thread_then_barriers(kernels, reduction):
    ptx = kernels[reduction].asm["ptx"]
    loop = _loop_of(ptx, "ld.global.gpu.acquire")
    memory = [ln for ln in loop if ".global" in ln]
    guard, _, load = memory[0].partition(" ")
    assert (
        len(memory) == 1
        and guard.startswith("@%p")
        and load.startswith("ld.global.gpu.acquire.b32")
    )
    assert not any("atom." in ln for ln in loop)  # a load, not a read-modify-write
    assert (
        sum(ln.startswith("bar.sync") for ln in loop) == 2
    )  # before the poll, after its broadcast


@pytest.mark.parametrize("reduction", ["linear", "tree"])
def test_fixup_partials_take_no_shared_memory(kernels, reduction):
    fixup, atomic = kernels[reduction], kernels["atomic"]
    assert fixup.metadata["shared"] == atomic.metadata["shared"]
    ptx = fixup.asm["ptx"]
    # 64x64 fp32 over 128 threads: 16 pairs of adjacent columns per thread
    assert ptx.count("st.global.v2.b32") == 16
    assert ptx.count("ld.global.v2.b32") == 16
