"""Authoring errors and the source positions they point at.

Every mistake in a traced kernel is a :class:`CompilationError` at the user's
line: positions come from the Python frame of the ``tl.*`` call (the innermost
frame outside this package) or, for diagnostics of the MLIR verifiers and the
lowering, from the op's typed location (``ir.FileLineColLoc``).
"""

from __future__ import annotations

import itertools
import linecache
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gemm_opt.core.ext_compat import ir


class CompilationError(Exception):
    """An error in a traced kernel, reported at the user's source line.

    ``str(err)`` is ``<file>:<line>: <message>`` followed by the source line
    and a caret under the call. Attributes: ``message`` (without position),
    ``filename``, ``lineno``, ``col`` (1-based; 0 when unknown),
    ``source_line`` (stripped text, may be empty), ``notes`` (further
    ``file:line:col: severity: message`` lines, printed after the source line)
    and ``diagnostics`` (every MLIR diagnostic as ``(filename, line, col,
    severity, message)`` when the error came from a verifier).
    """

    def __init__(
        self,
        message: str,
        filename: str | None = None,
        lineno: int = 0,
        col: int = 0,
        *,
        diagnostics: Sequence[tuple[str, int, int, str, str]] = (),
        notes: Sequence[str] = (),
    ) -> None:
        self.message = message
        self.notes = tuple(notes)
        self.filename = filename
        self.lineno = lineno
        self.col = col
        self.diagnostics = tuple(diagnostics)
        raw = linecache.getline(filename, lineno) if filename and lineno else ""
        self.source_line = raw.strip()
        super().__init__(self._format(raw))

    def _format(self, raw: str) -> str:
        if not self.filename or not self.lineno:
            text = self.message
        else:
            text = f"{self.filename}:{self.lineno}: {self.message}"
        if self.source_line:
            text += f"\n    {self.source_line}"
            indent = len(raw) - len(raw.lstrip())
            if self.col > indent:
                text += "\n    " + " " * (self.col - 1 - indent) + "^"
        return "\n".join([text, *self.notes])


@dataclass(frozen=True)
class Pos:
    """A user source position: file, 1-based line and 1-based column."""

    filename: str
    line: int
    col: int

    def location(self) -> ir.Location:
        return ir.Location.file(self.filename, self.line, self.col)

    def error(self, message: str) -> CompilationError:
        return CompilationError(message, self.filename, self.line, self.col)


# Frames of this package are the front end's own; the user's call is the first
# frame outside it. Judged by the frame's module, so that code the package has
# generated (dataclass ``__init__``s, which run in the module's globals) counts
# as the package's too.
_PACKAGE = __name__.rpartition(".")[0]


def _is_ours(frame: Any) -> bool:
    module = frame.f_globals.get("__name__", "")
    return module == _PACKAGE or module.startswith(_PACKAGE + ".")


def user_pos() -> Pos:
    """The position of the innermost call made from outside this package."""
    frame = sys._getframe(1)
    while frame is not None and _is_ours(frame):
        frame = frame.f_back
    if frame is None:
        return Pos("<unknown>", 0, 0)
    return _frame_pos(frame, frame.f_lineno, frame.f_lasti)


def _calls_user(frame: Any) -> bool:
    """Whether ``frame`` is the front end calling a user function (``call_user``)."""
    module = frame.f_globals.get("__name__", "")
    return module == f"{_PACKAGE}.arguments" and frame.f_code.co_name == "call_user"


def _frame_pos(frame: Any, line: int, lasti: int) -> Pos:
    col = 0
    positions = getattr(frame.f_code, "co_positions", None)
    if positions is not None and lasti >= 0:
        pos = next(itertools.islice(positions(), lasti // 2, None), None)
        if pos is not None and pos[0] is not None:
            line, col = pos[0], (pos[2] or 0) + 1
    return Pos(frame.f_code.co_filename, line or 0, col)


def located(err: BaseException, kernel_code: Any) -> CompilationError:
    """A Python exception raised while tracing, as a CompilationError.

    The position is the innermost frame of the user's code (from the kernel
    function ``kernel_code`` inward). Whose error it is depends on the code
    that raised it: the user's own (a ZeroDivisionError in a constexpr
    expression; an exception of their worker or loop body, which the front
    end called through ``call_user``) is theirs, at that line; one raised
    inside this package, or in a library it called, is the front end's own
    failure (reported as internal) at the ``tl.*`` call.
    """
    tb = err.__traceback__
    while tb is not None and tb.tb_frame.f_code is not kernel_code:
        tb = tb.tb_next
    where: Pos | None = None
    internal = tb is None  # raised before the kernel's code ran
    caller: Any = None
    while tb is not None:
        frame = tb.tb_frame
        if _is_ours(frame):
            internal = True
        elif caller is not None and _calls_user(caller):
            internal = False  # a user function the front end called
        if not internal:
            where = _frame_pos(frame, tb.tb_lineno, tb.tb_lasti)
        caller = frame
        tb = tb.tb_next
    what = f"{type(err).__name__}: {err}"
    if internal and not isinstance(err, RecursionError):  # recursion is the user's
        what = f"internal error in the front end: {what}"
    if where is None:
        return fail(what)
    return where.error(what)


def def_pos(fn: Callable[..., Any]) -> Pos:
    """The position of ``def`` of ``fn`` (past its decorators)."""
    code = fn.__code__
    line = code.co_firstlineno
    for offset in range(64):
        text = linecache.getline(code.co_filename, line + offset)
        if not text:
            break
        if text.lstrip().startswith(("def ", "async def ")):
            return Pos(code.co_filename, line + offset, len(text) - len(text.lstrip()) + 1)
    return Pos(code.co_filename, line, 1)


def fail(message: str) -> CompilationError:
    """A CompilationError at the current user call site (raise it)."""
    return user_pos().error(message)


def file_line_col(location: Any) -> tuple[str, int, int]:
    """(file, line, col) of an MLIR location; ("", 0, 0) when it has none.

    Read through the typed location classes: a name or call-site location
    gives its child (the callee), a fused location its first positioned part.
    """
    loc = location
    for _ in range(64):  # nesting depth bound: locations are acyclic
        if isinstance(loc, ir.FileLineColLoc):
            return str(loc.filename), int(loc.start_line), int(loc.start_col)
        if isinstance(loc, ir.NameLoc):
            loc = loc.child_loc
        elif isinstance(loc, ir.CallSiteLoc):
            loc = loc.callee
        elif isinstance(loc, ir.FusedLoc):
            for part in loc.locations:
                found = file_line_col(part)
                if found[1]:
                    return found
            return "", 0, 0
        else:
            return "", 0, 0
    return "", 0, 0


__all__ = ["CompilationError", "Pos", "def_pos", "fail", "file_line_col", "located", "user_pos"]
