// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu)' | FileCheck %s

// The layout a tile.store_block of an MMA accumulator stores from. On AMD targets the
// store is from the accumulator's own layout where a thread's contiguous run along the
// stored (last) dim reaches the blocked layout's 16-byte vector, or the mask's span
// (an extent of unstated divisibility: one element a store in any layout); else the
// value is converted to the coalesced blocked layout first (through shared memory).

// gfx1250, transposed WMMA: 8 contiguous f16 a thread along N, the blocked vector.
// The pointers, the mask and the value are all in the WMMA layout.
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK: #[[MMA:.*]] = #ttg.amd_wmma<{version = 3, isTranspose = true
  // CHECK-LABEL: tt.func public @wmma_direct(
  // CHECK-NOT: ttg.convert_layout
  // CHECK: tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #[[MMA]]}>>
  // CHECK: %[[MASK:.*]] = arith.andi %{{.*}}, %{{.*}} : tensor<64x64xi1, #[[MMA]]>
  // CHECK: %[[PTRS:.*]] = tt.addptr %{{.*}}, %{{.*}} : tensor<64x64x!tt.ptr<f16>, #[[MMA]]>, tensor<64x64xi32, #[[MMA]]>
  // CHECK-NEXT: tt.store %[[PTRS]], %arg0, %[[MASK]] : tensor<64x64x!tt.ptr<f16>, #[[MMA]]>
  // CHECK-NEXT: tt.return
  func.func @wmma_direct(%v: tensor<64x64xf16, #acc>, %c: !tile.ptr<f16>, %m: i32, %n: i32 {tile.divisibility = 16 : i32}, %ld: i64) {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    "tile.store_block"(%c, %m, %n, %ld, %one, %c0, %c0, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<64x64xf16, #acc>) -> ()
    return
  }
}

// -----

// gfx1250, WMMA not transposed: a thread's elements run along M (one along N), so
// with N stated a multiple of 16 the blocked layout stores 16 bytes where the WMMA
// layout would store one element: converted. With N of unstated divisibility the
// mask is per element in either layout: stored directly.
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = false}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK: #[[BL:.*]] = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
  // CHECK: #[[MMA:.*]] = #ttg.amd_wmma<{version = 3, isTranspose = false
  // CHECK-LABEL: tt.func public @wmma_rows_aligned(
  // CHECK: %[[V:.*]] = ttg.convert_layout %arg0 : tensor<64x64xf16, #[[MMA]]> -> tensor<64x64xf16, #[[BL]]>
  // CHECK: tt.store %{{.*}}, %[[V]], %{{.*}} : tensor<64x64x!tt.ptr<f16>, #[[BL]]>
  func.func @wmma_rows_aligned(%v: tensor<64x64xf16, #acc>, %c: !tile.ptr<f16>, %m: i32, %n: i32 {tile.divisibility = 16 : i32}, %ld: i64) {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    "tile.store_block"(%c, %m, %n, %ld, %one, %c0, %c0, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<64x64xf16, #acc>) -> ()
    return
  }
  // CHECK-LABEL: tt.func public @wmma_rows_ragged(
  // CHECK-NOT: ttg.convert_layout
  // CHECK: tt.store %{{.*}}, %arg0, %{{.*}} : tensor<64x64x!tt.ptr<f16>, #[[MMA]]>
  func.func @wmma_rows_ragged(%v: tensor<64x64xf16, #acc>, %c: !tile.ptr<f16>, %m: i32, %n: i32, %ld: i64) {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    "tile.store_block"(%c, %m, %n, %ld, %one, %c0, %c0, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<64x64xf16, #acc>) -> ()
    return
  }
}

// -----

// gfx950, transposed MFMA: 4 contiguous elements a thread along N. f32 (a partial
// tile): 16 bytes, the blocked vector: stored directly. f16: 8 bytes, half the
// blocked vector: converted when N is a stated multiple of 16 or a constant multiple
// of 8, and when N is computed (no bound known on the mask's span); stored directly
// when N's divisibility is unstated or a constant N is a multiple of 4 only (the
// mask's span: 4 elements in either layout).
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx950"} {
  // CHECK-DAG: #[[BL:.*]] = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
  // CHECK-DAG: #[[MMA:.*]] = #ttg.amd_mfma<{{.*}}isTransposed = true
  // CHECK-LABEL: tt.func public @mfma_f32(
  // CHECK-NOT: ttg.convert_layout
  // CHECK: tt.store %{{.*}}, %arg0, %{{.*}} : tensor<64x64x!tt.ptr<f32>, #[[MMA]]>
  func.func @mfma_f32(%v: tensor<64x64xf32, #acc>, %c: !tile.ptr<f32>, %m: i32, %n: i32 {tile.divisibility = 16 : i32}, %ld: i64) {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    "tile.store_block"(%c, %m, %n, %ld, %one, %c0, %c0, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, tensor<64x64xf32, #acc>) -> ()
    return
  }
  // CHECK-LABEL: tt.func public @mfma_f16_aligned(
  // CHECK: %[[V:.*]] = ttg.convert_layout %arg0 : tensor<64x64xf16, #[[MMA]]> -> tensor<64x64xf16, #[[BL]]>
  // CHECK: tt.store %{{.*}}, %[[V]], %{{.*}} : tensor<64x64x!tt.ptr<f16>, #[[BL]]>
  func.func @mfma_f16_aligned(%v: tensor<64x64xf16, #acc>, %c: !tile.ptr<f16>, %m: i32, %n: i32 {tile.divisibility = 16 : i32}, %ld: i64) {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    "tile.store_block"(%c, %m, %n, %ld, %one, %c0, %c0, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<64x64xf16, #acc>) -> ()
    return
  }
  // CHECK-LABEL: tt.func public @mfma_f16_constant(
  // CHECK: %[[V:.*]] = ttg.convert_layout %arg0 : tensor<64x64xf16, #[[MMA]]> -> tensor<64x64xf16, #[[BL]]>
  // CHECK: tt.store %{{.*}}, %[[V]], %{{.*}} : tensor<64x64x!tt.ptr<f16>, #[[BL]]>
  func.func @mfma_f16_constant(%v: tensor<64x64xf16, #acc>, %c: !tile.ptr<f16>, %m: i32, %ld: i64) {
    %c0 = arith.constant 0 : i32
    %n = arith.constant 96 : i32
    %one = arith.constant 1 : i64
    "tile.store_block"(%c, %m, %n, %ld, %one, %c0, %c0, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<64x64xf16, #acc>) -> ()
    return
  }
  // CHECK-LABEL: tt.func public @mfma_f16_constant_ragged(
  // CHECK-NOT: ttg.convert_layout
  // CHECK: tt.store %{{.*}}, %arg0, %{{.*}} : tensor<64x64x!tt.ptr<f16>, #[[MMA]]>
  func.func @mfma_f16_constant_ragged(%v: tensor<64x64xf16, #acc>, %c: !tile.ptr<f16>, %m: i32, %ld: i64) {
    %c0 = arith.constant 0 : i32
    %n = arith.constant 100 : i32
    %one = arith.constant 1 : i64
    "tile.store_block"(%c, %m, %n, %ld, %one, %c0, %c0, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<64x64xf16, #acc>) -> ()
    return
  }
  // CHECK-LABEL: tt.func public @mfma_f16_computed(
  // CHECK: %[[V:.*]] = ttg.convert_layout %arg0 : tensor<64x64xf16, #[[MMA]]> -> tensor<64x64xf16, #[[BL]]>
  // CHECK: tt.store %{{.*}}, %[[V]], %{{.*}} : tensor<64x64x!tt.ptr<f16>, #[[BL]]>
  func.func @mfma_f16_computed(%v: tensor<64x64xf16, #acc>, %c: !tile.ptr<f16>, %m: i32, %n: i32, %ld: i64) {
    %c0 = arith.constant 0 : i32
    %c16 = arith.constant 16 : i32
    %n16 = arith.muli %n, %c16 : i32
    %one = arith.constant 1 : i64
    "tile.store_block"(%c, %m, %n16, %ld, %one, %c0, %c0, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<64x64xf16, #acc>) -> ()
    return
  }
  // CHECK-LABEL: tt.func public @mfma_f16_ragged(
  // CHECK-NOT: ttg.convert_layout
  // CHECK: tt.store %{{.*}}, %arg0, %{{.*}} : tensor<64x64x!tt.ptr<f16>, #[[MMA]]>
  func.func @mfma_f16_ragged(%v: tensor<64x64xf16, #acc>, %c: !tile.ptr<f16>, %m: i32, %n: i32, %ld: i64) {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    "tile.store_block"(%c, %m, %n, %ld, %one, %c0, %c0, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<64x64xf16, #acc>) -> ()
    return
  }
}

// -----

// cuda:90 keeps the conversion of a 16-bit accumulator, N's divisibility unstated
// too (its MMA layout holds 2 contiguous elements a thread).
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  // CHECK-LABEL: tt.func public @nvidia_f16_ragged(
  // CHECK: %[[V:.*]] = ttg.convert_layout %arg0 : tensor<64x64xf16, #{{.*}}> -> tensor<64x64xf16, #[[BL:.*]]>
  // CHECK: tt.store %{{.*}}, %[[V]], %{{.*}} : tensor<64x64x!tt.ptr<f16>, #[[BL]]>
  func.func @nvidia_f16_ragged(%v: tensor<64x64xf16, #acc>, %c: !tile.ptr<f16>, %m: i32, %n: i32, %ld: i64) {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    "tile.store_block"(%c, %m, %n, %ld, %one, %c0, %c0, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<64x64xf16, #acc>) -> ()
    return
  }
}
