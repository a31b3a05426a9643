// RUN: gemm-opt %s --split-input-file | FileCheck %s
// RUN: gemm-opt %s --split-input-file | gemm-opt --split-input-file | FileCheck %s

// gfx1250: OCP e4m3 on the 8-bit 16x16x64 instruction.
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: func.func private @gfx1250_e4m3
  func.func private @gfx1250_e4m3(%a: tensor<128x128xf8E4M3FN, #opa>, %b: tensor<128x128xf8E4M3FN, #opb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // CHECK: "tile.wmma"(%arg0, %arg1, %arg2) : (tensor<128x128xf8E4M3FN
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x128xf8E4M3FN, #opa>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// gfx950: OCP e5m2.
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx950"} {
  // CHECK-LABEL: func.func private @gfx950_e5m2
  func.func private @gfx950_e5m2(%a: tensor<128x128xf8E5M2, #opa>, %b: tensor<128x128xf8E5M2, #opb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // CHECK: tensor<128x128xf8E5M2
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x128xf8E5M2, #opa>, tensor<128x128xf8E5M2, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// gfx942: its MFMA reads the FNUZ pair.
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx942"} {
  // CHECK-LABEL: func.func private @gfx942_fnuz
  func.func private @gfx942_fnuz(%a: tensor<128x128xf8E4M3FNUZ, #opa>, %b: tensor<128x128xf8E4M3FNUZ, #opb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // CHECK: tensor<128x128xf8E4M3FNUZ
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x128xf8E4M3FNUZ, #opa>, tensor<128x128xf8E4M3FNUZ, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// tile.async_wmma takes the same 8-bit inputs (cuda:90: wgmma e4m3).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  // CHECK-LABEL: func.func private @async_e4m3
  func.func private @async_e4m3(%a: !tile.shared<tensor<128x64xf8E4M3FN, #s>>, %b: !tile.shared<tensor<64x128xf8E4M3FN, #s>>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // CHECK: "tile.async_wmma"(%arg0, %arg1, %arg2)
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!tile.shared<tensor<128x64xf8E4M3FN, #s>>, !tile.shared<tensor<64x128xf8E4M3FN, #s>>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}
