// RUN: gemm-opt %s --split-input-file | FileCheck %s
// RUN: gemm-opt %s --split-input-file | gemm-opt --split-input-file | FileCheck %s
// RUN: gemm-opt %s --split-input-file --mlir-print-op-generic | gemm-opt --split-input-file | FileCheck %s

// A hinted copy round-trips with its hint, and the wait keeps its count.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: func.func @hinted_copy
  func.func @hinted_copy(%d: !desc, %b: !buf) {
    // CHECK: "tile.async_tdm_copy_global_to_local"(%{{.*}}, %{{.*}}) {{.*}}warp_used_hint = 15 : i32
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!desc, !buf) -> ()
    // CHECK: "tile.async_tdm_wait"() {num = 0 : i32}
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}

// -----

// Descriptors are made from a pointer, shape and strides, then moved.
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xbf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: func.func private @descriptor
  func.func private @descriptor(%p: !tile.ptr<bf16>, %m: i32, %k: i32, %s0: i64, %s1: i64, %pred: i1) -> !desc {
    // CHECK: %[[D:.*]] = "tile.make_tensor_descriptor"(%arg0, %arg1, %arg2, %arg3, %arg4)
    %d = "tile.make_tensor_descriptor"(%p, %m, %k, %s0, %s1) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<bf16>, i32, i32, i64, i64) -> !desc
    // CHECK: "tile.update_tensor_descriptor"(%[[D]], %arg1, %arg2, %arg1, %arg2, %arg5)
    %u = "tile.update_tensor_descriptor"(%d, %m, %k, %m, %k, %pred) {operandSegmentSizes = array<i32: 1, 2, 2, 1>} : (!desc, i32, i32, i32, i32, i1) -> !desc
    return %u : !desc
  }
}

// -----

// Multi-buffered shared memory: allocate, index, load into registers.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func private @shared_buffers
  func.func private @shared_buffers(%i: i32) -> tensor<128x64xf16> {
    // CHECK: "tile.local_alloc"() : () -> !tile.shared<tensor<2x128x64xf16, #tile.padded_shared<{amount = 8 : i64, interval = 64 : i64, order = array<i64: 1, 0>}>>>
    %all = "tile.local_alloc"() : () -> !tile.shared<tensor<2x128x64xf16, #s>>
    // CHECK: "tile.memdesc_index"
    %one = "tile.memdesc_index"(%all, %i) : (!tile.shared<tensor<2x128x64xf16, #s>>, i32) -> !tile.shared<tensor<128x64xf16, #s>>
    // CHECK: "tile.local_load"
    %t = "tile.local_load"(%one) : (!tile.shared<tensor<128x64xf16, #s>>) -> tensor<128x64xf16>
    return %t : tensor<128x64xf16>
  }
}

// -----

// A fused copy of two disjoint halves of the warps, with a cache modifier.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!db = !tile.tensor_desc<tensor<64x128xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
!bb = !tile.shared<tensor<64x128xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  // CHECK-LABEL: func.func @fused
  func.func @fused(%da: !da, %db: !db, %ba: !ba, %bb: !bb) {
    // CHECK: "tile.async_tdm_fused_copy_global_to_local"({{.*}}) {{.*}}warp_used_hints = array<i32: 15, 240>
    "tile.async_tdm_fused_copy_global_to_local"(%da, %db, %ba, %bb) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 15, 240>, cache = ".cg"} : (!da, !db, !ba, !bb) -> ()
    return
  }
}

// -----

// Partitioned layouts, predicates, barriers and ids.
#p = #tile.partitioned_shared<{num_partitions = 2, num_groups = 1, partition_dim = 0, layout = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>}>
!desc = !tile.tensor_desc<tensor<128x16xf16, #p>>
!buf = !tile.shared<tensor<128x16xf16, #p>>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: func.func @partitioned
  func.func @partitioned(%d: !desc, %b: !buf, %pred: i1, %bar: !tile.mbarrier<i64>) {
    // CHECK: "tile.warp_id"() : () -> i32
    %w = "tile.warp_id"() : () -> i32
    // CHECK: "tile.program_id"() {axis = 1 : i32} : () -> i32
    %p = "tile.program_id"() {axis = 1 : i32} : () -> i32
    // CHECK: "tile.async_tdm_copy_global_to_local"(%arg0, %arg1, %arg2, %arg3) {{.*}}warp_used_hint = 3 : i32
    "tile.async_tdm_copy_global_to_local"(%d, %b, %pred, %bar) {operandSegmentSizes = array<i32: 1, 1, 1, 1>, warp_used_hint = 3 : i32} : (!desc, !buf, i1, !tile.mbarrier<i64>) -> ()
    return
  }
}

// -----

// At the limits: 32 warps of 32 threads launch on gfx1250 (1024 threads), a
// 640x256 f16 buffer fills its 320 KiB of LDS exactly, another dialect's
// attribute is kept, and cuda:90 is a target like the others.
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 32 : i32, tile.threads_per_warp = 32 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: func.func @at_the_limits
  func.func @at_the_limits() {
    // CHECK: "tile.local_alloc"() : () -> !tile.shared<tensor<640x256xf16
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<640x256xf16, #s>>
    // CHECK: "tile.program_id"() {axis = 0 : i32, mydialect.note = "kept"}
    %p = "tile.program_id"() {axis = 0 : i32, mydialect.note = "kept"} : () -> i32
    return
  }
}

// -----

#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32, tile.target = "cuda:90"} {
  // CHECK-LABEL: func.func @cuda_target
  func.func @cuda_target() {
    // CHECK: "tile.local_alloc"() : () -> !tile.shared<tensor<2x64x64xf16
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<2x64x64xf16, #s>>
    return
  }
}
