// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== gfx942 has no OCP 8-bit MMA. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx942"} {
  func.func private @f(%a: tensor<128x128xf8E4M3FN, #opa>, %b: tensor<128x128xf8E4M3FN, #opb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{a's element type f8E4M3FN is not an 8-bit MMA input of gfx942 (gfx942: f8E4M3FNUZ, f8E5M2FNUZ)}}
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x128xf8E4M3FN, #opa>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== gfx1250 has no FNUZ 8-bit MMA. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func private @f(%a: tensor<128x128xf8E5M2FNUZ, #opa>, %b: tensor<128x128xf8E5M2FNUZ, #opb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{a's element type f8E5M2FNUZ is not an 8-bit MMA input of gfx1250 (gfx1250: f8E4M3FN, f8E5M2)}}
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x128xf8E5M2FNUZ, #opa>, tensor<128x128xf8E5M2FNUZ, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== plain 8-bit MMA takes one format. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx950"} {
  func.func private @f(%a: tensor<128x128xf8E4M3FN, #opa>, %b: tensor<128x128xf8E5M2, #opb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{expects a and b of the same 8-bit type, got f8E4M3FN and f8E5M2 (mixed formats need tile.scaled_wmma)}}
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x128xf8E4M3FN, #opa>, tensor<128x128xf8E5M2, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== a block scale is not an MMA input. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func private @f(%a: tensor<128x128xf8E8M0FNU, #opa>, %b: tensor<128x128xf8E8M0FNU, #opb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{f8E8M0FNU is a block-scale type: it is an input of tile.scaled_wmma only}}
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x128xf8E8M0FNU, #opa>, tensor<128x128xf8E8M0FNU, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== 8-bit inputs need the 8-bit instruction. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func private @f(%a: tensor<128x128xf8E4M3FN, #opa>, %b: tensor<128x128xf8E4M3FN, #opb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{8-bit inputs need the 16x16x64 WMMA instruction, but c's layout has instr_shape [16, 16, 32]}}
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x128xf8E4M3FN, #opa>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== 16-bit and 8-bit do not mix. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func private @f(%a: tensor<128x128xf16, #opa>, %b: tensor<128x128xf8E4M3FN, #opb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{expects a and b to be both f16, both bf16 or both of one 8-bit float type, got f16 and f8E4M3FN}}
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x128xf16, #opa>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== tile.async_wmma: 8-bit inputs name the 8-bit instruction. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func private @f(%a: !tile.shared<tensor<128x64xf8E5M2, #s>>, %b: !tile.shared<tensor<64x128xf8E5M2, #s>>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{8-bit inputs need the 16x16x64 WMMA instruction, but c's layout has instr_shape [16, 16, 32]}}
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!tile.shared<tensor<128x64xf8E5M2, #s>>, !tile.shared<tensor<64x128xf8E5M2, #s>>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}
