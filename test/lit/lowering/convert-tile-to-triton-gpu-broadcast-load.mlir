// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90})' | FileCheck %s

// A per-row scale broadcast over a tile (an FP8 epilogue's or block128 step's
// load): dim 1 has the constant stride 0 and the constant range [0, 128) inside
// its constant bound 128, so it is loaded once per row ([128, 1]) and broadcast;
// the rows keep their mask. The same load with a bound known only at run time
// (%n) loads every element.
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
!acc = tensor<128x128xf32, #acc>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: tt.func private @row_scale(
  // CHECK: %[[ROW:.*]] = tt.load %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x1x!tt.ptr<f32>, #[[MMA:.*]]>
  // CHECK-NEXT: tt.broadcast %[[ROW]] : tensor<128x1xf32, #[[MMA]]> -> tensor<128x128xf32, #[[MMA]]>
  // CHECK: tt.load %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x128x!tt.ptr<f32>, #[[MMA]]>
  // CHECK-NOT: tt.broadcast %{{.*}} : tensor<128x1xf32
  // CHECK: tt.return
  func.func private @row_scale(%s: !tile.ptr<f32>, %m: i32, %n: i32, %off: i32) -> (!acc, !acc) {
    %c0 = arith.constant 0 : i32
    %c128 = arith.constant 128 : i32
    %one = arith.constant 1 : i64
    %zero = arith.constant 0 : i64
    %once = "tile.load_block"(%s, %m, %c128, %one, %zero, %off, %c0) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32) -> !acc
    %every = "tile.load_block"(%s, %m, %n, %one, %zero, %off, %c0) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32) -> !acc
    return %once, %every : !acc, !acc
  }
}
