// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90})' | FileCheck %s
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90 lds-copies=registers})' | FileCheck %s --check-prefix=REGS

// The portable lowering for NVIDIA Hopper. The module stays a gfx1250 tile
// module (tile.target is not read when the pass names a target): hinted copies
// lose warp_used_hint (a hint never changes the data written).

// With the alignment stated, a copy is a cp.async of the block
// (ttg.async_copy_global_to_local, masked by its bounds and pred, zero fill)
// and one commit group per copy, so the wait keeps its count of copies. The
// WMMA layout becomes mma.sync (nvidia_mma v2, instrShape [16, 8], same
// warps); dot operands take kWidth = 2 for f16; padded shared rows become the
// 16-byte-vector swizzle that ldmatrix reads without bank conflicts.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 128, amount = 16, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!db = !tile.tensor_desc<tensor<64x128xf16, #t>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
!bb = !tile.shared<tensor<64x128xf16, #t>>
module attributes {tile.num_warps = 8 : i32, tile.threads_per_warp = 32 : i32, tile.target = "gfx1250"} {
  // CHECK: #[[BLA:.*]] = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
  // CHECK: #[[BLB:.*]] = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [8, 1], order = [1, 0]}>
  // CHECK: #[[MMA:.*]] = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 2], instrShape = [16, 8]}>
  // CHECK: #[[SH:.*]] = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
  // CHECK: module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32}
  // CHECK-NOT: tile.target
  // CHECK-LABEL: tt.func public @cuda_copy(
  // REGS-LABEL: tt.func public @cuda_copy(
  func.func @cuda_copy(%a: !tile.ptr<f16>, %b: !tile.ptr<f16>, %m: i32, %n: i32 {tile.divisibility = 16 : i32}, %k: i32 {tile.divisibility = 16 : i32}, %lda: i64 {tile.divisibility = 16 : i32}, %ldb: i64 {tile.divisibility = 16 : i32}, %off: i32, %p: i1) -> tensor<128x128xf32, #acc> {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %da = "tile.make_tensor_descriptor"(%a, %m, %k, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %db = "tile.make_tensor_descriptor"(%b, %k, %n, %ldb, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !db
    %ua = "tile.update_tensor_descriptor"(%da, %off, %c0, %p) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    %ub = "tile.update_tensor_descriptor"(%db, %c0, %off, %p) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!db, i32, i32, i1) -> !db
    // CHECK: %[[BA:.*]] = ttg.local_alloc : () -> !ttg.memdesc<128x64xf16, #[[SH]], #smem, mutable>
    %ba = "tile.local_alloc"() : () -> !ba
    // CHECK: %[[BB:.*]] = ttg.local_alloc : () -> !ttg.memdesc<64x128xf16, #[[SH]], #smem, mutable>
    %bb = "tile.local_alloc"() : () -> !bb
    // CHECK-NOT: warp_used_hint
    // CHECK: scf.if %arg8 {
    // CHECK: ttg.async_copy_global_to_local %{{.*}}, %[[BA]] mask %{{.*}} other %{{.*}} : tensor<128x64x!tt.ptr<f16>, #[[BLA]]>
    // CHECK-NEXT: }
    // CHECK-NEXT: ttg.async_commit_group
    // REGS-NOT: async_copy_global_to_local
    // REGS: %[[VA:.*]] = tt.load
    // REGS-NEXT: ttg.local_store %[[VA]], %{{.*}}
    "tile.async_tdm_copy_global_to_local"(%ua, %ba) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!da, !ba) -> ()
    // CHECK-NOT: warp_used_hint
    // CHECK: scf.if %arg8 {
    // CHECK: ttg.async_copy_global_to_local %{{.*}}, %[[BB]] mask %{{.*}} other %{{.*}} : tensor<64x128x!tt.ptr<f16>, #[[BLB]]>
    // CHECK-NEXT: }
    // CHECK-NEXT: ttg.async_commit_group
    "tile.async_tdm_copy_global_to_local"(%ub, %bb) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!db, !bb) -> ()
    // Two copies, two groups: waiting until at most 1 is in flight means A landed.
    // CHECK: ttg.async_wait {num = 1 : i32}
    // REGS-NOT: async_wait
    "tile.async_tdm_wait"() {num = 1 : i32} : () -> ()
    // CHECK: %[[A:.*]] = ttg.local_load %[[BA]] : {{.*}} -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #[[MMA]], kWidth = 2}>>
    %ta = "tile.local_load"(%ba) : (!ba) -> tensor<128x64xf16, #opa>
    // CHECK: %[[B:.*]] = ttg.local_load %[[BB]] : {{.*}} -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #[[MMA]], kWidth = 2}>>
    %tb = "tile.local_load"(%bb) : (!bb) -> tensor<64x128xf16, #opb>
    // CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #[[MMA]]>
    %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #acc>
    // CHECK: tt.dot %[[A]], %[[B]], %[[Z]] : {{.*}} -> tensor<128x128xf32, #[[MMA]]>
    %d = "tile.wmma"(%ta, %tb, %zero) : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// Without stated alignment cp.async cannot be proven to move whole 4-byte
// units, so a copy goes through registers (tt.load, ttg.local_store) and
// the wait disappears. A 32-element bf16 row is 64 bytes: two rows share a
// swizzle phase. bf16 operands also take kWidth = 2.
#s = #tile.padded_shared<{interval = 32, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x32xbf16, #s>>
!ba = !tile.shared<tensor<2x64x32xbf16, #s>>
!b1 = !tile.shared<tensor<64x32xbf16, #s>>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK: #[[MMA:.*]] = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
  // CHECK: #[[SH:.*]] = #ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
  // CHECK: ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32
  // CHECK-LABEL: tt.func public @cuda_registers(
  func.func @cuda_registers(%a: !tile.ptr<bf16>, %m: i32, %k: i32, %lda: i64, %i: i32) -> tensor<64x32xbf16, #opa> {
    %one = arith.constant 1 : i64
    %da = "tile.make_tensor_descriptor"(%a, %m, %k, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<bf16>, i32, i32, i64, i64) -> !da
    // CHECK: %[[BUF:.*]] = ttg.local_alloc : () -> !ttg.memdesc<2x64x32xbf16, #[[SH]], #smem, mutable>
    %buf = "tile.local_alloc"() : () -> !ba
    // CHECK: %[[SLOT:.*]] = ttg.memdesc_index %[[BUF]][%arg4]
    %slot = "tile.memdesc_index"(%buf, %i) : (!ba, i32) -> !b1
    // CHECK-NOT: async_copy_global_to_local
    // CHECK: %[[V:.*]] = tt.load
    // CHECK-NEXT: ttg.local_store %[[V]], %[[SLOT]]
    "tile.async_tdm_copy_global_to_local"(%da, %slot) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 3 : i32} : (!da, !b1) -> ()
    // CHECK-NOT: async_wait
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    // CHECK: ttg.local_load %[[SLOT]] : {{.*}} -> tensor<64x32xbf16, #ttg.dot_op<{opIdx = 0, parent = #[[MMA]], kWidth = 2}>>
    %t = "tile.local_load"(%slot) : (!b1) -> tensor<64x32xbf16, #opa>
    return %t : tensor<64x32xbf16, #opa>
  }
}
