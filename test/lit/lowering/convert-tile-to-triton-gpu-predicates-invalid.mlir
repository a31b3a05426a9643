// RUN: gemm-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=gfx1250})'

// A copy marked tile.warp_predicated must carry exactly the warp test of its
// hint, ((warp_id ^ anchor) & free_mask) == 0 (8 warps, hint 0xc: anchor 2,
// free mask 6), alone or ANDed with the user's pred; the lowering strips it,
// so any other test would be dropped silently: each is refused at the copy.

#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @wrong_anchor(%da: !da, %ba: !ba, %q: i1) {
    %w = "tile.warp_id"() : () -> i32
    %anchor = arith.constant 0 : i32
    %free = arith.constant 6 : i32
    %zero = arith.constant 0 : i32
    %x = arith.xori %w, %anchor : i32
    %m = arith.andi %x, %free : i32
    %on = arith.cmpi eq, %m, %zero : i32
    %p = arith.andi %q, %on : i1
    // expected-error@+1 {{the warp predicate ((warp_id ^ 0) & 6) == 0 disagrees with warp_used_hint = 0xc, for which Triton predicates ((warp_id ^ 2) & 6) == 0}}
    "tile.async_tdm_copy_global_to_local"(%da, %ba, %p) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, tile.warp_predicated, warp_used_hint = 12 : i32} : (!da, !ba, i1) -> ()
    return
  }
}

// -----

#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @not_equal(%da: !da, %ba: !ba, %q: i1) {
    %w = "tile.warp_id"() : () -> i32
    %anchor = arith.constant 2 : i32
    %free = arith.constant 6 : i32
    %zero = arith.constant 0 : i32
    %x = arith.xori %w, %anchor : i32
    %m = arith.andi %x, %free : i32
    %on = arith.cmpi ne, %m, %zero : i32
    %p = arith.andi %q, %on : i1
    // expected-error@+1 {{marked tile.warp_predicated but its pred is not 'user_pred & (((warp_id ^ anchor) & free_mask) == 0)'; refusing to emit it}}
    "tile.async_tdm_copy_global_to_local"(%da, %ba, %p) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, tile.warp_predicated, warp_used_hint = 12 : i32} : (!da, !ba, i1) -> ()
    return
  }
}

// -----

#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @against_one(%da: !da, %ba: !ba) {
    %w = "tile.warp_id"() : () -> i32
    %anchor = arith.constant 2 : i32
    %free = arith.constant 6 : i32
    %c1 = arith.constant 1 : i32
    %x = arith.xori %w, %anchor : i32
    %m = arith.andi %x, %free : i32
    %on = arith.cmpi eq, %m, %c1 : i32
    // expected-error@+1 {{marked tile.warp_predicated but its pred is not 'user_pred & (((warp_id ^ anchor) & free_mask) == 0)'; refusing to emit it}}
    "tile.async_tdm_copy_global_to_local"(%da, %ba, %on) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, tile.warp_predicated, warp_used_hint = 12 : i32} : (!da, !ba, i1) -> ()
    return
  }
}

// -----

#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @or_not_and(%da: !da, %ba: !ba, %q: i1) {
    %w = "tile.warp_id"() : () -> i32
    %anchor = arith.constant 2 : i32
    %free = arith.constant 6 : i32
    %zero = arith.constant 0 : i32
    %x = arith.xori %w, %anchor : i32
    %m = arith.andi %x, %free : i32
    %on = arith.cmpi eq, %m, %zero : i32
    %p = arith.ori %q, %on : i1
    // expected-error@+1 {{marked tile.warp_predicated but its pred is not 'user_pred & (((warp_id ^ anchor) & free_mask) == 0)'; refusing to emit it}}
    "tile.async_tdm_copy_global_to_local"(%da, %ba, %p) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, tile.warp_predicated, warp_used_hint = 12 : i32} : (!da, !ba, i1) -> ()
    return
  }
}
