// RUN: gemm-opt %s --split-input-file | FileCheck %s
// RUN: gemm-opt %s | FileCheck %s --check-prefix=NOSPLIT

// Each chunk is its own module and the separator is echoed between outputs.
// CHECK-LABEL: func.func @first
// CHECK: // -----
// CHECK-LABEL: func.func @second
// Without the flag both modules nest in one implicit top-level module.
// NOSPLIT: module {
// NOSPLIT: func.func @first
// NOSPLIT-NOT: // -----
// NOSPLIT: func.func @second
module attributes {tile.num_warps = 4 : i32} {
  func.func @first() {
    return
  }
}

// -----

module attributes {tile.num_warps = 8 : i32} {
  func.func @second() {
    return
  }
}
