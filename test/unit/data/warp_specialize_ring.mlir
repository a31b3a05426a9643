// A producer partition of one warp fills a two-slot ring with barrier-tracked
// copies of A's 64x32 column tiles; the default partition (the program's four
// warps) waits for each slot's `ready` phase, sums the tile and gives the slot
// back on its `empty` barrier. C = the sum of the tiles, stored with TDM.
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<64x32xf16, #s>>
!dc = !tile.tensor_desc<tensor<64x32xf32, #s>>
!ring = !tile.shared<tensor<2x64x32xf16, #s>>
!stage = !tile.shared<tensor<64x32xf16, #s>>
!bars = !tile.mbarrier_ring<2 : i32>
!bar = !tile.mbarrier<i64>
!acc = tensor<64x32xf32, #bl>
module attributes {tile.num_warps = 4 : i32} {
  func.func @ws_sum(%a: !tile.ptr<f16>, %c: !tile.ptr<f32>, %m: i32, %k: i32, %lda: i64, %ldc: i64, %tiles: i32) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    %ring = "tile.local_alloc"() : () -> !ring
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
    %zero = arith.constant dense<0.0> : !acc
    %total = "tile.warp_specialize"(%a, %m, %k, %lda, %tiles, %ring, %ready, %empty) ({
      // The consumer: tile i is in slot i % 2, phase (i / 2) % 2 of its barriers.
      %c2 = arith.constant 2 : i32
      %sum = scf.for %i = %c0 to %tiles step %c1 iter_args(%acc = %zero) -> (!acc) : i32 {
        %s = arith.remsi %i, %c2 : i32
        %use = arith.divsi %i, %c2 : i32
        %ph = arith.remsi %use, %c2 : i32
        %rb = "tile.barrier_index"(%ready, %s) : (!bars, i32) -> !bar
        "tile.barrier_wait"(%rb, %ph) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!bar, i32) -> ()
        %st = "tile.memdesc_index"(%ring, %s) : (!ring, i32) -> !stage
        %x = "tile.local_load"(%st) : (!stage) -> tensor<64x32xf16, #bl>
        %eb = "tile.barrier_index"(%empty, %s) : (!bars, i32) -> !bar
        "tile.barrier_arrive"(%eb) {operandSegmentSizes = array<i32: 1, 0>} : (!bar) -> ()
        %xf = arith.extf %x : tensor<64x32xf16, #bl> to !acc
        %next = arith.addf %acc, %xf : !acc
        scf.yield %next : !acc
      }
      "tile.warp_yield"(%sum) {operandSegmentSizes = array<i32: 1, 0, 0, 0>} : (!acc) -> ()
    }, {
      // The producer: wait until slot i % 2 is empty (a fresh barrier has
      // completed the phase before 0), announce its bytes, copy tile i.
      "tile.warp_partition"() ({
      ^bb0(%pa: !tile.ptr<f16>, %pm: i32, %pk: i32, %plda: i64, %ptiles: i32, %pring: !ring, %pready: !bars, %pempty: !bars):
        %z = arith.constant 0 : i32
        %u = arith.constant 1 : i32
        %two = arith.constant 2 : i32
        %w = arith.constant 32 : i32
        %unit = arith.constant 1 : i64
        %da = "tile.make_tensor_descriptor"(%pa, %pm, %pk, %plda, %unit) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
        scf.for %i = %z to %ptiles step %u : i32 {
          %s = arith.remsi %i, %two : i32
          %use = arith.divsi %i, %two : i32
          %ph = arith.remsi %use, %two : i32
          %free = arith.xori %ph, %u : i32
          %eb = "tile.barrier_index"(%pempty, %s) : (!bars, i32) -> !bar
          "tile.barrier_wait"(%eb, %free) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!bar, i32) -> ()
          %rb = "tile.barrier_index"(%pready, %s) : (!bars, i32) -> !bar
          "tile.barrier_expect"(%rb) {operandSegmentSizes = array<i32: 1, 0>, bytes = 4096 : i32} : (!bar) -> ()
          %col = arith.muli %i, %w : i32
          %dn = "tile.update_tensor_descriptor"(%da, %z, %col) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!da, i32, i32) -> !da
          %sn = "tile.memdesc_index"(%pring, %s) : (!ring, i32) -> !stage
          "tile.async_tdm_copy_global_to_local"(%dn, %sn, %rb) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!da, !stage, !bar) -> ()
        }
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (!tile.ptr<f16>, i32, i32, i64, i32, !ring, !bars, !bars) -> !acc
    // Epilogue: registers into shared memory, then one TDM store.
    %dc = "tile.make_tensor_descriptor"(%c, %m, %c32, %ldc, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64) -> !dc
    %cbuf = "tile.local_alloc"() : () -> !tile.shared<tensor<64x32xf32, #s>>
    "tile.local_store"(%total, %cbuf) : (!acc, !tile.shared<tensor<64x32xf32, #s>>) -> ()
    "tile.async_tdm_copy_local_to_global"(%dc, %cbuf) : (!dc, !tile.shared<tensor<64x32xf32, #s>>) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
