"""Every code of every FP8 format (found by ``benchmarks/mutation.py`` in
``gemm_opt.core.fp8``): the decode table against ``ml_dtypes``, sign and NaN
included, every finite value encoding back to its own code, and the shared
tables read-only."""

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
