// fuzz-command: --emit=ptx
// fuzz-finding: unlocated-error: input.mlir: error: --emit=ptx does not exist for target gfxN (it has: ttgir, llir, amdgcn,
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250", tile.threads_per_warp = 32 : i32} {
  func.func @fuzz(%arg0: i32, %arg1: i32, %arg2: i64, %arg3: !tile.ptr<f16>) {
    return
  }
}
