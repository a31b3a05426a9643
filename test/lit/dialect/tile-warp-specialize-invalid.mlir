// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== A worker uses a value from outside: isolated from above. ====
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%p: !tile.ptr<f16>, %n: i32) {
    "tile.warp_specialize"(%p, %n) ({
      "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
    }, {
      // expected-error@+1 {{'tile.warp_partition' op uses %arg1, defined outside the partition ('arith.addi' uses it); worker partitions are isolated from above: pass it as an operand of the 'tile.warp_specialize' and use the block argument}}
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %m: i32):
        %s = arith.addi %n, %n : i32
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f16>, i32) -> ()
    return
  }
}

// -----

// ==== Block argument types must be the captured values' types. ====
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%p: !tile.ptr<f16>, %n: i32) {
    "tile.warp_specialize"(%p, %n) ({
      "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
    }, {
      // expected-error@+1 {{'tile.warp_partition' op block argument 1 has type i64 but the captured value has i32}}
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %m: i64):
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f16>, i32) -> ()
    return
  }
}

// -----

// ==== One block argument per captured value. ====
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%p: !tile.ptr<f16>, %n: i32) {
    "tile.warp_specialize"(%p, %n) ({
      "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
    }, {
      // expected-error@+1 {{'tile.warp_partition' op the block takes 1 arguments but the 'tile.warp_specialize' captures 2 values (one argument per captured value)}}
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>):
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f16>, i32) -> ()
    return
  }
}

// -----

// ==== num_warps is a power of two. ====
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%p: !tile.ptr<f16>, %n: i32) {
    "tile.warp_specialize"(%p, %n) ({
      "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
    }, {
      // expected-error@+1 {{'tile.warp_partition' op 'num_warps' must be a power of two >= 1, got 3}}
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %m: i32):
        "tile.warp_return"() : () -> ()
      }) {num_warps = 3 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f16>, i32) -> ()
    return
  }
}

// -----

// ==== num_regs is in setmaxnreg's range. ====
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%p: !tile.ptr<f16>, %n: i32) {
    "tile.warp_specialize"(%p, %n) ({
      "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
    }, {
      // expected-error@+1 {{'tile.warp_partition' op 'num_regs' must be a multiple of 8 from 24 to 256 (setmaxnreg's range), got 20}}
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %m: i32):
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32, num_regs = 20 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f16>, i32) -> ()
    return
  }
}

// -----

// ==== The default partition's and the workers' warps fit the workgroup. ====
module attributes {tile.num_warps = 16 : i32, tile.target = "cuda:90"} {
  func.func @f(%p: !tile.ptr<f16>, %n: i32) {
    // expected-error@+1 {{'tile.warp_specialize' op needs 48 warps (tile.num_warps = 16 for the default partition + 32 for the workers), but cuda:90 launches at most 32 per workgroup}}
    "tile.warp_specialize"(%p, %n) ({
      "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
    }, {
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %m: i32):
        "tile.warp_return"() : () -> ()
      }) {num_warps = 32 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f16>, i32) -> ()
    return
  }
}

// -----

// ==== No nested warp_specialize. ====
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%p: !tile.ptr<f16>, %n: i32) {
    "tile.warp_specialize"(%p, %n) ({
      "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
    }, {
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %m: i32):
        // expected-error@+1 {{'tile.warp_specialize' op is nested in another 'tile.warp_specialize'; partitions cannot be specialized again (Triton has no nested warp specialization)}}
        "tile.warp_specialize"(%q, %m) ({
          "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
        }, {
          "tile.warp_partition"() ({
          ^bb0(%q2: !tile.ptr<f16>, %m2: i32):
            "tile.warp_return"() : () -> ()
          }) {num_warps = 1 : i32} : () -> ()
          "tile.warp_partitions_end"() : () -> ()
        }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f16>, i32) -> ()
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f16>, i32) -> ()
    return
  }
}

// -----

// ==== Workers capture no register tensors. ====
#b = #tile.blocked<{size_per_thread = array<i64: 1>, threads_per_warp = array<i64: 32>, warps_per_cta = array<i64: 4>, order = array<i64: 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%p: !tile.ptr<f16>, %t: tensor<32xf32, #b>) {
    // expected-error@+1 {{'tile.warp_specialize' op captures %arg1 (operand 1) of register tensor type tensor<32xf32, #tile.blocked<{order = array<i64: 0>, size_per_thread = array<i64: 1>, threads_per_warp = array<i64: 32>, warps_per_cta = array<i64: 4>}>>; worker partitions capture scalars, pointers, shared buffers, barriers and descriptors only (store a tensor to a shared buffer and pass that)}}
    "tile.warp_specialize"(%p, %t) ({
      "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
    }, {
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %u: tensor<32xf32, #b>):
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f16>, tensor<32xf32, #b>) -> ()
    return
  }
}

// -----

// ==== The default partition yields what the op returns. ====
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%p: !tile.ptr<f16>, %n: i32) {
    // expected-error@+1 {{'tile.warp_specialize' op the default region yields (i32) but the op returns (i64)}}
    %r = "tile.warp_specialize"(%p, %n) ({
      "tile.warp_yield"(%n) {operandSegmentSizes = array<i32: 1, 0, 0, 0>} : (i32) -> ()
    }, {
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %m: i32):
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (!tile.ptr<f16>, i32) -> i64
    return
  }
}

// -----

// ==== The default region ends in tile.warp_yield. ====
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%p: !tile.ptr<f16>, %n: i32) {
    // expected-error@+1 {{'tile.warp_specialize' op the default region must end with 'tile.warp_yield'}}
    "tile.warp_specialize"(%p, %n) ({
      "tile.warp_partitions_end"() : () -> ()
    }, {
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %m: i32):
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f16>, i32) -> ()
    return
  }
}

// -----

// ==== A partition's layouts are for its own warps. ====
#b = #tile.blocked<{size_per_thread = array<i64: 1>, threads_per_warp = array<i64: 32>, warps_per_cta = array<i64: 4>, order = array<i64: 0>}>
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%p: !tile.ptr<f16>, %n: i32) {
    "tile.warp_specialize"(%p, %n) ({
      "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
    }, {
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %m: i32):
        %buf = "tile.local_alloc"() : () -> !tile.shared<tensor<32xf32, #s>>
        // expected-error@+1 {{covers 4 warps, but its worker partition has num_warps = 1}}
        %z = "tile.local_load"(%buf) : (!tile.shared<tensor<32xf32, #s>>) -> tensor<32xf32, #b>
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f16>, i32) -> ()
    return
  }
}

// -----

// ==== tile.warp_partition lives in a tile.warp_specialize. ====
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%p: !tile.ptr<f16>, %n: i32) {
    // expected-error@+1 {{'tile.warp_partition' op must be in a 'tile.warp_specialize' partitions region, not 'func.func'}}
    "tile.warp_partition"() ({
    ^bb0:
      "tile.warp_return"() : () -> ()
    }) {num_warps = 1 : i32} : () -> ()
    return
  }
}

// -----

// ==== The partitions region ends in tile.warp_partitions_end. ====
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%p: !tile.ptr<f16>, %n: i32) {
    // expected-error@+1 {{'tile.warp_specialize' op the partitions region must end with 'tile.warp_partitions_end'}}
    "tile.warp_specialize"(%p, %n) ({
      "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
    }, {
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %m: i32):
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32} : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f16>, i32) -> ()
    return
  }
}

// -----

// ==== A worker partition ends in tile.warp_return. ====
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%p: !tile.ptr<f16>, %n: i32) {
    "tile.warp_specialize"(%p, %n) ({
      "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
    }, {
      // expected-error@+1 {{'tile.warp_partition' op the partition must end with 'tile.warp_return'}}
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %m: i32):
        %c = arith.constant 0 : i32
      }) {num_warps = 1 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f16>, i32) -> ()
    return
  }
}

// -----

// ==== A worker partition states its num_warps. ====
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%p: !tile.ptr<f16>, %n: i32) {
    "tile.warp_specialize"(%p, %n) ({
      "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
    }, {
      // expected-error@+1 {{'tile.warp_partition' op requires attribute 'num_warps'}}
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %m: i32):
        "tile.warp_return"() : () -> ()
      }) : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f16>, i32) -> ()
    return
  }
}

// -----

// ==== num_regs below setmaxnreg's range, though a multiple of 8. ====
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%p: !tile.ptr<f16>, %n: i32) {
    "tile.warp_specialize"(%p, %n) ({
      "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
    }, {
      // expected-error@+1 {{'tile.warp_partition' op 'num_regs' must be a multiple of 8 from 24 to 256 (setmaxnreg's range), got 16}}
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %m: i32):
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32, num_regs = 16 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f16>, i32) -> ()
    return
  }
}

// -----

// ==== num_regs above setmaxnreg's range, though a multiple of 8. ====
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%p: !tile.ptr<f16>, %n: i32) {
    "tile.warp_specialize"(%p, %n) ({
      "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
    }, {
      // expected-error@+1 {{'tile.warp_partition' op 'num_regs' must be a multiple of 8 from 24 to 256 (setmaxnreg's range), got 264}}
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %m: i32):
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32, num_regs = 264 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f16>, i32) -> ()
    return
  }
}
