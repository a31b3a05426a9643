"""``benchmarks/h100/bundle_ab.py`` off the GPU: its refusals (a missing folder, an unknown
case, no GPU) and its cases (each names a plain kernel's form; group lengths cover M)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.scripts import load_script, run_without_gpu

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "h100" / "bundle_ab.py"


@pytest.fixture(scope="module")
def ab():
    return load_script(SCRIPT, "bench_bundle_ab")


def test_refusals_exit_2_without_a_traceback(tmp_path: Path) -> None:
    proc = run_without_gpu(SCRIPT, "--a", str(tmp_path / "nope"), "--b", str(tmp_path))
    assert proc.returncode == 2 and "--a: no folder" in proc.stderr
    proc = run_without_gpu(SCRIPT, "--a", str(tmp_path), "--b", str(tmp_path), "--only", "x")
    assert proc.returncode == 2 and "--only: none of" in proc.stderr
    proc = run_without_gpu(SCRIPT, "--a", str(tmp_path), "--b", str(tmp_path))
    assert proc.returncode == 2 and "no CUDA GPU" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_shapes_take_the_plain_kernels_and_groups_cover_m(ab) -> None:
    for m, n, k in (*ab.CHECK_SHAPES, ab.SPEED_SHAPE):
        assert n % 8 and k % 8 and m % 8  # no 16-byte fact holds: the plain kernel runs
        lens = ab.group_lens(m)
        assert sum(lens) == m and 0 in lens and min(lens) >= 0
    labels = [c.label for c in ab.CASES]
    assert len(set(labels)) == len(labels)
    assert {c.op for c in ab.CASES} == {"mm", "grouped", "wgrad"}
    assert {c.config[5] for c in ab.CASES} == {3, 4, 6}
