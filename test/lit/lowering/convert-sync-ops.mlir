// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=gfx1250})' | FileCheck %s
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90})' | FileCheck %s

// The grid size and scalar atomics: one tt.atomic_rmw each, with the op's
// semantics and scope; a release is preceded by a CTA barrier (ttg.barrier) (the program's
// writes, not only the issuing thread's, are ordered before it).
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: tt.func private @scalar_atomics
  func.func private @scalar_atomics(%s: !tile.ptr<i32>, %i: i32) -> i32 {
    // CHECK: %[[N:.*]] = tt.get_num_programs x : i32
    %n = "tile.num_programs"() {axis = 0 : i32} : () -> i32
    // CHECK: %[[P:.*]] = tt.addptr %arg0, %arg1 : !tt.ptr<i32>, i32
    // CHECK: %{{.*}} = tt.atomic_rmw add, relaxed, gpu, %[[P]], %[[N]], %true
    %a = "tile.atomic_rmw"(%s, %i, %n) {kind = "add", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    // CHECK: ttg.barrier all
    // CHECK-NEXT: tt.addptr
    // CHECK: tt.atomic_rmw exch, release, gpu
    %x = "tile.atomic_rmw"(%s, %i, %n) {kind = "xchg", sem = "release", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    // CHECK-NOT: ttg.barrier
    // CHECK: tt.atomic_rmw max, acquire, sys
    %m = "tile.atomic_rmw"(%s, %i, %n) {kind = "max", sem = "acquire", scope = "sys"} : (!tile.ptr<i32>, i32, i32) -> i32
    // CHECK: ttg.barrier all
    // CHECK-NEXT: tt.addptr
    // CHECK: tt.atomic_rmw min, acq_rel, cta
    %v = "tile.atomic_rmw"(%s, %i, %n) {kind = "min", sem = "acq_rel", scope = "cta"} : (!tile.ptr<i32>, i32, i32) -> i32
    return %v : i32
  }
}

// -----

// A block atomic add: the store_block addressing and mask, then a masked tensor fadd.
#b = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: tt.func public @block_add
  func.func @block_add(%c: !tile.ptr<f16>, %m: i32, %n: i32, %ld: i64, %v: tensor<32x32xf16, #b>) {
    %one = arith.constant 1 : i64
    // CHECK: %[[MASK:.*]] = arith.andi %{{.*}}, %{{.*}} : tensor<32x32xi1, #blocked>
    // CHECK: tt.atomic_rmw fadd, relaxed, gpu, %{{.*}}, %arg4, %[[MASK]] : (tensor<32x32x!tt.ptr<f16>, #blocked>, tensor<32x32xf16, #blocked>, tensor<32x32xi1, #blocked>) -> tensor<32x32xf16, #blocked>
    "tile.atomic_add_block"(%c, %m, %n, %ld, %one, %m, %n, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>, sem = "relaxed", scope = "gpu"} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<32x32xf16, #b>) -> ()
    return
  }
}

// -----

// A scalar load: one tt.load of base + index.
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: tt.func private @load_scalar
  func.func private @load_scalar(%p: !tile.ptr<i32>, %i: i32) -> i32 {
    // CHECK: %[[P:.*]] = tt.addptr %arg0, %arg1 : !tt.ptr<i32>, i32
    // CHECK-NEXT: %[[V:.*]] = tt.load %[[P]] : !tt.ptr<i32>
    // CHECK-NEXT: tt.return %[[V]] : i32
    %v = "tile.load_scalar"(%p, %i) : (!tile.ptr<i32>, i32) -> i32
    return %v : i32
  }
}
