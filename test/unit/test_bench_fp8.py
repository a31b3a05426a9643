"""``benchmarks/h100/fp8.py`` off the GPU: its command line, its refusal without a
GPU, and the markdown table it writes from the timed rows."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.scripts import load_script, run_without_gpu

H100 = Path(__file__).resolve().parents[2] / "benchmarks" / "h100"


@pytest.fixture(scope="module")
def fp8():
    return load_script(H100 / "fp8.py", "bench_fp8")


def _run(*args: str) -> subprocess.CompletedProcess:
    return run_without_gpu(H100 / "fp8.py", *args)


def test_misuse_and_no_gpu_exit_2(tmp_path: Path) -> None:
    proc = _run("--reps", "0", "--out", str(tmp_path))
    assert proc.returncode == 2 and "--reps takes a positive count" in proc.stderr
    proc = _run("--bundles", str(tmp_path), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "no CUDA GPU" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_markdown_has_every_shape_and_the_best_ratio(fp8) -> None:
    rows = []
    for m, n, k in fp8.SHAPES:
        for recipe in fp8.RECIPES:
            for impl, ratio in (("torch", 1.0), ("data-parallel", 0.5), ("persistent", 0.8)):
                rows.append(dict(m=m, n=n, k=k, recipe=recipe, impl=impl, median_ms=1.0,
                                 tflops=100.0 * ratio, vs_torch=ratio))  # fmt: skip
    md = fp8._markdown(rows, "GPU")
    table = [
        line for line in md.splitlines() if line.startswith("| 4096") or line.startswith("| 16")
    ]
    assert len(table) == sum(1 for m, _, _ in fp8.SHAPES if m in (4096, 16)) * len(fp8.RECIPES)
    assert all(line.endswith("| 0.80x | - |") for line in table)
    assert (16, 4096, 7168) in fp8.SHAPES and (4096, 7168, 16384) in fp8.SHAPES


def test_each_configuration_is_measured_beside_the_apis(fp8) -> None:
    """Beside the API's choice, each other configuration with rows for its tile; the
    TMA-only 256x128 tile only for the recipes it is bundled for."""
    assert fp8._chosen(4096, 7168, "rowwise") == "tall"
    assert fp8._chosen(4096, 7168, "block128") == "mid"
    assert fp8._configs(4096, "rowwise", "tall") == ("mid",)
    assert fp8._configs(4096, "block128", "mid") == ()
    assert fp8._configs(272, "tensorwise", "narrow") == ("mid", "tall")
    assert fp8._configs(200, "rowwise", "narrow") == ("mid",)
    assert all(m >= 256 for m, _, _ in fp8.CONFIG_CHECK_SHAPES)
    assert all(n % 16 == 0 and k % 16 == 0 for _, n, k in fp8.CONFIG_CHECK_SHAPES)


def test_grouped_markdown_lists_the_other_kernels(fp8) -> None:
    rows = [
        dict(shape="G=4 8192x4096x7168", recipe="rowwise", impl=impl, tflops=t, vs_torch=r,
             torch_recipe="rowwise")
        for impl, t, r in (("grouped-torch", 1000.0, 1.0), ("grouped-persistent", 800.0, 0.8),
                           ("grouped-mid", 700.0, 0.7))
    ]  # fmt: skip
    (line,) = [x for x in fp8._grouped_markdown(rows).splitlines() if x.startswith("| G=4")]
    assert line.endswith("| 800.0 | 0.80x | mid 700.0 (0.70x) |")


def test_the_sweep_is_seeded_and_untuned(fp8) -> None:
    shapes = fp8.sweep_shapes(40, 7)
    assert shapes == fp8.sweep_shapes(40, 7) != fp8.sweep_shapes(40, 8)
    assert len(set(shapes)) == 40 and not {s[:3] for s in shapes} & set(fp8.SHAPES)
    grouped = [s for s in shapes if s[3] is not None]
    assert grouped and all(k % 128 == 0 and m * g <= 32768 for m, _, k, g in grouped)
    dense = [s for s in shapes if s[3] is None]
    assert any(n % 16 or k % 16 for _, n, k, _ in dense)  # the plain kernels too
    assert all(256 <= m <= 8192 for m, _, _, _ in dense)


def test_sweep_markdown_has_the_geomean_and_the_worst(fp8) -> None:
    def row(shape, impl, tflops, ratio):
        return dict(shape=shape, recipe="rowwise", impl=impl, tflops=tflops, vs_torch=ratio)

    rows = [
        row("1x2x3", "sweep-torch", 100.0, 1.0), row("1x2x3", "sweep-api", 50.0, 0.5),
        row("1x2x3", "sweep-mid", 25.0, 0.25), row("4x5x6", "sweep-torch", 100.0, 1.0),
        row("4x5x6", "sweep-api", 200.0, 2.0), row("G=4 8x9x10", "sweep-api", 10.0, 0.9),
        row("G=4 8x9x10", "sweep-torch", 11.0, 1.0),
    ]  # fmt: skip
    md = fp8._sweep_markdown(rows).splitlines()
    assert "| dense rowwise | 2 | 1.00x | 0.50x (1x2x3) | 2.00x (1) |" in md
    assert "| grouped rowwise | 1 | 0.90x | 0.90x (G=4 8x9x10) | nanx (0) |" in md
