// RUN: gemm-opt %s --allow-unregistered-dialect | FileCheck %s
// RUN: not gemm-opt %s 2>&1 | FileCheck %s --check-prefix=STRICT

// Ops of unknown dialects pass only when allowed.
// CHECK: "foo.bar"() : () -> ()
// STRICT: unregistered.mlir:7:10: error: operation being parsed with an unregistered dialect
"foo.bar"() : () -> ()
