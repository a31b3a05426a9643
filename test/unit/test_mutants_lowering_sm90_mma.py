"""cuda:90's choice of wgmma or mma.sync (``lowering.sm90_mma``), pinned where the lit
files left it open (found by ``benchmarks/mutation.py``).

The choice is per accumulator layout: every MMA accumulating in it, synchronous or
not, is a wgmma of one shape, or all of them are mma.sync. ``mma=wgmma`` turns a
misfit into a located error instead.
"""

from __future__ import annotations

import pytest
from support.ttgir_text import body_lines

from gemm_opt.lowering.compile import TileCompileError, lower_tile_module

#: A and B, f16, row-major: each MMA below could be a wgmma on its own.
HEAD = """
#s = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 1, 0>}>
#t = #tile.swizzled_shared<{vec = 8, per_phase = 1, max_phase = 8, order = array<i64: 0, 1>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>,
                          instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!ba = !tile.shared<tensor<64x32xf16, #s>>
!bt = !tile.shared<tensor<64x32xf16, #t>>
"""

# Two MMAs of one accumulator layout; the second's N is 128 where ``n2`` says so.
TWO = (
    HEAD
    + """
module attributes {tile.num_warps = 4 : i32} {
  func.func private @two(%c: tensor<64x64xf32, #acc>, %e: tensor<64xNxf32, #acc>)
      -> (tensor<64x64xf32, #acc>, tensor<64xNxf32, #acc>) {
    %a = "tile.local_alloc"() : () -> !ba
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<32x64xf16, #s>>
    %ta = "tile.local_load"(%a) : (!ba) -> tensor<64x32xf16, #opa>
    %tb = "tile.local_load"(%b) : (!tile.shared<tensor<32x64xf16, #s>>) -> tensor<32x64xf16, #opb>
    %d = "tile.wmma"(%ta, %tb, %c) : (tensor<64x32xf16, #opa>, tensor<32x64xf16, #opb>,
                                      tensor<64x64xf32, #acc>) -> tensor<64x64xf32, #acc>
    %a2 = "tile.local_alloc"() : () -> !ba
    %b2 = "tile.local_alloc"() : () -> !tile.shared<tensor<32xNxf16, #s>>
    %ta2 = "tile.local_load"(%a2) : (!ba) -> tensor<64x32xf16, #opa>
    %tb2 = "tile.local_load"(%b2) : (!tile.shared<tensor<32xNxf16, #s>>) -> tensor<32xNxf16, #opb>
    %d2 = "tile.wmma"(%ta2, %tb2, %e) : (tensor<64x32xf16, #opa>, tensor<32xNxf16, #opb>,
                                         tensor<64xNxf32, #acc>) -> tensor<64xNxf32, #acc>
    return %d, %d2 : tensor<64x64xf32, #acc>, tensor<64xNxf32, #acc>
  }
}
"""
)


def _two(n: int) -> str:
    return TWO.replace("xNx", f"x{n}x")


def _line_of(text: str, needle: str) -> int:
    (row,) = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    return row


def _mma_lines(text: str, mma: str = "auto") -> list[str]:
    """The lowered MMA layouts and MMA ops, in order."""
    lines = body_lines(lower_tile_module(text, "cuda:90", fuse=False, mma=mma).ttgir)
    keep = ("#ttg.nvidia_mma<", "ttng.warp_group_dot ", "tt.dot ")
    return [line for line in lines if any(k in line for k in keep)]


def test_mmas_of_one_layout_and_one_wgmma_shape_are_both_wgmma() -> None:
    lines = _mma_lines(_two(64), "wgmma")
    assert lines[0].endswith(
        "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], "
        "instrShape = [16, 64, 16]}>"
    )
    assert [line.split(" = ")[1].split(" ")[0] for line in lines[1:]] == ["ttng.warp_group_dot"] * 2


def test_mmas_of_one_layout_needing_two_wgmma_shapes_keep_mma_sync() -> None:
    lines = _mma_lines(_two(128))
    assert lines[0].endswith(
        "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], "
        "instrShape = [16, 8]}>"
    )
    assert [line.split(" = ")[1].split(" ")[0] for line in lines[1:]] == ["tt.dot"] * 2


def test_mmas_of_one_layout_needing_two_wgmma_shapes_refuse_mma_wgmma() -> None:
    text = _two(128)
    with pytest.raises(TileCompileError) as info:
        lower_tile_module(text, "cuda:90", fuse=False, mma="wgmma")
    assert info.value.message == (
        "mma=wgmma: this MMA cannot use wgmma: the MMAs sharing its accumulator layout "
        "need different wgmma shapes"
    )
    assert info.value.line == _line_of(text, '%d2 = "tile.wmma"')


# A tile.wmma and a tile.async_wmma of one accumulator layout; the tile.wmma reads A
# from the buffer ``!A``, an alias the test defines (row-major ``!ba``: wgmma; ``!bt``,
# stored column-major: mma.sync only).
SHARED = """
module attributes {tile.num_warps = 4 : i32} {
  func.func private @shared(%c: tensor<64x64xf32, #acc>) -> tensor<64x64xf32, #acc> {
    %a = "tile.local_alloc"() : () -> !A
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<32x64xf16, #s>>
    %ta = "tile.local_load"(%a) : (!A) -> tensor<64x32xf16, #opa>
    %tb = "tile.local_load"(%b) : (!tile.shared<tensor<32x64xf16, #s>>) -> tensor<32x64xf16, #opb>
    %d = "tile.wmma"(%ta, %tb, %c) : (tensor<64x32xf16, #opa>, tensor<32x64xf16, #opb>,
                                      tensor<64x64xf32, #acc>) -> tensor<64x64xf32, #acc>
    %a2 = "tile.local_alloc"() : () -> !ba
    %b2 = "tile.local_alloc"() : () -> !tile.shared<tensor<32x64xf16, #s>>
    %p = "tile.async_wmma"(%a2, %b2, %d) {operandSegmentSizes = array<i32: 1, 1, 1, 0>}
        : (!ba, !tile.shared<tensor<32x64xf16, #s>>, tensor<64x64xf32, #acc>)
        -> tensor<64x64xf32, #acc>
    %w = "tile.async_wmma_wait"(%p) {num = 0 : i32} : (tensor<64x64xf32, #acc>)
        -> tensor<64x64xf32, #acc>
    return %w : tensor<64x64xf32, #acc>
  }
}
"""


def test_an_async_mma_shares_wgmma_with_the_mmas_of_its_layout() -> None:
    lines = _mma_lines(HEAD + "!A = !ba\n" + SHARED, "wgmma")
    assert "versionMajor = 3" in lines[0]
    dots = [line.split(" = ")[1].split(" ")[0] for line in lines[1:]]
    assert dots == ["ttng.warp_group_dot"] * 2


def test_an_async_mma_keeps_mma_sync_where_the_mmas_of_its_layout_do() -> None:
    lines = _mma_lines(HEAD + "!A = !bt\n" + SHARED)
    assert "versionMajor = 2" in lines[0]
    assert [line.split(" = ")[1].split(" ")[0] for line in lines[1:]] == ["tt.dot"] * 2


# An 8-bit tile.wmma (operands in registers) with an interval of its own.
FP8 = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 0, 1>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>,
                          instr_shape = array<i64: 16, 16, 64>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
!acc = tensor<64x128xf32, #acc>
module attributes {tile.num_warps = 4 : i32} {
  func.func private @f(%c: !acc) -> !acc {
    %a = "tile.local_alloc"() : () -> !tile.shared<tensor<64x64xf8E4M3FN, #s>>
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<128x64xf8E4M3FN, #s>>
    %bt = "tile.memdesc_trans"(%b) {order = array<i32: 1, 0>}
        : (!tile.shared<tensor<128x64xf8E4M3FN, #s>>) -> !tile.shared<tensor<64x128xf8E4M3FN, #t>>
    %ta = "tile.local_load"(%a) : (!tile.shared<tensor<64x64xf8E4M3FN, #s>>)
        -> tensor<64x64xf8E4M3FN, #opa>
    %tb = "tile.local_load"(%bt) : (!tile.shared<tensor<64x128xf8E4M3FN, #t>>)
        -> tensor<64x128xf8E4M3FN, #opb>
    %d = "tile.wmma"(%ta, %tb, %c) {tile.imprecise_acc = INTERVAL : i32}
        : (tensor<64x64xf8E4M3FN, #opa>, tensor<64x128xf8E4M3FN, #opb>, !acc) -> !acc
    return %d : !acc
  }
}
"""


@pytest.mark.parametrize("interval", [32, 64, 96])
def test_an_8_bit_mma_in_registers_keeps_its_interval(interval: int) -> None:
    """A ``tile.wmma`` has no ``use_acc``: it always adds into C, so its interval
    stays as stated, at or past its K alike."""
    (_, dot) = _mma_lines(FP8.replace("INTERVAL", str(interval)))
    assert f"maxNumImpreciseAcc = {interval} : i32" in dot
