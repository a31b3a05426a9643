// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90 lds-copies=tma})' | FileCheck %s

// lds-copies=tma on cuda:90: tile copies become barrier-tracked TMA copies.
// Each function gets a ring of single-arrival mbarriers, one per copy that
// can be in flight; copy g arrives on barrier g % R (its bytes expected
// there first) and a tile.async_tdm_wait {num} waits, with the phase
// parity (g / R) % 2, for the copies that it completes. A descriptor made
// once from the function's arguments is encoded by the host: the function
// takes it after its arguments (!tt.tensordesc, then its extents as i32s and
// strides as i64s, as Triton passes a host TensorDescriptor). One the host
// cannot know becomes a device-side TMA descriptor (tt.make_tensor_descriptor,
// which Triton's tma-lowering, run before the text is printed, turns into a
// 128-byte tensormap in per-program global scratch). Hints are dropped.

// A copy issued and waited for at once: a ring of one barrier. A pred on
// the copy predicates the expect and the TMA copy; when it is false the
// barrier is arrived on without bytes, so the wait still completes.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func public @one_copy
  // CHECK-SAME: %arg4: tensor<64x64xf32, #mma> {{.*}}, %[[DESC:arg5]]: !tt.tensordesc<64x64xf16, #shared> {{.*}}, %arg6: i32 {{.*}}, %arg7: i32 {{.*}}, %arg8: i64 {{.*}}, %arg9: i64
  // CHECK-NOT: ttg.global_scratch_alloc
  // CHECK-NOT: ttng.tensormap_create
  func.func @one_copy(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %p: i1, %c: !acc) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    // CHECK: %[[BARS:.*]] = ttg.local_alloc : () -> !ttg.memdesc<1x1xi64
    // CHECK: ttng.init_barrier %{{.*}}, 1
    // CHECK: ttng.fence_async_shared
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %d1 = "tile.update_tensor_descriptor"(%d, %m, %c0, %p) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    %buf = "tile.local_alloc"() : () -> !ba
    // CHECK: ttng.barrier_expect %{{.*}}, 8192, %arg3
    // CHECK: ttng.async_tma_copy_global_to_local %[[DESC]][%arg1, %{{.*}}] %{{.*}}, %{{.*}}, %arg3
    // CHECK: %[[NOT:.*]] = arith.xori %arg3, %true
    // CHECK: ttng.arrive_barrier %{{.*}}, 1, %[[NOT]]
    "tile.async_tdm_copy_global_to_local"(%d1, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 3 : i32} : (!da, !ba) -> ()
    // CHECK: ttng.wait_barrier
    // CHECK-NOT: ttng.wait_barrier
    // CHECK: ttng.warp_group_dot
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %ta = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opa>
    %tb = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opb>
    %r = "tile.wmma"(%ta, %tb, %c) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
    return
  }
}

// -----

// A descriptor whose extent the host does not know (computed in the kernel)
// is made on the device: a 128-byte tensormap in global scratch, written,
// released and acquired by each program before its first copy.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func public @device_side(
  // CHECK-NOT: !tt.tensordesc
  // CHECK-SAME: {
  func.func @device_side(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %c: !acc) {
    %one = arith.constant 1 : i64
    %half = arith.divsi %m, %m : i32
    // CHECK: %[[SCRATCH:.*]] = ttg.global_scratch_alloc {alignment = 128 : i32, nbytes = 128 : i32}
    // CHECK: ttng.tensormap_create %[[SCRATCH]], %arg0, [%c64_i32, %c64_i32], [%{{.*}}, %arg1]
    // CHECK-SAME: swizzle_mode = 3
    // CHECK: ttng.tensormap_fenceproxy_acquire %[[SCRATCH]]
    // CHECK: %[[DESC:.*]] = ttng.reinterpret_tensor_descriptor %[[SCRATCH]] : !tt.ptr<i8> to !tt.tensordesc<64x64xf16, #[[NVMMA:.*]]>
    // CHECK: ttng.async_tma_copy_global_to_local %[[DESC]]
    %d = "tile.make_tensor_descriptor"(%a, %m, %half, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %buf = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%d, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %ta = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opa>
    %tb = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opb>
    %r = "tile.wmma"(%ta, %tb, %c) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
    return
  }
}

// -----

// A K loop with two buffers: one copy before the loop, one per iteration,
// and a wait that leaves the iteration's copy in flight. At most two copies
// are in flight: a ring of two barriers. The copy count at an iteration's
// start is 1 + (k - 0) / 1 * 1 (folded to k + 1), so the iteration's copy is
// copy k + 1, and the wait (num = 1, at most two copies not waited for)
// waits for copy k: barrier k % 2, parity (k / 2) % 2.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!bufa = !tile.shared<tensor<2x64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func public @k_loop
  func.func @k_loop(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %nk: i32, %c: !acc) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c64 = arith.constant 64 : i32
    // CHECK: ttg.local_alloc : () -> !ttg.memdesc<2x1xi64
    // CHECK-COUNT-2: ttng.init_barrier
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %bufs = "tile.local_alloc"() : () -> !bufa
    %b0 = "tile.memdesc_index"(%bufs, %c0) : (!bufa, i32) -> !ba
    // CHECK: ttng.async_tma_copy_global_to_local
    "tile.async_tdm_copy_global_to_local"(%d, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    // CHECK: scf.for %[[K:.*]] = %{{.*}} to %arg3 step %{{.*}} iter_args
    // CHECK: %[[G:.*]] = arith.addi %[[K]], %c1_i32
    // CHECK: %[[SLOT:.*]] = arith.remsi %[[G]], %c2_i32
    // CHECK: %[[BAR:.*]] = ttg.memdesc_index %{{.*}}[%[[SLOT]]]
    // CHECK: ttng.barrier_expect %[[BAR]], 8192, %true
    // CHECK: ttng.async_tma_copy_global_to_local %{{.*}} %{{.*}}, %[[BAR]], %true
    // CHECK-NOT: ttng.arrive_barrier
    // CHECK: %[[NEXT:.*]] = arith.addi %[[G]], %c1_i32
    // CHECK: %[[W:.*]] = arith.subi %[[NEXT]], %c2_i32
    // CHECK: %[[ISSUED:.*]] = arith.cmpi sge, %[[W]], %c0_i32
    // CHECK: %[[WG:.*]] = arith.maxsi %[[W]], %c0_i32
    // CHECK: %[[ROUND:.*]] = arith.divsi %[[WG]], %c2_i32
    // CHECK: %[[PHASE:.*]] = arith.andi %[[ROUND]], %c1_i32
    // CHECK: %[[WSLOT:.*]] = arith.remsi %[[WG]], %c2_i32
    // CHECK: %[[WBAR:.*]] = ttg.memdesc_index %{{.*}}[%[[WSLOT]]]
    // CHECK: ttng.wait_barrier %[[WBAR]], %[[PHASE]], %[[ISSUED]]
    // CHECK-NOT: ttng.wait_barrier
    // CHECK: scf.yield
    %r = scf.for %k = %c0 to %nk step %c1 iter_args(%acc = %c) -> (!acc) : i32 {
      %k1 = arith.addi %k, %c1 : i32
      %s1 = arith.remsi %k1, %c2 : i32
      %off = arith.muli %k1, %c64 : i32
      %dn = "tile.update_tensor_descriptor"(%d, %c0, %off) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!da, i32, i32) -> !da
      %bn = "tile.memdesc_index"(%bufs, %s1) : (!bufa, i32) -> !ba
      "tile.async_tdm_copy_global_to_local"(%dn, %bn) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
      "tile.async_tdm_wait"() {num = 1 : i32} : () -> ()
      %s = arith.remsi %k, %c2 : i32
      %bk = "tile.memdesc_index"(%bufs, %s) : (!bufa, i32) -> !ba
      %ta = "tile.local_load"(%bk) : (!ba) -> tensor<64x64xf16, #opa>
      %tb = "tile.local_load"(%bk) : (!ba) -> tensor<64x64xf16, #opb>
      %d2 = "tile.wmma"(%ta, %tb, %acc) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
      scf.yield %d2 : !acc
    }
    // After the loop the count is 1 + max((nk - 0 + 1 - 1) / 1, 0) copies and
    // at most one is not waited for: the return waits for it.
    // CHECK: arith.maxsi %arg3, %c0_i32
    // CHECK: ttng.wait_barrier
    // CHECK-NOT: ttng.wait_barrier
    // CHECK: tt.return
    return
  }
}

// -----

// A copy under scf.if: the if yields the count (the else, added, yields it
// unchanged), and the wait after it waits for copy count - 1 only if that
// copy was issued (count - 1 >= 0).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func public @copy_under_if
  func.func @copy_under_if(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %p: i1, %c: !acc) {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %buf = "tile.local_alloc"() : () -> !ba
    // CHECK: %[[COUNT:.*]] = scf.if %arg3 -> (i32) {
    // CHECK:   ttng.barrier_expect
    // CHECK:   ttng.async_tma_copy_global_to_local
    // CHECK:   scf.yield %c1_i32 : i32
    // CHECK: } else {
    // CHECK:   scf.yield %c0_i32 : i32
    // CHECK: }
    // CHECK: %[[G:.*]] = arith.subi %[[COUNT]], %c1_i32
    // CHECK: %[[ISSUED:.*]] = arith.cmpi sge, %[[G]], %c0_i32
    // CHECK: ttng.wait_barrier %{{.*}}, %{{.*}}, %[[ISSUED]]
    scf.if %p {
      "tile.async_tdm_copy_global_to_local"(%d, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    }
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %ta = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opa>
    %tb = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opb>
    %r = "tile.wmma"(%ta, %tb, %c) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
    return
  }
}

// -----

// A K loop inside a tile loop (a persistent GEMM): the tile loop carries
// the count as its last iteration argument, so the barriers' phases run on
// across tiles whatever each tile's K trip count; the K loop inside is
// affine from the count at its entry (count + 1 after the tile's first copy).
// The wait after the K loop leaves nothing in flight, so the return waits
// for nothing. Two copies at most in flight: a ring of two.

#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!bufa = !tile.shared<tensor<2x64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func public @tile_loop
  // CHECK: ttg.local_alloc : () -> !ttg.memdesc<2x1xi64
  func.func @tile_loop(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %tiles: i32, %nk: i32, %c: !acc) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c64 = arith.constant 64 : i32
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %bufs = "tile.local_alloc"() : () -> !bufa
    %b0 = "tile.memdesc_index"(%bufs, %c0) : (!bufa, i32) -> !ba
    // CHECK: scf.for %{{.*}} = %c0_i32 to %arg3 step %c1_i32 iter_args(%{{.*}} = %arg5, %[[C:.*]] = %c0_i32) -> (tensor<64x64xf32, #mma>, i32)
    // CHECK:   %[[SLOT:.*]] = arith.remsi %[[C]], %c2_i32
    // CHECK:   %[[BAR:.*]] = ttg.memdesc_index %{{.*}}[%[[SLOT]]]
    // CHECK:   ttng.async_tma_copy_global_to_local %{{.*}} %{{.*}}, %[[BAR]], %true
    // CHECK:   %[[BEFORE:.*]] = arith.addi %[[C]], %c1_i32
    // CHECK:   scf.for %[[K:.*]] = %c0_i32 to %arg4 step %c1_i32
    // CHECK:     %[[G:.*]] = arith.addi %[[BEFORE]], %[[K]]
    // CHECK:     arith.remsi %[[G]], %c2_i32
    // CHECK:     ttng.async_tma_copy_global_to_local
    // CHECK:     ttng.wait_barrier
    // CHECK:   %[[TRIPS:.*]] = arith.maxsi %arg4, %c0_i32
    // CHECK:   %[[AFTER:.*]] = arith.addi %[[BEFORE]], %[[TRIPS]]
    // CHECK:   arith.subi %[[AFTER]], %c1_i32
    // CHECK:   ttng.wait_barrier
    // CHECK-NOT: ttng.wait_barrier
    // CHECK:   scf.yield %{{.*}}, %[[AFTER]] : tensor<64x64xf32, #mma>, i32
    // CHECK-NOT: ttng.wait_barrier
    // CHECK: tt.return
    %out = scf.for %t = %c0 to %tiles step %c1 iter_args(%tacc = %c) -> (!acc) : i32 {
      %row = arith.muli %t, %c64 : i32
      %d0 = "tile.update_tensor_descriptor"(%d, %row, %c0) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!da, i32, i32) -> !da
      "tile.async_tdm_copy_global_to_local"(%d0, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
      %r = scf.for %k = %c0 to %nk step %c1 iter_args(%acc = %tacc) -> (!acc) : i32 {
        %k1 = arith.addi %k, %c1 : i32
        %s1 = arith.remsi %k1, %c2 : i32
        %off = arith.muli %k1, %c64 : i32
        %dn = "tile.update_tensor_descriptor"(%d, %row, %off) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!da, i32, i32) -> !da
        %bn = "tile.memdesc_index"(%bufs, %s1) : (!bufa, i32) -> !ba
        "tile.async_tdm_copy_global_to_local"(%dn, %bn) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
        "tile.async_tdm_wait"() {num = 1 : i32} : () -> ()
        %s = arith.remsi %k, %c2 : i32
        %bk = "tile.memdesc_index"(%bufs, %s) : (!bufa, i32) -> !ba
        %ta = "tile.local_load"(%bk) : (!ba) -> tensor<64x64xf16, #opa>
        %tb = "tile.local_load"(%bk) : (!ba) -> tensor<64x64xf16, #opb>
        %d2 = "tile.wmma"(%ta, %tb, %acc) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
        scf.yield %d2 : !acc
      }
      "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
      scf.yield %r : !acc
    }
    return
  }
}

// -----

// A copy in the body of an scf.while (a work-stealing claim loop): the count
// is the last argument of both regions; scf.condition passes it on.

#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func public @claim_loop
  func.func @claim_loop(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %n: i32, %c: !acc) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %buf = "tile.local_alloc"() : () -> !ba
    // CHECK: scf.while (%{{.*}} = %c0_i32, %{{.*}} = %arg4, %[[C0:.*]] = %c0_i32) : (i32, tensor<64x64xf32, #mma>, i32) -> (i32, tensor<64x64xf32, #mma>, i32)
    // CHECK:   scf.condition(%{{.*}}) %{{.*}}, %{{.*}}, %{{.*}} : i32, tensor<64x64xf32, #mma>, i32
    // CHECK: } do {
    // CHECK: ^bb0(%{{.*}}: i32{{.*}}, %{{.*}}: tensor<64x64xf32, #mma>{{.*}}, %[[C:[^:]*]]: i32
    // CHECK:   ttng.async_tma_copy_global_to_local
    // CHECK:   %[[NEXT:.*]] = arith.addi %[[C]], %c1_i32
    // CHECK:   arith.cmpi sge, %[[C]], %c0_i32
    // CHECK:   ttng.wait_barrier
    // CHECK:   scf.yield %{{.*}}, %{{.*}}, %[[NEXT]] : i32, tensor<64x64xf32, #mma>, i32
    %r:2 = scf.while (%i = %c0, %x = %c) : (i32, !acc) -> (i32, !acc) {
      %go = arith.cmpi slt, %i, %n : i32
      scf.condition(%go) %i, %x : i32, !acc
    } do {
    ^bb0(%j: i32, %y: !acc):
      "tile.async_tdm_copy_global_to_local"(%d, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
      "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
      %ta = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opa>
      %tb = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opb>
      %z = "tile.wmma"(%ta, %tb, %y) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
      %j1 = arith.addi %j, %c1 : i32
      scf.yield %j1, %z : i32, !acc
    }
    return
  }
}

// -----

// Barrier-tracked copies beside counted ones: the tracked copy is completed
// by the wait on its own barrier, never by tile.async_tdm_wait, so it takes
// no slot in the ring and no wait of the count waits for it. Two counted
// copies are in flight at the wait: a ring of two barriers (not three), and
// the wait (num = 0) waits for ring copies 0 and 1 only. The tracked copy is
// a TMA copy whose bytes the user's barrier expects.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func public @tracked_beside_counted
  func.func @tracked_beside_counted(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %k: i32) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    // CHECK: %[[RING:.*]] = ttg.local_alloc : () -> !ttg.memdesc<2x1xi64
    // CHECK-COUNT-2: ttng.init_barrier %{{.*}}, 1
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %dk = "tile.update_tensor_descriptor"(%d, %c0, %k) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!da, i32, i32) -> !da
    %b0 = "tile.local_alloc"() : () -> !ba
    %b1 = "tile.local_alloc"() : () -> !ba
    %b2 = "tile.local_alloc"() : () -> !ba
    // CHECK: %[[USER:.*]] = ttg.local_alloc : () -> !ttg.memdesc<1x1xi64
    %bars = "tile.barrier_alloc"() : () -> !tile.mbarrier_ring<1 : i32>
    // CHECK: %[[BAR:.*]] = ttg.memdesc_index %[[USER]]
    %bar = "tile.barrier_index"(%bars, %c0) : (!tile.mbarrier_ring<1 : i32>, i32) -> !tile.mbarrier<i64>
    "tile.barrier_init"(%bar) {count = 1 : i32} : (!tile.mbarrier<i64>) -> ()
    // CHECK: ttng.barrier_expect %[[R0:[0-9]+]], 8192, %true
    // CHECK: ttng.async_tma_copy_global_to_local %{{.*}}[%c0_i32, %c0_i32] %{{.*}}, %[[R0]], %true
    "tile.async_tdm_copy_global_to_local"(%d, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    // CHECK: ttng.barrier_expect %[[BAR]], 8192
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!tile.mbarrier<i64>) -> ()
    // CHECK: ttng.async_tma_copy_global_to_local %{{.*}}[%c0_i32, %arg3] %{{.*}}, %[[BAR]], %true
    "tile.async_tdm_copy_global_to_local"(%dk, %b1, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!da, !ba, !tile.mbarrier<i64>) -> ()
    // CHECK: ttng.barrier_expect %[[R1:[0-9]+]], 8192, %true
    // CHECK-NOT: %[[BAR]]
    // CHECK: ttng.async_tma_copy_global_to_local %{{.*}}[%c0_i32, %c0_i32] %{{.*}}, %[[R1]], %true
    "tile.async_tdm_copy_global_to_local"(%d, %b2) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    // The count's wait: two barriers of the ring, none of them the user's.
    // CHECK: %[[W1:.*]] = ttg.memdesc_index %[[RING]][%c1_i32]
    // CHECK-NEXT: ttng.wait_barrier %[[W1]], %c0_i32, %true
    // CHECK-NEXT: %[[W0:.*]] = ttg.memdesc_index %[[RING]][%c0_i32]
    // CHECK-NEXT: ttng.wait_barrier %[[W0]], %c0_i32, %true
    // Then the user's wait on its own barrier.
    // CHECK-NEXT: ttng.wait_barrier %[[BAR]], %c0_i32
    // CHECK-NEXT: tt.return
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    "tile.barrier_wait"(%bar, %c0) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
    return
  }
}
