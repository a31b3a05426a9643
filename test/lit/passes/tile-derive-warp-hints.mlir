// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-derive-warp-hints)' | FileCheck %s
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-derive-warp-hints,tile-fuse-tdm-copies)' | FileCheck %s --check-prefix=FUSE
// Either order with tile-assign-tdm-warp-layout gives the same layouts: a
// derived hint recomputes the layout the copy already had (for all warps).
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-assign-tdm-warp-layout,tile-derive-warp-hints)' | FileCheck %s --check-prefix=LAYOUT
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-derive-warp-hints,tile-assign-tdm-warp-layout)' | FileCheck %s --check-prefix=LAYOUT

// Two copies issued together get the low and the high half of the warps.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @pair_gets_halves
  // LAYOUT-LABEL: func.func @pair_gets_halves
  // LAYOUT-NOT: tile = array<i64: 16, 64>
  // LAYOUT: "tile.async_tdm_copy_global_to_local"(%arg0, %arg2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, tile.warp_layout = #tile.tdm_warp_layout<{anchor = 0 : i64, free_mask = 4 : i64, tile = array<i64: 32, 64>, warp_bases = array<i64: 32, 0, 64, 0, 0, 0>, warps_per_dim = array<i64: 4, 1>}>, warp_used_hint = 15 : i32}
  // LAYOUT-NEXT: "tile.async_tdm_copy_global_to_local"(%arg1, %arg3) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, tile.warp_layout = #tile.tdm_warp_layout<{anchor = 4 : i64, free_mask = 4 : i64, tile = array<i64: 32, 64>, warp_bases = array<i64: 32, 0, 64, 0, 0, 0>, warps_per_dim = array<i64: 4, 1>}>, warp_used_hint = 240 : i32}
  // LAYOUT-NEXT: return
  func.func @pair_gets_halves(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf) {
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg0, %arg2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32}
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg1, %arg3) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32}
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    return
  }
}

// -----

// Three copies: a half and two quarters.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @three_copies
  func.func @three_copies(%d0: !desc, %d1: !desc, %d2: !desc, %b0: !buf, %b1: !buf, %b2: !buf) {
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg0, %arg3) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32}
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg1, %arg4) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 48 : i32}
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg2, %arg5) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 192 : i32}
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d2, %b2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    return
  }
}

// -----

// Four copies: the quarters.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @four_copies
  func.func @four_copies(%d0: !desc, %d1: !desc, %d2: !desc, %d3: !desc, %b0: !buf, %b1: !buf, %b2: !buf, %b3: !buf) {
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg0, %arg4) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 3 : i32}
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg1, %arg5) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 12 : i32}
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg2, %arg6) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 48 : i32}
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg3, %arg7) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 192 : i32}
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d2, %b2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d3, %b3) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    return
  }
}

// -----

// Five copies: four take the quarters, the fifth keeps all warps.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @five_copies_four_plus_one
  func.func @five_copies_four_plus_one(%d0: !desc, %d1: !desc, %d2: !desc, %d3: !desc, %d4: !desc, %b0: !buf, %b1: !buf, %b2: !buf, %b3: !buf, %b4: !buf) {
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg0, %arg5) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 3 : i32}
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg1, %arg6) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 12 : i32}
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg2, %arg7) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 48 : i32}
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg3, %arg8) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 192 : i32}
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg4, %arg9) {operandSegmentSizes = array<i32: 1, 1, 0, 0>}
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d2, %b2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d3, %b3) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d4, %b4) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    return
  }
}

// -----

// A single copy keeps all its warps.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @single_copy_left_alone
  func.func @single_copy_left_alone(%d0: !desc, %b0: !buf) {
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg0, %arg1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>}
    // CHECK-NOT: warp_used_hint
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    return
  }
}

// -----

// A user's hint is never changed, and it ends a run: the copies around it stay single.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @user_hint_kept
  func.func @user_hint_kept(%d0: !desc, %d1: !desc, %d2: !desc, %b0: !buf, %b1: !buf, %b2: !buf) {
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg0, %arg3) {operandSegmentSizes = array<i32: 1, 1, 0, 0>}
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg1, %arg4) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 85 : i32}
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg2, %arg5) {operandSegmentSizes = array<i32: 1, 1, 0, 0>}
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 85 : i32} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d2, %b2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    return
  }
}

// -----

// A copy on an mbarrier is skipped and ends the run.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @mbarrier_skipped
  func.func @mbarrier_skipped(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf, %bar: !tile.mbarrier<i64>) {
    // CHECK-NOT: warp_used_hint
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    return
  }
}

// -----

// With 4 warps a pair gets 0b0011 and 0b1100.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: func.func @four_warps_pair
  func.func @four_warps_pair(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf) {
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg0, %arg2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 3 : i32}
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg1, %arg3) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 12 : i32}
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    return
  }
}

// -----

// With 2 warps there are no quarters: three copies become a pair and a single.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 2 : i32} {
  // CHECK-LABEL: func.func @two_warps_three_copies
  func.func @two_warps_three_copies(%d0: !desc, %d1: !desc, %d2: !desc, %b0: !buf, %b1: !buf, %b2: !buf) {
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg0, %arg3) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 1 : i32}
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg1, %arg4) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 2 : i32}
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg2, %arg5) {operandSegmentSizes = array<i32: 1, 1, 0, 0>}
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d2, %b2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    return
  }
}

// -----

// More than 16 warps: left alone.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 32 : i32} {
  // CHECK-LABEL: func.func @thirty_two_warps_left_alone
  func.func @thirty_two_warps_left_alone(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf) {
    // CHECK-NOT: warp_used_hint
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    return
  }
}

// -----

// Blocks of 2 elements cannot take half of 8 warps (K = 4): no hints.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<2x1xf16, #s>>
!buf = !tile.shared<tensor<2x1xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @block_too_small
  func.func @block_too_small(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf) {
    // CHECK-NOT: warp_used_hint
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    return
  }
}

// -----

// A partitioned destination with 8 pieces needs K a multiple of 8: halves do not fit, no hints.
#s = #tile.partitioned_shared<{num_partitions = 4, num_groups = 2, partition_dim = 0, layout = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @partitioned_skipped
  func.func @partitioned_skipped(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf) {
    // CHECK-NOT: warp_used_hint
    "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    return
  }
}

// -----

// The A and B copies of a loop body get halves; tile-fuse-tdm-copies then
// issues them as one instruction and the wait drops from 2 to 1.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @loop_body_pair
  // FUSE-LABEL: func.func @loop_body_pair
  func.func @loop_body_pair(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    scf.for %i = %c0 to %n step %c1 : i32 {
      // CHECK: warp_used_hint = 15 : i32
      // CHECK: warp_used_hint = 240 : i32
      // FUSE: "tile.async_tdm_fused_copy_global_to_local"({{.*}}warp_used_hints = array<i32: 15, 240>}
      // FUSE-NEXT: "tile.async_tdm_wait"() {num = 1 : i32}
      "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
      "tile.async_tdm_copy_global_to_local"(%d1, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
      "tile.async_tdm_wait"() {num = 2 : i32} : () -> ()
    }
    return
  }
}
