// Every tile pass keeps a copy's mbarrier operand, alone and in the pipeline
// order, on hinted, unhinted and predicated copies. (Copies on mbarriers are
// neither given hints nor fused: the fused op completes through waits only.)
// RUN: gemm-opt %s --pass-pipeline='builtin.module(tile-derive-warp-hints)' | FileCheck %s --check-prefixes=BAR,NOPRED
// RUN: gemm-opt %s --pass-pipeline='builtin.module(tile-assign-tdm-warp-layout)' | FileCheck %s --check-prefixes=BAR,NOPRED,LAYOUT
// RUN: gemm-opt %s --pass-pipeline='builtin.module(tile-fuse-tdm-copies)' | FileCheck %s --check-prefixes=BAR,NOPRED
// RUN: gemm-opt %s --pass-pipeline='builtin.module(tile-assign-tdm-warp-layout,tile-emit-warp-predicates)' | FileCheck %s --check-prefixes=BAR,PRED,LAYOUT
// RUN: gemm-opt %s --pass-pipeline='builtin.module(tile-optimize{derive-hints=true})' | FileCheck %s --check-prefixes=BAR,PRED,LAYOUT
// RUN: gemm-opt %s --pass-pipeline='builtin.module(tile-assign-tdm-warp-layout,tile-emit-warp-predicates,tile-fuse-tdm-copies,tile-derive-warp-hints)' | FileCheck %s --check-prefixes=BAR,PRED,LAYOUT
// Predicates need layouts first: the one order that is refused, with a diagnostic.
// RUN: not gemm-opt %s --pass-pipeline='builtin.module(tile-emit-warp-predicates,tile-assign-tdm-warp-layout)' 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: mbarrier-operands.mlir:{{[0-9]+}}:5: error: needs 'tile.warp_layout' to emit its warp predicate; run tile-assign-tdm-warp-layout first

#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
!bar = !tile.mbarrier<i64>
module attributes {tile.num_warps = 8 : i32} {
  // BAR-LABEL: func.func @copies_on_mbarriers
  // BAR-NOT: tile.async_tdm_fused_copy_global_to_local
  // NOPRED: "tile.async_tdm_copy_global_to_local"(%arg0, %arg2, %arg4) {operandSegmentSizes = array<i32: 1, 1, 0, 1>
  // PRED: "tile.async_tdm_copy_global_to_local"(%arg0, %arg2, %{{.+}}, %arg4) {operandSegmentSizes = array<i32: 1, 1, 1, 1>
  // LAYOUT-SAME: tile.warp_layout
  // BAR-SAME: warp_used_hint = 15 : i32
  // NOPRED: "tile.async_tdm_copy_global_to_local"(%arg1, %arg3, %arg5) {operandSegmentSizes = array<i32: 1, 1, 0, 1>
  // PRED: "tile.async_tdm_copy_global_to_local"(%arg1, %arg3, %{{.+}}, %arg5) {operandSegmentSizes = array<i32: 1, 1, 1, 1>
  // BAR-SAME: warp_used_hint = 240 : i32
  // BAR: "tile.async_tdm_copy_global_to_local"(%arg0, %arg2, %arg4) {operandSegmentSizes = array<i32: 1, 1, 0, 1>
  // BAR-NOT: warp_used_hint
  // BAR: "tile.async_tdm_copy_global_to_local"(%arg1, %arg3, %arg5) {operandSegmentSizes = array<i32: 1, 1, 0, 1>
  // BAR-NOT: warp_used_hint
  // BAR: "tile.async_tdm_copy_global_to_local"(%arg0, %arg2, %{{.+}}, %arg4) {operandSegmentSizes = array<i32: 1, 1, 1, 1>
  // BAR-SAME: warp_used_hint = 3 : i32
  func.func @copies_on_mbarriers(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf, %bar0: !bar, %bar1: !bar, %p: i1) {
    "tile.async_tdm_copy_global_to_local"(%d0, %b0, %bar0) {operandSegmentSizes = array<i32: 1, 1, 0, 1>, warp_used_hint = 15 : i32} : (!desc, !buf, !bar) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1, %bar1) {operandSegmentSizes = array<i32: 1, 1, 0, 1>, warp_used_hint = 240 : i32} : (!desc, !buf, !bar) -> ()
    "tile.async_tdm_copy_global_to_local"(%d0, %b0, %bar0) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !bar) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1, %bar1) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !bar) -> ()
    "tile.async_tdm_copy_global_to_local"(%d0, %b0, %p, %bar0) {operandSegmentSizes = array<i32: 1, 1, 1, 1>, warp_used_hint = 3 : i32} : (!desc, !buf, i1, !bar) -> ()
    return
  }
}
