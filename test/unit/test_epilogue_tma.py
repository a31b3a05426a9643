"""The TMA-store epilogue of the example GEMM (``EPILOGUE_TMA``) end to end.

* The model runs it equal to numpy before and after every pass of the cuda:90
  and gfx1250 pipelines and after the TMA hand-off's tile IR, data-parallel
  and persistent, on ragged shapes, K = 0 and more programs than tiles (C
  starts as NaN: a tile no store writes shows).
* Without the wait before the next epilogue writes the C buffer, the model
  reports the race with the store still reading it.
* Compiled: cuda:90 TMA loads and the TMA store (``cp.async.bulk.tensor``
  both ways), wgmma kept in flight, no spills; gfx1250 a TDM store.
* The bundle's ``_tmastore`` configs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from support.scripts import BUILD_BUNDLE, EXAMPLE_GEMM, load_script, small_gemm
from support.tile_build import after_passes, ops_named

from gemm_opt.core.ext_compat import ir
from gemm_opt.lowering import pipelines
from gemm_opt.lowering.compile import compile_tile_module, lower_tile_module
from gemm_opt.model.interpreter import ModelError, run_gemm

TMA = "convert-tile-to-triton-gpu{target=cuda:90 lds-copies=tma}"
STORE = "tile.async_tdm_copy_local_to_global"
#: (M, N, K), programs (the grid of the persistent form): ragged tiles, K = 0,
#: more programs than tiles, a tile smaller than a block.
CASES = (((200, 150, 100), 5), ((130, 70, 0), 2), ((64, 64, 32), 3), ((1, 1, 5), 4))
TAG = "128x256x64_w8_s3_g8_tma_tmastore_pers"


@pytest.fixture(scope="module")
def example() -> Any:
    return load_script(EXAMPLE_GEMM, "gemm_example_epilogue_tma")


@pytest.fixture(scope="module")
def bb() -> Any:
    return load_script(BUILD_BUNDLE, "build_bundle_epilogue_tma")


def _small(example: Any, target: str, persistent: bool, **constexprs: Any) -> ir.Module:
    """The GEMM with the TMA-store epilogue at 64x64x32 blocks and 4 warps (fast in the model)."""
    return small_gemm(example, target, PERSISTENT=persistent, EPILOGUE_TMA=True, **constexprs)


def _check(module: Any, persistent: bool, cases=CASES) -> None:
    for (m, n, k), programs in cases:
        rng = np.random.default_rng(m + n + k + programs)
        a = rng.integers(-3, 4, (m, k)).astype(np.float16)
        b = rng.integers(-3, 4, (k, n)).astype(np.float16)
        ref = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16)
        grid = (programs, 1, 1) if persistent else None  # else: one program per tile
        np.testing.assert_array_equal(run_gemm(module, a, b, grid=grid), ref)


@pytest.mark.parametrize("persistent", [False, True])
@pytest.mark.parametrize("target", ["cuda:90", "gfx1250"])
def test_equals_numpy_before_and_after_every_pass(example, target: str, persistent: bool) -> None:
    module = _small(example, target, persistent, NUM_BUFFERS=3, GROUP_M=2, PROLOGUE_PRED=False)
    assert len(ops_named(module, STORE)) == 1 and not ops_named(module, "tile.store_block")
    passes = pipelines.tile_passes(target)
    for i in range(len(passes) + 1):
        _check(after_passes(module, passes[:i]), persistent)


@pytest.mark.parametrize("persistent", [False, True])
def test_tma_hand_off_tile_ir_equals_numpy(example, persistent: bool) -> None:
    module = _small(example, "cuda:90", persistent, NUM_BUFFERS=4, GROUP_M=2, PROLOGUE_PRED=False)
    low = lower_tile_module(module, "cuda:90", pipeline=f"tile-pipeline-mma,{TMA}")
    assert low.ttgir.count("ttng.async_tma_copy_local_to_global") == 1
    _check(low.tile, persistent)


def test_writing_the_c_buffer_under_a_store_in_flight_is_a_race(example) -> None:
    """The persistent epilogue waits for the previous tile's store before it
    writes the C buffer again; a wait that leaves the store in flight is a
    race the model reports (three tiles of one K step each per program)."""
    module = after_passes(_small(example, "cuda:90", True, NUM_BUFFERS=3), ["tile-pipeline-mma"])
    (wait,) = [w for w in ops_named(module, "tile.async_tdm_wait") if w.parent.name == "scf.if"]
    with wait.context:
        wait.attributes["num"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 100)
    with pytest.raises(ModelError, match="write of shared memory an in-flight TDM store reads"):
        _check(module, True, [((192, 64, 32), 1)])


def test_cuda90_kernel_stores_c_with_tma(bb) -> None:
    cfg = bb.OurConfig.parse(TAG)
    kernel = bb.build(["fp16"], configs=[cfg], quiet=True)[f"gemm_fp16_aligned_{TAG}"]
    (v,) = bb.config_variants([cfg], ["fp16"])
    ptx = compile_tile_module(v["module"], "cuda:90", pipeline=cfg.pipeline).asm["ptx"]
    assert ptx.count("cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes") == 6
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta") == 1  # the store of C
    assert "fence.proxy.async.shared::cta" in ptx  # the stored tile is visible to TMA
    words = " ".join(ptx.split())
    assert "cp.async.bulk.wait_group.read 0;" in words  # a store has read its buffer
    assert "st.global" not in ptx  # no store of C from registers
    usage = dict(f.split(":") for f in bb.resource_usage(kernel.binary).split())
    assert usage["STACK"] == "0" and usage["LOCAL"] == "0"
    assert bb.wgmma_waits(kernel.binary) == "4 HGMMA, wgmma waits 0x1 0x0 0x0"
    assert kernel.meta["epilogue"] == "tma-store" and kernel.meta["persistent"] is True
    # Three stages of A and B, and the C tile, within the 227 KiB of sm_90.
    assert 3 * (128 * 64 + 64 * 256) * 2 + 128 * 256 * 2 < kernel.shared_bytes <= 227 * 1024


def test_gfx1250_kernel_stores_c_with_tdm(example) -> None:
    compiled = example.gemm.compile(target="gfx1250", num_warps=8, EPILOGUE_TMA=True)
    assert compiled.metrics.spills == 0
    assert compiled.asm["amdgcn"].count("tensor_store_from_lds") == 1


def test_tmastore_tags_round_trip(bb) -> None:
    cfg = bb.OurConfig.parse(TAG)
    assert cfg.epilogue_tma and cfg.persistent and cfg.tma and cfg.tag == TAG
    assert cfg.constexprs()["EPILOGUE_TMA"] is True
    assert bb.OurConfig.parse("128x128x64_w8").constexprs()["EPILOGUE_TMA"] is False
    with pytest.raises(ValueError, match="not a config tag"):
        bb.OurConfig.parse("128x128x64_w8_tmastore_tmastore")
    stores = [c for c in bb.CANDIDATES if c.epilogue_tma]
    assert {c.tag for c in stores} >= {TAG, "128x128x64_w4_s4_g8_tma_tmastore"}
