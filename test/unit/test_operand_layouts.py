"""Operand layouts and batches of ``matmul``: every layout (NN, NT, TN, TT) of every
schedule, batched and broadcast operands, read as they lie (no copy).

Inputs are small integers, so every product and fp32 partial sum is exact and f16
holds every output exactly: each case must equal numpy bit for bit (atomic
stream-K's f16 adds of exact partials included).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

import gemm_opt
from gemm_opt.core.schedules import kernel_args, tile_count, workspace_layout
from gemm_opt.kernels.schedule_gemm import build_gemm_module
from gemm_opt.model.interpreter import run_function
from gemm_opt.passes.lower_gemm_schedule import LowerGemmSchedulePass
from gemm_opt.runtime import gemm as rt
from gemm_opt.runtime import plan as P

SCHEDULES = [
    ("data-parallel", None),
    ("persistent", None),
    ("work-stealing", None),
    ("stream-k", "atomic"),
    ("stream-k", "linear"),
    ("stream-k", "tree"),
]
LAYOUTS = list(itertools.product([False, True], repeat=2))  # (trans_a, trans_b)
KW = dict(reduction=None, num_programs=None, num_xcds=1, config=None, out=None, seed=None)


def _ints(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-3, 4, shape).astype(np.float16)


def _stored(x: np.ndarray, trans: bool, pad: int) -> np.ndarray:
    """``x`` (..., R, C) as a view of storage laid out row-major (``trans``: column-major)
    with ``pad`` more elements per stored row than the matrix needs."""
    *batch, r, c = x.shape
    inner, outer = (r, c) if trans else (c, r)
    store = np.zeros((*batch, outer, inner + pad), x.dtype)
    view = store[..., :inner]
    view[...] = np.swapaxes(x, -1, -2) if trans else x
    return np.swapaxes(view, -1, -2) if trans else view


def _ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


# ---- the kernels: every body and layout ------------------------------------------------


@pytest.mark.parametrize(("kind", "reduction"), SCHEDULES)
@pytest.mark.parametrize(
    ("body", "tma"), [("blocks", False), ("pipelined", False), ("pipelined", True)]
)
def test_every_layout_of_every_body_equals_numpy(kind, reduction, body, tma) -> None:
    """The kernels of all four layouts, both bodies and the TMA twin's (copies bounded
    by the stored shapes), on ragged shapes with padded leading dimensions."""
    bm = bn = bk = 32
    rng = np.random.default_rng(3)
    for trans_a, trans_b in LAYOUTS:
        module = build_gemm_module(
            kind=kind, reduction=reduction, body=body, aligned=tma, tma=tma, block_m=bm,
            block_n=bn, block_k=bk, group_m=2, num_warps=4, trans_a=trans_a, trans_b=trans_b,
        )  # fmt: skip
        LowerGemmSchedulePass().run(module.operation)
        for m, n, k, programs in [(45, 70, 100, 3), (33, 17, 300, 7), (5, 7, 0, 3)]:
            a, b = _ints(rng, (m, k)), _ints(rng, (k, n))
            sa, sb = _stored(a, trans_a, 3), _stored(b, trans_b, 5)
            store_a = sa.base if sa.base is not None else sa
            store_b = sb.base if sb.base is not None else sb
            grid = tile_count(m, n, bm, bn) if kind == "data-parallel" else programs
            fill = 0.0 if reduction == "atomic" else np.nan
            c = np.full((m, n), fill, np.float16)
            layout = workspace_layout(kind, reduction, grid, 1, bm, bn)
            lda, ldb = store_a.shape[-1], store_b.shape[-1]
            args = [store_a, store_b, c, m, n, k, lda, ldb, n]
            names = kernel_args(kind, reduction)
            if "sync" in names:
                args.append(np.zeros(max(layout.sync_elements, 1), np.int32))
            if "partials" in names:
                args.append(np.zeros(max(layout.partial_elements, 1), np.float32))
            run_function(module, "gemm", args, (grid, 1, 1))
            assert np.array_equal(c.astype(np.float64), _ref(a, b)), (trans_a, trans_b, m, n, k)


# ---- the API on the model ---------------------------------------------------------------


@pytest.mark.parametrize(("schedule", "reduction"), SCHEDULES)
def test_every_layout_of_every_schedule_through_the_api(schedule, reduction) -> None:
    """NN, NT, TN, TT views on odd shapes: the plan picks the transposed kernels from
    the strides (its spec says so) and C equals numpy."""
    rng = np.random.default_rng(5)
    m, n, k = 37, 29, 70
    a, b = _ints(rng, (m, k)), _ints(rng, (k, n))
    for trans_a, trans_b in LAYOUTS:
        x, y = _stored(a, trans_a, 2), _stored(b, trans_b, 0)
        kw = {**KW, "reduction": reduction}
        plan = P.plan("matmul", x, y, schedule=schedule, **kw)
        assert (plan.spec.trans_a, plan.spec.trans_b) == (trans_a, trans_b)
        c = gemm_opt.matmul(x, y, schedule=schedule, reduction=reduction)
        assert np.array_equal(c.astype(np.float64), _ref(a, b)), (trans_a, trans_b)


@pytest.mark.parametrize(
    ("shape_a", "shape_b", "route"),
    [
        ((3, 21, 40), (40, 19), "dense"),  # x @ W: the batch folds into M
        ((2, 3, 21, 40), (40, 19), "dense"),
        ((3, 21, 40), (3, 40, 19), "grouped"),  # bmm, batches back to back
        ((2, 3, 21, 40), (2, 3, 40, 19), "grouped"),
        ((2, 3, 21, 40), (1, 3, 40, 19), "loop"),  # b repeats over the first batch dim
        ((21, 40), (3, 40, 19), "loop"),  # a broadcast over b's batch
        ((2, 1, 21, 40), (3, 40, 19), "loop"),
        ((3, 21, 40), (1, 40, 19), "dense"),
    ],
)
def test_batched_and_broadcast_shapes_equal_numpy(shape_a, shape_b, route) -> None:
    rng = np.random.default_rng(7)
    a, b = _ints(rng, shape_a), _ints(rng, shape_b)
    plan = P.plan("matmul", a, b, schedule="data-parallel", **KW)
    how = "loop" if plan.sub is not None else "grouped" if plan.spec.grouped == "m" else "dense"
    assert how == route
    c = gemm_opt.matmul(a, b)
    assert c.shape == (*np.broadcast_shapes(shape_a[:-2], shape_b[:-2]), 21, 19)
    assert np.array_equal(c.astype(np.float64), _ref(a, b))


@pytest.mark.parametrize(("trans_a", "trans_b"), LAYOUTS)
def test_batched_layouts_equal_numpy(trans_a, trans_b) -> None:
    """bmm with per-batch transposed operands: B's transposed batches run grouped
    with ``trans_b``; A transposed per batch over a row-major B (bmm's dB =
    A.mT @ dC) runs the wgrad kernels (grouped "k", K lengths), TT batch by
    batch; an A whose batches lie back to back along M when stored transposed
    runs grouped with ``trans_a``."""
    rng = np.random.default_rng(9)
    a, b = _ints(rng, (3, 21, 40)), _ints(rng, (3, 40, 19))
    x, y = _stored(a, trans_a, 1), _stored(b, trans_b, 2)
    c = gemm_opt.matmul(x, y)
    assert np.array_equal(c.astype(np.float64), _ref(a, b))
    plan = P.plan("matmul", x, y, schedule="persistent", **KW)
    route = "per batch" if plan.sub is not None else plan.spec.grouped
    assert route == {(False, False): "m", (False, True): "m", (True, False): "k"}.get(
        (trans_a, trans_b), "per batch"
    )
    if route == "k":
        assert plan.lens == (40, 40, 40) and plan.scalars["K"] == 120
    # A stored (K, 3 * 21): batch i's rows are columns 21 i .. 21 i + 20
    store = np.ascontiguousarray(a.transpose(2, 0, 1).reshape(40, 63))
    x = store.reshape(40, 3, 21).transpose(1, 2, 0)
    plan = P.plan("matmul", x, y, schedule="persistent", **KW)
    assert (plan.spec.grouped, plan.spec.trans_a, plan.sub) == ("m", True, None)
    assert np.array_equal(gemm_opt.matmul(x, y).astype(np.float64), _ref(a, b))


def test_named_schedules_without_grouped_kernels_run_batch_by_batch() -> None:
    rng = np.random.default_rng(11)
    a, b = _ints(rng, (2, 21, 40)), _ints(rng, (2, 40, 19))
    plan = P.plan("matmul", a, b, schedule="stream-k", **KW)
    assert plan.sub is not None and plan.spec.kind == "stream-k"
    c = gemm_opt.matmul(a, b, schedule="stream-k")
    assert np.array_equal(c.astype(np.float64), _ref(a, b))


def test_torch_bf16_layouts_and_out() -> None:
    rng = np.random.default_rng(13)
    a = torch.from_numpy(_ints(rng, (2, 21, 40)).astype(np.float32)).bfloat16()
    w = torch.from_numpy(_ints(rng, (19, 40)).astype(np.float32)).bfloat16()
    out = torch.empty(2, 21, 19, dtype=torch.bfloat16)
    got = gemm_opt.matmul(a, w.t(), out=out)  # nn.Linear: x @ W^T
    assert got is out
    assert torch.equal(out.double(), torch.matmul(a.double(), w.t().double()))


# ---- layouts from strides -----------------------------------------------------------------


@settings(max_examples=120, deadline=None)
@given(
    rows=st.integers(1, 9),
    cols=st.integers(1, 9),
    trans=st.booleans(),
    pad=st.integers(0, 5),
    step=st.sampled_from([1, 1, 1, 2]),
)
def test_plan_reads_the_layout_from_the_strides(rows, cols, trans, pad, step) -> None:
    """A transposed view, a sliced leading dimension, or a stepped slice: the plan
    picks the kernel that reads the stored matrix as it lies (``trans_a`` and ``lda``
    the stored row stride), or refuses, naming ``a``, when no dimension has unit
    stride."""
    inner, outer = (rows, cols) if trans else (cols, rows)
    store = np.zeros((outer, (inner + pad) * step), np.float16)
    view = store[:, : inner * step : step]
    a = view.T if trans else view
    b = np.zeros((cols, 4), np.float16)
    unit = step == 1 or inner == 1
    if not unit and outer > 1:
        with pytest.raises(ValueError, match=r"^a: a \(\d+, \d+\) matrix with strides"):
            P.plan("matmul", a, b, schedule="data-parallel", **KW)
        return
    plan = P.plan("matmul", a, b, schedule="data-parallel", **KW)
    # One row or one column is both layouts: read row-major.
    expect_trans = trans and rows > 1 and cols > 1 if unit else cols == 1 and not trans
    if rows > 1 and cols > 1:
        assert plan.spec.trans_a == expect_trans
        assert plan.scalars["lda"] == (inner + pad) * step
    got = gemm_opt.matmul(a, np.ones((cols, 4), np.float16))
    np.testing.assert_array_equal(got, _ref(a, np.ones((cols, 4), np.float16)).astype(np.float16))


@pytest.mark.parametrize(
    ("a", "b", "match"),
    [
        (np.zeros(8, np.float16), np.zeros((8, 4), np.float16), r"^a: expected an array of shape"),
        (np.zeros((3, 8)), np.zeros((8, 4)), r"^a: expected float16 or bfloat16"),
        (
            np.zeros((2, 5, 8), np.float16),
            np.zeros((3, 8, 4), np.float16),
            r"^b: batch dimensions \(3,\) do not broadcast with a's \(2,\)",
        ),
        (
            np.zeros((3, 5, 8), np.float16)[::-1],
            np.zeros((3, 8, 4), np.float16),
            r"^a: negative batch strides",
        ),
        (
            np.zeros((5, 8), np.float16),
            np.zeros((8, 8), np.float16)[:, ::2],
            r"^b: a \(8, 4\) matrix with strides \(8, 2\) is neither row-major",
        ),
    ],
)
def test_bad_layouts_are_refused_naming_the_argument(a, b, match) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        gemm_opt.matmul(a, b)


# ---- no copies on the GPU path -------------------------------------------------------------


@pytest.fixture
def as_cuda(monkeypatch):
    """CPU tensors taken for CUDA ones, up to the launch (recorded, not made); any
    ``contiguous``/``clone`` of an operand fails the test."""
    kind_of = P.kind_of
    monkeypatch.setattr(P, "kind_of", lambda x, n: "cuda" if kind_of(x, n) == "torch-cpu" else kind_of(x, n))  # fmt: skip
    launches: list = []
    monkeypatch.setattr(rt, "launch", lambda spec, values, **kw: launches.append((spec, values)))
    monkeypatch.setattr(rt, "resident_programs", lambda spec, device, target="cuda:90": 132)
    monkeypatch.setattr(rt, "sm_count", lambda torch, device: 132)
    monkeypatch.setattr(rt, "compiler_installed", lambda: False)

    def refuse(self, *args, **kwargs):
        raise AssertionError("an operand was copied")

    monkeypatch.setattr(torch.Tensor, "contiguous", refuse)
    monkeypatch.setattr(torch.Tensor, "clone", refuse)
    monkeypatch.setattr(torch.Tensor, "reshape", refuse)
    return launches


def _aligned(*shape: int) -> torch.Tensor:
    return torch.zeros(*shape, dtype=torch.float16)


def test_gpu_path_launches_on_the_callers_storage(as_cuda) -> None:
    """x @ W^T, A^T @ B, A^T @ B^T, a folded batch, bmm and a broadcast a: every
    launch gets the caller's tensors (or views of them at the batch's first
    element) and the kernel of the layout."""
    x, w = _aligned(3, 32, 64), _aligned(48, 64)
    P.clear_plans()
    with torch.no_grad():
        gemm_opt.matmul(x, w.t())
        spec, values = as_cuda[-1]
        assert spec.trans_b and not spec.trans_a and spec.grouped == "none"
        assert values["a"] is x and values["b"].data_ptr() == w.data_ptr()
        assert (values["M"], values["lda"], values["ldb"]) == (96, 64, 64)
        at = _aligned(64, 32).t()
        gemm_opt.matmul(at, w.t())
        spec, values = as_cuda[-1]
        assert spec.trans_a and spec.trans_b and values["a"] is at and values["lda"] == 32
        b = _aligned(3, 64, 48)
        gemm_opt.matmul(x, b)
        spec, values = as_cuda[-1]
        assert spec.grouped == "m" and values["a"] is x and values["b"] is b
        assert values["group_lens"].tolist() == [32, 32, 32]
        gemm_opt.matmul(x.mT, _aligned(3, 32, 48))  # bmm's dB = A.mT @ dC: the wgrad kernels
        spec, values = as_cuda[-1]
        assert spec.grouped == "k" and values["a"].data_ptr() == x.data_ptr()
        assert values["group_lens"].tolist() == [32, 32, 32] and values["K"] == 96
        before = len(as_cuda)
        gemm_opt.matmul(x[0], b)  # a broadcast: one launch per batch, on views
        launched = as_cuda[before:]
        assert len(launched) == 3
        for i, (_, values) in enumerate(launched):
            assert values["a"].data_ptr() == x.data_ptr()
            assert values["b"].data_ptr() == b[i].data_ptr()


def test_gpu_path_refuses_misaligned_batches_naming_the_argument(as_cuda) -> None:
    b = torch.zeros(3 * 3076, dtype=torch.float16).as_strided((3, 64, 48), (3076, 48, 1))
    with pytest.raises(ValueError, match=r"^b: batch 1 starts 6152 bytes"):
        gemm_opt.matmul(_aligned(32, 64), b)


# ---- autograd on the model -----------------------------------------------------------------


def test_linear_backward_runs_the_transposed_kernels(monkeypatch) -> None:
    """y = x @ W^T (nn.Linear): dx = dy @ W (W^T^T: the trans_b kernel reading W^T's
    storage, W), dW^T = x^T @ dy with x's batch folded into K (trans_a), so no operand is
    copied; the gradients equal float64's."""
    rng = np.random.default_rng(17)
    x = torch.from_numpy(_ints(rng, (2, 21, 40))).requires_grad_()
    w = torch.from_numpy(_ints(rng, (19, 40))).requires_grad_()
    specs: list = []
    plan = P.plan

    def spy(op, a, b, *args, **kw):
        p = plan(op, a, b, *args, **kw)
        specs.append(p.spec)
        return p

    monkeypatch.setattr(P, "plan", spy)
    y = gemm_opt.matmul(x, w.t())
    dy = torch.from_numpy(_ints(rng, (2, 21, 19)))
    y.backward(dy)
    x64, w64 = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    (x64 @ w64.t()).backward(dy.double())
    assert torch.equal(x.grad.double(), x64.grad) and torch.equal(w.grad.double(), w64.grad)
    layouts = [(s.trans_a, s.trans_b, s.grouped) for s in specs if s is not None]
    assert (False, True, "none") in layouts  # forward: x @ W^T
    assert (False, False, "none") in layouts  # dx = dy @ (W^T)^T = dy @ W, row-major
    assert (True, False, "none") in layouts  # dW^T = x^T @ dy


def test_bmm_backward_with_broadcast_equals_float64() -> None:
    rng = np.random.default_rng(19)
    a = torch.from_numpy(_ints(rng, (21, 40))).requires_grad_()
    b = torch.from_numpy(_ints(rng, (3, 40, 19))).requires_grad_()
    dy = torch.from_numpy(_ints(rng, (3, 21, 19)))
    gemm_opt.matmul(a, b).backward(dy)
    a64, b64 = a.detach().double().requires_grad_(), b.detach().double().requires_grad_()
    torch.matmul(a64, b64).backward(dy.double())
    assert torch.equal(a.grad.double(), a64.grad) and torch.equal(b.grad.double(), b64.grad)


# ---- compiled for every target ----------------------------------------------------------


@pytest.mark.parametrize("target", ["gfx1250", "gfx950", "gfx942"])
@pytest.mark.parametrize(("trans_a", "trans_b"), LAYOUTS[1:])
def test_transposed_kernels_compile_for_amd(target, trans_a, trans_b) -> None:
    from gemm_opt.lowering.compile import compile_tile_module

    module = build_gemm_module(kind="persistent", target=target, trans_a=trans_a, trans_b=trans_b)
    assert compile_tile_module(module, target).asm["amdgcn"]


@pytest.mark.parametrize(("trans_a", "trans_b", "grouped"), [*((a, b, "none") for a, b in LAYOUTS[1:]), (True, False, "m"), (True, True, "m")])  # fmt: skip
def test_transposed_tma_kernels_compile_for_cuda90(trans_a, trans_b, grouped) -> None:
    """The TMA twin of each layout: descriptors of the stored shapes, copies by TMA,
    wgmma reading the transposed shared-memory view (no register transposes)."""
    from gemm_opt.core.schedules import KernelSpec
    from gemm_opt.kernels.build_bundles import pipeline_of
    from gemm_opt.lowering.compile import compile_tile_module

    spec = KernelSpec(
        "persistent", None, grouped, "bf16", 128, 128, 64, 8, 8, None, aligned=True, tma=True,
        trans_a=trans_a, trans_b=trans_b,
    )  # fmt: skip
    module = build_gemm_module(
        kind="persistent", grouped=grouped, dtype="bf16", target="cuda:90", block_m=128,
        block_n=128, block_k=64, num_warps=8, aligned=True, tma=True, trans_a=trans_a,
        trans_b=trans_b,
    )  # fmt: skip
    ptx = compile_tile_module(module, "cuda:90", pipeline=pipeline_of(spec, "cuda:90")).asm["ptx"]
    assert "cp.async.bulk.tensor" in ptx and "wgmma.mma_async" in ptx
    assert spec.name.startswith("gemm_persistent" + ("_groupedm" if grouped == "m" else ""))
    assert ("_ta" in spec.name, "_tb" in spec.name) == (trans_a, trans_b)


def test_the_model_runs_on_the_operands_own_storage(monkeypatch) -> None:
    """fp16 numpy operands reach the interpreter as flat views of their own memory (the
    transposed kernels read them as stored), not as contiguous copies."""
    from gemm_opt.kernels import cache

    seen = {}
    run = cache.run_on_model

    def spy(spec, values, **kw):
        seen.update(spec=spec, a=values["a"], b=values["b"])
        return run(spec, values, **kw)

    monkeypatch.setattr(cache, "run_on_model", spy)
    rng = np.random.default_rng(23)
    a, b = _ints(rng, (21, 40)), _ints(rng, (40, 19))
    x, y = _stored(a, True, 3), _stored(b, True, 0)
    c = gemm_opt.matmul(x, y)
    assert np.array_equal(c.astype(np.float64), _ref(a, b))
    assert seen["spec"].trans_a and seen["spec"].trans_b
    assert np.shares_memory(seen["a"], x) and np.shares_memory(seen["b"], y)
    assert seen["a"].size == 39 * 24 + 21  # from the first element to the last, K rows of lda


@settings(max_examples=60, deadline=None)
@given(
    batch=st.lists(st.integers(1, 3), max_size=2),
    how=st.tuples(*[st.lists(st.sampled_from("k1d"), min_size=2, max_size=2)] * 2),
    mnk=st.tuples(st.integers(1, 9), st.integers(1, 9), st.integers(1, 9)),
    trans=st.tuples(st.booleans(), st.booleans()),
    pad=st.tuples(st.integers(0, 3), st.integers(0, 3)),
    step=st.tuples(st.sampled_from([1, 1, 2]), st.sampled_from([1, 1, 2])),
    seed=st.integers(0, 2**16),
)
# One-row batches of a padded column-major A: stacked along M they form no matrix.
@example([2], (["k", "k"], ["k", "k"]), (1, 1, 2), (True, False), (1, 0), (1, 1), 0)
def test_any_batched_view_equals_numpy(batch, how, mnk, trans, pad, step, seed) -> None:
    """Random batch shapes, each operand's batch dimensions kept, broadcast (1) or
    missing (leading ones: ``d``), row- or column-major matrices with padded leading
    dimensions, batches sliced with a step: whichever route the plan takes (folded,
    grouped, wgrad, per batch), C equals numpy's matmul: every such view runs."""
    m, n, k = mnk
    rng = np.random.default_rng(seed)

    def operand(which: int, rows: int, cols: int) -> np.ndarray:
        dims: list[int] = []
        for d, h in zip(batch, how[which], strict=False):
            if h == "d" and not dims:
                continue  # only leading dimensions may be missing
            dims.append(1 if h == "1" else d)
        s = step[which]
        stored = _stored(_ints(rng, (*(d * s for d in dims), rows, cols)), trans[which], pad[which])
        return stored[tuple(slice(None, None, s) for _ in dims)]

    x, y = operand(0, m, k), operand(1, k, n)
    got = gemm_opt.matmul(x, y)
    want = np.matmul(x.astype(np.float64), y.astype(np.float64))
    assert got.shape == want.shape and np.array_equal(got.astype(np.float64), want)
