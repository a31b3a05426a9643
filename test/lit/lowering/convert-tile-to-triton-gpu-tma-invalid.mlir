// RUN: gemm-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90 lds-copies=tma})'

// lds-copies=tma makes every copy a TMA copy or fails at the first that
// cannot be one; nothing falls back to cp.async silently.

// A copy under a region op the count is not threaded through.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func private @copy_under_execute_region(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %c: !acc) -> !acc {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %buf = "tile.local_alloc"() : () -> !ba
    // expected-error@+1 {{lds-copies=tma: TMA copies and waits must be in the function, scf.for, scf.while or scf.if, not inside 'scf.execute_region' (their count would not be tracked)}}
    scf.execute_region {
      "tile.async_tdm_copy_global_to_local"(%d, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
      scf.yield
    }
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %ta = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opa>
    %tb = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opb>
    %r = "tile.wmma"(%ta, %tb, %c) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
    return %r : !acc
  }
}

// -----

// A loop that copies without waiting: the copies in flight are unbounded.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func private @no_wait_in_loop(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %n: i32, %c: !acc) -> !acc {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %buf = "tile.local_alloc"() : () -> !ba
    // expected-error@+1 {{lds-copies=tma: a loop issuing copies must also wait in its body (else copies in flight grow)}}
    scf.for %i = %c0 to %n step %c1 : i32 {
      "tile.async_tdm_copy_global_to_local"(%d, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    }
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %ta = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opa>
    %tb = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opb>
    %r = "tile.wmma"(%ta, %tb, %c) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
    return %r : !acc
  }
}

// -----

// The buffer is read into registers for an elementwise op, not by wgmma: it
// keeps the ldmatrix swizzle, which TMA cannot write.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func private @not_read_by_wgmma(%a: !tile.ptr<f16>, %m: i32, %lda: i64) -> tensor<64x64xf16, #bl> {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %buf = "tile.local_alloc"() : () -> !ba
    // expected-error@+1 {{lds-copies=tma: TMA writes NVMMA shared layouts, which this lowering gives only to buffers that wgmma reads}}
    "tile.async_tdm_copy_global_to_local"(%d, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %t = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #bl>
    return %t : tensor<64x64xf16, #bl>
  }
}

// -----

// A descriptor with bounds: TMA bounds a copy by the tensor's shape only.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func private @bounds(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %c: !acc) -> !acc {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %d1 = "tile.update_tensor_descriptor"(%d, %c0, %c0, %m, %m) {operandSegmentSizes = array<i32: 1, 2, 2, 0>} : (!da, i32, i32, i32, i32) -> !da
    %buf = "tile.local_alloc"() : () -> !ba
    // expected-error@+1 {{lds-copies=tma: a descriptor with bounds has no TMA form (TMA bounds by shape)}}
    "tile.async_tdm_copy_global_to_local"(%d1, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %ta = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opa>
    %tb = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opb>
    %r = "tile.wmma"(%ta, %tb, %c) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
    return %r : !acc
  }
}

// -----

// A fused copy (several descriptors in one TDM instruction) has no TMA form.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func private @fused(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %c: !acc) -> !acc {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %b0 = "tile.local_alloc"() : () -> !ba
    %b1 = "tile.local_alloc"() : () -> !ba
    // expected-error@+1 {{lds-copies=tma: a fused copy has no TMA form (a TMA copy moves one descriptor's block)}}
    "tile.async_tdm_fused_copy_global_to_local"(%d, %d, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 3, 12>} : (!da, !da, !ba, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %ta = "tile.local_load"(%b0) : (!ba) -> tensor<64x64xf16, #opa>
    %tb = "tile.local_load"(%b1) : (!ba) -> tensor<64x64xf16, #opb>
    %r = "tile.wmma"(%ta, %tb, %c) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
    return %r : !acc
  }
}

// -----

// A barrier-tracked copy is left out of the count (it takes a TMA copy on its
// own barrier), but what TMA cannot take stays an error at it: here a
// descriptor with bounds.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func @tracked_bounded(%a: !tile.ptr<f16>, %m: i32, %lda: i64) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %d1 = "tile.update_tensor_descriptor"(%d, %c0, %c0, %m, %m) {operandSegmentSizes = array<i32: 1, 2, 2, 0>} : (!da, i32, i32, i32, i32) -> !da
    %b0 = "tile.local_alloc"() : () -> !ba
    %b1 = "tile.local_alloc"() : () -> !ba
    %bars = "tile.barrier_alloc"() : () -> !tile.mbarrier_ring<1 : i32>
    %bar = "tile.barrier_index"(%bars, %c0) : (!tile.mbarrier_ring<1 : i32>, i32) -> !tile.mbarrier<i64>
    "tile.barrier_init"(%bar) {count = 1 : i32} : (!tile.mbarrier<i64>) -> ()
    "tile.async_tdm_copy_global_to_local"(%d, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!tile.mbarrier<i64>) -> ()
    // expected-error@+1 {{a barrier-tracked copy is a TMA copy on cuda:90: a descriptor with bounds has no TMA form (TMA bounds by shape)}}
    "tile.async_tdm_copy_global_to_local"(%d1, %b1, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!da, !ba, !tile.mbarrier<i64>) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    "tile.barrier_wait"(%bar, %c0) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
    return
  }
}
