// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== c_layout names a layout. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'c_layout' must be one of row-major, col-major, got "transposed"}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", c_layout = "transposed", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== A col-major C is for dense schedules: a group's rows are rows of C. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %gl: !tile.ptr<i32>, %G: i32, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op c_layout = "col-major" is for grouped = "none" (a group's rows are rows of C), not grouped = "m"}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %gl, %G) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", grouped = "m", c_layout = "col-major", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, i32) -> ()
    return
  }
}
