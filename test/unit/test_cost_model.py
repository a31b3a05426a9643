"""The cost model behind schedule="auto": sanity and monotonicity of its estimates,
occupancy at its exact limits, the calibration file's schema, and the fit script."""

from __future__ import annotations

import copy
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.scripts import load_script

from gemm_opt.core import schedules as S
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.runtime import autotune as A
from gemm_opt.runtime import cost_model as C

H100 = Path(__file__).resolve().parents[2] / "benchmarks" / "h100"
CAL = A.calibration("cuda:90")
DEVICE = C.Device()

sizes = st.integers(1, 1 << 15)
dense_problems = st.builds(
    lambda m, n, k: A.Problem("dense", m, n, k), sizes, sizes, st.integers(1, 1 << 16)
)
#: Kinds whose program count does not depend on K (stream-K's does: the aligned split).
FIXED_GRID = ("data-parallel", "persistent", "work-stealing")


def _est(problem: A.Problem, cand: C.Candidate, sms: int = 132, dtype: str = "bf16") -> float:
    work = C.Workload(problem.op, problem.m, problem.n, problem.k, problem.groups, dtype)
    return C.estimate(cand, work, replace(DEVICE, sms=sms), CAL).us


def _best(problem: A.Problem, sms: int = 132, allow_atomic: bool = False) -> float:
    return A.rank(problem, "bf16", sms=sms, allow_atomic=allow_atomic)[0].us


# ---- sanity ----------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(problem=dense_problems)
def test_every_estimate_is_positive_and_at_least_launch_and_hbm_floor(problem) -> None:
    work = C.Workload("dense", problem.m, problem.n, problem.k, 1, "bf16")
    floor = work.unique_bytes / (DEVICE.hbm_bytes_per_us * CAL.hbm_efficiency)
    for cand in A.candidates("dense", allow_atomic=True):
        est = C.estimate(cand, work, DEVICE, CAL)
        assert math.isfinite(est.us) and est.us >= CAL.launch_us + floor - 1e-9, cand.label
        serial = est.serial_us  # split-K's memset: after the floor, not under it
        assert est.us == pytest.approx(
            CAL.launch_us + max(est.schedule_us - serial, floor) + serial
        )
        assert est.programs >= 1


@settings(max_examples=60, deadline=None)
@given(problem=dense_problems)
def test_allowing_atomics_never_makes_the_best_slower(problem) -> None:
    assert _best(problem, allow_atomic=True) <= _best(problem)


def test_empty_problems_cost_a_launch() -> None:
    for problem in (A.Problem("dense", 0, 64, 64), A.Problem("dense", 64, 64, 0)):
        ranked = A.rank(problem, "bf16", allow_atomic=True)
        assert all(math.isfinite(e.us) for e in ranked)
        assert ranked[0].us < 2 * CAL.launch_us + 2 * CAL.segment_us


# ---- monotonicity ----------------------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(problem=dense_problems, more=st.integers(1, 1 << 14), dim=st.sampled_from("mnk"))
def test_a_bigger_problem_is_never_cheaper_on_a_fixed_grid(problem, more, dim) -> None:
    """More M, N or K never lowers a data-parallel, persistent or work-stealing
    estimate (more tiles or more iterations each, more bytes)."""
    bigger = replace(problem, **{dim: getattr(problem, dim) + more})
    for cand in A.candidates("dense"):
        if cand.schedule in FIXED_GRID:
            assert _est(bigger, cand) >= _est(problem, cand) - 1e-9, cand.label


@settings(max_examples=60, deadline=None)
@given(problem=dense_problems, more=st.integers(1, 1 << 14))
def test_more_k_never_cheapens_the_best_fixed_grid_candidate(problem, more) -> None:
    """The best data-parallel, persistent or work-stealing candidate never gets cheaper
    with more K. Stream-K's estimates may, as its split does: below one K iteration per
    program the split falls back to whole tiles (98 iterations on 132 programs run as
    whole tiles, 196 split two per program), and an aligned split saves a segment."""
    longer = replace(problem, k=problem.k + more)
    for cand in A.candidates("dense"):
        if cand.schedule in FIXED_GRID:
            assert _est(longer, cand) >= _est(problem, cand) - 1e-9, cand.label


def test_stream_k_falls_back_below_one_iteration_per_program() -> None:
    """Fewer K iterations in all than resident programs: 3x123 in 64x64 tiles is 2
    tiles; K 6207 gives 98 iterations. On 132 programs the split would fall back to
    whole tiles (one program runs 49); auto launches at most 98 (one each) instead,
    so twice the K (196 iterations, 132 programs) no longer costs less."""
    cand = next(
        c for c in A.candidates("dense", allow_atomic=True) if c.label == "stream-k/atomic small"
    )
    short, long_ = A.Problem("dense", 3, 123, 6207), A.Problem("dense", 3, 123, 12414)
    assert _est(short, cand) < _est(long_, cand)
    assert C.stream_k_shape(2, 49, 132, "atomic")[0] == 49.0  # the fallback it avoids
    assert C.stream_k_programs(2, 49, 132) == 98
    assert C.stream_k_shape(2, 49, 98, "atomic")[0] == 1.0
    assert C.stream_k_programs(2, 98, 132) <= 132
    assert (
        C.estimate(cand, C.Workload("dense", 3, 123, 6207, 1, "bf16"), DEVICE, CAL).programs == 98
    )


@settings(max_examples=60, deadline=None)
@given(tiles=st.integers(1, 300), ipt=st.integers(1, 200), resident=st.integers(1, 400))
def test_auto_stream_k_never_launches_more_programs_than_iterations(tiles, ipt, resident) -> None:
    """What auto launches for stream-K never falls back to whole tiles for lack of work:
    at most the resident programs and at most the iterations, so the only split
    without a stream-K phase is whole waves of tiles."""
    p = C.stream_k_programs(tiles, ipt, resident)
    assert 1 <= p <= min(resident, tiles * ipt)
    if S.stream_k_partition(tiles, ipt, p).fallback:
        assert tiles % p == 0


@settings(max_examples=40, deadline=None)
@given(problem=dense_problems, sms=st.integers(4, 132))
def test_twice_the_compute_units_never_slow_the_fixed_grid_kinds(problem, sms) -> None:
    """Each round on twice the SMs is two rounds merged. (Any more SMs is not enough: a
    last round of one straggler tile after a fuller first one can cost a hair more.)"""
    for cand in A.candidates("dense"):
        if cand.schedule in FIXED_GRID:
            assert _est(problem, cand, 2 * sms) <= _est(problem, cand, sms) + 1e-9, cand.label


@pytest.mark.parametrize("op", ["fwd", "dgrad", "wgrad"])
def test_grouped_estimates_grow_with_the_groups(op) -> None:
    """The same per-group problem over twice the groups (twice the tokens) never costs
    less, and what auto runs costs more."""
    for g in (1, 2, 4, 16):
        if op == "wgrad":
            one, two = (
                A.Problem(op, 2048, 4096, 1024 * g, g),
                A.Problem(op, 2048, 4096, 2048 * g, 2 * g),
            )
        else:
            one, two = (
                A.Problem(op, 1024 * g, 2048, 4096, g),
                A.Problem(op, 2048 * g, 2048, 4096, 2 * g),
            )
        for cand in A.candidates(op):
            assert _est(two, cand) >= _est(one, cand), (op, g, cand.label)
        assert _best(two) > _best(one), (op, g)


# ---- the pieces at their exact limits --------------------------------------------------------


def test_occupancy_at_the_exact_shared_memory_limit() -> None:
    """Two programs fit exactly when two rings and their reserves fill the SM."""
    cfg = S.GemmConfig(64, 64, 64, 8, 4, 4)
    ring = 4 * (64 + 64) * 64 * 2
    exact = replace(DEVICE, smem_bytes=2 * (ring + DEVICE.smem_reserved))
    assert C.occupancy(cfg, 2, exact) == 2
    assert C.occupancy(cfg, 2, replace(exact, smem_bytes=exact.smem_bytes - 1)) == 1
    # never below one, even where one ring does not fit
    assert C.occupancy(cfg, 2, replace(DEVICE, smem_bytes=1)) == 1


def test_occupancy_of_the_bundled_configs() -> None:
    """The 64-row classes fill the SM's shared memory (one program), mid holds two,
    wide's accumulator takes one program's registers."""
    got = {name: C.occupancy(cfg, 2, DEVICE) for name, cfg in h100.GPU_CONFIGS.items()}
    assert got == {"default": 2, "wide": 1, "mid": 2, "narrow": 1, "small": 1}


def test_stages_default_to_the_body() -> None:
    assert C.stages(S.GemmConfig(num_warps=4)) == 2
    assert C.stages(S.GemmConfig(num_warps=1)) == 1
    assert C.stages(S.GemmConfig(num_warps=4, num_stages=5)) == 5


def test_iteration_time_has_its_three_bounds() -> None:
    cal = C.Calibration(latency_us=1.0, mma_efficiency=1.0, l2_bytes_per_us=1e6)
    cfg = S.GemmConfig(128, 128, 64, 8, 8, 3)
    flops = 2 * 128 * 128 * 64 / DEVICE.mma_flops_per_us
    assert C.iteration_us(cfg, 2, 1, DEVICE, cal) == pytest.approx(max(flops, 0.5))
    # two programs per SM share its tensor cores
    lots = C.iteration_us(cfg, 2, 2 * DEVICE.sms, DEVICE, replace(cal, l2_bytes_per_us=1e12))
    assert lots == pytest.approx(max(2 * flops, 0.5))
    # bandwidth shared by every active program
    slow = replace(cal, l2_bytes_per_us=1e3, latency_us=1e-9)
    assert C.iteration_us(cfg, 2, 10, DEVICE, slow) == pytest.approx(10 * 256 * 64 * 2 / 1e3)


def test_stream_k_shape_counts_waits_only_for_the_fix_ups() -> None:
    """16 tiles of 128 iterations over 128 programs (the 512x512x8192 split): each
    program one range in one tile; atomic waits on nothing, linear adds 7 partials on
    the owner, tree 3 levels."""
    atomic = C.stream_k_shape(16, 128, 128, "atomic")
    linear = C.stream_k_shape(16, 128, 128, "linear")
    tree = C.stream_k_shape(16, 128, 128, "tree")
    assert atomic == (16.0, 1, 1, 0.0)
    assert linear[:3] == tree[:3] == (16.0, 1, 1)
    assert (linear[3], tree[3]) == (7.0, 3.0)


# ---- the calibration file --------------------------------------------------------------------


def _doc() -> dict:
    return json.loads(C.calibration_path(A.DEFAULT_TUNED_DIR, "cuda:90").read_text())


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda d: d.update(format="x"), "not a cost-model calibration"),
        (lambda d: d.update(version=9), "version 9"),
        (lambda d: d.update(target="cuda:80"), "calibration of 'cuda:80'"),
        (lambda d: d.pop("constants"), "constants: needs exactly the keys"),
        (lambda d: d["constants"].pop("launch_us"), "needs exactly the keys"),
        (lambda d: d["constants"].update(extra=1.0), "needs exactly the keys"),
        (lambda d: d["constants"].update(launch_us=-1), r"constants\.launch_us.*positive"),
        (lambda d: d["constants"].update(segment_us="1"), r"constants\.segment_us"),
        (lambda d: d["constants"].update(steal_us=True), r"constants\.steal_us"),
        (lambda d: d["constants"].update(latency_us=float("nan")), "finite"),
        (lambda d: d["constants"].update(mma_efficiency=1.5), "at most 1"),
    ],
)
def test_bad_calibrations_are_refused_naming_the_field(mutate, match) -> None:
    doc = copy.deepcopy(_doc())
    mutate(doc)
    with pytest.raises(C.CalibrationError, match=match):
        C.validate_calibration(doc, "c.json", "cuda:90")


def test_an_unreadable_calibration_names_the_file(tmp_path, monkeypatch) -> None:
    path = C.calibration_path(tmp_path, "cuda:90")
    path.write_text("{")
    with pytest.raises(C.CalibrationError, match=r"cuda90\.cost\.json: not a cost-model"):
        C.load_calibration(path, "cuda:90")
    # auto reports it, as it reports a broken table
    import numpy as np

    import gemm_opt

    monkeypatch.setenv(A.TUNED_DIR_ENV, str(tmp_path))
    a = np.zeros((16, 32), np.float16)
    with pytest.raises(C.CalibrationError, match="not a cost-model calibration"):
        gemm_opt.matmul(a, a.T.copy(), schedule="auto")


def test_no_calibration_beside_a_table_uses_the_packaged_one(tmp_path) -> None:
    assert A.calibration("cuda:90", tmp_path) == C.validate_calibration(_doc(), "p", "cuda:90")


# ---- the fit script --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def F():
    return load_script(H100 / "fit_cost_model.py", "fit_cost_model")


def test_the_packaged_calibration_reproduces_its_stated_quality(F) -> None:
    """The figures stored with the constants are what the model computes with them on
    the measurements they were fitted to (the docs quote them)."""
    doc = _doc()
    device = replace(DEVICE, sms=doc["fitted_to"]["provenance"]["sms"])
    points = F.load_points(H100.parents[1] / doc["fitted_to"]["results"], device)
    cal = A.calibration("cuda:90")
    got = F.quality(points, cal)
    split = F.quality(F.load_split_k_points(H100.parents[1] / doc["fitted_to"]["split_k"]), cal)
    for have, want in ((got, doc["quality"]), (split, doc["quality"]["split_k"])):
        for key in ("points", "problems", "pick_is_best_all", "pick_is_best_deterministic"):
            assert have[key] == want[key], key
        for key in ("median_rel_error", "worst_rel_error", "regret_geomean_deterministic"):
            assert have[key] == pytest.approx(want[key], rel=1e-2), key


def test_the_split_k_report_is_read_on_its_own_gpu(F) -> None:
    """The H200 report's nine split-K rows: shape, class, S and time, on the H200's figures."""
    doc = _doc()
    points = F.load_split_k_points(H100.parents[1] / doc["fitted_to"]["split_k"])
    got = {(p.work.m, p.work.n, p.work.k, p.cand.name, p.cand.split_k): p.us for p in points}
    assert len(got) == 9
    assert got[(512, 512, 8192, "small", 2)] == 15.4
    assert got[(128, 7168, 2048, "narrow", 1)] == 9.9
    assert {p.device for p in points} == {F.DEVICES["NVIDIA H200"]}
    assert F.DEVICES["NVIDIA H200"].hbm_bytes_per_us > DEVICE.hbm_bytes_per_us


def test_the_fit_recovers_constants_from_synthetic_timings(F) -> None:
    """Timings made by the model itself under known constants are fitted back to a
    tenth of the starting loss and picks within 2% of the best."""
    truth = replace(CAL, launch_us=6.0, segment_us=1.5)
    problems = [A.Problem("dense", *s) for s in ((512, 512, 8192), (4096, 4096, 4096),
                                                  (128, 7168, 2048), (16, 4096, 7168))]  # fmt: skip
    points = []
    for p in problems:
        work = C.Workload("dense", p.m, p.n, p.k, 1, "bf16")
        for cand in A.candidates("dense", allow_atomic=True):
            us = C.estimate(cand, work, DEVICE, truth).us
            points.append(F.Point(str(p), work, cand, us, DEVICE))
    start = F.loss(points, CAL)
    fitted = F.fit(points, rounds=1)
    assert F.loss(points, fitted) < start / 10
    q = F.quality(points, fitted)
    # measured ties (candidates the true constants cost alike) make "is the best" moot:
    # the pick's measured time is what counts
    assert q["regret_worst_all"] < 1.02 and q["regret_worst_deterministic"] < 1.02
