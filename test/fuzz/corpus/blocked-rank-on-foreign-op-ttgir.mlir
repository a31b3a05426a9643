// fuzz-command: --emit=ttgir --target=gfx1250
// fuzz-finding: leaked-exception: a diagnostic quotes Python's AssertionError
#bl = #tile.blocked<{size_per_thread = array<i64: 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx942"} {
  func.func @lanes() {
    %z = arith.constant dense<0.0> : tensor<64x64xf32, #bl>
    return
  }
}
