"""Differential test: the MXFP8 tile example against the hand-written Gluon kernel.

``examples/gemm_mxfp8_gfx1250.mlir`` (tile dialect) and
``benchmarks/gluon_mxfp8_gfx1250.py`` (Gluon) are the same kernel: 128x128x128
blocks, 8 warps, padded buffers for A, B and both scale tiles, the copies of K
tile k+1 issued before the scaled WMMA of tile k, one predicated loop. The
example as written (unhinted copies) pairs with Gluon's plain variant; with
``tile-derive-warp-hints`` (the four copies on a quarter of the warps each, fused)
with Gluon's fused hinted one. Per pair: the same TDM and scaled-WMMA counts per
K iteration, the same LDS, the same linear layouts of the scales, and VGPRs no
worse than Gluon's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gluon():
    return load_script(ROOT / "benchmarks" / "gluon_mxfp8_gfx1250.py")


def _linear_layouts(ttgir: str) -> list[str]:
    """The ``#linear`` alias definitions of a TTGIR listing (the scale layouts)."""
    return sorted(line for line in ttgir.splitlines() if line.startswith("#linear"))


@pytest.mark.parametrize("derive", [False, True])
def test_tile_example_matches_gluon(gluon, derive):
    from gemm_opt.lowering.compile import compile_tile_module
    from gemm_opt.lowering.isa_analysis import isa_metrics, loop_mma_mnemonics

    ref = gluon.compile_gluon_mxfp8(hinted=derive)
    want = isa_metrics(ref.asm["amdgcn"], ref.metadata._asdict())
    ours = compile_tile_module(
        (ROOT / "examples" / "gemm_mxfp8_gfx1250.mlir").read_text(), "gfx1250", derive_hints=derive
    )
    got = ours.metrics
    assert got.tdm_loads_in_loop == want.tdm_loads_in_loop == (1 if derive else 4)
    assert got.wmma_in_loop == want.wmma_in_loop == 8
    assert loop_mma_mnemonics(ours.asm["amdgcn"]) == loop_mma_mnemonics(ref.asm["amdgcn"])
    assert loop_mma_mnemonics(ours.asm["amdgcn"]) == ["v_wmma_scale_f32_16x16x128_f8f6f4"]
    assert got.lds_bytes == want.lds_bytes
    assert got.vgprs <= want.vgprs and got.spills == want.spills == 0
    assert _linear_layouts(ours.asm["ttgir"]) == _linear_layouts(ref.asm["ttgir"])
