// RUN: gemm-opt %s --split-input-file | FileCheck %s
// RUN: gemm-opt %s --split-input-file | gemm-opt --split-input-file | FileCheck %s

// tile.imprecise_acc on an 8-bit tile.wmma: the block128 recipe's product of one
// 128-deep K block, from a zero accumulator (the tensor core may sum all of it).
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  // CHECK-LABEL: func.func private @block
  func.func private @block(%a: tensor<128x128xf8E4M3FN, #opa>, %b: tensor<128x128xf8E4M3FN, #opb>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // CHECK: "tile.wmma"(%arg0, %arg1, %arg2) {tile.imprecise_acc = 128 : i32}
    %d = "tile.wmma"(%a, %b, %c) {tile.imprecise_acc = 128 : i32} : (tensor<128x128xf8E4M3FN, #opa>, tensor<128x128xf8E4M3FN, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}
