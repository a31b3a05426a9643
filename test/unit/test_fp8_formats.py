"""The 8-bit formats (gemm_opt.core.fp8) against ml_dtypes and torch, bit for bit."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gemm_opt.core.fp8 import (
    FORMATS,
    Fp8Format,
    Overflow,
    decode,
    encode,
    fp8_format,
    spacing,
    target_fp8,
)
from gemm_opt.core.targets import TARGETS

ALL = list(Fp8Format)
ELEMENTS = [f for f in Fp8Format if not f.is_scale]
CODES = np.arange(256, dtype=np.uint8)


def ml(fmt: Fp8Format):
    return getattr(ml_dtypes, fmt.dtype_name)


def th(fmt: Fp8Format):
    return getattr(torch, fmt.dtype_name)


def ml_encode(x: np.ndarray, fmt: Fp8Format) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        return x.astype(ml(fmt)).view(np.uint8)


def torch_encode(x: np.ndarray, fmt: Fp8Format) -> np.ndarray:
    return torch.from_numpy(x).to(th(fmt)).view(torch.uint8).numpy()


def same_codes(got: np.ndarray, want: np.ndarray, fmt: Fp8Format) -> np.ndarray:
    """Where two encodings agree: equal codes, or both NaN (payloads differ between libraries)."""
    return (got == want) | (np.isnan(decode(got, fmt)) & np.isnan(decode(want, fmt)))


def f32_sweep() -> np.ndarray:
    """Every float32 sign/exponent/top-7-mantissa pattern, with low bits 0, 1, 0x8000 and 0xFFFF.

    Every midpoint between neighbouring 8-bit values has its low 16 bits zero,
    so each tie and both of its float32 neighbours are in here; so are zeros,
    subnormals, infinities and NaNs.
    """
    hi = np.arange(1 << 16, dtype=np.uint32) << 16
    low = np.array([0, 1, 0x8000, 0xFFFF], dtype=np.uint32)
    return (hi[:, None] | low[None, :]).ravel().view(np.float32)


SWEEP = f32_sweep()


# ---- the table -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ALL)
def test_table_facts_match_ml_dtypes_finfo(fmt: Fp8Format) -> None:
    s, info = fmt.spec, ml_dtypes.finfo(ml(fmt))
    assert s.max_finite == float(info.max) == decode(np.uint8(s.max_code), fmt)
    assert s.min_normal == float(info.smallest_normal)
    assert s.min_subnormal == float(info.smallest_subnormal)
    assert s.mantissa_bits == info.nmant
    assert s.exponent_bits == info.nexp
    assert s.emax == info.maxexp - 1
    assert decode(np.uint8(s.bias << s.mantissa_bits), fmt) == 1.0  # the bias places 1.0
    nan = np.isnan(CODES.view(ml(fmt)).astype(np.float32))
    inf = np.isinf(CODES.view(ml(fmt)).astype(np.float32))
    assert tuple(np.nonzero(nan)[0]) == s.nan_codes
    assert tuple(np.nonzero(inf)[0]) == s.inf_codes
    assert s.has_inf == bool(s.inf_codes)
    assert s.fnuz == (s.nan_codes == (0x80,))
    assert s.fnuz == (not s.ocp)
    assert s.has_zero == (fmt is not Fp8Format.E8M0FNU)


def test_format_names_parse_from_every_spelling() -> None:
    for fmt in ALL:
        for spelling in (fmt, fmt.value, fmt.dtype_name, th(fmt), np.dtype(ml(fmt)), ml(fmt)):
            assert fp8_format(spelling) is fmt
    with pytest.raises(ValueError, match=r"^dtype: unknown 8-bit format 'e4m3' \(known: e4m3fn,"):
        fp8_format("e4m3")
    with pytest.raises(ValueError, match=r"^scale: unknown 8-bit format"):
        fp8_format(torch.float16, "scale")


def test_every_target_has_its_formats() -> None:
    assert {t: target_fp8(t) for t in TARGETS}.keys() == TARGETS.keys()
    for name in TARGETS:
        t = target_fp8(name)
        assert t.elements and all(not f.is_scale for f in t.elements)
        # MX block scaling is OCP's: its targets take the OCP element formats only.
        if t.mx_scale is not None:
            assert t.mx_scale.is_scale and all(f.spec.ocp for f in t.elements)
    assert target_fp8("cuda:90").mx_scale is None
    assert target_fp8("gfx942").elements == (Fp8Format.E4M3FNUZ, Fp8Format.E5M2FNUZ)
    with pytest.raises(ValueError, match="unknown target 'sm_100'"):
        target_fp8("sm_100")


# ---- decode ----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ALL)
def test_decode_all_codes_bit_exact_against_ml_dtypes(fmt: Fp8Format) -> None:
    for dtype, bits in ((np.float32, np.uint32), (np.float64, np.uint64)):
        got = decode(CODES, fmt, dtype)
        want = CODES.view(ml(fmt)).astype(dtype)
        np.testing.assert_array_equal(got.view(bits), want.view(bits))  # NaN signs, -0 included


@pytest.mark.parametrize("fmt", ALL)
def test_decode_all_codes_against_torch(fmt: Fp8Format) -> None:
    got = decode(CODES, fmt, np.float32)
    want = torch.from_numpy(CODES).view(th(fmt)).float().numpy()
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)  # torch's NaN payloads differ
    np.testing.assert_array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))


def test_decode_refuses_wide_codes() -> None:
    with pytest.raises(TypeError, match="codes: expected 1-byte codes, got dtype uint16"):
        decode(np.zeros(3, np.uint16), Fp8Format.E4M3FN)
    # any 1-byte dtype is read as its bits
    x = np.array([1.5, -2.0], dtype=ml_dtypes.float8_e4m3fn)
    np.testing.assert_array_equal(decode(x, "e4m3fn"), [1.5, -2.0])


# ---- encode ----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ALL)
def test_every_finite_code_round_trips(fmt: Fp8Format) -> None:
    values = decode(CODES, fmt)
    finite = np.isfinite(values)
    for mode in Overflow:
        for dtype in (np.float64, np.float32):
            got = encode(values[finite].astype(dtype), fmt, overflow=mode)
            np.testing.assert_array_equal(got, CODES[finite])


@pytest.mark.parametrize("fmt", ALL)
def test_encode_sweep_matches_ml_dtypes_nonsaturating(fmt: Fp8Format) -> None:
    got = encode(SWEEP, fmt, overflow=Overflow.NONSATURATE)
    ok = same_codes(got, ml_encode(SWEEP, fmt), fmt)
    assert ok.all(), SWEEP[~ok][:8]


@pytest.mark.parametrize("fmt", ALL)
def test_encode_sweep_matches_torch_cast(fmt: Fp8Format) -> None:
    """The default mode is torch's cast; torch differs only on e8m0's zero and negatives."""
    got = encode(SWEEP, fmt)
    want = torch_encode(SWEEP, fmt)
    mismatch = got != want
    if fmt is Fp8Format.E8M0FNU:
        # torch encodes |x| (and 0 as 2**-127); these have no e8m0 value, so NaN here.
        theirs = mismatch & ~np.isnan(SWEEP)
        assert (got[theirs] == 0xFF).all()
        assert (np.signbit(SWEEP[theirs]) | (SWEEP[theirs] == 0)).all()
        magnitude = np.where(SWEEP[theirs] == 0, 2.0**-127, np.abs(SWEEP[theirs]))
        np.testing.assert_array_equal(want[theirs], encode(magnitude, fmt))
        mismatch &= ~theirs
    nan = np.isnan(SWEEP)
    assert not (mismatch & ~nan).any(), SWEEP[mismatch & ~nan][:8]
    assert np.isnan(decode(got[nan], fmt)).all() and np.isnan(decode(want[nan], fmt)).all()


@pytest.mark.parametrize("fmt", ELEMENTS)
def test_every_tie_goes_to_the_even_code(fmt: Fp8Format) -> None:
    grid = decode(CODES[: fmt.spec.max_code + 1], fmt)
    mids = (grid[:-1] + grid[1:]) / 2
    codes = encode(np.concatenate([mids, -mids]), fmt)
    lower = np.arange(len(mids))
    even = np.where(lower % 2 == 0, lower, lower + 1).astype(np.uint8)
    np.testing.assert_array_equal(codes[: len(mids)], even)
    negzero = 0x00 if fmt.spec.fnuz else 0x80
    np.testing.assert_array_equal(codes[len(mids) :], np.where(even == 0, negzero, even | 0x80))


def test_conversion_conventions_pinned() -> None:
    """torch saturates e4m3fn (ml_dtypes gives NaN), e5m2 overflows to inf, fnuz to 0x80."""
    x = np.array([448.0, 464.0, 464.00003, 480.0, 1e30, np.inf, -np.inf, -1e30], np.float32)
    e4 = Fp8Format.E4M3FN
    assert encode(x, e4).tolist() == [0x7E, 0x7E, 0x7E, 0x7E, 0x7E, 0x7E, 0xFE, 0xFE]
    assert torch_encode(x, e4).tolist() == encode(x, e4).tolist()
    nonsat = [0x7E, 0x7E, 0x7F, 0x7F, 0x7F, 0x7F, 0xFF, 0xFF]
    assert encode(x, e4, overflow="nonsaturate").tolist() == nonsat
    assert ml_encode(x, e4).tolist() == encode(x, e4, overflow="nonsaturate").tolist()
    y = np.array([57344.0, 61439.996, 61440.0, np.inf, -1e30], np.float32)
    assert encode(y, Fp8Format.E5M2).tolist() == [0x7B, 0x7B, 0x7C, 0x7C, 0xFC]
    assert encode(y, Fp8Format.E5M2FNUZ).tolist() == [0x7F, 0x7F, 0x80, 0x80, 0x80]
    assert encode(np.float32(248.0), Fp8Format.E4M3FNUZ) == 0x80  # tie past 240: overflow
    assert encode(np.float32(-0.0), Fp8Format.E4M3FNUZ) == 0x00
    assert encode(np.float32(-0.0), e4) == 0x80
    assert encode(np.array([np.nan, -np.nan]), e4).tolist() == [0x7F, 0xFF]
    e8 = Fp8Format.E8M0FNU
    got = encode(
        np.array([1.5, 3.0, 0.75, 1.4999, 2.0**-127 * 1.01, 2.0**-128, 2.0**127 * 1.5]), e8
    )
    assert got.tolist() == [128, 129, 127, 127, 1, 0, 0xFF]
    assert encode(np.float32(np.inf), e8, overflow="saturate") == 0xFE


@pytest.mark.parametrize("fmt", ALL)
def test_saturate_is_clamp_then_encode(fmt: Fp8Format) -> None:
    m = fmt.spec.max_finite
    x = SWEEP[~np.isnan(SWEEP)]
    if fmt.is_scale:
        x = x[x > 0]
    got = encode(x, fmt, overflow=Overflow.SATURATE)
    np.testing.assert_array_equal(got, encode(np.clip(x, -m, m), fmt, overflow="nonsaturate"))


f32_bits = st.integers(0, 2**32 - 1).map(lambda b: np.array([b], np.uint32).view(np.float32)[0])
f32_values = st.one_of(
    f32_bits,
    st.floats(width=32, allow_nan=True, allow_infinity=True),
    st.floats(-600.0, 600.0, width=32),
    st.floats(-(2.0**-7), 2.0**-7, width=32),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(f32_values, min_size=1, max_size=64), st.sampled_from(ALL))
def test_encode_random_float32_matches_ml_dtypes(values: list[float], fmt: Fp8Format) -> None:
    x = np.array(values, dtype=np.float32)
    got = encode(x, fmt, overflow=Overflow.NONSATURATE)
    assert same_codes(got, ml_encode(x, fmt), fmt).all(), x
    # ties: the midpoint of the two nearest codes, and its float32 neighbours
    finite = x[np.isfinite(x)]
    if fmt.is_scale or finite.size == 0:
        return
    grid = decode(CODES[: fmt.spec.max_code + 1], fmt)
    i = np.clip(np.searchsorted(grid, np.abs(finite)), 1, len(grid) - 1)
    mid = ((grid[i - 1] + grid[i]) / 2 * np.sign(finite)).astype(np.float32)
    for t in (mid, np.nextafter(mid, np.float32(np.inf)), np.nextafter(mid, np.float32(-np.inf))):
        assert same_codes(encode(t, fmt, overflow="nonsaturate"), ml_encode(t, fmt), fmt).all(), t


@pytest.mark.parametrize("fmt", ELEMENTS)
def test_spacing_is_the_gap_to_the_next_code(fmt: Fp8Format) -> None:
    grid = decode(CODES[: fmt.spec.max_code + 1], fmt)
    np.testing.assert_array_equal(spacing(grid[:-1], fmt), np.diff(grid))
    np.testing.assert_array_equal(spacing(-grid[:-1], fmt), np.diff(grid))
    with pytest.raises(ValueError, match="fmt: spacing is defined for the element formats"):
        spacing(1.0, Fp8Format.E8M0FNU)


def test_encode_refuses_non_numbers() -> None:
    with pytest.raises(TypeError, match="values: expected real numbers, got dtype <U1"):
        encode(np.array(["a"]), Fp8Format.E5M2)
    with pytest.raises(
        ValueError, match=r"^overflow: expected one of saturate, nonsaturate, got 'nonsat'"
    ):
        encode(1.0, Fp8Format.E5M2, overflow="nonsat")


def test_formats_table_is_complete() -> None:
    assert set(FORMATS) == set(Fp8Format)


def test_core_modules_import_neither_torch_nor_ml_dtypes() -> None:
    """The core layer is pure Python and numpy: every layer (and the model) may use it."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "python" / "gemm_opt" / "core"
    for name in ("fp8.py", "scaling.py"):
        tree = ast.parse((root / name).read_text())
        imported = {
            alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
            for alias in node.names
        } | {
            (node.module or "").split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
        }  # fmt: skip
        assert imported <= {"__future__", "dataclasses", "enum", "functools", "sys", "typing",
                            "math", "collections", "numpy", "gemm_opt"}, (name, imported)  # fmt: skip
