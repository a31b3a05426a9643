#!/usr/bin/env python3
"""FP8 GEMM under every schedule on the local NVIDIA GPU, beside ``torch._scaled_mm``.

One command, torch only: the kernels come from the bundles (``--bundles DIR``
holding ``cuda90/fp8.bundle``) and run through ``gemm_opt.matmul(a, w.t(),
scale_a=, scale_b=, schedule=, reduction=, num_programs=)``.

1. **Correctness**: e4m3 operands quantized by ``gemm_opt.quantize_fp8``
   (tensorwise, rowwise, block128), every schedule (data-parallel, work
   stealing, stream-K atomic / linear / tree, split-K) at the resident
   programs and at a few programs (more K splits per tile), on a ragged shape
   with K off the 16-element rule (the plain kernel), a ragged-M one (the TMA
   twin), a long-K one and one of the 128x128 configuration; C (bf16) against
   the float64 product of the decoded operands times their scales within
   ``benchmarks/h100/fp8.py``'s bound (``2^-8 |ref| + 2^-12 S``, plus ``r 2^-8
   S`` for atomic stream-K's ``r`` partials rounded to bf16 and added in bf16),
   against ``torch._scaled_mm`` (twice the bound; sizes that are multiples of
   16, recipes it has), and linear, tree and split-K bitwise the same over
   three calls.
2. **Speed**: shapes with few output tiles and long K, where splitting K
   should pay, each recipe, every schedule beside ``torch._scaled_mm`` (rowwise
   where torch has no block128 kernel, marked): the kernels' own time, 20
   calls captured in a CUDA graph (``benchlib.graph_us``: no host in the way,
   warm L2), which the table compares; and the API call as the user makes it,
   interleaved, after an L2 flush and the flusher's 0.3 ms of slack (median of
   ``--reps``): where the call's host path outlasts the slack, that time shows
   the host (the CSV's ``call_ms``); and the host's time per call, 50 calls
   issued back to back (``host_us``: the wall time of issuing them, GPU work
   queued behind).

Writes ``OUT/fp8_schedules.{log,csv,md}``. Exit 0 when every check passes, 1 if
one fails, 2 on misuse, no GPU or a missing kernel.

    PYTHONPATH=python python3 benchmarks/h100/fp8_schedules.py --bundles DIR --out OUT
"""

from __future__ import annotations

import argparse
import csv
import functools
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import benchlib  # noqa: E402
import fp8  # noqa: E402

#: (schedule, reduction) of every FP8 kernel kind (data-parallel first: the baseline).
SCHEDULES = (
    ("data-parallel", None),
    ("work-stealing", None),
    ("stream-k", "atomic"),
    ("stream-k", "linear"),
    ("stream-k", "tree"),
    ("split-k", None),
)
#: Correctness shapes: ragged everywhere with K off 16 (plain kernel, 8 K blocks),
#: ragged M (TMA twin), long K, and enough tiles for the 128x128 configuration.
CHECK_SHAPES = ((257, 129, 1000), (1000, 1024, 2048), (256, 512, 16384), (2048, 2048, 2048))
#: Few tiles and long K: where stream-K and split-K should pay.
SPEED_SHAPES = ((256, 512, 16384), (1024, 1024, 8192), (4096, 2112, 7168), (512, 512, 8192))
RECIPES = fp8.RECIPES
#: Programs of the "few programs" checks: stream-K over fewer programs than tiles cuts
#: most tiles; split-K's slices per tile then come from num_programs = tiles * 3.
FEW = 7


def _name(schedule: str, reduction: str | None) -> str:
    return schedule if reduction is None else f"{schedule}-{reduction}"


def _call(a, b, sa, sb, schedule: str, reduction: str | None, programs: int | None = None):
    import gemm_opt

    return gemm_opt.matmul(
        a, b, scale_a=sa, scale_b=sb, schedule=schedule, reduction=reduction,
        num_programs=programs,
    )  # fmt: skip


def _partials(plan: Any) -> int:
    """The most partials a tile of ``plan`` adds (atomic stream-K's bf16 adds)."""
    from gemm_opt.core import schedules as S

    spec = plan.spec
    if spec.kind != "stream-k":
        return 1
    tiles = S.tile_count(plan.m, plan.n, spec.block_m, spec.block_n)
    ipt = S.iters_per_tile(plan.k, spec.block_k)
    part = S.stream_k_partition(tiles, ipt, plan.grid)
    counts: dict[int, int] = {}
    for p in range(plan.grid):
        for seg in part.segments(p):
            counts[seg.tile] = counts.get(seg.tile, 0) + 1
    return max(counts.values(), default=1)


def check(torch: Any, say: Any) -> bool:
    from gemm_opt.core import schedules as S
    from gemm_opt.runtime import scaled

    ok = True
    for m, n, k in CHECK_SHAPES:
        for recipe in RECIPES:
            a, w, sa, sb = fp8._quantized(torch, m, n, k, recipe, m + n + k)
            b = w.t()
            ref, mag = fp8._reference(torch, a, w, sa, sb, recipe)
            theirs = None
            if k % 16 == 0 and n % 16 == 0:
                theirs = fp8._torch_mm(torch, a, b, sa, sb, torch.bfloat16)
            for schedule, reduction in SCHEDULES:
                plan = scaled.scaled_plan(a, b, sa, sb, schedule=schedule, reduction=reduction)
                tiles = S.tile_count(m, n, plan.spec.block_m, plan.spec.block_n)
                few = tiles * 3 if schedule == "split-k" else FEW
                for programs in (None, few) if schedule != "data-parallel" else (None,):
                    if programs is not None:
                        plan = scaled.scaled_plan(
                            a, b, sa, sb, schedule=schedule, reduction=reduction,
                            num_programs=programs,
                        )  # fmt: skip
                    c = _call(a, b, sa, sb, schedule, reduction, programs)
                    r = _partials(plan) if reduction == "atomic" else 0
                    bound = fp8.REL * ref.abs() + (fp8.ABS + r * 2.0**-8) * mag
                    err_ref = fp8.bound_ratio(c, ref, bound)
                    err_torch = float("nan")
                    if theirs is not None:
                        err_torch = fp8.bound_ratio(c, theirs, bound)
                    same = True
                    if reduction != "atomic":
                        again = [_call(a, b, sa, sb, schedule, reduction, programs) for _ in "ab"]
                        same = all(torch.equal(c.view(torch.int16), x.view(torch.int16))
                                   for x in again)  # fmt: skip
                    good = err_ref <= 1 and (theirs is None or err_torch <= 2) and same
                    ok &= good
                    vs = "n/a" if theirs is None else f"{err_torch:.3f} (of 2)"
                    say(
                        f"{'PASS' if good else 'FAIL'} {m}x{n}x{k} {recipe} "
                        f"{_name(schedule, reduction)} programs={plan.grid} "
                        f"({plan.spec.block_m}x{plan.spec.block_n}): |C-ref|/bound "
                        f"{err_ref:.3f}, |C-torch|/bound {vs}"
                        + ("" if reduction == "atomic" else f", bitwise repeatable {same}")
                        + (f", r={r}" if r else "")
                    )
    return ok


def host_us(torch: Any, fn: Any, calls: int = 50) -> float:
    """Host microseconds per call of ``fn``: ``calls`` calls issued back to back (the
    GPU's work queues behind them, so the wall time of issuing them is the host's)."""
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    took = time.perf_counter() - start
    torch.cuda.synchronize()
    return took / calls * 1e6


def speed(torch: Any, reps: int, warmup: int, say: Any) -> list[dict[str, Any]]:
    flush = benchlib.Flusher()
    rows = []
    for m, n, k in SPEED_SHAPES:
        for recipe in RECIPES:
            a, w, sa, sb = fp8._quantized(torch, m, n, k, recipe, 0)
            b = w.t()
            ta, tb, tsa, tsb = a, b, sa, sb
            torch_recipe = recipe
            if fp8._torch_mm(torch, a, b, sa, sb, torch.bfloat16) is None:  # torch: rowwise
                ta, tw, tsa, tsb = fp8._quantized(torch, m, n, k, "rowwise", 0)
                tb, torch_recipe = tw.t(), "rowwise"
            fns = {
                "torch": lambda a=ta, b=tb, sa=tsa, sb=tsb: torch._scaled_mm(
                    a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16
                )
            }
            for schedule, reduction in SCHEDULES:
                fns[_name(schedule, reduction)] = functools.partial(
                    _call, a, b, sa, sb, schedule, reduction
                )
            calls = benchlib.bench(fns, reps, warmup, flush)
            graph = {}
            for name, fn in fns.items():
                try:
                    graph[name] = benchlib.graph_us(torch, fn) / 1000
                except Exception as e:  # a capture that fails is reported, not fatal
                    why = f"{type(e).__name__}: {e}"
                    say(f"graph {m}x{n}x{k} {recipe} {name}: not captured ({why})")
            base = graph.get("torch", float("nan"))
            dp = graph.get("data-parallel", float("nan"))
            for name, r in calls.items():
                ms = graph.get(name, float("nan"))
                call = r["median_ms"]
                host = host_us(torch, fns[name])
                row = {
                    "m": m, "n": n, "k": k, "recipe": recipe, "impl": name,
                    "median_ms": round(ms, 5), "tflops": round(benchlib.tflops(m, n, k, ms), 1),
                    "vs_torch": round(base / ms, 3), "vs_data_parallel": round(dp / ms, 3),
                    "call_ms": round(call, 5), "host_us": round(host, 1),
                    "torch_recipe": torch_recipe,
                }  # fmt: skip
                rows.append(row)
                say(
                    f"{m}x{n}x{k} {recipe:10s} {name:18s} graph {ms:8.4f} ms "
                    f"{row['tflops']:7.1f} TFLOP/s {row['vs_torch']:.2f}x torch "
                    f"{row['vs_data_parallel']:.2f}x data-parallel; call {call:8.4f} ms, "
                    f"host {host:6.1f} us"
                )
    return rows


def markdown(rows: list[dict[str, Any]], gpu: str) -> str:
    """TFLOP/s per shape, recipe and schedule, torch's beside (its recipe marked where
    it differs), and the best schedule's ratio to torch and to data-parallel."""
    names = ["torch", *(_name(s, r) for s, r in SCHEDULES)]
    lines = [
        f"# FP8 schedules on {gpu} (TFLOP/s of the kernels, CUDA graph, bf16 out)",
        "",
        "| M x N x K | recipe | " + " | ".join(names) + " | best / torch | best / dp |",
        "|---|---|" + "---|" * (len(names) + 2),
    ]
    key = {(r["m"], r["n"], r["k"], r["recipe"], r["impl"]): r for r in rows}
    for shape, recipe in dict.fromkeys(((r["m"], r["n"], r["k"]), r["recipe"]) for r in rows):
        got = [key.get((*shape, recipe, name)) for name in names]
        cells = ["-" if g is None else str(g["tflops"]) for g in got]
        t = got[0]
        if t is not None and t["torch_recipe"] != recipe:
            cells[0] += f" ({t['torch_recipe']})"
        ours = [g for g in got[1:] if g is not None]
        best = max(ours, key=lambda g: g["tflops"]) if ours else None
        ratio = "-" if best is None else f"{best['vs_torch']:.2f}x ({best['impl']})"
        dp = "-" if best is None else f"{best['vs_data_parallel']:.2f}x"
        lines.append(
            f"| {'x'.join(map(str, shape))} | {recipe} | " + " | ".join(cells) + f" | {ratio} "
            f"| {dp} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundles", help="bundle folder (holds cuda90/); default: the package's")
    ap.add_argument("--out", type=Path, default=Path("results/fp8_schedules"), help="output here")
    ap.add_argument("--reps", type=int, default=20, help="timed samples per kernel")
    ap.add_argument("--warmup", type=int, default=3, help="untimed calls per kernel first")
    ap.add_argument("--skip-speed", action="store_true", help="the correctness checks only")
    args = ap.parse_args(argv)
    if args.reps < 1 or args.warmup < 0:
        ap.error("--reps takes a positive count, --warmup a non-negative one")
    session = benchlib.cuda_session(ap.prog, args.bundles)
    if session is None:
        return 2
    torch, report, gpu = session
    from gemm_opt.runtime.gemm import KernelMissing

    try:
        ok = check(torch, report)
        rows = [] if args.skip_speed else speed(torch, args.reps, args.warmup, report)
    except KernelMissing as e:
        print(f"{ap.prog}: error: {e}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    report.write(args.out / "fp8_schedules.log")
    if rows:
        with open(args.out / "fp8_schedules.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        (args.out / "fp8_schedules.md").write_text(markdown(rows, gpu))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
