"""The AMD target strategies (``lowering.target_amd``), pinned where the lit files and
the wider lowering tests left them open (found by ``benchmarks/mutation.py``): read
from the TTGIR of small modules.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.ttgir_text import body_lines, definitions

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context
from gemm_opt.dialect.edit import erase_ops, ops_named
from gemm_opt.lowering.compile import TileCompileError, lower_tile_module

# A #tile.wmma_layout and #tile.dot_operand with every optional field left out: version
# 3, not transposed on gfx1250, kWidth 8 (the dialect's defaults).
DEFAULTS = """
#acc = #tile.wmma_layout<{warps_per_cta = array<i64: 2, 2>}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc}>
module attributes {tile.num_warps = 4 : i32} {
  func.func private @f(%a: tensor<64x64xf16, #opa>, %c: tensor<64x64xf32, #acc>) {
    return
  }
}
"""


def test_gfx1250_wmma_layout_defaults() -> None:
    ttgir = lower_tile_module(DEFAULTS, "gfx1250", fuse=False).ttgir
    (mma,) = [line for line in ttgir.splitlines() if line.startswith("#mma = ")]
    assert mma.startswith("#mma = #ttg.amd_wmma<{version = 3, isTranspose = false,"), mma
    (header,) = [line for line in ttgir.splitlines() if "tt.func private @f(" in line]
    assert "%arg0: tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 8}>>" in (
        header
    )


# gfx950/gfx942: the MFMA is 32x32 when every dot of the layout gives each warp at
# least 32 rows and columns, else 16x16 (here 2x2 warps).
MFMA = {
    (64, 64): """
#acc = #tile.wmma_layout<{warps_per_cta = array<i64: 2, 2>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
module attributes {tile.num_warps = 4 : i32} {
  func.func private @f(%a: tensor<64x64xf16, #opa>, %b: tensor<64x64xf16, #opb>,
                       %c: tensor<64x64xf32, #acc>) -> tensor<64x64xf32, #acc> {
    %d = "tile.wmma"(%a, %b, %c)
        : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, tensor<64x64xf32, #acc>)
        -> tensor<64x64xf32, #acc>
    return %d : tensor<64x64xf32, #acc>
  }
}
""",
    (64, 32): """
#acc = #tile.wmma_layout<{warps_per_cta = array<i64: 2, 2>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
module attributes {tile.num_warps = 4 : i32} {
  func.func private @f(%a: tensor<64x64xf16, #opa>, %b: tensor<64x32xf16, #opb>,
                       %c: tensor<64x32xf32, #acc>) -> tensor<64x32xf32, #acc> {
    %d = "tile.wmma"(%a, %b, %c)
        : (tensor<64x64xf16, #opa>, tensor<64x32xf16, #opb>, tensor<64x32xf32, #acc>)
        -> tensor<64x32xf32, #acc>
    return %d : tensor<64x32xf32, #acc>
  }
}
""",
    (32, 64): """
#acc = #tile.wmma_layout<{warps_per_cta = array<i64: 2, 2>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
module attributes {tile.num_warps = 4 : i32} {
  func.func private @f(%a: tensor<32x64xf16, #opa>, %b: tensor<64x64xf16, #opb>,
                       %c: tensor<32x64xf32, #acc>) -> tensor<32x64xf32, #acc> {
    %d = "tile.wmma"(%a, %b, %c)
        : (tensor<32x64xf16, #opa>, tensor<64x64xf16, #opb>, tensor<32x64xf32, #acc>)
        -> tensor<32x64xf32, #acc>
    return %d : tensor<32x64xf32, #acc>
  }
}
""",
}


@pytest.mark.parametrize(
    ("target", "shape", "mfma"),
    [
        ("gfx942", (64, 64), "version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8]"),
        ("gfx942", (64, 32), "version = 3, warpsPerCTA = [2, 2], instrShape = [16, 16, 16]"),
        ("gfx942", (32, 64), "version = 3, warpsPerCTA = [2, 2], instrShape = [16, 16, 16]"),
        ("gfx950", (64, 64), "version = 4, warpsPerCTA = [2, 2], instrShape = [32, 32, 16]"),
        ("gfx950", (64, 32), "version = 4, warpsPerCTA = [2, 2], instrShape = [16, 16, 32]"),
    ],
)
def test_mfma_is_32_wide_only_where_every_warp_tile_is(
    target: str, shape: tuple[int, int], mfma: str
) -> None:
    ttgir = lower_tile_module(MFMA[shape], target, fuse=False).ttgir
    (line,) = [line for line in ttgir.splitlines() if line.startswith("#mma = ")]
    assert line == "#mma = #ttg.amd_mfma<{" + mfma + ", isTransposed = true}>"


# One warp (so one tile arrival is one hardware arrival): an init of exactly the most
# arrivals an LDS barrier counts is taken, and a predicated arrive is an scf.if with
# no else.
MOST_ARRIVALS = """
module attributes {tile.num_warps = 1 : i32} {
  func.func @f(%p: i1) {
    %c0 = arith.constant 0 : i32
    %bars = "tile.barrier_alloc"() : () -> !tile.mbarrier_ring<1 : i32>
    %bar = "tile.barrier_index"(%bars, %c0)
        : (!tile.mbarrier_ring<1 : i32>, i32) -> !tile.mbarrier<i64>
    "tile.barrier_init"(%bar) {count = 1048575 : i32} : (!tile.mbarrier<i64>) -> ()
    "tile.barrier_arrive"(%bar, %p) {operandSegmentSizes = array<i32: 1, 1>}
        : (!tile.mbarrier<i64>, i1) -> ()
    return
  }
}
"""


def test_the_most_lds_barrier_arrivals_and_a_guard_without_else() -> None:
    lines = body_lines(lower_tile_module(MOST_ARRIVALS, "gfx1250", fuse=False).ttgir)
    (init,) = [line for line in lines if line.startswith("amdg.init_barrier ")]
    assert init.split(" : ")[0].split(", ")[1] == "1048575"
    at = lines.index("scf.if %arg0 {")
    assert lines[at + 1].split(" = ")[1].startswith("amdg.arrive_barrier ")
    assert lines[at + 2] == "}"
    assert not any("else" in line for line in lines)


DATA = Path(__file__).resolve().parent / "data" / "warp_specialize_ring.mlir"


def test_a_smaller_partition_may_wait_on_a_barrier() -> None:
    """Only arrivals must come from all the function's warps (LDS barriers count per
    warp): a one-warp partition that only waits lowers."""
    with make_context():
        module = ir.Module.parse(DATA.read_text())
        (worker,) = ops_named(module, "tile.warp_partition")
        worker.attributes["num_warps"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1)
        assert erase_ops(module, "tile.barrier_expect") == 1
        assert erase_ops(module, "tile.async_tdm_copy_global_to_local") == 1
        text = str(module)
    lines = body_lines(lower_tile_module(text, "gfx1250").ttgir)
    assert any(line.startswith("amdg.wait_barrier ") for line in lines)


# An update with a pred, then one with bounds and none: the second update's bounds are
# relative to the first's origin, clamped at 0, and it takes no pred of its own.
UPDATES = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %p: i1, %o: i32, %b0: i32,
               %b1: i32) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one)
        {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %d1 = "tile.update_tensor_descriptor"(%d, %o, %c0, %p)
        {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    %d2 = "tile.update_tensor_descriptor"(%d1, %o, %o, %b0, %b1)
        {operandSegmentSizes = array<i32: 1, 2, 2, 0>} : (!da, i32, i32, i32, i32) -> !da
    %b = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%d2, %b)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
"""


def test_bounds_after_an_update_are_relative_and_clamped_at_zero() -> None:
    lines = body_lines(lower_tile_module(UPDATES, "gfx1250", fuse=False).ttgir)
    defs = definitions(lines)
    updates = [
        (v, rest) for v, (name, rest) in defs.items() if name == "amdg.update_tensor_descriptor"
    ]
    assert len(updates) == 3  # the pred's, the bounds', the second offsets'
    assert " pred = " in updates[0][1]
    bounds = updates[1][1].split("set_bounds = [")[1].split("]")[0].split(", ")
    for bound, arg in zip(bounds, ("%arg5", "%arg6"), strict=True):
        name, rest = defs[bound]
        assert name == "arith.maxsi"
        diff, zero = rest.split(" : ")[0].split(", ")
        assert defs[zero] == ("arith.constant", "0 : i32")
        assert defs[diff][0] == "arith.subi" and defs[diff][1].startswith(arg + ", ")
    assert " pred = " not in updates[2][1]  # no pred of its own, not the source's again


@pytest.mark.parametrize("target", ["gfx942", "gfx950"])
def test_mfma_layout_needs_transposed_given(target: str) -> None:
    """Triton 3.9.0's ``#ttg.amd_mfma`` has no default for ``isTransposed`` (Gluon's
    ``AMDMFMALayout`` requires it): an omitted one is a located error naming the field,
    at the function whose signature holds the layout."""
    with pytest.raises(TileCompileError, match=f"needs field 'transposed' on {target}") as e:
        lower_tile_module(DEFAULTS, target, fuse=False)
    assert (e.value.line, e.value.col) == (5, 3)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("target", ["gfx942", "gfx950"])
def test_mfma_layout_takes_transposed_as_given(target: str, transposed: bool) -> None:
    given = DEFAULTS.replace("2, 2>}>", f"2, 2>, transposed = {str(transposed).lower()}}}>")
    ttgir = lower_tile_module(given, target, fuse=False).ttgir
    (mma,) = [line for line in ttgir.splitlines() if line.startswith("#mma = ")]
    assert mma.endswith(f"isTransposed = {str(transposed).lower()}}}>"), mma


# A module that names no target: accepted (gfx1250 takes the omitted flag), refused at
# the tile op when lowered for an MFMA target.
UNTARGETED = MFMA[(64, 64)].replace(", transposed = true", "")


def test_an_untargeted_module_is_checked_again_for_an_mfma_target() -> None:
    with pytest.raises(TileCompileError, match="needs field 'transposed' on gfx950") as e:
        lower_tile_module(UNTARGETED, "gfx950", fuse=False)
    assert (e.value.line, e.value.col) == (8, 10)  # the tile.wmma
    ttgir = lower_tile_module(UNTARGETED, "gfx1250", fuse=False).ttgir
    assert "#ttg.amd_wmma<{version = 3, isTranspose = false," in ttgir


# A partitioned buffer on the MFMA targets: its inner layout, or an unswizzled
# row-major one when it names none.
PARTITIONED = """
#p = #tile.partitioned_shared<{num_partitions = 2, num_groups = 1, partition_dim = 0}>
#q = #tile.partitioned_shared<{num_partitions = 2, num_groups = 1, partition_dim = 0,
    layout = #tile.swizzled_shared<{vec = 4, per_phase = 2, max_phase = 4,
                                    order = array<i64: 1, 0>}>}>
module attributes {tile.num_warps = 4 : i32} {
  func.func private @f(%a: !tile.shared<tensor<64x64xf16, #p>>,
                       %b: !tile.shared<tensor<64x64xf16, #q>>) {
    return
  }
}
"""


@pytest.mark.parametrize("target", ["gfx942", "gfx950"])
def test_a_partitioned_buffer_takes_its_inner_layout_or_none(target: str) -> None:
    ttgir = lower_tile_module(PARTITIONED, target, fuse=False).ttgir
    aliases = dict(
        line.split(" = ", 1) for line in ttgir.splitlines() if line.startswith("#shared")
    )
    (header,) = [line for line in ttgir.splitlines() if "tt.func private @f(" in line]
    a, b = [piece.split(", #smem")[0].split(", ")[-1] for piece in header.split("%arg")[1:]]
    assert (
        aliases[a] == "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
    )
    assert (
        aliases[b] == "#ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [1, 0]}>"
    )


SCALED = (
    Path(__file__).resolve().parents[1]
    / "lit"
    / "lowering"
    / ("convert-tile-to-triton-gpu-scaled-wmma.mlir")
)


def test_gfx950_mx_scale_layouts_are_one_mfma_tile_per_warp() -> None:
    """The block scales of gfx950's scaled MFMA (the lit file's module, whose gfx950
    check leaves the scales' layouts open): each lane holds its row's four scales,
    the warps split M (A's scales) or N (B's) in 32-row tiles, none repeated in
    registers."""
    ttgir = lower_tile_module(SCALED.read_text(), "gfx950", fuse=False).ttgir
    layouts = [line for line in ttgir.splitlines() if line.startswith("#linear")]
    lanes = "lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 1]]"
    assert layouts == [
        "#linear = #ttg.linear<{register = [[0, 2]], " + lanes + ", warp = [[0, 0], [32, 0]], "
        "block = []}>",
        "#linear1 = #ttg.linear<{register = [[0, 2]], " + lanes + ", warp = [[32, 0], [0, 0]], "
        "block = []}>",
    ]
