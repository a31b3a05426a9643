// RUN: gemm-opt %s --split-input-file | FileCheck %s
// RUN: gemm-opt %s --split-input-file | gemm-opt --split-input-file | FileCheck %s

// The barrier ops round-trip (dialect/barrier.py): a ring, one stage, a
// barrier-tracked copy and the wait on its phase.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: func.func @barrier_ring_stage
  func.func @barrier_ring_stage(%d: !desc, %b: !buf, %i: i32, %phase: i32) {
    // CHECK: %[[R:.*]] = "tile.barrier_alloc"() : () -> !tile.mbarrier_ring<3 : i32>
    %bars = "tile.barrier_alloc"() : () -> !tile.mbarrier_ring<3 : i32>
    // CHECK: %[[B:.*]] = "tile.barrier_index"(%[[R]], %arg2) : (!tile.mbarrier_ring<3 : i32>, i32) -> !tile.mbarrier<i64>
    %bar = "tile.barrier_index"(%bars, %i) : (!tile.mbarrier_ring<3 : i32>, i32) -> !tile.mbarrier<i64>
    // CHECK: "tile.barrier_init"(%[[B]]) {count = 1 : i32}
    "tile.barrier_init"(%bar) {count = 1 : i32} : (!tile.mbarrier<i64>) -> ()
    // CHECK: "tile.barrier_expect"(%[[B]]) {bytes = 8192 : i32, operandSegmentSizes = array<i32: 1, 0>}
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!tile.mbarrier<i64>) -> ()
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg0, %arg1, %[[B]]) {operandSegmentSizes = array<i32: 1, 1, 0, 1>}
    "tile.async_tdm_copy_global_to_local"(%d, %b, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    // CHECK: "tile.barrier_wait"(%[[B]], %arg3) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
    "tile.barrier_wait"(%bar, %phase) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
    return
  }
}

// -----

// Predicated forms, an i1 phase, and an arrival count.
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @barrier_predicated
  func.func @barrier_predicated(%bar: !tile.mbarrier<i64>, %p: i1, %phase: i1) {
    // CHECK: "tile.barrier_init"(%arg0) {count = 2 : i32}
    "tile.barrier_init"(%bar) {count = 2 : i32} : (!tile.mbarrier<i64>) -> ()
    // CHECK: "tile.barrier_expect"(%arg0, %arg1) {bytes = 16 : i32, operandSegmentSizes = array<i32: 1, 1>}
    "tile.barrier_expect"(%bar, %p) {operandSegmentSizes = array<i32: 1, 1>, bytes = 16 : i32} : (!tile.mbarrier<i64>, i1) -> ()
    // CHECK: "tile.barrier_arrive"(%arg0, %arg1) {count = 1 : i32, operandSegmentSizes = array<i32: 1, 1>}
    "tile.barrier_arrive"(%bar, %p) {operandSegmentSizes = array<i32: 1, 1>, count = 1 : i32} : (!tile.mbarrier<i64>, i1) -> ()
    // CHECK: "tile.barrier_arrive"(%arg0) {operandSegmentSizes = array<i32: 1, 0>}
    "tile.barrier_arrive"(%bar) {operandSegmentSizes = array<i32: 1, 0>} : (!tile.mbarrier<i64>) -> ()
    // CHECK: "tile.barrier_wait"(%arg0, %arg2, %arg1) {operandSegmentSizes = array<i32: 1, 1, 1>} : (!tile.mbarrier<i64>, i1, i1) -> ()
    "tile.barrier_wait"(%bar, %phase, %p) {operandSegmentSizes = array<i32: 1, 1, 1>} : (!tile.mbarrier<i64>, i1, i1) -> ()
    return
  }
}

// -----

// The epilogue: registers into a shared buffer, a TDM store, its wait.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: func.func @tdm_store
  func.func @tdm_store(%d: !tile.tensor_desc<tensor<64x64xf16, #s>>, %v: tensor<64x64xf16, #bl>) {
    // CHECK: %[[BUF:.*]] = "tile.local_alloc"
    %buf = "tile.local_alloc"() : () -> !tile.shared<tensor<64x64xf16, #s>>
    // CHECK: "tile.local_store"(%arg1, %[[BUF]])
    "tile.local_store"(%v, %buf) : (tensor<64x64xf16, #bl>, !tile.shared<tensor<64x64xf16, #s>>) -> ()
    // CHECK: "tile.async_tdm_copy_local_to_global"(%arg0, %[[BUF]]) {cache = ".cs"}
    "tile.async_tdm_copy_local_to_global"(%d, %buf) {cache = ".cs"} : (!tile.tensor_desc<tensor<64x64xf16, #s>>, !tile.shared<tensor<64x64xf16, #s>>) -> ()
    // CHECK: "tile.async_tdm_wait"() {num = 0 : i32}
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
