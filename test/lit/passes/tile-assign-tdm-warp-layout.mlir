// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-assign-tdm-warp-layout)' | FileCheck %s
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-assign-tdm-warp-layout,tile-assign-tdm-warp-layout)' | FileCheck %s
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-assign-tdm-warp-layout)' | gemm-opt --split-input-file | FileCheck %s

// A hint without warp 0 is anchored at its lowest warp: 0xF0 has anchor 4,
// bit 2 pinned (free mask 4), and warps 4-7 take rows 0, 32, 64, 96.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @upper_half_hint
  func.func @upper_half_hint(%d: !desc, %b: !buf) {
    // CHECK: "tile.async_tdm_copy_global_to_local"
    // CHECK-SAME: tile.warp_layout = #tile.tdm_warp_layout<{anchor = 4 : i64, free_mask = 4 : i64, tile = array<i64: 32, 64>, warp_bases = array<i64: 32, 0, 64, 0, 0, 0>, warps_per_dim = array<i64: 4, 1>}>
    // CHECK-SAME: warp_used_hint = 240 : i32
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// Without a hint all 8 warps split the block (16 rows each) and none is free.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @all_warps
  func.func @all_warps(%d: !desc, %b: !buf) {
    // CHECK: tile.warp_layout = #tile.tdm_warp_layout<{anchor = 0 : i64, free_mask = 0 : i64, tile = array<i64: 16, 64>, warp_bases = array<i64: 16, 0, 32, 0, 64, 0>, warps_per_dim = array<i64: 8, 1>}>
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    return
  }
}

// -----

// A strided hint: 0x55 pins bit 0 to 0, so bits 1 and 2 carry the rows.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @strided_hint
  func.func @strided_hint(%d: !desc, %b: !buf) {
    // CHECK: tile.warp_layout = #tile.tdm_warp_layout<{anchor = 0 : i64, free_mask = 1 : i64, tile = array<i64: 32, 64>, warp_bases = array<i64: 0, 0, 32, 0, 64, 0>, warps_per_dim = array<i64: 4, 1>}>
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 85 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// An unhinted copy of a block smaller than the warp count leaves the surplus
// warps (bit 2) free: warps 4-7 copy nothing.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<2x2xf16, #s>>
!buf = !tile.shared<tensor<2x2xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @surplus_warps
  func.func @surplus_warps(%d: !desc, %b: !buf) {
    // CHECK: tile.warp_layout = #tile.tdm_warp_layout<{anchor = 0 : i64, free_mask = 4 : i64, tile = array<i64: 1, 1>, warp_bases = array<i64: 1, 0, 0, 1, 0, 0>, warps_per_dim = array<i64: 2, 2>}>
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!desc, !buf) -> ()
    return
  }
}

// -----

// A partitioned destination uses the partition-aware distribution: 2 warps
// along the 2 pieces of dim 0, tile 64x16.
#s = #tile.partitioned_shared<{num_partitions = 2, num_groups = 1, partition_dim = 0, layout = #tile.padded_shared<{interval = 16, amount = 8, order = array<i64: 1, 0>}>}>
!desc = !tile.tensor_desc<tensor<128x16xf16, #s>>
!buf = !tile.shared<tensor<128x16xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: func.func @partitioned
  func.func @partitioned(%d: !desc, %b: !buf) {
    // CHECK: tile.warp_layout = #tile.tdm_warp_layout<{anchor = 0 : i64, free_mask = 2 : i64, tile = array<i64: 64, 16>, warp_bases = array<i64: 64, 0, 0, 0>, warps_per_dim = array<i64: 2, 1>}>
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 3 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// Rank 3 takes warp bits along dim 1 first, then dim 2, then dim 0.
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 2, 1, 0>}>
!desc = !tile.tensor_desc<tensor<2x4x64xf16, #s>>
!buf = !tile.shared<tensor<2x4x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @rank3
  func.func @rank3(%d: !desc, %b: !buf) {
    // CHECK: tile.warp_layout = #tile.tdm_warp_layout<{anchor = 0 : i64, free_mask = 4 : i64, tile = array<i64: 1, 2, 64>, warp_bases = array<i64: 0, 2, 0, 1, 0, 0, 0, 0, 0>, warps_per_dim = array<i64: 2, 2, 1>}>
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    return
  }
}

// -----

// A fused copy gets one layout per member, each as its standalone copy.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 128, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
!db = !tile.tensor_desc<tensor<64x128xf16, #t>>
!bb = !tile.shared<tensor<64x128xf16, #t>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @fused
  func.func @fused(%da: !da, %db: !db, %a: !ba, %b: !bb) {
    // CHECK: "tile.async_tdm_fused_copy_global_to_local"
    // CHECK-SAME: tile.warp_layouts = [#tile.tdm_warp_layout<{anchor = 0 : i64, free_mask = 4 : i64, tile = array<i64: 32, 64>, warp_bases = array<i64: 32, 0, 64, 0, 0, 0>, warps_per_dim = array<i64: 4, 1>}>, #tile.tdm_warp_layout<{anchor = 4 : i64, free_mask = 4 : i64, tile = array<i64: 16, 128>, warp_bases = array<i64: 16, 0, 32, 0, 0, 0>, warps_per_dim = array<i64: 4, 1>}>]
    "tile.async_tdm_fused_copy_global_to_local"(%da, %db, %a, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 15, 240>} : (!da, !db, !ba, !bb) -> ()
    return
  }
}
