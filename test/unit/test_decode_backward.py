"""The backward of a decode-shaped GEMM on the kernels ``schedule="auto"`` picks for it.

``y = x @ W^T`` with a few token rows: dgrad ``dY @ W`` is a few-row problem again
(swap-AB, or split-K where the output is small and the inner dimension long),
wgrad ``x^T @ dY`` one whose K is the token count. On the model (CPU tensors;
it resolves ``auto`` as cuda:90 with 132 SMs does): each backward GEMM runs the
cost model's pick for its own problem, the gradients equal float64 (integer
inputs: every product and fp32 sum exact), split-K's are bitwise the same under
every interleaving, and the benchmark's backward rows launch only bundled kernels.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from support.scripts import load_script

import gemm_opt
from gemm_opt.kernels.build_bundles import bundle_specs
from gemm_opt.runtime import autotune
from gemm_opt.runtime import plan as P

ROOT = Path(__file__).resolve().parents[2]
DECODE = load_script(ROOT / "benchmarks" / "h100" / "decode.py", "h100_decode_backward")


def _ints(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """Values in {-1, 0, 1} as fp16: every product and partial sum below is exact."""
    return torch.randint(-1, 2, shape, generator=torch.Generator().manual_seed(seed)).half()


@contextlib.contextmanager
def _recorded(which: Callable[[str], bool] = "matmul".__eq__) -> Iterator[list[P.GemmPlan]]:
    """The plans of the calls (not traces) of the operations ``which`` accepts, in order."""
    made: list[P.GemmPlan] = []
    plan = P.plan

    def record(op, *args, **kw):
        p = plan(op, *args, **kw)
        if which(op) and not kw.get("meta"):
            made.append(p)
        return p

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(P, "plan", record)
        yield made


@pytest.fixture
def plans() -> Iterator[list[P.GemmPlan]]:
    """The plans of every ``matmul`` call made while the test runs, in order."""
    with _recorded() as made:
        yield made


def _forward_backward(m: int, n: int, k: int, linear: bool, seed: int | None = None, **kw):
    """``y = x @ B`` (B = W^T of a (N, K) weight, or a (K, N) row-major B), ``y``'s
    backward with ``dY``; returns x, B's leaf, dY and the leaves' gradients."""
    x = _ints((m, k), 1).requires_grad_()
    leaf = _ints((n, k) if linear else (k, n), 2).requires_grad_()
    dy = _ints((m, n), 3)
    b = leaf.t() if linear else leaf
    gemm_opt.matmul(x, b, seed=seed, **kw).backward(dy)
    db = leaf.grad.t() if linear else leaf.grad  # B's gradient (K, N)
    return x.detach(), b.detach(), dy, x.grad, db


def _exact(got: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> bool:
    want = a.double() @ b.double()
    assert not want.numel() or want.abs().max() <= 2048, "fp16: every integer to 2048 exact"
    return bool(torch.equal(got.double(), want))


def _padded(tokens: int) -> int:
    """wgrad's K for ``tokens`` rows: up to 128 padded to a multiple of 8 (16 bytes)."""
    return tokens + (-tokens) % 8 if tokens <= 128 else tokens


def _same_pick(p: P.GemmPlan, rows: int, n: int, k: int) -> bool:
    """Whether plan ``p`` runs what the cost model picks for ``rows x n x k``."""
    ch = autotune.choose("dense", rows, n, k, 1, p.dtype)
    cfg = (p.spec.block_m, p.spec.block_n, p.spec.block_k, p.spec.num_warps, p.spec.num_stages)
    want = (ch.config.block_m, ch.config.block_n, ch.config.block_k, ch.config.num_warps,
            ch.config.num_stages)  # fmt: skip
    return (
        p.auto
        and (p.spec.kind, p.auto_split_k, p.swap_ab) == (ch.schedule, ch.split_k, ch.swap_ab)
        and cfg == want
    )


# ---- dgrad and wgrad through auto ------------------------------------------------------

#: (M, N, K, the kind dgrad's pick is): few rows against weights, swap-AB; a small
#: output over a long inner dimension (dgrad's K is the forward's N), split-K.
DECODE_SHAPES = [
    (1, 512, 256, "swap-AB"),
    (3, 1024, 512, "swap-AB"),
    (16, 256, 96, "swap-AB"),
    (32, 512, 1024, "swap-AB"),
    (4, 8192, 256, "split-K"),
]


@pytest.mark.parametrize(("m", "n", "k", "kind"), DECODE_SHAPES)
@pytest.mark.parametrize("linear", [True, False], ids=["w_t", "b"])
def test_decode_backward_runs_autos_picks_and_equals_float64(plans, m, n, k, kind, linear):
    """dgrad is the swap-AB or split-K kernel the cost model picks for M x K x N (not
    the data-parallel default it ran before), wgrad the pick for K x N x M; both
    gradients are exact, in both layouts of B."""
    x, b, dy, dx, db = _forward_backward(m, n, k, linear, schedule="auto")
    assert _exact(dx, dy, b.mT) and _exact(db, x.mT, dy)
    _, dgrad, wgrad = plans
    assert (dgrad.scalars["K"], wgrad.scalars["K"]) == (n, _padded(m))
    assert _same_pick(dgrad, m, k, n) and _same_pick(wgrad, k, n, _padded(m))
    got = "swap-AB" if dgrad.swap_ab else "split-K" if dgrad.spec.kind == "split-k" else None
    assert got == kind, (dgrad.spec.name, dgrad.auto_split_k)


def test_split_k_dgrad_is_bitwise_the_same_under_every_interleaving(plans):
    """Random (inexact) values: split-K's fixed-order sum gives the same bits whatever
    order the programs run in (the forward's ``seed`` goes to the backward)."""
    g = torch.Generator().manual_seed(5)
    x0 = torch.randn(4, 256, generator=g).half()
    w0 = torch.randn(8192, 256, generator=g).half()
    dy = torch.randn(4, 8192, generator=g).half()
    grads = []
    for seed in (None, 1, 2):
        x, w = x0.clone().requires_grad_(), w0.clone().requires_grad_()
        gemm_opt.matmul(x, w.t(), schedule="auto", seed=seed).backward(dy)
        grads.append((x.grad, w.grad))
    dgrad = plans[1]
    assert dgrad.spec.kind == "split-k" and dgrad.auto_split_k > 1
    for dx, dw in grads[1:]:
        assert torch.equal(dx, grads[0][0]) and torch.equal(dw, grads[0][1])
    want = dy.double() @ w0.double()
    mag = dy.double().abs() @ w0.double().abs()
    err = (grads[0][0].double() - want).abs()
    assert (err <= 2.0**-11 * want.abs() + 8192 * 2.0**-23 * mag + 2.0**-24).all()


@pytest.mark.parametrize("schedule", ["data-parallel", "split-k", "persistent"])
def test_a_named_forward_schedule_leaves_the_backward_data_parallel(plans, schedule):
    """A named schedule describes the forward's kernel: the backward runs the default."""
    x, b, dy, dx, db = _forward_backward(4, 512, 256, True, schedule=schedule)
    assert _exact(dx, dy, b.mT) and _exact(db, x.mT, dy)
    assert plans[0].spec.kind == schedule
    for p in plans[1:]:
        assert p.spec.kind == "data-parallel" and not p.swap_ab and not p.auto


def test_the_forwards_config_does_not_reach_the_backward(plans):
    """``auto`` with a ``config``: the config names the forward's tiles; dgrad and wgrad
    resolve theirs."""
    cfg = {"block_m": 32, "block_n": 32, "block_k": 32, "group_m": 1, "num_warps": 4}
    _forward_backward(4, 512, 256, True, schedule="auto", config=cfg)
    assert plans[0].spec.block_m == 32
    assert _same_pick(plans[1], 4, 256, 512) and _same_pick(plans[2], 256, 512, _padded(4))


@settings(max_examples=12, deadline=None)
@given(
    m=st.integers(1, 32),
    n=st.integers(1, 300),
    k=st.integers(1, 300),
    linear=st.booleans(),
)
def test_auto_backward_is_exact_and_the_cost_models_over_small_shapes(m, n, k, linear):
    with _recorded() as made:
        x, b, dy, dx, db = _forward_backward(m, n, k, linear, schedule="auto")
    assert _exact(dx, dy, b.mT) and _exact(db, x.mT, dy)
    assert _same_pick(made[1], m, k, n) and _same_pick(made[2], k, n, _padded(m))


# ---- grouped: tiny-group dgrad ---------------------------------------------------------


def test_moe_decode_dgrad_takes_the_tiny_group_tiles():
    """Experts of 0 to 16 tokens: a forward of ``auto`` has dgrad resolve its own pick,
    the 16-row tiles where the cost model takes them, and both gradients are exact."""
    from gemm_opt.kernels import h100_configs as h100

    lens = [0, 3, 16, 5, 1, 0, 9, 2]
    k, n = 2048, 128
    x = _ints((sum(lens), k), 4).requires_grad_()
    w = _ints((len(lens), k, n), 5).requires_grad_()
    dy = _ints((sum(lens), n), 6)
    with _recorded(lambda op: op.startswith("grouped")) as grouped:
        gemm_opt.grouped_matmul(x, w, torch.tensor(lens), schedule="auto").backward(dy)
    _, dgrad, wgrad = grouped
    tiny = next(iter(h100.TINY_GROUP_CONFIGS.values()))
    assert dgrad.spec.trans_b and (dgrad.spec.block_m, dgrad.spec.block_n) == (
        tiny.block_m,
        tiny.block_n,
    )
    ch = autotune.choose("dgrad", sum(lens), k, n, len(lens), "fp16")
    assert ch.config == tiny and dgrad.auto and wgrad.auto
    starts = [sum(lens[:g]) for g in range(len(lens))]
    rows = [slice(s, s + ln) for s, ln in zip(starts, lens, strict=True)]
    for g, r in enumerate(rows):
        assert _exact(x.grad[r], dy[r], w[g].detach().mT)
        assert _exact(w.grad[g], x.detach()[r].mT, dy[r])


# ---- the benchmark's backward rows -----------------------------------------------------


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
def test_the_benchmarks_backward_kernels_are_the_plans_and_bundled(dtype):
    """For every backward problem the benchmark runs: the kernels it lists are the
    plans' of the backward's own views, and the default bundle holds them (``auto``
    on the GPU picks among bundled kernels only, so a missing one would change the
    pick, not fail)."""
    listed = set(DECODE.kernel_names(dtype, passes=("dgrad", "wgrad")))
    swept = set(DECODE.kernel_names(dtype, passes=("wgrad",), wgrad_configs=True))
    bundled = {s.name for s in bundle_specs((dtype,))}
    assert listed | swept <= bundled, sorted((listed | swept) - bundled)
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    kinds = set()
    for p in DECODE.backward_problems():
        a, w, dy = (torch.empty(s, dtype=dt) for s in ((p.m, p.k), (p.n, p.k), (p.m, p.n)))
        for pass_, (x, y) in DECODE.backward_operands(a, w, dy).items():
            pl = P.plan("matmul", x, y, schedule="auto", reduction=None, num_programs=None,
                        num_xcds=1, config=None, out=None, seed=None)  # fmt: skip
            assert pl.spec.name in listed, (p, pass_)
            kinds.add((pass_, pl.swap_ab))
    assert ("dgrad", True) in kinds and ("wgrad", False) in kinds


@pytest.mark.parametrize(
    ("m", "n", "k", "dgrad"), [(4, 8192, 256, "_splitk_"), (1, 256, 1024, "_tc_")]
)
def test_the_benchmarks_backward_calls_check_out_on_the_model(m, n, k, dgrad):
    """The benchmark's backward calls on CPU tensors (the model): torch, auto and prior
    equal float64, auto equals the autograd gradients bit for bit, split-K bitwise."""
    p = DECODE.Problem(m, n, k)
    calls = DECODE.backward_calls(torch, p, torch.float16, ("dgrad", "wgrad"), device="cpu")
    assert set(calls) == {"dgrad", "wgrad"}
    for pass_, (fns, _, checks) in calls.items():
        assert set(fns) == {"torch", "auto", "prior"}
        for label, check in checks.items():
            assert check["ok"] and check.get("bitwise", True), (pass_, label)
        assert checks["auto"]["autograd"], pass_
    assert dgrad in calls["dgrad"][1]["auto"]
    assert "bitwise" in calls["dgrad"][2]["auto"] or dgrad != "_splitk_"


def test_passes_are_checked():
    with pytest.raises(SystemExit):
        DECODE.main(["--list-kernels", "--passes", "fwd,bwd"])


@pytest.mark.parametrize(("m", "padded"), [(1, 8), (5, 8), (8, 8), (13, 16), (129, 129)])
def test_wgrad_pads_a_few_tokens_to_the_alignment(plans, m, padded):
    """wgrad's K is the token count: 1 to 128 tokens off the 16-byte alignment are
    padded with zero rows (the aligned kernels then take the call), the gradient
    stays exact; 8 tokens and more than 128 run as they lie."""
    x, b, dy, dx, db = _forward_backward(m, 48, 40, True, schedule="auto")
    assert _exact(db, x.mT, dy) and _exact(dx, dy, b.mT)
    wgrad = plans[2]
    assert (wgrad.scalars["M"], wgrad.scalars["N"], wgrad.scalars["K"]) == (40, 48, padded)
    assert wgrad.spec.trans_a or m == 1  # a one-row A^T also lies row-major
