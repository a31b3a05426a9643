"""The state of one kernel trace: context, module, entry block, constants.

A trace is a stack entry (kernels may call kernels); every ``tl.*`` call
finds the active :class:`Builder` with :func:`current`. Each tile op is
verified as soon as it is built, with the MLIR diagnostics collected by the
builder's handler and raised as one :class:`CompilationError` at the op's
location (the user's line).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from gemm_opt.core.ext_compat import arith, ir
from gemm_opt.language.arguments import int_bits
from gemm_opt.language.dtypes import dtype
from gemm_opt.language.errors import CompilationError, fail, file_line_col, user_pos

Diag = tuple[str, int, int, str, str]


class Builder:
    """One kernel trace."""

    def __init__(self, ctx: ir.Context, num_warps: int, target: str, threads_per_warp: int) -> None:
        self.ctx = ctx
        self.num_warps = num_warps
        self.target = target
        self.threads_per_warp = threads_per_warp
        self.diagnostics: list[Diag] = []
        self.module: ir.Module | None = None
        self.entry: ir.Block | None = None
        self._constants: dict[tuple[str, Any], ir.Value] = {}
        self._last_constant: ir.Operation | None = None

    # -- positions and diagnostics --

    def loc(self) -> ir.Location:
        return user_pos().location()

    def on_diagnostic(self, d: Any) -> bool:
        sev = str(d.severity).rsplit(".", 1)[-1].lower()
        self.diagnostics.append((*file_line_col(d.location), sev, str(d.message)))
        for n in d.notes:
            self.diagnostics.append((*file_line_col(n.location), "note", str(n.message)))
        return True

    @contextmanager
    def scope(self, entry: ir.Block, num_warps: int) -> Iterator[None]:
        """Trace into a worker partition: its block, its warps, its own constants."""
        saved = (self.entry, self._constants, self._last_constant, self.num_warps)
        self.entry, self._constants, self._last_constant, self.num_warps = (
            entry, {}, None, num_warps,
        )  # fmt: skip
        try:
            yield
        finally:
            self.entry, self._constants, self._last_constant, self.num_warps = saved

    def verify(self, op: Any) -> None:
        """Verify ``op``; raise its diagnostics as a CompilationError."""
        self.diagnostics.clear()
        try:
            ok = op.verify()
        except ir.MLIRError:
            ok = False
        if not ok:
            raise self.diagnostics_error()

    def diagnostics_error(self) -> CompilationError:
        diags = list(self.diagnostics)
        errors = [d for d in diags if d[3] == "error"] or diags
        if not errors:
            return fail("the IR failed to verify (no diagnostic was reported)")
        filename, line, col, _, message = errors[0]
        # The op dump the verifier appends repeats the IR; .diagnostics keeps it.
        notes = [
            f"{f or '<unknown>'}:{ln}:{c}: {sev}: {msg}"
            for f, ln, c, sev, msg in diags
            if (f, ln, c, sev, msg) != errors[0] and not msg.startswith("see current operation")
        ]
        if not line:  # a diagnostic without a position: the call being traced
            pos = user_pos()
            filename, line, col = pos.filename, pos.line, pos.col
        return CompilationError(
            message, filename or None, line, col, diagnostics=diags, notes=notes
        )

    def checked(self, op: Any) -> Any:
        """Verify a freshly built tile op and return it."""
        self.verify(op.operation)
        return op

    # -- constants --

    def constant(self, value: int | float | bool, dtype_: dtype) -> ir.Value:
        """One ``arith.constant`` per (value, type), hoisted to the entry block."""
        if dtype_.is_int:
            if isinstance(value, float):
                raise fail(f"the float {value!r} cannot be a {dtype_!r} constant")
            value = int_bits(int(value), dtype_.bits, f"the {dtype_!r} constant")
        else:
            value = float(value)
        key = (dtype_.name, value)
        if key not in self._constants:
            assert self.entry is not None
            if self._last_constant is None:
                ip = ir.InsertionPoint.at_block_begin(self.entry)
            else:
                ip = ir.InsertionPoint.after(self._last_constant)
            t = dtype_.to_ir()
            attr = ir.IntegerAttr.get(t, value) if dtype_.is_int else ir.FloatAttr.get(t, value)
            op = arith.ConstantOp(t, attr, loc=self.loc(), ip=ip)
            self._last_constant = op.operation
            self._constants[key] = op.result
        return self._constants[key]


_STATE = threading.local()


def active() -> bool:
    """Whether a kernel is being traced on this thread."""
    return bool(getattr(_STATE, "stack", None))


def current() -> Builder:
    """The innermost active trace; outside one, a CompilationError."""
    stack = getattr(_STATE, "stack", None)
    if not stack:
        raise fail("tl functions can only be called while a @tl.kernel is being built")
    return stack[-1]


@contextmanager
def tracing(b: Builder) -> Iterator[Builder]:
    stack = getattr(_STATE, "stack", None)
    if stack is None:
        stack = _STATE.stack = []
    stack.append(b)
    try:
        yield b
    finally:
        stack.pop()


__all__ = ["Builder", "active", "current", "tracing"]
