"""The scaled-GEMM recipe rule and the float64 reference (gemm_opt.core.scaling)."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gemm_opt.core.fp8 import Fp8Format, decode, encode
from gemm_opt.core.scaling import (
    Operand,
    Recipe,
    ScaleType,
    accepted_scale_shapes,
    check_scale_values,
    check_scales,
    element_scales,
    parse_recipe,
    recipe_of,
    scale_shape,
    scale_type,
    scaled_reference,
)

FLOAT_RECIPES = [Recipe.TENSORWISE, Recipe.ROWWISE, Recipe.BLOCK128]
#: Sizes at and around the block edges.
EDGES = [1, 2, 31, 32, 33, 64, 127, 128, 129, 255, 256, 257, 384]


def expected_shapes(r: Recipe, m: int, n: int, k: int, g: int | None):
    """The table of the docs, written out independently: (accepted A shapes, accepted B shapes)."""
    lead = () if g is None else (g,)
    if r is Recipe.TENSORWISE:
        return [(), (1, 1)], [(), (1, 1)]
    if r is Recipe.ROWWISE:
        return [(m, 1)], [(*lead, 1, n)]
    if r is Recipe.BLOCK128:
        return [(m, -(-k // 128))], [(*lead, -(-k // 128), -(-n // 128))]
    if k % 32:
        return [], []
    return [(m, k // 32)], [(*lead, k // 32, n)]


def stype(r: Recipe) -> ScaleType:
    return ScaleType.E8M0FNU if r is Recipe.MX32 else ScaleType.FLOAT32


def find(sa, sb, m, n, k, g, st_):
    """recipe_of, or the argument its ValueError names."""
    try:
        return recipe_of(sa, sb, m=m, n=n, k=k, groups=g, scale_type=st_)
    except ValueError as e:
        return str(e).split(":")[0]


dims = st.one_of(st.sampled_from(EDGES), st.integers(0, 600))


@settings(max_examples=300, deadline=None)
@given(dims, dims, dims, st.one_of(st.none(), st.integers(0, 5)))
def test_every_recipe_takes_its_shapes(m: int, n: int, k: int, g: int | None) -> None:
    a_shape, b_shape = (m, k), ((k, n) if g is None else (g, k, n))
    for r in Recipe:
        want_a, want_b = expected_shapes(r, m, n, k, g)
        assert list(accepted_scale_shapes(r, Operand.A, a_shape)) == want_a
        assert list(accepted_scale_shapes(r, Operand.B, b_shape)) == want_b
        for sa in want_a:
            for sb in want_b:
                got = recipe_of(sa, sb, m=m, n=n, k=k, groups=g, scale_type=stype(r))
                check_scales(got, sa, sb, m=m, n=n, k=k, groups=g)
                # A simpler recipe may share the shapes only where it means the same scales.
                assert FLOAT_RECIPES.index(got) <= FLOAT_RECIPES.index(r) if got != r else True
                if got != r:
                    rng = np.random.default_rng(m * 7 + n * 5 + k)
                    va = rng.uniform(1, 2, sa).astype(np.float32)
                    vb = rng.uniform(1, 2, sb).astype(np.float32)
                    for op, v, shape in ((Operand.A, va, a_shape), (Operand.B, vb, b_shape)):
                        np.testing.assert_array_equal(
                            np.broadcast_to(element_scales(r, op, v, shape), shape),
                            np.broadcast_to(element_scales(got, op, v, shape), shape),
                        )
        if want_a and r is not Recipe.TENSORWISE:
            assert scale_shape(r, Operand.A, a_shape) == want_a[0]
            assert scale_shape(r, Operand.B, b_shape) == want_b[0]


@settings(max_examples=200, deadline=None)
@given(dims, dims, dims, st.one_of(st.none(), st.integers(1, 4)), st.sampled_from(list(Recipe)))
def test_off_by_one_shapes_are_refused(m, n, k, g, r) -> None:
    want_a, want_b = expected_shapes(r, m, n, k, g)
    if not want_a or r is Recipe.TENSORWISE:
        return
    sa, sb = want_a[0], want_b[0]
    for which, base in (("scale_a", sa), ("scale_b", sb)):
        for axis in range(len(base)):
            for delta in (-1, 1):
                bad = list(base)
                bad[axis] += delta
                if bad[axis] < 0:
                    continue
                args = (tuple(bad), sb) if which == "scale_a" else (sa, tuple(bad))
                got = find(*args, m, n, k, g, stype(r))
                if isinstance(got, Recipe):  # another recipe's shapes: it must accept both
                    check_scales(got, *args, m=m, n=n, k=k, groups=g)
                    assert got is not r
                else:
                    assert got in ("scale_a", "scale_b")
                    if which == "scale_b":
                        assert got == "scale_b"
        # an extra or a missing dimension
        for bad in ((*base, 1), base[1:]):
            args = (bad, sb) if which == "scale_a" else (sa, bad)
            got = find(*args, m, n, k, g, stype(r))
            if isinstance(got, Recipe):
                check_scales(got, *args, m=m, n=n, k=k, groups=g)
            else:
                assert got in ("scale_a", "scale_b")


def test_errors_name_the_argument_and_the_shapes() -> None:
    with pytest.raises(ValueError) as e:
        recipe_of((64, 2), (1, 256), m=64, n=256, k=512)
    assert str(e.value) == (
        "scale_a: shape (64, 2) fits no float32 recipe for A of shape (64, 512): expected "
        "() or (1, 1) (tensorwise); (M, 1) = (64, 1) (rowwise); "
        "(M, ceil(K/128)) = (64, 4) (block128)"
    )
    with pytest.raises(ValueError) as e:
        recipe_of((64, 1), (4, 256), m=64, n=256, k=512, groups=4)
    assert str(e.value) == (
        "scale_b: shape (4, 256) does not go with scale_a of shape (64, 1) for B of shape "
        "(4, 512, 256): expected (G, 1, N) = (4, 1, 256) (rowwise)"
    )
    with pytest.raises(ValueError, match=r"^scale_b: .* expected \(G, ceil\(K/128\), "):
        recipe_of((64, 2), (4, 2, 3), m=64, n=256, k=200, groups=4)
    with pytest.raises(ValueError, match=r"\(M, K/32\) \(mx32: K must be a multiple of 32\)"):
        recipe_of((8, 3), (3, 16), m=8, n=16, k=100, scale_type="e8m0fnu")
    with pytest.raises(ValueError, match=r"^k: expected a non-negative int, got -1"):
        recipe_of((), (), m=1, n=1, k=-1)
    with pytest.raises(ValueError, match=r"^recipe: unknown recipe 'blockwise' \(known: "):
        parse_recipe("blockwise")
    with pytest.raises(
        ValueError,
        match=r"^a: mx32 scales blocks of 32 along K, so K must be a multiple of 32, got K = 40",
    ):
        scale_shape("mx32", "a", (4, 40))
    with pytest.raises(ValueError, match=r"^b: expected shape \(K, N\) or \(G, K, N\)"):
        scale_shape("rowwise", "b", (4,))


def test_k_not_a_multiple_of_128_is_allowed_for_block128() -> None:
    assert recipe_of((8, 2), (2, 3), m=8, n=300, k=200) is Recipe.BLOCK128
    assert recipe_of((8, 2), (5, 2, 3), m=8, n=300, k=200, groups=5) is Recipe.BLOCK128
    assert recipe_of((8, 7), (7, 300), m=8, n=300, k=224, scale_type="e8m0fnu") is Recipe.MX32


def test_scale_types() -> None:
    for d in (torch.float32, np.float32, np.dtype(np.float32), "float32"):
        assert scale_type(d, "scale_a") is ScaleType.FLOAT32
    for d in (torch.float8_e8m0fnu, np.dtype(ml_dtypes.float8_e8m0fnu), "float8_e8m0fnu"):
        assert scale_type(d, "scale_b") is ScaleType.E8M0FNU
    for d in (torch.float64, torch.bfloat16, np.int32, torch.float8_e4m3fn):
        with pytest.raises(TypeError, match=r"^scale_b: expected float32 scales \(float8_e8m0fnu"):
            scale_type(d, "scale_b")


# ---- the reference ---------------------------------------------------------------------


def loop_reference(a, b, fa, fb, sa, sb, r, lens=None):
    """Each element's scale found by index arithmetic, independently of element_scales."""
    A, B = decode(a, fa), decode(b, fb)
    m, k = A.shape
    n = B.shape[-1]
    kk, nn, mm = np.arange(k), np.arange(n), np.arange(m)
    if r is Recipe.MX32:
        sa, sb = decode(sa, Fp8Format.E8M0FNU), decode(sb, Fp8Format.E8M0FNU)
    sa, sb = np.asarray(sa, np.float64), np.asarray(sb, np.float64)
    Bs = B[None] if lens is None else B
    sbs = sb[None] if lens is None and sb.ndim == 2 else sb
    if r is Recipe.TENSORWISE:
        Ae, Be = A * sa.reshape(()), Bs * sb.reshape(())
    elif r is Recipe.ROWWISE:
        Ae, Be = A * sa[mm, 0][:, None], Bs * sbs[:, 0, nn][:, None, :]
    elif r is Recipe.BLOCK128:
        Ae = A * sa[mm[:, None], kk[None, :] // 128]
        Be = Bs * sbs[:, kk[:, None] // 128, nn[None, :] // 128]
    else:
        Ae = A * sa[mm[:, None], kk[None, :] // 32]
        Be = Bs * sbs[:, kk[:, None] // 32, nn[None, :]]
    group = np.zeros(m, int) if lens is None else np.repeat(np.arange(len(lens)), lens)
    return np.einsum("ik,ikj->ij", Ae, Be[group])


def random_codes(rng, shape, fmt):
    """Codes of finite values of ``fmt``."""
    c = rng.integers(0, 256, shape, dtype=np.uint8)
    return np.where(np.isfinite(decode(c, fmt)), c, 0x38).astype(np.uint8)


def random_scales(rng, r, shape):
    if r is Recipe.MX32:
        return rng.integers(120, 135, shape, dtype=np.uint8)
    return rng.uniform(0.01, 4, shape).astype(np.float32)


CASES = [  # (m, n, k, group_lens)
    (5, 7, 64, None),
    (3, 260, 320, None),
    (9, 130, 224, [4, 0, 5]),
    (6, 40, 96, [0, 6]),
    (0, 3, 128, [0, 0]),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("r", list(Recipe))
def test_reference_equals_the_index_arithmetic(case, r) -> None:
    m, n, k, lens = case
    rng = np.random.default_rng(m * 1000 + n + k)
    fa, fb = Fp8Format.E4M3FN, Fp8Format.E5M2
    a = random_codes(rng, (m, k), fa)
    bshape = (k, n) if lens is None else (len(lens), k, n)
    b = random_codes(rng, bshape, fb)
    sa = random_scales(rng, r, scale_shape(r, "a", (m, k)))
    sb = random_scales(rng, r, scale_shape(r, "b", bshape))
    got = scaled_reference(a, b, (fa, fb), sa, sb, r, group_lens=lens)
    want = loop_reference(a, b, fa, fb, sa, sb, r, lens)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    assert got.shape == (m, n) and got.dtype == np.float64


def test_reference_of_tensorwise_is_the_scaled_product() -> None:
    """A direct check with hand values: the scales multiply the decoded product."""
    fmt = Fp8Format.E4M3FN
    a = encode(np.array([[1.0, 2.0], [0.5, -1.5]]), fmt)
    b = encode(np.array([[3.0, 0.0], [1.0, 4.0]]), fmt)
    got = scaled_reference(a, b, fmt, np.float32(2.0), np.array([[0.25]], np.float32), "tensorwise")
    np.testing.assert_array_equal(got, 0.5 * np.array([[5.0, 8.0], [0.0, -6.0]]))
    # ml_dtypes arrays are read as their codes
    got2 = scaled_reference(
        a.view(ml_dtypes.float8_e4m3fn), b, fmt, np.float32(2.0), np.float32(0.25), "tensorwise"
    )
    np.testing.assert_array_equal(got, got2)


def test_reference_refuses_bad_input() -> None:
    fmt = Fp8Format.E4M3FN
    a, b = np.zeros((4, 64), np.uint8), np.zeros((64, 8), np.uint8)
    one = np.ones((1, 1), np.float32)
    with pytest.raises(ValueError, match=r"^scale_a: expected \(M, 1\) = \(4, 1\) \(rowwise\)"):
        scaled_reference(a, b, fmt, one, np.ones((1, 8), np.float32), "rowwise")
    with pytest.raises(TypeError, match=r"^scale_a: mx32 takes e8m0fnu codes, got dtype float32"):
        scaled_reference(a, b, fmt, np.ones((4, 2), np.float32), np.ones((2, 8)), "mx32")
    with pytest.raises(TypeError, match=r"^scale_b: rowwise takes float scales, got dtype uint8"):
        scaled_reference(a, b, fmt, np.ones((4, 1)), np.ones((1, 8), np.uint8), "rowwise")
    with pytest.raises(ValueError, match=r"^fmt: mx32 takes the OCP element formats"):
        scaled_reference(a, b, "e4m3fnuz", one, one, "mx32")
    with pytest.raises(ValueError, match=r"^fmt: e8m0fnu is a scale format"):
        scaled_reference(a, b, "e8m0fnu", one, one, "tensorwise")
    with pytest.raises(ValueError, match=r"^b_codes: expected shape \(G, K, N\) with K = 64"):
        scaled_reference(a, b, fmt, one, one, "tensorwise", group_lens=[4])
    with pytest.raises(ValueError, match=r"^group_lens: expected 2 lengths >= 0 summing to 4"):
        scaled_reference(a, np.zeros((2, 64, 8), np.uint8), fmt, one, one, "tensorwise",
                         group_lens=[1, 2])  # fmt: skip


def test_block_counts() -> None:
    for k in EDGES:
        assert scale_shape("block128", "a", (3, k)) == (3, math.ceil(k / 128))


def test_scale_values_must_be_finite_and_positive() -> None:
    good = np.array([[0.5], [2.0**-126], [3e38]], np.float32)
    check_scale_values("rowwise", good, "scale_a")
    check_scale_values("tensorwise", np.float32(1.0), "scale_b")
    for bad, shown in ((0.0, "0.0"), (-1.0, "-1.0"), (np.inf, "inf"), (np.nan, "nan")):
        s = good.copy()
        s[1, 0] = bad
        with pytest.raises(
            ValueError, match=rf"^scale_a: the scale at \(1, 0\) \({shown}\) is not"
        ):
            check_scale_values("block128", s, "scale_a")
    codes = np.array([[0, 127], [254, 0xFF]], np.uint8)
    with pytest.raises(
        ValueError, match=r"^scale_b: the scale at \(1, 1\) \(0xFF\) is the e8m0fnu NaN"
    ):
        check_scale_values("mx32", codes.view(ml_dtypes.float8_e8m0fnu), "scale_b")
    check_scale_values("mx32", codes[:, :1], "scale_b")
