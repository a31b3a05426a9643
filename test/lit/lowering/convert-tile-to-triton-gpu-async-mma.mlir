// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90})' | FileCheck %s
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90 mma=mma_v2})' | FileCheck %s --check-prefix=SYNC
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=gfx1250})' | FileCheck %s --check-prefix=AMD

// tile.async_wmma / tile.async_wmma_wait (dialect/async_ops.py).
// cuda:90: an asynchronous wgmma on the buffers themselves (NVMMA-swizzled),
// and ttng.warp_group_dot_wait {pendings = num}, the accumulator threaded
// through it. With mma=mma_v2, and on AMD targets (whose MMA reads registers),
// the MMA is synchronous: both buffers are loaded in the dot-operand layout,
// then a dot; the wait returns its operand and emits nothing.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 128, amount = 16, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
!ba = !tile.shared<tensor<2x128x64xf16, #s>>
!bb = !tile.shared<tensor<2x64x128xf16, #t>>
!a = !tile.shared<tensor<128x64xf16, #s>>
!b = !tile.shared<tensor<64x128xf16, #t>>
!acc = tensor<128x128xf32, #acc>
module attributes {tile.num_warps = 8 : i32, tile.threads_per_warp = 32 : i32, tile.target = "gfx1250"} {
  // CHECK: #[[WMMA:.*]] = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], instrShape = [16, 128, 16]}>
  // CHECK: #[[NV:.*]] = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
  // CHECK-LABEL: tt.func public @k_loop(
  // CHECK: %[[A:.*]] = ttg.local_alloc : () -> !ttg.memdesc<2x128x64xf16, #[[NV]], #smem, mutable>
  // CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<128x128xf32, #[[WMMA]]>)
  // CHECK: %[[D:.*]] = ttng.warp_group_dot %{{.*}}, %{{.*}}, %[[ACC]], %true {isAsync = true}
  // CHECK-NEXT: %[[W:.*]] = ttng.warp_group_dot_wait %[[D]] {pendings = 1 : i32}
  // CHECK-NEXT: scf.yield %[[W]]
  // CHECK: ttng.warp_group_dot_wait %{{.*}} {pendings = 0 : i32}
  // SYNC-LABEL: tt.func public @k_loop(
  // SYNC-NOT: warp_group_dot
  // SYNC: ttg.local_load {{.*}} -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #{{.*}}, kWidth = 2}>>
  // SYNC: ttg.local_load {{.*}} -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #{{.*}}, kWidth = 2}>>
  // SYNC: tt.dot
  // SYNC-NOT: warp_group_dot
  // AMD-LABEL: tt.func public @k_loop(
  // AMD: ttg.local_load {{.*}} -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #{{.*}}, kWidth = 8}>>
  // AMD: ttg.local_load {{.*}} -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #{{.*}}, kWidth = 8}>>
  // AMD: %[[D:.*]] = tt.dot
  // AMD-NEXT: scf.yield %[[D]]
  // AMD-NOT: warp_group
  func.func @k_loop(%nk: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %abuf = "tile.local_alloc"() : () -> !ba
    %bbuf = "tile.local_alloc"() : () -> !bb
    %zero = arith.constant dense<0.000000e+00> : !acc
    %r = scf.for %k = %c0 to %nk step %c1 iter_args(%acc = %zero) -> (!acc) : i32 {
      %s = arith.remsi %k, %c2 : i32
      %a = "tile.memdesc_index"(%abuf, %s) : (!ba, i32) -> !a
      %b = "tile.memdesc_index"(%bbuf, %s) : (!bb, i32) -> !b
      %d = "tile.async_wmma"(%a, %b, %acc) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!a, !b, !acc) -> !acc
      %w = "tile.async_wmma_wait"(%d) {num = 1 : i32} : (!acc) -> !acc
      scf.yield %w : !acc
    }
    %f = "tile.async_wmma_wait"(%r) {num = 0 : i32} : (!acc) -> !acc
    return
  }
}

// -----

// use_acc: on cuda:90 it is wgmma's useC operand (false: C is not read, so a
// new accumulation needs no zeroed registers); where the MMA is a synchronous
// dot (mma=mma_v2, AMD targets) the dot adds select(use_acc, acc, zeros).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 128, amount = 16, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
!ba = !tile.shared<tensor<2x128x64xf16, #s>>
!bb = !tile.shared<tensor<2x64x128xf16, #t>>
!a = !tile.shared<tensor<128x64xf16, #s>>
!b = !tile.shared<tensor<64x128xf16, #t>>
!acc = tensor<128x128xf32, #acc>
module attributes {tile.num_warps = 8 : i32, tile.threads_per_warp = 32 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func public @use_acc(
  // CHECK: scf.for %[[K:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
  // CHECK: %[[P:.*]] = arith.cmpi sgt, %[[K]], %{{.*}} : i32
  // CHECK-NOT: arith.select
  // CHECK: %[[D:.*]] = ttng.warp_group_dot %{{.*}}, %{{.*}}, %[[ACC]], %[[P]] {isAsync = true}
  // CHECK-NEXT: ttng.warp_group_dot_wait %[[D]] {pendings = 1 : i32}
  // SYNC-LABEL: tt.func public @use_acc(
  // SYNC: scf.for %[[K:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
  // SYNC: %[[P:.*]] = arith.cmpi sgt, %[[K]], %{{.*}} : i32
  // SYNC: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #[[MMA:.*]]>
  // SYNC: %[[PS:.*]] = tt.splat %[[P]] : i1 -> tensor<128x128xi1, #[[MMA]]>
  // SYNC: %[[C:.*]] = arith.select %[[PS]], %[[ACC]], %[[Z]] : tensor<128x128xi1, #[[MMA]]>, tensor<128x128xf32, #[[MMA]]>
  // SYNC: tt.dot %{{.*}}, %{{.*}}, %[[C]]
  // SYNC-NOT: warp_group_dot
  // AMD-LABEL: tt.func public @use_acc(
  // AMD: scf.for %[[K:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
  // AMD: %[[P:.*]] = arith.cmpi sgt, %[[K]], %{{.*}} : i32
  // AMD: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #[[WMMA:.*]]>
  // AMD: %[[PS:.*]] = tt.splat %[[P]] : i1 -> tensor<128x128xi1, #[[WMMA]]>
  // AMD: %[[C:.*]] = arith.select %[[PS]], %[[ACC]], %[[Z]] : tensor<128x128xi1, #[[WMMA]]>, tensor<128x128xf32, #[[WMMA]]>
  // AMD: %[[D:.*]] = tt.dot %{{.*}}, %{{.*}}, %[[C]]
  // AMD-NEXT: scf.yield %[[D]]
  func.func @use_acc(%nk: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %abuf = "tile.local_alloc"() : () -> !ba
    %bbuf = "tile.local_alloc"() : () -> !bb
    %zero = arith.constant dense<0.000000e+00> : !acc
    %r = scf.for %k = %c0 to %nk step %c1 iter_args(%acc = %zero) -> (!acc) : i32 {
      %s = arith.remsi %k, %c2 : i32
      %a = "tile.memdesc_index"(%abuf, %s) : (!ba, i32) -> !a
      %b = "tile.memdesc_index"(%bbuf, %s) : (!bb, i32) -> !b
      %p = arith.cmpi sgt, %k, %c0 : i32
      %d = "tile.async_wmma"(%a, %b, %acc, %p) {operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!a, !b, !acc, i1) -> !acc
      %w = "tile.async_wmma_wait"(%d) {num = 1 : i32} : (!acc) -> !acc
      scf.yield %w : !acc
    }
    %f = "tile.async_wmma_wait"(%r) {num = 0 : i32} : (!acc) -> !acc
    return
  }
}
