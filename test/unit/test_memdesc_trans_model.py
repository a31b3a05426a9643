"""``tile.memdesc_trans`` in the executable model: a view reads the block
permuted (rank 2 and rank 3, then indexed), it aliases the block for the race
detector, and nothing writes through one (the verifier refuses a direct
write; one that reaches a view through control flow is a model error)."""

from __future__ import annotations

import numpy as np
import pytest

from gemm_opt.dialect.edit import erase_ops
from gemm_opt.model.interpreter import ModelError, parse_module, run_function

#: ``@k(%x, %y)``: x is 32x16 f32; copied into shared memory as it lies, read
#: through the view ``order`` and stored to y (16x32).
TRANSPOSE = """
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
#t = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 0, 1>}>
!d = !tile.tensor_desc<tensor<32x16xf32, #s>>
!b = !tile.shared<tensor<32x16xf32, #s>>
!v = !tile.shared<tensor<16x32xf32, #t>>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32, tile.target = "gfx1250"} {
  func.func @k(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %c16 = arith.constant 16 : i32
    %c32 = arith.constant 32 : i32
    %one = arith.constant 1 : i64
    %l16 = arith.constant 16 : i64
    %l32 = arith.constant 32 : i64
    %d = "tile.make_tensor_descriptor"(%x, %c32, %c16, %l16, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64) -> !d
    %buf = "tile.local_alloc"() : () -> !b
    "tile.async_tdm_copy_global_to_local"(%d, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!d, !b) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %v = "tile.memdesc_trans"(%buf) {order = array<i32: 1, 0>} : (!b) -> !v
    %t = "tile.local_load"(%v) : (!v) -> tensor<16x32xf32>
    "tile.store_block"(%y, %c16, %c32, %l32, %one, %c0, %c0, %t) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, tensor<16x32xf32>) -> ()
    return
  }
}
"""

#: A rank-3 block (2 x 8 x 16, one layout over all three dims), stored from
#: registers, viewed as 2 x 16 x 8 (``order = [0, 2, 1]``), then its slot 1
#: indexed: y = x[1].T.
RANK3 = """
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 2, 1, 0>}>
#t = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 2, 0>}>
#r = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 2, 0>}>
!b = !tile.shared<tensor<2x8x16xf32, #s>>
!v = !tile.shared<tensor<2x16x8xf32, #t>>
!w = !tile.shared<tensor<16x8xf32, #r>>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @k(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c8 = arith.constant 8 : i32
    %c16 = arith.constant 16 : i32
    %one = arith.constant 1 : i64
    %l8 = arith.constant 8 : i64
    %l16 = arith.constant 16 : i64
    %c2 = arith.constant 2 : i32
    %l128 = arith.constant 128 : i64
    %in = "tile.load_block"(%x, %c2, %c8, %c16, %l128, %l16, %one, %c0, %c0, %c0) {operandSegmentSizes = array<i32: 1, 3, 3, 3>} : (!tile.ptr<f32>, i32, i32, i32, i64, i64, i64, i32, i32, i32) -> tensor<2x8x16xf32>
    %buf = "tile.local_alloc"() : () -> !b
    "tile.local_store"(%in, %buf) : (tensor<2x8x16xf32>, !b) -> ()
    %v = "tile.memdesc_trans"(%buf) {order = array<i32: 0, 2, 1>} : (!b) -> !v
    %w = "tile.memdesc_index"(%v, %c1) : (!v, i32) -> !w
    %t = "tile.local_load"(%w) : (!w) -> tensor<16x8xf32>
    "tile.store_block"(%y, %c16, %c8, %l8, %one, %c0, %c0, %t) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, tensor<16x8xf32>) -> ()
    return
  }
}
"""

#: A view chosen by control flow, then written: the verifier cannot see it.
WRITE_THROUGH = """
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
#t = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 0, 1>}>
!b = !tile.shared<tensor<16x16xf32, #s>>
!v = !tile.shared<tensor<16x16xf32, #t>>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @k(%c: i1) {
    %buf = "tile.local_alloc"() : () -> !b
    %other = "tile.local_alloc"() : () -> !v
    %v = "tile.memdesc_trans"(%buf) {order = array<i32: 1, 0>} : (!b) -> !v
    %dest = scf.if %c -> (!v) {
      scf.yield %v : !v
    } else {
      scf.yield %other : !v
    }
    %z = arith.constant dense<0.0> : tensor<16x16xf32>
    "tile.local_store"(%z, %dest) : (tensor<16x16xf32>, !v) -> ()
    return
  }
}
"""


def test_a_view_reads_the_block_transposed() -> None:
    x = np.arange(32 * 16, dtype=np.float32).reshape(32, 16)
    y = np.full((16, 32), np.nan, np.float32)
    run_function(TRANSPOSE, "k", {"x": x, "y": y})
    np.testing.assert_array_equal(y, x.T)


def test_a_rank3_view_permutes_and_indexes() -> None:
    x = np.arange(2 * 8 * 16, dtype=np.float32).reshape(2, 8, 16)
    y = np.full((16, 8), np.nan, np.float32)
    run_function(RANK3, "k", {"x": x, "y": y})
    np.testing.assert_array_equal(y, x[1].T)


def test_a_write_through_a_view_is_a_model_error() -> None:
    run_function(WRITE_THROUGH, "k", {"c": 0})  # the plain buffer: fine
    with pytest.raises(ModelError, match="writes through a transposed view"):
        run_function(WRITE_THROUGH, "k", {"c": 1})


def test_a_view_aliases_its_block_for_the_race_detector() -> None:
    """Without the wait, the read through the view races the copy into the block."""
    module = parse_module(TRANSPOSE)
    assert erase_ops(module, "tile.async_tdm_wait", lambda op: True) == 1
    x = np.ones((32, 16), np.float32)
    with pytest.raises(ModelError, match="still being written by an in-flight TDM copy"):
        run_function(
            module, "k", {"x": x, "y": np.zeros((16, 32), np.float32)}, arg_names=("x", "y")
        )


ALIASES = """
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
#t = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 0, 1>}>
module {
  func.func @k(%i: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %ring = "tile.local_alloc"() : () -> !tile.shared<tensor<2x16x32xf16, #s>>
    %s0 = "tile.memdesc_index"(%ring, %c0) : (!tile.shared<tensor<2x16x32xf16, #s>>, i32) -> !tile.shared<tensor<16x32xf16, #s>>
    %s1 = "tile.memdesc_index"(%ring, %c1) : (!tile.shared<tensor<2x16x32xf16, #s>>, i32) -> !tile.shared<tensor<16x32xf16, #s>>
    %si = "tile.memdesc_index"(%ring, %i) : (!tile.shared<tensor<2x16x32xf16, #s>>, i32) -> !tile.shared<tensor<16x32xf16, #s>>
    %v0 = "tile.memdesc_trans"(%s0) {order = array<i32: 1, 0>} : (!tile.shared<tensor<16x32xf16, #s>>) -> !tile.shared<tensor<32x16xf16, #t>>
    return
  }
}
"""


def test_passes_see_a_view_as_its_block() -> None:
    """Fusion and ``tile-pipeline-mma`` ask whether a copy's destination may alias
    a buffer an MMA reads: a view is its block (slot 0 aliases its own view and a
    slot picked at run time, not slot 1)."""
    from gemm_opt.passes.common import buffer_root, may_alias

    module = parse_module(ALIASES)
    fn = next(iter(module.body.operations))
    ops = list(fn.regions[0].blocks[0].operations)
    ring, s0, s1, si, v0 = (op.results[0] for op in ops[2:7])  # after the two constants
    assert buffer_root(v0) == buffer_root(s0) and buffer_root(v0)[0] == ring
    assert may_alias(v0, s0) and may_alias(v0, si) and not may_alias(v0, s1)
