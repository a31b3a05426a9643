// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90 lds-copies=tma})' | FileCheck %s

// A barrier-tracked TMA copy with a descriptor pred and a user pred: the
// expect, the copy and the arrival without bytes all take the one combined
// guard (both preds ANDed): bytes are expected exactly when the copy runs,
// and a predicated-off copy arrives instead, so the wait always completes.
// The copy starts at the descriptor's moved origin.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: tt.func public @tma_user_and_desc_pred(
  // CHECK-SAME: %[[DESC:arg8]]: !tt.tensordesc<64x64xf16, #shared>
  func.func @tma_user_and_desc_pred(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %r: i32, %c: i32, %p: i1, %q: i1, %acc: !acc) {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %u = "tile.update_tensor_descriptor"(%d, %r, %c, %p) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    // CHECK: %[[TRUE:.*]] = arith.constant true
    // CHECK: %[[BUF:.*]] = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16
    %buf = "tile.local_alloc"() : () -> !ba
    // CHECK: %[[PQ:.*]] = arith.andi {{%arg5, %arg6|%arg6, %arg5}} : i1
    // CHECK: %[[BAR:.*]] = ttg.memdesc_index
    // CHECK-NEXT: ttng.barrier_expect %[[BAR]], 8192, %[[PQ]] :
    // CHECK-NEXT: ttng.async_tma_copy_global_to_local %[[DESC]][%arg3, %arg4] %[[BUF]], %[[BAR]], %[[PQ]] :
    // CHECK-NEXT: %[[OFF:.*]] = arith.xori %[[PQ]], %[[TRUE]] : i1
    // CHECK-NEXT: ttng.arrive_barrier %[[BAR]], 1, %[[OFF]] :
    "tile.async_tdm_copy_global_to_local"(%u, %buf, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!da, !ba, i1) -> ()
    // CHECK: ttng.wait_barrier
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %ta = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opa>
    %tb = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opb>
    %res = "tile.wmma"(%ta, %tb, %acc) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
    return
  }
}
