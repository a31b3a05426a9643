"""The compile-time benchmark's statistic: the median of paired (back-to-back) ratios."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "compile_time", ROOT / "benchmarks/compile_time.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_ratio_pairs_each_round_not_the_medians(bench: ModuleType) -> None:
    # Round 2 ran while the machine was busy (both sides slow) and round 3 had gluon
    # slow alone: the rounds' ratios are 1.0, 1.0 and 0.5 (median 1.0), while the
    # ratio of the medians, 2.0 / 4.0, sets ours of a quiet round against gluon of
    # the busy one.
    ours = [1.0, 4.0, 2.0]
    gluon = [1.0, 4.0, 4.0]
    assert bench.paired(ours, gluon) == (1.0, 0.5, 1.0)


def test_the_pairs_must_match(bench: ModuleType) -> None:
    with pytest.raises(ValueError):
        bench.paired([1.0, 2.0], [1.0])
