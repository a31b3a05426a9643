"""The FP8 schedule kernels: scaled dense GEMMs with B stored (N, K).

The model runs each built kernel (data-parallel and persistent, tensorwise and
rowwise scales, e4m3 and e5m2, bf16 and fp32 C, ragged M, N and K) and its C
must equal :func:`gemm_opt.core.scaling.scaled_reference` within the bound of
:func:`_bound`; the refusals name what is built; the cuda:90 kernel runs
wgmma on e4m3 operands.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gemm_opt.core import schedules as S
from gemm_opt.core.fp8 import Fp8Format, decode, encode
from gemm_opt.core.modes import Kind, Scale
from gemm_opt.core.scaling import scaled_reference
from gemm_opt.kernels import cache
from gemm_opt.kernels.schedule_gemm import build_gemm_module

FORMATS = {"f8e4m3": Fp8Format.E4M3FN, "f8e5m2": Fp8Format.E5M2}
BLOCK = 64
#: The kinds whose tiles this file's launcher runs (no workspace); the split
#: kinds are test_fp8_schedules.py's.
WHOLE_TILE_KINDS = (Kind.DATA_PARALLEL, Kind.PERSISTENT)


def _spec(kind="data-parallel", scale="rowwise", dtype="f8e4m3", out_dtype=None, **kw):
    return S.KernelSpec(
        kind, None, "none", dtype, BLOCK, BLOCK, 64, 4, 4, None,
        trans_b=True, scale=scale, out_dtype=out_dtype, **kw,
    )  # fmt: skip


def _operands(rng, m, n, k, dtype, scale):
    fmt = FORMATS[dtype]
    a = encode(rng.standard_normal((m, k)) * 4, fmt)
    b = encode(rng.standard_normal((n, k)) * 4, fmt)  # stored (N, K)
    rows, cols = (m, n) if scale == "rowwise" else (1, 1)
    sa = rng.uniform(2.0**-6, 4.0, rows).astype(np.float32)
    sb = rng.uniform(2.0**-6, 4.0, cols).astype(np.float32)
    return a, b, sa, sb


def _run(spec, a, b, sa, sb, programs=3):
    """C of ``spec``'s kernel on the model (float32 storage; bf16 C holds bf16 values)."""
    m, k = a.shape
    n = b.shape[0]
    c = np.full((m, n), np.nan, dtype=np.float32)
    tiles = S.cdiv(m, BLOCK) * S.cdiv(n, BLOCK)
    grid = tiles if spec.kind == "data-parallel" else min(programs, tiles)
    values = dict(a=a.reshape(-1), b=b.reshape(-1), c=c, M=m, N=n, K=k, lda=k, ldb=k, ldc=n)
    values |= dict(scale_a=sa, scale_b=sb)
    cache.run_on_model(spec, values, grid=grid, num_resident=grid, seed=None)
    return c


def _reference(a, b, sa, sb, dtype, scale):
    fmt = FORMATS[dtype]
    if scale == "rowwise":
        sa2, sb2 = sa.reshape(-1, 1), sb.reshape(1, -1)
    else:
        sa2, sb2 = sa.reshape(()), sb.reshape(())
    return scaled_reference(a, b.T, fmt, sa2, sb2, scale)


def _bound(a, b, sa, sb, dtype, out_dtype, scale):
    """|C - reference| the kernel may show: the fp32 accumulation over K and the
    two scale products, at most (K + 2) fp32 unit roundoffs (2^-24) of
    sum |a_k b_k| sa sb (taken twice for slack), then C's rounding, one unit
    roundoff of C (bf16: 2^-8)."""
    fmt = FORMATS[dtype]
    absprod = _reference(
        encode(np.abs(decode(a, fmt)), fmt), encode(np.abs(decode(b, fmt)), fmt),
        sa, sb, dtype, scale,
    )  # fmt: skip
    k = a.shape[1]
    store = 2.0**-8 if out_dtype in (None, "bf16") else 2.0**-24
    fp32 = (k + 2) * 2.0**-23 * absprod
    return fp32 + store * (np.abs(_reference(a, b, sa, sb, dtype, scale)) + fp32)


@pytest.mark.parametrize("kind", WHOLE_TILE_KINDS)
@pytest.mark.parametrize("scale", ["tensorwise", "rowwise"])
@pytest.mark.parametrize("dtype", sorted(S.FP8_DTYPES))
@pytest.mark.parametrize("out_dtype", [None, "fp32"])
def test_model_equals_the_scaled_reference(kind, scale, dtype, out_dtype):
    # Ragged M and N, K not a multiple of block_k: the masks and zero fill.
    m, n, k = 70, 90, 150
    rng = np.random.default_rng(len(kind) + len(scale) + len(dtype))
    a, b, sa, sb = _operands(rng, m, n, k, dtype, scale)
    c = _run(_spec(kind, scale, dtype, out_dtype), a, b, sa, sb)
    ref = _reference(a, b, sa, sb, dtype, scale)
    err = np.abs(c - ref)
    assert np.all(err <= _bound(a, b, sa, sb, dtype, out_dtype, scale)), err.max()
    if out_dtype is None:  # C holds bf16 values
        assert np.array_equal(c.view(np.uint32) & 0xFFFF, np.zeros_like(c.view(np.uint32)))


@settings(max_examples=8, deadline=None)
@given(
    m=st.integers(1, 140),
    n=st.integers(1, 140),
    k=st.integers(1, 200),
    scale=st.sampled_from(["tensorwise", "rowwise"]),
    seed=st.integers(0, 2**16),
)
def test_model_on_any_shape(m, n, k, scale, seed):
    rng = np.random.default_rng(seed)
    a, b, sa, sb = _operands(rng, m, n, k, "f8e4m3", scale)
    c = _run(_spec("persistent", scale), a, b, sa, sb, programs=2)
    ref = _reference(a, b, sa, sb, "f8e4m3", scale)
    assert np.all(np.abs(c - ref) <= _bound(a, b, sa, sb, "f8e4m3", None, scale))


def test_scales_apply_per_row_and_column():
    # Exact sums (small integers), power-of-two scales: C is the reference bit for bit,
    # so a scale read from the wrong row or column cannot pass.
    m, n, k = 70, 66, 64
    rng = np.random.default_rng(1)
    fmt = Fp8Format.E4M3FN
    a = encode(rng.integers(-3, 4, (m, k)).astype(np.float64), fmt)
    b = encode(rng.integers(-3, 4, (n, k)).astype(np.float64), fmt)
    sa = (2.0 ** rng.integers(-4, 4, m)).astype(np.float32)
    sb = (2.0 ** rng.integers(-4, 4, n)).astype(np.float32)
    c = _run(_spec("data-parallel", "rowwise", out_dtype="fp32"), a, b, sa, sb)
    assert np.array_equal(c, _reference(a, b, sa, sb, "f8e4m3", "rowwise"))


def test_spec_names_and_arguments():
    spec = _spec("persistent", "tensorwise")
    assert spec.name == "gemm_persistent_tb_f8e4m3_tensorwise_64x64x64_g4_w4"
    assert spec.out_dtype == "bf16" and spec.scale == Scale.TENSORWISE
    assert spec.arg_names[-2:] == S.SCALE_ARGS
    assert _spec(out_dtype="fp32").name.endswith("f8e4m3_rowwise_of32_64x64x64_g4_w4")
    assert "scale_a" not in _spec(scale="none").arg_names


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        (dict(grouped="m", kind="data-parallel"), "kind 'data-parallel' has no grouped FP8 "
         "kernel; built: persistent"),
        (dict(trans_b=False), "K-major"),
        (dict(trans_a=True), "K-major"),
        (dict(block_k=32), "block_k must be a multiple of 64"),
        (dict(out_dtype="fp16"), "out_dtype must be one of bf16, fp32"),
        (dict(scale="mx8"), "scale must be one of"),
        (dict(scale="mx32"), "block_k must be a multiple of 128 for scale 'mx32'"),
        (dict(scale="mx32", block_k=128, imprecise_acc=128), "imprecise_acc is for Hopper"),
        (dict(scale="block128"), "block_k must be 128 for scale 'block128'"),
        (dict(imprecise_acc=48), "imprecise_acc must be a positive multiple of 32, got 48"),
        (dict(imprecise_acc=0), "imprecise_acc must be a positive multiple of 32"),
        (dict(scale="block128", block_k=128, imprecise_acc=128),
         "imprecise_acc is for the epilogue recipes"),
        (dict(dtype="fp16"), "scale and imprecise_acc are for FP8 kernels"),
    ],
)  # fmt: skip
def test_refusals_name_what_is_built(kw, match):
    args = dict(kind="data-parallel", reduction=None, grouped="none", dtype="f8e4m3",
                block_m=64, block_n=64, block_k=64, group_m=4, num_warps=4, num_stages=None,
                trans_b=True, scale="rowwise") | kw  # fmt: skip
    with pytest.raises(ValueError, match=re.escape(match)):
        S.KernelSpec(**args)
    build = {k: v for k, v in args.items() if k not in ("num_stages",)}
    with pytest.raises(ValueError, match=re.escape(match)):
        build_gemm_module(**build)


@pytest.mark.parametrize(("dtype", "ptx_type"), [("f8e4m3", "e4m3"), ("f8e5m2", "e5m2")])
def test_cuda90_kernel_runs_wgmma_on_8_bit_operands(dtype, ptx_type):
    from gemm_opt.kernels.build_bundles import pipeline_of
    from gemm_opt.lowering.compile import compile_tile_module

    spec = S.KernelSpec(
        "persistent", None, "none", dtype, 128, 128, 128, 8, 8, 3,
        trans_b=True, scale="rowwise", aligned=True, tma=True,
    )  # fmt: skip
    module = cache.module_for(spec, "cuda:90")
    with module.context:
        ptx = compile_tile_module(module, "cuda:90", pipeline=pipeline_of(spec, "cuda:90")).asm[
            "ptx"
        ]
    wgmma = {w for w in ptx.split() if w.startswith("wgmma.mma_async.sync.aligned.")}
    assert wgmma == {f"wgmma.mma_async.sync.aligned.m64n128k32.f32.{ptx_type}.{ptx_type}"}
    assert "cp.async.bulk.tensor.2d" in ptx  # the TMA twin's copies
    assert "mul.f32" in ptx or "mul.rn.f32" in ptx  # the epilogue's scales


def _usage(binary: bytes) -> dict[str, str]:
    """``cuobjdump -res-usage`` of a cubin: REG, STACK, LOCAL, ... by name."""
    from support.scripts import ROOT, load_script

    usage = load_script(ROOT / "benchmarks" / "h100" / "cubin_usage.py", "fp8_cubin_usage")
    return dict(f.split(":") for f in usage.resource_usage(binary).split())


def test_tma_only_configurations_fit_in_registers():
    """The bar for a bundled configuration: no stack. The 256x128 tile's TMA twins
    keep their 128 accumulator registers without spilling, each warpgroup's two
    m64n128 wgmmas per K step in the SASS; its plain twin (address registers of
    its own copies) does spill, which is why only the TMA twins are bundled."""
    from dataclasses import replace

    from gemm_opt.kernels import h100_configs as h100
    from gemm_opt.kernels.build_bundles import _build_one, fp8_bundle_specs

    tall = h100.FP8_TMA_CONFIGS["tall"]
    specs = [s for s in fp8_bundle_specs() if (s.block_m, s.block_n) == (256, 128)]
    assert len(specs) == 6 and all(s.tma and s.aligned for s in specs)
    assert all(s.block_k == tall.block_k and s.num_stages == tall.num_stages for s in specs)
    for spec in specs:
        usage = _usage(_build_one(spec, "cuda:90").binary)
        assert usage["STACK"] == "0" and usage["LOCAL"] == "0", (spec.name, usage)
    plain = replace(specs[1], aligned=False, tma=False)
    assert int(_usage(_build_one(plain, "cuda:90").binary)["STACK"]) > 0
