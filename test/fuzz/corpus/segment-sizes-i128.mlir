// fuzz-command: 
// fuzz-finding: internal-error: 'tile.gemm_schedule' op internal verifier error: TypeError: Can't cast unknown element type DenseArrayAttr (operandSegmentSizes of i128)
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %gl: !tile.ptr<i32>, %G: i32) {
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %gl, %G) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"() : () -> ()
    }) {kind = "persistent", grouped = "m", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, num_xcds = 1 : i32, operandSegmentSizes = array<i128: 1, 1, 1, 1, 1, 1, 1, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, i32) -> ()
    return
  }
}
