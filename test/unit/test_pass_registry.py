"""The one pass registry agrees with the passes, their docs, their lit tests,
the CLI and the compile path."""

from __future__ import annotations

import dataclasses
import importlib.util
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import gemm_opt.lowering.compile as compile_module
from gemm_opt import lowering, passes
from gemm_opt.core.pass_base import TilePass
from gemm_opt.core.pipeline import Element, parse_pipeline
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
    headings = [line.strip() for line in doc.splitlines()]
    assert any(h.startswith("Before") for h in headings), f"{name}: no 'Before' section"
    assert any(h.startswith("After") for h in headings), f"{name}: no 'After' section"
    assert doc.count("```mlir") >= 1, f"{name}: no MLIR example"


def _pass_names(elements: list[Element]) -> set[str]:
    """Every pass a parsed pipeline runs, at any nesting depth."""
    names: set[str] = set()
    for e in elements:
        if e.nested is None:
            names.add(e.name)
        else:
            names |= _pass_names(e.nested)
    return names


def _runs(lit: Path) -> list[tuple[set[str], list[str]]]:
    """(passes run, command words) of each RUN line of a lit test."""
    runs = []
    for line in lit.read_text().splitlines():
        if not line.startswith("// RUN:"):
            continue
        words = shlex.split(line.removeprefix("// RUN:"))
        pipelines = [w.split("=", 1)[1] for w in words if w.startswith("--pass-pipeline=")]
        runs.append((set().union(*(_pass_names(parse_pipeline(p)) for p in pipelines)), words))
    return runs


@pytest.mark.parametrize("name", NAMES)
def test_registry_pass_has_a_lit_test_that_runs_and_checks_it(name):
    lit = LIT_PASSES / f"{name}.mlir"
    assert lit.is_file(), f"missing {lit.relative_to(ROOT)}"
    checked = [
        words
        for passes, words in _runs(lit)
        if name in passes and ("FileCheck" in words or "--verify-diagnostics" in words)
    ]
    assert checked, f"no RUN line of {lit.name} runs {name} and checks its output"


@pytest.mark.parametrize("name", NAMES)
def test_registry_options_are_kebab_case_with_defaults(name):
    cls = PASSES[name]()
    default = cls()  # every option has a default
    for option, field in cls.options().items():
        assert field.name.isidentifier() and field.name == field.name.lower(), field.name
        assert option == field.name.replace("_", "-")
        assert field.default is not dataclasses.MISSING, f"{name}: {option} has no default"
        value = getattr(default, field.name)
        text = str(value).lower() if isinstance(value, bool) else str(value)
        assert getattr(cls.from_options({option: text}), field.name) == value
        if "_" in field.name:  # the Python spelling is not a CLI option
            with pytest.raises(ValueError, match=f"has no option '{field.name}'"):
                cls.from_options({field.name: text})


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
    listed = out.split("Pipelines:")[0]
    for name in NAMES:
        for option, field in PASSES[name]().options().items():
            shown = f"{option}=<{field.type}>"
            assert shown in listed, f"{name}: option {option} not listed"


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
