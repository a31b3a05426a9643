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


# ---- the fallback rule -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("problem", "schedule", "reduction", "config"),
    [
        # the shape class's config (small: 64 tiles, K 8192) fills at most
        # half of 132 SMs: stream-K
        (A.Problem("dense", 512, 512, 8192), "stream-k", "atomic", "small"),
        # decode: 64 small tiles, K 7168
        (A.Problem("dense", 16, 4096, 7168), "stream-k", "atomic", "small"),
        # 112 narrow tiles > 66: enough tiles, data-parallel
        (A.Problem("dense", 128, 7168, 2048), "data-parallel", None, "narrow"),
        (A.Problem("dense", 64, 7168, 2048), "data-parallel", None, "small"),
        # few tiles but a short K: nothing to split
        (A.Problem("dense", 512, 512, 1024), "data-parallel", None, "small"),
        (A.Problem("dense", 4096, 4096, 4096), "data-parallel", None, "wide"),
        (A.Problem("fwd", 4096, 4096, 7168, 2), "persistent", None, "wide"),
        # dgrad and wgrad have the pipelined body too: the shape classes
        (A.Problem("dgrad", 4096, 4096, 7168, 2), "persistent", None, "wide"),
        (A.Problem("wgrad", 4096, 4096, 7168, 2), "persistent", None, "wide"),
        # wgrad's 64 grids of 256 x 512 fill a wave of 128x256 tiles; one would not
        (A.Problem("wgrad", 256, 512, 8192, 64), "persistent", None, "wide"),
        (A.Problem("wgrad", 256, 512, 8192, 1), "persistent", None, "small"),
    ],
)
def test_fallback_rule(problem, schedule, reduction, config) -> None:
    choice = A.fallback_choice(problem, 132)
    assert (choice.schedule, choice.reduction) == (schedule, reduction)
    assert choice.config == h100.GPU_CONFIGS[config]
    assert choice.source == "fallback"
    grouped, _ = A.OP_KERNELS[problem.op]
    name = h100.gpu_config_name(
        problem.m, problem.n, grouped, 132, reduction, groups=problem.groups
    )
    assert choice.config == h100.GPU_CONFIGS[name], "what the fixed schedule runs"


def test_fallback_depends_on_the_compute_units() -> None:
    p = A.Problem("dense", 512, 512, 8192)  # 64 small tiles
    assert A.fallback_choice(p, 132).schedule == "stream-k"
    assert A.fallback_choice(p, 100).schedule == "data-parallel"


# ---- lookup ----------------------------------------------------------------------------


def test_no_table_resolves_by_the_rule(tmp_path: Path) -> None:
    p = A.Problem("dense", 512, 512, 8192)
    assert A.load_table("cuda:90", tmp_path) is None
    assert A.resolve(p, "bf16", root=tmp_path) == A.fallback_choice(p, 132)


def test_lookup_takes_the_nearest_entry_of_the_class(tmp_path: Path) -> None:
    narrow = h100.GPU_CONFIGS["narrow"]
    write(
        tmp_path,
        table(
            entry("dense", 4096, 4096, 4096, schedule="persistent"),
            entry("dense", 2048, 2048, 2048, schedule="work-stealing", config=narrow),
            entry("dense", 8192, 8192, 8192, schedule="stream-k", reduction="tree"),
            entry("dense", 4096, 4096, 4096, dtype="fp16", schedule="stream-k", reduction="linear"),
        ),
    )
    got = A.resolve(A.Problem("dense", 3000, 4000, 4096), "bf16", root=tmp_path)
    assert (got.schedule, got.reduction, got.config, got.source) == (
        "persistent", None, h100.GPU_CONFIG, "table",
    )  # fmt: skip
    assert got.tuned == A.Problem("dense", 4096, 4096, 4096)
    got = A.resolve(A.Problem("dense", 2000, 2100, 1500), "bf16", root=tmp_path)
    assert (got.schedule, got.config) == ("work-stealing", narrow)
    # another class: the 8192^3 entry serves n, k > 4096
    got = A.resolve(A.Problem("dense", 2000, 6000, 6000), "bf16", root=tmp_path)
    assert (got.schedule, got.reduction) == ("stream-k", "tree")
    # the dtype is part of the key
    got = A.resolve(A.Problem("dense", 4096, 4096, 4096), "fp16", root=tmp_path)
    assert (got.schedule, got.reduction) == ("stream-k", "linear")
    # a class without entries falls back
    p = A.Problem("dense", 16, 4096, 7168)
    assert A.resolve(p, "bf16", root=tmp_path) == A.fallback_choice(p, 132)


def test_grouped_lookup_uses_tokens_per_group(tmp_path: Path) -> None:
    cfg = S.GemmConfig(128, 256, 64, 8, 8)
    write(tmp_path, table(entry("fwd", 16 * 2048, 4096, 7168, 16, schedule="persistent",
                                config=cfg)))  # fmt: skip
    got = A.resolve(A.Problem("fwd", 32 * 2048, 4096, 7168, 32), "bf16", root=tmp_path)
    assert got.config == cfg and got.source == "table"
    # the same total rows over many more groups is another class (few tokens per group)
    got = A.resolve(A.Problem("fwd", 16 * 2048, 4096, 7168, 512), "bf16", root=tmp_path)
    assert got.source == "fallback"
    # dgrad is another operation (its kernels read B transposed)
    got = A.resolve(A.Problem("dgrad", 16 * 2048, 4096, 7168, 16), "bf16", root=tmp_path)
    assert got.source == "fallback"


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


def test_auto_runs_the_tuned_choice_on_the_model(tmp_path: Path, monkeypatch) -> None:
    cfg = S.GemmConfig(32, 32, 32, 2, 4)
    _tuned(monkeypatch, tmp_path,
           entry("dense", 40, 48, 96, dtype="fp16", schedule="stream-k", reduction="linear",
                 config=cfg))  # fmt: skip
    seen = []
    from gemm_opt.kernels import model_gemm

    real = model_gemm.run
    monkeypatch.setattr(
        model_gemm, "run", lambda plan, *a, **k: seen.append(plan.spec) or real(plan, *a, **k)
    )
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
    # another dtype has no entry: the rule (few tiles, short K: data-parallel)
    import ml_dtypes

    gemm_opt.matmul(a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16), schedule="auto")
    assert (seen[-1].kind, seen[-1].block_m) == ("data-parallel", 64)


def test_auto_grouped_forms_resolve_by_their_operation(tmp_path: Path, monkeypatch) -> None:
    small = S.GemmConfig(32, 32, 32, 1, 4)
    _tuned(monkeypatch, tmp_path,
           entry("fwd", 48, 40, 64, 2, dtype="fp16", schedule="persistent", config=small),
           entry("wgrad", 64, 40, 48, 2, dtype="fp16", schedule="persistent",
                 config=S.GemmConfig(64, 32, 32, 1, 4)))  # fmt: skip
    from gemm_opt.kernels import model_gemm

    seen = []
    real = model_gemm.run
    monkeypatch.setattr(
        model_gemm, "run", lambda plan, *a, **k: seen.append(plan.spec) or real(plan, *a, **k)
    )
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
    # dgrad has no entry: persistent with its shape class's config (48 x 64: small)
    gemm_opt.grouped_matmul(dy, w, lens, trans_b=True, schedule="auto")
    small_class = h100.GPU_CONFIGS["small"]
    assert (seen[-1].trans_b, seen[-1].block_m, seen[-1].block_n) == (
        True, small_class.block_m, small_class.block_n
    )  # fmt: skip


def test_auto_refuses_a_reduction() -> None:
    a = np.zeros((16, 32), np.float16)
    with pytest.raises(ValueError, match="reduction='linear' with schedule='auto'"):
        gemm_opt.matmul(a, a.T.copy(), schedule="auto", reduction="linear")


def test_auto_work_stealing_checks_the_programs(tmp_path: Path, monkeypatch) -> None:
    _tuned(monkeypatch, tmp_path, entry("dense", 16, 32, 32, dtype="fp16",
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
    assert first == A.fallback_choice(A.Problem(*args[:5]), 132)
    assert A.choose(*args, root=tmp_path) is first  # memoized
    path = write(tmp_path, table(entry("dense", 512, 512, 8192, schedule="persistent")))
    assert A.choose(*args, root=tmp_path).schedule == "persistent"  # a new table is read
    path.write_text(json.dumps(table(entry("dense", 512, 512, 8192, schedule="work-stealing"))))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert A.choose(*args, root=tmp_path).schedule == "work-stealing"
    # the compute units are part of the key (the rule depends on them)
    empty = tmp_path / "empty"
    assert A.choose(*args, sms=132, root=empty).schedule == "stream-k"
    assert A.choose(*args, sms=100, root=empty).schedule == "data-parallel"


def test_packaged_tables_are_valid() -> None:
    """Every shipped table reads (schema, provenance, classes), and names its target."""
    for path in sorted(A.DEFAULT_TUNED_DIR.glob("*.json")):
        doc = json.loads(path.read_text())
        target = doc.get("target", "")
        assert path.name == f"{target.replace(':', '')}.json"
        entries = A.validate_table(doc, str(path), target)
        assert entries, f"{path}: no entries"


def test_auto_on_cuda_uses_the_device_target_and_compute_units(monkeypatch, tmp_path) -> None:
    """The CUDA path with a fake H100-class device: the rule sees the device's SM count."""
    from types import SimpleNamespace

    import torch

    from gemm_opt.runtime import plan as P

    monkeypatch.setenv(A.TUNED_DIR_ENV, str(tmp_path))  # no table: the rule decides
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))

    def gpu(sms: int) -> None:  # a device of `sms` SMs (a new query: sm_count keys on it)
        monkeypatch.setattr(
            torch.cuda,
            "get_device_properties",
            lambda device=None: SimpleNamespace(multi_processor_count=sms),
        )

    gpu(132)
    a = SimpleNamespace(device=torch.device("cuda", 0))
    problem = ("dense", 512, 512, 8192, 1)  # 64 small tiles of 128 iterations
    kind, red, cfg = P.resolve_auto("auto", "atomic", None, problem, "cuda", "bf16", a, None, 1)
    assert (kind, red, cfg) == ("stream-k", "atomic", h100.GPU_CONFIGS["small"])
    gpu(114)  # an H100 PCIe: 64 tiles fill more than half of it
    kind, red, cfg = P.resolve_auto("auto", None, None, problem, "cuda", "bf16", a, None, 1)
    assert (kind, red) == ("data-parallel", None)


# ---- bitwise reproducibility of "auto" ----------------------------------------------------

#: A skinny long-K problem: the fallback rule's atomic stream-K (1 tile, K = 4096).
SKINNY = (64, 4096, 64)


def _skinny() -> tuple[np.ndarray, np.ndarray]:
    m, k, n = SKINNY
    rng = np.random.default_rng(7)
    return rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(
        np.float16
    )


def _auto_spec(a, b, reduction=None):
    from gemm_opt.runtime import plan as P

    kw = dict(num_programs=None, num_xcds=1, config=None, out=None, seed=None)
    return P.plan("matmul", a, b, schedule="auto", reduction=reduction, **kw).spec


def test_the_deterministic_stand_in_of_atomic_stream_k() -> None:
    small, wide = h100.GPU_CONFIGS["small"], h100.GPU_CONFIGS["wide"]
    atomic = A.Choice("stream-k", "atomic", small, "table")
    assert A.deterministic(atomic) == A.Choice("stream-k", "linear", small, "table")
    # the wide class's kernels spill with a fix-up tile: data-parallel on its config
    assert A.deterministic(A.Choice("stream-k", "atomic", wide, "table")) == A.Choice(
        "data-parallel", None, wide, "table"
    )
    for kept in (
        A.Choice("stream-k", "tree", small, "table"),
        A.Choice("persistent", None, small, "fallback"),
    ):
        assert A.deterministic(kept) is kept


def test_auto_is_bitwise_reproducible_under_torch_deterministic(tmp_path, monkeypatch) -> None:
    """Where the rule or the table says atomic stream-K, auto runs it, unless
    torch.use_deterministic_algorithms(True) is in force: then it runs the linear
    fix-up on the same config (identical bits under every interleaving of its
    programs)."""
    import torch

    monkeypatch.setenv(A.TUNED_DIR_ENV, str(tmp_path / "none"))  # no table: the rule decides
    a, b = _skinny()
    rule = A.fallback_choice(A.Problem("dense", *SKINNY[::2], SKINNY[1]), 132)
    assert (rule.schedule, rule.reduction) == ("stream-k", "atomic")
    assert _auto_spec(a, b).reduction == "atomic"
    assert _auto_spec(a, b, "atomic").reduction == "atomic"
    cfg = S.GemmConfig(32, 32, 32, 2, 4)  # 4 tiles of 3 K iterations, split over 8 programs
    _tuned(monkeypatch, tmp_path, entry("dense", 40, 48, 96, dtype="fp16", schedule="stream-k",
                                        reduction="atomic", config=cfg))  # fmt: skip
    rng = np.random.default_rng(8)
    a40 = rng.standard_normal((40, 96)).astype(np.float16)
    b40 = rng.standard_normal((96, 48)).astype(np.float16)
    assert _auto_spec(a40, b40).reduction == "atomic"
    before = torch.are_deterministic_algorithms_enabled()
    try:
        torch.use_deterministic_algorithms(True)
        spec = _auto_spec(a, b)
        assert (spec.kind, spec.reduction, spec.block_m) == ("stream-k", "linear", 64)
        assert _auto_spec(a40, b40) == S.KernelSpec(
            "stream-k", "linear", "none", "fp16", 32, 32, 32, 2, 4, None
        )
        first = gemm_opt.matmul(a40, b40, schedule="auto", num_programs=8)
        for seed in (1, 2, 3):
            again = gemm_opt.matmul(a40, b40, schedule="auto", num_programs=8, seed=seed)
            assert again.tobytes() == first.tobytes(), seed
    finally:
        torch.use_deterministic_algorithms(before)
    ref = a40.astype(np.float64) @ b40.astype(np.float64)
    np.testing.assert_allclose(first.astype(np.float64), ref, rtol=2e-2, atol=2e-2)


def test_use_deterministic_algorithms_is_honoured(tmp_path, monkeypatch) -> None:
    """Under torch.use_deterministic_algorithms(True) auto never picks atomic stream-K,
    even when asked, and a named atomic stream-K is a RuntimeError (a warning with
    warn_only), as PyTorch's own nondeterministic operations are; the plan cache
    follows the switch."""
    import torch

    monkeypatch.setenv(A.TUNED_DIR_ENV, str(tmp_path))
    a, b = _skinny()
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    assert _auto_spec(ta, tb, "atomic").reduction == "atomic"
    before = torch.are_deterministic_algorithms_enabled()
    try:
        torch.use_deterministic_algorithms(True)
        assert _auto_spec(ta, tb, "atomic").reduction == "linear"
        assert _auto_spec(a, b, "atomic").reduction == "linear"
        with pytest.raises(RuntimeError, match=r"reduction='atomic'.*use_deterministic_algo"):
            gemm_opt.matmul(ta[:16, :64], tb[:64], schedule="stream-k", reduction="atomic")
        torch.use_deterministic_algorithms(True, warn_only=True)
        with pytest.warns(UserWarning, match=r"reduction='atomic'"):
            gemm_opt.matmul(ta[:16, :64], tb[:64], schedule="stream-k", reduction="atomic")
    finally:
        torch.use_deterministic_algorithms(before)
    assert _auto_spec(ta, tb, "atomic").reduction == "atomic"
    c = gemm_opt.matmul(ta[:16, :64], tb[:64], schedule="stream-k", reduction="atomic")
    assert c.shape == (16, 64)
