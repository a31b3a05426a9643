// RUN: gemm-opt %s --split-input-file | FileCheck %s
// RUN: gemm-opt %s --split-input-file | gemm-opt --split-input-file | FileCheck %s
// RUN: gemm-opt %s --split-input-file --mlir-print-op-generic | gemm-opt --split-input-file | FileCheck %s
// Each module is a kernel that compiles for every AMD target.
// RUN: gemm-opt %s --split-input-file --emit=amdgcn --target=gfx1250 | FileCheck %s --check-prefix=ASM
// RUN: gemm-opt %s --split-input-file --emit=amdgcn --target=gfx950 | FileCheck %s --check-prefix=ASM
// RUN: gemm-opt %s --split-input-file --emit=amdgcn --target=gfx942 | FileCheck %s --check-prefix=ASM
// ASM: .globl atomics_kernel
// ASM: .globl atomic_add_block
// ASM: .globl load_scalar

// The grid size and a claim on a counter, a flag signal and an acquire read,
// in a helper whose result the kernel that calls it uses (a kernel itself
// returns nothing).
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: func.func private @atomics
  func.func private @atomics(%s: !tile.ptr<i32>, %i: i32) -> i32 {
    // CHECK: %[[N:.*]] = "tile.num_programs"() {axis = 0 : i32} : () -> i32
    %n = "tile.num_programs"() {axis = 0 : i32} : () -> i32
    // CHECK: "tile.atomic_rmw"(%arg0, %arg1, %[[N]]) {kind = "add", scope = "gpu", sem = "relaxed"} : (!tile.ptr<i32>, i32, i32) -> i32
    %old = "tile.atomic_rmw"(%s, %i, %n) {kind = "add", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    // CHECK: "tile.atomic_rmw"({{.*}}) {kind = "xchg", scope = "sys", sem = "release"}
    %x = "tile.atomic_rmw"(%s, %i, %n) {kind = "xchg", sem = "release", scope = "sys"} : (!tile.ptr<i32>, i32, i32) -> i32
    // CHECK: "tile.atomic_rmw"({{.*}}) {kind = "max", scope = "cta", sem = "acq_rel"}
    %m = "tile.atomic_rmw"(%s, %i, %n) {kind = "max", sem = "acq_rel", scope = "cta"} : (!tile.ptr<i32>, i32, i32) -> i32
    // CHECK: "tile.atomic_rmw"({{.*}}) {kind = "min", scope = "gpu", sem = "acquire"}
    %v = "tile.atomic_rmw"(%s, %i, %n) {kind = "min", sem = "acquire", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    return %v : i32
  }
  // CHECK-LABEL: func.func @atomics_kernel
  func.func @atomics_kernel(%s: !tile.ptr<i32>, %i: i32) {
    // CHECK: %[[V:.*]] = call @atomics(%arg0, %arg1) : (!tile.ptr<i32>, i32) -> i32
    %v = func.call @atomics(%s, %i) : (!tile.ptr<i32>, i32) -> i32
    // CHECK: "tile.atomic_rmw"(%arg0, %arg1, %[[V]]) {kind = "xchg", scope = "gpu", sem = "relaxed"}
    %o = "tile.atomic_rmw"(%s, %i, %v) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    return
  }
}

// -----

// An element-wise atomic add of a register block, with store_block's operands.
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: func.func @atomic_add_block
  func.func @atomic_add_block(%c: !tile.ptr<bf16>, %m: i32, %n: i32, %ld: i64, %v: tensor<64x64xbf16, #acc>) {
    %one = arith.constant 1 : i64
    // CHECK: "tile.atomic_add_block"(%arg0, %arg1, %arg2, %arg3, %{{.*}}, %arg1, %arg2, %arg4) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>, scope = "gpu", sem = "relaxed"}
    "tile.atomic_add_block"(%c, %m, %n, %ld, %one, %m, %n, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>, sem = "relaxed", scope = "gpu"} : (!tile.ptr<bf16>, i32, i32, i64, i64, i32, i32, tensor<64x64xbf16, #acc>) -> ()
    // CHECK: "tile.atomic_add_block"({{.*}}) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<bf16>
    "tile.atomic_add_block"(%c, %m, %n, %ld, %one, %m, %n, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<bf16>, i32, i32, i64, i64, i32, i32, tensor<64x64xbf16, #acc>) -> ()
    return
  }
}

// -----

// A device-side size read (grouped GEMM's group lengths), written back.
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: func.func @load_scalar
  func.func @load_scalar(%p: !tile.ptr<i32>, %i: i32) {
    // CHECK: %[[V:.*]] = "tile.load_scalar"(%arg0, %arg1) : (!tile.ptr<i32>, i32) -> i32
    %v = "tile.load_scalar"(%p, %i) : (!tile.ptr<i32>, i32) -> i32
    // CHECK: "tile.atomic_rmw"(%arg0, %arg1, %[[V]])
    %o = "tile.atomic_rmw"(%p, %i, %v) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    return
  }
}
