"""gemm_opt.quantize.quantize_fp8: layouts of the recipe rule, error bound, torch == numpy bits."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

from gemm_opt.core.fp8 import Fp8Format, decode, spacing
from gemm_opt.core.scaling import (
    Operand,
    Recipe,
    ScaleType,
    check_scales,
    element_scales,
    recipe_of,
    scale_shape,
)
from gemm_opt.quantize import quantize_fp8

SHAPES = [  # (operand, shape)
    ("a", (5, 320)),
    ("a", (1, 96)),
    ("a", (0, 64)),
    ("b", (320, 130)),
    ("b", (224, 1)),
    ("b", (3, 64, 200)),
    ("b", (2, 0, 7)),
]
FORMATS = [Fp8Format.E4M3FN, Fp8Format.E5M2, Fp8Format.E4M3FNUZ, Fp8Format.E5M2FNUZ]


def sample(shape, seed: int) -> np.ndarray:
    """Normal values, a few rows/blocks spanning 1e-30 .. 1e30 in size, and zeros."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * np.exp(rng.uniform(-8, 8, (*shape[:-1], 1)))
    flat = x.reshape(-1)
    if flat.size > 8:
        flat[:3] = [1e-30, -3e30, 0.0]
        flat[-4:] = 0.0
    return x.astype(np.float32)


def codes(data) -> np.ndarray:
    """The bytes of an array, in its shape (a 4-byte dtype gains a last axis of 4)."""
    size = data.dtype.itemsize
    if isinstance(data, torch.Tensor):
        flat = data.contiguous().reshape(-1).view(torch.uint8).numpy()
    else:
        flat = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    return flat.reshape(*data.shape, size)


def scale_values(scales, recipe: Recipe) -> np.ndarray:
    """float32 scale values, or e8m0fnu codes for mx32 (as element_scales takes them)."""
    if isinstance(scales, torch.Tensor):
        return scales.view(torch.uint8).numpy() if recipe is Recipe.MX32 else scales.numpy()
    return scales.view(np.uint8) if recipe is Recipe.MX32 else scales


def valid(recipe: Recipe, fmt: Fp8Format, op: str, shape) -> bool:
    k = shape[-1] if op == "a" else shape[-2]
    return not (recipe is Recipe.MX32 and (k % 32 or not fmt.spec.ocp))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("recipe", list(Recipe))
def test_round_trip_bound_layout_and_bits(recipe: Recipe, fmt: Fp8Format) -> None:
    for i, (op, shape) in enumerate(SHAPES):
        if not valid(recipe, fmt, op, shape):
            continue
        x = sample(shape, i)
        d_np, s_np = quantize_fp8(x, recipe=recipe, dtype=fmt, operand=op)
        d_t, s_t = quantize_fp8(torch.from_numpy(x), recipe=recipe, dtype=fmt.dtype_name,
                                operand=op)  # fmt: skip
        # dtypes and layouts
        assert d_np.dtype == np.dtype(getattr(ml_dtypes, fmt.dtype_name))
        assert d_t.dtype == getattr(torch, fmt.dtype_name)
        want_scale = "float8_e8m0fnu" if recipe is Recipe.MX32 else "float32"
        assert str(s_np.dtype) == want_scale and str(s_t.dtype) == f"torch.{want_scale}"
        assert d_np.shape == tuple(d_t.shape) == shape
        assert s_np.shape == tuple(s_t.shape) == scale_shape(recipe, op, shape)
        # torch and numpy: the same bits
        np.testing.assert_array_equal(codes(d_np), codes(d_t))
        np.testing.assert_array_equal(codes(s_np), codes(s_t))
        # the bound: half a step of the format at x / scale, plus float32's division rounding
        s = np.broadcast_to(element_scales(recipe, op, scale_values(s_np, recipe), shape), shape)
        back = decode(codes(d_np)[..., 0], fmt) * s
        x64 = x.astype(np.float64)
        y = np.abs(x64 / s)
        step = np.maximum(spacing(y, fmt), spacing(np.minimum(y, fmt.spec.max_finite), fmt))
        bound = s * step / 2 + np.abs(x64) * 2.0**-23
        err = np.abs(back - x64)
        assert (err <= bound).all(), (op, shape, np.argmax(err - bound))
        # the scales use the range: each block's largest element lands near max_finite
        big = np.abs(x64) == np.abs(x64).max(initial=0.0)
        if big.any() and x64[big][0] != 0:
            top = np.abs(decode(codes(d_np)[..., 0], fmt))[big].max()
            lo = fmt.spec.max_finite / (2 if recipe is Recipe.MX32 else 1.0001)
            assert lo <= top <= fmt.spec.max_finite


@pytest.mark.parametrize("recipe", list(Recipe))
def test_scales_are_what_the_recipe_rule_accepts(recipe: Recipe) -> None:
    for m, n, k, g in [(8, 40, 256, None), (3, 300, 96, None), (6, 130, 224, 3), (1, 1, 32, None)]:
        a = sample((m, k), 1)
        b = sample((k, n) if g is None else (g, k, n), 2)
        _, sa = quantize_fp8(a, recipe=recipe)
        _, sb = quantize_fp8(torch.from_numpy(b), recipe=recipe, operand="b")
        st = ScaleType.E8M0FNU if recipe is Recipe.MX32 else ScaleType.FLOAT32
        check_scales(recipe, sa.shape, sb.shape, m=m, n=n, k=k, groups=g)
        got = recipe_of(sa.shape, tuple(sb.shape), m=m, n=n, k=k, groups=g, scale_type=st)
        assert got is recipe or (m, n) == (1, 1)  # one row, one column: tensorwise's shapes


def test_rowwise_is_amax_over_max_finite() -> None:
    """torchao's rowwise scales: amax of each row of A (column of B) / the format's largest."""
    x = np.array([[1.0, -896.0, 3.0], [0.0, 0.0, 0.0], [2.0, 4.0, -1.0]], np.float32)
    d, s = quantize_fp8(x, recipe="rowwise")
    f32 = np.float32
    np.testing.assert_array_equal(s, [[2.0], [np.finfo(f32).tiny], [f32(4) / f32(448)]])
    assert decode(codes(d)[..., 0], Fp8Format.E4M3FN)[0].tolist() == [0.5, -448.0, 1.5]
    assert (codes(d)[1] == 0).all()
    _, sb = quantize_fp8(x, recipe="rowwise", operand="b")
    np.testing.assert_array_equal(sb, [[f32(2) / f32(448), 2.0, f32(3) / f32(448)]])
    _, s32 = quantize_fp8(np.full((1, 32), 500.0, np.float32), recipe="mx32")
    assert s32.view(np.uint8).tolist() == [[128]]  # 500 / 2 = 250 <= 448 < 500


def test_the_data_keeps_the_input_layout() -> None:
    w = torch.from_numpy(sample((96, 256), 3))  # (N, K): nn.Linear's weight
    d, _ = quantize_fp8(w.t(), recipe="block128", operand="b")
    assert d.shape == (256, 96) and d.stride() == w.t().stride()
    f = np.asfortranarray(sample((64, 96), 4))
    dn, _ = quantize_fp8(f, recipe="mx32")
    assert dn.flags.f_contiguous
    np.testing.assert_array_equal(codes(dn), codes(quantize_fp8(f.copy(), recipe="mx32")[0]))


def test_outputs_carry_no_autograd_history() -> None:
    x = torch.from_numpy(sample((4, 64), 7)).requires_grad_()
    for recipe in Recipe:
        d, s = quantize_fp8(x, recipe=recipe)
        assert not d.requires_grad and not s.requires_grad and d.grad_fn is None


def test_no_read_of_tensor_data_on_the_host() -> None:
    """On the meta device any host read of a value fails: the torch path makes none."""
    for recipe in Recipe:
        for op, shape in (("a", (256, 512)), ("b", (4, 512, 384))):
            x = torch.empty(shape, dtype=torch.bfloat16, device="meta")
            d, s = quantize_fp8(x, recipe=recipe, operand=op)
            assert d.device.type == s.device.type == "meta"
            assert tuple(s.shape) == scale_shape(recipe, op, shape)
    with pytest.raises(Exception, match="meta"):  # the checked path does read, and says so
        quantize_fp8(torch.empty((4, 32), device="meta"), check_finite=True)


def test_inputs_of_every_float_type() -> None:
    x = np.clip(sample((4, 64), 5), -6e4, 6e4)  # within float16's range
    want = codes(quantize_fp8(x.astype(np.float16).astype(np.float32))[0])
    np.testing.assert_array_equal(codes(quantize_fp8(x.astype(np.float16))[0]), want)
    np.testing.assert_array_equal(
        codes(quantize_fp8(torch.from_numpy(x).half())[0]), want
    )  # fmt: skip
    bf = x.astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(
        codes(quantize_fp8(bf)[0]), codes(quantize_fp8(torch.from_numpy(x).bfloat16())[0])
    )
    np.testing.assert_array_equal(
        codes(quantize_fp8(x.astype(np.float64))[0]), codes(quantize_fp8(x)[0])
    )


def test_bad_input_names_the_argument() -> None:
    x = sample((4, 64), 6)
    cases = [
        (dict(x=[[1.0]]), TypeError, r"^x: expected a torch tensor or a numpy array, got builtins.list"),
        (dict(x=np.ones((4, 64), np.int32)), TypeError, r"^x: expected floating-point elements .* got int32"),
        (dict(x=torch.ones((4, 64), dtype=torch.int8)), TypeError, r"^x: expected floating-point .* got int8"),
        (dict(x=torch.ones((4, 64), dtype=torch.bool)), TypeError, r"^x: .* got bool"),
        (dict(x=np.ones(8, np.float32)), ValueError, r"^x: expected shape \(M, K\) for operand a, got \(8,\)"),
        (dict(x=np.ones((2, 3, 4), np.float32)), ValueError, r"^x: expected shape \(M, K\) for operand a"),
        (dict(x=np.ones((2, 2, 3, 4), np.float32), operand="b"), ValueError, r"^x: expected shape \(K, N\) or \(G, K, N\)"),
        (dict(recipe="block64"), ValueError, r"^recipe: unknown recipe 'block64'"),
        (dict(dtype="e4m3"), ValueError, r"^dtype: unknown 8-bit format 'e4m3'"),
        (dict(dtype=torch.float8_e8m0fnu), ValueError, r"^dtype: e8m0fnu is a scale format"),
        (dict(dtype="e4m3fnuz", recipe="mx32"), ValueError, r"^dtype: mx32 takes the OCP element formats"),
        (dict(x=np.ones((4, 48), np.float32), recipe="mx32"), ValueError, r"^x: mx32 scales blocks of 32 along K: K = 48"),
        (dict(x=np.ones((48, 4), np.float32), recipe="mx32", operand="b"), ValueError, r"^x: mx32 .* K = 48"),
        (dict(operand="c"), ValueError, r"^operand: expected 'a' or 'b', got 'c'"),
        (dict(check_finite=1), TypeError, r"^check_finite: expected a bool, got int"),
    ]  # fmt: skip
    for kw, exc, pattern in cases:
        kw = {"x": x, **kw}
        with pytest.raises(exc, match=pattern):
            quantize_fp8(kw.pop("x"), **kw)
    bad = x.copy()
    bad[1, 2] = np.inf
    for arr in (bad, torch.from_numpy(bad)):
        with pytest.raises(ValueError, match=r"^x: holds inf or NaN \(check_finite=True\)"):
            quantize_fp8(arr, check_finite=True)
    # unchecked, the block with the inf gets a non-finite scale; the other rows are unharmed
    _, s = quantize_fp8(bad)
    assert not np.isfinite(s[1, 0]) and np.isfinite(np.delete(s, 1, axis=0)).all()
    for op in (Operand.A,):
        assert scale_shape("rowwise", op, bad.shape) == s.shape
