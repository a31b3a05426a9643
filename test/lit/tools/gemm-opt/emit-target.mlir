// --emit takes its target from --target (see lowering/emit.mlir), else from
// the module's tile.target.
// RUN: gemm-opt %s --split-input-file --emit=tile | FileCheck %s --check-prefix=TILE
// RUN: gemm-opt %s --split-input-file --emit=ttgir | FileCheck %s --check-prefix=TTGIR
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-optimize)' --emit=tile | FileCheck %s --check-prefix=TILE
// RUN: not gemm-opt %S/../../Inputs/copy.mlir --emit=ttgir --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=gfx950})' --target=gfx1250 2>&1 | FileCheck %s --check-prefix=CONTRA
// RUN: %PYTHON -c "open(r'%t.notarget', 'w').write('module attributes {tile.num_warps = 4 : i32} {\n}\n')"
// RUN: not gemm-opt %t.notarget --emit=tile 2>&1 | FileCheck %s --check-prefix=NOTARGET

// --emit=tile runs the module's target's tile passes (gfx1250: layout and
// predicates; gfx950: none).
// TILE-LABEL: func.func @copy_gfx1250
// TILE: "tile.warp_id"
// TILE: tile.warp_layout = #tile.tdm_warp_layout
// TILE: // -----
// TILE-LABEL: func.func @empty_gfx950
// TILE-NOT: tile.warp

// TTGIR: ttg.target = "hip:gfx1250"
// TTGIR: // -----
// TTGIR: ttg.target = "hip:gfx950"

// CONTRA: gemm-opt: error: --target=gfx1250 contradicts 'convert-tile-to-triton-gpu{target=gfx950}'
// NOTARGET: .notarget:1:1: error: --emit needs a target: pass --target or set tile.target on the module

#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @copy_gfx1250(%d: !tile.tensor_desc<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<128x64xf16, #s>>) {
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>) -> ()
    return
  }
}

// -----

module attributes {tile.num_warps = 4 : i32, tile.target = "gfx950"} {
  func.func @empty_gfx950() {
    return
  }
}
