// RUN: gemm-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90})'

// ==== Registers for every worker or for none. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%p: !tile.ptr<f16>, %n: i32) {
    // expected-error@+1 {{'num_regs' is given for some worker partitions but not all; Triton sets the registers of every partition or of none}}
    "tile.warp_specialize"(%p, %n) ({
      "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
    }, {
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %m: i32):
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32, num_regs = 24 : i32} : () -> ()
      "tile.warp_partition"() ({
      ^bb0(%q: !tile.ptr<f16>, %m: i32):
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f16>, i32) -> ()
    return
  }
}
