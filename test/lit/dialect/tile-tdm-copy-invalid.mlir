// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== Rule 1: num_warps must be a power of two. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 3 : i32} {
  func.func @num_warps_not_pow2(%d: !desc, %b: !buf) {
    // expected-error@+1 {{num_warps must be a power of two when using warp_used_hint, got 3}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 1 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== Rule 2: num_warps must be below 32. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 32 : i32} {
  func.func @num_warps_32(%d: !desc, %b: !buf) {
    // expected-error@+1 {{num_warps must be less than 32 when using warp_used_hint, got 32}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 1 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== Rule 3: an explicit zero hint selects no warp. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<256x64xf16, #s>>
!buf = !tile.shared<tensor<256x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @zero_hint(%d: !desc, %b: !buf) {
    // expected-error@+1 {{warp_used_hint must have at least one bit set}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 0 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== Rule 4: no bits at or above num_warps. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<256x64xf16, #s>>
!buf = !tile.shared<tensor<256x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @bits_beyond(%d: !desc, %b: !buf) {
    // expected-error@+1 {{warp_used_hint = 0xffff sets bits beyond num_warps = 8}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 65535 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== Rule 4 reads the hint as unsigned: -1 is 0xffffffff. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<256x64xf16, #s>>
!buf = !tile.shared<tensor<256x64xf16, #s>>
module attributes {tile.num_warps = 16 : i32} {
  func.func @negative_hint(%d: !desc, %b: !buf) {
    // expected-error@+1 {{warp_used_hint = 0xffffffff sets bits beyond num_warps = 16}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = -1 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== Rule 4 fires before the popcount rule. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<256x64xf16, #s>>
!buf = !tile.shared<tensor<256x64xf16, #s>>
module attributes {tile.num_warps = 2 : i32} {
  func.func @bits_beyond_before_popcount(%d: !desc, %b: !buf) {
    // expected-error@+1 {{warp_used_hint = 0x7 sets bits beyond num_warps = 2}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 7 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== Rule 5: K must be a power of two; the message names the warps and nearest legal hints. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<256x64xf16, #s>>
!buf = !tile.shared<tensor<256x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @popcount_not_pow2(%d: !desc, %b: !buf) {
    // expected-error@+1 {{popcount(warp_used_hint) = 3 must be a power of two (got hint 0x7); hint 0x7 = 0b00000111 selects warps {0..2}}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 7 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== Rule 6: the active warps must form an axis-aligned subspace. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<256x64xf16, #s>>
!buf = !tile.shared<tensor<256x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @not_axis_aligned(%d: !desc, %b: !buf) {
    // expected-error@+1 {{warp_used_hint = 0x69 is not axis-aligned: K = 4 active warps must span exactly log2(K) = 2 warpId bit positions}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 105 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== Rule 6 suggests the nearest legal hints. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<256x64xf16, #s>>
!buf = !tile.shared<tensor<256x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @not_axis_aligned_suggestions(%d: !desc, %b: !buf) {
    // expected-error@+1 {{did you mean}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 6 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== Rule 7: with a partitioned layout the pieces must divide K. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x16xf16, #tile.partitioned_shared<{num_partitions = 2, num_groups = 2, partition_dim = 0, layout = #s}>>>
!buf = !tile.shared<tensor<128x16xf16, #tile.partitioned_shared<{num_partitions = 2, num_groups = 2, partition_dim = 0, layout = #s}>>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @partitioned_pieces(%d: !desc, %b: !buf) {
    // expected-error@+1 {{(got K = 2, numLogicalPieces = 4, partitionDim = 0)}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 3 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== Beyond Triton: a missing num_warps is a diagnostic, not an abort. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.target = "gfx1250"} {
  func.func @missing_num_warps(%d: !desc, %b: !buf) {
    // expected-error@+1 {{not contained within a context that specifies the number of warps}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== Beyond Triton: K larger than the block is rejected before lowering. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<2x2xf16, #s>>
!buf = !tile.shared<tensor<2x2xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @block_too_small(%d: !desc, %b: !buf) {
    // expected-error@+1 {{can place only 4 of them on block [2, 2]}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 255 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== Beyond Triton: a partitioned innermost dim cannot take the surplus warps. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<2x128xf16, #tile.partitioned_shared<{num_partitions = 2, num_groups = 1, partition_dim = 1, layout = #s}>>>
!buf = !tile.shared<tensor<2x128xf16, #tile.partitioned_shared<{num_partitions = 2, num_groups = 1, partition_dim = 1, layout = #s}>>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @partitioned_innermost_too_small(%d: !desc, %b: !buf) {
    // expected-error@+1 {{selects K = 8 active warps}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 255 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== The hint must be an i32 integer. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @hint_not_integer(%d: !desc, %b: !buf) {
    // expected-error@+1 {{attribute 'warp_used_hint' must be an i32 integer, got "all"}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = "all"} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== The cache modifier must be a known one. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @bad_cache(%d: !desc, %b: !buf) {
    // expected-error@+1 {{cache modifier must be one of}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, cache = ".xx"} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== The destination must match the descriptor block. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @dest_shape_mismatch(%d: !tile.tensor_desc<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<64x64xf16, #s>>) {
    // expected-error@+1 {{destination shape [64, 64] does not match the descriptor block [128, 64]}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<64x64xf16, #s>>) -> ()
    return
  }
}

// -----

// ==== The destination element type must match. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @dest_type_mismatch(%d: !tile.tensor_desc<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<128x64xbf16, #s>>) {
    // expected-error@+1 {{destination element type bf16 does not match the descriptor's f16}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xbf16, #s>>) -> ()
    return
  }
}

// -----

// ==== The destination layout must match. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
#t = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @dest_layout_mismatch(%d: !tile.tensor_desc<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<128x64xf16, #t>>) {
    // expected-error@+1 {{destination layout}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #t>>) -> ()
    return
  }
}

// -----

// ==== The predicate must be i1. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @pred_not_i1(%d: !tile.tensor_desc<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<128x64xf16, #s>>, %p: i32) {
    // expected-error@+1 {{pred must be i1, got i32}}
    "tile.async_tdm_copy_global_to_local"(%d, %b, %p) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>, i32) -> ()
    return
  }
}

// -----

// ==== A shared type needs a shared layout. ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @no_layout(%d: !tile.tensor_desc<tensor<128x64xf16>>, %b: !tile.shared<tensor<128x64xf16>>) {
    // expected-error@+1 {{needs a #tile.*_shared layout}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!tile.tensor_desc<tensor<128x64xf16>>, !tile.shared<tensor<128x64xf16>>) -> ()
    return
  }
}

// -----

// ==== TDM cannot XOR-swizzle: swizzled destinations are rejected, as in Triton. ====
#t = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @swizzled(%d: !tile.tensor_desc<tensor<128x64xf16, #t>>, %b: !tile.shared<tensor<128x64xf16, #t>>) {
    // expected-error@+1 {{TDM does not support swizzled shared layouts (vec = 8, max_phase = 8): use #tile.padded_shared}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!tile.tensor_desc<tensor<128x64xf16, #t>>, !tile.shared<tensor<128x64xf16, #t>>) -> ()
    return
  }
}

// -----

// ==== A misspelled hint is an error, not silently ignored (every warp would copy). ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @hint_misspelled(%d: !desc, %b: !buf) {
    // expected-error@+1 {{unknown attribute 'warp_use_hint'; did you mean 'warp_used_hint'?}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_use_hint = 15 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== The fused op's attribute name on a single copy is an error too. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @hints_on_single(%d: !desc, %b: !buf) {
    // expected-error@+1 {{unknown attribute 'warp_used_hints'; did you mean 'warp_used_hint'?}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hints = array<i32: 15>} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== Misspelled contract attributes are errors too. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @contract_misspelled(%d: !desc, %b: !buf) {
    // expected-error@+1 {{unknown attribute 'tile.warp_predicate'; did you mean 'tile.warp_predicated'?}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, tile.warp_predicate} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== A missing operandSegmentSizes is a located error (it was a KeyError). ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @no_segments(%d: !desc, %b: !buf) {
    // expected-error@+1 {{requires attribute 'operandSegmentSizes' (array<i32: ...>, one operand count for each of desc, dest, pred, barrier)}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== operandSegmentSizes must agree with the operands. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @bad_segments(%d: !desc, %b: !buf) {
    // expected-error@+1 {{'operandSegmentSizes' gives pred 2 operands; it takes 0 or 1}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 2, 0>} : (!desc, !buf) -> ()
    return
  }
}

// -----

// ==== TDM moves 8- to 64-bit integers and floats (index elements aborted Triton). ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @index_elements(%d: !tile.tensor_desc<tensor<128x64xindex, #s>>, %b: !tile.shared<tensor<128x64xindex, #s>>) {
    // expected-error@+1 {{a TDM copy must have one of the element types i8, i16, i32, i64, f16, bf16, f32, f64, f8E4M3FN, f8E5M2, f8E4M3FNUZ, f8E5M2FNUZ, f8E8M0FNU; got index}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!tile.tensor_desc<tensor<128x64xindex, #s>>, !tile.shared<tensor<128x64xindex, #s>>) -> ()
    return
  }
}

// -----

// ==== TDM pads every 2 to 256 dwords: 2 f16 elements are 1 dword. ====
#s = #tile.padded_shared<{interval = 2, amount = 8, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @pad_interval_small(%d: !tile.tensor_desc<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<128x64xf16, #s>>) {
    // expected-error@+1 {{TDM pads every 2 to 256 dwords: interval = 2 f16 elements is 4 bytes (allowed: 4 to 512 elements)}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>) -> ()
    return
  }
}

// -----

// ==== TDM pads whole dwords: 1 f16 element of padding is half a dword. ====
#s = #tile.padded_shared<{interval = 64, amount = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @pad_amount_small(%d: !tile.tensor_desc<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<128x64xf16, #s>>) {
    // expected-error@+1 {{TDM pads at least one dword: amount = 1 f16 elements is 2 bytes (at least 2 elements)}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>) -> ()
    return
  }
}

// -----

// ==== A hint with a huge num_warps gets a short message (it was padded to 2^30 digits). ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 1073741824 : i32} {
  func.func @huge_num_warps(%d: !desc, %b: !buf) {
    // expected-error@+1 {{num_warps must be less than 32 when using warp_used_hint, got 1073741824 (hint 0xf = 0b00000000000000000000000000001111 selects warps {0..3}}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    return
  }
}
