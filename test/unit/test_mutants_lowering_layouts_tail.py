"""The last helpers of ``lowering.layouts`` (NVMMA swizzle, blocked layout parameters,
element widths), pinned where the other tests left them open (found by
``benchmarks/mutation.py``).
"""

from __future__ import annotations

import pytest

from gemm_opt.core.ext_compat import ir
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
