// fuzz-command: --emit=tile
// fuzz-finding: unlocated-error: input.mlir: error: --emit needs a target (a file holding only a comment)
// nothing but comments
