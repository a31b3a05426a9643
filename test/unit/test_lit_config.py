"""lit fails, as pytest does, when the pinned Triton is missing or another version.

Triton is a dependency, not an optional lit feature: a run without it must
not pass by reporting the lowering tests as unsupported.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
LIT = Path(sys.executable).parent / "lit"
ONE_TEST = ROOT / "test" / "lit" / "tools" / "gemm-opt" / "help.mlir"
PIN = next(
    d.split("==", 1)[1]
    for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    if d.startswith("triton==")
)


def _lit(extra_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(extra_path)}
    return subprocess.run(
        [str(LIT), "-q", str(ONE_TEST)], env=env, capture_output=True, text=True, check=False
    )


def test_lit_runs_with_the_pinned_triton(tmp_path: Path) -> None:
    result = _lit(tmp_path)  # an empty extra path: the real Triton
    assert result.returncode == 0, result.stdout + result.stderr


def test_lit_fails_when_triton_cannot_be_imported(tmp_path: Path) -> None:
    fake = tmp_path / "triton"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('no Triton here')\n")
    result = _lit(tmp_path)
    assert result.returncode != 0
    assert f"Triton {PIN} is required" in result.stderr and "no Triton here" in result.stderr


def test_lit_fails_on_another_triton_version(tmp_path: Path) -> None:
    info = tmp_path / "triton-3.6.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: triton\nVersion: 3.6.0\n")
    result = _lit(tmp_path)
    assert result.returncode != 0
    assert f"Triton {PIN} is required, found 3.6.0" in result.stderr


@pytest.mark.parametrize("keyword", ["REQUIRES:", "UNSUPPORTED:", "XFAIL:"])
def test_no_lit_test_can_be_skipped(keyword: str) -> None:
    """Every lit test runs: none is conditional on a feature or expected to fail."""
    tests = [*(ROOT / "test" / "lit").rglob("*.mlir"), *(ROOT / "test" / "lit").rglob("*.py")]
    offenders = [
        f"{t.relative_to(ROOT)}:{i}"
        for t in tests
        for i, line in enumerate(t.read_text().splitlines(), 1)
        if line.lstrip("/# ").startswith(keyword)
    ]
    assert offenders == []
