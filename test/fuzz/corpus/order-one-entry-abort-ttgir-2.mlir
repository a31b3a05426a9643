// fuzz-command: --emit=llir
// fuzz-finding: signal: killed by SIGABRT in compiler.__init__
#sa = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1>}>
#sb = #tile.padded_shared<{interval = 128, amount = 16, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!ba = !tile.shared<tensor<128x64xf16, #sa>>
!bb = !tile.shared<tensor<64x128xf16, #sb>>
!bufa = !tile.shared<tensor<2x128x64xf16, #sa>>
!bufb = !tile.shared<tensor<2x64x128xf16, #sb>>
!acc = tensor<128x128xf32, #acc>
module attributes {tile.num_warps = 8 : i32, tile.threads_per_warp = 32 : i32, tile.target = "gfx1250"} {
  func.func @gemm(%a: !tile.ptr<f16>, %b: !tile.ptr<f16>, %c: !tile.ptr<f16>, %M: i32, %N: i32, %K: i32, %lda: i64, %ldb: i64, %ldc: i64) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c63 = arith.constant 63 : i32
    %c64 = arith.constant 64 : i32
    %kp = arith.addi %K, %c63 : i32
    %nk = arith.divsi %kp, %c64 : i32
    %abuf = "tile.local_alloc"() : () -> !bufa
    %bbuf = "tile.local_alloc"() : () -> !bufb
    %zero = arith.constant dense<0.000000e+00> : !acc
    %res = scf.for %i = %c0 to %nk step %c1 iter_args(%acc_i = %zero) -> (!acc) : i32 {
      %slot = arith.remsi %i, %c2 : i32
      %ac = "tile.memdesc_index"(%abuf, %slot) : (!bufa, i32) -> !ba
      %bc = "tile.memdesc_index"(%bbuf, %slot) : (!bufb, i32) -> !bb
      %at = "tile.local_load"(%ac) : (!ba) -> tensor<128x64xf16, #opa>
      %bt = "tile.local_load"(%bc) : (!bb) -> tensor<64x128xf16, #opb>
      %acc_n = "tile.wmma"(%at, %bt, %acc_i) : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, !acc) -> !acc
      scf.yield %acc_n : !acc
    }
    return
  }
}
