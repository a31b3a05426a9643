// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu)' | FileCheck %s

// The in-bounds mask of a block access is, per dim, 0 <= origin + i < extent. The
// `>= 0` half is left out where the hand-off proves it (gemm_opt.lowering.value_range):
// the origin is at least 0 and origin + size - 1 does not wrap in i32, for every launch
// within the grid limits (at most 2**31 - 1 programs along axis 0, 65535 along axes 1
// and 2). Elsewhere it stays: a block may start before the tensor, and a coordinate
// that wraps past 2**31 - 1 reads as negative.

// Program id 1 times 128 is at most 65534 * 128 (columns proven); program id 0 times
// 128 may wrap (rows kept). The store's mask is the rows' (sge and slt) and-ed with
// the columns' (slt alone).
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func public @grid_2d(
  // CHECK: %[[P0:.*]] = tt.get_program_id x
  // CHECK: %[[P1:.*]] = tt.get_program_id y
  // CHECK: %[[ROW:.*]] = tt.expand_dims %{{.*}} {axis = 1 : i32} : {{.*}} -> tensor<64x1xi32, #{{.*}}>
  // CHECK: %[[COL:.*]] = tt.expand_dims %{{.*}} {axis = 0 : i32} : {{.*}} -> tensor<1x64xi32, #{{.*}}>
  // CHECK: %[[RGE:.*]] = arith.cmpi sge, %[[ROW]], %{{.*}} : tensor<64x1xi32
  // CHECK: %[[RLT:.*]] = arith.cmpi slt, %[[ROW]], %{{.*}} : tensor<64x1xi32
  // CHECK: %[[RIN:.*]] = arith.andi %[[RGE]], %[[RLT]] : tensor<64x1xi1
  // CHECK: %[[RM:.*]] = tt.broadcast %[[RIN]]
  // CHECK-NOT: arith.cmpi sge
  // CHECK: %[[CLT:.*]] = arith.cmpi slt, %[[COL]], %{{.*}} : tensor<1x64xi32
  // CHECK-NEXT: %[[CM:.*]] = tt.broadcast %[[CLT]]
  // CHECK-NEXT: %[[MASK:.*]] = arith.andi %[[RM]], %[[CM]] : tensor<64x64xi1
  // CHECK: tt.store %{{.*}}, %{{.*}}, %[[MASK]]
  func.func @grid_2d(%y: !tile.ptr<f32>, %m: i32, %n: i32, %ld: i64) {
    %one = arith.constant 1 : i64
    %c128 = arith.constant 128 : i32
    %p0 = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %p1 = "tile.program_id"() {axis = 1 : i32} : () -> i32
    %rows = arith.muli %p0, %c128 : i32
    %cols = arith.muli %p1, %c128 : i32
    %v = arith.constant dense<1.0> : tensor<64x64xf32, #bl>
    "tile.store_block"(%y, %m, %n, %ld, %one, %rows, %cols, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, tensor<64x64xf32, #bl>) -> ()
    return
  }
}

// -----

// A load at (argument, program id 2 times 32768 plus 64): the argument may be negative
// (rows kept); 65534 * 32768 + 64 + 63 is below 2**31 (columns proven).
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  // CHECK-LABEL: tt.func private @load_argument_rows(
  // CHECK: %[[ROW:.*]] = tt.expand_dims %{{.*}} {axis = 1 : i32} : {{.*}} -> tensor<64x1xi32, #{{.*}}>
  // CHECK: %[[COL:.*]] = tt.expand_dims %{{.*}} {axis = 0 : i32} : {{.*}} -> tensor<1x64xi32, #{{.*}}>
  // CHECK: %[[RGE:.*]] = arith.cmpi sge, %[[ROW]], %{{.*}} : tensor<64x1xi32
  // CHECK: %[[RLT:.*]] = arith.cmpi slt, %[[ROW]], %{{.*}} : tensor<64x1xi32
  // CHECK: %[[RIN:.*]] = arith.andi %[[RGE]], %[[RLT]] : tensor<64x1xi1
  // CHECK: %[[RM:.*]] = tt.broadcast %[[RIN]]
  // CHECK-NOT: arith.cmpi sge
  // CHECK: %[[CLT:.*]] = arith.cmpi slt, %[[COL]], %{{.*}} : tensor<1x64xi32
  // CHECK-NEXT: %[[CM:.*]] = tt.broadcast %[[CLT]]
  // CHECK-NEXT: %[[MASK:.*]] = arith.andi %[[RM]], %[[CM]] : tensor<64x64xi1
  // CHECK: tt.load %{{.*}}, %[[MASK]]
  func.func private @load_argument_rows(%x: !tile.ptr<f32>, %m: i32, %n: i32, %ld: i64, %r: i32) -> tensor<64x64xf32, #bl> {
    %one = arith.constant 1 : i64
    %big = arith.constant 32768 : i32
    %c64 = arith.constant 64 : i32
    %p2 = "tile.program_id"() {axis = 2 : i32} : () -> i32
    %s = arith.muli %p2, %big : i32
    %cols = arith.addi %s, %c64 : i32
    %t = "tile.load_block"(%x, %m, %n, %ld, %one, %r, %cols) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32) -> tensor<64x64xf32, #bl>
    return %t : tensor<64x64xf32, #bl>
  }
}

// -----

// At the edge: program id 1 times 32769 plus 63 may pass 2**31 - 1 (65534 * 32769 =
// 2**31 - 2), so a column index could wrap to a negative one: kept on both dims (the
// rows: a negative constant origin).
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  // CHECK-LABEL: tt.func public @may_wrap(
  // CHECK: %[[ROW:.*]] = tt.expand_dims %{{.*}} {axis = 1 : i32} : {{.*}} -> tensor<64x1xi32, #{{.*}}>
  // CHECK: %[[COL:.*]] = tt.expand_dims %{{.*}} {axis = 0 : i32} : {{.*}} -> tensor<1x64xi32, #{{.*}}>
  // CHECK: arith.cmpi sge, %[[ROW]], %{{.*}} : tensor<64x1xi32
  // CHECK: arith.cmpi sge, %[[COL]], %{{.*}} : tensor<1x64xi32
  // CHECK: tt.store
  func.func @may_wrap(%y: !tile.ptr<f32>, %m: i32, %n: i32, %ld: i64) {
    %one = arith.constant 1 : i64
    %edge = arith.constant 32769 : i32
    %neg = arith.constant -8 : i32
    %p1 = "tile.program_id"() {axis = 1 : i32} : () -> i32
    %cols = arith.muli %p1, %edge : i32
    %v = arith.constant dense<1.0> : tensor<64x64xf32, #bl>
    "tile.store_block"(%y, %m, %n, %ld, %one, %neg, %cols, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, tensor<64x64xf32, #bl>) -> ()
    return
  }
}
