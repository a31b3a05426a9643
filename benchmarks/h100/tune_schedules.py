#!/usr/bin/env python3
"""Tune ``schedule="auto"`` on the local NVIDIA GPU: the tuned schedule table and its report.

Needs torch and ``gemm_opt`` (its runtime; no Triton, no MLIR bindings, no
numpy); the kernels come from the schedule bundles (``--bundles DIR`` holding
``cuda90/*.bundle``, built with ``python -m gemm_opt.kernels.build_bundles
--target cuda:90``). Triton is blocked for the whole run. Tuning is its own
command: nothing is timed inside a user's call.

``--mode tune`` (part of the default ``both``): for each problem of the
suite (:func:`tune_cases`: the issue's dense shapes in forward, dgrad and
wgrad form, and the MoE grouped GEMMs of DeepSeek-V3 and gpt-oss-20B,
forward, dgrad and wgrad) and dtype, every schedule, reduction and config
the bundles hold for that form (:func:`candidates`) is

1. checked against torch in float32 (TF32 off): element-wise
   ``|c - ref| <= 2u|ref| + 2(K+2)2^-23 (|A||B|) [+ r u (|A||B|)]``, u the
   output type's unit roundoff, the last term for atomic stream-K with r
   programs adding into a tile; a wrong candidate never wins;
2. timed next to torch (``torch.matmul`` / ``torch._grouped_mm``):
   interleaved samples, one call between CUDA events after a 256 MiB L2
   flush, median of ``--reps`` (``--grouped-reps`` for grouped).

Grouped problems tune on balanced groups; the chosen candidate is then
checked and timed on unbalanced ones (weights 0.2 + 0.8 U, renormalised).
Each finished problem is saved to ``OUT/tune_partial.json`` at once; a
re-run skips the problems it holds (same bundles), so an interrupted run
resumes. ``--budget-s`` bounds the whole run: tuning starts no new
problem after :data:`TUNE_SHARE` of it (re-run to finish), bench mode none
after all of it. Writes ``OUT/cuda90.json`` (the tuned table:
:mod:`gemm_opt.runtime.autotune`) and ``OUT/tune_report.md``.

``--mode bench`` (the rest of ``both``): times ``schedule="auto"`` (through
the API, resolving against ``--table``, default the table just written or
the packaged one) next to every fixed schedule with the default config and
torch, and says for each problem whether auto is within 3% of the best
fixed schedule. Writes ``OUT/bench_auto.md``.

    PYTHONPATH=python python3 benchmarks/h100/tune_schedules.py \\
        --bundles python/gemm_opt/kernels/bundles --out OUT

Exit 1 if a check fails (or auto is more than 3% slower than the best fixed
schedule in bench mode), 2 on misuse or when the GPU or kernels are missing,
3 when the budget ran out before every problem was tuned (the same command
resumes).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import platform
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import benchlib  # noqa: E402
from schedules import atomic_contributors, group_sizes  # noqa: E402

from gemm_opt.core import schedules as S  # noqa: E402
from gemm_opt.kernels import h100_configs as h100  # noqa: E402
from gemm_opt.runtime import autotune as A  # noqa: E402

PROG = "tune_schedules.py"
TARGET = "cuda:90"
#: torch dtype name -> kernel dtype name.
SHORT = {framework: name for name, framework in S.DTYPES.items()}
DTYPES = ("bfloat16", "float16")
PARTIAL = "tune_partial.json"
#: The share of ``--budget-s`` tuning may take (bench mode gets the rest).
TUNE_SHARE = 0.75
#: Auto may be this much slower than the best fixed schedule (the issue's bar).
AUTO_SLACK = 1.03
#: The issue's dense shapes (M, N, K), tuned in forward, dgrad (M, K, N) and wgrad (K, N, M) form.
DENSE_SHAPES = ((512, 512, 8192), (16, 4096, 7168), (128, 7168, 2048), (4096,) * 3, (8192,) * 3)
#: MoE grouped GEMMs: (model, layer, groups, tokens per group, N, K).
MOE = (
    ("DSv3", "GateUP", (16, 32), 2048, 4096, 7168),
    ("DSv3", "Down", (16, 32), 2048, 7168, 2048),
    ("gpt-oss-20B", "GateUP", (4, 32), 2048, 5760, 2880),
    ("gpt-oss-20B", "Down", (4, 32), 2048, 2880, 2880),
)
#: The fixed schedules of bench mode: every (schedule, reduction) of the dense API.
FIXED_DENSE = (
    ("data-parallel", None),
    ("persistent", None),
    ("work-stealing", None),
    ("stream-k", "atomic"),
    ("stream-k", "linear"),
    ("stream-k", "tree"),
)


def fail(message: str, status: int = 2) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr, flush=True)
    raise SystemExit(status)


# ---- cases and candidates (pure: testable without a GPU) --------------------------------


@dataclass(frozen=True)
class Case:
    """One tuned problem: ``problem`` in :class:`~gemm_opt.kernels.autotune.Problem` terms,
    ``lens`` the balanced group sizes and ``unbalanced`` the check's (grouped only)."""

    name: str
    problem: A.Problem
    lens: tuple[int, ...] = ()
    unbalanced: tuple[int, ...] = ()

    @property
    def flops(self) -> float:
        p = self.problem
        return 2.0 * p.m * p.n * p.k

    def key(self, dtype: str) -> str:
        return f"{dtype} {self.name}"


def tune_cases() -> list[Case]:
    """The issue's problems: dense (forward, dgrad, wgrad shapes; repeats dropped), then grouped."""
    cases: list[Case] = []
    seen: set[A.Problem] = set()
    for m, n, k in DENSE_SHAPES:
        for form, (x, y, z) in (("fwd", (m, n, k)), ("dgrad", (m, k, n)), ("wgrad", (k, n, m))):
            p = A.Problem("dense", x, y, z)
            if p not in seen:
                seen.add(p)
                cases.append(Case(f"{m}x{n}x{k} {form} ({x}x{y}x{z})", p))
    for model, layer, groups, per, n, k in MOE:
        for g in groups:
            lens = tuple(group_sizes(g, per, True, seed=g))
            skew = tuple(group_sizes(g, per, False, seed=g))
            total = sum(lens)
            for op, prob in (
                ("fwd", A.Problem("fwd", total, n, k, g)),
                ("dgrad", A.Problem("dgrad", total, k, n, g)),
                ("wgrad", A.Problem("wgrad", k, n, total, g)),
            ):
                cases.append(Case(f"{model} {layer} G={g} {op}", prob, lens, skew))
    return cases


def grouped_form(op: str) -> tuple[str, bool]:
    """(grouped, trans_b) of the kernels of an operation."""
    return {"dense": ("none", False), "fwd": ("m", False), "dgrad": ("m", True)}.get(
        op, ("k", False)
    )


@dataclass(frozen=True)
class Candidate:
    """One schedule, reduction and config to time."""

    schedule: str
    reduction: str | None
    config: S.GemmConfig

    @property
    def label(self) -> str:
        names = {cfg: name for name, cfg in h100.GPU_CONFIGS.items()}
        c = self.config
        cfg = names.get(c) or f"{c.block_m}x{c.block_n}x{c.block_k}_g{c.group_m}_w{c.num_warps}"
        red = f"/{self.reduction}" if self.reduction else ""
        return f"{self.schedule}{red} {cfg}"

    def to_json(self) -> dict[str, Any]:
        return {
            "schedule": self.schedule,
            "reduction": self.reduction,
            "config": dataclasses.asdict(self.config),
        }


def candidates(metas: list[dict[str, Any]], op: str, dtype: str) -> list[Candidate]:
    """Every schedule, reduction and config the bundles hold for ``op`` in ``dtype`` (kernel
    ``meta`` dicts; aligned twins and chiplet variants are launch details, not candidates)."""
    grouped, trans_b = grouped_form(op)
    out: list[Candidate] = []
    keys = {f.name for f in dataclasses.fields(S.KernelSpec)}
    for meta in metas:
        fields_ = {k: v for k, v in meta.items() if k in keys}
        try:
            # a bundle's meta holds the epilogue as a dict (dataclasses.asdict)
            epilogue = S.EpilogueSpec(**(fields_.pop("epilogue", None) or {}))
            spec = S.KernelSpec(**fields_)
        except (TypeError, ValueError):
            continue  # not a schedule kernel
        if epilogue != S.NO_EPILOGUE:
            continue  # a fused epilogue's kernel: tuned with the plain ones it equals
        if (
            spec.aligned
            or spec.num_xcds != 1
            or spec.grouped != grouped
            or spec.trans_b != trans_b
            or spec.dtype != SHORT[dtype]
        ):
            continue
        cfg = S.GemmConfig(
            spec.block_m, spec.block_n, spec.block_k, spec.group_m, spec.num_warps, spec.num_stages
        )
        cand = Candidate(spec.kind, spec.reduction, cfg)
        if cand not in out:
            out.append(cand)
    order = {k: i for i, k in enumerate(S.KINDS)}
    return sorted(out, key=lambda c: (order[c.schedule], c.reduction or "", c.label))


# ---- resumable bookkeeping ---------------------------------------------------------------


class Progress:
    """Finished problems by key in ``OUT/tune_partial.json``, saved after each one.

    Results of other bundles (another ``bundle_sha256``) are dropped: their
    timings are of other kernels.
    """

    def __init__(self, out: Path, bundle_sha256: str) -> None:
        self.path = out / PARTIAL
        self.sha = bundle_sha256
        self.results: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            doc = json.loads(self.path.read_text())
            if doc.get("bundle_sha256") == bundle_sha256:
                self.results = doc.get("results", {})
            else:
                print(f"{self.path}: results of other bundles; starting afresh", flush=True)

    def done(self, key: str) -> bool:
        return key in self.results

    def record(self, key: str, result: dict[str, Any]) -> None:
        self.results[key] = result
        write_json(self.path, {"bundle_sha256": self.sha, "results": self.results})


def write_json(path: Path, doc: Any) -> None:
    """Write ``doc`` atomically (a temporary file, then a rename)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, path)


def best_of(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The fastest correct candidate row (median time), or None."""
    ok = [r for r in rows if r["ok"] and r.get("median_ms") is not None]
    return min(ok, key=lambda r: r["median_ms"]) if ok else None


def table_entry(result: dict[str, Any]) -> dict[str, Any] | None:
    """The tuned-table entry of one finished problem (None: no candidate was correct)."""
    best = best_of(result["candidates"])
    if best is None:
        return None
    others = [r for r in result["candidates"] if r is not best and r["ok"]]
    runner = min(others, key=lambda r: r["median_ms"]) if others else None
    problem = A.Problem(result["op"], **result["shape"])
    entry = {
        "op": result["op"],
        "dtype": result["dtype"],
        "class": A.shape_class(problem),
        "shape": problem.to_json(),
        "case": result["case"],
        "schedule": best["schedule"],
        "reduction": best["reduction"],
        "config": best["config"],
        "median_ms": best["median_ms"],
        "torch_ms": result["torch"].get("median_ms"),
        "runner_up": runner["label"] if runner else None,
        "runner_up_ms": runner["median_ms"] if runner else None,
    }
    if result.get("unbalanced"):
        entry["unbalanced"] = result["unbalanced"]
    return entry


def make_table(results: dict[str, dict[str, Any]], provenance: dict[str, Any]) -> dict[str, Any]:
    """The tuned table of the finished problems, validated as the API will read it."""
    entries = [e for e in map(table_entry, results.values()) if e is not None]
    doc = {
        "format": A.TABLE_FORMAT,
        "version": A.TABLE_VERSION,
        "target": TARGET,
        "provenance": provenance,
        "classes": {"row_bounds": list(A.ROW_BOUNDS), "dim_bounds": list(A.DIM_BOUNDS)},
        "entries": entries,
    }
    A.validate_table(doc, "the tuned table", TARGET)
    return doc


def best_fixed(result: dict[str, Any]) -> dict[str, Any] | None:
    """The fastest correct candidate with the default config (what a fixed schedule gives)."""
    default = dataclasses.asdict(h100.GPU_CONFIG)
    return best_of([r for r in result["candidates"] if r["config"] == default])


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _ratio(num: float | None, den: float | None) -> str:
    return "n/a" if num is None or den is None else f"{num / den:.2f}"


def torch_fns(runner: Any, op: str, ops: dict[str, Any], tag: str) -> dict[str, Any]:
    """``{"torch": call}``, or nothing where torch does not run the problem (its grouped
    GEMM takes bf16 only on some builds): ours is then timed alone."""
    try:
        runner.torch_call(op, ops)
    except Exception as e:
        print(f"{tag} torch: {type(e).__name__}: {e}; not timed", flush=True)
        return {}
    return {"torch": lambda: runner.torch_call(op, ops)}


def report(results: dict[str, dict[str, Any]], provenance: dict[str, Any]) -> str:
    """The markdown report: auto (the tuned choice) vs the best fixed schedule vs torch."""
    lines = [
        f"# Tuned schedules on {provenance['gpu']} ({provenance['date']})",
        "",
        f"`{provenance['command']}`; torch {provenance['torch']}, CUDA {provenance['cuda']}, "
        f"kernels {provenance['compiled_with']}. Median of interleaved samples after an L2 flush "
        "and a 0.3 ms GPU spin (the host's launch cost off the clock). "
        "*best fixed*: the fastest schedule with the default config (`schedule=` without "
        "`config=`); auto is the table's choice on the problem it was tuned on.",
        "",
        "| problem | dtype | class | auto (tuned choice) | auto ms | best fixed | fixed ms "
        "| auto/fixed | torch ms | torch/auto | unbalanced: auto ms, torch ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results.values():
        best = best_of(r["candidates"])
        fixed = best_fixed(r)
        problem = A.Problem(r["op"], **r["shape"])
        tms = r["torch"].get("median_ms")
        if best is None:
            lines.append(f"| {r['case']} | {r['dtype']} | | no correct candidate | | | | | | | |")
            continue
        fx = f"{fixed['label']} | {fixed['median_ms']:.4f} | " if fixed else " | | "
        ratio = f"{best['median_ms'] / fixed['median_ms']:.2f}" if fixed else ""
        ub = r.get("unbalanced") or {}
        unb = f"{ub['median_ms']:.4f}, {_ms(ub['torch_ms'])}" if ub else ""
        lines.append(
            f"| {r['case']} | {r['dtype']} | {A.shape_class(problem)} | {best['label']} | "
            f"{best['median_ms']:.4f} | {fx}{ratio} | {_ms(tms)} | "
            f"{_ratio(tms, best['median_ms'])} | {unb} |"
        )
    failed = [
        (r["case"], c["label"], c.get("detail", ""))
        for r in results.values()
        for c in r["candidates"]
        if not c["ok"]
    ]
    if failed:
        lines += ["", "Candidates that failed the check (never chosen):", ""]
        lines += [f"- {case}: {label} ({detail})" for case, label, detail in failed]
    return "\n".join(lines) + "\n"


# ---- on the GPU ----------------------------------------------------------------------------


class Runner:
    """Operands, float32 references, checks and timed calls of one problem."""

    def __init__(self, torch: Any, gemm_opt: Any, flush: Any, device: str = "cuda") -> None:
        self.torch, self.g, self.flush, self.device = torch, gemm_opt, flush, device

    def operands(self, case: Case, dtype: str, lens: tuple[int, ...]) -> dict[str, Any]:
        torch = self.torch
        dt = getattr(torch, dtype)
        dev = self.device
        gen = torch.Generator(device=dev).manual_seed(0)
        p = case.problem

        def randn(*shape: int) -> Any:
            return torch.randn(*shape, device=dev, generator=gen).to(dt)

        if p.op == "dense":
            return {"a": randn(p.m, p.k), "b": randn(p.k, p.n)}
        ops: dict[str, Any] = {
            "lens": torch.tensor(lens, device=dev, dtype=torch.int32),
            "offs": torch.tensor(lens, device=dev, dtype=torch.int32).cumsum(0).to(torch.int32),
            "host_lens": list(lens),
        }
        if p.op == "fwd":  # x (S, K) @ w[g] (K, N)
            ops.update(a=randn(p.m, p.k), b=randn(p.groups, p.k, p.n))
        elif p.op == "dgrad":  # dy (S, N_model) @ w[g]^T, w stored (G, K_model, N_model)
            ops.update(a=randn(p.m, p.k), b=randn(p.groups, p.n, p.k))
        else:  # x (S, M)^T @ dy (S, N) per group
            ops.update(a=randn(p.k, p.m), b=randn(p.k, p.n))
        return ops

    def call(self, op: str, ops: dict[str, Any], cand: Candidate | str) -> Any:
        """Ours with a candidate (or ``"auto"``, or a schedule name with its default config)."""
        g = self.g
        if isinstance(cand, Candidate):
            kw = {"schedule": cand.schedule, "reduction": cand.reduction, "config": cand.config}
        else:
            kind, _, red = cand.partition("/")
            kw = {"schedule": kind, "reduction": red or None}
        if op == "dense":
            return g.matmul(ops["a"], ops["b"], **kw)
        if op == "wgrad":
            return g.grouped_matmul_variable_k(ops["a"], ops["b"], ops["lens"], **kw)
        return g.grouped_matmul(ops["a"], ops["b"], ops["lens"], trans_b=op == "dgrad", **kw)

    def torch_call(self, op: str, ops: dict[str, Any]) -> Any:
        torch = self.torch
        a, b = ops["a"], ops["b"]
        if op == "dense":
            return torch.matmul(a, b)
        if op == "fwd":
            return torch._grouped_mm(a, b, offs=ops["offs"])
        if op == "dgrad":
            return torch._grouped_mm(a, b.transpose(-2, -1), offs=ops["offs"])
        return torch._grouped_mm(a.t(), b, offs=ops["offs"])

    def reference(self, op: str, ops: dict[str, Any]) -> tuple[Any, Any, int]:
        """(float32 C, float32 |A||B|, K of one dot product) with TF32 off."""
        torch = self.torch
        a, b = ops["a"].float(), ops["b"].float()
        if op == "dense":
            return a @ b, a.abs() @ b.abs(), a.shape[1]
        lens, ref, mag, start = ops["host_lens"], [], [], 0
        for gi, n in enumerate(lens):
            if op == "wgrad":
                x, y = a[start : start + n].t(), b[start : start + n]
            else:
                x = a[start : start + n]
                y = b[gi].t() if op == "dgrad" else b[gi]
            ref.append(x @ y)
            mag.append(x.abs() @ y.abs())
            start += n
        k = max(lens) if op == "wgrad" else a.shape[1]
        if op == "wgrad":
            return torch.stack(ref), torch.stack(mag), k
        return torch.cat(ref), torch.cat(mag), k

    def check(self, c: Any, ref: Any, mag: Any, k: int, dtype: str, contributors: int) -> dict:
        """Element-wise error bound against the float32 reference (module docstring)."""
        torch = self.torch
        if not bool(torch.isfinite(c).all()):
            return {"ok": False, "detail": "unwritten or non-finite elements"}
        u = benchlib.UNIT_ROUNDOFF[dtype]
        bound = 2 * u * ref.abs() + 2 * (k + 2) * 2.0**-23 * mag + 2.0**-24
        if contributors > 1:
            bound = bound + contributors * u * mag
        err = (c.float() - ref).abs()
        worst = float((err / bound).max()) if err.numel() else 0.0
        return {"ok": worst <= 1.0, "detail": f"max err/bound {worst:.3f}"}

    def contributors(self, case: Case, cand: Candidate, dtype: str) -> int:
        if cand.schedule != "stream-k" or cand.reduction != "atomic":
            return 1
        from gemm_opt.runtime import gemm as rt

        cfg = dataclasses.asdict(cand.config)
        spec = S.KernelSpec("stream-k", "atomic", "none", SHORT[dtype], **cfg)
        p = case.problem
        programs = rt.resident_programs(spec, 0) if self.device == "cuda" else 4  # the model's
        return atomic_contributors(p.m, p.n, p.k, programs, cfg)

    def time(self, fns: dict[str, Any], reps: int) -> dict[str, dict[str, Any]]:
        return benchlib.bench(fns, reps, warmup=2, flush=self.flush)


def tune_case(
    runner: Runner, case: Case, dtype: str, cands: list[Candidate], reps: int, tag: str
) -> dict[str, Any]:
    """Check and time every candidate of one problem (and the choice on unbalanced groups)."""
    p = case.problem
    ops = runner.operands(case, dtype, case.lens)
    ref, mag, k = runner.reference(p.op, ops)
    rows: list[dict[str, Any]] = []
    fns: dict[str, Any] = torch_fns(runner, p.op, ops, tag)
    for cand in cands:
        row = {"label": cand.label, **cand.to_json()}
        try:
            c = runner.call(p.op, ops, cand)
            row.update(runner.check(c, ref, mag, k, dtype, runner.contributors(case, cand, dtype)))
        except Exception as e:  # a candidate that cannot run is a failed one, not a crash
            row.update(ok=False, detail=f"{type(e).__name__}: {e}")
        rows.append(row)
        if row["ok"]:
            fns[cand.label] = lambda cand=cand: runner.call(p.op, ops, cand)
    del ref, mag
    timing = runner.time(fns, reps)
    tms = timing.get("torch", {}).get("median_ms")
    for i, row in enumerate(rows, 1):
        t = timing.get(row["label"])
        if t:
            row.update(median_ms=t["median_ms"], min_ms=t["min_ms"], samples=t["samples"])
        ms = (
            f"{t['median_ms']:.4f} ms, torch/ours {_ratio(tms, t['median_ms'])}"
            if t
            else "not timed"
        )
        mark = "ok  " if row["ok"] else "FAIL"
        print(f"{tag} [{i}/{len(rows)}] {mark} {row['label']}: {ms}; {row['detail']}", flush=True)
    result = {
        "case": case.name,
        "op": p.op,
        "dtype": SHORT[dtype],
        "shape": p.to_json(),
        "candidates": rows,
        "torch": timing.get("torch", {}),
    }
    best = best_of(rows)
    if case.unbalanced and best is not None:
        chosen = next(c for c in cands if c.label == best["label"])
        uops = runner.operands(case, dtype, case.unbalanced)
        ref, mag, k = runner.reference(p.op, uops)
        chk = runner.check(runner.call(p.op, uops, chosen), ref, mag, k, dtype, 1)
        del ref, mag
        fns = {
            "ours": lambda: runner.call(p.op, uops, chosen),
            **torch_fns(runner, p.op, uops, tag),
        }
        t = runner.time(fns, reps)
        result["unbalanced"] = {
            "lens": list(case.unbalanced),
            "ok": chk["ok"],
            "detail": chk["detail"],
            "median_ms": t["ours"]["median_ms"],
            "torch_ms": t.get("torch", {}).get("median_ms"),
        }
        mark = "ok  " if chk["ok"] else "FAIL"
        print(
            f"{tag} unbalanced {mark} {best['label']}: {t['ours']['median_ms']:.4f} ms "
            f"(torch {_ms(result['unbalanced']['torch_ms'])} ms); {chk['detail']}",
            flush=True,
        )
    return result


def bench_case(runner: Runner, case: Case, dtype: str, reps: int, tag: str) -> dict[str, Any]:
    """Time auto, every fixed schedule (default config) and torch on one problem."""
    p = case.problem
    ops = runner.operands(case, dtype, case.lens)
    fixed = FIXED_DENSE if p.op == "dense" else tuple((k, None) for k in S.GROUPED_KINDS)
    labels = [k + (f"/{r}" if r else "") for k, r in fixed]
    fns: dict[str, Any] = {"auto": lambda: runner.call(p.op, ops, "auto")}
    for label in labels:
        fns[label] = lambda label=label: runner.call(p.op, ops, label)
    fns.update(torch_fns(runner, p.op, ops, tag))
    t = runner.time(fns, reps)
    auto = t["auto"]["median_ms"]
    best = min(labels, key=lambda x: t[x]["median_ms"])
    ratio = auto / t[best]["median_ms"]
    row = {
        "case": case.name,
        "dtype": SHORT[dtype],
        "auto_ms": auto,
        **{f"{x}_ms": t[x]["median_ms"] for x in labels},
        "torch_ms": t.get("torch", {}).get("median_ms"),
        "best_fixed": best,
        "auto_over_best_fixed": ratio,
        "ok": ratio <= AUTO_SLACK,
    }
    mark = "ok  " if row["ok"] else "SLOW"
    print(
        f"{tag} {mark} auto {auto:.4f} ms, best fixed {best} {t[best]['median_ms']:.4f} ms "
        f"(auto/fixed {ratio:.3f}), torch {_ms(row['torch_ms'])} ms",
        flush=True,
    )
    return row


def bench_markdown(rows: list[dict[str, Any]], env: dict[str, Any]) -> str:
    slow = [r for r in rows if not r["ok"]]
    lines = [
        f"# schedule='auto' vs fixed schedules vs torch on {env['gpu']} ({env['date']})",
        "",
        f"Table: `{env['table']}`. auto within {AUTO_SLACK - 1:.0%} of the best fixed schedule "
        f"on {len(rows) - len(slow)} of {len(rows)} problems.",
        "",
        "| problem | dtype | auto ms | best fixed | fixed ms | auto/fixed | torch ms "
        "| torch/auto |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        fx = r[f"{r['best_fixed']}_ms"]
        lines.append(
            f"| {r['case']} | {r['dtype']} | {r['auto_ms']:.4f} | {r['best_fixed']} | {fx:.4f} "
            f"| {r['auto_over_best_fixed']:.3f} | {_ms(r['torch_ms'])} "
            f"| {_ratio(r['torch_ms'], r['auto_ms'])} |"
        )
    return "\n".join(lines) + "\n"


# ---- the run -------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--bundles", type=Path, required=True, help="bundle root (holds cuda90/*.bundle)"
    )
    parser.add_argument("--out", type=Path, required=True, help="results folder (resumable)")
    parser.add_argument("--mode", choices=("tune", "bench", "both"), default="both")
    parser.add_argument("--dtypes", default="bfloat16,float16", help="bfloat16,float16")
    parser.add_argument("--reps", type=int, default=25, help="timed samples, dense problems")
    parser.add_argument("--grouped-reps", type=int, default=8, help="timed samples, grouped")
    parser.add_argument(
        "--budget-s",
        type=float,
        default=330.0,
        help="seconds for the run: tuning starts no new problem after 75%% of it, bench none "
        "after all of it",
    )
    parser.add_argument("--table", type=Path, help="bench mode: the tuned table to resolve with")
    parser.add_argument("--only", default="", help="tune problems whose name contains this")
    args = parser.parse_args(argv)
    items = [d for d in args.dtypes.split(",") if d]
    if not items or any(d not in DTYPES for d in items):
        parser.error(f"--dtypes takes {', '.join(DTYPES)}")
    args.dtypes = items
    if args.reps < 3 or args.grouped_reps < 3:
        parser.error("--reps and --grouped-reps must be at least 3")
    if args.budget_s <= 0:
        parser.error("--budget-s must be positive")
    return args


def bundle_metas(store: Any) -> tuple[list[dict[str, Any]], str, str]:
    """(kernel metas, SHA-256 over the bundle files, "triton X, gemm-opt Y")."""
    h = hashlib.sha256()
    for path in sorted(store.dir.glob("*.bundle")):
        h.update(path.read_bytes())
    kernels = [k.spec for k in store.kernels().values()]
    first = kernels[0]
    tools = f"triton {first.triton}, gemm-opt {first.gemm_opt}"
    return [k.meta for k in kernels], h.hexdigest(), tools


def main(argv: list[str] | None = None) -> int:
    start = time.perf_counter()
    args = parse_args(argv)
    sys.modules["triton"] = None  # type: ignore[assignment]  # our cubins only
    os.environ["GEMM_OPT_BUNDLE_DIR"] = str(args.bundles)
    import torch

    import gemm_opt
    from gemm_opt.runtime import BundleError
    from gemm_opt.runtime import gemm as rt

    try:
        store = rt.store(TARGET)
        if not store.kernels():
            build = rt.BUILD_COMMAND.format(target=TARGET)
            fail(f"no bundles in {store.dir}; build them with `{build} --out {args.bundles}`")
        metas, sha, compiled_with = bundle_metas(store)
    except BundleError as e:
        fail(str(e))
    if not torch.cuda.is_available():
        fail("no CUDA GPU visible to torch: this script runs kernels on a GPU")
    try:
        rt.device_target(torch, 0)
    except RuntimeError as e:
        fail(str(e))
    torch.backends.cuda.matmul.allow_tf32 = False  # float32 references in float32
    cap = torch.cuda.get_device_capability()
    env = {
        "gpu": torch.cuda.get_device_name(),
        "capability": f"sm_{cap[0]}{cap[1]}",
        "sms": torch.cuda.get_device_properties(0).multi_processor_count,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": shlex.join(["python3", "benchmarks/h100/tune_schedules.py", *sys.argv[1:]]),
        "torch": torch.__version__,
        "cuda": str(torch.version.cuda),
        "python": platform.python_version(),
        "bundle_sha256": sha,
        "compiled_with": compiled_with,
        "reps": {"dense": args.reps, "grouped": args.grouped_reps},
    }
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"{env['gpu']} ({env['capability']}, {env['sms']} SMs), {len(metas)} kernels", flush=True)
    runner = Runner(torch, gemm_opt, benchlib.Flusher())
    cases = [c for c in tune_cases() if args.only in c.name]
    failed = 0
    stopped = False
    if args.mode in ("tune", "both"):
        progress = Progress(args.out, sha)
        todo = [(d, c) for d in args.dtypes for c in cases]
        for i, (dtype, case) in enumerate(todo, 1):
            key = case.key(SHORT[dtype])
            tag = f"[{i}/{len(todo)}] {SHORT[dtype]} {case.name}"
            if progress.done(key):
                print(f"{tag}: done in an earlier run, skipped", flush=True)
                continue
            if time.perf_counter() - start > TUNE_SHARE * args.budget_s:
                print(f"{tag}: over --budget-s; re-run to resume here", flush=True)
                stopped = True
                break
            cands = candidates(metas, case.problem.op, dtype)
            if not cands:
                print(f"{tag}: no kernel in the bundles for this form; skipped", flush=True)
                continue
            t0 = time.perf_counter()
            reps = args.reps if case.problem.op == "dense" else args.grouped_reps
            result = tune_case(runner, case, dtype, cands, reps, tag)
            result["seconds"] = round(time.perf_counter() - t0, 2)
            progress.record(key, result)
            torch.cuda.empty_cache()
        results = progress.results
        failed += sum(not c["ok"] for r in results.values() for c in r["candidates"])
        failed += sum(not (r.get("unbalanced") or {"ok": True})["ok"] for r in results.values())
        prov = dict(env)
        table = make_table(results, prov)
        write_json(args.out / "cuda90.json", table)
        (args.out / "tune_report.md").write_text(report(results, prov))
        print(f"wrote {args.out / 'cuda90.json'} ({len(table['entries'])} entries)", flush=True)
    if args.mode in ("bench", "both") and not stopped:
        table = args.table or (args.out / "cuda90.json" if args.mode == "both" else None)
        if table is not None:
            if table.name != "cuda90.json":
                fail(f"--table must be a file named cuda90.json, got {table}")
            os.environ[A.TUNED_DIR_ENV] = str(table.resolve().parent)
        env["table"] = str(table or A.table_path(TARGET))
        rows = []
        for i, case in enumerate(cases, 1):
            if time.perf_counter() - start > args.budget_s:
                print(
                    f"[bench] over --budget-s: {len(cases) - i + 1} problems left out", flush=True
                )
                break
            for dtype in args.dtypes:
                tag = f"[bench {i}/{len(cases)}] {SHORT[dtype]} {case.name}"
                reps = args.reps if case.problem.op == "dense" else args.grouped_reps
                rows.append(bench_case(runner, case, dtype, reps, tag))
        (args.out / "bench_auto.md").write_text(bench_markdown(rows, env))
        slow = sum(not r["ok"] for r in rows)
        print(f"auto within 3% of the best fixed schedule on {len(rows) - slow}/{len(rows)}")
        failed += slow
    print(f"total {time.perf_counter() - start:.1f} s; {failed} failures", flush=True)
    if failed:
        return 1
    if stopped:
        print("tuning is incomplete: run the same command again to resume", flush=True)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
