"""Structured control flow on device values: ``for_loop``, ``if_``, ``where``.

A traced body runs exactly once, so Python's ``for`` and ``if`` cannot
express a device loop or branch: these take the bodies as functions and build
``scf.for`` / ``scf.if`` / ``arith.select``. Python ``for`` and ``if`` on
constexprs still work and unroll or specialise at build time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gemm_opt.core.ext_compat import arith, ir, scf
from gemm_opt.language.arguments import call_user
from gemm_opt.language.builder import current
from gemm_opt.language.dtypes import float32, int1, int32, int64
from gemm_opt.language.errors import Pos, fail, user_pos
from gemm_opt.language.values import (
    Scalar,
    Tensor,
    Value,
    constant,
    int_operand,
    is_number,
    promote,
    splat,
)


def _as_carried(v: Any, what: str) -> Value:
    if isinstance(v, Value):
        return v
    if isinstance(v, bool):
        return constant(v, int1)
    if isinstance(v, int):
        return constant(v, int32)
    if isinstance(v, float):
        return constant(v, float32)
    raise fail(f"{what} must be a traced value or a Python number, got {v!r}")


def _results(out: Any, n: int, single: bool, what: str, pos: Pos) -> list[Any]:
    if n == 0:
        if out is not None and not (isinstance(out, tuple | list) and not out):
            raise pos.error(f"{what} carries no values, so its body must return None, got {out!r}")
        return []
    if single:
        return [out]
    if not isinstance(out, tuple | list) or len(out) != n:
        raise pos.error(f"{what} body must return {n} values (one per init), got {out!r}")
    return list(out)


def _match(template: Value, v: Any, what: str, pos: Pos) -> ir.Value:
    if is_number(v) and isinstance(template, Scalar):
        v = constant(v, template.dtype)
    if not isinstance(v, Value) or v.handle.type != template.handle.type:
        got = v.handle.type if isinstance(v, Value) else repr(v)
        raise pos.error(f"{what} has type {got}, but it started as {template.handle.type}")
    return v.handle


def _callable(fn: Any, what: str) -> None:
    if not callable(fn):
        raise fail(f"{what} must be a function, got {fn!r}")


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
    i32 unless a traced i64 is among them. A constexpr ``step`` must be
    positive (``scf.for`` counts up).
    """
    current()
    pos = user_pos()
    _callable(body, "for_loop body")
    if isinstance(step, int) and not isinstance(step, bool) and step < 1:
        raise fail(f"for_loop step must be positive, got {step}")
    single = not isinstance(init, tuple | list)
    inits = [_as_carried(v, "for_loop init") for v in ([init] if single else init)]
    bounds = [v for v in (lo, hi, step) if isinstance(v, Scalar)]
    ity = int64 if any(v.dtype is int64 for v in bounds) else int32
    lo_v, hi_v, st_v = (int_operand(v, ity, "for_loop bound") for v in (lo, hi, step))
    loop = scf.ForOp(lo_v, hi_v, st_v, [v.handle for v in inits], loc=pos.location())
    iv = Scalar(loop.induction_variable, ity)
    carried = [v._with(a) for v, a in zip(inits, loop.inner_iter_args, strict=True)]
    with ir.InsertionPoint(loop.body):
        out = call_user(body, (iv, *carried), "for_loop body")
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
    _callable(then, "if_ then")
    if else_ is not None:
        _callable(else_, "if_ else_")
    if isinstance(cond, bool):
        if cond:
            return call_user(then, (), "if_ then")
        return call_user(else_, (), "if_ else_") if else_ is not None else None
    if not isinstance(cond, Scalar) or cond.dtype is not int1:
        raise fail(f"if_ condition must be a bool or a traced i1 (a comparison), got {cond!r}")
    current()
    pos = user_pos()
    probe = scf.IfOp(cond.handle, [], has_else=else_ is not None, loc=pos.location())
    with ir.InsertionPoint(probe.then_block):
        then_out = call_user(then, (), "if_ then")
    if else_ is None:
        _results(then_out, 0, False, "if_ without else_", pos)
        with ir.InsertionPoint(probe.then_block):
            scf.YieldOp([], loc=pos.location())
        return None
    with ir.InsertionPoint(probe.else_block):
        else_out = call_user(else_, (), "if_ else_")
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
        raise fail(f"where condition must be a bool or a traced i1, got {cond!r}")
    bld = current()
    if isinstance(a, Scalar) and not isinstance(b, Tensor):
        a, b = promote(a, b, "where")
    elif isinstance(b, Scalar) and not isinstance(a, Tensor):
        b, a = promote(b, a, "where")
    elif isinstance(a, Tensor) and is_number(b):
        b = splat(a.shape, b, a.dtype, a.layout)
    elif isinstance(b, Tensor) and is_number(a):
        a = splat(b.shape, a, b.dtype, b.layout)
    if not isinstance(a, Value) or not isinstance(b, Value) or a.handle.type != b.handle.type:
        raise fail(f"where needs two values of one type, got {a!r} and {b!r}")
    return a._with(arith.select(cond.handle, a.handle, b.handle, loc=bld.loc()))


__all__ = ["for_loop", "if_", "where"]
