// RUN: not gemm-opt %s --split-input-file --verify-diagnostics 2>&1 | FileCheck %s

// A wrong expectation fails with exit 1 and names both sides.
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @wrong_text(%d: !tile.tensor_desc<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<128x64xf16, #s>>) {
    // expected-error@+1 {{this is not the message}}
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 0 : i32} : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>) -> ()
    return
  }
}
// CHECK-DAG: verify-diagnostics.mlir:8:5: error: unexpected error: 'tile.async_tdm_copy_global_to_local' op warp_used_hint must have at least one bit set
// CHECK-DAG: verify-diagnostics.mlir:7: error: expected error "this is not the message" was not produced

// -----

// An expected error that never comes is a failure too.
module attributes {tile.num_warps = 8 : i32} {
  // expected-error@+1 {{never emitted}}
  func.func @nothing_wrong() {
    return
  }
}
// CHECK-DAG: verify-diagnostics.mlir:19: error: expected error "never emitted" was not produced

// -----

// @above, @below and @unknown offsets resolve as in mlir-opt (this chunk passes).
module attributes {tile.num_warps = 8 : i32} {
  func.func @ok() {
    %p = "tile.program_id"() {axis = 7 : i32} : () -> i32
    // expected-error@above {{axis must be 0, 1 or 2, got 7}}
    return
  }
}
// CHECK-NOT: verify-diagnostics.mlir:3{{[0-9]}}
