// RUN: gemm-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90})'

// cuda:90 refusals: a TDM store without the TMA descriptors of
// lds-copies=tma, and a barrier-tracked copy.

// A TDM store needs lds-copies=tma's descriptors.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @store_without_tma(%c: !tile.ptr<f16>, %m: i32, %ld: i64, %b: !buf) {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%c, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    // expected-error@+1 {{a TDM store on cuda:90 is a TMA store: it needs the TMA descriptors of lds-copies=tma, made by tile.make_tensor_descriptor in this function}}
    "tile.async_tdm_copy_local_to_global"(%d, %b) : (!desc, !buf) -> ()
    return
  }
}

// -----

// A barrier-tracked copy has no TMA form yet.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @tracked_copy(%c: !tile.ptr<f16>, %m: i32, %ld: i64, %b: !buf, %bar: !tile.mbarrier<i64>) {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%c, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!tile.mbarrier<i64>) -> ()
    // expected-error@+1 {{a barrier-tracked copy on cuda:90 is a TMA copy, which lds-copies=tma does not issue on a user barrier yet}}
    "tile.async_tdm_copy_global_to_local"(%d, %b, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    return
  }
}
