"""cuda:90's barrier-tracked TMA copies (``lds-copies=tma``).

The lowering replaces the tile dialect's counted waits by mbarrier waits
(:mod:`gemm_opt.lowering.tma_plan`). ``test_barrier_protocol_keeps_the_wait_rule``
runs that protocol (the ring, the per-wait windows and the phase parities
the lowering emits) against a model of mbarrier hardware with copies landing
in random order, on the example GEMM at several pipeline depths, with and
without ``tile-pipeline-mma``, for 0 to 6 K iterations: after every wait,
every copy the tile rule says is complete must be, and no barrier may be
re-armed, nor a parity tested, while it would be ambiguous. The other tests
check the kernel that goes into the H100 bundle: TMA and mbarrier
instructions in the PTX, wgmma kept pipelined, no spills, the descriptors'
host descriptors in the metadata and the launch's argument packing.
"""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest
from support.scripts import load_script

from gemm_opt import dialect
from gemm_opt.core.ext_compat import ir
from gemm_opt.lowering.compile import TileCompileError, compile_tile_module, lower_tile_module
from gemm_opt.lowering.tma_plan import FunctionPlan, plan_tma
from gemm_opt.passes.common import COPY_OP
from gemm_opt.runtime import Bundle, Kernel, pack_arguments, read_bundle
from gemm_opt.runtime import launch as launch_mod

ROOT = Path(__file__).resolve().parents[2]
H100 = ROOT / "benchmarks" / "h100"
GEMM = (ROOT / "examples" / "gemm_gfx1250.mlir").read_text()
TMA = "convert-tile-to-triton-gpu{target=cuda:90 lds-copies=tma}"


def _script(name: str):
    return load_script(H100 / f"{name}.py")


@pytest.fixture(scope="module")
def bb():
    return _script("build_bundle")


# ---- the protocol, run against a model of mbarriers ---------------------------------


class _Barriers:
    """mbarrier hardware as the lowering uses it: single arrival, a phase
    completes when its copy has landed (or arrived without bytes)."""

    def __init__(self, ring: int, rng: random.Random) -> None:
        self.ring = ring
        self.completed = [0] * ring  # phases completed per barrier
        self.in_flight: dict[int, int] = {}  # copy -> barrier
        self.done: set[int] = set()
        self.waited: set[int] = set()
        self.rng = rng

    def issue(self, g: int) -> None:
        b = g % self.ring
        # The previous copy on this barrier must be waited for: re-arming a
        # barrier whose phase is still open would merge two copies' bytes.
        assert g < self.ring or g - self.ring in self.waited, f"barrier {b} re-armed early"
        assert self.completed[b] == g // self.ring
        self.in_flight[g] = b

    def land_some(self) -> None:
        for g in list(self.in_flight):
            if self.rng.random() < 0.3:
                self.land(g)

    def land(self, g: int) -> None:
        b = self.in_flight.pop(g)
        self.completed[b] += 1
        self.done.add(g)

    def wait(self, b: int, parity: int, g: int) -> None:
        """``mbarrier.try_wait.parity``: returns once the phase of ``parity``
        is not the current one; the lowering waits so for copy ``g``."""
        phase = g // self.ring
        assert phase % 2 == parity and b == g % self.ring
        # The parity test is only unambiguous if the barrier is in copy g's
        # phase or just past it.
        assert self.completed[b] in (phase, phase + 1), "ambiguous parity"
        while self.completed[b] == phase:
            self.land(g)  # blocks until copy g lands
        self.waited.add(g)


def _run(fn: ir.Operation, plan: FunctionPlan, trips: int, rng: random.Random) -> int:
    bars = _Barriers(plan.ring, rng)
    issued = 0

    def wait(op: ir.Operation, num: int) -> None:
        window = plan.windows[op]
        for j in range(num, window):  # exactly the lowering's waits
            g = issued - 1 - j
            if g >= 0:
                bars.wait(g % plan.ring, (g // plan.ring) % 2, g)
        # The tile rule: at most num copies in flight.
        assert all(g in bars.done for g in range(issued - num)), "a wait returned early"

    def block(ops) -> None:
        nonlocal issued
        for view in ops:
            op = view.operation
            bars.land_some()
            if op.name == COPY_OP:
                bars.issue(issued)
                issued += 1
            elif op.name == "tile.async_tdm_wait":
                wait(op, ir.IntegerAttr(op.attributes["num"]).value)
            elif op.name == "func.return":
                wait(op, 0)
            elif op in plan.loops:
                body = list(op.regions[0].blocks[0].operations)
                for _ in range(trips):
                    block(body)

    block(fn.regions[0].blocks[0].operations)
    return issued


def _tile_ir(stages: int, pipelined: bool) -> str:
    import gemm_opt.language as tl

    example = _script("build_bundle")._example()
    module = example.gemm.build_module(num_warps=8, DTYPE=tl.float16, NUM_BUFFERS=stages)
    pipeline = f"tile-pipeline-mma,{TMA}" if pipelined else TMA
    return lower_tile_module(module, "cuda:90", pipeline=pipeline).tile


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("pipelined", [False, True])
def test_barrier_protocol_keeps_the_wait_rule(stages: int, pipelined: bool) -> None:
    text = _tile_ir(stages, pipelined)
    with dialect.make_context(False):
        module = ir.Module.parse(text)
        plan = plan_tma(module.operation)
        ((fn, fplan),) = plan.functions.items()
        # Prologue: stages - 1 tiles of two copies; the ring holds every copy
        # that can be in flight, no more.
        assert fplan.ring == 2 * (stages - 1) + (0 if pipelined else 2)
        rng = random.Random(stages * 10 + pipelined)
        for trips in range(7):
            for _ in range(20):
                issued = _run(fn, fplan, trips, rng)
                assert issued == 2 * (stages - 1) + 2 * trips


# ---- the bundle kernel ---------------------------------------------------------------


@pytest.fixture(scope="module")
def tma_kernel(bb):
    cfg = bb.OurConfig(128, 256, 64, 8, stages=3, group_m=8, tma=True)
    (v,) = bb.config_variants([cfg], ["bf16"])
    return bb.build_variant(v)


def test_tma_gemm_ptx_has_tma_mbarriers_and_wgmma(bb) -> None:
    cfg = bb.OurConfig(128, 128, 64, 8, tma=True)
    (v,) = bb.config_variants([cfg], ["fp16"])
    ptx = compile_tile_module(v["module"], "cuda:90", pipeline=cfg.pipeline).asm["ptx"]
    # Two copies per K tile: the prologue's and the loop's.
    assert ptx.count("cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes") == 4
    assert "mbarrier.arrive.expect_tx.shared::cta.b64" in ptx
    assert "mbarrier.try_wait.parity.shared::cta.b64" in ptx
    assert ptx.count("mbarrier.init.shared::cta.b64") == 2  # the ring: two copies in flight
    # Host descriptors: two CUtensorMap parameters, nothing made on the device.
    assert "tensormap.replace" not in ptx and "fence.proxy.tensormap" not in ptx
    assert ptx.count(".param .align 64 .b8 gemm_param_") == 2
    assert "cp.async.cg" not in ptx and "cp.async.wait_group" not in ptx
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 4
    assert "wgmma.wait_group.sync.aligned 1;" in ptx


def test_tma_kernel_metadata_and_resources(bb, tma_kernel) -> None:
    k = tma_kernel
    assert k.meta["copies"] == "tma" and k.meta["config"] == "128x256x64_w8_s3_g8_tma"
    # The host encodes both descriptors from the call's arguments: no scratch.
    assert k.global_scratch.bytes == 0
    assert [(t.base, t.shape, t.strides, t.block) for t in k.tensormaps] == [
        ("a", ("M", "K"), ("lda", 1), (128, 64)),
        ("b", ("K", "N"), ("ldb", 1), (64, 64)),
    ]
    assert {(t.swizzle, t.elem_bytes, t.dtype) for t in k.tensormaps} == {(3, 2, 9)}  # bf16
    # Three stages of A and B, and a ring of four barriers (8 bytes each).
    assert k.shared_bytes == 3 * (128 * 64 + 64 * 256) * 2 + 4 * 8
    usage = dict(f.split(":") for f in bb.resource_usage(k.binary).split())
    assert usage["STACK"] == "0" and usage["LOCAL"] == "0"  # no spills
    assert "serialized" not in bb.wgmma_waits(k.binary)


class _Encoder:
    """The driver's stand-in: each "tensormap" spells out what it was made from."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def encode_tensormap(self, address, dtype, elem_bytes, shape, strides, block, swizzle):
        self.calls.append((address, dtype, elem_bytes, shape, strides, block, swizzle))
        return struct.pack("<Q4q", address, *shape, *strides).ljust(128, b"\0")


def test_tma_kernel_round_trips_and_packs_its_tensormaps(tmp_path, tma_kernel, monkeypatch) -> None:
    from gemm_opt.runtime import cuda

    enc = _Encoder()
    monkeypatch.setattr(cuda, "driver", lambda: enc)
    path = tmp_path / "tma.bundle"
    Bundle((tma_kernel,)).write(path)
    (k,) = read_bundle(path).kernels
    assert k.tensormaps == tma_kernel.tensormaps
    args = (0x10000, 0x20000, 0x30000, 4096, 2048, 1024, 1040, 2064, 4096)  # M N K lda ldb ldc
    params = Kernel(k).pack(args)
    assert params == pack_arguments(k, args)[0]  # the fast path packs the same bytes
    # After the 9 arguments: A's map, shape, strides; B's; then the two scratch pointers.
    a_map, a_m, a_k, a_s0, a_s1 = params[9:14]
    assert a_map[:8] == struct.pack("<Q", 0x10000) and len(a_map) == 128
    assert (a_m, a_k, a_s0, a_s1) == (
        *map(struct.Struct("<i").pack, (4096, 1024)),
        struct.pack("<q", 1040),
        struct.pack("<q", 1),
    )
    assert params[14][:8] == struct.pack("<Q", 0x20000)
    assert enc.calls[:2] == [
        (0x10000, 9, 2, [4096, 1024], [1040, 1], [128, 64], 3),
        (0x20000, 9, 2, [1024, 2048], [2064, 1], [64, 64], 3),
    ]
    assert params[-2:] == [struct.pack("<Q", 0), struct.pack("<Q", 0)]
    # The fast path encodes again only what changed; a zero extent is encoded as 1.
    kern = Kernel(k)
    kern.pack(args)
    enc.calls.clear()
    kern.pack(args)
    assert enc.calls == []
    kern.pack((0x10000, 0x20000, 0x30000, 4096, 2048, 0, 1040, 2064, 4096))
    assert [c[3] for c in enc.calls] == [[4096, 1], [1, 2048]]
    # Layers of one shape take turns on the kernel, each with its own weights: each
    # pair of tensors is encoded once, then reused in any order.
    layers = [(0x40000 + 0x1000 * i, 0x80000 + 0x1000 * i) for i in range(3)]
    enc.calls.clear()
    for _ in range(3):
        for a, b in layers:
            kern.pack((a, b, 0x30000, 4096, 2048, 1024, 1040, 2064, 4096))
    assert sorted(c[0] for c in enc.calls) == sorted(x for pair in layers for x in pair)
    # Past TENSORMAP_CACHE addresses the encodings start over: bounded memory.
    monkeypatch.setattr(launch_mod, "TENSORMAP_CACHE", 2)
    kern = Kernel(k)
    enc.calls.clear()
    for a, b in layers:
        kern.pack((a, b, 0x30000, 4096, 2048, 1024, 1040, 2064, 4096))
    assert len(enc.calls) == 6 and all(len(e) <= 2 for e in kern._encoded)


def test_tma_needs_cuda90() -> None:
    with pytest.raises(TileCompileError, match="lds-copies=tma needs cuda:90"):
        lower_tile_module(GEMM, "gfx1250", pipeline="convert-tile-to-triton-gpu{lds-copies=tma}")


def test_tma_tag_round_trips(bb) -> None:
    cfg = bb.OurConfig.parse("128x256x64_w8_s3_g8_tma_sync")
    assert cfg.tma and not cfg.async_mma and cfg.pipeline == TMA
    assert bb.OurConfig.parse("128x128x64_w8_tma").pipeline == f"tile-pipeline-mma,{TMA}"
    with pytest.raises(ValueError):
        bb.OurConfig.parse("128x128x64_w8_tma_tma")
    assert any(c.tma for c in bb.CANDIDATES)


# ---- the model runs the IR the TMA lowering consumes ---------------------------------


@pytest.mark.parametrize("stages", [2, 4])
def test_model_runs_the_tma_gemm_equal_to_numpy(bb, stages: int) -> None:
    """``lds-copies=tma`` changes only the lowering: the tile IR it lowers
    (after ``tile-pipeline-mma``) is the kernel's, and the model runs it equal
    to numpy (ragged M, N and K; zero fill past the ends)."""
    import numpy as np

    import gemm_opt.language as tl
    from gemm_opt.model.interpreter import run_gemm

    module = bb._example().gemm.build_module(
        num_warps=4,
        BLOCK_M=64,
        BLOCK_N=64,
        BLOCK_K=32,
        NUM_BUFFERS=stages,
        GROUP_M=2,
        HINT_A=0b0011,
        HINT_B=0b1100,
        DTYPE=tl.float16,
        PROLOGUE_PRED=False,
    )
    low = lower_tile_module(module, "cuda:90", pipeline=f"tile-pipeline-mma,{TMA}")
    # The prologue's stages - 1 K tiles and the loop's one, two copies each.
    assert low.ttgir.count("ttng.async_tma_copy_global_to_local") == 2 * stages
    rng = np.random.default_rng(stages)
    for m, n, k in ((130, 70, 200), (64, 64, 32), (1, 1, 5)):
        a = rng.integers(-3, 4, (m, k)).astype(np.float16)
        b = rng.integers(-3, 4, (k, n)).astype(np.float16)
        ref = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16)
        np.testing.assert_array_equal(run_gemm(low.tile, a, b), ref)


# ---- the schedule kernels: copies in a K loop nested in tile loops ---------------------

SCHEDULE_TMA = f"tile-lower-gemm-schedule,tile-pipeline-mma,{TMA}"


def _schedule_tile_ir(kind: str, reduction: str | None, stages: int, **kw) -> str:
    from gemm_opt.kernels.schedule_gemm import build_gemm_module

    module = build_gemm_module(
        kind=kind, reduction=reduction, target="cuda:90", block_m=64, block_n=64, block_k=32,
        num_warps=4, num_stages=stages, aligned=True, tma=True, **kw,
    )  # fmt: skip
    return lower_tile_module(module, "cuda:90", pipeline=SCHEDULE_TMA).tile


def _run_nested(fn: ir.Operation, plan: FunctionPlan, rng: random.Random) -> int:
    """The lowering's waits on the model of mbarriers, through every nesting
    level: each loop runs 0 to 3 times (a tile's K loop, the tile loop, a
    work-stealing ``scf.while`` whose condition runs once more), each
    ``scf.if`` takes a random branch; the count carries across all of them."""
    bars = _Barriers(plan.ring, rng)
    issued = 0

    def wait(op: ir.Operation, num: int) -> None:
        for j in range(num, plan.windows[op]):
            g = issued - 1 - j
            if g >= 0:
                bars.wait(g % plan.ring, (g // plan.ring) % 2, g)
        assert all(g in bars.done for g in range(issued - num)), "a wait returned early"

    def block(b: ir.Block) -> None:
        nonlocal issued
        for view in b.operations:
            op = view.operation
            bars.land_some()
            if op.name == COPY_OP:
                bars.issue(issued)
                issued += 1
            elif op.name == "tile.async_tdm_wait":
                wait(op, ir.IntegerAttr(op.attributes["num"]).value)
            elif op.name == "func.return":
                wait(op, 0)
            elif op.name == "scf.for" and (op in plan.loops or op in plan.carried):
                for _ in range(rng.randrange(4)):
                    block(op.regions[0].blocks[0])
            elif op.name == "scf.while" and op in plan.carried:
                for _ in range(rng.randrange(4)):
                    block(op.regions[0].blocks[0])
                    block(op.regions[1].blocks[0])
                block(op.regions[0].blocks[0])
            elif op.name == "scf.if" and op in plan.carried:
                taken = [r for r in op.regions if len(r.blocks)]
                choice = rng.randrange(2)
                if choice < len(taken):
                    block(taken[choice].blocks[0])

    block(fn.regions[0].blocks[0])
    return issued


@pytest.mark.parametrize("stages", [2, 3])
@pytest.mark.parametrize(
    ("kind", "reduction"),
    [("data-parallel", None), ("persistent", None), ("work-stealing", None),
     ("stream-k", "linear")],
)  # fmt: skip
def test_barrier_protocol_carries_across_tiles(kind: str, reduction, stages: int) -> None:
    """The schedule kernels' TMA copies sit in a K loop inside a tile loop
    (``scf.for``, a work-stealing ``scf.while``, the data-parallel
    ``scf.if``): the plan carries the copy count through them, the K loop
    stays affine, and the protocol keeps the wait rule over random trip
    counts with the barriers' phases running on across tiles."""
    text = _schedule_tile_ir(kind, reduction, stages)
    with dialect.make_context(False):
        module = ir.Module.parse(text)
        plan = plan_tma(module.operation)
        ((fn, fplan),) = plan.functions.items()
        assert fplan.carried and fplan.loops, "a carried tile loop around an affine K loop"
        assert all(fplan.loops[op] == 2 for op in fplan.loops)  # A and B per K step
        # The prologue's stages - 1 K blocks are in flight as the K loop starts.
        assert fplan.ring == 2 * (stages - 1)
        rng = random.Random(stages)
        for _ in range(100):
            _run_nested(fn, fplan, rng)


@pytest.mark.parametrize(
    ("kind", "reduction", "block_n", "warps"),
    [("persistent", None, 256, 8), ("work-stealing", None, 256, 8),
     ("stream-k", "tree", 128, 8), ("data-parallel", None, 64, 4)],
)  # fmt: skip
def test_schedule_kernels_copy_with_tma_and_multiply_with_wgmma(
    bb, kind, reduction, block_n: int, warps: int
) -> None:
    """The bundle's TMA schedule kernels: TMA copies and pipelined wgmma in the
    PTX, no cp.async, no spills (the 128-wide tiles of the bundled configs)."""
    from gemm_opt.kernels.schedule_gemm import build_gemm_module

    module = build_gemm_module(
        kind=kind, reduction=reduction, dtype="bf16", target="cuda:90", block_m=128 if warps == 8 else 64,
        block_n=block_n, block_k=64, num_warps=warps, num_stages=3, aligned=True, tma=True,
    )  # fmt: skip
    kernel = compile_tile_module(module, "cuda:90", pipeline=SCHEDULE_TMA)
    ptx = kernel.asm["ptx"]
    assert "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes" in ptx
    assert "wgmma.mma_async" in ptx and "wgmma.wait_group.sync.aligned 1;" in ptx
    assert "cp.async.cg" not in ptx and "cp.async.wait_group" not in ptx
    usage = dict(f.split(":") for f in bb.resource_usage(kernel.hsaco).split())
    assert usage["STACK"] == "0" and usage["LOCAL"] == "0", usage  # no spills
    assert "serialized" not in bb.wgmma_waits(kernel.hsaco)


# ---- barrier-tracked copies beside the counted ones ---------------------------------

TRACKED_LOOP = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func @tracked_loop(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %nk: i32) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %b0 = "tile.local_alloc"() : () -> !ba
    %b1 = "tile.local_alloc"() : () -> !ba
    %bars = "tile.barrier_alloc"() : () -> !tile.mbarrier_ring<1 : i32>
    %bar = "tile.barrier_index"(%bars, %c0) : (!tile.mbarrier_ring<1 : i32>, i32) -> !tile.mbarrier<i64>
    "tile.barrier_init"(%bar) {count = 1 : i32} : (!tile.mbarrier<i64>) -> ()
    "tile.async_tdm_copy_global_to_local"(%d, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    scf.for %i = %c0 to %nk step %c1 : i32 {
      %k = arith.muli %i, %c64 : i32
      %dk = "tile.update_tensor_descriptor"(%d, %c0, %k) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!da, i32, i32) -> !da
      "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = 8192 : i32} : (!tile.mbarrier<i64>) -> ()
      "tile.async_tdm_copy_global_to_local"(%dk, %b1, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!da, !ba, !tile.mbarrier<i64>) -> ()
      %ph = arith.andi %i, %c1 : i32
      "tile.barrier_wait"(%bar, %ph) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
    }
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
"""


def test_tracked_copies_are_left_out_of_the_count() -> None:
    """A loop issuing only barrier-tracked copies (each waited for on its own
    barrier, no counted wait) was refused as an unbounded loop of copies; the
    plan now leaves tracked copies out: a ring of one barrier for the one
    counted copy, the loop neither affine nor carrying, and the wait's window
    that copy alone. The module compiles to TMA copies on both barriers."""
    with dialect.make_context(False):
        module = ir.Module.parse(TRACKED_LOOP)
        plan = plan_tma(module.operation)
        ((fplan,),) = [list(plan.functions.values())]
        assert [c.opview.barrier for c in plan.copies] == [None]
        assert fplan.ring == 1 and not fplan.loops and not fplan.carried
        assert list(fplan.windows.values()) == [1, 0]  # the wait, then the return
    ptx = compile_tile_module(TRACKED_LOOP, "cuda:90", pipeline=TMA).asm["ptx"]
    tma = "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes"
    assert ptx.count(tma) == 2
    assert ptx.count("mbarrier.init.shared::cta.b64") == 2  # the ring's one, the user's one
