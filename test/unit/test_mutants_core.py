"""Core tables and limits pinned to the facts they stand for (found by
``benchmarks/mutation.py``: the other tests read these values through the
table, so a wrong entry passed them all).
"""

from __future__ import annotations

import dataclasses

import pytest

from gemm_opt.core.targets import TARGET_NAMES, TARGETS, Mma, get_target

KIB = 1024

#: Each target's facts: LDS per workgroup from LLVM's AMDGPU limits, 227 KiB of
#: opt-in shared memory per block on sm_90; wave64 on CDNA, wave32 elsewhere;
#: the MFMA 32x32 and 16x16 16-bit instructions' K (16/32 on gfx950's v4,
#: 8/16 on gfx942's v3) and their operands' kWidth.
FACTS: dict[str, dict[str, object]] = {
    "gfx1250": {
        "backend": "hip", "arch": "gfx1250", "warp_size": 32, "tdm": True,
        "mma": Mma.WMMA_V3, "shared_memory_bytes": 320 * KIB, "max_threads_per_block": 1024,
        "direct_to_lds": False, "i1_memory": True, "mfma_version": 0, "mfma_k_width": 0,
        "mfma_k32": 0, "mfma_k16": 0, "warp_specialize": True,
    },
    "gfx950": {
        "backend": "hip", "arch": "gfx950", "warp_size": 64, "tdm": False,
        "mma": Mma.MFMA_V4, "shared_memory_bytes": 160 * KIB, "max_threads_per_block": 1024,
        "direct_to_lds": True, "i1_memory": True, "mfma_version": 4, "mfma_k_width": 8,
        "mfma_k32": 16, "mfma_k16": 32, "warp_specialize": False,
    },
    "gfx942": {
        "backend": "hip", "arch": "gfx942", "warp_size": 64, "tdm": False,
        "mma": Mma.MFMA_V3, "shared_memory_bytes": 64 * KIB, "max_threads_per_block": 1024,
        "direct_to_lds": False, "i1_memory": True, "mfma_version": 3, "mfma_k_width": 4,
        "mfma_k32": 8, "mfma_k16": 16, "warp_specialize": False,
    },
    "cuda:90": {
        "backend": "cuda", "arch": 90, "warp_size": 32, "tdm": False,
        "mma": Mma.WGMMA, "shared_memory_bytes": 227 * KIB, "max_threads_per_block": 1024,
        "direct_to_lds": True, "i1_memory": False, "mfma_version": 0, "mfma_k_width": 0,
        "mfma_k32": 0, "mfma_k16": 0, "warp_specialize": True,
    },
}  # fmt: skip


def test_the_table_lists_the_four_targets_in_order() -> None:
    assert TARGET_NAMES == ("gfx1250", "gfx950", "gfx942", "cuda:90")


@pytest.mark.parametrize("name", sorted(FACTS))
def test_each_target_holds_its_documented_facts(name: str) -> None:
    target = get_target(name)
    assert target is TARGETS[name]
    assert dataclasses.asdict(target) == {"name": name, **FACTS[name]}
    assert target.nvidia == (FACTS[name]["backend"] == "cuda")
    assert target.triton_target == f"{FACTS[name]['backend']}:{FACTS[name]['arch']}"
