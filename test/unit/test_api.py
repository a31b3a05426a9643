"""The public GEMM API: argument checks, the model path, the lazy package exports.

Every bad input is a TypeError/ValueError naming the argument and what was
expected, raised before anything is built. The model path is checked against
a float64 reference with the tolerance of fp32 accumulation and one final
rounding: ``|c - ref| <= 2 u |ref| + (K + 2) 2^-23 (|A| |B|)`` element-wise, u
the output type's unit roundoff (plus its subnormal spacing, where rounding is
absolute); atomic stream-K, whose ``r`` contributors
each round a running sum in the output type, adds ``r u (|A| |B|)``.

Every schedule runs under seeded interleavings of its resident programs; the
deterministic reductions give identical bits across them.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

import gemm_opt

#: Interleavings of the model's resident programs: program order, then seeded ones.
SEEDS = (None, 1, 2, 3)
U = {"fp16": 2.0**-11, "bf16": 2.0**-8}
#: The output type's subnormal spacing: below the normal range rounding is absolute.
TINY = {"fp16": 2.0**-24, "bf16": 2.0**-133}


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _bound(a64: np.ndarray, b64: np.ndarray, dtype: str, contributors: int = 1) -> np.ndarray:
    """Error bound of fp32 accumulation and the roundings to the output type.

    One final rounding: ``2 u |ref|``. Atomic stream-K adds ``contributors``
    partials into C in its own type, each add rounding a running sum no larger
    than ``|A| |B|``: ``contributors u (|A| |B|)`` more.
    """
    k = a64.shape[-1]
    mag = np.abs(a64) @ np.abs(b64)
    ref = a64 @ b64
    atomic = contributors * U[dtype] * mag if contributors > 1 else 0.0
    return 2 * U[dtype] * np.abs(ref) + (k + 2) * 2.0**-23 * mag + atomic + TINY[dtype]


def _check(c: np.ndarray, a64: np.ndarray, b64: np.ndarray, dtype: str, contributors=1) -> None:
    c64 = np.asarray(c, dtype=np.float64)
    assert np.isfinite(c64).all(), "every element written"
    err = np.abs(c64 - a64 @ b64)
    assert (err <= _bound(a64, b64, dtype, contributors)).all(), float(err.max())


# ---- validation ------------------------------------------------------------------------

A = np.zeros((8, 16), np.float16)
B = np.zeros((16, 4), np.float16)
G3 = np.zeros((3, 16, 4), np.float16)


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: gemm_opt.matmul(A, np.zeros((15, 4), np.float16)), ValueError, r"b: .*K = 16"),
        (lambda: gemm_opt.matmul(A[0], B), ValueError, r"a: expected an array of shape"),
        (lambda: gemm_opt.matmul(A.astype(np.float32), B), TypeError, r"a: .*ml_dtypes"),
        (lambda: gemm_opt.matmul(A, B.astype(np.float64)), TypeError, r"b: expected float16"),
        (lambda: gemm_opt.matmul(A, [[1.0]]), TypeError, r"b: expected a numpy array"),
        (lambda: gemm_opt.matmul(A, torch.zeros(16, 4)), TypeError, r"pass both alike"),
        (lambda: gemm_opt.matmul(A, B, schedule="split-n"), ValueError, r"schedule must be"),
        (
            lambda: gemm_opt.matmul(A, B, schedule="auto", reduction="tree"),
            ValueError,
            r"reduction='tree' with schedule='auto': auto picks the reduction",
        ),
        (lambda: gemm_opt.matmul(A, B, schedule=None), ValueError, r"must be 'auto' or one of"),
        (
            lambda: gemm_opt.matmul(A, B, reduction="linear"),
            ValueError,
            r"reduction='linear' needs schedule='stream-k'",
        ),
        (
            lambda: gemm_opt.matmul(A, B, schedule="stream-k", reduction="fast"),
            ValueError,
            r"reduction must be one of 'atomic', 'linear', 'tree'",
        ),
        (lambda: gemm_opt.matmul(A, B, num_programs=0), ValueError, r"num_programs must be"),
        (lambda: gemm_opt.matmul(A, B, num_programs=2.0), TypeError, r"num_programs: expected"),
        (
            lambda: gemm_opt.matmul(A, B, schedule="work-stealing", num_programs=2, num_xcds=8),
            ValueError,
            r"one program per chiplet",
        ),
        (lambda: gemm_opt.matmul(A, B, config={"block_q": 4}), ValueError, r"unknown key"),
        (lambda: gemm_opt.matmul(A, B, config={"block_m": 48}), ValueError, r"power of two"),
        (lambda: gemm_opt.matmul(A, B, config={"block_k": 8}), ValueError, r"at least 16"),
        (lambda: gemm_opt.matmul(A, B, config=(64, 64)), TypeError, r"config: expected"),
        (
            lambda: gemm_opt.matmul(A, B, config={"block_k": 16}),
            ValueError,
            r"config\.block_k must be a multiple of 32",
        ),
        (
            # 16 rows fold the warps onto N only while N has columns for them
            lambda: gemm_opt.matmul(A, B, config={"block_m": 16, "block_n": 32, "num_warps": 4}),
            ValueError,
            r"config\.block_m must be a multiple of 32 .* does not split over the warps",
        ),
        (
            lambda: gemm_opt.matmul(A, B, config={"num_stages": 7}),
            ValueError,
            r"config\.num_stages must be 2 to 6 \(or None\)",
        ),
        (
            lambda: gemm_opt.grouped_matmul(
                A, G3.transpose(0, 2, 1), [4, 4, 0], trans_b=True, config={"num_stages": 7}
            ),
            ValueError,
            r"config\.num_stages must be 2 to 6 \(or None\)",
        ),
        (lambda: gemm_opt.matmul(A, B, seed="x"), TypeError, r"seed: expected an int"),
        (
            lambda: gemm_opt.matmul(A, B, out=np.zeros((8, 5), np.float16)),
            ValueError,
            r"out: expected shape \(8, 4\)",
        ),
        (
            lambda: gemm_opt.matmul(A, B, out=np.zeros((8, 4), np.float64)),
            TypeError,
            r"out: expected fp16",
        ),
        (
            lambda: gemm_opt.grouped_matmul(A, G3, [3, 3, 3]),
            ValueError,
            r"group_lens: the lengths sum to 9, but a has 8 rows",
        ),
        (
            lambda: gemm_opt.grouped_matmul(A, G3, [4, 5, -1]),
            ValueError,
            r"group_lens\[2\] is -1",
        ),
        (
            lambda: gemm_opt.grouped_matmul(A, G3, [4, 4]),
            ValueError,
            r"expected 3 lengths \(one per group of b\)",
        ),
        (
            lambda: gemm_opt.grouped_matmul(A, G3, np.array([4.0, 4.0, 0.0])),
            TypeError,
            r"group_lens: expected integer elements",
        ),
        (
            lambda: gemm_opt.grouped_matmul(A, G3, "444"),
            TypeError,
            r"group_lens: expected a 1-D integer",
        ),
        (
            lambda: gemm_opt.grouped_matmul(A, np.zeros((3, 4, 16), np.float16), [4, 4, 0]),
            ValueError,
            r"b: expected shape \(G, K, N\) with K = 16.*trans_b=True",
        ),
        (
            lambda: gemm_opt.grouped_matmul(A, G3, [4, 4, 0], trans_b=True),
            ValueError,
            r"b: expected shape \(G, N, K\) with K = 16",
        ),
        (
            lambda: gemm_opt.grouped_matmul(A, G3, [4, 4, 0], trans_b=1),
            TypeError,
            r"trans_b: expected a bool",
        ),
        (
            lambda: gemm_opt.grouped_matmul_variable_k(A, np.zeros((7, 4), np.float16), [8]),
            ValueError,
            r"b: expected shape \(S, N\) with S = 8",
        ),
        (
            lambda: gemm_opt.grouped_matmul_variable_k(A, B[:8], [5, 2]),
            ValueError,
            r"sum to 7, but a has 8 rows",
        ),
        (
            lambda: gemm_opt.matmul(torch.zeros(8, 16, dtype=torch.float16), torch.zeros(8, 4)),
            TypeError,
            r"b: expected float16 or bfloat16 elements, got float32",
        ),
        (
            lambda: gemm_opt.matmul(
                torch.zeros(8, 16, dtype=torch.bfloat16), torch.zeros(16, 4, dtype=torch.float16)
            ),
            TypeError,
            r"b: expected bf16 elements like a, got fp16",
        ),
    ],
)
def test_bad_input_names_the_argument(call, exc, match) -> None:
    with pytest.raises(exc, match=match):
        call()


def test_keyword_names_are_the_documented_ones() -> None:
    import inspect

    common = ["schedule", "reduction", "num_programs", "num_xcds", "config", "out", "seed"]
    sig = inspect.signature(gemm_opt.matmul)
    assert list(sig.parameters) == ["a", "b", *common, "scale_a", "scale_b", "out_dtype",
                                    "bias", "activation", "accumulate", "row_scale", "col_scale"]  # fmt: skip
    assert sig.parameters["schedule"].default == "data-parallel"
    assert sig.parameters["num_xcds"].default == 1
    g = inspect.signature(gemm_opt.grouped_matmul)
    epilogue = ["bias", "activation", "accumulate"]
    scaled = ["scale_a", "scale_b", "out_dtype"]
    assert list(g.parameters) == [
        "a", "b", "group_lens", "trans_b", *common, "validate", *epilogue, *scaled
    ]  # fmt: skip
    v = inspect.signature(gemm_opt.grouped_matmul_variable_k)
    assert list(v.parameters) == ["a", "b", "group_lens", *common, "validate", "accumulate"]
    assert g.parameters["validate"].default is False is v.parameters["validate"].default


# ---- the model path --------------------------------------------------------------------


@pytest.mark.parametrize(
    "m,n,k",
    [(70, 50, 40), (64, 64, 96), (1, 33, 5), (17, 3, 130), (5, 7, 0)],
)
def test_numpy_fp16_data_parallel_equals_numpy(m: int, n: int, k: int) -> None:
    rng = _rng(m * 1000 + n + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = gemm_opt.matmul(a, b)
    assert c.dtype == np.float16 and c.shape == (m, n)
    _check(c, a.astype(np.float64), b.astype(np.float64), "fp16")
    if k == 0:
        assert (c == 0).all()


def test_cpu_torch_bf16_runs_on_the_model_and_returns_torch() -> None:
    g = torch.Generator().manual_seed(1)
    a = torch.randn(40, 72, generator=g).to(torch.bfloat16)
    b = torch.randn(72, 24, generator=g).to(torch.bfloat16)
    c = gemm_opt.matmul(a, b, config={"block_m": 32, "block_n": 32, "block_k": 32})
    assert isinstance(c, torch.Tensor) and c.dtype == torch.bfloat16 and c.shape == (40, 24)
    _check(c.double().numpy(), a.double().numpy(), b.double().numpy(), "bf16")


def test_out_receives_the_result() -> None:
    rng = _rng(3)
    a = rng.standard_normal((20, 30)).astype(np.float16)
    b = rng.standard_normal((30, 10)).astype(np.float16)
    out = np.zeros((20, 10), np.float16)
    c = gemm_opt.matmul(a, b, out=out)
    assert c is out
    _check(out, a.astype(np.float64), b.astype(np.float64), "fp16")


def test_non_contiguous_numpy_inputs_are_read_correctly() -> None:
    """A column-major A and a B with a sliced leading dimension are read as they lie
    (the transposed kernel, the row stride as ``ldb``); a matrix with no unit stride
    is refused, naming it, as on the GPU."""
    rng = _rng(4)
    a = rng.standard_normal((30, 20)).astype(np.float16).T  # (20, 30), column-major
    b = rng.standard_normal((30, 12)).astype(np.float16)[:, :6]
    c = gemm_opt.matmul(a, b)
    _check(c, a.astype(np.float64), b.astype(np.float64), "fp16")
    with pytest.raises(ValueError, match=r"b: a \(30, 6\) matrix with strides \(12, 2\)"):
        gemm_opt.matmul(a, rng.standard_normal((30, 12)).astype(np.float16)[:, ::2])


SCHEDULES = [
    ("persistent", None),
    ("work-stealing", None),
    ("stream-k", "atomic"),
    ("stream-k", "linear"),
    ("stream-k", "tree"),
]


@pytest.mark.parametrize("schedule,reduction", SCHEDULES)
def test_every_schedule_equals_numpy(schedule, reduction) -> None:
    rng = _rng(5)
    a = rng.standard_normal((70, 200)).astype(np.float16)
    b = rng.standard_normal((200, 50)).astype(np.float16)
    kw = dict(schedule=schedule, reduction=reduction, num_programs=3, num_xcds=1)
    results = [gemm_opt.matmul(a, b, seed=s, **kw) for s in SEEDS]
    contributors = 8 if reduction == "atomic" else 1
    for c in results:
        _check(c, a.astype(np.float64), b.astype(np.float64), "fp16", contributors)
    if reduction != "atomic":  # deterministic reductions: identical bits across interleavings
        assert all(np.array_equal(results[0], c) for c in results[1:])


def test_grouped_equals_numpy() -> None:
    rng = _rng(6)
    lens = [0, 19, 0, 40, 1, 0]
    a = rng.standard_normal((sum(lens), 24)).astype(np.float16)
    b = rng.standard_normal((len(lens), 24, 20)).astype(np.float16)
    c = gemm_opt.grouped_matmul(a, b, lens)
    starts = np.cumsum([0, *lens])
    for g in range(len(lens)):
        rows = slice(starts[g], starts[g + 1])
        _check(c[rows], a[rows].astype(np.float64), b[g].astype(np.float64), "fp16")
    ct = gemm_opt.grouped_matmul(a, np.ascontiguousarray(b.transpose(0, 2, 1)), lens, trans_b=True)
    assert np.array_equal(c, ct)
    w = gemm_opt.grouped_matmul_variable_k(a, c, lens)
    for g in range(len(lens)):
        rows = slice(starts[g], starts[g + 1])
        if lens[g] == 0:
            assert (w[g] == 0).all(), "an empty group's wgrad is exactly zero"
        else:
            _check(w[g], a[rows].astype(np.float64).T, c[rows].astype(np.float64), "fp16")


# ---- the package -----------------------------------------------------------------------


def test_import_gemm_opt_stays_cheap_and_the_api_loads_on_use() -> None:
    code = (
        "import sys, gemm_opt\n"
        "heavy = ('numpy', 'torch', 'torch_mlir', 'triton', 'gemm_opt.api')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "f = gemm_opt.matmul\n"
        "print(f.__module__, sorted(m for m in heavy[:4] if m in sys.modules))\n"
        "print('matmul' in dir(gemm_opt))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:3] == ["[]", "gemm_opt.api []", "True"]


def test_unknown_attributes_still_fail() -> None:
    with pytest.raises(AttributeError, match="no attribute 'matmull'"):
        gemm_opt.matmull  # noqa: B018


def test_numpy_bf16_through_ml_dtypes() -> None:
    import ml_dtypes

    rng = _rng(8)
    a = rng.standard_normal((33, 70)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((70, 45)).astype(ml_dtypes.bfloat16)
    c = gemm_opt.matmul(a, b)
    assert c.dtype == ml_dtypes.bfloat16 and c.shape == (33, 45)
    _check(c.astype(np.float64), a.astype(np.float64), b.astype(np.float64), "bf16")


def test_grouped_autograd_matches_float64() -> None:
    g = torch.Generator().manual_seed(2)
    lens = torch.tensor([5, 0, 11])
    a = torch.randn(16, 24, generator=g).half().requires_grad_()
    w = torch.randn(3, 24, 8, generator=g).half().requires_grad_()
    y = gemm_opt.grouped_matmul(a, w, lens)
    dy = torch.randn(16, 8, generator=g).half()
    y.backward(dy)
    assert a.grad.shape == a.shape and w.grad.shape == w.shape
    a64, w64, dy64 = (x.detach().double().numpy() for x in (a, w, dy))
    starts = [0, 5, 5, 16]
    for i in range(3):
        r = slice(starts[i], starts[i + 1])
        _check(a.grad[r].double().numpy(), dy64[r], w64[i].T, "fp16")  # dgrad
        _check(w.grad[i].double().numpy(), a64[r].T, dy64[r], "fp16")  # wgrad
        if i == 1:
            assert (w.grad[i] == 0).all(), "an empty group's weight gradient is exactly zero"


def test_grouped_gemm_names_the_schedules_it_runs_under() -> None:
    with pytest.raises(
        ValueError, match=r"schedule='stream-k' does not run grouped GEMM.*'persistent'"
    ):
        gemm_opt.grouped_matmul(A, G3, [4, 4, 0], schedule="stream-k")
    with pytest.raises(ValueError, match=r"schedule='data-parallel' does not run grouped GEMM"):
        gemm_opt.grouped_matmul_variable_k(A, B[:8], [8], schedule="data-parallel")
