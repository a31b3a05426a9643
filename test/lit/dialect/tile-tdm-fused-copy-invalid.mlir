// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== One member is not a fusion. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d0 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b0 = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @one_member(%d0: !d0, %b0: !b0) {
    // expected-error@+1 {{requires 2 to 4 members, got 1}}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 1, 0, 0, 0, 0>, warp_used_hints = array<i32: 15>} : (!d0, !b0) -> ()
    return
  }
}

// -----

// ==== The hints attribute is required. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d0 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b0 = !tile.shared<tensor<128x64xf16, #s>>
!d1 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b1 = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @no_hints(%d0: !d0, %d1: !d1, %b0: !b0, %b1: !b1) {
    // expected-error@+1 {{requires attribute 'warp_used_hints'}}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>} : (!d0, !d1, !b0, !b1) -> ()
    return
  }
}

// -----

// ==== One hint per member. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d0 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b0 = !tile.shared<tensor<128x64xf16, #s>>
!d1 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b1 = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @hint_count(%d0: !d0, %d1: !d1, %b0: !b0, %b1: !b1) {
    // expected-error@+1 {{requires one warp_used_hint per member: 2 members, 3 hints}}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 15, 240, 3>} : (!d0, !d1, !b0, !b1) -> ()
    return
  }
}

// -----

// ==== Hints must be pairwise disjoint; the message names both members. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d0 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b0 = !tile.shared<tensor<128x64xf16, #s>>
!d1 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b1 = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @overlap(%d0: !d0, %d1: !d1, %b0: !b0, %b1: !b1) {
    // expected-error@+1 {{requires pairwise-disjoint warp_used_hint values: member 1 (0b00000011, warps {0, 1}) overlaps member 0}}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 15, 3>} : (!d0, !d1, !b0, !b1) -> ()
    return
  }
}

// -----

// ==== Identical hints overlap. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d0 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b0 = !tile.shared<tensor<128x64xf16, #s>>
!d1 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b1 = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @identical(%d0: !d0, %d1: !d1, %b0: !b0, %b1: !b1) {
    // expected-error@+1 {{requires pairwise-disjoint warp_used_hint values}}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 15, 15>} : (!d0, !d1, !b0, !b1) -> ()
    return
  }
}

// -----

// ==== Each member's hint obeys the single-copy rule. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d0 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b0 = !tile.shared<tensor<128x64xf16, #s>>
!d1 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b1 = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @member_popcount(%d0: !d0, %d1: !d1, %b0: !b0, %b1: !b1) {
    // expected-error@+1 {{member 1: popcount(warp_used_hint) = 3 must be a power of two}}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 15, 112>} : (!d0, !d1, !b0, !b1) -> ()
    return
  }
}

// -----

// ==== A zero member hint. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d0 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b0 = !tile.shared<tensor<128x64xf16, #s>>
!d1 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b1 = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @member_zero(%d0: !d0, %d1: !d1, %b0: !b0, %b1: !b1) {
    // expected-error@+1 {{member 1: warp_used_hint must have at least one bit set}}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 15, 0>} : (!d0, !d1, !b0, !b1) -> ()
    return
  }
}

// -----

// ==== Member hints bounded by num_warps. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d0 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b0 = !tile.shared<tensor<128x64xf16, #s>>
!d1 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b1 = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @member_beyond(%d0: !d0, %d1: !d1, %b0: !b0, %b1: !b1) {
    // expected-error@+1 {{sets bits beyond num_warps = 8}}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 15, 256>} : (!d0, !d1, !b0, !b1) -> ()
    return
  }
}

// -----

// ==== A fused copy takes no mbarrier. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d0 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b0 = !tile.shared<tensor<128x64xf16, #s>>
!d1 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b1 = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @barrier(%d0: !d0, %d1: !d1, %b0: !b0, %b1: !b1, %bar: !tile.mbarrier<i64>) {
    // expected-error@+1 {{does not take an mbarrier}}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d1, %b0, %b1, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 1>, warp_used_hints = array<i32: 15, 240>} : (!d0, !d1, !b0, !b1, !tile.mbarrier<i64>) -> ()
    return
  }
}

// -----

// ==== num_warps 32 is rejected for fused hints too. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d0 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b0 = !tile.shared<tensor<128x64xf16, #s>>
!d1 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b1 = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 32 : i32} {
  func.func @nw32(%d0: !d0, %d1: !d1, %b0: !b0, %b1: !b1) {
    // expected-error@+1 {{num_warps must be less than 32}}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 1, 2>} : (!d0, !d1, !b0, !b1) -> ()
    return
  }
}

// -----

// ==== Members must be axis-aligned. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d0 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b0 = !tile.shared<tensor<128x64xf16, #s>>
!d1 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b1 = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @member_not_aligned(%d0: !d0, %d1: !d1, %b0: !b0, %b1: !b1) {
    // expected-error@+1 {{is not axis-aligned}}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 105, 6>} : (!d0, !d1, !b0, !b1) -> ()
    return
  }
}

// -----

// ==== Member blocks must be large enough for their K. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d0 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b0 = !tile.shared<tensor<128x64xf16, #s>>
!d1 = !tile.tensor_desc<tensor<1x2xf16, #s>>
!b1 = !tile.shared<tensor<1x2xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @member_too_small(%d0: !d0, %d1: !d1, %b0: !b0, %b1: !b1) {
    // expected-error@+1 {{can place only 2 of them on block [1, 2]}}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 15, 240>} : (!d0, !d1, !b0, !b1) -> ()
    return
  }
}

// -----

// ==== All members have the same rank. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
#r = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @rank_mismatch(%d0: !tile.tensor_desc<tensor<128x64xf16, #s>>, %d1: !tile.tensor_desc<tensor<64xf16, #r>>, %b0: !tile.shared<tensor<128x64xf16, #s>>, %b1: !tile.shared<tensor<64xf16, #r>>) {
    // expected-error@+1 {{requires all member descriptors to have the same rank: member 1 has rank 1, member 0 has rank 2}}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 15, 240>} : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.tensor_desc<tensor<64xf16, #r>>, !tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<64xf16, #r>>) -> ()
    return
  }
}

// -----

// ==== Each member's destination matches its block. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @member_dest(%d0: !tile.tensor_desc<tensor<128x64xf16, #s>>, %d1: !tile.tensor_desc<tensor<64x64xf16, #s>>, %b0: !tile.shared<tensor<128x64xf16, #s>>, %b1: !tile.shared<tensor<128x64xf16, #s>>) {
    // expected-error@+1 {{member 1: destination shape [128, 64] does not match the descriptor block [64, 64]}}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 15, 240>} : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.tensor_desc<tensor<64x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>) -> ()
    return
  }
}

// -----

// ==== Member slots fill from desc0 up. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @slot_gap(%d0: !tile.tensor_desc<tensor<128x64xf16, #s>>, %b0: !tile.shared<tensor<128x64xf16, #s>>) {
    // expected-error@+1 {{members must fill the descriptor slots from desc0 up}}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d0, %b0, %b0) {operandSegmentSizes = array<i32: 1, 0, 1, 0, 1, 0, 1, 0, 0>, warp_used_hints = array<i32: 15, 240>} : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>) -> ()
    return
  }
}

// -----

// ==== The single copy's attribute name on a fused copy is an error with a suggestion. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d0 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b0 = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @hint_singular(%d0: !d0, %d1: !d0, %b0: !b0, %b1: !b0) {
    // expected-error@+1 {{unknown attribute 'warp_used_hint'; did you mean 'warp_used_hints'?}}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hint = 15 : i32, warp_used_hints = array<i32: 15, 240>} : (!d0, !d0, !b0, !b0) -> ()
    return
  }
}

// -----

// ==== operandSegmentSizes has one entry per operand group. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d0 = !tile.tensor_desc<tensor<128x64xf16, #s>>
!b0 = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @segments_short(%d0: !d0, %d1: !d0, %b0: !b0, %b1: !b0) {
    // expected-error@+1 {{'operandSegmentSizes' must be array<i32: ...> with 9 entries (one for each of desc0, desc1, desc2, desc3, dest0, dest1, dest2, dest3, barrier), got array<i32: 1, 1, 1, 1>}}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 1, 1>, warp_used_hints = array<i32: 15, 240>} : (!d0, !d0, !b0, !b0) -> ()
    return
  }
}
