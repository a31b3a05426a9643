// RUN: gemm-opt --help | FileCheck %s
// RUN: gemm-opt --list-passes | FileCheck %s --check-prefix=LIST

// CHECK: usage: gemm-opt
// CHECK-DAG: --pass-pipeline
// CHECK-DAG: --split-input-file
// CHECK-DAG: --verify-diagnostics
// CHECK-DAG: --mlir-print-ir-after-all
// CHECK-DAG: --allow-unregistered-dialect
// CHECK-DAG: --list-passes
// CHECK-DAG: -o OUTPUT
// LIST: Passes:
