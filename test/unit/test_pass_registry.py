"""The one pass registry agrees with the passes, their docs, their lit tests,
the CLI and the compile path."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

import gemm_opt.lowering.compile as compile_module
from gemm_opt import lowering, passes
from gemm_opt.core.pass_base import TilePass
from gemm_opt.lowering import REGISTRY
from gemm_opt.passes import PASSES
from gemm_opt.tools import opt

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
    runs = [ln for ln in lit.read_text().splitlines() if ln.startswith("// RUN:")]
    assert any(f"({name}" in ln or f",{name}" in ln for ln in runs), f"no RUN line runs {name}"


@pytest.mark.parametrize("name", NAMES)
def test_registry_options_have_defaults(name):
    cls = PASSES[name]()
    cls()  # every option has a default
    for f in dataclasses.fields(cls):  # CLI names are the fields in kebab-case
        assert f.name == f.name.lower()
    assert set(cls.options()) == {f.name.replace("_", "-") for f in dataclasses.fields(cls)}


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


def test_one_registry_serves_the_cli_and_the_compile_path():
    assert opt.make_tool().registry is REGISTRY
    assert set(REGISTRY.passes) == set(passes.PASSES) | set(lowering.PASSES)
    assert set(REGISTRY.pipelines) == {"tile-to-ttgir", "tile-optimize"}
    assert not hasattr(compile_module, "_registry")
    # compile_tile_module resolves its pipeline through the same registry.
    low = compile_module.lower_tile_module(
        (ROOT / "test" / "lit" / "Inputs" / "copy.mlir").read_text(),
        pipeline="tile-optimize{fuse=false}",
    )
    assert "tile.warp_predicated" in low.tile


def test_registry_pipelines_and_options_are_listed_by_the_tool():
    out = subprocess.run(
        [sys.executable, "-m", "gemm_opt.tools.opt", "--list-passes"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name, named in REGISTRY.pipelines.items():
        assert any(ln.split()[:1] == [name] and named.summary in ln for ln in out.splitlines())
        for o in named.options:
            assert f"{o.name}=<{o.type}>" in out and f"(default: {o.default})" in out


def test_every_pass_and_pipeline_is_in_the_scaling_benchmark(capsys, monkeypatch):
    spec = importlib.util.spec_from_file_location(
        "pass_scaling", ROOT / "benchmarks" / "pass_scaling.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "pass_scaling", bench)  # dataclasses look it up
    spec.loader.exec_module(bench)
    rows = {bench.row_name(step) for chain in bench.chains() for step in chain.steps}
    assert set(REGISTRY.passes) <= rows
    assert {f"{name}{{target=gfx1250}}" for name in REGISTRY.pipelines} <= rows
    # A smoke run on tiny kernels (the growth check itself needs real sizes).
    assert bench.main(["--sizes", "4,8", "--repeat", "1", "--limit", "1000"]) == 0
    table = capsys.readouterr().out
    for row in [*rows, "--emit=ttgir"]:
        assert any(line.split()[:1] == [row] for line in table.splitlines()), row
