"""The fused epilogue through the API: ``linear`` and ``matmul(bias=, activation=,
accumulate=)`` on the model (numpy and CPU torch), autograd through the fused
activation, ``torch.compile`` tracing the operators, and bad input naming the argument.

References are float64; the tolerance is fp16's rounding of the result plus fp32
accumulation (a wrong activation, a bias on the wrong axis or a missing accumulate
are far outside it).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import gemm_opt

ACTS = (None, "relu", "gelu", "gelu-tanh", "silu")
_REF = {
    None: lambda t: t,
    "relu": F.relu,
    "gelu": F.gelu,
    "gelu-tanh": lambda t: F.gelu(t, approximate="tanh"),
    "silu": F.silu,
}


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _close(got: torch.Tensor, want: torch.Tensor, size: torch.Tensor, k: int) -> None:
    bound = 2 * 2.0**-11 * want.abs() + (k + 4) * 2.0**-23 * size + 2.0**-24
    bad = (got.double() - want).abs() > bound
    assert not bad.any(), f"{int(bad.sum())} elements off: {got[bad][:4]} vs {want[bad][:4]}"


@pytest.mark.parametrize("act", ACTS)
def test_linear_equals_torch_on_the_model(act: str | None) -> None:
    """x (batch dims, in) @ w.T + b through the transposed-layout kernel, fused."""
    x = torch.randn(2, 7, 40, generator=_gen(1)).half()
    w = torch.randn(24, 40, generator=_gen(2)).half()
    b = torch.randn(24, generator=_gen(3)).half()
    y = gemm_opt.linear(x, w, b, activation=act)
    assert y.shape == (2, 7, 24) and y.dtype == torch.float16
    want = _REF[act](F.linear(x.double(), w.double(), b.double()))
    size = x.double().abs() @ w.double().abs().T + b.double().abs()
    _close(y, want, size, 40)


def test_linear_of_a_vector_and_without_bias() -> None:
    x = torch.randn(40, generator=_gen(4)).half()
    w = torch.randn(24, 40, generator=_gen(5)).half()
    y = gemm_opt.linear(x, w, activation="silu")
    assert y.shape == (24,)
    _close(y, F.silu(F.linear(x.double(), w.double())), x.double().abs() @ w.double().abs().T, 40)


def test_numpy_accumulate_into_fp32_out() -> None:
    """``out += A @ B + bias`` with an fp32 ``out`` (a main_grad) and fp16 inputs."""
    rng = np.random.default_rng(6)
    a = rng.standard_normal((30, 20)).astype(np.float16)
    b = rng.standard_normal((20, 12)).astype(np.float16)
    bias = rng.standard_normal(12).astype(np.float32)
    old = rng.standard_normal((30, 12)).astype(np.float32)
    out = old.copy()
    got = gemm_opt.matmul(a, b, bias=bias, accumulate=True, out=out)
    assert got is out and out.dtype == np.float32
    want = old + a.astype(np.float64) @ b.astype(np.float64) + bias
    np.testing.assert_allclose(out, want, rtol=2e-6, atol=1e-5)


def test_bf16_numpy_bias_in_float32() -> None:
    import ml_dtypes

    rng = np.random.default_rng(7)
    a = rng.standard_normal((33, 40)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((40, 17)).astype(ml_dtypes.bfloat16)
    bias = rng.standard_normal(17).astype(np.float32)
    got = gemm_opt.matmul(a, b, bias=bias, activation="relu")
    assert got.dtype == ml_dtypes.bfloat16
    want = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2**-7, atol=1e-2)


@pytest.mark.parametrize("act", ACTS)
def test_autograd_through_the_fused_activation(act: str | None) -> None:
    """dx, dW and db against float64 autograd of the unfused layer (the backward
    recomputes the pre-activation with the bias fused)."""
    x = torch.randn(9, 40, generator=_gen(8)).half().requires_grad_()
    w = torch.randn(24, 40, generator=_gen(9)).half().requires_grad_()
    b = torch.randn(24, generator=_gen(10)).half().requires_grad_()
    dy = torch.randn(9, 24, generator=_gen(11)).half()
    gemm_opt.linear(x, w, b, activation=act).backward(dy)
    x64, w64, b64 = (t.detach().double().requires_grad_() for t in (x, w, b))
    _REF[act](F.linear(x64, w64, b64)).backward(dy.double())
    for got, want in ((x.grad, x64.grad), (w.grad, w64.grad), (b.grad, b64.grad)):
        err = float((got.double() - want).abs().max() / want.abs().max())
        assert err < 4e-3, (act, err)


def test_compile_traces_the_epilogue_operator() -> None:
    import torch._dynamo.testing as dt

    torch._dynamo.reset()
    counter = dt.CompileCounterWithBackend("aot_eager")
    f = torch.compile(
        lambda x, w, b: gemm_opt.linear(x, w, b, activation="gelu-tanh"),
        backend=counter,
        fullgraph=True,
    )
    x = torch.randn(12, 40, generator=_gen(12)).half()
    w = torch.randn(24, 40, generator=_gen(13)).half()
    b = torch.randn(24, generator=_gen(14)).half()
    got = f(x, w, b)
    assert counter.frame_count == 1
    targets = [str(n.target) for gm in counter.graphs for n in gm.graph.nodes]
    assert "gemm_opt.matmul_epilogue" in targets
    assert torch.equal(got, gemm_opt.linear(x, w, b, activation="gelu-tanh"))


def test_torch_accumulate_mutates_out() -> None:
    a = torch.randn(16, 32, generator=_gen(15)).half()
    b = torch.randn(32, 8, generator=_gen(16)).half()
    out = torch.randn(16, 8, generator=_gen(17))
    old = out.clone()
    got = gemm_opt.matmul(a, b, out=out, accumulate=True)
    assert got is out
    want = old.double() + a.double() @ b.double()
    assert torch.allclose(out.double(), want, rtol=2e-6, atol=1e-5)


A = np.ones((8, 16), np.float16)
B = np.ones((16, 4), np.float16)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: gemm_opt.matmul(A, B, activation="tanh"), ValueError, "activation: expected"),
        (lambda: gemm_opt.matmul(A, B, activation=3), TypeError, "activation: expected"),
        (lambda: gemm_opt.matmul(A, B, accumulate=True), ValueError, "accumulate: adds"),
        (lambda: gemm_opt.matmul(A, B, accumulate=1), TypeError, "accumulate: expected a bool"),
        (lambda: gemm_opt.matmul(A, B, bias=np.ones(5, np.float16)), ValueError,
         "bias: expected shape (4,)"),
        (lambda: gemm_opt.matmul(A, B, bias=np.ones(4, np.float64)), TypeError,
         "bias: expected float16 or float32"),
        (lambda: gemm_opt.matmul(A, B, bias=torch.ones(4).half()), TypeError,
         "bias: expected a numpy operand"),
        (lambda: gemm_opt.matmul(A, B, schedule="stream-k", reduction="atomic",
                                 activation="relu"), ValueError, "activation: atomic stream-K"),
        (lambda: gemm_opt.matmul(A, B, schedule="stream-k", reduction="atomic",
                                 accumulate=True, out=np.zeros((8, 4), np.float32)),
         ValueError, "accumulate: atomic stream-K"),
        (lambda: gemm_opt.linear(A, np.ones((2, 4, 16), np.float16)), ValueError,
         "weight: expected shape (out_features, in_features)"),
        (lambda: gemm_opt.linear(A, np.ones((4, 15), np.float16)), ValueError,
         "x: expected shape (..., in_features) with in_features = 15"),
        (lambda: gemm_opt.linear([1.0], B.T), TypeError, "x: expected a numpy array"),
    ],
)  # fmt: skip
def test_bad_input_names_the_argument(call, error, match) -> None:
    with pytest.raises(error, match=re.escape(match)):
        call()


def test_scaled_matmul_refuses_an_epilogue() -> None:
    with pytest.raises(ValueError, match="bias: the scaled"):
        gemm_opt.matmul(A, B, scale_a=np.ones(1, np.float32), scale_b=np.ones(1, np.float32),
                        bias=np.ones(4, np.float16))  # fmt: skip


# ---- grouped forms -----------------------------------------------------------------------

LENS = [5, 0, 11, 8]


def _grouped_operands(seed: int, k: int = 24, n: int = 16):
    g = len(LENS)
    a = torch.randn(sum(LENS), k, generator=_gen(seed)).half()
    w = torch.randn(g, k, n, generator=_gen(seed + 1)).half()
    bias = torch.randn(g, n, generator=_gen(seed + 2)).half()
    return a, w, bias


def _grouped_reference(a, w, bias, act):
    out, start = [], 0
    for i, length in enumerate(LENS):
        rows = a[start : start + length].double()
        out.append(rows @ w[i].double() + bias[i].double())
        start += length
    return _REF[act](torch.cat(out))


@pytest.mark.parametrize("act", ["silu", "gelu-tanh", None])
def test_grouped_bias_per_group_and_activation(act: str | None) -> None:
    a, w, bias = _grouped_operands(20)
    got = gemm_opt.grouped_matmul(a, w, LENS, bias=bias, activation=act)
    want = _grouped_reference(a, w, bias, act)
    assert torch.allclose(got.double(), want, rtol=2e-3, atol=2e-3)


def test_grouped_autograd_bias_per_group() -> None:
    a, w, bias = (t.requires_grad_() for t in _grouped_operands(30))
    dy = torch.randn(sum(LENS), 16, generator=_gen(33)).half()
    gemm_opt.grouped_matmul(a, w, torch.tensor(LENS), bias=bias, activation="silu").backward(dy)
    a64, w64, b64 = (t.detach().double().requires_grad_() for t in (a, w, bias))
    _grouped_reference(a64, w64, b64, "silu").backward(dy.double())
    for got, want in ((a.grad, a64.grad), (w.grad, w64.grad), (bias.grad, b64.grad)):
        err = float((got.double() - want).abs().max() / want.abs().max())
        assert err < 4e-3, err
    assert float(bias.grad[1].abs().max()) == 0.0  # the empty group's bias gets nothing


def test_wgrad_accumulates_into_fp32_main_grad() -> None:
    """MoE wgrad into fp32 ``main_grad``: out[g] += a_g.T @ dy_g, exact on integers."""
    x = torch.randint(-3, 4, (sum(LENS), 12), generator=_gen(40)).half()
    dy = torch.randint(-3, 4, (sum(LENS), 8), generator=_gen(41)).half()
    main_grad = torch.randint(-50, 50, (len(LENS), 12, 8), generator=_gen(42)).float()
    want = main_grad.clone()
    start = 0
    for i, length in enumerate(LENS):
        want[i] += x[start : start + length].float().T @ dy[start : start + length].float()
        start += length
    got = gemm_opt.grouped_matmul_variable_k(x, dy, LENS, out=main_grad, accumulate=True)
    assert got is main_grad and torch.equal(main_grad, want)


def test_grouped_refusals() -> None:
    a, w, bias = _grouped_operands(50)
    with pytest.raises(ValueError, match=re.escape("bias: expected shape (4, 16)")):
        gemm_opt.grouped_matmul(a, w, LENS, bias=bias[0])
    with pytest.raises(ValueError, match="accumulate: adds the result into out"):
        gemm_opt.grouped_matmul_variable_k(a, a, LENS, accumulate=True)
    with pytest.raises(TypeError, match="accumulate: expected a bool"):
        gemm_opt.grouped_matmul(a, w, LENS, accumulate="yes", out=torch.zeros(24, 16))


# ---- SwiGLU ------------------------------------------------------------------------------


def _swiglu_ref(t: torch.Tensor) -> torch.Tensor:
    gate, up = t.chunk(2, dim=-1)
    return F.silu(gate) * up


def test_linear_swiglu_halves_and_autograd() -> None:
    """``w`` (2N, K) as ``[W_gate; W_up]`` (torch.chunk's halves): y (..., N);
    gradients of x, w and the (2N,) bias against float64."""
    x = torch.randn(3, 5, 40, generator=_gen(60)).half().requires_grad_()
    w = (torch.randn(48, 40, generator=_gen(61)) / 6).half().requires_grad_()
    b = torch.randn(48, generator=_gen(62)).half().requires_grad_()
    y = gemm_opt.linear(x, w, b, activation="swiglu")
    assert y.shape == (3, 5, 24)
    x64, w64, b64 = (t.detach().double().requires_grad_() for t in (x, w, b))
    want = _swiglu_ref(F.linear(x64, w64, b64))
    assert torch.allclose(y.double(), want, rtol=4e-3, atol=4e-3)
    dy = torch.randn(3, 5, 24, generator=_gen(63)).half()
    y.backward(dy)
    want.backward(dy.double())
    for got, ref in ((x.grad, x64.grad), (w.grad, w64.grad), (b.grad, b64.grad)):
        err = float((got.double() - ref).abs().max() / ref.abs().max())
        assert err < 4e-3, err


def test_grouped_swiglu_moe_gate_up() -> None:
    """MoE GateUp: per-expert (K, 2N) weights, per-expert (2N,) bias."""
    lens = [6, 0, 9]
    a = torch.randn(15, 32, generator=_gen(70)).half().requires_grad_()
    w = (torch.randn(3, 32, 32, generator=_gen(71)) / 5).half().requires_grad_()
    bias = torch.randn(3, 32, generator=_gen(72)).half().requires_grad_()
    y = gemm_opt.grouped_matmul(a, w, torch.tensor(lens), bias=bias, activation="swiglu")
    assert y.shape == (15, 16)
    a64, w64, b64 = (t.detach().double().requires_grad_() for t in (a, w, bias))
    parts, start = [], 0
    for i, length in enumerate(lens):
        parts.append(_swiglu_ref(a64[start : start + length] @ w64[i] + b64[i]))
        start += length
    want = torch.cat(parts)
    assert torch.allclose(y.double(), want, rtol=4e-3, atol=4e-3)
    dy = torch.randn(15, 16, generator=_gen(73)).half()
    y.backward(dy)
    want.backward(dy.double())
    for got, ref in ((a.grad, a64.grad), (w.grad, w64.grad), (bias.grad, b64.grad)):
        err = float((got.double() - ref).abs().max() / ref.abs().max())
        assert err < 4e-3, err


def test_swiglu_refusals() -> None:
    with pytest.raises(ValueError, match="expected an even N, got 5"):
        gemm_opt.matmul(A, np.ones((16, 5), np.float16), activation="swiglu")
    with pytest.raises(ValueError, match="activation 'swiglu' needs each tile's two sums"):
        gemm_opt.matmul(A, B, activation="swiglu", schedule="split-k")


def test_swiglu_configs_fit_three_rings() -> None:
    """A SwiGLU call's class configuration: no tile over 128x128 (two accumulators),
    and its three rings (A, gate, up) within the shared-memory budget."""
    from gemm_opt.core.schedules import EpilogueSpec
    from gemm_opt.kernels.h100_configs import GPU_CONFIGS
    from gemm_opt.runtime.plan import SWIGLU_RING_BYTES, SWIGLU_TILE, swiglu_config

    swiglu = EpilogueSpec(activation="swiglu")
    for name, cfg in GPU_CONFIGS.items():
        got = swiglu_config(cfg, swiglu)
        assert got.block_m * got.block_n <= SWIGLU_TILE, name
        ring = 2 * (got.block_m * got.block_k + 2 * got.block_k * got.block_n)
        assert got.num_stages * ring <= SWIGLU_RING_BYTES and got.num_stages >= 2, name
        assert swiglu_config(cfg, EpilogueSpec(activation="silu")) == cfg
    assert swiglu_config(GPU_CONFIGS["wide"], swiglu).block_n == 128


def test_swiglu_auto_runs_a_schedule_that_holds_both_sums() -> None:
    """``schedule="auto"`` may pick split-K for a small output; a SwiGLU call runs
    data-parallel instead (its tuned pick cannot take the two sums per tile)."""
    from gemm_opt.runtime import plan as P

    a, b = np.ones((40, 64), np.float16), np.ones((64, 48), np.float16)
    kw = dict(schedule="auto", reduction=None, num_programs=None, num_xcds=1, config=None,
              out=None, seed=None)  # fmt: skip
    p = P.plan("matmul", a, b, activation="swiglu", **kw)
    assert p.spec.kind == "data-parallel" and p.out_shape == (40, 24)
    y = gemm_opt.matmul(a, b, activation="swiglu", schedule="auto")
    want = 64 / (1 + np.exp(-64.0)) * 64
    assert np.all(y == np.float16(want))
