"""schedule="auto": shape classes, tuned-table lookup and fallback, the table schema, the API."""

from __future__ import annotations

import copy
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

import gemm_opt
from gemm_opt.core import schedules as S
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.runtime import autotune as A

PROVENANCE = {
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


def entry(op, m, n, k, groups=1, *, dtype="bf16", schedule="data-parallel", reduction=None,
          config=h100.GPU_CONFIG):  # fmt: skip
    p = A.Problem(op, m, n, k, groups)
    return {
        "op": op,
        "dtype": dtype,
        "class": A.shape_class(p),
        "shape": p.to_json(),
        "schedule": schedule,
        "reduction": reduction,
        "config": asdict(config),
        "median_ms": 0.1,
    }


def table(*entries) -> dict:
    return {
        "format": A.TABLE_FORMAT,
        "version": A.TABLE_VERSION,
        "target": "cuda:90",
        "provenance": dict(PROVENANCE),
        "entries": list(entries),
    }


def write(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "cuda90.json"
    path.write_text(json.dumps(doc))
    return path


# ---- shape classes ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("problem", "label"),
    [
        (A.Problem("dense", 16, 4096, 7168), "dense m<=16 n<=4096 k>4096"),
        (A.Problem("dense", 17, 4096, 7168), "dense m<=128 n<=4096 k>4096"),
        (A.Problem("dense", 128, 7168, 2048), "dense m<=128 n>4096 k<=4096"),
        (A.Problem("dense", 512, 512, 8192), "dense m<=1024 n<=1024 k>4096"),
        (A.Problem("dense", 4096, 4096, 4096), "dense m>1024 n<=4096 k<=4096"),
        (A.Problem("dense", 8192, 8192, 8192), "dense m>1024 n>4096 k>4096"),
        # grouped: tokens per group (rounded up), then the weight's N, K
        (A.Problem("fwd", 32 * 2048, 4096, 7168, 32), "fwd t>1024 n<=4096 k>4096"),
        (A.Problem("dgrad", 4 * 100, 2880, 5760, 4), "dgrad t<=128 n<=4096 k>4096"),
        (A.Problem("fwd", 129, 1024, 1024, 1), "fwd t<=1024 n<=1024 k<=1024"),
        (A.Problem("fwd", 33, 1024, 1024, 2), "fwd t<=128 n<=1024 k<=1024"),
        # wgrad: tokens per group are its K; its weight dimensions the output's M, N
        (A.Problem("wgrad", 7168, 4096, 16 * 2048, 16), "wgrad t>1024 m>4096 n<=4096"),
    ],
)
def test_shape_classes(problem: A.Problem, label: str) -> None:
    assert A.shape_class(problem) == label


def test_bucket_bounds_are_inclusive() -> None:
    assert [A.bucket(v, (16, 128)) for v in (0, 16, 17, 128, 129)] == [
        "<=16", "<=16", "<=128", "<=128", ">128",
    ]  # fmt: skip


def test_problem_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="op must be one of"):
        A.Problem("gemm", 1, 1, 1)
    with pytest.raises(ValueError, match="groups must be 1 for dense"):
        A.Problem("dense", 1, 1, 1, 2)
    with pytest.raises(ValueError, match="m must be a non-negative integer"):
        A.Problem("dense", -1, 1, 1)


# ---- resolution: exact hit, else the cost model --------------------------------------------


def _model_pick(problem: A.Problem, dtype: str = "bf16", **kw) -> tuple:
    best = A.rank(problem, dtype, **kw)[0].candidate
    return best.schedule, best.reduction, best.config


@pytest.mark.parametrize(
    "problem",
    [
        A.Problem("dense", 512, 512, 8192),
        A.Problem("dense", 16, 4096, 7168),
        A.Problem("dense", 300, 200, 130),
        A.Problem("fwd", 4096, 4096, 7168, 2),
        A.Problem("dgrad", 4096, 4096, 7168, 2),
        A.Problem("wgrad", 256, 512, 8192, 64),
    ],
)
def test_no_table_resolves_by_the_cost_model(tmp_path: Path, problem: A.Problem) -> None:
    assert A.load_table("cuda:90", tmp_path) is None
    got = A.resolve(problem, "bf16", root=tmp_path)
    assert got.source == "model" and got.tuned is None
    assert (got.schedule, got.reduction, got.config) == _model_pick(problem, root=tmp_path)
    assert got.reduction != "atomic", "atomic stream-K only when allowed"
    if problem.op != "dense":
        assert got.schedule in S.GROUPED_KINDS


def test_candidates_are_what_the_bundles_hold() -> None:
    """Every kind x reduction x bundled config built for it: no fix-up on the wide
    class, split-K on its classes with each of its factors, grouped operations
    persistent only, atomic only when allowed."""
    from gemm_opt.runtime import cost_model as C

    dense = A.candidates("dense")
    assert all(c.reduction != "atomic" for c in dense)
    labels = {c.label for c in A.candidates("dense", allow_atomic=True)}
    assert "stream-k/atomic wide" in labels and "stream-k/linear wide" not in labels
    assert "split-k small S=2" in labels and "split-k mid S=2" not in labels
    n = len(h100.GPU_CONFIGS)
    splits = len(h100.SPLIT_K_CLASSES) * len(C.SPLIT_K_FACTORS)
    splits += len(h100.SWAP_AB_CONFIGS)  # swap-AB, data-parallel
    assert len(A.candidates("dense", allow_atomic=True)) == 3 * n + n + 2 * (n - 1) + splits
    assert len(dense) == 3 * n + 2 * (n - 1) + splits
    plain = {c.split_k for c in dense if c.schedule == "split-k" and not c.swap_ab}
    assert plain == set(C.SPLIT_K_FACTORS)
    assert {(c.schedule, c.split_k) for c in dense if c.swap_ab} == {("data-parallel", None)}
    assert not any(c.swap_ab for op in ("fwd", "dgrad", "wgrad") for c in A.candidates(op))
    for op in ("fwd", "dgrad", "wgrad"):
        tiny = list(h100.TINY_GROUP_CONFIGS.values()) if op != "wgrad" else []  # 16-row tiles
        assert [(c.schedule, c.config) for c in A.candidates(op)] == [
            ("persistent", cfg) for cfg in (*tiny, *h100.GPU_CONFIGS.values())
        ]


def test_a_registered_kind_joins_the_candidates(monkeypatch) -> None:
    """A new kind (here a stand-in with two GROUP_M variants per config) competes
    once it registers an estimate; its variants come from the base candidates."""
    from dataclasses import replace

    from gemm_opt.runtime import cost_model as C

    monkeypatch.setattr(C, "_KINDS", dict(C._KINDS))

    def cheap(cand, work, device, cal):
        return C.Estimate(cand, 0.5 + cand.config.group_m, 1)

    C.register_kind(
        C.KindModel(
            "stand-in",
            cheap,
            variants=lambda c: [replace(c, config=replace(c.config, group_m=g)) for g in (1, 2)],
        )
    )
    cands = [c for c in A.candidates("dense") if c.schedule == "stand-in"]
    assert len(cands) == 2 * len(h100.GPU_CONFIGS)
    best = A.rank(A.Problem("dense", 512, 512, 512), "bf16")[0]
    assert (best.candidate.schedule, best.candidate.config.group_m, best.us) == ("stand-in", 1, 1.5)
    assert A.candidates("fwd") == [c for c in A.candidates("fwd") if c.schedule != "stand-in"]
    with pytest.raises(TypeError, match="expected a KindModel"):
        C.register_kind(cheap)


def test_exact_hit_overrides_only_its_problem(tmp_path: Path) -> None:
    narrow = h100.GPU_CONFIGS["narrow"]
    write(
        tmp_path,
        table(
            entry("dense", 4096, 4096, 4096, schedule="persistent"),
            entry("dense", 2048, 2048, 2048, schedule="work-stealing", config=narrow),
            entry("dense", 4096, 4096, 4096, dtype="fp16", schedule="stream-k", reduction="tree"),
        ),
    )
    got = A.resolve(A.Problem("dense", 4096, 4096, 4096), "bf16", root=tmp_path)
    assert (got.schedule, got.reduction, got.config, got.source) == (
        "persistent", None, h100.GPU_CONFIG, "table",
    )  # fmt: skip
    assert got.tuned == A.Problem("dense", 4096, 4096, 4096)
    got = A.resolve(A.Problem("dense", 2048, 2048, 2048), "bf16", root=tmp_path)
    assert (got.schedule, got.config, got.source) == ("work-stealing", narrow, "table")
    # the dtype is part of the key
    got = A.resolve(A.Problem("dense", 4096, 4096, 4096), "fp16", root=tmp_path)
    assert (got.schedule, got.reduction) == ("stream-k", "tree")
    # a neighbour of a tuned problem (same class) is the model's
    near = A.Problem("dense", 4096, 4096, 4095)
    got = A.resolve(near, "bf16", root=tmp_path)
    assert got.source == "model"
    assert (got.schedule, got.reduction, got.config) == _model_pick(near, root=tmp_path)


def test_an_atomic_tuned_choice_needs_atomics_allowed(tmp_path: Path) -> None:
    p = A.Problem("dense", 512, 512, 8192)
    write(tmp_path, table(entry("dense", 512, 512, 8192, schedule="stream-k", reduction="atomic")))
    allowed = A.resolve(p, "bf16", root=tmp_path, allow_atomic=True)
    assert (allowed.reduction, allowed.source) == ("atomic", "table")
    default = A.resolve(p, "bf16", root=tmp_path)
    assert (default.source, default.reduction != "atomic") == ("model", True)
    assert (default.schedule, default.reduction, default.config) == _model_pick(p, root=tmp_path)


def test_grouped_exact_hits_key_on_groups_and_operation(tmp_path: Path) -> None:
    cfg = h100.GPU_CONFIGS["mid"]
    write(tmp_path, table(entry("fwd", 16 * 2048, 4096, 7168, 16, schedule="persistent",
                                config=cfg)))  # fmt: skip
    got = A.resolve(A.Problem("fwd", 16 * 2048, 4096, 7168, 16), "bf16", root=tmp_path)
    assert (got.config, got.source) == (cfg, "table")
    for other in (
        A.Problem("fwd", 16 * 2048, 4096, 7168, 32),  # the same rows over more groups
        A.Problem("dgrad", 16 * 2048, 4096, 7168, 16),  # dgrad's kernels read B transposed
    ):
        assert A.resolve(other, "bf16", root=tmp_path).source == "model"


def test_the_compute_units_reach_the_model() -> None:
    """Fewer SMs: fewer resident programs, so the same problem takes longer (the waves
    are more), and the memo keys on them."""
    p = A.Problem("dense", 4096, 4096, 4096)
    full = A.rank(p, "bf16", sms=132)[0].us
    half = A.rank(p, "bf16", sms=66)[0].us
    assert half > 1.5 * full


def test_env_var_names_the_table_folder(tmp_path: Path, monkeypatch) -> None:
    write(tmp_path, table(entry("dense", 512, 512, 8192, schedule="persistent")))
    monkeypatch.setenv(A.TUNED_DIR_ENV, str(tmp_path))
    assert A.table_path("cuda:90") == tmp_path / "cuda90.json"
    assert A.resolve(A.Problem("dense", 512, 512, 8192), "bf16").schedule == "persistent"


def test_table_cache_follows_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, table(entry("dense", 512, 512, 8192, schedule="persistent")))
    p = A.Problem("dense", 512, 512, 8192)
    assert A.resolve(p, "bf16", root=tmp_path).schedule == "persistent"
    path.write_text(json.dumps(table(entry("dense", 512, 512, 8192, schedule="work-stealing"))))
    import os

    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert A.resolve(p, "bf16", root=tmp_path).schedule == "work-stealing"


# ---- the schema ------------------------------------------------------------------------


def test_a_valid_table_reads() -> None:
    doc = table(entry("dense", 512, 512, 8192), entry("wgrad", 7168, 4096, 32768, 16,
                                                       schedule="persistent"))  # fmt: skip
    out = A.validate_table(doc, "t.json", "cuda:90")
    assert [c.schedule for _, c, _ in out] == ["data-parallel", "persistent"]


def _broken(mutate) -> dict:
    doc = table(entry("dense", 512, 512, 8192))
    mutate(doc)
    return doc


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda d: d.update(format="x"), "not a tuned table"),
        (lambda d: d.update(version=2), "table version 2"),
        (lambda d: d.update(target="cuda:80"), "is the table of 'cuda:80'"),
        (lambda d: d.pop("provenance"), "missing the provenance"),
        (lambda d: d["provenance"].pop("gpu"), r"provenance\.gpu.*must be a str"),
        (lambda d: d["provenance"].update(sms="132"), r"provenance\.sms.*must be a int"),
        (lambda d: d["provenance"].pop("command"), r"provenance\.command"),
        (lambda d: d["provenance"].pop("torch"), r"provenance\.torch"),
        (lambda d: d["provenance"].pop("date"), r"provenance\.date"),
        (lambda d: d.pop("entries"), "missing the entries"),
        (lambda d: d["entries"][0].pop("config"), r"entries\[0\]: missing field 'config'"),
        (lambda d: d["entries"][0].update(dtype="fp8"), r"entries\[0\]\.dtype"),
        (
            lambda d: d["entries"][0].update({"class": "dense m<=16 n<=1024 k>4096"}),
            "tuned under other shape classes",
        ),
        (lambda d: d["entries"][0].update(schedule="auto"), "unknown schedule kind"),
        (lambda d: d["entries"][0].update(reduction="atomic"), "needs schedule='stream-k'"),
        (lambda d: d["entries"][0]["config"].update(block_k=48), "block_k must be a multiple"),
        (lambda d: d["entries"][0]["config"].pop("group_m"), "needs exactly the keys"),
        (lambda d: d["entries"][0]["config"].update(num_warps=True), "positive integer"),
        (lambda d: d["entries"][0]["shape"].update(m=-1), "non-negative"),
        (lambda d: d["entries"].append(copy.deepcopy(d["entries"][0])), "two entries"),
        (
            lambda d: d["entries"].append(
                entry("fwd", 64, 64, 64, 1, schedule="stream-k", reduction="linear")
            ),
            "grouped GEMM runs under",
        ),
    ],
)
def test_bad_tables_are_refused_naming_the_field(mutate, match) -> None:
    with pytest.raises(A.TunedTableError, match=match):
        A.validate_table(_broken(mutate), "t.json", "cuda:90")


def test_unreadable_table_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "cuda90.json").write_text("{")
    with pytest.raises(A.TunedTableError, match=r"cuda90\.json: not a tuned table"):
        A.load_table("cuda:90", tmp_path)


# ---- the API on the model -----------------------------------------------------------------


def _tuned(monkeypatch, tmp_path: Path, *entries) -> None:
    write(tmp_path, table(*entries))
    monkeypatch.setenv(A.TUNED_DIR_ENV, str(tmp_path))


def _spy(monkeypatch) -> list:
    from gemm_opt.kernels import model_gemm

    seen: list = []
    real = model_gemm.run
    monkeypatch.setattr(
        model_gemm, "run", lambda plan, *a, **k: seen.append(plan.spec) or real(plan, *a, **k)
    )
    return seen


def test_auto_runs_the_tuned_choice_on_the_model(tmp_path: Path, monkeypatch) -> None:
    cfg = S.GemmConfig(32, 32, 32, 2, 4)
    _tuned(monkeypatch, tmp_path,
           entry("dense", 40, 48, 96, dtype="fp16", schedule="stream-k", reduction="linear",
                 config=cfg))  # fmt: skip
    seen = _spy(monkeypatch)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((40, 96)).astype(np.float16)
    b = rng.standard_normal((96, 48)).astype(np.float16)
    c = gemm_opt.matmul(a, b, schedule="auto")
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2e-2, atol=2e-2)
    (spec,) = seen
    assert (spec.kind, spec.reduction, spec.block_m, spec.block_n, spec.group_m) == (
        "stream-k", "linear", 32, 32, 2,
    )  # fmt: skip
    # an explicit config replaces the tuned one; the schedule stays the table's
    gemm_opt.matmul(a, b, schedule="auto", config={"block_m": 64, "block_n": 64, "block_k": 32})
    assert (seen[-1].kind, seen[-1].block_m, seen[-1].block_n) == ("stream-k", 64, 64)
    # another dtype has no entry: the cost model's pick
    import ml_dtypes

    gemm_opt.matmul(a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16), schedule="auto")
    pick = A.resolve(A.Problem("dense", 40, 48, 96), "bf16")
    assert pick.source == "model"
    assert (seen[-1].kind, seen[-1].reduction, seen[-1].block_m, seen[-1].block_n) == (
        pick.schedule, pick.reduction, pick.config.block_m, pick.config.block_n,
    )  # fmt: skip


def test_auto_grouped_forms_resolve_by_their_operation(tmp_path: Path, monkeypatch) -> None:
    small = S.GemmConfig(32, 32, 32, 1, 4)
    _tuned(monkeypatch, tmp_path,
           entry("fwd", 48, 40, 64, 2, dtype="fp16", schedule="persistent", config=small),
           entry("wgrad", 64, 40, 48, 2, dtype="fp16", schedule="persistent",
                 config=S.GemmConfig(64, 32, 32, 1, 4)))  # fmt: skip
    seen = _spy(monkeypatch)
    rng = np.random.default_rng(1)
    lens = [20, 28]
    x = rng.standard_normal((48, 64)).astype(np.float16)
    w = rng.standard_normal((2, 64, 40)).astype(np.float16)
    y = gemm_opt.grouped_matmul(x, w, lens, schedule="auto")
    ref = np.concatenate([x[:20].astype(np.float32) @ w[0], x[20:].astype(np.float32) @ w[1]])
    np.testing.assert_allclose(y.astype(np.float32), ref, rtol=2e-2, atol=2e-2)
    assert (seen[-1].grouped, seen[-1].block_m, seen[-1].block_n) == ("m", 32, 32)
    dy = rng.standard_normal((48, 40)).astype(np.float16)
    gemm_opt.grouped_matmul_variable_k(x, dy, lens, schedule="auto")
    assert (seen[-1].grouped, seen[-1].block_m) == ("k", 64)
    # dgrad has no entry: persistent on the cost model's config
    gemm_opt.grouped_matmul(dy, w, lens, trans_b=True, schedule="auto")
    pick = A.resolve(A.Problem("dgrad", 48, 64, 40, 2), "fp16")
    assert (seen[-1].kind, seen[-1].trans_b, seen[-1].block_m, seen[-1].block_n) == (
        "persistent", True, pick.config.block_m, pick.config.block_n,
    )  # fmt: skip


def test_auto_refuses_a_reduction() -> None:
    a = np.zeros((16, 32), np.float16)
    with pytest.raises(ValueError, match="reduction='linear' with schedule='auto'"):
        gemm_opt.matmul(a, a.T.copy(), schedule="auto", reduction="linear")


def test_auto_work_stealing_checks_the_programs(tmp_path: Path, monkeypatch) -> None:
    _tuned(monkeypatch, tmp_path, entry("dense", 16, 16, 32, dtype="fp16",
                                        schedule="work-stealing"))  # fmt: skip
    a = np.zeros((16, 32), np.float16)
    with pytest.raises(ValueError, match="at least one program per chiplet"):
        gemm_opt.matmul(a, a.T.copy(), schedule="auto", num_programs=1, num_xcds=2)


def test_auto_reports_a_broken_packaged_table(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "cuda90.json").write_text(json.dumps({"format": "x"}))
    monkeypatch.setenv(A.TUNED_DIR_ENV, str(tmp_path))
    a = np.zeros((16, 32), np.float16)
    with pytest.raises(A.TunedTableError, match="not a tuned table"):
        gemm_opt.matmul(a, a.T.copy(), schedule="auto")


def test_choose_memoizes_until_the_table_changes(tmp_path: Path, monkeypatch) -> None:
    import os

    monkeypatch.setattr(A, "RECHECK_S", 0.0)
    args = ("dense", 512, 512, 8192, 1, "bf16")
    first = A.choose(*args, root=tmp_path)
    assert first == A.resolve(A.Problem(*args[:5]), "bf16", root=tmp_path)
    assert A.choose(*args, root=tmp_path) is first  # memoized
    path = write(tmp_path, table(entry("dense", 512, 512, 8192, schedule="persistent")))
    assert A.choose(*args, root=tmp_path).schedule == "persistent"  # a new table is read
    path.write_text(json.dumps(table(entry("dense", 512, 512, 8192, schedule="work-stealing"))))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert A.choose(*args, root=tmp_path).schedule == "work-stealing"
    # the compute units and the atomics policy are part of the key
    empty = tmp_path / "empty"
    assert A.choose(*args, sms=132, root=empty) is A.choose(*args, sms=132, root=empty)
    assert A.choose(*args, sms=132, root=empty) is not A.choose(*args, sms=66, root=empty)
    allowed = A.choose(*args, root=empty, allow_atomic=True)
    assert allowed == A.resolve(A.Problem(*args[:5]), "bf16", root=empty, allow_atomic=True)


def test_a_new_calibration_is_read(tmp_path: Path, monkeypatch) -> None:
    """The calibration beside the table replaces the packaged one, and the memo follows
    its file."""
    import os

    from gemm_opt.runtime import cost_model as C

    monkeypatch.setattr(A, "RECHECK_S", 0.0)
    p = A.Problem("dense", 2048, 2048, 2048)
    packaged = A.rank(p, "bf16", root=tmp_path)[0].us
    doc = json.loads(C.calibration_path(A.DEFAULT_TUNED_DIR, "cuda:90").read_text())
    doc["constants"]["launch_us"] += 100.0
    path = C.calibration_path(tmp_path, "cuda:90")
    path.write_text(json.dumps(doc))
    assert A.rank(p, "bf16", root=tmp_path)[0].us == pytest.approx(packaged + 100.0)
    first = A.choose("dense", 2048, 2048, 2048, 1, "bf16", root=tmp_path)
    doc["constants"]["launch_us"] += 1.0
    path.write_text(json.dumps(doc))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert A.choose("dense", 2048, 2048, 2048, 1, "bf16", root=tmp_path) is not first


def test_packaged_tables_are_valid() -> None:
    """Every shipped table reads (schema, provenance, classes), and names its target;
    its calibration too."""
    from gemm_opt.runtime import cost_model as C

    tables = [p for p in sorted(A.DEFAULT_TUNED_DIR.glob("*.json")) if ".cost." not in p.name]
    assert tables
    for path in tables:
        doc = json.loads(path.read_text())
        target = doc.get("target", "")
        assert path.name == f"{target.replace(':', '')}.json"
        entries = A.validate_table(doc, str(path), target)
        assert entries, f"{path}: no entries"
        cal = C.load_calibration(C.calibration_path(path.parent, target), target)
        assert cal is not None and cal != C.Calibration(), f"{path}: no fitted calibration"


def test_auto_on_cuda_uses_the_device_target_and_compute_units(monkeypatch, tmp_path) -> None:
    """The CUDA path with a fake H100-class device: the model sees the device's SM count."""
    from types import SimpleNamespace

    import torch

    from gemm_opt.runtime import plan as P

    monkeypatch.setenv(A.TUNED_DIR_ENV, str(tmp_path))  # no table: the cost model decides
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    seen = []
    real = A.choose
    monkeypatch.setattr(A, "choose", lambda *a, **k: seen.append(k) or real(*a, **k))

    def gpu(sms: int) -> None:  # a device of `sms` SMs (a new query: sm_count keys on it)
        monkeypatch.setattr(
            torch.cuda,
            "get_device_properties",
            lambda device=None: SimpleNamespace(multi_processor_count=sms),
        )

    a = SimpleNamespace(device=torch.device("cuda", 0))
    problem = ("dense", 512, 512, 8192, 1)
    for sms, red in ((132, "atomic"), (114, None)):
        gpu(sms)
        got = P.resolve_auto("auto", red, None, problem, "cuda", "bf16", a, None, 1)
        pick = A.resolve(A.Problem(*problem), "bf16", sms=sms, allow_atomic=red == "atomic")
        assert got == (pick.schedule, pick.reduction, pick.config, pick.split_k, pick.swap_ab)
        assert (seen[-1]["target"], seen[-1]["sms"]) == ("cuda:90", sms)
        assert seen[-1]["allow_atomic"] is (red == "atomic")


# ---- explain ------------------------------------------------------------------------------


def test_explain_shows_the_choice_its_source_and_every_estimate(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(A.TUNED_DIR_ENV, str(tmp_path))
    ex = gemm_opt.explain(512, 512, 8192)
    assert ex.choice == A.resolve(A.Problem("dense", 512, 512, 8192), "bf16")
    assert ex.choice.source == "model" and not ex.allow_atomic
    # every candidate but swap-AB's, which 512 rows of A are too many for
    assert len(ex.estimates) == len([c for c in A.candidates("dense") if not c.swap_ab])
    us = [e.us for e in ex.estimates]
    assert us == sorted(us)
    assert ex.estimated_us == us[0]
    text = str(ex)
    lines = text.splitlines()
    assert lines[0].startswith("dense 512x512x8192 bf16: ")
    assert "[cost model (cuda:90, 132 SMs)]" in lines[0]
    assert "not allowed (bitwise reproducible)" in lines[1]
    assert len(lines) == 3 + len(ex.estimates)
    assert lines[3].split()[0] == "1*" and "atomic" not in text.split("\n", 2)[2]
    # atomics allowed: the atomic candidates are ranked too
    ex = gemm_opt.explain(512, 512, 8192, dtype="bfloat16", reduction="atomic")
    assert any(e.candidate.reduction == "atomic" for e in ex.estimates)
    # an exact hit names the table
    write(tmp_path, table(entry("dense", 512, 512, 8192, schedule="persistent")))
    ex = gemm_opt.explain(512, 512, 8192)
    assert ex.choice.source == "table" and "tuned table, exact hit" in str(ex)
    assert not ex.plain_kernel and "plain kernel" not in str(ex)
    # sizes the 16-byte twins refuse: the estimates do not cover what runs, and say so
    for args in ((6579, 7927, 3688), (937, 8, 7084), (64, 64, 922)):
        odd = gemm_opt.explain(*args)
        assert odd.plain_kernel and str(odd).splitlines()[2].startswith("note: N or K")
    # multiples of 16 bytes (8 elements of a 16-bit type) take the twins
    for args in ((6579, 7928, 3688), (937, 8, 7080), (64, 64, 920)):
        assert not gemm_opt.explain(*args).plain_kernel
    assert gemm_opt.explain(20, 64, 64, op="wgrad", groups=2).plain_kernel
    assert not gemm_opt.explain(24, 64, 64, op="wgrad", groups=2).plain_kernel
    assert not gemm_opt.explain(24, 64, 64, op="fwd", groups=2).plain_kernel
    grouped = gemm_opt.explain(4096, 4096, 7168, op="fwd", groups=2, dtype="fp16", sms=114)
    assert "x 2 groups fp16" in str(grouped) and "114 SMs" in str(grouped)


@pytest.mark.parametrize(
    ("kw", "error", "match"),
    [
        ({"m": 1.5}, TypeError, "m: expected an int"),
        ({"k": True}, TypeError, "k: expected an int, got bool"),
        ({"m": -1}, ValueError, "m must be a non-negative integer"),
        ({"dtype": "fp8"}, ValueError, "dtype must be one of"),
        ({"op": "gemm"}, ValueError, "op must be one of"),
        ({"groups": 2}, ValueError, "groups must be 1 for dense"),
        ({"reduction": "linear"}, ValueError, "reduction must be None"),
        ({"target": "gfx1250"}, ValueError, "target must be one of"),
        ({"sms": 0}, ValueError, "sms must be at least 1"),
        ({"sms": "132"}, TypeError, "sms: expected an int or None"),
    ],
)
def test_explain_rejects_bad_arguments(kw, error, match) -> None:
    args = {"m": 64, "n": 64, "k": 64, **kw}
    with pytest.raises(error, match=match):
        gemm_opt.explain(args.pop("m"), args.pop("n"), args.pop("k"), **args)


# ---- bitwise reproducibility of "auto" ----------------------------------------------------

#: A small problem tuned (in the tests' table) to atomic stream-K on 32x32x32 tiles: 4 tiles
#: of 3 K iterations split over the model's programs.
ATOMIC = (40, 96, 48)
ATOMIC_CFG = S.GemmConfig(32, 32, 32, 2, 4)


def _atomic_table(monkeypatch, tmp_path: Path) -> None:
    m, k, n = ATOMIC
    _tuned(monkeypatch, tmp_path, entry("dense", m, n, k, dtype="fp16", schedule="stream-k",
                                        reduction="atomic", config=ATOMIC_CFG))  # fmt: skip


def _auto_spec(a, b, reduction=None):
    from gemm_opt.runtime import plan as P

    kw = dict(num_programs=None, num_xcds=1, config=None, out=None, seed=None)
    return P.plan("matmul", a, b, schedule="auto", reduction=reduction, **kw).spec


def test_mixed_auto_calls_are_bitwise_reproducible_unless_atomics_are_asked_for(
    tmp_path: Path, monkeypatch
) -> None:
    """200 auto calls over a mix of shapes, dtypes, numpy and torch operands and model
    interleavings (``seed``): each is bitwise the first call of its shape. The same mix
    with ``reduction="atomic"`` runs the tuned atomic stream-K, whose bits do vary."""
    import ml_dtypes
    import torch

    _atomic_table(monkeypatch, tmp_path)
    rng = np.random.default_rng(11)
    shapes = [ATOMIC, (64, 512, 16), (1, 300, 24), (33, 64, 70), (16, 1024, 8)]
    operands = {}
    for m, k, n in shapes:
        for dt in (np.float16, ml_dtypes.bfloat16):
            a = rng.standard_normal((m, k)).astype(np.float32).astype(dt)
            b = rng.standard_normal((k, n)).astype(np.float32).astype(dt)
            operands[(m, k, n, dt)] = (a, b)
    keys = list(operands)

    def call(key, seed, reduction=None, programs=None):
        a, b = operands[key]
        kw = dict(schedule="auto", reduction=reduction, seed=seed, num_programs=programs)
        if key[3] is np.float16 and seed % 2:  # torch CPU tensors: the gemm_opt operator
            return gemm_opt.matmul(torch.from_numpy(a), torch.from_numpy(b), **kw).numpy()
        return gemm_opt.matmul(a, b, **kw)

    first: dict = {}
    for i in range(200):
        key = keys[int(rng.integers(len(keys)))]
        got = call(key, seed=int(rng.integers(1 << 30)))
        if key not in first:
            first[key] = got
        assert got.tobytes() == first[key].tobytes(), (i, key)
    assert len(first) == len(keys)
    atomic_key = (*ATOMIC, np.float16)
    assert _auto_spec(*operands[atomic_key]).reduction != "atomic"
    assert _auto_spec(*operands[atomic_key], reduction="atomic").reduction == "atomic"
    # 12 K iterations over 8 programs: split tiles, several atomic adds into each
    bits = {call(atomic_key, seed, "atomic", 8).tobytes() for seed in range(2, 42, 2)}
    assert len(bits) > 1, "atomic stream-K's bits follow the programs' order"
    ref = operands[atomic_key][0].astype(np.float64) @ operands[atomic_key][1].astype(np.float64)
    np.testing.assert_allclose(first[atomic_key].astype(np.float64), ref, rtol=2e-2, atol=2e-2)


def test_use_deterministic_algorithms_is_honoured(tmp_path, monkeypatch) -> None:
    """Under torch.use_deterministic_algorithms(True) asking auto for atomics is refused
    as a named atomic stream-K is (RuntimeError; a warning with warn_only, which then
    runs what was asked), and plain auto stays deterministic; the plan cache follows
    the switch."""
    import torch

    _atomic_table(monkeypatch, tmp_path)
    m, k, n = ATOMIC
    rng = np.random.default_rng(3)
    ta = torch.from_numpy(rng.standard_normal((m, k)).astype(np.float16))
    tb = torch.from_numpy(rng.standard_normal((k, n)).astype(np.float16))
    assert _auto_spec(ta, tb, "atomic").reduction == "atomic"
    before = torch.are_deterministic_algorithms_enabled()
    try:
        torch.use_deterministic_algorithms(True)
        assert _auto_spec(ta, tb).reduction != "atomic"
        with pytest.raises(RuntimeError, match=r"reduction='atomic'.*pass reduction=None"):
            gemm_opt.matmul(ta, tb, schedule="auto", reduction="atomic")
        with pytest.raises(RuntimeError, match=r"reduction='atomic'.*use_deterministic_algo"):
            gemm_opt.matmul(ta[:16, :64], tb[:64], schedule="stream-k", reduction="atomic")
        torch.use_deterministic_algorithms(True, warn_only=True)
        with pytest.warns(UserWarning, match=r"reduction='atomic'"):
            c = gemm_opt.matmul(ta, tb, schedule="auto", reduction="atomic")
        assert c.shape == (m, n)
        with pytest.warns(UserWarning, match=r"reduction='atomic'"):
            gemm_opt.matmul(ta[:16, :64], tb[:64], schedule="stream-k", reduction="atomic")
    finally:
        torch.use_deterministic_algorithms(before)
    assert _auto_spec(ta, tb, "atomic").reduction == "atomic"
    c = gemm_opt.matmul(ta[:16, :64], tb[:64], schedule="stream-k", reduction="atomic")
    assert c.shape == (16, n)


def test_the_determinism_warning_names_the_users_line() -> None:
    """Under ``warn_only`` the warning points at the caller's ``gemm_opt.matmul``
    line, not at a line of the package or of torch's dispatch."""
    import warnings

    import torch

    rng = np.random.default_rng(4)
    ta = torch.from_numpy(rng.standard_normal((16, 64)).astype(np.float16))
    tb = torch.from_numpy(rng.standard_normal((64, 32)).astype(np.float16))
    before = torch.are_deterministic_algorithms_enabled()
    try:
        torch.use_deterministic_algorithms(True, warn_only=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            gemm_opt.matmul(ta, tb, schedule="stream-k", reduction="atomic")
    finally:
        torch.use_deterministic_algorithms(before)
    ours = [w for w in caught if "reduction='atomic'" in str(w.message)]
    assert ours and {w.filename for w in ours} == {__file__}
