// RUN: gemm-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-annotate-warp-plan)' | FileCheck %s

// A hint without warp 0: warps 4-7 take 32 rows each, warps 0-3 idle. The IR
// is unchanged.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @upper_half
  func.func @upper_half(%d: !desc, %b: !buf) {
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg0, %arg1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32}
    // expected-remark@+1 {{warp plan for 128x64xf16 hint 0b11110000 (4 of 8 warps, tile 32x64): warp 4 [0:32, 0:64], warp 5 [32:64, 0:64], warp 6 [64:96, 0:64], warp 7 [96:128, 0:64]; warps {0..3} inactive}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// Without a hint every warp takes 16 rows.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @all_warps
  func.func @all_warps(%d: !desc, %b: !buf) {
    // expected-remark@+1 {{warp plan for 128x64xf16 hint none (8 of 8 warps, tile 16x64): warp 0 [0:16, 0:64], warp 1 [16:32, 0:64], warp 2 [32:48, 0:64], warp 3 [48:64, 0:64], warp 4 [64:80, 0:64], warp 5 [80:96, 0:64], warp 6 [96:112, 0:64], warp 7 [112:128, 0:64]}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    return
  }
}

// -----

// Even warps (0x55): warp w takes rows 32 * (w / 2).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @even_warps
  func.func @even_warps(%d: !desc, %b: !buf) {
    // expected-remark@+1 {{hint 0b01010101 (4 of 8 warps, tile 32x64): warp 0 [0:32, 0:64], warp 2 [32:64, 0:64], warp 4 [64:96, 0:64], warp 6 [96:128, 0:64]; warps {1, 3, 5, 7} inactive}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 85 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// 16 warps, 0x8888: warps 3, 7, 11 and 15 (anchor 3) take rows 0, 32, 64, 96.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 16 : i32} {
  // CHECK-LABEL: func.func @sixteen_warps
  func.func @sixteen_warps(%d: !desc, %b: !buf) {
    // expected-remark@+1 {{hint 0b1000100010001000 (4 of 16 warps, tile 32x64): warp 3 [0:32, 0:64], warp 7 [32:64, 0:64], warp 11 [64:96, 0:64], warp 15 [96:128, 0:64]; warps {0..2, 4..6, 8..10, 12..14} inactive}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 34952 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// A fused copy: one remark per member, naming the warps that issue its
// descriptor; warps in no member issue the last one with predicate 0.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @fused_members
  func.func @fused_members(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf) {
    // expected-remark@+2 {{warp plan for fused member 0 of 2, 128x64xf16 hint 0b00000011 (2 of 8 warps, tile 64x64): warp 0 [0:64, 0:64], warp 1 [64:128, 0:64]; warps {2..7} inactive; warps {0, 1} issue its descriptor}}
    // expected-remark@+1 {{warp plan for fused member 1 of 2, 128x64xf16 hint 0b00001100 (2 of 8 warps, tile 64x64): warp 2 [0:64, 0:64], warp 3 [64:128, 0:64]; warps {0, 1, 4..7} inactive; warps {2..7} issue its descriptor (warps {4..7} with predicate 0)}}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 3, 12>} : (!desc, !desc, !buf, !buf) -> ()
    return
  }
}
