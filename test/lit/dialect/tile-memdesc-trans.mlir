// RUN: gemm-opt %s --split-input-file | FileCheck %s
// RUN: gemm-opt %s --split-input-file | gemm-opt --split-input-file | FileCheck %s

// A transposed view of a shared block (tile.memdesc_trans): the padded
// layout keeps its placement, its order is renamed.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 0, 1>}>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @padded
  func.func @padded(%b: !tile.shared<tensor<128x64xf16, #s>>) {
    // CHECK: "tile.memdesc_trans"(%arg0) {order = array<i32: 1, 0>} : (!tile.shared<tensor<128x64xf16, #tile.padded_shared<{{.*}}order = array<i64: 1, 0>}>>>) -> !tile.shared<tensor<64x128xf16, #tile.padded_shared<{{.*}}order = array<i64: 0, 1>}>>>
    %t = "tile.memdesc_trans"(%b) {order = array<i32: 1, 0>} : (!tile.shared<tensor<128x64xf16, #s>>) -> !tile.shared<tensor<64x128xf16, #t>>
    return
  }
}

// -----

// A slot of a ring, transposed, read into an MMA operand layout; a swizzled layout.
#s = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
#t = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 0, 1>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: func.func private @ring_slot
  func.func private @ring_slot(%i: i32) -> tensor<32x64xbf16, #opb> {
    %ring = "tile.local_alloc"() : () -> !tile.shared<tensor<2x64x32xbf16, #s>>
    %slot = "tile.memdesc_index"(%ring, %i) : (!tile.shared<tensor<2x64x32xbf16, #s>>, i32) -> !tile.shared<tensor<64x32xbf16, #s>>
    // CHECK: %[[T:.*]] = "tile.memdesc_trans"(%{{.*}}) {order = array<i32: 1, 0>} : {{.*}} -> !tile.shared<tensor<32x64xbf16, #tile.swizzled_shared<{{.*}}order = array<i64: 0, 1>{{.*}}>>>
    %t = "tile.memdesc_trans"(%slot) {order = array<i32: 1, 0>} : (!tile.shared<tensor<64x32xbf16, #s>>) -> !tile.shared<tensor<32x64xbf16, #t>>
    // CHECK: "tile.local_load"(%[[T]])
    %v = "tile.local_load"(%t) : (!tile.shared<tensor<32x64xbf16, #t>>) -> tensor<32x64xbf16, #opb>
    return %v : tensor<32x64xbf16, #opb>
  }
}

// -----

// Rank 3: any permutation; the identity is a view too.
#s = #tile.padded_shared<{interval = 32, amount = 4, order = array<i64: 2, 1, 0>}>
#t = #tile.padded_shared<{interval = 32, amount = 4, order = array<i64: 0, 2, 1>}>
module {
  // CHECK-LABEL: func.func @rank3
  func.func @rank3(%b: !tile.shared<tensor<4x8x32xf16, #s>>) {
    // CHECK: "tile.memdesc_trans"(%arg0) {order = array<i32: 2, 0, 1>} {{.*}} -> !tile.shared<tensor<32x4x8xf16, #tile.padded_shared<{{.*}}order = array<i64: 0, 2, 1>}>>>
    %t = "tile.memdesc_trans"(%b) {order = array<i32: 2, 0, 1>} : (!tile.shared<tensor<4x8x32xf16, #s>>) -> !tile.shared<tensor<32x4x8xf16, #t>>
    // CHECK: "tile.memdesc_trans"(%arg0) {order = array<i32: 0, 1, 2>}
    %u = "tile.memdesc_trans"(%b) {order = array<i32: 0, 1, 2>} : (!tile.shared<tensor<4x8x32xf16, #s>>) -> !tile.shared<tensor<4x8x32xf16, #s>>
    return
  }
}
