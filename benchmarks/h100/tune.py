#!/usr/bin/env python3
"""Choose our tile GEMM's config per shape class on the local GPU; write the config table.

Runs where the GPU is, with only torch and ``gemm_opt.runtime``, on a bundle
that holds the candidate configs (``build_bundle.py --candidates``); the
candidates are our kernel's configs (bundle kind ``ours``) only: the
reference kernels a bench bundle may also hold (the Triton baseline, the
warp-specialized Gluon GEMM) are not configs of ours and are left out. For
each dtype and shape of the suite, every candidate is first checked against
a float64 reference (a wrong kernel never wins), then the correct ones are
timed interleaved (one call per sample after an L2 flush, median of
``--reps``); the candidates within 3% of the best (``benchlib.finalists``)
are timed again, interleaved, with ``--final-reps`` samples, so a close call
is not decided by a few samples' noise. The fastest of the final round
becomes the shape's entry in the config table; a
shape outside the suite takes the entry of the nearest tuned shape
(``benchlib.choose_config``). Tuning is its own command: nothing here runs
inside the benchmark's timed region.

Writes the table to ``--out`` (default ``configs/cuda90.json`` beside this
file, which ``build_bundle.py --tuned`` and ``bench_gemm.py`` read).

    PYTHONPATH=python python3 benchmarks/h100/tune.py --bundle bench.bundle --out cuda90.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import benchlib  # noqa: E402

DEFAULT = "128x128x64_w8"


def fail(message: str) -> None:
    print(f"tune.py: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def candidates(loaded: Any, dtype: str) -> dict[str, Any]:
    """The bundle's configs of our kernel for ``dtype`` (kind ``ours``, aligned), by tag."""
    return {
        k.spec.meta["config"]: k
        for k in loaded
        if k.spec.meta.get("kind") == "ours"
        and k.spec.meta.get("variant") == "aligned"
        and k.spec.meta.get("dtype") == dtype
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=benchlib.CONFIG_TABLE)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument(
        "--final-reps", type=int, default=60, help="samples of the final round (close calls)"
    )
    parser.add_argument("--dtypes", default=",".join(benchlib.DTYPES))
    parser.add_argument("--shapes", default="", help="MxNxK,... instead of the benchmark suite")
    args = parser.parse_args(argv)
    if args.reps < 5 or args.final_reps < 5:
        fail("--reps and --final-reps must be at least 5")
    try:
        dtypes = benchlib.parse_dtypes(args.dtypes)
    except ValueError as e:
        fail(f"--dtypes {e}")
    try:
        shapes = benchlib.parse_shapes(args.shapes) if args.shapes else benchlib.BENCH_SHAPES
    except ValueError as e:
        fail(f"--shapes: {e}")

    sys.modules["triton"] = None  # type: ignore[assignment]
    import torch

    from gemm_opt import runtime

    try:
        loaded = runtime.load_bundle(args.bundle)
    except runtime.BundleError as e:
        fail(str(e))
    if not torch.cuda.is_available():
        fail("no CUDA GPU visible to torch")
    flush = benchlib.Flusher()
    entries = []
    start = time.perf_counter()
    seed = 1000
    for dtype in dtypes:
        tdtype = getattr(torch, dtype)
        cands = candidates(loaded, dtype)
        if len(cands) < 2:
            fail(f"the bundle has {len(cands)} {dtype} configs of ours; build it with --candidates")
        for m, n, kk in shapes:
            if n % 16 or kk % 16:
                fail(f"{m}x{n}x{kk}: the aligned kernels need N and K multiples of 16")
            seed += 1
            a, b = benchlib.operands(m, n, kk, tdtype, seed)
            ref = torch.matmul(a.double(), b.double())
            fns, errors = {}, {}
            for tag, kernel in cands.items():
                c = torch.full((m, n), float("nan"), device="cuda", dtype=tdtype)
                args_ = (a, b, c, m, n, kk, kk, n, n)
                kw = benchlib.launch_options(kernel, m, n)
                kernel(*args_, **kw)
                torch.cuda.synchronize()
                r = benchlib.check_output(c, ref, dtype)
                errors[tag] = r["rel_fro_err"]
                if r["ok"]:
                    fns[tag] = lambda kernel=kernel, args_=args_, kw=kw: kernel(*args_, **kw)
            if not fns:
                fail(f"{dtype} {m}x{n}x{kk}: no candidate is correct")

            def rates_of(times: dict[str, dict], m=m, n=n, kk=kk) -> dict[str, float]:
                return {
                    t: round(benchlib.tflops(m, n, kk, v["median_ms"]), 1) for t, v in times.items()
                }

            rates = rates_of(benchlib.bench(fns, args.reps, 2, flush))
            final = benchlib.finalists(rates)
            if len(final) > 1:
                fin = {t: fns[t] for t in final}
                final_rates = rates_of(benchlib.bench(fin, args.final_reps, 2, flush))
            else:
                final_rates = {final[0]: rates[final[0]]}
            best = max(final_rates, key=lambda t: final_rates[t])
            entries.append(
                {
                    "dtype": dtype,
                    "shape": [m, n, kk],
                    "config": best,
                    "tflops": final_rates[best],
                    "default_tflops": rates.get(DEFAULT),
                    "candidates_tflops": rates,
                    "final_tflops": final_rates,
                    "wrong": sorted(set(cands) - set(fns)),
                }
            )
            ranked = ", ".join(
                f"{t} {rates[t]:.0f}" for t in sorted(rates, key=lambda t: -rates[t])
            )
            print(
                f"[{time.perf_counter() - start:5.0f} s] {dtype:8s} {m}x{n}x{kk}: best {best} "
                f"({ranked} TFLOP/s; final round "
                + ", ".join(f"{t} {r:.0f}" for t, r in final_rates.items())
                + ")"
                + (f"; WRONG: {entries[-1]['wrong']}" if entries[-1]["wrong"] else ""),
                flush=True,
            )
            del a, b, ref, fns
            torch.cuda.empty_cache()
    table = {
        "target": "cuda:90",
        "kernel": "examples/gemm_gfx1250.py",
        "default": DEFAULT,
        "measured_on": {
            "gpu": torch.cuda.get_device_name(),
            "torch": torch.__version__,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "bundle_sha256": hashlib.sha256(args.bundle.read_bytes()).hexdigest(),
        },
        "method": (
            f"per shape: candidates checked against float64, the correct ones timed "
            f"interleaved, median of {args.reps} samples after an L2 flush; those within "
            f"{benchlib.FINALIST_WITHIN:.0%} of the best timed again ({args.final_reps} "
            "samples); the fastest of that round wins; "
            "other shapes take the entry of the nearest tuned shape (sum of |log2| ratios)"
        ),
        "entries": entries,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(table, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
