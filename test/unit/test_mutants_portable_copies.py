"""The direct-to-LDS copy of the portable lowering (gfx950), pinned where the lit
files left it open (found by ``benchmarks/mutation.py``).

A descriptor that no update moved addresses its block from the origin 0 of every
dim: each index is ``make_range`` plus a splat 0, never another origin. The copy
is a plain ``ttg.async_copy_global_to_local`` (not volatile: the LDS load may be
reordered like any load of the block) and one commit group.
"""

from __future__ import annotations

import pytest
from support.ttgir_text import definitions

from gemm_opt.lowering.compile import lower_tile_module

FRESH = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx950"} {
  func.func private @fresh(%a: !tile.ptr<f16>, %m: i32 {tile.divisibility = 16 : i32},
                           %k: i32 {tile.divisibility = 16 : i32},
                           %lda: i64 {tile.divisibility = 16 : i32}) {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %k, %lda, %one)
        {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %buf = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%d, %buf)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
"""


@pytest.fixture(scope="module")
def lines() -> list[str]:
    ttgir = lower_tile_module(FRESH, "gfx950", fuse=False).ttgir
    return [line.split(" loc(")[0].strip() for line in ttgir.splitlines()]


def test_a_fresh_descriptor_addresses_from_origin_zero(lines: list[str]) -> None:
    defs = definitions(lines)
    ranges = [v for v, (name, _) in defs.items() if name == "tt.make_range"]
    assert len(ranges) == 2  # rows and columns
    for r in ranges:
        (origin,) = [
            rest.split(" : ")[0].split(", ")[0]
            for name, rest in defs.values()
            if name == "arith.addi" and rest.split(" : ")[0].split(", ")[1] == r
        ]
        name, rest = defs[origin]
        assert name == "arith.constant" and rest.startswith("dense<0> :"), (origin, rest)


def test_the_direct_copy_is_not_volatile_and_one_group(lines: list[str]) -> None:
    (copy,) = [line for line in lines if "ttg.async_copy_global_to_local" in line]
    assert "{" not in copy and "isVolatile" not in copy
    at = lines.index(copy)
    assert "ttg.async_commit_group" in lines[at + 1]
    assert sum("ttg.async_commit_group" in line for line in lines) == 1
