// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== 16-bit MMAs accumulate in fp32 on every target: no interval to give. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func private @f(%a: tensor<128x64xf16, #opa>, %b: tensor<64x128xf16, #opb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{tile.imprecise_acc is for 8-bit inputs, got f16}}
    %d = "tile.wmma"(%a, %b, %c) {tile.imprecise_acc = 128 : i32} : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== the interval is whole 8-bit wgmma instructions (K 32). ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func private @f(%a: tensor<128x128xf8E4M3FN, #opa>, %b: tensor<128x128xf8E4M3FN, #opb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{tile.imprecise_acc must be a positive multiple of 32, got 48}}
    %d = "tile.wmma"(%a, %b, %c) {tile.imprecise_acc = 48 : i32} : (tensor<128x128xf8E4M3FN, #opa>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== an i32, as maxNumImpreciseAcc is. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func private @f(%a: tensor<128x128xf8E4M3FN, #opa>, %b: tensor<128x128xf8E4M3FN, #opb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{tile.imprecise_acc must be an i32 integer, got 128 : i64}}
    %d = "tile.wmma"(%a, %b, %c) {tile.imprecise_acc = 128 : i64} : (tensor<128x128xf8E4M3FN, #opa>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// ==== the async form takes the same rule. ====
#s = #tile.padded_shared<{interval = 128, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func private @f(%a: !tile.shared<tensor<128x128xf8E4M3FN, #s>>, %b: !tile.shared<tensor<128x128xf8E4M3FN, #s>>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // expected-error@+1 {{tile.imprecise_acc must be a positive multiple of 32, got 0}}
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, tile.imprecise_acc = 0 : i32} : (!tile.shared<tensor<128x128xf8E4M3FN, #s>>, !tile.shared<tensor<128x128xf8E4M3FN, #s>>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}
