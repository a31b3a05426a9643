// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90 lds-copies=tma})' | FileCheck %s

// lds-copies=tma on cuda:90, a descriptor made inside a loop (a grouped
// GEMM's per-group descriptor, made per tile). Triton gives each
// tt.make_tensor_descriptor one tensormap per program and rewrites it in
// place on every pass (ttng.tensormap_create, then
// ttng.tensormap_fenceproxy_acquire), so no copy of the previous value may
// still be in flight: the lowering first waits for the copies not yet
// waited for there (none when the loop body drained them).

// The loop waits for all its copies: nothing to drain before the make (the
// tensormap's dimensions are written innermost first: [M, t]).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func private @made_per_tile
  func.func private @made_per_tile(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %tiles: i32, %c: !acc) -> !acc {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %buf = "tile.local_alloc"() : () -> !ba
    // CHECK: scf.for %[[T:.*]] = %{{.*}} to %arg3
    // CHECK-NOT: ttng.wait_barrier
    // CHECK: %[[SCRATCH:.*]] = ttg.global_scratch_alloc {alignment = 128 : i32, nbytes = 128 : i32}
    // CHECK: ttng.tensormap_create %[[SCRATCH]], %arg0, [%c64_i32, %c64_i32], [%arg1, %[[T]]]
    // CHECK: ttng.tensormap_fenceproxy_acquire %[[SCRATCH]]
    // CHECK: %[[DESC:.*]] = ttng.reinterpret_tensor_descriptor %[[SCRATCH]]
    // CHECK: ttng.async_tma_copy_global_to_local %[[DESC]]
    // CHECK: ttng.wait_barrier
    // CHECK: scf.yield
    %r = scf.for %t = %c0 to %tiles step %c1 iter_args(%acc = %c) -> (!acc) : i32 {
      %d = "tile.make_tensor_descriptor"(%a, %t, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
      "tile.async_tdm_copy_global_to_local"(%d, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
      "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
      %ta = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opa>
      %tb = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opb>
      %acc2 = "tile.wmma"(%ta, %tb, %acc) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
      scf.yield %acc2 : !acc
    }
    return %r : !acc
  }
}

// -----

// The loop leaves its copy in flight (wait num = 1): the next pass's make
// first waits for it (copy g - 1 on barrier (g - 1) % 1, parity
// ((g - 1) / 1) % 2), then rewrites the tensormap; the copy after it is
// the only one in flight, so the loop's own wait has nothing left to do.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!bufa = !tile.shared<tensor<2x64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func private @remade_with_a_copy_in_flight
  func.func private @remade_with_a_copy_in_flight(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %tiles: i32, %c: !acc) -> !acc {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %bufs = "tile.local_alloc"() : () -> !bufa
    // CHECK: ttg.local_alloc : () -> !ttg.memdesc<1x1xi64
    // CHECK: scf.for %[[T:.*]] = %{{.*}} to %arg3
    // CHECK: %[[G:.*]] = arith.subi %[[T]], %c1_i32
    // CHECK: %[[ISSUED:.*]] = arith.cmpi sge, %[[G]], %c0_i32
    // CHECK: ttng.wait_barrier %{{.*}}, %{{.*}}, %[[ISSUED]]
    // CHECK-NEXT: %[[SCRATCH:.*]] = ttg.global_scratch_alloc
    // CHECK: ttng.tensormap_create %[[SCRATCH]], %arg0, [%c64_i32, %c64_i32], [%arg1, %[[T]]]
    // CHECK: ttng.async_tma_copy_global_to_local
    // CHECK-NOT: ttng.wait_barrier
    // CHECK: scf.yield
    // CHECK: ttng.wait_barrier
    // CHECK: tt.return
    %r = scf.for %t = %c0 to %tiles step %c1 iter_args(%acc = %c) -> (!acc) : i32 {
      %d = "tile.make_tensor_descriptor"(%a, %t, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
      %slot = arith.remsi %t, %c2 : i32
      %b = "tile.memdesc_index"(%bufs, %slot) : (!bufa, i32) -> !ba
      "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
      "tile.async_tdm_wait"() {num = 1 : i32} : () -> ()
      // The previous pass's copy, complete now: at most this pass's is in flight.
      %t1 = arith.addi %t, %c1 : i32
      %prev = arith.remsi %t1, %c2 : i32
      %p = "tile.memdesc_index"(%bufs, %prev) : (!bufa, i32) -> !ba
      %ta = "tile.local_load"(%p) : (!ba) -> tensor<64x64xf16, #opa>
      %tb = "tile.local_load"(%p) : (!ba) -> tensor<64x64xf16, #opb>
      %acc2 = "tile.wmma"(%ta, %tb, %acc) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
      scf.yield %acc2 : !acc
    }
    return %r : !acc
  }
}
