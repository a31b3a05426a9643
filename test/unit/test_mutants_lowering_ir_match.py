"""The warp-predicate matcher of the hand-off (``lowering.ir_match``), pinned where
the lit files left it open (found by ``benchmarks/mutation.py``).

``tile-emit-warp-predicates`` always writes ``((warp_id ^ anchor) & free_mask) == 0``;
the hand-off also takes the hand-written forms that say the same: no ``xori`` for
anchor 0, either operand order. Whatever form it takes, it strips exactly the warp
test (the ops no other op uses) and keeps the user's pred; a test on anything but
``tile.warp_id`` is not a warp test, and a copy marked ``tile.warp_predicated`` with
one is refused rather than losing that condition.
"""

from __future__ import annotations

import pytest
from support.ttgir_text import body_lines, definitions

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect.edit import edited, functions, retype_elements, set_argument_attr
from gemm_opt.lowering.compile import TileCompileError, lower_tile_module

# Every module: 8 warps, hint 0x3 (warps 0 and 1): anchor 0, free mask 6.

# Anchor 0 written without the xori: (warp_id & 6) == 0, and the user's %q.
NO_XOR = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @f(%a: !tile.ptr<f16>, %n: i32 {tile.divisibility = 16 : i32},
               %lda: i64 {tile.divisibility = 16 : i32}, %q: i1, %v: i32) {
    %one = arith.constant 1 : i64
    %da = "tile.make_tensor_descriptor"(%a, %n, %n, %lda, %one)
        {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %ba = "tile.local_alloc"() : () -> !ba
    %w = "tile.warp_id"() : () -> i32
    %c6 = arith.constant 6 : i32
    %c0 = arith.constant 0 : i32
    %m = arith.andi %w, %c6 : i32
    %on = arith.cmpi eq, %m, %c0 : i32
    %both = arith.andi %q, %on : i1
    "tile.async_tdm_copy_global_to_local"(%da, %ba, %both)
        {operandSegmentSizes = array<i32: 1, 1, 1, 0>, tile.warp_predicated,
         warp_used_hint = 3 : i32} : (!da, !ba, i1) -> ()
    return
  }
}
"""

# The warp test's zero is also the update's offset: that constant must stay.
SHARED_ZERO = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @f(%a: !tile.ptr<f16>, %n: i32 {tile.divisibility = 16 : i32},
               %lda: i64 {tile.divisibility = 16 : i32}, %q: i1, %v: i32) {
    %one = arith.constant 1 : i64
    %da = "tile.make_tensor_descriptor"(%a, %n, %n, %lda, %one)
        {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %ba = "tile.local_alloc"() : () -> !ba
    %w = "tile.warp_id"() : () -> i32
    %c6 = arith.constant 6 : i32
    %c0 = arith.constant 0 : i32
    %x = arith.xori %w, %c0 : i32
    %m = arith.andi %x, %c6 : i32
    %on = arith.cmpi eq, %m, %c0 : i32
    %both = arith.andi %q, %on : i1
    %d1 = "tile.update_tensor_descriptor"(%da, %c0, %n)
        {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!da, i32, i32) -> !da
    "tile.async_tdm_copy_global_to_local"(%d1, %ba, %both)
        {operandSegmentSizes = array<i32: 1, 1, 1, 0>, tile.warp_predicated,
         warp_used_hint = 3 : i32} : (!da, !ba, i1) -> ()
    return
  }
}
"""

# The same test of the argument %v instead of tile.warp_id: not a warp test.
NOT_WARP_ID = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @f(%a: !tile.ptr<f16>, %n: i32 {tile.divisibility = 16 : i32},
               %lda: i64 {tile.divisibility = 16 : i32}, %q: i1, %v: i32) {
    %one = arith.constant 1 : i64
    %da = "tile.make_tensor_descriptor"(%a, %n, %n, %lda, %one)
        {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %ba = "tile.local_alloc"() : () -> !ba
    %c6 = arith.constant 6 : i32
    %c0 = arith.constant 0 : i32
    %x = arith.xori %v, %c0 : i32
    %m = arith.andi %x, %c6 : i32
    %on = arith.cmpi eq, %m, %c0 : i32
    %both = arith.andi %q, %on : i1
    "tile.async_tdm_copy_global_to_local"(%da, %ba, %both)
        {operandSegmentSizes = array<i32: 1, 1, 1, 0>, tile.warp_predicated,
         warp_used_hint = 3 : i32} : (!da, !ba, i1) -> ()
    return
  }
}
"""

# The warp test is its own user pred: `on & on`. What the copy keeps reads the warp
# test, so none of it is dead, and tile.warp_id (lowered only inside a stripped test)
# is a located error, not an internal one at the module.
SELF_USER = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @f(%a: !tile.ptr<f16>, %n: i32 {tile.divisibility = 16 : i32},
               %lda: i64 {tile.divisibility = 16 : i32}, %q: i1, %v: i32) {
    %one = arith.constant 1 : i64
    %da = "tile.make_tensor_descriptor"(%a, %n, %n, %lda, %one)
        {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %ba = "tile.local_alloc"() : () -> !ba
    %w = "tile.warp_id"() : () -> i32
    %c6 = arith.constant 6 : i32
    %c0 = arith.constant 0 : i32
    %x = arith.xori %w, %c0 : i32
    %m = arith.andi %x, %c6 : i32
    %on = arith.cmpi eq, %m, %c0 : i32
    %both = arith.andi %on, %on : i1
    "tile.async_tdm_copy_global_to_local"(%da, %ba, %both)
        {operandSegmentSizes = array<i32: 1, 1, 1, 0>, tile.warp_predicated,
         warp_used_hint = 3 : i32} : (!da, !ba, i1) -> ()
    return
  }
}
"""

# The masked warp id is also an offset: it, and what it reads back to tile.warp_id,
# stays, and tile.warp_id is the located error.
MASK_USED = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @f(%a: !tile.ptr<f16>, %n: i32 {tile.divisibility = 16 : i32},
               %lda: i64 {tile.divisibility = 16 : i32}, %q: i1, %v: i32) {
    %one = arith.constant 1 : i64
    %da = "tile.make_tensor_descriptor"(%a, %n, %n, %lda, %one)
        {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %ba = "tile.local_alloc"() : () -> !ba
    %w = "tile.warp_id"() : () -> i32
    %c6 = arith.constant 6 : i32
    %c0 = arith.constant 0 : i32
    %x = arith.xori %w, %c0 : i32
    %m = arith.andi %x, %c6 : i32
    %on = arith.cmpi eq, %m, %c0 : i32
    %both = arith.andi %q, %on : i1
    %d1 = "tile.update_tensor_descriptor"(%da, %m, %n)
        {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!da, i32, i32) -> !da
    "tile.async_tdm_copy_global_to_local"(%d1, %ba, %both)
        {operandSegmentSizes = array<i32: 1, 1, 1, 0>, tile.warp_predicated,
         warp_used_hint = 3 : i32} : (!da, !ba, i1) -> ()
    return
  }
}
"""


def _copy_pred(ttgir: str) -> tuple[str, dict[str, tuple[str, str]]]:
    """The value the copy's descriptor update is predicated on, and the definitions."""
    lines = body_lines(ttgir)
    defs = definitions(lines)
    (copy,) = [line for line in lines if "amdg.async_tdm_copy_global_to_local" in line]
    desc = copy.split("amdg.async_tdm_copy_global_to_local ")[1].split(" ")[0]
    name, rest = defs[desc]
    assert name == "amdg.update_tensor_descriptor", (desc, name)
    return rest.split(" pred = ")[1].split(" ")[0], defs


def _no_warp_test_left(ttgir: str) -> None:
    ops = {name for name, _ in definitions(body_lines(ttgir)).values()}
    assert not ops & {"arith.xori", "arith.cmpi", "arith.andi"}, ops


def test_anchor_zero_without_xori_is_stripped_to_the_user_pred() -> None:
    ttgir = lower_tile_module(NO_XOR, "gfx1250", fuse=False).ttgir
    pred, defs = _copy_pred(ttgir)
    assert defs[pred] == ("arith.extui", "%arg3 : i1 to i32")  # the user's %q alone
    _no_warp_test_left(ttgir)


def test_a_constant_the_warp_test_shares_stays_for_its_other_user() -> None:
    ttgir = lower_tile_module(SHARED_ZERO, "gfx1250", fuse=False).ttgir
    pred, defs = _copy_pred(ttgir)
    assert defs[pred] == ("arith.extui", "%arg3 : i1 to i32")
    _no_warp_test_left(ttgir)
    lines = body_lines(ttgir)
    (update,) = [
        line for line in lines if "amdg.update_tensor_descriptor" in line and "pred =" not in line
    ]
    offsets = update.split("add_offsets = [")[1].split("]")[0].split(", ")
    assert defs[offsets[0]] == ("arith.constant", "0 : i32")
    assert offsets[1] == "%arg1"


def test_a_test_of_another_value_is_not_a_warp_test() -> None:
    with pytest.raises(TileCompileError, match="its pred is not 'user_pred & "):
        lower_tile_module(NOT_WARP_ID, "gfx1250", fuse=False)


def test_a_user_pred_that_is_the_warp_test_is_a_located_error() -> None:
    with pytest.raises(TileCompileError, match=r"'tile\.warp_id' has no TritonGPU equivalent") as e:
        lower_tile_module(SELF_USER, "gfx1250", fuse=False)
    line = SELF_USER.splitlines().index('    %w = "tile.warp_id"() : () -> i32') + 1
    assert (e.value.line, e.value.col) == (line, 10)


def test_a_warp_test_read_elsewhere_is_kept_back_to_the_warp_id() -> None:
    with pytest.raises(TileCompileError, match=r"'tile\.warp_id' has no TritonGPU equivalent") as e:
        lower_tile_module(MASK_USED, "gfx1250", fuse=False)
    line = MASK_USED.splitlines().index('    %w = "tile.warp_id"() : () -> i32') + 1
    assert (e.value.line, e.value.col) == (line, 10)


# ---- the divisibility facts that choose gfx950's direct-to-LDS copies ----------------
#
# A direct copy moves 16-byte vectors, so every extent and outer stride of the
# descriptor must be a proven multiple of 16 bytes; else the copy goes through
# registers (tt.load, ttg.local_store). The outer stride is the constant 64 here.


DESCRIPTOR = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx950"} {
  func.func @f(%a: !tile.ptr<f16>, %m: i32, %k: i32) {
    %one = arith.constant 1 : i64
    %c64 = arith.constant 64 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %k, %c64, %one)
        {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %b = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%d, %b)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
"""

# The rows extent is computed from %m: no fact of its own, whatever %m states.
COMPUTED = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<64x64xf64, #s>>
!ba = !tile.shared<tensor<64x64xf64, #s>>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx950"} {
  func.func @f(%a: !tile.ptr<f64>, %m: i32 {tile.divisibility = 16 : i32},
               %k: i32 {tile.divisibility = 16 : i32}) {
    %one = arith.constant 1 : i64
    %c64 = arith.constant 64 : i64
    %m2 = arith.addi %m, %m : i32
    %d = "tile.make_tensor_descriptor"(%a, %m2, %k, %c64, %one)
        {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f64>, i32, i32, i64, i64) -> !da
    %b = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%d, %b)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
"""


def _variant(elem: str, m: int | None, k: int | None) -> str:
    """DESCRIPTOR with elements ``elem`` and ``tile.divisibility`` m and k on the extents."""

    def edit(module: ir.Module) -> None:
        retype_elements(module, ir.F16Type.get(), ir.Type.parse(elem))
        (fn,) = functions(module)
        i32 = ir.IntegerType.get_signless(32)
        for index, value in ((1, m), (2, k)):
            if value is not None:
                set_argument_attr(fn, index, "tile.divisibility", ir.IntegerAttr.get(i32, value))

    return edited(DESCRIPTOR, edit)


def _copy_path(module: str) -> str:
    lines = body_lines(lower_tile_module(module, "gfx950", fuse=False).ttgir)
    ops = {name for name, _ in definitions(lines).values()}
    direct = "ttg.async_copy_global_to_local" in ops
    stored = any(line.startswith("ttg.local_store ") for line in lines)
    assert direct != stored, lines
    return "direct" if direct else "registers"


@pytest.mark.parametrize(
    ("elem", "m", "k", "path"),
    [
        ("f16", 16, 16, "direct"),
        # One-byte elements: 16 of them are a whole vector.
        ("f8E4M3FN", 16, 16, "direct"),
        # f64: an extent known to be even is 16 bytes; one not known is not.
        ("f64", 2, 2, "direct"),
        ("f64", None, None, "registers"),  # no argument attributes at all
        ("f64", None, 16, "registers"),  # none on %m
        # A stated 0 is no fact (it would make every extent a multiple of anything).
        ("f16", 0, 0, "registers"),
    ],
)
def test_direct_copies_need_whole_vector_facts(
    elem: str, m: int | None, k: int | None, path: str
) -> None:
    assert _copy_path(_variant(elem, m, k)) == path


def test_a_computed_extent_has_no_fact() -> None:
    assert _copy_path(COMPUTED) == "registers"


# ---- integer constants reach Triton's builders as signed values -----------------------

CONSTANTS = """
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func private @consts() -> (i8, i16, i32, i64, i8, i32, i64, f8E8M0FNU) {
    %a = arith.constant -128 : i8
    %b = arith.constant -2 : i16
    %c = arith.constant -1 : i32
    %d = arith.constant -9223372036854775808 : i64
    %e = arith.constant 127 : i8
    %f = arith.constant 2147483647 : i32
    %h = arith.constant 9223372036854775807 : i64
    %g = arith.constant 4.0 : f8E8M0FNU
    return %a, %b, %c, %d, %e, %f, %h, %g : i8, i16, i32, i64, i8, i32, i64, f8E8M0FNU
  }
}
"""


def test_integer_constants_keep_their_values_at_every_width() -> None:
    lines = body_lines(lower_tile_module(CONSTANTS, "gfx1250", fuse=False).ttgir)
    constants = [
        line.split(" = arith.constant ")[1] for line in lines if " = arith.constant " in line
    ]
    assert constants == [
        "-128 : i8",
        "-2 : i16",
        "-1 : i32",
        "-9223372036854775808 : i64",
        "127 : i8",
        "2147483647 : i32",
        "9223372036854775807 : i64",
        "-127 : i8",  # the E8M0 scale 4.0 = 2**2 is code 127 + 2 = 129, as Triton's i8
    ]
