"""The asynchronous MMA (``tile.async_wmma``, ``tile-pipeline-mma``) end to end.

* The executable model runs the example GEMM equal to numpy before and after
  ``tile-pipeline-mma``, for 2 to 4 buffers, grouped tile order and either
  prologue, and reports the races the async form makes possible: a copy into
  a buffer an in-flight MMA reads, and a read of an MMA result before the wait
  that retires it.
* The cuda:90 lowering of the pipelined example: ``wgmma.mma_async`` and
  ``wgmma.wait_group.sync.aligned 1`` in the PTX, and, in the cubin, HGMMAs
  that ptxas keeps in flight (not serialized) with no spills.
* The pass is in the cuda:90 pipeline only (gfx1250 keeps its figures).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.scripts import load_script
from support.tile_build import ops_named

from gemm_opt import dialect
from gemm_opt.core.ext_compat import ir
from gemm_opt.core.pipeline import Registry, build_pass_manager
from gemm_opt.lowering import pipelines
from gemm_opt.model.interpreter import ModelError, run_gemm
from gemm_opt.passes import PASSES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_MLIR = ROOT / "examples" / "gemm_gfx1250.mlir"
BENCH = ROOT / "benchmarks" / "h100"
ASYNC = "tile.async_wmma"
ASYNC_WAIT = "tile.async_wmma_wait"


def _load(name: str, path: Path) -> Any:
    return load_script(path, name)


@pytest.fixture(scope="module")
def example() -> Any:
    return _load("gemm_example_pipeline_mma", ROOT / "examples" / "gemm_gfx1250.py")


@pytest.fixture(scope="module")
def build_bundle() -> Any:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return _load("build_bundle", BENCH / "build_bundle.py")


def pipelined(module: ir.Module) -> ir.Module:
    """A copy of ``module`` after ``tile-pipeline-mma`` (verified)."""
    ctx = dialect.make_context()
    text = module.operation.get_asm(print_generic_op_form=True)
    with ctx:
        copy = ir.Module.parse(text)
        pm = build_pass_manager("builtin.module(tile-pipeline-mma)", Registry(passes=PASSES))
        pm.run(copy.operation)  # verifies the result
    return copy


def operands(m: int, n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Small integers: every product and sum is exact in fp16 inputs / fp32 sums."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    return a, b


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16)


def _small(example: Any, **constexprs: Any) -> ir.Module:
    """The example GEMM at 64x64x32 blocks and 4 warps (fast in the model)."""
    return example.gemm.build_module(
        num_warps=4,
        target="cuda:90",
        BLOCK_M=64,
        BLOCK_N=64,
        BLOCK_K=32,
        HINT_A=0b0011,
        HINT_B=0b1100,
        **constexprs,
    )


# ---- the model, before and after the pass ----------------------------------------


@pytest.mark.parametrize("shape", [(130, 70, 200), (64, 64, 32), (1, 1, 1), (70, 130, 31)])
def test_example_mlir_equals_numpy_before_and_after(shape) -> None:
    ctx = dialect.make_context()
    module = ir.Module.parse(EXAMPLE_MLIR.read_text(), context=ctx)
    after = pipelined(module)
    assert len(ops_named(after, ASYNC)) == 1 and len(ops_named(after, "tile.wmma")) == 0
    a, b = operands(*shape, seed=sum(shape))
    ref = reference(a, b)
    np.testing.assert_array_equal(run_gemm(module, a, b), ref)
    np.testing.assert_array_equal(run_gemm(after, a, b), ref)


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("group_m", [0, 2])
@pytest.mark.parametrize("prologue_pred", [True, False])
def test_front_end_gemm_equals_numpy_before_and_after(
    example, stages, group_m, prologue_pred
) -> None:
    module = _small(example, NUM_BUFFERS=stages, GROUP_M=group_m, PROLOGUE_PRED=prologue_pred)
    after = pipelined(module)
    waits = [ir.IntegerAttr(w.attributes["num"]).value for w in ops_named(after, ASYNC_WAIT)]
    assert waits == [1, 0]
    tdm_waits = [
        ir.IntegerAttr(w.attributes["num"]).value for w in ops_named(after, "tile.async_tdm_wait")
    ]
    assert tdm_waits == [2 * (stages - 2), 0]  # the loop's two copies now come after it
    for m, n, k in ((200, 150, 100), (64, 300, 32), (1, 1, 5)):
        a, b = operands(m, n, k, seed=m + n + k + stages)
        ref = reference(a, b)
        np.testing.assert_array_equal(run_gemm(module, a, b), ref)
        np.testing.assert_array_equal(run_gemm(after, a, b), ref)


def test_group_m_visits_every_tile_once(example) -> None:
    # 5 x 4 tiles, groups of 2 rows of tiles (the last group has one row):
    # C starts as NaN, so a tile no program stores stays NaN.
    a, b = operands(5 * 64 - 3, 4 * 64, 64, seed=7)
    c = run_gemm(_small(example, GROUP_M=2), a, b)
    np.testing.assert_array_equal(c, reference(a, b))


def _set_num(op: ir.Operation, num: int) -> None:
    with op.context:
        op.attributes["num"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), num)


def test_copy_into_a_buffer_an_inflight_mma_reads_is_a_race(example) -> None:
    after = pipelined(_small(example))
    in_loop = ops_named(after, ASYNC_WAIT)[0]
    _set_num(in_loop, 2)  # MMA k-1 still reads the slot the copy of tile k+1 writes
    a, b = operands(64, 64, 96, seed=3)
    with pytest.raises(ModelError, match="write of shared memory an in-flight MMA reads"):
        run_gemm(after, a, b)


def test_reading_an_inflight_result_is_an_error(example) -> None:
    after = pipelined(_small(example))
    _set_num(ops_named(after, ASYNC_WAIT)[1], 1)  # the wait after the loop
    a, b = operands(64, 64, 96, seed=4)
    with pytest.raises(ModelError, match="while the MMA is still in flight"):
        run_gemm(after, a, b)


def test_async_mma_reading_an_unlanded_copy_is_a_race(example) -> None:
    after = pipelined(_small(example, NUM_BUFFERS=3))
    _set_num(ops_named(after, "tile.async_tdm_wait")[0], 4)  # tile k not yet complete
    a, b = operands(64, 64, 128, seed=5)
    with pytest.raises(ModelError, match="still being written by an in-flight TDM copy"):
        run_gemm(after, a, b)


# ---- pipelines and lowering ----------------------------------------------------------


def test_pass_runs_for_cuda90_only() -> None:
    # Right after the schedule lowering, which runs first everywhere.
    assert pipelines.tile_passes("cuda:90")[:2] == ["tile-lower-gemm-schedule", "tile-pipeline-mma"]
    assert "tile-pipeline-mma" not in pipelines.tile_passes("cuda:90", pipeline_mma=False)
    for target in ("gfx1250", "gfx950", "gfx942"):
        assert "tile-pipeline-mma" not in pipelines.tile_passes(target)
    assert "tile-pipeline-mma" not in pipelines.required_passes("cuda:90")
    assert "tile-pipeline-mma" not in pipelines.expand(
        "tile-to-ttgir", {"target": "cuda:90", "pipeline-mma": "false"}
    )


def test_example_ptx_keeps_one_wgmma_group_in_flight(tmp_path: Path) -> None:
    from gemm_opt.tools import opt

    out = tmp_path / "gemm.ptx"
    assert opt.main([str(EXAMPLE_MLIR), "--target=cuda:90", "--emit=ptx", "-o", str(out)]) == 0
    ptx = out.read_text()
    assert ptx.count("wgmma.mma_async") == 4  # 4 K steps of 16 per 64-wide tile
    assert ptx.count("wgmma.wait_group.sync.aligned 1;") == 1
    assert ptx.count("wgmma.wait_group.sync.aligned 0;") == 1


@pytest.mark.parametrize(
    ("tag", "waits"),
    [
        ("128x128x64_w8_s3_g8", ["0x1", "0x0"]),
        ("128x128x64_w8_sync", ["0x0"]),
    ],
)
def test_bundle_kernels_keep_wgmma_in_flight_without_spills(build_bundle, tag, waits) -> None:
    cfg = build_bundle.OurConfig.parse(tag)
    bundle = build_bundle.build(["fp16"], configs=[cfg], quiet=True)
    kernel = bundle[f"gemm_fp16_aligned_{tag}"]
    usage = build_bundle.resource_usage(kernel.binary)
    assert "STACK:0" in usage and "LOCAL:0" in usage, usage
    report = build_bundle.wgmma_waits(kernel.binary)
    assert report == f"4 HGMMA, wgmma waits {' '.join(waits)}", report
    assert kernel.meta["mma_in_flight"] == int(cfg.async_mma)
    assert kernel.meta["group_m"] == cfg.group_m


def test_config_tags_round_trip(build_bundle) -> None:
    cfg = build_bundle.OurConfig
    for c in build_bundle.CANDIDATES:
        assert cfg.parse(c.tag) == c
    assert cfg.parse("128x256x64_w8_s3_g8_sync") == cfg(
        128, 256, 64, 8, stages=3, group_m=8, async_mma=False
    )
    for bad in ("128x128x64_w8_sync_sync", "128x128x64_w8_g8_s3", "128x128x64_w8_x1", "128x128x64"):
        with pytest.raises(ValueError, match="not a config tag"):
            cfg.parse(bad)
