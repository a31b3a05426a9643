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
// The exit codes and the rules of --emit are part of the help.
// CHECK: exit status:
// CHECK-NEXT: 0  success
// CHECK-NEXT: 1  errors in the input or in a pass
// CHECK-NEXT: 2  misuse: bad flags, flag combinations or pipeline (nothing is read or run)
// CHECK: then the passes the target
// CHECK-NEXT: requires that it did not run, then the conversion
// CHECK: Binary kinds (cubin, hsaco) need -o FILE and one module: they are rejected
// CHECK-NEXT: with --split-input-file (exit 2).

// Every option with its type, description and default.
// LIST: Passes:
// LIST: convert-tile-to-triton-gpu
// LIST-NEXT: target=<string> {{ +}}gfx1250, gfx950, gfx942 or cuda:90; empty: the module's tile.target {{.*}}(default: "")
// LIST-NEXT: lds-copies=<auto|direct|registers|tma> {{.*}}(default: auto)
// LIST: tile-fuse-tdm-copies {{ +}}Fuse runs of 2 to 4 hinted TDM copies into one fused copy.
// LIST-NEXT: max-members=<int> {{ +}}Largest group to form (2 to 4). (default: 4)
// LIST: Pipelines:
// LIST: tile-to-ttgir
// LIST-NEXT: target=<string> {{.*}}(default: gfx1250)
// LIST-NEXT: fuse=<bool> {{ +}}Fuse disjoint hinted TDM copies (gfx1250). (default: true)
// LIST-NEXT: derive-hints=<bool> {{.*}}(default: false)
