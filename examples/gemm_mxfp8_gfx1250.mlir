// A pipelined TDM + scaled-WMMA MXFP8 GEMM for gfx1250:
// C (MxN, bf16) = (A (MxK, e4m3) x SA) @ (B (KxN, e4m3) x SB), fp32 accumulation,
// with e8m0 block scales, one per 32 elements of K: SA is M x K/32 and SB is N x K/32,
// both row-major (K/32 contiguous). 128x128x128 blocks, 8 warps, two shared buffers
// per operand and per scale tile.
//
// Each iteration first issues the four TDM copies of the next K tile (A, B and their
// scale tiles: 128x4 bytes each), then waits for the current tile, loads the operands
// and the scales in the layouts of the 16x16x128 scaled WMMA, and runs it. The copies
// carry no warp_used_hint: `tile-derive-warp-hints` gives the four of them a quarter
// of the warps each (0x03, 0x0C, 0x30, 0xC0) and `tile-fuse-tdm-copies` then issues
// them as one TDM instruction. Ragged M, N and K are handled by TDM's zero fill (a
// K tail reads as zero elements, whatever its scales) and the masked store (C);
// K must be a multiple of 32, the scale block.
#sa = #tile.padded_shared<{interval = 128, amount = 16, order = array<i64: 1, 0>}>
#sb = #tile.padded_shared<{interval = 128, amount = 16, order = array<i64: 1, 0>}>
#ss = #tile.padded_shared<{interval = 256, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 128>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
#sca = #tile.scale_layout<{op_idx = 0, parent = #acc}>
#scb = #tile.scale_layout<{op_idx = 1, parent = #acc}>
!da = !tile.tensor_desc<tensor<128x128xf8E4M3FN, #sa>>
!db = !tile.tensor_desc<tensor<128x128xf8E4M3FN, #sb>>
!ds = !tile.tensor_desc<tensor<128x4xf8E8M0FNU, #ss>>
!ba = !tile.shared<tensor<128x128xf8E4M3FN, #sa>>
!bb = !tile.shared<tensor<128x128xf8E4M3FN, #sb>>
!bs = !tile.shared<tensor<128x4xf8E8M0FNU, #ss>>
!bufa = !tile.shared<tensor<2x128x128xf8E4M3FN, #sa>>
!bufb = !tile.shared<tensor<2x128x128xf8E4M3FN, #sb>>
!bufs = !tile.shared<tensor<2x128x4xf8E8M0FNU, #ss>>
!acc = tensor<128x128xf32, #acc>
module attributes {tile.num_warps = 8 : i32, tile.threads_per_warp = 32 : i32, tile.target = "gfx1250"} {
  func.func @gemm_mxfp8(%a: !tile.ptr<f8E4M3FN>, %b: !tile.ptr<f8E4M3FN>, %sa: !tile.ptr<f8E8M0FNU>, %sb: !tile.ptr<f8E8M0FNU>, %c: !tile.ptr<bf16>, %M: i32, %N: i32, %K: i32, %lda: i64 {tile.divisibility = 16 : i32}, %ldb: i64 {tile.divisibility = 16 : i32}, %ldc: i64 {tile.divisibility = 16 : i32}) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c4 = arith.constant 4 : i32
    %c32 = arith.constant 32 : i32
    %c127 = arith.constant 127 : i32
    %c128 = arith.constant 128 : i32
    %one = arith.constant 1 : i64
    %pid_m = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %pid_n = "tile.program_id"() {axis = 1 : i32} : () -> i32
    %off_m = arith.muli %pid_m, %c128 : i32
    %off_n = arith.muli %pid_n, %c128 : i32
    %kp = arith.addi %K, %c127 : i32
    %nk = arith.divsi %kp, %c128 : i32
    // The scale tensors: K/32 codes per row, rows one after the other.
    %ks = arith.divsi %K, %c32 : i32
    %lds = arith.extsi %ks : i32 to i64
    %da = "tile.make_tensor_descriptor"(%a, %M, %K, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f8E4M3FN>, i32, i32, i64, i64) -> !da
    %db = "tile.make_tensor_descriptor"(%b, %K, %N, %ldb, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f8E4M3FN>, i32, i32, i64, i64) -> !db
    %dsa = "tile.make_tensor_descriptor"(%sa, %M, %ks, %lds, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f8E8M0FNU>, i32, i32, i64, i64) -> !ds
    %dsb = "tile.make_tensor_descriptor"(%sb, %N, %ks, %lds, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f8E8M0FNU>, i32, i32, i64, i64) -> !ds
    %abuf = "tile.local_alloc"() : () -> !bufa
    %bbuf = "tile.local_alloc"() : () -> !bufb
    %sabuf = "tile.local_alloc"() : () -> !bufs
    %sbbuf = "tile.local_alloc"() : () -> !bufs
    // Prologue: K tile 0 into buffer 0.
    %has0 = arith.cmpi sgt, %nk, %c0 : i32
    %da0 = "tile.update_tensor_descriptor"(%da, %off_m, %c0, %has0) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    %db0 = "tile.update_tensor_descriptor"(%db, %c0, %off_n, %has0) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!db, i32, i32, i1) -> !db
    %dsa0 = "tile.update_tensor_descriptor"(%dsa, %off_m, %c0, %has0) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!ds, i32, i32, i1) -> !ds
    %dsb0 = "tile.update_tensor_descriptor"(%dsb, %off_n, %c0, %has0) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!ds, i32, i32, i1) -> !ds
    %a0 = "tile.memdesc_index"(%abuf, %c0) : (!bufa, i32) -> !ba
    %b0 = "tile.memdesc_index"(%bbuf, %c0) : (!bufb, i32) -> !bb
    %sa0 = "tile.memdesc_index"(%sabuf, %c0) : (!bufs, i32) -> !bs
    %sb0 = "tile.memdesc_index"(%sbbuf, %c0) : (!bufs, i32) -> !bs
    "tile.async_tdm_copy_global_to_local"(%da0, %a0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_copy_global_to_local"(%db0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!db, !bb) -> ()
    "tile.async_tdm_copy_global_to_local"(%dsa0, %sa0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!ds, !bs) -> ()
    "tile.async_tdm_copy_global_to_local"(%dsb0, %sb0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!ds, !bs) -> ()
    %zero = arith.constant dense<0.000000e+00> : !acc
    %res = scf.for %i = %c0 to %nk step %c1 iter_args(%acc_i = %zero) -> (!acc) : i32 {
      // Issue K tile i+1 into the other buffers (predicated off past the end).
      %next = arith.addi %i, %c1 : i32
      %has_next = arith.cmpi slt, %next, %nk : i32
      %slot_n = arith.remsi %next, %c2 : i32
      %k_n = arith.muli %next, %c128 : i32
      %ks_n = arith.muli %next, %c4 : i32
      %dan = "tile.update_tensor_descriptor"(%da, %off_m, %k_n, %has_next) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
      %dbn = "tile.update_tensor_descriptor"(%db, %k_n, %off_n, %has_next) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!db, i32, i32, i1) -> !db
      %dsan = "tile.update_tensor_descriptor"(%dsa, %off_m, %ks_n, %has_next) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!ds, i32, i32, i1) -> !ds
      %dsbn = "tile.update_tensor_descriptor"(%dsb, %off_n, %ks_n, %has_next) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!ds, i32, i32, i1) -> !ds
      %an = "tile.memdesc_index"(%abuf, %slot_n) : (!bufa, i32) -> !ba
      %bn = "tile.memdesc_index"(%bbuf, %slot_n) : (!bufb, i32) -> !bb
      %san = "tile.memdesc_index"(%sabuf, %slot_n) : (!bufs, i32) -> !bs
      %sbn = "tile.memdesc_index"(%sbbuf, %slot_n) : (!bufs, i32) -> !bs
      "tile.async_tdm_copy_global_to_local"(%dan, %an) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
      "tile.async_tdm_copy_global_to_local"(%dbn, %bn) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!db, !bb) -> ()
      "tile.async_tdm_copy_global_to_local"(%dsan, %san) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!ds, !bs) -> ()
      "tile.async_tdm_copy_global_to_local"(%dsbn, %sbn) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!ds, !bs) -> ()
      // Tile i has landed once at most the four copies just issued are in flight.
      "tile.async_tdm_wait"() {num = 4 : i32} : () -> ()
      %slot = arith.remsi %i, %c2 : i32
      %ac = "tile.memdesc_index"(%abuf, %slot) : (!bufa, i32) -> !ba
      %bc = "tile.memdesc_index"(%bbuf, %slot) : (!bufb, i32) -> !bb
      %sac = "tile.memdesc_index"(%sabuf, %slot) : (!bufs, i32) -> !bs
      %sbc = "tile.memdesc_index"(%sbbuf, %slot) : (!bufs, i32) -> !bs
      %at = "tile.local_load"(%ac) : (!ba) -> tensor<128x128xf8E4M3FN, #opa>
      %bt = "tile.local_load"(%bc) : (!bb) -> tensor<128x128xf8E4M3FN, #opb>
      %sat = "tile.local_load"(%sac) : (!bs) -> tensor<128x4xf8E8M0FNU, #sca>
      %sbt = "tile.local_load"(%sbc) : (!bs) -> tensor<128x4xf8E8M0FNU, #scb>
      %acc_n = "tile.scaled_wmma"(%at, %sat, %bt, %sbt, %acc_i) : (tensor<128x128xf8E4M3FN, #opa>, tensor<128x4xf8E8M0FNU, #sca>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x4xf8E8M0FNU, #scb>, !acc) -> !acc
      scf.yield %acc_n : !acc
    }
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %out = arith.truncf %res : !acc to tensor<128x128xbf16, #acc>
    "tile.store_block"(%c, %M, %N, %ldc, %one, %off_m, %off_n, %out) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<bf16>, i32, i32, i64, i64, i32, i32, tensor<128x128xbf16, #acc>) -> ()
    return
  }
}
