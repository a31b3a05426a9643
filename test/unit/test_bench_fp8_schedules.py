"""``benchmarks/h100/fp8_schedules.py`` off the GPU: its command line, its refusal
without a GPU, its table, and the partial count its atomic bound takes."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from support.scripts import load_script, run_without_gpu

H100 = Path(__file__).resolve().parents[2] / "benchmarks" / "h100"


@pytest.fixture(scope="module")
def bench():
    return load_script(H100 / "fp8_schedules.py", "bench_fp8_schedules")


def _run(*args: str) -> subprocess.CompletedProcess:
    return run_without_gpu(H100 / "fp8_schedules.py", *args)


def test_misuse_and_no_gpu_exit_2(tmp_path: Path) -> None:
    proc = _run("--reps", "0", "--out", str(tmp_path))
    assert proc.returncode == 2 and "--reps takes a positive count" in proc.stderr
    proc = _run("--bundles", str(tmp_path), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "no CUDA GPU" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_every_kind_is_measured_and_the_table_names_the_best(bench) -> None:
    from gemm_opt.core.modes import FP8_KINDS

    assert {s for s, _ in bench.SCHEDULES} == set(FP8_KINDS) - {"persistent"}
    names = ["torch", *(bench._name(s, r) for s, r in bench.SCHEDULES)]
    rows = [
        dict(m=256, n=512, k=16384, recipe="rowwise", impl=name, median_ms=1.0,
             tflops=100.0 + i, vs_torch=(100.0 + i) / 100, vs_data_parallel=(100.0 + i) / 101,
             torch_recipe="rowwise")
        for i, name in enumerate(names)
    ]  # fmt: skip
    line = next(x for x in bench.markdown(rows, "GPU").splitlines() if x.startswith("| 256x"))
    assert line.endswith("| 1.06x (split-k) | 1.05x |") and line.count("|") == len(names) + 5


def test_atomic_bound_counts_a_tiles_partials(bench) -> None:
    # 4 tiles of 5 K blocks over 3 programs: 20 iterations, 6 or 7 each, so a tile
    # takes pieces of at most two programs; whole-tile kinds add one.
    spec = SimpleNamespace(kind="stream-k", block_m=64, block_n=64, block_k=64)
    plan = SimpleNamespace(spec=spec, m=70, n=90, k=300, grid=3)
    assert bench._partials(plan) == 2
    assert bench._partials(SimpleNamespace(spec=SimpleNamespace(kind="split-k"))) == 1
