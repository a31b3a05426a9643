"""TDM stores in the model at their edges (found by ``benchmarks/mutation.py``
in ``gemm_opt.model.tdm``).

One warp copies a 4x8 f32 block of an 8x8 array ``x`` into shared memory and
stores it with a second descriptor into an 8x8 array ``y`` at ``(r, c)``, the
stored tensor described as ``m`` rows of ``n`` columns with row stride
``ld``: only the block's elements inside the described tensor are written, a
store reaching outside ``y`` is refused, the buffer is free to overwrite once
the store retired, and two programs storing the same elements race. A TDM copy over a ring
one slot of which an MMA still reads is a race; no store of one slot verifies alongside such
a copy, so a copy's region is all read by stores or none.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gemm_opt.core.ext_compat import ir
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


# ---- a TDM copy over a slot an MMA still reads ---------------------------------------------

#: ``@k(%x)`` of 4 warps: an async MMA reads slot 1 of a two-slot ring, its
#: wait retires it or not, then one TDM copy by warp 0 alone (``warp_used_hint
#: = 1``) fills both slots (a 2x64x32 block of ``x`` read twice: plane stride 0),
#: so the one warp's destination holds a slot that is read and one that is not.
RING = """
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
#s3 = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 2, 1, 0>}>
#acc = #tile.wmma_layout<{instr_shape = array<i64: 16, 16, 32>, transposed = true, version = 3 : i64, warps_per_cta = array<i64: 4, 1>}>
!ring = !tile.shared<tensor<2x64x32xf16, #s3>>
!slot = !tile.shared<tensor<64x32xf16, #s3>>
!bbuf = !tile.shared<tensor<32x64xf16, #s>>
!d3 = !tile.tensor_desc<tensor<2x64x32xf16, #s3>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250", tile.threads_per_warp = 32 : i32} {
  func.func @k(%x: !tile.ptr<f16>) {
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c32 = arith.constant 32 : i32
    %c64 = arith.constant 64 : i32
    %l0 = arith.constant 0 : i64
    %l32 = arith.constant 32 : i64
    %one = arith.constant 1 : i64
    %d3 = "tile.make_tensor_descriptor"(%x, %c2, %c64, %c32, %l0, %l32, %one) {operandSegmentSizes = array<i32: 1, 3, 3>} : (!tile.ptr<f16>, i32, i32, i32, i64, i64, i64) -> !d3
    %z = arith.constant dense<0.0> : tensor<2x64x32xf16>
    %zb = arith.constant dense<0.0> : tensor<32x64xf16>
    %acc = arith.constant dense<0.0> : !acc
    %ring = "tile.local_alloc"() : () -> !ring
    %b = "tile.local_alloc"() : () -> !bbuf
    "tile.local_store"(%z, %ring) : (tensor<2x64x32xf16>, !ring) -> ()
    "tile.local_store"(%zb, %b) : (tensor<32x64xf16>, !bbuf) -> ()
    %slot = "tile.memdesc_index"(%ring, %c1) : (!ring, i32) -> !slot
    %r = "tile.async_wmma"(%slot, %b, %acc) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!slot, !bbuf, !acc) -> !acc
{wait}    "tile.async_tdm_copy_global_to_local"(%d3, %ring) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 1 : i32} : (!d3, !ring) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}"""
WAIT = '%w = "tile.async_wmma_wait"(%r) {num = 0 : i32} : (!acc) -> !acc\n'


def test_a_copy_over_a_slot_an_mma_still_reads_is_a_race() -> None:
    """The copy covers both slots, only slot 1 is read: a race until the wait."""
    x = np.ones((64, 32), np.float16)
    run_function(RING.replace("{wait}", "    " + WAIT), "k", {"x": x})
    with pytest.raises(ModelError, match=r"^write of shared memory an in-flight MMA reads"):
        run_function(RING.replace("{wait}", ""), "k", {"x": x})


# ---- a TDM copy and a store index a buffer to one depth ------------------------------------

#: A two-slot ring whose layout orders ``RING`` dims, a store of slot 1 through a
#: 64x32 descriptor of layout ``STORE`` and a copy over the ring through a 2x64x32
#: one of layout ``COPY``. The model refuses a copy over slots a store still reads
#: when any of its elements is read; that is all of them or none only because no
#: choice of layouts verifies a store of a slot alongside a copy over the ring.
RING_STORE = """
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
#s3 = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 2, 1, 0>}>
!ring = !tile.shared<tensor<2x64x32xf16, RING>>
!slot = !tile.shared<tensor<64x32xf16, RING>>
!d2 = !tile.tensor_desc<tensor<64x32xf16, STORE>>
!d3 = !tile.tensor_desc<tensor<2x64x32xf16, COPY>>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func @k(%x: !tile.ptr<f16>, %y: !tile.ptr<f16>) {
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c32 = arith.constant 32 : i32
    %c64 = arith.constant 64 : i32
    %l0 = arith.constant 0 : i64
    %l32 = arith.constant 32 : i64
    %one = arith.constant 1 : i64
    %d2 = "tile.make_tensor_descriptor"(%y, %c64, %c32, %l32, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !d2
    %d3 = "tile.make_tensor_descriptor"(%x, %c2, %c64, %c32, %l0, %l32, %one) {operandSegmentSizes = array<i32: 1, 3, 3>} : (!tile.ptr<f16>, i32, i32, i32, i64, i64, i64) -> !d3
    %ring = "tile.local_alloc"() : () -> !ring
    %slot = "tile.memdesc_index"(%ring, %c1) : (!ring, i32) -> !slot
    "tile.async_tdm_copy_local_to_global"(%d2, %slot) : (!d2, !slot) -> ()
    "tile.async_tdm_copy_global_to_local"(%d3, %ring) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!d3, !ring) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}"""


@pytest.mark.parametrize(
    ("ring", "store", "copy"), list(itertools.product(("#s", "#s3"), repeat=3))
)
def test_a_store_of_a_slot_and_a_copy_over_its_ring_never_both_verify(
    ring: str, store: str, copy: str
) -> None:
    module = RING_STORE.replace("RING", ring).replace("STORE", store).replace("COPY", copy)
    x = np.ones((2, 64, 32), np.float16)
    y = np.zeros((64, 32), np.float16)
    refusal = "entries but a (64x32|2x64x32) block needs|does not match the descriptor"
    with pytest.raises(ir.MLIRError, match=refusal):
        run_function(module, "k", {"x": x, "y": y})
