// RUN: gemm-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-emit-warp-predicates)'

// The predicate comes from the copy's warp layout: without
// tile-assign-tdm-warp-layout first there is none to read.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @missing_layout(%d: !tile.tensor_desc<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<128x64xf16, #s>>) {
    // expected-error@+1 {{needs 'tile.warp_layout' to emit its warp predicate; run tile-assign-tdm-warp-layout first}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>) -> ()
    return
  }
}
