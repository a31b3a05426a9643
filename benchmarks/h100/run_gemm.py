#!/usr/bin/env python3
"""Run the tile GEMM from a kernel bundle on the local NVIDIA GPU, next to cuBLAS.

Needs only torch and ``gemm_opt.runtime`` (no Triton, no MLIR bindings, no
numpy): the kernels are cubins in a bundle that ``build_bundle.py`` compiled
with the pinned Triton 3.9.0, launched through the CUDA driver. Triton is
blocked from importing for the whole run, so nothing can fall back to it.

1. Correctness: ragged and padded shapes, every variant that may run them,
   against a float64 reference (``torch.matmul`` on doubles); the error
   allowed is a few units of the output type's last place. C starts as NaN
   (every element must be written) and the padding of a larger C buffer must
   stay untouched. Inputs are random normal, fresh per case.
2. Timing: ours and ``torch.matmul`` (cuBLAS) interleaved in the same run,
   each sample one call between CUDA events after a 256 MiB L2 flush (a read), median
   of ``--reps`` after warm-up. The ``aligned`` variant (16-byte ``cp.async``)
   runs when the bundle's divisibility facts hold, else the ``any`` variant.

Writes ``results.csv``, ``results.md`` and ``results.json`` to ``--out``.
Exit status 1 if any check fails, 2 on misuse or when no usable GPU is there.

    PYTHONPATH=python python3 benchmarks/h100/run_gemm.py --bundle gemm_cuda90.bundle --out /tmp/r
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

BENCH_SHAPES = [
    (1024, 1024, 1024),
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (3840, 4096, 2048),
    (8192, 8192, 1024),
    (512, 512, 8192),
]
#: (M, N, K, pad): pad > 0 puts A, B and C inside larger row-major buffers
#: (row strides K + pad, N + pad, N + pad).
CHECK_SHAPES = [
    (70, 50, 40, 0),
    (1000, 1000, 1000, 0),
    (1, 1, 1, 0),
    (129, 257, 65, 0),
    (128, 128, 64, 0),
    (300, 200, 100, 8),
    (256, 384, 512, 0),
    (256, 384, 512, 16),
    (1000, 1008, 1024, 0),
]
DTYPES = benchlib.DTYPES
#: Unit roundoff of the output types.
UNIT_ROUNDOFF = {"float16": 2.0**-11, "bfloat16": 2.0**-8}
#: The register-copy variant is slow; it is checked only up to this many MACs.
ANY_CHECK_LIMIT = 4096**3


def fail(message: str) -> None:
    print(f"run_gemm.py: error: {message}", file=sys.stderr)
    raise SystemExit(2)


class Gemm:
    """The bundle's GEMM variants of one dtype: picks the variant a call may use."""

    def __init__(self, loaded: Any, dtype: str) -> None:
        self.variants = {}
        for k in loaded:
            if k.spec.meta.get("dtype") == dtype:
                self.variants[k.spec.meta["variant"]] = k
        if set(self.variants) != {"aligned", "any"}:
            fail(f"the bundle lacks a {dtype} GEMM variant (has {sorted(self.variants)})")

    def eligible(self, variant: str, **scalars: int) -> bool:
        """Whether the bundle's divisibility facts of ``variant`` hold for these scalars.

        (Pointers are checked by the launcher; fresh allocations are aligned.)
        """
        kernel = self.variants[variant]
        return all(
            scalars[arg.name] % arg.divisibility == 0
            for arg in kernel.spec.args
            if not arg.is_pointer
        )

    @staticmethod
    def args(a: Any, b: Any, c: Any) -> tuple:
        m, k = a.shape
        n = b.shape[1]
        return (a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0))

    def __call__(self, variant: str, a: Any, b: Any, c: Any) -> None:
        self.variants[variant](*self.args(a, b, c))


# ---- correctness -------------------------------------------------------------------


def operands(m: int, n: int, k: int, dtype: Any, pad: int, seed: int) -> tuple:
    """A (m x k), B (k x n) random normal; C (m x n) NaN-filled, padded by ``pad``."""
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    a_full = torch.randn(m, k + pad, device="cuda", dtype=torch.float32, generator=g).to(dtype)
    b_full = torch.randn(k, n + pad, device="cuda", dtype=torch.float32, generator=g).to(dtype)
    c_full = torch.full((m, n + pad), float("nan"), device="cuda", dtype=dtype)
    return a_full[:, :k], b_full[:, :n], c_full[:, :n], c_full


def check(gemm: Gemm, variant: str, m: int, n: int, k: int, dtype_name: str, pad: int, seed: int):
    import torch

    dtype = getattr(torch, dtype_name)
    a, b, c, c_full = operands(m, n, k, dtype, pad, seed)
    gemm(variant, a, b, c)
    torch.cuda.synchronize()
    ref = torch.matmul(a.double(), b.double())
    lib_err = (torch.matmul(a, b).double() - ref).abs()
    rtol, atol = 4 * UNIT_ROUNDOFF[dtype_name], 1e-2
    err = (c.double() - ref).abs()
    pad_ok = bool(torch.isnan(c_full[:, n:]).all()) if pad else True
    finite = bool(torch.isfinite(c).all())
    ok = finite and pad_ok and bool((err <= atol + rtol * ref.abs()).all())
    rel = float(torch.linalg.norm(c.double() - ref) / torch.linalg.norm(ref)) if finite else None
    return {
        "kernel": gemm.variants[variant].name,
        "variant": variant,
        "shape": [m, n, k],
        "pad": pad,
        "dtype": dtype_name,
        "ok": ok,
        "max_abs_err": float(err.max()) if finite else None,
        "rel_fro_err": rel,
        "cublas_max_abs_err": float(lib_err.max()),
        "rtol": rtol,
        "atol": atol,
        "all_written": finite,
        "padding_untouched": pad_ok,
    }


def check_refusals(gemm: Gemm, dtype_name: str) -> list[str]:
    """The launcher refuses what the aligned kernel was not compiled for."""
    import torch

    from gemm_opt.runtime import ArgumentError

    dtype = getattr(torch, dtype_name)
    a, b, c, _ = operands(64, 50, 64, dtype, 0, 0)  # N = 50: not a multiple of 16
    problems = []
    try:
        gemm("aligned", a, b, c)
        problems.append(f"{dtype_name}: aligned kernel accepted N = 50")
    except ArgumentError:
        pass
    other = torch.float16 if dtype == torch.bfloat16 else torch.bfloat16
    a2, b2, c2, _ = operands(64, 64, 64, other, 0, 0)
    try:
        gemm("any", a2, b2, c2)
        problems.append(f"{dtype_name}: kernel accepted {other} tensors")
    except ArgumentError:
        pass
    return problems


# ---- timing ------------------------------------------------------------------------


# ---- main --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, required=True, help="from build_bundle.py")
    parser.add_argument("--out", type=Path, default=Path.cwd() / "results")
    parser.add_argument("--reps", type=int, default=50, help="timed samples per function")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--dtypes", default=",".join(DTYPES))
    parser.add_argument("--shapes", default="", help="MxNxK,... to time instead of the default set")
    args = parser.parse_args(argv)
    if args.reps < 20:
        fail("--reps must be at least 20")
    try:
        dtypes = benchlib.parse_dtypes(args.dtypes)
    except ValueError as e:
        fail(f"--dtypes {e}")
    shapes = BENCH_SHAPES
    if args.shapes:
        try:
            shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
        except ValueError:
            fail(f"--shapes takes MxNxK,...; got {args.shapes!r}")
        if any(len(s) != 3 or min(s) < 1 for s in shapes):
            fail(f"--shapes takes positive MxNxK,...; got {args.shapes!r}")

    loaded, env = benchlib.open_bundle(args.bundle, fail)
    import torch

    kernels = {d: Gemm(loaded, d) for d in dtypes}
    first = next(iter(loaded)).spec
    env = {
        **env,
        "kernel_source": first.meta.get("source", ""),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    print(json.dumps(env), flush=True)

    # 0. load every kernel (module load is not timed) and report its resources
    compile_info = []
    for d in dtypes:
        for _, k in sorted(kernels[d].variants.items()):
            info = {"kernel": k.name, "sm": k.spec.sm, **k.attributes(0)}
            compile_info.append(info)
            print("loaded", json.dumps(info), flush=True)

    # 1. correctness
    checks: list[dict] = []
    refusals: list[str] = []
    seed = 0
    for dtype in dtypes:
        gemm = kernels[dtype]
        refusals += check_refusals(gemm, dtype)
        shapes_to_check = [*CHECK_SHAPES, *((m, n, kk, 0) for m, n, kk in shapes)]
        for m, n, kk, pad in shapes_to_check:
            for variant in ("aligned", "any"):
                if variant == "any" and m * n * kk > ANY_CHECK_LIMIT:
                    continue
                strides = {"lda": kk + pad, "ldb": n + pad, "ldc": n + pad}
                if not gemm.eligible(variant, M=m, N=n, K=kk, **strides):
                    continue
                seed += 1
                r = check(gemm, variant, m, n, kk, dtype, pad, seed)
                checks.append(r)
                status = "ok  " if r["ok"] else "FAIL"
                err = "n/a" if r["max_abs_err"] is None else f"{r['max_abs_err']:.3g}"
                print(
                    f"check {len(checks):2d} {status} {dtype:9s} {variant:7s} {m}x{n}x{kk} "
                    f"pad={pad} max_abs_err={err} (cuBLAS {r['cublas_max_abs_err']:.3g})",
                    flush=True,
                )
        torch.cuda.empty_cache()
    for p in refusals:
        print(f"refusal check FAILED: {p}", flush=True)

    # 2. timing
    timings = []
    flusher = benchlib.Flusher()
    for dtype in dtypes:
        gemm = kernels[dtype]
        tdtype = getattr(torch, dtype)
        for m, n, kk in shapes:
            a, b, c, _ = operands(m, n, kk, tdtype, 0, seed=10_000)
            c_lib = torch.empty(m, n, device="cuda", dtype=tdtype)
            dense = {"M": m, "N": n, "K": kk, "lda": kk, "ldb": n, "ldc": n}
            variant = "aligned" if gemm.eligible("aligned", **dense) else "any"
            t = benchlib.bench(
                {
                    "ours": lambda g=gemm, v=variant, a=a, b=b, c=c: g(v, a, b, c),
                    "cublas": lambda a=a, b=b, c_lib=c_lib: torch.matmul(a, b, out=c_lib),
                },
                args.reps,
                args.warmup,
                flusher,
            )
            flop = 2.0 * m * n * kk
            ours = flop / (t["ours"]["median_ms"] * 1e-3) / 1e12
            lib = flop / (t["cublas"]["median_ms"] * 1e-3) / 1e12
            mine = [
                x["ok"]
                for x in checks
                if x["dtype"] == dtype and x["shape"] == [m, n, kk] and x["variant"] == variant
            ]
            row = {
                "shape": f"{m}x{n}x{kk}",
                "dtype": dtype,
                "kernel": gemm.variants[variant].name,
                "copies": gemm.variants[variant].spec.meta.get("copies", ""),
                "ours_tflops": round(ours, 1),
                "cublas_tflops": round(lib, 1),
                "ratio": round(ours / lib, 3),
                "ours_median_ms": round(t["ours"]["median_ms"], 4),
                "cublas_median_ms": round(t["cublas"]["median_ms"], 4),
                "samples": t["ours"]["samples"],
                "correct": (all(mine) if mine else None),
            }
            timings.append(row)
            print(
                f"time {dtype:9s} {m}x{n}x{kk}: ours {ours:7.1f} TFLOP/s ({variant}), "
                f"cuBLAS {lib:7.1f} TFLOP/s, ratio {ours / lib:.3f}",
                flush=True,
            )
            del a, b, c, c_lib
            torch.cuda.empty_cache()

    env["triton_imported"] = sys.modules.get("triton") is not None or any(
        m.startswith("triton.") for m in sys.modules
    )
    result = {
        "environment": env,
        "method": (
            f"median of {args.reps} interleaved samples after {args.warmup} warm-up rounds; "
            "each sample is one call between CUDA events after a 256 MiB L2 flush (a read); "
            "random normal inputs, row-major A (MxK) and B (KxN); cuBLAS is "
            "torch.matmul(a, b, out=c); ours is the bundle's cubin launched with "
            "cuLaunchKernel on torch's current stream"
        ),
        "kernels": compile_info,
        "checks": checks,
        "refusal_failures": refusals,
        "timings": timings,
        "all_correct": all(x["ok"] for x in checks) and not refusals,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(result, indent=2) + "\n")
    with (args.out / "results.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(timings[0]) if timings else ["shape"])
        w.writeheader()
        w.writerows(timings)
    (args.out / "results.md").write_text(markdown(result))
    print(markdown(result))
    print(f"wrote results.json, results.csv and results.md to {args.out}")
    return 0 if result["all_correct"] else 1


def _yes(flag: bool | None) -> str:
    return "not checked" if flag is None else ("yes" if flag else "NO")


def markdown(result: dict) -> str:
    env = result["environment"]
    checks = result["checks"]
    passed = sum(c["ok"] for c in checks)
    lines = [
        f"# Tile GEMM (portable cuda:90 lowering, from a bundle) vs cuBLAS on {env['gpu']}",
        "",
        f"{env['capability']}, {env['sms']} SMs, torch {env['torch']} (CUDA {env['cuda']}), "
        f"Python {env['python']}, {env['date']}.",
        f"Kernels: {env['kernel_source']} compiled for cuda:90 with {env['compiled_with']} into "
        f"`{env['bundle']}` (sha256 {env['bundle_sha256'][:16]}...), launched through the CUDA "
        f"driver by `gemm_opt.runtime`; Triton imported in this run: "
        f"{'yes' if env['triton_imported'] else 'no'}.",
        f"Method: {result['method']}.",
        f"Correctness: {passed} of {len(checks)} cases pass (float64 reference; "
        "|err| <= atol + rtol*|ref|, every element written, padding untouched); "
        f"launcher refusals of bad arguments: "
        f"{'all as expected' if not result['refusal_failures'] else 'FAILED'}.",
        "",
        "| shape (MxNxK) | dtype | ours TFLOP/s | cuBLAS TFLOP/s | ours/cuBLAS | copies "
        "| correct |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in result["timings"]:
        lines.append(
            f"| {r['shape']} | {r['dtype']} | {r['ours_tflops']:.1f} | {r['cublas_tflops']:.1f} | "
            f"{r['ratio']:.2f} | {r['copies']} | {_yes(r['correct'])} |"
        )
    lines += ["", "Correctness cases:", ""]
    lines += [
        "| kernel | shape | pad | max abs err | rel. Frobenius err | cuBLAS max abs err | ok |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in checks:
        m, n, k = c["shape"]
        err = "n/a" if c["max_abs_err"] is None else f"{c['max_abs_err']:.3g}"
        rel = "n/a" if c["rel_fro_err"] is None else f"{c['rel_fro_err']:.2e}"
        lines.append(
            f"| {c['kernel']} | {m}x{n}x{k} | {c['pad']} | {err} | {rel} | "
            f"{c['cublas_max_abs_err']:.3g} | {'yes' if c['ok'] else 'NO'} |"
        )
    lines += ["", "Loaded kernels:", ""]
    for c in result["kernels"]:
        lines.append("- " + ", ".join(f"{k}={v}" for k, v in c.items()))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
