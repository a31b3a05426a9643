"""The autotuner's rules at their edges (found by ``benchmarks/mutation.py`` in
``runtime/autotune.py``): empty problems, a table config's fields, the table
cache and the memo of choices, the recheck interval, split-K's and swap-AB's
bounds, the kernels available where a call runs, and ``explain``'s skipped
candidates and parts."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace

import pytest

from gemm_opt.core.modes import Kind
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.runtime import autotune as A
from gemm_opt.runtime import cost_model as C

#: Top of the ranking for this problem (with no table): a data-parallel kernel.
SMALL = A.Problem("dense", 128, 128, 256)


def _entry_config(**fields) -> dict:
    return {**asdict(h100.GPU_CONFIG), **fields}


@pytest.mark.parametrize("field", ["m", "n", "k"])
def test_an_empty_problem_is_a_problem(field) -> None:
    sizes = {"m": 64, "n": 64, "k": 64, field: 0}
    assert getattr(A.Problem("dense", **sizes), field) == 0
    with pytest.raises(ValueError, match=f"{field} must be a non-negative integer"):
        A.Problem("dense", **{**sizes, field: -1})


def test_a_table_config_may_leave_num_stages_unset_only() -> None:
    assert A._config_of(_entry_config(num_stages=None), "c").num_stages is None
    for stages in (0, "3", True):
        with pytest.raises(A.TunedTableError, match=r"c\.num_stages: must be a positive integer"):
            A._config_of(_entry_config(num_stages=stages), "c")
    with pytest.raises(A.TunedTableError, match=r"c\.block_m: must be a positive integer"):
        A._config_of(_entry_config(block_m=None), "c")


@pytest.mark.parametrize("value", [0, -64, "128", 1.5])
def test_a_table_config_field_must_be_a_positive_integer(value) -> None:
    with pytest.raises(A.TunedTableError, match=r"c\.block_n: must be a positive integer"):
        A._config_of(_entry_config(block_n=value), "c")


def test_an_entry_shape_missing_a_key_is_refused() -> None:
    p = A.Problem("dense", 512, 512, 8192)
    entry = {
        "op": "dense",
        "dtype": "bf16",
        "class": A.shape_class(p),
        "shape": {"m": 512, "n": 512, "k": 8192},
        "schedule": "data-parallel",
        "reduction": None,
        "config": asdict(h100.GPU_CONFIG),
    }
    with pytest.raises(A.TunedTableError, match=r"e\.shape: needs exactly the keys"):
        A.validate_entry(entry, "e")


def _write_table(root: Path) -> Path:
    p = A.Problem("dense", 512, 512, 8192)
    entry = {
        "op": "dense",
        "dtype": "bf16",
        "class": A.shape_class(p),
        "shape": p.to_json(),
        "schedule": "persistent",
        "reduction": None,
        "config": asdict(h100.GPU_CONFIG),
        "median_ms": 0.1,
    }
    provenance = {
        "gpu": "NVIDIA H100 80GB HBM3",
        "capability": "sm_90",
        "sms": 132,
        "date": "2026-11-22T21:00:00Z",
        "command": "python3 benchmarks/h100/tune_schedules.py --bundles b --out o",
        "torch": "2.11.0+cu130",
        "cuda": "13.0",
        "bundle_sha256": "0" * 64,
        "compiled_with": "triton 3.9.0, gemm-opt 0.1.0",
    }
    doc = {
        "format": A.TABLE_FORMAT,
        "version": A.TABLE_VERSION,
        "target": "cuda:90",
        "provenance": provenance,
        "entries": [entry],
    }
    path = A.table_path("cuda:90", root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def test_an_unchanged_table_is_read_once(tmp_path: Path) -> None:
    _write_table(tmp_path)
    first = A.load_table("cuda:90", tmp_path)
    assert first is not None and len(first) == 1
    assert A.load_table("cuda:90", tmp_path) is first


def test_the_table_files_are_looked_at_once_per_recheck_interval(tmp_path, monkeypatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(A, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    base = str(tmp_path)
    assert A._table_version(base, "cuda:90") == (None, None)
    path = _write_table(tmp_path)
    clock[0] = 100.0 + A.RECHECK_S / 2
    assert A._table_version(base, "cuda:90") == (None, None)  # not looked at again yet
    clock[0] = 100.0 + A.RECHECK_S
    assert A._table_version(base, "cuda:90") == (path.stat().st_mtime_ns, None)


def test_the_table_folder_is_named_by_a_string(tmp_path: Path) -> None:
    base, _ = A.table_version("cuda:90", tmp_path)
    assert type(base) is str and base == str(tmp_path)
    assert A.table_version("cuda:90", str(tmp_path))[0] == str(tmp_path)


def test_the_memo_of_choices_is_cleared_when_full(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(A, "MEMO_SIZE", 2)
    monkeypatch.setattr(A, "_resolved", {})
    sizes = []
    for m in (64, 128, 256):
        A.choose("dense", m, 128, 256, 1, "bf16", root=tmp_path)
        sizes.append(len(A._resolved))
    assert sizes == [1, 2, 1]


def test_resolve_takes_the_fastest_available_kernel(tmp_path: Path) -> None:
    ranked = A.rank(SMALL, "bf16", root=tmp_path)
    assert ranked[0].candidate.schedule == Kind.DATA_PARALLEL
    no_dp = A.Available("no-dp", lambda s, r, cfg, swap: s != Kind.DATA_PARALLEL)
    want = next(e.candidate for e in ranked if no_dp(e.candidate))
    got = A.resolve(SMALL, "bf16", root=tmp_path, available=no_dp)
    assert (got.schedule, got.config, got.split_k) == (want.schedule, want.config, want.split_k)
    none = A.Available("none", lambda s, r, cfg, swap: False)  # the fastest of all, then
    assert A.resolve(SMALL, "bf16", root=tmp_path, available=none).schedule == Kind.DATA_PARALLEL


@pytest.mark.parametrize(
    ("k", "factors"),
    [(0, []), (1, []), (128, []), (129, [2]), (256, [2]), (384, [2]), (512, [2, 4]),
     (1024, [2, 4, 8])],
)  # fmt: skip
def test_split_k_slices_at_most_the_iterations_per_tile(tmp_path, k, factors) -> None:
    # Every split-K config has block_k = 128: ceil(k / 128) iterations per tile.
    assert {c.config.block_k for c in A.candidates("dense") if c.split_k} == {128}
    ranked = A.rank(A.Problem("dense", 128, 128, k), "bf16", root=tmp_path)
    assert sorted({e.candidate.split_k for e in ranked if e.candidate.split_k}) == factors


def test_swap_ab_serves_one_to_its_row_limit() -> None:
    top = h100.SWAP_AB_MAX_ROWS
    assert [A.swap_ab_fits(r) for r in (0, 1, top, top + 1)] == [False, True, True, False]


# ---- explain ---------------------------------------------------------------------------


def test_explain_splits_the_estimates_by_the_kernels_available(tmp_path: Path) -> None:
    everything = A.rank(SMALL, "bf16", root=tmp_path)
    plain = A.explain(SMALL, "bf16", root=tmp_path)
    assert plain.estimates == tuple(everything) and plain.missing == ()
    no_dp = A.Available("no-dp", lambda s, r, cfg, swap: s != Kind.DATA_PARALLEL)
    ex = A.explain(SMALL, "bf16", root=tmp_path, available=no_dp)
    assert ex.estimates == tuple(e for e in everything if no_dp(e.candidate))
    assert ex.missing == tuple(e for e in everything if not no_dp(e.candidate))
    assert ex.estimates and ex.missing
    none = A.Available("none", lambda s, r, cfg, swap: False)
    nothing = A.explain(SMALL, "bf16", root=tmp_path, available=none)
    assert nothing.estimates == tuple(everything) and nothing.missing == tuple(everything)


def _estimate(name: str, us: float, parts=()) -> C.Estimate:
    cfg = h100.GPU_CONFIGS[name]
    return C.Estimate(C.Candidate(Kind.PERSISTENT, None, cfg, name), us, 1, us, tuple(parts))


def test_explain_lists_as_skipped_only_the_missing_kernels_ahead_of_the_choice() -> None:
    names = list(h100.GPU_CONFIGS)
    assert len(names) >= 5
    chosen, after = _estimate(names[0], 5.0), _estimate(names[1], 6.0)
    ahead, tie, behind = (
        _estimate(names[2], 4.0),
        _estimate(names[3], 5.0),
        _estimate(names[4], 7.0),
    )
    choice = A.Choice(Kind.PERSISTENT, None, chosen.candidate.config, "model")
    ex = A.Explanation(
        SMALL, "bf16", "cuda:90", 132, False, choice, (chosen, after), (ahead, tie, behind)
    )
    skipped = [line for line in str(ex).splitlines() if line.startswith("skipped: ")]
    assert skipped == [
        f"skipped: {ahead.candidate.label} (est. 4.0 us): no such kernel where the call runs "
        "(not in the bundles)"
    ]


def test_explain_shows_the_two_largest_parts() -> None:
    name = next(iter(h100.GPU_CONFIGS))
    est = _estimate(name, 9.0, (("alpha", 1.0), ("beta", 3.0), ("gamma", 2.0)))
    choice = A.Choice(Kind.PERSISTENT, None, est.candidate.config, "model")
    ex = A.Explanation(SMALL, "bf16", "cuda:90", 132, False, choice, (est,))
    row = str(ex).splitlines()[-1]
    assert row.endswith("beta 3.0, gamma 2.0")
    assert "alpha" not in row
