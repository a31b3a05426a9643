"""TDM copies in the model at their edges (found by ``benchmarks/mutation.py``
in ``gemm_opt.model.tdm``).

One warp copies a 4x8 f32 block of an 8x8 array, described as ``m`` rows
of ``n`` columns, from (row, col) into shared memory and stores it: rows
and columns past the described tensor are zero filled, and a tensor with
no rows or no columns (an empty one) fills the whole block with zeros.
The same copy of a bf16 tensor carries NaN and infinities through and
refuses a value bf16 cannot hold.
"""

from __future__ import annotations

import numpy as np
import pytest

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import edit, make_context
from gemm_opt.model.interpreter import ModelError, run_function

COPY = """#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 1>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 1, 1>, order = array<i64: 1, 0>}>
!d = !tile.tensor_desc<tensor<4x8xf32, #s>>
!b = !tile.shared<tensor<4x8xf32, #s>>
module attributes {tile.num_warps = 1 : i32, tile.target = "gfx1250"} {
  func.func @k(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %m: i32, %n: i32, %ld: i64, %r: i32, %c: i32) {
    %c0 = arith.constant 0 : i32
    %c4 = arith.constant 4 : i32
    %c8 = arith.constant 8 : i32
    %c8l = arith.constant 8 : i64
    %one = arith.constant 1 : i64
    %d0 = "tile.make_tensor_descriptor"(%x, %m, %n, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64) -> !d
    %d = "tile.update_tensor_descriptor"(%d0, %r, %c) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!d, i32, i32) -> !d
    %buf = "tile.local_alloc"() : () -> !b
    "tile.async_tdm_copy_global_to_local"(%d, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!d, !b) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %t = "tile.local_load"(%buf) : (!b) -> tensor<4x8xf32, #bl>
    "tile.store_block"(%y, %c4, %c8, %c8l, %one, %c0, %c0, %t) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, tensor<4x8xf32, #bl>) -> ()
    return
  }
}"""
X = np.arange(1, 65, dtype=np.float32).reshape(8, 8)


def _copy(m: int, n: int, r: int = 0, c: int = 0) -> np.ndarray:
    y = np.full((4, 8), np.nan, np.float32)
    args = {"x": X.copy(), "y": y, "m": m, "n": n, "ld": 8, "r": r, "c": c}
    run_function(COPY, "k", args)
    return y


@pytest.mark.parametrize(("m", "n", "r", "c"), [(8, 8, 0, 0), (6, 8, 3, 0), (8, 5, 2, 1)])
def test_a_copy_zero_fills_past_the_tensor(m: int, n: int, r: int, c: int) -> None:
    want = np.zeros((4, 8), np.float32)
    rows, cols = max(0, min(4, m - r)), max(0, min(8, n - c))
    want[:rows, :cols] = X[r : r + rows, c : c + cols]
    np.testing.assert_array_equal(_copy(m, n, r, c), want)


@pytest.mark.parametrize(("m", "n"), [(0, 8), (8, 0), (0, 0), (0, 100)])
def test_an_empty_tensor_fills_the_block_with_zeros(m: int, n: int) -> None:
    """Whatever its other extent (no row of 100 columns is read)."""
    np.testing.assert_array_equal(_copy(m, n), np.zeros((4, 8), np.float32))


@pytest.mark.parametrize(("m", "n"), [(1, 8), (8, 1), (1, 1)])
def test_one_row_or_column_is_copied(m: int, n: int) -> None:
    want = np.zeros((4, 8), np.float32)
    want[:m, :n] = X[: min(m, 4), :n]
    np.testing.assert_array_equal(_copy(m, n), want)


def test_a_zero_row_stride_reads_the_first_row_again() -> None:
    y = np.full((4, 8), np.nan, np.float32)
    run_function(COPY, "k", {"x": X.copy(), "y": y, "m": 8, "n": 8, "ld": 0, "r": 0, "c": 0})
    np.testing.assert_array_equal(y, np.repeat(X[:1], 4, axis=0))


def test_a_negative_row_stride_is_refused() -> None:
    y = np.full((4, 8), np.nan, np.float32)
    with pytest.raises(ModelError, match=r"negative strides \[-8, 1\] are not modelled"):
        run_function(COPY, "k", {"x": X.copy(), "y": y, "m": 8, "n": 8, "ld": -8, "r": 0, "c": 0})


@pytest.mark.parametrize(("m", "n", "last"), [(9, 8, 71), (8, 9, 64)])
def test_a_tensor_one_past_the_array_is_refused(m: int, n: int, last: int) -> None:
    """8 x 8 fits the 64-element array exactly; one more row or column does not."""
    with pytest.raises(ModelError, match=f"reaches element {last} of a 64-element array"):
        _copy(m, n)


@pytest.mark.parametrize(("r", "c"), [(-1, 0), (0, -2)])
def test_a_copy_from_negative_coordinates_is_refused(r: int, c: int) -> None:
    with pytest.raises(ModelError, match=r"warp 0 copies from negative coordinates"):
        _copy(8, 8, r, c)


def _bf16_copy(x: np.ndarray) -> np.ndarray:
    """The copy of a bf16 tensor (``x``'s float32 values, each a bf16 value)."""
    with make_context():
        module = ir.Module.parse(COPY)
        edit.retype_elements(module, ir.F32Type.get(), ir.BF16Type.get())
        y = np.full((4, 8), -1.0, np.float32)
        run_function(
            module,
            "k",
            [x, y, 8, 8, 8, 0, 0],
            arg_names=["x", "y", "m", "n", "ld", "r", "c"],
        )
    return y


def test_a_bf16_copy_carries_nan_and_infinities() -> None:
    x = X.copy()
    x[0, 1], x[1, 2], x[2, 3] = np.nan, np.inf, -np.inf
    np.testing.assert_array_equal(_bf16_copy(x), x[:4])  # NaN where x has NaN


def test_a_bf16_copy_of_a_value_bf16_cannot_hold_is_refused() -> None:
    x = X.copy()
    x[3, 7] = 1.0 + 2.0**-10  # 7 fraction bits: between two bf16 values
    with pytest.raises(ModelError, match="'x' holds values that are not bf16"):
        _bf16_copy(x)
