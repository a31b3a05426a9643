// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== The grid has three axes. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f() {
    // expected-error@+1 {{'tile.num_programs' op axis must be 0, 1 or 2, got 3}}
    %n = "tile.num_programs"() {axis = 3 : i32} : () -> i32
    return
  }
}

// -----

// ==== The axis is required. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f() {
    // expected-error@+1 {{'tile.num_programs' op requires attribute 'axis'}}
    %n = "tile.num_programs"() : () -> i32
    return
  }
}

// -----

// ==== Counters and flags are i32. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%s: !tile.ptr<f32>, %i: i32) {
    // expected-error@+1 {{'tile.atomic_rmw' op base must point to i32, got f32}}
    %o = "tile.atomic_rmw"(%s, %i, %i) {kind = "add", sem = "relaxed", scope = "gpu"} : (!tile.ptr<f32>, i32, i32) -> i32
    return
  }
}

// -----

// ==== The index is i32. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%s: !tile.ptr<i32>, %i: i64, %v: i32) {
    // expected-error@+1 {{'tile.atomic_rmw' op index and value must be i32, got i64}}
    %o = "tile.atomic_rmw"(%s, %i, %v) {kind = "add", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i64, i32) -> i32
    return
  }
}

// -----

// ==== Unknown kind. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%s: !tile.ptr<i32>, %i: i32) {
    // expected-error@+1 {{'tile.atomic_rmw' op 'kind' must be one of add, xchg, max, min, got "cas"}}
    %o = "tile.atomic_rmw"(%s, %i, %i) {kind = "cas", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    return
  }
}

// -----

// ==== Unknown memory semantics. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%s: !tile.ptr<i32>, %i: i32) {
    // expected-error@+1 {{'tile.atomic_rmw' op 'sem' must be one of relaxed, acquire, release, acq_rel, got "seq_cst"}}
    %o = "tile.atomic_rmw"(%s, %i, %i) {kind = "add", sem = "seq_cst", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    return
  }
}

// -----

// ==== Unknown scope. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%s: !tile.ptr<i32>, %i: i32) {
    // expected-error@+1 {{'tile.atomic_rmw' op 'scope' must be one of cta, gpu, sys, got "system"}}
    %o = "tile.atomic_rmw"(%s, %i, %i) {kind = "add", sem = "relaxed", scope = "system"} : (!tile.ptr<i32>, i32, i32) -> i32
    return
  }
}

// -----

// ==== sem is required on a scalar atomic. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%s: !tile.ptr<i32>, %i: i32) {
    // expected-error@+1 {{'tile.atomic_rmw' op requires attribute 'sem' (one of relaxed, acquire, release, acq_rel)}}
    %o = "tile.atomic_rmw"(%s, %i, %i) {kind = "add", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    return
  }
}

// -----

// ==== A misspelled attribute. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%s: !tile.ptr<i32>, %i: i32) {
    // expected-error@+1 {{'tile.atomic_rmw' op unknown attribute 'scop'; did you mean 'scope'?}}
    %o = "tile.atomic_rmw"(%s, %i, %i) {kind = "add", sem = "relaxed", scop = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    return
  }
}

// -----

// ==== Atomic block adds are float adds. ====
#b = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%c: !tile.ptr<i32>, %m: i32, %ld: i64, %v: tensor<32x32xi32, #b>) {
    // expected-error@+1 {{'tile.atomic_add_block' op atomic add takes f32, f16, bf16 elements, got i32}}
    "tile.atomic_add_block"(%c, %m, %m, %ld, %ld, %m, %m, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<i32>, i32, i32, i64, i64, i32, i32, tensor<32x32xi32, #b>) -> ()
    return
  }
}

// -----

// ==== The pointee is the value's element type. ====
#b = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%c: !tile.ptr<f16>, %m: i32, %ld: i64, %v: tensor<32x32xf32, #b>) {
    // expected-error@+1 {{'tile.atomic_add_block' op base points to f16 but the block holds f32}}
    "tile.atomic_add_block"(%c, %m, %m, %ld, %ld, %m, %m, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<32x32xf32, #b>) -> ()
    return
  }
}

// -----

// ==== Operand segments agree with the operands. ====
#b = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%c: !tile.ptr<f32>, %m: i32, %ld: i64, %v: tensor<32x32xf32, #b>) {
    // expected-error@+1 {{'tile.atomic_add_block' op 'operandSegmentSizes' [1, 2, 2, 1, 1] adds up to 7 operands, but the op has 8}}
    "tile.atomic_add_block"(%c, %m, %m, %ld, %ld, %m, %m, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 1, 1>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, tensor<32x32xf32, #b>) -> ()
    return
  }
}

// -----

// ==== Unknown scope on a block add. ====
#b = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  func.func @f(%c: !tile.ptr<f32>, %m: i32, %ld: i64, %v: tensor<32x32xf32, #b>) {
    // expected-error@+1 {{'tile.atomic_add_block' op 'scope' must be one of cta, gpu, sys, got "grid"}}
    "tile.atomic_add_block"(%c, %m, %m, %ld, %ld, %m, %m, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>, scope = "grid"} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, tensor<32x32xf32, #b>) -> ()
    return
  }
}

// -----

// ==== Scalar loads read i32 sizes. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%p: !tile.ptr<f16>, %i: i32) {
    // expected-error@+1 {{'tile.load_scalar' op base must point to i32, got f16}}
    %v = "tile.load_scalar"(%p, %i) : (!tile.ptr<f16>, i32) -> i32
    return
  }
}
