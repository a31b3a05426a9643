"""The synchronous lowering of ``tile.async_wmma`` (gfx1250), pinned where the lit
files left it open (found by ``benchmarks/mutation.py``).

An AMD MMA reads registers: the lowering loads both buffers in their dot-operand
layouts, selects zeros for C where ``use_acc`` is false, and emits a plain
``tt.dot`` (IEEE precision, no imprecise accumulation: a 16-bit dot sums exactly
into f32); the wait emits nothing. The test reads each lowered op's operands.
"""

from __future__ import annotations

import pytest
from support.ttgir_text import body_lines, definitions

from gemm_opt.lowering.compile import lower_tile_module

MMA = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>,
                          instr_shape = array<i64: 16, 16, 32>, transposed = true}>
!a = !tile.shared<tensor<64x32xf16, #s>>
!b = !tile.shared<tensor<32x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func private @mma(%c: !acc, %p: i1) -> !acc {
    %a = "tile.local_alloc"() : () -> !a
    %b = "tile.local_alloc"() : () -> !b
    %d = "tile.async_wmma"(%a, %b, %c, %p) {operandSegmentSizes = array<i32: 1, 1, 1, 1>}
        : (!a, !b, !acc, i1) -> !acc
    %w = "tile.async_wmma_wait"(%d) {num = 0 : i32} : (!acc) -> !acc
    return %w : !acc
  }
}
"""


@pytest.fixture(scope="module")
def defs() -> dict[str, tuple[str, str]]:
    """Each SSA value of the function body: (op name, the rest of its line)."""
    return definitions(body_lines(lower_tile_module(MMA, "gfx1250", fuse=False).ttgir))


def _operands(rest: str) -> list[str]:
    return [v.strip() for v in rest.split(" : ")[0].split(",")]


def test_async_wmma_is_a_plain_dot_of_the_loaded_buffers(
    defs: dict[str, tuple[str, str]],
) -> None:
    (dot,) = [rest for name, rest in defs.values() if name == "tt.dot"]
    # No attribute dict: IEEE precision and maxNumImpreciseAcc 0 are the defaults.
    assert "{" not in dot.split(" : ")[0]
    la, lb, c = _operands(dot)
    for value, op_idx in ((la, 0), (lb, 1)):
        name, rest = defs[value]
        assert name == "ttg.local_load"
        assert f"opIdx = {op_idx}," in rest and "kWidth = 8" in rest
        assert defs[rest.split(" :")[0]][0] == "ttg.local_alloc"
    assert _operands(defs[la][1]) != _operands(defs[lb][1])
    # C is select(splat(use_acc), %c, zeros).
    name, rest = defs[c]
    assert name == "arith.select"
    cond, acc, zeros = _operands(rest)
    assert defs[cond] == ("tt.splat", defs[cond][1]) and defs[cond][1].startswith("%arg1 :")
    assert acc == "%arg0"
    assert defs[zeros][0] == "arith.constant" and "dense<0.000000e+00>" in defs[zeros][1]
