// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== K is a multiple of 32 (one scale per 32 elements). ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 128>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
#sca = #tile.scale_layout<{op_idx = 0, parent = #acc}>
#scb = #tile.scale_layout<{op_idx = 1, parent = #acc}>
module attributes {tile.num_warps = 8 : i32} {
  func.func private @f(%a: tensor<64x48xf8E4M3FN>, %sa: tensor<64x1xf8E8M0FNU>, %b: tensor<48x32xf8E4M3FN>, %sb: tensor<32x1xf8E8M0FNU>, %c: tensor<64x32xf32>) -> tensor<64x32xf32> {
    // expected-error@+1 {{K = 48 is not a multiple of 32 (one scale per 32 elements of K)}}
    %d = "tile.scaled_wmma"(%a, %sa, %b, %sb, %c) : (tensor<64x48xf8E4M3FN>, tensor<64x1xf8E8M0FNU>, tensor<48x32xf8E4M3FN>, tensor<32x1xf8E8M0FNU>, tensor<64x32xf32>) -> tensor<64x32xf32>
    return %d : tensor<64x32xf32>
  }
}

// -----

// ==== a_scale is M x K/32. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 128>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
#sca = #tile.scale_layout<{op_idx = 0, parent = #acc}>
#scb = #tile.scale_layout<{op_idx = 1, parent = #acc}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func private @f(%a: tensor<128x128xf8E4M3FN, #opa>, %sa: tensor<128x2xf8E8M0FNU, #sca>, %b: tensor<128x128xf8E4M3FN, #opb>, %sb: tensor<128x4xf8E8M0FNU, #scb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{expects a_scale to be 128x4 (M x K/32), got 128x2}}
    %d = "tile.scaled_wmma"(%a, %sa, %b, %sb, %c) : (tensor<128x128xf8E4M3FN, #opa>, tensor<128x2xf8E8M0FNU, #sca>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x4xf8E8M0FNU, #scb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== b_scale is N x K/32 (K-minor), not K/32 x N. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 128>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
#sca = #tile.scale_layout<{op_idx = 0, parent = #acc}>
#scb = #tile.scale_layout<{op_idx = 1, parent = #acc}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func private @f(%a: tensor<128x128xf8E4M3FN, #opa>, %sa: tensor<128x4xf8E8M0FNU, #sca>, %b: tensor<128x128xf8E4M3FN, #opb>, %sb: tensor<4x128xf8E8M0FNU, #scb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{expects b_scale to be 128x4 (N x K/32), got 4x128}}
    %d = "tile.scaled_wmma"(%a, %sa, %b, %sb, %c) : (tensor<128x128xf8E4M3FN, #opa>, tensor<128x4xf8E8M0FNU, #sca>, tensor<128x128xf8E4M3FN, #opb>, tensor<4x128xf8E8M0FNU, #scb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== scales are e8m0. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 128>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
#sca = #tile.scale_layout<{op_idx = 0, parent = #acc}>
#scb = #tile.scale_layout<{op_idx = 1, parent = #acc}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func private @f(%a: tensor<128x128xf8E4M3FN, #opa>, %sa: tensor<128x4xi8, #sca>, %b: tensor<128x128xf8E4M3FN, #opb>, %sb: tensor<128x4xf8E8M0FNU, #scb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{expects a_scale of f8E8M0FNU scales, got i8}}
    %d = "tile.scaled_wmma"(%a, %sa, %b, %sb, %c) : (tensor<128x128xf8E4M3FN, #opa>, tensor<128x4xi8, #sca>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x4xf8E8M0FNU, #scb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== gfx942 has no block-scaled MMA. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 128>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
#sca = #tile.scale_layout<{op_idx = 0, parent = #acc}>
#scb = #tile.scale_layout<{op_idx = 1, parent = #acc}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx942"} {
  func.func private @f(%a: tensor<128x128xf8E4M3FNUZ, #opa>, %sa: tensor<128x4xf8E8M0FNU, #sca>, %b: tensor<128x128xf8E4M3FNUZ, #opb>, %sb: tensor<128x4xf8E8M0FNU, #scb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{gfx942 has no block-scaled MMA (MXFP8 needs gfx1250 or gfx950)}}
    %d = "tile.scaled_wmma"(%a, %sa, %b, %sb, %c) : (tensor<128x128xf8E4M3FNUZ, #opa>, tensor<128x4xf8E8M0FNU, #sca>, tensor<128x128xf8E4M3FNUZ, #opb>, tensor<128x4xf8E8M0FNU, #scb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== cuda:90 has no block-scaled MMA. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 128>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
#sca = #tile.scale_layout<{op_idx = 0, parent = #acc}>
#scb = #tile.scale_layout<{op_idx = 1, parent = #acc}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func private @f(%a: tensor<128x128xf8E4M3FN, #opa>, %sa: tensor<128x4xf8E8M0FNU, #sca>, %b: tensor<128x128xf8E4M3FN, #opb>, %sb: tensor<128x4xf8E8M0FNU, #scb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{cuda:90 has no block-scaled MMA (MXFP8 needs gfx1250 or gfx950)}}
    %d = "tile.scaled_wmma"(%a, %sa, %b, %sb, %c) : (tensor<128x128xf8E4M3FN, #opa>, tensor<128x4xf8E8M0FNU, #sca>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x4xf8E8M0FNU, #scb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== FNUZ elements are not MX formats. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 128>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
#sca = #tile.scale_layout<{op_idx = 0, parent = #acc}>
#scb = #tile.scale_layout<{op_idx = 1, parent = #acc}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx950"} {
  func.func private @f(%a: tensor<128x128xf8E4M3FNUZ, #opa>, %sa: tensor<128x4xf8E8M0FNU, #sca>, %b: tensor<128x128xf8E4M3FN, #opb>, %sb: tensor<128x4xf8E8M0FNU, #scb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{a must be f8E4M3FN or f8E5M2 (the OCP 8-bit formats), got f8E4M3FNUZ}}
    %d = "tile.scaled_wmma"(%a, %sa, %b, %sb, %c) : (tensor<128x128xf8E4M3FNUZ, #opa>, tensor<128x4xf8E8M0FNU, #sca>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x4xf8E8M0FNU, #scb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== 16-bit elements are not MXFP8. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 128>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
#sca = #tile.scale_layout<{op_idx = 0, parent = #acc}>
#scb = #tile.scale_layout<{op_idx = 1, parent = #acc}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func private @f(%a: tensor<128x128xbf16, #opa>, %sa: tensor<128x4xf8E8M0FNU, #sca>, %b: tensor<128x128xf8E4M3FN, #opb>, %sb: tensor<128x4xf8E8M0FNU, #scb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{a must be f8E4M3FN or f8E5M2 (the OCP 8-bit formats), got bf16}}
    %d = "tile.scaled_wmma"(%a, %sa, %b, %sb, %c) : (tensor<128x128xbf16, #opa>, tensor<128x4xf8E8M0FNU, #sca>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x4xf8E8M0FNU, #scb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== the accumulator names the block-scaled instruction. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
#sca = #tile.scale_layout<{op_idx = 0, parent = #acc}>
#scb = #tile.scale_layout<{op_idx = 1, parent = #acc}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func private @f(%a: tensor<128x128xf8E4M3FN, #opa>, %sa: tensor<128x4xf8E8M0FNU, #sca>, %b: tensor<128x128xf8E4M3FN, #opb>, %sb: tensor<128x4xf8E8M0FNU, #scb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{block-scaled 8-bit inputs need the 16x16x128 WMMA instruction, but c's layout has instr_shape [16, 16, 64]}}
    %d = "tile.scaled_wmma"(%a, %sa, %b, %sb, %c) : (tensor<128x128xf8E4M3FN, #opa>, tensor<128x4xf8E8M0FNU, #sca>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x4xf8E8M0FNU, #scb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== a scale's layout is a #tile.scale_layout. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 128>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
#sca = #tile.scale_layout<{op_idx = 0, parent = #acc}>
#scb = #tile.scale_layout<{op_idx = 1, parent = #acc}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func private @f(%a: tensor<128x128xf8E4M3FN, #opa>, %sa: tensor<128x4xf8E8M0FNU, #opa>, %b: tensor<128x128xf8E4M3FN, #opb>, %sb: tensor<128x4xf8E8M0FNU, #scb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{a_scale must have a #tile.scale_layout layout}}
    %d = "tile.scaled_wmma"(%a, %sa, %b, %sb, %c) : (tensor<128x128xf8E4M3FN, #opa>, tensor<128x4xf8E8M0FNU, #opa>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x4xf8E8M0FNU, #scb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== the scale layout's op_idx matches its operand. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 128>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
#sca = #tile.scale_layout<{op_idx = 0, parent = #acc}>
#scb = #tile.scale_layout<{op_idx = 1, parent = #acc}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func private @f(%a: tensor<128x128xf8E4M3FN, #opa>, %sa: tensor<128x4xf8E8M0FNU, #scb>, %b: tensor<128x128xf8E4M3FN, #opb>, %sb: tensor<128x4xf8E8M0FNU, #scb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{a_scale's layout must be a #tile.scale_layout with op_idx = 0 and c's layout}}
    %d = "tile.scaled_wmma"(%a, %sa, %b, %sb, %c) : (tensor<128x128xf8E4M3FN, #opa>, tensor<128x4xf8E8M0FNU, #scb>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x4xf8E8M0FNU, #scb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== the accumulator is f32. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 128>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
#sca = #tile.scale_layout<{op_idx = 0, parent = #acc}>
#scb = #tile.scale_layout<{op_idx = 1, parent = #acc}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func private @f(%a: tensor<128x128xf8E4M3FN, #opa>, %sa: tensor<128x4xf8E8M0FNU, #sca>, %b: tensor<128x128xf8E4M3FN, #opb>, %sb: tensor<128x4xf8E8M0FNU, #scb>, %c: tensor<128x128xf16, #acc>) -> tensor<128x128xf16, #acc> {
    // expected-error@+1 {{expects an f32 accumulator, got f16}}
    %d = "tile.scaled_wmma"(%a, %sa, %b, %sb, %c) : (tensor<128x128xf8E4M3FN, #opa>, tensor<128x4xf8E8M0FNU, #sca>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x4xf8E8M0FNU, #scb>, tensor<128x128xf16, #acc>) -> tensor<128x128xf16, #acc>
    return %d : tensor<128x128xf16, #acc>
  }
}
