"""The compile API's errors and results (``lowering.compile``), pinned where
test_lowering.py left them open (found by ``benchmarks/mutation.py``).

A :class:`TileCompileError` prints ``line:col: error: message`` (no position when
it is unknown) and keeps every diagnostic in ``details``; the ISA report of a
kernel without AMDGPU assembly is a ValueError naming the targets that have one.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from support.scripts import load_script

from gemm_opt.core.ext_compat import ir
from gemm_opt.lowering import compile as compile_mod
from gemm_opt.lowering.compile import CompiledKernel, TileCompileError


@pytest.mark.parametrize(("line", "col", "where"), [(0, 0, ""), (0, 7, ""), (3, 4, "3:4: ")])
def test_a_compile_error_prints_its_position_only_when_known(line: int, col: int, where: str):
    err = TileCompileError("bad op", line, col, stage="convert")
    assert str(err) == f"{where}error: bad op"
    assert (err.message, err.line, err.col, err.stage) == ("bad op", line, col, "convert")


def test_a_compile_error_keeps_its_details_or_its_message() -> None:
    assert TileCompileError("bad op").details == "bad op"
    assert TileCompileError("bad op", details="1:2: error: bad op\n3:4: note: here").details == (
        "1:2: error: bad op\n3:4: note: here"
    )


def _diag(severity: str, line: int, message: str) -> SimpleNamespace:
    return SimpleNamespace(severity=severity, line=line, col=1, message=message)


def test_the_first_error_is_the_first_error_diagnostic_with_all_of_them_as_details() -> None:
    diags = [_diag("warning", 1, "w"), _diag("error", 2, "e1"), _diag("error", 3, "e2")]
    err = compile_mod._first_error(diags, "parse", "fallback")
    assert str(err) == "2:1: error: e1" and err.stage == "parse"
    assert err.details == "1:1: warning: w\n2:1: error: e1\n3:1: error: e2"


def test_without_an_error_diagnostic_the_fallback_keeps_the_others_as_details() -> None:
    err = compile_mod._first_error([_diag("warning", 1, "w")], "parse", "it failed")
    assert (str(err), err.details) == ("error: it failed", "1:1: warning: w")
    err = compile_mod._first_error([], "parse", "it failed")
    assert (str(err), err.details) == ("error: it failed", "it failed")


def test_the_isa_report_of_a_cuda_kernel_names_the_amd_targets() -> None:
    kernel = CompiledKernel({"ptx": ""}, b"", {}, 0.0, target="cuda:90")
    with pytest.raises(ValueError, match=r"\(AMD targets: gfx1250, gfx950, gfx942\)"):
        _ = kernel.metrics


#: The smallest kernel: the record of the pipeline is what these tests read.
EMPTY = "module attributes {tile.num_warps = 4 : i32} { func.func @k() { return } }"


@pytest.mark.parametrize(
    ("kw", "pipeline"),
    [
        ({}, "tile-lower-gemm-schedule,tile-pipeline-mma,HAND{target=cuda:90}"),
        # mma.sync keeps no MMA in flight: no tile-pipeline-mma.
        ({"mma": "mma_v2"}, "tile-lower-gemm-schedule,HAND{target=cuda:90 mma=mma_v2}"),
        ({"pipeline": ""}, "HAND{target=cuda:90}"),
        ({"pipeline": "", "mma": "wgmma"}, "HAND{target=cuda:90 mma=wgmma}"),
        # A pipeline's own hand-off is recorded once, as written.
        ({"pipeline": "HAND{target=cuda:90 mma=mma_v2}"}, "HAND{target=cuda:90 mma=mma_v2}"),
    ],
)
def test_a_lowered_module_records_the_pipeline_that_ran(kw: dict[str, str], pipeline: str) -> None:
    hand = "convert-tile-to-triton-gpu"
    kw = {k: v.replace("HAND", hand) for k, v in kw.items()}
    low = compile_mod.lower_tile_module(EMPTY, "cuda:90", **kw)
    assert low.pipeline == pipeline.replace("HAND", hand)


#: A kernel the hand-off refuses at line 13: a TMA block row of 8 bytes.
REFUSED = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32} {
  func.func @k(%a: !tile.ptr<f16>, %m: i32, %ld: i64) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !tile.tensor_desc<tensor<64x4xf16, #s>>
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<64x4xf16, #s>>
    %bars = "tile.barrier_alloc"() : () -> !tile.mbarrier_ring<1 : i32>
    %bar = "tile.barrier_index"(%bars, %c0) : (!tile.mbarrier_ring<1 : i32>, i32) -> !tile.mbarrier<i64>
    "tile.barrier_init"(%bar) {count = 1 : i32} : (!tile.mbarrier<i64>) -> ()
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 512 : i32} : (!tile.mbarrier<i64>) -> ()
    "tile.async_tdm_copy_global_to_local"(%d, %b, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!tile.tensor_desc<tensor<64x4xf16, #s>>, !tile.shared<tensor<64x4xf16, #s>>, !tile.mbarrier<i64>) -> ()
    "tile.barrier_wait"(%bar, %c0) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
    return
  }
}
"""


def test_a_module_object_keeps_its_source_positions_in_errors() -> None:
    from gemm_opt import dialect
    from gemm_opt.core.ext_compat import ir

    with dialect.make_context():
        module = ir.Module.parse(REFUSED)
    for source in (REFUSED, module):
        with pytest.raises(TileCompileError) as info:
            compile_mod.lower_tile_module(source, "cuda:90")
        assert (info.value.line, info.value.col) == (13, 5)
        assert "a TMA block row needs 16 bytes or more, got 8" in info.value.message


def test_a_hand_off_for_another_target_is_refused() -> None:
    """A pipeline's own hand-off may not lower for a target other than the
    compile's: the kernel would be built for one target and labelled another."""
    with pytest.raises(TileCompileError, match=r"target=cuda:90, but this compile is for gfx1250"):
        compile_mod.lower_tile_module(
            EMPTY, "gfx1250", pipeline="canonicalize,convert-tile-to-triton-gpu{target=cuda:90}"
        )
    low = compile_mod.lower_tile_module(
        EMPTY, "gfx1250", pipeline="canonicalize,convert-tile-to-triton-gpu{target=gfx1250}"
    )
    assert low.target == "gfx1250"


HELPER = """
module {
  func.func private @helper(%x: i32) -> i32 {
    return %x : i32
  }
}
"""


def test_a_kernel_beside_a_helper_without_descriptors_keeps_its_tensormaps() -> None:
    """The host encodes the descriptors of whichever function has them: a TMA
    kernel's tensormaps survive a private helper that makes none."""
    bb = load_script(Path(__file__).resolve().parents[2] / "benchmarks/h100/build_bundle.py")
    cfg = bb.OurConfig(128, 128, 64, 8, tma=True)
    (v,) = bb.config_variants([cfg], ["fp16"])
    module = v["module"]
    with module.context:
        helpers = ir.Module.parse(HELPER)
        with ir.InsertionPoint(module.body):
            helpers.body.operations[0].clone()
    low = compile_mod.lower_tile_module(module, "cuda:90", pipeline=cfg.pipeline)
    assert [t["base"] for t in low.tensormaps] == [0, 1], low.tensormaps
