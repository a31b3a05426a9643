// RUN: gemm-opt %S/../../Inputs/copy.mlir -o %t
// RUN: FileCheck %s < %t
// RUN: gemm-opt - < %S/../../Inputs/copy.mlir | FileCheck %s
// RUN: not gemm-opt %S/../../Inputs/copy.mlir -o %S/no-such-dir/out.mlir 2>&1 | FileCheck %s --check-prefix=NODIR

// -o writes the module to a file; '-' reads stdin.
// CHECK-LABEL: func.func @copy
// CHECK: warp_used_hint = 240 : i32
// NODIR: gemm-opt: error: could not write '{{.*}}no-such-dir/out.mlir': No such file or directory
