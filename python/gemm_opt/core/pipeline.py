"""``--pass-pipeline`` text: the pass registry, parsing, resolving, building.

The syntax is MLIR's: ``builtin.module(a{x=1 y=true},func.func(canonicalize),b)``.
Building happens in two steps so that a tool can reject a bad pipeline before
it reads any input:

1. :func:`resolve` checks every name and option against a :class:`Registry`
   and expands named pipelines in place, giving a tree of :class:`Step`;
2. :func:`build_pass_manager` turns the steps into a module-anchored
   PassManager in the current context.

Elements naming a gemm-opt pass run the Python pass; anything else (upstream
C++ passes) goes through MLIR's own pipeline parser, so order is preserved
throughout. A nested ``op(...)`` pipeline that holds only upstream passes is
MLIR's; one that holds gemm-opt passes runs through a PassManager anchored
on ``op``, once on each ``op`` directly inside the module (MLIR's nesting
rule), with the same verification, IR printing and failure handling.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import os
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gemm_opt.core.ext_compat import MLIRError, PassManager, ir
from gemm_opt.core.pass_base import TilePass, option_choices


class PipelineError(ValueError):
    """A malformed or unknown pipeline; ``col`` is 1-based in the pipeline text."""

    def __init__(self, message: str, col: int) -> None:
        super().__init__(message)
        self.col = col


@dataclass
class Element:
    """One pipeline element: ``name{options}`` or ``name(nested, ...)``."""

    name: str
    col: int
    text: str
    options: dict[str, str] = field(default_factory=dict)
    nested: list[Element] | None = None


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def error(self, message: str) -> PipelineError:
        return PipelineError(message, self.pos + 1)

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def elements(self, closing: str) -> list[Element]:
        out = []
        while True:
            self.skip_ws()
            if self.peek() == closing:
                return out
            out.append(self.element())
            self.skip_ws()
            if self.peek() == ",":
                self.pos += 1
                continue
            if self.peek() != closing:
                want = "')'" if closing == ")" else "end of pipeline"
                raise self.error(f"expected ',' or {want}")
            return out

    def element(self) -> Element:
        start = self.pos
        while self.pos < len(self.text) and (
            self.text[self.pos].isalnum() or self.text[self.pos] in "-_."
        ):
            self.pos += 1
        name = self.text[start : self.pos]
        if not name:
            raise self.error("expected a pass name")
        el = Element(name, start + 1, "")
        self.skip_ws()
        if self.peek() == "{":
            el.options = self.options()
        elif self.peek() == "(":
            self.pos += 1
            el.nested = self.elements(")")
            self.pos += 1
        el.text = self.text[start : self.pos]
        return el

    def options(self) -> dict[str, str]:
        self.pos += 1
        opts: dict[str, str] = {}
        while True:
            self.skip_ws()
            if self.peek() == "}":
                self.pos += 1
                return opts
            if not self.peek():
                raise self.error("unterminated '{' in pass options")
            start = self.pos
            while self.peek() and self.peek() not in "= }":
                self.pos += 1
            key = self.text[start : self.pos]
            if self.peek() != "=":
                opts[key] = "true"
                continue
            self.pos += 1
            vstart = self.pos
            depth = 0
            # Equivalent mutant: Add->Sub below: opening and closing brackets then
            # only swap signs, and depth is 0 exactly when they balance either way.
            while self.peek() and (depth or self.peek() not in " }"):
                depth += {"{": 1, "[": 1, "}": -1, "]": -1}.get(self.peek(), 0)
                self.pos += 1
            opts[key] = self.text[vstart : self.pos]


def parse_pipeline(text: str) -> list[Element]:
    """Parse ``text``, unwrapping a top-level ``builtin.module(...)``."""
    p = _Parser(text)
    elements = p.elements("")
    if len(elements) == 1 and elements[0].name == "builtin.module":
        return elements[0].nested or []
    return elements


PassLoader = Callable[[], type[TilePass]]


@dataclass(frozen=True)
class Option:
    """One option of a pass or named pipeline, as ``--list-passes`` shows it."""

    name: str
    type: str
    default: str
    doc: str = ""


@dataclass(frozen=True)
class NamedPipeline:
    """A named pipeline: its options (as text) -> the pipeline text it stands for.

    ``expand`` raises ValueError for a bad option value; unknown option names
    are rejected before it is called.
    """

    summary: str
    expand: Callable[[dict[str, str]], str]
    options: tuple[Option, ...] = ()

    def __call__(self, options: dict[str, str]) -> str:
        return self.expand(options)


@dataclass
class Registry:
    """The passes and named pipelines a tool offers.

    ``module_passes`` names the passes that only run on a ``builtin.module``
    (they read module attributes); nesting them is a pipeline error.
    """

    passes: dict[str, PassLoader] = field(default_factory=dict)
    pipelines: dict[str, NamedPipeline] = field(default_factory=dict)
    module_passes: frozenset[str] = frozenset()


@dataclass
class Step:
    """One resolved pipeline element.

    Exactly one of ``instance`` (a gemm-opt pass), ``nested`` (an ``op(...)``
    pipeline, ``name`` being the op) or neither (an upstream pass: ``text``).
    """

    name: str
    col: int
    text: str
    instance: TilePass | None = None
    nested: list[Step] | None = None


def resolve(text: str, registry: Registry, defaults: Mapping[str, str] | None = None) -> list[Step]:
    """Check ``text`` against ``registry`` and expand its named pipelines.

    ``defaults`` fills the options of named pipelines that the text leaves
    out (for example the module's target); only options a pipeline declares
    are filled. Raises PipelineError.
    """
    return _resolve(parse_pipeline(text), registry, dict(defaults or {}), None, 0)


def _resolve(
    elements: list[Element],
    registry: Registry,
    defaults: dict[str, str],
    anchor: str | None,
    depth: int,
) -> list[Step]:
    if depth > 8:
        # Equivalent mutant: another column: depth > 0 is only reached inside an
        # expansion, whose except clause re-raises at the named pipeline's column.
        raise PipelineError("named pipelines nest too deeply", 1)
    steps: list[Step] = []
    for el in elements:
        if el.name in registry.passes:
            if el.nested is not None:
                raise PipelineError(
                    f"pass '{el.name}' takes options, not a nested pipeline", el.col
                )
            if anchor is not None and el.name in registry.module_passes:
                raise PipelineError(
                    f"pass '{el.name}' runs on builtin.module; it cannot be nested in '{anchor}'",
                    el.col,
                )
            cls = registry.passes[el.name]()
            try:
                instance = cls.from_options(el.options)
            except ValueError as e:
                raise PipelineError(str(e), el.col) from None
            steps.append(Step(el.name, el.col, el.text, instance=instance))
        elif el.name in registry.pipelines:
            if el.nested is not None:
                raise PipelineError(
                    f"pipeline '{el.name}' takes options, not a nested pipeline", el.col
                )
            named = registry.pipelines[el.name]
            known = {o.name for o in named.options}
            unknown = sorted(set(el.options) - known)
            if unknown:
                raise PipelineError(
                    f"pipeline '{el.name}' has no option '{unknown[0]}' "
                    f"(options: {', '.join(sorted(known)) or 'none'})",
                    el.col,
                )
            options = {k: v for k, v in defaults.items() if k in known} | el.options
            try:
                expansion = named.expand(options)
            except (ValueError, PipelineError) as e:
                raise PipelineError(f"pipeline '{el.name}': {e}", el.col) from None
            try:
                inner = parse_pipeline(expansion)
                steps += _resolve(inner, registry, defaults, anchor, depth + 1)
            except PipelineError as e:
                raise PipelineError(f"in the expansion of '{el.name}': {e}", el.col) from None
        elif el.nested is not None:
            nested = _resolve(el.nested, registry, defaults, el.name, depth)
            steps.append(Step(el.name, el.col, el.text, nested=nested))
        else:
            steps.append(Step(el.name, el.col, el.text))
    return steps


def pass_names(steps: Sequence[Step]) -> Iterator[str]:
    """The names of every pass in ``steps``, nested ones included, in order."""
    for step in steps:
        if step.nested is not None:
            yield from pass_names(step.nested)
        else:
            yield step.name


def find_pass(steps: Sequence[Step], name: str) -> Iterator[TilePass]:
    """The instances of gemm-opt pass ``name`` in ``steps``, in order."""
    for step in steps:
        if step.nested is not None:
            yield from find_pass(step.nested, name)
        elif step.name == name and step.instance is not None:
            yield step.instance


def _python(steps: Sequence[Step]) -> bool:
    return any(s.instance is not None or (s.nested and _python(s.nested)) for s in steps)


@dataclass(frozen=True)
class _Printing:
    before: bool = False
    after: bool = False

    def apply(self, pm: PassManager) -> None:
        if self.before or self.after:
            pm.enable_ir_printing(print_before_all=self.before, print_after_all=self.after)


def build_pass_manager(
    pipeline: str | Sequence[Step],
    registry: Registry,
    *,
    defaults: Mapping[str, str] | None = None,
    print_ir_before_all: bool = False,
    print_ir_after_all: bool = False,
) -> PassManager:
    """A module-anchored PassManager (current context) running ``pipeline`` in order.

    ``pipeline`` is text (resolved here, see :func:`resolve`) or steps that
    :func:`resolve` returned. Raises PipelineError.
    """
    steps = resolve(pipeline, registry, defaults) if isinstance(pipeline, str) else pipeline
    printing = _Printing(print_ir_before_all, print_ir_after_all)
    pm = PassManager("builtin.module")
    _add(pm, steps, printing)
    printing.apply(pm)
    return pm


def check_pipeline(steps: Sequence[Step], registry: Registry) -> None:
    """Build ``steps`` once in a scratch context: upstream names and options
    are checked by MLIR's parser. Raises PipelineError."""
    with ir.Context():
        build_pass_manager(steps, registry)


def _add(pm: PassManager, steps: Sequence[Step], printing: _Printing) -> None:
    for step in steps:
        if step.instance is not None:
            pm.add(step.instance, step.name)
        elif step.nested is not None and _python(step.nested):
            pm.add(_NestedPipeline(step.name, tuple(step.nested), printing), step.name)
        elif _rejected(pm, step.text) is not None:
            raise _upstream_error(step)


def _upstream_error(step: Step) -> PipelineError:
    """The error for an element MLIR's parser rejected, at the innermost culprit."""
    for child in step.nested or []:
        if child.instance is None and _rejected(PassManager(step.name), child.text) is not None:
            return _upstream_error(child)
    if (
        step.nested is None
        and step.text != step.name
        and _rejected(PassManager(), step.name) is None
    ):
        # The pass exists, so its options are wrong: LLVM's option parser says how.
        reason = _rejected(PassManager(), step.text) or "bad options"
        return PipelineError(f"pass '{step.name}': {reason}", step.col)
    what = "pass, pipeline or op to nest on" if step.nested is not None else "pass or pipeline"
    return PipelineError(
        f"'{step.name}' does not refer to a registered {what} (see --list-passes)", step.col
    )


def _rejected(pm: PassManager, text: str) -> str | None:
    """None if ``pm.add(text)`` works, else the first line of why not.

    LLVM's option parser writes its complaints to the process's stderr; they
    are captured here so that the tool prints one line.
    """
    with tempfile.TemporaryFile() as sink:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            pm.add(text)
            return None
        except (MLIRError, ValueError, RuntimeError) as e:
            error = str(e)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        # Equivalent mutant: seek(1): LLVM's option parser starts each line with
        # its (empty) program name and ": ", and the ':' is stripped below anyway.
        sink.seek(0)
        printed = sink.read().decode(errors="replace")
    for line in (*printed.splitlines(), *error.splitlines()):
        line = line.strip().lstrip(":").strip()
        if line:
            return _without_location(line)
    return "rejected by MLIR's pipeline parser"


def _without_location(line: str) -> str:
    """``line`` less the ``<source>:<line>:<col>: error: `` that MLIR's pipeline
    parser puts before its message. Only that prefix goes: LLVM's option
    parser quotes the bad value, which may itself hold ``error: ``."""
    loc, sep, rest = line.partition(": error: ")
    line_col = loc.rsplit(":", 2)[1:]
    if sep and len(line_col) == 2 and all(x.isdigit() for x in line_col):
        return rest
    return line


class _NestedPipeline:
    """``op(...)`` holding gemm-opt passes: a PassManager anchored on ``op``
    (built now, in the current context, so bad elements fail early), run on
    each ``op`` directly inside the one this pass runs on."""

    def __init__(self, anchor: str, steps: Sequence[Step], printing: _Printing) -> None:
        self.anchor = anchor
        self.pm = PassManager(anchor)
        _add(self.pm, steps, printing)
        printing.apply(self.pm)

    def __call__(self, op: ir.Operation, pass_: Any) -> None:
        targets = [
            child.operation
            for region in op.regions
            for block in region.blocks
            for child in block.operations
            if child.operation.name == self.anchor
        ]
        failed = False
        for target in targets:  # like MLIR: every op runs, then the pass fails
            try:
                self.pm.run(target)
            except MLIRError:  # the diagnostics are already reported
                failed = True
        if failed:
            pass_.signal_pass_failure()


# ---- option descriptions ---------------------------------------------------------


def pass_options(cls: type[TilePass]) -> list[Option]:
    """Each option of a pass: kebab-case name, type, default and the
    attribute docstring that follows the field in the class body."""
    docs = _attribute_docs(cls)
    types = cls.option_types()
    out = []
    for name, f in cls.options().items():
        default = f.default if f.default is not dataclasses.MISSING else ""
        if isinstance(default, bool):
            default = str(default).lower()
        choices = option_choices(types[name])
        type_name = str(getattr(types[name], "__name__", types[name]))
        type_name = "|".join(choices) if choices else {"str": "string"}.get(type_name, type_name)
        doc = docs.get(f.name, "").replace("``", "")
        out.append(Option(name, type_name, str(default), doc))
    return out


def _attribute_docs(cls: type) -> dict[str, str]:
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        # Equivalent mutant: and->or: a class's source parses to one statement,
        # the ClassDef itself (decorators included), so both tests hold together.
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for stmt, nxt in itertools.pairwise(body):
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and isinstance(nxt, ast.Expr)
                and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)
            ):
                docs[stmt.target.id] = " ".join(nxt.value.value.split())
    return docs


__all__ = [
    "Element",
    "NamedPipeline",
    "Option",
    "PipelineError",
    "Registry",
    "Step",
    "build_pass_manager",
    "check_pipeline",
    "find_pass",
    "parse_pipeline",
    "pass_names",
    "pass_options",
    "resolve",
]
