// RUN: gemm-opt %s --split-input-file | FileCheck %s
// RUN: gemm-opt %s --split-input-file | gemm-opt --split-input-file | FileCheck %s

// The asynchronous MMA and its wait round-trip (dialect/async_ops.py).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 128, amount = 16, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  // CHECK-LABEL: func.func private @async_mma
  func.func private @async_mma(%a: !tile.shared<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<64x128xf16, #t>>, %c: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> {
    // CHECK: %[[D:.*]] = "tile.async_wmma"(%arg0, %arg1, %arg2) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!tile.shared<tensor<128x64xf16, {{.*}}>>, !tile.shared<tensor<64x128xf16, {{.*}}>>, tensor<128x128xf32, {{.*}}>) -> tensor<128x128xf32
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<64x128xf16, #t>>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    // CHECK: %[[E:.*]] = "tile.async_wmma"(%arg0, %arg1, %[[D]]) {k_width = 4 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 0>}
    %e = "tile.async_wmma"(%a, %b, %d) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, k_width = 4 : i32} : (!tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<64x128xf16, #t>>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    // CHECK: %[[W1:.*]] = "tile.async_wmma_wait"(%[[E]]) {num = 1 : i32}
    %w1 = "tile.async_wmma_wait"(%e) {num = 1 : i32} : (tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    // CHECK: %[[W0:.*]] = "tile.async_wmma_wait"(%[[W1]]) {num = 0 : i32}
    %w0 = "tile.async_wmma_wait"(%w1) {num = 0 : i32} : (tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    // CHECK: return %[[W0]]
    return %w0 : tensor<128x128xf32, #acc>
  }
}

// -----

// bf16 operands, one warp of columns.
#s = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: func.func @async_mma_bf16
  func.func @async_mma_bf16(%a: !tile.shared<tensor<64x32xbf16, #s>>, %b: !tile.shared<tensor<32x64xbf16, #s>>, %c: tensor<64x64xf32, #acc>) {
    // CHECK: "tile.async_wmma"
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!tile.shared<tensor<64x32xbf16, #s>>, !tile.shared<tensor<32x64xbf16, #s>>, tensor<64x64xf32, #acc>) -> tensor<64x64xf32, #acc>
    // CHECK: "tile.async_wmma_wait"
    %w = "tile.async_wmma_wait"(%d) {num = 0 : i32} : (tensor<64x64xf32, #acc>) -> tensor<64x64xf32, #acc>
    return
  }
}

// -----

// use_acc: an i1 (a constant or a value) that says whether c is added.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  // CHECK-LABEL: func.func private @async_mma_use_acc
  func.func private @async_mma_use_acc(%a: !tile.shared<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<64x128xf16, #s>>, %c: tensor<128x128xf32, #acc>, %k: i32) -> tensor<128x128xf32, #acc> {
    // CHECK: %[[F:.*]] = arith.constant false
    %false = arith.constant false
    // CHECK: %[[D:.*]] = "tile.async_wmma"(%arg0, %arg1, %arg2, %[[F]]) {operandSegmentSizes = array<i32: 1, 1, 1, 1>} : ({{.*}}, i1) -> tensor<128x128xf32
    %d = "tile.async_wmma"(%a, %b, %c, %false) {operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<64x128xf16, #s>>, tensor<128x128xf32, #acc>, i1) -> tensor<128x128xf32, #acc>
    // CHECK: %[[P:.*]] = arith.cmpi sgt, %arg3
    %c0 = arith.constant 0 : i32
    %p = arith.cmpi sgt, %k, %c0 : i32
    // CHECK: "tile.async_wmma"(%arg0, %arg1, %[[D]], %[[P]]) {k_width = 4 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1>}
    %e = "tile.async_wmma"(%a, %b, %d, %p) {k_width = 4 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<64x128xf16, #s>>, tensor<128x128xf32, #acc>, i1) -> tensor<128x128xf32, #acc>
    %w = "tile.async_wmma_wait"(%e) {num = 0 : i32} : (tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %w : tensor<128x128xf32, #acc>
  }
}
