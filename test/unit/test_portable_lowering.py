"""The portable lowering: the gfx1250 tile GEMM lowered for NVIDIA Hopper (cuda:90).

``warp_used_hint`` is a performance hint, so dropping it keeps the data
written unchanged and the same tile module lowers for ``cuda:90``: mma.sync
(nvidia_mma v2), cp.async copies when the alignment is stated (else copies
through registers), ldmatrix-friendly swizzled shared memory. The variants
checked here are the tile modules ``benchmarks/h100/build_bundle.py`` compiles
into the bundle that ``benchmarks/h100/run_gemm.py`` runs on the H100.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from gemm_opt.lowering.compile import compile_tile_module, lower_tile_module
from gemm_opt.lowering.convert_tile_to_triton_gpu import mma_swizzle

ROOT = Path(__file__).resolve().parents[2]
GEMM = (ROOT / "examples" / "gemm_gfx1250.mlir").read_text()
H100 = ROOT / "benchmarks" / "h100"


def _build_bundle():
    spec = importlib.util.spec_from_file_location("build_bundle", H100 / "build_bundle.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def compiled():
    return compile_tile_module(GEMM, "cuda:90")


@pytest.fixture(scope="module")
def generated():
    """The TTGIR of each benchmark variant, by variant name."""
    variants = _build_bundle().gemm_variants()
    return {v["name"]: lower_tile_module(v["module"], "cuda:90").ttgir for v in variants}


def test_gemm_compiles_for_cuda90_with_mma_sync(compiled):
    ptx = compiled.asm["ptx"]
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
    assert ".target sm_90" in ptx
    assert compiled.metadata["target"] == ("cuda", 90, 32)
    assert compiled.hsaco  # the cubin
    assert compiled.metadata["shared"] == 2 * (128 * 64 + 64 * 128) * 2


def test_gemm_ttgir_drops_hints_and_uses_nvidia_layouts(compiled):
    ttgir = compiled.asm["ttgir"]
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
    assert low.pipeline == "convert-tile-to-triton-gpu{target=cuda:90}"


def test_aligned_kernel_uses_cp_async_with_counted_waits(generated):
    from gemm_opt.lowering.triton_bridge import compile_ttgir

    text = generated["gemm_fp16_aligned"]
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
