// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-lower-gemm-schedule)' | FileCheck %s
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-lower-gemm-schedule)' | gemm-opt --split-input-file > /dev/null

// Split-K, S from the grid: program pid is slice pid / tiles of tile pid % tiles; it publishes its partial in slot pid and counts into its tile's counter (acq_rel); the program that reads S - 1 sums slices 0..S-1 in that order (its own from registers), stores C and resets the counter.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @split_k
  func.func @split_k(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %s: !tile.ptr<i32>, %p: !tile.ptr<f32>) {
    // CHECK: %[[PID:.*]] = "tile.program_id"() {axis = 0 : i32}
    // CHECK: %[[TILES:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
    // CHECK: %[[NP:.*]] = "tile.num_programs"() {axis = 0 : i32}
    // CHECK: %[[ONE_T:.*]] = arith.maxsi %[[TILES]], %c1_i32{{.*}} : i32
    // CHECK: %[[PER:.*]] = arith.divsi %[[NP]], %[[ONE_T]] : i32
    // CHECK: %[[S:.*]] = arith.maxsi %[[PER]], %c1_i32{{.*}} : i32
    // CHECK: %[[WORK:.*]] = arith.muli %[[TILES]], %[[S]] : i32
    // CHECK: %[[GO:.*]] = arith.cmpi slt, %[[PID]], %[[WORK]] : i32
    // CHECK: scf.if %[[GO]] {
    // CHECK: %[[T:.*]] = arith.remsi %[[PID]], %[[TILES]] : i32
    // CHECK: %[[SL:.*]] = arith.divsi %[[PID]], %[[TILES]] : i32
    // CHECK: %[[ALONE:.*]] = arith.cmpi eq, %[[S]], %c1_i32{{.*}} : i32
    // CHECK: scf.if %[[ALONE]] {
    // CHECK: "tile.store_block"(%arg3
    // CHECK: } else {
    // CHECK: %[[FLAG:.*]] = arith.addi %c0_i32{{.*}}, %{{.*}} : i32
    // CHECK: "tile.store_block"(%arg6
    // CHECK: %[[SEEN:.*]] = "tile.atomic_rmw"(%arg5, %[[FLAG]], %c1_i32{{.*}}) {kind = "add", scope = "gpu", sem = "acq_rel"}
    // CHECK: %[[LASTS:.*]] = arith.subi %[[S]], %c1_i32{{.*}} : i32
    // CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[SEEN]], %[[LASTS]] : i32
    // CHECK: scf.if %[[LAST]] {
    // CHECK: %[[MINE0:.*]] = arith.cmpi eq, %c0_i32{{.*}}, %[[SL]] : i32
    // CHECK: %[[FIRST:.*]] = scf.if %[[MINE0]] -> (tensor<32x32xf32
    // CHECK: } else {
    // CHECK: "tile.load_block"(%arg6
    // CHECK: %[[SUM:.*]] = scf.for %[[I:.*]] = %c1_i32{{.*}} to %[[S]] step %c1_i32{{.*}} iter_args(%[[ACC:.*]] = %[[FIRST]]) -> (tensor<32x32xf32
    // CHECK: %[[MINE:.*]] = arith.cmpi eq, %[[I]], %[[SL]] : i32
    // CHECK: %[[PART:.*]] = scf.if %[[MINE]] -> (tensor<32x32xf32
    // CHECK: %[[SLOT:.*]] = arith.muli %[[I]], %[[TILES]] : i32
    // CHECK: "tile.load_block"(%arg6
    // CHECK: arith.addf %[[ACC]], %[[PART]]
    // CHECK: %[[OUT:.*]] = arith.truncf %[[SUM]]
    // CHECK: "tile.store_block"(%arg3, {{.*}}, %[[OUT]])
    // CHECK: "tile.atomic_rmw"(%arg5, %[[FLAG]], %c0_i32{{.*}}) {kind = "xchg", scope = "gpu", sem = "relaxed"}
    // CHECK-NOT: sem = "acquire"
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s, %p) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "split-k", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, !tile.ptr<f32>) -> ()
    return
  }
}

// -----

// Split-K with split_k = 4: S is a constant, not read from the grid.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @split_k_fixed
  func.func @split_k_fixed(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %s: !tile.ptr<i32>, %p: !tile.ptr<f32>) {
    // CHECK-NOT: tile.num_programs
    // CHECK: %[[S:.*]] = arith.constant 4 : i32
    // CHECK: %[[WORK:.*]] = arith.muli %{{.*}}, %[[S]] : i32
    // CHECK: scf.for %{{.*}} = %c1_i32{{.*}} to %[[S]] step
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s, %p) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "split-k", split_k = 4 : i32, block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, !tile.ptr<f32>) -> ()
    return
  }
}
