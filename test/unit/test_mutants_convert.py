"""The portable copy and block-access lowering, pinned where the lit files left it
open (found by ``benchmarks/mutation.py``).

gfx942 has no TDM: a copy and a ``tile.load_block`` become masked ``tt.load``s
whose addresses the lowering builds per dim. These tests read the TTGIR of small
modules: which dims multiply by their stride, which bounds a chain of descriptor
updates keeps, the layout a zero-stride load reads in, the dims loaded once and
broadcast, and the layout conversions that are (and are not) emitted.
"""

from __future__ import annotations

import pytest

from gemm_opt.lowering.compile import lower_tile_module

# make(%a: shape %m x %m, strides %lda x 1) -> update(offsets, bounds %n x %n)
# -> update(offsets, no bounds) -> copy.
COPY = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx942"} {
  func.func private @strides(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %off: i32, %n: i32) {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one)
        {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %u = "tile.update_tensor_descriptor"(%d, %off, %off, %n, %n)
        {operandSegmentSizes = array<i32: 1, 2, 2, 0>} : (!da, i32, i32, i32, i32) -> !da
    %v = "tile.update_tensor_descriptor"(%u, %off, %off)
        {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!da, i32, i32) -> !da
    %ba = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%v, %ba)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
"""

# %row: stride 0 on dim 0 at a run-time origin (not provably in bounds), read in
# an MFMA layout; %thin: stride 0 on dim 0 from the constant origin 0 of a
# constant extent 64 (loaded as one row and broadcast); %short: the same over
# a constant extent of 32, shorter than the block (loaded whole, masked); then a
# conversion to another layout and one to the same layout.
LOADS = """
#b = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 16, 4>,
                    warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>,
                          instr_shape = array<i64: 16, 16, 32>, transposed = true}>
!t = tensor<64x64xf32, #b>
!a = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx942"} {
  func.func private @loads(%p: !tile.ptr<f32>, %n: i32, %off: i32) -> (!a, !t, !a, !t) {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %s0 = arith.constant 0 : i64
    %s1 = arith.constant 1 : i64
    %row = "tile.load_block"(%p, %n, %n, %s0, %s1, %off, %off)
        {operandSegmentSizes = array<i32: 1, 2, 2, 2>}
        : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32) -> !a
    %thin = "tile.load_block"(%p, %c64, %n, %s0, %s1, %c0, %off)
        {operandSegmentSizes = array<i32: 1, 2, 2, 2>}
        : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32) -> !t
    %c32 = arith.constant 32 : i32
    %short = "tile.load_block"(%p, %c32, %n, %s0, %s1, %c0, %off)
        {operandSegmentSizes = array<i32: 1, 2, 2, 2>}
        : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32) -> !t
    "tile.store_block"(%p, %n, %n, %s1, %s1, %off, %off, %short)
        {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>}
        : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, !t) -> ()
    %cv = "tile.convert_layout"(%thin) : (!t) -> !a
    %same = "tile.convert_layout"(%thin) : (!t) -> !t
    return %row, %thin, %cv, %same : !a, !t, !a, !t
  }
}
"""


def _ttgir(text: str) -> list[str]:
    """The function body's lines of the TTGIR, without locations."""
    ttgir = lower_tile_module(text, "gfx942", fuse=False).ttgir
    return [line.split(" loc(")[0].strip() for line in ttgir.splitlines()]


@pytest.fixture(scope="module")
def copy_lines() -> list[str]:
    return _ttgir(COPY)


@pytest.fixture(scope="module")
def load_lines() -> list[str]:
    return _ttgir(LOADS)


def test_only_a_dim_of_non_unit_stride_is_scaled_by_it(copy_lines: list[str]) -> None:
    """Rows step by %lda (i64: sign-extend, multiply); the unit-stride columns add
    their i32 index directly (no i64 arithmetic, no multiply by 1)."""
    assert sum("arith.extsi" in line for line in copy_lines) == 1
    (mul,) = [line for line in copy_lines if "arith.muli" in line]
    assert mul.endswith(": tensor<128x1xi64, #blocked>")
    assert any(
        line.endswith("= tt.splat %arg2 : i64 -> tensor<128x1xi64, #blocked>")
        for line in copy_lines
    )
    assert any(
        "tt.addptr" in line and line.endswith(", tensor<128x64xi32, #blocked>")
        for line in copy_lines
    )


def test_an_update_without_bounds_keeps_the_earlier_updates_bounds(
    copy_lines: list[str],
) -> None:
    """Both dims are masked against %n (the first update's bounds), never %m (the shape)."""
    splats = [line.split(" = ")[1] for line in copy_lines if "tt.splat %arg" in line]
    assert sum(s.startswith("tt.splat %arg4 : i32") for s in splats) == 2
    assert not [s for s in splats if s.startswith("tt.splat %arg1")]


def test_a_zero_stride_load_not_provably_in_bounds_reads_in_its_own_layout(
    load_lines: list[str],
) -> None:
    (load,) = [line for line in load_lines if "tt.load" in line and "#mma" in line]
    assert load.endswith(": tensor<64x64x!tt.ptr<f32>, #mma>")


def test_a_zero_stride_dim_in_bounds_by_constants_is_loaded_once(
    load_lines: list[str],
) -> None:
    """Only where the whole block is in bounds: %short's 64 rows overrun its 32."""
    thin, short = [line for line in load_lines if "tt.load" in line and "#blocked" in line]
    assert short.endswith(": tensor<64x64x!tt.ptr<f32>, #blocked>")
    load = thin
    assert load.endswith(": tensor<1x64x!tt.ptr<f32>, #blocked>")
    value = load.split(" = ")[0]
    broadcasts = [line.split(" = ")[1] for line in load_lines if " = tt.broadcast " in line]
    assert any(
        b.split()[1] == value
        and b.endswith(": tensor<1x64xf32, #blocked> -> tensor<64x64xf32, #blocked>")
        for b in broadcasts
    )


def test_a_layout_conversion_is_emitted_only_between_different_layouts(
    load_lines: list[str],
) -> None:
    (conv,) = [line for line in load_lines if "ttg.convert_layout" in line]
    assert conv.endswith(": tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #mma>")
    (ret,) = [line for line in load_lines if line.startswith("tt.return")]
    row, thin, cv, same = ret.removeprefix("tt.return ").split(" : ")[0].split(", ")
    assert same == thin and cv == conv.split(" = ")[0] and row != thin


def test_block_loads_are_plain_loads(load_lines: list[str]) -> None:
    """Not volatile: a block load may be cached and merged like any other."""
    loads = [line for line in load_lines if "tt.load" in line]
    assert len(loads) == 3
    assert not [line for line in load_lines if "isVolatile" in line]
