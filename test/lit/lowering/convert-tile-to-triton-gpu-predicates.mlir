// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=gfx1250})' | FileCheck %s --check-prefix=TDM
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=gfx950})' | FileCheck %s --check-prefixes=MASK,ASYNC
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90})' | FileCheck %s --check-prefixes=MASK,ASYNC
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=gfx942})' | FileCheck %s --check-prefixes=MASK,REGS

// What feeds each lowered predicate, for every kind of copy lowering: TDM
// (gfx1250) folds the predicates into descriptor updates; direct-to-LDS
// async copies (gfx950, cuda:90 with the alignment stated) and register
// copies (gfx942) guard the copy with scf.if on the combined predicate and
// mask each element by its row and column bounds.

// A user predicate on the copy and a descriptor predicate: the copy runs
// only when both hold (the descriptor's pred is ANDed, not replaced), and
// each mask keeps the block's rows (origin row + 0..127) within [0, rows) and
// its columns (origin column + 0..63) within [0, columns).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  // TDM-LABEL: tt.func public @user_and_desc_pred(
  // MASK-LABEL: tt.func public @user_and_desc_pred(
  func.func @user_and_desc_pred(%a: !tile.ptr<f16>, %m: i32 {tile.divisibility = 16 : i32}, %k: i32 {tile.divisibility = 16 : i32}, %lda: i64 {tile.divisibility = 16 : i32}, %r: i32, %c: i32, %p: i1, %q: i1) {
    %one = arith.constant 1 : i64
    // TDM: %[[D:.*]] = tt.make_tensor_descriptor %arg0, [%arg1, %arg2], [%arg3, %{{.*}}] :
    %d = "tile.make_tensor_descriptor"(%a, %m, %k, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    // TDM: %[[P32:.*]] = arith.extui %arg6 : i1 to i32
    // TDM: %[[U:.*]] = amdg.update_tensor_descriptor %[[D]] add_offsets = [%arg4, %arg5] pred = %[[P32]] {clamp_bounds}
    %u = "tile.update_tensor_descriptor"(%d, %r, %c, %p) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    // TDM: %[[BUF:.*]] = ttg.local_alloc
    // MASK: %[[BUF:.*]] = ttg.local_alloc
    %buf = "tile.local_alloc"() : () -> !ba
    // TDM: %[[PQ:.*]] = arith.andi {{%arg6, %arg7|%arg7, %arg6}} : i1
    // TDM: %[[Z:.*]] = arith.constant 0 : i32
    // TDM: %[[PQ32:.*]] = arith.extui %[[PQ]] : i1 to i32
    // TDM: %[[C:.*]] = amdg.update_tensor_descriptor %[[U]] add_offsets = [%[[Z]], %[[Z]]] pred = %[[PQ32]] :
    // TDM: amdg.async_tdm_copy_global_to_local %[[C]] into %[[BUF]] :
    //
    // MASK: %[[PQ:.*]] = arith.andi {{%arg6, %arg7|%arg7, %arg6}} : i1
    // MASK-NEXT: scf.if %[[PQ]] {
    // MASK: %[[R0:.*]] = tt.make_range {end = 128 : i32, start = 0 : i32}
    // MASK: %[[RO:.*]] = tt.splat %arg4 : i32 -> tensor<128xi32
    // MASK: %[[RI:.*]] = arith.addi %[[RO]], %[[R0]] :
    // MASK: %[[ROWS:.*]] = tt.expand_dims %[[RI]] {axis = 1 : i32}
    // MASK: %[[C0:.*]] = tt.make_range {end = 64 : i32, start = 0 : i32}
    // MASK: %[[CO:.*]] = tt.splat %arg5 : i32 -> tensor<64xi32
    // MASK: %[[CI:.*]] = arith.addi %[[CO]], %[[C0]] :
    // MASK: %[[COLS:.*]] = tt.expand_dims %[[CI]] {axis = 0 : i32}
    // MASK: %[[RZ:.*]] = arith.constant dense<0> : tensor<128x1xi32
    // MASK: %[[RGE:.*]] = arith.cmpi sge, %[[ROWS]], %[[RZ]] :
    // MASK: %[[M:.*]] = tt.splat %arg1 : i32 -> tensor<128x1xi32
    // MASK: %[[RLT:.*]] = arith.cmpi slt, %[[ROWS]], %[[M]] :
    // MASK: %[[RIN:.*]] = arith.andi %[[RGE]], %[[RLT]] :
    // MASK: %[[RMASK:.*]] = tt.broadcast %[[RIN]] : tensor<128x1xi1, {{.*}}> -> tensor<128x64xi1
    // MASK: %[[RW:.*]] = arith.extsi %[[ROWS]] :
    // MASK: %[[LD:.*]] = tt.splat %arg3 : i64 -> tensor<128x1xi64
    // MASK: arith.muli %[[RW]], %[[LD]] :
    // MASK: %[[CZ:.*]] = arith.constant dense<0> : tensor<1x64xi32
    // MASK: %[[CGE:.*]] = arith.cmpi sge, %[[COLS]], %[[CZ]] :
    // MASK: %[[K:.*]] = tt.splat %arg2 : i32 -> tensor<1x64xi32
    // MASK: %[[CLT:.*]] = arith.cmpi slt, %[[COLS]], %[[K]] :
    // MASK: %[[CIN:.*]] = arith.andi %[[CGE]], %[[CLT]] :
    // MASK: %[[CMASK:.*]] = tt.broadcast %[[CIN]] : tensor<1x64xi1, {{.*}}> -> tensor<128x64xi1
    // MASK: %[[MASK:.*]] = arith.andi %[[RMASK]], %[[CMASK]] :
    // MASK: %[[CB:.*]] = tt.broadcast %[[COLS]] :
    // MASK: %[[PTRS:.*]] = tt.addptr %{{.*}}, %[[CB]] :
    // ASYNC: ttg.async_copy_global_to_local %[[PTRS]], %[[BUF]] mask %[[MASK]] other %{{.*}} :
    // ASYNC-NEXT: }
    // ASYNC-NEXT: ttg.async_commit_group
    // REGS: %[[V:.*]] = tt.load %[[PTRS]], %[[MASK]], %{{.*}} :
    // REGS-NEXT: ttg.local_store %[[V]], %[[BUF]] :
    // REGS-NEXT: }
    "tile.async_tdm_copy_global_to_local"(%u, %buf, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!da, !ba, i1) -> ()
    // TDM: amdg.async_tdm_wait {num = 0 : i32}
    // ASYNC: ttg.async_wait {num = 0 : i32}
    // REGS-NOT: async_wait
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}

// -----

// Explicit bounds replace the tensor's extent: the masks compare against
// them (not against the shape), from the moved origin. TDM sets them on the
// unmoved descriptor, then moves it (clamp_bounds). Only the user's pred
// guards the copy.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  // TDM-LABEL: tt.func public @explicit_bounds(
  // MASK-LABEL: tt.func public @explicit_bounds(
  func.func @explicit_bounds(%a: !tile.ptr<f16>, %m: i32 {tile.divisibility = 16 : i32}, %k: i32 {tile.divisibility = 16 : i32}, %lda: i64 {tile.divisibility = 16 : i32}, %r: i32, %c: i32, %bm: i32, %bk: i32, %q: i1) {
    %one = arith.constant 1 : i64
    // TDM: %[[D:.*]] = tt.make_tensor_descriptor %arg0, [%arg1, %arg2], [%arg3, %{{.*}}] :
    %d = "tile.make_tensor_descriptor"(%a, %m, %k, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    // TDM: %[[B:.*]] = amdg.update_tensor_descriptor %[[D]] set_bounds = [%arg6, %arg7] :
    // TDM: %[[U:.*]] = amdg.update_tensor_descriptor %[[B]] add_offsets = [%arg4, %arg5] {clamp_bounds}
    %u = "tile.update_tensor_descriptor"(%d, %r, %c, %bm, %bk) {operandSegmentSizes = array<i32: 1, 2, 2, 0>} : (!da, i32, i32, i32, i32) -> !da
    %buf = "tile.local_alloc"() : () -> !ba
    // TDM: %[[Q32:.*]] = arith.extui %arg8 : i1 to i32
    // TDM: %[[C:.*]] = amdg.update_tensor_descriptor %[[U]] add_offsets = [%{{.*}}, %{{.*}}] pred = %[[Q32]] :
    // TDM: amdg.async_tdm_copy_global_to_local %[[C]] into
    //
    // MASK-NOT: arith.andi {{.*}} : i1
    // MASK: scf.if %arg8 {
    // MASK: %[[R0:.*]] = tt.make_range {end = 128 : i32, start = 0 : i32}
    // MASK: %[[RO:.*]] = tt.splat %arg4 : i32 -> tensor<128xi32
    // MASK: %[[RI:.*]] = arith.addi %[[RO]], %[[R0]] :
    // MASK: %[[ROWS:.*]] = tt.expand_dims %[[RI]] {axis = 1 : i32}
    // MASK: %[[C0:.*]] = tt.make_range {end = 64 : i32, start = 0 : i32}
    // MASK: %[[CO:.*]] = tt.splat %arg5 : i32 -> tensor<64xi32
    // MASK: %[[CI:.*]] = arith.addi %[[CO]], %[[C0]] :
    // MASK: %[[COLS:.*]] = tt.expand_dims %[[CI]] {axis = 0 : i32}
    // MASK: %[[RZ:.*]] = arith.constant dense<0> : tensor<128x1xi32
    // MASK: %[[RGE:.*]] = arith.cmpi sge, %[[ROWS]], %[[RZ]] :
    // MASK: %[[BM:.*]] = tt.splat %arg6 : i32 -> tensor<128x1xi32
    // MASK: %[[RLT:.*]] = arith.cmpi slt, %[[ROWS]], %[[BM]] :
    // MASK: %[[RIN:.*]] = arith.andi %[[RGE]], %[[RLT]] :
    // MASK: %[[RMASK:.*]] = tt.broadcast %[[RIN]] :
    // MASK: %[[CZ:.*]] = arith.constant dense<0> : tensor<1x64xi32
    // MASK: %[[CGE:.*]] = arith.cmpi sge, %[[COLS]], %[[CZ]] :
    // MASK: %[[BK:.*]] = tt.splat %arg7 : i32 -> tensor<1x64xi32
    // MASK: %[[CLT:.*]] = arith.cmpi slt, %[[COLS]], %[[BK]] :
    // MASK: %[[CIN:.*]] = arith.andi %[[CGE]], %[[CLT]] :
    // MASK: %[[CMASK:.*]] = tt.broadcast %[[CIN]] :
    // MASK: %[[MASK:.*]] = arith.andi %[[RMASK]], %[[CMASK]] :
    // ASYNC: ttg.async_copy_global_to_local %{{.*}} mask %[[MASK]] other
    // REGS: tt.load %{{.*}}, %[[MASK]], %{{.*}} :
    "tile.async_tdm_copy_global_to_local"(%u, %buf, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!da, !ba, i1) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}

// -----

// A fused copy is one commit group: each member guarded by its own
// descriptor's pred and masked by its own descriptor's bounds, then one
// ttg.async_commit_group; a plain copy after it is a group of its own, and
// the wait counts groups. Register copies complete when issued: no groups,
// no wait. TDM keeps the fused op (one instruction).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 128, amount = 16, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!db = !tile.tensor_desc<tensor<64x128xf16, #t>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
!bb = !tile.shared<tensor<64x128xf16, #t>>
module attributes {tile.num_warps = 4 : i32} {
  // TDM-LABEL: tt.func public @fused(
  // MASK-LABEL: tt.func public @fused(
  func.func @fused(%a: !tile.ptr<f16>, %b: !tile.ptr<f16>, %m: i32 {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}, %k: i32 {tile.divisibility = 16 : i32}, %lda: i64 {tile.divisibility = 16 : i32}, %ldb: i64 {tile.divisibility = 16 : i32}, %ra: i32, %ca: i32, %rb: i32, %cb: i32, %p: i1, %q: i1) {
    %one = arith.constant 1 : i64
    %a0 = "tile.make_tensor_descriptor"(%a, %m, %k, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    // TDM: %[[DA:.*]] = amdg.update_tensor_descriptor %{{.*}} add_offsets = [%arg7, %arg8] pred = %{{.*}} {clamp_bounds}
    %da = "tile.update_tensor_descriptor"(%a0, %ra, %ca, %p) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    %b0 = "tile.make_tensor_descriptor"(%b, %k, %n, %ldb, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !db
    // TDM: %[[DB:.*]] = amdg.update_tensor_descriptor %{{.*}} add_offsets = [%arg9, %arg10] pred = %{{.*}} {clamp_bounds}
    %db = "tile.update_tensor_descriptor"(%b0, %rb, %cb, %q) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!db, i32, i32, i1) -> !db
    // TDM: %[[BA:.*]] = ttg.local_alloc : () -> !ttg.memdesc<128x64xf16
    // TDM: %[[BB:.*]] = ttg.local_alloc : () -> !ttg.memdesc<64x128xf16
    // MASK: %[[BA:.*]] = ttg.local_alloc : () -> !ttg.memdesc<128x64xf16
    // MASK: %[[BB:.*]] = ttg.local_alloc : () -> !ttg.memdesc<64x128xf16
    %ba = "tile.local_alloc"() : () -> !ba
    %bb = "tile.local_alloc"() : () -> !bb
    // TDM: amdg.async_tdm_fused_copy_global_to_local %[[DA]], %[[DB]] into %[[BA]], %[[BB]] {warp_used_hints = array<i32: 3, 12>}
    //
    // Member A: rows from %ra against M, columns from %ca against K.
    // MASK: scf.if %arg11 {
    // MASK: %[[AR:.*]] = tt.splat %arg7 : i32 -> tensor<128xi32
    // MASK: %[[AC:.*]] = tt.splat %arg8 : i32 -> tensor<64xi32
    // MASK: %[[AM:.*]] = tt.splat %arg2 : i32 -> tensor<128x1xi32
    // MASK: arith.cmpi slt, %{{.*}}, %[[AM]] :
    // MASK: %[[AK:.*]] = tt.splat %arg4 : i32 -> tensor<1x64xi32
    // MASK: arith.cmpi slt, %{{.*}}, %[[AK]] :
    // MASK: arith.andi
    // MASK: %[[AMASK:.*]] = arith.andi
    // ASYNC: ttg.async_copy_global_to_local %{{.*}}, %[[BA]] mask %[[AMASK]] other
    // ASYNC-NEXT: }
    // ASYNC-NEXT: scf.if %arg12 {
    // REGS: %[[VA:.*]] = tt.load %{{.*}}, %[[AMASK]], %{{.*}} :
    // REGS-NEXT: ttg.local_store %[[VA]], %[[BA]] :
    // REGS-NEXT: }
    // REGS-NEXT: scf.if %arg12 {
    // Member B: rows from %rb against K, columns from %cb against N.
    // MASK: %[[BR:.*]] = tt.splat %arg9 : i32 -> tensor<64xi32
    // MASK: %[[BC:.*]] = tt.splat %arg10 : i32 -> tensor<128xi32
    // MASK: %[[BK:.*]] = tt.splat %arg4 : i32 -> tensor<64x1xi32
    // MASK: arith.cmpi slt, %{{.*}}, %[[BK]] :
    // MASK: %[[BN:.*]] = tt.splat %arg3 : i32 -> tensor<1x128xi32
    // MASK: arith.cmpi slt, %{{.*}}, %[[BN]] :
    // MASK: arith.andi
    // MASK: %[[BMASK:.*]] = arith.andi
    // ASYNC: ttg.async_copy_global_to_local %{{.*}}, %[[BB]] mask %[[BMASK]] other
    // ASYNC-NEXT: }
    // ASYNC-NEXT: ttg.async_commit_group
    // REGS: %[[VB:.*]] = tt.load %{{.*}}, %[[BMASK]], %{{.*}} :
    // REGS-NEXT: ttg.local_store %[[VB]], %[[BB]] :
    // REGS-NEXT: }
    "tile.async_tdm_fused_copy_global_to_local"(%da, %db, %ba, %bb) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 3, 12>} : (!da, !db, !ba, !bb) -> ()
    // TDM: amdg.async_tdm_copy_global_to_local %[[DA]] into %[[BA]]
    // ASYNC-NEXT: scf.if %arg11 {
    // ASYNC: ttg.async_copy_global_to_local %{{.*}}, %[[BA]] mask
    // ASYNC-NEXT: }
    // ASYNC-NEXT: ttg.async_commit_group
    // REGS-NEXT: scf.if %arg11 {
    // REGS: ttg.local_store %{{.*}}, %[[BA]] :
    // REGS-NEXT: }
    // REGS-NOT: ttg.async_commit_group
    // REGS-NOT: async_wait
    "tile.async_tdm_copy_global_to_local"(%da, %ba) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    // TDM: amdg.async_tdm_wait {num = 1 : i32}
    // ASYNC-NEXT: ttg.async_wait {num = 1 : i32}
    "tile.async_tdm_wait"() {num = 1 : i32} : () -> ()
    // MASK: tt.return
    return
  }
}

// -----

// Two updates with a pred each, then a copy with a user pred: the copy runs
// only when all three hold (each update ANDs its pred into its source's).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  // TDM-LABEL: tt.func public @chained_desc_preds(
  // MASK-LABEL: tt.func public @chained_desc_preds(
  func.func @chained_desc_preds(%a: !tile.ptr<f16>, %m: i32 {tile.divisibility = 16 : i32}, %k: i32 {tile.divisibility = 16 : i32}, %lda: i64 {tile.divisibility = 16 : i32}, %r: i32, %c: i32, %r2: i32, %c2: i32, %p: i1, %p2: i1, %q: i1) {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %k, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    // TDM: %[[P32:.*]] = arith.extui %arg8 : i1 to i32
    // TDM: %[[U:.*]] = amdg.update_tensor_descriptor %{{.*}} add_offsets = [%arg4, %arg5] pred = %[[P32]] {clamp_bounds}
    %u = "tile.update_tensor_descriptor"(%d, %r, %c, %p) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    // TDM: %[[PP2:.*]] = arith.andi %arg8, %arg9 : i1
    // TDM: %[[PP2_32:.*]] = arith.extui %[[PP2]] : i1 to i32
    // TDM: %[[V:.*]] = amdg.update_tensor_descriptor %[[U]] add_offsets = [%arg6, %arg7] pred = %[[PP2_32]] {clamp_bounds}
    // MASK: %[[PP2:.*]] = arith.andi %arg8, %arg9 : i1
    %v = "tile.update_tensor_descriptor"(%u, %r2, %c2, %p2) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    %buf = "tile.local_alloc"() : () -> !ba
    // TDM: %[[ALL:.*]] = arith.andi %[[PP2]], %arg10 : i1
    // TDM: %[[ALL32:.*]] = arith.extui %[[ALL]] : i1 to i32
    // TDM: %[[C:.*]] = amdg.update_tensor_descriptor %[[V]] add_offsets = [%{{.*}}, %{{.*}}] pred = %[[ALL32]] :
    // TDM: amdg.async_tdm_copy_global_to_local %[[C]] into
    // MASK: %[[ALL:.*]] = arith.andi %[[PP2]], %arg10 : i1
    // MASK-NEXT: scf.if %[[ALL]] {
    "tile.async_tdm_copy_global_to_local"(%v, %buf, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!da, !ba, i1) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
