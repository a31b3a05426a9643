// RUN: gemm-opt %S/../../Inputs/copy.mlir --pass-pipeline='builtin.module(tile-assign-tdm-warp-layout,tile-emit-warp-predicates)' --mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s
// RUN: gemm-opt %S/../../Inputs/copy.mlir --pass-pipeline='builtin.module(tile-to-ttgir{target=gfx1250})' --mlir-print-ir-before-all 2>&1 >/dev/null | FileCheck %s --check-prefix=BEFORE

// The IR is dumped to stderr after each pass, named by its CLI name.
// CHECK: IR Dump After tile-assign-tdm-warp-layout
// CHECK: tile.warp_layout = #tile.tdm_warp_layout
// CHECK: IR Dump After tile-emit-warp-predicates
// CHECK: "tile.warp_id"
// Named pipelines expand into their passes, each dumped before it runs.
// BEFORE: IR Dump Before tile-assign-tdm-warp-layout
// BEFORE: IR Dump Before tile-fuse-tdm-copies
// BEFORE: IR Dump Before tile-emit-warp-predicates
// The hand-off to Triton that ends tile-to-ttgir is not a pass over our IR.
// BEFORE-NOT: IR Dump Before convert-tile-to-triton-gpu
