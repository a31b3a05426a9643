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

// ==== A padding interval fits the row: 96-element rows hold no whole number of 64-element intervals. ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @padded_interval_row() {
    // expected-error@+1 {{padded layout interval = 64 does not fit the 96-element row (dimension 1, the layout's fastest): a row must hold whole intervals, or an interval whole rows, so that every row starts on a padding boundary}}
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<128x96xf16, #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>>>
    return
  }
}

// -----

// ==== The row is the layout's fastest dim (here dim 0), of a descriptor's block too. ====
module attributes {tile.num_warps = 8 : i32} {
  // expected-error@+1 {{padded layout interval = 32 does not fit the 48-element row (dimension 0, the layout's fastest)}}
  func.func @padded_interval_order(%d: !tile.tensor_desc<tensor<48x64xf16, #tile.padded_shared<{interval = 32, amount = 8, order = array<i64: 0, 1>}>>>) {
    return
  }
}

// -----

// ==== A partitioned layout cut along the row: the row of each piece (96 / 2 = 48) is what the interval fits. ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @padded_interval_piece() {
    // expected-error@+1 {{padded layout interval = 32 does not fit the 48-element row of each of 2 pieces (dimension 1, the layout's fastest)}}
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<64x96xf16, #tile.partitioned_shared<{num_partitions = 2, num_groups = 1, partition_dim = 1, layout = #tile.padded_shared<{interval = 32, amount = 8, order = array<i64: 1, 0>}>}>>>
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

// -----

// ==== A shared layout's order is a permutation (Triton aborts on [0, 0]). ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @order_not_permutation() {
    // expected-error@+1 {{order [0, 0] must be a permutation of 0..1 (each dimension exactly once)}}
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<128x64xf16, #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 0, 0>}>>>
    return
  }
}

// -----

// ==== A shared layout's order has one entry per laid-out dimension. ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @order_rank() {
    // expected-error@+1 {{order [2, 1, 0] has 3 entries but a 128x64 buffer needs 2 or 1}}
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<128x64xf16, #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 2, 1, 0>}>>>
    return
  }
}

// -----

// ==== Swizzle fields are powers of two (a vec of 0 reached Triton). ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @swizzle_vec_zero() {
    // expected-error@+1 {{swizzled layout vec = 0 must be a power of two >= 1}}
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<128x64xf16, #tile.swizzled_shared<{vec = 0, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>>>
    return
  }
}

// -----

// ==== A padded interval of 1 pads after every element. ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @padded_interval_one() {
    // expected-error@+1 {{padded layout interval = 1 pads after every element; it must be at least 2}}
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<128x64xf16, #tile.padded_shared<{interval = 1, amount = 8, order = array<i64: 1, 0>}>>>
    return
  }
}

// -----

// ==== Partitions split the partition dimension evenly. ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @partition_split() {
    // expected-error@+1 {{dimension 0 of size 2 does not split into 4 pieces (num_partitions x num_groups)}}
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<2x64xf16, #tile.partitioned_shared<{num_partitions = 2, num_groups = 2, partition_dim = 0}>>>
    return
  }
}

// -----

// ==== Shared buffers hold memory element types (no index, no i1). ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @alloc_index() {
    // expected-error@+1 {{a shared buffer must have one of the element types i8, i16, i32, i64, f16, bf16, f32, f64, f8E4M3FN, f8E5M2, f8E4M3FNUZ, f8E5M2FNUZ, f8E8M0FNU; got index}}
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<128x64xindex, #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>>>
    return
  }
}

// -----

// ==== A buffer larger than the target's LDS: 512x512 fp16 padded is 589,808 bytes. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @too_big() {
    // expected-error@+1 {{a 512x512 buffer takes 589808 bytes of shared memory, but gfx1250 has 327680 per workgroup}}
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<512x512xf16, #s>>
    return
  }
}

// -----

// ==== Without a target, a buffer no target can hold is rejected too. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @too_big_anywhere() {
    // expected-error@+1 {{a 1024x512 buffer takes 1048576 bytes of shared memory, but gfx1250 has 327680 per workgroup}}
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<1024x512xf16, #s>>
    return
  }
}

// -----

// ==== A function's buffers together must fit: 2 x 40 KiB is over gfx942's 64 KiB. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx942"} {
  func.func @sum_too_big(%c: i1) {
    %a = "tile.local_alloc"() : () -> !tile.shared<tensor<160x128xf16, #s>>
    scf.if %c {
      // expected-error@+1 {{the function's shared buffers take 81920 bytes up to this 160x128 buffer (40960 before it), but gfx942 has 65536 per workgroup}}
      %b = "tile.local_alloc"() : () -> !tile.shared<tensor<160x128xf16, #s>>
    }
    return
  }
}

// -----

// ==== A constant memdesc_index is in range. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @index_out_of_range(%b: !tile.shared<tensor<2x128x64xf16, #s>>) {
    %c5 = arith.constant 5 : i32
    // expected-error@+1 {{index 5 is out of range for 2 buffers (0 to 1)}}
    %x = "tile.memdesc_index"(%b, %c5) : (!tile.shared<tensor<2x128x64xf16, #s>>, i32) -> !tile.shared<tensor<128x64xf16, #s>>
    return
  }
}

// -----

// ==== Unknown attributes on tile ops are errors. ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @alloc_attr() {
    // expected-error@+1 {{unknown attribute 'tile.warp_layout' (it takes: none)}}
    %b = "tile.local_alloc"() {tile.warp_layout = 1 : i32} : () -> !tile.shared<tensor<128x64xf16, #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>>>
    return
  }
}
