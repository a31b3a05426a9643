// One tracked 64x64 f16 copy (8192 bytes) after an expect of 8192 bytes, in four forms;
// test_barrier_lowering.py sets the expect's bytes. Cases, in order:

// an unpredicated tracked copy (8192 bytes)
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @k(%c: !tile.ptr<f16>, %m: i32, %ld: i64, %b: !buf, %bar: !tile.mbarrier<i64>, %p: i1) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%c, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!tile.mbarrier<i64>) -> ()
    "tile.async_tdm_copy_global_to_local"(%d, %b, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    "tile.barrier_wait"(%bar, %c0) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
    return
  }
}

// -----

// a predicated tracked copy
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @k(%c: !tile.ptr<f16>, %m: i32, %ld: i64, %b: !buf, %bar: !tile.mbarrier<i64>, %p: i1) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%c, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!tile.mbarrier<i64>) -> ()
    "tile.async_tdm_copy_global_to_local"(%d, %b, %p, %bar) {operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!desc, !buf, i1, !tile.mbarrier<i64>) -> ()
    "tile.barrier_wait"(%bar, %c0) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
    return
  }
}

// -----

// a tracked copy, then another under scf.if
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @k(%c: !tile.ptr<f16>, %m: i32, %ld: i64, %b: !buf, %bar: !tile.mbarrier<i64>, %p: i1) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%c, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!tile.mbarrier<i64>) -> ()
    "tile.async_tdm_copy_global_to_local"(%d, %b, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    scf.if %p {
      "tile.async_tdm_copy_global_to_local"(%d, %b, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    }
    "tile.barrier_wait"(%bar, %c0) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
    return
  }
}

// -----

// no copy in the block
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @k(%c: !tile.ptr<f16>, %m: i32, %ld: i64, %b: !buf, %bar: !tile.mbarrier<i64>, %p: i1) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%c, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!tile.mbarrier<i64>) -> ()
    "tile.barrier_wait"(%bar, %c0) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
    return
  }
}
