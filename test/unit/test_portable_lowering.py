"""The portable lowering: the gfx1250 tile GEMM lowered for NVIDIA Hopper (cuda:90).

``warp_used_hint`` is a performance hint, so dropping it keeps the data
written unchanged and the same tile module lowers for ``cuda:90``: wgmma
(nvidia_mma v3) on NVMMA-swizzled buffers, or with ``mma=mma_v2`` mma.sync
(nvidia_mma v2) on ldmatrix-friendly swizzled shared memory; cp.async copies
when the alignment is stated (else copies through registers), or TMA copies
where the facts TMA needs are stated (the example's 16-aligned leading
dimensions). The variants checked here are the tile modules
``benchmarks/h100/build_bundle.py`` compiles into the bundle that
``benchmarks/h100/run_gemm.py`` runs on the H100.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.scripts import load_script

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect.edit import edited, functions
from gemm_opt.lowering.compile import compile_tile_module, lower_tile_module
from gemm_opt.lowering.convert_tile_to_triton_gpu import mma_swizzle, nvmma_swizzle, wgmma_shape

ROOT = Path(__file__).resolve().parents[2]
GEMM = (ROOT / "examples" / "gemm_gfx1250.mlir").read_text()
H100 = ROOT / "benchmarks" / "h100"


def _build_bundle():
    return load_script(H100 / "build_bundle.py")


@pytest.fixture(scope="module")
def compiled():
    return compile_tile_module(GEMM, "cuda:90")


@pytest.fixture(scope="module")
def compiled_v2():
    return compile_tile_module(GEMM, "cuda:90", mma="mma_v2")


@pytest.fixture(scope="module")
def generated():
    """The TTGIR of each benchmark variant, by variant name (wgmma with the
    bundle's own pipeline, then mma.sync with the default one)."""
    variants = _build_bundle().gemm_variants()
    out = {
        v["name"]: lower_tile_module(v["module"], "cuda:90", pipeline=v["pipeline"]).ttgir
        for v in variants
    }
    for v in variants:
        out[v["name"] + "_v2"] = lower_tile_module(v["module"], "cuda:90", mma="mma_v2").ttgir
    return out


def test_gemm_compiles_for_cuda90_with_wgmma_and_tma(compiled):
    ptx = compiled.asm["ptx"]
    # Two warpgroups along M, each a 64x128 tile: four k16 steps per 64-wide K tile.
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 4
    assert "mma.sync" not in ptx
    # The example states 16-aligned leading dimensions, so lds-copies=auto
    # makes its four copies TMA copies on a ring of barriers.
    tma = "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes"
    assert ptx.count(tma) == 4
    assert "mbarrier.try_wait.parity" in ptx
    assert "cp.async.cg" not in ptx and "ld.local" not in ptx and "st.local" not in ptx
    # tile-pipeline-mma: one wgmma group stays in flight in the loop.
    assert re.search(r"wgmma\.wait_group\.sync\.aligned 1;", ptx)
    assert re.search(r"wgmma\.wait_group\.sync\.aligned 0;", ptx)
    assert ".target sm_90a" in ptx
    assert compiled.hsaco  # the cubin
    # Two buffers per operand, and the ring's two 8-byte barriers.
    assert compiled.metadata["shared"] == 2 * (128 * 64 + 64 * 128) * 2 + 2 * 8


def test_gemm_without_facts_copies_through_registers():
    def no_facts(module: ir.Module) -> None:
        fn = functions(module)[0]
        fn.arg_attrs = ir.ArrayAttr.get([ir.DictAttr.get({}) for _ in fn.arguments])

    ptx = compile_tile_module(edited(GEMM, no_facts), "cuda:90").asm["ptx"]
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 4
    assert "cp.async" not in ptx and "mbarrier" not in ptx
    # Copies through registers are generic-proxy writes that wgmma reads
    # through the async proxy: Triton fences them before the barrier.
    assert re.search(r"fence\.proxy\.async\.shared::cta;\s+bar\.sync", ptx)


def test_gemm_ttgir_uses_warp_group_dot(compiled):
    ttgir = compiled.asm["ttgir"]
    assert (
        "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], "
        "instrShape = [16, 128, 16]}>" in ttgir
    )
    assert set(re.findall(r"#ttg\.\w+_shared<\{[^}]*\}>", ttgir)) == {
        "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>",
        # The TMA copies' barriers (1-D i64 words).
        "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>",
    }
    assert ttgir.count("ttng.async_tma_copy_global_to_local ") == 4
    assert ttgir.count("ttng.warp_group_dot ") == 1
    # One wait in the loop (one MMA in flight), one after it.
    assert re.findall(r"ttng\.warp_group_dot_wait [^\n]*\{pendings = (\d+) : i32\}", ttgir) == [
        "1",
        "0",
    ]
    assert "ttg.local_load" not in ttgir and "tt.dot " not in ttgir


def test_gemm_compiles_for_cuda90_with_mma_sync(compiled_v2):
    compiled = compiled_v2
    ptx = compiled.asm["ptx"]
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
    assert ".target sm_90" in ptx
    assert compiled.metadata["target"] == ("cuda", 90, 32)
    assert compiled.hsaco  # the cubin
    assert compiled.metadata["shared"] == 2 * (128 * 64 + 64 * 128) * 2


def test_gemm_ttgir_drops_hints_and_uses_nvidia_layouts(compiled_v2):
    ttgir = compiled_v2.asm["ttgir"]
    assert "warp_used_hint" not in ttgir
    assert "amdg." not in ttgir and "amd_wmma" not in ttgir and "padded_shared" not in ttgir
    assert 'ttg.target = "cuda:90"' in ttgir
    assert '"ttg.threads-per-warp" = 32 : i32' in ttgir
    assert (
        "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 2], "
        "instrShape = [16, 8]}>" in ttgir
    )
    kwidths = set(re.findall(r"kWidth = (\d+)", ttgir))
    assert kwidths == {"2"}
    assert set(re.findall(r"#ttg\.swizzled_shared<\{[^}]*\}>", ttgir)) == {
        "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
    }


def test_target_option_overrides_tile_target():
    low = lower_tile_module(GEMM, "cuda:90")
    # The tile module is left a gfx1250 module; only the conversion targets cuda:90.
    assert 'tile.target = "gfx1250"' in low.tile
    assert "tile-assign-tdm-warp-layout" not in low.pipeline
    assert low.pipeline == (
        "tile-lower-gemm-schedule,tile-pipeline-mma,convert-tile-to-triton-gpu{target=cuda:90}"
    )
    v2 = lower_tile_module(GEMM, "cuda:90", mma="mma_v2")
    assert (
        v2.pipeline
        == "tile-lower-gemm-schedule,convert-tile-to-triton-gpu{target=cuda:90 mma=mma_v2}"
    )


def test_aligned_kernel_uses_cp_async_with_counted_waits(generated):
    from gemm_opt.lowering.triton_bridge import compile_ttgir

    text = generated["gemm_fp16_aligned_v2"]
    # One commit group per copy: the loop's "at most 2 copies in flight" wait
    # is cp.async.wait_group 2, the drain after the loop wait_group 0.
    assert text.count("= ttg.async_copy_global_to_local ") == 4
    assert text.count("= ttg.async_commit_group") == 4
    assert re.findall(r"ttg\.async_wait \{num = (\d+) : i32\}", text) == ["2", "0"]
    ptx = compile_ttgir(text, "cuda:90").asm["ptx"]
    assert re.search(r"cp\.async\.cg\.shared\.global \[[^]]*\], \[[^]]*\], 0x10", ptx)
    assert re.search(r"cp\.async\.wait_group\s+2;", ptx)
    assert "ldmatrix.sync.aligned" in ptx
    assert "mma.sync.aligned.m16n8k16" in ptx


def test_aligned_kernel_feeds_wgmma_from_cp_async(generated):
    from gemm_opt.lowering.triton_bridge import compile_ttgir

    text = generated["gemm_fp16_aligned"]
    assert text.count("= ttg.async_copy_global_to_local ") == 4
    # tile-pipeline-mma issues the loop's copies after the MMA, so the wait
    # before the MMA has none of this iteration's copies to leave in flight.
    assert re.findall(r"ttg\.async_wait \{num = (\d+) : i32\}", text) == ["0", "0"]
    assert "ttng.warp_group_dot " in text
    ptx = compile_ttgir(text, "cuda:90").asm["ptx"]
    assert re.search(r"cp\.async\.cg\.shared\.global \[[^]]*\], \[[^]]*\], 0x10", ptx)
    # The wait, the barrier, the proxy fence, then the warpgroup MMAs.
    assert re.search(
        r"cp\.async\.wait_group\s+0;\s+bar\.sync\s+0;[^\n]*\n(?:[^\n]*\n)*?\s*"
        r"fence\.proxy\.async\.shared::cta;(?:[^\n]*\n)*?\s*wgmma\.fence",
        ptx,
    )
    # No operand goes through registers (ldmatrix serves only the epilogue's
    # layout conversion, after the loop).
    assert "mma.sync" not in ptx
    assert "ldmatrix" not in ptx[: ptx.rindex("wgmma.wait_group")]


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("variant", ["aligned", "any"])
def test_every_bundle_variant_takes_wgmma(generated, dtype, variant):
    assert "ttng.warp_group_dot " in generated[f"gemm_{dtype}_{variant}"]
    assert "ttng.warp_group_dot" not in generated[f"gemm_{dtype}_{variant}_v2"]
    assert "tt.dot " in generated[f"gemm_{dtype}_{variant}_v2"]


def test_unaligned_kernel_copies_through_registers(generated):
    text = generated["gemm_bf16_any"]
    assert "async_copy_global_to_local" not in text and "async_wait" not in text
    assert text.count("ttg.local_store ") == 4
    assert "!tt.ptr<bf16>" in text and "f16>" not in text.replace("bf16", "")


def test_mma_swizzle_matches_tritons_choice_for_mma_v2():
    # (vec, perPhase, maxPhase). 64 f16 per row (128 bytes): one row per
    # phase, 8 phases.
    assert mma_swizzle([1, 0], [2, 128, 64], 16) == (8, 1, 8)
    # 32 per row (64 bytes): two rows per phase, 4 phases.
    assert mma_swizzle([1, 0], [64, 32], 16) == (8, 2, 4)
    # Column-major buffers swizzle along their own contiguous dim (128 f16).
    assert mma_swizzle([0, 1], [64, 128], 16) == (8, 1, 8)


def test_wgmma_shape_fills_warpgroups_along_m_first():
    # (warpsPerCTA, instrShape): 8 warps on 128 rows are two warpgroups along
    # M, each with the whole 128-column tile in one instruction.
    assert wgmma_shape(128, 128, 64, 8) == ([8, 1], [16, 128, 16])
    # 64 rows hold one warpgroup: the second goes along N.
    assert wgmma_shape(64, 256, 32, 8) == ([4, 2], [16, 128, 16])
    assert wgmma_shape(64, 64, 32, 4) == ([4, 1], [16, 64, 16])
    # 512 columns per warpgroup: the largest instruction N dividing it is 256.
    assert wgmma_shape(64, 512, 16, 4) == ([4, 1], [16, 256, 16])
    # 24 columns: N = 24 (a multiple of 8, not a power of two).
    assert wgmma_shape(64, 24, 16, 4) == ([4, 1], [16, 24, 16])


@pytest.mark.parametrize(
    ("m", "n", "k", "warps", "why"),
    [
        (128, 128, 64, 2, "2 warps are not whole warpgroups of 4"),
        (128, 128, 64, 6, "6 warps are not whole warpgroups of 4"),
        (32, 64, 32, 4, "M = 32 is not a multiple of the 64 rows of 4 warps"),
        (64, 12, 32, 4, "N = 12 does not split"),
        (64, 64, 8, 4, "K = 8 is not a multiple of 16"),
    ],
)
def test_wgmma_shape_refuses_what_does_not_fit(m, n, k, warps, why):
    with pytest.raises(ValueError, match=re.escape(why)):
        wgmma_shape(m, n, k, warps)


def test_nvmma_swizzle_is_the_widest_that_divides_a_row():
    assert nvmma_swizzle([128, 64], 16) == 128  # 128-byte rows
    assert nvmma_swizzle([2, 64, 128], 16) == 128  # 256-byte rows, a ring of 2
    assert nvmma_swizzle([64, 32], 16) == 64
    assert nvmma_swizzle([64, 16], 16) == 32
    assert nvmma_swizzle([64, 8], 16) == 0  # 16-byte rows
    assert nvmma_swizzle([4, 64], 16) == 0  # fewer than 8 rows
    assert nvmma_swizzle([64, 64], 8) == 64
