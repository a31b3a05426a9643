// RUN: gemm-opt %s --split-input-file | FileCheck %s
// RUN: gemm-opt %s --split-input-file | gemm-opt --split-input-file | FileCheck %s

// A persistent schedule: no workspace.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @persistent
  func.func @persistent(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // CHECK: "tile.gemm_schedule"(%arg0, %arg1, %arg2, %arg3, %arg4) ({
    // CHECK: "tile.schedule_yield"(%arg5)
    // CHECK: kind = "persistent"
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", grouped = "none", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// Work stealing takes the counters.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @work_stealing
  func.func @work_stealing(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %s: !tile.ptr<i32>, %x: tensor<32x32xf32, #acc>) {
    // CHECK: "tile.gemm_schedule"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5)
    // CHECK: kind = "work-stealing"
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "work-stealing", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, num_xcds = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>) -> ()
    return
  }
}

// -----

// Stream-K with a tree reduction takes flags and partials.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @stream_k_tree
  func.func @stream_k_tree(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %s: !tile.ptr<i32>, %p: !tile.ptr<f32>, %x: tensor<32x32xf32, #acc>) {
    // CHECK: reduction = "tree"
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s, %p) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "stream-k", reduction = "tree", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, !tile.ptr<f32>) -> ()
    return
  }
}

// -----

// Stream-K atomic needs no workspace.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @stream_k_atomic
  func.func @stream_k_atomic(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // CHECK: reduction = "atomic"
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "stream-k", reduction = "atomic", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// Grouped by M: group sizes on the device.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @grouped_m
  func.func @grouped_m(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %gl: !tile.ptr<i32>, %G: i32, %x: tensor<32x32xf32, #acc>) {
    // CHECK: grouped = "m"
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %gl, %G) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", grouped = "m", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, i32) -> ()
    return
  }
}

// -----

// wgrad with tile_loop = "per-group".
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @grouped_k_per_group(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %gl: !tile.ptr<i32>, %G: i32, %x: tensor<32x32xf32, #acc>) {
    // CHECK-LABEL: func.func @grouped_k_per_group
    // CHECK: tile_loop = "per-group"
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %gl, %G) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", grouped = "k", tile_loop = "per-group", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, i32) -> ()
    return
  }
}

// -----

// wgrad with tile_loop = "flat".
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @grouped_k_flat(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %gl: !tile.ptr<i32>, %G: i32, %x: tensor<32x32xf32, #acc>) {
    // CHECK-LABEL: func.func @grouped_k_flat
    // CHECK: tile_loop = "flat"
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %gl, %G) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", grouped = "k", tile_loop = "flat", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, i32) -> ()
    return
  }
}

// -----

// Any positive i32 group_m verifies (the lowering clamps one past block_n).
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @group_m_past_block_n(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // CHECK-LABEL: func.func @group_m_past_block_n
    // CHECK: group_m = 2147483647 : i32
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 2147483647 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// Split-K takes the counters and partials; split_k fixes the slices per tile.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @split_k
  func.func @split_k(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<bf16>, %ldc: i64, %s: !tile.ptr<i32>, %p: !tile.ptr<f32>, %x: tensor<32x32xf32, #acc>) {
    // CHECK: "tile.gemm_schedule"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6)
    // CHECK: kind = "split-k", {{.*}}split_k = 4 : i32
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s, %p) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "split-k", split_k = 4 : i32, block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<bf16>, i64, !tile.ptr<i32>, !tile.ptr<f32>) -> ()
    return
  }
}
