"""Pipeline parsing, resolving and building at their edges (found by
``benchmarks/mutation.py`` in ``gemm_opt.core.pipeline``).

A small registry of two test passes (one marks every op it runs on, one
fails on an op marked ``fail``) and a chain of named pipelines pins: the
wording of syntax errors, option values holding spaces inside brackets,
the exact nesting limit of named pipelines, nested pipelines of gemm-opt
passes run on exactly the ops they name (and failing when one fails),
upstream option errors in LLVM's words with nothing left on stderr, IR
printing, and how option defaults are shown.
"""

from __future__ import annotations

import dataclasses
import os
import re

import pytest

from gemm_opt.core.ext_compat import MLIRError, PassManager, ir
from gemm_opt.core.pass_base import TilePass
from gemm_opt.core.pipeline import (
    NamedPipeline,
    PipelineError,
    Registry,
    _without_location,
    build_pass_manager,
    check_pipeline,
    parse_pipeline,
    pass_options,
    resolve,
)


@dataclasses.dataclass(frozen=True)
class Mark(TilePass):
    """Mark the op it runs on with a unit attribute ``marked``."""

    name = "test-mark"
    strict: bool = False
    """A bool option (its default is shown as ``false``)."""

    def run(self, module: ir.Operation) -> None:
        module.attributes["marked"] = ir.UnitAttr.get()


@dataclasses.dataclass(frozen=True)
class FailMarked(TilePass):
    """Fail on an op carrying ``fail``."""

    name = "test-fail-marked"

    def run(self, module: ir.Operation) -> None:
        if "fail" in module.attributes:
            self.fail(module, "marked to fail")


def _chain(length: int) -> Registry:
    """``p0`` expands to ``p1``, ..., ``p{length-1}`` to ``cse``: ``length`` nested expansions."""
    pipelines = {
        f"p{i}": NamedPipeline("", lambda _o, i=i: f"p{i + 1}" if i + 1 < length else "cse")
        for i in range(length)
    }
    return Registry(passes={"test-mark": lambda: Mark, "test-fail-marked": lambda: FailMarked},
                    pipelines=pipelines)  # fmt: skip


REG = _chain(1)

MODULE = """
module {
  func.func @f() { return }
  func.func @g() attributes {fail} { return }
  func.func @h() { return }
}"""


@pytest.mark.parametrize(
    ("text", "message", "col"),
    [("cse(a b)", "expected ',' or ')'", 7), ("a b", "expected ',' or end of pipeline", 3)],
)
def test_a_missing_comma_names_what_may_follow(text: str, message: str, col: int) -> None:
    with pytest.raises(PipelineError, match=f"^{re.escape(message)}$") as e:
        parse_pipeline(text)
    assert e.value.col == col


def test_option_values_keep_spaces_inside_brackets() -> None:
    (el,) = parse_pipeline("p{a={x y} b=[u v] c={[m n] o} d=1 e}")
    assert el.options == {"a": "{x y}", "b": "[u v]", "c": "{[m n] o}", "d": "1", "e": "true"}


@pytest.mark.parametrize("length", [1, 8])
def test_named_pipelines_nest_up_to_eight_deep(length: int) -> None:
    steps = resolve("p0", _chain(length))
    assert [s.name for s in steps] == ["cse"]


@pytest.mark.parametrize("length", [9, 10])
def test_named_pipelines_nesting_nine_deep_are_refused(length: int) -> None:
    with pytest.raises(PipelineError, match="named pipelines nest too deeply") as e:
        resolve("cse,p0", _chain(length))
    assert e.value.col == 5


def _run(pipeline: str, text: str = MODULE, **printing: bool) -> ir.Module:
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(text)
        build_pass_manager(pipeline, REG, **printing).run(module.operation)
        return module


def _marked(module: ir.Module) -> list[str]:
    return [
        ir.StringAttr(op.attributes["sym_name"]).value
        for op in module.body.operations
        if "marked" in op.attributes
    ]


def test_a_nested_gemm_opt_pass_runs_on_each_named_op_only() -> None:
    text = MODULE.replace("attributes {fail} ", "").replace(
        "func.func @h() { return }", 'func.func @h() { return }\n  "test.other"() : () -> ()'
    )
    module = _run("func.func(test-mark)", text)
    assert _marked(module) == ["f", "g", "h"]
    assert "marked" not in module.operation.attributes
    other = list(module.body.operations)[-1]
    assert other.operation.name == "test.other" and "marked" not in other.attributes


def test_a_nested_pipeline_mixing_upstream_and_gemm_opt_passes_builds() -> None:
    module = _run("func.func(cse,test-mark)", MODULE.replace("attributes {fail} ", ""))
    assert _marked(module) == ["f", "g", "h"]


def test_a_nested_pass_failing_on_one_op_fails_after_all_ran() -> None:
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(MODULE)
        pm = build_pass_manager("func.func(test-mark,test-fail-marked)", REG)
        with pytest.raises(MLIRError, match="Failure while executing pass pipeline"):
            pm.run(module.operation)
        assert _marked(module) == ["f", "g", "h"]
    clean = _run("func.func(test-fail-marked)", MODULE.replace("attributes {fail} ", ""))
    assert _marked(clean) == []


@pytest.mark.parametrize(
    ("before", "after", "banners"),
    [(True, False, ["IR Dump Before"]), (False, True, ["IR Dump After"]), (False, False, [])],
)
def test_ir_printing_follows_each_flag(
    before: bool, after: bool, banners: list[str], capfd: pytest.CaptureFixture[str]
) -> None:
    _run("cse", MODULE, print_ir_before_all=before, print_ir_after_all=after)
    err = capfd.readouterr().err
    assert [b for b in ("IR Dump Before", "IR Dump After") if b in err] == banners


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("canonicalize{bogus=1}", "pass 'canonicalize': <Pass-Options-Parser>: no such option bogus"),
        ("canonicalize{max-iterations=abc}", "pass 'canonicalize': for the --max-iterations "
         "option: 'abc' value invalid for long argument!"),
        ("canonicalize{max-iterations={error: error: x}}", "pass 'canonicalize': for the "
         "--max-iterations option: 'error: error: x' value invalid for long argument!"),
        ("nope", "'nope' does not refer to a registered pass or pipeline (see --list-passes)"),
    ],
)  # fmt: skip
def test_upstream_errors_are_llvms_line_and_stderr_stays_clean(
    text: str, message: str, capfd: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(PipelineError) as e:
        check_pipeline(resolve(text, REG), REG)
    assert str(e.value) == message
    os.write(2, b"still stderr\n")
    assert capfd.readouterr().err == "still stderr\n"


@pytest.mark.parametrize(
    ("line", "want"),
    [("src:3:7: error: m", "m"), ("a:b:12:7: error: m: error: n", "m: error: n"),
     ("3:7: error: m", "3:7: error: m"), ("7: error: m", "7: error: m"), ("x: error: m", "x: error: m"),
     ("src:3:x: error: m", "src:3:x: error: m"), ("src:x:3: error: m", "src:x:3: error: m"),
     ("src:3:7 error: m", "src:3:7 error: m"), ("opt: '{error: x}'", "opt: '{error: x}'")],
)  # fmt: skip
def test_only_a_location_prefix_is_dropped(line: str, want: str) -> None:
    assert _without_location(line) == want


def test_a_bool_option_default_is_shown_in_lower_case() -> None:
    (opt,) = pass_options(Mark)
    assert (opt.name, opt.type, opt.default) == ("strict", "bool", "false")
    assert opt.doc.startswith("A bool option")


def test_pass_manager_of_upstream_only_nesting_is_upstream() -> None:
    """``func.func(cse)`` is added as text: MLIR prints it back as written."""
    with ir.Context():
        pm = build_pass_manager("func.func(cse)", REG)
        assert "func.func(cse)" in str(pm).replace(" ", "")
        assert isinstance(pm, PassManager)
