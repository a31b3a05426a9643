// RUN: gemm-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90})'

// cuda:90 refusals: what TMA cannot copy or store is an error at the op.

// A tracked copy through a descriptor with bounds (TMA bounds by shape).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @tracked_copy_with_bounds(%c: !tile.ptr<f16>, %m: i32, %ld: i64, %b: !buf, %bar: !tile.mbarrier<i64>) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%c, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    %db = "tile.update_tensor_descriptor"(%d, %c0, %c0, %m, %m) {operandSegmentSizes = array<i32: 1, 2, 2, 0>} : (!desc, i32, i32, i32, i32) -> !desc
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!tile.mbarrier<i64>) -> ()
    // expected-error@+1 {{a barrier-tracked copy is a TMA copy on cuda:90: a descriptor with bounds has no TMA form (TMA bounds by shape)}}
    "tile.async_tdm_copy_global_to_local"(%db, %b, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    return
  }
}

// -----

// A TDM store through a predicated descriptor (stores take no pred).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @store_with_pred(%c: !tile.ptr<f16>, %m: i32, %ld: i64, %b: !buf, %p: i1) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%c, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    %dp = "tile.update_tensor_descriptor"(%d, %c0, %c0, %p) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!desc, i32, i32, i1) -> !desc
    // expected-error@+1 {{a TMA store takes no pred on its descriptor}}
    "tile.async_tdm_copy_local_to_global"(%dp, %b) : (!desc, !buf) -> ()
    return
  }
}

// -----

// An expect of one byte more than the tracked copy after it delivers: the
// mbarrier's phase would never complete (the wait would hang), as on gfx1250 an
// error at the expect.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @expect_one_byte_too_many(%c: !tile.ptr<f16>, %m: i32, %ld: i64, %b: !buf, %bar: !tile.mbarrier<i64>) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%c, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    // expected-error@+1 {{on cuda:90 the tracked copies after a tile.barrier_expect must deliver its bytes: it announces 8193, the copies that follow it deliver 8192}}
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8193 : i32} : (!tile.mbarrier<i64>) -> ()
    "tile.async_tdm_copy_global_to_local"(%d, %b, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    "tile.barrier_wait"(%bar, %c0) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
    return
  }
}

// -----

// Two copies after one expect count together: 8192 + 8192 is not 8192.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @two_copies_one_expect(%c: !tile.ptr<f16>, %m: i32, %ld: i64, %b: !buf, %bar: !tile.mbarrier<i64>) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%c, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    // expected-error@+1 {{it announces 8192, the copies that follow it deliver 16384}}
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!tile.mbarrier<i64>) -> ()
    "tile.async_tdm_copy_global_to_local"(%d, %b, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    "tile.async_tdm_copy_global_to_local"(%d, %b, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    return
  }
}
