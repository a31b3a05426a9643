// RUN: gemm-opt %s --split-input-file | FileCheck %s
// RUN: gemm-opt %s --split-input-file | gemm-opt --split-input-file | FileCheck %s

// gfx1250: e4m3 x e4m3 with e8m0 scales, the 16x16x128 instruction.
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 128>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
#sca = #tile.scale_layout<{op_idx = 0, parent = #acc}>
#scb = #tile.scale_layout<{op_idx = 1, parent = #acc}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: func.func private @e4m3
  func.func private @e4m3(%a: tensor<128x128xf8E4M3FN, #opa>, %sa: tensor<128x4xf8E8M0FNU, #sca>, %b: tensor<128x128xf8E4M3FN, #opb>, %sb: tensor<128x4xf8E8M0FNU, #scb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // CHECK: "tile.scaled_wmma"(%arg0, %arg1, %arg2, %arg3, %arg4)
    %d = "tile.scaled_wmma"(%a, %sa, %b, %sb, %c) : (tensor<128x128xf8E4M3FN, #opa>, tensor<128x4xf8E8M0FNU, #sca>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x4xf8E8M0FNU, #scb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// gfx950: e5m2 x e4m3 (mixed formats).
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 128>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
#sca = #tile.scale_layout<{op_idx = 0, parent = #acc}>
#scb = #tile.scale_layout<{op_idx = 1, parent = #acc}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx950"} {
  // CHECK-LABEL: func.func private @mixed
  func.func private @mixed(%a: tensor<128x128xf8E5M2, #opa>, %sa: tensor<128x4xf8E8M0FNU, #sca>, %b: tensor<128x128xf8E4M3FN, #opb>, %sb: tensor<128x4xf8E8M0FNU, #scb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // CHECK: tensor<128x128xf8E5M2
    %d = "tile.scaled_wmma"(%a, %sa, %b, %sb, %c) : (tensor<128x128xf8E5M2, #opa>, tensor<128x4xf8E8M0FNU, #sca>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x4xf8E8M0FNU, #scb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// Layout-free IR (for passes and the model): shapes and types only.
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 128>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
#sca = #tile.scale_layout<{op_idx = 0, parent = #acc}>
#scb = #tile.scale_layout<{op_idx = 1, parent = #acc}>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func private @no_layouts
  func.func private @no_layouts(%a: tensor<64x64xf8E4M3FN>, %sa: tensor<64x2xf8E8M0FNU>, %b: tensor<64x32xf8E4M3FN>, %sb: tensor<32x2xf8E8M0FNU>, %c: tensor<64x32xf32>) -> tensor<64x32xf32> {
    // CHECK: "tile.scaled_wmma"
    %d = "tile.scaled_wmma"(%a, %sa, %b, %sb, %c) : (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>, tensor<64x32xf8E4M3FN>, tensor<32x2xf8E8M0FNU>, tensor<64x32xf32>) -> tensor<64x32xf32>
    return %d : tensor<64x32xf32>
  }
}
