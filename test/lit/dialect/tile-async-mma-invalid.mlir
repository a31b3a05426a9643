// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== a's K equals b's K. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 8, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%a: !tile.shared<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<32x128xf16, #s>>, %c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{expects a's K (64) to equal b's K (32)}}
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<32x128xf16, #s>>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== a multi-buffer must be indexed first. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 8, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%a: !tile.shared<tensor<2x128x64xf16, #s>>, %b: !tile.shared<tensor<64x128xf16, #s>>, %c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{a and b must be 2-D buffers (index a multi-buffer first), got [2, 128, 64] and [64, 128]}}
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!tile.shared<tensor<2x128x64xf16, #s>>, !tile.shared<tensor<64x128xf16, #s>>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== mixed element types. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 8, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%a: !tile.shared<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<64x128xbf16, #s>>, %c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{expects a and b to be both f16, both bf16 or both of one 8-bit float type, got f16 and bf16}}
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<64x128xbf16, #s>>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== the accumulator has a wmma layout. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 8, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%a: !tile.shared<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<64x128xf16, #s>>, %c: tensor<128x128xf32, #bl>) {
    // expected-error@+1 {{c must have a #tile.wmma_layout layout}}
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<64x128xf16, #s>>, tensor<128x128xf32, #bl>) -> tensor<128x128xf32, #bl>
    return
  }
}

// -----

// ==== an f32 accumulator. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 8, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%a: !tile.shared<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<64x128xf16, #s>>, %c: tensor<128x128xf16, #acc>) {
    // expected-error@+1 {{c must be an f32 accumulator, got f16}}
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<64x128xf16, #s>>, tensor<128x128xf16, #acc>) -> tensor<128x128xf16, #acc>
    return
  }
}

// -----

// ==== the result has c's type. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 8, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%a: !tile.shared<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<64x128xf16, #s>>, %c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{must equal c's type}}
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<64x128xf16, #s>>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #bl>
    return
  }
}

// -----

// ==== c is MxN. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 8, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%a: !tile.shared<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<64x128xf16, #s>>, %c: tensor<128x64xf32, #acc>) {
    // expected-error@+1 {{expects c to be 128x128 (a is 128x64, b is 64x128)}}
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<64x128xf16, #s>>, tensor<128x64xf32, #acc>) -> tensor<128x64xf32, #acc>
    return
  }
}

// -----

// ==== K is a multiple of the instruction's K. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 8, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%a: !tile.shared<tensor<128x16xf16, #s>>, %b: !tile.shared<tensor<16x128xf16, #s>>, %c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{128x128x16 is not a multiple of the instruction shape 16x16x32}}
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!tile.shared<tensor<128x16xf16, #s>>, !tile.shared<tensor<16x128xf16, #s>>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== k_width is a power of two. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 8, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%a: !tile.shared<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<64x128xf16, #s>>, %c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{k_width = 3 must be a power of two from 1 to 32}}
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, k_width = 3 : i32} : (!tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<64x128xf16, #s>>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== operands are shared buffers. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 8, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%a: tensor<128x64xf16, #bl>, %b: !tile.shared<tensor<64x128xf16, #s>>, %c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{a and b must be !tile.shared buffers, got tensor<128x64xf16}}
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (tensor<128x64xf16, #bl>, !tile.shared<tensor<64x128xf16, #s>>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== unknown attribute. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 8, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%a: !tile.shared<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<64x128xf16, #s>>, %c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{unknown attribute 'kwidth'}}
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, kwidth = 4 : i32} : (!tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<64x128xf16, #s>>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== the wait needs num. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 8, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{requires attribute 'num'}}
    %d = "tile.async_wmma_wait"(%c) : (tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== num is non-negative. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 8, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{num must be non-negative, got -1}}
    %d = "tile.async_wmma_wait"(%c) {num = -1 : i32} : (tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== the wait returns its value's type. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 8, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{must equal the value's type}}
    %d = "tile.async_wmma_wait"(%c) {num = 0 : i32} : (tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #bl>
    return
  }
}

// -----

// ==== the wait takes an accumulator. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 8, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%c: tensor<128x128xf32, #bl>) {
    // expected-error@+1 {{value must have a #tile.wmma_layout layout}}
    %d = "tile.async_wmma_wait"(%c) {num = 0 : i32} : (tensor<128x128xf32, #bl>) -> tensor<128x128xf32, #bl>
    return
  }
}

// -----

// ==== use_acc is an i1. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%a: !tile.shared<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<64x128xf16, #s>>, %c: tensor<128x128xf32, #acc>, %k: i32) {
    // expected-error@+1 {{use_acc must be i1, got i32}}
    %d = "tile.async_wmma"(%a, %b, %c, %k) {operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<64x128xf16, #s>>, tensor<128x128xf32, #acc>, i32) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== use_acc is a scalar, not a tensor of i1. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%a: !tile.shared<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<64x128xf16, #s>>, %c: tensor<128x128xf32, #acc>, %m: tensor<128x128xi1, #acc>) {
    // expected-error@+1 {{use_acc must be i1, got tensor<128x128xi1}}
    %d = "tile.async_wmma"(%a, %b, %c, %m) {operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<64x128xf16, #s>>, tensor<128x128xf32, #acc>, tensor<128x128xi1, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== use_acc is one operand at most. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%a: !tile.shared<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<64x128xf16, #s>>, %c: tensor<128x128xf32, #acc>, %p: i1) {
    // expected-error@+1 {{'operandSegmentSizes' gives use_acc 2 operands; it takes 0 or 1}}
    %d = "tile.async_wmma"(%a, %b, %c, %p, %p) {operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (!tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<64x128xf16, #s>>, tensor<128x128xf32, #acc>, i1, i1) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== the operand segments are required. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%a: !tile.shared<tensor<128x64xf16, #s>>, %b: !tile.shared<tensor<64x128xf16, #s>>, %c: tensor<128x128xf32, #acc>, %p: i1) {
    // expected-error@+1 {{requires attribute 'operandSegmentSizes' (array<i32: ...>, one operand count for each of a, b, c, use_acc)}}
    %d = "tile.async_wmma"(%a, %b, %c, %p) : (!tile.shared<tensor<128x64xf16, #s>>, !tile.shared<tensor<64x128xf16, #s>>, tensor<128x128xf32, #acc>, i1) -> tensor<128x128xf32, #acc>
    return
  }
}
