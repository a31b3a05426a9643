"""``benchmarks/h100/profile_calls.py`` where there is no GPU: how it reads a problem."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.scripts import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "h100" / "profile_calls.py"


@pytest.fixture(scope="module")
def bench():
    return load_script(SCRIPT, "bench_profile_calls")


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("512x512x8192", (1, 512, 512, 8192, "NN", "2d")),
        ("16x4096x7168:nt", (1, 16, 4096, 7168, "NT", "2d")),
        ("7x62x72x8:TN:bmm", (7, 62, 72, 8, "TN", "bmm")),
        ("3x5x6x7:TT:BCAST", (3, 5, 6, 7, "TT", "bcast")),
    ],
)
def test_problem_text(bench, text, want):
    assert bench.parse_problem(text) == want


@pytest.mark.parametrize(
    "text", ["512x512", "1x2x3x4x5", "4x4x4:NX", "4x4x4:NN:loop", "2x4x4x4", "4x4x4:NN:bmm"]
)
def test_bad_problem_names_the_flag(bench, text):
    with pytest.raises(ValueError, match="--problem"):
        bench.parse_problem(text)
