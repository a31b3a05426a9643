// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90})' | FileCheck %s
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90 mma=mma_v2})' | FileCheck %s --check-prefix=SYNC
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=gfx1250})' | FileCheck %s --check-prefix=AMD
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=gfx950})' | FileCheck %s --check-prefix=AMD
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=gfx942})' | FileCheck %s --check-prefix=AMD

// tile.memdesc_trans becomes ttg.memdesc_trans, whose layout Triton infers.
// cuda:90: wgmma reads the transposed view of a row-major buffer itself (the
// buffer NVMMA-swizzled, not transposed; the view the same layout with
// transposed = true), and the load vanishes. mma.sync and the AMD targets
// load the view into the dot-operand layout.

// dgrad's B: a (BN, BK) block, K contiguous, read as the (BK, BN) operand.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 0, 1>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!acc = tensor<64x128xf32, #acc>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK: #[[MMA:.*]] = #ttg.nvidia_mma<{versionMajor = 3, {{.*}}instrShape = [16, 128, 16]}>
  // CHECK: #[[NV:.*]] = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
  // CHECK: #[[NVT:.*]] = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, elementBitWidth = 16}>
  // CHECK-LABEL: tt.func private @b_transposed(
  // CHECK: %[[B:.*]] = ttg.local_alloc : () -> !ttg.memdesc<128x64xf16, #[[NV]], #smem, mutable>
  // CHECK: %[[BT:.*]] = ttg.memdesc_trans %[[B]] {order = array<i32: 1, 0>} : !ttg.memdesc<128x64xf16, #[[NV]], #smem, mutable> -> !ttg.memdesc<64x128xf16, #[[NVT]], #smem, mutable>
  // CHECK-NOT: ttg.local_load
  // CHECK: %[[D:.*]] = ttng.warp_group_dot %{{.*}}, %[[BT]], %{{.*}} {isAsync = true} : !ttg.memdesc<64x64xf16, #[[NV]], #smem, mutable> * !ttg.memdesc<64x128xf16, #[[NVT]], #smem, mutable> -> tensor<64x128xf32, #[[MMA]]>
  // CHECK: ttng.warp_group_dot_wait %[[D]]
  // SYNC-LABEL: tt.func private @b_transposed(
  // SYNC: %[[BT:.*]] = ttg.memdesc_trans %{{.*}} {order = array<i32: 1, 0>}
  // SYNC: ttg.local_load %[[BT]] : {{.*}} -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #{{.*}}, kWidth = 2}>>
  // SYNC: tt.dot
  // SYNC-NOT: warp_group_dot
  // AMD-LABEL: tt.func private @b_transposed(
  // AMD: %[[BT:.*]] = ttg.memdesc_trans %{{.*}} {order = array<i32: 1, 0>} : !ttg.memdesc<128x64xf16, {{.*}}> -> !ttg.memdesc<64x128xf16,
  // AMD: ttg.local_load %[[BT]] : {{.*}} -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1,
  // AMD: tt.dot
  func.func private @b_transposed(%c: !acc) -> !acc {
    %a = "tile.local_alloc"() : () -> !tile.shared<tensor<64x64xf16, #s>>
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<128x64xf16, #s>>
    %bt = "tile.memdesc_trans"(%b) {order = array<i32: 1, 0>} : (!tile.shared<tensor<128x64xf16, #s>>) -> !tile.shared<tensor<64x128xf16, #t>>
    %ta = "tile.local_load"(%a) : (!tile.shared<tensor<64x64xf16, #s>>) -> tensor<64x64xf16, #opa>
    %tb = "tile.local_load"(%bt) : (!tile.shared<tensor<64x128xf16, #t>>) -> tensor<64x128xf16, #opb>
    %d = "tile.wmma"(%ta, %tb, %c) : (tensor<64x64xf16, #opa>, tensor<64x128xf16, #opb>, !acc) -> !acc
    return %d : !acc
  }
}

// -----

// wgrad's A: a (BK, BM) slot of a ring, M contiguous, read as the (BM, BK)
// operand of an asynchronous MMA.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 0, 1>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: tt.func private @a_transposed_async(
  // CHECK: %[[R:.*]] = ttg.local_alloc : () -> !ttg.memdesc<2x64x64xbf16, #[[NV:.*]], #smem, mutable>
  // CHECK: %[[A:.*]] = ttg.memdesc_index %[[R]]
  // CHECK: %[[AT:.*]] = ttg.memdesc_trans %[[A]] {order = array<i32: 1, 0>}
  // CHECK: %[[D:.*]] = ttng.warp_group_dot %[[AT]], %{{.*}}, %{{.*}}, %true {isAsync = true}
  // CHECK-NEXT: ttng.warp_group_dot_wait %[[D]] {pendings = 0 : i32}
  // SYNC-LABEL: tt.func private @a_transposed_async(
  // SYNC: %[[AT:.*]] = ttg.memdesc_trans
  // SYNC: ttg.local_load %[[AT]] : {{.*}} -> tensor<64x64xbf16, #ttg.dot_op<{opIdx = 0,
  // SYNC: tt.dot
  // AMD-LABEL: tt.func private @a_transposed_async(
  // AMD: %[[AT:.*]] = ttg.memdesc_trans
  // AMD: ttg.local_load %[[AT]] : {{.*}} -> tensor<64x64xbf16, #ttg.dot_op<{opIdx = 0,
  // AMD: tt.dot
  func.func private @a_transposed_async(%i: i32, %c: !acc) -> !acc {
    %ring = "tile.local_alloc"() : () -> !tile.shared<tensor<2x64x64xbf16, #s>>
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<64x64xbf16, #s>>
    %a = "tile.memdesc_index"(%ring, %i) : (!tile.shared<tensor<2x64x64xbf16, #s>>, i32) -> !tile.shared<tensor<64x64xbf16, #s>>
    %at = "tile.memdesc_trans"(%a) {order = array<i32: 1, 0>} : (!tile.shared<tensor<64x64xbf16, #s>>) -> !tile.shared<tensor<64x64xbf16, #t>>
    %d = "tile.async_wmma"(%at, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!tile.shared<tensor<64x64xbf16, #t>>, !tile.shared<tensor<64x64xbf16, #s>>, !acc) -> !acc
    %w = "tile.async_wmma_wait"(%d) {num = 0 : i32} : (!acc) -> !acc
    return %w : !acc
  }
}
