"""GEMM schedules: the host arithmetic, the kernel builder, every kind through the
model against numpy, and every kind compiled for every target.

Inputs are small integers, so every product and fp32 partial sum is exact and
f16 holds every output exactly (|C| <= 9 * K < 2048): each schedule must give
C bit for bit, atomic stream-K included (its f16 atomic adds of exact partials
are exact too); the float test below states its tolerance.
"""

import numpy as np
import pytest
from support.references import grouped_reference

from gemm_opt.core.ext_compat import ir
from gemm_opt.core.schedules import (
    COUNTER_STRIDE,
    kernel_args,
    stream_k_partition,
    tile_count,
    workspace_layout,
)
from gemm_opt.dialect import make_context
from gemm_opt.kernels.schedule_gemm import build_gemm_module
from gemm_opt.lowering.compile import compile_tile_module
from gemm_opt.model.interpreter import ModelError, run_function
from gemm_opt.passes.lower_gemm_schedule import LowerGemmSchedulePass

SCHEDULES = [
    ("data-parallel", None),
    ("persistent", None),
    ("work-stealing", None),
    ("stream-k", "atomic"),
    ("stream-k", "linear"),
    ("stream-k", "tree"),
]
BM = BN = BK = 32

#: (M, N, K, programs): ragged edges, K below one block, fewer tiles than
#: programs, more programs than K iterations, many iterations per tile.
SHAPES = [
    (45, 70, 100, 3),
    (17, 9, 20, 4),
    (64, 96, 256, 5),
    (33, 33, 300, 7),
    (100, 40, 70, 16),
    (8, 8, 1, 2),
    (5, 7, 0, 3),
    (96, 96, 512, 4),
]


def _lowered(
    kind: str,
    reduction: str | None,
    dtype: str = "fp16",
    num_xcds: int = 1,
    body: str = "auto",
    num_stages: int | None = None,
    tma: bool = False,
):
    module = build_gemm_module(
        body=body,
        num_stages=num_stages,
        aligned=tma,
        tma=tma,
        kind=kind,
        reduction=reduction,
        dtype=dtype,
        block_m=BM,
        block_n=BN,
        block_k=BK,
        group_m=2,
        num_xcds=num_xcds,
        num_warps=4,
    )
    LowerGemmSchedulePass().run(module.operation)
    assert module.operation.verify()
    return module


def _run(module, kind, reduction, a, b, programs, *, num_xcds=1, c=None, sync=None, seed=None):
    m, k = a.shape
    n = b.shape[1]
    grid = tile_count(m, n, BM, BN) if kind == "data-parallel" else programs
    if c is None:
        c = np.zeros((m, n), a.dtype) if reduction == "atomic" else np.full((m, n), np.nan, a.dtype)
    layout = workspace_layout(kind, reduction, grid, num_xcds, BM, BN)
    args = [a, b, c, m, n, k, k, n, n]
    names = kernel_args(kind, reduction)
    if "sync" in names:
        if sync is None:
            sync = np.zeros(layout.sync_elements, np.int32)
        args.append(sync)
    if "partials" in names:
        args.append(np.zeros(layout.partial_elements, np.float32))
    run_function(module, "gemm", args, (grid, 1, 1), seed=seed)
    return c, sync


@pytest.mark.parametrize("body", ["blocks", "pipelined"])
@pytest.mark.parametrize(("kind", "reduction"), SCHEDULES)
def test_schedule_equals_numpy_on_ragged_shapes(kind, reduction, body):
    """Both bodies: K blocks loaded where used, and the pipelined copies
    (double-buffered, hinted), checked by the model's race detector."""
    module = _lowered(kind, reduction, body=body)
    rng = np.random.default_rng(7)
    for m, n, k, programs in SHAPES:
        a = rng.integers(-3, 4, (m, k)).astype(np.float16)
        b = rng.integers(-3, 4, (k, n)).astype(np.float16)
        c, _ = _run(module, kind, reduction, a, b, programs)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        assert np.array_equal(c.astype(np.float64), ref), (kind, reduction, m, n, k, programs)


@pytest.mark.parametrize("stages", [3, 4])
@pytest.mark.parametrize(("kind", "reduction"), SCHEDULES)
def test_ring_of_stages_equals_numpy(kind, reduction, stages):
    """The pipelined body with a ring of 3 and 4 buffers (2 and 3 K blocks in
    flight, the prologue's copies past a short K range zero-filled): exact C,
    and the model's race detector sees no copy overwrite a buffer being read."""
    module = _lowered(kind, reduction, body="pipelined", num_stages=stages)
    rng = np.random.default_rng(11)
    for m, n, k, programs in SHAPES[:6]:
        a = rng.integers(-3, 4, (m, k)).astype(np.float16)
        b = rng.integers(-3, 4, (k, n)).astype(np.float16)
        c, _ = _run(module, kind, reduction, a, b, programs)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        assert np.array_equal(c.astype(np.float64), ref), (kind, reduction, stages, m, n, k)


@pytest.mark.parametrize(("kind", "reduction"), SCHEDULES)
def test_tma_body_bounded_by_shape_equals_numpy(kind, reduction):
    """The body of the TMA kernels: copies bounded by the tensors' shapes, not
    per tile and K range (TMA descriptors bound by shape only). Stream-K's K
    ranges end on block boundaries or at K, so C is still exact."""
    module = _lowered(kind, reduction, body="pipelined", num_stages=3, tma=True)
    rng = np.random.default_rng(13)
    for m, n, k, programs in SHAPES:
        a = rng.integers(-3, 4, (m, k)).astype(np.float16)
        b = rng.integers(-3, 4, (k, n)).astype(np.float16)
        c, _ = _run(module, kind, reduction, a, b, programs)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        assert np.array_equal(c.astype(np.float64), ref), (kind, reduction, m, n, k)


def test_tma_body_needs_aligned_pipelined_kernels():
    with pytest.raises(ValueError, match="tma copies need the pipelined body and aligned"):
        build_gemm_module(tma=True)
    with pytest.raises(ValueError, match="tma copies need the pipelined body and aligned"):
        build_gemm_module(kind="persistent", grouped="k", tma=True, num_warps=4)
    with pytest.raises(ValueError, match="tma copies need the pipelined body and aligned"):
        build_gemm_module(kind="persistent", grouped="k", aligned=True, tma=True, num_warps=1)


@pytest.mark.parametrize(("kind", "reduction"), SCHEDULES)
def test_schedule_bf16_floats_within_accumulation_bound(kind, reduction):
    """Random bf16 inputs: each output is one fp32 sum rounded once to bf16
    (plus, for atomic stream-K, one bf16 rounding per contributor), so the
    error is within a few bf16 ulps of |C|: rtol 2^-6, atol 2^-6 * sum|a||b|."""
    module = _lowered(kind, reduction, dtype="bf16")
    rng = np.random.default_rng(3)
    m, n, k, programs = 50, 40, 200, 3
    from gemm_opt.model.interpreter import bf16_round

    a = bf16_round(rng.standard_normal((m, k)).astype(np.float32))
    b = bf16_round(rng.standard_normal((k, n)).astype(np.float32))
    c, _ = _run(module, kind, reduction, a, b, programs)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    assert np.all(np.abs(c - ref) <= 2.0**-6 * scale + 2.0**-6 * np.abs(ref))


@pytest.mark.parametrize(("kind", "reduction"), SCHEDULES)
def test_schedule_under_seeded_interleavings(kind, reduction):
    """Four resident programs interleaved at atomics and block accesses, many
    seeds: the model's happens-before checks pass (partials are read only
    after their release) and C is exact; linear and tree bit-identical."""
    module = _lowered(kind, reduction)
    rng = np.random.default_rng(9)
    a = rng.integers(-3, 4, (45, 200)).astype(np.float16)
    b = rng.integers(-3, 4, (200, 70)).astype(np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    for seed in range(6):
        c, _ = _run(module, kind, reduction, a, b, 5, seed=seed)
        assert np.array_equal(c.astype(np.float64), ref), (kind, reduction, seed)


@pytest.mark.parametrize("reduction", ["linear", "tree"])
def test_fixup_reductions_are_bitwise_repeatable(reduction):
    module = _lowered("stream-k", reduction)
    rng = np.random.default_rng(11)
    a = rng.standard_normal((40, 72)).astype(np.float16)
    b = rng.standard_normal((72, 50)).astype(np.float16)
    first, _ = _run(module, "stream-k", reduction, a, b, 5)
    for seed in range(8):
        again, _ = _run(module, "stream-k", reduction, a, b, 5, seed=seed)
        assert np.array_equal(first, again), seed


def test_work_stealing_with_chiplets_covers_every_tile():
    """8 chiplets but 3 programs: only 3 counters are live, every tile is claimed once."""
    module = _lowered("work-stealing", None, num_xcds=8)
    rng = np.random.default_rng(5)
    a = rng.integers(-3, 4, (130, 64)).astype(np.float16)
    b = rng.integers(-3, 4, (64, 100)).astype(np.float16)
    c, sync = _run(module, "work-stealing", None, a, b, 3, num_xcds=8)
    assert np.array_equal(c.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64))
    claims = sync[::COUNTER_STRIDE]
    tiles = tile_count(130, 100, BM, BN)
    # Each live chiplet's counter ends one past its tiles (each program's last,
    # failing claim included); padding words stay zero.
    assert claims[3:].sum() == 0
    assert claims[:3].sum() == tiles + 3
    assert not np.delete(sync, np.arange(0, sync.size, COUNTER_STRIDE)).any()


def test_stale_counters_leave_tiles_unwritten():
    """The host contract: counters left from the previous launch hand out no
    tiles, so C keeps its old contents. The API zeroes them before every launch."""
    module = _lowered("work-stealing", None)
    a = np.ones((64, 32), np.float16)
    b = np.ones((32, 64), np.float16)
    _, sync = _run(module, "work-stealing", None, a, b, 2)
    c, _ = _run(module, "work-stealing", None, a, b, 2, sync=sync)
    assert np.isnan(c.astype(np.float32)).all()


WAIT_FOREVER = """
module attributes {tile.num_warps = 4 : i32} {
  func.func @wait(%flags: !tile.ptr<i32>) {
    %c0 = arith.constant 0 : i32
    scf.while : () -> () {
      %old = "tile.atomic_rmw"(%flags, %c0, %c0) {kind = "add", sem = "acquire", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %unset = arith.cmpi eq, %old, %c0 : i32
      scf.condition(%unset)
    } do {
      scf.yield
    }
    return
  }
}
"""


def test_a_flag_wait_that_cannot_end_is_reported():
    """A wait on a flag no program raises ends in a ModelError, not a hang."""
    with pytest.raises(ModelError, match="deadlock"):
        run_function(WAIT_FOREVER, "wait", [np.zeros(1, np.int32)], (1,))
    flags = np.ones(1, np.int32)
    run_function(WAIT_FOREVER, "wait", [flags], (1,))  # a raised flag passes at once
    assert flags[0] == 1


# ---- host arithmetic --------------------------------------------------------------


@pytest.mark.parametrize(
    ("tiles", "iters", "programs"),
    [(9, 4, 4), (16, 8, 4), (1, 8, 4), (5, 1, 8), (133, 128, 132), (3, 1, 4), (7, 5, 3)],
)
def test_stream_k_partition_covers_each_iteration_once(tiles, iters, programs):
    p = stream_k_partition(tiles, iters, programs)
    assert p.dp_tiles + p.sk_tiles == tiles
    covered = []
    for prog in range(programs):
        lo, hi = p.sk_range(prog)
        covered.extend(range(lo, hi))
    assert covered == list(range(p.total_sk_iters))
    if p.sk_tiles:
        assert p.total_sk_iters >= programs
        sizes = {p.sk_range(i)[1] - p.sk_range(i)[0] for i in range(programs)}
        assert max(sizes) - min(sizes) <= 1


def test_stream_k_falls_back_to_data_parallel():
    assert stream_k_partition(8, 4, 4).sk_tiles == 0  # whole waves
    assert stream_k_partition(3, 1, 4).sk_tiles == 0  # fewer iterations than programs
    assert stream_k_partition(9, 4, 4).sk_tiles == 5  # the last full wave and the ragged one


def test_workspace_layout():
    ws = workspace_layout("work-stealing", None, 100, 8, 64, 64)
    assert (ws.num_counters, ws.counter_stride, ws.sync_elements) == (8, 64, 512)
    assert ws.partial_elements == 0
    sk = workspace_layout("stream-k", "tree", 132, 1, 128, 128)
    assert (sk.num_flags, sk.sync_elements, sk.partial_elements) == (132, 132, 132 * 128 * 128)
    assert workspace_layout("stream-k", "atomic", 132, 1, 128, 128).sync_elements == 0
    with pytest.raises(ValueError, match="unknown schedule kind"):
        workspace_layout("split-n", None, 4, 1, 64, 64)


# ---- the kernel builder -------------------------------------------------------------


def test_kernel_signature():
    assert kernel_args("persistent", None) == ("a", "b", "c", "M", "N", "K", "lda", "ldb", "ldc")
    assert kernel_args("work-stealing", None)[-1] == "sync"
    assert kernel_args("stream-k", "atomic")[-1] == "ldc"
    assert kernel_args("stream-k", "tree")[-2:] == ("sync", "partials")
    module = build_gemm_module(kind="stream-k", reduction="linear")
    fn = module.body.operations[0]
    types = [str(a.type) for a in fn.regions[0].blocks[0].arguments]
    assert types == [
        "!tile.ptr<f16>", "!tile.ptr<f16>", "!tile.ptr<f16>", "i32", "i32", "i32",
        "i64", "i64", "i64", "!tile.ptr<i32>", "!tile.ptr<f32>",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "split-n"}, "kind must be one of"),
        ({"kind": "stream-k", "reduction": "ring"}, "reduction must be one of"),
        ({"dtype": "f32"}, "dtype must be one of"),
        ({"target": "gfx90a"}, "target must be one of"),
        ({"block_k": 16}, "block_k must be a multiple of 32"),
        ({"block_m": 16, "num_warps": 8}, "does not split over"),
        ({"kind": "persistent", "reduction": "atomic"}, "does not verify"),
        ({"body": "pipelined", "num_warps": 1}, "needs at least 2 warps"),
        ({"body": "smem"}, "body must be"),
        ({"body": "pipelined", "num_stages": 1}, "has 2 to 6 stages"),
        ({"body": "pipelined", "num_stages": 7}, "has 2 to 6 stages"),
        ({"body": "blocks", "num_stages": 2}, "has 1 stage"),
        ({"kind": "persistent", "num_xcds": 2}, "num_xcds=2 is for kind 'work-stealing'"),
        ({"group_m": True}, "group_m must be a positive i32"),
        ({"block_n": 2**31}, "block_n must be a positive i32"),
    ],
)
def test_kernel_builder_rejects_bad_configs(kwargs, message):
    with pytest.raises(ValueError, match=message):
        build_gemm_module(**kwargs)


# ---- every kind compiles for every target --------------------------------------------

TARGET_CHECKS = {
    "gfx1250": ("amdgcn", "global_atomic"),
    "gfx950": ("amdgcn", "global_atomic"),
    "gfx942": ("amdgcn", "global_atomic"),
    "cuda:90": ("ptx", "atom.global"),
}


@pytest.mark.parametrize("target", list(TARGET_CHECKS))
@pytest.mark.parametrize(("kind", "reduction"), SCHEDULES)
def test_schedule_compiles_for_every_target(kind, reduction, target):
    module = build_gemm_module(kind=kind, reduction=reduction, target=target)
    kernel = compile_tile_module(module, target)
    kind_asm, atomic = TARGET_CHECKS[target]
    asm = kernel.asm[kind_asm]
    assert asm
    has_atomic = atomic in asm or (target == "cuda:90" and "red.global" in asm)
    needs_atomic = kind in ("work-stealing", "stream-k")
    if target == "cuda:90" and reduction in ("linear", "tree"):
        # The acquire poll (add 0) becomes ld.acquire; a tree's signal stays an
        # exchange, a linear one is a count whose old value nobody reads (red).
        signal = (
            "red.global.gpu.release.add"
            if reduction == "linear"
            else "atom.global.gpu.release.exch"
        )
        assert "ld.global.gpu.acquire" in asm and signal in asm
    assert has_atomic == needs_atomic, (kind, reduction, target)


def test_pipelined_body_issues_hinted_tdm_copies_on_gfx1250():
    kernel = compile_tile_module(build_gemm_module(kind="persistent", body="pipelined"), "gfx1250")
    assert "tensor_load_to_lds" in kernel.asm["amdgcn"]
    assert "warp_used_hint" in kernel.asm["tile"]


def test_pipelined_body_uses_wgmma_on_cuda90():
    module = build_gemm_module(
        kind="stream-k", reduction="tree", body="pipelined", target="cuda:90",
        block_m=128, block_n=128, block_k=64, num_warps=8,
    )  # fmt: skip
    assert "wgmma" in compile_tile_module(module, "cuda:90").asm["ptx"]


@pytest.mark.parametrize(("kind", "reduction"), [("data-parallel", None), ("stream-k", "linear")])
def test_aligned_kernel_copies_with_cp_async_on_cuda90(kind, reduction):
    """The facts (8 elements: 16 bytes of bf16) make every copy row whole 16-byte
    vectors: direct 16-byte cp.async, no register round trip; without them the
    copies are loads and shared stores."""
    from gemm_opt.core.contract import DIVISIBILITY
    from gemm_opt.core.ext_compat import func
    from gemm_opt.core.schedules import ALIGNED_ARGS

    ptx = {}
    for aligned in (False, True):
        module = build_gemm_module(
            kind=kind, reduction=reduction, dtype="bf16", target="cuda:90",
            block_m=128, block_n=128, block_k=64, num_warps=4, aligned=aligned,
        )  # fmt: skip
        fn = next(op for op in module.body.operations if isinstance(op, func.FuncOp))
        arg_attrs = fn.attributes["arg_attrs"] if "arg_attrs" in fn.attributes else []
        facts = {
            name: ir.IntegerAttr(ir.DictAttr(attrs)[DIVISIBILITY]).value
            for name, attrs in zip(kernel_args(kind, reduction), arg_attrs, strict=False)
            if DIVISIBILITY in ir.DictAttr(attrs)
        }
        assert facts == (dict.fromkeys(ALIGNED_ARGS, 8) if aligned else {})
        ptx[aligned] = compile_tile_module(module, "cuda:90").asm["ptx"]
    copies = [ln for ln in ptx[True].splitlines() if "cp.async.cg.shared.global" in ln]
    assert copies and all(ln.rstrip(" ;").split(",")[2].strip() == "0x10" for ln in copies)
    assert "wgmma.mma_async" in ptx[True]
    assert "cp.async" not in ptx[False] and "ld.global" in ptx[False]


def test_module_context_is_kept():
    module = build_gemm_module()
    assert isinstance(module, ir.Module)
    assert "tile.gemm_schedule" in str(module)


@pytest.mark.parametrize(
    ("kind", "reduction", "grouped", "tma"),
    [*((k, r, "none", False) for k, r in SCHEDULES), ("persistent", None, "m", False),
     ("persistent", None, "k", False), ("persistent", None, "k", True)],
)  # fmt: skip
def test_lowered_ops_carry_the_schedule_location(kind, reduction, grouped, tma):
    """Every op the lowering creates (loops, index arithmetic, atomics, stores) is
    at the schedule op's location, so a diagnostic or a model report about one
    names the schedule's line; the body's ops keep their own."""
    built = build_gemm_module(
        kind=kind, reduction=reduction, grouped=grouped, num_warps=8 if tma else 4,
        block_m=128 if tma else 64, block_n=128 if tma else 64, block_k=64 if tma else 32,
        aligned=tma, tma=tma, target="cuda:90" if tma else "gfx1250",
    )  # fmt: skip
    text = built.operation.get_asm(print_generic_op_form=True)
    with make_context():
        module = ir.Module.parse(text)  # each op at its own line of ``text``
        before: dict[str, int] = {}
        sched = []

        def count(op):
            if op.name == "tile.gemm_schedule":
                sched.append(str(op.location))
            elif op.name != "tile.schedule_yield":  # erased with the schedule
                before[str(op.location)] = before.get(str(op.location), 0) + 1
            return ir.WalkResult.ADVANCE

        module.operation.walk(count)
        LowerGemmSchedulePass().run(module.operation)
        after: dict[str, int] = {}

        def tally(op):
            after[str(op.location)] = after.get(str(op.location), 0) + 1
            return ir.WalkResult.ADVANCE

        module.operation.walk(tally)
    (at,) = sched
    assert "loc(unknown)" not in after and at not in before
    created = {loc: n for loc, n in after.items() if loc not in before}
    assert set(created) == {at} and created[at] > 10, created
    # The body's ops are moved, not rebuilt: each original location is still there.
    assert all(after.get(loc, 0) >= 1 for loc in before)


# ---- grouped GEMM -------------------------------------------------------------------

#: Group sizes: empty groups first, middle and last, all empty, one group, very unequal.
GROUP_LENS = [[0, 37, 5, 0, 64], [10], [0, 0, 0], [100, 0, 1], [3, 0, 0, 70, 0]]


def _grouped(grouped: str, trans_b: bool = False, body: str = "auto", tma: bool = False):
    module = build_gemm_module(
        kind="persistent", grouped=grouped, trans_b=trans_b, block_m=BM, block_n=BN, block_k=BK,
        group_m=2, body=body, aligned=tma, tma=tma,
    )  # fmt: skip
    LowerGemmSchedulePass().run(module.operation)
    assert module.operation.verify()
    return module


@pytest.mark.parametrize(
    ("trans_b", "body", "tma"),
    [(False, "blocks", False), (False, "pipelined", False), (True, "blocks", False),
     (False, "pipelined", True)],
)  # fmt: skip
def test_grouped_m_equals_per_group_numpy(trans_b, body, tma):
    """Forward (B as (G, K, N)) and the dgrad form (B as (G, N, K)): rows of
    group g times weight g; an empty group shifts neither rows nor weights.
    The TMA body reads past a group's rows (the store drops them) and relies
    on K being a multiple of block_k (its stated fact), so K = 96 there."""
    module = _grouped("m", trans_b, body, tma)
    if tma:
        fn = next(iter(module.body.operations))
        facts = {ir.DictAttr(a)["tile.divisibility"] for a in fn.arg_attrs if len(ir.DictAttr(a))}
        assert {ir.IntegerAttr(f).value for f in facts} == {8, 32}  # K: lcm(8, block_k)
    rng = np.random.default_rng(1)
    k, n = (96 if tma else 70), 45
    for lens in GROUP_LENS:
        g, s = len(lens), sum(lens)
        a = rng.integers(-3, 4, (s, k)).astype(np.float16)
        w = rng.integers(-3, 4, (g, k, n)).astype(np.float16)
        b = np.ascontiguousarray(w.transpose(0, 2, 1)) if trans_b else w
        c = np.full((s, n), np.nan, np.float16)
        ldb = k if trans_b else n
        args = [a, b, c, s, n, k, k, ldb, n, np.array(lens, np.int32), g]
        run_function(module, "gemm", args, (3, 1, 1))
        assert np.array_equal(c.astype(np.float64), grouped_reference(a, w, lens)), lens


def test_grouped_k_wgrad_equals_per_group_numpy():
    """wgrad: out[g] = A_g^T @ B_g over group g's rows; an empty group gives zeros."""
    module = _grouped("k")
    rng = np.random.default_rng(2)
    m, n = 40, 45
    for lens in GROUP_LENS:
        g, s = len(lens), sum(lens)
        a = rng.integers(-3, 4, (s, m)).astype(np.float16)
        b = rng.integers(-3, 4, (s, n)).astype(np.float16)
        c = np.full((g * m, n), np.nan, np.float16)
        run_function(module, "gemm", [a, b, c, m, n, s, m, n, n, np.array(lens, np.int32), g], (4,))
        ref = np.zeros((g * m, n))
        start = 0
        for i, length in enumerate(lens):
            rows = slice(start, start + length)
            ref[i * m : (i + 1) * m] = a[rows].T.astype(np.float64) @ b[rows].astype(np.float64)
            start += length
        assert np.array_equal(c.astype(np.float64), ref), lens


@pytest.mark.parametrize("target", list(TARGET_CHECKS))
@pytest.mark.parametrize(("grouped", "trans_b"), [("m", False), ("m", True), ("k", False)])
def test_grouped_compiles_for_every_target(grouped, trans_b, target):
    module = build_gemm_module(kind="persistent", grouped=grouped, trans_b=trans_b, target=target)
    kernel = compile_tile_module(module, target)
    assert kernel.asm[TARGET_CHECKS[target][0]]


def test_grouped_kernel_signature():
    names = kernel_args("persistent", None, "m")
    assert names[9:] == ("group_lens", "num_groups")
    with pytest.raises(ValueError, match="trans_a and trans_b are for grouped = 'none' or 'm'"):
        build_gemm_module(kind="persistent", grouped="k", trans_b=True)
    with pytest.raises(ValueError, match="needs kind persistent"):
        build_gemm_module(kind="stream-k", reduction="atomic", grouped="m")


@pytest.mark.parametrize(
    ("grouped", "body"), [("m", "blocks"), ("m", "pipelined"), ("k", "blocks")]
)
def test_grouped_lengths_the_host_did_not_check_stay_in_bounds(grouped, body):
    """The GPU path may launch with lengths it never read back (no host sync):
    a negative length counts as empty and rows end at the tensor's, so lengths
    summing past it touch no memory outside the operands (the model refuses
    every out-of-bounds access) and the rows in bounds hold their groups'
    products."""
    module = _grouped(grouped, body=body)
    rng = np.random.default_rng(3)
    s, k, n = 50, 40, 36
    lens = [20, -7, 0, 45]  # the kernel reads [20, 0, 0, 30 of 45]
    g = len(lens)
    if grouped == "m":
        a = rng.integers(-3, 4, (s, k)).astype(np.float16)
        w = rng.integers(-3, 4, (g, k, n)).astype(np.float16)
        c = np.full((s, n), np.nan, np.float16)
        run_function(module, "gemm", [a, w, c, s, n, k, k, n, n, np.array(lens, np.int32), g], (3,))
        ref = np.concatenate([a[:20].astype(np.float64) @ w[0], a[20:].astype(np.float64) @ w[3]])
    else:
        m = k
        a = rng.integers(-3, 4, (s, m)).astype(np.float16)
        b = rng.integers(-3, 4, (s, n)).astype(np.float16)
        c = np.full((g * m, n), np.nan, np.float16)
        run_function(module, "gemm", [a, b, c, m, n, s, m, n, n, np.array(lens, np.int32), g], (4,))
        parts = [a[:20].T.astype(np.float64) @ b[:20], np.zeros((m, n)), np.zeros((m, n))]
        ref = np.concatenate([*parts, a[20:].T.astype(np.float64) @ b[20:]])
    assert np.array_equal(c.astype(np.float64), ref)
