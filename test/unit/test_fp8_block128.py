"""The block128 recipe (1x128 scales on A, 128x128 on B) and the grouped FP8 forward.

The model runs the built kernels (both dense schedules, the grouped "m" kernel,
ragged M, N and K, an empty group) and C must equal
:func:`gemm_opt.core.scaling.scaled_reference` within :func:`_bound`, bit for bit
where every sum is exact (so a scale read from the wrong K block, row, column or
group fails); the API picks the recipe from the scale shapes and refuses what has
no kernel; the cuda:90 kernels run each K block's four wgmmas back to back and
read the scales once per row or column a thread holds.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import gemm_opt
from gemm_opt.core import schedules as S
from gemm_opt.core.fp8 import Fp8Format, decode, encode
from gemm_opt.core.modes import FP8_KINDS, Kind
from gemm_opt.core.scaling import scaled_reference
from gemm_opt.kernels import cache
from gemm_opt.runtime import scaled

FORMATS = {"f8e4m3": Fp8Format.E4M3FN, "f8e5m2": Fp8Format.E5M2}
BLOCK = 64
#: The kinds whose tiles this file's launcher runs (no workspace); the split
#: kinds are test_fp8_schedules.py's.
WHOLE_TILE_KINDS = (Kind.DATA_PARALLEL, Kind.PERSISTENT)


def _kb(k: int) -> int:
    return -(-k // S.FP8_BLOCK_K)


def _spec(kind="data-parallel", dtype="f8e4m3", out_dtype=None, grouped="none", scale="block128"):
    block_k = S.FP8_BLOCK_K if scale == "block128" else 64
    return S.KernelSpec(
        kind, None, grouped, dtype, BLOCK, BLOCK, block_k, 4, 4, None,
        trans_b=True, scale=scale, out_dtype=out_dtype,
    )  # fmt: skip


def _kernel_scales(sa, sb, n):
    """scale_a (M, Kb) -> (Kb, M); scale_b (..., Kb, Nb) -> (..., Kb, N): the kernel's layouts."""
    ksa = np.ascontiguousarray(sa.T)
    ksb = np.ascontiguousarray(np.repeat(sb, S.FP8_BLOCK_K, axis=-1)[..., :n])
    return ksa.reshape(-1), ksb.reshape(-1)


def _run(spec, a, b, sa, sb, lens=None, programs=3):
    """C of ``spec``'s kernel on the model; ``b`` stored (N, K) or (G, N, K)."""
    m, k = a.shape
    n = b.shape[-2]
    c = np.full((m, n), np.nan, dtype=np.float32)
    ksa, ksb = _kernel_scales(sa, sb, n)
    values = dict(a=a.reshape(-1), b=b.reshape(-1), c=c, M=m, N=n, K=k, lda=k, ldb=k, ldc=n)
    values |= dict(scale_a=ksa, scale_b=ksb)
    if lens is not None:
        values |= dict(group_lens=np.asarray(lens, np.int32), num_groups=len(lens))
        grid = programs
    else:
        tiles = S.cdiv(m, BLOCK) * S.cdiv(n, BLOCK)
        grid = tiles if spec.kind == "data-parallel" else min(programs, tiles)
    cache.run_on_model(spec, values, grid=grid, num_resident=grid, seed=None)
    return c


def _bound(a, b_kn, sa, sb, fmt, out_dtype, lens=None):
    """|C - reference| the kernel may show: per K block its product's rounding to fp32,
    the two scale products and the add into the accumulator (4 roundings of that
    block's sum |a b| s), plus the fp32 sums inside a block (K roundings in all),
    taken twice; then C's rounding (bf16: 2^-8 relative)."""
    mag = scaled_reference(
        encode(np.abs(decode(a, fmt)), fmt), encode(np.abs(decode(b_kn, fmt)), fmt),
        fmt, sa, sb, "block128", group_lens=lens,
    )  # fmt: skip
    k = a.shape[1]
    fp32 = 2 * (k + 4 * _kb(k)) * 2.0**-24 * mag
    store = 2.0**-8 if out_dtype in (None, "bf16") else 2.0**-24
    ref = scaled_reference(a, b_kn, fmt, sa, sb, "block128", group_lens=lens)
    return fp32 + store * (np.abs(ref) + fp32)


def _operands(rng, m, n, k, fmt, groups=None):
    a = encode(rng.standard_normal((m, k)) * 4, fmt)
    shape = (n, k) if groups is None else (groups, n, k)
    b = encode(rng.standard_normal(shape) * 4, fmt)
    sa = rng.uniform(2.0**-6, 4.0, (m, _kb(k))).astype(np.float32)
    sb_shape = (_kb(k), _kb(n)) if groups is None else (groups, _kb(k), _kb(n))
    sb = rng.uniform(2.0**-6, 4.0, sb_shape).astype(np.float32)
    return a, b, sa, sb


@pytest.mark.parametrize("kind", WHOLE_TILE_KINDS)
@pytest.mark.parametrize("dtype", sorted(S.FP8_DTYPES))
@pytest.mark.parametrize("out_dtype", [None, "fp32"])
def test_model_equals_the_block128_reference(kind, dtype, out_dtype):
    # K = 300: two whole blocks and a partial one; N = 150 spans two 128-column
    # blocks of B's scales; ragged M and N edges.
    m, n, k = 70, 150, 300
    fmt = FORMATS[dtype]
    rng = np.random.default_rng(len(kind) + len(dtype))
    a, b, sa, sb = _operands(rng, m, n, k, fmt)
    c = _run(_spec(kind, dtype, out_dtype), a, b, sa, sb)
    ref = scaled_reference(a, b.T, fmt, sa, sb, "block128")
    err = np.abs(c - ref)
    assert np.all(err <= _bound(a, b.T, sa, sb, fmt, out_dtype)), err.max()


def _exact_operands(rng, m, n, k, groups=None):
    """Small integers and power-of-two scales, different in every K block, row and
    column block: every sum is exact in fp32, so C equals the reference exactly."""
    fmt = Fp8Format.E4M3FN
    a = encode(rng.integers(-3, 4, (m, k)).astype(np.float64), fmt)
    shape = (n, k) if groups is None else (groups, n, k)
    b = encode(rng.integers(-3, 4, shape).astype(np.float64), fmt)
    sa = (2.0 ** rng.integers(-4, 4, (m, _kb(k)))).astype(np.float32)
    sb_shape = (_kb(k), _kb(n)) if groups is None else (groups, _kb(k), _kb(n))
    sb = (2.0 ** rng.integers(-4, 4, sb_shape)).astype(np.float32)
    return fmt, a, b, sa, sb


@pytest.mark.parametrize("kind", WHOLE_TILE_KINDS)
def test_each_block_takes_its_own_scales(kind):
    m, n, k = 66, 140, 320
    fmt, a, b, sa, sb = _exact_operands(np.random.default_rng(3), m, n, k)
    c = _run(_spec(kind, out_dtype="fp32"), a, b, sa, sb)
    assert np.array_equal(c, scaled_reference(a, b.T, fmt, sa, sb, "block128"))


@pytest.mark.parametrize("scale", ["rowwise", "block128", "tensorwise"])
def test_grouped_kernel_takes_each_groups_weights_and_scales(scale):
    lens = [50, 0, 81, 30]  # an empty group; groups straddle the 64-row tiles
    n, k = 90, 300
    rng = np.random.default_rng(7)
    fmt, a, b, sa, sb = _exact_operands(rng, sum(lens), n, k, groups=len(lens))
    if scale == "rowwise":
        sa = (2.0 ** rng.integers(-4, 4, (sum(lens), 1))).astype(np.float32)
        sb = (2.0 ** rng.integers(-4, 4, (len(lens), 1, n))).astype(np.float32)
    elif scale == "tensorwise":
        sa, sb = np.float32(0.5).reshape(()), np.float32(4.0).reshape(())
    spec = _spec("persistent", out_dtype="fp32", grouped="m", scale=scale)
    if scale == "block128":
        c = _run(spec, a, b, sa, sb, lens)
    else:  # the epilogue recipes' scales as they lie
        c = np.full((sum(lens), n), np.nan, dtype=np.float32)
        values = dict(a=a.reshape(-1), b=b.reshape(-1), c=c, M=sum(lens), N=n, K=k, lda=k,
                      ldb=k, ldc=n, scale_a=sa.reshape(-1), scale_b=sb.reshape(-1),
                      group_lens=np.asarray(lens, np.int32), num_groups=len(lens))  # fmt: skip
        cache.run_on_model(spec, values, grid=3, num_resident=3, seed=None)
    ref = scaled_reference(a, np.swapaxes(b, 1, 2), fmt, sa, sb, scale, group_lens=lens)
    assert np.array_equal(c, ref)


def _torch_operands(m, n, k, recipe, groups=None):
    g = torch.Generator().manual_seed(m + n + k)
    x = torch.randn(m, k, generator=g)
    shape = (n, k) if groups is None else (groups, n, k)
    w = torch.randn(shape, generator=g)
    a, sa = gemm_opt.quantize_fp8(x, recipe=recipe)
    wt, sw = gemm_opt.quantize_fp8(w.transpose(-2, -1), recipe=recipe, operand="b")
    return a, wt, sa, sw


def _reference_of(a, b_kn, sa, sb, recipe, lens=None):
    u8 = torch.uint8
    return scaled_reference(
        a.view(u8).numpy(), b_kn.contiguous().view(u8).numpy(), Fp8Format.E4M3FN,
        sa.numpy(), sb.numpy(), recipe, group_lens=lens,
    )  # fmt: skip


def test_api_runs_block128_from_the_scale_shapes():
    m, n, k = 70, 150, 300
    a, b, sa, sb = _torch_operands(m, n, k, "block128")  # b = w.t(), (K, N)
    assert tuple(sa.shape) == (m, 3) and tuple(sb.shape) == (3, 2)
    ref = _reference_of(a, b, sa, sb, "block128")
    for schedule in WHOLE_TILE_KINDS:
        c = gemm_opt.matmul(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.float32,
                            schedule=schedule)  # fmt: skip
        assert np.abs(c.numpy() - ref).max() <= 2.0**-20 * np.abs(ref).max()
    # torch._scaled_mm's layouts (scale_a M-major, scale_b (Kb, Nb) with strides (1, Kb)):
    # the same C.
    c2 = gemm_opt.matmul(a, b, scale_a=sa.t().contiguous().t(), scale_b=sb.t().contiguous().t(),
                         out_dtype=torch.float32)  # fmt: skip
    assert torch.equal(c2, c)


def test_kernel_scales_keep_torchs_scale_a_and_repeat_scale_b_per_column():
    m, n, k = 70, 150, 300
    a, b, sa, sb = _torch_operands(m, n, k, "block128")
    sa_m_major = sa.t().contiguous().t()
    plan = scaled.scaled_plan(a, b, sa_m_major, sb)
    ksa, ksb = scaled.kernel_scales(plan, sa_m_major, sb)
    assert ksa.data_ptr() == sa_m_major.data_ptr()  # torch's layout: no copy
    assert tuple(ksa.shape) == (3, m) and tuple(ksb.shape) == (3, n)
    assert torch.equal(ksb[:, 127], sb[:, 0]) and torch.equal(ksb[:, 128], sb[:, 1])


@pytest.mark.parametrize("recipe", ["rowwise", "block128"])
def test_api_runs_the_grouped_forward(recipe):
    lens = [40, 0, 70, 25]
    n, k = 96, 200
    a, wt, sa, sw = _torch_operands(sum(lens), n, k, recipe, groups=len(lens))
    w = wt.transpose(1, 2)  # (G, N, K), row-major per group
    assert w.is_contiguous()
    c = gemm_opt.grouped_matmul(a, w, torch.tensor(lens), trans_b=True, scale_a=sa, scale_b=sw,
                                out_dtype=torch.float32)  # fmt: skip
    ref = _reference_of(a, wt, sa, sw, recipe, lens)
    assert np.abs(c.numpy() - ref).max() <= 2.0**-20 * np.abs(ref).max()


G_LENS = [40, 0, 70, 25]
G_N, G_K = 96, 200


def _grouped_call(**over):
    a, wt, sa, sw = _torch_operands(sum(G_LENS), G_N, G_K, "rowwise", groups=len(G_LENS))
    kw = dict(a=a, b=wt.transpose(1, 2), group_lens=torch.tensor(G_LENS), trans_b=True,
              scale_a=sa, scale_b=sw) | over  # fmt: skip
    return gemm_opt.grouped_matmul(kw.pop("a"), kw.pop("b"), kw.pop("group_lens"), **kw)


@pytest.mark.parametrize(
    ("over", "error", "match"),
    [
        (dict(trans_b=False), ValueError, "trans_b: a grouped FP8 GEMM takes b (G, N, K)"),
        (dict(b=torch.zeros(4, G_K, G_N, dtype=torch.float8_e4m3fn).transpose(1, 2)),
         ValueError, "b: expected (G, N, K) with each group's (N, K) row-major"),
        (dict(scale_b=torch.ones(4, G_N)), ValueError, "scale_b"),
        (dict(scale_b=None), ValueError, "scale_b: a scaled GEMM takes both"),
        (dict(schedule="data-parallel"), ValueError, "schedule: a grouped FP8 GEMM runs"),
        (dict(group_lens=torch.tensor([40, 0, 70])), ValueError, "group_lens: expected 4"),
        (dict(scale_a=torch.ones(sum(G_LENS), 1, dtype=torch.float16)), TypeError,
         "scale_a: expected float32 scales"),
    ],
)  # fmt: skip
def test_grouped_refusals_name_the_argument(over, error, match):
    with pytest.raises(error, match=re.escape(match)):
        _grouped_call(**over)


def test_the_grouped_operator_traces_with_its_fake():
    a, wt, sa, sw = _torch_operands(sum(G_LENS), G_N, G_K, "block128", groups=len(G_LENS))
    w, lens = wt.transpose(1, 2), torch.tensor(G_LENS)
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode(allow_non_fake_inputs=True):
        out = torch.ops.gemm_opt.scaled_grouped_matmul(a, w, lens, sa, sw)
    assert tuple(out.shape) == (sum(G_LENS), G_N) and out.dtype == torch.bfloat16


def _ptx(spec):
    from gemm_opt.kernels.build_bundles import pipeline_of
    from gemm_opt.lowering.compile import compile_tile_module

    module = cache.module_for(spec, "cuda:90")
    with module.context:
        return compile_tile_module(module, "cuda:90", pipeline=pipeline_of(spec, "cuda:90")).asm[
            "ptx"
        ]


def _gpu_spec(scale, imprecise_acc=None):
    return S.KernelSpec(
        "persistent", None, "none", "f8e4m3", 128, 128, 128, 8, 8, 4, trans_b=True,
        scale=scale, aligned=True, tma=True, imprecise_acc=imprecise_acc,
    )  # fmt: skip


def test_cuda90_block128_runs_a_k_block_per_wait_and_loads_scales_once():
    ptx = _ptx(_gpu_spec("block128"))
    # One K block: four m64n128k32 wgmmas chained (the first starts from zero), one wait.
    chained = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n128k32\.f32\.e4m3\.e4m3 "
                         r"\{[^}]*\}, %rd\d+, %rd\d+, (\S+), 1, 1;", ptx)  # fmt: skip
    assert len(chained) == 4 and chained[0] == "0" and all(s != "0" for s in chained[1:])
    assert ptx.count("wgmma.wait_group.sync.aligned") == 1
    # The scales: a thread's 2 rows of scale_a, its column pairs of scale_b (not one
    # load per accumulator element: 64 + 32 of them).
    assert len(re.findall(r"ld\.global\S*", ptx)) <= 40


def test_cuda90_imprecise_acc_lets_the_block_accumulate_in_the_tensor_core():
    def scale_d(ptx: str) -> list[str]:
        return re.findall(r"e4m3\.e4m3 \{[^}]*\}, %rd\d+, %rd\d+, (\S+), 1, 1;", ptx)

    # One instruction's K: every wgmma starts a fresh partial sum (added into fp32);
    # 128: the four of a K block accumulate into one.
    assert scale_d(_ptx(_gpu_spec("rowwise"))) == ["0"] * 4
    assert scale_d(_ptx(_gpu_spec("rowwise", 128)))[1:] != ["0"] * 3


def test_the_epilogue_interval_follows_the_configuration(monkeypatch):
    from gemm_opt.kernels import h100_configs as h100

    monkeypatch.setitem(h100.FP8_EPILOGUE_IMPRECISE_ACC, "mid", 64)
    monkeypatch.setitem(h100.FP8_EPILOGUE_IMPRECISE_ACC, "narrow", None)
    assert scaled._epilogue_interval(h100.FP8_GPU_CONFIGS["mid"]) == 64
    assert scaled._epilogue_interval(h100.FP8_GPU_CONFIGS["narrow"]) is None
    assert scaled._epilogue_interval(S.GemmConfig(128, 64, 128, 8, 4, 4)) is None  # a caller's


@pytest.mark.parametrize("schedule", [*FP8_KINDS, "grouped"])
@pytest.mark.parametrize("recipe", ["tensorwise", "rowwise"])
def test_the_chosen_epilogue_intervals_are_bundled(schedule, recipe):
    from dataclasses import replace

    from gemm_opt.core.modes import Grouped
    from gemm_opt.kernels import h100_configs as h100
    from gemm_opt.kernels.build_bundles import fp8_bundle_specs

    bundled = {s.name for s in fp8_bundle_specs()}
    grouped = schedule == "grouped"
    for name, cfg in h100.FP8_GPU_CONFIGS.items():
        spec = scaled.scaled_spec(
            "persistent" if grouped else schedule, "f8e4m3", cfg, recipe, "bfloat16",
            Grouped.M if grouped else Grouped.NONE, gpu=True,
        )  # fmt: skip
        assert spec.imprecise_acc == h100.FP8_EPILOGUE_IMPRECISE_ACC[name]
        for twin in (spec, replace(spec, aligned=True), replace(spec, aligned=True, tma=True)):
            assert twin.name in bundled
