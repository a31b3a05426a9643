#!/usr/bin/env python3
"""Fit the free constants of ``schedule="auto"``'s cost model to measured candidates.

Reads the per-candidate timings of a tuning run (``tune_partial.json`` written by
``tune_schedules.py``: every schedule, reduction and config the bundles hold,
timed on each tuned problem next to torch) and fits
:class:`gemm_opt.runtime.cost_model.Calibration` by Nelder-Mead on the log of
each constant, minimising the mean squared log error of the estimates. The
machine figures (:class:`~gemm_opt.runtime.cost_model.Device`) are not fitted.
Pure Python over ``gemm_opt`` (no numpy, no GPU): it runs anywhere.

Writes the calibration beside the tuned table
(``python/gemm_opt/kernels/tuned/cuda90.cost.json``, ``--out``): it is data
measured on one GPU with one set of bundles, like the table, so it is re-fitted
when the table is re-tuned and carries the same provenance, while the model's
formulas stay in one module. Prints the fit's quality: the relative error of
every estimate (median, 90th percentile, worst), and per problem whether the
model's pick is the measured best (all candidates, and without atomics) and how
much slower the pick measured than the best (the regret).

Split-K is not in the tuning run; its points come from
``stream_k_fixups.py``'s report (``--split-k``, default
``benchmarks/h100/results/stream_k_fixups_split_k_h200.txt``: NVIDIA H200,
2026-11-27, CUDA-graph GPU time, warm L2; three shapes, S = 1, 2, 4 or 2, 4,
8). They are estimated on the GPU they ran on (the H200's datasheet HBM
bandwidth, :data:`DEVICES`), enter the fit with the others, and get their
own quality block (the relative errors, and per shape whether the model
ranks the measured best S first).

    .venv/bin/python benchmarks/h100/fit_cost_model.py \\
        --results benchmarks/h100/results/autotune/tune_partial.json \\
        --table python/gemm_opt/kernels/tuned/cuda90.json \\
        --out python/gemm_opt/kernels/tuned/cuda90.cost.json
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from gemm_opt.core import schedules as S
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.runtime import cost_model as C

REPO = Path(__file__).resolve().parents[2]
TARGET = "cuda:90"


@dataclass(frozen=True)
class Point:
    """One measured candidate of one problem."""

    problem: str
    work: C.Workload
    cand: C.Candidate
    us: float
    #: The GPU the point was measured on (datasheet figures).
    device: C.Device


#: Datasheet figures of the GPUs points come from, by the name a report prints
#: (the H200: the H100's SMs and tensor cores, 4.8 TB/s of HBM3e).
DEVICES = {
    "NVIDIA H100 80GB HBM3": C.Device(),
    "NVIDIA H200": replace(C.Device(), hbm_bytes_per_us=4.8e6),
}


def load_split_k_points(path: Path) -> list[Point]:
    """The split-K rows of a ``stream_k_fixups.py`` report: ``MxNxK class split-k grid
    P programs us us ... slices S ...``, on the GPU its first line names."""
    lines = path.read_text(encoding="utf-8").splitlines()
    gpu = lines[0].split(",")[0].strip()
    if gpu not in DEVICES:
        raise ValueError(f"{path}: GPU {gpu!r} has no datasheet figures here ({list(DEVICES)})")
    out = []
    for line in lines[1:]:
        cols = line.split()
        if len(cols) < 12 or cols[0] == "==" or cols[2] != "split-k":
            continue
        m, n, k = (int(x) for x in cols[0].split("x"))
        name = cols[1]
        split = int(cols[cols.index("slices") + 1])
        work = C.Workload("dense", m, n, k, 1, "bf16")
        cand = C.Candidate("split-k", None, h100.GPU_CONFIGS[name], name, split)
        out.append(Point(f"split-k {cols[0]}", work, cand, float(cols[6]), DEVICES[gpu]))
    return out


def load_points(path: Path, device: C.Device) -> list[Point]:
    """The timed, correct candidates of a tuning run, measured on ``device``."""
    names = {cfg: name for name, cfg in h100.GPU_CONFIGS.items()}
    doc = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for key, result in doc["results"].items():
        shape = result["shape"]
        work = C.Workload(
            result["op"], shape["m"], shape["n"], shape["k"], shape["groups"], result["dtype"]
        )
        for row in result["candidates"]:
            if not row.get("ok") or row.get("median_ms") is None:
                continue
            cfg = S.GemmConfig(**row["config"])
            cand = C.Candidate(row["schedule"], row["reduction"], cfg, names.get(cfg, ""))
            out.append(Point(key, work, cand, 1000.0 * row["median_ms"], device))
    return out


def predict(points: list[Point], cal: C.Calibration) -> list[float]:
    return [C.estimate(p.cand, p.work, p.device, cal).us for p in points]


def loss(points: list[Point], cal: C.Calibration) -> float:
    pred = predict(points, cal)
    return statistics.fmean((math.log(e / p.us)) ** 2 for e, p in zip(pred, points, strict=True))


#: Constants capped at 1 (fractions of a peak).
CAPPED = ("mma_efficiency", "hbm_efficiency")


def _calibration(x: list[float]) -> C.Calibration:
    values = {}
    for key, v in zip(C.CALIBRATION_KEYS, x, strict=True):
        value = math.exp(v)
        values[key] = min(value, 1.0) if key in CAPPED else value
    return C.Calibration(**values)


def nelder_mead(f, x0: list[float], step: float = 0.5, iters: int = 1500, tol: float = 1e-7):
    """Minimise ``f`` from ``x0`` (the textbook simplex method; deterministic)."""
    n = len(x0)
    simplex = [list(x0)] + [
        [v + (step if i == j else 0.0) for j, v in enumerate(x0)] for i in range(n)
    ]
    values = [f(x) for x in simplex]
    for _ in range(iters):
        order = sorted(range(n + 1), key=values.__getitem__)
        simplex, values = [simplex[i] for i in order], [values[i] for i in order]
        if values[-1] - values[0] < tol:
            break
        centroid = [sum(x[j] for x in simplex[:-1]) / n for j in range(n)]
        worst = simplex[-1]

        def toward(t: float, centroid=centroid, worst=worst) -> list[float]:
            return [c + t * (w - c) for c, w in zip(centroid, worst, strict=True)]

        xr = toward(-1.0)
        fr = f(xr)
        if fr < values[0]:
            xe = toward(-2.0)
            fe = f(xe)
            simplex[-1], values[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = xr, fr
        else:
            xc = toward(0.5)
            fc = f(xc)
            if fc < values[-1]:
                simplex[-1], values[-1] = xc, fc
            else:
                best = simplex[0]
                simplex = [best] + [
                    [b + 0.5 * (v - b) for b, v in zip(best, x, strict=True)] for x in simplex[1:]
                ]
                values = [values[0]] + [f(x) for x in simplex[1:]]
    i = min(range(n + 1), key=values.__getitem__)
    return simplex[i], values[i]


def fit(points: list[Point], rounds: int = 3) -> C.Calibration:
    """Nelder-Mead from the module's defaults, restarted ``rounds`` times (a restart
    rebuilds the simplex around the best point, which escapes a collapsed one)."""
    x = [math.log(v) for v in C.Calibration().to_json().values()]
    for _ in range(rounds):
        x, _ = nelder_mead(lambda v: loss(points, _calibration(v)), x)
    return _calibration(x)


def quality(points: list[Point], cal: C.Calibration) -> dict[str, Any]:
    """Relative errors and pick accuracy of ``cal`` on ``points`` (picks ranked as
    :func:`~gemm_opt.runtime.cost_model.rank` ranks them)."""
    ests = [C.estimate(p.cand, p.work, p.device, cal) for p in points]
    errors = sorted(abs(e.us / p.us - 1.0) for e, p in zip(ests, points, strict=True))
    by_problem: dict[str, list[tuple[C.Estimate, Point]]] = {}
    for e, p in zip(ests, points, strict=True):
        by_problem.setdefault(p.problem, []).append((e, p))
    picks: dict[str, tuple[list[bool], list[float]]] = {"all": ([], []), "deterministic": ([], [])}
    for rows in by_problem.values():
        for mode, keep in (
            ("all", rows),
            ("deterministic", [r for r in rows if r[1].cand.reduction != "atomic"]),
        ):
            pick = min(keep, key=lambda r: (r[0].us, r[0].schedule_us))[1]
            best = min(keep, key=lambda r: r[1].us)[1]
            picks[mode][0].append(pick is best)
            picks[mode][1].append(pick.us / best.us)
    out: dict[str, Any] = {
        "points": len(points),
        "problems": len(by_problem),
        "median_rel_error": statistics.median(errors),
        "p90_rel_error": errors[int(0.9 * (len(errors) - 1))],
        "worst_rel_error": errors[-1],
    }
    for mode, (hits, regret) in picks.items():
        out[f"pick_is_best_{mode}"] = f"{sum(hits)}/{len(hits)}"
        out[f"regret_geomean_{mode}"] = math.exp(statistics.fmean(math.log(r) for r in regret))
        out[f"regret_worst_{mode}"] = max(regret)
    return out


def _relative(path: Path) -> str:
    """``path`` relative to the repository where it lies inside it."""
    full = path.resolve()
    return str(full.relative_to(REPO)) if full.is_relative_to(REPO) else str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--results", type=Path,
        default=REPO / "benchmarks/h100/results/autotune/tune_partial.json",
    )  # fmt: skip
    parser.add_argument(
        "--table", type=Path, default=REPO / "python/gemm_opt/kernels/tuned/cuda90.json"
    )
    parser.add_argument(
        "--split-k", type=Path,
        default=REPO / "benchmarks/h100/results/stream_k_fixups_split_k_h200.txt",
    )  # fmt: skip
    parser.add_argument("--out", type=Path, help="where to write the calibration (else print only)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    table = json.loads(args.table.read_text(encoding="utf-8"))
    points = load_points(args.results, replace(C.Device(), sms=table["provenance"]["sms"]))
    if not points:
        print(f"{args.results}: no timed candidates", file=sys.stderr)
        return 2
    split = load_split_k_points(args.split_k)
    cal = fit(points + split, args.rounds)
    q = quality(points, cal)
    q["split_k"] = quality(split, cal)
    for key, value in [*q.items(), *(("split_k " + k, v) for k, v in q["split_k"].items())]:
        if isinstance(value, dict):
            continue
        print(f"{key:28} {value:.3f}" if isinstance(value, float) else f"{key:28} {value}")
    if args.out:
        doc = {
            "format": C.CALIBRATION_FORMAT,
            "version": C.CALIBRATION_VERSION,
            "target": TARGET,
            "fitted_to": {
                "results": _relative(args.results),
                "provenance": table["provenance"],
                "split_k": _relative(args.split_k),
                "command": "benchmarks/h100/fit_cost_model.py",
            },
            "quality": q,
            "constants": {k: float(f"{v:.4g}") for k, v in cal.to_json().items()},
        }
        args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
