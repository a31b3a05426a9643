"""TDM stores in the model at their edges (found by ``benchmarks/mutation.py``
in ``gemm_opt.model.tdm``).

One warp copies a 4x8 f32 block of an 8x8 array ``x`` into shared memory and
stores it with a second descriptor into an 8x8 array ``y`` at ``(r, c)``, the
stored tensor described as ``m`` rows of ``n`` columns with row stride
``ld``: only the block's elements inside the described tensor are written, a
store reaching outside ``y`` is refused, the buffer is free to overwrite once
the store retired, and two programs storing the same elements race.
"""

from __future__ import annotations

import numpy as np
import pytest

from gemm_opt.model.interpreter import ModelError, run_function

STORE = """#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 1>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 1, 1>, order = array<i64: 1, 0>}>
!d = !tile.tensor_desc<tensor<4x8xf32, #s>>
!b = !tile.shared<tensor<4x8xf32, #s>>
module attributes {tile.num_warps = 1 : i32, tile.target = "gfx1250"} {
  func.func @k(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %m: i32, %n: i32, %ld: i64, %r: i32, %c: i32) {
    %c0 = arith.constant 0 : i32
    %c8 = arith.constant 8 : i32
    %c8l = arith.constant 8 : i64
    %one = arith.constant 1 : i64
    %dx = "tile.make_tensor_descriptor"(%x, %c8, %c8, %c8l, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64) -> !d
    %dy0 = "tile.make_tensor_descriptor"(%y, %m, %n, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64) -> !d
    %dy = "tile.update_tensor_descriptor"(%dy0, %r, %c) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!d, i32, i32) -> !d
    %buf = "tile.local_alloc"() : () -> !b
    "tile.async_tdm_copy_global_to_local"(%dx, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!d, !b) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    "tile.async_tdm_copy_local_to_global"(%dy, %buf) : (!d, !b) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    "tile.async_tdm_copy_global_to_local"(%dx, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!d, !b) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}"""
X = np.arange(1, 65, dtype=np.float32).reshape(8, 8)
UNTOUCHED = -1.0


def _store(m: int, n: int, r: int, c: int, ld: int = 8, grid: int = 1) -> np.ndarray:
    y = np.full((8, 8), UNTOUCHED, np.float32)
    args = {"x": X.copy(), "y": y, "m": m, "n": n, "ld": ld, "r": r, "c": c}
    run_function(STORE, "k", args, grid=(grid, 1, 1))
    return y


@pytest.mark.parametrize(
    ("m", "n", "r", "c"),
    [(8, 8, 0, 0), (8, 8, 2, 0), (8, 8, 1, 3), (6, 8, 3, 0), (8, 5, 2, 1), (8, 8, -1, 0),
     (8, 8, 0, -3), (8, 8, -2, -1), (3, 4, 1, 2), (0, 8, 0, 0), (8, 8, 4, 0)],
)  # fmt: skip
def test_a_store_writes_only_the_block_inside_the_tensor(m: int, n: int, r: int, c: int) -> None:
    """Rows and columns of the block before 0 or at and past ``(m, n)`` stay untouched."""
    want = np.full((8, 8), UNTOUCHED, np.float32)
    for i in range(4):
        for j in range(8):
            if 0 <= r + i < m and 0 <= c + j < n:
                want[r + i, c + j] = X[i, j]
    np.testing.assert_array_equal(_store(m, n, r, c), want)


@pytest.mark.parametrize(("m", "n", "r", "c"), [(9, 1, 5, 0), (9, 8, 5, 7), (12, 8, 8, 0)])
def test_a_store_reaching_past_the_array_is_refused(m: int, n: int, r: int, c: int) -> None:
    """``(9, 1, 5, 0)`` reaches exactly element 64 of the 64-element ``y`` (one past)."""
    with pytest.raises(ModelError, match="the store reaches outside the 'y' array"):
        _store(m, n, r, c)


def test_a_store_reaching_before_the_array_is_refused() -> None:
    """A negative row stride puts the block's later rows before element 0."""
    with pytest.raises(ModelError, match="the store reaches outside the 'y' array"):
        _store(8, 8, 0, 0, ld=-8)


def test_two_programs_storing_the_same_elements_race() -> None:
    with pytest.raises(ModelError, match="write racing a write of another program"):
        _store(8, 8, 0, 0, grid=2)
