// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== local_alloc: the buffer names a shared layout. ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @alloc_no_layout() {
    // expected-error@+1 {{needs a #tile.*_shared layout}}
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<128x64xf16>>
    return
  }
}

// -----

// ==== Layout attributes reject unknown fields and name the known ones. ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @unknown_field() {
    // expected-error@+1 {{#tile.swizzled_shared has no field 'vex' (fields: vec, per_phase, max_phase, order)}}
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<128x64xf16, #tile.swizzled_shared<{vex = 8}>>>
    return
  }
}

// -----

// ==== Layout fields are typed. ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @field_type() {
    // expected-error@+1 {{#tile.swizzled_shared field 'order' must be array<i64: ...>}}
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<128x64xf16, #tile.swizzled_shared<{order = 1}>>>
    return
  }
}

// -----

// ==== Padding intervals are powers of two. ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @padded_interval() {
    // expected-error@+1 {{'interval' and 'amount' must be powers of two, got 48 and 8}}
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<128x64xf16, #tile.padded_shared<{interval = 48, amount = 8}>>>
    return
  }
}

// -----

// ==== A partitioned layout's partition_dim must exist. ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @partition_dim() {
    // expected-error@+1 {{partition_dim 2 is out of range for a rank-2 block}}
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<128x64xf16, #tile.partitioned_shared<{num_partitions = 2, num_groups = 1, partition_dim = 2}>>>
    return
  }
}

// -----

// ==== memdesc_index drops exactly the leading dimension. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @index_shape(%b: !tile.shared<tensor<2x128x64xf16, #s>>, %i: i32) {
    // expected-error@+1 {{result shape [64, 64] must be the source shape [2, 128, 64] without its leading dimension}}
    %x = "tile.memdesc_index"(%b, %i) : (!tile.shared<tensor<2x128x64xf16, #s>>, i32) -> !tile.shared<tensor<64x64xf16, #s>>
    return
  }
}

// -----

// ==== memdesc_index takes an i32 index. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @index_type(%b: !tile.shared<tensor<2x128x64xf16, #s>>, %i: i64) {
    // expected-error@+1 {{index must be i32, got i64}}
    %x = "tile.memdesc_index"(%b, %i) : (!tile.shared<tensor<2x128x64xf16, #s>>, i64) -> !tile.shared<tensor<128x64xf16, #s>>
    return
  }
}

// -----

// ==== local_load keeps shape and element type. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @load_shape(%b: !tile.shared<tensor<128x64xf16, #s>>) {
    // expected-error@+1 {{must match the buffer's shape [128, 64] and element type f16}}
    %t = "tile.local_load"(%b) : (!tile.shared<tensor<128x64xf16, #s>>) -> tensor<64x64xf16>
    return
  }
}
