// RUN: not gemm-opt %S/../../Inputs/copy.mlir --pass-pipeline='builtin.module(no-such-pass)' 2>&1 | FileCheck %s
// RUN: not gemm-opt %S/../../Inputs/copy.mlir --pass-pipeline='builtin.module(canonicalize' 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not gemm-opt %S/../../Inputs/copy.mlir --no-such-flag 2>&1 | FileCheck %s --check-prefix=FLAG
// RUN: gemm-opt %S/../../Inputs/copy.mlir --pass-pipeline='builtin.module(canonicalize,cse)' | FileCheck %s --check-prefix=UPSTREAM

// An unknown pass is a one-line error pointing into the pipeline text.
// CHECK: <pass-pipeline>:1:16: error: 'no-such-pass' does not refer to a registered pass or pipeline (see --list-passes)
// CHECK-NOT: Traceback
// SYNTAX: <pass-pipeline>:1:{{[0-9]+}}: error: expected ',' or ')'
// FLAG: gemm-opt: error: unrecognized arguments: --no-such-flag (see --help)
// Upstream C++ passes run through the same pipeline.
// UPSTREAM-LABEL: func.func @copy
