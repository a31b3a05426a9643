// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== k_width is a power of two up to K (k_width = 3 aborted Triton). ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 3}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 3}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @f(%a: tensor<128x64xf16, #opa>, %b: tensor<64x128xf16, #opb>, %c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{#tile.dot_operand k_width = 3 must be a power of two from 1 to 32 (the K of the 16x16x32 instruction)}}
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== a and b share one k_width. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 4}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @f(%a: tensor<128x64xf16, #opa>, %b: tensor<64x128xf16, #opb>, %c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{a and b must have the same k_width, got 8 and 4}}
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== A zero in the instruction shape (a ZeroDivisionError before). ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 0, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @f(%a: tensor<128x64xf16, #opa>, %b: tensor<64x128xf16, #opb>, %c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{#tile.wmma_layout instr_shape [0, 16, 32] is not a WMMA v3 instruction (known: 16x16x32 (16-bit), 16x16x64 (8-bit), 16x16x128 (block-scaled 8-bit))}}
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== Only the 16x16x32 instruction exists for 16-bit inputs. ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @f(%a: tensor<128x64xf16, #opa>, %b: tensor<64x128xf16, #opb>, %c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{16-bit inputs need the 16x16x32 WMMA instruction, but c's layout has instr_shape [16, 16, 64]}}
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== A zero in the warps (a ZeroDivisionError before). ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 0, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @f(%a: tensor<128x64xf16, #opa>, %b: tensor<64x128xf16, #opb>, %c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{#tile.wmma_layout warps_per_cta [0, 2] must hold powers of two >= 1}}
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== WMMA warps multiply to num_warps (Triton: 'Result has an invalid layout'). ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @f(%a: tensor<128x64xf16, #opa>, %b: tensor<64x128xf16, #opb>, %c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{#tile.wmma_layout warps_per_cta [2, 2] covers 4 warps, but 'tile.num_warps' = 8}}
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== WMMA is version 3. ====
#acc = #tile.wmma_layout<{version = 2, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @f(%a: tensor<128x64xf16, #opa>, %b: tensor<64x128xf16, #opb>, %c: tensor<128x128xf32, #acc>) {
    // expected-error@+1 {{#tile.wmma_layout version must be 3, got 2}}
    %d = "tile.wmma"(%a, %b, %c) : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    return
  }
}

// -----

// ==== Blocked threads cover the target's warp: 64 lanes on wave32 gfx1250. ====
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 8, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func @f(%p: !tile.ptr<f16>, %m: i32, %s: i64, %o: i32) {
    // expected-error@+1 {{#tile.blocked threads_per_warp [8, 8] covers 64 threads, but warps of gfx1250 have 32}}
    %t = "tile.load_block"(%p, %m, %m, %s, %s, %o, %o) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32) -> tensor<64x64xf16, #bl>
    return
  }
}

// -----

// ==== With threads_per_warp = 64 and no target, 32 lanes fit no target. ====
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 64 : i32} {
  func.func @f(%p: !tile.ptr<f16>, %m: i32, %s: i64, %o: i32) {
    // expected-error@+1 {{#tile.blocked threads_per_warp [4, 8] covers 32 threads, but warps of gfx950, gfx942 have 64}}
    %t = "tile.load_block"(%p, %m, %m, %s, %s, %o, %o) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32) -> tensor<64x64xf16, #bl>
    return
  }
}

// -----

// ==== Blocked warps multiply to num_warps. ====
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 2, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func @f(%p: !tile.ptr<f16>, %m: i32, %s: i64, %o: i32) {
    // expected-error@+1 {{#tile.blocked warps_per_cta [2, 1] covers 2 warps, but 'tile.num_warps' = 4}}
    %t = "tile.load_block"(%p, %m, %m, %s, %s, %o, %o) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32) -> tensor<64x64xf16, #bl>
    return
  }
}

// -----

// ==== A blocked order is a permutation. ====
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 1>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func @f(%p: !tile.ptr<f16>, %m: i32, %s: i64, %o: i32) {
    // expected-error@+1 {{#tile.blocked order [1, 1] must be a permutation of 0..1 (each dimension exactly once)}}
    %t = "tile.load_block"(%p, %m, %m, %s, %s, %o, %o) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32) -> tensor<64x64xf16, #bl>
    return
  }
}

// -----

// ==== Each blocked field has one entry per dimension. ====
#bl = #tile.blocked<{size_per_thread = array<i64: 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func @f(%p: !tile.ptr<f16>, %m: i32, %s: i64, %o: i32) {
    // expected-error@+1 {{#tile.blocked size_per_thread [8] has 1 entries for a rank-2 tensor}}
    %t = "tile.load_block"(%p, %m, %m, %s, %s, %o, %o) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32) -> tensor<64x64xf16, #bl>
    return
  }
}

// -----

// ==== Global loads move memory element types. ====
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func @f(%p: !tile.ptr<index>, %m: i32, %s: i64, %o: i32) {
    // expected-error@+1 {{the result must have one of the element types i1, i8, i16, i32, i64, f16, bf16, f32, f64, f8E4M3FN, f8E5M2, f8E4M3FNUZ, f8E5M2FNUZ, f8E8M0FNU; got index}}
    %t = "tile.load_block"(%p, %m, %m, %s, %s, %o, %o) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<index>, i32, i32, i64, i64, i32, i32) -> tensor<64x64xindex, #bl>
    return
  }
}

// -----

// ==== A dot operand is operand 0 (a) or 1 (b). ====
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @f(%b: !tile.shared<tensor<128x64xf16, #s>>) {
    // expected-error@+1 {{#tile.dot_operand op_idx must be 0 (a) or 1 (b), got 2}}
    %a = "tile.local_load"(%b) : (!tile.shared<tensor<128x64xf16, #s>>) -> tensor<128x64xf16, #tile.dot_operand<{op_idx = 2, parent = #acc, k_width = 8}>>
    return
  }
}

// -----

// ==== cuda:90 cannot load or store i1 (Triton's NVIDIA backend aborts). ====
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%p: !tile.ptr<i1>, %m: i32, %s: i64, %o: i32) {
    // expected-error@+1 {{cuda:90 cannot load or store i1 elements (Triton's backend aborts on them): use i8}}
    %t = "tile.load_block"(%p, %m, %m, %s, %s, %o, %o) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<i1>, i32, i32, i64, i64, i32, i32) -> tensor<64x64xi1, #bl>
    return
  }
}
