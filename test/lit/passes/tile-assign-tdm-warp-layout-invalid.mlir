// RUN: gemm-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-assign-tdm-warp-layout)'

// Without tile.num_warps there are no warps to lay out (an unhinted copy
// verifies, so the pass is the first to need the count).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module {
  func.func @no_num_warps(%d: !tile.tensor_desc<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<128x64xf16, #s>>) {
    // expected-error@+1 {{cannot assign a TDM warp layout: needs 'tile.num_warps' on an enclosing op}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>) -> ()
    return
  }
}

// -----

// A warp count that is not a power of two has no warp-id bit layout: the
// module verifier rejects it before any pass runs.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
// expected-error@+1 {{'tile.num_warps' must be a power of two >= 1, got 6}}
module attributes {tile.num_warps = 6 : i32} {
  func.func @num_warps_not_pow2(%d: !tile.tensor_desc<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<128x64xf16, #s>>) {
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>) -> ()
    return
  }
}

// -----

// An unhinted copy into more partition pieces (8) than warps (4) needs two
// TDM instructions, which one warp layout cannot describe.
#s = #tile.partitioned_shared<{num_partitions = 4, num_groups = 2, partition_dim = 0, layout = #tile.padded_shared<{interval = 16, amount = 8, order = array<i64: 1, 0>}>}>
module attributes {tile.num_warps = 4 : i32} {
  func.func @multi_instruction(%d: !tile.tensor_desc<tensor<128x16xf16, #s>>, %b: !tile.shared<tensor<128x16xf16, #s>>) {
    // expected-error@+1 {{needs 2 TDM instructions}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!tile.tensor_desc<tensor<128x16xf16, #s>>, !tile.shared<tensor<128x16xf16, #s>>) -> ()
    return
  }
}

// -----

// A block too small for its K hinted warps (2x2 elements, K = 8) is a
// diagnostic at the copy, not a crash: the op verifier reports it before the
// pass runs.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @block_too_small(%d: !tile.tensor_desc<tensor<2x2xf16, #s>>, %b: !tile.shared<tensor<2x2xf16, #s>>) {
    // expected-error@+1 {{warp_used_hint = 0xff}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 255 : i32} : (!tile.tensor_desc<tensor<2x2xf16, #s>>, !tile.shared<tensor<2x2xf16, #s>>) -> ()
    return
  }
}
