"""IR edits through the bindings (``gemm_opt.dialect.edit``) and typed locations.

The variants the ISA report, the compile-time benchmark and the tests derive
(no hints, bf16, divisibility facts) are edits of a parsed module; these
tests pin what each edit changes, what it leaves alone, and the edits it
refuses.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from gemm_opt.core.contract import DIVISIBILITY, TRITON_DIVISIBILITY
from gemm_opt.core.diagnostics import collect, position_of
from gemm_opt.core.ext_compat import MLIRError, ir
from gemm_opt.dialect import make_context
from gemm_opt.dialect.edit import (
    EditError,
    annotate_arguments,
    drop_warp_hints,
    edited,
    erase_ops,
    functions,
    has_argument_attr,
    integer_of_width,
    ops_named,
    predicate_copy,
    retype_elements,
    set_argument_attr,
    set_constant,
    set_num_warps,
    set_wait_counts,
    set_warp_hints,
    warp_hints,
    with_fields,
    without_hints,
)
from gemm_opt.tools import isa_report

ROOT = Path(__file__).resolve().parents[2]
GEMM = (ROOT / "examples" / "gemm_gfx1250.mlir").read_text()

#: Constants of every kind the retyping has to follow.
CONSTANTS = """
module {
  func.func @k(%p: !tile.ptr<f16>, %x: f16) -> (f16, tensor<4xf16>, tensor<4xf32>, f32) {
    %h = arith.constant 1.5 : f16
    %t = arith.constant dense<2.0> : tensor<4xf16>
    %f = arith.constant dense<3.0> : tensor<4xf32>
    %s = arith.constant 4.0 : f32
    return %h, %t, %f, %s : f16, tensor<4xf16>, tensor<4xf32>, f32
  }
}
"""

FUSED = """
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d = !tile.tensor_desc<tensor<64x64xf16, #s>>
!b = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%d: !d, %d1: !d, %b0: !b, %b1: !b) {
    "tile.async_tdm_fused_copy_global_to_local"(%d, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 3, 12>} : (!d, !d, !b, !b) -> ()
    return
  }
}
"""


@pytest.fixture
def ctx():
    with make_context() as c:
        yield c


def _types(module: ir.Module) -> list[tuple[str, tuple[int, ...], str]]:
    """(kind, shape, element type) of every value of the module, in program order."""
    found: list[tuple[str, tuple[int, ...], str]] = []

    def describe(t: ir.Type) -> tuple[str, tuple[int, ...], str]:
        shape = tuple(getattr(t, "shape", ()))
        return type(t).__name__, shape, str(getattr(t, "element_type", t))

    def visit(op: ir.Operation) -> ir.WalkResult:
        found.extend(describe(r.type) for r in op.results)
        for region in op.regions:
            for block in region.blocks:
                found.extend(describe(a.type) for a in block.arguments)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


# ---- warp hints ----------------------------------------------------------------------


def test_drop_warp_hints_removes_every_hint_and_nothing_else(ctx):
    module = ir.Module.parse(GEMM)
    types = _types(module)
    assert warp_hints(module) == [0x0F, 0xF0, 0x0F, 0xF0]
    assert drop_warp_hints(module) == 4
    assert warp_hints(module) == []
    assert _types(module) == types
    assert drop_warp_hints(module) == 0  # idempotent


def test_a_fused_copy_has_no_unhinted_form(ctx):
    module = ir.Module.parse(FUSED)
    with pytest.raises(EditError, match="members need them"):
        drop_warp_hints(module)


def test_dropping_a_hint_under_its_derived_layout_is_refused(ctx):
    from gemm_opt.core.pipeline import Registry, build_pass_manager
    from gemm_opt.passes import PASSES

    module = ir.Module.parse(GEMM)
    pm = build_pass_manager("builtin.module(tile-assign-tdm-warp-layout)", Registry(passes=PASSES))
    pm.run(module.operation)
    with pytest.raises(EditError, match="dropping the warp hints gives invalid IR"):
        drop_warp_hints(module)


# ---- element types -------------------------------------------------------------------


def test_retype_turns_the_fp16_gemm_into_bf16(ctx):
    module = ir.Module.parse(GEMM)
    before = _types(module)
    retype_elements(module, ir.F16Type.get(), ir.BF16Type.get())
    after = _types(module)
    assert [t for t in before if t[2] == "f16"][:3] == [("PtrType", (), "f16")] * 3
    assert after == [(k, s, "bf16" if e == "f16" else e) for k, s, e in before]
    fn = functions(module)[0]
    assert [str(t) for t in fn.type.inputs[:3]] == ["!tile.ptr<bf16>"] * 3
    assert warp_hints(module) == [0x0F, 0xF0, 0x0F, 0xF0]


def test_retype_follows_constants_and_leaves_other_types(ctx):
    module = ir.Module.parse(CONSTANTS)
    retype_elements(module, ir.F16Type.get(), ir.BF16Type.get())
    fn = functions(module)[0]
    assert [str(t) for t in fn.type.inputs] == ["!tile.ptr<bf16>", "bf16"]
    assert [str(t) for t in fn.type.results] == ["bf16", "tensor<4xbf16>", "tensor<4xf32>", "f32"]
    values = [
        op.attributes["value"] for op in fn.entry_block.operations if "value" in op.attributes
    ]
    assert [str(v) for v in values] == [
        "1.500000e+00 : bf16",
        "dense<2.000000e+00> : tensor<4xbf16>",
        "dense<3.000000e+00> : tensor<4xf32>",
        "4.000000e+00 : f32",
    ]


def test_retype_refuses_a_non_splat_constant(ctx):
    module = ir.Module.parse(
        "func.func @k() -> tensor<2xf16> {\n"
        "  %t = arith.constant dense<[1.0, 2.0]> : tensor<2xf16>\n"
        "  return %t : tensor<2xf16>\n}"
    )
    with pytest.raises(EditError, match="non-splat"):
        retype_elements(module, ir.F16Type.get(), ir.BF16Type.get())


# ---- argument attributes -------------------------------------------------------------


def test_annotate_integer_arguments(ctx):
    module = ir.Module.parse(GEMM)
    assert not has_argument_attr(module, TRITON_DIVISIBILITY)
    # The example states its leading dimensions (lda, ldb, ldc) 16-aligned.
    attrs = [ir.DictAttr(d) for d in functions(module)[0].arg_attrs]
    assert [DIVISIBILITY in d for d in attrs] == [False] * 6 + [True] * 3
    sixteen = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 16)
    n = annotate_arguments(module, integer_of_width(32), DIVISIBILITY, sixteen)
    assert n == 3  # M, N, K; not the pointers nor the i64 leading dimensions
    attrs = [ir.DictAttr(d) for d in functions(module)[0].arg_attrs]
    assert [DIVISIBILITY in d for d in attrs] == [False] * 3 + [True] * 6
    assert str(attrs[3][DIVISIBILITY]) == "16 : i32"


def test_set_argument_attr_keeps_the_others(ctx):
    module = ir.Module.parse("func.func @f(%x: i32 {a.one = 1 : i32}, %y: i64) {\n  return\n}")
    fn = functions(module)[0]
    set_argument_attr(fn, 0, "a.two", ir.UnitAttr.get())
    set_argument_attr(fn, 1, "a.three", ir.UnitAttr.get())
    d0, d1 = (ir.DictAttr(d) for d in fn.arg_attrs)
    assert ("a.one" in d0, "a.two" in d0, "a.three" in d1) == (True, True, True)
    with pytest.raises(EditError, match="has 2 arguments, no argument 2"):
        set_argument_attr(fn, 2, "a.four", ir.UnitAttr.get())


# ---- text in, text out ---------------------------------------------------------------


def test_edited_text_keeps_the_original_lines():
    """A diagnostic on a variant names the line of the original text."""
    text = without_hints(GEMM)
    line = next(i for i, s in enumerate(GEMM.splitlines(), 1) if "tile.local_alloc" in s)
    with make_context():
        module = ir.Module.parse(text)
        alloc = next(
            op
            for op in functions(module)[0].entry_block.operations
            if op.operation.name == "tile.local_alloc"
        )
        assert position_of(alloc.location)[0] == line


def test_edited_reports_where_the_text_does_not_parse():
    with pytest.raises(EditError) as info:
        edited("module {\n  func.func @f( {\n}\n")
    assert (info.value.line, info.value.col) == (2, 16)
    assert str(info.value) == "2:16: expected non-function type"


# ---- typed locations -----------------------------------------------------------------


def test_position_of_reads_typed_locations(ctx):
    f = ir.Location.file("a.mlir", 3, 4)
    assert position_of(f) == (3, 4)
    assert position_of(ir.Location.name("n", f)) == (3, 4)
    assert position_of(ir.Location.callsite(ir.Location.file("b", 7, 8), [f])) == (7, 8)
    fused = ir.Location.fused([ir.Location.unknown(), ir.Location.name("x"), f])
    assert position_of(fused) == (3, 4)
    assert position_of(ir.Location.unknown()) == (0, 0)
    assert position_of(None) == (0, 0)


def test_parse_errors_carry_typed_locations(ctx):
    with collect(ctx) as diags, pytest.raises(MLIRError):
        ir.Module.parse("module {\n  func.func @f( {\n}\n")
    assert [(d.severity, d.line, d.col) for d in diags] == [("error", 2, 16)]


# ---- the ISA report's variants ------------------------------------------------------


@pytest.mark.parametrize("variant", isa_report.VARIANTS)
@pytest.mark.parametrize("dtype", isa_report.DTYPES)
def test_isa_report_variants(variant, dtype):
    with make_context():
        module = ir.Module.parse(isa_report.variant_text(GEMM, variant, dtype))
        hinted = variant not in ("unhinted", "derived")
        # One A and one B copy per prologue stage and one pair in the loop
        # (the deep variant's prologue fills three of its four buffers).
        copies = 4 if variant == "deep" else 2
        assert warp_hints(module) == ([0x0F, 0xF0] * copies if hinted else [])
        # Every variant states the example's 16-aligned leading dimensions;
        # "aligned" states M, N and K divisible by 16 too.
        attrs = [DIVISIBILITY in ir.DictAttr(d) for d in functions(module)[0].arg_attrs]
        assert attrs == [False] * 3 + [variant == "aligned"] * 3 + [True] * 3
        inputs = [str(t) for t in functions(module)[0].type.inputs[:3]]
        assert inputs == [f"!tile.ptr<{dtype}>"] * 3


def test_isa_report_rejects_bad_input_at_its_position(tmp_path, capsys):
    bad = tmp_path / "bad.mlir"
    bad.write_text("module {\n  func.func @f( {\n}\n")
    assert isa_report.main(["--input", str(bad)]) == 1
    assert capsys.readouterr().err == f"{bad}:2:16: error: expected non-function type\n"


def test_isa_report_halves_the_k_block_only_where_the_buffers_do_not_fit():
    assert isa_report.fitting_block_k(GEMM, "gfx1250") is None
    assert isa_report.fitting_block_k(GEMM, "gfx950") is None
    assert isa_report.fitting_block_k(GEMM, "gfx942") == 32  # 73,680 B > 64 KiB


def test_the_k_block_edit_keeps_the_gemm_exact():
    """The BLOCK_K=32 kernel the report compiles for gfx942 computes A @ B
    (checked by the model) in half the shared memory of the original."""
    from gemm_opt.model.interpreter import run_gemm

    with make_context():
        module = ir.Module.parse(GEMM)
        before = isa_report.shared_bytes(module)
        isa_report.with_block_k(module, 32)
        assert isa_report.block_shape(module) == (128, 128, 32)
        assert isa_report.shared_bytes(module) <= 64 * 1024 < before
        text = str(module)
    assert "interval = 32" in text and "x64x" not in text
    rng = np.random.default_rng(7)
    a = (rng.integers(-8, 9, size=(70, 100)) / 8).astype(np.float16)
    b = (rng.integers(-8, 9, size=(100, 50)) / 8).astype(np.float16)
    c, result = run_gemm(text, a, b, return_result=True)
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(c, want)
    # Each warp issues the prologue's two copies and two per K tile:
    # ceil(100 / 32) = 4 tiles (with the original 64: 2).
    np.testing.assert_array_equal(result.stats.instructions(), [2 + 2 * 4] * 8)


def test_the_k_block_edit_needs_a_k_block_it_can_tell_apart():
    with make_context():
        module = ir.Module.parse(GEMM)
        with pytest.raises(EditError, match="must differ from 128 and 128"):
            isa_report.with_block_k(module, 128)


def test_typed_edits_refuse_what_they_cannot_do():
    with make_context():
        module = ir.Module.parse(GEMM)
        wait = ops_named(module, "tile.async_tdm_wait")[0]
        with pytest.raises(
            EditError, match=re.escape("takes a 'tile.async_tdm_copy_global_to_local'")
        ):
            predicate_copy(wait, True)
        with pytest.raises(
            EditError, match=re.escape("takes an 'arith.constant', not 'tile.async_tdm_wait'")
        ):
            set_constant(wait, 1)
        with pytest.raises(EditError, match="its results are used"):
            erase_ops(module, "tile.program_id")
        with pytest.raises(EditError, match="is not a tile layout attribute"):
            with_fields(wait.attributes["num"], num=3)
        # Edits verify: a wait count is fine, a hint that is not axis-aligned is not.
        assert set_wait_counts(module, 1, old=2) == 1
        with pytest.raises(EditError, match="not axis-aligned"):
            set_warp_hints(module, 0x69)
        # Hints 15 and 240 of 8 warps name warps a 4-warp module does not have.
        with pytest.raises(EditError, match=r"setting tile\.num_warps = 4 gives invalid IR"):
            set_num_warps(module, 4)
        set_num_warps(module, 16, verify=False)  # unverified: the WMMA layout has 8 warps
        assert ir.IntegerAttr(module.operation.attributes["tile.num_warps"]).value == 16
