"""MXFP8: ``tile.scaled_wmma`` in the model (against the float64 reference of
:mod:`gemm_opt.core.scaling`), and 8-bit element types in the model's memory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gemm_opt.core.fp8 import Fp8Format, decode, encode
from gemm_opt.core.scaling import MX_BLOCK, scaled_reference
from gemm_opt.model.interpreter import Interpreter, bf16_round

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gemm_mxfp8_gfx1250.mlir"
BLOCK = 128


def _run(a, b, sa, sb_nk):
    """Run the example kernel on codes ``a`` (M, K), ``b`` (K, N), scales ``sa`` (M, K/32)
    and ``sb_nk`` (N, K/32); returns C (float32 holding bf16 values)."""
    m, k = a.shape
    n = b.shape[1]
    c = np.full((m, n), np.nan, dtype=np.float32)
    grid = (-(-m // BLOCK), -(-n // BLOCK))
    Interpreter(EXAMPLE.read_text()).run([a, b, sa, sb_nk, c, m, n, k, k, n, n], grid)
    return c


def _codes(rng, values, shape):
    return encode(rng.choice(values, size=shape), Fp8Format.E4M3FN)


@pytest.mark.parametrize(("m", "n", "k"), [(128, 128, 128), (200, 136, 288), (64, 130, 32)])
def test_example_kernel_is_exact_where_fp32_sums_are(m, n, k):
    # Integer elements and scales 2**0..2**2: every partial sum is an integer below
    # 2**24, so fp32 accumulation is exact and only the bf16 store rounds.
    rng = np.random.default_rng(m + n + k)
    a = _codes(rng, np.arange(-8, 9), (m, k))
    b = _codes(rng, np.arange(-8, 9), (k, n))
    sa = rng.integers(127, 130, size=(m, k // MX_BLOCK), dtype=np.uint8)
    sb = rng.integers(127, 130, size=(k // MX_BLOCK, n), dtype=np.uint8)  # the API's (K/32, N)
    ref = scaled_reference(a, b, "e4m3fn", sa, sb, "mx32")
    c = _run(a, b, sa, np.ascontiguousarray(sb.T))
    np.testing.assert_array_equal(c, bf16_round(ref.astype(np.float32)))


def test_example_kernel_full_range_codes():
    # Every finite e4m3 code and scales over 2**-8..2**8: within fp32 accumulation
    # (per K tile) and one bf16 rounding of the float64 reference.
    rng = np.random.default_rng(7)
    finite = np.array([c for c in range(256) if c not in (0x7F, 0xFF)], dtype=np.uint8)
    m, n, k = 128, 128, 256
    a = rng.choice(finite, size=(m, k))
    b = rng.choice(finite, size=(k, n))
    sa = rng.integers(119, 136, size=(m, k // MX_BLOCK), dtype=np.uint8)
    sb = rng.integers(119, 136, size=(k // MX_BLOCK, n), dtype=np.uint8)
    ref = scaled_reference(a, b, "e4m3fn", sa, sb, "mx32")
    c = _run(a, b, sa, np.ascontiguousarray(sb.T))
    scale = np.abs(decode(a, "e4m3fn")) @ np.abs(decode(b, "e4m3fn"))
    bound = 2.0**-8 * np.abs(ref) + 2.0**-20 * scale * 2.0**16
    assert np.all(np.abs(c - ref) <= bound)


def test_nan_scale_poisons_its_row_only():
    # e8m0's 0xFF is NaN: A's scale (row 5, K block 1) makes all of row 5 NaN.
    rng = np.random.default_rng(3)
    m = n = k = 128
    a = _codes(rng, np.arange(-4, 5), (m, k))
    b = _codes(rng, np.arange(-4, 5), (k, n))
    sa = np.full((m, k // MX_BLOCK), 127, dtype=np.uint8)
    sb = np.full((n, k // MX_BLOCK), 127, dtype=np.uint8)
    sa[5, 1] = 0xFF
    c = _run(a, b, sa, sb)
    assert np.isnan(c[5]).all()
    rest = np.delete(c, 5, axis=0)
    ref = np.delete(decode(a, "e4m3fn") @ decode(b, "e4m3fn"), 5, axis=0)
    np.testing.assert_array_equal(rest, bf16_round(ref.astype(np.float32)))


def test_scales_apply_per_32_elements_of_k():
    # One element of A and one of B non-zero: C[0, 0] is their product times
    # exactly the two scales covering K index 70 (block 2), none other.
    m = n = k = 128
    a = np.zeros((m, k), dtype=np.uint8)
    b = np.zeros((k, n), dtype=np.uint8)
    a[0, 70] = encode(np.array(1.5), "e4m3fn")
    b[70, 0] = encode(np.array(-3.0), "e4m3fn")
    sa = np.full((m, k // MX_BLOCK), 127, dtype=np.uint8)
    sb = np.full((n, k // MX_BLOCK), 127, dtype=np.uint8)
    sa[0, 2], sb[0, 2] = 130, 125  # 2**3 and 2**-2
    sa[0, 1] = sb[0, 3] = 0xFF  # NaN scales of blocks whose elements ... still poison
    c = _run(a, b, sa, sb)
    assert np.isnan(c[0, 0])
    sa[0, 1] = sb[0, 3] = 127
    c = _run(a, b, sa, sb)
    assert c[0, 0] == 1.5 * -3.0 * 2.0**3 * 2.0**-2
    assert np.count_nonzero(c) == 1


def test_fp8_pointer_takes_codes_or_one_byte_arrays_only():
    from gemm_opt.model.errors import ModelError

    m = n = k = 128
    ones = np.full((m, k), 0x38, dtype=np.uint8)  # 1.0 in e4m3fn
    scales = np.full((m, k // MX_BLOCK), 127, dtype=np.uint8)
    c = np.zeros((m, n), dtype=np.float32)
    with pytest.raises(ModelError, match="points to f8E4M3FN"):
        Interpreter(EXAMPLE.read_text()).run(
            [ones.astype(np.float32), ones, scales, scales, c, m, n, k, k, n, n], (1, 1)
        )


# ---- the op itself, layout-free, on every code --------------------------------------

#: C += (A x SA) @ (B x SB) on one 16x16x64 block: A e4m3fn, B e5m2 (the two OCP
#: formats, mixed), scales and C loaded and stored as they are.
MIXED_KERNEL = """
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx950"} {
  func.func @k(%a: !tile.ptr<f8E4M3FN>, %sa: !tile.ptr<f8E8M0FNU>, %b: !tile.ptr<f8E5M2>,
               %sb: !tile.ptr<f8E8M0FNU>, %c: !tile.ptr<f32>) {
    %z = arith.constant 0 : i32
    %i2 = arith.constant 2 : i32
    %i16 = arith.constant 16 : i32
    %i64 = arith.constant 64 : i32
    %l2 = arith.constant 2 : i64
    %l16 = arith.constant 16 : i64
    %l64 = arith.constant 64 : i64
    %one = arith.constant 1 : i64
    %ta = "tile.load_block"(%a, %i16, %i64, %l64, %one, %z, %z) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f8E4M3FN>, i32, i32, i64, i64, i32, i32) -> tensor<16x64xf8E4M3FN>
    %tsa = "tile.load_block"(%sa, %i16, %i2, %l2, %one, %z, %z) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f8E8M0FNU>, i32, i32, i64, i64, i32, i32) -> tensor<16x2xf8E8M0FNU>
    %tb = "tile.load_block"(%b, %i64, %i16, %l16, %one, %z, %z) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f8E5M2>, i32, i32, i64, i64, i32, i32) -> tensor<64x16xf8E5M2>
    %tsb = "tile.load_block"(%sb, %i16, %i2, %l2, %one, %z, %z) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f8E8M0FNU>, i32, i32, i64, i64, i32, i32) -> tensor<16x2xf8E8M0FNU>
    %tc = "tile.load_block"(%c, %i16, %i16, %l16, %one, %z, %z) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32) -> tensor<16x16xf32>
    %d = "tile.scaled_wmma"(%ta, %tsa, %tb, %tsb, %tc) : (tensor<16x64xf8E4M3FN>, tensor<16x2xf8E8M0FNU>, tensor<64x16xf8E5M2>, tensor<16x2xf8E8M0FNU>, tensor<16x16xf32>) -> tensor<16x16xf32>
    "tile.store_block"(%c, %i16, %i16, %l16, %one, %z, %z, %d) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, tensor<16x16xf32>) -> ()
    return
  }
}
"""


def _arrays(shape):
    """Any bytes, as uint8 codes of ``shape``."""
    n = int(np.prod(shape))
    return st.binary(min_size=n, max_size=n).map(
        lambda raw: np.frombuffer(raw, dtype=np.uint8).reshape(shape).copy()
    )


@settings(max_examples=60, deadline=None)
@given(
    a=_arrays((16, 64)),
    b=_arrays((64, 16)),
    sa=_arrays((16, 2)),
    sb=_arrays((16, 2)),
    seed=st.integers(0, 2**32 - 1),
)
def test_scaled_wmma_equals_the_float64_reference_on_any_codes(a, b, sa, sb, seed):
    # Any byte: NaN and infinite elements, NaN scales (0xFF), the smallest (0x00).
    c0 = np.random.default_rng(seed).normal(scale=1e3, size=(16, 16)).astype(np.float32)
    out = c0.copy()
    Interpreter(MIXED_KERNEL).run([a, sa, b, sb, out])
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf, NaN scales
        ref = scaled_reference(a, b, ("e4m3fn", "e5m2"), sa, np.ascontiguousarray(sb.T), "mx32")
        want = (ref + c0.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(out, want)


def test_builder_makes_a_verified_op():
    from gemm_opt.core.ext_compat import ir
    from gemm_opt.dialect import make_context
    from gemm_opt.dialect.scaled_mma import ScaledWmmaOp

    with make_context(), ir.Location.unknown():
        module = ir.Module.create()
        f8, e8, f32 = (ir.Type.parse(t) for t in ("f8E4M3FN", "f8E8M0FNU", "f32"))
        types = [
            ir.RankedTensorType.get(s, t)
            for s, t in (
                ([32, 64], f8),
                ([32, 2], e8),
                ([64, 16], f8),
                ([16, 2], e8),
                ([32, 16], f32),
            )
        ]
        with ir.InsertionPoint(module.body):
            fn = ir.Operation.create(
                "func.func",
                attributes={
                    "sym_name": ir.StringAttr.get("f"),
                    "sym_visibility": ir.StringAttr.get("private"),
                    "function_type": ir.TypeAttr.get(ir.FunctionType.get(types, [types[-1]])),
                },
                regions=1,
            )
        block = fn.regions[0].blocks.append(*types)
        with ir.InsertionPoint(block):
            op = ScaledWmmaOp.build(*block.arguments)
            ir.Operation.create("func.return", operands=[op.result])
        assert module.operation.verify()
        assert op.result.type == types[-1]
