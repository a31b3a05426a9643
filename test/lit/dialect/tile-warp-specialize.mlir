// RUN: gemm-opt %s --split-input-file | FileCheck %s
// RUN: gemm-opt %s --split-input-file | gemm-opt --split-input-file | FileCheck %s

// A producer warp fills a two-slot ring through barrier-tracked copies; the
// default partition (the function's 4 warps) waits on each slot's ready
// barrier, reads it and gives the slot back on its empty barrier.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ring = !tile.shared<tensor<2x64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
!bars = !tile.mbarrier_ring<2 : i32>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  // CHECK-LABEL: func.func private @producer_consumer
  func.func private @producer_consumer(%d: !desc) -> tensor<64x64xf16, #bl> {
    %c0 = arith.constant 0 : i32
    %ring = "tile.local_alloc"() : () -> !ring
    %ready = "tile.barrier_alloc"() : () -> !bars
    %empty = "tile.barrier_alloc"() : () -> !bars
    %r0 = "tile.barrier_index"(%ready, %c0) : (!bars, i32) -> !tile.mbarrier<i64>
    "tile.barrier_init"(%r0) {count = 1 : i32} : (!tile.mbarrier<i64>) -> ()
    %e0 = "tile.barrier_index"(%empty, %c0) : (!bars, i32) -> !tile.mbarrier<i64>
    "tile.barrier_init"(%e0) {count = 1 : i32} : (!tile.mbarrier<i64>) -> ()
    // CHECK: %[[R:.*]] = "tile.warp_specialize"(%arg0, %{{.*}}, %{{.*}}, %{{.*}}) ({
    %v = "tile.warp_specialize"(%d, %ring, %ready, %empty) ({
      // CHECK: "tile.barrier_wait"
      %rb = "tile.barrier_index"(%ready, %c0) : (!bars, i32) -> !tile.mbarrier<i64>
      "tile.barrier_wait"(%rb, %c0) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
      %slot = "tile.memdesc_index"(%ring, %c0) : (!ring, i32) -> !buf
      %x = "tile.local_load"(%slot) : (!buf) -> tensor<64x64xf16, #bl>
      %eb = "tile.barrier_index"(%empty, %c0) : (!bars, i32) -> !tile.mbarrier<i64>
      "tile.barrier_arrive"(%eb) {operandSegmentSizes = array<i32: 1, 0>} : (!tile.mbarrier<i64>) -> ()
      // CHECK: "tile.warp_yield"(%{{.*}}) {operandSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<64x64xf16, #{{.*}}>) -> ()
      "tile.warp_yield"(%x) {operandSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<64x64xf16, #bl>) -> ()
    }, {
      // CHECK: "tile.warp_partition"() ({
      // CHECK-NEXT: ^bb0(%{{.*}}: !tile.tensor_desc<{{.*}}>, %{{.*}}: !tile.shared<{{.*}}>, %{{.*}}: !tile.mbarrier_ring<2 : i32>, %{{.*}}: !tile.mbarrier_ring<2 : i32>):
      "tile.warp_partition"() ({
      ^bb0(%pd: !desc, %pring: !ring, %pready: !bars, %pempty: !bars):
        %z = arith.constant 0 : i32
        %pe = "tile.barrier_index"(%pempty, %z) : (!bars, i32) -> !tile.mbarrier<i64>
        %one = arith.constant 1 : i32
        "tile.barrier_wait"(%pe, %one) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
        %pr = "tile.barrier_index"(%pready, %z) : (!bars, i32) -> !tile.mbarrier<i64>
        "tile.barrier_expect"(%pr) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!tile.mbarrier<i64>) -> ()
        %pslot = "tile.memdesc_index"(%pring, %z) : (!ring, i32) -> !buf
        // CHECK: "tile.async_tdm_copy_global_to_local"
        "tile.async_tdm_copy_global_to_local"(%pd, %pslot, %pr) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
        // CHECK: "tile.warp_return"() : () -> ()
        "tile.warp_return"() : () -> ()
      // CHECK: }) {num_regs = 24 : i32, num_warps = 1 : i32} : () -> ()
      }) {num_warps = 1 : i32, num_regs = 24 : i32} : () -> ()
      // CHECK: "tile.warp_partitions_end"() : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (!desc, !ring, !bars, !bars) -> tensor<64x64xf16, #bl>
    // CHECK: return %[[R]]
    return %v : tensor<64x64xf16, #bl>
  }
}

// -----

// Register layouts in a worker are for its own warps: two workers of 2 and
// 1 warps each lay out a tensor over their warps; no results.
#b2 = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 2, 1>, order = array<i64: 1, 0>}>
#b1 = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 1, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 8 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @own_layouts
  func.func @own_layouts(%p: !tile.ptr<f32>, %n: i32) {
    // CHECK: "tile.warp_specialize"(%arg0, %arg1)
    "tile.warp_specialize"(%p, %n) ({
      "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
    }, {
      // CHECK: num_warps = 2 : i32
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f32>, %m: i32):
        %z = arith.constant dense<0.0> : tensor<16x16xf32, #b2>
        "tile.warp_return"() : () -> ()
      }) {num_warps = 2 : i32} : () -> ()
      // CHECK: num_warps = 1 : i32
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f32>, %m: i32):
        %z = arith.constant dense<0.0> : tensor<16x16xf32, #b1>
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f32>, i32) -> ()
    return
  }
}

// -----

// The limits are inclusive: 16 + 16 warps fill cuda:90's 32 per workgroup,
// and num_regs takes both ends of setmaxnreg's range.
module attributes {tile.num_warps = 16 : i32, tile.target = "cuda:90"} {
  // CHECK-LABEL: func.func @at_the_limits
  func.func @at_the_limits(%p: !tile.ptr<f16>, %n: i32) {
    "tile.warp_specialize"(%p, %n) ({
      "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
    }, {
      // CHECK: {num_regs = 24 : i32, num_warps = 8 : i32}
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %m: i32):
        "tile.warp_return"() : () -> ()
      }) {num_warps = 8 : i32, num_regs = 24 : i32} : () -> ()
      // CHECK: {num_regs = 256 : i32, num_warps = 8 : i32}
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %m: i32):
        "tile.warp_return"() : () -> ()
      }) {num_warps = 8 : i32, num_regs = 256 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f16>, i32) -> ()
    return
  }
}
