// RUN: gemm-opt %s --split-input-file | FileCheck %s

// gfx1250 takes an omitted transposed as false (Triton 3.9.0's #ttg.amd_wmma default).
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: func.func private @gfx1250_omitted
  func.func private @gfx1250_omitted(%a: tensor<128x64xf16, #opa>, %b: tensor<64x128xf16, #opb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // CHECK: "tile.wmma"(%arg0, %arg1, %arg2)
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// No target named: gfx1250 takes it (an MFMA target refuses it when compiled for).
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func private @any_target
  func.func private @any_target(%a: tensor<128x64xf16, #opa>, %b: tensor<64x128xf16, #opb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // CHECK: "tile.wmma"(%arg0, %arg1, %arg2)
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// gfx942 with transposed given, either way.
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = false}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx942"} {
  // CHECK-LABEL: func.func private @gfx942_given
  func.func private @gfx942_given(%a: tensor<128x64xf16, #opa>, %b: tensor<64x128xf16, #opb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // CHECK: "tile.wmma"(%arg0, %arg1, %arg2)
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}
