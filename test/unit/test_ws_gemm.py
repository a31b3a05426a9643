"""The warp-specialized form of the example GEMM (``WARP_SPECIALIZE``) end to end.

* The executable model runs it equal to numpy before and after every pass of
  the cuda:90 pipeline, under several interleavings of its two partitions,
  on ragged shapes, K = 0, one program for every tile and more programs than
  tiles.
* The cuda:90 bundle kernel: a one-warp TMA producer giving its registers to
  the consumer warps (``setmaxnreg``), wgmma kept in flight, no spills, the
  producer's warpgroup in the launch's warps; a tile's first wgmma ignores the
  accumulator (``use_acc``), so the consumer never re-zeroes it.
* gfx1250 refuses it with a located error, not a kernel: its LDS barriers
  count arrivals (one announcing expect per tracked copy) and the kernel's
  warps, which a one-warp producer announcing two copies at once is not.
* The TMA-store epilogue in the consumer (its waits retire its stores only);
  counted copies inside a partition are a located refusal.
* The config tag ``_ws`` round-trips and needs the persistent form.
"""

from __future__ import annotations

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
from gemm_opt.lowering import pipelines
from gemm_opt.lowering.compile import TileCompileError, compile_tile_module

WS_TAG = "128x256x64_w8_s3_g8_tma_pers_ws"


@pytest.fixture(scope="module")
def example() -> Any:
    return load_script(EXAMPLE_GEMM, "gemm_example_ws")


@pytest.fixture(scope="module")
def bb() -> Any:
    return load_script(BUILD_BUNDLE, "build_bundle_ws")


def _small(example: Any, **constexprs: Any) -> Any:
    return small_gemm(
        example, "cuda:90", PERSISTENT=True, WARP_SPECIALIZE=True, PROLOGUE_PRED=False, **constexprs
    )


def _every_pass(module: Any, seed: int | None) -> None:
    """The model equals numpy before the cuda:90 passes and after each."""
    passes = pipelines.tile_passes("cuda:90")
    for i in range(len(passes) + 1):
        check_persistent_gemm(after_passes(module, passes[:i]), seed=seed)


def _asm(bb: Any, tag: str) -> dict[str, str]:
    """The cuda:90 assembly (ttgir, ptx, ...) of config ``tag``'s fp16 kernel."""
    cfg = bb.OurConfig.parse(tag)
    (v,) = bb.config_variants([cfg], ["fp16"])
    return compile_tile_module(v["module"], "cuda:90", pipeline=cfg.pipeline).asm


@pytest.mark.parametrize("seed", [None, 0, 1, 2])
def test_equals_numpy_before_and_after_every_pass(example, seed: int | None) -> None:
    _every_pass(_small(example, NUM_BUFFERS=3, GROUP_M=2), seed)


@pytest.mark.parametrize("stages", [2, 4])
def test_ring_depths_equal_numpy(example, stages: int) -> None:
    check_persistent_gemm(_small(example, NUM_BUFFERS=stages), seed=3)


def test_the_kernel_is_one_producer_and_the_consumer(example) -> None:
    module = _small(example, NUM_BUFFERS=3, PRODUCER_REGS=40)
    (ws,) = ops_named(module, "tile.warp_specialize")
    (worker,) = ops_named(module, "tile.warp_partition")
    assert ws.results == [] or len(ws.results) == 0
    assert [worker.attributes[a].value for a in ("num_warps", "num_regs")] == [1, 40]
    # The producer copies (barrier-tracked), the consumer multiplies asynchronously.
    assert ops_named(worker, "tile.async_tdm_copy_global_to_local")
    assert not ops_named(worker, "tile.async_wmma")
    assert len(ops_named(module, "tile.async_wmma")) == 1


def test_cuda90_bundle_kernel(bb) -> None:
    cfg = bb.OurConfig.parse(WS_TAG)
    assert cfg.ws and cfg.persistent and cfg.tma
    kernel = bb.build(["bf16"], configs=[cfg], quiet=True)[f"gemm_bf16_aligned_{WS_TAG}"]
    usage = dict(f.split(":") for f in bb.resource_usage(kernel.binary).split())
    assert usage["STACK"] == "0" and usage["LOCAL"] == "0"
    # Triton caps the registers so that the 12 warps fit; the producer gives its up.
    assert int(usage["REG"]) <= 168
    assert kernel.num_warps == 12  # 8 consumer warps and the producer's warpgroup
    assert bb.wgmma_waits(kernel.binary) == "4 HGMMA, wgmma waits 0x1 0x0 0x0"
    assert [d.evaluate({}) for d in kernel.grid] == [1, 1, 1]


def test_cuda90_ptx(bb) -> None:
    asm = _asm(bb, WS_TAG)
    ptx = asm["ptx"]
    # The producer's registers (PRODUCER_REGS) and the consumers' raise.
    assert "setmaxnreg.inc.sync.aligned.u32 40;" in ptx.replace("\t", "")
    assert "setmaxnreg.inc.sync.aligned.u32 240;" in ptx.replace("\t", "")
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16") == 4
    assert "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes" in ptx
    assert ".local" not in ptx and "cp.async.cg" not in ptx
    # A tile's first wgmma does not add the accumulator (useC = k > 0), so the
    # epilogue hands the registers on instead of zeroing 128 of them per tile:
    # the one zero tensor is the loop's initial value (set on its two entry paths).
    ttgir = asm["ttgir"]
    assert ttgir.count("arith.constant dense<0.000000e+00> : tensor<128x256xf32") == 1
    (dot,) = [line for line in ttgir.splitlines() if "ttng.warp_group_dot " in line]
    assert dot.split(",")[3].split()[0] != "%true", dot
    assert ptx.count(", 0f00000000;") == 2


def test_gfx1250_refuses_a_one_warp_producer_with_a_located_error(example) -> None:
    module = small_gemm(
        example, "gfx1250", PERSISTENT=True, WARP_SPECIALIZE=True, PROLOGUE_PRED=False
    )
    with pytest.raises(TileCompileError) as info:
        compile_tile_module(module, "gfx1250")
    line, col, rest = str(info.value).split(":", 2)
    assert line.isdigit() and col.isdigit() and rest.startswith(" error: on gfx1250")


def test_tag_round_trips_and_needs_persistent(bb) -> None:
    cfg = bb.OurConfig.parse(WS_TAG)
    assert cfg.tag == WS_TAG and cfg.constexprs()["WARP_SPECIALIZE"] is True
    with pytest.raises(ValueError, match="persistent"):
        bb.OurConfig(128, 256, 64, 8, stages=3, tma=True, ws=True)
    assert any(c.ws for c in bb.CANDIDATES)


@pytest.mark.parametrize("seed", [None, 0, 1])
def test_tma_store_epilogue_equals_numpy(example, seed: int | None) -> None:
    # The consumer stages C in shared memory and stores it by TMA while the
    # producer fills the next tile's slots; the next epilogue waits for the store.
    _every_pass(_small(example, NUM_BUFFERS=3, GROUP_M=2, EPILOGUE_TMA=True), seed)


def test_tma_store_epilogue_ptx(bb) -> None:
    asm = _asm(bb, "128x256x64_w8_s3_g8_tma_tmastore_pers_ws")
    ptx = asm["ptx"]
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared") == 1  # the C store
    # The consumer's waits wait for its stores only (no copy of the ring).
    assert "cp.async.bulk.wait_group.read 0" in ptx
    assert ptx.count("wgmma.wait_group.sync.aligned 1;") == 1
    assert ".local" not in ptx


def test_counted_copies_inside_a_partition_are_a_located_refusal() -> None:
    shared = tl.SwizzledShared(vec=1, per_phase=1, max_phase=1, order=[1, 0])

    def consumer(ring, ready):
        tl.mbarrier.wait(ready.index(0), 0)

    def producer(a, m, lda, ring, ready):
        desc = tl.make_tensor_descriptor(
            a, shape=[m, 64], strides=[lda, 1], block_shape=[64, 64], layout=shared
        )
        tl.async_copy(desc, ring.index(0))  # counted: no barrier operand
        tl.async_wait(0)
        tl.mbarrier.arrive(ready.index(0))

    @tl.kernel
    def k(a: tl.ptr(tl.float16), m: tl.int32, lda: tl.divisible(tl.int64, 16)):
        ring = tl.allocate_shared(tl.float16, [1, 64, 64], shared)
        ready = tl.allocate_mbarrier(1)
        tl.mbarrier.init(ready.index(0), count=1)
        tl.warp_specialize([(consumer, (ring, ready)), (producer, (a, m, lda, ring, ready))], [4])

    module = k.build_module(num_warps=4, target="cuda:90")
    with pytest.raises(TileCompileError) as info:
        compile_tile_module(
            module, "cuda:90", pipeline="convert-tile-to-triton-gpu{target=cuda:90 lds-copies=tma}"
        )
    assert "inside a 'tile.warp_specialize' partition" in str(info.value)
    assert str(info.value).split(":")[0].isdigit()  # line:col: error: ...
