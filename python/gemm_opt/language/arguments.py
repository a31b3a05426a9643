"""The checks of the Python values a ``tl.*`` call takes, in one place.

Every constexpr int that becomes an attribute or a constant goes through
:func:`constexpr_int` (a list of them through :func:`constexpr_ints`) with the
range the argument has, before anything narrows it to 32 bits: a value out of
range is the user's mistake, named and reported at their call, never a wrapped
number that a verifier then judges (``2**31`` read back as ``-2147483648``).
User functions that the front end calls (warp-specialize partitions, loop and
branch bodies) go through :func:`call_user`, so a signature that does not fit
the arguments is the user's mistake too, and an exception their own code
raises stays theirs (:func:`gemm_opt.language.errors.located`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from gemm_opt.core.ext_compat import ir
from gemm_opt.language.errors import fail

I32_MIN = -(1 << 31)
I32_MAX = (1 << 31) - 1
#: Bit masks (warp hints) are 32 bits, stored as their signed form.
MASK_MIN, MASK_MAX = I32_MIN, (1 << 32) - 1


def is_int(v: Any) -> bool:
    """A Python int that is not a bool."""
    return isinstance(v, int) and not isinstance(v, bool)


def constexpr_int(value: Any, what: str, lo: int = 0, hi: int = I32_MAX, meaning: str = "") -> int:
    """``value``, a Python int in ``[lo, hi]``; else the user's error naming
    ``what`` (``meaning``, e.g. " (copies left in flight)", follows the range)."""
    if not is_int(value) or not lo <= value <= hi:
        raise fail(f"{what} must be a constexpr int in [{lo}, {hi}]{meaning}, got {value!r}")
    return value


def int_bits(value: int, bits: int, what: str) -> int:
    """The signed form of ``value`` as a ``bits``-wide integer constant; ``value``
    may be signed or the unsigned form of the same bits (``0xFFFFFFFF`` for an
    i32 mask), anything wider is the user's error (an i1 takes 0 and 1)."""
    lo = 0 if bits == 1 else -(1 << (bits - 1))
    hi = 1 if bits == 1 else (1 << bits) - 1
    if not lo <= value <= hi:
        raise fail(f"{what} {value} does not fit {bits} bits")
    return value - (1 << bits) if bits > 1 and value >= 1 << (bits - 1) else value


def sequence(values: Any, what: str) -> list[Any]:
    """``values``, a list or tuple (not a string, not a traced value), as a list."""
    if not isinstance(values, Sequence) or isinstance(values, str | bytes):
        raise fail(f"{what} must be a list or tuple, got {values!r}")
    return list(values)


def constexpr_ints(
    values: Any, what: str, lo: int = 0, hi: int = I32_MAX, meaning: str = ""
) -> list[int]:
    """A list or tuple of :func:`constexpr_int` s, each named ``what[i]``."""
    items = sequence(values, what)
    return [constexpr_int(v, f"{what}[{i}]", lo, hi, meaning) for i, v in enumerate(items)]


def i32_attr(value: Any, what: str, lo: int = 0, hi: int = I32_MAX) -> ir.Attribute:
    """An ``i32`` attribute of the checked ``value``; with ``hi`` up to
    :data:`MASK_MAX` (a bit mask) values of 2^31 and up are stored as their
    signed form, the same 32 bits."""
    if not I32_MIN <= lo <= hi <= MASK_MAX:
        raise ValueError(f"i32_attr: [{lo}, {hi}] is not a 32-bit range")
    v = constexpr_int(value, what, lo, hi)
    if v > I32_MAX:
        v -= 1 << 32
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), v)


def call_user(fn: Callable[..., Any], args: Sequence[Any], what: str) -> Any:
    """``fn(*args)`` for a user function the front end traces; a signature that
    cannot take ``args`` is the user's error at their call (not a TypeError
    inside the front end)."""
    if not callable(fn):
        raise fail(f"{what} must be a function, got {fn!r}")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without one: let the call decide
        signature = None
    if signature is not None:
        try:
            signature.bind(*args)
        except TypeError as e:
            name = getattr(fn, "__name__", repr(fn))
            raise fail(
                f"{what} {name}{signature} cannot be called with {len(args)} "
                f"argument{'s' if len(args) != 1 else ''}: {e}"
            ) from None
    return fn(*args)


__all__ = [
    "I32_MAX",
    "I32_MIN",
    "MASK_MAX",
    "MASK_MIN",
    "call_user",
    "constexpr_int",
    "constexpr_ints",
    "i32_attr",
    "int_bits",
    "is_int",
    "sequence",
]
