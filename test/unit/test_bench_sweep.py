"""``benchmarks/h100/sweep.py`` where there is no GPU: its problems, classes, summary and failures.

The sweep runs on the GPU machine with only torch; here (CPU torch) its
problem generator must be seeded and keep its shares and caps, its operands
must be views of row-major storage (no copy), its classes and summary math
must follow the stated rules, and it must refuse loudly (exit 2) without
bundles or a GPU.
"""

from __future__ import annotations

import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from support.scripts import load_script

H100 = Path(__file__).resolve().parents[2] / "benchmarks" / "h100"
REPO = H100.parents[1]


@pytest.fixture(scope="module")
def sweep():
    return load_script(H100 / "sweep.py", "bench_sweep")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(H100 / "sweep.py"), *args],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin"},
    )


# ---- the problems ----------------------------------------------------------------------


def test_the_same_seed_gives_the_same_problems(sweep) -> None:
    first = sweep.random_problems(7, 120)
    assert first == sweep.random_problems(7, 120)
    assert first != sweep.random_problems(8, 120)
    assert len(first) == 120 and len({p.name for p in first}) == 120


@pytest.mark.parametrize("count", [100, 101, 150, 200])
def test_a_fifth_at_least_is_unaligned_and_the_rest_aligned(sweep, count: int) -> None:
    problems = sweep.random_problems(count, count)
    unaligned = [p for p in problems if p.unaligned]
    assert len(unaligned) >= count / 5
    assert len(unaligned) == round(count * sweep.UNALIGNED_FRACTION)
    for p in problems:
        assert p.unaligned == bool(p.k % 8 or p.n % 8)


def test_every_layout_form_and_dtype_is_dealt_in_its_share(sweep) -> None:
    problems = sweep.random_problems(3, 100)
    assert Counter(p.layout for p in problems) == dict.fromkeys(sweep.Layout, 25)
    assert Counter(p.form for p in problems) == {
        sweep.Form.PLAIN: 60,
        sweep.Form.BATCHED: 20,
        sweep.Form.BROADCAST: 20,
    }
    assert Counter(p.dtype for p in problems) == {"float16": 50, "bfloat16": 50}
    assert sum(p.m == 1 for p in problems) == 5  # GEMVs
    for p in problems:
        if p.form is sweep.Form.PLAIN:
            assert p.batch == 1 and len(p.a_shape) == len(p.b_shape) == 2
        else:
            assert 2 <= p.batch <= 16 and len(p.a_shape) == 3
            assert len(p.b_shape) == (3 if p.form is sweep.Form.BATCHED else 2)


def test_sizes_are_log_uniform_within_the_work_cap(sweep) -> None:
    problems = sweep.random_problems(11, 400)
    for p in problems:
        assert 1 <= min(p.m, p.n, p.k) and max(p.m, p.n, p.k) <= 16384
        assert p.macs <= sweep.MAX_MACS and p.largest_elements <= sweep.MAX_ELEMENTS
        assert sweep.within_caps(p)
    # log-uniform (M is not rounded to the alignment): about a 13th of the draws in each
    # octave from 2 to 16384 (a uniform M would put 3/4 of them in the last)
    octaves = Counter(int(math.log2(p.m)) for p in problems if p.m > 1)
    assert all(12 <= octaves[i] <= 50 for i in range(1, 14)), octaves
    assert max(p.macs for p in problems) >= sweep.BIG_MACS  # the cap leaves large problems
    big = sweep.Problem("x", 16384, 16384, 16384, "float16")
    assert not sweep.within_caps(big)  # 2^42 multiply-adds: drawn again
    wide = sweep.Problem("x", 16384, 16384, 1, "float16", form=sweep.Form.BROADCAST, batch=2)
    assert not sweep.within_caps(wide)  # 2^29 output elements


def test_the_suite_is_the_existing_dense_shapes_in_nn(sweep) -> None:
    problems = sweep.suite_problems()
    shapes = {(p.m, p.n, p.k) for p in problems}
    assert {(512, 512, 8192), (16, 4096, 7168), (128, 7168, 2048), (8192, 8192, 8192)} <= shapes
    assert {(1024, 1024, 1024), (8192, 8192, 1024), (3840, 4096, 2048)} <= shapes
    assert len(problems) == 2 * len(shapes) == 16  # each shape once, in each dtype
    assert all(p.layout is sweep.Layout.NN and p.form is sweep.Form.PLAIN for p in problems)


@pytest.mark.parametrize("form", ["PLAIN", "BATCHED", "BROADCAST"])
@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
def test_every_layout_is_a_view_of_row_major_storage(sweep, layout: str, form: str) -> None:
    torch = pytest.importorskip("torch")
    lay, frm = sweep.Layout[layout], sweep.Form[form]
    p = sweep.Problem("x", 5, 6, 7, "bfloat16", lay, frm, 1 if frm is sweep.Form.PLAIN else 3)
    ops = sweep.operands(torch, p, "cpu", seed=0)
    for x, store, shape, transposed in (
        (ops.a, ops.a_store, p.a_shape, lay.a_transposed),
        (ops.b, ops.b_store, p.b_shape, lay.b_transposed),
    ):
        assert tuple(x.shape) == shape and x.dtype == torch.bfloat16
        assert store.is_contiguous()
        assert x.untyped_storage().data_ptr() == store.untyped_storage().data_ptr()
        assert x.data_ptr() == store.data_ptr() and x.numel() == store.numel()
        assert x.is_contiguous() == (not transposed)
        assert x.stride(-1 if transposed else -2) == (shape[-2] if transposed else shape[-1])
        store.view(-1)[1] = 42.0  # one storage: the write shows through the view
        assert (x == 42.0).sum() == 1
    assert tuple((ops.a @ ops.b).shape) == p.out_shape


# ---- classes and the summary -----------------------------------------------------------


@pytest.mark.parametrize(
    ("m", "n", "k", "want"),
    [
        (1, 4096, 4096, "gemv"),
        (1, 4095, 7, "gemv"),  # M = 1 first
        (4096, 4095, 4096, "unaligned"),
        (4096, 4096, 4097, "unaligned"),
        (16, 16, 16, "small"),
        (4096, 8, 8, "small"),
        (512, 512, 512, "medium"),  # 2^27: not small
        (4096, 4096, 4096, "large-square"),
        (2048, 8192, 4096, "large-square"),  # spread 4
        (2048, 16384, 4096, "long-k"),  # spread 8, K >= 2 min(M, N)
        (8192, 8192, 1024, "short-k"),
        (16384, 16384, 8, "short-k"),
        (512, 512, 8192, "long-k"),
        (16, 4096, 7168, "long-k"),
        (4096, 4096, 8192, "large-square"),
        (1024, 1024, 1024, "medium"),
        (128, 7168, 2048, "medium"),
        (16384, 16384, 2048, "medium"),  # spread 8, K not long
    ],
)
def test_the_classes_follow_the_stated_rule(sweep, m: int, n: int, k: int, want: str) -> None:
    p = sweep.Problem("x", m, n, k, "float16")
    assert sweep.classify(p) == want
    transposed = sweep.Problem("x", m, n, k, "float16", sweep.Layout.TT, sweep.Form.BATCHED, 2)
    assert sweep.classify(transposed) == want  # layout and batch are the other axes


def _row(sweep, name: str, cls: str, outcome: str, ratio: float | None, **kw) -> dict:
    p = sweep.Problem(name, 64, 64, 64, kw.pop("dtype", "float16"), **kw)
    return {**sweep.base_row(p), "class": cls, "outcome": outcome, "ratio": ratio}


def test_summary_takes_geomean_and_worst_over_the_timed_problems(sweep) -> None:
    rows = [
        _row(sweep, "a", "small", "ok", 0.5),
        _row(sweep, "b", "small", "ok", 2.0),
        _row(sweep, "c", "small", "ok", 4.0),
        _row(sweep, "d", "small", "refused", None, layout=sweep.Layout.NT),
        _row(sweep, "e", "medium", "wrong", None),
        _row(sweep, "f", "medium", "not run", None),
    ]
    s = sweep.summarize(rows)
    assert s["count"] == 6 and s["timed"] == 3
    assert (s["refused"], s["wrong"], s["not run"], s["error"]) == (1, 1, 1, 0)
    assert s["geomean"] == pytest.approx(4.0 ** (1 / 3))  # (0.5 * 2 * 4)^(1/3)
    assert (s["worst"], s["worst_problem"]) == (0.5, "a")
    medium = sweep.summarize([r for r in rows if r["class"] == "medium"])
    assert medium["timed"] == 0 and medium["geomean"] is None and medium["worst"] is None
    assert sweep.geomean([0.9, 0.9]) == pytest.approx(0.9)
    with pytest.raises(ValueError, match="positive"):
        sweep.geomean([])
    groups = sweep.groups(rows)
    assert [r["name"] for r in groups["transposed"]] == ["d"]
    assert len(groups["small"]) == 4 and len(groups["layout NN"]) == 5


def test_markdown_states_classes_large_problems_refusals_and_the_command(sweep) -> None:
    rows = [
        _row(sweep, "a", "small", "ok", 0.8),
        _row(sweep, "b", "small", "ok", 1.25),
        {**_row(sweep, "big", "large-square", "ok", 0.95), "macs": 2**36},
        {
            **_row(sweep, "t1", "medium", "refused", None),
            "detail": "ValueError: a: strides (1, 64)",
        },
        {
            **_row(sweep, "t2", "medium", "refused", None),
            "detail": "ValueError: a: strides (1, 96)",
        },
        {**_row(sweep, "w", "medium", "wrong", None), "detail": "max err/bound 3.2"},
    ]
    text = sweep.markdown(rows, {"gpu": "GPU"}, "python3 benchmarks/h100/sweep.py --seed 1")
    assert "    python3 benchmarks/h100/sweep.py --seed 1" in text
    assert "| small | 2 | 0 | 0 | 2 | 1.00 | 0.80 | a |" in text
    assert "| medium | 3 | 2 | 1 | 0 |  |  |  |" in text
    assert "geomean 0.98, worst 0.80 (a)" in text  # (0.8 * 1.25 * 0.95)^(1/3)
    assert "at least 2^33 multiply-adds** (batch x M x N x K): 1, 1 timed, min ratio 0.95" in text
    assert "- 2x (t1): ValueError: a: strides (1, 64)" in text  # one kind of refusal
    assert "- w 64x64x64: wrong: max err/bound 3.2" in text
    assert "sweep.png" not in text
    assert "![ratio over the problems, by class](sweep.png)" in sweep.markdown(
        rows, {}, "", "sweep.png"
    )


def test_no_plot_without_matplotlib_or_timed_problems(sweep, monkeypatch, tmp_path) -> None:
    rows = [_row(sweep, "a", "small", "ok", 0.8)]
    assert sweep.plot([_row(sweep, "a", "small", "refused", None)], tmp_path / "p.png")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert "matplotlib is not importable" in sweep.plot(rows, tmp_path / "p.png")
    assert not (tmp_path / "p.png").exists()


# ---- the command line ------------------------------------------------------------------


def test_misuse_and_missing_bundles_fail_loudly(tmp_path: Path) -> None:
    out = str(tmp_path / "o")
    proc = _run("--bundles", str(tmp_path), "--out", out, "--count", "0")
    assert proc.returncode == 2 and "--count must be at least 1" in proc.stderr
    proc = _run("--bundles", str(tmp_path), "--out", out, "--reps", "0")
    assert proc.returncode == 2 and "--reps must be at least 1" in proc.stderr
    proc = _run("--bundles", str(tmp_path), "--out", out)
    assert proc.returncode == 2, proc.stderr
    assert "no kernels in" in proc.stderr
    assert "python -m gemm_opt.kernels.build_bundles --target cuda:90" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_no_gpu_is_refused_after_the_bundle_check(tmp_path: Path) -> None:
    from gemm_opt.runtime import Arg, Bundle, BundleKernel, GridDim

    kernel = BundleKernel(
        name="gemm_one",
        symbol="gemm",
        target="cuda:90",
        sm="sm_90a",
        num_warps=4,
        threads_per_warp=32,
        shared_bytes=0,
        args=(Arg("c", "*fp16", 16),),
        grid=(GridDim(), GridDim(), GridDim()),
        binary=b"\x7fELF" + bytes(8),
    )
    (tmp_path / "cuda90").mkdir()
    Bundle((kernel,)).write(tmp_path / "cuda90" / "schedules.bundle")
    proc = _run("--bundles", str(tmp_path), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2, proc.stderr
    assert "no CUDA GPU visible to torch" in proc.stderr and "Traceback" not in proc.stderr


# ---- one problem, the GPU's part played by the CPU -------------------------------------


class _FakeApi:
    """``gemm_opt`` as the sweep calls it: ``matmul(a, b, schedule="auto")`` returning
    ``result(a, b)`` or raising ``error``."""

    def __init__(self, result=None, error: Exception | None = None) -> None:
        self.result, self.error, self.calls = result, error, 0

    def matmul(self, a, b, *, schedule: str):
        assert schedule == "auto"
        self.calls += 1
        if self.error is not None:
            raise self.error
        return self.result(a, b)


@pytest.fixture
def cpu_problem(sweep, monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    p = sweep.Problem("p", 40, 24, 300, "bfloat16", sweep.Layout.NT)

    def run(api):
        return sweep.run_problem(torch, api, p, 5, 3, None, device="cpu")

    return run


def _exact(a, b):
    return (a.double() @ b.double()).to(a.dtype)


def test_a_refusal_or_a_missing_kernel_is_recorded_not_raised(cpu_problem) -> None:
    from gemm_opt.runtime.gemm import KernelMissing

    run = cpu_problem
    why = ValueError("b: the kernel reads rows with unit stride\n(pass b.contiguous())")
    row = run(_FakeApi(error=why))
    assert row["outcome"] == "refused" and row["ratio"] is None
    assert row["detail"] == "ValueError: b: the kernel reads rows with unit stride"
    row = run(_FakeApi(error=KernelMissing("no compiled kernel 'x'")))
    assert row["outcome"] == "missing" and "no compiled kernel" in row["detail"]
    with pytest.raises(RuntimeError):  # anything else is a crash: the caller records it
        run(_FakeApi(error=RuntimeError("illegal address")))


def test_a_result_outside_the_bound_or_unwritten_is_wrong(cpu_problem) -> None:
    run = cpu_problem

    def perturbed(a, b):
        c = _exact(a, b)
        c[3, 4] = c[3, 4].double() * (1 + 2**-6) + 0.5
        return c

    row = run(_FakeApi(perturbed))
    assert row["outcome"] == "wrong" and row["err_over_bound"] > 1
    assert row["detail"].startswith("max err/bound")

    def unwritten(a, b):
        c = _exact(a, b)
        c[-1, -1] = float("nan")
        return c

    row = run(_FakeApi(unwritten))
    assert row["outcome"] == "wrong" and "unwritten" in row["detail"]
    row = run(_FakeApi(lambda a, b: _exact(a, b)[:, :-1]))
    assert row["outcome"] == "wrong" and row["detail"] == "shape (40, 23), expected (40, 24)"


def test_a_correct_result_is_timed_against_torch(sweep, cpu_problem, monkeypatch) -> None:
    run = cpu_problem
    seen = {}

    def bench(fns, reps, warmup, flush):
        seen["fns"] = fns
        for f in fns.values():
            f()
        return {"ours": {"median_ms": 0.02}, "torch": {"median_ms": 0.015}}

    monkeypatch.setattr(sweep.benchlib, "bench", bench)
    api = _FakeApi(_exact)
    row = run(api)
    assert row["outcome"] == "ok" and 0 <= row["err_over_bound"] <= 1
    assert (row["ours_us"], row["torch_us"], row["ratio"]) == (20.0, 15.0, 0.75)
    assert set(seen["fns"]) == {"ours", "torch"} and api.calls == 2  # the check, then timed
    assert row["choice"].startswith("gemm_dataparallel_tb_bf16")  # the plan of the NT call


# ---- pairs: layouts against NN, batches against one flat call ----------------------------


def test_pairs_hold_every_layout_and_batch_form_at_equal_work(sweep) -> None:
    pairs = sweep.pair_problems()
    layouts = [p for p in pairs if p.kind == "layout"]
    batches = [p for p in pairs if p.kind == "batch"]
    assert len(layouts) == 2 * len(sweep.PAIR_SHAPES) and len(batches) == 2 * len(sweep.BATCH_PAIRS)
    for pair in layouts:
        assert set(pair.variants) == {"NN", "NT", "TN", "TT"} and pair.base == "NN"
        assert len({(p.m, p.n, p.k, p.dtype, p.form) for p in pair.variants.values()}) == 1
    for pair in batches:
        assert set(pair.variants) == {"flat", "3-D", "3-D x 2-D"} and pair.base == "flat"
        assert len({p.macs for p in pair.variants.values()}) == 1
        assert pair.variants["flat"].form is sweep.Form.PLAIN


def test_a_pair_is_checked_on_each_variant_then_timed_together(sweep, monkeypatch) -> None:
    """On the model: every variant is checked against float64 (one wrong variant makes
    the pair wrong, named), then all of them and torch's base are timed in one bench
    call; each ratio is base time / variant time, and the tables say which meet 0.97."""
    torch = pytest.importorskip("torch")
    import gemm_opt

    def problem(layout="NN", form=sweep.Form.PLAIN, batch=1, m=21):
        return sweep.Problem("q", m, 19, 40, "float16", sweep.Layout(layout), form, batch)

    pair = sweep.Pair("layout", "21x19x40", "float16", "NN",
                      {x: problem(x) for x in ("NN", "NT", "TN", "TT")})  # fmt: skip
    times = {"NN": 0.010, "NT": 0.0102, "TN": 0.011, "TT": 0.010, "torch": 0.009}
    seen = {}

    def bench(fns, reps, warmup, flush):
        seen["fns"] = set(fns)
        return {v: {"median_ms": t} for v, t in times.items()}

    monkeypatch.setattr(sweep.benchlib, "bench", bench)
    row = sweep.run_pair(torch, gemm_opt, pair, 3, 5, None, device="cpu")
    assert row["outcome"] == "ok" and seen["fns"] == set(times)
    assert row["NT_vs_base"] == round(0.010 / 0.0102, 4) and row["TN_vs_base"] == round(1 / 1.1, 4)
    assert "_tb_" in row["NT_choice"] and "_ta_" in row["TN_choice"]
    batch = sweep.Pair("batch", "3x7x19x40", "float16", "flat", {
        "flat": problem(m=21), "3-D": problem(form=sweep.Form.BATCHED, batch=3, m=7),
        "3-D x 2-D": problem(form=sweep.Form.BROADCAST, batch=3, m=7)})  # fmt: skip
    times = {"flat": 0.010, "3-D": 0.0105, "3-D x 2-D": 0.010, "torch": 0.012}
    brow = sweep.run_pair(torch, gemm_opt, batch, 4, 5, None, device="cpu")
    assert brow["outcome"] == "ok" and "grouped" in brow["3-D_choice"]
    text = "\n".join(sweep.pair_markdown([row, brow]))
    assert "**Layouts against NN**" in text and "2 of 3 do" in text  # TN is 0.91
    assert "| 21x19x40 | float16 | 10.0 | 0.98 | 0.91 | 1.00 | 1.11 |" in text
    assert "**Batches against one flat call of the same size**" in text and "1 of 2 do" in text

    class Off:
        def matmul(self, a, b, *, schedule):
            c = gemm_opt.matmul(a, b, schedule=schedule)
            return c + 1 if a.stride(-2) == 1 else c  # wrong when A is transposed

    row = sweep.run_pair(torch, Off(), pair, 3, 5, None, device="cpu")
    assert row["outcome"] == "wrong" and row["detail"].startswith("TN: max err/bound")


def test_plot_results_draws_the_sweep_from_its_csv(sweep, monkeypatch, tmp_path) -> None:
    rows = [
        {**sweep.base_row(sweep.Problem("a", 8, 8, 8, "float16")), "outcome": "ok",
         "ratio": 1.25},
        sweep.base_row(sweep.Problem("b", 8, 8, 16, "float16")),  # not run: no ratio
    ]  # fmt: skip
    sweep.write_csv(tmp_path / "sweep.csv", rows)
    plot = load_script(H100 / "plot_results.py", "bench_plot_results")
    got = {}

    def fake_plot(rows, path):
        got["rows"], got["path"] = rows, path

    import sweep as sweep_module  # what plot_results imports (benchmarks/h100 on the path)

    monkeypatch.setattr(sweep_module, "plot", fake_plot)
    assert plot.main(["--sweep", str(tmp_path / "sweep.csv"), "-o", str(tmp_path / "s.png")]) == 0
    assert [(r["name"], r["macs"], r["ratio"]) for r in got["rows"]] == [
        ("a", 512, 1.25),
        ("b", 1024, None),
    ]
    assert got["path"] == tmp_path / "s.png"
