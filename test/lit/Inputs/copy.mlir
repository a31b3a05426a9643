#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @copy(%d: !tile.tensor_desc<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<128x64xf16, #s>>) {
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>) -> ()
    return
  }
}
