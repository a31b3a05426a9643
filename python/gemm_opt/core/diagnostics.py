"""Diagnostics for an mlir-opt style driver: collection, formatting, and
``--split-input-file`` / ``--verify-diagnostics`` as mlir-opt defines them.

Positions are read from the bindings' typed locations (``FileLineColLoc``
and the locations that wrap one), never from printed text. The two patterns
below read the test-file annotations mlir-opt defines (the ``// -----``
separator and ``expected-<severity>`` comments, which mlir-opt also matches
with a regular expression); they never look at IR. The splitting and matching
logic works on plain data, so it is unit-testable without MLIR.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from gemm_opt.core.ext_compat import ir

SPLIT_MARKER = re.compile(r"^// -----\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Chunk:
    """One ``// -----`` chunk, padded with newlines so line numbers match the file."""

    text: str
    first_line: int  # 1-based line of the chunk's first line in the file


def split_input(text: str, split: bool) -> list[Chunk]:
    """Split ``text`` at ``// -----`` lines when ``split`` is set."""
    if not split:
        return [Chunk(text, 1)]
    chunks = []
    start = 0
    for m in SPLIT_MARKER.finditer(text):
        chunks.append(_chunk(text, start, m.start()))
        start = m.end()
    chunks.append(_chunk(text, start, len(text)))
    return chunks


def _chunk(text: str, start: int, end: int) -> Chunk:
    first_line = text.count("\n", 0, start) + 1
    return Chunk("\n" * (first_line - 1) + text[start:end], first_line)


@dataclass(frozen=True)
class Diagnostic:
    """A reported diagnostic with a resolved position (line 0 = unknown)."""

    severity: str  # error | warning | note | remark
    line: int
    col: int
    message: str
    notes: tuple[Diagnostic, ...] = ()

    def format(self, filename: str) -> str:
        """``file:line:col: severity: message`` plus its notes, mlir-opt style."""
        where = f"{filename}:{self.line}:{self.col}: " if self.line else f"{filename}: "
        lines = [f"{where}{self.severity}: {self.message}"]
        lines += [n.format(filename) for n in self.notes]
        return "\n".join(lines)


def position_of(location: object) -> tuple[int, int]:
    """(line, col) an MLIR location points at; (0, 0) when it has none.

    Looks through wrapping locations the way MLIR's source-manager handler
    picks the one to show: a name's child, a call site's callee, the first
    member of a fused location that has a position.
    """
    if type(location) is ir.Location:  # untyped (a diagnostic's): find its kind
        for kind in (ir.FileLineColLoc, ir.NameLoc, ir.CallSiteLoc, ir.FusedLoc):
            try:
                return position_of(kind(location))
            except (TypeError, ValueError):
                continue
        return 0, 0
    if isinstance(location, ir.FileLineColLoc):
        return location.start_line, location.start_col
    if isinstance(location, ir.NameLoc):
        return position_of(location.child_loc)
    if isinstance(location, ir.CallSiteLoc):
        return position_of(location.callee)
    if isinstance(location, ir.FusedLoc):
        for member in location.locations:
            found = position_of(member)
            if found != (0, 0):
                return found
    return 0, 0


def positioned_location(op: object) -> object:
    """The location to report an error about ``op`` at: its own, or, when it
    names no position (the implicit module of a file without ``module``), that
    of the first op inside it that does; the op's own when none does."""
    loc = op.location  # type: ignore[attr-defined]
    if position_of(loc) != (0, 0):
        return loc
    found: list[object] = []

    def visit(inner: ir.Operation) -> ir.WalkResult:
        if position_of(inner.location) != (0, 0):
            found.append(inner.location)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    operation = getattr(op, "operation", op)
    operation.walk(visit, ir.WalkOrder.PRE_ORDER)  # type: ignore[attr-defined]
    return found[0] if found else loc


_SEVERITY = {"ERROR": "error", "WARNING": "warning", "NOTE": "note", "REMARK": "remark"}


def _convert(d: object) -> Diagnostic:
    # Equivalent mutant: rsplit(".", 2); a severity prints with one dot
    # ("DiagnosticSeverity.REMARK").
    sev = str(getattr(d, "severity", "ERROR")).rsplit(".", 1)[-1]
    line, col = position_of(getattr(d, "location", None))
    notes = tuple(_convert(n) for n in getattr(d, "notes", ()))
    # rstrip: MLIR's param remarks end in a separator space.
    message = str(d.message).rstrip()
    return Diagnostic(_SEVERITY.get(sev, "error"), line, col, message, notes)


@contextmanager
def collect(ctx: object) -> Iterator[list[Diagnostic]]:
    """Collect every diagnostic emitted in ``ctx`` (parse, verify, passes)."""
    found: list[Diagnostic] = []

    def handler(d: object) -> bool:
        found.append(_convert(d))
        return True

    handle = ctx.attach_diagnostic_handler(handler)  # type: ignore[attr-defined]
    ctx.emit_error_diagnostics = True  # type: ignore[attr-defined]
    try:
        yield found
    finally:
        handle.detach()


# ---- --verify-diagnostics -------------------------------------------------------

_EXPECT = re.compile(
    r"expected-(error|warning|note|remark)"
    r"(?:@(above|below|unknown|[+-]\d+))?\s*\{\{(.*?)\}\}"
)


@dataclass
class Expectation:
    """One ``expected-<severity>[@where] {{text}}`` annotation."""

    severity: str
    line: int  # 0 = @unknown
    text: str
    source_line: int
    matched: bool = field(default=False)


def parse_expectations(text: str) -> list[Expectation]:
    """Every expectation in ``text``; ``@above``/``@below`` skip other annotation-only lines."""
    lines = text.split("\n")
    out = []
    for idx, line in enumerate(lines, start=1):
        for m in _EXPECT.finditer(line):
            sev, where, body = m.group(1), m.group(2), m.group(3)
            if where is None:
                target = idx
            elif where == "unknown":
                target = 0
            elif where in ("above", "below"):
                target = _next_code_line(lines, idx, -1 if where == "above" else 1)
            else:
                target = idx + int(where)
            out.append(Expectation(sev, target, body, idx))
    return out


def _next_code_line(lines: list[str], idx: int, step: int) -> int:
    i = idx + step
    while 1 <= i <= len(lines) and _EXPECT.search(lines[i - 1]) and _only_comment(lines[i - 1]):
        i += step
    return i


def _only_comment(line: str) -> bool:
    return line.lstrip().startswith("//")


def _flatten(diags: list[Diagnostic]) -> list[Diagnostic]:
    out = []
    for d in diags:
        out.append(d)
        out.extend(_flatten(list(d.notes)))
    return out


def check_expectations(
    diags: list[Diagnostic], expectations: list[Expectation], filename: str
) -> list[str]:
    """Match diagnostics to expectations; return mlir-opt style failure lines."""
    failures = []
    for d in _flatten(diags):
        hit = next(
            (
                e
                for e in expectations
                if not e.matched
                and e.severity == d.severity
                and e.line == d.line
                and e.text in d.message
            ),
            None,
        )
        if hit is not None:
            hit.matched = True
        elif d.severity != "note":  # an unexpected note is never a failure
            failures.append(
                f"{filename}:{d.line}:{d.col}: error: unexpected {d.severity}: {d.message}"
            )
    for e in expectations:
        if not e.matched:
            failures.append(
                f"{filename}:{e.source_line}: error: expected {e.severity} "
                f'"{e.text}" was not produced'
            )
    return failures


__all__ = [
    "Chunk",
    "Diagnostic",
    "Expectation",
    "check_expectations",
    "collect",
    "parse_expectations",
    "position_of",
    "split_input",
]
