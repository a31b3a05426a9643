// C (64x64) = A (64xK) @ B (Kx64) with a warp-specialized ring: a one-warp
// producer partition copies each K slice of A and B into a two-slot ring,
// tracked by the slot's `ready` barrier; the default partition waits for it,
// issues an asynchronous MMA on the slot, retires it and only then gives the
// slot back on `empty`.
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
!da = !tile.tensor_desc<tensor<64x32xf16, #s>>
!db = !tile.tensor_desc<tensor<32x64xf16, #s>>
!dc = !tile.tensor_desc<tensor<64x64xf32, #s>>
!ra = !tile.shared<tensor<2x64x32xf16, #s>>
!rb = !tile.shared<tensor<2x32x64xf16, #s>>
!sa = !tile.shared<tensor<64x32xf16, #s>>
!sb = !tile.shared<tensor<32x64xf16, #s>>
!bars = !tile.mbarrier_ring<2 : i32>
!bar = !tile.mbarrier<i64>
!t = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32} {
  func.func @ws_gemm(%a: !tile.ptr<f16>, %b: !tile.ptr<f16>, %c: !tile.ptr<f32>, %k: i32, %lda: i64, %ldb: i64, %ldc: i64) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    %c64 = arith.constant 64 : i32
    %ra = "tile.local_alloc"() : () -> !ra
    %rb = "tile.local_alloc"() : () -> !rb
    %ready = "tile.barrier_alloc"() : () -> !bars
    %empty = "tile.barrier_alloc"() : () -> !bars
    %r0 = "tile.barrier_index"(%ready, %c0) : (!bars, i32) -> !bar
    %r1 = "tile.barrier_index"(%ready, %c1) : (!bars, i32) -> !bar
    %e0 = "tile.barrier_index"(%empty, %c0) : (!bars, i32) -> !bar
    %e1 = "tile.barrier_index"(%empty, %c1) : (!bars, i32) -> !bar
    "tile.barrier_init"(%r0) {count = 1 : i32} : (!bar) -> ()
    "tile.barrier_init"(%r1) {count = 1 : i32} : (!bar) -> ()
    "tile.barrier_init"(%e0) {count = 1 : i32} : (!bar) -> ()
    "tile.barrier_init"(%e1) {count = 1 : i32} : (!bar) -> ()
    %tiles = arith.divsi %k, %c32 : i32
    %zero = arith.constant dense<0.0> : !t
    %total = "tile.warp_specialize"(%a, %b, %k, %lda, %ldb, %tiles, %ra, %rb, %ready, %empty) ({
      %c2 = arith.constant 2 : i32
      %sum = scf.for %i = %c0 to %tiles step %c1 iter_args(%acc = %zero) -> (!t) : i32 {
        %s = arith.remsi %i, %c2 : i32
        %use = arith.divsi %i, %c2 : i32
        %ph = arith.remsi %use, %c2 : i32
        %rdy = "tile.barrier_index"(%ready, %s) : (!bars, i32) -> !bar
        "tile.barrier_wait"(%rdy, %ph) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!bar, i32) -> ()
        %xa = "tile.memdesc_index"(%ra, %s) : (!ra, i32) -> !sa
        %xb = "tile.memdesc_index"(%rb, %s) : (!rb, i32) -> !sb
        %d = "tile.async_wmma"(%xa, %xb, %acc) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!sa, !sb, !t) -> !t
        %w = "tile.async_wmma_wait"(%d) {num = 0 : i32} : (!t) -> !t
        %emp = "tile.barrier_index"(%empty, %s) : (!bars, i32) -> !bar
        "tile.barrier_arrive"(%emp) {operandSegmentSizes = array<i32: 1, 0>} : (!bar) -> ()
        scf.yield %w : !t
      }
      "tile.warp_yield"(%sum) {operandSegmentSizes = array<i32: 1, 0, 0, 0>} : (!t) -> ()
    }, {
      "tile.warp_partition"() ({
      ^bb0(%pa: !tile.ptr<f16>, %pb: !tile.ptr<f16>, %pk: i32, %plda: i64, %pldb: i64, %ptiles: i32, %pra: !ra, %prb: !rb, %pready: !bars, %pempty: !bars):
        %z = arith.constant 0 : i32
        %u = arith.constant 1 : i32
        %two = arith.constant 2 : i32
        %w = arith.constant 32 : i32
        %m = arith.constant 64 : i32
        %unit = arith.constant 1 : i64
        %da = "tile.make_tensor_descriptor"(%pa, %m, %pk, %plda, %unit) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
        %db = "tile.make_tensor_descriptor"(%pb, %pk, %m, %pldb, %unit) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !db
        scf.for %i = %z to %ptiles step %u : i32 {
          %s = arith.remsi %i, %two : i32
          %use = arith.divsi %i, %two : i32
          %ph = arith.remsi %use, %two : i32
          %free = arith.xori %ph, %u : i32
          %emp = "tile.barrier_index"(%pempty, %s) : (!bars, i32) -> !bar
          "tile.barrier_wait"(%emp, %free) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!bar, i32) -> ()
          %rdy = "tile.barrier_index"(%pready, %s) : (!bars, i32) -> !bar
          "tile.barrier_expect"(%rdy) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!bar) -> ()
          %off = arith.muli %i, %w : i32
          %dai = "tile.update_tensor_descriptor"(%da, %z, %off) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!da, i32, i32) -> !da
          %dbi = "tile.update_tensor_descriptor"(%db, %off, %z) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!db, i32, i32) -> !db
          %xa = "tile.memdesc_index"(%pra, %s) : (!ra, i32) -> !sa
          %xb = "tile.memdesc_index"(%prb, %s) : (!rb, i32) -> !sb
          "tile.async_tdm_copy_global_to_local"(%dai, %xa, %rdy) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!da, !sa, !bar) -> ()
          "tile.async_tdm_copy_global_to_local"(%dbi, %xb, %rdy) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!db, !sb, !bar) -> ()
        }
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (!tile.ptr<f16>, !tile.ptr<f16>, i32, i64, i64, i32, !ra, !rb, !bars, !bars) -> !t
    %dc = "tile.make_tensor_descriptor"(%c, %c64, %c64, %ldc, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64) -> !dc
    %cbuf = "tile.local_alloc"() : () -> !tile.shared<tensor<64x64xf32, #s>>
    "tile.local_store"(%total, %cbuf) : (!t, !tile.shared<tensor<64x64xf32, #s>>) -> ()
    "tile.async_tdm_copy_local_to_global"(%dc, %cbuf) : (!dc, !tile.shared<tensor<64x64xf32, #s>>) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
