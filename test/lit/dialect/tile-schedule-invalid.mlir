// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== The reduction belongs to stream-K. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'reduction' is only for kind "stream-k", not "persistent"}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", reduction = "atomic", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== Stream-K needs a reduction. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op kind "stream-k" requires a 'reduction' (atomic, linear or tree)}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "stream-k", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== Unknown kind. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'kind' must be one of data-parallel, persistent, work-stealing, stream-k, split-k, got "split-n"}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "split-n", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== Unknown reduction. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'reduction' must be one of atomic, linear, tree, got "ring"}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "stream-k", reduction = "ring", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== Block sizes are powers of two. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'block_m' must be a power of two, got 48}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", block_m = 48 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== Chiplets are counted from one. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'num_xcds' must be positive, got 0}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "work-stealing", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, num_xcds = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== Work stealing without counters. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op kind "work-stealing" needs a 'sync' operand (a pointer to i32)}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "work-stealing", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, num_xcds = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== A linear fix-up without partials. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %s: !tile.ptr<i32>, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op kind "stream-k" with reduction "linear" needs a 'partials' operand (a pointer to f32)}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "stream-k", reduction = "linear", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>) -> ()
    return
  }
}

// -----

// ==== Atomic stream-K takes no flags. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %s: !tile.ptr<i32>, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op kind "stream-k" with reduction "atomic" takes no 'sync' operand}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "stream-k", reduction = "atomic", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>) -> ()
    return
  }
}

// -----

// ==== Counters are i32. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %s: !tile.ptr<f32>, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'sync' must point to i32, got f32}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "work-stealing", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, num_xcds = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<f32>) -> ()
    return
  }
}

// -----

// ==== Grouped without group sizes. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op grouped = "m" needs a 'group_lens' operand (a pointer to i32)}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", grouped = "m", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== Group sizes without grouping. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %gl: !tile.ptr<i32>, %G: i32, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op grouped = "none" takes no 'group_lens' operand}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %gl, %G) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, i32) -> ()
    return
  }
}

// -----

// ==== Grouped GEMM runs all groups over one persistent loop. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %gl: !tile.ptr<i32>, %G: i32, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op grouped = "m" needs kind persistent, got "data-parallel"}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %gl, %G) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "data-parallel", grouped = "m", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, i32) -> ()
    return
  }
}

// -----

// ==== The body yields fp32. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf16, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op the body must yield tensor<32x32xf32, #layout>, got tensor<32x32xf16}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf16, #acc>) -> ()
    }) {kind = "persistent", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== The body yields a block_m x block_n tile. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x64xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op the body must yield tensor<32x32xf32, #layout>, got tensor<32x64xf32}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x64xf32, #acc>) -> ()
    }) {kind = "persistent", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== The body yields a register tensor. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32>) {
    // expected-error@+1 {{'tile.gemm_schedule' op the body must yield tensor<32x32xf32, #layout> with a register layout (#tile.blocked or #tile.wmma_layout), got None}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32>) -> ()
    }) {kind = "persistent", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== Six i32 body arguments. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op the body takes 6 i32 arguments (group, m_off, m_end, n_off, k_off, k_end), got (i32, i32)}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== A schedule_yield outside a schedule. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.schedule_yield' op must be inside a 'tile.gemm_schedule', not 'func.func'}}
    "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
  }
}

// -----

// ==== Segment sizes of an element type the bindings cannot read (a fuzz finding: it leaked a TypeError). ====
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64) {
    // expected-error@+1 {{'tile.gemm_schedule' op attribute 'operandSegmentSizes' is a dense array of an element type no tile op takes (the arrays here are array<i32: ...>)}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"() : () -> ()
    }) {kind = "persistent", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i128: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== tile_loop belongs to grouped "k" (wgrad). ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %gl: !tile.ptr<i32>, %G: i32, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'tile_loop' is only for grouped = "k", not grouped = "m"}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %gl, %G) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", grouped = "m", tile_loop = "flat", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, i32) -> ()
    return
  }
}

// -----

// ==== tile_loop on a dense schedule. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'tile_loop' is only for grouped = "k", not grouped = "none"}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", tile_loop = "per-group", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== Unknown tile_loop. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %gl: !tile.ptr<i32>, %G: i32, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'tile_loop' must be one of flat, per-group, got "nested"}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %gl, %G) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", grouped = "k", tile_loop = "nested", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, i32) -> ()
    return
  }
}

// -----

// ==== num_xcds is work stealing's. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'num_xcds' is only for kind "work-stealing", not "stream-k"}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "stream-k", reduction = "atomic", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, num_xcds = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== num_xcds past its i32 limit: xcd * 64 would wrap. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %s: !tile.ptr<i32>, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'num_xcds' must be at most 33554431 (the lowering indexes counters num_xcds * 64 in i32), got 33554432}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "work-stealing", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, num_xcds = 33554432 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>) -> ()
    return
  }
}

// -----

// ==== A schedule nested in another's body: each outer tile would write all of C (a write race). ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      // expected-error@+1 {{'tile.gemm_schedule' op must not be nested in another 'tile.gemm_schedule' (each outer tile would write all of C: a write race)}}
      "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
      ^bb0(%g2: i32, %mo2: i32, %me2: i32, %no2: i32, %ko2: i32, %ke2: i32):
        "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
      }) {kind = "persistent", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== Nested deeper, inside a loop of the outer body. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      scf.for %i = %c0 to %c1 step %c1 : i32 {
      // expected-error@+1 {{'tile.gemm_schedule' op must not be nested in another 'tile.gemm_schedule' (each outer tile would write all of C: a write race)}}
      "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
      ^bb0(%g2: i32, %mo2: i32, %me2: i32, %no2: i32, %ko2: i32, %ke2: i32):
        "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
      }) {kind = "persistent", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
      }
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== split_k belongs to split-K. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'split_k' is only for kind "split-k", not "persistent"}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", split_k = 2 : i32, block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== split_k of zero slices. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %s: !tile.ptr<i32>, %p: !tile.ptr<f32>, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'split_k' must be 1 to 256 (slices per tile, each summed in turn by the tile's last program), got 0}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s, %p) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "split-k", split_k = 0 : i32, block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, !tile.ptr<f32>) -> ()
    return
  }
}

// -----

// ==== split_k past 256 slices. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %s: !tile.ptr<i32>, %p: !tile.ptr<f32>, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'split_k' must be 1 to 256 (slices per tile, each summed in turn by the tile's last program), got 257}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s, %p) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "split-k", split_k = 257 : i32, block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, !tile.ptr<f32>) -> ()
    return
  }
}

// -----

// ==== Split-K takes no reduction: its sum is always in slice order. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %s: !tile.ptr<i32>, %p: !tile.ptr<f32>, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'reduction' is only for kind "stream-k", not "split-k"}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s, %p) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "split-k", reduction = "linear", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, !tile.ptr<f32>) -> ()
    return
  }
}

// -----

// ==== Split-K needs its counters and partials. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op kind "split-k" needs a 'sync' operand (a pointer to i32)}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "split-k", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}
