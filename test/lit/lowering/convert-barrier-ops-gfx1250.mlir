// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=gfx1250})' | FileCheck %s

// gfx1250: LDS barriers count per-warp arrivals and a TDM copy on a barrier
// arrives once per warp when its data has landed. One tile arrival is
// nw * M hardware arrivals (M = the most copies one expect covers), so init
// scales its count, an expect covering n copies arrives M - n from each
// warp, and the copies' own arrivals complete the phase.

// Two copies on one expect (M = 2, 4 warps): init 1 -> 8, no extra arrival.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: tt.func public @expect_two_copies
  func.func @expect_two_copies(%a: !tile.ptr<f16>, %m: i32, %ld: i64) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    %b0 = "tile.local_alloc"() : () -> !buf
    %b1 = "tile.local_alloc"() : () -> !buf
    // CHECK: %[[RING:.*]] = ttg.local_alloc : () -> !ttg.memdesc<2x1xi64
    %bars = "tile.barrier_alloc"() : () -> !tile.mbarrier_ring<2 : i32>
    // CHECK: %[[BAR:.*]] = ttg.memdesc_index %[[RING]]
    %bar = "tile.barrier_index"(%bars, %c0) : (!tile.mbarrier_ring<2 : i32>, i32) -> !tile.mbarrier<i64>
    // CHECK: amdg.init_barrier %[[BAR]], 8
    "tile.barrier_init"(%bar) {count = 1 : i32} : (!tile.mbarrier<i64>) -> ()
    // CHECK-NOT: amdg.arrive_barrier
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 16384 : i32} : (!tile.mbarrier<i64>) -> ()
    // CHECK: amdg.async_tdm_copy_global_to_local %{{.*}} into %{{.*}}, barrier = %[[BAR]]
    "tile.async_tdm_copy_global_to_local"(%d, %b0, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    // CHECK: amdg.async_tdm_copy_global_to_local %{{.*}} into %{{.*}}, barrier = %[[BAR]]
    "tile.async_tdm_copy_global_to_local"(%d, %b1, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    // CHECK: amdg.wait_barrier %[[BAR]], %{{.*}}
    "tile.barrier_wait"(%bar, %c0) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
    // An expect covering one copy makes up the other arrival at once.
    // CHECK: amdg.arrive_barrier %[[BAR]], 1
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!tile.mbarrier<i64>) -> ()
    // CHECK: amdg.async_tdm_copy_global_to_local %{{.*}} into %{{.*}}, barrier = %[[BAR]]
    "tile.async_tdm_copy_global_to_local"(%d, %b0, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    %c1 = arith.constant 1 : i32
    "tile.barrier_wait"(%bar, %c1) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
    // A tile arrival of count 3 is 3 * M from each warp.
    // CHECK: amdg.arrive_barrier %[[BAR]], 6
    "tile.barrier_arrive"(%bar) {operandSegmentSizes = array<i32: 1, 0>, count = 3 : i32} : (!tile.mbarrier<i64>) -> ()
    return
  }
}

// -----

// Predicated arrive and wait become scf.if around them; an i1 phase is widened.
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: tt.func public @predicated
  func.func @predicated(%p: i1, %phase: i1) {
    %c0 = arith.constant 0 : i32
    %bars = "tile.barrier_alloc"() : () -> !tile.mbarrier_ring<1 : i32>
    %bar = "tile.barrier_index"(%bars, %c0) : (!tile.mbarrier_ring<1 : i32>, i32) -> !tile.mbarrier<i64>
    // CHECK: amdg.init_barrier %{{.*}}, 8
    "tile.barrier_init"(%bar) {count = 2 : i32} : (!tile.mbarrier<i64>) -> ()
    // CHECK: scf.if %arg0 {
    // CHECK-NEXT: amdg.arrive_barrier %{{.*}}, 1
    "tile.barrier_arrive"(%bar, %p) {operandSegmentSizes = array<i32: 1, 1>} : (!tile.mbarrier<i64>, i1) -> ()
    // CHECK: scf.if %arg0 {
    // CHECK-NEXT: %[[PH:.*]] = arith.extui %arg1 : i1 to i32
    // CHECK-NEXT: amdg.wait_barrier %{{.*}}, %[[PH]]
    "tile.barrier_wait"(%bar, %phase, %p) {operandSegmentSizes = array<i32: 1, 1, 1>} : (!tile.mbarrier<i64>, i1, i1) -> ()
    return
  }
}

// -----

// The epilogue's store: tile.local_store, the TDM store and the shared wait.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: tt.func public @tdm_store
  func.func @tdm_store(%c: !tile.ptr<f16>, %m: i32, %ld: i64, %v: tensor<64x64xf16, #bl>) {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%c, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    %buf = "tile.local_alloc"() : () -> !buf
    // CHECK: ttg.local_store %arg3, %[[BUF:.*]] :
    "tile.local_store"(%v, %buf) : (tensor<64x64xf16, #bl>, !buf) -> ()
    // CHECK: amdg.async_tdm_copy_local_to_global %{{.*}} from %[[BUF]]
    "tile.async_tdm_copy_local_to_global"(%d, %buf) : (!desc, !buf) -> ()
    // CHECK: amdg.async_tdm_wait {num = 0 : i32}
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
