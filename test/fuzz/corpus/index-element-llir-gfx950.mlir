// fuzz-command: --emit=llir --target=gfx950
// fuzz-finding: internal-error: in pass S: MLIRError: Invalid attribute
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250", tile.threads_per_warp = 64 : i32} {
  func.func @fuzz(%arg0: i32, %arg1: i32, %arg2: i64, %arg3: !tile.ptr<f16>, %arg4: !tile.ptr<index>) {
    %c0_i32_4 = arith.constant 0 : i32
    %c0_i64_5 = arith.constant 0 : i64
    %c0_i32_6 = arith.constant 0 : i32
    %3 = "tile.load_block"(%arg4, %c0_i32_4, %c0_i64_5, %c0_i32_6) {operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!tile.ptr<index>, i32, i64, i32) -> tensor<64xindex, #tile.blocked<{order = array<i64: 0>, size_per_thread = array<i64: 1>, threads_per_warp = array<i64: 64>, warps_per_cta = array<i64: 8>}>>
    return
  }
}
