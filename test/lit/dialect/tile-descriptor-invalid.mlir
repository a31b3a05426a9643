// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== make_tensor_descriptor: one shape and stride per block dimension. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @shape_count(%p: !tile.ptr<f16>, %m: i32, %s: i64) {
    // expected-error@+1 {{expects 2 shape and 2 stride operands for a rank-2 block, got 1 and 1}}
    %d = "tile.make_tensor_descriptor"(%p, %m, %s) {operandSegmentSizes = array<i32: 1, 1, 1>} : (!tile.ptr<f16>, i32, i64) -> !tile.tensor_desc<tensor<128x64xf16, #s>>
    return
  }
}

// -----

// ==== make_tensor_descriptor: shapes are i32. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @shape_type(%p: !tile.ptr<f16>, %m: i64, %s: i64) {
    // expected-error@+1 {{shape operands must be i32, got i64}}
    %d = "tile.make_tensor_descriptor"(%p, %m, %m, %s, %s) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i64, i64, i64, i64) -> !tile.tensor_desc<tensor<128x64xf16, #s>>
    return
  }
}

// -----

// ==== make_tensor_descriptor: strides are i64. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @stride_type(%p: !tile.ptr<f16>, %m: i32) {
    // expected-error@+1 {{stride operands must be i64, got i32}}
    %d = "tile.make_tensor_descriptor"(%p, %m, %m, %m, %m) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i32, i32) -> !tile.tensor_desc<tensor<128x64xf16, #s>>
    return
  }
}

// -----

// ==== make_tensor_descriptor: the pointee is the block's element type. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @pointee(%p: !tile.ptr<f32>, %m: i32, %s: i64) {
    // expected-error@+1 {{base points to f32 but the block holds f16}}
    %d = "tile.make_tensor_descriptor"(%p, %m, %m, %s, %s) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64) -> !tile.tensor_desc<tensor<128x64xf16, #s>>
    return
  }
}

// -----

// ==== make_tensor_descriptor: TDM blocks have rank 1 to 5. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 5, 4, 3, 2, 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @rank6(%p: !tile.ptr<f16>, %m: i32, %s: i64) {
    // expected-error@+1 {{TDM blocks have rank 1 to 5, got rank 6}}
    %d = "tile.make_tensor_descriptor"(%p, %m, %m, %m, %m, %m, %m, %s, %s, %s, %s, %s, %s) {operandSegmentSizes = array<i32: 1, 6, 6>} : (!tile.ptr<f16>, i32, i32, i32, i32, i32, i32, i64, i64, i64, i64, i64, i64) -> !tile.tensor_desc<tensor<1x1x1x1x2x2xf16, #s>>
    return
  }
}

// -----

// ==== update_tensor_descriptor: one offset per dimension. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d = !tile.tensor_desc<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @offsets(%d: !d, %o: i32) {
    // expected-error@+1 {{expects 2 offsets, got 1}}
    %u = "tile.update_tensor_descriptor"(%d, %o) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!d, i32) -> !d
    return
  }
}

// -----

// ==== update_tensor_descriptor: zero or rank bounds. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d = !tile.tensor_desc<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @bounds(%d: !d, %o: i32) {
    // expected-error@+1 {{expects 0 or 2 bounds, got 1}}
    %u = "tile.update_tensor_descriptor"(%d, %o, %o, %o) {operandSegmentSizes = array<i32: 1, 2, 1, 0>} : (!d, i32, i32, i32) -> !d
    return
  }
}

// -----

// ==== update_tensor_descriptor: the predicate is i1. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d = !tile.tensor_desc<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @pred(%d: !d, %o: i32) {
    // expected-error@+1 {{pred must be i1, got i32}}
    %u = "tile.update_tensor_descriptor"(%d, %o, %o, %o) {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!d, i32, i32, i32) -> !d
    return
  }
}

// -----

// ==== update_tensor_descriptor: the result type is the operand type. ====
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d = !tile.tensor_desc<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @result_type(%d: !d, %o: i32) {
    // expected-error@+1 {{result type must equal the descriptor operand's type}}
    %u = "tile.update_tensor_descriptor"(%d, %o, %o) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!d, i32, i32) -> !tile.tensor_desc<tensor<64x64xf16, #s>>
    return
  }
}

// -----

// ==== make_tensor_descriptor: TDM needs the constant 1 as the innermost stride. ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @inner_stride(%p: !tile.ptr<f16>, %m: i32, %s: i64) {
    // expected-error@+1 {{TDM descriptors on gfx1250 need a unit innermost stride: the last stride must be the constant 1, got a runtime value}}
    %d = "tile.make_tensor_descriptor"(%p, %m, %m, %s, %s) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !tile.tensor_desc<tensor<128x64xf16, #s>>
    return
  }
}

// -----

// ==== make_tensor_descriptor: TDM moves memory element types (no index). ====
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @index_desc(%p: !tile.ptr<index>, %m: i32, %s: i64) {
    %one = arith.constant 1 : i64
    // expected-error@+1 {{a TDM descriptor must have one of the element types i8, i16, i32, i64, f16, bf16, f32, f64, f8E4M3FN, f8E5M2, f8E4M3FNUZ, f8E5M2FNUZ, f8E8M0FNU; got index}}
    %d = "tile.make_tensor_descriptor"(%p, %m, %m, %s, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<index>, i32, i32, i64, i64) -> !tile.tensor_desc<tensor<128x64xindex, #s>>
    return
  }
}
