"""The pass registry agrees with the passes, their docs, their lit tests and the CLI."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from gemm_opt.core.pass_base import TilePass
from gemm_opt.passes import PASSES

ROOT = Path(__file__).resolve().parents[2]
LIT_PASSES = ROOT / "test" / "lit" / "passes"
NAMES = sorted(PASSES)


@pytest.mark.parametrize("name", NAMES)
def test_registry_name_is_the_class_name(name):
    cls = PASSES[name]()
    assert issubclass(cls, TilePass)
    assert cls.name == name


@pytest.mark.parametrize("name", NAMES)
def test_registry_pass_is_documented_with_before_and_after_ir(name):
    doc = PASSES[name]().__doc__ or ""
    summary = doc.strip().split("\n", 1)[0]
    assert summary and summary.endswith("."), f"{name}: no one-line summary"
    assert re.search(r"^\s*Before\b", doc, re.MULTILINE), f"{name}: no 'Before' section"
    assert re.search(r"^\s*After\b", doc, re.MULTILINE), f"{name}: no 'After' section"
    assert doc.count("```mlir") >= 1, f"{name}: no MLIR example"


@pytest.mark.parametrize("name", NAMES)
def test_registry_pass_has_a_lit_test(name):
    lit = LIT_PASSES / f"{name}.mlir"
    assert lit.is_file(), f"missing {lit.relative_to(ROOT)}"
    assert f"builtin.module({name}" in lit.read_text() or name in lit.read_text()


@pytest.mark.parametrize("name", NAMES)
def test_registry_options_have_defaults(name):
    cls = PASSES[name]()
    cls()  # every option has a default
    for opt in cls.options():
        assert opt == opt.lower() and "_" not in opt


def test_registry_passes_are_listed_by_the_tool():
    out = subprocess.run(
        [sys.executable, "-m", "gemm_opt.tools.opt", "--list-passes"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in NAMES:
        line = next((ln for ln in out.splitlines() if ln.split()[:1] == [name]), None)
        assert line is not None, f"{name} not listed"
        assert PASSES[name]().summary() in line
