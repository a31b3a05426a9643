// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu)' | FileCheck %s
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-assign-tdm-warp-layout,tile-emit-warp-predicates,convert-tile-to-triton-gpu)' | FileCheck %s --check-prefix=PRED

// What feeds each lowered predicate: which values a copy's pred is made of, and where
// it goes (the descriptor on gfx1250, the TMA copy on cuda:90, an scf.if guard and a
// per-dim bounds mask on gfx950), not only that an op is present.

// gfx1250: the descriptor's own pred (%q, from its update) and the copy's pred (%p)
// are and-ed, descriptor's first, and go into the descriptor Triton copies through
// (an i32 pred of an update with zero offsets). Under the warp-predicate passes the
// copy's pred is first and-ed with the warp test; the lowering consumes that test, and
// exactly the user's %p is left to meet %q.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func public @both_preds(
  // PRED-LABEL: tt.func public @both_preds(
  func.func @both_preds(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %ba: !ba, %p: i1, %q: i1) {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %u = "tile.update_tensor_descriptor"(%d, %m, %m, %q) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    // CHECK: %[[D:.*]] = tt.make_tensor_descriptor
    // CHECK-NEXT: %[[Q32:.*]] = arith.extui %arg5 : i1 to i32
    // CHECK-NEXT: %[[U:.*]] = amdg.update_tensor_descriptor %[[D]] add_offsets = [%arg1, %arg1] pred = %[[Q32]] {clamp_bounds}
    // CHECK-NEXT: %[[BOTH:.*]] = arith.andi %arg5, %arg4 : i1
    // CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i32
    // CHECK-NEXT: %[[B32:.*]] = arith.extui %[[BOTH]] : i1 to i32
    // CHECK-NEXT: %[[DP:.*]] = amdg.update_tensor_descriptor %[[U]] add_offsets = [%[[Z]], %[[Z]]] pred = %[[B32]] :
    // CHECK-NEXT: amdg.async_tdm_copy_global_to_local %[[DP]] into %arg3 {warp_used_hint = 240 : i32}
    // PRED-NOT: arith.xori
    // PRED-NOT: arith.cmpi
    // PRED: %[[BOTH:.*]] = arith.andi %arg5, %arg4 : i1
    // PRED-NOT: arith.andi
    // PRED: %[[B32:.*]] = arith.extui %[[BOTH]] : i1 to i32
    // PRED: %[[DP:.*]] = amdg.update_tensor_descriptor %{{.*}} pred = %[[B32]] :
    // PRED-NEXT: amdg.async_tdm_copy_global_to_local %[[DP]] into %arg3 {warp_used_hint = 240 : i32}
    "tile.async_tdm_copy_global_to_local"(%u, %ba, %p) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, warp_used_hint = 240 : i32} : (!da, !ba, i1) -> ()
    return
  }
}


// -----

// cuda:90: a barrier-tracked copy is a TMA copy whose predicate is the descriptor's
// pred and-ed with the copy's (descriptor's first), at the accumulated origin
// (%m, 0), on the copy's own barrier; the expect before it keeps its own (true) pred.

#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  // CHECK-LABEL: tt.func public @tracked_preds(
  func.func @tracked_preds(%c: !tile.ptr<f16>, %m: i32, %ld: i64 {tile.divisibility = 16 : i32}, %b: !buf, %bar: !tile.mbarrier<i64>, %p: i1, %q: i1) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%c, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    %u = "tile.update_tensor_descriptor"(%d, %m, %c0, %q) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!desc, i32, i32, i1) -> !desc
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!tile.mbarrier<i64>) -> ()
    // CHECK: %[[TRUE:.*]] = arith.constant true
    // CHECK-NEXT: ttng.barrier_expect %arg4, 8192, %[[TRUE]]
    // CHECK-NEXT: %[[BOTH:.*]] = arith.andi %arg6, %arg5 : i1
    // CHECK-NEXT: ttng.async_tma_copy_global_to_local %arg7[%arg1, %{{.*}}] %arg3, %arg4, %[[BOTH]] :
    "tile.async_tdm_copy_global_to_local"(%u, %b, %p, %bar) {operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!desc, !buf, i1, !tile.mbarrier<i64>) -> ()
    "tile.barrier_wait"(%bar, %c0) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
    return
  }
}


// -----

// gfx950 direct-to-LDS: each member of a fused copy is guarded by its own
// descriptor's pred (an scf.if: a false pred leaves the buffer as it was), masked per
// dim by 0 <= index < bound, and the fused copy is one commit group, after both.

#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx950"} {
  // CHECK-LABEL: tt.func public @fused_groups(
  func.func @fused_groups(%a: !tile.ptr<f16>, %m: i32 {tile.divisibility = 16 : i32}, %lda: i64 {tile.divisibility = 16 : i32}, %ba: !ba, %bb: !ba, %p: i1, %q: i1) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %da = "tile.update_tensor_descriptor"(%d, %c0, %c0, %p) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    %db = "tile.update_tensor_descriptor"(%d, %m, %c0, %q) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    // CHECK: scf.if %arg5 {
    // CHECK-NOT: ttg.async_commit_group
    // CHECK: %[[RIN:.*]] = arith.andi %{{.*}}, %{{.*}} : tensor<64x1xi1, #[[BL:.*]]>
    // CHECK-NEXT: %[[RB:.*]] = tt.broadcast %[[RIN]]
    // CHECK: %[[CIN:.*]] = arith.andi %{{.*}}, %{{.*}} : tensor<1x64xi1, #[[BL]]>
    // CHECK-NEXT: %[[CB:.*]] = tt.broadcast %[[CIN]]
    // CHECK-NEXT: %[[M:.*]] = arith.andi %[[RB]], %[[CB]] : tensor<64x64xi1, #[[BL]]>
    // CHECK: ttg.async_copy_global_to_local %{{.*}}, %arg3 mask %[[M]] other
    // CHECK-NEXT: }
    // CHECK-NEXT: scf.if %arg6 {
    // CHECK-NOT: ttg.async_commit_group
    // CHECK: ttg.async_copy_global_to_local %{{.*}}, %arg4 mask
    // CHECK-NEXT: }
    // CHECK-NEXT: ttg.async_commit_group
    // CHECK-NEXT: ttg.async_wait {num = 0 : i32}
    "tile.async_tdm_fused_copy_global_to_local"(%da, %db, %ba, %bb) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 3, 12>} : (!da, !da, !ba, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
