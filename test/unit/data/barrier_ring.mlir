// A two-stage ring with one barrier per stage: tile i + 1 is copied while
// tile i is summed. C = the sum of A's 64x32 column tiles, stored with TDM.
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
  func.func @ring_sum(%a: !tile.ptr<f16>, %c: !tile.ptr<f32>, %m: i32, %k: i32, %lda: i64, %ldc: i64, %tiles: i32) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c32 = arith.constant 32 : i32
    %da = "tile.make_tensor_descriptor"(%a, %m, %k, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %dc = "tile.make_tensor_descriptor"(%c, %m, %c32, %ldc, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64) -> !dc
    %ring = "tile.local_alloc"() : () -> !ring
    %bars = "tile.barrier_alloc"() : () -> !bars
    %bar0 = "tile.barrier_index"(%bars, %c0) : (!bars, i32) -> !bar
    %bar1 = "tile.barrier_index"(%bars, %c1) : (!bars, i32) -> !bar
    "tile.barrier_init"(%bar0) {count = 1 : i32} : (!bar) -> ()
    "tile.barrier_init"(%bar1) {count = 1 : i32} : (!bar) -> ()
    // Prologue: tile 0 into stage 0.
    %s0 = "tile.memdesc_index"(%ring, %c0) : (!ring, i32) -> !stage
    "tile.barrier_expect"(%bar0) {operandSegmentSizes = array<i32: 1, 0>, bytes = 4096 : i32} : (!bar) -> ()
    "tile.async_tdm_copy_global_to_local"(%da, %s0, %bar0) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!da, !stage, !bar) -> ()
    %zero = arith.constant dense<0.0> : !acc
    %last = arith.subi %tiles, %c1 : i32
    %sum = scf.for %i = %c0 to %last step %c1 iter_args(%acc = %zero) -> (!acc) : i32 {
      // Issue tile i + 1 into stage (i + 1) % 2 ...
      %n = arith.addi %i, %c1 : i32
      %ns = arith.remsi %n, %c2 : i32
      %col = arith.muli %n, %c32 : i32
      %dn = "tile.update_tensor_descriptor"(%da, %c0, %col) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!da, i32, i32) -> !da
      %bn = "tile.barrier_index"(%bars, %ns) : (!bars, i32) -> !bar
      %sn = "tile.memdesc_index"(%ring, %ns) : (!ring, i32) -> !stage
      "tile.barrier_expect"(%bn) {operandSegmentSizes = array<i32: 1, 0>, bytes = 4096 : i32} : (!bar) -> ()
      "tile.async_tdm_copy_global_to_local"(%dn, %sn, %bn) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!da, !stage, !bar) -> ()
      // ... while tile i, in stage i % 2, is summed once its phase (i / 2) % 2 completes.
      %s = arith.remsi %i, %c2 : i32
      %use = arith.divsi %i, %c2 : i32
      %ph = arith.remsi %use, %c2 : i32
      %b = "tile.barrier_index"(%bars, %s) : (!bars, i32) -> !bar
      "tile.barrier_wait"(%b, %ph) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!bar, i32) -> ()
      %st = "tile.memdesc_index"(%ring, %s) : (!ring, i32) -> !stage
      %x = "tile.local_load"(%st) : (!stage) -> tensor<64x32xf16, #bl>
      %xf = arith.extf %x : tensor<64x32xf16, #bl> to !acc
      %next = arith.addf %acc, %xf : !acc
      scf.yield %next : !acc
    }
    // The last tile.
    %s = arith.remsi %last, %c2 : i32
    %use = arith.divsi %last, %c2 : i32
    %ph = arith.remsi %use, %c2 : i32
    %b = "tile.barrier_index"(%bars, %s) : (!bars, i32) -> !bar
    "tile.barrier_wait"(%b, %ph) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!bar, i32) -> ()
    %st = "tile.memdesc_index"(%ring, %s) : (!ring, i32) -> !stage
    %x = "tile.local_load"(%st) : (!stage) -> tensor<64x32xf16, #bl>
    %xf = arith.extf %x : tensor<64x32xf16, #bl> to !acc
    %total = arith.addf %sum, %xf : !acc
    // Epilogue: registers into shared memory, then one TDM store.
    %cbuf = "tile.local_alloc"() : () -> !tile.shared<tensor<64x32xf32, #s>>
    "tile.local_store"(%total, %cbuf) : (!acc, !tile.shared<tensor<64x32xf32, #s>>) -> ()
    "tile.async_tdm_copy_local_to_global"(%dc, %cbuf) : (!dc, !tile.shared<tensor<64x32xf32, #s>>) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
