"""A block that starts before the tensor (a negative origin) reads zeros and writes nothing
outside it, in the model and in the lowering alike (TMA treats negative coordinates so).

The model side runs a load and a store of a block at origin (-4, -8) and checks what is
read and written; the lowering side checks that every block access the portable targets
emit masks ``0 <= origin + i`` per dim, feeding the load's and the store's mask. Either side
dropping its lower bound fails here.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from gemm_opt.lowering.compile import lower_tile_module
from gemm_opt.model.interpreter import run_function

#: y = 2 * x over a 16x16 block at (om, on); with a blocked layout so that it lowers.
BLOCKS = """
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: %(rows)d, %(cols)d>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "%(target)s"} {
  func.func @b(%%x: !tile.ptr<f32>, %%y: !tile.ptr<f32>, %%m: i32, %%n: i32, %%ld: i64, %%om: i32, %%on: i32) {
    %%one = arith.constant 1 : i64
    %%t = "tile.load_block"(%%x, %%m, %%n, %%ld, %%one, %%om, %%on) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32) -> tensor<16x16xf32, #bl>
    %%two = arith.constant dense<2.0> : tensor<16x16xf32, #bl>
    %%u = arith.mulf %%t, %%two : tensor<16x16xf32, #bl>
    "tile.store_block"(%%y, %%m, %%n, %%ld, %%one, %%om, %%on, %%u) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, tensor<16x16xf32, #bl>) -> ()
    return
  }
}
"""
LANES = {"gfx1250": (4, 8), "cuda:90": (4, 8), "gfx950": (8, 8), "gfx942": (8, 8)}


def _text(target: str) -> str:
    rows, cols = LANES[target]
    return BLOCKS % {"rows": rows, "cols": cols, "target": target}


def test_the_model_reads_zeros_and_writes_nothing_before_the_tensor() -> None:
    x = np.arange(20 * 12, dtype=np.float32).reshape(20, 12) + 1
    y = np.full_like(x, np.nan)
    run_function(_text("gfx1250"), "b", [x, y, 20, 12, 12, -4, -8])
    # Rows -4..11 and columns -8..7 of the block: only rows 0..11, columns 0..7 exist.
    np.testing.assert_array_equal(y[:12, :8], 2 * x[:12, :8])
    assert np.isnan(y[12:]).all() and np.isnan(y[:, 8:]).all()


def _masks(ttgir: str, op: str) -> list[str]:
    """The mask operand of each ``op`` (``tt.load`` / ``tt.store``)."""
    pattern = {"tt.load": r"tt\.load %\w+, (%\w+),", "tt.store": r"tt\.store %\w+, %\w+, (%\w+) "}
    return re.findall(pattern[op], ttgir)


def _defs(ttgir: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in re.finditer(r"(%\w+) = (.*)", ttgir)}


def _feeds(defs: dict[str, str], value: str, seen: set[str] | None = None) -> set[str]:
    """Every value ``value`` is computed from (itself included)."""
    seen = set() if seen is None else seen
    if value in seen:
        return seen
    seen.add(value)
    for operand in re.findall(r"%\w+", defs.get(value, "").split(":")[0]):
        _feeds(defs, operand, seen)
    return seen


@pytest.mark.parametrize("target", ["gfx1250", "gfx950", "gfx942", "cuda:90"])
def test_the_lowering_masks_both_bounds_of_every_block_access(target: str) -> None:
    ttgir = lower_tile_module(_text(target)).ttgir
    defs = _defs(ttgir)
    for op in ("tt.load", "tt.store"):
        (mask,) = _masks(ttgir, op)
        ops = [defs.get(v, "") for v in _feeds(defs, mask)]
        lower = [o for o in ops if o.startswith("arith.cmpi sge")]
        upper = [o for o in ops if o.startswith("arith.cmpi slt")]
        # One lower and one upper bound per dim, against 0 and the extents.
        assert len(lower) == 2 and len(upper) == 2, (op, ops)
        for cmp in lower:
            _, zero = re.findall(r"%\w+", cmp.split(":")[0])
            assert defs[zero].startswith("arith.constant dense<0>"), cmp
        for cmp in upper:
            _, bound = re.findall(r"%\w+", cmp.split(":")[0])
            assert re.match(r"tt\.splat %arg[23] : i32", defs[bound]), cmp  # m or n
