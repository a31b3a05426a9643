// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-assign-tdm-warp-layout,tile-emit-warp-predicates)' | FileCheck %s
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-assign-tdm-warp-layout,tile-emit-warp-predicates,tile-emit-warp-predicates)' | FileCheck %s

// The low half (0x0F): warp w copies iff bit 2 of w is 0 (anchor 0, free mask 4).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @low_half
  func.func @low_half(%d: !desc, %b: !buf) {
    // CHECK: %[[W:.*]] = "tile.warp_id"() : () -> i32
    // CHECK-NEXT: %[[A:.*]] = arith.constant 0 : i32
    // CHECK-NEXT: %[[X:.*]] = arith.xori %[[W]], %[[A]] : i32
    // CHECK-NEXT: %[[F:.*]] = arith.constant 4 : i32
    // CHECK-NEXT: %[[M:.*]] = arith.andi %[[X]], %[[F]] : i32
    // CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i32
    // CHECK-NEXT: %[[ON:.*]] = arith.cmpi eq, %[[M]], %[[Z]] : i32
    // CHECK-NEXT: "tile.async_tdm_copy_global_to_local"(%arg0, %arg1, %[[ON]]) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, {{.*}}tile.warp_predicated, warp_used_hint = 15 : i32}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// A hint without warp 0 (0xF0): the XOR with anchor 4 makes warps 4-7 pass.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @high_half_anchor_4
  func.func @high_half_anchor_4(%d: !desc, %b: !buf) {
    // CHECK: %[[W:.*]] = "tile.warp_id"() : () -> i32
    // CHECK-NEXT: %[[A:.*]] = arith.constant 4 : i32
    // CHECK-NEXT: %[[X:.*]] = arith.xori %[[W]], %[[A]] : i32
    // CHECK-NEXT: %[[F:.*]] = arith.constant 4 : i32
    // CHECK-NEXT: %[[M:.*]] = arith.andi %[[X]], %[[F]] : i32
    // CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i32
    // CHECK-NEXT: %[[ON:.*]] = arith.cmpi eq, %[[M]], %[[Z]] : i32
    // CHECK-NEXT: "tile.async_tdm_copy_global_to_local"(%arg0, %arg1, %[[ON]]) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, {{.*}}tile.warp_predicated, warp_used_hint = 240 : i32}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// A strided hint (0x55, even warps): bit 0 is pinned to 0 (free mask 1).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @strided_even_warps
  func.func @strided_even_warps(%d: !desc, %b: !buf) {
    // CHECK: %[[W:.*]] = "tile.warp_id"() : () -> i32
    // CHECK-NEXT: %[[A:.*]] = arith.constant 0 : i32
    // CHECK-NEXT: %[[X:.*]] = arith.xori %[[W]], %[[A]] : i32
    // CHECK-NEXT: %[[F:.*]] = arith.constant 1 : i32
    // CHECK-NEXT: %[[M:.*]] = arith.andi %[[X]], %[[F]] : i32
    // CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i32
    // CHECK-NEXT: %[[ON:.*]] = arith.cmpi eq, %[[M]], %[[Z]] : i32
    // CHECK-NEXT: "tile.async_tdm_copy_global_to_local"(%arg0, %arg1, %[[ON]]) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, {{.*}}tile.warp_predicated, warp_used_hint = 85 : i32}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 85 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// 0xCC (warps 2, 3, 6, 7): bit 1 pinned to 1, so the anchor is 2 and the free mask 2.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @pinned_bit_one
  func.func @pinned_bit_one(%d: !desc, %b: !buf) {
    // CHECK: %[[W:.*]] = "tile.warp_id"() : () -> i32
    // CHECK-NEXT: %[[A:.*]] = arith.constant 2 : i32
    // CHECK-NEXT: %[[X:.*]] = arith.xori %[[W]], %[[A]] : i32
    // CHECK-NEXT: %[[F:.*]] = arith.constant 2 : i32
    // CHECK-NEXT: %[[M:.*]] = arith.andi %[[X]], %[[F]] : i32
    // CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i32
    // CHECK-NEXT: %[[ON:.*]] = arith.cmpi eq, %[[M]], %[[Z]] : i32
    // CHECK-NEXT: "tile.async_tdm_copy_global_to_local"(%arg0, %arg1, %[[ON]]) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, {{.*}}tile.warp_predicated, warp_used_hint = 204 : i32}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 204 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// A user predicate is kept: the copy's new pred is user AND warp mask.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @user_pred_and
  func.func @user_pred_and(%d: !desc, %b: !buf, %p: i1) {
    // CHECK: %[[W:.*]] = "tile.warp_id"() : () -> i32
    // CHECK-NEXT: %[[A:.*]] = arith.constant 4 : i32
    // CHECK-NEXT: %[[X:.*]] = arith.xori %[[W]], %[[A]] : i32
    // CHECK-NEXT: %[[F:.*]] = arith.constant 4 : i32
    // CHECK-NEXT: %[[M:.*]] = arith.andi %[[X]], %[[F]] : i32
    // CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i32
    // CHECK-NEXT: %[[ON:.*]] = arith.cmpi eq, %[[M]], %[[Z]] : i32
    // CHECK-NEXT: %[[P:.*]] = arith.andi %arg2, %[[ON]] : i1
    // CHECK-NEXT: "tile.async_tdm_copy_global_to_local"(%arg0, %arg1, %[[P]]) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, {{.*}}tile.warp_predicated, warp_used_hint = 240 : i32}
    "tile.async_tdm_copy_global_to_local"(%d, %b, %p) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, warp_used_hint = 240 : i32} : (!desc, !buf, i1) -> ()
    return
  }
}

// -----

// The full mask selects every warp (free mask 0): no code, no marker.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @full_mask_no_code
  func.func @full_mask_no_code(%d: !desc, %b: !buf) {
    // CHECK-NOT: tile.warp_id
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg0, %arg1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>
    // CHECK-NOT: tile.warp_predicated
    // CHECK: return
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 255 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// An unhinted copy on a block the warps fill is issued by every warp: no code.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @unhinted_no_code
  func.func @unhinted_no_code(%d: !desc, %b: !buf) {
    // CHECK-NOT: tile.warp_id
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg0, %arg1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>
    // CHECK-NOT: tile.warp_predicated
    // CHECK: return
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    return
  }
}

// -----

// An unhinted copy of a 2x2 block with 8 warps predicates the surplus warps 4-7 off.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @unhinted_surplus_warps
  func.func @unhinted_surplus_warps(%d: !tile.tensor_desc<tensor<2x2xf16, #s>>, %b: !tile.shared<tensor<2x2xf16, #s>>) {
    // CHECK: %[[W:.*]] = "tile.warp_id"() : () -> i32
    // CHECK-NEXT: %[[A:.*]] = arith.constant 0 : i32
    // CHECK-NEXT: %[[X:.*]] = arith.xori %[[W]], %[[A]] : i32
    // CHECK-NEXT: %[[F:.*]] = arith.constant 4 : i32
    // CHECK-NEXT: %[[M:.*]] = arith.andi %[[X]], %[[F]] : i32
    // CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i32
    // CHECK-NEXT: %[[ON:.*]] = arith.cmpi eq, %[[M]], %[[Z]] : i32
    // CHECK-NEXT: "tile.async_tdm_copy_global_to_local"(%arg0, %arg1, %[[ON]]) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, {{.*}}tile.warp_predicated
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!tile.tensor_desc<tensor<2x2xf16, #s>>, !tile.shared<tensor<2x2xf16, #s>>) -> ()
    return
  }
}

// -----

// A fused copy has no pred operand: descriptor selection carries each
// member's warps, and the op is left alone.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @fused_untouched
  func.func @fused_untouched(%d: !desc, %e: !desc, %a: !buf, %b: !buf) {
    // CHECK-NOT: tile.warp_id
    // CHECK: "tile.async_tdm_fused_copy_global_to_local"(%arg0, %arg1, %arg2, %arg3) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>
    // CHECK-NOT: tile.warp_predicated
    // CHECK: return
    "tile.async_tdm_fused_copy_global_to_local"(%d, %e, %a, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 15, 240>} : (!desc, !desc, !buf, !buf) -> ()
    return
  }
}
