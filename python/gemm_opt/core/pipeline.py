"""``--pass-pipeline`` text: parsing and building a PassManager.

The syntax is MLIR's: ``builtin.module(a{x=1 y=true},func.func(canonicalize),b)``.
Elements naming a gemm-opt pass run the Python pass; named pipelines expand
in place; anything else (upstream C++ passes, nested ``func.func(...)``) is
handed to MLIR's own pipeline parser, so order is preserved throughout.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gemm_opt.core.ext_compat import MLIRError, PassManager
from gemm_opt.core.pass_base import TilePass


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


@dataclass
class Registry:
    """The passes and named pipelines a tool offers."""

    passes: dict[str, PassLoader] = field(default_factory=dict)
    pipelines: dict[str, Callable[[dict[str, str]], str]] = field(default_factory=dict)
    pipeline_docs: dict[str, str] = field(default_factory=dict)


def build_pass_manager(text: str, registry: Registry) -> PassManager:
    """A module-anchored PassManager running ``text`` in order."""
    pm = PassManager("builtin.module")
    _add(pm, parse_pipeline(text), registry, depth=0)
    return pm


def _add(pm: PassManager, elements: list[Element], registry: Registry, depth: int) -> None:
    if depth > 8:
        raise PipelineError("named pipelines nest too deeply", 1)
    for el in elements:
        if el.name in registry.passes:
            if el.nested is not None:
                raise PipelineError(
                    f"pass '{el.name}' takes options, not a nested pipeline", el.col
                )
            cls = registry.passes[el.name]()
            try:
                instance = cls.from_options(el.options)
            except ValueError as e:
                raise PipelineError(str(e), el.col) from None
            pm.add(instance, el.name)
        elif el.name in registry.pipelines:
            expansion = registry.pipelines[el.name](el.options)
            _add(pm, parse_pipeline(expansion), registry, depth + 1)
        else:
            try:
                pm.add(el.text)
            except (MLIRError, ValueError, RuntimeError):
                raise PipelineError(
                    f"'{el.name}' does not refer to a registered pass or pipeline "
                    "(see --list-passes)",
                    el.col,
                ) from None


__all__ = [
    "Element",
    "PipelineError",
    "Registry",
    "build_pass_manager",
    "parse_pipeline",
]
