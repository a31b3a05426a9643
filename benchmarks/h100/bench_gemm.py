#!/usr/bin/env python3
"""Benchmark: our tile GEMM vs plain Triton ``tl.dot`` vs cuBLAS on the local NVIDIA GPU.

One command, one run, everything side by side. Needs only torch and
``gemm_opt.runtime``: the bundle (``build_bundle.py --candidates --triton``
or ``--tuned --triton``) holds our kernels and the plain Triton baseline,
both compiled here with Triton 3.9.0; ``import triton`` is blocked for the
whole run, so the machine's own Triton cannot stand in for either. When the
bundle also holds the warp-specialized Gluon GEMM (``--gluon-ws``), it is
checked and timed the same way as the Triton baseline (best correct config
per shape) in a column of its own.

For each shape and dtype:

1. correctness against a float64 reference (``torch.matmul`` on doubles of
   the same random normal inputs) for every kernel that may run the shape:
   ours (the config the config table gives, and the default config), each
   Triton config, each warp-specialized Gluon config (if any) and cuBLAS;
   C starts as NaN, so every element must be written;
2. a pre-pass, outside the timed region, picks the fastest correct Triton
   config (and Gluon config) for the shape (median of a few flushed samples
   each);
3. interleaved timing of ours, that Triton config, that Gluon config and
   cuBLAS (``torch.matmul(a, b, out=c)``): each sample is one call between
   CUDA events after a 256 MiB L2 flush (a read); medians of ``--reps``.

Prints a line per shape as it goes; writes ``results.csv``, ``results.md``,
``results.json`` and, where matplotlib is installed, ``results.png``
(``plot_results.py`` makes it from the CSV anywhere else). Exit status 1 if
a correctness check fails, 2 on misuse or without a usable GPU.

    PYTHONPATH=python python3 benchmarks/h100/bench_gemm.py --bundle bench.bundle --out results
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import benchlib  # noqa: E402

#: Our kernel's default config (``examples/gemm_gfx1250.py``'s constexpr defaults).
DEFAULT_CONFIG = "128x128x64_w8"
#: Shapes only checked, not timed: multiples of 16 that no block shape divides,
#: so every kernel's edge tiles (masks, zero fill) are exercised.
CHECK_SHAPES = ((272, 400, 208), (1040, 1056, 1072), (4112, 1168, 336))
#: Flushed samples per Triton config in the pre-pass that picks one per shape.
PREPASS_REPS = 7

CSV_FIELDS = (
    "shape",
    "dtype",
    "ours_config",
    "triton_config",
    "ours_tflops",
    "triton_tflops",
    "cublas_tflops",
    "ours_vs_cublas",
    "ours_vs_triton",
    "triton_vs_cublas",
    "ours_median_ms",
    "triton_median_ms",
    "cublas_median_ms",
    "samples",
    "ours_rel_err",
    "triton_rel_err",
    "cublas_rel_err",
    "all_correct",
    # Empty where the bundle has no warp-specialized Gluon kernels.
    "gluon_ws_config",
    "gluon_ws_tflops",
    "gluon_ws_vs_cublas",
    "ours_vs_gluon_ws",
    "gluon_ws_median_ms",
    "gluon_ws_rel_err",
)


def fail(message: str) -> None:
    print(f"bench_gemm.py: error: {message}", file=sys.stderr)
    raise SystemExit(2)


class Kernels:
    """The bundle's kernels of one dtype: ours, Triton's and the warp-specialized
    Gluon GEMM's (none, if the bundle has none), each by config tag."""

    def __init__(self, loaded: Any, dtype: str) -> None:
        self.ours: dict[str, Any] = {}
        self.triton: dict[str, Any] = {}
        self.gluon_ws: dict[str, Any] = {}
        for k in loaded:
            meta = k.spec.meta
            if meta.get("dtype") != dtype:
                continue
            if meta.get("kind") == "triton":
                self.triton[meta["config"]] = k
            elif meta.get("kind") == "gluon-ws":
                self.gluon_ws[meta["config"]] = k
            elif meta.get("kind") == "ours" and meta.get("variant") == "aligned":
                self.ours[meta["config"]] = k
        if not self.ours or not self.triton:
            fail(
                f"the bundle needs {dtype} kernels of ours (aligned) and of Triton; "
                "build it with build_bundle.py --candidates --triton (or --tuned --triton)"
            )

    @staticmethod
    def eligible(kernel: Any, scalars: dict[str, int]) -> bool:
        """Whether the divisibility and constexpr facts the kernel was compiled with hold."""
        for arg in kernel.spec.args:
            if arg.is_pointer or arg.name not in scalars:
                continue
            value = scalars[arg.name]
            if arg.constexpr is not None and value != arg.constexpr:
                return False
            if value % arg.divisibility:
                return False
        return True

    @staticmethod
    def ours_call(kernel: Any, a: Any, b: Any, c: Any) -> tuple:
        m, k = a.shape
        n = b.shape[1]
        return (a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0))

    @staticmethod
    def triton_call(kernel: Any, a: Any, b: Any, c: Any) -> tuple:
        m, k = a.shape
        n = b.shape[1]
        cfg = {x.name: x.constexpr for x in kernel.spec.args if x.constexpr is not None}
        return (
            a,
            b,
            c,
            m,
            n,
            k,
            a.stride(0),
            a.stride(1),
            b.stride(0),
            b.stride(1),
            c.stride(0),
            c.stride(1),
            cfg["BLOCK_M"],
            cfg["BLOCK_N"],
            cfg["BLOCK_K"],
            cfg["GROUP_M"],
        )

    @classmethod
    def named_call(cls, kernel: Any, a: Any, b: Any, c: Any) -> tuple:
        """The arguments of a kernel taking ``triton_gemm.py``'s (pointers, sizes,
        strides) by name, then its config's constexprs (the Gluon GEMM's)."""
        m, k = a.shape
        values = {"a_ptr": a, "b_ptr": b, "c_ptr": c, **cls.triton_scalars(m, b.shape[1], k)}
        return tuple(values[x.name] if x.name in values else x.constexpr for x in kernel.spec.args)

    @staticmethod
    def ours_scalars(m: int, n: int, k: int) -> dict[str, int]:
        return {"M": m, "N": n, "K": k, "lda": k, "ldb": n, "ldc": n}

    @staticmethod
    def triton_scalars(m: int, n: int, k: int) -> dict[str, int]:
        return {
            "M": m,
            "N": n,
            "K": k,
            "stride_am": k,
            "stride_ak": 1,
            "stride_bk": n,
            "stride_bn": 1,
            "stride_cm": n,
            "stride_cn": 1,
        }


def run_shape(
    kernels: Kernels,
    table: dict | None,
    dtype: str,
    shape: tuple[int, int, int],
    seed: int,
    reps: int,
    warmup: int,
    flush: benchlib.Flusher,
    *,
    timed: bool = True,
) -> tuple[dict | None, list[dict]]:
    """Check every kernel on one shape; then (``timed``) pick a Triton config and time."""
    import torch

    m, n, kk = shape
    tdtype = getattr(torch, dtype)
    a, b = benchlib.operands(m, n, kk, tdtype, seed)
    ref = torch.matmul(a.double(), b.double())

    # Which kernels may run this shape.
    ours_tag = benchlib.choose_config(table, dtype, shape)
    if ours_tag not in kernels.ours:
        fail(f"the config table chooses {ours_tag} for {dtype} {m}x{n}x{kk}; the bundle lacks it")
    ours_scalars = kernels.ours_scalars(m, n, kk)
    if not kernels.eligible(kernels.ours[ours_tag], ours_scalars):
        fail(f"{m}x{n}x{kk}: N, K must be multiples of 16 for the aligned kernels")
    default = (table or {}).get("default", DEFAULT_CONFIG)
    ours_tags = [ours_tag] + [t for t in (default,) if t in kernels.ours and t != ours_tag]
    tr_scalars = kernels.triton_scalars(m, n, kk)
    triton_tags = [t for t, k in kernels.triton.items() if kernels.eligible(k, tr_scalars)]
    if not triton_tags:
        fail(f"{m}x{n}x{kk}: no Triton config may run it (sizes must be multiples of 16)")
    gluon_tags = [t for t, k in kernels.gluon_ws.items() if kernels.eligible(k, tr_scalars)]
    if kernels.gluon_ws and not gluon_tags:
        fail(f"{m}x{n}x{kk}: no Gluon config may run it (sizes must be multiples of 16)")
    table_of = {"ours": kernels.ours, "triton": kernels.triton, "gluon_ws": kernels.gluon_ws}
    call_of = {
        "ours": kernels.ours_call,
        "triton": kernels.triton_call,
        "gluon_ws": kernels.named_call,
    }

    def make(kind: str, tag: str | None) -> tuple[Any, Any]:
        c = torch.full((m, n), float("nan"), device="cuda", dtype=tdtype)
        if kind == "cublas":
            return (lambda: torch.matmul(a, b, out=c)), c
        kernel = table_of[kind][tag]
        args = call_of[kind](kernel, a, b, c)
        # A persistent config's grid: a program per SM (ours' and the Gluon GEMM's).
        kw = benchlib.launch_options(kernel, m, n) if kind != "triton" else {}
        return (lambda: kernel(*args, **kw)), c

    # 1. correctness of every kernel
    checks = []
    kinds = (("ours", ours_tags), ("triton", triton_tags), ("gluon_ws", gluon_tags))
    for kind, tags in (*kinds, ("cublas", [None])):
        for tag in tags:
            fn, c = make(kind, tag)
            fn()
            torch.cuda.synchronize()
            r = benchlib.check_output(c, ref, dtype)
            checks.append(
                {"shape": f"{m}x{n}x{kk}", "dtype": dtype, "kind": kind, "config": tag, **r}
            )
            del c
    ok = {(x["kind"], x["config"]): x for x in checks}
    if not timed:
        return None, checks

    # 2. pre-pass (not part of the timing): the fastest correct Triton (and Gluon) config
    pre: dict[str, dict[str, float]] = {}
    chosen: dict[str, str] = {}
    for kind, tags in kinds[1:]:
        candidates = {t: make(kind, t)[0] for t in tags if ok[(kind, t)]["ok"]}
        if candidates:
            times = benchlib.bench(candidates, PREPASS_REPS, 1, flush)
            pre[kind] = {t: round(v["median_ms"], 4) for t, v in times.items()}
            chosen[kind] = min(pre[kind], key=lambda t: pre[kind][t])
        elif tags:
            chosen[kind] = tags[0]
    triton_tag = chosen["triton"]

    # 3. interleaved timing
    fns = {
        "ours": make("ours", ours_tag)[0],
        "triton": make("triton", triton_tag)[0],
        **({"gluon_ws": make("gluon_ws", chosen["gluon_ws"])[0]} if "gluon_ws" in chosen else {}),
        "cublas": make("cublas", None)[0],
    }
    t = benchlib.bench(fns, reps, warmup, flush)
    tf = {name: benchlib.tflops(m, n, kk, v["median_ms"]) for name, v in t.items()}
    row = {
        "shape": f"{m}x{n}x{kk}",
        "dtype": dtype,
        "ours_config": ours_tag,
        "triton_config": triton_tag,
        "ours_tflops": round(tf["ours"], 1),
        "triton_tflops": round(tf["triton"], 1),
        "cublas_tflops": round(tf["cublas"], 1),
        "ours_vs_cublas": round(tf["ours"] / tf["cublas"], 3),
        "ours_vs_triton": round(tf["ours"] / tf["triton"], 3),
        "triton_vs_cublas": round(tf["triton"] / tf["cublas"], 3),
        "ours_median_ms": round(t["ours"]["median_ms"], 4),
        "triton_median_ms": round(t["triton"]["median_ms"], 4),
        "cublas_median_ms": round(t["cublas"]["median_ms"], 4),
        "samples": t["ours"]["samples"],
        "ours_rel_err": _sig(ok[("ours", ours_tag)]["rel_fro_err"]),
        "triton_rel_err": _sig(ok[("triton", triton_tag)]["rel_fro_err"]),
        "cublas_rel_err": _sig(ok[("cublas", None)]["rel_fro_err"]),
        "all_correct": all(x["ok"] for x in checks),
        "triton_prepass_ms": pre.get("triton", {}),
    }
    if "gluon_ws" in chosen:
        tag = chosen["gluon_ws"]
        row |= {
            "gluon_ws_config": tag,
            "gluon_ws_tflops": round(tf["gluon_ws"], 1),
            "gluon_ws_vs_cublas": round(tf["gluon_ws"] / tf["cublas"], 3),
            "ours_vs_gluon_ws": round(tf["ours"] / tf["gluon_ws"], 3),
            "gluon_ws_median_ms": round(t["gluon_ws"]["median_ms"], 4),
            "gluon_ws_rel_err": _sig(ok[("gluon_ws", tag)]["rel_fro_err"]),
            "gluon_ws_prepass_ms": pre.get("gluon_ws", {}),
        }
    return row, checks


def _sig(x: float | None) -> float | None:
    return None if x is None else float(f"{x:.3g}")


def kernel_resources(loaded: Any) -> list[dict]:
    """Registers, spills, shared memory and estimated occupancy of every kernel loaded."""
    out = []
    for k in loaded:
        attrs = k.attributes(0)
        out.append(
            {
                "kernel": k.name,
                "kind": k.spec.meta.get("kind", ""),
                "config": k.spec.meta.get("config", ""),
                "dtype": k.spec.meta.get("dtype", ""),
                "num_warps": k.spec.num_warps,
                **attrs,
                **benchlib.occupancy(attrs, k.spec.num_warps),
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path.cwd() / "results")
    parser.add_argument(
        "--config-table",
        type=Path,
        default=benchlib.CONFIG_TABLE,
        help="our kernel's config per shape class (from tune.py); default config without it",
    )
    parser.add_argument("--reps", type=int, default=30, help="timed samples per kernel")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--dtypes", default=",".join(benchlib.DTYPES))
    parser.add_argument("--shapes", default="", help="MxNxK,... instead of the benchmark suite")
    args = parser.parse_args(argv)
    if args.reps < 5:
        fail("--reps must be at least 5")
    try:
        dtypes = benchlib.parse_dtypes(args.dtypes)
    except ValueError as e:
        fail(f"--dtypes {e}")
    shapes = list(benchlib.BENCH_SHAPES)
    if args.shapes:
        try:
            shapes = benchlib.parse_shapes(args.shapes)
        except ValueError as e:
            fail(f"--shapes: {e}")
    table = None
    if args.config_table.exists():
        try:
            table = benchlib.read_table(args.config_table)
        except (ValueError, OSError) as e:
            fail(str(e))

    loaded, env = benchlib.open_bundle(args.bundle, fail)
    import torch

    kernels = {d: Kernels(loaded, d) for d in dtypes}
    env = {
        **env,
        "config_table": args.config_table.name if table else "none (default config)",
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    print(json.dumps(env), flush=True)
    resources = kernel_resources(loaded)
    for r in resources:
        print("kernel", json.dumps(r), flush=True)

    flush = benchlib.Flusher()
    rows: list[dict] = []
    checks: list[dict] = []
    start = time.perf_counter()
    seed = 0
    for dtype in dtypes:
        for shape in CHECK_SHAPES:
            seed += 1
            _, cs = run_shape(kernels[dtype], table, dtype, shape, seed, 0, 0, flush, timed=False)
            checks += cs
            bad = [f"{c['kind']}:{c['config'] or ''}" for c in cs if not c["ok"]]
            print(
                f"[check {time.perf_counter() - start:5.0f} s] {dtype:8s} "
                f"{'x'.join(map(str, shape)):>15s}: {len(cs) - len(bad)}/{len(cs)} correct"
                + (f" FAILED: {bad}" if bad else ""),
                flush=True,
            )
    for dtype in dtypes:
        for shape in shapes:
            seed += 1
            row, cs = run_shape(
                kernels[dtype], table, dtype, shape, seed, args.reps, args.warmup, flush
            )
            assert row is not None
            torch.cuda.empty_cache()  # the shape's operands are gone with run_shape's frame
            rows.append(row)
            checks += cs
            bad = [f"{c['kind']}:{c['config'] or ''}" for c in cs if not c["ok"]]
            print(
                f"[{len(rows)}/{len(dtypes) * len(shapes)} {time.perf_counter() - start:5.0f} s] "
                f"{dtype:8s} {row['shape']:>15s}: ours {row['ours_tflops']:6.1f} "
                f"({row['ours_config']}), triton {row['triton_tflops']:6.1f} "
                f"({row['triton_config']}), cuBLAS {row['cublas_tflops']:6.1f} TFLOP/s; "
                f"ours/cuBLAS {row['ours_vs_cublas']:.2f}, ours/Triton "
                f"{row['ours_vs_triton']:.2f}, Triton/cuBLAS {row['triton_vs_cublas']:.2f}; "
                + (
                    f"Gluon WS {row['gluon_ws_tflops']:.1f} ({row['gluon_ws_config']}), "
                    f"Gluon WS/cuBLAS {row['gluon_ws_vs_cublas']:.2f}, ours/Gluon WS "
                    f"{row['ours_vs_gluon_ws']:.2f}; "
                    if "gluon_ws_config" in row
                    else ""
                )
                + f"{len(cs) - len(bad)}/{len(cs)} correct"
                + (f" FAILED: {bad}" if bad else ""),
                flush=True,
            )

    env["triton_imported"] = any(
        name == "triton" or name.startswith("triton.")
        for name, mod in sys.modules.items()
        if mod is not None
    )
    result = {
        "environment": env,
        "method": (
            f"median of {args.reps} interleaved samples after {args.warmup} warm-up rounds; "
            "each sample is one call between CUDA events after a 256 MiB L2 flush (a read) "
            "and a 0.3 ms GPU spin (the host's launch cost off the clock); random "
            "normal inputs, row-major A (MxK) and B (KxN), fresh per shape; the Triton config "
            f"per shape is the fastest correct one in a pre-pass of {PREPASS_REPS} flushed "
            "samples each, outside the timed region; cuBLAS is torch.matmul(a, b, out=c); ours "
            "and Triton are cubins from the bundle launched with cuLaunchKernel"
            + (
                "; the warp-specialized Gluon GEMM's config per shape is chosen as Triton's, "
                "persistent configs on one program per SM"
                if any(k.gluon_ws for k in kernels.values())
                else ""
            )
        ),
        "kernels": resources,
        "timings": rows,
        "checks": checks,
        "all_correct": all(c["ok"] for c in checks),
    }
    write_results(result, args.out)
    return 0 if result["all_correct"] else 1


def write_results(result: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(result, indent=2) + "\n")
    with (out / "results.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(result["timings"])
    text = markdown(result)
    (out / "results.md").write_text(text)
    print(text)
    try:
        import plot_results

        plot_results.plot(out / "results.csv", out / "results.png")
        print(f"wrote {out / 'results.png'}")
    except ImportError as e:
        print(f"no chart here ({e}); run plot_results.py on results.csv where matplotlib is")
    print(f"wrote results.json, results.csv and results.md to {out}")


def markdown(result: dict) -> str:
    env = result["environment"]
    checks = result["checks"]
    passed = sum(c["ok"] for c in checks)
    gluon = any("gluon_ws_config" in r for r in result["timings"])
    lines = [
        f"# GEMM on {env['gpu']}: ours vs plain Triton vs cuBLAS"
        + (" vs warp-specialized Gluon" if gluon else ""),
        "",
        f"{env['capability']}, {env['sms']} SMs, torch {env['torch']} (CUDA {env['cuda']}), "
        f"{env['date']}. Ours and Triton compiled for cuda:90 with {env['compiled_with']} "
        f"(`{env['bundle']}`, sha256 {env['bundle_sha256'][:16]}...); our config table: "
        f"{env['config_table']}; Triton imported in this run: "
        f"{'yes' if env['triton_imported'] else 'no'}.",
        f"Method: {result['method']}.",
        f"Correctness: {passed} of {len(checks)} kernel runs match the float64 reference "
        "(|err| <= 1e-2 + 4u|ref|, every element written).",
        "",
        "| shape (MxNxK) | dtype | ours TFLOP/s | Triton TFLOP/s | cuBLAS TFLOP/s "
        "| ours/cuBLAS | ours/Triton | Triton/cuBLAS | ours config | Triton config |"
        + (
            " Gluon WS TFLOP/s | Gluon WS/cuBLAS | ours/Gluon WS | Gluon WS config |"
            if gluon
            else ""
        ),
        "|---|---|---|---|---|---|---|---|---|---|" + ("---|---|---|---|" if gluon else ""),
    ]
    for r in result["timings"]:
        line = (
            f"| {r['shape']} | {r['dtype']} | {r['ours_tflops']:.1f} | {r['triton_tflops']:.1f} "
            f"| {r['cublas_tflops']:.1f} | {r['ours_vs_cublas']:.2f} | {r['ours_vs_triton']:.2f} "
            f"| {r['triton_vs_cublas']:.2f} | {r['ours_config']} | {r['triton_config']} |"
        )
        if gluon:
            line += (
                f" {r['gluon_ws_tflops']:.1f} | {r['gluon_ws_vs_cublas']:.2f} "
                f"| {r['ours_vs_gluon_ws']:.2f} | {r['gluon_ws_config']} |"
                if "gluon_ws_config" in r
                else " n/a | n/a | n/a | n/a |"
            )
        lines.append(line)
    lines += [
        "",
        "Kernels (registers and spills from the loaded binary; CTAs/SM estimated from them):",
        "",
        "| kernel | warps | registers | spill (local) B | shared B | CTAs/SM | limited by |",
        "|---|---|---|---|---|---|---|",
    ]
    for k in result["kernels"]:
        shared = k["dynamic_shared_bytes"] + k["static_shared_bytes"]
        lines.append(
            f"| {k['kernel']} | {k['num_warps']} | {k['registers']} | {k['local_bytes']} "
            f"| {shared} | {k['ctas_per_sm']} | {k['limited_by']} |"
        )
    lines += [
        "",
        "Correctness (relative Frobenius error against float64):",
        "",
        "| shape | dtype | kernel | config | rel. err | max abs err | ok |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in checks:
        rel = "n/a" if c["rel_fro_err"] is None else f"{c['rel_fro_err']:.2e}"
        err = "n/a" if c["max_abs_err"] is None else f"{c['max_abs_err']:.3g}"
        lines.append(
            f"| {c['shape']} | {c['dtype']} | {c['kind']} | {c['config'] or ''} | {rel} "
            f"| {err} | {'yes' if c['ok'] else 'NO'} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
