// fuzz-command: 
// fuzz-finding: leaked-exception: a diagnostic quotes Python's ValueError
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: -1, 0>}>
module {
  func.func @f(%b: !tile.shared<tensor<128x64xf16, #s>>) {
    %t = "tile.memdesc_trans"(%b) {order = array<i32: 1, 0>} : (!tile.shared<tensor<128x64xf16, #s>>) -> !tile.shared<tensor<64x128xf16, #s>>
  }
}
