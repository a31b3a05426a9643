// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== a ring holds at least one barrier. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f() {
    // expected-error@+1 {{!tile.mbarrier_ring holds 1 to 64 barriers, got 0}}
    %bars = "tile.barrier_alloc"() : () -> !tile.mbarrier_ring<0 : i32>
    return
  }
}

// -----

// ==== a constant ring index is in range. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f() {
    %bars = "tile.barrier_alloc"() : () -> !tile.mbarrier_ring<2 : i32>
    %c2 = arith.constant 2 : i32
    // expected-error@+1 {{index 2 is out of range for a ring of 2 barriers (0 to 1)}}
    %bar = "tile.barrier_index"(%bars, %c2) : (!tile.mbarrier_ring<2 : i32>, i32) -> !tile.mbarrier<i64>
    return
  }
}

// -----

// ==== a ring index is i32. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%i: i64) {
    %bars = "tile.barrier_alloc"() : () -> !tile.mbarrier_ring<2 : i32>
    // expected-error@+1 {{index must be i32, got i64}}
    %bar = "tile.barrier_index"(%bars, %i) : (!tile.mbarrier_ring<2 : i32>, i64) -> !tile.mbarrier<i64>
    return
  }
}

// -----

// ==== init needs count >= 1. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%bar: !tile.mbarrier<i64>) {
    // expected-error@+1 {{count must be from 1 to 1048575, got 0}}
    "tile.barrier_init"(%bar) {count = 0 : i32} : (!tile.mbarrier<i64>) -> ()
    return
  }
}

// -----

// ==== init needs a count. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%bar: !tile.mbarrier<i64>) {
    // expected-error@+1 {{requires attribute 'count'}}
    "tile.barrier_init"(%bar) : (!tile.mbarrier<i64>) -> ()
    return
  }
}

// -----

// ==== barriers are 64-bit. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%bar: !tile.mbarrier<i32>) {
    // expected-error@+1 {{the barrier operand: barriers are 64-bit (i64), got !tile.mbarrier<i32>}}
    "tile.barrier_init"(%bar) {count = 1 : i32} : (!tile.mbarrier<i32>) -> ()
    return
  }
}

// -----

// ==== expect needs bytes > 0. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%bar: !tile.mbarrier<i64>) {
    // expected-error@+1 {{bytes must be from 1 to 1048575, got 0}}
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 0 : i32} : (!tile.mbarrier<i64>) -> ()
    return
  }
}

// -----

// ==== expect's pred is i1. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%bar: !tile.mbarrier<i64>, %p: i32) {
    // expected-error@+1 {{pred must be i1, got i32}}
    "tile.barrier_expect"(%bar, %p) {operandSegmentSizes = array<i32: 1, 1>, bytes = 64 : i32} : (!tile.mbarrier<i64>, i32) -> ()
    return
  }
}

// -----

// ==== arrive's count is at least 1. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%bar: !tile.mbarrier<i64>) {
    // expected-error@+1 {{count must be from 1 to 1048575, got -1}}
    "tile.barrier_arrive"(%bar) {operandSegmentSizes = array<i32: 1, 0>, count = -1 : i32} : (!tile.mbarrier<i64>) -> ()
    return
  }
}

// -----

// ==== the phase is i1 or i32. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%bar: !tile.mbarrier<i64>, %phase: i64) {
    // expected-error@+1 {{phase must be i1 or i32, got i64}}
    "tile.barrier_wait"(%bar, %phase) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i64) -> ()
    return
  }
}

// -----

// ==== a wait's barrier operand is a barrier. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%bar: !tile.shared<tensor<64x64xf16, #s>>, %phase: i32) {
    // expected-error@+1 {{the barrier operand must be one barrier of a ring (tile.barrier_index), got !tile.shared}}
    "tile.barrier_wait"(%bar, %phase) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.shared<tensor<64x64xf16, #s>>, i32) -> ()
    return
  }
}

// -----

// ==== a store's source matches the descriptor block. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%d: !tile.tensor_desc<tensor<64x64xf16, #s>>, %b: !tile.shared<tensor<32x64xf16, #s>>) {
    // expected-error@+1 {{does not match the descriptor block}}
    "tile.async_tdm_copy_local_to_global"(%d, %b) : (!tile.tensor_desc<tensor<64x64xf16, #s>>, !tile.shared<tensor<32x64xf16, #s>>) -> ()
    return
  }
}

// -----

// ==== a store's cache modifier is known. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%d: !tile.tensor_desc<tensor<64x64xf16, #s>>, %b: !tile.shared<tensor<64x64xf16, #s>>) {
    // expected-error@+1 {{cache}}
    "tile.async_tdm_copy_local_to_global"(%d, %b) {cache = ".zz"} : (!tile.tensor_desc<tensor<64x64xf16, #s>>, !tile.shared<tensor<64x64xf16, #s>>) -> ()
    return
  }
}

// -----

// ==== a local store matches the buffer. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%v: tensor<64x64xf32, #bl>, %b: !tile.shared<tensor<64x64xf16, #s>>) {
    // expected-error@+1 {{must match the buffer's shape [64, 64] and element type f16}}
    "tile.local_store"(%v, %b) : (tensor<64x64xf32, #bl>, !tile.shared<tensor<64x64xf16, #s>>) -> ()
    return
  }
}

// -----

// ==== on TDM targets a TDM store pads whole rows. ====
#s = #tile.padded_shared<{interval = 32, amount = 8, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func @f(%d: !tile.tensor_desc<tensor<64x64xf16, #s>>, %b: !tile.shared<tensor<64x64xf16, #s>>) {
    // expected-error@+1 {{a TDM store pads only whole rows: the padding interval (32) must equal the innermost block dimension (64)}}
    "tile.async_tdm_copy_local_to_global"(%d, %b) : (!tile.tensor_desc<tensor<64x64xf16, #s>>, !tile.shared<tensor<64x64xf16, #s>>) -> ()
    return
  }
}
