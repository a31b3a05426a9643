// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-assign-tdm-warp-layout,tile-emit-warp-predicates)' | FileCheck %s --check-prefix=EMIT
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-assign-tdm-warp-layout,tile-emit-warp-predicates,convert-tile-to-triton-gpu{target=gfx1250})' | FileCheck %s --check-prefix=TDM
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-assign-tdm-warp-layout,tile-emit-warp-predicates,convert-tile-to-triton-gpu{target=gfx950})' | FileCheck %s --check-prefix=ASYNC

// The warp test a hinted copy carries, and what the lowering makes of it.
// tile-emit-warp-predicates ANDs the user's pred with
// ((warp_id ^ anchor) & free_mask) == 0, the anchor and free mask of the
// hint's warp layout (8 warps: hint 0xc = warps 2 and 3: anchor 2, free
// mask 6; hint 0x3 = warps 0 and 1: anchor 0, free mask 6). The lowering
// checks that test against the hint and strips it back to the user's pred
// (Triton predicates the warps from the hint itself), so exactly the user's
// pred reaches the copy: through the descriptor on TDM, as the scf.if guard
// without TDM; a copy with no user pred gets no predicate at all.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // EMIT-LABEL: func.func @warp_tests(
  // TDM-LABEL: tt.func public @warp_tests(
  // ASYNC-LABEL: tt.func public @warp_tests(
  func.func @warp_tests(%a: !tile.ptr<f16>, %m: i32 {tile.divisibility = 16 : i32}, %lda: i64 {tile.divisibility = 16 : i32}, %q: i1) {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    // TDM: %[[D:.*]] = tt.make_tensor_descriptor %arg0
    %ba = "tile.local_alloc"() : () -> !ba
    // TDM: %[[BA:.*]] = ttg.local_alloc
    // ASYNC: %[[BA:.*]] = ttg.local_alloc
    %bb = "tile.local_alloc"() : () -> !ba
    // TDM: %[[BB:.*]] = ttg.local_alloc
    // ASYNC: %[[BB:.*]] = ttg.local_alloc

    // EMIT: %[[W:.*]] = "tile.warp_id"() : () -> i32
    // EMIT-NEXT: %[[ANCHOR:.*]] = arith.constant 2 : i32
    // EMIT-NEXT: %[[X:.*]] = arith.xori %[[W]], %[[ANCHOR]] : i32
    // EMIT-NEXT: %[[FREE:.*]] = arith.constant 6 : i32
    // EMIT-NEXT: %[[MASKED:.*]] = arith.andi %[[X]], %[[FREE]] : i32
    // EMIT-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
    // EMIT-NEXT: %[[ON:.*]] = arith.cmpi eq, %[[MASKED]], %[[ZERO]] : i32
    // EMIT-NEXT: %[[BOTH:.*]] = arith.andi %arg3, %[[ON]] : i1
    // EMIT-NEXT: "tile.async_tdm_copy_global_to_local"(%{{.*}}, %{{.*}}, %[[BOTH]])
    // EMIT-SAME: anchor = 2 : i64, free_mask = 6 : i64
    // EMIT-SAME: tile.warp_predicated, warp_used_hint = 12 : i32
    //
    // TDM-NOT: arith.xori
    // TDM-NOT: arith.cmpi
    // TDM: %[[Q32:.*]] = arith.extui %arg3 : i1 to i32
    // TDM-NEXT: %[[DQ:.*]] = amdg.update_tensor_descriptor %[[D]] add_offsets = [%{{.*}}, %{{.*}}] pred = %[[Q32]] :
    // TDM-NEXT: amdg.async_tdm_copy_global_to_local %[[DQ]] into %[[BA]] {warp_used_hint = 12 : i32}
    //
    // ASYNC-NOT: arith.xori
    // ASYNC: scf.if %arg3 {
    // ASYNC: ttg.async_copy_global_to_local %{{.*}}, %[[BA]] mask
    // ASYNC-NEXT: }
    // ASYNC-NEXT: ttg.async_commit_group
    "tile.async_tdm_copy_global_to_local"(%d, %ba, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, warp_used_hint = 12 : i32} : (!da, !ba, i1) -> ()

    // Without a user pred the warp test alone is the copy's pred.
    // EMIT: %[[W2:.*]] = "tile.warp_id"() : () -> i32
    // EMIT-NEXT: %[[ANCHOR2:.*]] = arith.constant 0 : i32
    // EMIT-NEXT: %[[X2:.*]] = arith.xori %[[W2]], %[[ANCHOR2]] : i32
    // EMIT-NEXT: %[[FREE2:.*]] = arith.constant 6 : i32
    // EMIT-NEXT: %[[MASKED2:.*]] = arith.andi %[[X2]], %[[FREE2]] : i32
    // EMIT-NEXT: %[[ZERO2:.*]] = arith.constant 0 : i32
    // EMIT-NEXT: %[[ON2:.*]] = arith.cmpi eq, %[[MASKED2]], %[[ZERO2]] : i32
    // EMIT-NEXT: "tile.async_tdm_copy_global_to_local"(%{{.*}}, %{{.*}}, %[[ON2]])
    // EMIT-SAME: anchor = 0 : i64, free_mask = 6 : i64
    // EMIT-SAME: tile.warp_predicated, warp_used_hint = 3 : i32
    //
    // TDM-NOT: amdg.update_tensor_descriptor
    // TDM: amdg.async_tdm_copy_global_to_local %[[D]] into %[[BB]] {warp_used_hint = 3 : i32}
    //
    // ASYNC-NOT: scf.if
    // ASYNC: ttg.async_copy_global_to_local %{{.*}}, %[[BB]] mask
    // ASYNC-NEXT: ttg.async_commit_group
    "tile.async_tdm_copy_global_to_local"(%d, %bb) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 3 : i32} : (!da, !ba) -> ()

    // Every warp copies: no warp test, the user's pred as it is.
    // EMIT-NOT: tile.warp_id
    // EMIT: "tile.async_tdm_copy_global_to_local"(%{{.*}}, %{{.*}}, %arg3)
    // EMIT-NOT: tile.warp_predicated
    // EMIT-SAME: warp_used_hint = 255 : i32
    "tile.async_tdm_copy_global_to_local"(%d, %ba, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, warp_used_hint = 255 : i32} : (!da, !ba, i1) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
