"""The schedule bundle builder compiles several kernels at once, each in a
builder process of its own, and gives the same bundle as one at a time."""

import dataclasses
import subprocess
import sys

import pytest

from gemm_opt.core import schedules as S
from gemm_opt.kernels import build_bundles

#: Two small kernels that compile in about a second each.
SMALL = S.KernelSpec("data-parallel", None, "none", "fp16", 64, 64, 32, 4, 4, None)
SPECS = [SMALL, dataclasses.replace(SMALL, dtype="bf16")]


def test_kernels_built_at_once_equal_those_built_one_at_a_time() -> None:
    serial = build_bundles.build("cuda:90", SPECS, quiet=True, jobs=1)
    parallel = build_bundles.build("cuda:90", SPECS, quiet=True, jobs=2)
    assert [k.name for k in parallel.kernels] == [s.name for s in SPECS]  # specs order
    assert parallel.kernels == serial.kernels  # the same binaries and metadata


def test_jobs_must_be_positive() -> None:
    with pytest.raises(ValueError, match="jobs must be at least 1, got 0"):
        build_bundles.build("cuda:90", SPECS, jobs=0)


def test_the_tool_refuses_no_jobs() -> None:
    tool = [sys.executable, "-m", "gemm_opt.kernels.build_bundles", "--target", "cuda:90"]
    proc = subprocess.run(
        [*tool, "--jobs", "0", "--list"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "--jobs takes a positive count; got 0" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_builds_start_longest_first() -> None:
    """Every kernel starts once; masked (unaligned) ones before aligned ones,
    TMA ones last, fewer warps before more among the masked ones."""
    specs = build_bundles.bundle_specs()
    order = build_bundles._longest_first(specs)
    assert sorted(order) == list(range(len(specs)))
    started = [specs[i] for i in order]
    kinds = [(s.aligned, s.tma) for s in started]
    assert kinds == sorted(kinds)
    masked = [s.num_warps for s in started if not s.aligned]
    assert masked == sorted(masked) and len(set(masked)) > 1
    assert build_bundles._longest_first(SPECS) == [0, 1]  # ties keep the specs' order
