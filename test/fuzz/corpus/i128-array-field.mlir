// fuzz-command: --emit=ttgir
// fuzz-finding: internal-error: 'tile.local_alloc' op internal verifier error: TypeError: Can't cast unknown element type DenseArrayAttr
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @f() {
    %0 = "tile.local_alloc"() : () -> !tile.shared<tensor<128x64xf16, #tile.padded_shared<{interval = 64, amount = 8, order = array<i128: 0, 0>}>>>
    return
  }
}
