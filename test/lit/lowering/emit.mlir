// Compiles with the pinned Triton, which lit.cfg.py requires (a missing Triton fails the run).
// RUN: gemm-opt %S/../../../examples/gemm_gfx1250.mlir --emit=amdgcn | FileCheck %s --check-prefix=ISA
// RUN: gemm-opt %S/../../../examples/gemm_gfx1250.mlir --emit=ttgir | FileCheck %s --check-prefix=TTGIR
// RUN: gemm-opt %S/../../../examples/gemm_gfx1250.mlir --emit=ttgir --target=gfx950 | FileCheck %s --check-prefix=CDNA4
// RUN: gemm-opt %S/../../../examples/gemm_gfx1250.mlir --emit=tile --target=gfx1250 | FileCheck %s --check-prefix=TILE
// RUN: not gemm-opt %s --emit=ttgir 2>&1 | FileCheck %s --check-prefix=ERR

// The example GEMM on gfx1250: TDM copies and WMMA in the ISA.
// ISA: tensor_load_to_lds
// ISA: v_wmma_f32_16x16x32_f16

// In TTGIR the two hinted copies are fused into one TDM instruction.
// TTGIR-LABEL: tt.func public @gemm(
// TTGIR: amdg.async_tdm_fused_copy_global_to_local {{.*}} {warp_used_hints = array<i32: 15, 240>}
// TTGIR: amdg.async_tdm_wait {num = 1 : i32}
// TTGIR: tt.dot
// Triton's locations name the tile source.
// TTGIR: loc("{{.*}}gemm_gfx1250.mlir":{{[0-9]+}}:{{[0-9]+}})

// On gfx950 (no TDM) the copies lose their hints.
// CDNA4-NOT: warp_used_hint
// CDNA4: ttg.target = "hip:gfx950"
// CDNA4-NOT: warp_used_hint

// --emit=tile stops after the tile passes.
// TILE: "tile.async_tdm_fused_copy_global_to_local"
// TILE-NOT: tt.func

// A layout Triton would reject ("Result has an invalid layout") is rejected by
// the tile verifier first, at the tile op: 2 warps in a 4-warp program.
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 2, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func @bad_layout(%c: tensor<64x64xf32, #acc>) -> tensor<64x64xf32, #bl> {
    // ERR: emit.mlir:36:10: error: 'tile.convert_layout' op #tile.blocked warps_per_cta [2, 1] covers 2 warps, but 'tile.num_warps' = 4
    %d = "tile.convert_layout"(%c) : (tensor<64x64xf32, #acc>) -> tensor<64x64xf32, #bl>
    return %d : tensor<64x64xf32, #bl>
  }
}
