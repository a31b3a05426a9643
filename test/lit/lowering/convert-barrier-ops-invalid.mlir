// RUN: gemm-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=gfx1250})'

// gfx1250 keeps the barrier semantics exact only when every tracked copy is
// covered by the expect before it; everything else is refused at the op.

// A tracked copy with no expect before it.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @copy_without_expect(%d: !desc, %b: !buf, %bar: !tile.mbarrier<i64>) {
    // expected-error@+1 {{on gfx1250 a barrier-tracked copy must follow the tile.barrier_expect that announces its bytes, in the same block (LDS barriers count arrivals, not bytes)}}
    "tile.async_tdm_copy_global_to_local"(%d, %b, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    return
  }
}

// -----

// The copies after an expect deliver other bytes than it announces.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @bytes_mismatch(%d: !desc, %b: !buf, %bar: !tile.mbarrier<i64>, %ph: i32) {
    // expected-error@+1 {{on gfx1250 the tracked copies after a tile.barrier_expect must deliver its bytes: it announces 4096, the copies that follow it deliver 8192}}
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 4096 : i32} : (!tile.mbarrier<i64>) -> ()
    "tile.async_tdm_copy_global_to_local"(%d, %b, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    "tile.barrier_wait"(%bar, %ph) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
    return
  }
}

// -----

// A hinted tracked copy leaves warps out, which would not arrive.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @hinted_tracked_copy(%d: !desc, %b: !buf, %bar: !tile.mbarrier<i64>) {
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!tile.mbarrier<i64>) -> ()
    // expected-error@+1 {{on gfx1250 a barrier-tracked copy is issued by every warp (each arrives once); warp_used_hint = 0x3 leaves warps out}}
    "tile.async_tdm_copy_global_to_local"(%d, %b, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>, warp_used_hint = 3 : i32} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    return
  }
}

// -----

// A predicated expect.
module attributes {tile.num_warps = 4 : i32} {
  func.func @predicated_expect(%bar: !tile.mbarrier<i64>, %p: i1) {
    // expected-error@+1 {{a predicated tile.barrier_expect has no gfx1250 form yet}}
    "tile.barrier_expect"(%bar, %p) {operandSegmentSizes = array<i32: 1, 1>, bytes = 64 : i32} : (!tile.mbarrier<i64>, i1) -> ()
    return
  }
}

// -----

// Barriers on a target without TDM or TMA (the verifier, for that target).
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx950"} {
  func.func @no_tdm() {
    // expected-error@+1 {{a shared-memory barrier needs TDM (gfx1250) or TMA (cuda:90); gfx950 has neither}}
    %bars = "tile.barrier_alloc"() : () -> !tile.mbarrier_ring<1 : i32>
    return
  }
}

// -----

// A predicated tracked copy: a copy that does not issue would not arrive.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @predicated_tracked_copy(%d: !desc, %b: !buf, %bar: !tile.mbarrier<i64>, %p: i1) {
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!tile.mbarrier<i64>) -> ()
    // expected-error@+1 {{a predicated barrier-tracked copy has no gfx1250 form yet}}
    "tile.async_tdm_copy_global_to_local"(%d, %b, %p, %bar) {operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!desc, !buf, i1, !tile.mbarrier<i64>) -> ()
    return
  }
}
