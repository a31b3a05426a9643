"""The persistent form of the example GEMM (``PERSISTENT``) end to end.

* The executable model runs it equal to numpy before and after every pass of
  the cuda:90 and gfx1250 pipelines and after the TMA hand-off's tile IR, on
  ragged shapes, K = 0, one program for every tile and more programs than
  tiles; and it reports the races a wrong wait would cause.
* ``tile-pipeline-mma`` keeps one MMA in flight across tile boundaries and
  waits for none only in the epilogue.
* The cuda:90 bundle kernel: TMA copies, wgmma kept in flight (not
  serialized), no spills, a one-program bundle grid; the gfx1250 kernel: TDM
  copies and WMMA in the loop, no spills.
* The config tag ``_pers`` and the launch grid of a persistent config.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.scripts import (
    BUILD_BUNDLE,
    EXAMPLE_GEMM,
    check_persistent_gemm,
    load_script,
    small_gemm,
)
from support.tile_build import after_passes, ops_named

import gemm_opt.language as tl
from gemm_opt.core.ext_compat import ir
from gemm_opt.lowering import pipelines
from gemm_opt.lowering.compile import compile_tile_module, lower_tile_module
from gemm_opt.model.interpreter import ModelError

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "h100"
TMA = "convert-tile-to-triton-gpu{target=cuda:90 lds-copies=tma}"
WAIT = "tile.async_wmma_wait"


@pytest.fixture(scope="module")
def example() -> Any:
    return load_script(EXAMPLE_GEMM, "gemm_example_persistent")


@pytest.fixture(scope="module")
def bb() -> Any:
    return load_script(BUILD_BUNDLE, "build_bundle_persistent")


def _small(example: Any, target: str, **constexprs: Any) -> ir.Module:
    """The persistent GEMM at 64x64x32 blocks and 4 warps (fast in the model)."""
    return small_gemm(example, target, PERSISTENT=True, **constexprs)


def _num(op: ir.Operation) -> int:
    return ir.IntegerAttr(op.attributes["num"]).value


# ---- the model, before and after every pass ----------------------------------------


@pytest.mark.parametrize("target", ["cuda:90", "gfx1250"])
def test_equals_numpy_before_and_after_every_pass(example, target: str) -> None:
    module = _small(example, target, NUM_BUFFERS=3, GROUP_M=2, PROLOGUE_PRED=False)
    passes = pipelines.tile_passes(target)
    for i in range(len(passes) + 1):
        check_persistent_gemm(after_passes(module, passes[:i]))


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("group_m", [0, 2])
@pytest.mark.parametrize("prologue_pred", [True, False])
def test_pipelined_equals_numpy(example, stages: int, group_m: int, prologue_pred: bool) -> None:
    module = _small(
        example, "cuda:90", NUM_BUFFERS=stages, GROUP_M=group_m, PROLOGUE_PRED=prologue_pred
    )
    after = after_passes(module, ["tile-pipeline-mma"])
    assert len(ops_named(after, "tile.async_wmma")) == 1 and not ops_named(after, "tile.wmma")
    # In the loop: one in flight; in the epilogue: none; after the loop: none.
    waits = ops_named(after, WAIT)
    assert [_num(w) for w in waits] == [1, 0, 0]
    assert waits[1].parent.name == "scf.if"
    # The loop's copies now come after its copy wait.
    assert [_num(w) for w in ops_named(after, "tile.async_tdm_wait")] == [2 * (stages - 2), 0]
    check_persistent_gemm(module)
    check_persistent_gemm(after)


def test_tma_hand_off_tile_ir_equals_numpy(example) -> None:
    """``lds-copies=tma`` accepts the persistent loop (copies in the loop body,
    predicated, not under its scf.if) and the IR it lowers runs equal to numpy."""
    module = _small(example, "cuda:90", NUM_BUFFERS=4, GROUP_M=2, PROLOGUE_PRED=False)
    low = lower_tile_module(module, "cuda:90", pipeline=f"tile-pipeline-mma,{TMA}")
    assert low.ttgir.count("ttng.async_tma_copy_global_to_local") == 2 * 4
    check_persistent_gemm(low.tile)


def test_epilogue_reading_an_inflight_result_is_an_error(example) -> None:
    after = after_passes(_small(example, "cuda:90", NUM_BUFFERS=3), ["tile-pipeline-mma"])
    epilogue_wait = ops_named(after, WAIT)[1]
    with epilogue_wait.context:
        epilogue_wait.attributes["num"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1)
    with pytest.raises(ModelError, match="while the MMA is still in flight"):
        check_persistent_gemm(after, [((64, 64, 64), 1)])


def test_copy_into_a_buffer_an_inflight_mma_reads_is_a_race(example) -> None:
    after = after_passes(_small(example, "cuda:90"), ["tile-pipeline-mma"])
    loop_wait = ops_named(after, WAIT)[0]
    with loop_wait.context:
        loop_wait.attributes["num"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 2)
    with pytest.raises(ModelError, match="write of shared memory an in-flight MMA reads"):
        check_persistent_gemm(after, [((128, 64, 96), 1)])


def test_the_data_parallel_form_is_unchanged(example) -> None:
    """PERSISTENT=False (the default) adds nothing to the data-parallel kernel."""
    default = example.gemm.build_ir(num_warps=8)
    assert "tile.num_programs" not in default and default.count("scf.if") == 0
    assert example.gemm.build_ir(num_warps=8, PERSISTENT=False) == default


def test_num_programs_axis_is_checked() -> None:
    @tl.kernel
    def bad(M: tl.int32):
        tl.num_programs(3) + M

    with pytest.raises(tl.CompilationError, match="num_programs axis must be 0, 1 or 2, got 3"):
        bad.build_ir(num_warps=4)


# ---- compiled kernels ----------------------------------------------------------------

PERS_TAG = "128x128x64_w8_s4_g8_tma_pers"


def test_cuda90_ptx_has_tma_wgmma_and_num_programs(bb) -> None:
    cfg = bb.OurConfig.parse(PERS_TAG)
    (v,) = bb.config_variants([cfg], ["fp16"])
    ptx = compile_tile_module(v["module"], "cuda:90", pipeline=cfg.pipeline).asm["ptx"]
    # The prologue's 3 steps and the loop's one, A and B each.
    assert ptx.count("cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes") == 8
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 4
    assert ptx.count("wgmma.wait_group.sync.aligned 1;") == 1  # in the loop
    assert ptx.count("wgmma.wait_group.sync.aligned 0;") == 2  # the epilogue, after the loop
    assert "%nctaid.x" in ptx  # tile.num_programs
    assert "cp.async.cg" not in ptx


def test_cuda90_bundle_kernel_keeps_wgmma_in_flight_without_spills(bb) -> None:
    cfg = bb.OurConfig.parse(PERS_TAG)
    kernel = bb.build(["bf16"], configs=[cfg], quiet=True)[f"gemm_bf16_aligned_{PERS_TAG}"]
    usage = dict(f.split(":") for f in bb.resource_usage(kernel.binary).split())
    assert usage["STACK"] == "0" and usage["LOCAL"] == "0"
    assert bb.wgmma_waits(kernel.binary) == "4 HGMMA, wgmma waits 0x1 0x0 0x0"
    assert [d.evaluate({}) for d in kernel.grid] == [1, 1, 1]
    assert kernel.meta["persistent"] is True and kernel.meta["copies"] == "tma"
    # The ring stays live through the epilogue: 4 stages of A and B, the
    # epilogue's layout-conversion scratch and the barriers on top.
    assert kernel.shared_bytes > 4 * (128 * 64 + 64 * 128) * 2


def test_gfx1250_kernel_uses_tdm_and_wmma_without_spills(example) -> None:
    compiled = example.gemm.compile(target="gfx1250", num_warps=8, PERSISTENT=True, NUM_BUFFERS=3)
    m = compiled.metrics
    assert m.spills == 0 and m.scratch_bytes == 0
    assert m.tdm_loads_in_loop >= 1 and m.wmma_in_loop == m.wmma > 0


# ---- config tags and launch grids ----------------------------------------------------


def test_persistent_tags_round_trip(bb) -> None:
    cfg = bb.OurConfig.parse(PERS_TAG)
    assert cfg.persistent and cfg.tma and cfg.stages == 4 and cfg.group_m == 8
    assert cfg.tag == PERS_TAG and cfg.constexprs()["PERSISTENT"] is True
    assert cfg.grid() == [1, 1, 1]
    assert bb.OurConfig.parse("128x128x64_w8").grid() == [("M", 128), ("N", 128), 1]
    assert bb.OurConfig.parse("64x64x128_w4_s4_tma").constexprs()["PERSISTENT"] is False
    for bad in ("128x128x64_w8_pers_pers", "128x128x64_w8_pers_tma", "128x128x64_w8_persistent"):
        with pytest.raises(ValueError, match="not a config tag"):
            bb.OurConfig.parse(bad)
    assert any(c.persistent for c in bb.CANDIDATES)
    assert any(c.block_m == c.block_n == 64 and c.block_k == 128 for c in bb.CANDIDATES)


def test_persistent_programs() -> None:
    benchlib = load_script(BENCH / "benchlib.py", "benchlib_persistent")
    assert benchlib.persistent_programs(16, 132, 1) == 16  # fewer tiles than SMs
    assert benchlib.persistent_programs(4096, 132, 1) == 132
    assert benchlib.persistent_programs(4096, 132, 2) == 264
    assert benchlib.persistent_programs(4096, 132, 0) == 132  # occupancy unknown: one per SM
    assert benchlib.persistent_programs(0, 132, 1) == 0  # an empty grid launches nothing
