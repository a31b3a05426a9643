"""The grouped GEMM's backward forms on the pipelined body: dgrad (``trans_b``,
B as (G, N, K)) and wgrad (grouped "k", A as (S, M)).

Their transposed operand is copied as it lies and read through a
``tile.memdesc_trans`` view. Checked here:

* the executable model equals numpy (integer inputs: exact) after the schedule
  lowering and after every later pass of the cuda:90 and gfx1250 pipelines, on
  ragged shapes with empty, tiny and very unequal groups, under several
  seeded interleavings of the resident programs;
* dgrad's TMA twin (copies bounded by the tensors' shapes) equals numpy with
  K not a multiple of ``block_k`` (its B rows cross groups only into output
  columns the store drops; it states no K fact); wgrad's TMA twin (each
  tile's descriptors end at the group's K end) equals numpy after every pass
  of the cuda:90 pipeline, on K blocks that straddle a group's end into
  non-zero rows of the next group, and stops doing so when the descriptors
  are given the tensor's K rows instead;
* Triton 3.9.0 compiles both for cuda:90 (``ttg.memdesc_trans`` feeding an
  asynchronous ``warp_group_dot``; ``wgmma.mma_async`` with the transposed
  operand's K-major flag, no local memory; the TMA twins with
  ``cp.async.bulk.tensor``, wgrad's making two tensormaps per group, in
  the group loop and none in the tile or K loop), for gfx1250 (``tensor_load_to_lds``
  and WMMA, no spills), gfx950 and gfx942; the bundled ``mid`` kernels keep
  one wgmma group in flight with no stack or local memory (cuobjdump).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.references import grouped_reference
from support.scripts import load_script

from gemm_opt import dialect
from gemm_opt.core import schedules as S
from gemm_opt.core.ext_compat import ir
from gemm_opt.core.pipeline import Registry, build_pass_manager
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.kernels.build_bundles import TMA_HAND_OFF, build
from gemm_opt.kernels.schedule_gemm import build_gemm_module
from gemm_opt.lowering.compile import compile_tile_module
from gemm_opt.lowering.pipelines import tile_passes
from gemm_opt.model.interpreter import run_function
from gemm_opt.passes import PASSES

ROOT = Path(__file__).resolve().parents[2]
BM = BN = BK = 32
#: Group sizes: empty groups first, middle and last, all empty, one group,
#: very unequal, a group shorter than a K block.
GROUP_LENS = [[0, 37, 5, 0, 64], [10], [0, 0, 0], [100, 0, 1], [3, 0, 0, 70, 0]]
SEEDS = (None, 1, 7)


def _module(grouped: str, trans_b: bool, target: str, *, tma: bool = False) -> ir.Module:
    return build_gemm_module(
        kind="persistent", grouped=grouped, trans_b=trans_b, target=target, block_m=BM,
        block_n=BN, block_k=BK, group_m=2, num_warps=4, num_stages=3, body="pipelined",
        aligned=tma, tma=tma,
    )  # fmt: skip


def _after(module: ir.Module, passes: list[str]) -> ir.Module:
    """A copy of ``module`` after ``passes`` (verified after each)."""
    text = module.operation.get_asm(print_generic_op_form=True)
    with dialect.make_context():
        copy = ir.Module.parse(text)
        build_pass_manager(f"builtin.module({','.join(passes)})", Registry(passes=PASSES)).run(
            copy.operation
        )
    return copy


def _count(module: ir.Module, name: str) -> int:
    found = [0]

    def visit(op: ir.Operation) -> ir.WalkResult:
        found[0] += op.name == name
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found[0]


def _dgrad(module: ir.Module, lens: list[int], k: int, n: int, seed: int | None) -> None:
    """dx = y @ w_g^T per group, w given as (G, N, K) (``trans_b``)."""
    rng = np.random.default_rng(sum(lens) + k + n)
    g, s = len(lens), sum(lens)
    a = rng.integers(-3, 4, (s, k)).astype(np.float16)
    w = rng.integers(-3, 4, (g, k, n)).astype(np.float16)
    b = np.ascontiguousarray(w.transpose(0, 2, 1))
    c = np.full((s, n), np.nan, np.float16)
    run_function(
        module, "gemm", [a, b, c, s, n, k, k, k, n, np.array(lens, np.int32), g], (3,), seed=seed
    )
    ref = grouped_reference(a, w, lens)
    assert np.array_equal(c.astype(np.float64), ref), (lens, seed)


def _wgrad(
    module: ir.Module, lens: list[int], m: int, n: int, seed: int | None, low: int = -3
) -> None:
    """dw[g] = x_g^T @ dy_g over group g's rows; an empty group's is exactly 0
    (inputs drawn from ``[low, 3]``: ``low = 1`` makes every row non-zero)."""
    rng = np.random.default_rng(sum(lens) + m + n)
    g, s = len(lens), sum(lens)
    a = rng.integers(low, 4, (s, m)).astype(np.float16)
    b = rng.integers(low, 4, (s, n)).astype(np.float16)
    c = np.full((g * m, n), np.nan, np.float16)
    run_function(
        module, "gemm", [a, b, c, m, n, s, m, n, n, np.array(lens, np.int32), g], (4,), seed=seed
    )
    ref = np.zeros((g * m, n))
    start = 0
    for i, length in enumerate(lens):
        rows = slice(start, start + length)
        ref[i * m : (i + 1) * m] = a[rows].T.astype(np.float64) @ b[rows].astype(np.float64)
        start += length
    assert np.array_equal(c.astype(np.float64), ref), (lens, seed)


# ---- the model, after every pass -------------------------------------------------------


@pytest.mark.parametrize("target", ["cuda:90", "gfx1250"])
def test_dgrad_equals_numpy_after_every_pass(target: str) -> None:
    module = _module("m", True, target)
    passes = tile_passes(target)
    assert passes[0] == "tile-lower-gemm-schedule"  # the model runs loops, not the schedule op
    for i in range(1, len(passes) + 1):
        lowered = _after(module, passes[:i])
        assert _count(lowered, "tile.memdesc_trans") == 1  # B read transposed
        for lens in GROUP_LENS:
            for seed in SEEDS:
                _dgrad(lowered, lens, k=70, n=45, seed=seed)


@pytest.mark.parametrize("target", ["cuda:90", "gfx1250"])
def test_wgrad_equals_numpy_after_every_pass(target: str) -> None:
    module = _module("k", False, target)
    passes = tile_passes(target)
    for i in range(1, len(passes) + 1):
        lowered = _after(module, passes[:i])
        assert _count(lowered, "tile.memdesc_trans") == 1  # A read transposed
        for lens in GROUP_LENS:
            for seed in SEEDS:
                _wgrad(lowered, lens, m=40, n=45, seed=seed)


def test_cuda90_pipeline_keeps_the_transposed_mma_in_flight() -> None:
    """``tile-pipeline-mma`` sees the view's block (a copy into another slot
    of it is disjoint, one into the slot it reads is not) and makes the MMA
    asynchronous on the view."""
    for grouped, trans_b in (("m", True), ("k", False)):
        lowered = _after(_module(grouped, trans_b, "cuda:90"), tile_passes("cuda:90"))
        assert _count(lowered, "tile.async_wmma") == 1
        assert _count(lowered, "tile.wmma") == 0


def test_dgrad_tma_twin_reads_by_shape_and_equals_numpy() -> None:
    """Unbounded copies: B's rows past a group's N are the next group's and land
    in output columns past N (dropped by the store); K is B's inner dim, bounded
    by its shape, so K = 70 needs no divisibility by block_k."""
    module = _module("m", True, "cuda:90", tma=True)
    fn = next(iter(module.body.operations))
    facts = {ir.IntegerAttr(ir.DictAttr(a)["tile.divisibility"]).value for a in fn.arg_attrs if a}
    assert facts == {S.alignment("fp16")} == {8}  # no K fact, unlike the forward TMA twin
    lowered = _after(module, tile_passes("cuda:90"))
    for lens in GROUP_LENS:
        _dgrad(lowered, lens, k=70, n=45, seed=None)


def _makes(module: ir.Module) -> list[ir.Operation]:
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "tile.make_tensor_descriptor":
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def test_wgrad_tma_twin_equals_numpy_after_every_pass() -> None:
    """The cuda:90 pipeline of the TMA twin (its hand-off makes every copy a
    TMA copy): the descriptors are made once per group, in the group loop's
    guard before the tile loop (not in it), with the group's K end as their
    rows, and the copies are unbounded, as TMA's are."""
    module = _module("k", False, "cuda:90", tma=True)
    assert S.tma_copies(4)
    passes = tile_passes("cuda:90")
    for i in range(1, len(passes) + 1):
        lowered = _after(module, passes[:i])
        assert _count(lowered, "tile.memdesc_trans") == 1
        makes = _makes(lowered)
        assert len(makes) == 2
        for op in makes:
            assert op.parent.name == "scf.if" and op.parent.parent.name == "scf.for"
            later = [o.operation.name for o in op.block.operations][-2:]
            assert later == ["scf.for", "scf.yield"]  # the group's tile loop follows
        for lens in GROUP_LENS:
            for seed in SEEDS:
                _wgrad(lowered, lens, m=40, n=45, seed=seed)


#: K blocks of 32 rows straddling group ends into non-zero rows: group 0's
#: second block reads rows 32..63 (group 1's from 37), group 1's last reads
#: 64..69 of group 3 (group 2 is empty); K = 70 is no multiple of 32.
STRADDLING = [37, 27, 0, 6]


def _unbounded(module: ir.Module) -> ir.Module:
    """The mutant: each tile's descriptors given the tensor's K rows, not the group's end."""
    fn = next(iter(module.body.operations))
    k = fn.regions[0].blocks[0].arguments[5]
    for op in _makes(module):
        op.operands[1] = k
    module.operation.verify()
    return module


def test_wgrad_tma_twin_stops_k_blocks_at_the_group_end() -> None:
    """The hazard TMA's shape-only bounds leave: a K block past ``k_end`` holds
    the next group's rows. The twin reads them as zeros (exact); without the
    per-group bound (the descriptors' rows set to K) the same data give a
    different C, so the check sees the bound."""
    lowered = _after(_module("k", False, "cuda:90", tma=True), tile_passes("cuda:90"))
    for seed in SEEDS:
        _wgrad(lowered, STRADDLING, m=40, n=45, seed=seed, low=1)
    mutant = _unbounded(lowered)
    with pytest.raises(AssertionError):
        _wgrad(mutant, STRADDLING, m=40, n=45, seed=None, low=1)


def test_every_pipelined_kernel_has_a_tma_twin() -> None:
    """wgrad included (its per-group descriptors bound K); the blocks body has none."""
    assert S.tma_copies(8) and not S.tma_copies(1)
    spec = S.KernelSpec(
        "persistent", None, "k", "bf16", 128, 128, 64, 8, 8, 3, aligned=True, tma=True
    )
    assert spec.name.endswith("_aligned_tma") and spec.facts == dict.fromkeys(
        S.aligned_args("k"), 8
    )
    with pytest.raises(ValueError, match="aligned and has the pipelined body"):
        S.KernelSpec("persistent", None, "k", "bf16", 128, 128, 64, 8, 8, 3, tma=True)


def test_unchecked_lengths_stay_in_bounds_on_the_pipelined_body() -> None:
    """Lengths summing past the rows (no host sync on the GPU path): a negative
    length is empty and rows end at the tensor's, so the copies touch nothing
    outside the operands (the model refuses any such access)."""
    rng = np.random.default_rng(3)
    s, k, n = 50, 40, 36
    lens = np.array([20, -7, 0, 45], np.int32)  # the kernel reads [20, 0, 0, 30 of 45]
    g = len(lens)
    dgrad = _after(_module("m", True, "gfx1250"), ["tile-lower-gemm-schedule"])
    a = rng.integers(-3, 4, (s, k)).astype(np.float16)
    w = rng.integers(-3, 4, (g, k, n)).astype(np.float16)
    b = np.ascontiguousarray(w.transpose(0, 2, 1))
    c = np.full((s, n), np.nan, np.float16)
    run_function(dgrad, "gemm", [a, b, c, s, n, k, k, k, n, lens, g], (3,))
    ref = np.concatenate([a[:20].astype(np.float64) @ w[0], a[20:].astype(np.float64) @ w[3]])
    assert np.array_equal(c.astype(np.float64), ref)
    wgrad = _after(_module("k", False, "gfx1250"), ["tile-lower-gemm-schedule"])
    m = k
    a = rng.integers(-3, 4, (s, m)).astype(np.float16)
    b = rng.integers(-3, 4, (s, n)).astype(np.float16)
    c = np.full((g * m, n), np.nan, np.float16)
    run_function(wgrad, "gemm", [a, b, c, m, n, s, m, n, n, lens, g], (4,))
    parts = [a[:20].T.astype(np.float64) @ b[:20], np.zeros((m, n)), np.zeros((m, n))]
    ref = np.concatenate([*parts, a[20:].T.astype(np.float64) @ b[20:]])
    assert np.array_equal(c.astype(np.float64), ref)


# ---- real Triton 3.9.0 ---------------------------------------------------------------

#: The wgmma's last two immediates are tnspA, tnspB (1: MN-major in shared
#: memory). dgrad: A (BM, BK) and B's block (BN, BK) both K-major; wgrad: A's
#: block (BK, BM) and B (BK, BN) both MN-major.
WGMMA_TRANSPOSE = {("m", True): "0, 0;", ("k", False): "1, 1;"}


def _cuda90(grouped: str, trans_b: bool, *, tma: bool = False):
    module = build_gemm_module(
        kind="persistent", grouped=grouped, trans_b=trans_b, target="cuda:90", num_warps=8,
        block_m=128, block_n=128, block_k=64, num_stages=3, dtype="bf16", aligned=True, tma=tma,
    )  # fmt: skip
    pipeline = ",".join([*tile_passes("cuda:90"), TMA_HAND_OFF]) if tma else None
    return compile_tile_module(module, "cuda:90", pipeline=pipeline)


@pytest.mark.parametrize(("grouped", "trans_b"), [("m", True), ("k", False)])
def test_cuda90_reads_the_transposed_operand_with_wgmma(grouped: str, trans_b: bool) -> None:
    kernel = _cuda90(grouped, trans_b)
    ttgir, ptx = kernel.asm["ttgir"], kernel.asm["ptx"]
    trans = [line for line in ttgir.splitlines() if "ttg.memdesc_trans" in line]
    assert len(trans) == 1 and "order = array<i32: 1, 0>" in trans[0]
    assert "ttng.warp_group_dot " in ttgir and "pendings = 1" in ttgir
    mmas = [line for line in ptx.splitlines() if "wgmma.mma_async" in line]
    assert len(mmas) == 4  # 64 of K in 4 steps of 16, one m64n128 per warpgroup
    assert all(line.endswith(WGMMA_TRANSPOSE[grouped, trans_b]) for line in mmas)
    assert "cp.async.cg.shared.global" in ptx  # aligned: straight to shared memory
    assert ".local" not in ptx  # no local memory: no spills, no stack


def _loop_depths(ptx: str) -> list[tuple[int, str]]:
    """Each PTX line with the loop depth of its basic block (LLVM's block
    comments: ``Depth=N`` after a label; the entry block is depth 0)."""
    out: list[tuple[int, str]] = []
    depth, in_header = 0, False
    for line in ptx.splitlines():
        text = line.strip()
        head = text.split()[0] if text else ""
        if (head.startswith("$L__BB") and head.endswith(":")) or text.startswith("// %bb."):
            depth, in_header = 0, True
        elif not text.startswith("//"):
            in_header = False
        if in_header:
            for part in text.split("Depth=")[1:]:
                digits = part[: len(part) - len(part.lstrip("0123456789"))]
                depth = max(depth, int(digits))
        out.append((depth, text))
    return out


def test_cuda90_wgrad_tma_twin_makes_two_tensormaps_per_group() -> None:
    """Each program makes its A and B tensormaps once per group it has tiles
    in (in the group loop, depth 1: ``tensormap.replace`` into shared memory,
    ``tensormap.cp_fenceproxy`` to global scratch, ``fence.proxy.tensormap``
    acquire), none per tile (depth 2, the group's tile loop) or per K block
    (depth 3, the wgmma loop); the copies are TMA."""
    ptx = _cuda90("k", False, tma=True).asm["ptx"]
    lines = _loop_depths(ptx)
    assert ptx.count("cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes") == 6
    mmas = [d for d, t in lines if t.startswith("wgmma.mma_async")]
    assert len(mmas) == 4 and set(mmas) == {3}  # the K loop in the tile loop in the group loop
    for marker, count in (
        ("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu", 2),
        ("fence.proxy.tensormap::generic.acquire.gpu", 2),
        ("tensormap.replace.tile.global_dim", 4),  # 2 dims of each
    ):
        depths = [d for d, t in lines if marker in t]
        assert len(depths) == count and set(depths) == {1}, (marker, depths)
    assert "cp.async.cg" not in ptx and ".local" not in ptx


def test_cuda90_dgrad_tma_twin_copies_with_tma_into_the_buffer_wgmma_transposes() -> None:
    ptx = _cuda90("m", True, tma=True).asm["ptx"]
    # The prologue's 2 stages and the loop's one, A and B each.
    assert ptx.count("cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes") == 6
    mmas = [line for line in ptx.splitlines() if "wgmma.mma_async" in line]
    assert len(mmas) == 4 and all(line.endswith("0, 0;") for line in mmas)
    assert "cp.async.cg" not in ptx and ".local" not in ptx


@pytest.mark.parametrize(("grouped", "trans_b"), [("m", True), ("k", False)])
def test_gfx1250_copies_with_tdm_and_reads_the_view_into_wmma(grouped: str, trans_b: bool) -> None:
    module = _module(grouped, trans_b, "gfx1250")
    kernel = compile_tile_module(module, "gfx1250")
    assert "ttg.memdesc_trans" in kernel.asm["ttgir"]
    m = kernel.metrics
    assert m.tdm_loads >= 3 and "tensor_load_to_lds" in kernel.asm["amdgcn"]
    assert m.wmma > 0 and m.spills == 0 and m.scratch_bytes == 0


@pytest.mark.parametrize("target", ["gfx950", "gfx942"])
@pytest.mark.parametrize(("grouped", "trans_b"), [("m", True), ("k", False)])
def test_mfma_targets_load_the_transposed_view(grouped: str, trans_b: bool, target: str) -> None:
    kernel = compile_tile_module(_module(grouped, trans_b, target), target)
    assert "ttg.memdesc_trans" in kernel.asm["ttgir"]
    m = kernel.metrics
    # dgrad's B row arithmetic (g*N + n) costs 2 SGPR spills here, to VGPR lanes
    # (v_writelane), not memory: no VGPR spills, no scratch.
    assert m.mfma > 0 and m.vgpr_spills == 0 and m.scratch_bytes == 0


@pytest.fixture(scope="module")
def bb() -> Any:
    bench = ROOT / "benchmarks" / "h100"
    if str(bench) not in sys.path:
        sys.path.insert(0, str(bench))
    return load_script(bench / "build_bundle.py", "build_bundle_grouped_backward")


@pytest.mark.parametrize(
    ("grouped", "trans_b", "tma"),
    [("m", True, True), ("m", True, False), ("k", False, False), ("k", False, True)],
)
def test_cuda90_bundle_kernels_keep_wgmma_in_flight_without_spills(
    bb: Any, grouped: str, trans_b: bool, tma: bool
) -> None:
    """The bundled kernels of the ``mid`` class (128x128x64, 8 warps, 3 stages),
    as ptxas builds them: no stack or local memory, and one wgmma group left in
    flight in the K loop (``wait 0x1``; ptxas would serialize a pipeline it
    cannot prove safe to ``0x0`` everywhere)."""
    spec = S.KernelSpec(
        "persistent", None, grouped, "bf16", **h100.GPU_CONFIGS["mid"].__dict__, trans_b=trans_b,
        aligned=True, tma=tma,
    )  # fmt: skip
    (kernel,) = build("cuda:90", [spec], quiet=True).kernels
    usage = dict(f.split(":") for f in bb.resource_usage(kernel.binary).split())
    assert usage["STACK"] == "0" and usage["LOCAL"] == "0"
    assert int(usage["REG"]) <= 128  # two programs' worth of registers fit an SM
    assert bb.wgmma_waits(kernel.binary) == "4 HGMMA, wgmma waits 0x1 0x0"
