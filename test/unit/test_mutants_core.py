"""Core tables and limits pinned to the facts they stand for (found by
``benchmarks/mutation.py``: the other tests read these values through the
table, so a wrong entry passed them all).
"""

from __future__ import annotations

import dataclasses

import pytest

from gemm_opt.core import schedules as S
from gemm_opt.core.targets import TARGET_NAMES, TARGETS, Mma, get_target

KIB = 1024

#: The SM columns: not modelled on gfx1250 (TDM copies); a CDNA CU's LDS, 4 SIMDs of
#: 512 registers per lane (64 lanes), 512 a lane at most.
_NO_SM = {"sm_shared_memory_bytes": 0, "shared_reserved_bytes": 0, "sm_registers": 0,
          "max_thread_registers": 0}  # fmt: skip


def _cdna_sm(lds: int) -> dict[str, int]:
    return {"sm_shared_memory_bytes": lds, "shared_reserved_bytes": 0,
            "sm_registers": 4 * 512 * 64, "max_thread_registers": 512}  # fmt: skip


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
        **_NO_SM,
    },
    "gfx950": {
        "backend": "hip", "arch": "gfx950", "warp_size": 64, "tdm": False,
        "mma": Mma.MFMA_V4, "shared_memory_bytes": 160 * KIB, "max_threads_per_block": 1024,
        "direct_to_lds": True, "i1_memory": True, "mfma_version": 4, "mfma_k_width": 8,
        "mfma_k32": 16, "mfma_k16": 32, "warp_specialize": False,
        **_cdna_sm(160 * KIB),
    },
    "gfx942": {
        "backend": "hip", "arch": "gfx942", "warp_size": 64, "tdm": False,
        "mma": Mma.MFMA_V3, "shared_memory_bytes": 64 * KIB, "max_threads_per_block": 1024,
        "direct_to_lds": False, "i1_memory": True, "mfma_version": 3, "mfma_k_width": 4,
        "mfma_k32": 8, "mfma_k16": 16, "warp_specialize": False,
        **_cdna_sm(64 * KIB),
    },
    "cuda:90": {
        "backend": "cuda", "arch": 90, "warp_size": 32, "tdm": False,
        "mma": Mma.WGMMA, "shared_memory_bytes": 227 * KIB, "max_threads_per_block": 1024,
        "direct_to_lds": True, "i1_memory": False, "mfma_version": 0, "mfma_k_width": 0,
        "mfma_k32": 0, "mfma_k16": 0, "warp_specialize": True,
        "sm_shared_memory_bytes": 228 * KIB, "shared_reserved_bytes": KIB,
        "sm_registers": 65536, "max_thread_registers": 255,
    },
}  # fmt: skip
#: The 8-bit columns (docs/fp8.md): the OCP formats everywhere but gfx942's FNUZ
#: pair; MX scales (e8m0) on the two targets with a scaled MMA; gfx950's and
#: gfx942's 8-bit MFMA K (32x32 and 16x16) and k-width, and gfx950's MX MFMA's.
_NO_MFMA8 = {"mfma_fp8_k32": 0, "mfma_fp8_k16": 0, "mfma_fp8_k_width": 0}
_NO_MX = {"mfma_mx_k32": 0, "mfma_mx_k16": 0, "mfma_mx_k_width": 0}
_OCP, _FNUZ = ("f8E4M3FN", "f8E5M2"), ("f8E4M3FNUZ", "f8E5M2FNUZ")
FP8_FACTS: dict[str, dict[str, object]] = {
    "gfx1250": {"fp8_types": _OCP, "mx_scale_type": "f8E8M0FNU", **_NO_MFMA8, **_NO_MX},
    "gfx950": {
        "fp8_types": _OCP, "mx_scale_type": "f8E8M0FNU",
        "mfma_fp8_k32": 16, "mfma_fp8_k16": 32, "mfma_fp8_k_width": 8,
        "mfma_mx_k32": 64, "mfma_mx_k16": 128, "mfma_mx_k_width": 16,
    },
    "gfx942": {
        "fp8_types": _FNUZ, "mx_scale_type": None,
        "mfma_fp8_k32": 16, "mfma_fp8_k16": 32, "mfma_fp8_k_width": 8, **_NO_MX,
    },
    "cuda:90": {"fp8_types": _OCP, "mx_scale_type": None, **_NO_MFMA8, **_NO_MX},
}  # fmt: skip


def test_the_table_lists_the_four_targets_in_order() -> None:
    assert TARGET_NAMES == ("gfx1250", "gfx950", "gfx942", "cuda:90")


@pytest.mark.parametrize("name", sorted(FACTS))
def test_each_target_holds_its_documented_facts(name: str) -> None:
    target = get_target(name)
    assert target is TARGETS[name]
    assert dataclasses.asdict(target) == {"name": name, **FACTS[name], **FP8_FACTS[name]}
    assert target.nvidia == (FACTS[name]["backend"] == "cuda")
    assert target.triton_target == f"{FACTS[name]['backend']}:{FACTS[name]['arch']}"


# ---- the schedule kernels' ABI (core/schedules/abi.py) ----------------------------------


def test_the_abi_constants() -> None:
    """The MMA tile (16x16, K 32), the ring depths, the alignment an aligned kernel
    assumes (16 bytes: 8 elements of a 16-bit type, 16 of an 8-bit one) and the defaults."""
    assert (S.MMA_M, S.MMA_N, S.MMA_K) == (16, 16, 32)
    assert (S.MIN_STAGES, S.MAX_STAGES, S.ALIGNMENT_BYTES) == (2, 6, 16)
    assert (S.alignment("fp16"), S.alignment("bf16"), S.alignment("f8e4m3")) == (8, 8, 16)
    assert dataclasses.astuple(S.GemmConfig()) == (128, 128, 64, 8, 4, None)
    assert dataclasses.astuple(S.MODEL_CONFIG) == (64, 64, 32, 4, 4, None)


@pytest.mark.parametrize(
    ("num_warps", "grid"), [(1, (1, 1)), (2, (2, 1)), (4, (2, 2)), (8, (4, 2)), (16, (4, 4))]
)
def test_the_warp_grid_is_the_squarest_with_more_warps_along_m(num_warps, grid) -> None:
    assert S.warp_grid(num_warps) == grid
    assert S.pipelined(num_warps) == S.tma_copies(num_warps) == (num_warps >= 2)


def _config(**kw: int | None) -> None:
    S.check_kernel_config(**{"block_m": 64, "block_n": 64, "block_k": 64, "num_warps": 4,
                             "num_stages": None, **kw})  # fmt: skip


@pytest.mark.parametrize("stages", [None, 2, 6])
def test_a_pipelined_kernel_takes_two_to_six_stages(stages: int | None) -> None:
    _config(num_stages=stages)


@pytest.mark.parametrize(("num_warps", "stages"), [(4, 1), (4, 7), (1, 2), (1, 0)])
def test_stage_counts_outside_the_body_are_refused(num_warps: int, stages: int) -> None:
    want = "2 to 6" if num_warps > 1 else "1"
    block = 64 if num_warps > 1 else 16
    with pytest.raises(ValueError, match=f"num_stages must be {want} "):
        _config(block_m=block, block_n=block, num_warps=num_warps, num_stages=stages)
    if num_warps == 1:
        _config(block_m=16, block_n=16, num_warps=1, num_stages=1)


@pytest.mark.parametrize(
    ("kw", "name", "multiple"),
    [
        ({"block_k": 48}, "block_k", 32),
        ({"block_k": 16}, "block_k", 32),
        ({"num_warps": 8, "block_m": 48}, "block_m", 32),  # 48 folds 2 warps onto N
        ({"num_warps": 8, "block_n": 48}, "block_m", 128),  # 48 folds the 8 warps onto M
        ({"num_warps": 4, "block_n": 24}, "block_n", 16),  # folded to 4x1: 16-wide columns
    ],
)
def test_blocks_must_split_over_the_mma_and_the_warp_grid(kw, name: str, multiple: int) -> None:
    with pytest.raises(ValueError, match=f"^{name} must be a multiple of {multiple} "):
        _config(**kw)
    _config(**{**kw, name: multiple})


@pytest.mark.parametrize(
    ("grouped", "trans_b", "block_k", "tma", "k"),
    [("none", False, 64, True, 8), ("m", False, 8, True, 8), ("m", False, 64, True, 64),
     ("m", True, 64, True, 8), ("m", False, 64, False, 8), ("k", False, 64, True, None)],
)  # fmt: skip
def test_an_aligned_kernels_divisibility_facts(grouped, trans_b, block_k, tma, k) -> None:
    """fp16: 8 elements (16 bytes) on the aligned arguments; a grouped "m" TMA twin's
    K also a multiple of block_k; grouped "k" (A (S, M), B (S, N): no operand's rows
    run along K) none on K."""
    facts = S.divisibility_facts(grouped, trans_b, block_k, True, tma, dtype="fp16")
    names = ["N", "lda", "ldb", "ldc"] + (["M"] if grouped == "k" else [])
    assert facts == {**dict.fromkeys(names, 8), **({} if k is None else {"K": k})}
    assert S.divisibility_facts(grouped, trans_b, block_k, False, tma, dtype="fp16") == {}


def test_kernel_spec_names_and_rules() -> None:
    spec = S.KernelSpec("stream-k", "linear", "none", "fp16", 128, 128, 64, 8, 4, 3,
                        aligned=True, tma=True)  # fmt: skip
    assert spec.name == "gemm_streamk_linear_fp16_128x128x64_g8_w4_s3_aligned_tma"
    ws = S.KernelSpec("work-stealing", None, "m", "bf16", 64, 64, 32, 4, 4, None,
                      num_xcds=8, trans_b=True)  # fmt: skip
    assert ws.name == "gemm_workstealing_groupedm_tb_bf16_64x64x32_g4_w4_x8"
    # Only work stealing keeps its chiplet count; the others' binaries do not depend on it.
    assert S.KernelSpec("persistent", None, "none", "fp16", 64, 64, 32, 4, 4, None,
                        num_xcds=8).num_xcds == 1  # fmt: skip
    with pytest.raises(ValueError, match="a TMA kernel is aligned and has the pipelined body"):
        S.KernelSpec("persistent", None, "none", "fp16", 64, 64, 32, 4, 1, None,
                     aligned=True, tma=True)  # fmt: skip
    with pytest.raises(ValueError, match="a TMA kernel is aligned"):
        S.KernelSpec("persistent", None, "none", "fp16", 64, 64, 32, 4, 4, None, tma=True)
    with pytest.raises(ValueError, match="num_stages must be a positive"):
        S.KernelSpec("persistent", None, "none", "fp16", 64, 64, 32, 4, 4, 0)
