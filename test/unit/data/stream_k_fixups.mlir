// Stream-K schedules whose body records the work it is given, for
// test_stream_k_fixup_model.py: each call of the body appends (m_off, n_off,
// k_off, k_end) to its program's log (slot pid * 128: a count, then four
// i32 per call) and yields zeros. The lowered schedule must visit the
// segments of gemm_opt.core.schedules.StreamKPartition.segments in order.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @atomic(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %log: !tile.ptr<i32>) {
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %c3 = arith.constant 3 : i32
      %c4 = arith.constant 4 : i32
      %c128 = arith.constant 128 : i32
      %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
      %base = arith.muli %pid, %c128 : i32
      %n = "tile.atomic_rmw"(%log, %base, %c1) {kind = "add", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %off = arith.muli %n, %c4 : i32
      %at0 = arith.addi %base, %off : i32
      %e0 = arith.addi %at0, %c1 : i32
      %e1 = arith.addi %e0, %c1 : i32
      %e2 = arith.addi %e0, %c2 : i32
      %e3 = arith.addi %e0, %c3 : i32
      %o0 = "tile.atomic_rmw"(%log, %e0, %mo) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %o1 = "tile.atomic_rmw"(%log, %e1, %no) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %o2 = "tile.atomic_rmw"(%log, %e2, %ko) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %o3 = "tile.atomic_rmw"(%log, %e3, %ke) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %z = arith.constant dense<0.000000e+00> : tensor<16x16xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<16x16xf32, #acc>) -> ()
    }) {kind = "stream-k", reduction = "atomic", block_m = 16 : i32, block_n = 16 : i32, block_k = 16 : i32, group_m = 2 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
  func.func @linear(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %s: !tile.ptr<i32>, %p: !tile.ptr<f32>, %log: !tile.ptr<i32>) {
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s, %p) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %c3 = arith.constant 3 : i32
      %c4 = arith.constant 4 : i32
      %c128 = arith.constant 128 : i32
      %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
      %base = arith.muli %pid, %c128 : i32
      %n = "tile.atomic_rmw"(%log, %base, %c1) {kind = "add", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %off = arith.muli %n, %c4 : i32
      %at0 = arith.addi %base, %off : i32
      %e0 = arith.addi %at0, %c1 : i32
      %e1 = arith.addi %e0, %c1 : i32
      %e2 = arith.addi %e0, %c2 : i32
      %e3 = arith.addi %e0, %c3 : i32
      %o0 = "tile.atomic_rmw"(%log, %e0, %mo) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %o1 = "tile.atomic_rmw"(%log, %e1, %no) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %o2 = "tile.atomic_rmw"(%log, %e2, %ko) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %o3 = "tile.atomic_rmw"(%log, %e3, %ke) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %z = arith.constant dense<0.000000e+00> : tensor<16x16xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<16x16xf32, #acc>) -> ()
    }) {kind = "stream-k", reduction = "linear", block_m = 16 : i32, block_n = 16 : i32, block_k = 16 : i32, group_m = 2 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, !tile.ptr<f32>) -> ()
    return
  }
  func.func @tree(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %s: !tile.ptr<i32>, %p: !tile.ptr<f32>, %log: !tile.ptr<i32>) {
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s, %p) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %c3 = arith.constant 3 : i32
      %c4 = arith.constant 4 : i32
      %c128 = arith.constant 128 : i32
      %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
      %base = arith.muli %pid, %c128 : i32
      %n = "tile.atomic_rmw"(%log, %base, %c1) {kind = "add", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %off = arith.muli %n, %c4 : i32
      %at0 = arith.addi %base, %off : i32
      %e0 = arith.addi %at0, %c1 : i32
      %e1 = arith.addi %e0, %c1 : i32
      %e2 = arith.addi %e0, %c2 : i32
      %e3 = arith.addi %e0, %c3 : i32
      %o0 = "tile.atomic_rmw"(%log, %e0, %mo) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %o1 = "tile.atomic_rmw"(%log, %e1, %no) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %o2 = "tile.atomic_rmw"(%log, %e2, %ko) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %o3 = "tile.atomic_rmw"(%log, %e3, %ke) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %z = arith.constant dense<0.000000e+00> : tensor<16x16xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<16x16xf32, #acc>) -> ()
    }) {kind = "stream-k", reduction = "tree", block_m = 16 : i32, block_n = 16 : i32, block_k = 16 : i32, group_m = 2 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, !tile.ptr<f32>) -> ()
    return
  }
}
