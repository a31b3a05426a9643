// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu)' | FileCheck %s
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-assign-tdm-warp-layout,tile-emit-warp-predicates,convert-tile-to-triton-gpu)' | FileCheck %s --check-prefix=PRED
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-assign-tdm-warp-layout,tile-emit-warp-predicates,convert-tile-to-triton-gpu)' | FileCheck %s --check-prefix=NOTILE

// Triton builds the module and prints it (its pretty form). Nothing of the
// tile dialect survives, the warp predicates included.
// NOTILE-NOT: tile.

// Module attributes, the function signature and program ids. Pointers get
// tt.divisibility = 16; integers only when the tile function states it.
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32, tile.target = "gfx1250"} {
  // CHECK: module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx1250", "ttg.threads-per-warp" = 32 : i32}
  // CHECK-LABEL: tt.func public @signature(%arg0: !tt.ptr<f16> {tt.divisibility = 16 : i32} loc({{.*}}), %arg1: i32 loc({{.*}}), %arg2: i32 {tt.divisibility = 16 : i32} loc({{.*}}))
  func.func @signature(%p: !tile.ptr<f16>, %n: i32, %k: i32 {tile.divisibility = 16 : i32}) {
    // CHECK-NEXT: tt.get_program_id y : i32 loc(#[[PID:loc[0-9]*]])
    %pid = "tile.program_id"() {axis = 1 : i32} : () -> i32
    // CHECK-NEXT: tt.return
    return
  }
  // Every op carries the location of the tile op it was built for.
  // CHECK: #[[PID]] = loc("{{.*}}convert-tile-to-triton-gpu.mlir":{{[0-9]+}}:12)
}

// -----

// Descriptors: shape i32, strides i64; offsets add to the origin
// (clamp_bounds shrinks the bounds with them); an i1 pred becomes i32;
// explicit bounds are set on the unmoved descriptor, then moved.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!d = !tile.tensor_desc<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  // CHECK: #[[PAD:.*]] = #ttg.padded_shared<[64:+8] {order = [1, 0], shape = [128, 64]}>
  // CHECK-LABEL: tt.func private @descriptors(
  func.func private @descriptors(%a: !tile.ptr<f16>, %m: i32, %k: i32, %lda: i64, %p: i1) -> (!d, !d) {
    %one = arith.constant 1 : i64
    // CHECK: %[[D:.*]] = tt.make_tensor_descriptor %arg0, [%arg1, %arg2], [%arg3, %{{.*}}] : <f16>, <128x64xf16, #[[PAD]]>
    %d = "tile.make_tensor_descriptor"(%a, %m, %k, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !d
    // CHECK: %[[P32:.*]] = arith.extui %arg4 : i1 to i32
    // CHECK: amdg.update_tensor_descriptor %[[D]] add_offsets = [%arg1, %arg2] pred = %[[P32]] {clamp_bounds}
    %u = "tile.update_tensor_descriptor"(%d, %m, %k, %p) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!d, i32, i32, i1) -> !d
    // CHECK: %[[B:.*]] = amdg.update_tensor_descriptor %[[D]] set_bounds = [%arg2, %arg1] :
    // CHECK: amdg.update_tensor_descriptor %[[B]] add_offsets = [%arg1, %arg1] {clamp_bounds}
    %b = "tile.update_tensor_descriptor"(%d, %m, %m, %k, %m) {operandSegmentSizes = array<i32: 1, 2, 2, 0>} : (!d, i32, i32, i32, i32) -> !d
    return %u, %b : !d, !d
  }
}

// -----

// Shared buffers and their layouts; register layouts of dot operands; the
// WMMA layout's warps_per_cta becomes warp bases (N bits first).
#sw = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
#sp = #tile.padded_shared<{interval = 128, amount = 16, order = array<i64: 1, 0>}>
#part = #tile.partitioned_shared<{num_partitions = 2, num_groups = 1, partition_dim = 0, layout = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  // CHECK: #[[MMA:.*]] = #ttg.amd_wmma<{version = 3, isTranspose = true, ctaLayout = {warp = {{\[\[}}0, 1], [1, 0], [2, 0]]}, instrShape = [16, 16, 32]}>
  // CHECK: #[[SW:.*]] = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
  // CHECK: #[[SP:.*]] = #ttg.padded_shared<[128:+16] {order = [1, 0], shape = [64, 128]}>
  // CHECK: #[[INNER:.*]] = #ttg.padded_shared<[64:+8] {order = [1, 0], shape = [64, 64]}>
  // CHECK: #[[PART:.*]] = #ttg.partitioned_shared<{numPartitions = 2, numGroups = 1, partitionDim = 0, partitionLayout = #[[INNER]]}>
  // CHECK-LABEL: tt.func private @buffers(
  func.func private @buffers(%i: i32) -> tensor<128x64xf16, #opa> {
    // CHECK: %[[SWB:.*]] = ttg.local_alloc : () -> !ttg.memdesc<2x128x64xf16, #[[SW]], #smem, mutable>
    %sw = "tile.local_alloc"() : () -> !tile.shared<tensor<2x128x64xf16, #sw>>
    // CHECK: ttg.local_alloc : () -> !ttg.memdesc<64x128xf16, #[[SP]], #smem, mutable>
    %sp = "tile.local_alloc"() : () -> !tile.shared<tensor<64x128xf16, #sp>>
    // CHECK: ttg.local_alloc : () -> !ttg.memdesc<128x64xf16, #[[PART]], #smem, mutable>
    %part = "tile.local_alloc"() : () -> !tile.shared<tensor<128x64xf16, #part>>
    // CHECK: %[[ONE:.*]] = ttg.memdesc_index %[[SWB]][%arg0] : !ttg.memdesc<2x128x64xf16, #[[SW]], #smem, mutable> -> !ttg.memdesc<128x64xf16, #[[SW]], #smem, mutable>
    %one = "tile.memdesc_index"(%sw, %i) : (!tile.shared<tensor<2x128x64xf16, #sw>>, i32) -> !tile.shared<tensor<128x64xf16, #sw>>
    // CHECK: ttg.local_load %[[ONE]] : {{.*}} -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #[[MMA]], kWidth = 8}>>
    %t = "tile.local_load"(%one) : (!tile.shared<tensor<128x64xf16, #sw>>) -> tensor<128x64xf16, #opa>
    return %t : tensor<128x64xf16, #opa>
  }
}

// -----

// Copies keep their hint (and cache modifier); an unhinted copy has none;
// a fused copy keeps its hints; waits keep their count.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 128, amount = 16, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!db = !tile.tensor_desc<tensor<64x128xf16, #t>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
!bb = !tile.shared<tensor<64x128xf16, #t>>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func public @copies(
  // PRED-LABEL: tt.func public @copies(
  func.func @copies(%da: !da, %db: !db, %ba: !ba, %bb: !bb) {
    // CHECK: amdg.async_tdm_copy_global_to_local %arg0 into %arg2 {cache = 3 : i32, warp_used_hint = 15 : i32} : !tt.tensordesc<128x64xf16, {{.*}}> -> !ttg.memdesc<128x64xf16, {{.*}}>
    // PRED: amdg.async_tdm_copy_global_to_local %arg0 into %arg2 {cache = 3 : i32, warp_used_hint = 15 : i32}
    "tile.async_tdm_copy_global_to_local"(%da, %ba) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32, cache = ".cg"} : (!da, !ba) -> ()
    // CHECK: amdg.async_tdm_copy_global_to_local %arg1 into %arg3 :
    // PRED: amdg.async_tdm_copy_global_to_local %arg1 into %arg3 :
    "tile.async_tdm_copy_global_to_local"(%db, %bb) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!db, !bb) -> ()
    // CHECK: amdg.async_tdm_fused_copy_global_to_local %arg0, %arg1 into %arg2, %arg3 {warp_used_hints = array<i32: 15, 240>}
    "tile.async_tdm_fused_copy_global_to_local"(%da, %db, %ba, %bb) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 15, 240>} : (!da, !db, !ba, !bb) -> ()
    // CHECK: amdg.async_tdm_wait {num = 1 : i32}
    "tile.async_tdm_wait"() {num = 1 : i32} : () -> ()
    return
  }
}
// The warp predicates of tile-emit-warp-predicates are checked and stripped:
// Triton's lowering of the hint predicates the warps itself.

// -----

// A warp predicate ANDed with the user's pred: the user's part survives,
// folded into the descriptor (Triton's copy takes its pred from there).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func public @user_pred(
  // PRED-LABEL: tt.func public @user_pred(
  func.func @user_pred(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %ba: !ba, %p: i1) {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    // CHECK: %[[D:.*]] = tt.make_tensor_descriptor
    // CHECK: %[[Z:.*]] = arith.constant 0 : i32
    // CHECK: %[[P:.*]] = arith.extui %arg4 : i1 to i32
    // CHECK: %[[DP:.*]] = amdg.update_tensor_descriptor %[[D]] add_offsets = [%[[Z]], %[[Z]]] pred = %[[P]] :
    // CHECK: amdg.async_tdm_copy_global_to_local %[[DP]] into %arg3 {warp_used_hint = 240 : i32}
    // PRED: arith.extui %arg4 : i1 to i32
    // PRED: amdg.async_tdm_copy_global_to_local {{.*}} {warp_used_hint = 240 : i32}
    "tile.async_tdm_copy_global_to_local"(%d, %ba, %p) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, warp_used_hint = 240 : i32} : (!da, !ba, i1) -> ()
    return
  }
}

// -----

// A hand-written warp predicate in the other operand order is recognised too.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: tt.func public @commuted_chain(
  func.func @commuted_chain(%da: !da, %ba: !ba) {
    %w = "tile.warp_id"() : () -> i32
    %c4 = arith.constant 4 : i32
    %c0 = arith.constant 0 : i32
    %x = arith.xori %c4, %w : i32
    %m = arith.andi %c4, %x : i32
    %on = arith.cmpi eq, %c0, %m : i32
    // CHECK-NOT: arith.xori
    // CHECK: amdg.async_tdm_copy_global_to_local %arg0 into %arg1 {warp_used_hint = 240 : i32}
    "tile.async_tdm_copy_global_to_local"(%da, %ba, %on) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, tile.warp_predicated, warp_used_hint = 240 : i32} : (!da, !ba, i1) -> ()
    return
  }
}

// -----

// Compute: wmma -> tt.dot, convert_layout, scf.for iter_args, and a masked
// store through a coalesced blocked layout (rows * ld in i64, unit-stride
// columns in i32).
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK: #[[BL:.*]] = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
  // CHECK: #[[MMA:.*]] = #ttg.amd_wmma<{version = 3, isTranspose = true, ctaLayout = {warp = {{\[\[}}0, 1], [1, 0]]}, instrShape = [16, 16, 32]}>
  // CHECK-LABEL: tt.func public @compute(
  func.func @compute(%a: tensor<64x64xf16, #opa>, %b: tensor<64x64xf16, #opb>, %c: !tile.ptr<f16>, %n: i32, %ld: i64) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %one = arith.constant 1 : i64
    // CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #[[MMA]]>
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
    // CHECK: scf.for %{{.*}} = %{{.*}} to %arg3 step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (tensor<64x64xf32, #[[MMA]]>)
    // CHECK-NEXT: %[[DOT:.*]] = tt.dot %arg0, %arg1, %[[ACC]] : tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #[[MMA]], kWidth = 8}>> * tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, parent = #[[MMA]], kWidth = 8}>> -> tensor<64x64xf32, #[[MMA]]>
    // CHECK-NEXT: scf.yield %[[DOT]]
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #acc>) : i32 {
      %d = "tile.wmma"(%a, %b, %acc) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, tensor<64x64xf32, #acc>) -> tensor<64x64xf32, #acc>
      scf.yield %d : tensor<64x64xf32, #acc>
    }
    %h = arith.truncf %r : tensor<64x64xf32, #acc> to tensor<64x64xf16, #acc>
    // CHECK: %[[HB:.*]] = ttg.convert_layout %{{.*}} : tensor<64x64xf16, #[[MMA]]> -> tensor<64x64xf16, #[[BL]]>
    %hb = "tile.convert_layout"(%h) : (tensor<64x64xf16, #acc>) -> tensor<64x64xf16, #bl>
    // The mask is, per dim, origin + i < extent on the thin index (the origin is the
    // constant 0, so 0 <= origin + i holds and is not emitted; see
    // convert-tile-to-triton-gpu-mask-sign.mlir), broadcast, then the two dims
    // and-ed; the pointers add the row offset in i64 (stride %arg4) and the
    // unit-stride column index in i32.
    // CHECK: tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #[[BL]]}>>
    // CHECK: %[[ROW:.*]] = tt.expand_dims %{{.*}} {axis = 1 : i32} : {{.*}} -> tensor<64x1xi32, #[[BL]]>
    // CHECK: %[[COL:.*]] = tt.expand_dims %{{.*}} {axis = 0 : i32} : {{.*}} -> tensor<1x64xi32, #[[BL]]>
    // CHECK-NOT: arith.cmpi sge
    // CHECK: %[[N0:.*]] = tt.splat %arg3 : i32 -> tensor<64x1xi32, #[[BL]]>
    // CHECK-NEXT: %[[RLT:.*]] = arith.cmpi slt, %[[ROW]], %[[N0]] : tensor<64x1xi32, #[[BL]]>
    // CHECK-NEXT: %[[RMASK:.*]] = tt.broadcast %[[RLT]] : tensor<64x1xi1, #[[BL]]> -> tensor<64x64xi1, #[[BL]]>
    // CHECK-NEXT: %[[WROW:.*]] = arith.extsi %[[ROW]]
    // CHECK-NEXT: %[[LD0:.*]] = tt.splat %arg4 : i64
    // CHECK-NEXT: %[[ROFF:.*]] = arith.muli %[[WROW]], %[[LD0]]
    // CHECK-NEXT: %[[BASE:.*]] = tt.splat %arg2
    // CHECK-NEXT: %[[RPTR:.*]] = tt.addptr %[[BASE]], %[[ROFF]] : tensor<64x1x!tt.ptr<f16>, #[[BL]]>, tensor<64x1xi64, #[[BL]]>
    // CHECK-NEXT: %[[RPTRS:.*]] = tt.broadcast %[[RPTR]]
    // CHECK-NOT: arith.cmpi sge
    // CHECK: %[[N1:.*]] = tt.splat %arg3 : i32 -> tensor<1x64xi32, #[[BL]]>
    // CHECK-NEXT: %[[CLT:.*]] = arith.cmpi slt, %[[COL]], %[[N1]] : tensor<1x64xi32, #[[BL]]>
    // CHECK-NEXT: %[[CMASK:.*]] = tt.broadcast %[[CLT]] : tensor<1x64xi1, #[[BL]]> -> tensor<64x64xi1, #[[BL]]>
    // CHECK-NEXT: %[[MASK:.*]] = arith.andi %[[RMASK]], %[[CMASK]] : tensor<64x64xi1, #[[BL]]>
    // CHECK-NEXT: %[[WCOL:.*]] = tt.broadcast %[[COL]]
    // CHECK-NEXT: %[[PTRS:.*]] = tt.addptr %[[RPTRS]], %[[WCOL]] : tensor<64x64x!tt.ptr<f16>, #[[BL]]>, tensor<64x64xi32, #[[BL]]>
    // CHECK-NEXT: tt.store %[[PTRS]], %[[HB]], %[[MASK]] : tensor<64x64x!tt.ptr<f16>, #[[BL]]>
    "tile.store_block"(%c, %n, %n, %ld, %one, %c0, %c0, %hb) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<64x64xf16, #bl>) -> ()
    // CHECK: %[[LD:.*]] = tt.load %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x64x!tt.ptr<f16>, #[[BL]]>
    // CHECK: ttg.convert_layout %[[LD]] : tensor<64x64xf16, #[[BL]]> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 0
    %l = "tile.load_block"(%c, %n, %n, %ld, %one, %c0, %c0) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32) -> tensor<64x64xf16, #opa>
    return
  }
}

// -----

// gfx950: no TDM. With the alignment stated, a copy is a direct-to-LDS
// async copy of the block (masked by its bounds and pred, zero fill) and one
// commit group; the wait counts groups. The hint is dropped; the WMMA
// layout becomes MFMA v4 with kWidth 8; padded LDS rows become unswizzled.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx950"} {
  // CHECK: #[[BL:.*]] = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
  // CHECK: #[[MFMA:.*]] = #ttg.amd_mfma<{version = 4, warpsPerCTA = [2, 2], instrShape = [32, 32, 16], isTransposed = true}>
  // CHECK: #[[SH:.*]] = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 1, order = [1, 0]}>
  // CHECK: ttg.target = "hip:gfx950"
  // CHECK-LABEL: tt.func private @gfx950_copy(
  func.func private @gfx950_copy(%a: !tile.ptr<f16>, %m: i32 {tile.divisibility = 16 : i32}, %k: i32 {tile.divisibility = 16 : i32}, %lda: i64 {tile.divisibility = 16 : i32}, %off: i32, %p: i1) -> tensor<128x64xf16, #opa> {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %k, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %u = "tile.update_tensor_descriptor"(%d, %off, %off, %p) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    // CHECK: %[[BUF:.*]] = ttg.local_alloc : () -> !ttg.memdesc<128x64xf16, #[[SH]], #smem, mutable>
    %buf = "tile.local_alloc"() : () -> !ba
    // CHECK-NOT: warp_used_hint
    // CHECK: scf.if %arg5 {
    // CHECK: ttg.async_copy_global_to_local %{{.*}}, %[[BUF]] mask %{{.*}} other %{{.*}} : tensor<128x64x!tt.ptr<f16>, #[[BL]]> -> <128x64xf16, #[[SH]], #smem, mutable>
    // CHECK-NEXT: }
    // CHECK-NEXT: ttg.async_commit_group
    "tile.async_tdm_copy_global_to_local"(%u, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 3 : i32} : (!da, !ba) -> ()
    // CHECK: ttg.async_wait {num = 0 : i32}
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    // CHECK: ttg.local_load %[[BUF]] : {{.*}} -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #[[MFMA]], kWidth = 8}>>
    %t = "tile.local_load"(%buf) : (!ba) -> tensor<128x64xf16, #opa>
    return %t : tensor<128x64xf16, #opa>
  }
}

// -----

// gfx942 (and gfx950 without stated alignment): a copy is a masked tt.load
// into registers and a ttg.local_store; it is complete once issued, so the
// wait disappears. MFMA v3 takes kWidth 4.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 128, amount = 16, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!db = !tile.tensor_desc<tensor<64x128xf16, #t>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
!bb = !tile.shared<tensor<64x128xf16, #t>>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx942"} {
  // CHECK: #[[BL:.*]] = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
  // CHECK: #[[MFMA:.*]] = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
  // CHECK: #[[PA:.*]] = #ttg.padded_shared<[64:+8] {order = [1, 0], shape = [128, 64]}>
  // CHECK-LABEL: tt.func private @gfx942_copy(
  func.func private @gfx942_copy(%a: !tile.ptr<f16>, %b: !tile.ptr<f16>, %m: i32, %lda: i64, %p: i1) -> tensor<64x128xf16, #opb> {
    %one = arith.constant 1 : i64
    %a0 = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %da = "tile.update_tensor_descriptor"(%a0, %m, %m, %p) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    %db = "tile.make_tensor_descriptor"(%b, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !db
    // CHECK: %[[BA:.*]] = ttg.local_alloc : () -> !ttg.memdesc<128x64xf16, #[[PA]], #smem, mutable>
    %ba = "tile.local_alloc"() : () -> !ba
    // CHECK: %[[BB:.*]] = ttg.local_alloc
    %bb = "tile.local_alloc"() : () -> !bb
    // Each member is guarded by its own descriptor's pred (a false pred
    // leaves the buffer alone), here only A's.
    // CHECK-NOT: warp_used_hint
    // CHECK: scf.if %arg4 {
    // CHECK: %[[VA:.*]] = tt.load %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x64x!tt.ptr<f16>, #[[BL]]>
    // CHECK-NEXT: ttg.local_store %[[VA]], %[[BA]]
    // CHECK-NEXT: }
    // CHECK-NOT: scf.if
    // CHECK: %[[VB:.*]] = tt.load
    // CHECK-NEXT: ttg.local_store %[[VB]], %[[BB]]
    "tile.async_tdm_fused_copy_global_to_local"(%da, %db, %ba, %bb) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 3, 12>} : (!da, !db, !ba, !bb) -> ()
    // CHECK-NOT: async_wait
    // CHECK-NOT: async_tdm_wait
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    // CHECK: ttg.local_load %[[BB]] : {{.*}} -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #[[MFMA]], kWidth = 4}>>
    %t = "tile.local_load"(%bb) : (!bb) -> tensor<64x128xf16, #opb>
    return %t : tensor<64x128xf16, #opb>
  }
}
