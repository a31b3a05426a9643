// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== An activation needs each tile's finished sum: atomic stream-K adds partials into C. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>, %s: !tile.ptr<i32>) {
    // expected-error@+1 {{'tile.gemm_schedule' op activation "relu" needs each tile's finished sum in one program; atomic stream-K adds partials into C (use reduction linear or tree)}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "stream-k", reduction = "atomic", activation = "relu", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== An unknown activation, with the ones there are. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'activation' must be one of none, relu, gelu, gelu-tanh, silu, swiglu, got "tanh"}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", activation = "tanh", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== accumulate is a unit attribute. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'accumulate' must be a unit attribute, got 1 : i32}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", accumulate = 1 : i32, block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== The bias is f16, bf16 or f32. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>, %b: !tile.ptr<i32>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'bias' must point to f16, bf16, f32, got i32}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %b) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>) -> ()
    return
  }
}

// -----

// ==== The scales are f32. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>, %r: !tile.ptr<f16>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'row_scale' must point to f32, got f16}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %r) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<f16>) -> ()
    return
  }
}

// -----

// ==== wgrad (grouped k) takes no bias: its outputs are per group, only accumulated. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>, %gl: !tile.ptr<i32>, %ng: i32, %b: !tile.ptr<f32>) {
    // expected-error@+1 {{'tile.gemm_schedule' op grouped = "k" (one output per group, wgrad) takes no 'bias'}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %gl, %ng, %b) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", grouped = "k", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, i32, !tile.ptr<f32>) -> ()
    return
  }
}

// -----

// ==== wgrad takes no activation. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>, %gl: !tile.ptr<i32>, %ng: i32) {
    // expected-error@+1 {{'tile.gemm_schedule' op grouped = "k" (wgrad) takes no activation, got "silu"}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %gl, %ng) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", grouped = "k", activation = "silu", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, i32) -> ()
    return
  }
}

// -----

// ==== A misspelt epilogue attribute. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{did you mean 'activation'?}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", activaton = "relu", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// ==== SwiGLU yields two accumulators (gate, up). ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'tile.schedule_yield' yields two accumulators (gate, up) for activation "swiglu"}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", activation = "swiglu", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}


// -----

// ==== Two accumulators only for SwiGLU. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>) {
    // expected-error@+1 {{'tile.gemm_schedule' op 'tile.schedule_yield' yields one accumulator}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x, %x) : (tensor<32x32xf32, #acc>, tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", activation = "silu", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}


// -----

// ==== SwiGLU's two sums have no partial storage in stream-K or split-K. ====
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %x: tensor<32x32xf32, #acc>, %s: !tile.ptr<i32>, %p: !tile.ptr<f32>) {
    // expected-error@+1 {{'tile.gemm_schedule' op activation "swiglu" needs each tile's two sums in one program: kind data-parallel, persistent, work-stealing, not "split-k" (its partials hold one accumulator per tile)}}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s, %p) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%x, %x) : (tensor<32x32xf32, #acc>, tensor<32x32xf32, #acc>) -> ()
    }) {kind = "split-k", activation = "swiglu", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, !tile.ptr<f32>) -> ()
    return
  }
}
