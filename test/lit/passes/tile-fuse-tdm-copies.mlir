// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-fuse-tdm-copies)' | FileCheck %s

// Two copies with disjoint hints become one fused copy.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
!bufs = !tile.shared<tensor<4x128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @disjoint_pair_fuses
  func.func @disjoint_pair_fuses(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf) {
    // CHECK: "tile.async_tdm_fused_copy_global_to_local"(%arg0, %arg1, %arg2, %arg3) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 15, 240>}
    // CHECK-NOT: tile.async_tdm_copy_global_to_local
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// Overlapping hints (0x0F, 0x03) share warps 0 and 1: no fusion.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
!bufs = !tile.shared<tensor<4x128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @overlap_no_fuse
  func.func @overlap_no_fuse(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf) {
    // CHECK-NOT: tile.async_tdm_fused_copy_global_to_local
    // CHECK-COUNT-2: tile.async_tdm_copy_global_to_local
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 3 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// A copy that arrives on an mbarrier stays separate (a fused copy takes none).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
!bufs = !tile.shared<tensor<4x128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @mbarrier_no_fuse
  func.func @mbarrier_no_fuse(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf, %bar: !tile.mbarrier<i64>) {
    // CHECK-NOT: tile.async_tdm_fused_copy_global_to_local
    // CHECK-COUNT-2: tile.async_tdm_copy_global_to_local
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>, warp_used_hint = 240 : i32} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    return
  }
}

// -----

// A copy with its own pred operand stays separate (the fused op has no pred).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
!bufs = !tile.shared<tensor<4x128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @pred_no_fuse
  func.func @pred_no_fuse(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf, %p: i1) {
    // CHECK-NOT: tile.async_tdm_fused_copy_global_to_local
    // CHECK-COUNT-2: tile.async_tdm_copy_global_to_local
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1, %p) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, warp_used_hint = 240 : i32} : (!desc, !buf, i1) -> ()
    return
  }
}

// -----

// Unhinted copies keep all warps busy: nothing to fuse.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
!bufs = !tile.shared<tensor<4x128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @unhinted_no_fuse
  func.func @unhinted_no_fuse(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf) {
    // CHECK-NOT: tile.async_tdm_fused_copy_global_to_local
    // CHECK-COUNT-2: tile.async_tdm_copy_global_to_local
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    return
  }
}

// -----

// Different cache modifiers cannot share one instruction.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
!bufs = !tile.shared<tensor<4x128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @cache_mismatch_no_fuse
  func.func @cache_mismatch_no_fuse(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf) {
    // CHECK-NOT: tile.async_tdm_fused_copy_global_to_local
    // CHECK-COUNT-2: tile.async_tdm_copy_global_to_local
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32, cache = ".cg"} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// Members of a fused copy must have the same rank: 2-D and 1-D stay separate.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#r = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
!desc1 = !tile.tensor_desc<tensor<256xf16, #r>>
!buf1 = !tile.shared<tensor<256xf16, #r>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @rank_mismatch_no_fuse
  func.func @rank_mismatch_no_fuse(%d0: !desc, %d1: !desc1, %b0: !buf, %b1: !buf1) {
    // CHECK-NOT: tile.async_tdm_fused_copy_global_to_local
    // CHECK-COUNT-2: tile.async_tdm_copy_global_to_local
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc1, !buf1) -> ()
    return
  }
}

// -----

// Reading a member's destination between the copies blocks fusion: fusing would move the first copy past the read.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
!bufs = !tile.shared<tensor<4x128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @local_load_of_dest_blocks
  func.func @local_load_of_dest_blocks(%d0: !desc, %d1: !desc) {
    // CHECK-NOT: tile.async_tdm_fused_copy_global_to_local
    // CHECK: tile.async_tdm_copy_global_to_local
    // CHECK: tile.local_load
    // CHECK: tile.async_tdm_copy_global_to_local
    %all = "tile.local_alloc"() : () -> !bufs
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %b0 = "tile.memdesc_index"(%all, %c0) : (!bufs, i32) -> !buf
    %b1 = "tile.memdesc_index"(%all, %c1) : (!bufs, i32) -> !buf
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    %again = "tile.memdesc_index"(%all, %c0) : (!bufs, i32) -> !buf
    %t = "tile.local_load"(%again) : (!buf) -> tensor<128x64xf16>
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// Reading another buffer (index 2 of the allocation, not 0 or 1) does not block; the fused copy sits at the last member.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
!bufs = !tile.shared<tensor<4x128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @local_load_of_other_buffer_fuses
  func.func @local_load_of_other_buffer_fuses(%d0: !desc, %d1: !desc) {
    // CHECK: %[[B0:.*]] = "tile.memdesc_index"(%[[ALL:.*]], %c0_i32)
    // CHECK-NOT: tile.async_tdm_copy_global_to_local
    // CHECK: tile.local_load
    // CHECK: %[[B1:.*]] = "tile.memdesc_index"(%[[ALL]], %c1_i32)
    // CHECK-NEXT: "tile.async_tdm_fused_copy_global_to_local"(%arg0, %arg1, %[[B0]], %[[B1]])
    // CHECK-NOT: tile.async_tdm_copy_global_to_local
    %all = "tile.local_alloc"() : () -> !bufs
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %b0 = "tile.memdesc_index"(%all, %c0) : (!bufs, i32) -> !buf
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    %other = "tile.memdesc_index"(%all, %c2) : (!bufs, i32) -> !buf
    %t = "tile.local_load"(%other) : (!buf) -> tensor<128x64xf16>
    %b1 = "tile.memdesc_index"(%all, %c1) : (!bufs, i32) -> !buf
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// A wait between the copies ends the run.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
!bufs = !tile.shared<tensor<4x128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @wait_between_blocks
  func.func @wait_between_blocks(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf) {
    // CHECK-NOT: tile.async_tdm_fused_copy_global_to_local
    // CHECK: tile.async_tdm_copy_global_to_local
    // CHECK: tile.async_tdm_wait
    // CHECK: tile.async_tdm_copy_global_to_local
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// Three copies: half + quarter + quarter.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
!bufs = !tile.shared<tensor<4x128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @three_member_run
  func.func @three_member_run(%d0: !desc, %d1: !desc, %d2: !desc, %b0: !buf, %b1: !buf, %b2: !buf) {
    // CHECK: "tile.async_tdm_fused_copy_global_to_local"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 1, 1, 0, 0>, warp_used_hints = array<i32: 15, 48, 192>}
    // CHECK-NOT: tile.async_tdm_copy_global_to_local
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 48 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d2, %b2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 192 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// Four copies: the quarters.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
!bufs = !tile.shared<tensor<4x128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @four_member_run
  func.func @four_member_run(%d0: !desc, %d1: !desc, %d2: !desc, %d3: !desc, %b0: !buf, %b1: !buf, %b2: !buf, %b3: !buf) {
    // CHECK: "tile.async_tdm_fused_copy_global_to_local"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 0>, warp_used_hints = array<i32: 3, 12, 48, 192>}
    // CHECK-NOT: tile.async_tdm_copy_global_to_local
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 3 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 12 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d2, %b2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 48 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d3, %b3) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 192 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// Five disjoint copies: a fused copy holds at most 4, so 4 + 1.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
!bufs = !tile.shared<tensor<4x128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @five_copies_four_plus_one
  func.func @five_copies_four_plus_one(%d0: !desc, %d1: !desc, %d2: !desc, %d3: !desc, %b0: !buf, %b1: !buf, %b2: !buf, %b3: !buf, %d4: !desc, %b4: !buf) {
    // CHECK: "tile.async_tdm_fused_copy_global_to_local"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7) {{.*}}warp_used_hints = array<i32: 1, 2, 4, 8>}
    // CHECK-NEXT: "tile.async_tdm_copy_global_to_local"(%arg8, %arg9) {{.*}}warp_used_hint = 16 : i32
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 1 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 2 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d2, %b2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 4 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d3, %b3) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 8 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d4, %b4) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 16 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// Straight-line waits: copies A, B (fused into G) and an unhinted C. num = 3 (C, B, A) becomes 2 (C, G); num = 2 (C, B) cannot keep B in flight without A, so it becomes 1 and waits for all of G; num = 1 (C) stays; num = 0 stays.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
!bufs = !tile.shared<tensor<4x128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @waits_straight_line
  func.func @waits_straight_line(%d0: !desc, %d1: !desc, %d2: !desc, %b0: !buf, %b1: !buf, %b2: !buf) {
    // CHECK: "tile.async_tdm_fused_copy_global_to_local"(%arg0, %arg1, %arg3, %arg4) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 15, 240>}
    // CHECK-NEXT: "tile.async_tdm_copy_global_to_local"(%arg2, %arg5)
    // CHECK-NEXT: "tile.async_tdm_wait"() {num = 2 : i32}
    // CHECK-NEXT: "tile.async_tdm_wait"() {num = 1 : i32}
    // CHECK-NEXT: "tile.async_tdm_wait"() {num = 1 : i32}
    // CHECK-NEXT: "tile.async_tdm_wait"() {num = 0 : i32}
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d2, %b2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_wait"() {num = 3 : i32} : () -> ()
    "tile.async_tdm_wait"() {num = 2 : i32} : () -> ()
    "tile.async_tdm_wait"() {num = 1 : i32} : () -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}

// -----

// The pipelined GEMM: the next tile's A and B copies open the loop body and
// `wait {num = 2}` lets exactly those two stay in flight. Fused, they are one
// instruction: the wait becomes num = 1 (the prologue pair fuses too).
#sa = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#sb = #tile.padded_shared<{interval = 128, amount = 16, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #sa>>
!db = !tile.tensor_desc<tensor<64x128xf16, #sb>>
!ba = !tile.shared<tensor<128x64xf16, #sa>>
!bb = !tile.shared<tensor<64x128xf16, #sb>>
!bufa = !tile.shared<tensor<2x128x64xf16, #sa>>
!bufb = !tile.shared<tensor<2x64x128xf16, #sb>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @gemm_loop_wait
  func.func @gemm_loop_wait(%da: !da, %db: !db, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c64 = arith.constant 64 : i32
    %abuf = "tile.local_alloc"() : () -> !bufa
    %bbuf = "tile.local_alloc"() : () -> !bufb
    %a0 = "tile.memdesc_index"(%abuf, %c0) : (!bufa, i32) -> !ba
    %b0 = "tile.memdesc_index"(%bbuf, %c0) : (!bufb, i32) -> !bb
    // CHECK: "tile.async_tdm_fused_copy_global_to_local"(%arg0, %arg1, %{{.*}}, %{{.*}}) {{{.*}}warp_used_hints = array<i32: 15, 240>}
    "tile.async_tdm_copy_global_to_local"(%da, %a0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!da, !ba) -> ()
    "tile.async_tdm_copy_global_to_local"(%db, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!db, !bb) -> ()
    // CHECK: scf.for
    scf.for %i = %c0 to %n step %c1 : i32 {
      %next = arith.addi %i, %c1 : i32
      %slot_n = arith.remsi %next, %c2 : i32
      %k_n = arith.muli %next, %c64 : i32
      %dan = "tile.update_tensor_descriptor"(%da, %c0, %k_n) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!da, i32, i32) -> !da
      %dbn = "tile.update_tensor_descriptor"(%db, %k_n, %c0) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!db, i32, i32) -> !db
      %an = "tile.memdesc_index"(%abuf, %slot_n) : (!bufa, i32) -> !ba
      %bn = "tile.memdesc_index"(%bbuf, %slot_n) : (!bufb, i32) -> !bb
      // CHECK: "tile.async_tdm_fused_copy_global_to_local"({{.*}}warp_used_hints = array<i32: 15, 240>}
      // CHECK-NEXT: "tile.async_tdm_wait"() {num = 1 : i32}
      "tile.async_tdm_copy_global_to_local"(%dan, %an) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!da, !ba) -> ()
      "tile.async_tdm_copy_global_to_local"(%dbn, %bn) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!db, !bb) -> ()
      "tile.async_tdm_wait"() {num = 2 : i32} : () -> ()
      %slot = arith.remsi %i, %c2 : i32
      %ac = "tile.memdesc_index"(%abuf, %slot) : (!bufa, i32) -> !ba
      %at = "tile.local_load"(%ac) : (!ba) -> tensor<128x64xf16>
    }
    // CHECK: "tile.async_tdm_wait"() {num = 0 : i32}
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}

// -----

// A wait at the top of a loop body has two predecessors: the previous
// iteration's tail (a fused pair: num = 1 would do) and the prologue, whose
// overlapping copies stay two instructions (num = 2). The wait takes the
// minimum, 1, so the first iteration waits for more than it must.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @loop_top_wait_min_over_paths
  func.func @loop_top_wait_min_over_paths(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    // CHECK-NOT: tile.async_tdm_fused_copy_global_to_local
    // CHECK-COUNT-2: "tile.async_tdm_copy_global_to_local"
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    // CHECK: scf.for
    scf.for %i = %c0 to %n step %c1 : i32 {
      // CHECK-NEXT: "tile.async_tdm_wait"() {num = 1 : i32}
      "tile.async_tdm_wait"() {num = 2 : i32} : () -> ()
      %t = "tile.local_load"(%b0) : (!buf) -> tensor<128x64xf16>
      // CHECK: "tile.async_tdm_fused_copy_global_to_local"({{.*}}warp_used_hints = array<i32: 15, 240>}
      "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
      "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    }
    return
  }
}

// -----

// A load of the whole allocation reads every slot, the first member's too: it
// ends the run although the views it is compared with are one level deeper.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
!bufs = !tile.shared<tensor<4x128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @load_of_the_allocation_ends_the_run
  func.func @load_of_the_allocation_ends_the_run(%d0: !desc, %d1: !desc) {
    // CHECK-NOT: tile.async_tdm_fused_copy_global_to_local
    // CHECK: tile.async_tdm_copy_global_to_local
    // CHECK-NEXT: tile.local_load
    // CHECK-NEXT: tile.async_tdm_copy_global_to_local
    %all = "tile.local_alloc"() : () -> !bufs
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %b0 = "tile.memdesc_index"(%all, %c0) : (!bufs, i32) -> !buf
    %b1 = "tile.memdesc_index"(%all, %c1) : (!bufs, i32) -> !buf
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    %t = "tile.local_load"(%all) : (!bufs) -> tensor<4x128x64xf16>
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// An op with a region ends a run even when it issues no copy: fusing across it
// would move the first copy past the wait inside it.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @region_op_ends_the_run
  func.func @region_op_ends_the_run(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf, %p: i1) {
    // CHECK-NOT: tile.async_tdm_fused_copy_global_to_local
    // CHECK: tile.async_tdm_copy_global_to_local
    // CHECK-NEXT: scf.if
    // CHECK: tile.async_tdm_copy_global_to_local
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    scf.if %p {
      "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    }
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// The third copy writes the first one's buffer: the pair fuses, the third
// stays apart (it aliases one member, not all of them).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @third_copy_into_the_first_buffer
  func.func @third_copy_into_the_first_buffer(%d0: !desc, %d1: !desc, %d2: !desc, %b0: !buf, %b1: !buf) {
    // CHECK: "tile.async_tdm_fused_copy_global_to_local"(%arg0, %arg1, %arg3, %arg4) {{{.*}}warp_used_hints = array<i32: 3, 12>}
    // CHECK-NEXT: "tile.async_tdm_copy_global_to_local"(%arg2, %arg3) {{{.*}}warp_used_hint = 48 : i32}
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 3 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 12 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d2, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 48 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// A load of the first member's buffer after the second copy ends the run
// there: the pair fuses before the load, the third copy stays after it.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @load_of_a_member_buffer_ends_a_longer_run
  func.func @load_of_a_member_buffer_ends_a_longer_run(%d0: !desc, %d1: !desc, %d2: !desc, %b0: !buf, %b1: !buf, %b2: !buf) {
    // CHECK: "tile.async_tdm_fused_copy_global_to_local"(%arg0, %arg1, %arg3, %arg4) {{{.*}}warp_used_hints = array<i32: 3, 12>}
    // CHECK-NEXT: tile.local_load
    // CHECK-NEXT: "tile.async_tdm_copy_global_to_local"(%arg2, %arg5)
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 3 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 12 : i32} : (!desc, !buf) -> ()
    %t = "tile.local_load"(%b0) : (!buf) -> tensor<128x64xf16>
    "tile.async_tdm_copy_global_to_local"(%d2, %b2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 48 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// Destinations indexed by dynamic values (%i, %j may be equal) or by one
// constant twice may be one buffer: no fusion. Distinct constants fuse.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
!bufs = !tile.shared<tensor<4x128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @dynamic_and_equal_indices_do_not_fuse
  func.func @dynamic_and_equal_indices_do_not_fuse(%d0: !desc, %d1: !desc, %i: i32, %j: i32) {
    // CHECK-NOT: tile.async_tdm_fused_copy_global_to_local
    // CHECK-COUNT-4: "tile.async_tdm_copy_global_to_local"
    // CHECK: "tile.async_tdm_fused_copy_global_to_local"
    // CHECK-SAME: warp_used_hints = array<i32: 15, 240>
    // CHECK-NOT: tile.async_tdm_copy_global_to_local
    %all = "tile.local_alloc"() : () -> !bufs
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %vi = "tile.memdesc_index"(%all, %i) : (!bufs, i32) -> !buf
    %vj = "tile.memdesc_index"(%all, %j) : (!bufs, i32) -> !buf
    "tile.async_tdm_copy_global_to_local"(%d0, %vi) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %vj) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %v1 = "tile.memdesc_index"(%all, %c1) : (!bufs, i32) -> !buf
    %v1b = "tile.memdesc_index"(%all, %c1) : (!bufs, i32) -> !buf
    "tile.async_tdm_copy_global_to_local"(%d0, %v1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %v1b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %v2 = "tile.memdesc_index"(%all, %c2) : (!bufs, i32) -> !buf
    "tile.async_tdm_copy_global_to_local"(%d0, %v1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %v2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// A wait inside an scf.if branch (warp-uniform or on tile.warp_id) sees the
// copies issued before the scf.if: A, B fuse into G, C is unhinted.
// then: num = 3 (C, B, A) -> 2 (C, G); else: num = 2 (C, B) -> 1 (C, all of G).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @wait_in_a_branch_sees_copies_before_it
  func.func @wait_in_a_branch_sees_copies_before_it(%d0: !desc, %d1: !desc, %d2: !desc, %b0: !buf, %b1: !buf, %b2: !buf, %p: i1) {
    %c4 = arith.constant 4 : i32
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d2, %b2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    // CHECK: scf.if
    // CHECK-NEXT: "tile.async_tdm_wait"() {num = 2 : i32}
    // CHECK-NEXT: } else {
    // CHECK-NEXT: "tile.async_tdm_wait"() {num = 1 : i32}
    scf.if %p {
      "tile.async_tdm_wait"() {num = 3 : i32} : () -> ()
    } else {
      "tile.async_tdm_wait"() {num = 2 : i32} : () -> ()
    }
    // CHECK: %[[W:.*]] = "tile.warp_id"
    // CHECK: scf.if
    // CHECK-NEXT: "tile.async_tdm_wait"() {num = 2 : i32}
    %w = "tile.warp_id"() : () -> i32
    %lo = arith.cmpi slt, %w, %c4 : i32
    scf.if %lo {
      "tile.async_tdm_wait"() {num = 3 : i32} : () -> ()
    }
    return
  }
}

// -----

// A wait after an scf.if that may issue copies cannot tell how many
// instructions the branch added: it waits for everything (num = 0). The
// branch's own pair fuses, and its wait counts the pair as one.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @wait_after_a_branch_with_copies
  func.func @wait_after_a_branch_with_copies(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf, %b2: !buf, %b3: !buf, %p: i1) {
    // CHECK: "tile.async_tdm_fused_copy_global_to_local"(%arg0, %arg1, %arg2, %arg3)
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    // CHECK: scf.if
    // CHECK-NEXT: "tile.async_tdm_fused_copy_global_to_local"(%arg0, %arg1, %arg4, %arg5)
    // CHECK-NEXT: "tile.async_tdm_wait"() {num = 1 : i32}
    // CHECK-NEXT: }
    // CHECK-NEXT: "tile.async_tdm_wait"() {num = 0 : i32}
    scf.if %p {
      "tile.async_tdm_copy_global_to_local"(%d0, %b2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
      "tile.async_tdm_copy_global_to_local"(%d1, %b3) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
      "tile.async_tdm_wait"() {num = 2 : i32} : () -> ()
    }
    "tile.async_tdm_wait"() {num = 2 : i32} : () -> ()
    return
  }
}

// -----

// A fused copy already in the input is one instruction: new pair G after an
// existing fused F. num = 3 (B, A, F) -> 2 (G, F); num = 2 (B, A) -> 1 (G).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @fused_copy_in_the_input_counts_one
  func.func @fused_copy_in_the_input_counts_one(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf, %b2: !buf, %b3: !buf) {
    // CHECK: "tile.async_tdm_fused_copy_global_to_local"(%arg0, %arg1, %arg2, %arg3)
    // CHECK-NEXT: "tile.async_tdm_fused_copy_global_to_local"(%arg0, %arg1, %arg4, %arg5)
    // CHECK-NEXT: "tile.async_tdm_wait"() {num = 2 : i32}
    // CHECK-NEXT: "tile.async_tdm_wait"() {num = 1 : i32}
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 15, 240>} : (!desc, !desc, !buf, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d0, %b2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b3) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_wait"() {num = 3 : i32} : () -> ()
    "tile.async_tdm_wait"() {num = 2 : i32} : () -> ()
    return
  }
}

// -----

// Nested regions: a wait at the top of a loop inside an scf.if reaches the
// pair before the scf.if (the loop body issues nothing): num = 2 -> 1.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @wait_in_a_loop_in_a_branch
  func.func @wait_in_a_loop_in_a_branch(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf, %p: i1, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    // CHECK: "tile.async_tdm_fused_copy_global_to_local"
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    // CHECK: scf.if
    // CHECK-NEXT: scf.for
    // CHECK-NEXT: "tile.async_tdm_wait"() {num = 1 : i32}
    scf.if %p {
      scf.for %i = %c0 to %n step %c1 : i32 {
        "tile.async_tdm_wait"() {num = 2 : i32} : () -> ()
      }
    }
    return
  }
}

// -----

// Regions that issue no copy add no instruction: a wait after them still
// sees the pair before them (num = 2 -> 1), even through a branch that waits.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @regions_without_copies_are_transparent
  func.func @regions_without_copies_are_transparent(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf, %p: i1, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    // CHECK: "tile.async_tdm_fused_copy_global_to_local"
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    scf.for %i = %c0 to %n step %c1 : i32 {
      %x = arith.addi %i, %c1 : i32
    }
    scf.if %p {
      "tile.async_tdm_wait"() {num = 1 : i32} : () -> ()
    }
    // (num = 1 in the branch would keep B without A: it waits for all of G.)
    // CHECK: scf.if
    // CHECK-NEXT: "tile.async_tdm_wait"() {num = 0 : i32}
    // CHECK-NEXT: }
    // CHECK-NEXT: "tile.async_tdm_wait"() {num = 1 : i32}
    "tile.async_tdm_wait"() {num = 2 : i32} : () -> ()
    return
  }
}
