// fuzz-command: 
// fuzz-finding: timeout: no result within the time limit
module attributes {tile.num_warps = 1073741824 : i32, tile.target = "gfx1250", tile.threads_per_warp = 32 : i32} {
  func.func @fuzz(%arg0: i32, %arg1: i32, %arg2: i64, %arg3: !tile.ptr<f16>, %arg4: !tile.ptr<f32>, %arg5: !tile.ptr<f64>) {
    %c0_i32 = arith.constant 0 : i32
    %c128_i32 = arith.constant 128 : i32
    %c128_i64 = arith.constant 128 : i64
    %c1_i64_1 = arith.constant 1 : i64
    %2 = "tile.make_tensor_descriptor"(%arg4, %c0_i32, %c128_i32, %c128_i64, %c1_i64_1) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64) -> !tile.tensor_desc<tensor<32x128xf32, #tile.swizzled_shared<{max_phase = 1 : i64, order = array<i64: 0, 0>, per_phase = 1 : i64, vec = 1 : i64}>>>
    %3 = "tile.local_alloc"() : () -> !tile.shared<tensor<32x128xf32, #tile.swizzled_shared<{max_phase = 1 : i64, order = array<i64: 0, 0>, per_phase = 1 : i64, vec = 1 : i64}>>>
    %c128_i32_2 = arith.constant 128 : i32
    %c-1_i64 = arith.constant -1 : i64
    %c1_i64_4 = arith.constant 1 : i64
    %4 = "tile.make_tensor_descriptor"(%arg3, %c128_i32_2, %c0_i32, %c-1_i64, %c1_i64_4) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !tile.tensor_desc<tensor<64x32xf16, #tile.swizzled_shared<{max_phase = 1 : i64, order = array<i64: 0, 1>, per_phase = 1 : i64, vec = 1 : i64}>>>
    %5 = "tile.local_alloc"() : () -> !tile.shared<tensor<64x32xf16, #tile.swizzled_shared<{max_phase = 1 : i64, order = array<i64: 0, 1>, per_phase = 1 : i64, vec = 1 : i64}>>>
    "tile.async_tdm_fused_copy_global_to_local"(%2, %4, %3, %5) {cache = ".cg", operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 0, 0>} : (!tile.tensor_desc<tensor<32x128xf32, #tile.swizzled_shared<{max_phase = 1 : i64, order = array<i64: 0, 0>, per_phase = 1 : i64, vec = 1 : i64}>>>, !tile.tensor_desc<tensor<64x32xf16, #tile.swizzled_shared<{max_phase = 1 : i64, order = array<i64: 0, 1>, per_phase = 1 : i64, vec = 1 : i64}>>>, !tile.shared<tensor<32x128xf32, #tile.swizzled_shared<{max_phase = 1 : i64, order = array<i64: 0, 0>, per_phase = 1 : i64, vec = 1 : i64}>>>, !tile.shared<tensor<64x32xf16, #tile.swizzled_shared<{max_phase = 1 : i64, order = array<i64: 0, 1>, per_phase = 1 : i64, vec = 1 : i64}>>>) -> ()
  }
}
