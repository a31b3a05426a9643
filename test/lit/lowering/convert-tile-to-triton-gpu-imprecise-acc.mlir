// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90})' | FileCheck %s

// tile.imprecise_acc on cuda:90: wgmma's maxNumImpreciseAcc. An MMA onto a
// fresh accumulator (use_acc the constant false) whose interval covers its K
// has nothing to promote inside: it gets no limit (2^30; Triton adds a partial
// accumulator and a wait for it whenever the limit is at most K). The same
// interval onto a running accumulator keeps it; without the attribute, 32.
#s = #tile.padded_shared<{interval = 128, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 128, amount = 8, order = array<i64: 0, 1>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
!acc = tensor<64x128xf32, #acc>
!a = !tile.shared<tensor<64x128xf8E4M3FN, #s>>
!bt = !tile.shared<tensor<128x128xf8E4M3FN, #t>>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: tt.func private @intervals(
  // CHECK: ttng.warp_group_dot {{.*}}maxNumImpreciseAcc = 1073741824 : i32
  // CHECK: ttng.warp_group_dot {{.*}}maxNumImpreciseAcc = 128 : i32
  // CHECK: ttng.warp_group_dot {{.*}}maxNumImpreciseAcc = 32 : i32
  func.func private @intervals(%c: !acc) -> !acc {
    %false = arith.constant false
    %true = arith.constant true
    %a = "tile.local_alloc"() : () -> !a
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<128x128xf8E4M3FN, #s>>
    %bt = "tile.memdesc_trans"(%b) {order = array<i32: 1, 0>} : (!tile.shared<tensor<128x128xf8E4M3FN, #s>>) -> !bt
    %p = "tile.async_wmma"(%a, %bt, %c, %false) {operandSegmentSizes = array<i32: 1, 1, 1, 1>, k_width = 16 : i32, tile.imprecise_acc = 128 : i32} : (!a, !bt, !acc, i1) -> !acc
    %q = "tile.async_wmma"(%a, %bt, %p, %true) {operandSegmentSizes = array<i32: 1, 1, 1, 1>, k_width = 16 : i32, tile.imprecise_acc = 128 : i32} : (!a, !bt, !acc, i1) -> !acc
    %r = "tile.async_wmma"(%a, %bt, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, k_width = 16 : i32} : (!a, !bt, !acc) -> !acc
    %d = "tile.async_wmma_wait"(%r) {num = 0 : i32} : (!acc) -> !acc
    return %d : !acc
  }
}
