// A pipelined FP8 GEMM for cuda:90 (wgmma e4m3): C (MxN, bf16) = A (MxK, e4m3) @ B,
// with B stored (N, K), row-major: wgmma reads 8-bit operands K-major only, so the
// kernel copies (N, K) tiles of B and hands the MMA their tile.memdesc_trans view
// (K x N). fp32 accumulation (each wgmma's sum is added into the fp32 accumulator),
// 128x128x64 blocks, 8 warps, two shared buffers per operand; tile-pipeline-mma
// keeps one MMA in flight. Ragged M, N and K: zero fill and the masked store.
#sa = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#sbt = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 0, 1>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
!da = !tile.tensor_desc<tensor<128x64xf8E4M3FN, #sa>>
!ba = !tile.shared<tensor<128x64xf8E4M3FN, #sa>>
!bbt = !tile.shared<tensor<64x128xf8E4M3FN, #sbt>>
!bufa = !tile.shared<tensor<2x128x64xf8E4M3FN, #sa>>
!acc = tensor<128x128xf32, #acc>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @gemm_fp8(%a: !tile.ptr<f8E4M3FN>, %b: !tile.ptr<f8E4M3FN>, %c: !tile.ptr<bf16>, %M: i32, %N: i32, %K: i32, %lda: i64 {tile.divisibility = 16 : i32}, %ldb: i64 {tile.divisibility = 16 : i32}, %ldc: i64 {tile.divisibility = 16 : i32}) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c63 = arith.constant 63 : i32
    %c64 = arith.constant 64 : i32
    %c128 = arith.constant 128 : i32
    %one = arith.constant 1 : i64
    %pid_m = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %pid_n = "tile.program_id"() {axis = 1 : i32} : () -> i32
    %off_m = arith.muli %pid_m, %c128 : i32
    %off_n = arith.muli %pid_n, %c128 : i32
    %kp = arith.addi %K, %c63 : i32
    %nk = arith.divsi %kp, %c64 : i32
    %da = "tile.make_tensor_descriptor"(%a, %M, %K, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f8E4M3FN>, i32, i32, i64, i64) -> !da
    %db = "tile.make_tensor_descriptor"(%b, %N, %K, %ldb, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f8E4M3FN>, i32, i32, i64, i64) -> !da
    %abuf = "tile.local_alloc"() : () -> !bufa
    %bbuf = "tile.local_alloc"() : () -> !bufa
    %has0 = arith.cmpi sgt, %nk, %c0 : i32
    %da0 = "tile.update_tensor_descriptor"(%da, %off_m, %c0, %has0) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    %db0 = "tile.update_tensor_descriptor"(%db, %off_n, %c0, %has0) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    %a0 = "tile.memdesc_index"(%abuf, %c0) : (!bufa, i32) -> !ba
    %b0 = "tile.memdesc_index"(%bbuf, %c0) : (!bufa, i32) -> !ba
    "tile.async_tdm_copy_global_to_local"(%da0, %a0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_copy_global_to_local"(%db0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    %zero = arith.constant dense<0.000000e+00> : !acc
    %res = scf.for %i = %c0 to %nk step %c1 iter_args(%acc_i = %zero) -> (!acc) : i32 {
      %next = arith.addi %i, %c1 : i32
      %has_next = arith.cmpi slt, %next, %nk : i32
      %slot_n = arith.remsi %next, %c2 : i32
      %k_n = arith.muli %next, %c64 : i32
      %dan = "tile.update_tensor_descriptor"(%da, %off_m, %k_n, %has_next) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
      %dbn = "tile.update_tensor_descriptor"(%db, %off_n, %k_n, %has_next) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
      %an = "tile.memdesc_index"(%abuf, %slot_n) : (!bufa, i32) -> !ba
      %bn = "tile.memdesc_index"(%bbuf, %slot_n) : (!bufa, i32) -> !ba
      "tile.async_tdm_copy_global_to_local"(%dan, %an) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
      "tile.async_tdm_copy_global_to_local"(%dbn, %bn) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
      "tile.async_tdm_wait"() {num = 2 : i32} : () -> ()
      %slot = arith.remsi %i, %c2 : i32
      %ac = "tile.memdesc_index"(%abuf, %slot) : (!bufa, i32) -> !ba
      %bc = "tile.memdesc_index"(%bbuf, %slot) : (!bufa, i32) -> !ba
      %bct = "tile.memdesc_trans"(%bc) {order = array<i32: 1, 0>} : (!ba) -> !bbt
      %at = "tile.local_load"(%ac) : (!ba) -> tensor<128x64xf8E4M3FN, #opa>
      %bt = "tile.local_load"(%bct) : (!bbt) -> tensor<64x128xf8E4M3FN, #opb>
      %acc_n = "tile.wmma"(%at, %bt, %acc_i) : (tensor<128x64xf8E4M3FN, #opa>, tensor<64x128xf8E4M3FN, #opb>, !acc) -> !acc
      scf.yield %acc_n : !acc
    }
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %out = arith.truncf %res : !acc to tensor<128x128xbf16, #acc>
    "tile.store_block"(%c, %M, %N, %ldc, %one, %off_m, %off_n, %out) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<bf16>, i32, i32, i64, i64, i32, i32, tensor<128x128xbf16, #acc>) -> ()
    return
  }
}
