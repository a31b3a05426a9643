"""``matmul(..., row_scale=, col_scale=)``: the epilogue's per-row and per-column fp32
scales through the API, on the model against numpy, with autograd (not in the scales),
the operator's fake implementation, and named errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import gemm_opt
from gemm_opt.runtime import plan as P

BF16 = torch.bfloat16
ACTS = {
    None: lambda x: x,
    "relu": lambda x: np.maximum(x, 0),
    "silu": lambda x: x / (1 + np.exp(-x)),
}


def _want(a, b, bias, act, rs, cs) -> np.ndarray:
    acc = a.astype(np.float64) @ b.astype(np.float64)
    if rs is not None:
        acc = acc * rs[:, None]
    if cs is not None:
        acc = acc * cs[None, :]
    if bias is not None:
        acc = acc + bias
    return ACTS[act](acc)


@pytest.mark.parametrize(
    ("act", "bias", "which"),
    list(itertools.product(ACTS, (False, True), ("row", "col", "both"))),
)
def test_scales_on_the_model_equal_numpy(act: str | None, bias: bool, which: str) -> None:
    rng = np.random.default_rng(hash((act, bias, which)) % 2**32)
    m, n, k = 37, 45, 29  # ragged: every tile edge masked
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    rs = (rng.random(m) + 0.5).astype(np.float32) if which != "col" else None
    cs = (rng.random(n) - 0.5).astype(np.float32) if which != "row" else None
    bv = rng.standard_normal(n).astype(np.float16) if bias else None
    got = gemm_opt.matmul(a, b, bias=bv, activation=act, row_scale=rs, col_scale=cs, seed=3)
    want = _want(a, b, bv, act, rs, cs)
    assert got.dtype == np.float16 and got.shape == (m, n)
    # one rounding to fp16 of an fp32 sum: a few ulps of the largest value at most
    assert np.abs(got.astype(np.float64) - want).max() <= 2.0**-9 * np.abs(want).max() + 1e-3


def _torch_ref(a, b, bias, rs, cs, act):
    pre = rs[:, None] * cs[None, :] * (a.float() @ b.float()) + bias.float()
    return {"gelu": torch.nn.functional.gelu, None: lambda x: x}[act](pre)


@pytest.mark.parametrize("act", [None, "gelu"])
def test_scales_autograd_in_a_b_and_bias(act: str | None) -> None:
    torch.manual_seed(1)
    a = torch.randn(33, 24, dtype=BF16, requires_grad=True)
    b = torch.randn(24, 40, dtype=BF16, requires_grad=True)
    bias = torch.randn(40, dtype=BF16, requires_grad=True)
    rs, cs = torch.rand(33) + 0.5, torch.rand(40) + 0.5
    y = gemm_opt.matmul(a, b, bias=bias, activation=act, row_scale=rs, col_scale=cs)
    want = _torch_ref(a, b, bias, rs, cs, act)
    assert (y.float() - want).abs().max() <= 2.0**-7 * want.abs().max()
    dy = torch.randn(33, 40)
    got = torch.autograd.grad((y.float() * dy).sum(), (a, b, bias))
    ref = torch.autograd.grad((want * dy).sum(), (a, b, bias))
    for g, r in zip(got, ref, strict=True):
        assert (g.float() - r).abs().max() <= 2.0**-5 * r.abs().max()


def test_scales_eager_autograd_equals_the_dispatched_operator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gemm_opt import torch_ops as T

    torch.manual_seed(2)
    a = torch.randn(16, 32, dtype=BF16, requires_grad=True)
    b = torch.randn(32, 24, dtype=BF16, requires_grad=True)
    rs, cs = torch.rand(16) + 0.5, torch.rand(24) + 0.5

    def step():
        y = gemm_opt.matmul(a, b, activation="silu", row_scale=rs, col_scale=cs)
        return y, torch.autograd.grad(y.float().square().sum(), (a, b))

    y0, g0 = step()
    monkeypatch.setattr(T, "_DIRECT_DEVICE", "cpu")
    y1, g1 = step()
    assert type(y1.grad_fn).__name__ == "_EagerAutogradBackward"
    assert torch.equal(y0, y1) and all(torch.equal(x, z) for x, z in zip(g0, g1, strict=True))


def test_scales_trace_under_compile_fullgraph() -> None:
    torch.manual_seed(3)
    a, b = torch.randn(16, 32, dtype=BF16), torch.randn(32, 24, dtype=BF16)
    rs, cs = torch.rand(16) + 0.5, torch.rand(24) + 0.5

    def f(a, b, rs, cs):
        return gemm_opt.matmul(a, b, activation="relu", row_scale=rs, col_scale=cs)

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    assert torch.equal(compiled(a, b, rs, cs), f(a, b, rs, cs))


def test_scales_bad_input_is_named() -> None:
    a, b = torch.randn(8, 16, dtype=BF16), torch.randn(16, 12, dtype=BF16)
    rs = torch.ones(8)
    with pytest.raises(TypeError, match=r"row_scale: expected float32 elements, got bfloat16"):
        gemm_opt.matmul(a, b, row_scale=rs.to(BF16))
    with pytest.raises(ValueError, match=r"col_scale: expected shape \(12,\), got \(8,\)"):
        gemm_opt.matmul(a, b, col_scale=rs)
    with pytest.raises(ValueError, match=r"row_scale, col_scale: scale a 2-D product"):
        gemm_opt.matmul(a.expand(2, 8, 16), b, row_scale=rs)
    with pytest.raises(ValueError, match=r"col_scale: activation 'swiglu' takes no col_scale"):
        gemm_opt.matmul(a, b, activation="swiglu", col_scale=torch.ones(6))
    with pytest.raises(TypeError, match=r"row_scale: expected a tensor like a, got list"):
        gemm_opt.matmul(a, b, row_scale=[1.0] * 8)
    with pytest.raises(RuntimeError, match=r"row_scale is not differentiable"):
        gemm_opt.matmul(a, b, row_scale=rs.requires_grad_())
    with pytest.raises(ValueError, match=r"row_scale: the scaled \(FP8\) GEMM"):
        gemm_opt.matmul(a, b, scale_a=torch.ones(()), scale_b=torch.ones(()), row_scale=rs)
    with pytest.raises(ValueError, match=r"only matmul takes them, not grouped_matmul"):
        P.plan("grouped_matmul", a, b.expand(2, 16, 12), [4, 4], row_scale=rs)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU and its bundle")
def test_scales_on_the_gpu_match_float32_with_gradients() -> None:
    """The bundled rowwise-scaled ``x @ W.T`` (linear's layout) on the GPU, forward and
    backward, against float32 torch."""
    torch.manual_seed(4)
    dev = {"device": "cuda", "dtype": BF16}
    x = torch.randn(1024, 1024, **dev, requires_grad=True)
    w = torch.randn(3072, 1024, **dev, requires_grad=True)
    rs = torch.rand(1024, device="cuda") + 0.5
    cs = torch.rand(3072, device="cuda") + 0.5
    y = gemm_opt.linear(x, w, row_scale=rs, col_scale=cs)
    want = rs[:, None] * cs * (x.float() @ w.float().t())
    assert (y.float() - want).abs().max() <= 2.0**-7 * want.abs().max()
    dy = torch.randn(1024, 3072, device="cuda")
    got = torch.autograd.grad((y.float() * dy).sum(), (x, w))
    ref = torch.autograd.grad((want * dy).sum(), (x, w))
    for g, r in zip(got, ref, strict=True):
        assert (g.float() - r).abs().max() <= 2.0**-5 * r.abs().max()
