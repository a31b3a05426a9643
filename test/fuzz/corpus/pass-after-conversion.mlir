// fuzz-command: '--pass-pipeline=builtin.module(convert-tile-to-triton-gpu{target=gfx1250},convert-tile-to-triton-gpu{target=gfx1250},func.func(tile-annotate-warp-plan))'
// fuzz-finding: misuse-exit: <pass-pipeline>:N:N: error: S does not refer to a registered pass or pipeline (see --list-
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250", tile.threads_per_warp = 32 : i32} {
  func.func @fuzz(%arg0: i32, %arg1: i32, %arg2: i64) {
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
