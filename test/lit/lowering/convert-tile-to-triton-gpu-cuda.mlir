// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90 mma=mma_v2})' | FileCheck %s
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90 lds-copies=direct})' | FileCheck %s --check-prefix=WG
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90 lds-copies=registers})' | FileCheck %s --check-prefix=REGS

// The portable lowering for NVIDIA Hopper. The module stays a gfx1250 tile
// module (tile.target is not read when the pass names a target): hinted copies
// lose warp_used_hint (a hint never changes the data written).

// With the alignment stated, a copy is a cp.async of the block
// (ttg.async_copy_global_to_local, masked by its bounds and pred, zero fill)
// and one commit group per copy, so the wait keeps its count of copies.
// With mma=mma_v2 the WMMA layout becomes mma.sync (nvidia_mma v2,
// instrShape [16, 8], same warps); dot operands take kWidth = 2 for f16;
// padded shared rows become the 16-byte-vector swizzle that ldmatrix reads
// without bank conflicts.
// (lds-copies=direct: cp.async even where the facts would allow TMA, which
// lds-copies=auto prefers; see convert-tile-to-triton-gpu-tma-auto.mlir.)
// By default (mma=auto) both operands come straight from shared buffers, so
// the MMA is a wgmma: the buffers take the 128-byte NVMMA swizzle (128-byte
// rows of A, 256-byte rows of B), which the cp.async copies then write; the
// accumulator is nvidia_mma v3 with two warpgroups along M (warps [8, 1]) and
// instrShape [16, 128, 16]; the local_loads vanish (wgmma reads the buffers)
// and a wait for none in flight follows each warp_group_dot.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 128, amount = 16, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!db = !tile.tensor_desc<tensor<64x128xf16, #t>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
!bb = !tile.shared<tensor<64x128xf16, #t>>
module attributes {tile.num_warps = 8 : i32, tile.threads_per_warp = 32 : i32, tile.target = "gfx1250"} {
  // CHECK: #[[BLA:.*]] = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
  // CHECK: #[[BLB:.*]] = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [8, 1], order = [1, 0]}>
  // CHECK: #[[MMA:.*]] = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 2], instrShape = [16, 8]}>
  // CHECK: #[[SH:.*]] = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
  // CHECK: module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32}
  // CHECK-NOT: tile.target
  // CHECK-LABEL: tt.func private @cuda_copy(
  // WG: #[[WMMA:.*]] = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], instrShape = [16, 128, 16]}>
  // WG: #[[NV:.*]] = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
  // WG-LABEL: tt.func private @cuda_copy(
  // WG: %[[WA:.*]] = ttg.local_alloc : () -> !ttg.memdesc<128x64xf16, #[[NV]], #smem, mutable>
  // WG: %[[WB:.*]] = ttg.local_alloc : () -> !ttg.memdesc<64x128xf16, #[[NV]], #smem, mutable>
  // WG: ttg.async_copy_global_to_local %{{.*}}, %[[WA]] mask
  // WG: ttg.async_copy_global_to_local %{{.*}}, %[[WB]] mask
  // WG: ttg.async_wait {num = 1 : i32}
  // WG-NOT: ttg.local_load
  // WG: %[[WZ:.*]] = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #[[WMMA]]>
  // WG: %[[WD:.*]] = ttng.warp_group_dot %[[WA]], %[[WB]], %[[WZ]], %true {isAsync = true} : !ttg.memdesc<128x64xf16, #[[NV]], #smem, mutable> * !ttg.memdesc<64x128xf16, #[[NV]], #smem, mutable> -> tensor<128x128xf32, #[[WMMA]]>
  // WG-NEXT: %[[WR:.*]]:3 = ttng.warp_group_dot_wait %[[WD]], %[[WA]], %[[WB]] {pendings = 0 : i32}
  // WG-NEXT: tt.return %[[WR]]#0
  // WG-NOT: tt.dot
  // REGS-LABEL: tt.func private @cuda_copy(
  func.func private @cuda_copy(%a: !tile.ptr<f16>, %b: !tile.ptr<f16>, %m: i32, %n: i32 {tile.divisibility = 16 : i32}, %k: i32 {tile.divisibility = 16 : i32}, %lda: i64 {tile.divisibility = 16 : i32}, %ldb: i64 {tile.divisibility = 16 : i32}, %off: i32, %p: i1) -> tensor<128x128xf32, #acc> {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %da = "tile.make_tensor_descriptor"(%a, %m, %k, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %db = "tile.make_tensor_descriptor"(%b, %k, %n, %ldb, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !db
    %ua = "tile.update_tensor_descriptor"(%da, %off, %c0, %p) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    %ub = "tile.update_tensor_descriptor"(%db, %c0, %off, %p) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!db, i32, i32, i1) -> !db
    // CHECK: %[[BA:.*]] = ttg.local_alloc : () -> !ttg.memdesc<128x64xf16, #[[SH]], #smem, mutable>
    %ba = "tile.local_alloc"() : () -> !ba
    // CHECK: %[[BB:.*]] = ttg.local_alloc : () -> !ttg.memdesc<64x128xf16, #[[SH]], #smem, mutable>
    %bb = "tile.local_alloc"() : () -> !bb
    // CHECK-NOT: warp_used_hint
    // CHECK: scf.if %arg8 {
    // CHECK: ttg.async_copy_global_to_local %{{.*}}, %[[BA]] mask %{{.*}} other %{{.*}} : tensor<128x64x!tt.ptr<f16>, #[[BLA]]>
    // CHECK-NEXT: }
    // CHECK-NEXT: ttg.async_commit_group
    // REGS-NOT: async_copy_global_to_local
    // REGS: %[[VA:.*]] = tt.load
    // REGS-NEXT: ttg.local_store %[[VA]], %{{.*}}
    "tile.async_tdm_copy_global_to_local"(%ua, %ba) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32} : (!da, !ba) -> ()
    // CHECK-NOT: warp_used_hint
    // CHECK: scf.if %arg8 {
    // CHECK: ttg.async_copy_global_to_local %{{.*}}, %[[BB]] mask %{{.*}} other %{{.*}} : tensor<64x128x!tt.ptr<f16>, #[[BLB]]>
    // CHECK-NEXT: }
    // CHECK-NEXT: ttg.async_commit_group
    "tile.async_tdm_copy_global_to_local"(%ub, %bb) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32} : (!db, !bb) -> ()
    // Two copies, two groups: waiting until at most 1 is in flight means A landed.
    // CHECK: ttg.async_wait {num = 1 : i32}
    // REGS-NOT: async_wait
    "tile.async_tdm_wait"() {num = 1 : i32} : () -> ()
    // CHECK: %[[A:.*]] = ttg.local_load %[[BA]] : {{.*}} -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #[[MMA]], kWidth = 2}>>
    %ta = "tile.local_load"(%ba) : (!ba) -> tensor<128x64xf16, #opa>
    // CHECK: %[[B:.*]] = ttg.local_load %[[BB]] : {{.*}} -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #[[MMA]], kWidth = 2}>>
    %tb = "tile.local_load"(%bb) : (!bb) -> tensor<64x128xf16, #opb>
    // CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #[[MMA]]>
    %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #acc>
    // CHECK: tt.dot %[[A]], %[[B]], %[[Z]] : {{.*}} -> tensor<128x128xf32, #[[MMA]]>
    %d = "tile.wmma"(%ta, %tb, %zero) : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return %d : tensor<128x128xf32, #acc>
  }
}

// -----

// Without stated alignment cp.async cannot be proven to move whole 4-byte
// units, so a copy goes through registers (tt.load, ttg.local_store) and
// the wait disappears. A 32-element bf16 row is 64 bytes: two rows share a
// swizzle phase. bf16 operands also take kWidth = 2.
#s = #tile.padded_shared<{interval = 32, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x32xbf16, #s>>
!ba = !tile.shared<tensor<2x64x32xbf16, #s>>
!b1 = !tile.shared<tensor<64x32xbf16, #s>>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK: #[[MMA:.*]] = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
  // CHECK: #[[SH:.*]] = #ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
  // CHECK: ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32
  // CHECK-LABEL: tt.func private @cuda_registers(
  func.func private @cuda_registers(%a: !tile.ptr<bf16>, %m: i32, %k: i32, %lda: i64, %i: i32) -> tensor<64x32xbf16, #opa> {
    %one = arith.constant 1 : i64
    %da = "tile.make_tensor_descriptor"(%a, %m, %k, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<bf16>, i32, i32, i64, i64) -> !da
    // CHECK: %[[BUF:.*]] = ttg.local_alloc : () -> !ttg.memdesc<2x64x32xbf16, #[[SH]], #smem, mutable>
    %buf = "tile.local_alloc"() : () -> !ba
    // CHECK: %[[SLOT:.*]] = ttg.memdesc_index %[[BUF]][%arg4]
    %slot = "tile.memdesc_index"(%buf, %i) : (!ba, i32) -> !b1
    // CHECK-NOT: async_copy_global_to_local
    // CHECK: %[[V:.*]] = tt.load
    // CHECK-NEXT: ttg.local_store %[[V]], %[[SLOT]]
    "tile.async_tdm_copy_global_to_local"(%da, %slot) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 3 : i32} : (!da, !b1) -> ()
    // CHECK-NOT: async_wait
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    // CHECK: ttg.local_load %[[SLOT]] : {{.*}} -> tensor<64x32xbf16, #ttg.dot_op<{opIdx = 0, parent = #[[MMA]], kWidth = 2}>>
    %t = "tile.local_load"(%slot) : (!b1) -> tensor<64x32xbf16, #opa>
    return %t : tensor<64x32xbf16, #opa>
  }
}

// -----

// bf16 with 4 warps: one warpgroup, so instrShape N is the whole 64-column
// tile; A's 32-element rows are 64 bytes (64-byte swizzle), B's 64-element
// rows 128 bytes (128-byte swizzle). mma=mma_v2 keeps mma.sync.
#s = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!ba = !tile.shared<tensor<64x32xbf16, #s>>
!bb = !tile.shared<tensor<32x64xbf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK: #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
  // CHECK-LABEL: tt.func private @cuda_bf16_one_warpgroup(
  // CHECK: tt.dot
  // WG-DAG: #[[WMMA:.*]] = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
  // WG-DAG: #[[NV64:.*]] = #ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 16}>
  // WG-DAG: #[[NV128:.*]] = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
  // WG-LABEL: tt.func private @cuda_bf16_one_warpgroup(
  func.func private @cuda_bf16_one_warpgroup(%c: !acc) -> !acc {
    // WG: %[[A:.*]] = ttg.local_alloc : () -> !ttg.memdesc<64x32xbf16, #[[NV64]], #smem, mutable>
    %a = "tile.local_alloc"() : () -> !ba
    // WG: %[[B:.*]] = ttg.local_alloc : () -> !ttg.memdesc<32x64xbf16, #[[NV128]], #smem, mutable>
    %b = "tile.local_alloc"() : () -> !bb
    %ta = "tile.local_load"(%a) : (!ba) -> tensor<64x32xbf16, #opa>
    %tb = "tile.local_load"(%b) : (!bb) -> tensor<32x64xbf16, #opb>
    // WG: %[[D:.*]] = ttng.warp_group_dot %[[A]], %[[B]], %arg0, %true {isAsync = true} : {{.*}} -> tensor<64x64xf32, #[[WMMA]]>
    // WG-NEXT: ttng.warp_group_dot_wait %[[D]], %[[A]], %[[B]] {pendings = 0 : i32}
    %d = "tile.wmma"(%ta, %tb, %c) : (tensor<64x32xbf16, #opa>, tensor<32x64xbf16, #opb>, !acc) -> !acc
    return %d : !acc
  }
}

// -----

// mma=auto keeps mma.sync where wgmma cannot read an operand where it lies:
// here A's buffer is column-major (a transposed NVMMA layout is not emitted),
// so the accumulator layout stays nvidia_mma v2 and the buffers keep the
// ldmatrix swizzle.
#t = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 0, 1>}>
#s = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!ba = !tile.shared<tensor<64x32xf16, #t>>
!bb = !tile.shared<tensor<32x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // WG: #[[MMA:.*]] = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
  // WG-NOT: nvmma_shared
  // WG-LABEL: tt.func private @cuda_transposed_a_keeps_mma_sync(
  // CHECK-LABEL: tt.func private @cuda_transposed_a_keeps_mma_sync(
  func.func private @cuda_transposed_a_keeps_mma_sync(%c: !acc) -> !acc {
    %a = "tile.local_alloc"() : () -> !ba
    %b = "tile.local_alloc"() : () -> !bb
    // WG: ttg.local_load
    // WG: ttg.local_load
    %ta = "tile.local_load"(%a) : (!ba) -> tensor<64x32xf16, #opa>
    %tb = "tile.local_load"(%b) : (!bb) -> tensor<32x64xf16, #opb>
    // WG-NOT: warp_group_dot
    // WG: tt.dot {{.*}} -> tensor<64x64xf32, #[[MMA]]>
    // CHECK: tt.dot
    %d = "tile.wmma"(%ta, %tb, %c) : (tensor<64x32xf16, #opa>, tensor<32x64xf16, #opb>, !acc) -> !acc
    return %d : !acc
  }
}

// -----

// mma=auto also keeps mma.sync when a dot-operand tensor of the accumulator's
// layout stays in registers (here a second load of B, returned): wgmma has no
// register B operand, and that tensor needs the mma.sync operand layout.
#s = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!ba = !tile.shared<tensor<64x32xf16, #s>>
!bb = !tile.shared<tensor<32x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // WG: #[[MMA:.*]] = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
  // WG-NOT: nvmma_shared
  // WG-LABEL: tt.func private @cuda_register_operand_keeps_mma_sync(
  // CHECK-LABEL: tt.func private @cuda_register_operand_keeps_mma_sync(
  func.func private @cuda_register_operand_keeps_mma_sync(%c: !acc) -> (!acc, tensor<32x64xf16, #opb>) {
    %a = "tile.local_alloc"() : () -> !ba
    %b = "tile.local_alloc"() : () -> !bb
    %ta = "tile.local_load"(%a) : (!ba) -> tensor<64x32xf16, #opa>
    %tb = "tile.local_load"(%b) : (!bb) -> tensor<32x64xf16, #opb>
    %tb2 = "tile.local_load"(%b) : (!bb) -> tensor<32x64xf16, #opb>
    // WG-NOT: warp_group_dot
    // WG: tt.dot {{.*}} -> tensor<64x64xf32, #[[MMA]]>
    // CHECK: tt.dot
    %d = "tile.wmma"(%ta, %tb, %c) : (tensor<64x32xf16, #opa>, tensor<32x64xf16, #opb>, !acc) -> !acc
    return %d, %tb2 : !acc, tensor<32x64xf16, #opb>
  }
}
