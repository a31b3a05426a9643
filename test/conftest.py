"""Test support (``test/support``) is importable as ``support`` (it is not installed), and
every test leaves the process's on-demand kernel builder as it found it."""

import sys
from pathlib import Path

import pytest

_TEST_DIR = str(Path(__file__).resolve().parent)
if _TEST_DIR not in sys.path:
    sys.path.insert(0, _TEST_DIR)


@pytest.fixture(autouse=True)
def _process_builder_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    """The on-demand kernel builder is process state (the GPU path installs the
    compiler's on first use): each test leaves it as it found it, so a test of
    hand-made bundles never meets a builder an earlier test installed."""
    from gemm_opt.runtime import gemm as rt_gemm

    monkeypatch.setattr(rt_gemm, "_builder", rt_gemm._builder)
