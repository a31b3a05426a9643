// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-lower-gemm-schedule)' | FileCheck %s
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-lower-gemm-schedule)' | gemm-opt --split-input-file > /dev/null

// c_layout = "col-major" (swap-AB's C^T): the tile at (m_off, n_off) is stored with strides (1, ldc), element (m, n) at m + n * ldc; the rows and columns it is masked by stay M and N.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @col_major
  func.func @col_major(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64) {
    // CHECK: %[[ONE:.*]] = arith.constant 1 : i64
    // CHECK: "tile.store_block"(%arg3, %arg0, %arg1, %[[ONE]], %arg4, %{{.*}}, %{{.*}}, %{{.*}})
    // CHECK-NOT: "tile.store_block"
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", c_layout = "col-major", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// Split-K with a col-major C: both of its stores of C (a lone slice's, the last program's sum) take strides (1, ldc); the fp32 partials keep their row-major slots.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @split_k_col_major
  func.func @split_k_col_major(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %s: !tile.ptr<i32>, %p: !tile.ptr<f32>) {
    // CHECK: "tile.store_block"(%arg3, %arg0, %arg1, %c1_i64{{[_0-9]*}}, %arg4,
    // CHECK: "tile.store_block"(%arg6, %{{[^,]*}}, %{{[^,]*}}, %c32_i64{{[_0-9]*}}, %c1_i64
    // CHECK: "tile.store_block"(%arg3, %arg0, %arg1, %c1_i64{{[_0-9]*}}, %arg4,
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s, %p) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "split-k", c_layout = "col-major", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, !tile.ptr<f32>) -> ()
    return
  }
}

// -----

// The default (row-major) stores with strides (ldc, 1).
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @row_major
  func.func @row_major(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64) {
    // CHECK: %[[ONE:.*]] = arith.constant 1 : i64
    // CHECK: "tile.store_block"(%arg3, %arg0, %arg1, %arg4, %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}})
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", c_layout = "row-major", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}
