// Two TDM copies into double-buffered shared memory: the A tile by warps 0-3,
// the B tile by warps 4-7 (contiguous halves balance the SIMDs).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.threads_per_warp = 32 : i32, tile.target = "gfx1250"} {
  func.func @load_a_b(%a: !tile.ptr<f16>, %b: !tile.ptr<f16>, %m: i32, %n: i32, %k: i32, %sa: i64, %sb: i64) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i64
    %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %c128 = arith.constant 128 : i32
    %row = arith.muli %pid, %c128 : i32
    %da = "tile.make_tensor_descriptor"(%a, %m, %k, %sa, %c1) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !tile.tensor_desc<tensor<128x64xf16, #s>>
    %db = "tile.make_tensor_descriptor"(%b, %k, %n, %sb, %c1) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !tile.tensor_desc<tensor<64x128xf16, #s>>
    %da0 = "tile.update_tensor_descriptor"(%da, %row, %c0) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!tile.tensor_desc<tensor<128x64xf16, #s>>, i32, i32) -> !tile.tensor_desc<tensor<128x64xf16, #s>>
    %abuf = "tile.local_alloc"() : () -> !tile.shared<tensor<2x128x64xf16, #s>>
    %bbuf = "tile.local_alloc"() : () -> !tile.shared<tensor<2x64x128xf16, #s>>
    %a0 = "tile.memdesc_index"(%abuf, %c0) : (!tile.shared<tensor<2x128x64xf16, #s>>, i32) -> !tile.shared<tensor<128x64xf16, #s>>
    %b0 = "tile.memdesc_index"(%bbuf, %c0) : (!tile.shared<tensor<2x64x128xf16, #s>>, i32) -> !tile.shared<tensor<64x128xf16, #s>>
    "tile.async_tdm_copy_global_to_local"(%da0, %a0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>) -> ()
    "tile.async_tdm_copy_global_to_local"(%db, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!tile.tensor_desc<tensor<64x128xf16, #s>>, !tile.shared<tensor<64x128xf16, #s>>) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
