// A pipelined TDM + WMMA GEMM for gfx1250: C (MxN, f16) = A (MxK, f16) @ B (KxN, f16),
// fp32 accumulation, 128x128x64 blocks, 8 warps, two shared buffers per operand.
//
// Each iteration first issues the TDM copies of the next K tile (A by warps 0-3,
// B by warps 4-7: contiguous halves balance the SIMDs), then waits for the
// current tile and runs WMMA on it, so copies overlap compute. Ragged M, N and K
// are handled by TDM's zero fill (loads) and the masked store (C).
#sa = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#sb = #tile.padded_shared<{interval = 128, amount = 16, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<128x64xf16, #sa>>
!db = !tile.tensor_desc<tensor<64x128xf16, #sb>>
!ba = !tile.shared<tensor<128x64xf16, #sa>>
!bb = !tile.shared<tensor<64x128xf16, #sb>>
!bufa = !tile.shared<tensor<2x128x64xf16, #sa>>
!bufb = !tile.shared<tensor<2x64x128xf16, #sb>>
!acc = tensor<128x128xf32, #acc>
module attributes {tile.num_warps = 8 : i32, tile.threads_per_warp = 32 : i32, tile.target = "gfx1250"} {
  func.func @gemm(%a: !tile.ptr<f16>, %b: !tile.ptr<f16>, %c: !tile.ptr<f16>, %M: i32, %N: i32, %K: i32, %lda: i64 {tile.divisibility = 16 : i32}, %ldb: i64 {tile.divisibility = 16 : i32}, %ldc: i64 {tile.divisibility = 16 : i32}) {
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
    %da = "tile.make_tensor_descriptor"(%a, %M, %K, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %db = "tile.make_tensor_descriptor"(%b, %K, %N, %ldb, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !db
    %abuf = "tile.local_alloc"() : () -> !bufa
    %bbuf = "tile.local_alloc"() : () -> !bufb
    // Prologue: K tile 0 into buffer 0.
    %has0 = arith.cmpi sgt, %nk, %c0 : i32
    %da0 = "tile.update_tensor_descriptor"(%da, %off_m, %c0, %has0) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    %db0 = "tile.update_tensor_descriptor"(%db, %c0, %off_n, %has0) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!db, i32, i32, i1) -> !db
    %a0 = "tile.memdesc_index"(%abuf, %c0) : (!bufa, i32) -> !ba
    %b0 = "tile.memdesc_index"(%bbuf, %c0) : (!bufb, i32) -> !bb
    "tile.async_tdm_copy_global_to_local"(%da0, %a0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!da, !ba) -> ()
    "tile.async_tdm_copy_global_to_local"(%db0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!db, !bb) -> ()
    %zero = arith.constant dense<0.000000e+00> : !acc
    %res = scf.for %i = %c0 to %nk step %c1 iter_args(%acc_i = %zero) -> (!acc) : i32 {
      // Issue K tile i+1 into the other buffer (predicated off past the end).
      %next = arith.addi %i, %c1 : i32
      %has_next = arith.cmpi slt, %next, %nk : i32
      %slot_n = arith.remsi %next, %c2 : i32
      %k_n = arith.muli %next, %c64 : i32
      %dan = "tile.update_tensor_descriptor"(%da, %off_m, %k_n, %has_next) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
      %dbn = "tile.update_tensor_descriptor"(%db, %k_n, %off_n, %has_next) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!db, i32, i32, i1) -> !db
      %an = "tile.memdesc_index"(%abuf, %slot_n) : (!bufa, i32) -> !ba
      %bn = "tile.memdesc_index"(%bbuf, %slot_n) : (!bufb, i32) -> !bb
      "tile.async_tdm_copy_global_to_local"(%dan, %an) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!da, !ba) -> ()
      "tile.async_tdm_copy_global_to_local"(%dbn, %bn) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!db, !bb) -> ()
      // Tile i has landed once at most the two copies just issued are in flight.
      "tile.async_tdm_wait"() {num = 2 : i32} : () -> ()
      %slot = arith.remsi %i, %c2 : i32
      %ac = "tile.memdesc_index"(%abuf, %slot) : (!bufa, i32) -> !ba
      %bc = "tile.memdesc_index"(%bbuf, %slot) : (!bufb, i32) -> !bb
      %at = "tile.local_load"(%ac) : (!ba) -> tensor<128x64xf16, #opa>
      %bt = "tile.local_load"(%bc) : (!bb) -> tensor<64x128xf16, #opb>
      %acc_n = "tile.wmma"(%at, %bt, %acc_i) : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, !acc) -> !acc
      scf.yield %acc_n : !acc
    }
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %out = arith.truncf %res : !acc to tensor<128x128xf16, #acc>
    "tile.store_block"(%c, %M, %N, %ldc, %one, %off_m, %off_n, %out) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<128x128xf16, #acc>) -> ()
    return
  }
}
