"""The tile -> TTGIR lowering, its pipelines and ``compile_tile_module``.

Triton compiles take seconds each, so the compiled kernels are module-scoped
fixtures (one compile per target).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.scripts import load_script

from gemm_opt import dialect
from gemm_opt.core.contract import DIVISIBILITY
from gemm_opt.core.ext_compat import PassManager, ir
from gemm_opt.core.pass_base import TilePass
from gemm_opt.core.pipeline import PipelineError, resolve
from gemm_opt.dialect.edit import (
    annotate_arguments,
    edited,
    integer_of_width,
    ops_named,
    replace_op,
    retype_elements,
    set_constant,
    substitute_attr,
    with_fields,
)
from gemm_opt.lowering import PASSES, PIPELINE_DOCS, PIPELINES, REGISTRY
from gemm_opt.lowering import convert_tile_to_triton_gpu as convert_module
from gemm_opt.lowering.compile import (
    HandOff,
    TileCompileError,
    compile_tile_module,
    hand_off,
    lower_tile_module,
    split_hand_off,
)
from gemm_opt.lowering.convert_tile_to_triton_gpu import wmma_warp_bases
from gemm_opt.lowering.pipelines import tile_passes, tile_to_ttgir

ROOT = Path(__file__).resolve().parents[2]
GEMM = (ROOT / "examples" / "gemm_gfx1250.mlir").read_text()


def _gemm_for(target: str) -> str:
    """The example GEMM, with 128x128x32 blocks on gfx942: its double-buffered
    128x128x64 blocks take 73,680 bytes of LDS, and gfx942 has 64 KiB."""
    if target != "gfx942":
        return GEMM
    example = load_script(ROOT / "examples" / "gemm_gfx1250.py", "gemm_example")
    return example.gemm.build_ir(num_warps=8, target="gfx942", BLOCK_K=32)


def _line_of(text: str, needle: str, nth: int = 0) -> int:
    rows = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    return rows[nth]


# ---- registry and pipelines ---------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PASSES))
def test_lowering_pass_is_registered_under_its_name(name):
    cls = PASSES[name]()
    assert issubclass(cls, TilePass)
    assert cls.name == name
    doc = cls.__doc__ or ""
    assert re.search(r"^\s*Before\b", doc, re.MULTILINE)
    assert re.search(r"^\s*After\b", doc, re.MULTILINE)
    assert (ROOT / "test" / "lit" / "lowering" / f"{name}.mlir").is_file()


def test_pipelines_are_documented():
    assert set(PIPELINES) == set(PIPELINE_DOCS)


def test_tile_to_ttgir_pass_order():
    assert tile_to_ttgir("gfx1250") == [
        "tile-lower-gemm-schedule",
        "tile-assign-tdm-warp-layout",
        "tile-fuse-tdm-copies",
        "tile-emit-warp-predicates",
        "convert-tile-to-triton-gpu{target=gfx1250}",
    ]
    assert tile_to_ttgir("gfx1250", fuse=False, derive_hints=True) == [
        "tile-lower-gemm-schedule",
        "tile-derive-warp-hints",
        "tile-assign-tdm-warp-layout",
        "tile-emit-warp-predicates",
        "convert-tile-to-triton-gpu{target=gfx1250}",
    ]
    # Without TDM only the schedule lowering and the conversion run: hints are dropped there.
    assert tile_passes("gfx950", derive_hints=True) == ["tile-lower-gemm-schedule"]
    assert tile_to_ttgir("gfx942") == [
        "tile-lower-gemm-schedule",
        "convert-tile-to-triton-gpu{target=gfx942}",
    ]
    with pytest.raises(ValueError, match="unknown target"):
        tile_passes("gfx90a")


def test_named_pipeline_expands():
    text = PIPELINES["tile-to-ttgir"]({"target": "gfx1250", "fuse": "false"})
    assert text.split(",") == tile_to_ttgir("gfx1250", fuse=False)


def test_the_hand_off_is_split_off_the_end_of_a_pipeline():
    def split(text: str) -> tuple[list[str], HandOff | None]:
        steps, handoff = split_hand_off(resolve(text, REGISTRY))
        return [step.name for step in steps], handoff

    assert split("tile-fuse-tdm-copies") == (["tile-fuse-tdm-copies"], None)
    names, handoff = split("builtin.module(tile-to-ttgir{target=gfx1250 fuse=false})")
    assert names == [
        "tile-lower-gemm-schedule",
        "tile-assign-tdm-warp-layout",
        "tile-emit-warp-predicates",
    ]
    assert handoff == HandOff("gfx1250", "auto")
    assert split("builtin.module(tile-to-ttgir{target=gfx942})") == (
        ["tile-lower-gemm-schedule"],
        HandOff("gfx942", "auto"),
    )
    names, handoff = split(
        "tile-fuse-tdm-copies,convert-tile-to-triton-gpu{target=cuda:90 lds-copies=registers}"
    )
    assert (names, handoff) == (["tile-fuse-tdm-copies"], HandOff("cuda:90", "registers"))
    with pytest.raises(PipelineError, match="must end the pipeline") as info:
        split("convert-tile-to-triton-gpu,tile-fuse-tdm-copies")
    assert info.value.col == 1
    with pytest.raises(PipelineError, match="cannot be nested"):
        split("func.func(convert-tile-to-triton-gpu)")
    with pytest.raises(PipelineError, match="lds-copies"):
        split("convert-tile-to-triton-gpu{lds-copies=fast}")
    _, handoff = split("convert-tile-to-triton-gpu{target=cuda:90 mma=mma_v2}")
    assert handoff == HandOff("cuda:90", "auto", "mma_v2")
    with pytest.raises(
        PipelineError, match="option 'mma' expects one of auto, mma_v2, wgmma, got 'v3'"
    ):
        split("convert-tile-to-triton-gpu{mma=v3}")


def test_the_hand_off_is_not_a_pass_over_our_ir():
    ctx = dialect.make_context()
    with ctx:
        module = ir.Module.parse(GEMM)
        pm = PassManager("builtin.module")
        cls = PASSES["convert-tile-to-triton-gpu"]()
        pm.add(cls(target="gfx1250"), cls.name)
        with pytest.raises(Exception, match="hands the module to Triton"):
            pm.run(module.operation)


def test_wmma_warp_bases_step_n_first():
    assert wmma_warp_bases([4, 2]) == [[0, 1], [1, 0], [2, 0]]
    assert wmma_warp_bases([2, 2]) == [[0, 1], [1, 0]]
    assert wmma_warp_bases([1, 4]) == [[0, 1], [0, 2]]


# ---- TTGIR without Triton's backend ---------------------------------------------------


def test_lowered_text_has_no_tile_ops_and_keeps_locations():
    low = lower_tile_module(GEMM, "gfx1250", fuse=False)
    assert "tile." not in low.ttgir
    assert low.ttgir.count("= amdg.async_tdm_copy_global_to_local ") == 4
    assert "warp_used_hint = 15 : i32" in low.ttgir
    # Every TDM copy carries the location of the tile copy it comes from.
    tile_rows = {
        i + 1
        for i, line in enumerate(GEMM.splitlines())
        if '"tile.async_tdm_copy_global_to_local"' in line
    }
    aliases = dict(re.findall(r"^(#loc\d*) = loc\(\"-\":(\d+):\d+\)", low.ttgir, re.M))
    rows = set()
    for line in low.ttgir.splitlines():
        if "= amdg.async_tdm_copy_global_to_local " in line:
            ref = re.search(r"loc\((#loc\d*)\)\s*$", line).group(1)
            rows.add(int(aliases[ref]))
    assert rows == tile_rows


def test_fusion_and_predicates_in_the_default_pipeline():
    low = lower_tile_module(GEMM, "gfx1250")
    assert "tile.async_tdm_fused_copy_global_to_local" in low.tile
    assert low.ttgir.count("= amdg.async_tdm_fused_copy_global_to_local ") == 2
    assert re.search(r"amdg\.async_tdm_wait\s+\{num = 1 : i32\}", low.ttgir)
    # Unfused, the copies are warp-predicated in tile IR and stripped in TTGIR.
    low = lower_tile_module(GEMM, "gfx1250", fuse=False)
    assert "tile.warp_predicated" in low.tile and "tile.warp_id" in low.tile
    assert "warp_id" not in low.ttgir and "arith.xori" not in low.ttgir


def test_module_argument_is_not_changed():
    ctx = dialect.make_context()
    with ctx:
        module = ir.Module.parse(_gemm_for("gfx942"))
        before = str(module)
        low = lower_tile_module(module, "gfx942")
        assert str(module) == before
    assert "hip:gfx942" in low.ttgir and "warp_used_hint" not in low.ttgir


def _hand_off_error(module: ir.Module, target: str) -> TileCompileError:
    with pytest.raises(TileCompileError) as info:
        hand_off(module, target)
    return info.value


def _first_copy(module: ir.Module) -> ir.Operation:
    found = []

    def visit(op):
        if op.name == "tile.async_tdm_copy_global_to_local":
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found[0]


def test_layout_changed_after_verification_is_an_error_at_the_copy():
    """The op verifier rejects a wrong tile.warp_layout at parse time; a pass
    that changes it afterwards is caught by the lowering, at the copy."""
    ctx = dialect.make_context()
    with ctx:
        module = ir.Module.parse(GEMM)
        from gemm_opt.passes.assign_tdm_warp_layout import AssignTdmWarpLayoutPass

        pm = PassManager("builtin.module")
        pm.add(AssignTdmWarpLayoutPass(), AssignTdmWarpLayoutPass.name)
        pm.run(module.operation)
        copy = _first_copy(module)
        good = copy.attributes["tile.warp_layout"]
        assert good.maybe_downcast().field_values()["anchor"] == 0
        copy.attributes["tile.warp_layout"] = with_fields(good, anchor=4)
        err = _hand_off_error(module, "gfx1250")
    assert err.message.startswith("tile.warp_layout #tile.tdm_warp_layout")
    assert "refusing to emit it" in err.message
    assert (err.line, err.stage) == (
        _line_of(GEMM, '"tile.async_tdm_copy_global_to_local"'),
        "convert",
    )


def test_tampered_predicate_is_an_error_at_the_copy():
    ctx = dialect.make_context()
    with ctx:
        module = ir.Module.parse(GEMM)
        pm = PassManager("builtin.module")
        from gemm_opt.passes.assign_tdm_warp_layout import AssignTdmWarpLayoutPass
        from gemm_opt.passes.emit_warp_predicates import EmitWarpPredicatesPass

        pm.add(AssignTdmWarpLayoutPass(), AssignTdmWarpLayoutPass.name)
        pm.add(EmitWarpPredicatesPass(), EmitWarpPredicatesPass.name)
        pm.run(module.operation)
        # The free-mask constant of the first copy's chain: 4 -> 6.
        chain_const = []

        def visit(op):
            if op.name == "arith.andi" and not chain_const:
                rhs = op.operands[1].owner
                if rhs.name == "arith.constant":
                    chain_const.append(rhs)
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        i32 = ir.IntegerType.get_signless(32)
        chain_const[0].attributes["value"] = ir.IntegerAttr.get(i32, 6)
        err = _hand_off_error(module, "gfx1250")
    assert err.message.startswith("the warp predicate ((warp_id ^ 0) & 6) == 0 disagrees")
    assert err.line == _line_of(GEMM, '"tile.async_tdm_copy_global_to_local"')


# ---- Triton -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gfx1250():
    return compile_tile_module(GEMM, "gfx1250")


def test_gfx1250_has_tdm_and_wmma_without_spills(gfx1250):
    m = gfx1250.metrics
    assert m.spills == 0
    assert m.tdm_loads_in_loop == 1  # one fused TDM instruction per K iteration
    assert m.wmma_in_loop == 16
    assert "tensor_load_to_lds" in gfx1250.asm["amdgcn"]
    assert "v_wmma_f32_16x16x32_f16" in gfx1250.asm["amdgcn"]
    assert gfx1250.hsaco[:4] == b"\x7fELF"
    assert set(gfx1250.asm) == {"tile", "ttgir", "llir", "amdgcn"}
    assert {"parse", "tile_passes", "convert", "triton"} <= set(gfx1250.stage_seconds)
    assert gfx1250.metadata["name"] == "gemm"


@pytest.mark.parametrize(
    ("target", "mfma"),
    [("gfx950", "v_mfma_f32_32x32x16_f16"), ("gfx942", "v_mfma_f32_32x32x8")],
)
def test_cdna_targets_compile_the_same_kernel(target, mfma):
    k = compile_tile_module(_gemm_for(target), target)
    m = k.metrics
    assert m.spills == 0 and m.tdm_loads == 0 and m.wmma == 0
    assert m.mfma_in_loop > 0
    assert mfma in k.asm["amdgcn"]
    assert "warp_used_hint" not in k.asm["ttgir"]


def test_gfx950_uses_direct_to_lds_copies_when_aligned():
    def aligned(module: ir.Module) -> None:
        sixteen = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 16)
        # M, N, K (i32) and lda, ldb, ldc (i64)
        assert annotate_arguments(module, integer_of_width(32, 64), DIVISIBILITY, sixteen) == 6

    low = lower_tile_module(edited(GEMM, aligned), "gfx950")
    assert "= ttg.async_copy_global_to_local " in low.ttgir
    assert "ttg.async_wait {num = 2 : i32}" in low.ttgir
    low = lower_tile_module(GEMM, "gfx950")  # no alignment facts: through registers
    assert "ttg.local_store " in low.ttgir and "async_copy" not in low.ttgir


def test_layouts_triton_rejects_are_verifier_errors_at_the_tile_op():
    bad = """
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 2, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func @bad(%c: tensor<64x64xf32, #acc>) -> tensor<64x64xf32, #bl> {
    %d = "tile.convert_layout"(%c) : (tensor<64x64xf32, #acc>) -> tensor<64x64xf32, #bl>
    return %d : tensor<64x64xf32, #bl>
  }
}
"""
    with pytest.raises(TileCompileError) as info:
        compile_tile_module(bad)
    err = info.value
    assert err.stage == "parse"
    assert (err.line, err.col) == (_line_of(bad, "tile.convert_layout"), 10)
    assert "warps_per_cta [2, 1] covers 2 warps, but 'tile.num_warps' = 4" in err.message


def test_our_diagnostics_point_at_the_tile_op():
    def warp_id_for_program_id(module: ir.Module) -> None:
        first = ops_named(module, "tile.program_id")[0]
        assert ir.IntegerAttr(first.attributes["axis"]).value == 0
        replace_op(first, "tile.warp_id")

    bad = edited(GEMM, warp_id_for_program_id)
    with pytest.raises(TileCompileError) as info:
        lower_tile_module(bad, "gfx1250")
    err = info.value
    assert err.stage == "convert"
    assert err.line == _line_of(GEMM, '"tile.program_id"() {axis = 0 : i32}')
    assert "no TritonGPU equivalent" in err.message


def test_unknown_target_is_reported():
    with pytest.raises(TileCompileError, match="unknown target"):
        lower_tile_module(GEMM, "gfx90a")


def test_an_abort_in_triton_names_the_tile_op_being_built(monkeypatch):
    """Below the verifier: a padded layout whose offset bases repeat a dim
    (what ``order = [0, 0]`` means) makes Triton's attribute builder abort.
    The hand-off runs in a child that reports each tile op it builds, so the
    abort ends as an error at that op, and this process lives on."""

    def repeated_dim(layouts, interval, amount, order, shape):
        shape = [int(s) for s in shape]
        bases = [[1 << b, 0] for _ in order for b in range(shape[0].bit_length() - 1)]
        return layouts.PaddedSharedLayout([[interval, amount]], bases, [], shape)

    from gemm_opt.lowering import layouts

    monkeypatch.setattr(layouts, "padded_layout", repeated_dim)
    with pytest.raises(TileCompileError) as info:
        lower_tile_module(GEMM, "gfx1250")
    err = info.value
    assert err.message.startswith(
        "Triton aborted (SIGABRT) while building the TritonGPU IR of 'tile.make_tensor_descriptor'"
    )
    assert (err.line, err.stage) == (_line_of(GEMM, '"tile.make_tensor_descriptor"'), "convert")
    assert "Assertion" in err.details


def test_a_layout_triton_cannot_convert_aborts_at_the_op_whose_type_it_is(monkeypatch):
    """Below the verifier: dot operands with kWidth 3 make Triton abort when it
    converts the layout to a linear layout. The hand-off converts each new
    tensor layout as it builds the type, so the error names that tile op."""
    from gemm_opt.lowering.context import HandOffContext

    original = HandOffContext.convert_encoding

    def k_width_3(self, attr, op, elem_bits=16):
        layout = original(self, attr, op, elem_bits)
        if isinstance(layout, self.tt.layouts.DotOperandLayout):
            return self.tt.layouts.DotOperandLayout(layout.operand_index, layout.parent, 3)
        return layout

    monkeypatch.setattr(HandOffContext, "convert_encoding", k_width_3)
    with pytest.raises(TileCompileError) as info:
        lower_tile_module(GEMM, "gfx1250")
    err = info.value
    assert err.message.startswith(
        "Triton aborted (SIGABRT) while building the TritonGPU IR of 'tile.local_load'"
    )
    assert err.line == _line_of(GEMM, '"tile.local_load"')


#: A table of 8 i16 values stored through a pointer; the tests below give the
#: table other element types and values (:func:`_non_splat`).
NON_SPLAT = """
#bl = #tile.blocked<{size_per_thread = array<i64: 1>, threads_per_warp = array<i64: 32>, warps_per_cta = array<i64: 4>, order = array<i64: 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func @table(%p: !tile.ptr<i16>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %t = arith.constant dense<0> : tensor<8xi16, #bl>
    "tile.store_block"(%p, %n, %one, %c0, %t) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (!tile.ptr<i16>, i32, i64, i32, tensor<8xi16, #bl>) -> ()
    return
  }
}
"""


def _non_splat(elem: str, values: list | float) -> str:
    """``NON_SPLAT`` with the table in ``elem`` holding ``values`` (a list, or
    a splat), printed with the original locations and not verified (some
    element types are there to be refused)."""

    def edit(module: ir.Module) -> None:
        new = ir.Type.parse(elem)
        table = ops_named(module, "arith.constant")[2]
        set_constant(table, values, element_type=new)
        retype_elements(module, ir.IntegerType.get_signless(16), new, verify=False)

    return edited(NON_SPLAT, edit, verify=False)


@pytest.mark.parametrize(
    ("elem", "values"),
    [
        pytest.param("i32", [3, 3, 7, 7, 7, -1, 0, 0], id="i32-3, 3, 7, 7, 7, -1, 0, 0"),
        pytest.param(
            "f16",
            [1.5, 1.5, 2.0, 2.0, 2.0, -4.0, 0.0, 0.0],
            id="f16-1.5, 1.5, 2.0, 2.0, 2.0, -4.0, 0.0, 0.0",
        ),
        pytest.param(
            "i1",
            [True, True, False, False, False, True, False, False],
            id="i1-true, true, false, false, false, true, false, false",
        ),
    ],
)
def test_a_non_splat_constant_lowers_as_selects_over_runs(elem, values):
    text = _non_splat(elem, values)
    ttgir = compile_tile_module(text).asm["ttgir"]
    # Four runs: a splat of the first value, one select for each other run.
    assert ttgir.count("arith.select ") == 3
    assert "tt.make_range {end = 8 : i32, start = 0 : i32}" in ttgir
    assert "tt.store " in ttgir


def test_a_non_splat_constant_whose_elements_cannot_be_read_is_a_located_error():
    text = _non_splat("bf16", [1.0, 1.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0])
    with pytest.raises(TileCompileError, match="non-splat constant of bf16") as info:
        lower_tile_module(text)
    assert info.value.line == _line_of(NON_SPLAT, "arith.constant dense")


@pytest.mark.parametrize(
    ("elem", "bits"),
    [
        ("i8", 8),
        ("i64", 64),
        ("f32", 32),
        ("f64", 64),
        ("bf16", 16),
        ("f8E4M3FN", 8),
        ("f8E5M2", 8),
    ],
)
def test_element_types_lower_with_their_own_width(elem, bits):
    text = _non_splat(elem, 0)
    ttgir = lower_tile_module(text).ttgir
    assert f"!tt.ptr<{elem}>" in ttgir
    assert convert_module.element_bits(ir.Type.parse(elem, dialect.make_context())) == bits


@pytest.mark.parametrize("elem", ["index", "tf32"])
def test_element_types_triton_lacks_are_located_errors(elem):
    text = _non_splat(elem, 0)
    with pytest.raises(TileCompileError) as info:
        lower_tile_module(text)
    err = info.value  # the tile verifier's rule, at the op moving them
    assert "must have one of the element types i1, i8, i16, i32, i64, f16, bf16" in err.message
    assert err.message.endswith(f"got {elem}")
    assert err.line == _line_of(NON_SPLAT, '"tile.store_block"')


# ---- Triton never takes the process down ---------------------------------------------

INDEX_COPY = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xindex, #s>>
!ba = !tile.shared<tensor<128x64xindex, #s>>
module attributes {tile.num_warps = 8 : i32, tile.target = "gfx1250"} {
  func.func @copy(%a: !tile.ptr<index>, %m: i32, %lda: i64) {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<index>, i32, i32, i64, i64) -> !da
    %b = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%d, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    return
  }
}
"""


def _gemm_with_layouts(kind: str, **fields: object) -> str:
    """The example GEMM with ``fields`` changed in every layout of the kind
    ``kind`` (the operands' ``#tile.dot_operand``, the buffers'
    ``#tile.padded_shared``), printed unverified with its locations."""

    def edit(module: ir.Module) -> None:
        if kind == "dot_operand":
            found = [op.results[0].type.encoding for op in ops_named(module, "tile.local_load")]
        else:
            found = [op.results[0].type.layout_attr for op in ops_named(module, "tile.local_alloc")]
        olds = list(dict.fromkeys(found))
        assert len(olds) == 2  # A's and B's
        for old in olds:
            substitute_attr(module, old, with_fields(old, **fields), verify=False)

    return edited(GEMM, edit, verify=False)


#: Inputs Triton 3.9 aborts on (issue 7), made from the example GEMM.
ABORTING = {
    "k_width_3": lambda: _gemm_with_layouts("dot_operand", k_width=3),
    "padded_order_0_0": lambda: _gemm_with_layouts("padded_shared", order=(0, 0)),
    "index_copy": lambda: INDEX_COPY,
}


@pytest.mark.parametrize("case", sorted(ABORTING))
@pytest.mark.parametrize("emit", ["ttgir", "amdgcn"])
def test_inputs_triton_aborts_on_end_as_located_errors(tmp_path, case, emit):
    """Whether our verifier or the hand-off's isolation catches them, the tool
    prints one located error and exits 1: no abort, no traceback."""
    import subprocess
    import sys

    src = tmp_path / f"{case}.mlir"
    src.write_text(ABORTING[case]())
    proc = subprocess.run(
        [sys.executable, "-m", "gemm_opt.tools.opt", str(src), f"--emit={emit}", "-o", "-"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert re.match(rf"{re.escape(str(src))}:\d+:\d+: error: ", proc.stderr), proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("case", sorted(ABORTING))
def test_kernel_compile_survives_inputs_triton_aborts_on(case):
    with pytest.raises(TileCompileError) as info:
        compile_tile_module(ABORTING[case]())
    assert info.value.line > 0


# ---- the compile runs in a worker ----------------------------------------------------


def _no_program_id(module: ir.Module) -> None:
    replace_op(ops_named(module, "tile.program_id")[0], "tile.warp_id")


#: Bad inputs, one per stage the worker reports an error from.
REJECTED = {
    "parse": lambda: GEMM.replace('"tile.program_id"', '"tile.program_idx"', 1),
    "attributes": lambda: GEMM.replace('tile.target = "gfx1250"', 'tile.target = "gfx90a"'),
    "pipeline": lambda: GEMM,
    "convert": lambda: edited(GEMM, _no_program_id),
}


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_a_workers_diagnostics_equal_those_made_in_this_process(case):
    """The worker parses, runs the passes and converts; its errors come back
    as data with every field (message, position, stage, details) as the same
    work raises them here."""
    from gemm_opt.lowering import compile as compile_py

    text = REJECTED[case]()
    pipeline = "no-such-pass" if case == "pipeline" else None
    with pytest.raises(TileCompileError) as info:
        lower_tile_module(text, pipeline=pipeline)
    here = compile_py._lower_job(
        lambda item: None, text, None, True, False, pipeline, None, "-", "auto"
    )
    assert isinstance(here, compile_py._Rejected)
    err = info.value
    assert (err.message, err.line, err.col, err.stage, err.details) == (
        here.message,
        here.line,
        here.col,
        here.stage,
        here.details,
    )
    assert str(err) == str(here.error())
    if case in ("parse", "convert"):
        assert err.line > 0


def _scratch_files(report):
    from gemm_opt.lowering import isolation

    scratch = Path(isolation.scratch_dir())
    return sorted(str(p.relative_to(scratch)) for p in scratch.rglob("*"))


def test_every_compile_in_a_worker_compiles_and_leaves_its_folder_empty(gfx1250):
    """Triton's cache in the worker's folder finds nothing (each compile
    really compiles) and the files of a compile are removed after it."""
    from gemm_opt.lowering import triton_bridge

    again = compile_tile_module(GEMM, "gfx1250")
    # The same TTGIR again, compiled through every stage. (Triton's AMD backend
    # may order a few scalar instructions differently between compiles of one
    # TTGIR in one process, so the ELF bytes are not compared.)
    assert again.asm["ttgir"] == gfx1250.asm["ttgir"] and again.triton_stages["llir"] > 0
    listed = triton_bridge.run_in_worker(_scratch_files)
    assert listed.ok and listed.result == ["cache"]


def test_a_pass_that_leaves_the_module_invalid_is_an_error_at_the_op(monkeypatch):
    """The compile verifies once, after the last tile pass: what a pass broke
    is still the verifier's error at the op, in the tile_passes stage."""
    from gemm_opt.passes.fuse_tdm_copies import FuseTdmCopiesPass

    original = FuseTdmCopiesPass.run

    def tamper(self, module):
        original(self, module)
        first = ops_named(module, "tile.local_alloc")[0]
        first.attributes["tile.bogus"] = ir.UnitAttr.get()

    monkeypatch.setattr(FuseTdmCopiesPass, "run", tamper)
    with pytest.raises(TileCompileError) as info:
        lower_tile_module(GEMM, "gfx1250")
    err = info.value
    assert err.stage == "tile_passes"
    assert err.line == _line_of(GEMM, '"tile.local_alloc"')
    assert "unknown attribute 'tile.bogus'" in err.message
