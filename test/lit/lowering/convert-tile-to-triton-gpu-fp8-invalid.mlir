// RUN: gemm-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90 mma=wgmma})'

// wgmma reads 8-bit operands K-major only: a B stored (K, N) is refused at the
// MMA when mma=wgmma asks for wgmma (mma=auto takes mma.sync instead).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
!acc = tensor<64x128xf32, #acc>
module attributes {tile.num_warps = 4 : i32} {
  func.func private @b_n_major(%c: !acc) -> !acc {
    %a = "tile.local_alloc"() : () -> !tile.shared<tensor<64x64xf8E4M3FN, #s>>
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<64x128xf8E4M3FN, #s>>
    %ta = "tile.local_load"(%a) : (!tile.shared<tensor<64x64xf8E4M3FN, #s>>) -> tensor<64x64xf8E4M3FN, #opa>
    %tb = "tile.local_load"(%b) : (!tile.shared<tensor<64x128xf8E4M3FN, #s>>) -> tensor<64x128xf8E4M3FN, #opb>
    // expected-error@+1 {{mma=wgmma: this MMA cannot use wgmma: operand B's 8-bit elements are not K-major (wgmma reads 8-bit operands K-major only: B must be the tile.memdesc_trans view of a row-major (N, K) buffer)}}
    %d = "tile.wmma"(%ta, %tb, %c) : (tensor<64x64xf8E4M3FN, #opa>, tensor<64x128xf8E4M3FN, #opb>, !acc) -> !acc
    return %d : !acc
  }
}

// -----

// A transposed view of an 8-bit (K, M) buffer is M-major.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 0, 1>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
!acc = tensor<64x128xf32, #acc>
module attributes {tile.num_warps = 4 : i32} {
  func.func private @a_m_major(%c: !acc) -> !acc {
    %a = "tile.local_alloc"() : () -> !tile.shared<tensor<64x64xf8E4M3FN, #s>>
    %at = "tile.memdesc_trans"(%a) {order = array<i32: 1, 0>} : (!tile.shared<tensor<64x64xf8E4M3FN, #s>>) -> !tile.shared<tensor<64x64xf8E4M3FN, #t>>
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<128x64xf8E4M3FN, #s>>
    %bt = "tile.memdesc_trans"(%b) {order = array<i32: 1, 0>} : (!tile.shared<tensor<128x64xf8E4M3FN, #s>>) -> !tile.shared<tensor<64x128xf8E4M3FN, #t>>
    %ta = "tile.local_load"(%at) : (!tile.shared<tensor<64x64xf8E4M3FN, #t>>) -> tensor<64x64xf8E4M3FN, #opa>
    %tb = "tile.local_load"(%bt) : (!tile.shared<tensor<64x128xf8E4M3FN, #t>>) -> tensor<64x128xf8E4M3FN, #opb>
    // expected-error@+1 {{operand A's 8-bit elements are not K-major (wgmma reads 8-bit operands K-major only: A must be the row-major (M, K) buffer, not a transposed view)}}
    %d = "tile.wmma"(%ta, %tb, %c) : (tensor<64x64xf8E4M3FN, #opa>, tensor<64x128xf8E4M3FN, #opb>, !acc) -> !acc
    return %d : !acc
  }
}
