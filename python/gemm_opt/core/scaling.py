"""The scaled-GEMM recipes: the one rule from scale shapes to a recipe, and the float64 reference.

A scaled 8-bit GEMM computes ``(decode(A) x scale_a) @ (decode(B) x scale_b)``
with each scale applied to the elements it covers. As with
``torch._scaled_mm``, the recipe follows from the scale shapes (and the scale
type); A is (M, K), B is (K, N), or (G, K, N) for a grouped GEMM whose A holds
the rows of all groups (``M = sum(group_lens)``):

=============  ==================  ============================  =================================
recipe         ``scale_a``         ``scale_b``                   ``scale_b`` grouped
=============  ==================  ============================  =================================
tensorwise     ``()`` or (1, 1)    ``()`` or (1, 1)              ``()`` or (1, 1)
rowwise        (M, 1)              (1, N)                        (G, 1, N)
block128       (M, ceil(K/128))    (ceil(K/128), ceil(N/128))    (G, ceil(K/128), ceil(N/128))
mx32           (M, K/32)           (K/32, N)                     (G, K/32, N)
=============  ==================  ============================  =================================

tensorwise, rowwise and block128 take float32 scales; block128 is
DeepSeek-V3's (1x128 blocks of A along K, 128x128 blocks of B) and allows any
K (the last block is partial). mx32 is OCP MX: ``e8m0fnu`` scales, one per 32
elements of K, so K must be a multiple of 32. Shapes that two recipes share
(rowwise and tensorwise when M = N = 1, block128 and rowwise when K <= 128 and
N = 1, ...) describe the same products, and the simplest recipe is reported.
The API, the quantizer, the verifiers and the kernels' tests read this rule
here and nowhere else.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from gemm_opt.core.fp8 import Fp8Format, StrEnum, decode, fp8_format

#: Elements of K (and of N on B) one block128 scale covers.
BLOCK = 128
#: Elements of K one mx32 scale covers.
MX_BLOCK = 32

Shape = tuple[int, ...]


class Recipe(StrEnum):
    """How scales cover the operands (see the module's table)."""

    TENSORWISE = "tensorwise"
    ROWWISE = "rowwise"
    BLOCK128 = "block128"
    MX32 = "mx32"


class ScaleType(StrEnum):
    """The element type of the scales."""

    FLOAT32 = "float32"
    E8M0FNU = "e8m0fnu"


class Operand(StrEnum):
    """Which GEMM operand: A (M, K) or B (K, N) / (G, K, N)."""

    A = "a"
    B = "b"


#: The scale type each recipe takes.
RECIPE_SCALE_TYPE: dict[Recipe, ScaleType] = {
    Recipe.TENSORWISE: ScaleType.FLOAT32,
    Recipe.ROWWISE: ScaleType.FLOAT32,
    Recipe.BLOCK128: ScaleType.FLOAT32,
    Recipe.MX32: ScaleType.E8M0FNU,
}

_SYMBOLIC: dict[tuple[Recipe, Operand, bool], str] = {
    (Recipe.TENSORWISE, Operand.A, False): "() or (1, 1)",
    (Recipe.ROWWISE, Operand.A, False): "(M, 1)",
    (Recipe.BLOCK128, Operand.A, False): "(M, ceil(K/128))",
    (Recipe.MX32, Operand.A, False): "(M, K/32)",
    (Recipe.TENSORWISE, Operand.B, False): "() or (1, 1)",
    (Recipe.ROWWISE, Operand.B, False): "(1, N)",
    (Recipe.BLOCK128, Operand.B, False): "(ceil(K/128), ceil(N/128))",
    (Recipe.MX32, Operand.B, False): "(K/32, N)",
    (Recipe.TENSORWISE, Operand.B, True): "() or (1, 1)",
    (Recipe.ROWWISE, Operand.B, True): "(G, 1, N)",
    (Recipe.BLOCK128, Operand.B, True): "(G, ceil(K/128), ceil(N/128))",
    (Recipe.MX32, Operand.B, True): "(G, K/32, N)",
}


def parse_recipe(value: Any, arg: str = "recipe") -> Recipe:
    """``value`` as a :class:`Recipe`; ValueError naming ``arg`` and the recipes otherwise."""
    try:
        return Recipe(value)
    except ValueError:
        known = ", ".join(r.value for r in Recipe)
        raise ValueError(f"{arg}: unknown recipe {value!r} (known: {known})") from None


def scale_type(dtype: Any, arg: str) -> ScaleType:
    """The scale type of a torch / numpy / ``ml_dtypes`` dtype (read by name); TypeError naming
    ``arg`` for any other (float64, bfloat16, integers, ...)."""
    if isinstance(dtype, type):  # a numpy scalar type (np.float32, ml_dtypes.float8_e8m0fnu)
        dtype = np.dtype(dtype)
    name = str(getattr(dtype, "name", None) or dtype).removeprefix("torch.")
    if name == "float32":
        return ScaleType.FLOAT32
    if name.removeprefix("float8_") == "e8m0fnu":
        return ScaleType.E8M0FNU
    raise TypeError(f"{arg}: expected float32 scales (float8_e8m0fnu for mx32), got dtype {name}")


def _dims(op: Operand, shape: Sequence[int]) -> tuple[int | None, int, int]:
    """(G or None, K, N-or-M) of an operand shape; ValueError for the wrong rank."""
    shape = tuple(shape)
    if op is Operand.A:
        if len(shape) != 2:
            raise ValueError(f"a: expected shape (M, K), got {shape}")
        return None, shape[1], shape[0]
    if len(shape) not in (2, 3):
        raise ValueError(f"b: expected shape (K, N) or (G, K, N), got {shape}")
    g = shape[0] if len(shape) == 3 else None
    return g, shape[-2], shape[-1]


def scale_shape(recipe: Recipe | str, operand: Operand | str, shape: Sequence[int]) -> Shape:
    """The canonical scale layout of an operand of ``shape`` under ``recipe``.

    This is what the quantizer returns; tensorwise's is ``()`` (``(1, 1)`` is
    accepted too). ValueError for mx32 when K is not a multiple of 32.
    """
    r, op = parse_recipe(recipe), Operand(operand)
    g, k, other = _dims(op, shape)
    lead = () if g is None else (g,)
    kb = math.ceil(k / BLOCK)
    if r is Recipe.MX32 and k % MX_BLOCK:
        raise ValueError(
            f"{op.value}: mx32 scales blocks of {MX_BLOCK} along K, so K must be a multiple of "
            f"{MX_BLOCK}, got K = {k}"
        )
    if r is Recipe.TENSORWISE:
        return ()
    if op is Operand.A:
        m = other
        return {
            Recipe.ROWWISE: (m, 1),
            Recipe.BLOCK128: (m, kb),
            Recipe.MX32: (m, k // MX_BLOCK),
        }[r]
    n = other
    return (
        lead
        + {
            Recipe.ROWWISE: (1, n),
            Recipe.BLOCK128: (kb, math.ceil(n / BLOCK)),
            Recipe.MX32: (k // MX_BLOCK, n),
        }[r]
    )


def accepted_scale_shapes(
    recipe: Recipe | str, operand: Operand | str, shape: Sequence[int]
) -> tuple[Shape, ...]:
    """Every scale shape ``recipe`` accepts for an operand of ``shape`` (none for mx32 when K
    is not a multiple of 32)."""
    r = parse_recipe(recipe)
    if r is Recipe.TENSORWISE:
        return ((), (1, 1))
    try:
        return (scale_shape(r, operand, shape),)
    except ValueError:
        if r is Recipe.MX32:
            return ()
        raise


def _expected(r: Recipe, op: Operand, shape: Shape) -> str:
    grouped = len(shape) == 3
    symbolic = _SYMBOLIC[(r, op, grouped)]
    shapes = accepted_scale_shapes(r, op, shape)
    if r is Recipe.TENSORWISE:
        return f"{symbolic} ({r})"
    if not shapes:
        return f"{symbolic} ({r}: K must be a multiple of {MX_BLOCK})"
    return f"{symbolic} = {shapes[0]} ({r})"


def recipe_of(
    scale_a: Sequence[int],
    scale_b: Sequence[int],
    *,
    m: int,
    n: int,
    k: int,
    groups: int | None = None,
    scale_type: ScaleType | str = ScaleType.FLOAT32,
) -> Recipe:
    """The recipe of scales of shapes ``scale_a``, ``scale_b`` on A (m, k) and B (k, n), or B
    (groups, k, n) for a grouped GEMM.

    ValueError naming ``scale_a`` (a shape no recipe takes) or ``scale_b`` (no
    recipe takes it with that ``scale_a``), with the shapes expected.
    """
    for name, v in (("m", m), ("n", n), ("k", k), ("groups", groups)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise ValueError(f"{name}: expected a non-negative int, got {v!r}")
    sa, sb = tuple(scale_a), tuple(scale_b)
    a_shape, b_shape = (m, k), ((k, n) if groups is None else (groups, k, n))
    st = ScaleType(scale_type)
    candidates = [r for r in Recipe if RECIPE_SCALE_TYPE[r] is st]
    matches_a = [r for r in candidates if sa in accepted_scale_shapes(r, Operand.A, a_shape)]
    if not matches_a:
        want = "; ".join(_expected(r, Operand.A, a_shape) for r in candidates)
        raise ValueError(
            f"scale_a: shape {sa} fits no {st} recipe for A of shape {a_shape}: expected {want}"
        )
    for r in matches_a:
        if sb in accepted_scale_shapes(r, Operand.B, b_shape):
            return r
    want = "; ".join(_expected(r, Operand.B, b_shape) for r in matches_a)
    raise ValueError(
        f"scale_b: shape {sb} does not go with scale_a of shape {sa} for B of shape {b_shape}: "
        f"expected {want}"
    )


def check_scales(
    recipe: Recipe | str,
    scale_a: Sequence[int],
    scale_b: Sequence[int],
    *,
    m: int,
    n: int,
    k: int,
    groups: int | None = None,
) -> None:
    """ValueError naming ``scale_a`` or ``scale_b`` unless ``recipe`` accepts both shapes."""
    r = parse_recipe(recipe)
    a_shape, b_shape = (m, k), ((k, n) if groups is None else (groups, k, n))
    for name, op, s, shape in (
        ("scale_a", Operand.A, tuple(scale_a), a_shape),
        ("scale_b", Operand.B, tuple(scale_b), b_shape),
    ):
        if s not in accepted_scale_shapes(r, op, shape):
            raise ValueError(
                f"{name}: expected {_expected(r, op, shape)} for {op.value} of shape {shape}, "
                f"got {s}"
            )


def check_scale_values(recipe: Recipe | str, scales: Any, arg: str) -> None:
    """ValueError naming ``arg`` and the first offending index unless every scale is a finite
    positive number (mx32: no NaN code ``0xFF``; every other ``e8m0fnu`` code is positive).

    For scales already on the host: the API asks for this only when validation is on,
    since on a GPU reading the values is a sync.
    """
    r = parse_recipe(recipe)
    s = np.asarray(scales)
    if r is Recipe.MX32:
        bad = s.view(np.uint8) == 0xFF
        what = "is the e8m0fnu NaN code 0xFF"
    else:
        v = s.astype(np.float64)
        bad = ~(np.isfinite(v) & (v > 0))
        what = "is not a finite positive number"
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        value = s[index] if r is not Recipe.MX32 else f"0x{int(s.view(np.uint8)[index]):02X}"
        raise ValueError(f"{arg}: the scale at {index} ({value}) {what}")


def element_scales(
    recipe: Recipe | str, operand: Operand | str, scales: Any, shape: Sequence[int]
) -> np.ndarray:
    """The float64 scale of every element of an operand of ``shape`` (broadcastable to it).

    ``scales`` are float values (tensorwise, rowwise, block128) or
    ``e8m0fnu`` codes (mx32: uint8 or any 1-byte dtype), in the layout
    :func:`accepted_scale_shapes` names.
    """
    r, op = parse_recipe(recipe), Operand(operand)
    shape = tuple(shape)
    s = np.asarray(scales)
    if tuple(s.shape) not in accepted_scale_shapes(r, op, shape):
        raise ValueError(
            f"scale_{op.value}: expected {_expected(r, op, shape)} for {op.value} of shape "
            f"{shape}, got {tuple(s.shape)}"
        )
    if r is Recipe.MX32:
        if s.dtype.itemsize != 1:
            raise TypeError(f"scale_{op.value}: mx32 takes e8m0fnu codes, got dtype {s.dtype}")
        v = decode(s, Fp8Format.E8M0FNU)
    else:
        if s.dtype.itemsize == 1 or s.dtype.kind not in "fV":
            raise TypeError(f"scale_{op.value}: {r} takes float scales, got dtype {s.dtype}")
        v = s.astype(np.float64)
    if r is Recipe.TENSORWISE:
        return v.reshape(())
    k_axis = -1 if op is Operand.A else -2
    block = MX_BLOCK if r is Recipe.MX32 else BLOCK
    if r in (Recipe.BLOCK128, Recipe.MX32):
        v = np.repeat(v, block, axis=k_axis)
        v = v[..., : shape[-1]] if op is Operand.A else v[..., : shape[-2], :]
    if r is Recipe.BLOCK128 and op is Operand.B:
        v = np.repeat(v, BLOCK, axis=-1)[..., : shape[-1]]
    return v


def scaled_reference(
    a_codes: Any,
    b_codes: Any,
    fmt: Fp8Format | str | tuple[Fp8Format | str, Fp8Format | str],
    scale_a: Any,
    scale_b: Any,
    recipe: Recipe | str,
    *,
    group_lens: Sequence[int] | None = None,
) -> np.ndarray:
    """``(decode(A) x scale_a) @ (decode(B) x scale_b)`` in float64: what every scaled kernel
    is measured against.

    ``a_codes`` (M, K) and ``b_codes`` (K, N) are 8-bit codes (uint8 or a
    1-byte float8 dtype); ``fmt`` is their format, or a pair (A's, B's). With
    ``group_lens`` (G lengths summing to M), ``b_codes`` is (G, K, N) and the
    rows of group g use ``b_codes[g]`` and ``scale_b[g]``. The scales are as
    :func:`element_scales` takes them; their shapes must fit ``recipe``.
    """
    r = parse_recipe(recipe)
    fa, fb = (fmt, fmt) if not isinstance(fmt, tuple) else fmt
    fa, fb = fp8_format(fa, "fmt"), fp8_format(fb, "fmt")
    for f in (fa, fb):
        if f.is_scale:
            raise ValueError(f"fmt: {f} is a scale format, not an element format")
        if r is Recipe.MX32 and not f.spec.ocp:
            raise ValueError(f"fmt: mx32 takes the OCP element formats (e4m3fn, e5m2), not {f}")
    a = decode(a_codes, fa)
    b = decode(b_codes, fb)
    if a.ndim != 2:
        raise ValueError(f"a_codes: expected shape (M, K), got {a.shape}")
    want_b = 2 if group_lens is None else 3
    if b.ndim != want_b or b.shape[-2] != a.shape[1]:
        what = "(K, N)" if group_lens is None else "(G, K, N)"
        raise ValueError(f"b_codes: expected shape {what} with K = {a.shape[1]}, got {b.shape}")
    a = a * element_scales(r, Operand.A, scale_a, a.shape)
    b = b * element_scales(r, Operand.B, scale_b, b.shape)
    if group_lens is None:
        return a @ b
    lens = [int(x) for x in group_lens]
    # Equivalent mutant: default=1; with no groups both defaults pass the test.
    if len(lens) != b.shape[0] or sum(lens) != a.shape[0] or min(lens, default=0) < 0:
        raise ValueError(
            f"group_lens: expected {b.shape[0]} lengths >= 0 summing to {a.shape[0]}, got {lens}"
        )
    out = np.empty((a.shape[0], b.shape[-1]))
    start = 0
    for g, n in enumerate(lens):
        out[start : start + n] = a[start : start + n] @ b[g]
        start += n
    return out


__all__ = [
    "BLOCK",
    "MX_BLOCK",
    "RECIPE_SCALE_TYPE",
    "Operand",
    "Recipe",
    "ScaleType",
    "accepted_scale_shapes",
    "check_scale_values",
    "check_scales",
    "element_scales",
    "parse_recipe",
    "recipe_of",
    "scale_shape",
    "scale_type",
    "scaled_reference",
]
