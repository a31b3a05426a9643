// fuzz-command: --emit=ttgir --target=gfx1250
// fuzz-finding: unlocated-error: input.mlir: error: needs 'tile.num_warps' on the module (a file without an explicit module)
func.func @f() {
  return
}
