// fuzz-command: --emit=ttgir
// fuzz-finding: internal-error: in pass S: MLIRError: Invalid attribute
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250", tile.threads_per_warp = 32 : i32} {
  func.func @fuzz(%arg0: i32, %arg1: i32, %arg2: i64, %arg3: !tile.ptr<f16>, %arg4: !tile.ptr<index>) {
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %c0_i32 = arith.constant 0 : i32
    %c0_i32_0 = arith.constant 0 : i32
    %0 = "tile.load_block"(%arg3, %c0_i32, %arg2, %c0_i32_0) {operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!tile.ptr<f16>, i32, i64, i32) -> tensor<64xf16, #tile.blocked<{order = array<i64: 0>, size_per_thread = array<i64: 1>, threads_per_warp = array<i64: 32>, warps_per_cta = array<i64: 8>}>>
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %c0_i32_1 = arith.constant 0 : i32
    %c0_i32_2 = arith.constant 0 : i32
    %c0_i32_3 = arith.constant 0 : i32
    scf.for %arg5 = %c0_i32_1 to %c0_i32_2 step %c0_i32_3  : i32 {
      %2 = "tile.program_id"() {axis = 0 : i32} : () -> i32
      %c0_i32_4 = arith.constant 0 : i32
      %c0_i32_5 = arith.constant 0 : i32
      %c0_i64 = arith.constant 0 : i64
      %c0_i64_6 = arith.constant 0 : i64
      %c0_i32_7 = arith.constant 0 : i32
      %c0_i32_8 = arith.constant 0 : i32
      %3 = "tile.load_block"(%arg3, %c0_i32_4, %c0_i32_5, %c0_i64, %c0_i64_6, %c0_i32_7, %c0_i32_8) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32) -> tensor<64x64xf16, #tile.blocked<{order = array<i64: 1, 0>, size_per_thread = array<i64: 1, 1>, threads_per_warp = array<i64: 1, 32>, warps_per_cta = array<i64: 8, 1>}>>
      %c0_i32_9 = arith.constant 0 : i32
      %c0_i32_10 = arith.constant 0 : i32
      %c0_i32_11 = arith.constant 0 : i32
      %4 = scf.for %arg6 = %c0_i32_9 to %c0_i32_10 step %c0_i32_11 iter_args(%arg7 = %0) -> (tensor<64xf16, #tile.blocked<{order = array<i64: 0>, size_per_thread = array<i64: 1>, threads_per_warp = array<i64: 32>, warps_per_cta = array<i64: 8>}>>)  : i32 {
        "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
        %c0_i32_12 = arith.constant 0 : i32
        %c0_i64_13 = arith.constant 0 : i64
        %c0_i32_14 = arith.constant 0 : i32
        %5 = "tile.load_block"(%arg4, %c0_i32_12, %c0_i64_13, %c0_i32_14) {operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!tile.ptr<index>, i32, i64, i32) -> tensor<64xindex, #tile.blocked<{order = array<i64: 0>, size_per_thread = array<i64: 1>, threads_per_warp = array<i64: 32>, warps_per_cta = array<i64: 8>}>>
        %c0_i32_15 = arith.constant 0 : i32
        %c0_i32_16 = arith.constant 0 : i32
        %6 = arith.addi %c0_i32_15, %c0_i32_16 : i32
        scf.yield %0 : tensor<64xf16, #tile.blocked<{order = array<i64: 0>, size_per_thread = array<i64: 1>, threads_per_warp = array<i64: 32>, warps_per_cta = array<i64: 8>}>>
      }
    }
    %1 = "tile.warp_id"() : () -> i32
    return
  }
}
