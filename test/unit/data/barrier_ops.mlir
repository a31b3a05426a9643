// Every barrier op and the TDM store in one kernel that both gfx1250 and
// cuda:90 (lds-copies=tma) compile: a stage barrier is initialised, arrived
// on and waited for; registers go to shared memory and out with one store.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
!bars = !tile.mbarrier_ring<2 : i32>
!bar = !tile.mbarrier<i64>
module attributes {tile.num_warps = 4 : i32} {
  func.func @barrier_store(%c: !tile.ptr<f16>, %m: i32, %ld: i64, %v: tensor<64x64xf16, #bl>, %p: i1) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %d = "tile.make_tensor_descriptor"(%c, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    %bars = "tile.barrier_alloc"() : () -> !bars
    %bar = "tile.barrier_index"(%bars, %c1) : (!bars, i32) -> !bar
    "tile.barrier_init"(%bar) {count = 2 : i32} : (!bar) -> ()
    "tile.barrier_arrive"(%bar) {operandSegmentSizes = array<i32: 1, 0>} : (!bar) -> ()
    "tile.barrier_arrive"(%bar, %p) {operandSegmentSizes = array<i32: 1, 1>} : (!bar, i1) -> ()
    "tile.barrier_wait"(%bar, %c0, %p) {operandSegmentSizes = array<i32: 1, 1, 1>} : (!bar, i32, i1) -> ()
    %buf = "tile.local_alloc"() : () -> !buf
    "tile.local_store"(%v, %buf) : (tensor<64x64xf16, #bl>, !buf) -> ()
    "tile.async_tdm_copy_local_to_global"(%d, %buf) : (!desc, !buf) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
