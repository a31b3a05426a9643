// A stream-K GEMM for gfx1250: C (MxN, f16) = A (MxK, f16) @ B (KxN, f16), fp32
// accumulation, 64x64x32 blocks, 4 warps, on any number of programs P (launch one
// per compute unit: grid = (P, 1, 1)).
//
// The schedule is IR: `tile.gemm_schedule` says which program computes which
// output tile over which K range; its body computes one tile's fp32 partial over
// [k_off, k_end) and is written once. `tile-lower-gemm-schedule` (the first pass
// of every target's pipeline) turns it into the work loop: whole tiles first,
// then the leftover K iterations split evenly over the P programs, partials
// combined by a linear fix-up: the tile's last contributor adds the other
// contributors' fp32 partials (from %partials) in a fixed order after waiting
// for their flags (in %sync), so the result is bitwise deterministic for a given P.
//
// Host contract: %sync (P i32 flags) is zeroed on the launch stream before every
// launch; %partials holds P x 64 x 64 f32 (see gemm_opt.core.schedules.workspace_layout).
//
//   gemm-opt examples/gemm_stream_k.mlir --emit=amdgcn -o gemm_stream_k.amdgcn
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32, tile.target = "gfx1250"} {
  func.func @gemm(%a: !tile.ptr<f16>, %b: !tile.ptr<f16>, %c: !tile.ptr<f16>, %M: i32, %N: i32, %K: i32, %lda: i64, %ldb: i64, %ldc: i64, %sync: !tile.ptr<i32>, %partials: !tile.ptr<f32>) {
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %sync, %partials) ({
    ^bb0(%group: i32, %m_off: i32, %m_end: i32, %n_off: i32, %k_off: i32, %k_end: i32):
      %zero = arith.constant dense<0.000000e+00> : !acc
      %one = arith.constant 1 : i64
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c31 = arith.constant 31 : i32
      %c32 = arith.constant 32 : i32
      // K blocks of this range: cdiv(k_end - k_off, 32).
      %span = arith.subi %k_end, %k_off : i32
      %kp = arith.addi %span, %c31 : i32
      %nk = arith.divsi %kp, %c32 : i32
      %sum = scf.for %i = %c0 to %nk step %c1 iter_args(%acc = %zero) -> (!acc) : i32 {
        %koff = arith.muli %i, %c32 : i32
        %k = arith.addi %k_off, %koff : i32
        // Masked by the range end and the edges: ragged M, N, K need no special case.
        %at = "tile.load_block"(%a, %m_end, %k_end, %lda, %one, %m_off, %k) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32) -> tensor<64x32xf16, #opa>
        %bt = "tile.load_block"(%b, %k_end, %N, %ldb, %one, %k, %n_off) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32) -> tensor<32x64xf16, #opb>
        %next = "tile.wmma"(%at, %bt, %acc) : (tensor<64x32xf16, #opa>, tensor<32x64xf16, #opb>, !acc) -> !acc
        scf.yield %next : !acc
      }
      "tile.schedule_yield"(%sum) : (!acc) -> ()
    }) {kind = "stream-k", reduction = "linear", grouped = "none", block_m = 64 : i32, block_n = 64 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, !tile.ptr<f32>) -> ()
    return
  }
}
