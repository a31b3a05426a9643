// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== gfx942's #ttg.amd_mfma has no default for transposed (Triton 3.9.0's). ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx942"} {
  func.func @f(%a: tensor<128x64xf16, #opa>, %b: tensor<64x128xf16, #opb>, %c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{#tile.wmma_layout needs field 'transposed' on gfx942, whose #ttg.amd_mfma has no default for it (write transposed = true or false)}}
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== Nor gfx950's (every optional field left out). ====
#acc = #tile.wmma_layout<{warps_per_cta = array<i64: 4, 2>}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx950"} {
  func.func @f(%a: tensor<128x64xf16, #opa>, %b: tensor<64x128xf16, #opb>, %c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{#tile.wmma_layout needs field 'transposed' on gfx950}}
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== 64-lane warps: every target of that warp size has MFMA. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
module attributes {tile.num_warps = 8 : i32, tile.threads_per_warp = 64 : i32} {
  func.func @f(%a: tensor<128x64xf16, #opa>, %b: tensor<64x128xf16, #opb>, %c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{#tile.wmma_layout needs field 'transposed' on gfx950}}
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}
