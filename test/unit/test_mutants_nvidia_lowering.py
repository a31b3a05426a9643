"""The cuda:90 strategy's rules, pinned where the lit files left them open (found by
``benchmarks/mutation.py``): the layouts it gives, read from the TTGIR of small
modules.
"""

from __future__ import annotations

import re

import pytest

from gemm_opt.lowering.compile import lower_tile_module

# A dot-operand layout of each element width, loaded from shared memory: mma v2
# takes 32 bits of K per register (Triton's rule), so kWidth = 32 / bits.
LOADS = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>,
                          instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
!b32 = !tile.shared<tensor<64x32xf32, #s>>
!b16 = !tile.shared<tensor<64x32xf16, #s>>
!b8 = !tile.shared<tensor<64x32xf8E4M3FN, #s>>
!t32 = tensor<64x32xf32, #opa>
!t16 = tensor<64x32xf16, #opa>
!t8 = tensor<64x32xf8E4M3FN, #opa>
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func private @loads() -> (!t32, !t16, !t8) {
    %a = "tile.local_alloc"() : () -> !b32
    %ta = "tile.local_load"(%a) : (!b32) -> !t32
    %b = "tile.local_alloc"() : () -> !b16
    %tb = "tile.local_load"(%b) : (!b16) -> !t16
    %c = "tile.local_alloc"() : () -> !b8
    %tc = "tile.local_load"(%c) : (!b8) -> !t8
    return %ta, %tb, %tc : !t32, !t16, !t8
  }
}
"""


@pytest.fixture(scope="module")
def load_lines() -> list[str]:
    ttgir = lower_tile_module(LOADS, "cuda:90", fuse=False).ttgir
    return [line.split(" loc(")[0].strip() for line in ttgir.splitlines()]


def test_dot_operand_k_width_is_32_bits_of_k(load_lines: list[str]) -> None:
    widths = {}
    for line in load_lines:
        m = re.search(
            r"-> tensor<64x32x(\w+), #ttg\.dot_op<\{opIdx = 0, .*kWidth = (\d+)\}>>", line
        )
        if m and "ttg.local_load" in line:
            widths[m.group(1)] = int(m.group(2))
    assert widths == {"f32": 1, "f16": 2, "f8E4M3FN": 4}
