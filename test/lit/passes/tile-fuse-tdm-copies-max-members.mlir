// RUN: gemm-opt %s --pass-pipeline='builtin.module(tile-fuse-tdm-copies{max-members=2})' | FileCheck %s --check-prefix=MM2
// RUN: gemm-opt %s --pass-pipeline='builtin.module(tile-fuse-tdm-copies{max-members=3})' | FileCheck %s --check-prefix=MM3
// RUN: gemm-opt %s --pass-pipeline='builtin.module(tile-fuse-tdm-copies)' | FileCheck %s --check-prefix=MM4
// RUN: not gemm-opt %s --pass-pipeline='builtin.module(tile-fuse-tdm-copies{max-members=1})' 2>&1 | FileCheck %s --check-prefix=MM1
// RUN: not gemm-opt %s --pass-pipeline='builtin.module(tile-fuse-tdm-copies{max-members=5})' 2>&1 | FileCheck %s --check-prefix=MM5
// MM1: <pass-pipeline>:1:16: error: pass 'tile-fuse-tdm-copies': max-members must be 2, 3 or 4, got 1
// MM5: <pass-pipeline>:1:16: error: pass 'tile-fuse-tdm-copies': max-members must be 2, 3 or 4, got 5

// `max-members` caps the group size; groups are cut greedily from the run's
// head. Four copies with disjoint quarter hints, then waits for 4, 3 and 1 of
// them:
//   max-members=2: G1 = (A, B), G2 = (C, D); num 4 -> 2, 3 -> 1 (G2; G1 straddles), 1 -> 0;
//   max-members=3: G = (A, B, C), D single; num 4 -> 2, 3 -> 1 (D; G straddles), 1 -> 1;
//   max-members=4: one group of four; num 4 -> 1, 3 -> 0, 1 -> 0.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // MM2-LABEL: func.func @four_quarters
  // MM2: "tile.async_tdm_fused_copy_global_to_local"(%arg0, %arg1, %arg4, %arg5) {{{.*}}warp_used_hints = array<i32: 3, 12>}
  // MM2-NEXT: "tile.async_tdm_fused_copy_global_to_local"(%arg2, %arg3, %arg6, %arg7) {{{.*}}warp_used_hints = array<i32: 48, 192>}
  // MM2-NEXT: "tile.async_tdm_wait"() {num = 2 : i32}
  // MM2-NEXT: "tile.async_tdm_wait"() {num = 1 : i32}
  // MM2-NEXT: "tile.async_tdm_wait"() {num = 0 : i32}
  // MM3-LABEL: func.func @four_quarters
  // MM3: "tile.async_tdm_fused_copy_global_to_local"(%arg0, %arg1, %arg2, %arg4, %arg5, %arg6) {{{.*}}warp_used_hints = array<i32: 3, 12, 48>}
  // MM3-NEXT: "tile.async_tdm_copy_global_to_local"(%arg3, %arg7) {{{.*}}warp_used_hint = 192 : i32}
  // MM3-NEXT: "tile.async_tdm_wait"() {num = 2 : i32}
  // MM3-NEXT: "tile.async_tdm_wait"() {num = 1 : i32}
  // MM3-NEXT: "tile.async_tdm_wait"() {num = 1 : i32}
  // MM4-LABEL: func.func @four_quarters
  // MM4: "tile.async_tdm_fused_copy_global_to_local"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7) {{{.*}}warp_used_hints = array<i32: 3, 12, 48, 192>}
  // MM4-NEXT: "tile.async_tdm_wait"() {num = 1 : i32}
  // MM4-NEXT: "tile.async_tdm_wait"() {num = 0 : i32}
  // MM4-NEXT: "tile.async_tdm_wait"() {num = 0 : i32}
  func.func @four_quarters(%d0: !desc, %d1: !desc, %d2: !desc, %d3: !desc, %b0: !buf, %b1: !buf, %b2: !buf, %b3: !buf) {
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 3 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 12 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d2, %b2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 48 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d3, %b3) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 192 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_wait"() {num = 4 : i32} : () -> ()
    "tile.async_tdm_wait"() {num = 3 : i32} : () -> ()
    "tile.async_tdm_wait"() {num = 1 : i32} : () -> ()
    return
  }
}
