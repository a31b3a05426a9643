"""FP8 through the split schedules: work stealing, stream-K (atomic, linear, tree), split-K.

Each recipe (tensorwise, rowwise, block128 and, on the model, mx32) runs through
``gemm_opt.matmul(..., schedule=, reduction=, num_programs=)`` on the model: C
equals the float64 product of the decoded operands times their scales
(:func:`gemm_opt.core.scaling.scaled_reference`) within the recipe's stated bound,
on ragged shapes, K off 128, and few programs (so that stream-K and split-K cut
each tile's K range into several partials, each scaled where it is computed);
bit for bit where every sum is exact (a partial scaled with another K block's,
row's or column's scales fails); linear and tree bitwise the same under any
interleaving; bad combinations a ValueError naming the argument; the cuda:90
stream-K kernel keeps its fix-up in registers (no local memory).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.scripts import load_script

import gemm_opt
from gemm_opt.core import schedules as S
from gemm_opt.core.fp8 import Fp8Format, encode
from gemm_opt.core.modes import FP8_KINDS, Kind
from gemm_opt.core.scaling import scaled_reference
from gemm_opt.runtime import scaled

ml_dtypes = pytest.importorskip("ml_dtypes")

ROOT = Path(__file__).resolve().parents[2]
FMT = Fp8Format.E4M3FN
E4M3 = ml_dtypes.float8_e4m3fn
#: (schedule, reduction) of every FP8 kind that a tile's K range may split or that
#: claims tiles: what this file adds to data-parallel and persistent.
SPLIT = [
    ("work-stealing", None),
    ("stream-k", "atomic"),
    ("stream-k", "linear"),
    ("stream-k", "tree"),
    ("split-k", None),
]
RECIPES = ["tensorwise", "rowwise", "block128", "mx32"]


def _kb(k: int, per: int = 128) -> int:
    return -(-k // per)


def _scales(rng, recipe, m, n, k, exact=False):
    """``scale_a``, ``scale_b`` of ``recipe`` as the API takes them; ``exact``:
    powers of two, different per row, column and K block."""

    def draw(shape):
        if exact:
            return (2.0 ** rng.integers(-4, 4, shape)).astype(np.float32)
        return rng.uniform(2.0**-6, 4.0, shape).astype(np.float32)

    if recipe == "tensorwise":
        return draw(()), draw(())
    if recipe == "rowwise":
        return draw((m, 1)), draw((1, n))
    if recipe == "block128":
        return draw((m, _kb(k))), draw((_kb(k), _kb(n)))
    # mx32: e8m0 codes 123..131 (2^-4 .. 2^4), one per 32 elements of K
    sa = rng.integers(123, 132, (m, k // 32), dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)
    sb = rng.integers(123, 132, (k // 32, n), dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)
    return sa, sb


def _operands(rng, recipe, m, n, k, exact=False):
    """A (m, k) and W (n, k) e4m3 (B = W.T, K-major) and the recipe's scales."""
    if exact:  # small integers: every fp32 sum exact
        a = encode(rng.integers(-3, 4, (m, k)).astype(np.float64), FMT)
        w = encode(rng.integers(-3, 4, (n, k)).astype(np.float64), FMT)
    else:
        a = encode(rng.standard_normal((m, k)) * 4, FMT)
        w = encode(rng.standard_normal((n, k)) * 4, FMT)
    return a, w, *_scales(rng, recipe, m, n, k, exact)


def _reference(a, w, sa, sb, recipe):
    def f64(s):
        return s.view(np.uint8) if s.dtype.itemsize == 1 else s

    return scaled_reference(a, w.T, FMT, f64(sa), f64(sb), recipe)


def _matmul(a, w, sa, sb, schedule, reduction, *, programs, out_dtype="float32", seed=None):
    return gemm_opt.matmul(
        a.view(E4M3), w.view(E4M3).T, scale_a=sa, scale_b=sb, schedule=schedule,
        reduction=reduction, num_programs=programs, out_dtype=out_dtype, seed=seed,
    )  # fmt: skip


def _bound(a, w, sa, sb, recipe, out_dtype, reduction):
    """|C - ref| the model may show (docs/fp8.md): the fp32 accumulation (epilogue
    recipes ``(K + 2) 2^-23 S``; block128 ``2 (K + 4 Kb) 2^-24 S``; mx32 ``Kb
    2^-23 S``, ``S`` the scaled magnitudes' sum), then C's rounding, ``u (|ref| +
    acc)``; atomic stream-K into bf16 C adds ``r 2^-8 S`` for its ``r`` partials
    (at most the tile's K blocks), each rounded to bf16 and added in bf16."""
    k = a.shape[1]
    mag = _reference(np.abs(a.view(E4M3).astype(np.float32)).astype(E4M3).view(np.uint8),
                     np.abs(w.view(E4M3).astype(np.float32)).astype(E4M3).view(np.uint8),
                     sa, sb, recipe)  # fmt: skip
    if recipe == "block128":
        acc = 2 * (k + 4 * _kb(k)) * 2.0**-24 * mag
    elif recipe == "mx32":
        acc = _kb(k) * 2.0**-23 * mag
    else:
        acc = (k + 2) * 2.0**-23 * mag
    u = 2.0**-8 if out_dtype == "bfloat16" else 2.0**-24
    if reduction == "atomic" and out_dtype == "bfloat16":
        acc = acc + _kb(k, 64) * 2.0**-8 * mag
    return acc + u * (np.abs(_reference(a, w, sa, sb, recipe)) + acc)


def _programs(schedule: str, stream_k: int) -> int:
    """Programs that cut the 4 tiles of these tests into partials: ``stream_k`` for
    stream-K (uneven cuts), 12 for split-K (3 slices of each tile's 3 to 5 K blocks)."""
    return 12 if schedule == "split-k" else stream_k


def _k(recipe: str) -> int:
    """K off a multiple of 128 (two whole blocks and a partial one); mx32 takes
    multiples of 32."""
    return 288 if recipe == "mx32" else 300


@pytest.mark.parametrize(("schedule", "reduction"), SPLIT)
@pytest.mark.parametrize("recipe", RECIPES)
@pytest.mark.parametrize("out_dtype", ["bfloat16", "float32"])
def test_every_recipe_and_split_kind_equals_the_float64_reference(
    schedule, reduction, recipe, out_dtype
):
    # 70x90 in 64x64 tiles: 4 tiles, ragged edges; 3 programs split every tile's K
    # range under stream-K (4 tiles > 3 programs: all four are stream-K tiles).
    m, n, k = 70, 90, _k(recipe)
    rng = np.random.default_rng(len(schedule) + len(recipe) + len(reduction or ""))
    a, w, sa, sb = _operands(rng, recipe, m, n, k)
    programs = _programs(schedule, 3)
    c = np.asarray(_matmul(a, w, sa, sb, schedule, reduction, programs=programs,
                           out_dtype=out_dtype))  # fmt: skip
    c = c.astype(np.float64)
    err = np.abs(c - _reference(a, w, sa, sb, recipe))
    assert np.all(err <= _bound(a, w, sa, sb, recipe, out_dtype, reduction)), err.max()


@pytest.mark.parametrize(("schedule", "reduction"), SPLIT)
@pytest.mark.parametrize("recipe", RECIPES)
def test_partials_take_their_own_k_blocks_rows_and_columns_scales(schedule, reduction, recipe):
    # Exact sums and power-of-two scales: C is the reference bit for bit, so a
    # partial scaled with the wrong K block's (block128, mx32), row's or column's
    # scales, scaled twice or not at all, fails. 4 tiles of 3 K blocks of 128
    # (64 for the epilogue recipes: 5 or 6) over 7 programs (split-K 12): stream-K
    # and split-K cut each tile's K range.
    m, n, k = 70, 90, 3 * 128 - (0 if recipe == "mx32" else 40)
    rng = np.random.default_rng(11)
    a, w, sa, sb = _operands(rng, recipe, m, n, k, exact=True)
    c = _matmul(a, w, sa, sb, schedule, reduction, programs=_programs(schedule, 7))
    assert np.array_equal(c, _reference(a, w, sa, sb, recipe))


def test_the_split_kinds_do_split_the_k_range():
    # What the exact test above relies on: under stream-K and split-K some tile's K
    # range is cut between programs at the plan's program count.
    m, n, k = 70, 90, 344
    rng = np.random.default_rng(0)
    a, w, sa, sb = _operands(rng, "block128", m, n, k)
    for schedule, reduction in SPLIT[1:]:
        programs = _programs(schedule, 7)
        plan = scaled.scaled_plan(
            a.view(E4M3), w.view(E4M3).T, sa, sb, schedule=schedule, reduction=reduction,
            num_programs=programs,
        )  # fmt: skip
        tiles, ipt = 4, S.iters_per_tile(k, plan.spec.block_k)
        if schedule == "split-k":
            assert plan.grid == tiles * S.split_k_count(tiles, ipt, programs) == 3 * tiles
        else:
            part = S.stream_k_partition(tiles, ipt, plan.grid)
            assert any(not seg.whole for p in range(plan.grid) for seg in part.segments(p))


@settings(max_examples=20, deadline=None)
@given(
    m=st.integers(1, 140),
    n=st.integers(1, 140),
    k=st.integers(1, 400),
    split=st.sampled_from(SPLIT),
    recipe=st.sampled_from(["tensorwise", "rowwise", "block128"]),
    programs=st.integers(1, 9),
    seed=st.integers(0, 2**16),
)
def test_any_shape_and_program_count(m, n, k, split, recipe, programs, seed):
    schedule, reduction = split
    rng = np.random.default_rng(seed)
    a, w, sa, sb = _operands(rng, recipe, m, n, k)
    c = _matmul(a, w, sa, sb, schedule, reduction, programs=programs, out_dtype="bfloat16",
                seed=seed)  # fmt: skip
    c = np.asarray(c).astype(np.float64)
    err = np.abs(c - _reference(a, w, sa, sb, recipe))
    assert np.all(err <= _bound(a, w, sa, sb, recipe, "bfloat16", reduction))


@pytest.mark.parametrize("reduction", ["linear", "tree"])
@pytest.mark.parametrize("recipe", ["rowwise", "block128"])
def test_fixups_are_bitwise_the_same_under_any_interleaving(reduction, recipe):
    m, n, k = 70, 90, 300
    a, w, sa, sb = _operands(np.random.default_rng(5), recipe, m, n, k)
    runs = [
        _matmul(a, w, sa, sb, "stream-k", reduction, programs=5, seed=seed)
        for seed in (None, 1, 2, 3)
    ]
    assert all(np.array_equal(runs[0].view(np.uint32), r.view(np.uint32)) for r in runs[1:])


def test_atomic_stream_k_adds_into_a_zeroed_c_of_either_type():
    # C is zeroed before the atomic adds (the model's C starts as NaN otherwise), and
    # both C types are taken: fp32 exact here, bf16 within its rounding.
    m, n, k = 70, 90, 300
    a, w, sa, sb = _operands(np.random.default_rng(2), "rowwise", m, n, k, exact=True)
    ref = _reference(a, w, sa, sb, "rowwise")
    plan = scaled.scaled_plan(a.view(E4M3), w.view(E4M3).T, sa, sb, schedule="stream-k",
                              reduction="atomic", num_programs=3)  # fmt: skip
    assert plan.layout.zero_output and plan.layout.sync_elements == 0
    assert np.array_equal(_matmul(a, w, sa, sb, "stream-k", "atomic", programs=3), ref)
    c16 = _matmul(a, w, sa, sb, "stream-k", "atomic", programs=3, out_dtype="bfloat16")
    assert np.all(np.abs(np.asarray(c16).astype(np.float64) - ref) <= 2.0**-7 * np.abs(ref))


def test_atomic_stream_k_is_refused_under_deterministic_algorithms():
    torch = pytest.importorskip("torch")
    torch.use_deterministic_algorithms(True)
    try:
        with pytest.raises(RuntimeError, match="reduction='atomic'"):
            _call(reduction="atomic")
        _call(reduction="tree")  # deterministic: runs
    finally:
        torch.use_deterministic_algorithms(False)


def test_torch_cpu_tensors_take_the_same_schedules():
    torch = pytest.importorskip("torch")
    m, n, k = 70, 90, 300
    x = torch.randn(m, k, generator=torch.Generator().manual_seed(0))
    wt = torch.randn(n, k, generator=torch.Generator().manual_seed(1))
    a, sa = gemm_opt.quantize_fp8(x)
    w, sw = gemm_opt.quantize_fp8(wt)
    ref = scaled_reference(a.view(torch.uint8).numpy(), w.view(torch.uint8).numpy().T, FMT,
                           sa.numpy(), sw.t().numpy(), "rowwise")  # fmt: skip
    for schedule, reduction in SPLIT:
        c = gemm_opt.matmul(a, w.t(), scale_a=sa, scale_b=sw.t(), schedule=schedule,
                            reduction=reduction, num_programs=3, out_dtype=torch.float32)  # fmt: skip
        assert c.dtype == torch.float32 and tuple(c.shape) == (m, n)
        assert np.abs(c.numpy() - ref).max() <= 2.0**-18 * np.abs(ref).max()


def test_the_operator_traces_the_split_schedules_without_a_graph_break():
    torch = pytest.importorskip("torch")
    m, n, k = 64, 64, 128
    a, sa = gemm_opt.quantize_fp8(torch.randn(m, k))
    w, sw = gemm_opt.quantize_fp8(torch.randn(n, k))

    def f(a, w, sa, sw):
        return gemm_opt.matmul(a, w.t(), scale_a=sa, scale_b=sw.t(), schedule="stream-k",
                               reduction="tree", num_programs=3)  # fmt: skip

    got = torch.compile(f, fullgraph=True, backend="eager")(a, w, sa, sw)
    assert torch.equal(got, f(a, w, sa, sw))


def _call(**over):
    a = np.zeros((70, 300), E4M3)
    w = np.zeros((90, 300), E4M3)
    kw = dict(scale_a=np.ones((70, 1), np.float32), scale_b=np.ones((1, 90), np.float32),
              schedule="stream-k", num_programs=3) | over  # fmt: skip
    return gemm_opt.matmul(a, w.T, **kw)


@pytest.mark.parametrize(
    ("over", "error", "match"),
    [
        (dict(schedule="persistent", reduction="linear"), ValueError,
         "reduction='linear' needs schedule='stream-k'"),
        (dict(schedule="split-k", reduction="atomic"), ValueError,
         "reduction='atomic' needs schedule='stream-k'"),
        (dict(reduction="fast"), ValueError, "reduction must be one of 'atomic', 'linear', "
         "'tree' for stream-K; got 'fast'"),
        (dict(reduction=1), TypeError, "reduction: expected a string or None, got int"),
        (dict(schedule="work-stealing", num_xcds=4, num_programs=3), ValueError,
         "work stealing needs at least one program per chiplet: num_programs=3 < num_xcds=4"),
        (dict(num_xcds=0), ValueError, "num_xcds must be at least 1, got 0"),
        (dict(num_xcds=True), TypeError, "num_xcds: expected an int, got bool"),
        (dict(schedule="auto"), ValueError, "schedule: a scaled GEMM runs"),
        (dict(num_programs=0), ValueError, "num_programs must be at least 1, got 0"),
    ],
)  # fmt: skip
def test_bad_combinations_name_the_argument(over, error, match):
    with pytest.raises(error, match=re.escape(match)):
        _call(**over)


def test_every_kind_is_built_and_bundled():
    from dataclasses import replace

    from gemm_opt.kernels import h100_configs as h100
    from gemm_opt.kernels.build_bundles import FP8_SPLIT_SCHEDULES, fp8_bundle_specs

    assert set(FP8_KINDS) == set(Kind)
    assert {kind for kind, _ in FP8_SPLIT_SCHEDULES} | {"data-parallel", "persistent"} == set(
        FP8_KINDS
    )
    bundled = {s.name for s in fp8_bundle_specs()}
    for (schedule, reduction), recipe in (
        (sr, r) for sr in SPLIT for r in ("tensorwise", "rowwise", "block128")
    ):
        for cfg in h100.FP8_GPU_CONFIGS.values():
            spec = scaled.scaled_spec(schedule, "f8e4m3", cfg, recipe, "bfloat16", gpu=True,
                                      reduction=reduction)  # fmt: skip
            for twin in (spec, replace(spec, aligned=True), replace(spec, aligned=True, tma=True)):
                assert twin.name in bundled, twin.name


@pytest.mark.parametrize("recipe", ["rowwise", "block128"])
def test_cuda90_linear_stream_k_kernel_has_wgmma_fixup_and_no_local_memory(recipe):
    from dataclasses import replace

    from gemm_opt.kernels import h100_configs as h100
    from gemm_opt.kernels.build_bundles import _build_one

    cfg = h100.FP8_GPU_CONFIGS["mid"]
    spec = scaled.scaled_spec("stream-k", "f8e4m3", cfg, recipe, "bfloat16", gpu=True,
                              reduction="linear")  # fmt: skip
    kernel = _build_one(replace(spec, aligned=True, tma=True), "cuda:90")
    mix = load_script(ROOT / "benchmarks" / "h100" / "sass_mix.py")
    row = mix.mix(kernel.binary, mix.cuobjdump())
    assert row["HGMMA"] > 0 and row["HMMA"] == 0 and row["UTMALDG"] > 0
    assert row["LDL/STL"] == 0  # the 128x128 fp32 partial and its fix-up stay in registers


@pytest.mark.parametrize(
    ("target", "instr"),
    [("gfx1250", "v_wmma_scale_f32_16x16x128_f8f6f4"), ("gfx950", "v_mfma_scale_f32_32x32x64")],
)
@pytest.mark.parametrize(("schedule", "reduction"), [("stream-k", "tree"), ("split-k", None)])
def test_mx32_split_kernels_lower_to_the_block_scaled_instruction(
    target, instr, schedule, reduction
):
    from gemm_opt.kernels.schedule_gemm import build_gemm_module
    from gemm_opt.lowering.compile import compile_tile_module
    from gemm_opt.runtime.scaled import MODEL_MX32_CONFIG as cfg

    module = build_gemm_module(
        kind=schedule, reduction=reduction, dtype="f8e4m3", block_m=cfg.block_m,
        block_n=cfg.block_n, block_k=cfg.block_k, num_warps=cfg.num_warps, trans_b=True,
        scale="mx32", target=target,
    )  # fmt: skip
    asm = compile_tile_module(module, target).asm["amdgcn"]
    assert instr in asm
    scratch = [
        ln.split("ScratchSize:")[1].strip() for ln in asm.splitlines() if "ScratchSize:" in ln
    ]
    assert scratch and all(v == "0" for v in scratch)  # no spills
