// RUN: gemm-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-assign-tdm-warp-layout)'

// A 48-row block verifies (the hint rule needs no power of two), but its TDM
// warp layout does not exist: warp bases are bit positions.
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @non_pow2_block(%d: !tile.tensor_desc<tensor<48x64xf16, #s>>, %b: !tile.shared<tensor<48x64xf16, #s>>) {
    // expected-error@+1 {{cannot assign a TDM warp layout: block dims must be a positive power of two, got 48}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!tile.tensor_desc<tensor<48x64xf16, #s>>, !tile.shared<tensor<48x64xf16, #s>>) -> ()
    return
  }
}

// -----

// A partitioned layout with 96-row blocks: two 48-row pieces, K = 2 covers
// them (the hint verifies), and the layout is refused for the 96.
#p = #tile.partitioned_shared<{num_partitions = 2, num_groups = 1, partition_dim = 0, layout = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @partitioned_non_pow2_block(%d: !tile.tensor_desc<tensor<96x64xf16, #p>>, %b: !tile.shared<tensor<96x64xf16, #p>>) {
    // expected-error@+1 {{cannot assign a TDM warp layout: block dims must be a positive power of two, got 96}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 3 : i32} : (!tile.tensor_desc<tensor<96x64xf16, #p>>, !tile.shared<tensor<96x64xf16, #p>>) -> ()
    return
  }
}
