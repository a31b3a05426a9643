// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90})' | FileCheck %s

// cuda:90: a one-warp TMA producer (its own descriptor, 24 registers) and the
// default partition's four warps become ttg.warp_specialize.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ring = !tile.shared<tensor<2x64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
!bars = !tile.mbarrier_ring<2 : i32>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: tt.func private @producer_consumer
  func.func private @producer_consumer(%p: !tile.ptr<f16>, %n: i32, %ld: i64) -> tensor<64x64xf16, #bl> {
    %c0 = arith.constant 0 : i32
    %ring = "tile.local_alloc"() : () -> !ring
    %ready = "tile.barrier_alloc"() : () -> !bars
    %empty = "tile.barrier_alloc"() : () -> !bars
    %r0 = "tile.barrier_index"(%ready, %c0) : (!bars, i32) -> !tile.mbarrier<i64>
    "tile.barrier_init"(%r0) {count = 1 : i32} : (!tile.mbarrier<i64>) -> ()
    %e0 = "tile.barrier_index"(%empty, %c0) : (!bars, i32) -> !tile.mbarrier<i64>
    "tile.barrier_init"(%e0) {count = 1 : i32} : (!tile.mbarrier<i64>) -> ()
    // CHECK: %[[R:.*]] = ttg.warp_specialize(%arg0, %arg1, %arg2, %{{.*}}, %{{.*}}, %{{.*}}) attributes {requestedRegisters = array<i32: 24>}
    // CHECK-NEXT: default {
    // CHECK: ttng.wait_barrier
    // CHECK: ttg.local_load
    %v = "tile.warp_specialize"(%p, %n, %ld, %ring, %ready, %empty) ({
      %rb = "tile.barrier_index"(%ready, %c0) : (!bars, i32) -> !tile.mbarrier<i64>
      "tile.barrier_wait"(%rb, %c0) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
      %slot = "tile.memdesc_index"(%ring, %c0) : (!ring, i32) -> !buf
      %x = "tile.local_load"(%slot) : (!buf) -> tensor<64x64xf16, #bl>
      %eb = "tile.barrier_index"(%empty, %c0) : (!bars, i32) -> !tile.mbarrier<i64>
      "tile.barrier_arrive"(%eb) {operandSegmentSizes = array<i32: 1, 0>} : (!tile.mbarrier<i64>) -> ()
      // CHECK: ttg.warp_yield %{{.*}} : tensor<64x64xf16, #blocked>
      "tile.warp_yield"(%x) {operandSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<64x64xf16, #bl>) -> ()
    }, {
      "tile.warp_partition"() ({
      // CHECK: partition0(%{{.*}}: !tt.ptr<f16> {{.*}}, %{{.*}}: i32 {{.*}}, %{{.*}}: i64 {{.*}}, %{{.*}}: !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> {{.*}}) num_warps(1) {
      // CHECK: ttng.tensormap_create
      // CHECK: ttng.wait_barrier
      // CHECK: ttng.barrier_expect
      // CHECK: ttng.async_tma_copy_global_to_local
      ^bb0(%pp: !tile.ptr<f16>, %pn: i32, %pld: i64, %pring: !ring, %pready: !bars, %pempty: !bars):
        %z = arith.constant 0 : i32
        %one64 = arith.constant 1 : i64
        %pd = "tile.make_tensor_descriptor"(%pp, %pn, %pn, %pld, %one64) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
        %pe = "tile.barrier_index"(%pempty, %z) : (!bars, i32) -> !tile.mbarrier<i64>
        %one = arith.constant 1 : i32
        "tile.barrier_wait"(%pe, %one) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
        %pr = "tile.barrier_index"(%pready, %z) : (!bars, i32) -> !tile.mbarrier<i64>
        "tile.barrier_expect"(%pr) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!tile.mbarrier<i64>) -> ()
        %pslot = "tile.memdesc_index"(%pring, %z) : (!ring, i32) -> !buf
        "tile.async_tdm_copy_global_to_local"(%pd, %pslot, %pr) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
        // CHECK: ttg.warp_return
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32, num_regs = 24 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (!tile.ptr<f16>, i32, i64, !ring, !bars, !bars) -> tensor<64x64xf16, #bl>
    // CHECK: tt.return %[[R]]
    return %v : tensor<64x64xf16, #bl>
  }
}

