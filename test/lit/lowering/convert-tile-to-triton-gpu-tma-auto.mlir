// RUN: gemm-opt %S/../../../examples/gemm_gfx1250.mlir --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --input-file=%t.ptx --check-prefix=GEMM
// RUN: not grep -E '(ld|st)\.local' %t.ptx
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90})' | FileCheck %s
// RUN: gemm-opt %s --split-input-file --target=cuda:90 --emit=ptx | FileCheck %s --check-prefix=PTX

// lds-copies=auto (the default) on cuda:90 takes TMA copies when the module
// states what a TMA descriptor needs (every outer stride a multiple of 16
// bytes, a unit inner stride; pointers are 16-byte aligned by the lowering's
// contract) and every copy can be one; else cp.async where the alignment for
// it is stated, else copies through registers.

// The example GEMM states its leading dimensions 16-aligned: its PTX has the
// warpgroup MMA and TMA copies on mbarriers, and nothing spills (no local
// memory: ptxas reports 90 registers, 0 bytes of spill stores and loads).
// GEMM: .entry gemm(
// GEMM: cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes
// GEMM: mbarrier.try_wait.parity
// GEMM: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16

// lda is a multiple of 16 elements (32 bytes): the descriptor becomes a TMA
// descriptor and the copy a TMA copy on a ring of one barrier.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func public @facts(
  // CHECK-SAME: !tt.tensordesc<64x64xf16
  // CHECK: ttng.init_barrier
  // CHECK: ttng.barrier_expect %{{.*}}, 8192, %arg4
  // CHECK: ttng.async_tma_copy_global_to_local
  // CHECK: ttng.wait_barrier
  // CHECK: ttng.warp_group_dot
  // PTX-LABEL: .entry facts(
  // PTX: cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes
  // PTX: mbarrier.try_wait.parity
  // PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
  func.func @facts(%a: !tile.ptr<f16>, %c: !tile.ptr<f16>, %m: i32, %lda: i64 {tile.divisibility = 16 : i32}, %p: i1) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %d1 = "tile.update_tensor_descriptor"(%d, %c0, %c0, %p) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    %buf = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%d1, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %ta = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opa>
    %tb = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opb>
    %zero = arith.constant dense<0.000000e+00> : !acc
    %r = "tile.wmma"(%ta, %tb, %zero) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
    %o = arith.truncf %r : !acc to tensor<64x64xf16, #acc>
    "tile.store_block"(%c, %m, %m, %lda, %one, %c0, %c0, %o) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<64x64xf16, #acc>) -> ()
    return
  }
}

// -----

// The rule is in bytes: 8 f16 elements are the 16 bytes TMA needs.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func public @facts_in_bytes(
  // CHECK: ttng.async_tma_copy_global_to_local
  // PTX-LABEL: .entry facts_in_bytes(
  // PTX: cp.async.bulk.tensor
  func.func @facts_in_bytes(%a: !tile.ptr<f16>, %c: !tile.ptr<f16>, %m: i32, %lda: i64 {tile.divisibility = 8 : i32}, %p: i1) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %d1 = "tile.update_tensor_descriptor"(%d, %c0, %c0, %p) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    %buf = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%d1, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %ta = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opa>
    %tb = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opb>
    %zero = arith.constant dense<0.000000e+00> : !acc
    %r = "tile.wmma"(%ta, %tb, %zero) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
    %o = arith.truncf %r : !acc to tensor<64x64xf16, #acc>
    "tile.store_block"(%c, %m, %m, %lda, %one, %c0, %c0, %o) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<64x64xf16, #acc>) -> ()
    return
  }
}

// -----

// Facts missing: no TMA (a TMA descriptor with a stride that is not a
// multiple of 16 bytes is invalid), and without the inner bound's fact no
// cp.async either: the copy goes through registers, the MMA is still wgmma.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func public @no_facts(
  // CHECK-NOT: tensordesc
  // CHECK-NOT: ttng.async_tma_copy_global_to_local
  // CHECK-NOT: ttg.async_copy_global_to_local
  // CHECK: tt.load
  // CHECK: ttg.local_store
  // CHECK: ttng.warp_group_dot
  // PTX-LABEL: .entry no_facts(
  // PTX-NOT: cp.async
  // PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
  func.func @no_facts(%a: !tile.ptr<f16>, %c: !tile.ptr<f16>, %m: i32, %lda: i64, %p: i1) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %d1 = "tile.update_tensor_descriptor"(%d, %c0, %c0, %p) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    %buf = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%d1, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %ta = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opa>
    %tb = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opb>
    %zero = arith.constant dense<0.000000e+00> : !acc
    %r = "tile.wmma"(%ta, %tb, %zero) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
    %o = arith.truncf %r : !acc to tensor<64x64xf16, #acc>
    "tile.store_block"(%c, %m, %m, %lda, %one, %c0, %c0, %o) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<64x64xf16, #acc>) -> ()
    return
  }
}

// -----

// 4 f16 elements are 8 bytes: not enough for TMA.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func public @facts_too_weak(
  // CHECK-NOT: ttng.async_tma_copy_global_to_local
  // CHECK: ttg.local_store
  // PTX-LABEL: .entry facts_too_weak(
  // PTX-NOT: cp.async
  // PTX: wgmma.mma_async
  func.func @facts_too_weak(%a: !tile.ptr<f16>, %c: !tile.ptr<f16>, %m: i32, %lda: i64 {tile.divisibility = 4 : i32}, %p: i1) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %d1 = "tile.update_tensor_descriptor"(%d, %c0, %c0, %p) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    %buf = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%d1, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %ta = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opa>
    %tb = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opb>
    %zero = arith.constant dense<0.000000e+00> : !acc
    %r = "tile.wmma"(%ta, %tb, %zero) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
    %o = arith.truncf %r : !acc to tensor<64x64xf16, #acc>
    "tile.store_block"(%c, %m, %m, %lda, %one, %c0, %c0, %o) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<64x64xf16, #acc>) -> ()
    return
  }
}

// -----

// A copy TMA cannot take (a descriptor with bounds: TMA bounds by shape)
// makes auto keep cp.async for the module instead of failing, as
// lds-copies=tma would (convert-tile-to-triton-gpu-tma-invalid.mlir).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func public @bounded(
  // CHECK-NOT: tensordesc
  // CHECK: ttg.async_copy_global_to_local
  // CHECK: ttg.async_wait {num = 0 : i32}
  // PTX-LABEL: .entry bounded(
  // PTX-NOT: cp.async.bulk
  // PTX: cp.async.cg.shared.global
  // PTX: wgmma.mma_async
  func.func @bounded(%a: !tile.ptr<f16>, %c: !tile.ptr<f16>, %m: i32 {tile.divisibility = 16 : i32}, %lda: i64 {tile.divisibility = 16 : i32}, %p: i1) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %d1 = "tile.update_tensor_descriptor"(%d, %c0, %c0, %m, %m) {operandSegmentSizes = array<i32: 1, 2, 2, 0>} : (!da, i32, i32, i32, i32) -> !da
    %buf = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%d1, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %ta = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opa>
    %tb = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opb>
    %zero = arith.constant dense<0.000000e+00> : !acc
    %r = "tile.wmma"(%ta, %tb, %zero) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
    %o = arith.truncf %r : !acc to tensor<64x64xf16, #acc>
    "tile.store_block"(%c, %m, %m, %lda, %one, %c0, %c0, %o) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<64x64xf16, #acc>) -> ()
    return
  }
}
