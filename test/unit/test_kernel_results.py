"""A kernel returns nothing, through every entry point: the verifier refuses
a public function with results at the function's line (gemm-opt and
``compile_tile_module`` alike) and a private helper may return values."""

from __future__ import annotations

import pytest

from gemm_opt.lowering.compile import TileCompileError, compile_tile_module

KERNEL = """
module attributes {tile.num_warps = 4 : i32} {
  func.func @claim(%s: !tile.ptr<i32>, %i: i32) -> i32 {
    %n = "tile.num_programs"() {axis = 0 : i32} : () -> i32
    return %n : i32
  }
}
"""


def test_compile_refuses_a_kernel_with_results_at_its_line():
    with pytest.raises(TileCompileError) as info:
        compile_tile_module(KERNEL, "gfx1250")
    assert (info.value.line, info.value.col) == (3, 3)
    assert "kernel @claim returns i32, but a kernel returns nothing" in info.value.message


def test_a_private_helper_may_return_a_value():
    helper = KERNEL.replace("func.func @claim", "func.func private @claim")
    kernel = """
  func.func @k(%s: !tile.ptr<i32>, %i: i32) {
    %n = func.call @claim(%s, %i) : (!tile.ptr<i32>, i32) -> i32
    %o = "tile.atomic_rmw"(%s, %i, %n) {kind = "add", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    return
  }
}
"""
    text = helper.rstrip().removesuffix("}") + kernel
    compiled = compile_tile_module(text, "gfx942")
    assert ".globl\tk" in compiled.asm["amdgcn"]
