"""benchmarks/h100/tune_schedules.py without a GPU: cases, candidates, the resumable
bookkeeping on synthetic timings, and the table it writes as the API reads it."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest
from support.scripts import load_script

from gemm_opt.core import schedules as S
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.runtime import autotune as A

H100 = Path(__file__).resolve().parents[2] / "benchmarks" / "h100"


@pytest.fixture(scope="module")
def T():
    return load_script(H100 / "tune_schedules.py", "tune_schedules")


def metas() -> list[dict[str, Any]]:
    """Kernel metas as build_bundles writes them: every dense form in each config, the
    grouped forms in the default one, and aligned twins (which are not candidates)."""
    out = []
    for cfg in h100.GPU_CONFIGS.values():
        for kind in S.KINDS:
            for red in S.REDUCTIONS if kind == "stream-k" else (None,):
                for dtype in S.DTYPES:
                    spec = S.KernelSpec(kind, red, "none", dtype, **asdict(cfg))
                    out += [asdict(spec), asdict(replace(spec, aligned=True))]
    for grouped, tb in (("m", False), ("m", True), ("k", False)):
        spec = S.KernelSpec("persistent", None, grouped, "bf16", **asdict(h100.GPU_CONFIG),
                            trans_b=tb)  # fmt: skip
        out.append(asdict(spec))
    out.append({"kind": "gemm", "dtype": "fp16"})  # a non-schedule kernel of another bundle
    return out


def test_cases_cover_the_issue_problems(T) -> None:
    cases = T.tune_cases()
    names = [c.name for c in cases]
    assert len(names) == len(set(names))
    dense = [c.problem for c in cases if c.problem.op == "dense"]
    # 5 shapes x (forward, dgrad, wgrad), squares once
    assert len(dense) == 11 and len(set(dense)) == 11
    assert A.Problem("dense", 16, 7168, 4096) in dense  # decode dgrad: M x K x N
    assert A.Problem("dense", 7168, 4096, 16) in dense  # decode wgrad: K x N x M
    grouped = [c for c in cases if c.problem.op != "dense"]
    assert len(grouped) == 4 * 2 * 3
    for c in grouped:
        assert sum(c.lens) == sum(c.unbalanced) and c.lens != c.unbalanced
        assert set(c.lens) == {2048}
        # weights 0.2 + 0.8 U: no group below a fifth of the largest's weight
        assert min(c.unbalanced) * 5 >= max(c.unbalanced) * 0.9
    fwd = next(c for c in cases if c.name == "DSv3 GateUP G=32 fwd").problem
    dgrad = next(c for c in cases if c.name == "DSv3 GateUP G=32 dgrad").problem
    wgrad = next(c for c in cases if c.name == "DSv3 GateUP G=32 wgrad").problem
    assert fwd == A.Problem("fwd", 65536, 4096, 7168, 32)
    assert dgrad == A.Problem("dgrad", 65536, 7168, 4096, 32)
    assert wgrad == A.Problem("wgrad", 7168, 4096, 65536, 32)


def test_candidates_are_what_the_bundles_hold(T) -> None:
    dense = T.candidates(metas(), "dense", "bfloat16")
    assert len(dense) == 7 * len(h100.GPU_CONFIGS)
    assert {(c.schedule, c.reduction) for c in dense} == {
        ("data-parallel", None), ("persistent", None), ("work-stealing", None),
        ("stream-k", "atomic"), ("stream-k", "linear"), ("stream-k", "tree"),
        ("split-k", None),
    }  # fmt: skip
    assert {c.config for c in dense} == set(h100.GPU_CONFIGS.values())
    assert dense[0].label == "data-parallel default"
    assert [c.label for c in T.candidates(metas(), "dgrad", "bfloat16")] == ["persistent default"]
    assert T.candidates(metas(), "wgrad", "float16") == []  # not bundled in fp16
    odd = T.Candidate("persistent", None, S.GemmConfig(64, 256, 64, 4, 8))
    assert odd.label == "persistent 64x256x64_g4_w8"


class FakeRunner:
    """The GPU runner's interface on synthetic data: per-label times, a failing label."""

    def __init__(self, times: dict[str, float], bad: set[str] = frozenset()) -> None:
        self.times, self.bad, self.calls = times, bad, []

    def operands(self, case, dtype, lens):
        return {"lens": lens}

    def reference(self, op, ops):
        return "ref", "mag", 1

    def call(self, op, ops, cand):
        label = cand if isinstance(cand, str) else cand.label
        self.calls.append((label, tuple(ops["lens"])))
        return label

    def torch_call(self, op, ops):
        return "torch"

    def check(self, c, ref, mag, k, dtype, contributors):
        return {"ok": c not in self.bad, "detail": "synthetic"}

    def contributors(self, case, cand, dtype):
        return 1

    def time(self, fns, reps):
        out = {}
        for name in fns:
            key = "chosen" if name == "ours" else name
            ms = self.times.get(key, 1.0)
            out[name] = {"median_ms": ms, "min_ms": ms, "samples": reps}
        return out


def _sha() -> str:
    return "a" * 64


def test_tuning_picks_the_fastest_correct_candidate(T, tmp_path: Path, capsys) -> None:
    case = next(c for c in T.tune_cases() if c.name.startswith("512x512x8192 fwd"))
    cands = T.candidates(metas(), "dense", "bfloat16")
    times = {c.label: 1.0 + i / 10 for i, c in enumerate(cands)}
    times["stream-k/tree narrow"] = 0.1  # fastest, but wrong
    times["stream-k/atomic default"] = 0.2
    times["torch"] = 0.3
    runner = FakeRunner(times, bad={"stream-k/tree narrow"})
    result = T.tune_case(runner, case, "bfloat16", cands, 5, "[1/1]")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(cands)  # one progress line per candidate
    assert any("FAIL stream-k/tree narrow" in x for x in lines)
    entry = T.table_entry(result)
    assert (entry["schedule"], entry["reduction"], entry["config"]) == (
        "stream-k", "atomic", asdict(h100.GPU_CONFIG),
    )  # fmt: skip
    assert entry["runner_up"] == "data-parallel default" and entry["torch_ms"] == 0.3
    assert entry["class"] == "dense m<=1024 n<=1024 k>4096"


def test_grouped_tuning_checks_the_choice_on_unbalanced_groups(T) -> None:
    case = next(c for c in T.tune_cases() if c.name == "gpt-oss-20B Down G=4 fwd")
    cands = T.candidates(metas(), "fwd", "bfloat16")
    runner = FakeRunner({"persistent default": 2.0, "chosen": 2.5, "torch": 1.0})
    result = T.tune_case(runner, case, "bfloat16", cands, 5, "[1/1]")
    ub = result["unbalanced"]
    assert ub["lens"] == list(case.unbalanced) and ub["ok"]
    assert (ub["median_ms"], ub["torch_ms"]) == (2.5, 1.0)
    assert ("persistent default", case.unbalanced) in runner.calls  # ran on the skewed sizes
    assert T.table_entry(result)["unbalanced"]["median_ms"] == 2.5


def test_progress_resumes_and_drops_other_bundles(T, tmp_path: Path) -> None:
    p = T.Progress(tmp_path, _sha())
    assert not p.done("bf16 x")
    p.record("bf16 x", {"case": "x"})
    assert json.loads((tmp_path / T.PARTIAL).read_text())["results"] == {"bf16 x": {"case": "x"}}
    assert not list(tmp_path.glob(".*.tmp"))  # written through a renamed temporary file
    again = T.Progress(tmp_path, _sha())
    assert again.done("bf16 x") and again.results["bf16 x"] == {"case": "x"}
    other = T.Progress(tmp_path, "b" * 64)
    assert not other.done("bf16 x")


def _result(T, case_name: str, times: dict[str, float], bad=frozenset()) -> dict:
    case = next(c for c in T.tune_cases() if c.name == case_name)
    cands = T.candidates(metas(), case.problem.op, "bfloat16")
    return T.tune_case(FakeRunner(times, bad), case, "bfloat16", cands, 5, "")


PROV = {
    "gpu": "NVIDIA H100 80GB HBM3", "capability": "sm_90", "sms": 132,
    "date": "2026-11-22T21:00:00Z", "command": "python3 benchmarks/h100/tune_schedules.py",
    "torch": "2.11.0+cu130", "cuda": "13.0", "bundle_sha256": "a" * 64,
    "compiled_with": "triton 3.9.0, gemm-opt 0.1.0",
}  # fmt: skip


def test_the_written_table_is_what_auto_resolves(T, tmp_path: Path) -> None:
    results = {
        "a": _result(
            T, "16x4096x7168 fwd (16x4096x7168)", {"stream-k/linear narrow": 0.05, "torch": 0.03}
        ),
        "b": _result(
            T, "4096x4096x4096 fwd (4096x4096x4096)", {"persistent default": 0.3, "torch": 0.2}
        ),
        "c": _result(T, "DSv3 Down G=16 wgrad", {"persistent default": 10.0, "torch": 1.0}),
        # no correct candidate: no entry (the cost model serves the problem)
        "d": _result(T, "gpt-oss-20B Down G=4 dgrad", {}, bad={"persistent default"}),
    }
    doc = T.make_table(results, PROV)
    assert len(doc["entries"]) == 3
    T.write_json(tmp_path / "cuda90.json", doc)
    got = A.resolve(A.Problem("dense", 16, 4096, 7168), "bf16", root=tmp_path)
    assert (got.schedule, got.reduction, got.config, got.source) == (
        "stream-k", "linear", h100.GPU_CONFIGS["narrow"], "table",
    )  # fmt: skip
    got = A.resolve(A.Problem("dense", 4096, 4096, 4096), "bf16", root=tmp_path)
    assert (got.schedule, got.config) == ("persistent", h100.GPU_CONFIG)
    wgrad = next(e for e in doc["entries"] if e["op"] == "wgrad")["shape"]
    got = A.resolve(A.Problem("wgrad", **wgrad), "bf16", root=tmp_path)
    assert got.source == "table"
    # a problem without an entry (none correct, or not tuned) is the cost model's
    for shape in ((8, 4096, 8192), (3072, 3072, 3072)):
        assert A.resolve(A.Problem("dense", *shape), "bf16", root=tmp_path).source == "model"
    report = T.report(results, PROV)
    assert "| 16x4096x7168 fwd (16x4096x7168) | bf16 | dense m<=16 n<=4096 k>4096 |" in report
    assert "stream-k/linear narrow | 0.0500 |" in report
    assert "Candidates that failed the check" in report
    assert "gpt-oss-20B Down G=4 dgrad: persistent default (synthetic)" in report


def test_make_table_refuses_a_broken_provenance(T) -> None:
    results = {"b": _result(T, "4096x4096x4096 fwd (4096x4096x4096)", {"torch": 0.2})}
    with pytest.raises(A.TunedTableError, match=r"provenance\.gpu"):
        T.make_table(results, {k: v for k, v in PROV.items() if k != "gpu"})


def test_bench_case_flags_auto_slower_than_the_best_fixed(T, capsys) -> None:
    case = next(c for c in T.tune_cases() if c.name.startswith("512x512x8192 fwd"))
    fast = T.bench_case(FakeRunner({"auto": 1.01, "persistent": 0.99}), case, "bfloat16", 5, "t")
    assert fast["ok"] and fast["best_fixed"] == "persistent"
    slow = T.bench_case(FakeRunner({"auto": 0.94, "stream-k/tree": 0.9}), case, "bfloat16", 5, "")
    assert not slow["ok"] and slow["best_fixed"] == "stream-k/tree"
    assert "SLOW" in capsys.readouterr().out
    md = T.bench_markdown([fast, slow], {"gpu": "H100", "date": "d", "table": "t.json"})
    assert "on 1 of 2 problems" in md


def test_misuse_exits_2(T, capsys) -> None:
    for argv in (["--out", "o"], ["--bundles", "b", "--out", "o", "--dtypes", "fp8"],
                 ["--bundles", "b", "--out", "o", "--reps", "1"]):  # fmt: skip
        with pytest.raises(SystemExit) as e:
            T.parse_args(argv)
        assert e.value.code == 2


def test_torch_missing_a_problem_is_timed_without_it(T) -> None:
    class NoTorch(FakeRunner):
        def torch_call(self, op, ops):
            raise RuntimeError("grouped_mm: bf16 only")

    case = next(c for c in T.tune_cases() if c.name == "gpt-oss-20B Down G=4 fwd")
    cands = T.candidates(metas(), "fwd", "bfloat16")
    result = T.tune_case(NoTorch({"persistent default": 2.0}), case, "bfloat16", cands, 5, "")
    entry = T.table_entry(result)
    assert entry["torch_ms"] is None and entry["unbalanced"]["torch_ms"] is None
    assert "| 1.00 | n/a | n/a | 1.0000, n/a |" in T.report({"x": result}, PROV)


class CpuRunner:
    """The real runner on CPU tensors (the API runs them on the model), with a fake clock:
    operands, float32 references and the error bound of every operation."""

    def __new__(cls, T, torch, gemm_opt, spoil: bool = False):
        class Runner(T.Runner):
            def time(self, fns, reps):
                for f in fns.values():
                    f()
                return {n: {"median_ms": 1.0, "min_ms": 1.0, "samples": reps} for n in fns}

            def call(self, op, ops, cand):
                c = super().call(op, ops, cand)
                if spoil:
                    c.view(-1)[7] += 0.5  # one wrong element
                return c

        return Runner(torch, gemm_opt, flush=None, device="cpu")


@pytest.mark.parametrize("op", ["dense", "fwd", "dgrad", "wgrad"])
def test_the_runner_checks_every_operation_against_torch(T, op: str) -> None:
    import torch

    import gemm_opt

    lens = (16, 0, 32)
    case = T.Case(
        f"small {op}",
        {
            "dense": A.Problem("dense", 40, 48, 96),
            "fwd": A.Problem("fwd", 48, 40, 64, 3),
            "dgrad": A.Problem("dgrad", 48, 40, 64, 3),
            "wgrad": A.Problem("wgrad", 64, 40, 48, 3),
        }[op],
        () if op == "dense" else lens,
        () if op == "dense" else (8, 24, 16),
    )
    cands = T.candidates(metas(), op, "bfloat16")
    if op == "dense":  # three are enough on the model
        cands = [c for c in cands if c.label in
                 ("data-parallel narrow", "stream-k/atomic narrow", "stream-k/tree default")]  # fmt: skip
    good = T.tune_case(CpuRunner(T, torch, gemm_opt), case, "bfloat16", cands, 3, "")
    assert [r["ok"] for r in good["candidates"]] == [True] * len(cands), good["candidates"]
    assert good["torch"]["median_ms"] == 1.0
    if op != "dense":
        assert good["unbalanced"]["ok"]
    bad = T.tune_case(CpuRunner(T, torch, gemm_opt, spoil=True), case, "bfloat16", cands, 3, "")
    assert not any(r["ok"] for r in bad["candidates"])
    assert T.table_entry(bad) is None


def test_main_tunes_resumes_and_benches_end_to_end(T, tmp_path: Path, monkeypatch, capsys) -> None:
    """The whole command on a CPU stand-in for the GPU: the API runs CPU tensors on the
    model, the clock is fake; the bundle holds two dense configs and the grouped forward."""
    import sys
    from types import SimpleNamespace

    import torch
    from support.fake_bundles import fake_kernel

    from gemm_opt.runtime import Bundle

    specs = [
        S.KernelSpec("data-parallel", None, "none", "bf16", **asdict(h100.GPU_CONFIGS["narrow"])),
        S.KernelSpec("stream-k", "linear", "none", "bf16", **asdict(h100.GPU_CONFIG)),
        S.KernelSpec("persistent", None, "m", "bf16", **asdict(h100.GPU_CONFIG)),
    ]
    (tmp_path / "b" / "cuda90").mkdir(parents=True)
    Bundle(tuple(fake_kernel(s) for s in specs)).write(tmp_path / "b" / "cuda90" / "k.bundle")
    cases = [
        T.Case("small dense", A.Problem("dense", 40, 48, 96)),
        T.Case("small fwd", A.Problem("fwd", 48, 40, 64, 2), (24, 24), (8, 40)),
    ]
    clock = {"fast": {"stream-k/linear default": 0.5, "persistent": 0.9, "auto": 0.5}}

    class CpuRunner(T.Runner):
        def __init__(self, torch, gemm_opt, flush):
            super().__init__(torch, gemm_opt, flush, device="cpu")

        def time(self, fns, reps):
            for f in fns.values():
                f()
            ms = {n: clock["fast"].get(n, 1.0) for n in fns}
            return {n: {"median_ms": m, "min_ms": m, "samples": reps} for n, m in ms.items()}

    for name in ("GEMM_OPT_BUNDLE_DIR", A.TUNED_DIR_ENV):
        monkeypatch.setenv(name, "unset")
    monkeypatch.setitem(sys.modules, "triton", sys.modules.get("triton"))
    monkeypatch.setattr(T, "tune_cases", lambda: cases)
    monkeypatch.setattr(T, "Runner", CpuRunner)
    monkeypatch.setattr(T.benchlib, "Flusher", lambda: None)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA H100 (stub)")
    monkeypatch.setattr(
        torch.cuda,
        "get_device_properties",
        lambda d=None: SimpleNamespace(multi_processor_count=132),
    )
    out = tmp_path / "out"
    argv = ["--bundles", str(tmp_path / "b"), "--out", str(out), "--dtypes", "bfloat16"]
    monkeypatch.setattr(sys, "argv", ["tune_schedules.py", *argv])
    assert T.main(argv) == 0
    log = capsys.readouterr().out
    assert "[1/2] bf16 small dense [1/2] ok   data-parallel narrow" in log
    assert "[2/2] bf16 small fwd unbalanced ok   persistent default" in log
    table = json.loads((out / "cuda90.json").read_text())
    entries = A.validate_table(table, "t", "cuda:90")
    assert [(c.schedule, c.reduction) for _, c, _ in entries] == [
        ("stream-k", "linear"), ("persistent", None),
    ]  # fmt: skip
    assert table["provenance"]["gpu"] == "NVIDIA H100 (stub)"
    assert table["provenance"]["command"].startswith("python3 benchmarks/h100/tune_schedules.py")
    assert (
        "| small dense | bf16 | dense m<=128 n<=1024 k<=1024 |"
        in (out / "tune_report.md").read_text()
    )
    bench = (out / "bench_auto.md").read_text()
    assert "auto within 3% of the best fixed schedule on 2 of 2 problems" in bench
    # a re-run skips what is done; the bench finds auto too slow: exit 1
    clock["fast"].update(auto=0.6, persistent=0.5)
    assert T.main(argv) == 1
    log = capsys.readouterr().out
    assert log.count("done in an earlier run, skipped") == 2
    assert "SLOW auto" in log
