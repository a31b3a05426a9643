"""``benchmarks/h100/schedules.py`` where there is no GPU: its cases, arguments and failures.

The script runs on the GPU machine with only torch; here (CPU torch) it must
import, parse its arguments, build its case list, and refuse loudly (exit 2,
naming the build command) when kernels are missing or no GPU is there.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.scripts import load_script

from gemm_opt.kernels.build_bundles import bundle_specs

H100 = Path(__file__).resolve().parents[2] / "benchmarks" / "h100"
REPO = H100.parents[1]


def _script():
    return load_script(H100 / "schedules.py", "bench_schedules")


@pytest.fixture(scope="module")
def bench():
    return _script()


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(H100 / "schedules.py"), *args],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin"},
    )


def test_unbalanced_groups_keep_the_total_and_stay_within_5x(bench) -> None:
    for g in (4, 16, 32):
        lens = bench.group_sizes(g, 2048, balanced=False, seed=g)
        assert sum(lens) == g * 2048 and len(lens) == g
        assert max(lens) <= 5 * min(lens)
        assert lens == bench.group_sizes(g, 2048, balanced=False, seed=g)
    assert bench.group_sizes(4, 10, balanced=True, seed=0) == [10] * 4


def test_the_issue_shapes_are_all_there(bench) -> None:
    names = [c.name for c in bench.speed_cases()]
    for want in ("512x512x8192", "16x4096x7168 (decode)", "128x7168x2048", "4096^3", "8192^3"):
        assert want in names
    moe = [c for c in bench.speed_cases() if c.op != "dense"]
    # 4 (model, matrix) pairs x 2 group counts x balanced/unbalanced x fwd/dgrad/wgrad
    assert len(moe) == 48
    gate = next(c for c in moe if c.name == "DSv3 GateUP G=32 balanced fwd")
    assert (gate.m, gate.n, gate.k, len(gate.lens)) == (65536, 4096, 7168, 32)
    oss = next(c for c in moe if c.name == "gpt-oss-20B Down G=4 unbalanced wgrad")
    assert (oss.m, oss.n, oss.k) == (8192, 2880, 2880)


def test_every_kernel_the_run_needs_is_bundled(bench) -> None:
    bundled = {s.name for s in bundle_specs()}
    need = set(bench.kernel_names(list(bench.DTYPES)))
    assert need <= bundled, sorted(need - bundled)[:3]


def test_atomic_error_bound_counts_the_contributors(bench) -> None:
    cfg = {"block_m": 128, "block_n": 128, "block_k": 64}
    # 16 tiles of 128 iterations over 132 programs: about 9 programs add into each tile
    assert bench.atomic_contributors(512, 512, 8192, 132, cfg) in (9, 10)
    assert bench.atomic_contributors(128, 128, 64, 132, cfg) == 1  # fallback: whole tiles


def test_misuse_and_missing_kernels_fail_loudly(tmp_path: Path) -> None:
    proc = _run("--bundles", str(tmp_path), "--out", str(tmp_path / "o"), "--reps", "0")
    assert proc.returncode == 2 and "--reps must be at least 1" in proc.stderr
    proc = _run("--bundles", str(tmp_path), "--out", str(tmp_path / "o"), "--dtypes", "fp8")
    assert proc.returncode == 2 and "--dtypes takes float16, bfloat16" in proc.stderr
    proc = _run("--bundles", str(tmp_path), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2
    assert "86 of 86 kernels are missing" in proc.stderr
    assert "python -m gemm_opt.kernels.build_bundles --target cuda:90" in proc.stderr
    assert "Traceback" not in proc.stderr


def _fake_bundle(root: Path, names: list[str]) -> None:
    from gemm_opt.runtime import Arg, Bundle, BundleKernel, GridDim

    kernels = tuple(
        BundleKernel(
            name=name,
            symbol="gemm",
            target="cuda:90",
            sm="sm_90a",
            num_warps=4,
            threads_per_warp=32,
            shared_bytes=0,
            args=(Arg("c", "*fp16", 16),),
            grid=(GridDim(), GridDim(), GridDim()),
            binary=b"\x7fELF" + bytes(8),
        )
        for name in names
    )
    (root / "cuda90").mkdir()
    Bundle(kernels).write(root / "cuda90" / "schedules.bundle")


def test_no_gpu_is_refused_after_the_bundle_check(bench, tmp_path: Path) -> None:
    _fake_bundle(tmp_path, bench.kernel_names(list(bench.DTYPES)))
    proc = _run("--bundles", str(tmp_path), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2, proc.stderr
    assert "no CUDA GPU visible to torch" in proc.stderr and "Traceback" not in proc.stderr


def test_a_partial_bundle_runs_only_with_skip_missing(bench, tmp_path: Path) -> None:
    dense = [n for n in bench.kernel_names(list(bench.DTYPES)) if "grouped" not in n]
    _fake_bundle(tmp_path, dense)
    proc = _run("--bundles", str(tmp_path), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "30 of 86 kernels are missing" in proc.stderr
    proc = _run("--bundles", str(tmp_path), "--out", str(tmp_path / "o"), "--skip-missing")
    assert proc.returncode == 2 and "no CUDA GPU visible to torch" in proc.stderr
    assert "30 of 86 kernels are not bundled" in proc.stdout


def test_the_layout_checks_pass_on_the_model_and_catch_a_wrong_result(bench, monkeypatch) -> None:
    """The GPU run's layout and batch checks (every layout, ``ld`` padding, each batch
    form, data-parallel and auto, x @ W^T's backward) on the model at small sizes: all
    pass; a result off by one ulp-scale step in one element fails its check."""
    import torch

    import gemm_opt

    def small(shape: tuple[int, ...]) -> tuple[int, ...]:
        return (*shape[:-2], *(min(d, 24) for d in shape[-2:]))

    forms = [(n, small(sa), small(sb), ta, tb) for n, sa, sb, ta, tb in bench.BATCH_FORMS]
    checker = bench.Checker(torch, gemm_opt, 132, set(), device="cpu")
    checker.layouts("float16", shapes=[(37, 29, 40)], forms=forms, x_shape=(2, 21, 40, 19))
    names = [r["case"] for r in checker.rows]
    assert len(names) == 2 * (7 + len(forms)) + 2 and all(r["ok"] for r in checker.rows)
    assert any(" TT ld+8 auto" in n for n in names) and any("per batch" in n for n in names)
    assert any("gemm_persistent_groupedm_tb" in n for n in names)  # bmm NT: one grouped launch

    matmul = gemm_opt.matmul

    def off(a, b, **kw):
        c = matmul(a, b, **kw)
        c.view(-1)[0] += 1.0
        return c

    monkeypatch.setattr(gemm_opt, "matmul", off)
    checker = bench.Checker(torch, gemm_opt, 132, set(), device="cpu")
    checker.layouts("float16", shapes=[(37, 29, 40)], forms=[], x_shape=(2, 21, 40, 19))
    assert not any(r["ok"] for r in checker.rows[:-2])  # the backward runs the operators
