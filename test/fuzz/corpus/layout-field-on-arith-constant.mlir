// fuzz-command: --emit=ttgir
// fuzz-finding: blamed-on-triton: Triton failed while building the TritonGPU IR of 'arith.constant': VerifyError: #tile.blocked has no field 'size_per_threads'
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func @f() {
    %c = arith.constant dense<0.0> : tensor<16x16xf32, #tile.blocked<{size_per_threads = array<i64: 1, 1>, threads_per_warp = array<i64: 2, 16>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>>
    return
  }
}
