"""``gemm_opt.matmul`` with ``scale_a``/``scale_b``: the FP8 API on the model.

Every recipe against the float64 reference and ``torch._scaled_mm`` (CPU),
numpy and torch giving the same bits, the refusals naming the argument, the
operator's fake implementation under ``torch.compile``, and the plan's kernel
choice on the GPU.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import gemm_opt
from gemm_opt.core.fp8 import Fp8Format, encode
from gemm_opt.core.scaling import scaled_reference
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.runtime import scaled

torch = pytest.importorskip("torch")
ml_dtypes = pytest.importorskip("ml_dtypes")

M, N, K = 70, 90, 150


def _operands(seed=0, fmt=Fp8Format.E4M3FN):
    rng = np.random.default_rng(seed)
    a = encode(rng.standard_normal((M, K)) * 2, fmt)
    w = encode(rng.standard_normal((N, K)) * 2, fmt)  # (N, K): B is its transpose
    return a, w, rng


def _np(codes, fmt=Fp8Format.E4M3FN):
    return codes.view(ml_dtypes.float8_e4m3fn if fmt is Fp8Format.E4M3FN else ml_dtypes.float8_e5m2)


def _t(codes, fmt=Fp8Format.E4M3FN):
    dt = torch.float8_e4m3fn if fmt is Fp8Format.E4M3FN else torch.float8_e5m2
    return torch.from_numpy(codes).view(dt)


def _scales(rng, recipe):
    if recipe == "rowwise":
        return rng.uniform(0.25, 4, (M, 1)), rng.uniform(0.25, 4, (1, N))
    return np.array(rng.uniform(0.25, 4)), np.array([[rng.uniform(0.25, 4)]])


@pytest.mark.parametrize("recipe", ["tensorwise", "rowwise"])
@pytest.mark.parametrize("fmt", [Fp8Format.E4M3FN, Fp8Format.E5M2])
@pytest.mark.parametrize("schedule", ["data-parallel", "persistent"])
def test_every_recipe_equals_the_reference(recipe, fmt, schedule):
    a, w, rng = _operands(3, fmt)
    sa, sb = (s.astype(np.float32) for s in _scales(rng, recipe))
    c = gemm_opt.matmul(_np(a, fmt), _np(w, fmt).T, scale_a=sa, scale_b=sb, schedule=schedule)
    assert c.dtype == ml_dtypes.bfloat16 and c.shape == (M, N)
    ref = scaled_reference(a, w.T, fmt, sa, sb, recipe)
    absref = scaled_reference(a & 0x7F, w.T & 0x7F, fmt, sa, sb, recipe)  # |a|, |b|
    # fp32 accumulation and two scale products, then one bf16 rounding (2^-8 of |C|).
    fp32 = (K + 2) * 2.0**-23 * absref
    assert np.all(np.abs(c.astype(np.float64) - ref) <= fp32 + 2.0**-8 * (np.abs(ref) + fp32))
    # torch tensors on the model give the same bits as numpy.
    tc = gemm_opt.matmul(
        _t(a, fmt), _t(w, fmt).t(), scale_a=torch.from_numpy(sa), scale_b=torch.from_numpy(sb),
        schedule=schedule,
    )  # fmt: skip
    assert tc.dtype == torch.bfloat16
    assert np.array_equal(tc.view(torch.int16).numpy(), c.view(np.int16))


@pytest.mark.parametrize("recipe", ["tensorwise", "rowwise"])
def test_matches_torch_scaled_mm(recipe):
    a, w, rng = _operands(5)
    sa, sb = (torch.from_numpy(s.astype(np.float32)) for s in _scales(rng, recipe))
    ours = gemm_opt.matmul(_t(a), _t(w).t(), scale_a=sa, scale_b=sb, out_dtype=torch.float32)
    theirs = torch._scaled_mm(_t(a), _t(w).t(), scale_a=sa, scale_b=sb, out_dtype=torch.float32)
    assert ours.dtype == torch.float32
    # Both sum in fp32, in different orders: each within (K + 2) fp32 roundoffs of
    # sum |a_k b_k| sa sb from the float64 value, so within twice that of each other.
    absref = scaled_reference(
        a & 0x7F, w.T & 0x7F, Fp8Format.E4M3FN, sa.numpy(), sb.numpy(), recipe
    )
    assert np.all(np.abs((ours - theirs).double().numpy()) <= 2 * (K + 2) * 2.0**-23 * absref)


def _call(**over):
    a, w, _ = _operands()
    kw = dict(
        b=_t(w).t(), scale_a=torch.ones(M, 1), scale_b=torch.ones(1, N)
    ) | over  # fmt: skip
    return gemm_opt.matmul(_t(a) if "a" not in kw else kw.pop("a"), kw.pop("b"), **kw)


@pytest.mark.parametrize(
    ("over", "error", "match"),
    [
        (dict(b=torch.zeros(K, N, dtype=torch.float8_e4m3fn)), ValueError,
         "b: a scaled GEMM takes B as the transposed view of a row-major (N, K) tensor"),
        (dict(a=torch.zeros(K, M, dtype=torch.float8_e4m3fn).t()), ValueError,
         "a: a scaled GEMM takes A row-major (M, K)"),
        (dict(b=torch.zeros(N, K, dtype=torch.float8_e5m2).t()), TypeError,
         "b: expected float8_e4m3fn like a"),
        (dict(a=torch.zeros(M, K, dtype=torch.bfloat16)), TypeError,
         "a: a scaled GEMM takes float8 elements"),
        (dict(a=torch.zeros(2, M, K, dtype=torch.float8_e4m3fn)), ValueError,
         "a: a scaled GEMM takes 2-D operands"),
        (dict(scale_a=torch.ones(M, 1, dtype=torch.float64)), TypeError,
         "scale_a: expected float32 scales (float8_e8m0fnu for mx32), got dtype float64"),
        (dict(scale_a=torch.ones(M, 2)), ValueError, "scale_a"),
        (dict(scale_b=torch.ones(N, 1)), ValueError, "scale_b"),
        (dict(scale_a=torch.ones(M, K // 128 + 1), scale_b=torch.ones(K // 128 + 1, 1),
              config=dict(block_k=64)), ValueError,
         "config: block_k must be 128 for block128 scales"),
        (dict(scale_a=torch.ones(M, K // 128 + 1, dtype=torch.float16),
              scale_b=torch.ones(K // 128 + 1, 1)), TypeError,
         "scale_a: expected float32 scales (float8_e8m0fnu for mx32), got dtype float16"),
        (dict(scale_a=torch.ones(M, 2)[:, :1]), ValueError,
         "scale_a: a rowwise scale has unit stride"),
        (dict(scale_a=np.ones((M, 1), np.float32)), TypeError, "scale_a: expected a float32 tensor, got ndarray"),
        (dict(scale_b=None), ValueError, "scale_b: a scaled GEMM takes both"),
        (dict(schedule="auto"), ValueError, "schedule: a scaled GEMM runs data-parallel, "
         "persistent, work-stealing, stream-k, split-k, got 'auto'"),
        (dict(out_dtype=torch.float16), ValueError, "out_dtype: a scaled GEMM writes"),
        (dict(out=torch.empty(M, N)), ValueError, "out: a scaled GEMM does not take out"),
        (dict(reduction="tree"), ValueError, "reduction='tree' needs schedule='stream-k'"),
        (dict(config=dict(block_k=32)), ValueError, "config: block_k must be a multiple of 64"),
        (dict(schedule="persistent", num_programs=0), ValueError,
         "num_programs must be at least 1, got 0"),
        (dict(schedule="persistent", num_programs=2**31), ValueError,
         "num_programs must be at most 2147483647, got 2147483648"),
    ],
)  # fmt: skip
def test_refusals_name_the_argument(over, error, match):
    with pytest.raises(error, match=re.escape(match)):
        _call(**over)


def test_compile_traces_the_operator_without_a_graph_break():
    a, w, _ = _operands()
    f = torch.compile(
        lambda x, y, s, t: gemm_opt.matmul(x, y, scale_a=s, scale_b=t), fullgraph=True
    )
    out = f(_t(a), _t(w).t(), torch.ones(M, 1), torch.ones(1, N))
    assert out.shape == (M, N) and out.dtype == torch.bfloat16
    eager = gemm_opt.matmul(_t(a), _t(w).t(), scale_a=torch.ones(M, 1), scale_b=torch.ones(1, N))
    assert torch.equal(out, eager)


@pytest.mark.parametrize(
    ("m", "n", "config"),
    [
        (4096, 7168, "mid"),
        (1024, 2112, "mid"),
        (512, 2048, "narrow"),
        (16, 4096, "narrow"),
        (128, 7168, "narrow"),
    ],
)
def test_gpu_config_classes(m, n, config):
    assert h100.fp8_config_name(m, n) == config
    cfg = h100.FP8_GPU_CONFIGS[config]
    assert cfg.block_k % 64 == 0


@pytest.mark.parametrize(
    ("m", "n", "config"),
    [
        (4096, 7168, "tall"),  # 16 x 56 256x128 tiles
        (4096, 2112, "tall"),  # 16 x 17 = 272: two waves of 132
        (4096, 2048, "mid"),  # 16 x 16 = 256: under two waves
        (2048, 2048, "mid"),  # 8 x 16 = 128 tall tiles
        (1024, 2112, "mid"),
        (512, 2048, "narrow"),
        (16, 4096, "narrow"),
    ],
)
def test_gpu_config_classes_with_the_tma_only_tile(m, n, config):
    assert h100.fp8_config_name(m, n, tma_only=True) == config
    assert h100.fp8_config_name(m, n) == ("mid" if config == "tall" else config)


@pytest.mark.parametrize(
    ("kw", "suits"),
    [
        ({}, True),
        ({"N": 1000}, False),  # 16 elements (16 bytes of fp8) is the TMA twin's fact
        ({"ldb": 7184}, True),  # padded rows
        ({"lda": 7176}, False),
        ({"K": 0}, False),  # a TMA descriptor's dims are at least 1
        ({"scale": "block128"}, False),  # its promoted block product spills
        ({"out": "float32"}, False),  # bundled with bf16 C
    ],
)
def test_the_tma_only_tile_needs_its_twins_facts(kw, suits):
    from gemm_opt.core.modes import Grouped, Scale

    args = {"M": 4096, "N": 7168, "K": 7168, "lda": 7168, "ldb": 7168, "ldc": 7168}
    scale, out = Scale(kw.pop("scale", "rowwise")), kw.pop("out", "bfloat16")
    args |= kw
    for grouped in (Grouped.NONE, Grouped.M):
        assert scaled._tma_only_call("f8e4m3", scale, out, grouped, **args) is suits


def test_the_tma_only_tile_runs_as_its_bundled_twin():
    """The GPU spec of the 256x128 tile is its TMA twin, which the bundle holds; a
    ``config`` naming it on a call it does not suit is a ValueError naming config."""
    from gemm_opt.core.modes import Grouped, Scale
    from gemm_opt.kernels.build_bundles import fp8_bundle_specs

    bundled = {s.name for s in fp8_bundle_specs()}
    cfg = scaled._config(4096, 7168, "cuda", None, Scale.ROWWISE, tma_only=True)
    assert cfg == h100.FP8_TMA_CONFIGS["tall"]
    for schedule, grouped in (
        ("data-parallel", "none"),
        ("persistent", "none"),
        ("persistent", "m"),
    ):
        for recipe in h100.FP8_TMA_SCALES:
            spec = scaled.scaled_spec(
                schedule, "f8e4m3", cfg, recipe, "bfloat16", Grouped(grouped), gpu=True
            )
            assert spec.tma and spec.aligned and spec.imprecise_acc == 128
            assert spec.name in bundled
    with pytest.raises(ValueError, match="config: 256x128 runs as a TMA kernel only"):
        scaled._config(4096, 7168, "cuda", cfg, Scale.BLOCK128)
    assert scaled._config(4096, 7168, "cuda", cfg, Scale.ROWWISE, tma_only=True) == cfg
    assert scaled._config(300, 200, "numpy", cfg, Scale.BLOCK128) == cfg  # the model runs any


def test_the_plan_names_the_bundled_kernel():
    a, w, _ = _operands()
    plan = scaled.scaled_plan(
        _t(a), _t(w).t(), torch.ones(()), torch.ones(1, 1), schedule="persistent",
        num_programs=3,
    )  # fmt: skip
    assert plan.spec.name == "gemm_persistent_tb_f8e4m3_tensorwise_64x64x64_g4_w4"
    assert (plan.lda, plan.ldb, plan.grid, plan.out_dtype) == (K, K, 3, "bfloat16")


@pytest.mark.parametrize(("m", "n"), [(4096, 7168), (4096, 2112), (16, 4096), (128, 7168)])
@pytest.mark.parametrize("schedule", ["data-parallel", "persistent"])
@pytest.mark.parametrize("recipe", ["tensorwise", "rowwise", "block128"])
def test_the_gpu_plan_kernel_is_bundled_with_its_twins(m, n, schedule, recipe):
    from dataclasses import replace

    from gemm_opt.kernels.build_bundles import fp8_bundle_specs

    bundled = {s.name for s in fp8_bundle_specs()}
    cfg = h100.FP8_GPU_CONFIGS[h100.fp8_config_name(m, n)]
    spec = scaled.scaled_spec(schedule, "f8e4m3", cfg, recipe, "bfloat16", gpu=True)
    assert spec.name in bundled
    assert replace(spec, aligned=True).name in bundled
    assert replace(spec, aligned=True, tma=True).name in bundled


#: FP8 bundle kernels: 2 configurations x (2 dense schedules x (tensorwise, rowwise at
#: 32 and each bundled interval, block128) + grouped "m" x 3 recipes), and fp32-C
#: narrow dense rowwise (each interval) and block128 on both schedules; x 3 twins.
ACCS = len(h100.FP8_IMPRECISE_ACC)
#: The training gradients' fp32-C kernels: 2 configurations x (data-parallel dense, grouped
#: "m") x 3 recipes, less the narrow dense rowwise and block128 ones already counted.
TRAINING = 2 * 2 * 3 - 2
#: The split kinds (work stealing, stream-K atomic, linear, tree, split-K): 2
#: configurations x 3 recipes at the API's interval.
SPLIT = 2 * 5 * 3
#: The TMA-only configurations' kernels: (2 dense schedules + grouped "m") x (tensorwise,
#: rowwise), bf16 C, the TMA twin alone.
TMA_ONLY = len(h100.FP8_TMA_CONFIGS) * 3 * 2
BUNDLED = (2 * (2 * (3 + ACCS) + 3) + 2 * (2 + ACCS) + TRAINING + SPLIT) * 3 + TMA_ONLY


def test_fp8_bundle_holds_every_recipe_and_interval():
    from gemm_opt.kernels.build_bundles import fp8_bundle_specs

    specs = fp8_bundle_specs()
    assert len(specs) == len({s.name for s in specs}) == BUNDLED
    assert {s.imprecise_acc for s in specs} == {None, *h100.FP8_IMPRECISE_ACC}
    assert {s.scale for s in specs if s.imprecise_acc is None and s.grouped == "none"} == {
        "rowwise",
        "block128",
    }
    tma_only = {(s.block_m, s.block_n) for s in specs if s.tma} - {
        (s.block_m, s.block_n) for s in specs if not s.aligned
    }
    assert tma_only == {(c.block_m, c.block_n) for c in h100.FP8_TMA_CONFIGS.values()}
    assert all(
        s.out_dtype == "bf16" and s.scale in ("tensorwise", "rowwise") and s.imprecise_acc == 128
        for s in specs
        if (s.block_m, s.block_n) in tma_only
    )
    fp32 = {(s.block_m, s.kind, s.grouped, s.scale) for s in specs if s.out_dtype == "fp32"}
    assert fp32 == {
        (cfg.block_m, kind, grouped, scale)
        for cfg in h100.FP8_GPU_CONFIGS.values()
        for kind, grouped in (("data-parallel", "none"), ("persistent", "m"))
        for scale in ("tensorwise", "rowwise", "block128")
    } | {(64, "persistent", "none", "rowwise"), (64, "persistent", "none", "block128")}
    assert {s.dtype for s in specs} == {"f8e4m3"} and all(s.trans_b for s in specs)


def test_build_bundles_lists_only_the_fp8_kernels_with_empty_dtypes():
    import subprocess
    import sys

    tool = [sys.executable, "-m", "gemm_opt.kernels.build_bundles", "--target", "cuda:90"]
    out = subprocess.run([*tool, "--dtypes=", "--list"], capture_output=True, text=True)
    names = out.stdout.split()
    assert out.returncode == 0 and len(names) == BUNDLED
    assert all("_tb_f8e4m3_" in n for n in names)
    bad = subprocess.run([*tool, "--dtypes=", "--fp8=", "--list"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--dtypes takes fp16, bf16" in bad.stderr
