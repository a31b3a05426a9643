// RUN: gemm-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(convert-tile-to-triton-gpu)'

// (A tile.warp_layout that disagrees with its hint is already rejected by the
// op verifier; the lowering's own check of it is exercised in
// test/unit/test_lowering.py, where the attribute is changed after parsing.)

// A warp predicate whose constant was tampered with (free mask 2, where the
// hint 0xF0 gives 4) is an error at the copy.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!d = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @tampered_predicate(%d: !d, %b: !b) {
    %w = "tile.warp_id"() : () -> i32
    %a = arith.constant 4 : i32
    %x = arith.xori %w, %a : i32
    %f = arith.constant 2 : i32
    %m = arith.andi %x, %f : i32
    %z = arith.constant 0 : i32
    %on = arith.cmpi eq, %m, %z : i32
    // expected-error@+1 {{the warp predicate ((warp_id ^ 4) & 2) == 0 disagrees with warp_used_hint = 0xf0, for which Triton predicates ((warp_id ^ 4) & 4) == 0}}
    "tile.async_tdm_copy_global_to_local"(%d, %b, %on) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, tile.warp_predicated, warp_used_hint = 240 : i32} : (!d, !b, i1) -> ()
    return
  }
}

// -----

// A copy marked warp-predicated whose pred is not a warp predicate.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!d = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @not_a_predicate(%d: !d, %b: !b, %p: i1) {
    // expected-error@+1 {{marked tile.warp_predicated but its pred is not}}
    "tile.async_tdm_copy_global_to_local"(%d, %b, %p) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, tile.warp_predicated, warp_used_hint = 15 : i32} : (!d, !b, i1) -> ()
    return
  }
}

// -----

// tile.warp_id outside a warp predicate has no Triton equivalent.
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func private @warp_id() -> i32 {
    // expected-error@+1 {{'tile.warp_id' has no TritonGPU equivalent}}
    %w = "tile.warp_id"() : () -> i32
    return %w : i32
  }
}

// -----

// Ops of other dialects are not lowered.
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @other_dialect() {
    // expected-error@+1 {{'memref.alloc' has no lowering to TritonGPU}}
    %m = memref.alloc() : memref<4xf32>
    return
  }
}

// -----

// TDM reads rows contiguously: the innermost stride must be the constant 1.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!d = !tile.tensor_desc<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @strided(%a: !tile.ptr<f16>, %m: i32, %s0: i64, %s1: i64) -> !d {
    // expected-error@+1 {{need a unit innermost stride: the last stride must be the constant 1}}
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %s0, %s1) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !d
    return %d : !d
  }
}

// -----

// Without TDM, a copy's descriptor must be visible where it is made.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!d = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx950"} {
  // expected-error@+1 {{cannot be passed through block arguments or results on gfx950}}
  func.func @descriptor_argument(%d: !d, %b: !b) {
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!d, !b) -> ()
    return
  }
}

// -----

// Every tensor needs a layout in TritonGPU IR.
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  // expected-error@+1 {{tensor<64xf32> has no layout}}
  func.func private @no_layout(%t: tensor<64xf32>) -> tensor<64xf32> {
    %u = arith.addf %t, %t : tensor<64xf32>
    return %u : tensor<64xf32>
  }
}

// -----

// A blocked layout written for 32-lane warps does not fit gfx942's 64.
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx942"} {
  func.func @lanes() {
    // expected-error@+1 {{#tile.blocked threads_per_warp [4, 8] covers 32 lanes but gfx942 warps have 64}}
    %z = arith.constant dense<0.0> : tensor<64x64xf32, #bl>
    return
  }
}

// -----

// The target comes from the pass option or the module.
// expected-error@+1 {{needs a target (gfx1250, gfx950, gfx942, cuda:90)}}
module attributes {tile.num_warps = 8 : i32} {
  func.func @no_target() {
    return
  }
}

// -----

// A tensor no tile op touches still has its layout checked against its rank
// (Triton would assert on it).
#bl1 = #tile.blocked<{size_per_thread = array<i64: 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func @blocked_rank() {
    // expected-error@+1 {{#tile.blocked size_per_thread [8] has 1 entries for a rank-2 tensor}}
    %z = arith.constant dense<0.0> : tensor<64x64xf32, #bl1>
    return
  }
}

// -----

#w = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, transposed = false}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func @wmma_rank() {
    // expected-error@+1 {{a #tile.wmma_layout tensor must be 2-D, got rank 3}}
    %z = arith.constant dense<0.0> : tensor<2x64x64xf32, #w>
    return
  }
}
