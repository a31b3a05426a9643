"""MXFP8 (the mx32 recipe) through ``gemm_opt.matmul`` / ``grouped_matmul`` on the model.

e8m0 scales of shapes (M, K/32) and (K/32, N) select the recipe (the one rule,
:func:`gemm_opt.core.scaling.recipe_of`, read with the scales' dtype); the
schedule kernel multiplies each K block by ``tile.scaled_wmma``. C equals the
float64 product of the decoded operands times their scales within the
accumulation bound, the scales are read per 32 elements of K and per row /
column, a CUDA call is refused (Hopper has no block-scaled MMA), bad scales
name the argument, and the API's kernel lowers to the block-scaled
instruction on gfx1250 and gfx950.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gemm_opt
from gemm_opt.core.fp8 import Fp8Format, encode
from gemm_opt.core.scaling import scaled_reference

torch = pytest.importorskip("torch")
ml_dtypes = pytest.importorskip("ml_dtypes")

M, N, K = 70, 90, 160  # K: one whole 128-deep MMA block and a partial one (32)
E8M0 = ml_dtypes.float8_e8m0fnu


def _dtype(fmt):
    return ml_dtypes.float8_e4m3fn if fmt is Fp8Format.E4M3FN else ml_dtypes.float8_e5m2


def _operands(rng, fmt, m=M, n=N, k=K, groups=None):
    """Random codes for A (m, k) and B (k, n) (grouped: (G, k, n)) and random e8m0 scales
    (codes 118..136: 2^-9 .. 2^9), so that each 32-element block, row and column has its own."""
    a = encode(rng.standard_normal((m, k)) * 2, fmt)
    lead = () if groups is None else (groups,)
    w = encode(rng.standard_normal((*lead, n, k)) * 2, fmt)  # B is w's transpose, K-major
    sa = rng.integers(118, 137, (m, k // 32), dtype=np.uint8)
    sb = rng.integers(118, 137, (*lead, k // 32, n), dtype=np.uint8)
    return a, w, sa, sb


def _bound(ref, mag, k, out_dtype):
    """Each 128-deep MMA block's exact sum rounded once to fp32 and added into the fp32
    accumulator (``ceil(K/128)`` roundings of at most ``2^-23 S`` together, S the sum of
    the magnitudes times the scales), then C's rounding (``u``: 2^-8 bf16, 2^-24 fp32)."""
    acc = math.ceil(k / 128) * 2.0**-23 * mag
    u = 2.0**-8 if out_dtype == "bfloat16" else 2.0**-24
    return acc + u * (np.abs(ref) + acc)


@pytest.mark.parametrize("fmt", [Fp8Format.E4M3FN, Fp8Format.E5M2])
@pytest.mark.parametrize("schedule", ["data-parallel", "persistent"])
@pytest.mark.parametrize("out_dtype", ["bfloat16", "float32"])
def test_mx32_equals_the_float64_reference(fmt, schedule, out_dtype):
    rng = np.random.default_rng(7)
    a, w, sa, sb = _operands(rng, fmt)
    c = gemm_opt.matmul(
        a.view(_dtype(fmt)), w.view(_dtype(fmt)).T, scale_a=sa.view(E8M0), scale_b=sb.view(E8M0),
        schedule=schedule, out_dtype=out_dtype,
    )  # fmt: skip
    assert c.shape == (M, N) and str(c.dtype) == out_dtype
    ref = scaled_reference(a, w.T, fmt, sa, sb, "mx32")
    mag = scaled_reference(a & 0x7F, w.T & 0x7F, fmt, sa, sb, "mx32")
    err = np.abs(c.astype(np.float64) - ref)
    assert np.all(err <= _bound(ref, mag, K, out_dtype))
    # torch CPU tensors on the model give the same bits
    tdt = getattr(torch, _dtype(fmt).__name__)
    tc = gemm_opt.matmul(
        torch.from_numpy(a).view(tdt), torch.from_numpy(w).view(tdt).t(),
        scale_a=torch.from_numpy(sa).view(torch.float8_e8m0fnu),
        scale_b=torch.from_numpy(sb).view(torch.float8_e8m0fnu),
        schedule=schedule, out_dtype=getattr(torch, out_dtype),
    )  # fmt: skip
    assert np.array_equal(tc.float().numpy(), c.astype(np.float32))


@settings(max_examples=8, deadline=None)
@given(
    m=st.integers(1, 100),
    n=st.integers(1, 100),
    kb=st.integers(1, 9),
    fmt=st.sampled_from([Fp8Format.E4M3FN, Fp8Format.E5M2]),
    seed=st.integers(0, 2**16),
)
def test_mx32_on_any_shape(m, n, kb, fmt, seed):
    """Any M and N, K any multiple of 32 (1 to 9 scale blocks: whole and partial MMA blocks)."""
    k = 32 * kb
    rng = np.random.default_rng(seed)
    a, w, sa, sb = _operands(rng, fmt, m=m, n=n, k=k)
    c = gemm_opt.matmul(
        a.view(_dtype(fmt)), w.view(_dtype(fmt)).T, scale_a=sa.view(E8M0), scale_b=sb.view(E8M0),
        schedule="persistent", num_programs=2, out_dtype="float32",
    )  # fmt: skip
    ref = scaled_reference(a, w.T, fmt, sa, sb, "mx32")
    mag = scaled_reference(a & 0x7F, w.T & 0x7F, fmt, sa, sb, "mx32")
    assert np.all(np.abs(c - ref) <= _bound(ref, mag, k, "float32"))


def test_each_scale_applies_to_its_32_elements_row_and_column():
    """Integer operands and power-of-two scales: C exact, so a scale from the wrong K
    block, row or column (or B's scales read untransposed) fails."""
    rng = np.random.default_rng(3)
    fmt = Fp8Format.E4M3FN
    a = encode(rng.integers(-4, 5, (M, K)).astype(np.float64), fmt)
    w = encode(rng.integers(-4, 5, (N, K)).astype(np.float64), fmt)
    sa = rng.integers(124, 131, (M, K // 32), dtype=np.uint8)
    sb = rng.integers(124, 131, (K // 32, N), dtype=np.uint8)
    c = gemm_opt.matmul(
        a.view(_dtype(fmt)), w.view(_dtype(fmt)).T, scale_a=sa.view(E8M0), scale_b=sb.view(E8M0),
        out_dtype="float32",
    )  # fmt: skip
    np.testing.assert_array_equal(c, scaled_reference(a, w.T, fmt, sa, sb, "mx32"))


def test_scale_b_as_the_transposed_view_of_an_n_major_tensor():
    """``tile.scaled_wmma`` reads B's scales (N, K/32): such a tensor's ``.t()`` is taken
    as it lies and gives the same C as the contiguous (K/32, N) one."""
    rng = np.random.default_rng(4)
    a, w, sa, sb = _operands(rng, Fp8Format.E4M3FN)
    at, wt = (torch.from_numpy(x).view(torch.float8_e4m3fn) for x in (a, w))
    sat = torch.from_numpy(sa).view(torch.float8_e8m0fnu)
    sb_nk = torch.from_numpy(np.ascontiguousarray(sb.T)).view(torch.float8_e8m0fnu)
    one = gemm_opt.matmul(at, wt.t(), scale_a=sat, scale_b=sb_nk.t(), out_dtype=torch.float32)
    two = gemm_opt.matmul(
        at, wt.t(), scale_a=sat, scale_b=sb_nk.t().contiguous(), out_dtype=torch.float32
    )
    assert torch.equal(one, two)


def test_quantize_then_matmul_is_within_e4m3_of_the_exact_product():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((M, K)).astype(np.float32)
    w = (rng.standard_normal((N, K)) * np.exp2(rng.integers(-6, 7, (N, 1)))).astype(np.float32)
    a8, sa = gemm_opt.quantize_fp8(x, recipe="mx32")
    b8, sb = gemm_opt.quantize_fp8(np.ascontiguousarray(w).T, recipe="mx32", operand="b")
    assert sa.dtype == E8M0 and sa.shape == (M, K // 32) and sb.shape == (K // 32, N)
    c = gemm_opt.matmul(a8, b8, scale_a=sa, scale_b=sb, out_dtype="float32")
    exact = x.astype(np.float64) @ w.astype(np.float64).T
    mag = np.abs(x).astype(np.float64) @ np.abs(w).astype(np.float64).T
    assert np.all(np.abs(c - exact) <= 2.0**-3 * mag)  # half a step of 3 mantissa bits, twice


def test_grouped_mx32_with_an_empty_group():
    rng = np.random.default_rng(6)
    lens = [30, 0, 41, 25]
    s_rows, g, fmt = sum(lens), len(lens), Fp8Format.E4M3FN
    a, w, sa, sb = _operands(rng, fmt, m=s_rows, groups=g)
    c = gemm_opt.grouped_matmul(
        a.view(_dtype(fmt)), w.view(_dtype(fmt)), lens, trans_b=True,
        scale_a=sa.view(E8M0), scale_b=sb.view(E8M0), out_dtype="float32",
    )  # fmt: skip
    bt = np.ascontiguousarray(w.transpose(0, 2, 1))  # (G, K, N)
    ref = scaled_reference(a, bt, fmt, sa, sb, "mx32", group_lens=lens)
    mag = scaled_reference(a & 0x7F, bt & 0x7F, fmt, sa, sb, "mx32", group_lens=lens)
    assert np.all(np.abs(c - ref) <= _bound(ref, mag, K, "float32"))


def _call(**over):
    rng = np.random.default_rng(0)
    a, w, sa, sb = _operands(rng, Fp8Format.E4M3FN, m=16, n=16, k=64)
    kw = dict(
        a=a.view(ml_dtypes.float8_e4m3fn), b=w.view(ml_dtypes.float8_e4m3fn).T,
        scale_a=sa.view(E8M0), scale_b=sb.view(E8M0),
    ) | over  # fmt: skip
    return gemm_opt.matmul(kw.pop("a"), kw.pop("b"), **kw)


@pytest.mark.parametrize(
    "over, error, match",
    [
        (dict(scale_b=np.ones((2, 16), np.float32)), TypeError, "scale_b: expected float8_e8m0fnu"),
        (dict(scale_a=np.ones((16, 4), np.uint8).view(E8M0)), ValueError,
         r"scale_a: shape \(16, 4\) fits no e8m0fnu recipe .* \(M, K/32\) = \(16, 2\)"),
        (dict(scale_b=np.ones((16, 2), np.uint8).view(E8M0)), ValueError,
         r"scale_b: shape \(16, 2\) does not go with .* \(K/32, N\) = \(2, 16\)"),
        (dict(scale_a=np.ones((16, 2), np.float16)), TypeError, "scale_a: expected float32"),
        (dict(config=dict(block_m=64, block_n=64, block_k=64, group_m=4, num_warps=4)),
         ValueError, "config: block_k must be a multiple of 128 for mx32"),
    ],
)  # fmt: skip
def test_refusals_name_the_argument(over, error, match):
    with pytest.raises(error, match=match):
        _call(**over)


def test_k_off_the_scale_block_names_scale_a():
    rng = np.random.default_rng(0)
    a = encode(rng.standard_normal((16, 48)), Fp8Format.E4M3FN).view(ml_dtypes.float8_e4m3fn)
    w = encode(rng.standard_normal((16, 48)), Fp8Format.E4M3FN).view(ml_dtypes.float8_e4m3fn)
    s = np.full((16, 1), 127, np.uint8).view(E8M0)
    with pytest.raises(ValueError, match=r"scale_a: .*K must be a multiple of 32"):
        gemm_opt.matmul(a, w.T, scale_a=s, scale_b=s.T)


def test_a_cuda_call_is_refused_hopper_has_no_block_scaled_mma():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        f8, e8 = torch.float8_e4m3fn, torch.float8_e8m0fnu
        a = torch.empty(64, 128, dtype=f8, device="cuda")
        b = torch.empty(96, 128, dtype=f8, device="cuda").t()
        sa = torch.empty(64, 4, dtype=e8, device="cuda")
        sb = torch.empty(4, 96, dtype=e8, device="cuda")
        with pytest.raises(ValueError, match=r"scale_a: .*mx32 .*cuda:90 \(Hopper\) has none"):
            gemm_opt.matmul(a, b, scale_a=sa, scale_b=sb)
        g = torch.empty(2, 96, 128, dtype=f8, device="cuda")
        with pytest.raises(ValueError, match=r"scale_a: .*block-scaled MMA"):
            gemm_opt.grouped_matmul(
                a, g, torch.tensor([30, 34]), trans_b=True, scale_a=sa,
                scale_b=torch.empty(2, 4, 96, dtype=e8, device="cuda"),
            )  # fmt: skip


def test_kernel_builder_rules():
    from gemm_opt.kernels.schedule_gemm import build_gemm_module

    kw = dict(dtype="f8e4m3", block_m=64, block_n=64, block_k=128, num_warps=4, trans_b=True,
              scale="mx32")  # fmt: skip
    with pytest.raises(ValueError, match="target 'cuda:90' has no block-scaled MMA"):
        build_gemm_module(target="cuda:90", **kw)
    with pytest.raises(ValueError, match="mx32' has the blocks body"):
        build_gemm_module(body="pipelined", **kw)
    with pytest.raises(ValueError, match="block_k must be a multiple of 128 for scale 'mx32'"):
        build_gemm_module(**(kw | dict(block_k=64)))
    with pytest.raises(ValueError, match="imprecise_acc is for Hopper"):
        build_gemm_module(imprecise_acc=128, **kw)


@pytest.mark.parametrize(
    "target, instr",
    [("gfx1250", "v_wmma_scale_f32_16x16x128_f8f6f4"), ("gfx950", "v_mfma_scale_f32_32x32x64")],
)
def test_the_api_kernel_lowers_to_the_block_scaled_instruction(target, instr):
    from gemm_opt.kernels.schedule_gemm import build_gemm_module
    from gemm_opt.lowering.compile import compile_tile_module
    from gemm_opt.runtime.scaled import MODEL_MX32_CONFIG as cfg

    module = build_gemm_module(
        dtype="f8e4m3", block_m=cfg.block_m, block_n=cfg.block_n, block_k=cfg.block_k,
        num_warps=cfg.num_warps, trans_b=True, scale="mx32", target=target,
    )  # fmt: skip
    asm = compile_tile_module(module, target).asm["amdgcn"]
    assert instr in asm
    scratch = [
        ln.split("ScratchSize:")[1].strip() for ln in asm.splitlines() if "ScratchSize:" in ln
    ]
    assert scratch and all(v == "0" for v in scratch)  # no spills
