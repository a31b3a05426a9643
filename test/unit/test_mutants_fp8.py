"""Every code of every FP8 format (found by ``benchmarks/mutation.py`` in
``gemm_opt.core.fp8``): the decode table against ``ml_dtypes``, sign and NaN
included, every finite value encoding back to its own code, the shared
tables read-only, rounding at the top of each format's range, the inputs
``encode`` refuses, and a format named by a dtype object's ``.name``."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from gemm_opt.core import fp8
from gemm_opt.core.fp8 import Fp8Format, decode, encode

ML = {
    Fp8Format.E4M3FN: ml_dtypes.float8_e4m3fn,
    Fp8Format.E5M2: ml_dtypes.float8_e5m2,
    Fp8Format.E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    Fp8Format.E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
    Fp8Format.E8M0FNU: ml_dtypes.float8_e8m0fnu,
}
CODES = np.arange(256, dtype=np.uint8)


@pytest.mark.parametrize("fmt", list(ML))
def test_every_code_decodes_as_ml_dtypes_does(fmt: Fp8Format) -> None:
    want = CODES.view(ML[fmt]).astype(np.float64)
    got = decode(CODES, fmt)
    assert got.shape == (256,)
    np.testing.assert_array_equal(got, want)  # NaN where NaN
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))  # NaN's sign too


@pytest.mark.parametrize("fmt", list(ML))
def test_every_finite_value_encodes_to_its_code(fmt: Fp8Format) -> None:
    values = decode(CODES, fmt)
    finite = np.isfinite(values)
    back = encode(values[finite], fmt)
    np.testing.assert_array_equal(decode(back, fmt), values[finite])


@pytest.mark.parametrize("fmt", list(ML))
def test_the_shared_tables_are_read_only(fmt: Fp8Format) -> None:
    assert fp8._decode_table(fmt).shape == (256,)
    assert not fp8._decode_table(fmt).flags.writeable
    assert not fp8._positive_grid(fmt).flags.writeable


@pytest.mark.parametrize("fmt", [f for f in ML if f.spec.signed])
def test_rounding_at_and_past_the_largest_finite_value_matches_ml_dtypes(fmt: Fp8Format) -> None:
    """float32 inputs (``ml_dtypes`` rounds them once) around the midpoint between
    the largest finite value and one step past it: that step takes part in
    rounding, ties go to the even code, and overflow saturates or not."""
    s = fmt.spec
    top = np.float32(s.max_finite)
    step = np.float32(np.ldexp(1.0, s.emax - s.mantissa_bits))  # ulp(max_finite)
    mid = np.float32(top + step / 2)
    v = np.array(
        [top, np.nextafter(mid, top), mid, np.nextafter(mid, np.inf), top + step, 2 * top, np.inf],
        dtype=np.float32,
    )
    v = np.concatenate([v, -v])
    want = v.astype(ML[fmt]).view(np.uint8)  # ml_dtypes does not saturate
    np.testing.assert_array_equal(encode(v, fmt, overflow="nonsaturate"), want)
    sign = np.signbit(v).astype(np.uint8) << 7
    np.testing.assert_array_equal(encode(v, fmt, overflow="saturate"), s.max_code | sign)


@pytest.mark.parametrize(
    "values",
    [
        np.array([1 + 1j]),  # a complex value would lose its imaginary part
        np.array([True, False]),
        np.array([1.0, "2"], dtype=object),
        np.zeros(2, dtype=[("x", np.float32)]),
    ],
    ids=["complex", "bool", "object", "structured"],
)
def test_encode_refuses_what_is_not_real_numbers(values: np.ndarray) -> None:
    with pytest.raises(TypeError, match=r"^values: expected real numbers"):
        encode(values, Fp8Format.E4M3FN)


def test_a_format_is_read_from_a_dtype_object_by_its_name() -> None:
    """A dtype object names its format by ``.name`` (what ``str()`` gives may differ)."""

    class Named:
        name = "float8_e5m2"

        def __str__(self) -> str:
            return "a dtype"

    assert fp8.fp8_format(Named()) is Fp8Format.E5M2
