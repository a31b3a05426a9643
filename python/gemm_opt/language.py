"""A Gluon-like Python front end that traces kernels into the ``tile`` dialect.

Users write ``import gemm_opt.language as tl`` and decorate a Python function
with :func:`kernel`. Its parameters are annotated: runtime arguments as
``tl.ptr(tl.float16)``, ``tl.int32`` or ``tl.int64``, compile-time constants
as ``tl.constexpr``. Building the kernel calls the function once, with
constexprs bound to plain Python values and runtime arguments bound to traced
values; every ``tl.*`` call emits tile IR at that moment (tracing, as in
Gluon), so Python ``if``/``for`` on constexprs unroll and specialise at build
time.

```python
import gemm_opt.language as tl


@tl.kernel
def copy_tile(src: tl.ptr(tl.float16), M: tl.int32, N: tl.int32, ld: tl.int64,
              BLOCK: tl.constexpr, HINT: tl.constexpr = None):
    layout = tl.SwizzledShared(vec=1, per_phase=1, max_phase=1, order=[1, 0])
    desc = tl.make_tensor_descriptor(src, shape=[M, N], strides=[ld, 1],
                                     block_shape=[BLOCK, BLOCK], layout=layout)
    buf = tl.allocate_shared(tl.float16, [BLOCK, BLOCK], layout)
    off = tl.program_id(0) * BLOCK
    tl.async_copy(desc.update(offsets=[off, 0]), buf, warp_used_hint=HINT)
    tl.async_wait(0)


text = copy_tile.build_ir(num_warps=8, BLOCK=64, HINT=0b00001111)
compiled = copy_tile.compile(target="gfx1250", num_warps=8, BLOCK=64)
```

Loops
-----
A traced loop body must run exactly once, so Python's ``for`` cannot express a
device loop with loop-carried values. :func:`for_loop` takes the body as a
function of the induction variable and the carried values, and returns the
final carried values (an ``scf.for``)::

    def body(k, acc):
        ...
        return tl.wmma(a, b, acc)

    acc = tl.for_loop(0, num_k, 1, init=acc, body=body)

``init`` is one value (the body gets and returns one value) or a tuple/list
(the body gets them unpacked and returns a sequence of the same length).
:func:`if_` is the structured conditional (``scf.if``, with optional results)
and :func:`where` the value select. Python ``for`` over ``range`` with
constexpr bounds still works and unrolls at build time.

Scalars
-------
Traced integers support ``+ - * // % & | ^ << >>``, unary ``-`` and the
comparisons; Python ints are materialised as constants of the other operand's
type (one ``arith.constant`` per value and type, hoisted to the kernel entry).
``//`` and ``%`` are ``arith.divsi``/``arith.remsi``: they truncate toward
zero, as in C and Triton. Mixing ``i32`` and ``i64`` sign-extends the ``i32``
side. A traced value has no Python truth value: ``if x < 0:`` raises.

Diagnostics
-----------
Every op carries ``loc("<user file>":<line>:<col>)`` of the call that created
it, so verifier, pass and lowering diagnostics name the kernel's source line.
Authoring errors (wrong rank, illegal ``warp_used_hint``, mismatched layouts,
wrong element types) raise :class:`CompilationError` at build time; its
message starts with ``<file>:<line>: `` and shows the offending line. Each tile
op is verified as soon as it is created and the whole module once more at the
end; verifier diagnostics become the same error.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import linecache
import math
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from gemm_opt import WarpHintError, check_fused_warp_hints, check_warp_used_hint
from gemm_opt.core.ext_compat import arith, cast, func, ir, scf
from gemm_opt.core.targets import TARGETS
from gemm_opt.dialect import make_context, tile

# ---- errors and source positions ---------------------------------------------------


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
class _Pos:
    """A user source position: file, 1-based line and 1-based column."""

    filename: str
    line: int
    col: int

    def location(self) -> ir.Location:
        return ir.Location.file(self.filename, self.line, self.col)

    def error(self, message: str) -> CompilationError:
        return CompilationError(message, self.filename, self.line, self.col)


_THIS_FILES = frozenset({__file__, os.path.abspath(__file__)})


def _user_pos() -> _Pos:
    """The position of the innermost call made from outside this module."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename in _THIS_FILES:
        frame = frame.f_back
    if frame is None:
        return _Pos("<unknown>", 0, 0)
    line, col = frame.f_lineno, 0
    positions = getattr(frame.f_code, "co_positions", None)
    if positions is not None and frame.f_lasti >= 0:
        pos = next(itertools.islice(positions(), frame.f_lasti // 2, None), None)
        if pos is not None and pos[0] is not None:
            line = pos[0]
            col = (pos[2] or 0) + 1
    return _Pos(frame.f_code.co_filename, line or 0, col)


def _def_pos(fn: Callable[..., Any]) -> _Pos:
    """The position of ``def`` of ``fn`` (past its decorators)."""
    code = fn.__code__
    line = code.co_firstlineno
    for offset in range(64):
        text = linecache.getline(code.co_filename, line + offset)
        if not text:
            break
        if re.match(r"\s*(async\s+)?def\s", text):
            line += offset
            return _Pos(code.co_filename, line, len(text) - len(text.lstrip()) + 1)
    return _Pos(code.co_filename, line, 1)


def _fail(message: str) -> CompilationError:
    """A CompilationError at the current user call site."""
    return _user_pos().error(message)


# ---- element types -------------------------------------------------------------------


class dtype:
    """An element or scalar type: ``tl.float16``, ``tl.int32``, ...

    Used as an annotation (``M: tl.int32``), as an argument
    (``tl.zeros(shape, tl.float32, layout)``) and as a constexpr value.
    """

    def __init__(self, name: str, kind: str, bits: int) -> None:
        self.name = name
        self.kind = kind  # "int" | "float"
        self.bits = bits

    def __repr__(self) -> str:
        return f"tl.{self.name}"

    @property
    def is_int(self) -> bool:
        return self.kind == "int"

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    def to_ir(self) -> ir.Type:
        """The MLIR type (needs an active context)."""
        if self.is_int:
            return ir.IntegerType.get_signless(self.bits)
        return {
            "float16": ir.F16Type.get,
            "bfloat16": ir.BF16Type.get,
            "float32": ir.F32Type.get,
        }[self.name]()


int1 = dtype("int1", "int", 1)
int32 = dtype("int32", "int", 32)
int64 = dtype("int64", "int", 64)
float16 = dtype("float16", "float", 16)
bfloat16 = dtype("bfloat16", "float", 16)
float32 = dtype("float32", "float", 32)

_DTYPES = {d.name: d for d in (int1, int32, int64, float16, bfloat16, float32)}
_DTYPES.update(
    {
        "i1": int1,
        "i32": int32,
        "i64": int64,
        "f16": float16,
        "fp16": float16,
        "bf16": bfloat16,
        "f32": float32,
        "fp32": float32,
    }
)


def _as_dtype(value: Any, what: str) -> dtype:
    if isinstance(value, dtype):
        return value
    if isinstance(value, str) and value in _DTYPES:
        return _DTYPES[value]
    raise _fail(f"{what} must be a tl dtype (tl.float16, tl.bfloat16, ...), got {value!r}")


def _dtype_of(t: ir.Type) -> dtype:
    it = cast(t, ir.IntegerType)
    if it is not None:
        return {1: int1, 32: int32, 64: int64}[it.width]
    for cls, d in ((ir.F16Type, float16), (ir.BF16Type, bfloat16), (ir.F32Type, float32)):
        if cast(t, cls) is not None:
            return d
    raise _fail(f"unsupported element type {t}")


class pointer_type:
    """``tl.ptr(elem)``: the annotation of a global-memory pointer argument.

    ``elem`` is a dtype, or the name of a constexpr parameter whose value is
    the dtype (``a: tl.ptr("DTYPE")``), so one kernel serves several types.
    """

    def __init__(self, element: dtype | str) -> None:
        if not isinstance(element, dtype | str):
            raise _fail(f"tl.ptr expects a dtype or a constexpr name, got {element!r}")
        self.element = element

    def __repr__(self) -> str:
        return f"tl.ptr({self.element!r})"


def ptr(element: dtype | str) -> pointer_type:
    """The annotation of a pointer argument: ``a: tl.ptr(tl.float16)``."""
    return pointer_type(element)


class constexpr:
    """Annotation of a compile-time parameter: ``BLOCK_M: tl.constexpr = 128``.

    Its value is given to :meth:`Kernel.build_ir` / :meth:`Kernel.compile` as
    a keyword argument and reaches the kernel body as a plain Python value.
    """


# ---- layouts -----------------------------------------------------------------------------


def _ints(values: Any, what: str) -> tuple[int, ...]:
    try:
        out = tuple(values)
    except TypeError:
        raise _fail(f"{what} must be a sequence of ints, got {values!r}") from None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in out):
        raise _fail(f"{what} must be a sequence of ints, got {values!r}")
    return out


class _Layout:
    """Base of front-end layouts; ``_attr()`` builds the ``#tile.*`` attribute."""

    def _attr(self) -> tile.LayoutAttr:
        raise NotImplementedError


class _SharedLayout(_Layout):
    """Base of shared-memory layouts."""


class _RegisterLayout(_Layout):
    """Base of register layouts."""

    def _check(self, num_warps: int, threads_per_warp: int) -> None:
        """Raise when the layout does not fit the program's warps."""

    def _check_warps(self, warps_per_cta: Sequence[int], num_warps: int) -> None:
        if math.prod(warps_per_cta) != num_warps:
            raise _fail(
                f"{type(self).__name__} warps_per_cta {list(warps_per_cta)} covers "
                f"{math.prod(warps_per_cta)} warps, but the kernel has num_warps = {num_warps}"
            )


@dataclass(frozen=True)
class SwizzledShared(_SharedLayout):
    """XOR-swizzled shared layout; ``vec=1`` (the default) is unswizzled."""

    vec: int = 1
    per_phase: int = 1
    max_phase: int = 1
    order: Sequence[int] = (1, 0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "order", _ints(self.order, "SwizzledShared order"))

    def _attr(self) -> tile.LayoutAttr:
        return tile.SwizzledSharedAttr.build(
            vec=self.vec, per_phase=self.per_phase, max_phase=self.max_phase, order=self.order
        )


@dataclass(frozen=True)
class PaddedShared(_SharedLayout):
    """Row-major shared layout with ``amount`` pad elements every ``interval``."""

    interval: int
    amount: int
    order: Sequence[int] = (1, 0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "order", _ints(self.order, "PaddedShared order"))
        for name in ("interval", "amount"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1 or v & (v - 1):
                raise _fail(f"PaddedShared {name} must be a power of two, got {v!r}")

    def _attr(self) -> tile.LayoutAttr:
        return tile.PaddedSharedAttr.build(
            interval=self.interval, amount=self.amount, order=self.order
        )


@dataclass(frozen=True)
class PartitionedShared(_SharedLayout):
    """A shared layout cut into ``num_partitions * num_groups`` pieces along
    ``partition_dim``, each laid out with ``layout``."""

    num_partitions: int
    num_groups: int
    partition_dim: int
    layout: SwizzledShared | PaddedShared = field(default_factory=SwizzledShared)

    def __post_init__(self) -> None:
        if not isinstance(self.layout, SwizzledShared | PaddedShared):
            raise _fail(
                "PartitionedShared layout must be a SwizzledShared or PaddedShared, "
                f"got {self.layout!r}"
            )
        if self.num_partitions < 1 or self.num_groups < 1:
            raise _fail("PartitionedShared needs at least one partition and one group")

    def _attr(self) -> tile.LayoutAttr:
        return tile.PartitionedSharedAttr.build(
            num_partitions=self.num_partitions,
            num_groups=self.num_groups,
            partition_dim=self.partition_dim,
            layout=self.layout._attr(),
        )


@dataclass(frozen=True)
class WmmaLayout(_RegisterLayout):
    """Accumulator layout of WMMA (gfx1250; MFMA on gfx950/gfx942).

    ``warps_per_cta`` is ``[WM, WN]`` with ``WM * WN == num_warps``.
    """

    version: int = 3
    warps_per_cta: Sequence[int] = ()
    instr_shape: Sequence[int] = (16, 16, 32)
    transposed: bool = True

    def __post_init__(self) -> None:
        w = _ints(self.warps_per_cta, "WmmaLayout warps_per_cta")
        if len(w) != 2:
            raise _fail(f"WmmaLayout warps_per_cta must be [WM, WN], got {list(w)}")
        s = _ints(self.instr_shape, "WmmaLayout instr_shape")
        if len(s) != 3:
            raise _fail(f"WmmaLayout instr_shape must be [M, N, K], got {list(s)}")
        object.__setattr__(self, "warps_per_cta", w)
        object.__setattr__(self, "instr_shape", s)

    def _attr(self) -> tile.LayoutAttr:
        return tile.WmmaAttr.build(
            version=self.version,
            warps_per_cta=self.warps_per_cta,
            instr_shape=self.instr_shape,
            transposed=self.transposed,
        )

    def _check(self, num_warps: int, threads_per_warp: int) -> None:
        self._check_warps(self.warps_per_cta, num_warps)


@dataclass(frozen=True)
class DotOperand(_RegisterLayout):
    """Layout of WMMA operand A (``op_idx=0``) or B (``op_idx=1``) for the
    accumulator layout ``parent``; ``k_width`` K elements per thread."""

    op_idx: int
    parent: WmmaLayout
    k_width: int

    def __post_init__(self) -> None:
        if self.op_idx not in (0, 1):
            raise _fail(f"DotOperand op_idx must be 0 (A) or 1 (B), got {self.op_idx!r}")
        if not isinstance(self.parent, WmmaLayout):
            raise _fail(f"DotOperand parent must be a WmmaLayout, got {self.parent!r}")

    def _attr(self) -> tile.LayoutAttr:
        return tile.DotOperandAttr.build(
            op_idx=self.op_idx, parent=self.parent._attr(), k_width=self.k_width
        )

    def _check(self, num_warps: int, threads_per_warp: int) -> None:
        self.parent._check(num_warps, threads_per_warp)


@dataclass(frozen=True)
class Blocked(_RegisterLayout):
    """Blocked register layout: per thread, per warp and per CTA tiling."""

    size_per_thread: Sequence[int]
    threads_per_warp: Sequence[int]
    warps_per_cta: Sequence[int]
    order: Sequence[int]

    def __post_init__(self) -> None:
        for name in ("size_per_thread", "threads_per_warp", "warps_per_cta", "order"):
            object.__setattr__(self, name, _ints(getattr(self, name), f"Blocked {name}"))
        ranks = {len(self.size_per_thread), len(self.threads_per_warp)}
        ranks |= {len(self.warps_per_cta), len(self.order)}
        if len(ranks) != 1:
            raise _fail("Blocked fields must all have the same rank")

    def _attr(self) -> tile.LayoutAttr:
        return tile.BlockedAttr.build(
            size_per_thread=self.size_per_thread,
            threads_per_warp=self.threads_per_warp,
            warps_per_cta=self.warps_per_cta,
            order=self.order,
        )

    def _check(self, num_warps: int, threads_per_warp: int) -> None:
        if math.prod(self.threads_per_warp) != threads_per_warp:
            raise _fail(
                f"Blocked threads_per_warp {list(self.threads_per_warp)} covers "
                f"{math.prod(self.threads_per_warp)} threads, but a warp has "
                f"{threads_per_warp} on this target"
            )
        self._check_warps(self.warps_per_cta, num_warps)


# ---- traced values ----------------------------------------------------------------------


class _Value:
    """Base of traced values: an MLIR value plus its element type."""

    def __init__(self, handle: ir.Value, dtype_: dtype) -> None:
        self.handle = handle
        self.dtype = dtype_

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.dtype!r})"

    def _with(self, handle: ir.Value) -> Any:
        """The same kind of value, with the same metadata, for ``handle``."""
        return type(self)(handle, self.dtype)

    def __bool__(self) -> bool:
        raise _fail(
            f"a traced {type(self).__name__.lower()} has no Python truth value at build "
            "time; use tl.if_ / tl.where for device decisions, or a constexpr"
        )


_INT_BINOPS = {
    "add": arith.addi,
    "sub": arith.subi,
    "mul": arith.muli,
    "floordiv": arith.divsi,
    "mod": arith.remsi,
    "and": arith.andi,
    "or": arith.ori,
    "xor": arith.xori,
    "lshift": arith.shli,
    "rshift": arith.shrsi,
}
_FLOAT_BINOPS = {
    "add": arith.addf,
    "sub": arith.subf,
    "mul": arith.mulf,
    "truediv": arith.divf,
    "mod": arith.remf,
}
_CMP = {
    "lt": ("slt", "OLT"),
    "le": ("sle", "OLE"),
    "gt": ("sgt", "OGT"),
    "ge": ("sge", "OGE"),
    "eq": ("eq", "OEQ"),
    "ne": ("ne", "ONE"),
}
_SYMBOL = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "floordiv": "//",
    "truediv": "/",
    "mod": "%",
    "and": "&",
    "or": "|",
    "xor": "^",
    "lshift": "<<",
    "rshift": ">>",
}


class Scalar(_Value):
    """A traced scalar (``i1``, ``i32``, ``i64``, ``f32``, ...)."""

    def to(self, dtype_: dtype) -> Scalar:
        """Convert: sign-extend/truncate integers, ``sitofp``/``fptosi``, ``extf``/``truncf``."""
        dst = _as_dtype(dtype_, "to()")
        src = self.dtype
        if dst is src:
            return self
        b = _builder()
        loc, t = b.loc(), dst.to_ir()
        if src.is_int and dst.is_int:
            fn = arith.extsi if dst.bits > src.bits else arith.trunci
        elif src.is_int:
            fn = arith.sitofp
        elif dst.is_int:
            fn = arith.fptosi
        else:
            fn = arith.extf if dst.bits > src.bits else arith.truncf
        return Scalar(fn(t, self.handle, loc=loc), dst)

    # -- operators --

    def _binary(self, name: str, other: Any, reverse: bool = False) -> Scalar:
        lhs, rhs = _promote(self, other, _SYMBOL.get(name, name))
        if reverse:
            lhs, rhs = rhs, lhs
        d = lhs.dtype
        table = _INT_BINOPS if d.is_int else _FLOAT_BINOPS
        if name not in table:
            hint = " (use // for integer division)" if name == "truediv" else ""
            raise _fail(f"operator {_SYMBOL[name]} is not defined on {d!r}{hint}")
        return Scalar(table[name](lhs.handle, rhs.handle, loc=_builder().loc()), d)

    def _compare(self, name: str, other: Any) -> Scalar:
        lhs, rhs = _promote(self, other, name)
        ipred, fpred = _CMP[name]
        loc = _builder().loc()
        if lhs.dtype.is_int:
            pred = getattr(arith.CmpIPredicate, ipred)
            res = arith.cmpi(pred, lhs.handle, rhs.handle, loc=loc)
        else:
            pred = getattr(arith.CmpFPredicate, fpred)
            res = arith.cmpf(pred, lhs.handle, rhs.handle, loc=loc)
        return Scalar(res, int1)

    def __add__(self, o: Any) -> Scalar:
        return self._binary("add", o)

    def __radd__(self, o: Any) -> Scalar:
        return self._binary("add", o, True)

    def __sub__(self, o: Any) -> Scalar:
        return self._binary("sub", o)

    def __rsub__(self, o: Any) -> Scalar:
        return self._binary("sub", o, True)

    def __mul__(self, o: Any) -> Scalar:
        return self._binary("mul", o)

    def __rmul__(self, o: Any) -> Scalar:
        return self._binary("mul", o, True)

    def __floordiv__(self, o: Any) -> Scalar:
        return self._binary("floordiv", o)

    def __rfloordiv__(self, o: Any) -> Scalar:
        return self._binary("floordiv", o, True)

    def __truediv__(self, o: Any) -> Scalar:
        return self._binary("truediv", o)

    def __rtruediv__(self, o: Any) -> Scalar:
        return self._binary("truediv", o, True)

    def __mod__(self, o: Any) -> Scalar:
        return self._binary("mod", o)

    def __rmod__(self, o: Any) -> Scalar:
        return self._binary("mod", o, True)

    def __and__(self, o: Any) -> Scalar:
        return self._binary("and", o)

    def __rand__(self, o: Any) -> Scalar:
        return self._binary("and", o, True)

    def __or__(self, o: Any) -> Scalar:
        return self._binary("or", o)

    def __ror__(self, o: Any) -> Scalar:
        return self._binary("or", o, True)

    def __xor__(self, o: Any) -> Scalar:
        return self._binary("xor", o)

    def __rxor__(self, o: Any) -> Scalar:
        return self._binary("xor", o, True)

    def __lshift__(self, o: Any) -> Scalar:
        return self._binary("lshift", o)

    def __rlshift__(self, o: Any) -> Scalar:
        return self._binary("lshift", o, True)

    def __rshift__(self, o: Any) -> Scalar:
        return self._binary("rshift", o)

    def __rrshift__(self, o: Any) -> Scalar:
        return self._binary("rshift", o, True)

    def __neg__(self) -> Scalar:
        if self.dtype.is_float:
            return Scalar(arith.negf(self.handle, loc=_builder().loc()), self.dtype)
        return self._binary("sub", 0, True)

    def __lt__(self, o: Any) -> Scalar:
        return self._compare("lt", o)

    def __le__(self, o: Any) -> Scalar:
        return self._compare("le", o)

    def __gt__(self, o: Any) -> Scalar:
        return self._compare("gt", o)

    def __ge__(self, o: Any) -> Scalar:
        return self._compare("ge", o)

    def __eq__(self, o: Any) -> Scalar:  # type: ignore[override]
        return self._compare("eq", o)

    def __ne__(self, o: Any) -> Scalar:  # type: ignore[override]
        return self._compare("ne", o)

    __hash__ = None  # type: ignore[assignment]


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _promote(lhs: Scalar, rhs: Any, what: str) -> tuple[Scalar, Scalar]:
    """Bring two operands to one type (Python numbers take the scalar's type)."""
    if isinstance(rhs, bool):
        rhs = _builder().constant(rhs, lhs.dtype if lhs.dtype is int1 else int1)
    elif _is_number(rhs):
        if isinstance(rhs, float) and lhs.dtype.is_int:
            raise _fail(f"cannot mix the {lhs.dtype!r} value with the float {rhs!r} in {what}")
        rhs = _builder().constant(rhs, lhs.dtype)
    elif not isinstance(rhs, Scalar):
        raise _fail(f"unsupported operand for {what}: {lhs!r} and {rhs!r}")
    a, b = lhs.dtype, rhs.dtype
    if a is b:
        return lhs, rhs
    if a.is_int and b.is_int and a.bits > 1 and b.bits > 1:
        return (lhs, rhs.to(a)) if a.bits > b.bits else (lhs.to(b), rhs)
    raise _fail(f"operands of {what} have different types: {a!r} and {b!r}")


class Pointer(_Value):
    """A traced global-memory pointer argument."""


class _Block(_Value):
    """Base of traced values with a block shape and a layout."""

    def __init__(
        self, handle: ir.Value, shape: tuple[int, ...], dtype_: dtype, layout: _Layout
    ) -> None:
        super().__init__(handle, dtype_)
        self.shape = shape
        self.layout = layout

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self.shape)}, {self.dtype!r}, {self.layout!r})"

    def _with(self, handle: ir.Value) -> Any:
        return type(self)(handle, self.shape, self.dtype, self.layout)

    def _tensor_type(self) -> ir.RankedTensorType:
        return _tensor_type(self.shape, self.dtype, self.layout)


class Tensor(_Block):
    """A traced register tensor with a shape, element type and register layout."""

    layout: _RegisterLayout

    def to(self, dtype_: dtype) -> Tensor:
        """Convert the element type (``truncf``/``extf``); same shape and layout."""
        dst = _as_dtype(dtype_, "to()")
        if dst is self.dtype:
            return self
        if not (dst.is_float and self.dtype.is_float):
            raise _fail(f"tensor.to() converts between float types, not {self.dtype!r} -> {dst!r}")
        if dst.bits == self.dtype.bits:
            raise _fail(f"tensor.to() cannot convert {self.dtype!r} to {dst!r} directly")
        b = _builder()
        t = _tensor_type(self.shape, dst, self.layout)
        fn = arith.extf if dst.bits > self.dtype.bits else arith.truncf
        return Tensor(fn(t, self.handle, loc=b.loc()), self.shape, dst, self.layout)

    def _elementwise(self, name: str, other: Any, reverse: bool = False) -> Tensor:
        if _is_number(other):
            other = full(self.shape, other, self.dtype, self.layout)
        if not isinstance(other, Tensor) or other.handle.type != self.handle.type:
            raise _fail(
                f"operator {_SYMBOL[name]} needs two tensors of the same shape, type and "
                f"layout: {self!r} and {other!r}"
            )
        if not self.dtype.is_float:
            raise _fail(f"tensor arithmetic is defined on float tensors, not {self.dtype!r}")
        lhs, rhs = (other, self) if reverse else (self, other)
        return self._with(_FLOAT_BINOPS[name](lhs.handle, rhs.handle, loc=_builder().loc()))

    def __add__(self, o: Any) -> Tensor:
        return self._elementwise("add", o)

    def __radd__(self, o: Any) -> Tensor:
        return self._elementwise("add", o, True)

    def __sub__(self, o: Any) -> Tensor:
        return self._elementwise("sub", o)

    def __rsub__(self, o: Any) -> Tensor:
        return self._elementwise("sub", o, True)

    def __mul__(self, o: Any) -> Tensor:
        return self._elementwise("mul", o)

    def __rmul__(self, o: Any) -> Tensor:
        return self._elementwise("mul", o, True)


class TensorDescriptor(_Block):
    """A traced TDM descriptor: a global tensor and the block one copy moves.

    ``shape`` (also ``block_shape``) is the block's shape.
    """

    layout: _SharedLayout

    @property
    def block_shape(self) -> tuple[int, ...]:
        return self.shape

    @property
    def rank(self) -> int:
        return len(self.shape)

    def update(
        self,
        offsets: Sequence[Any] | None = None,
        bounds: Sequence[Any] | None = None,
        pred: Any = None,
    ) -> TensorDescriptor:
        """A descriptor whose block is moved by ``offsets`` (one i32 per dim).

        ``bounds`` (one i32 per dim) replaces the extent that out-of-bounds
        elements are judged against; ``pred`` (i1 or a Python bool) false makes
        every copy through the result a no-op.
        """
        b = _builder()
        rank = self.rank
        offsets = [0] * rank if offsets is None else list(offsets)
        bounds = [] if bounds is None else list(bounds)
        for name, vals, allowed in (("offsets", offsets, (rank,)), ("bounds", bounds, (0, rank))):
            if len(vals) not in allowed:
                raise _fail(
                    f"update expects {rank} {name} for the rank-{rank} descriptor "
                    f"(block {list(self.shape)}), got {len(vals)}"
                )
        off = [b.int_operand(v, int32, "offset") for v in offsets]
        bnd = [b.int_operand(v, int32, "bound") for v in bounds]
        p = b.pred_operand(pred)
        op = tile.UpdateTensorDescriptorOp(
            self.handle, off, bnd, self.handle.type, pred=p, loc=b.loc()
        )
        return self._with(b.checked(op).result)


class SharedBuffer(_Block):
    """A traced shared-memory buffer (``!tile.shared``)."""

    layout: _SharedLayout

    def index(self, i: Any) -> SharedBuffer:
        """Buffer ``i`` of a multi-buffered allocation (drops the leading dim)."""
        if len(self.shape) < 2:
            raise _fail(f"index needs a buffer of rank 2 or more, got shape {list(self.shape)}")
        b = _builder()
        sub = SharedBuffer(self.handle, self.shape[1:], self.dtype, self.layout)
        idx = b.int_operand(i, int32, "buffer index")
        op = tile.MemdescIndexOp(self.handle, idx, _shared_type(sub), loc=b.loc())
        return sub._with(b.checked(op).result)

    def load(self, layout: _RegisterLayout) -> Tensor:
        """``tl.local_load(self, layout)``."""
        return local_load(self, layout)


# ---- IR types ------------------------------------------------------------------------------


def _tensor_type(shape: Sequence[int], dtype_: dtype, layout: _Layout) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), dtype_.to_ir(), layout._attr())


def _desc_type(d: TensorDescriptor) -> ir.Type:
    return tile.TensorDescType.get(ir.TypeAttr.get(d._tensor_type()))


def _shared_type(s: SharedBuffer) -> ir.Type:
    return tile.SharedType.get(ir.TypeAttr.get(s._tensor_type()))


def _i32_attr(value: int) -> ir.Attribute:
    value &= 0xFFFFFFFF
    if value >= 1 << 31:
        value -= 1 << 32
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), value)


# ---- the trace -----------------------------------------------------------------------------


_LOC_RE = re.compile(r'loc\("((?:[^"\\]|\\.)*)":(\d+):(\d+)')


def _diag_where(location: Any) -> tuple[str, int, int]:
    """(file, line, col) of a diagnostic location; ("", 0, 0) when unknown."""
    try:
        return str(location.filename), int(location.start_line), int(location.start_col)
    except (AttributeError, TypeError, ValueError, RuntimeError):
        pass
    m = _LOC_RE.search(str(location))
    return (m.group(1), int(m.group(2)), int(m.group(3))) if m else ("", 0, 0)


class _Builder:
    """The state of one kernel trace: context, module, function, constants."""

    def __init__(self, ctx: ir.Context, num_warps: int, target: str) -> None:
        self.ctx = ctx
        self.num_warps = num_warps
        self.target = target
        self.threads_per_warp = TARGETS[target].warp_size
        self.diagnostics: list[tuple[str, int, int, str, str]] = []
        self.module: ir.Module | None = None
        self.entry: ir.Block | None = None
        self._constants: dict[tuple[str, Any], ir.Value] = {}
        self._last_constant: ir.Operation | None = None

    # -- positions and diagnostics --

    def loc(self) -> ir.Location:
        return _user_pos().location()

    def on_diagnostic(self, d: Any) -> bool:
        where = _diag_where(d.location)
        sev = str(d.severity).rsplit(".", 1)[-1].lower()
        self.diagnostics.append((*where, sev, str(d.message)))
        for n in d.notes:
            self.diagnostics.append((*_diag_where(n.location), "note", str(n.message)))
        return True

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
            return _fail("the IR failed to verify (no diagnostic was reported)")
        filename, line, col, _, message = errors[0]
        # The op dump the verifier appends repeats the IR; .diagnostics keeps it.
        notes = [
            f"{f or '<unknown>'}:{ln}:{c}: {sev}: {msg}"
            for f, ln, c, sev, msg in diags
            if (f, ln, c, sev, msg) != errors[0] and not msg.startswith("see current operation")
        ]
        return CompilationError(
            message, filename or None, line, col, diagnostics=diags, notes=notes
        )

    def checked(self, op: Any) -> Any:
        """Verify a freshly built tile op and return it."""
        self.verify(op.operation)
        return op

    # -- operands --

    def constant(self, value: int | float | bool, dtype_: dtype) -> Scalar:
        """One hoisted ``arith.constant`` per (value, type)."""
        if dtype_.is_int:
            if isinstance(value, float):
                raise _fail(f"the float {value!r} cannot be a {dtype_!r} constant")
            value = int(value)
            lo = 0 if dtype_.bits == 1 else -(1 << (dtype_.bits - 1))
            hi = 1 if dtype_.bits == 1 else (1 << dtype_.bits) - 1
            if not lo <= value <= hi:
                raise _fail(f"the constant {value} does not fit {dtype_!r}")
            if dtype_.bits > 1 and value >= 1 << (dtype_.bits - 1):
                value -= 1 << dtype_.bits
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
        return Scalar(self._constants[key], dtype_)

    def int_operand(self, v: Any, want: dtype, what: str) -> ir.Value:
        """An ``i32``/``i64`` operand from a Python int or a traced integer.

        ``i32`` values widen to ``i64`` where ``i64`` is wanted; nothing narrows.
        """
        if isinstance(v, int) and not isinstance(v, bool):
            return self.constant(v, want).handle
        if isinstance(v, Scalar) and v.dtype.is_int and v.dtype.bits > 1:
            if v.dtype is want:
                return v.handle
            if v.dtype.bits < want.bits:
                return v.to(want).handle
        got = v.dtype if isinstance(v, Scalar) else v
        raise _fail(f"{what} must be a Python int or a traced {want!r}, got {got!r}")

    def pred_operand(self, pred: Any) -> ir.Value | None:
        """``None`` for no predicate; i1 for a Python bool or a traced i1."""
        if pred is None or pred is True:
            return None
        if pred is False:
            return self.constant(False, int1).handle
        if isinstance(pred, Scalar) and pred.dtype is int1:
            return pred.handle
        raise _fail(f"pred must be a bool or a traced i1 (a comparison), got {pred!r}")

    def register_layout(self, layout: Any, what: str) -> _RegisterLayout:
        if not isinstance(layout, _RegisterLayout):
            raise _fail(
                f"{what} must be a register layout (tl.WmmaLayout, tl.DotOperand, "
                f"tl.Blocked), got {layout!r}"
            )
        layout._check(self.num_warps, self.threads_per_warp)
        return layout


_STATE = threading.local()


def _builder() -> _Builder:
    stack = getattr(_STATE, "stack", None)
    if not stack:
        raise _fail("tl functions can only be called while a @tl.kernel is being built")
    return stack[-1]


@contextmanager
def _tracing(b: _Builder) -> Iterator[_Builder]:
    stack = getattr(_STATE, "stack", None)
    if stack is None:
        stack = _STATE.stack = []
    stack.append(b)
    try:
        yield b
    finally:
        stack.pop()


# ---- program ids ------------------------------------------------------------------------


def program_id(axis: int) -> Scalar:
    """The program (workgroup) id along ``axis`` 0, 1 or 2 (``i32``)."""
    if axis not in (0, 1, 2) or isinstance(axis, bool):
        raise _fail(f"program_id axis must be 0, 1 or 2, got {axis!r}")
    b = _builder()
    op = tile.ProgramIdOp(loc=b.loc())
    op.operation.attributes["axis"] = _i32_attr(axis)
    return Scalar(b.checked(op).result, int32)


def warp_id() -> Scalar:
    """The calling warp's id within the program (``i32``)."""
    b = _builder()
    return Scalar(b.checked(tile.WarpIdOp(loc=b.loc())).result, int32)


def num_warps() -> int:
    """The kernel's ``num_warps`` (a Python int at build time)."""
    return _builder().num_warps


def target() -> str:
    """The target being built for (``"gfx1250"``, ...)."""
    return _builder().target


# ---- descriptors and shared memory -----------------------------------------------------------


def _block_shape(shape: Any, what: str) -> tuple[int, ...]:
    dims = _ints(shape, what)
    if not dims or any(d < 1 for d in dims):
        raise _fail(f"{what} must be positive constexpr ints, got {list(dims)}")
    return dims


def _shared_layout(layout: Any, what: str) -> _SharedLayout:
    if not isinstance(layout, _SharedLayout):
        raise _fail(
            f"{what} must be a shared layout (tl.SwizzledShared, tl.PaddedShared, "
            f"tl.PartitionedShared), got {layout!r}"
        )
    return layout


def make_tensor_descriptor(
    base: Pointer,
    shape: Sequence[Any],
    strides: Sequence[Any],
    block_shape: Sequence[int],
    layout: _SharedLayout,
) -> TensorDescriptor:
    """Describe the global tensor at ``base`` for TDM copies of ``block_shape``.

    ``shape`` entries are i32 (Python ints or traced), ``strides`` i64 (i32
    values are sign-extended); ``block_shape`` is constexpr; ``layout`` is the
    shared layout the block takes in LDS. The block starts at the origin; move
    it with :meth:`TensorDescriptor.update`.
    """
    if not isinstance(base, Pointer):
        raise _fail(f"make_tensor_descriptor base must be a pointer argument, got {base!r}")
    block = _block_shape(block_shape, "block_shape")
    layout = _shared_layout(layout, "make_tensor_descriptor layout")
    rank = len(block)
    if not 1 <= rank <= 5:
        raise _fail(f"TDM blocks have rank 1 to 5, got block_shape {list(block)}")
    shape, strides = list(shape), list(strides)
    if len(shape) != rank or len(strides) != rank:
        raise _fail(
            f"make_tensor_descriptor expects {rank} shape and {rank} stride entries for "
            f"block_shape {list(block)}, got {len(shape)} and {len(strides)}"
        )
    b = _builder()
    dims = [b.int_operand(v, int32, "shape entry") for v in shape]
    strd = [b.int_operand(v, int64, "stride") for v in strides]
    desc = TensorDescriptor(base.handle, block, base.dtype, layout)
    op = tile.MakeTensorDescriptorOp(base.handle, dims, strd, _desc_type(desc), loc=b.loc())
    return desc._with(b.checked(op).result)


def allocate_shared(dtype_: dtype, shape: Sequence[int], layout: _SharedLayout) -> SharedBuffer:
    """Allocate a shared-memory buffer of ``shape`` (constexpr) for the program.

    A leading extra dim makes a multi-buffer; select one with ``buf.index(i)``.
    """
    d = _as_dtype(dtype_, "allocate_shared dtype")
    dims = _block_shape(shape, "allocate_shared shape")
    layout = _shared_layout(layout, "allocate_shared layout")
    b = _builder()
    buf = SharedBuffer(None, dims, d, layout)  # type: ignore[arg-type]
    op = tile.LocalAllocOp(_shared_type(buf), loc=b.loc())
    return buf._with(b.checked(op).result)


def _check_copy_pair(desc: Any, buf: Any, what: str) -> tuple[TensorDescriptor, SharedBuffer]:
    if not isinstance(desc, TensorDescriptor):
        raise _fail(f"{what} source must be a tensor descriptor, got {desc!r}")
    if not isinstance(buf, SharedBuffer):
        raise _fail(f"{what} destination must be a shared buffer, got {buf!r}")
    if desc.block_shape != buf.shape:
        raise _fail(
            f"{what}: destination shape {list(buf.shape)} does not match the "
            f"descriptor block {list(desc.block_shape)}"
            + (" (index a multi-buffer with buf.index(i))" if len(buf.shape) > desc.rank else "")
        )
    if desc.dtype is not buf.dtype:
        raise _fail(
            f"{what}: destination element type {buf.dtype!r} does not match the "
            f"descriptor's {desc.dtype!r}"
        )
    if desc.layout != buf.layout:
        raise _fail(
            f"{what}: destination layout {buf.layout!r} does not match the "
            f"descriptor's {desc.layout!r}"
        )
    return desc, buf


def _check_cache(cache: Any) -> str:
    if cache not in tile.CACHE_MODIFIERS:
        raise _fail(f"cache must be one of {tile.CACHE_MODIFIERS}, got {cache!r}")
    return cache


def async_copy(
    desc: TensorDescriptor,
    buf: SharedBuffer,
    warp_used_hint: int | None = None,
    pred: Any = None,
    cache: str = "",
) -> None:
    """Asynchronously copy the descriptor's block into ``buf`` with TDM.

    ``warp_used_hint`` (bit n = warp n) restricts the copy to the selected
    warps; ``None`` lets every warp take part. The hint is checked against
    the warp-hint rule right away, with the nearest legal hints in the error.
    ``pred`` false skips the copy. Wait for it with :func:`async_wait`.
    """
    desc, buf = _check_copy_pair(desc, buf, "async_copy")
    b = _builder()
    if warp_used_hint is not None:
        layout = desc.layout._attr().to_layout()
        try:
            check_warp_used_hint(warp_used_hint, b.num_warps, desc.block_shape, layout)
        except (WarpHintError, TypeError, ValueError) as e:
            raise _fail(f"async_copy: {e}") from None
    cache = _check_cache(cache)
    p = b.pred_operand(pred)
    op = tile.AsyncTDMCopyGlobalToLocalOp(desc.handle, buf.handle, pred=p, loc=b.loc())
    attrs = op.operation.attributes
    if warp_used_hint is not None:
        attrs["warp_used_hint"] = _i32_attr(warp_used_hint)
    if cache:
        attrs["cache"] = ir.StringAttr.get(cache)
    b.checked(op)


def async_copy_fused(
    members: Sequence[tuple[TensorDescriptor, SharedBuffer, int]], cache: str = ""
) -> None:
    """Issue 2 to 4 hinted TDM copies as one instruction.

    ``members`` are ``(desc, buf, warp_used_hint)``; the hints must be legal
    and pairwise disjoint. The fused copy counts as one copy for
    :func:`async_wait`.
    """
    members = list(members)
    if not 2 <= len(members) <= 4:
        raise _fail(f"async_copy_fused takes 2 to 4 members, got {len(members)}")
    pairs, hints = [], []
    for i, m in enumerate(members):
        if not isinstance(m, tuple | list) or len(m) != 3:
            raise _fail(f"async_copy_fused member {i} must be (desc, buf, warp_used_hint)")
        pairs.append(_check_copy_pair(m[0], m[1], f"async_copy_fused member {i}"))
        hints.append(m[2])
    b = _builder()
    try:
        check_fused_warp_hints(
            hints,
            b.num_warps,
            [d.block_shape for d, _ in pairs],
            [d.layout._attr().to_layout() for d, _ in pairs],
        )
    except (WarpHintError, TypeError, ValueError) as e:
        raise _fail(f"async_copy_fused: {e}") from None
    cache = _check_cache(cache)
    kwargs = {}
    for i, (d, s) in enumerate(pairs):
        kwargs[f"desc{i}"] = d.handle
        kwargs[f"dest{i}"] = s.handle
    op = tile.AsyncTDMFusedCopyGlobalToLocalOp(**kwargs, loc=b.loc())
    attrs = op.operation.attributes
    signed = [ir.IntegerAttr(_i32_attr(h)).value for h in hints]
    attrs["warp_used_hints"] = ir.DenseI32ArrayAttr.get(signed)
    if cache:
        attrs["cache"] = ir.StringAttr.get(cache)
    b.checked(op)


def async_wait(num: int = 0) -> None:
    """Wait until at most ``num`` TDM copies of this warp are in flight."""
    if not isinstance(num, int) or isinstance(num, bool) or num < 0:
        raise _fail(f"async_wait num must be a non-negative constexpr int, got {num!r}")
    b = _builder()
    op = tile.AsyncTDMWaitOp(loc=b.loc())
    op.operation.attributes["num"] = _i32_attr(num)
    b.checked(op)


def local_load(buf: SharedBuffer, layout: _RegisterLayout) -> Tensor:
    """Read a shared buffer into a register tensor of ``layout``."""
    if not isinstance(buf, SharedBuffer):
        raise _fail(f"local_load expects a shared buffer, got {buf!r}")
    b = _builder()
    layout = b.register_layout(layout, "local_load layout")
    t = _tensor_type(buf.shape, buf.dtype, layout)
    op = tile.LocalLoadOp(buf.handle, t, loc=b.loc())
    return Tensor(b.checked(op).result, buf.shape, buf.dtype, layout)


# ---- compute --------------------------------------------------------------------------------


def wmma(a: Tensor, b: Tensor, acc: Tensor) -> Tensor:
    """``a @ b + acc`` on matrix cores: f16/bf16 A (MxK) and B (KxN), f32 acc (MxN).

    A and B need ``DotOperand(0, L, ...)`` and ``DotOperand(1, L, ...)``
    layouts whose parent ``L`` is the accumulator's ``WmmaLayout``.
    """
    for name, v in (("a", a), ("b", b), ("acc", acc)):
        if not isinstance(v, Tensor) or len(v.shape) != 2:
            raise _fail(f"wmma {name} must be a 2-D tensor, got {v!r}")
    if not isinstance(acc.layout, WmmaLayout):
        raise _fail(f"wmma acc must have a tl.WmmaLayout layout, got {acc.layout!r}")
    for idx, (name, v) in enumerate((("a", a), ("b", b))):
        lay = v.layout
        if not isinstance(lay, DotOperand) or lay.op_idx != idx:
            raise _fail(
                f"wmma {name} must have a tl.DotOperand(op_idx={idx}, ...) layout, got {lay!r}"
            )
        if lay.parent != acc.layout:
            raise _fail(
                f"wmma layouts do not match: {name}'s DotOperand parent {lay.parent!r} "
                f"is not acc's layout {acc.layout!r}"
            )
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2 or acc.shape != (m, n):
        raise _fail(
            f"wmma shapes do not match: a is {m}x{k}, b is {k2}x{n}, acc is "
            f"{acc.shape[0]}x{acc.shape[1]} (want a MxK, b KxN, acc MxN)"
        )
    if a.dtype not in (float16, bfloat16) or a.dtype is not b.dtype:
        raise _fail(
            f"wmma a and b must be both float16 or both bfloat16, got {a.dtype!r} and {b.dtype!r}"
        )
    if acc.dtype is not float32:
        raise _fail(f"wmma acc must be float32, got {acc.dtype!r}")
    bld = _builder()
    op = tile.WmmaOp(a.handle, b.handle, acc.handle, acc.handle.type, loc=bld.loc())
    return acc._with(bld.checked(op).result)


def full(
    shape: Sequence[int], value: int | float, dtype_: dtype, layout: _RegisterLayout
) -> Tensor:
    """A register tensor of ``shape`` filled with ``value`` (an ``arith.constant``)."""
    d = _as_dtype(dtype_, "full dtype")
    dims = _block_shape(shape, "full shape")
    b = _builder()
    layout = b.register_layout(layout, "full layout")
    t = _tensor_type(dims, d, layout)
    elem = d.to_ir()
    if d.is_float:
        scalar = ir.FloatAttr.get(elem, float(value))
    else:
        scalar = ir.IntegerAttr.get(elem, int(value))
    attr = ir.DenseElementsAttr.get_splat(t, scalar)
    return Tensor(arith.ConstantOp(t, attr, loc=b.loc()).result, dims, d, layout)


def zeros(shape: Sequence[int], dtype_: dtype, layout: _RegisterLayout) -> Tensor:
    """A zero register tensor of ``shape``, ``dtype`` and ``layout``."""
    return full(shape, 0, dtype_, layout)


def convert_layout(x: Tensor, layout: _RegisterLayout) -> Tensor:
    """Move a register tensor to another layout (same shape and element type)."""
    if not isinstance(x, Tensor):
        raise _fail(f"convert_layout expects a tensor, got {x!r}")
    b = _builder()
    layout = b.register_layout(layout, "convert_layout layout")
    t = _tensor_type(x.shape, x.dtype, layout)
    op = tile.ConvertLayoutOp(x.handle, t, loc=b.loc())
    return Tensor(b.checked(op).result, x.shape, x.dtype, layout)


def _block_access(
    what: str,
    base: Any,
    shape: Sequence[Any],
    strides: Sequence[Any],
    offsets: Sequence[Any],
    rank: int,
) -> tuple[list[ir.Value], list[ir.Value], list[ir.Value]]:
    if not isinstance(base, Pointer):
        raise _fail(f"{what} base must be a pointer argument, got {base!r}")
    shape, strides, offsets = list(shape), list(strides), list(offsets)
    for name, vals in (("shape", shape), ("strides", strides), ("offsets", offsets)):
        if len(vals) != rank:
            raise _fail(f"{what} expects {rank} {name} for a rank-{rank} block, got {len(vals)}")
    b = _builder()
    return (
        [b.int_operand(v, int32, "shape entry") for v in shape],
        [b.int_operand(v, int64, "stride") for v in strides],
        [b.int_operand(v, int32, "offset") for v in offsets],
    )


def store_block(
    base: Pointer,
    shape: Sequence[Any],
    strides: Sequence[Any],
    offsets: Sequence[Any],
    value: Tensor,
) -> None:
    """Masked store of ``value`` at ``offsets`` of the global tensor at ``base``.

    Elements outside ``shape`` (ragged edges) are not written.
    """
    if not isinstance(value, Tensor):
        raise _fail(f"store_block value must be a tensor, got {value!r}")
    dims, strd, offs = _block_access("store_block", base, shape, strides, offsets, len(value.shape))
    if base.dtype is not value.dtype:
        raise _fail(
            f"store_block: base points to {base.dtype!r} but the value holds {value.dtype!r} "
            "(convert with value.to(...))"
        )
    b = _builder()
    op = tile.StoreBlockOp(base.handle, dims, strd, offs, value.handle, loc=b.loc())
    b.checked(op)


def load_block(
    base: Pointer,
    shape: Sequence[Any],
    strides: Sequence[Any],
    offsets: Sequence[Any],
    block_shape: Sequence[int],
    layout: _RegisterLayout,
) -> Tensor:
    """Masked load of a ``block_shape`` block at ``offsets`` into registers
    (zero outside ``shape``)."""
    block = _block_shape(block_shape, "load_block block_shape")
    dims, strd, offs = _block_access("load_block", base, shape, strides, offsets, len(block))
    b = _builder()
    layout = b.register_layout(layout, "load_block layout")
    t = _tensor_type(block, base.dtype, layout)
    op = tile.LoadBlockOp(base.handle, dims, strd, offs, t, loc=b.loc())
    return Tensor(b.checked(op).result, block, base.dtype, layout)


# ---- control flow -----------------------------------------------------------------------------


def _as_carried(v: Any, what: str) -> _Value:
    if isinstance(v, _Value):
        return v
    if isinstance(v, bool):
        return _builder().constant(v, int1)
    if isinstance(v, int):
        return _builder().constant(v, int32)
    if isinstance(v, float):
        return _builder().constant(v, float32)
    raise _fail(f"{what} must be a traced value or a Python number, got {v!r}")


def _results(out: Any, n: int, single: bool, what: str, pos: _Pos) -> list[Any]:
    if n == 0:
        if out is not None and not (isinstance(out, tuple | list) and not out):
            raise pos.error(f"{what} carries no values, so its body must return None, got {out!r}")
        return []
    if single:
        return [out]
    if not isinstance(out, tuple | list) or len(out) != n:
        raise pos.error(f"{what} body must return {n} values (one per init), got {out!r}")
    return list(out)


def _match(template: _Value, v: Any, what: str, pos: _Pos) -> ir.Value:
    if isinstance(v, int | float) and isinstance(template, Scalar):
        v = _builder().constant(v, template.dtype)
    if not isinstance(v, _Value) or v.handle.type != template.handle.type:
        got = v.handle.type if isinstance(v, _Value) else repr(v)
        raise pos.error(f"{what} has type {got}, but it started as {template.handle.type}")
    return v.handle


def for_loop(
    lo: Any,
    hi: Any,
    step: Any = 1,
    *,
    init: Any = (),
    body: Callable[..., Any],
) -> Any:
    """A device loop (``scf.for``) over ``lo, lo + step, ... < hi``.

    ``body(i, *carried)`` is traced once; it returns the next carried values.
    ``init`` is a single value (the loop returns one value), or a tuple/list
    (the loop returns a tuple), or ``()`` (the loop returns None). Bounds are
    i32 unless a traced i64 is among them.
    """
    b = _builder()
    pos = _user_pos()
    single = not isinstance(init, tuple | list)
    inits = [_as_carried(v, "for_loop init") for v in ([init] if single else init)]
    bounds = [v for v in (lo, hi, step) if isinstance(v, Scalar)]
    ity = int64 if any(v.dtype is int64 for v in bounds) else int32
    lo_v, hi_v, st_v = (b.int_operand(v, ity, "for_loop bound") for v in (lo, hi, step))
    loop = scf.ForOp(lo_v, hi_v, st_v, [v.handle for v in inits], loc=pos.location())
    iv = Scalar(loop.induction_variable, ity)
    carried = [v._with(a) for v, a in zip(inits, loop.inner_iter_args, strict=True)]
    with ir.InsertionPoint(loop.body):
        out = body(iv, *carried)
        outs = _results(out, len(inits), single, "for_loop", pos)
        handles = [
            _match(t, v, f"for_loop carried value {i}", pos)
            for i, (t, v) in enumerate(zip(inits, outs, strict=True))
        ]
        scf.YieldOp(handles, loc=pos.location())
    results = [v._with(r) for v, r in zip(inits, loop.results, strict=True)]
    if not inits:
        return None
    return results[0] if single else tuple(results)


def if_(cond: Any, then: Callable[[], Any], else_: Callable[[], Any] | None = None) -> Any:
    """A structured conditional (``scf.if``); returns what the branches return.

    Both branches are traced (once each) and must return the same structure
    of values: None, one value, or a tuple. Without ``else_``, ``then`` must
    return None. A Python bool ``cond`` selects the branch at build time.
    """
    if isinstance(cond, bool):
        if cond:
            return then()
        return else_() if else_ is not None else None
    if not isinstance(cond, Scalar) or cond.dtype is not int1:
        raise _fail(f"if_ condition must be a bool or a traced i1 (a comparison), got {cond!r}")
    pos = _user_pos()
    probe = scf.IfOp(cond.handle, [], has_else=else_ is not None, loc=pos.location())
    with ir.InsertionPoint(probe.then_block):
        then_out = then()
    if else_ is None:
        _results(then_out, 0, False, "if_ without else_", pos)
        with ir.InsertionPoint(probe.then_block):
            scf.YieldOp([], loc=pos.location())
        return None
    with ir.InsertionPoint(probe.else_block):
        else_out = else_()
    single = not isinstance(then_out, tuple | list) and then_out is not None
    n = 0 if then_out is None else (1 if single else len(then_out))
    then_vals = [_as_carried(v, "if_ result") for v in _results(then_out, n, single, "if_", pos)]
    with ir.InsertionPoint(probe.else_block):
        else_raw = _results(else_out, n, single, "if_ else_", pos)
        else_vals = [
            _match(t, v, f"if_ else_ result {i}", pos)
            for i, (t, v) in enumerate(zip(then_vals, else_raw, strict=True))
        ]
    if n == 0:
        for blk in (probe.then_block, probe.else_block):
            with ir.InsertionPoint(blk):
                scf.YieldOp([], loc=pos.location())
        return None
    # The result types are known only now: rebuild the op with them and move
    # both traced branches into it.
    types = [v.handle.type for v in then_vals]
    real = scf.IfOp(
        cond.handle, types, has_else=True, loc=pos.location(), ip=ir.InsertionPoint(probe)
    )
    for src, dst, vals in (
        (probe.then_block, real.then_block, [v.handle for v in then_vals]),
        (probe.else_block, real.else_block, else_vals),
    ):
        for op in list(src.operations):
            dst.append(op)
        with ir.InsertionPoint(dst):
            scf.YieldOp(vals, loc=pos.location())
    probe.operation.erase()
    results = [t._with(r) for t, r in zip(then_vals, real.results, strict=True)]
    return results[0] if single else tuple(results)


def where(cond: Any, a: Any, b: Any) -> Any:
    """``a if cond else b`` on device values (``arith.select``).

    ``cond`` is a traced i1 (or a Python bool, chosen at build time); ``a`` and
    ``b`` have one type, and a Python number takes the other side's type.
    """
    if isinstance(cond, bool):
        return a if cond else b
    if not isinstance(cond, Scalar) or cond.dtype is not int1:
        raise _fail(f"where condition must be a bool or a traced i1, got {cond!r}")
    bld = _builder()
    if isinstance(a, Scalar) and not isinstance(b, Tensor):
        a, b = _promote(a, b, "where")
    elif isinstance(b, Scalar) and not isinstance(a, Tensor):
        b, a = _promote(b, a, "where")
    elif isinstance(a, Tensor) and _is_number(b):
        b = full(a.shape, b, a.dtype, a.layout)
    elif isinstance(b, Tensor) and _is_number(a):
        a = full(b.shape, a, b.dtype, b.layout)
    if not isinstance(a, _Value) or not isinstance(b, _Value) or a.handle.type != b.handle.type:
        raise _fail(f"where needs two values of one type, got {a!r} and {b!r}")
    return a._with(arith.select(cond.handle, a.handle, b.handle, loc=bld.loc()))


def static_assert(cond: Any, message: str = "") -> None:
    """Fail the build at this line when the constexpr ``cond`` is false."""
    if isinstance(cond, _Value):
        raise _fail("static_assert needs a constexpr condition, got a traced value")
    if not cond:
        raise _fail(f"static_assert failed{': ' + message if message else ''}")


# ---- kernels --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Param:
    name: str
    kind: str  # "constexpr" | "pointer" | "scalar"
    annotation: Any
    default: Any


_COMPILE_OPTIONS = ("fuse", "derive_hints", "pipeline")


class Kernel:
    """A traced kernel; made by :func:`kernel`.

    * :meth:`build_module` / :meth:`build_ir` trace it into a verified tile
      module (no Triton involved);
    * :meth:`compile` also runs the tile pipeline and Triton and returns the
      lowering's ``CompiledKernel`` (``.asm["tile"|"ttgir"|"llir"|"amdgcn"]``,
      ``.hsaco``, ``.metadata``, ``.metrics``).

    Called while another kernel is being built, it is inlined like a helper.
    """

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        functools.update_wrapper(self, fn, updated=())
        self._params: list[_Param] | None = None

    def __repr__(self) -> str:
        return f"<tl.kernel {self.__qualname__}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not getattr(_STATE, "stack", None):
            raise TypeError(
                f"{self.__name__} is a @tl.kernel: build it with .build_ir(...) or "
                ".compile(...); it can only be called directly from another kernel"
            )
        return self.fn(*args, **kwargs)

    # -- parameters --

    def params(self) -> list[_Param]:
        """The kernel's parameters, classified by annotation."""
        if self._params is None:
            self._params = self._classify()
        return self._params

    def _classify(self) -> list[_Param]:
        where = _def_pos(self.fn)
        try:
            annotations = inspect.get_annotations(self.fn, eval_str=True)
        except Exception as e:  # an annotation failed to evaluate
            raise where.error(f"cannot evaluate the annotations of {self.__name__}: {e}") from e
        out = []
        for p in inspect.signature(self.fn).parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise where.error(f"kernel {self.__name__} cannot take *{p.name}")
            ann = annotations.get(p.name, inspect.Parameter.empty)
            default = p.default
            if ann is constexpr or isinstance(ann, constexpr):
                kind = "constexpr"
                if p.name in _COMPILE_OPTIONS:
                    raise where.error(
                        f"constexpr {p.name!r} clashes with the compile() option of that name"
                    )
            elif isinstance(ann, pointer_type):
                kind = "pointer"
            elif isinstance(ann, dtype):
                kind = "scalar"
            else:
                raise where.error(
                    f"parameter {p.name!r} of kernel {self.__name__} needs an annotation: "
                    "tl.ptr(...), tl.int32, tl.int64 or tl.constexpr"
                )
            if kind != "constexpr" and default is not p.empty:
                raise where.error(f"runtime parameter {p.name!r} cannot have a default")
            out.append(_Param(p.name, kind, ann, default))
        return out

    def _bind(self, constexprs: dict[str, Any]) -> dict[str, Any]:
        params = {p.name: p for p in self.params()}
        for name in constexprs:
            if name not in params:
                raise _fail(f"kernel {self.__name__} has no parameter {name!r}")
            if params[name].kind != "constexpr":
                raise _fail(
                    f"{name!r} is a runtime parameter of {self.__name__}; only "
                    "tl.constexpr parameters take values at build time"
                )
        values = {}
        for p in self.params():
            if p.kind != "constexpr":
                continue
            if p.name in constexprs:
                values[p.name] = constexprs[p.name]
            elif p.default is not inspect.Parameter.empty:
                values[p.name] = p.default
            else:
                raise _fail(f"kernel {self.__name__} needs a value for constexpr {p.name!r}")
        return values

    def _arg_type(self, p: _Param, values: dict[str, Any]) -> tuple[ir.Type, dtype]:
        if p.kind == "scalar":
            return p.annotation.to_ir(), p.annotation
        elem = p.annotation.element
        if isinstance(elem, str):
            if elem not in values:
                raise _def_pos(self.fn).error(
                    f"tl.ptr({elem!r}) of parameter {p.name!r} names no constexpr parameter"
                )
            elem = _as_dtype(values[elem], f"constexpr {elem!r} (element type of {p.name!r})")
        return tile.PtrType.get(ir.TypeAttr.get(elem.to_ir())), elem

    # -- building --

    def build_module(self, *, num_warps: int = 8, target: str = "gfx1250", **constexprs: Any):
        """Trace the kernel into a verified tile ``ir.Module`` (its own context)."""
        if target not in TARGETS:
            raise _fail(f"unknown target {target!r}; known: {', '.join(TARGETS)}")
        if not isinstance(num_warps, int) or isinstance(num_warps, bool) or num_warps < 1:
            raise _fail(f"num_warps must be a positive int, got {num_warps!r}")
        values = self._bind(constexprs)
        ctx = make_context()
        b = _Builder(ctx, num_warps, target)
        handle = ctx.attach_diagnostic_handler(b.on_diagnostic)
        ctx.emit_error_diagnostics = True
        try:
            with ctx, ir.Location.unknown(), _tracing(b):
                module = self._trace(b, values)
                b.verify(module.operation)
        finally:
            handle.detach()
        return module

    def _trace(self, b: _Builder, values: dict[str, Any]) -> ir.Module:
        where = _def_pos(self.fn)
        module = ir.Module.create(loc=where.location())
        attrs = module.operation.attributes
        i32 = ir.IntegerType.get_signless(32)
        attrs[tile.NUM_WARPS] = ir.IntegerAttr.get(i32, b.num_warps)
        attrs[tile.THREADS_PER_WARP] = ir.IntegerAttr.get(i32, b.threads_per_warp)
        attrs[tile.TARGET] = ir.StringAttr.get(b.target)
        b.module = module
        runtime = [p for p in self.params() if p.kind != "constexpr"]
        typed = [self._arg_type(p, values) for p in runtime]
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp(
                self.__name__,
                ir.FunctionType.get([t for t, _ in typed], []),
                loc=where.location(),
            )
        entry = fn.add_entry_block([where.location()] * len(runtime))
        b.entry = entry
        args: dict[str, Any] = dict(values)
        for p, (_, d), arg in zip(runtime, typed, entry.arguments, strict=True):
            args[p.name] = Pointer(arg, d) if p.kind == "pointer" else Scalar(arg, d)
        with ir.InsertionPoint(entry):
            out = self.fn(**args)
            if out is not None:
                raise where.error(
                    f"kernel {self.__name__} returned {out!r}; kernels return nothing "
                    "(write results with tl.store_block)"
                )
            func.ReturnOp([], loc=where.location())
        return module

    def build_ir(
        self,
        *,
        num_warps: int = 8,
        target: str = "gfx1250",
        debug_info: bool = False,
        **constexprs: Any,
    ) -> str:
        """The kernel's tile IR as text (verified; no Triton involved).

        ``debug_info=True`` prints the source locations too.
        """
        module = self.build_module(num_warps=num_warps, target=target, **constexprs)
        return module.operation.get_asm(enable_debug_info=debug_info)

    def compile(
        self,
        target: str = "gfx1250",
        num_warps: int = 8,
        *,
        fuse: bool = True,
        derive_hints: bool = False,
        pipeline: Any = None,
        **constexprs: Any,
    ) -> Any:
        """Build, verify, run the tile pipeline and hand off to Triton.

        Returns the lowering's ``CompiledKernel``. ``fuse`` and
        ``derive_hints`` are passed to the lowering (fuse hinted copies; derive
        hints for unhinted copies); ``pipeline`` overrides its tile-level pass
        pipeline. A pass or Triton failure raises :class:`CompilationError` at
        the kernel line the failing op came from (at this call when the
        diagnostic has no position).
        """
        module = self.build_module(num_warps=num_warps, target=target, **constexprs)
        from gemm_opt.lowering.compile import TileCompileError, compile_tile_module

        options: dict[str, Any] = {"fuse": fuse, "derive_hints": derive_hints}
        if pipeline is not None:
            options["pipeline"] = pipeline
        try:
            return compile_tile_module(module, target, **options)
        except TileCompileError as e:
            raise _lowering_error(e, module) from e


def _source_files(module: ir.Module) -> dict[tuple[int, int], set[str]]:
    """(line, col) -> the files of the op locations at that position."""
    text = module.operation.get_asm(enable_debug_info=True)
    found: dict[tuple[int, int], set[str]] = {}
    for m in _LOC_RE.finditer(text):
        found.setdefault((int(m.group(2)), int(m.group(3))), set()).add(m.group(1))
    return found


def _lowering_error(err: Any, module: ir.Module) -> CompilationError:
    """The lowering's positioned error (line and col only) in the user's file."""
    stage = f"{err.stage}: " if getattr(err, "stage", "") else ""
    details = [d for d in str(getattr(err, "details", "")).splitlines() if d != err.message]
    if not err.line:
        pos = _user_pos()
        return CompilationError(
            f"{stage}{err.message}", pos.filename, pos.line, pos.col, notes=details
        )
    files = _source_files(module).get((err.line, err.col), set())
    filename = next(iter(files)) if len(files) == 1 else None
    if filename is None:  # ambiguous or unknown: the kernel's own file
        filename = _diag_where(module.operation.location)[0] or None
    return CompilationError(f"{stage}{err.message}", filename, err.line, err.col, notes=details)


def kernel(fn: Callable[..., Any]) -> Kernel:
    """Make ``fn`` a traced kernel (see the module docstring)."""
    if isinstance(fn, Kernel):
        return fn
    return Kernel(fn)


__all__ = [
    "Blocked",
    "CompilationError",
    "DotOperand",
    "Kernel",
    "PaddedShared",
    "PartitionedShared",
    "Pointer",
    "Scalar",
    "SharedBuffer",
    "SwizzledShared",
    "Tensor",
    "TensorDescriptor",
    "WmmaLayout",
    "allocate_shared",
    "async_copy",
    "async_copy_fused",
    "async_wait",
    "bfloat16",
    "constexpr",
    "convert_layout",
    "dtype",
    "float16",
    "float32",
    "for_loop",
    "full",
    "if_",
    "int1",
    "int32",
    "int64",
    "kernel",
    "load_block",
    "local_load",
    "make_tensor_descriptor",
    "num_warps",
    "pointer_type",
    "program_id",
    "ptr",
    "static_assert",
    "store_block",
    "target",
    "warp_id",
    "where",
    "wmma",
    "zeros",
]
