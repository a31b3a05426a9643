// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== order must be a permutation. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module {
  func.func @f(%b: !tile.shared<tensor<128x64xf16, #s>>) {
    // expected-error@+1 {{order [1, 1] must be a permutation of 0..1 (each dimension exactly once)}}
    %t = "tile.memdesc_trans"(%b) {order = array<i32: 1, 1>} : (!tile.shared<tensor<128x64xf16, #s>>) -> !tile.shared<tensor<64x128xf16, #s>>
    return
  }
}

// -----

// ==== order names every dim of the source. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module {
  func.func @f(%b: !tile.shared<tensor<128x64xf16, #s>>) {
    // expected-error@+1 {{order [2, 0, 1] has 3 entries but the source has rank 2}}
    %t = "tile.memdesc_trans"(%b) {order = array<i32: 2, 0, 1>} : (!tile.shared<tensor<128x64xf16, #s>>) -> !tile.shared<tensor<64x128xf16, #s>>
    return
  }
}

// -----

// ==== order is required. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module {
  func.func @f(%b: !tile.shared<tensor<128x64xf16, #s>>) {
    // expected-error@+1 {{requires attribute 'order' (array<i32: ...>, a permutation)}}
    %t = "tile.memdesc_trans"(%b) : (!tile.shared<tensor<128x64xf16, #s>>) -> !tile.shared<tensor<64x128xf16, #s>>
    return
  }
}

// -----

// ==== order is an i32 array. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module {
  func.func @f(%b: !tile.shared<tensor<128x64xf16, #s>>) {
    // expected-error@+1 {{'order' must be array<i32: ...>, got array<i64: 1, 0>}}
    %t = "tile.memdesc_trans"(%b) {order = array<i64: 1, 0>} : (!tile.shared<tensor<128x64xf16, #s>>) -> !tile.shared<tensor<64x128xf16, #s>>
    return
  }
}

// -----

// ==== the result shape is the source's permuted. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 0, 1>}>
module {
  func.func @f(%b: !tile.shared<tensor<128x64xf16, #s>>) {
    // expected-error@+1 {{must be the source's f16 block permuted by [1, 0]: shape [64, 128]}}
    %t = "tile.memdesc_trans"(%b) {order = array<i32: 1, 0>} : (!tile.shared<tensor<128x64xf16, #s>>) -> !tile.shared<tensor<128x64xf16, #t>>
    return
  }
}

// -----

// ==== the element type is kept. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 0, 1>}>
module {
  func.func @f(%b: !tile.shared<tensor<128x64xf16, #s>>) {
    // expected-error@+1 {{must be the source's f16 block permuted by [1, 0]}}
    %t = "tile.memdesc_trans"(%b) {order = array<i32: 1, 0>} : (!tile.shared<tensor<128x64xf16, #s>>) -> !tile.shared<tensor<64x128xbf16, #t>>
    return
  }
}

// -----

// ==== the result layout is the source's with the order renamed, not the same. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module {
  func.func @f(%b: !tile.shared<tensor<128x64xf16, #s>>) {
    // expected-error@+1 {{result layout #tile.padded_shared<{amount = 8 : i64, interval = 64 : i64, order = array<i64: 1, 0>}> must be the source's with its order renamed by [1, 0]: #tile.padded_shared<{amount = 8 : i64, interval = 64 : i64, order = array<i64: 0, 1>}>}}
    %t = "tile.memdesc_trans"(%b) {order = array<i32: 1, 0>} : (!tile.shared<tensor<128x64xf16, #s>>) -> !tile.shared<tensor<64x128xf16, #s>>
    return
  }
}

// -----

// ==== nor another padding. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 128, amount = 8, order = array<i64: 0, 1>}>
module {
  func.func @f(%b: !tile.shared<tensor<128x64xf16, #s>>) {
    // expected-error@+1 {{must be the source's with its order renamed by [1, 0]}}
    %t = "tile.memdesc_trans"(%b) {order = array<i32: 1, 0>} : (!tile.shared<tensor<128x64xf16, #s>>) -> !tile.shared<tensor<64x128xf16, #t>>
    return
  }
}

// -----

// ==== a ring must be indexed first. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module {
  func.func @f(%b: !tile.shared<tensor<2x128x64xf16, #s>>) {
    // expected-error@+1 {{the source is a ring of 2 buffers (its layout orders 2 of its 3 dims); take one with tile.memdesc_index first}}
    %t = "tile.memdesc_trans"(%b) {order = array<i32: 0, 2, 1>} : (!tile.shared<tensor<2x128x64xf16, #s>>) -> !tile.shared<tensor<2x64x128xf16, #s>>
    return
  }
}

// -----

// ==== a partitioned layout has no transposed view. ====
#p = #tile.partitioned_shared<{num_partitions = 2, num_groups = 1, partition_dim = 0, layout = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>}>
module {
  func.func @f(%b: !tile.shared<tensor<128x64xf16, #p>>) {
    // expected-error@+1 {{a partitioned shared layout has no transposed view}}
    %t = "tile.memdesc_trans"(%b) {order = array<i32: 1, 0>} : (!tile.shared<tensor<128x64xf16, #p>>) -> !tile.shared<tensor<64x128xf16, #p>>
    return
  }
}

// -----

// ==== rank 1 has nothing to transpose. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 0>}>
module {
  func.func @f(%b: !tile.shared<tensor<64xf16, #s>>) {
    // expected-error@+1 {{the source has rank 1; a transposed view needs rank 2 or more}}
    %t = "tile.memdesc_trans"(%b) {order = array<i32: 0>} : (!tile.shared<tensor<64xf16, #s>>) -> !tile.shared<tensor<64xf16, #s>>
    return
  }
}

// -----

// ==== a copy never writes through a transposed view. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 0, 1>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func @f(%d: !tile.tensor_desc<tensor<64x128xf16, #t>>, %b: !tile.shared<tensor<128x64xf16, #s>>) {
    %t = "tile.memdesc_trans"(%b) {order = array<i32: 1, 0>} : (!tile.shared<tensor<128x64xf16, #s>>) -> !tile.shared<tensor<64x128xf16, #t>>
    // expected-error@+1 {{dest is a transposed view (tile.memdesc_trans), which is read-only; write the block it views}}
    "tile.async_tdm_copy_global_to_local"(%d, %t) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!tile.tensor_desc<tensor<64x128xf16, #t>>, !tile.shared<tensor<64x128xf16, #t>>) -> ()
    return
  }
}

// -----

// ==== nor does a store from registers. ====
#s = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
#t = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 0, 1>}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%v: tensor<64x32xf16, #bl>, %b: !tile.shared<tensor<32x64xf16, #s>>) {
    %t = "tile.memdesc_trans"(%b) {order = array<i32: 1, 0>} : (!tile.shared<tensor<32x64xf16, #s>>) -> !tile.shared<tensor<64x32xf16, #t>>
    // expected-error@+1 {{dest is a transposed view (tile.memdesc_trans), which is read-only}}
    "tile.local_store"(%v, %t) : (tensor<64x32xf16, #bl>, !tile.shared<tensor<64x32xf16, #t>>) -> ()
    return
  }
}
