// RUN: gemm-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90 mma=wgmma})'

// mma=wgmma makes every reason that keeps a tile.async_wmma synchronous under
// mma=auto an error at the MMA.

// A's buffer is column-major (a transposed operand).
#s = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
#t = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 0, 1>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func private @transposed(%c: !acc) -> !acc {
    %a = "tile.local_alloc"() : () -> !tile.shared<tensor<64x32xf16, #t>>
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<32x64xf16, #s>>
    // expected-error@+1 {{mma=wgmma: this MMA cannot use wgmma: operand A's buffer is not row-major (transposed)}}
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!tile.shared<tensor<64x32xf16, #t>>, !tile.shared<tensor<32x64xf16, #s>>, !acc) -> !acc
    %w = "tile.async_wmma_wait"(%d) {num = 0 : i32} : (!acc) -> !acc
    return %w : !acc
  }
}

// -----

// 2 warps are not a whole warpgroup.
#s = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 2 : i32, tile.target = "cuda:90"} {
  func.func private @half_warpgroup(%c: !acc) -> !acc {
    %a = "tile.local_alloc"() : () -> !tile.shared<tensor<64x32xf16, #s>>
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<32x64xf16, #s>>
    // expected-error@+1 {{mma=wgmma: this MMA cannot use wgmma: 2 warps are not whole warpgroups of 4}}
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!tile.shared<tensor<64x32xf16, #s>>, !tile.shared<tensor<32x64xf16, #s>>, !acc) -> !acc
    return %d : !acc
  }
}
