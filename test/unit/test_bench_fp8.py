"""``benchmarks/h100/fp8.py`` off the GPU: its command line, its refusal without a
GPU, and the markdown table it writes from the timed rows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.scripts import load_script

H100 = Path(__file__).resolve().parents[2] / "benchmarks" / "h100"
REPO = H100.parents[1]


@pytest.fixture(scope="module")
def fp8():
    return load_script(H100 / "fp8.py", "bench_fp8")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(H100 / "fp8.py"), *args],
        capture_output=True,
        text=True,
        check=False,
        env={
            "PYTHONPATH": str(REPO / "python"),
            "PATH": "/usr/bin:/bin",
            "CUDA_VISIBLE_DEVICES": "",
        },
    )


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
