"""Plain 8-bit MMA on cuda:90: ``examples/gemm_fp8_cuda90.mlir`` compiles to wgmma e4m3
(PTX and SASS) with fp32 accumulation, and runs on the model as numpy computes it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.scripts import load_script

from gemm_opt.core.fp8 import decode, encode
from gemm_opt.model.interpreter import Interpreter, bf16_round

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "gemm_fp8_cuda90.mlir"


@pytest.fixture(scope="module")
def kernel():
    from gemm_opt.lowering.compile import compile_tile_module

    return compile_tile_module(EXAMPLE.read_text(), "cuda:90")


def test_wgmma_e4m3_in_ptx_and_sass(kernel):
    ptx = kernel.asm["ptx"]
    # 128x128 per program over two warpgroups: an m64n128k32 per 32 of the 64-wide K tile.
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3") == 2
    assert "mma.sync" not in ptx
    # Each wgmma's sum is added into the fp32 accumulator (not left to the tensor core).
    assert "maxNumImpreciseAcc = 32" in kernel.asm["ttgir"]
    sass_mix = load_script(ROOT / "benchmarks" / "h100" / "sass_mix.py")
    row = sass_mix.mix(kernel.hsaco, sass_mix.cuobjdump())
    assert row["HGMMA"] == 2 and row["HMMA"] == 0 and row["LDL/STL"] == 0
    counts = sass_mix.opcodes(_sass(sass_mix, kernel.hsaco))
    assert counts["QGMMA"] == 2


def _sass(sass_mix, binary: bytes) -> str:
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.cubin"
        path.write_bytes(binary)
        return subprocess.run(
            [sass_mix.cuobjdump(), "-sass", str(path)], capture_output=True, text=True, check=True
        ).stdout


@pytest.mark.parametrize(("m", "n", "k"), [(128, 128, 128), (136, 200, 96)])
def test_example_runs_on_the_model(m, n, k):
    # Small integers: fp32 sums are exact, only the bf16 store rounds.
    rng = np.random.default_rng(m * n + k)
    a = encode(rng.integers(-6, 7, size=(m, k)), "e4m3fn")
    b_nk = encode(rng.integers(-6, 7, size=(n, k)), "e4m3fn")  # B stored (N, K)
    c = np.full((m, n), np.nan, dtype=np.float32)
    grid = (-(-m // 128), -(-n // 128))
    Interpreter(EXAMPLE.read_text()).run([a, b_nk, c, m, n, k, k, k, n], grid)
    ref = decode(a, "e4m3fn") @ decode(b_nk, "e4m3fn").T
    np.testing.assert_array_equal(c, bf16_round(ref.astype(np.float32)))
