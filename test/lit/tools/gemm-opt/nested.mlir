// Nested pass managers: func.func(...) runs its passes on each function,
// gemm-opt's passes and upstream ones alike, in order.
// RUN: gemm-opt %s --pass-pipeline='func.func(tile-assign-tdm-warp-layout,tile-emit-warp-predicates)' | FileCheck %s
// RUN: gemm-opt %s --pass-pipeline='builtin.module(func.func(tile-assign-tdm-warp-layout,canonicalize,tile-emit-warp-predicates),cse)' | FileCheck %s
// RUN: gemm-opt %s --pass-pipeline='builtin.module(func.func(tile-optimize{target=gfx1250}))' | FileCheck %s
// RUN: gemm-opt %s --verify-diagnostics --pass-pipeline='builtin.module(func.func(tile-annotate-warp-plan))' | FileCheck %s --check-prefix=SAME
// RUN: gemm-opt %s --pass-pipeline='func.func(tile-assign-tdm-warp-layout)' --mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=DUMP
// RUN: not gemm-opt %s --pass-pipeline='func.func(tile-to-ttgir)' 2>&1 | FileCheck %s --check-prefix=MODULE-ONLY
// RUN: not gemm-opt %s --pass-pipeline='func.func(tile-emit-warp-predicates)' 2>&1 | FileCheck %s --check-prefix=FAIL
// RUN: not gemm-opt %s --pass-pipeline='builtin.module(func.func(tile-emit-warp-predicates,no-such-pass))' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not gemm-opt %s --pass-pipeline='builtin.module(func.func(canonicalize{no-such-option=1}))' 2>&1 | FileCheck %s --check-prefix=OPTION

// Both functions get their layouts and predicates.
// CHECK-LABEL: func.func @upper
// CHECK: "tile.warp_id"
// CHECK: tile.warp_predicated
// CHECK-LABEL: func.func @lower
// CHECK: "tile.warp_id"
// CHECK: tile.warp_predicated

// The plan remarks come out nested too, and the IR is unchanged.
// SAME-LABEL: func.func @upper
// SAME-NOT: tile.warp_layout
// SAME-LABEL: func.func @lower

// DUMP: IR Dump After tile-assign-tdm-warp-layout
// DUMP-NEXT: func.func @upper
// DUMP: IR Dump After tile-assign-tdm-warp-layout
// DUMP-NEXT: func.func @lower

// A nested pass that fails on a function fails the run (exit 1); as in MLIR,
// every function is still processed.
// FAIL: nested.mlir:46:5: error: needs 'tile.warp_layout' to emit its warp predicate; run tile-assign-tdm-warp-layout first
// FAIL-NEXT: nested.mlir:51:5: error: needs 'tile.warp_layout'
// MODULE-ONLY: <pass-pipeline>:1:11: error: in the expansion of 'tile-to-ttgir': pass 'convert-tile-to-triton-gpu' runs on builtin.module; it cannot be nested in 'func.func'
// UNKNOWN: <pass-pipeline>:1:52: error: 'no-such-pass' does not refer to a registered pass or pipeline (see --list-passes)
// OPTION: <pass-pipeline>:1:26: error: pass 'canonicalize': <Pass-Options-Parser>: no such option no-such-option
// OPTION-NOT: no such option

#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @upper(%d: !desc, %b: !buf) {
    // expected-remark@+1 {{warp plan for 128x64xf16 hint 0b11110000}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    return
  }
  func.func @lower(%d: !desc, %b: !buf) {
    // expected-remark@+1 {{warp plan for 128x64xf16 hint 0b00001111}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    return
  }
}
