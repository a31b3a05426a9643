"""A property of every schedule over its attributes, up to the i32 limits: the
lowered kernel, run on the executable model, computes C exactly as numpy does,
or the op verifier refuses the attributes (num_xcds past its limit; a group_m
whose band could wrap is clamped by the lowering). Never a silently wrong C: C starts
as NaN, so a tile no program writes (an index that wrapped) shows.

Small problems (a few tiles, a few programs) keep each example quick; the
attributes range over everything an i32 attribute holds, with the values next
to each limit drawn often.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gemm_opt.core.modes import Grouped, Kind, Reduction
from gemm_opt.core.schedules import kernel_args, tile_count, workspace_layout
from gemm_opt.kernels.schedule_gemm import build_gemm_module
from gemm_opt.model.interpreter import run_function
from gemm_opt.passes.lower_gemm_schedule import LowerGemmSchedulePass

I32_MAX = 2**31 - 1
SCHEDULES = [
    (Kind.DATA_PARALLEL, None, Grouped.NONE),
    (Kind.PERSISTENT, None, Grouped.NONE),
    (Kind.WORK_STEALING, None, Grouped.NONE),
    (Kind.STREAM_K, Reduction.ATOMIC, Grouped.NONE),
    (Kind.STREAM_K, Reduction.LINEAR, Grouped.NONE),
    (Kind.STREAM_K, Reduction.TREE, Grouped.NONE),
    (Kind.PERSISTENT, None, Grouped.M),
    (Kind.PERSISTENT, None, Grouped.K),
]
BK = 32


def _i32(near: list[int]) -> st.SearchStrategy[int]:
    """Positive i32 values: next to each of ``near`` and to the i32 edge, small
    ones, and any."""
    edges = sorted({v + d for v in (*near, I32_MAX) for d in (-1, 0, 1) if 0 < v + d <= I32_MAX})
    return st.one_of(st.sampled_from(edges), st.integers(1, 16), st.integers(1, I32_MAX))


@st.composite
def _cases(draw: st.DrawFn) -> dict:
    kind, reduction, grouped = draw(st.sampled_from(SCHEDULES))
    bm, bn = draw(st.sampled_from([16, 32])), draw(st.sampled_from([16, 32]))
    m, n, k = draw(st.integers(1, 70)), draw(st.integers(1, 70)), draw(st.integers(1, 80))
    # Near the limit past which the lowering clamps group_m, and near the values
    # whose GROUP_M band (group_m * tile columns) wraps to a small i32 here.
    cols = -(-n // bn)
    wraps = sorted({w for j in (1, 2, 3) for w in ((2**32 * j) // cols + 1,) if w <= I32_MAX})
    limits = _i32([bn, I32_MAX // (I32_MAX // bn)])
    group_m = draw(st.one_of(st.sampled_from(wraps), limits) if wraps else limits)
    num_xcds = draw(_i32([I32_MAX // 64])) if kind == Kind.WORK_STEALING else 1
    programs = draw(st.integers(1, 5))
    lens = draw(st.lists(st.integers(0, 40), min_size=1, max_size=3))
    return dict(kind=kind, reduction=reduction, grouped=grouped, bm=bm, bn=bn, group_m=group_m,
                num_xcds=num_xcds, m=m, n=n, k=k, programs=programs, lens=lens)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_cases(), seed=st.integers(0, 2**16))
def test_a_schedule_computes_c_or_is_refused(case: dict, seed: int) -> None:
    kind, reduction, bm, bn = case["kind"], case["reduction"], case["bm"], case["bn"]
    grouped = case["grouped"]
    try:
        module = build_gemm_module(
            kind=kind, reduction=reduction, grouped=grouped, block_m=bm, block_n=bn, block_k=BK,
            group_m=case["group_m"], num_xcds=case["num_xcds"], num_warps=1,
        )  # fmt: skip
    except ValueError as e:
        # Refused by the verifier, naming the attribute and its limit (any
        # group_m runs: the lowering clamps one whose band could wrap).
        assert "the schedule does not verify" in str(e) and "'num_xcds' must be at most" in str(e)
        assert case["num_xcds"] > 2**20, str(e)
        return
    LowerGemmSchedulePass().run(module.operation)
    m, n, k = case["m"], case["n"], case["k"]
    rng = np.random.default_rng(seed)
    if grouped != Grouped.NONE:
        _check_grouped(module, grouped, case["lens"], m, n, k, case["programs"], rng, seed)
        return
    a = rng.integers(1, 4, (m, k)).astype(np.float16)
    b = rng.integers(1, 4, (k, n)).astype(np.float16)
    grid = tile_count(m, n, bm, bn) if kind == Kind.DATA_PARALLEL else case["programs"]
    # The counters a program can touch: min(programs, num_xcds) chiplets.
    layout = workspace_layout(kind, reduction, grid, min(case["num_xcds"], grid), bm, bn)
    c = np.zeros((m, n), np.float16) if layout.zero_output else np.full((m, n), np.nan, np.float16)
    args: list = [a, b, c, m, n, k, k, n, n]
    names = kernel_args(kind, reduction, Grouped.NONE)
    if "sync" in names:
        args.append(np.zeros(layout.sync_elements, np.int32))
    if "partials" in names:
        args.append(np.zeros(layout.partial_elements, np.float32))
    run_function(module, "gemm", args, (grid, 1, 1), seed=seed)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_array_equal(c.astype(np.float64), want)


def _check_grouped(module, grouped, lens, m, n, k, programs, rng, seed) -> None:
    """Grouped "m" (rows of A and C by group, B per group) or "k" (K rows by group,
    one ``m x n`` output per group) against numpy, C starting as NaN."""
    g, s = len(lens), sum(lens)
    group_lens = np.array(lens, np.int32)
    want = np.zeros((s, n) if grouped == Grouped.M else (g * m, n))
    starts = np.cumsum([0, *lens])
    if grouped == Grouped.M:
        a = rng.integers(1, 4, (s, k)).astype(np.float16)
        w = rng.integers(1, 4, (g, k, n)).astype(np.float16)
        for i in range(g):
            rows = slice(starts[i], starts[i + 1])
            want[rows] = a[rows].astype(np.float64) @ w[i].astype(np.float64)
        c = np.full(want.shape, np.nan, np.float16)
        args = [a, w, c, s, n, k, k, n, n, group_lens, g]
    else:
        a = rng.integers(1, 4, (s, m)).astype(np.float16)
        b = rng.integers(1, 4, (s, n)).astype(np.float16)
        for i in range(g):
            rows = slice(starts[i], starts[i + 1])
            want[i * m : (i + 1) * m] = a[rows].T.astype(np.float64) @ b[rows].astype(np.float64)
        c = np.full(want.shape, np.nan, np.float16)
        args = [a, b, c, m, n, s, m, n, n, group_lens, g]
    run_function(module, "gemm", args, (programs, 1, 1), seed=seed)
    np.testing.assert_array_equal(c.astype(np.float64), want)


@pytest.mark.parametrize(
    ("arg", "value"),
    [("group_m", 2**31), ("group_m", 2**40), ("num_xcds", 2**31), ("block_m", 2**40)],
)
def test_the_builder_refuses_values_past_i32(arg: str, value: int) -> None:
    """A value no i32 attribute holds is refused by name, not wrapped (2**40 used to
    become 0 and be reported as "must be positive, got 0")."""
    kw = dict(kind="work-stealing", block_m=32, block_n=32, block_k=32, num_warps=1)
    with pytest.raises(ValueError, match=f"{arg} must be .*got {value}"):
        build_gemm_module(**{**kw, arg: value})
