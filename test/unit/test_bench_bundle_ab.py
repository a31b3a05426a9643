"""``benchmarks/h100/bundle_ab.py`` off the GPU: its refusals (bad ``--bundle`` items, an
unknown case, no GPU), its cases (odd shapes; group lengths cover M) and its seeded sweep."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.scripts import load_script, run_without_gpu

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "h100" / "bundle_ab.py"


@pytest.fixture(scope="module")
def ab():
    return load_script(SCRIPT, "bench_bundle_ab")


def test_refusals_exit_2_without_a_traceback(tmp_path: Path) -> None:
    here = f"A={tmp_path}"
    for args, why in (
        ((here,), "at least two"),
        ((here, f"B={tmp_path / 'nope'}"), "no folder"),
        ((here, str(tmp_path)), "LABEL=DIR"),
        ((here, here), "given twice"),
    ):
        proc = run_without_gpu(SCRIPT, *(x for a in args for x in ("--bundle", a)))
        assert proc.returncode == 2 and why in proc.stderr, (args, proc.stderr)
    two = ("--bundle", here, "--bundle", f"B={tmp_path}")
    proc = run_without_gpu(SCRIPT, *two, "--only", "x")
    assert proc.returncode == 2 and "--only: none of" in proc.stderr
    proc = run_without_gpu(SCRIPT, *two, "--reps", "0")
    assert proc.returncode == 2 and "--reps takes a positive count" in proc.stderr
    proc = run_without_gpu(SCRIPT, *two)
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


def test_sweep_is_seeded_odd_and_in_range(ab) -> None:
    points = ab.sweep_points(24, 1)
    assert points == ab.sweep_points(24, 1) and points != ab.sweep_points(24, 2)
    for case, shape in points:
        assert case in ab.CASES and all(x % 2 == 1 and 200 <= x <= 8192 for x in shape)
    assert len({c.label for c, _ in points}) > 4
    assert ab.geomean([2.0, 0.5]) == 1.0
