"""The API's edges: values at and past the limits, empty problems, and argument forms
that look right and are not (bools as lengths, numpy scalars, tensors on other
devices, a numpy ``out=`` for torch operands, batched operands with gaps).

Each is a ``ValueError``/``TypeError`` naming the argument, raised before anything
is allocated, or the right result (an empty one where the problem is empty).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import gemm_opt
from gemm_opt.runtime import gemm as rt
from gemm_opt.runtime import plan as P

A = np.arange(8 * 16, dtype=np.float16).reshape(8, 16) % 5 - 2
B = np.arange(16 * 12, dtype=np.float16).reshape(16, 12) % 3 - 1
REF = A.astype(np.float64) @ B.astype(np.float64)  # small integers: exact in fp32


def _torch(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(x))


# ---- num_programs ----------------------------------------------------------------------


@pytest.mark.parametrize("framework", ["numpy", "torch"])
def test_num_programs_past_the_launch_limit_is_refused(framework) -> None:
    a, b = (A, B) if framework == "numpy" else (_torch(A), _torch(B))
    with pytest.raises(
        ValueError, match=r"num_programs must be at most 2147483647, got 2147483648"
    ):
        gemm_opt.matmul(a, b, schedule="stream-k", num_programs=2**31)
    with pytest.raises(ValueError, match=r"num_xcds must be at most 64, got 65"):
        gemm_opt.matmul(a, b, schedule="work-stealing", num_programs=65, num_xcds=65)


@pytest.mark.parametrize(
    ("schedule", "reduction"),
    [
        ("stream-k", "linear"),
        ("stream-k", "tree"),
        ("stream-k", "atomic"),
        ("work-stealing", None),
        ("persistent", None),
        ("data-parallel", None),
    ],
)
def test_num_programs_at_the_limit_runs_the_work_there_is(schedule, reduction) -> None:
    """2**31 - 1 programs on a 2-tile problem: the plan runs at most the programs that
    find work (no 18 GB interleaving, no 32 TiB of partials), and C is exact."""
    c = gemm_opt.matmul(A, B, schedule=schedule, reduction=reduction, num_programs=2**31 - 1)
    np.testing.assert_array_equal(c.astype(np.float64), REF)
    kw = dict(schedule=schedule, reduction=reduction, num_xcds=1, config=None, out=None, seed=None)
    plan = P.plan("matmul", A, B, num_programs=2**31 - 1, **kw)
    iters = plan.total_tiles * -(-16 // plan.spec.block_k)
    assert plan.programs <= max(plan.total_tiles, iters if schedule == "stream-k" else 1)
    assert plan.layout.partial_elements <= plan.programs * 64 * 64


def test_the_work_bound_keeps_the_stream_k_split() -> None:
    """Up to the K iterations the program count is the caller's (it sets stream-K's
    split); past them stream-K falls back to whole tiles, one program each."""
    a = np.ones((128, 256), np.float16)
    b = np.ones((256, 64), np.float16)
    kw = dict(schedule="stream-k", reduction="linear", num_xcds=1, config=None, out=None)
    tiles, iters = 2, 2 * 8  # 64x64x32 blocks: 2 tiles of 8 K iterations
    for asked, runs in ((3, 3), (iters, iters), (iters + 1, tiles), (2**31 - 1, tiles)):
        plan = P.plan("matmul", a, b, num_programs=asked, seed=None, **kw)
        assert (plan.total_tiles, plan.programs) == (tiles, runs), asked
        for seed in (None, 1):
            c = gemm_opt.matmul(a, b, num_programs=asked, seed=seed, **kw)
            assert (c == 256).all()


def test_numpy_integer_scalars_are_ints() -> None:
    want = gemm_opt.matmul(A, B, schedule="stream-k", num_programs=3, seed=2)
    got = gemm_opt.matmul(A, B, schedule="stream-k", num_programs=np.int64(3), seed=np.int32(2))
    np.testing.assert_array_equal(got, want)
    ta, tb = _torch(A), _torch(B)
    t = gemm_opt.matmul(ta, tb, schedule="stream-k", num_programs=np.int64(3), seed=np.int64(2))
    np.testing.assert_array_equal(t.numpy(), want)
    lens = [3, 5]
    w = np.stack([B, B])
    g = gemm_opt.grouped_matmul(_torch(A), _torch(w), lens, num_xcds=np.int8(1), seed=np.int16(1))
    np.testing.assert_array_equal(g.numpy().astype(np.float64), REF)
    with pytest.raises(TypeError, match=r"num_programs: expected an int, got bool"):
        gemm_opt.matmul(ta, tb, num_programs=True)
    with pytest.raises(TypeError, match=r"seed: expected an int or None, got bool"):
        gemm_opt.matmul(A, B, seed=np.bool_(True))


# ---- config ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "match"),
    [
        ({"group_m": 2**40}, r"config\.group_m must be at most 2147483647 .* got 1099511627776"),
        ({"block_k": 2**32}, r"config\.block_k must be at most 2147483647"),
        ({"block_m": 512}, r"config\.block_m must be at most 256"),
        ({"num_warps": 6}, r"config\.num_warps must be a power of two, got 6"),
        ({"num_warps": 64}, r"config\.num_warps must be at most 32"),
        ({"num_stages": 2**31}, r"config\.num_stages must be at most 2147483647"),
        (gemm_opt.GemmConfig(64, 64, 32, 4, 3), r"config\.num_warps must be a power of two"),
    ],
)
def test_config_values_are_range_checked_by_name(config, match) -> None:
    for a, b in ((A, B), (_torch(A), _torch(B))):
        with pytest.raises(ValueError, match=match):
            gemm_opt.matmul(a, b, config=config)


@pytest.mark.parametrize("schedule", ["work-stealing", "persistent", "data-parallel", "stream-k"])
def test_a_group_m_whose_band_wraps_is_refused_and_one_that_fits_writes_all_of_c(schedule):
    """GROUP_M x the tile columns is a 32-bit product in the kernels: past the range a
    band wraps and tiles go unwritten (2400 of 12000 elements on 300x40 in 32x32
    tiles), so it is refused; at the largest GROUP_M that fits, C is complete."""
    rng = np.random.default_rng(3)
    a = rng.integers(-2, 3, (300, 100)).astype(np.float16)
    b = rng.integers(-2, 3, (100, 40)).astype(np.float16)
    cfg = {"group_m": 2**31 - 1, "block_m": 32, "block_n": 32, "num_warps": 4}
    with pytest.raises(ValueError, match=r"config\.group_m=2147483647 times the 2 tile columns"):
        gemm_opt.matmul(a, b, schedule=schedule, config=cfg)
    c = gemm_opt.matmul(a, b, schedule=schedule, config={**cfg, "group_m": (2**31 - 1) // 2})
    np.testing.assert_array_equal(c.astype(np.float64), a.astype(np.float64) @ b)
    c = gemm_opt.matmul(a, b, schedule=schedule, config={"group_m": 2**31 - 1})  # 1 column
    np.testing.assert_array_equal(c.astype(np.float64), a.astype(np.float64) @ b)


# ---- empty problems ----------------------------------------------------------------------


@pytest.mark.parametrize("schedule", ["data-parallel", "persistent", "work-stealing", "stream-k"])
@pytest.mark.parametrize("framework", ["numpy", "torch"])
def test_n_zero_is_an_empty_result(schedule, framework) -> None:
    conv = (lambda x: x) if framework == "numpy" else _torch
    c = gemm_opt.matmul(conv(A), conv(np.zeros((16, 0), np.float16)), schedule=schedule)
    assert tuple(c.shape) == (8, 0)
    if schedule == "persistent":
        g = gemm_opt.grouped_matmul(conv(A), conv(np.zeros((2, 16, 0), np.float16)), [3, 5])
        assert tuple(g.shape) == (8, 0)
        w = gemm_opt.grouped_matmul_variable_k(conv(A), conv(np.zeros((8, 0), np.float16)), [3, 5])
        assert tuple(w.shape) == (2, 16, 0)


# ---- group_lens --------------------------------------------------------------------------

W = np.zeros((3, 16, 4), np.float16)


@pytest.mark.parametrize(
    "lens",
    [
        [True, False, True],
        [4, True, 3],
        np.array([True, False, True]),
        [np.True_, np.False_, np.True_],
        torch.tensor([True, False, True]),
    ],
)
def test_bools_are_not_lengths(lens) -> None:
    a = np.zeros((2, 16), np.float16)
    for x, w in ((a, W), (_torch(a), _torch(W))):
        with pytest.raises(TypeError, match=r"group_lens(\[\d\])?: expected (an )?integer"):
            gemm_opt.grouped_matmul(x, w, lens)
        with pytest.raises(TypeError, match=r"group_lens(\[\d\])?: expected (an )?integer"):
            gemm_opt.grouped_matmul_variable_k(x, np.zeros((2, 4), np.float16) if x is a
                                               else torch.zeros(2, 4, dtype=torch.float16), lens)  # fmt: skip


def test_lengths_on_another_device_than_the_operands_are_refused() -> None:
    a = np.zeros((8, 16), np.float16)
    meta = torch.tensor([4, 4, 0], device="meta")
    with pytest.raises(ValueError, match=r"group_lens: the host reads these lengths.* on meta"):
        gemm_opt.grouped_matmul(a, W, meta)
    with pytest.raises(ValueError, match=r"group_lens: the host reads these lengths.* on meta"):
        gemm_opt.grouped_matmul_variable_k(a, np.zeros((8, 4), np.float16), meta)
    with pytest.raises(ValueError, match=r"group_lens: expected a tensor on cpu like a, got meta"):
        gemm_opt.grouped_matmul(_torch(a), _torch(W), meta)


# ---- out= --------------------------------------------------------------------------------


def test_torch_operands_with_a_numpy_out_name_out() -> None:
    ta, tb = _torch(A), _torch(B)
    out = np.zeros((8, 12), np.float16)
    with pytest.raises(TypeError, match=r"out: expected a torch-cpu operand like a, got a numpy"):
        gemm_opt.matmul(ta, tb, out=out)
    with pytest.raises(TypeError, match=r"out: expected a torch-cpu operand like a, got a numpy"):
        gemm_opt.grouped_matmul(ta, _torch(np.stack([B, B])), [4, 4], out=out)
    with pytest.raises(TypeError, match=r"out: expected a numpy operand like a, got a torch-cpu"):
        gemm_opt.matmul(A, B, out=torch.zeros(8, 12, dtype=torch.float16))


# ---- batched operands with gaps --------------------------------------------------------------


def test_batched_weights_with_gaps_run_on_the_model() -> None:
    """The model copies operands to dense storage: any strides read right."""
    big = np.zeros((2, 20, 12), np.float16)
    big[:, :16] = B
    w = big[:, :16]  # a gap of 4 rows between the groups
    c = gemm_opt.grouped_matmul(A, w, [3, 5])
    np.testing.assert_array_equal(c.astype(np.float64), REF)


@pytest.fixture
def as_cuda(monkeypatch):
    """CPU tensors taken for CUDA ones, up to the launch (recorded, not made)."""
    kind_of = P.kind_of
    monkeypatch.setattr(P, "kind_of", lambda x, n: "cuda" if kind_of(x, n) == "torch-cpu" else kind_of(x, n))  # fmt: skip
    launches: list = []
    monkeypatch.setattr(rt, "launch", lambda spec, values, **kw: launches.append(values))
    monkeypatch.setattr(rt, "resident_programs", lambda spec, device, target="cuda:90": 132)
    monkeypatch.setattr(rt, "sm_count", lambda torch, device: 132)
    monkeypatch.setattr(rt, "compiler_installed", lambda: False)
    return launches


def test_batched_weights_with_gaps_are_refused_on_the_gpu(as_cuda) -> None:
    """The kernels read group g of b at g x rows x the row stride: a batch stride
    that is not that (padding between groups, a sliced-off row of a K = 1 weight)
    is refused, naming b; row padding inside a group is a row stride, and runs."""
    a = torch.zeros(8, 16, dtype=torch.float16)
    padded_rows = torch.zeros(2, 16, 24, dtype=torch.float16)[:, :, :16]
    gemm_opt.grouped_matmul(a, padded_rows, [3, 5])
    assert as_cuda[-1]["ldb"] == 24
    for gappy in (
        torch.zeros(2, 20, 16, dtype=torch.float16)[:, :16],
        torch.zeros(2, 2, 16, dtype=torch.float16)[:, :1],
    ):
        k = gappy.shape[1]
        with pytest.raises(ValueError, match=r"b: the groups must be stored back to back"):
            gemm_opt.grouped_matmul(a[:, :k].contiguous(), gappy, [3, 5])
    lens = torch.tensor([4, 4], dtype=torch.int32, device="meta")
    with pytest.raises(ValueError, match=r"group_lens: expected a tensor on cpu like a, got meta"):
        gemm_opt.grouped_matmul(a, torch.zeros(2, 16, 16, dtype=torch.float16), lens)
