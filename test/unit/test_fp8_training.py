"""``gemm_opt.fp8_linear`` / ``fp8_grouped_linear``: FP8 GEMMs differentiable in their
high-precision operands, on the model.

Forward, dgrad and wgrad each equal the float64 product of the operands as the
stated recipe quantizes them (forward along K; dgrad ``dY`` and ``W^T`` along N;
wgrad ``dY^T`` and ``X^T`` along M, per group for the grouped form) within the
fp32 accumulation bound, and the float64 product of the unquantized operands
within e4m3's rounding; the refusals name the argument.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import gemm_opt
from gemm_opt.core.scaling import scaled_reference

torch = pytest.importorskip("torch")
pytest.importorskip("ml_dtypes")

M, N, K = 40, 48, 160  # K: one whole 128-block and a partial one


def _fp8_product(
    a: np.ndarray, w: np.ndarray, recipe: str, lens: list[int] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """float64 ``q(a) @ q(w).T`` with ``a`` (rows, R) and ``w`` (cols, R) quantized along R
    (``lens``: ``w`` (G, cols, R), rows of group g times ``w[g]``, its scales per group),
    and its fp32 accumulation bound (``(R + 2 + 4 ceil(R/128)) 2^-23 S + 2^-24 |ref|``)."""
    r = a.shape[1]
    wt = np.ascontiguousarray(w).swapaxes(-1, -2)
    a8, sa = gemm_opt.quantize_fp8(np.ascontiguousarray(a), recipe=recipe, operand="a")
    b8, sb = gemm_opt.quantize_fp8(wt, recipe=recipe, operand="b")
    ca, cb = a8.view(np.uint8), b8.view(np.uint8)
    ref = scaled_reference(ca, cb, "e4m3fn", sa, sb, recipe, group_lens=lens)
    mag = scaled_reference(ca & 0x7F, cb & 0x7F, "e4m3fn", sa, sb, recipe, group_lens=lens)
    bound = (r + 2 + 4 * math.ceil(r / 128)) * 2.0**-23 * mag + 2.0**-24 * np.abs(ref)
    return ref, bound


def _close(got, ref, bound):
    err = np.abs(got.detach().double().numpy() - ref)
    assert np.all(err <= bound), (
        f"worst {float((err / np.maximum(bound, 1e-300)).max()):.3g} bounds"
    )


def _exact_close(got, a, w):
    """Within e4m3's rounding of each operand (2^-4 relative each) of the exact product."""
    ref = a.astype(np.float64) @ w.astype(np.float64).T
    mag = np.abs(a).astype(np.float64) @ np.abs(w).astype(np.float64).T
    assert np.all(np.abs(got.detach().double().numpy() - ref) <= 2.0**-3 * mag)


def _leaf(rng, *shape):
    return torch.from_numpy(rng.standard_normal(shape).astype(np.float32)).requires_grad_()


@pytest.mark.parametrize(
    "recipe, grad_recipe",
    [("rowwise", "rowwise"), ("tensorwise", "tensorwise"), ("block128", "block128"),
     ("block128", "rowwise")],
)  # fmt: skip
def test_linear_forward_dgrad_wgrad_equal_float64(recipe, grad_recipe):
    rng = np.random.default_rng(1)
    x, w = _leaf(rng, M, K), _leaf(rng, N, K)
    # rows and columns of different magnitudes: a scale on the wrong axis is far off
    dy = torch.from_numpy((rng.standard_normal((M, N)) * np.exp2(rng.integers(-4, 5, (M, 1))))
                          .astype(np.float32))  # fmt: skip
    y = gemm_opt.fp8_linear(x, w, recipe=recipe, grad_recipe=grad_recipe, out_dtype=torch.float32)
    assert y.dtype == torch.float32 and y.shape == (M, N)
    xn, wn, dyn = x.detach().numpy(), w.detach().numpy(), dy.numpy()
    _close(y, *_fp8_product(xn, wn, recipe))
    y.backward(dy)
    assert x.grad.dtype == x.dtype and w.grad.dtype == w.dtype
    _close(x.grad, *_fp8_product(dyn, wn.T, grad_recipe))  # dX = dY @ W: along N
    _close(w.grad, *_fp8_product(dyn.T, xn.T, grad_recipe))  # dW = dY^T @ X: along M
    _exact_close(x.grad, dyn, wn.T)
    _exact_close(w.grad, dyn.T, xn.T)


def test_linear_bf16_operands_and_output():
    rng = np.random.default_rng(2)
    x = torch.from_numpy(rng.standard_normal((M, K)).astype(np.float32)).bfloat16()
    w = torch.from_numpy(rng.standard_normal((N, K)).astype(np.float32)).bfloat16()
    x.requires_grad_(), w.requires_grad_()
    y = gemm_opt.fp8_linear(x, w)
    assert y.dtype == torch.bfloat16
    y.float().sum().backward()
    assert x.grad.dtype == torch.bfloat16 and w.grad.dtype == torch.bfloat16
    ones = np.ones((M, N), dtype=np.float32)
    ref, bound = _fp8_product(ones, w.detach().float().numpy().T, "rowwise")
    # cast to bf16 last: within half a bf16 step more
    _close(x.grad, ref, bound + 2.0**-8 * (np.abs(ref) + bound))


@pytest.mark.parametrize("grad_recipe", ["rowwise", "tensorwise"])
def test_grouped_linear_dgrad_wgrad_equal_float64(grad_recipe):
    rng = np.random.default_rng(3)
    lens = [17, 0, 23, 10]
    s_rows, g = sum(lens), len(lens)
    x, w = _leaf(rng, s_rows, K), _leaf(rng, g, N, K)
    dy = torch.from_numpy((rng.standard_normal((s_rows, N))
                           * np.exp2(rng.integers(-4, 5, (1, N)))).astype(np.float32))  # fmt: skip
    y = gemm_opt.fp8_grouped_linear(
        x, w, torch.tensor(lens), grad_recipe=grad_recipe, out_dtype=torch.float32
    )
    assert y.shape == (s_rows, N)
    y.backward(dy)
    xn, wn, dyn = x.detach().numpy(), w.detach().numpy(), dy.numpy()
    _close(y, *_fp8_product(xn, wn, "rowwise", lens))
    # dgrad: the grouped GEMM on W^T (G, K, N), quantized along N (tensorwise: one scale)
    _close(x.grad, *_fp8_product(dyn, wn.swapaxes(1, 2), grad_recipe, lens))
    _exact_close(x.grad[:17], dyn[:17], wn[0].T)
    # wgrad: the bf16 variable-K grouped GEMM, dW_g = bf16(dY_g)^T @ bf16(X_g), fp32 sums
    # rounded once to bf16, then to x's dtype (float32: exact)
    dy16, x16 = (t.to(torch.bfloat16).double().numpy() for t in (dy, x.detach()))
    start = 0
    for gi, rows in enumerate(lens):
        sl = slice(start, start + rows)
        if rows:
            ref = dy16[sl].T @ x16[sl]
            mag = np.abs(dy16[sl]).T @ np.abs(x16[sl])
            fp32 = (rows + 2) * 2.0**-23 * mag
            _close(w.grad[gi], ref, fp32 + 2.0**-8 * (np.abs(ref) + fp32))
            _exact_close(w.grad[gi], dyn[sl].T, xn[sl].T)
        else:  # no rows: no gradient
            assert torch.count_nonzero(w.grad[gi]) == 0
        start += rows


@pytest.mark.parametrize(
    "over, error, match",
    [
        (dict(recipe="mx32"), ValueError, "recipe: an FP8 training GEMM quantizes with"),
        (dict(grad_recipe="blockwise"), ValueError, "grad_recipe:"),
        (dict(x=np.zeros((4, 64), np.float32)), TypeError, "x: fp8_linear takes torch tensors"),
        (dict(x=torch.zeros(4, 64, dtype=torch.int32)), TypeError, "x: expected high-precision"),
        (dict(weight=torch.zeros(8, 32)), ValueError, "weight: expected x"),
        (dict(out_dtype=torch.float16), ValueError, "out_dtype:"),
    ],
)
def test_refusals_name_the_argument(over, error, match):
    call = dict(x=torch.zeros(4, 64), weight=torch.zeros(8, 64)) | over
    x, w = call.pop("x"), call.pop("weight")
    with pytest.raises(error, match=match):
        gemm_opt.fp8_linear(x, w, **call)


def test_fake_implementations_give_the_shapes():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        y = torch.ops.gemm_opt.fp8_linear(
            torch.empty(4, 64), torch.empty(8, 64), "rowwise", "rowwise", None
        )
        yg = torch.ops.gemm_opt.fp8_grouped_linear(
            torch.empty(6, 64), torch.empty(2, 8, 64), torch.tensor([2, 4]), "block128",
            "rowwise", torch.float32,
        )  # fmt: skip
    assert (y.shape, y.dtype) == ((4, 8), torch.bfloat16)
    assert (yg.shape, yg.dtype) == ((6, 8), torch.float32)


def test_leading_dims_fold_into_rows():
    rng = np.random.default_rng(8)
    x = torch.from_numpy(rng.standard_normal((2, 5, K)).astype(np.float32)).requires_grad_()
    w = _leaf(rng, N, K)
    y = gemm_opt.fp8_linear(x, w, out_dtype=torch.float32)
    assert y.shape == (2, 5, N)
    flat = x.detach().reshape(10, K).clone().requires_grad_()
    y2 = gemm_opt.fp8_linear(flat, w.detach(), out_dtype=torch.float32)
    assert torch.equal(y.reshape(10, N), y2)
    y.sum().backward()
    y2.sum().backward()
    assert x.grad.shape == x.shape and torch.equal(x.grad.reshape(10, K), flat.grad)


def test_compile_traces_forward_and_backward_without_a_graph_break():
    rng = np.random.default_rng(9)
    x, w = _leaf(rng, 32, 128), _leaf(rng, 16, 128)

    def step(x, w):
        return gemm_opt.fp8_linear(x, w, out_dtype=torch.float32).square().sum()

    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
    compiled(x, w).backward()
    got = (x.grad.clone(), w.grad.clone())
    x.grad = w.grad = None
    step(x, w).backward()
    assert torch.equal(got[0], x.grad) and torch.equal(got[1], w.grad)
