"""Fused epilogues of ``tile.gemm_schedule``: every schedule kind on the model against
numpy in float64 (hypothesis over shapes and epilogues), grouped forms, atomic
stream-K's bias added exactly once, the verifier's refusals, and every target.

C is fp32 in the drawn cases, so the tolerance is fp32's (products of fp16 inputs
are exact in fp32; the sum and the epilogue round a few times): a wrong
activation (gelu for gelu-tanh differs by up to 5e-4), a bias or scale on the
wrong axis, a missing or doubled accumulate are all far outside it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gemm_opt.core.modes import ACTIVATIONS, Activation
from gemm_opt.core.schedules import EpilogueSpec, KernelSpec, workspace_layout
from gemm_opt.kernels import cache
from gemm_opt.kernels.schedule_gemm import build_gemm_module
from gemm_opt.lowering.compile import compile_tile_module
from gemm_opt.model.interpreter import run_function

BM = BN = BK = 32
#: (kind, reduction) of every schedule.
SCHEDULES = [
    ("data-parallel", None),
    ("persistent", None),
    ("work-stealing", None),
    ("stream-k", "linear"),
    ("stream-k", "tree"),
    ("stream-k", "atomic"),
    ("split-k", None),
]
_erf = np.vectorize(math.erf, otypes=[np.float64])
#: The elementwise activations (swiglu, of two accumulators, has its own tests below).
ELEMENTWISE = tuple(a for a in ACTIVATIONS if a != Activation.SWIGLU)


def activate(x: np.ndarray, act: str) -> np.ndarray:
    """The activations in float64, as torch defines them."""
    if act == Activation.RELU:
        return np.maximum(x, 0.0)
    if act == Activation.GELU:
        return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))
    if act == Activation.GELU_TANH:
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    if act == Activation.SILU:
        return x / (1.0 + np.exp(-x))
    return x


def _run(
    kind: str,
    reduction: str | None,
    ep: EpilogueSpec,
    m: int,
    n: int,
    k: int,
    *,
    out: str | None = "fp32",
    programs: int = 4,
    seed: int | None = None,
    rng: np.random.Generator,
    integers: bool = False,
) -> tuple[np.ndarray, np.ndarray, float]:
    """(C from the model, the float64 reference, the tolerance) of one launch."""
    spec = KernelSpec(kind, reduction, "none", "fp16", BM, BN, BK, 2, 4, None, out_dtype=out,
                      epilogue=ep)  # fmt: skip

    def draw(*shape: int) -> np.ndarray:
        if integers:
            return rng.integers(-3, 4, shape).astype(np.float64)
        return rng.standard_normal(shape)

    a, b = draw(m, k).astype(np.float16), draw(k, n).astype(np.float16)
    c_type = np.float32 if out == "fp32" else np.float16
    old = draw(m, n).astype(c_type)
    bias = draw(n).astype(np.float16 if ep.bias == "fp16" else np.float32)
    rows, cols = draw(m).astype(np.float32), draw(n).astype(np.float32)
    c = old.copy() if ep.accumulate or reduction == "atomic" else np.full((m, n), np.nan, c_type)
    if reduction == "atomic" and not ep.accumulate:
        c[:] = 0  # the host zeroes C for atomic stream-K
    tiles = math.ceil(m / BM) * math.ceil(n / BN)
    grid = {"data-parallel": tiles, "split-k": tiles * 3}.get(kind, programs)
    layout = workspace_layout(kind, reduction, grid, 1, BM, BN)
    values = {
        "a": a, "b": b, "c": c, "M": m, "N": n, "K": k, "lda": k, "ldb": n, "ldc": n,
        "sync": np.zeros(max(layout.sync_elements, 1), np.int32),
        "partials": np.full(max(layout.partial_elements, 1), np.nan, np.float32),
        "bias": bias, "row_scale": rows, "col_scale": cols,
    }  # fmt: skip
    cache.run_on_model(spec, values, grid=grid, num_resident=programs, seed=seed)
    y = a.astype(np.float64) @ b.astype(np.float64)
    size = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    if ep.row_scale:
        y, size = y * rows[:, None], size * np.abs(rows[:, None])
    if ep.col_scale:
        y, size = y * cols[None, :], size * np.abs(cols[None, :])
    if ep.bias is not None:
        y, size = y + bias.astype(np.float64), size + np.abs(bias.astype(np.float64))
    y = activate(y, ep.activation)
    if ep.accumulate:
        y, size = y + old.astype(np.float64), size + np.abs(old.astype(np.float64))
    u = 2.0**-23 if out == "fp32" else 2.0**-10
    tol = 2 * u * np.abs(y) + (k + 16) * 2.0**-23 * (size + 1)
    if reduction == "atomic":  # each contributor's add into C rounds to C's type
        tol += (programs + 2) * u * (size + 1)
    return c.astype(np.float64), y, tol


def _epilogues(atomic: bool):
    acts = st.just(Activation.NONE) if atomic else st.sampled_from(ELEMENTWISE)
    return st.builds(
        EpilogueSpec,
        activation=acts,
        bias=st.sampled_from([None, "fp16", "fp32"]),
        accumulate=st.booleans(),
        row_scale=st.booleans(),
        col_scale=st.booleans(),
    )


@st.composite
def _cases(draw):
    kind, reduction = draw(st.sampled_from(SCHEDULES))
    ep = draw(_epilogues(reduction == "atomic"))
    shape = draw(st.tuples(st.integers(1, 80), st.integers(1, 80), st.integers(0, 130)))
    return kind, reduction, ep, shape, draw(st.integers(0, 2**16))


@settings(max_examples=40, deadline=None)
@given(_cases())
def test_epilogue_equals_numpy(case) -> None:
    kind, reduction, ep, (m, n, k), seed = case
    c, ref, tol = _run(kind, reduction, ep, m, n, k, rng=np.random.default_rng(seed), seed=seed)
    bad = np.abs(c - ref) > tol
    assert not bad.any(), f"{np.argwhere(bad)[:4]}: {c[bad][:4]} vs {ref[bad][:4]}"


@pytest.mark.parametrize(("kind", "reduction"), SCHEDULES)
def test_fp16_output_every_kind(kind: str, reduction: str | None) -> None:
    acts = Activation.NONE if reduction == "atomic" else Activation.GELU_TANH
    ep = EpilogueSpec(activation=acts, bias="fp16", accumulate=True)
    c, ref, tol = _run(kind, reduction, ep, 70, 50, 96, out=None, rng=np.random.default_rng(1))
    assert np.all(np.abs(c - ref) <= tol)


@pytest.mark.parametrize("programs", [3, 5, 7])
def test_atomic_stream_k_adds_the_bias_once(programs: int) -> None:
    """Integer inputs: every partial and bias sum is exact, so a bias added by
    every contributor of a split tile (or by none) shows as an exact difference."""
    ep = EpilogueSpec(bias="fp32", row_scale=True)
    c, ref, _ = _run("stream-k", "atomic", ep, 64, 64, 160, out="fp32", programs=programs,
                     rng=np.random.default_rng(programs), integers=True)  # fmt: skip
    np.testing.assert_array_equal(c, ref)


def test_every_activation_differs_from_the_others() -> None:
    """The reference cases must tell the activations apart (else the test above
    could not catch one lowered as another)."""
    x = np.linspace(-3, 3, 61)
    outs = {a: activate(x, a) for a in ELEMENTWISE}
    for a in ELEMENTWISE:
        for b in ELEMENTWISE:
            if a != b:
                assert np.abs(outs[a] - outs[b]).max() > 1e-4, (a, b)


def test_grouped_m_bias_per_group_and_activation() -> None:
    """Grouped "m": group g's rows get row g of the (G, N) bias."""
    lens = [0, 37, 5, 0, 40]
    g, k, n = len(lens), 48, 40
    ep = EpilogueSpec(activation=Activation.SILU, bias="fp32", accumulate=True)
    spec = KernelSpec("persistent", None, "m", "fp16", BM, BN, BK, 2, 4, None,
                      out_dtype="fp32", epilogue=ep)  # fmt: skip
    rng = np.random.default_rng(3)
    m = sum(lens)
    a = rng.standard_normal((m, k)).astype(np.float16)
    w = rng.standard_normal((g, k, n)).astype(np.float16)
    bias = rng.standard_normal((g, n)).astype(np.float32)
    old = rng.standard_normal((m, n)).astype(np.float32)
    c = old.copy()
    values = {
        "a": a, "b": w, "c": c, "M": m, "N": n, "K": k, "lda": k, "ldb": n, "ldc": n,
        "group_lens": np.asarray(lens, np.int32), "num_groups": g, "bias": bias,
    }  # fmt: skip
    cache.run_on_model(spec, values, grid=3, num_resident=3, seed=5)
    ref = np.zeros((m, n))
    start = 0
    for i, length in enumerate(lens):
        rows = slice(start, start + length)
        ref[rows] = a[rows].astype(np.float64) @ w[i].astype(np.float64) + bias[i]
        start += length
    ref = activate(ref, Activation.SILU) + old
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4)


def test_grouped_k_accumulates_into_fp32() -> None:
    """wgrad into an fp32 ``main_grad``: out[g] += a[rows of g].T @ b[rows of g]."""
    lens = [3, 0, 50]
    g, m, n = len(lens), 40, 36
    spec = KernelSpec("persistent", None, "k", "bf16", BM, BN, BK, 2, 4, None,
                      out_dtype="fp32", epilogue=EpilogueSpec(accumulate=True))  # fmt: skip
    rng = np.random.default_rng(4)
    s = sum(lens)
    a = rng.integers(-3, 4, (s, m)).astype(np.float32)
    b = rng.integers(-3, 4, (s, n)).astype(np.float32)
    old = rng.integers(-50, 50, (g * m, n)).astype(np.float32)
    c = old.copy()
    values = {
        "a": a, "b": b, "c": c, "M": m, "N": n, "K": s, "lda": m, "ldb": n, "ldc": n,
        "group_lens": np.asarray(lens, np.int32), "num_groups": g,
    }  # fmt: skip
    cache.run_on_model(spec, values, grid=4, num_resident=4, seed=None)
    ref = old.reshape(g, m, n).copy()
    start = 0
    for i, length in enumerate(lens):
        ref[i] += a[start : start + length].T @ b[start : start + length]
        start += length
    np.testing.assert_array_equal(c.reshape(g, m, n), ref)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(kind="stream-k", reduction="atomic", epilogue=EpilogueSpec(activation="relu")),
         "atomic stream-K adds partials"),
        (dict(kind="persistent", grouped="k", epilogue=EpilogueSpec(bias="bf16")),
         "grouped 'k'"),
        (dict(kind="persistent", grouped="k", epilogue=EpilogueSpec(activation="silu")),
         "grouped 'k'"),
        (dict(out_dtype="bf16"), "out_dtype must be None"),
    ],
)  # fmt: skip
def test_builder_refuses(kwargs, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_gemm_module(**kwargs)


def test_epilogue_spec_refuses() -> None:
    with pytest.raises(ValueError, match="activation must be one of"):
        EpilogueSpec(activation="tanh")
    with pytest.raises(ValueError, match="bias must be None or one of"):
        EpilogueSpec(bias="int8")
    with pytest.raises(TypeError, match="epilogue must be an EpilogueSpec"):
        build_gemm_module(epilogue="relu")  # type: ignore[arg-type]


def test_bundle_names_differ_per_epilogue() -> None:
    def name(act: str, bias: str | None) -> str:
        ep = EpilogueSpec(activation=act, bias=bias)
        return KernelSpec("persistent", None, "none", "bf16", 128, 128, 64, 8, 8, None,
                          epilogue=ep).name  # fmt: skip

    names = {name(a, b) for a in ACTIVATIONS for b in (None, "bf16")}
    assert len(names) == 2 * len(ACTIVATIONS)


@pytest.mark.parametrize("target", ["cuda:90", "gfx1250", "gfx950", "gfx942"])
def test_compiles_for_every_target(target: str) -> None:
    ep = EpilogueSpec(activation="gelu", bias="bf16", accumulate=True, row_scale=True,
                      col_scale=True)  # fmt: skip
    module = build_gemm_module(kind="stream-k", reduction="linear", dtype="bf16", block_m=64,
                               block_n=64, target=target, epilogue=ep)  # fmt: skip
    asm = compile_tile_module(module, target).asm
    code = asm["ptx"] if target == "cuda:90" else asm["amdgcn"]
    # erf and exp reach the ISA (libdevice's erf on PTX has ex2 in it; AMD: v_exp).
    assert ("ex2.approx" in code) if target == "cuda:90" else ("v_exp" in code)


def test_bias_broadcast_loads_in_the_accumulator_layout() -> None:
    """cuda:90: the bias vector is read in the MMA layout (no layout conversion,
    no shared-memory round trip): the TTGIR has the store's conversion only."""

    def converts(ep: EpilogueSpec) -> int:
        module = build_gemm_module(kind="persistent", dtype="bf16", block_m=128, block_n=128,
                                   block_k=64, num_warps=8, target="cuda:90", aligned=True,
                                   tma=True, epilogue=ep)  # fmt: skip
        return compile_tile_module(module, "cuda:90").asm["ttgir"].count("ttg.convert_layout")

    assert converts(EpilogueSpec(bias="bf16", activation="gelu-tanh")) == converts(EpilogueSpec())


# ---- SwiGLU ------------------------------------------------------------------------------


def _swiglu(
    module_or_spec,
    *,
    trans_b: bool,
    grouped: bool = False,
    m: int = 70,
    n: int = 40,
    k: int = 96,
    seed: int | None = None,
) -> None:
    """Run a SwiGLU kernel (B's halves ``[gate | up]``, bias ``[gate | up]``; grouped:
    per group) on the model against float64 ``silu(x W_g + b_g) * (x W_u + b_u)``."""
    lens = [0, 37, 5, 28] if grouped else [m]
    g = len(lens)
    rng = np.random.default_rng(7)
    a = rng.standard_normal((m, k)).astype(np.float16)
    w = rng.standard_normal((g, k, 2 * n)).astype(np.float16)
    bias = rng.standard_normal((g, 2 * n)).astype(np.float32)
    b = np.ascontiguousarray(w.transpose(0, 2, 1)) if trans_b else w
    c = np.full((m, n), np.nan, np.float32)
    values = {
        "a": a, "b": b if grouped else b[0], "c": c, "M": m, "N": n, "K": k, "lda": k,
        "ldb": k if trans_b else 2 * n, "ldc": n, "bias": bias if grouped else bias[0],
        "sync": np.zeros(1, np.int32),
    }  # fmt: skip
    if grouped:
        values |= {"group_lens": np.asarray(lens, np.int32), "num_groups": g}
    if isinstance(module_or_spec, KernelSpec):
        tiles = math.ceil(m / BM) * math.ceil(n / BN)
        grid = tiles if module_or_spec.kind == "data-parallel" else 3
        cache.run_on_model(module_or_spec, values, grid=grid, num_resident=3, seed=seed)
    else:
        names = KernelSpec(
            "persistent",
            None,
            "none",
            "fp16",
            BM,
            BN,
            BK,
            2,
            4,
            None,
            epilogue=EpilogueSpec(activation="swiglu", bias="fp32"),
        ).arg_names
        run_function(module_or_spec, None, [values[x] for x in names], (3, 1, 1),
                     arg_names=list(names), num_resident=3, seed=seed)  # fmt: skip
    ref = np.zeros((m, 2 * n))
    start = 0
    for i, length in enumerate(lens):
        rows = slice(start, start + length)
        ref[rows] = a[rows].astype(np.float64) @ w[i].astype(np.float64) + bias[i]
        start += length
    gate, up = ref[:, :n], ref[:, n:]
    want = gate / (1 + np.exp(-gate)) * up
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("kind", ["data-parallel", "persistent", "work-stealing"])
@pytest.mark.parametrize("warps", [1, 4])  # the blocks body, the pipelined one
@pytest.mark.parametrize("trans_b", [False, True])
def test_swiglu_equals_numpy(kind: str, warps: int, trans_b: bool) -> None:
    ep = EpilogueSpec(activation="swiglu", bias="fp32")
    spec = KernelSpec(kind, None, "none", "fp16", BM, BN, BK, 2, warps, None,
                      trans_b=trans_b, out_dtype="fp32", epilogue=ep)  # fmt: skip
    _swiglu(spec, trans_b=trans_b, seed=3)


@pytest.mark.parametrize("trans_b", [False, True])
def test_grouped_swiglu_per_group_weights_and_bias(trans_b: bool) -> None:
    ep = EpilogueSpec(activation="swiglu", bias="fp32")
    spec = KernelSpec("persistent", None, "m", "fp16", BM, BN, BK, 2, 4, None,
                      trans_b=trans_b, out_dtype="fp32", epilogue=ep)  # fmt: skip
    _swiglu(spec, trans_b=trans_b, grouped=True)


def test_swiglu_equals_numpy_after_every_cuda90_pass() -> None:
    """The cuda:90 tile passes (tile-pipeline-mma makes both MMAs of a K step
    asynchronous) keep the two accumulators' values."""
    from support.tile_build import after_passes

    from gemm_opt.lowering.pipelines import tile_passes

    ep = EpilogueSpec(activation="swiglu", bias="fp32")
    module = build_gemm_module(kind="persistent", block_m=BM, block_n=BN, block_k=BK,
                               num_warps=4, target="cuda:90", trans_b=True, out_dtype="fp32",
                               epilogue=ep)  # fmt: skip
    passes = tile_passes("cuda:90")
    for i in range(1, len(passes) + 1):
        _swiglu(after_passes(module, passes[:i]), trans_b=True, seed=i)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(kind="stream-k", reduction="linear"), "needs each tile's two sums"),
        (dict(kind="split-k"), "needs each tile's two sums"),
    ],
)  # fmt: skip
def test_swiglu_refusals(kwargs, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_gemm_module(**kwargs, epilogue=EpilogueSpec(activation="swiglu"))


@pytest.mark.parametrize("target", ["cuda:90", "gfx1250", "gfx950", "gfx942"])
def test_swiglu_compiles_for_every_target(target: str) -> None:
    module = build_gemm_module(kind="persistent", dtype="bf16", target=target, trans_b=True,
                               epilogue=EpilogueSpec(activation="swiglu", bias="bf16"))  # fmt: skip
    asm = compile_tile_module(module, target).asm
    if target == "cuda:90":  # both MMAs are wgmmas (each reads A from shared memory)
        assert "wgmma.mma_async" in asm["ptx"] and "mma.sync" not in asm["ptx"]
