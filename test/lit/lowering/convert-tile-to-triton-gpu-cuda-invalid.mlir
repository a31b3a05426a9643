// RUN: gemm-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90 mma=wgmma})'

// mma=wgmma makes every reason that keeps an MMA on mma.sync under mma=auto
// an error at the MMA.

// A is a register tensor (an argument), not a load of a shared buffer.
#s = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!bb = !tile.shared<tensor<32x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func private @a_in_registers(%ta: tensor<64x32xf16, #opa>, %c: !acc) -> !acc {
    %b = "tile.local_alloc"() : () -> !bb
    %tb = "tile.local_load"(%b) : (!bb) -> tensor<32x64xf16, #opb>
    // expected-error@+1 {{mma=wgmma: this MMA cannot use wgmma: operand A is not a tile.local_load of a shared buffer}}
    %d = "tile.wmma"(%ta, %tb, %c) : (tensor<64x32xf16, #opa>, tensor<32x64xf16, #opb>, !acc) -> !acc
    return %d : !acc
  }
}

// -----

// B's loaded tensor is also returned: wgmma would not materialise it.
#s = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!ba = !tile.shared<tensor<64x32xf16, #s>>
!bb = !tile.shared<tensor<32x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func private @b_used_twice(%c: !acc) -> (!acc, tensor<32x64xf16, #opb>) {
    %a = "tile.local_alloc"() : () -> !ba
    %b = "tile.local_alloc"() : () -> !bb
    %ta = "tile.local_load"(%a) : (!ba) -> tensor<64x32xf16, #opa>
    %tb = "tile.local_load"(%b) : (!bb) -> tensor<32x64xf16, #opb>
    // expected-error@+1 {{mma=wgmma: this MMA cannot use wgmma: operand B has other uses than this MMA}}
    %d = "tile.wmma"(%ta, %tb, %c) : (tensor<64x32xf16, #opa>, tensor<32x64xf16, #opb>, !acc) -> !acc
    return %d, %tb : !acc, tensor<32x64xf16, #opb>
  }
}

// -----

// A column-major (transposed) A buffer.
#t = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 0, 1>}>
#s = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!ba = !tile.shared<tensor<64x32xf16, #t>>
!bb = !tile.shared<tensor<32x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func private @transposed_a(%c: !acc) -> !acc {
    %a = "tile.local_alloc"() : () -> !ba
    %b = "tile.local_alloc"() : () -> !bb
    %ta = "tile.local_load"(%a) : (!ba) -> tensor<64x32xf16, #opa>
    %tb = "tile.local_load"(%b) : (!bb) -> tensor<32x64xf16, #opb>
    // expected-error@+1 {{mma=wgmma: this MMA cannot use wgmma: operand A's buffer is not row-major (transposed)}}
    %d = "tile.wmma"(%ta, %tb, %c) : (tensor<64x32xf16, #opa>, tensor<32x64xf16, #opb>, !acc) -> !acc
    return %d : !acc
  }
}

// -----

// Two warps are no warpgroup.
#s = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!ba = !tile.shared<tensor<64x32xf16, #s>>
!bb = !tile.shared<tensor<32x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 2 : i32, tile.target = "gfx1250"} {
  func.func private @two_warps(%c: !acc) -> !acc {
    %a = "tile.local_alloc"() : () -> !ba
    %b = "tile.local_alloc"() : () -> !bb
    %ta = "tile.local_load"(%a) : (!ba) -> tensor<64x32xf16, #opa>
    %tb = "tile.local_load"(%b) : (!bb) -> tensor<32x64xf16, #opb>
    // expected-error@+1 {{mma=wgmma: this MMA cannot use wgmma: 2 warps are not whole warpgroups of 4}}
    %d = "tile.wmma"(%ta, %tb, %c) : (tensor<64x32xf16, #opa>, tensor<32x64xf16, #opb>, !acc) -> !acc
    return %d : !acc
  }
}

// -----

// 32 rows cannot feed a warpgroup's 64.
#s = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!ba = !tile.shared<tensor<32x32xf16, #s>>
!bb = !tile.shared<tensor<32x64xf16, #s>>
!acc = tensor<32x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func private @short_m(%c: !acc) -> !acc {
    %a = "tile.local_alloc"() : () -> !ba
    %b = "tile.local_alloc"() : () -> !bb
    %ta = "tile.local_load"(%a) : (!ba) -> tensor<32x32xf16, #opa>
    %tb = "tile.local_load"(%b) : (!bb) -> tensor<32x64xf16, #opb>
    // expected-error@+1 {{mma=wgmma: this MMA cannot use wgmma: M = 32 is not a multiple of the 64 rows of 4 warps}}
    %d = "tile.wmma"(%ta, %tb, %c) : (tensor<32x32xf16, #opa>, tensor<32x64xf16, #opb>, !acc) -> !acc
    return %d : !acc
  }
}

// -----

// Another tensor in B's operand layout stays in registers.
#s = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!ba = !tile.shared<tensor<64x32xf16, #s>>
!bb = !tile.shared<tensor<32x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func private @register_operand(%c: !acc, %x: tensor<32x64xf16, #opb>) -> !acc {
    %a = "tile.local_alloc"() : () -> !ba
    %b = "tile.local_alloc"() : () -> !bb
    %ta = "tile.local_load"(%a) : (!ba) -> tensor<64x32xf16, #opa>
    %tb = "tile.local_load"(%b) : (!bb) -> tensor<32x64xf16, #opb>
    // expected-error@+1 {{mma=wgmma: this MMA cannot use wgmma: a dot-operand tensor of its layout is held in registers elsewhere (only mma.sync has a register operand layout here)}}
    %d = "tile.wmma"(%ta, %tb, %c) : (tensor<64x32xf16, #opa>, tensor<32x64xf16, #opb>, !acc) -> !acc
    return %d : !acc
  }
}

// -----

// B is a transposed view of a column-major block: wgmma reads NVMMA layouts
// of row-major blocks (or their transposed views) only.
#s = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
#c = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 0, 1>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func private @view_of_a_column_major_block(%c: !acc) -> !acc {
    %a = "tile.local_alloc"() : () -> !tile.shared<tensor<64x32xf16, #s>>
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<64x32xf16, #c>>
    %bt = "tile.memdesc_trans"(%b) {order = array<i32: 1, 0>} : (!tile.shared<tensor<64x32xf16, #c>>) -> !tile.shared<tensor<32x64xf16, #s>>
    %ta = "tile.local_load"(%a) : (!tile.shared<tensor<64x32xf16, #s>>) -> tensor<64x32xf16, #opa>
    %tb = "tile.local_load"(%bt) : (!tile.shared<tensor<32x64xf16, #s>>) -> tensor<32x64xf16, #opb>
    // expected-error@+1 {{mma=wgmma: this MMA cannot use wgmma: operand B's buffer is not row-major (transposed)}}
    %d = "tile.wmma"(%ta, %tb, %c) : (tensor<64x32xf16, #opa>, tensor<32x64xf16, #opb>, !acc) -> !acc
    return %d : !acc
  }
}
