// --pass-pipeline composes with --emit: the user's pipeline runs first, then
// the passes the target requires that it did not run, then the conversion.
// RUN: gemm-opt %S/../../../../examples/gemm_gfx1250.mlir --pass-pipeline='builtin.module(tile-fuse-tdm-copies{max-members=2})' --emit=ttgir --mlir-print-ir-before-all 2>&1 >/dev/null | FileCheck %s --check-prefix=ORDER
// RUN: gemm-opt %S/../../../../examples/gemm_gfx1250.mlir --pass-pipeline='builtin.module(tile-fuse-tdm-copies{max-members=2})' --emit=ttgir | FileCheck %s --check-prefix=FUSED
// RUN: gemm-opt %S/../../../../examples/gemm_gfx1250.mlir --pass-pipeline='builtin.module()' --emit=ttgir | FileCheck %s --check-prefix=UNFUSED
// RUN: gemm-opt %S/../../../../examples/gemm_gfx1250.mlir --pass-pipeline='builtin.module()' --emit=amdgcn | FileCheck %s --check-prefix=UNFUSED-ISA
// RUN: gemm-opt %S/../../../../examples/gemm_gfx1250.mlir --pass-pipeline='builtin.module(tile-to-ttgir{fuse=false})' --emit=ttgir | FileCheck %s --check-prefix=UNFUSED
// RUN: gemm-opt %S/../../../../examples/gemm_gfx1250.mlir --pass-pipeline='builtin.module(tile-to-ttgir)' --emit=ttgir --mlir-print-ir-before-all 2>&1 >/dev/null | FileCheck %s --check-prefix=COMPLETE

// The user's fusion, then the required layout and predicate passes; nothing
// runs twice. The conversion is the hand-off to Triton, not a pass over our IR,
// so it has no dump.
// ORDER: IR Dump Before tile-fuse-tdm-copies
// ORDER-NOT: IR Dump Before tile-fuse-tdm-copies
// ORDER: IR Dump Before tile-assign-tdm-warp-layout
// ORDER: IR Dump Before tile-emit-warp-predicates
// ORDER-NOT: IR Dump Before

// FUSED-LABEL: tt.func public @gemm(
// FUSED: amdg.async_tdm_fused_copy_global_to_local {{.*}} {warp_used_hints = array<i32: 15, 240>}

// An empty pipeline (or fuse=false) leaves out the optional fusion: the copies
// stay separate, down to the ISA.
// UNFUSED-LABEL: tt.func public @gemm(
// UNFUSED-NOT: async_tdm_fused_copy
// UNFUSED: amdg.async_tdm_copy_global_to_local {{.*}} {warp_used_hint = 15 : i32}
// UNFUSED: amdg.async_tdm_copy_global_to_local {{.*}} {warp_used_hint = 240 : i32}
// UNFUSED-NOT: async_tdm_fused_copy
// UNFUSED-ISA: tensor_load_to_lds
// UNFUSED-ISA: tensor_load_to_lds
// UNFUSED-ISA: tensor_load_to_lds
// UNFUSED-ISA: tensor_load_to_lds

// A pipeline that already converts is complete: nothing is appended, and its
// last tile pass runs once.
// COMPLETE: IR Dump Before tile-emit-warp-predicates
// COMPLETE-NOT: IR Dump Before
