"""The 8-bit floating-point formats: one table of their facts, bit-exact decode and encode.

Element formats: ``e4m3fn`` and ``e5m2`` (OCP FP8, the types of cuda:90,
gfx950 and gfx1250), ``e4m3fnuz`` and ``e5m2fnuz`` (gfx942's: no negative
zero, ``0x80`` is the only NaN, exponent bias one higher). Scale format:
``e8m0fnu`` (the MX block scale: ``2 ** (code - 127)``, no sign, no zero,
``0xFF`` is NaN). The model, the reference GEMMs, the quantizer and the
verifiers read these facts here; nothing else lists them. Pure Python and
numpy (no torch, no ``ml_dtypes``), so every layer may use it.

Encoding rounds the exact input value once, to nearest with ties to even
(``e8m0fnu``: ties up, see :func:`encode`). What happens past the largest
finite value is the :class:`Overflow` mode; each format's
:attr:`FormatSpec.cast_overflow` is what torch's ``tensor.to(float8 dtype)``
does for float32 inputs: ``e4m3fn`` saturates (finite overflow and +-inf
become +-448), the others do not (``e5m2`` overflows to +-inf, the fnuz
formats to their NaN). ``ml_dtypes`` never saturates, so its ``e4m3fn`` cast
gives NaN where torch's gives 448.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from gemm_opt.core.targets import get_target

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # Python 3.10

    class StrEnum(str, Enum):
        """``enum.StrEnum`` of Python 3.11: members are their string values."""

        def __str__(self) -> str:
            return str(self.value)


class Overflow(StrEnum):
    """What a value rounding past the largest finite one encodes to."""

    #: +-max finite (infinities too); NaN stays NaN. torch's ``e4m3fn`` cast,
    #: and what quantizers want (a NaN would poison every product it enters).
    SATURATE = "saturate"
    #: +-inf where the format has infinities, else its NaN (OCP's non-saturating mode).
    NONSATURATE = "nonsaturate"


@dataclass(frozen=True)
class FormatSpec:
    """The facts of one 8-bit format (code = sign | exponent | mantissa, most significant first)."""

    exponent_bits: int
    mantissa_bits: int
    bias: int
    #: Whether the top bit is a sign (``e8m0fnu`` is unsigned: all 8 bits are exponent).
    signed: bool
    #: Whether codes exist for +-inf (only ``e5m2``).
    has_inf: bool
    #: "fnuz": finite, no negative zero; ``0x80`` (what would be -0) is the one NaN.
    fnuz: bool
    #: Whether the format is one of the OCP 8-bit formats (FP8 or the MX scale).
    ocp: bool
    nan_codes: tuple[int, ...]
    inf_codes: tuple[int, ...]
    #: The code of the largest finite value (its negative is ``max_code | 0x80``).
    max_code: int
    max_finite: float
    min_normal: float
    min_subnormal: float
    #: torch's ``.to()`` for float32 inputs (pinned by the unit tests).
    cast_overflow: Overflow
    #: The MLIR builtin type.
    mlir_type: str
    #: Triton's ``tl.dtype`` name (``None``: Triton carries it as ``uint8``).
    triton_type: str | None

    @property
    def has_zero(self) -> bool:
        return self.mantissa_bits > 0  # Equivalent mutant: > 1; no format has 1 bit.

    @property
    def emax(self) -> int:
        """Unbiased exponent of the largest finite value (``floor(log2(max_finite))``)."""
        return int(np.frexp(self.max_finite)[1]) - 1


class Fp8Format(StrEnum):
    """The 8-bit formats by name; the name is also torch's and ``ml_dtypes``' after ``float8_``."""

    E4M3FN = "e4m3fn"
    E5M2 = "e5m2"
    E4M3FNUZ = "e4m3fnuz"
    E5M2FNUZ = "e5m2fnuz"
    E8M0FNU = "e8m0fnu"

    @property
    def spec(self) -> FormatSpec:
        return FORMATS[self]

    @property
    def dtype_name(self) -> str:
        """torch's and ``ml_dtypes``' dtype name (``float8_e4m3fn``, ...)."""
        return f"float8_{self.value}"

    @property
    def is_scale(self) -> bool:
        """Whether this is a block-scale format (``e8m0fnu``) rather than an element format."""
        return not self.spec.signed


_S, _NS = Overflow.SATURATE, Overflow.NONSATURATE

#: The one table of 8-bit formats.
FORMATS: dict[Fp8Format, FormatSpec] = {
    Fp8Format.E4M3FN: FormatSpec(
        4, 3, 7, signed=True, has_inf=False, fnuz=False, ocp=True,
        nan_codes=(0x7F, 0xFF), inf_codes=(), max_code=0x7E,
        max_finite=448.0, min_normal=2.0**-6, min_subnormal=2.0**-9,
        cast_overflow=_S, mlir_type="f8E4M3FN", triton_type="fp8e4nv",
    ),
    Fp8Format.E5M2: FormatSpec(
        5, 2, 15, signed=True, has_inf=True, fnuz=False, ocp=True,
        nan_codes=(0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF), inf_codes=(0x7C, 0xFC), max_code=0x7B,
        max_finite=57344.0, min_normal=2.0**-14, min_subnormal=2.0**-16,
        cast_overflow=_NS, mlir_type="f8E5M2", triton_type="fp8e5",
    ),
    Fp8Format.E4M3FNUZ: FormatSpec(
        4, 3, 8, signed=True, has_inf=False, fnuz=True, ocp=False,
        nan_codes=(0x80,), inf_codes=(), max_code=0x7F,
        max_finite=240.0, min_normal=2.0**-7, min_subnormal=2.0**-10,
        cast_overflow=_NS, mlir_type="f8E4M3FNUZ", triton_type="fp8e4b8",
    ),
    Fp8Format.E5M2FNUZ: FormatSpec(
        5, 2, 16, signed=True, has_inf=False, fnuz=True, ocp=False,
        nan_codes=(0x80,), inf_codes=(), max_code=0x7F,
        max_finite=57344.0, min_normal=2.0**-15, min_subnormal=2.0**-17,
        cast_overflow=_NS, mlir_type="f8E5M2FNUZ", triton_type="fp8e5b16",
    ),
    Fp8Format.E8M0FNU: FormatSpec(
        8, 0, 127, signed=False, has_inf=False, fnuz=False, ocp=True,
        nan_codes=(0xFF,), inf_codes=(), max_code=0xFE,
        max_finite=2.0**127, min_normal=2.0**-127, min_subnormal=2.0**-127,
        cast_overflow=_NS, mlir_type="f8E8M0FNU", triton_type=None,
    ),
}  # fmt: skip


def fp8_format(value: Any, arg: str = "dtype") -> Fp8Format:
    """The format named by ``value``: a :class:`Fp8Format`, ``"e4m3fn"``, ``"float8_e4m3fn"``,
    or a torch / numpy / ``ml_dtypes`` dtype (read by name only). ValueError naming ``arg``.
    """
    if isinstance(value, Fp8Format):
        return value
    if isinstance(value, type):  # a numpy scalar type (ml_dtypes.float8_e4m3fn)
        value = np.dtype(value)
    name = value if isinstance(value, str) else getattr(value, "name", None) or str(value)
    name = str(name).removeprefix("torch.").removeprefix("float8_")
    try:
        return Fp8Format(name)
    except ValueError:
        known = ", ".join(f.value for f in Fp8Format)
        raise ValueError(f"{arg}: unknown 8-bit format {value!r} (known: {known})") from None


# ---- decode ----------------------------------------------------------------------------


@functools.cache
def _decode_table(fmt: Fp8Format) -> np.ndarray:
    """float64 value of each of the 256 codes (read-only)."""
    s = fmt.spec
    codes = np.arange(256, dtype=np.int64)
    if not s.signed:  # e8m0fnu: 2 ** (code - bias)
        values = np.ldexp(1.0, codes - s.bias)
    else:
        exp = (codes >> s.mantissa_bits) & ((1 << s.exponent_bits) - 1)
        man = codes & ((1 << s.mantissa_bits) - 1)
        normal = np.ldexp((1 << s.mantissa_bits) + man, exp - s.bias - s.mantissa_bits)
        subnormal = np.ldexp(man.astype(np.float64), 1 - s.bias - s.mantissa_bits)
        values = np.where(exp == 0, subnormal, normal)
        values = np.where(codes & 0x80, -values, values)
    for c in s.inf_codes:
        values[c] = -np.inf if c & 0x80 else np.inf  # Equivalent mutant: & 0x81 (inf ends 00).
    for c in s.nan_codes:  # the code's sign bit on the NaN (a quiet NaN, as ml_dtypes decodes)
        values[c] = -np.nan if s.signed and c & 0x80 else np.nan
    values.flags.writeable = False
    return values


def decode(codes: Any, fmt: Fp8Format | str, dtype: Any = np.float64) -> np.ndarray:
    """The values of 8-bit ``codes`` (uint8, or any 1-byte dtype, read as its bits), exactly.

    Every value of every format is exact in float32 too (``dtype=np.float32``).
    NaN codes decode to a quiet NaN carrying the code's sign bit.
    """
    fmt = fp8_format(fmt, "fmt")
    arr = np.asarray(codes)
    if arr.dtype.itemsize != 1 or arr.dtype.kind == "b":
        raise TypeError(f"codes: expected 1-byte codes, got dtype {arr.dtype}")
    return _decode_table(fmt).astype(dtype)[arr.view(np.uint8)]


# ---- encode ----------------------------------------------------------------------------


@functools.cache
def _positive_grid(fmt: Fp8Format) -> np.ndarray:
    """Non-negative finite values by code, then the value one step past the largest.

    Codes ``0 .. max_code`` are increasing, so a code is an index here; the
    extra entry ``max_finite + ulp(max_finite)`` is the value the encoding
    would give code ``max_code + 1`` (where rounding lands on overflow).
    """
    s = fmt.spec
    finite = np.array(_decode_table(fmt)[: s.max_code + 1])
    beyond = s.max_finite + np.ldexp(1.0, s.emax - s.mantissa_bits)
    grid = np.append(finite, beyond)
    grid.flags.writeable = False
    return grid


def encode(
    values: Any, fmt: Fp8Format | str, *, overflow: Overflow | str | None = None
) -> np.ndarray:
    """The uint8 codes of ``values`` (any real numpy dtype, read exactly), rounded once.

    Element formats round to nearest, ties to the even code (IEEE's rule);
    the value one step past the largest finite one takes part in rounding,
    so a value rounds to overflow exactly where IEEE rounding would.
    ``overflow`` (default: the format's :attr:`FormatSpec.cast_overflow`)
    decides what overflow encodes to. A NaN encodes to the format's NaN
    (``0x7F`` with the input's sign; ``0x80`` for fnuz). A result of zero
    keeps the input's sign where the format has -0 (OCP), else is ``0x00``.

    ``e8m0fnu`` (unsigned, no zero) rounds positive values to the nearest
    power of two with ties up (``1.5 * 2**e`` gives ``2**(e+1)``), and
    anything above ``2**-127`` but below ``2**-126`` gives ``2**-126``: both
    torch and ``ml_dtypes`` round float32 subnormals so. Zero and negative
    values give NaN, as ``ml_dtypes`` does (torch reads ``|x|`` and maps 0 to
    ``2**-127``: a scale of zero or below has no encoding, and a finite code
    for it would be a silently wrong scale).
    """
    fmt = fp8_format(fmt, "fmt")
    s = fmt.spec
    try:
        mode = s.cast_overflow if overflow is None else Overflow(overflow)
    except ValueError:
        known = ", ".join(o.value for o in Overflow)
        raise ValueError(f"overflow: expected one of {known}, got {overflow!r}") from None
    x = np.asarray(values)
    try:  # numpy's reals, and ml_dtypes' (kind "V": bfloat16, float8_*) by their cast
        if x.dtype.kind not in "fiuV" or x.dtype.names is not None:
            raise TypeError
        with np.errstate(invalid="ignore"):  # a signalling NaN is still a NaN
            x = x.astype(np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"values: expected real numbers, got dtype {x.dtype}") from None
    a = np.abs(x)
    nan = np.isnan(x)
    if s.signed:
        grid = _positive_grid(fmt)
        lo = np.clip(np.searchsorted(grid, a, side="right") - 1, 0, len(grid) - 2)
        twice, mid = 2.0 * a, grid[lo] + grid[lo + 1]  # both exact: no rounding in the tie test
        code = lo + ((twice > mid) | ((twice == mid) & (lo % 2 == 1)))
    else:
        mant, exp = np.frexp(a)  # a = mant * 2**exp, mant in [0.5, 1)
        code = np.where(
            # Equivalent mutant: >= -> >. At 2**-126 itself both branches give code 1.
            a >= 2.0**-126,
            exp - 1 + s.bias + (mant >= 0.75),
            (a > 2.0**-127).astype(np.int64),
        )
        # Equivalent mutant: + 1 -> + 2. Any code past max_code is overflow, replaced below.
        code = np.where(np.isinf(a), s.max_code + 1, code)
    over = (code > s.max_code) & ~nan
    if mode is Overflow.SATURATE:
        code = np.where(over, s.max_code, code)
    elif s.has_inf:
        code = np.where(over, s.inf_codes[0], code)
    else:
        code = np.where(over, s.nan_codes[0], code)
    code = code.astype(np.uint8)
    neg = np.signbit(x)
    if not s.signed:
        code[nan | (a == 0) | neg] = 0xFF
    elif s.fnuz:
        code = np.where(neg & (code != 0), code | 0x80, code)
        code[nan] = 0x80
    else:
        code = np.where(nan, 0x7F, code)
        code = np.where(neg, code | 0x80, code)
    return code.astype(np.uint8)


def spacing(values: Any, fmt: Fp8Format | str) -> np.ndarray:
    """The gap between neighbouring codes of an element format at ``|values|`` (float64).

    For ``|x|`` in the binade ``[2**e, 2**(e+1))`` it is ``2**(e - mantissa_bits)``,
    below the smallest normal the subnormal step: rounding to nearest errs by at
    most half of it, which is the bound the quantizer and the kernels are held to.
    """
    fmt = fp8_format(fmt, "fmt")
    s = fmt.spec
    if not s.signed:
        raise ValueError(f"fmt: spacing is defined for the element formats, not {fmt}")
    a = np.abs(np.asarray(values, dtype=np.float64))
    _, exp = np.frexp(np.maximum(a, s.min_normal))
    return np.ldexp(1.0, exp - 1 - s.mantissa_bits)


# ---- targets ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TargetFp8:
    """The 8-bit formats one target's matrix instructions take."""

    #: Element formats its MMA reads.
    elements: tuple[Fp8Format, ...]
    #: The block-scale format of its block-scaled MMA (MXFP8), or None if it has none.
    mx_scale: Fp8Format | None


_BY_MLIR_TYPE: dict[str, Fp8Format] = {f.spec.mlir_type: f for f in Fp8Format}


def format_of_mlir_type(name: str) -> Fp8Format | None:
    """The format whose MLIR builtin type is spelled ``name`` (``f8E4M3FN``, ...), or None."""
    return _BY_MLIR_TYPE.get(name)


def target_fp8(target: str) -> TargetFp8:
    """The 8-bit formats of ``target`` (a name of :data:`gemm_opt.core.targets.TARGETS`).

    Read from the target table's fp8 columns (:class:`gemm_opt.core.targets.Target`).
    ValueError naming the known targets for an unknown one.
    """
    t = get_target(target)
    scale = None if t.mx_scale_type is None else _BY_MLIR_TYPE[t.mx_scale_type]
    return TargetFp8(tuple(_BY_MLIR_TYPE[n] for n in t.fp8_types), scale)


__all__ = [
    "FORMATS",
    "FormatSpec",
    "Fp8Format",
    "Overflow",
    "StrEnum",
    "TargetFp8",
    "decode",
    "encode",
    "format_of_mlir_type",
    "fp8_format",
    "spacing",
    "target_fp8",
]
