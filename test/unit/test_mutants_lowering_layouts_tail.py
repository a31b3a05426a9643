"""The last helpers of ``lowering.layouts`` (NVMMA swizzle, blocked layout parameters,
element widths), pinned where the other tests left them open (found by
``benchmarks/mutation.py``).
"""

from __future__ import annotations

import pytest

from gemm_opt.core.ext_compat import ir
from gemm_opt.lowering.compile import lower_tile_module
from gemm_opt.lowering.layouts import blocked_params, element_bits, nvmma_swizzle


@pytest.mark.parametrize(
    ("shape", "bits", "swizzle"),
    [
        ([64, 64], 16, 128),
        ([64, 32], 16, 64),
        ([64, 16], 16, 32),
        ([64, 8], 16, 0),  # a 16-byte row: unswizzled
        ([64, 24], 8, 0),  # 24 bytes: no atom divides it
        ([4, 64], 16, 0),  # fewer than 8 rows
        ([64], 16, 0),
    ],
)
def test_nvmma_swizzle_is_the_widest_atom_that_divides_a_row(shape, bits, swizzle) -> None:
    assert nvmma_swizzle(shape, bits) == swizzle


@pytest.mark.parametrize(
    ("shape", "bits", "params"),
    [
        # 16-byte vectors along the last dim, as many lanes as fit it.
        ([64, 64], 8, ([1, 16], [8, 4], [4, 1], [1, 0])),
        ([64, 64], 16, ([1, 8], [4, 8], [4, 1], [1, 0])),
        ([64, 64], 32, ([1, 4], [2, 16], [4, 1], [1, 0])),
        ([64, 64], 1, ([1, 16], [8, 4], [4, 1], [1, 0])),  # i1 counts as a byte
        ([64, 8], 16, ([1, 8], [32, 1], [4, 1], [1, 0])),  # one vector per row
        ([64, 1], 16, ([1, 1], [32, 1], [4, 1], [1, 0])),  # a row narrower than a vector
        ([256], 16, ([8], [32], [4], [0])),
    ],
)
def test_blocked_params_of_row_major_blocks(shape, bits, params) -> None:
    assert blocked_params(shape, bits, 4, 32) == params


def test_element_bits_takes_signless_integers_only() -> None:
    with ir.Context():
        assert element_bits(ir.IntegerType.get_signless(32)) == 32
        assert element_bits(ir.IntegerType.get_signed(32)) is None
        assert element_bits(ir.IntegerType.get_unsigned(8)) is None
        assert element_bits(ir.F16Type.get()) == 16


# A partitioned buffer naming no inner layout is laid out unswizzled row-major, which
# wgmma reads where it lies: the hand-off for cuda:90 keeps it for warp_group_dot.
PARTITIONED_WGMMA = """
#s = #tile.partitioned_shared<{num_partitions = 2, num_groups = 1, partition_dim = 0}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>,
                          instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!ba = !tile.shared<tensor<64x32xbf16, #s>>
!bb = !tile.shared<tensor<32x64xbf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func private @f(%c: !acc) -> !acc {
    %a = "tile.local_alloc"() : () -> !ba
    %b = "tile.local_alloc"() : () -> !bb
    %ta = "tile.local_load"(%a) : (!ba) -> tensor<64x32xbf16, #opa>
    %tb = "tile.local_load"(%b) : (!bb) -> tensor<32x64xbf16, #opb>
    %d = "tile.wmma"(%ta, %tb, %c)
        : (tensor<64x32xbf16, #opa>, tensor<32x64xbf16, #opb>, !acc) -> !acc
    return %d : !acc
  }
}
"""


def test_a_partitioned_buffer_without_inner_layout_is_a_row_major_wgmma_operand() -> None:
    ttgir = lower_tile_module(PARTITIONED_WGMMA, "cuda:90", fuse=False).ttgir
    assert "#ttg.nvidia_mma<{versionMajor = 3," in ttgir
    assert ttgir.count("ttng.warp_group_dot ") == 1
    assert "tt.dot " not in ttgir
