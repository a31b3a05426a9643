#!/usr/bin/env python3
"""Builds of the same kernels side by side: bundle folders (``--bundle LABEL=DIR``, the
first the baseline, e.g. before a compiler change, the others after or variants), through
the public API, on shapes that take the plain kernels.

One command, torch only. For each case (a schedule, reduction, grouped form and layout
with an explicit config, :data:`CASES`), on odd shapes (N, K and the leading dimensions
not multiples of 8, so no aligned or TMA twin accepts the call; a K below one block too):

1. Every build against a float64 reference (``|c - ref| <= 2 u |ref| + (K + 2) 2^-23
   |A||B|``, atomic stream-K ``+ P u |A||B|`` for its P adds into a tile; C starts as
   NaN), and bit for bit against the baseline where the schedule is deterministic and the
   grid the same: a change that moves no arithmetic (a ring depth, a copy path) must
   leave C identical.
2. What each build launched: the kernel (the case's plain kernel, the same in all), its
   grid (it differs only where the occupancy from the kernel and its twins does), its
   shared memory and the driver's CTAs per SM.
3. Speed: the builds interleaved, each sample after an L2 flush (``benchlib.bench``),
   median of ``--reps``, each build's time over the baseline's; at one shape per case,
   then at ``--sweep`` random odd shapes of random cases (``--sweep-seed``; bitwise
   checked too); geometric mean, worst and best of each part.

Writes ``ab.csv`` and ``results.md`` to ``--out``. Exit 1 if a check fails (a kernel
missing from a folder fails its case), 2 on misuse or no GPU.

    PYTHONPATH=python python3 benchmarks/h100/bundle_ab.py --bundle A=BEFORE --bundle B=AFTER \
        --sweep 24 --out OUT
"""

from __future__ import annotations

import argparse
import csv
import itertools
import math
import os
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import benchlib  # noqa: E402

PROG = "bundle_ab.py"
BUNDLE_ENV = "GEMM_OPT_BUNDLE_DIR"


@dataclass(frozen=True)
class Case:
    """One API call form: ``op`` is ``mm`` (``matmul``; ``ta``/``tb``: A or B given as
    the transpose of row-major storage), ``grouped`` (``grouped_matmul``, ``tb``: its
    dgrad form) or ``wgrad`` (``grouped_matmul_variable_k``)."""

    label: str
    op: str
    schedule: str
    reduction: str | None
    dtype: str
    #: block_m, block_n, block_k, group_m, num_warps, num_stages
    config: tuple[int, int, int, int, int, int]
    ta: bool = False
    tb: bool = False


CASES = (
    Case("dp_fp16_s4", "mm", "data-parallel", None, "float16", (64, 128, 128, 8, 4, 4)),
    Case("dp_bf16_s3_w8", "mm", "data-parallel", None, "bfloat16", (128, 256, 64, 8, 8, 3)),
    Case(
        "dp_ta_tb_fp16_s6",
        "mm",
        "data-parallel",
        None,
        "float16",
        (64, 64, 128, 8, 4, 6),
        ta=True,
        tb=True,
    ),
    Case("persistent_fp16_s6", "mm", "persistent", None, "float16", (64, 64, 128, 8, 4, 6)),
    Case("ws_fp16_s3", "mm", "work-stealing", None, "float16", (128, 128, 64, 8, 8, 3)),
    Case("sk_linear_fp16_s4", "mm", "stream-k", "linear", "float16", (64, 128, 128, 8, 4, 4)),
    Case("sk_tree_bf16_s6", "mm", "stream-k", "tree", "bfloat16", (64, 64, 128, 8, 4, 6)),
    Case("sk_atomic_bf16_s3", "mm", "stream-k", "atomic", "bfloat16", (128, 128, 64, 8, 8, 3)),
    Case("splitk_bf16_s4", "mm", "split-k", None, "bfloat16", (64, 128, 128, 8, 4, 4)),
    Case("grouped_m_fp16_s4", "grouped", "persistent", None, "float16", (64, 128, 128, 8, 4, 4)),
    Case(
        "grouped_m_tb_bf16_s6",
        "grouped",
        "persistent",
        None,
        "bfloat16",
        (64, 64, 128, 8, 4, 6),
        tb=True,
    ),
    Case("grouped_k_fp16_s3", "wgrad", "persistent", None, "float16", (128, 128, 64, 8, 8, 3)),
)
#: Correctness shapes (M, N, K): ragged, K below one block, more K blocks than stages.
CHECK_SHAPES = ((333, 517, 1029), (77, 45, 19), (1001, 999, 4099))
#: The timed shape: large enough that the copies matter, odd so the plain kernel runs.
SPEED_SHAPE = (4095, 4097, 4099)
#: Group lengths of the grouped cases (an empty group, unequal ones): M's split.
GROUP_SHARES = (0.5, 0.0, 0.3, 0.2)


def group_lens(total: int) -> list[int]:
    lens = [int(total * s) for s in GROUP_SHARES]
    lens[-1] += total - sum(lens)
    return lens


def make_call(torch: Any, g: Any, case: Case, shape: tuple[int, int, int], seed: int):
    """(call, reference in float64, |A||B| in float64, K) of ``case`` on ``shape``."""
    m, n, k = shape
    dt = getattr(torch, case.dtype)
    gen = torch.Generator(device="cuda").manual_seed(seed)

    def rand(*s: int) -> Any:
        return torch.randn(*s, device="cuda", generator=gen).to(dt)

    cfg = g.GemmConfig(*case.config)
    how = {"schedule": case.schedule, "reduction": case.reduction, "config": cfg}
    if case.op == "mm":
        a = rand(k, m).t() if case.ta else rand(m, k)
        b = rand(n, k).t() if case.tb else rand(k, n)
        ref = a.double() @ b.double()
        size = a.double().abs() @ b.double().abs()
        return (lambda: g.matmul(a, b, **how)), ref, size, k
    lens = group_lens(m)
    lens_dev = torch.tensor(lens, device="cuda", dtype=torch.int32)
    starts = [sum(lens[:i]) for i in range(len(lens) + 1)]
    if case.op == "grouped":
        a = rand(m, k)
        w = rand(len(lens), n, k) if case.tb else rand(len(lens), k, n)
        wk = w.transpose(1, 2) if case.tb else w  # (G, K, N)
        ref = torch.cat([a[s:e].double() @ wk[i].double() for i, (s, e) in
                         enumerate(itertools.pairwise(starts))])  # fmt: skip
        size = torch.cat([a[s:e].double().abs() @ wk[i].double().abs() for i, (s, e) in
                          enumerate(itertools.pairwise(starts))])  # fmt: skip
        return (lambda: g.grouped_matmul(a, w, lens_dev, trans_b=case.tb, **how)), ref, size, k
    # wgrad: x (S, M) and dy (S, N) split along S = the shape's M; out (G, K, N) here
    x, dy = rand(m, k), rand(m, n)
    ref = torch.stack([x[s:e].double().t() @ dy[s:e].double() for s, e in
                       itertools.pairwise(starts)])  # fmt: skip
    size = torch.stack([x[s:e].double().abs().t() @ dy[s:e].double().abs() for s, e in
                        itertools.pairwise(starts)])  # fmt: skip
    return (lambda: g.grouped_matmul_variable_k(x, dy, lens_dev, **how)), ref, size, max(lens)


def launched(planmod: Any) -> list[dict[str, Any]]:
    """The kernel, grid and programs of every plan made since the last clear."""
    out = []
    for p in planmod._PLANS.values():
        prep = p.prepared
        if prep is None:
            continue
        kernel = prep.kernel
        out.append({
            "kernel": kernel.spec.name, "grid": prep.grid[0], "programs": p.programs,
            "shared": kernel.spec.shared_bytes, "per_sm": kernel.resident_per_sm(prep.device),
        })  # fmt: skip
    return out


def run_in(folder: str, fn: Any) -> Any:
    os.environ[BUNDLE_ENV] = folder
    return fn()


def parse_bundles(items: list[str]) -> dict[str, str] | str:
    """``LABEL=DIR`` items in order (the first is the baseline), or the error."""
    out: dict[str, str] = {}
    for item in items:
        label, sep, folder = item.partition("=")
        if not sep or not label or not folder:
            return f"--bundle takes LABEL=DIR, got {item!r}"
        if label in out:
            return f"--bundle: label {label!r} given twice"
        if not Path(folder).is_dir():
            return f"--bundle: no folder {folder}"
        out[label] = folder
    if len(out) < 2:
        return "--bundle: give at least two (the first is the baseline)"
    return out


def sweep_points(count: int, seed: int) -> list[tuple[Case, tuple[int, int, int]]]:
    """``count`` (case, odd M, N, K in [200, 8192]) drawn with ``seed``."""
    rng = random.Random(seed)
    odd = lambda: rng.randrange(201, 8192, 2)  # noqa: E731
    return [(rng.choice(CASES), (odd(), odd(), odd())) for _ in range(count)]


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    parser.add_argument(
        "--bundle", action="append", default=[], metavar="LABEL=DIR",
        help="a bundle folder and its label; the first is the baseline",
    )  # fmt: skip
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--only", default="", help="comma-separated case labels")
    parser.add_argument("--sweep", type=int, default=0, help="random odd shapes to time too")
    parser.add_argument("--sweep-seed", type=int, default=1)
    args = parser.parse_args(argv)
    bundles = parse_bundles(args.bundle)
    if isinstance(bundles, str):
        print(f"{PROG}: error: {bundles}", file=sys.stderr)
        return 2
    if args.reps < 1 or args.sweep < 0:
        print(f"{PROG}: error: --reps takes a positive count, --sweep one >= 0", file=sys.stderr)
        return 2
    wanted = [c for c in CASES if not args.only or c.label in args.only.split(",")]
    if not wanted:
        print(f"{PROG}: error: --only: none of {[c.label for c in CASES]}", file=sys.stderr)
        return 2
    session = benchlib.cuda_session(PROG, None)
    if session is None:
        return 2
    torch, report, _gpu = session
    torch.backends.cuda.matmul.allow_tf32 = False
    import gemm_opt as g
    from gemm_opt.runtime import CudaError
    from gemm_opt.runtime import plan as planmod
    from gemm_opt.runtime.gemm import KernelMissing

    # a kernel missing from a folder, a refused call or a failed launch fails its case
    errors = (KernelMissing, CudaError, ValueError, TypeError, RuntimeError)
    labels = list(bundles)
    base = labels[0]

    def run_all(call: Any) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
        outs, kernels = {}, {}
        for label, folder in bundles.items():
            planmod.clear_plans()
            outs[label] = run_in(folder, call)
            torch.cuda.synchronize()
            kernels[label] = launched(planmod)
        return outs, kernels

    def agree(case: Case, outs: dict, kernels: dict) -> tuple[bool, str]:
        """Plain kernels, the same in every build; bitwise equal to the baseline where the
        schedule is deterministic and splits K alike (the same grid)."""
        names = {x["kernel"] for ks in kernels.values() for x in ks}
        plain = all(not n.endswith(("_aligned", "_tma")) and "_aligned_" not in n for n in names)
        grids = {lb: [x["grid"] for x in kernels[lb]] for lb in labels}
        diff = [lb for lb in labels[1:] if not torch.equal(outs[base], outs[lb])]
        must = [lb for lb in diff if case.reduction != "atomic" and grids[lb] == grids[base]]
        ok = plain and len(names) == 1 and not must
        return ok, f"kernels {sorted(names)}, grids {grids}, differ from {base}: {diff or 'none'}"

    failures = 0
    report(f"## correctness ({', '.join(labels)} against float64 and bit for bit against {base})")
    for case in wanted:
        for i, shape in enumerate(CHECK_SHAPES):
            call, ref, size, k = make_call(torch, g, case, shape, seed=17 + i)
            try:
                outs, kernels = run_all(call)
            except errors as e:
                failures += 1
                report(f"FAIL {case.label} {shape}: {type(e).__name__}: {e}")
                continue
            u = benchlib.UNIT_ROUNDOFF[case.dtype]
            bound = {}
            for label in labels:
                tol = 2 * u * ref.abs() + (k + 2) * 2.0**-23 * size
                if case.reduction == "atomic":
                    tol += max(x["programs"] for x in kernels[label]) * u * size
                c = outs[label].double()
                bound[label] = bool(torch.isfinite(c).all()) and bool(
                    ((c - ref).abs() <= tol).all()
                )
            same, detail = agree(case, outs, kernels)
            bad = not all(bound.values()) or not same
            failures += bad
            report(
                f"{'FAIL' if bad else 'ok  '} {case.label} {shape}: within bound {bound}, {detail}"
            )

    flush = benchlib.Flusher()
    rows: list[dict[str, Any]] = []

    def timed(case: Case, shape: tuple[int, int, int], part: str) -> None:
        nonlocal failures
        call, _ref, _size, _k = make_call(torch, g, case, shape, seed=5)
        try:
            outs, kernels = run_all(call)
        except errors as e:
            failures += 1
            report(f"FAIL {case.label} {shape} ({part}): {type(e).__name__}: {e}")
            return
        same, detail = agree(case, outs, kernels)
        if not same:
            failures += 1
            report(f"FAIL {case.label} {shape} ({part}): {detail}")
        fns = {lb: (lambda f=folder, c=call: run_in(f, c)) for lb, folder in bundles.items()}
        timing = benchlib.bench(fns, args.reps, warmup=3, flush=flush)
        row: dict[str, Any] = {"part": part, "case": case.label, "m": shape[0], "n": shape[1],
                               "k": shape[2], "kernel": kernels[base][0]["kernel"]}  # fmt: skip
        cells = []
        for label in labels:
            ms, info = timing[label]["median_ms"], kernels[label][0]
            ratio = ms / timing[base]["median_ms"]
            row.update({f"{label}_ms": round(ms, 4), f"{label}_ratio": round(ratio, 4),
                        f"{label}_grid": info["grid"], f"{label}_shared": info["shared"],
                        f"{label}_per_sm": info["per_sm"]})  # fmt: skip
            cells.append(f"{label} {ms:8.4f} ms x{ratio:5.3f} ({info['shared']} B, "
                         f"{info['per_sm']}/SM, grid {info['grid']})")  # fmt: skip
        rows.append(row)
        report(f"{case.label:22} {'x'.join(map(str, shape)):16} " + "  ".join(cells))

    def summary(part: str) -> None:
        mine = [r for r in rows if r["part"] == part]
        if not mine:
            return
        for label in labels[1:]:
            ratios = [
                (r[f"{label}_ratio"], f"{r['case']} {r['m']}x{r['n']}x{r['k']}") for r in mine
            ]
            report(f"{part}: {label}/{base} geometric mean {geomean([x for x, _ in ratios]):.4f}, "
                   f"worst {max(ratios)[0]:.4f} ({max(ratios)[1]}), best {min(ratios)[0]:.4f} "
                   f"({min(ratios)[1]}) over {len(mine)}")  # fmt: skip

    report(f"\n## named cases at {'x'.join(map(str, SPEED_SHAPE))} (ratio: time / {base}'s)")
    for case in wanted:
        timed(case, SPEED_SHAPE, "named")
    if args.sweep:
        report(f"\n## sweep: {args.sweep} random odd shapes, seed {args.sweep_seed}")
        for case, shape in sweep_points(args.sweep, args.sweep_seed):
            timed(case, shape, "sweep")
    report("")
    summary("named")
    summary("sweep")
    report(f"failures: {failures}")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        if rows:
            with open(args.out / "ab.csv", "w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
        report.write(args.out / "results.md")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
