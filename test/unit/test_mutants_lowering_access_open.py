"""The layout a block store of an MMA accumulator stores from
(:func:`gemm_opt.lowering.access.store_layout`), pinned where the lit files left it
open (found by ``benchmarks/mutation.py``).

A thread's contiguous run is counted along the stored (last) dim only: an
accumulator block of fewer rows than that run still stores its vectors whole.
"""

from __future__ import annotations

from support.ttgir_text import body_lines

from gemm_opt.lowering.compile import lower_tile_module

# gfx950, transposed MFMA, f32: 4 contiguous elements a thread along N (16 bytes,
# the blocked vector) in a block of 2 rows; N a stated multiple of 16.
SHORT_ROWS = """
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>,
                          instr_shape = array<i64: 16, 16, 32>, transposed = true}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx950"} {
  func.func @short_rows(%v: tensor<2x64xf32, #acc>, %c: !tile.ptr<f32>, %m: i32,
                        %n: i32 {tile.divisibility = 16 : i32}, %ld: i64) {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    "tile.store_block"(%c, %m, %n, %ld, %one, %c0, %c0, %v)
        {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>}
        : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, tensor<2x64xf32, #acc>) -> ()
    return
  }
}
"""


def test_a_block_of_fewer_rows_than_the_run_stores_from_the_accumulator() -> None:
    lines = body_lines(lower_tile_module(SHORT_ROWS, "gfx950", fuse=False).ttgir)
    assert not any("ttg.convert_layout" in line for line in lines)
    (store,) = [line for line in lines if line.startswith("tt.store ")]
    # The value stored is the argument itself, in the MFMA layout.
    assert store.split(", ")[1] == "%arg0"
    assert store.endswith("tensor<2x64x!tt.ptr<f32>, #mma>")
