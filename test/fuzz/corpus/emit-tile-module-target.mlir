// fuzz-command: --emit=tile
// fuzz-finding: ignored-target: --emit=tile differs from --emit=tile --target=gfxN (the module's tile.target)
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250", tile.threads_per_warp = 32 : i32} {
  func.func @fuzz(%arg0: i32, %arg1: i32, %arg2: i64, %arg3: !tile.ptr<f16>) {
    %c0_i32 = arith.constant 0 : i32
    %c0_i32_0 = arith.constant 0 : i32
    %c0_i64 = arith.constant 0 : i64
    %c0_i64_1 = arith.constant 0 : i64
    %c1_i64 = arith.constant 1 : i64
    %0 = "tile.make_tensor_descriptor"(%arg3, %c0_i32, %c0_i32_0, %c0_i64, %c1_i64) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !tile.tensor_desc<tensor<64x64xf16, #tile.padded_shared<{amount = 8 : i64, interval = 64 : i64, order = array<i64: 1, 0>}>>>
    %1 = "tile.local_alloc"() : () -> !tile.shared<tensor<64x64xf16, #tile.padded_shared<{amount = 8 : i64, interval = 64 : i64, order = array<i64: 1, 0>}>>>
    "tile.async_tdm_copy_global_to_local"(%0, %1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!tile.tensor_desc<tensor<64x64xf16, #tile.padded_shared<{amount = 8 : i64, interval = 64 : i64, order = array<i64: 1, 0>}>>>, !tile.shared<tensor<64x64xf16, #tile.padded_shared<{amount = 8 : i64, interval = 64 : i64, order = array<i64: 1, 0>}>>>) -> ()
    return
  }
}
