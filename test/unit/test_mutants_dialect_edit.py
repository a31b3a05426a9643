"""The module edits of ``dialect/edit.py`` at their edges (found by ``benchmarks/mutation.py``).

Each case pins a branch the edit tests left free: what the type mapper
rebuilds inside arrays, what ``substitute_attr`` leaves alone, the
``verify`` switches (an edit that gives invalid IR is refused with it and
printed without it, in the custom form), the filter of ``old`` counts, the
argument-attribute query, erasing an op one of whose results is used, the
predicated copy ``predicate_copy`` builds, and every path of ``set_constant``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import support.tile_build as tb

from gemm_opt.core.contract import DIVISIBILITY, WARP_PREDICATED
from gemm_opt.core.ext_compat import arith, cast, ir
from gemm_opt.dialect import make_context, tile
from gemm_opt.dialect.edit import (
    EditError,
    annotate_arguments,
    edited,
    erase_ops,
    functions,
    has_argument_attr,
    integer_of_width,
    map_types,
    ops_named,
    predicate_copy,
    retype_elements,
    set_constant,
    set_wait_counts,
    substitute_attr,
    unverified_text,
    with_fields,
)

ROOT = Path(__file__).resolve().parents[2]
GEMM = (ROOT / "examples" / "gemm_gfx1250.mlir").read_text()
COPY = tile.AsyncTDMCopyGlobalToLocalOp.OPERATION_NAME

#: An f16 add: retyped to i8 it is invalid IR (arith.addf takes floats).
ADD = """func.func @f(%x: f16) -> f16 {
  %y = arith.addf %x, %x : f16
  return %y : f16
}
"""


@pytest.fixture
def ctx() -> Iterator[ir.Context]:
    with make_context() as c, ir.Location.unknown():
        yield c


def _i8() -> ir.Type:
    return ir.IntegerType.get_signless(8)


# ---- the type mapper -----------------------------------------------------------------------


def test_retype_rebuilds_an_array_where_all_or_some_items_change(ctx) -> None:
    module = ir.Module.parse(
        "func.func @f() attributes {a.all = [1.5 : f16, 2.0 : f16], "
        "a.some = [1.5 : f16, 2 : i32], a.none = [3 : i32]} {\n  return\n}"
    )
    retype_elements(module, ir.F16Type.get(), ir.BF16Type.get())
    attrs = functions(module)[0].attributes
    assert [str(attrs[n]) for n in ("a.all", "a.some", "a.none")] == [
        "[1.500000e+00 : bf16, 2.000000e+00 : bf16]",
        "[1.500000e+00 : bf16, 2 : i32]",
        "[3 : i32]",
    ]


def test_an_edit_that_gives_invalid_ir_is_refused_only_when_verified(ctx) -> None:
    module = ir.Module.parse(ADD)
    with pytest.raises(EditError, match=re.escape("retyping f16 to i8 gives invalid IR")):
        retype_elements(module, ir.F16Type.get(), _i8())
    module = ir.Module.parse(ADD)
    map_types(module, lambda t: _i8() if t == ir.F16Type.get() else t, verify=False)
    # Printed as it is, in the custom form (a verified print falls back to the generic one).
    assert "%0 = arith.addf %arg0, %arg0 : i8" in unverified_text(module, locations=False)


def test_substitute_attr_replaces_that_attribute_and_no_other(ctx) -> None:
    module = ir.Module.parse(
        'func.func @f() attributes {a.x = "old", a.y = "other", a.z = ["old"]} {\n  return\n}'
    )
    substitute_attr(module, ir.StringAttr.get("old"), ir.StringAttr.get("new"))
    attrs = functions(module)[0].attributes
    assert [str(attrs[n]) for n in ("a.x", "a.y", "a.z", "sym_name")] == [
        '"new"',
        '"other"',
        '["new"]',
        '"f"',
    ]


def test_with_fields_takes_a_layout_seen_as_a_plain_attribute(ctx) -> None:
    layout = tile.BlockedAttr.build(
        size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0]
    )
    plain = ir.Attribute(layout)
    assert not isinstance(plain, tile.BlockedAttr)
    changed = with_fields(plain, order=[0, 1])
    assert changed == tile.BlockedAttr.build(
        size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[0, 1]
    )


# ---- counts, argument attributes, erasing -----------------------------------------------------


def _wait_counts(module: ir.Module) -> list[int]:
    return [
        ir.IntegerAttr(w.attributes["num"]).value for w in ops_named(module, "tile.async_tdm_wait")
    ]


def test_old_selects_the_counts_that_change(ctx) -> None:
    module = ir.Module.parse(GEMM)
    assert _wait_counts(module) == [2, 0]
    assert set_wait_counts(module, 1, old=2) == 1
    assert _wait_counts(module) == [1, 0]
    assert set_wait_counts(module, 3) == 2
    assert _wait_counts(module) == [3, 3]


def test_has_argument_attr_finds_one_argument_of_a_later_function(ctx) -> None:
    module = ir.Module.parse(
        "func.func @bare(%x: i64) {\n  return\n}\n"
        "func.func @f(%x: i64, %y: i32, %z: i64) {\n  return\n}"
    )
    sixteen = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 16)
    assert not has_argument_attr(module, DIVISIBILITY)
    assert annotate_arguments(module, integer_of_width(32), DIVISIBILITY, sixteen) == 1
    assert "arg_attrs" not in functions(module)[0].attributes
    assert has_argument_attr(module, DIVISIBILITY)
    assert not has_argument_attr(module, "tile.other")


def test_erasing_an_op_with_one_of_its_results_used_is_refused(ctx) -> None:
    module = ir.Module.parse(
        "func.func @f(%a: i32) -> i32 {\n"
        "  %s, %o = arith.addui_extended %a, %a : i32, i1\n"
        "  return %s : i32\n}"
    )
    with pytest.raises(EditError, match=r"cannot erase 'arith\.addui_extended': its results"):
        erase_ops(module, "arith.addui_extended")
    assert len(ops_named(module, "arith.addui_extended")) == 1


# ---- predicate_copy --------------------------------------------------------------------------


@pytest.mark.parametrize("warp_predicated", [False, True])
@pytest.mark.parametrize("value", [False, True])
def test_predicate_copy_gives_the_copy_an_i1_constant(ctx, value: bool, warp_predicated: bool):
    module = ir.Module.parse(GEMM)
    first = ops_named(module, COPY)[0]
    desc, buffer = first.operands
    new = predicate_copy(first, value, warp_predicated=warp_predicated)
    module.operation.verify()
    assert ops_named(module, COPY)[0] == new
    assert list(new.operands)[:2] == [desc, buffer]
    pred = new.operands[2].owner
    assert str(pred.attributes["value"]) == ("true" if value else "false")
    assert str(new.attributes["operandSegmentSizes"]) == "array<i32: 1, 1, 1, 0>"
    assert (WARP_PREDICATED in new.attributes) == warp_predicated
    assert ir.IntegerAttr(new.attributes["warp_used_hint"]).value == 0x0F


def test_predicate_copy_refuses_a_predicated_copy_and_other_ops(ctx) -> None:
    module = ir.Module.parse(GEMM)
    once = predicate_copy(ops_named(module, COPY)[0], True)
    refusal = re.escape(f"predicate_copy takes a '{COPY}' without pred or barrier")
    with pytest.raises(EditError, match=refusal):
        predicate_copy(once, False)
    two_operands = ir.Module.parse(
        "func.func @f(%a: i32) -> i32 {\n  %s = arith.addi %a, %a : i32\n  return %s : i32\n}"
    )
    with pytest.raises(EditError, match=refusal):
        predicate_copy(ops_named(two_operands, "arith.addi")[0], False)


# ---- set_constant ----------------------------------------------------------------------------


def _constant(type_text: str) -> tuple[ir.Module, ir.Operation]:
    """An ``arith.constant`` of one (a splat for a tensor) in a fresh kernel
    (returned with it: the module owns the op)."""
    t = ir.Type.parse(type_text)
    shaped = cast(t, ir.RankedTensorType)
    elem = t if shaped is None else shaped.element_type
    one = (
        ir.FloatAttr.get(elem, 1.0)
        if cast(elem, ir.FloatType) is not None
        else ir.IntegerAttr.get(elem, 1)
    )
    k = tb.kernel([], num_warps=4)
    with k.ip:
        value = one if shaped is None else ir.DenseElementsAttr.get_splat(shaped, one)
        return k.module, arith.ConstantOp(t, value).operation


@pytest.mark.parametrize(
    ("result", "values", "element", "want"),
    [
        ("i32", 7, None, "7 : i32"),
        ("index", 7, None, "7 : index"),
        ("f32", 2.5, None, "2.500000e+00 : f32"),
        ("i32", 7, "i64", "7 : i64"),
        ("f32", 3, "f16", "3.000000e+00 : f16"),
        ("tensor<2xi32>", 4, None, "dense<4> : tensor<2xi32>"),
        ("tensor<2xf32>", [1.5, -2], "f16", "dense<[1.500000e+00, -2.000000e+00]> : tensor<2xf16>"),
        ("tensor<2xi32>", (5, 6), None, "dense<[5, 6]> : tensor<2xi32>"),
    ],
)
def test_set_constant(ctx, result: str, values: object, element: str | None, want: str) -> None:
    _module, op = _constant(result)
    set_constant(op, values, None if element is None else ir.Type.parse(element))
    assert str(op.attributes["value"]) == want
    assert str(op.results[0].type) == want.rsplit(" : ", 1)[1]


# ---- edited: text in, text out -----------------------------------------------------------------


def _to_i8(module: ir.Module) -> None:
    retype_elements(module, ir.F16Type.get(), _i8(), verify=False)


def test_edited_verifies_unless_told_not_to() -> None:
    with pytest.raises(EditError, match="the edits gives invalid IR"):
        edited(ADD, _to_i8)
    text = edited(ADD, _to_i8, verify=False, locations=False)
    assert "%0 = arith.addf %arg0, %arg0 : i8" in text
