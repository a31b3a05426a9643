// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90})' | FileCheck %s

// cuda:90: the barrier ops are Hopper's mbarrier ops one for one; a tracked
// copy is a TMA copy completing its bytes on the barrier; the TDM store is a
// TMA store behind a fence of the async proxy, and a wait in a function that
// stores also waits for the stores to have read their buffers.

// Init (then a fence, so TMA sees it), expect, arrive and wait.
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: tt.func public @barrier_ops
  func.func @barrier_ops(%p: i1, %phase: i32) {
    %c1 = arith.constant 1 : i32
    // CHECK: %[[RING:.*]] = ttg.local_alloc : () -> !ttg.memdesc<2x1xi64
    %bars = "tile.barrier_alloc"() : () -> !tile.mbarrier_ring<2 : i32>
    // CHECK: %[[BAR:.*]] = ttg.memdesc_index %[[RING]]
    %bar = "tile.barrier_index"(%bars, %c1) : (!tile.mbarrier_ring<2 : i32>, i32) -> !tile.mbarrier<i64>
    // CHECK: ttng.init_barrier %[[BAR]], 2
    // CHECK-NEXT: ttng.fence_async_shared
    "tile.barrier_init"(%bar) {count = 2 : i32} : (!tile.mbarrier<i64>) -> ()
    // CHECK: ttng.barrier_expect %[[BAR]], 4096, %arg0
    "tile.barrier_expect"(%bar, %p) {operandSegmentSizes = array<i32: 1, 1>, bytes = 4096 : i32} : (!tile.mbarrier<i64>, i1) -> ()
    // CHECK: ttng.arrive_barrier %[[BAR]], 1, %true
    "tile.barrier_arrive"(%bar) {operandSegmentSizes = array<i32: 1, 0>} : (!tile.mbarrier<i64>) -> ()
    // CHECK: ttng.wait_barrier %[[BAR]], %arg1, %arg0
    "tile.barrier_wait"(%bar, %phase, %p) {operandSegmentSizes = array<i32: 1, 1, 1>} : (!tile.mbarrier<i64>, i32, i1) -> ()
    return
  }
}

// -----

// The store: registers into the (NVMMA) buffer, fence, TMA store, store wait.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: tt.func public @tma_store
  func.func @tma_store(%c: !tile.ptr<f16>, %m: i32, %ld: i64, %v: tensor<64x64xf16, #bl>) {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%c, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    %buf = "tile.local_alloc"() : () -> !buf
    // CHECK: ttg.local_store %arg3, %[[BUF:[0-9]+]] :
    "tile.local_store"(%v, %buf) : (tensor<64x64xf16, #bl>, !buf) -> ()
    // CHECK: ttng.fence_async_shared
    // CHECK-NEXT: ttng.async_tma_copy_local_to_global %{{.*}}[%{{.*}}, %{{.*}}] %[[BUF]]
    "tile.async_tdm_copy_local_to_global"(%d, %buf) : (!desc, !buf) -> ()
    // CHECK: ttng.async_tma_store_wait {pendings = 0 : i32, read_only}
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}

// -----

// A barrier-tracked copy is a TMA copy completing its bytes on the barrier
// (no lds-copies=tma needed: its descriptor becomes a TMA descriptor).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: tt.func public @tracked_tma_copy
  // CHECK-SAME: %[[DESC:arg4]]: !tt.tensordesc<64x64xf16
  func.func @tracked_tma_copy(%a: !tile.ptr<f16>, %m: i32, %ld: i64, %k: i32) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    %dk = "tile.update_tensor_descriptor"(%d, %c0, %k) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!desc, i32, i32) -> !desc
    %b = "tile.local_alloc"() : () -> !buf
    %bars = "tile.barrier_alloc"() : () -> !tile.mbarrier_ring<1 : i32>
    // CHECK: %[[BAR:.*]] = ttg.memdesc_index
    %bar = "tile.barrier_index"(%bars, %c0) : (!tile.mbarrier_ring<1 : i32>, i32) -> !tile.mbarrier<i64>
    "tile.barrier_init"(%bar) {count = 1 : i32} : (!tile.mbarrier<i64>) -> ()
    // CHECK: ttng.barrier_expect %[[BAR]], 8192
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!tile.mbarrier<i64>) -> ()
    // CHECK: ttng.async_tma_copy_global_to_local %[[DESC]][%c0_i32, %arg3] {{.*}}, %[[BAR]]
    "tile.async_tdm_copy_global_to_local"(%dk, %b, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    // CHECK: ttng.wait_barrier %[[BAR]], %c0_i32
    "tile.barrier_wait"(%bar, %c0) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
    return
  }
}
