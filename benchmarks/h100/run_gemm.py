#!/usr/bin/env python3
"""Run the lowered tile GEMM (cuda:90 TTGIR) on the local NVIDIA GPU, next to cuBLAS.

Needs only triton and torch: the kernels are the TTGIR files in ``kernels/``
that ``lower_kernels.py`` wrote, described by ``kernels/kernels.json``. Each
is compiled by the local Triton for the local GPU and launched through the
compiled kernel (``kernel[grid](*args)``; ``--launcher driver`` loads the
cubin through the CUDA driver instead, and ``auto`` falls back to that when
Triton cannot build its launcher).

1. Correctness: ragged and padded shapes, every variant that may run them,
   against a float64 reference (``torch.matmul`` on doubles); the error
   allowed is a few units of the output type's last place. Elements outside
   C (padding of a larger buffer) must stay untouched.
2. Timing: ours and ``torch.matmul`` (cuBLAS) interleaved in the same run,
   each sample one call between CUDA events after an L2 flush, median of
   ``--reps`` after warm-up. The ``aligned`` variant (16-byte ``cp.async``)
   runs when N, K and the strides are multiples of 16, else the ``any``
   variant (copies through registers).

Writes ``results.json`` and ``results.md`` to ``--out`` (default:
``./results``). Without a CUDA GPU it stops with an error; only
``--compile-only`` (compile every kernel for sm_90, launch nothing) runs
without one.

    python3 run_gemm.py --out /tmp/results
    python3 run_gemm.py --compile-only
"""

from __future__ import annotations

import argparse
import ctypes
import json
import platform
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "kernels"

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
DTYPES = ("float16", "bfloat16")
#: Unit roundoff of the output types.
UNIT_ROUNDOFF = {"float16": 2.0**-11, "bfloat16": 2.0**-8}


def fail(message: str) -> None:
    print(f"run_gemm.py: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


# ---- launching ---------------------------------------------------------------------


class DriverLauncher:
    """Launch a compiled kernel's cubin through the CUDA driver (ctypes).

    The kernel's parameters are its signature, then the trailing pointers
    Triton appends (scratch buffers, unused here: this kernel needs none).
    """

    def __init__(self, compiled, entry: dict) -> None:
        import torch

        torch.cuda.current_stream()  # the primary context is current from here on
        name = ["libcuda.so.1", "libcuda.so"]
        self.cuda = None
        for lib in name:
            try:
                self.cuda = ctypes.CDLL(lib)
                break
            except OSError:
                continue
        if self.cuda is None:
            fail("cannot load libcuda")
        c = self.cuda
        c.cuLaunchKernel.argtypes = (
            [ctypes.c_void_p]
            + [ctypes.c_uint] * 7
            + [
                ctypes.c_void_p,
                ctypes.POINTER(ctypes.c_void_p),
                ctypes.POINTER(ctypes.c_void_p),
            ]
        )
        meta = compiled.metadata
        for field in ("global_scratch_size", "profile_scratch_size"):
            if getattr(meta, field, 0):
                fail(
                    f"{entry['file']}: needs {field} = {getattr(meta, field)}; "
                    "use the Triton launcher"
                )
        self.module = ctypes.c_void_p()
        cubin = compiled.asm["cubin"]
        self._check(c.cuModuleLoadData(ctypes.byref(self.module), ctypes.c_char_p(cubin)), "load")
        self.function = ctypes.c_void_p()
        self._check(
            c.cuModuleGetFunction(
                ctypes.byref(self.function), self.module, compiled.metadata.name.encode()
            ),
            "get function",
        )
        self.shared = int(meta.shared)
        if self.shared > 48 * 1024:
            self._check(c.cuFuncSetAttribute(self.function, 8, self.shared), "set shared size")
        self.threads = int(meta.num_warps) * 32
        ptx = compiled.asm["ptx"]
        entry_params = re.search(r"\.entry\s+\w+\s*\((.*?)\)", ptx, re.S)
        total = entry_params.group(1).count(".param") if entry_params else len(entry["signature"])
        self.extra = total - len(entry["signature"])
        self.types = [a["type"] for a in entry["signature"]]

    def attribute(self, code: int) -> int:
        value = ctypes.c_int()
        self._check(self.cuda.cuFuncGetAttribute(ctypes.byref(value), code, self.function), "attr")
        return value.value

    def _check(self, status: int, what: str) -> None:
        if status != 0:
            fail(f"CUDA driver call '{what}' failed with status {status}")

    def __call__(self, grid, args) -> None:
        import torch

        keep = []
        for ty, a in zip(self.types, args, strict=True):
            if ty.startswith("*"):
                keep.append(ctypes.c_uint64(a.data_ptr()))
            elif ty == "i32":
                keep.append(ctypes.c_int32(a))
            else:
                keep.append(ctypes.c_int64(a))
        keep += [ctypes.c_uint64(0)] * self.extra
        params = (ctypes.c_void_p * len(keep))(
            *[ctypes.cast(ctypes.pointer(p), ctypes.c_void_p) for p in keep]
        )
        stream = torch.cuda.current_stream().cuda_stream
        self._check(
            self.cuda.cuLaunchKernel(
                self.function,
                grid[0],
                grid[1],
                grid[2],
                self.threads,
                1,
                1,
                self.shared,
                ctypes.c_void_p(stream),
                params,
                None,
            ),
            "launch",
        )


class Kernel:
    """One lowered variant, compiled for the local GPU."""

    def __init__(self, entry: dict, directory: Path, launcher: str, workdir: Path, target) -> None:
        import triton

        self.entry = entry
        self.block = entry["block"]
        self.aligned_args = set(entry["multiple_of_16"])
        path = directory / entry["file"]
        text = path.read_text()
        local = f"cuda:{target.arch}"
        if f'ttg.target = "{local}"' not in text:
            # mma.sync and cp.async run on every GPU since sm_80: retarget.
            text = re.sub(r'ttg\.target = "cuda:\d+"', f'ttg.target = "{local}"', text)
            path = workdir / entry["file"]
            path.write_text(text)
        start = time.perf_counter()
        self.compiled = triton.compile(str(path), target=target)
        self.compile_seconds = time.perf_counter() - start
        self.launcher = launcher
        self._driver = None
        if launcher == "none":
            return
        if launcher in ("triton", "auto"):
            try:
                self.compiled._init_handles()
                self.launcher = "triton"
            except Exception as e:  # no C compiler or Python headers for the launcher
                if launcher == "triton":
                    raise
                print(
                    f"note: Triton launcher unavailable ({type(e).__name__}: {e}); "
                    "using the CUDA driver directly"
                )
                self.launcher = "driver"
        if self.launcher == "driver":
            self._driver = DriverLauncher(self.compiled, entry)

    def resources(self) -> dict:
        meta = self.compiled.metadata
        out = {"shared_bytes": int(meta.shared), "num_warps": int(meta.num_warps)}
        if self._driver is not None:
            out["registers"] = self._driver.attribute(4)  # CU_FUNC_ATTRIBUTE_NUM_REGS
            out["local_bytes"] = self._driver.attribute(3)
        else:
            out["registers"] = getattr(self.compiled, "n_regs", None)
            out["spills"] = getattr(self.compiled, "n_spills", None)
        ptx = self.compiled.asm.get("ptx", "")
        out["mma_sync_in_ptx"] = ptx.count("mma.sync")
        out["cp_async_in_ptx"] = len(re.findall(r"cp\.async\.c[ag]\.shared", ptx))
        return out

    def eligible(self, m: int, n: int, k: int, lda: int, ldb: int, ldc: int) -> bool:
        values = {"M": m, "N": n, "K": k, "lda": lda, "ldb": ldb, "ldc": ldc}
        return all(values[a] % 16 == 0 for a in self.aligned_args)

    def __call__(self, a, b, c) -> None:
        m, k = a.shape
        n = b.shape[1]
        grid = (cdiv(m, self.block["M"]), cdiv(n, self.block["N"]), 1)
        args = (a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0))
        if self._driver is not None:
            self._driver(grid, args)
        else:
            self.compiled[grid](*args)


# ---- correctness -------------------------------------------------------------------


def operands(m, n, k, dtype, pad, seed=0):
    """A (m x k), B (k x n) random normal; C (m x n) NaN-filled, padded by ``pad``."""
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    a_full = torch.randn(m, k + pad, device="cuda", dtype=torch.float32, generator=g).to(dtype)
    b_full = torch.randn(k, n + pad, device="cuda", dtype=torch.float32, generator=g).to(dtype)
    c_full = torch.full((m, n + pad), float("nan"), device="cuda", dtype=dtype)
    return a_full[:, :k], b_full[:, :n], c_full[:, :n], c_full


def check(kernel: Kernel, m, n, k, dtype_name, pad) -> dict:
    import torch

    dtype = getattr(torch, dtype_name)
    a, b, c, c_full = operands(m, n, k, dtype, pad)
    kernel(a, b, c)
    torch.cuda.synchronize()
    ref = torch.matmul(a.double(), b.double())
    lib = torch.matmul(a, b).double()
    u = UNIT_ROUNDOFF[dtype_name]
    rtol, atol = 4 * u, 1e-2
    err = (c.double() - ref).abs()
    bound = atol + rtol * ref.abs()
    lib_err = (lib - ref).abs()
    pad_ok = bool(torch.isnan(c_full[:, n:]).all()) if pad else True
    finite = bool(torch.isfinite(c).all())
    ok = finite and pad_ok and bool((err <= bound).all())
    scale = max(float(ref.abs().max()), 1e-30)
    return {
        "kernel": kernel.entry["file"],
        "shape": [m, n, k],
        "pad": pad,
        "dtype": dtype_name,
        "ok": ok,
        "max_abs_err": float(err.max()) if finite else float("inf"),
        "max_err_rel_to_max": float(err.max()) / scale if finite else float("inf"),
        "cublas_max_abs_err": float(lib_err.max()),
        "rtol": rtol,
        "atol": atol,
        "padding_untouched": pad_ok,
    }


# ---- timing ------------------------------------------------------------------------


def bench(fns: dict, reps: int, warmup: int) -> dict:
    """Interleaved samples: each is one call between CUDA events, after an L2 flush."""
    import torch

    flush = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")
    for _ in range(warmup):
        for f in fns.values():
            f()
    torch.cuda.synchronize()
    events: dict[str, list] = {name: [] for name in fns}
    names = list(fns)
    for r in range(reps):
        for name in names if r % 2 == 0 else names[::-1]:
            flush.zero_()
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
            fns[name]()
            e.record()
            events[name].append((s, e))
    torch.cuda.synchronize()
    out = {}
    for name, evs in events.items():
        ms = [s.elapsed_time(e) for s, e in evs]
        out[name] = {"median_ms": statistics.median(ms), "min_ms": min(ms), "samples": len(ms)}
    return out


# ---- main --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path.cwd() / "results")
    parser.add_argument("--kernels", type=Path, default=KERNELS)
    parser.add_argument("--reps", type=int, default=50, help="timed samples per function")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--launcher", choices=("auto", "triton", "driver"), default="auto")
    parser.add_argument("--dtypes", default=",".join(DTYPES))
    parser.add_argument("--shapes", default="", help="MxNxK,... to time instead of the default set")
    parser.add_argument(
        "--compile-only",
        action="store_true",
        help="compile every kernel for sm_90 with the local Triton and stop (no GPU needed)",
    )
    args = parser.parse_args(argv)
    if args.reps < 20:
        fail("--reps must be at least 20")
    manifest = json.loads((args.kernels / "kernels.json").read_text())

    if args.compile_only:
        import triton
        from triton.backends.compiler import GPUTarget

        workdir = Path(tempfile.mkdtemp(prefix="gemm_h100_"))
        for entry in manifest["kernels"]:
            k = Kernel(entry, args.kernels, "none", workdir, GPUTarget("cuda", 90, 32))
            info = {
                "kernel": entry["file"],
                "triton": triton.__version__,
                "compile_seconds": round(k.compile_seconds, 2),
                **k.resources(),
            }
            print("compiled", json.dumps(info))
        return 0

    try:
        import torch
        import triton
    except ImportError as e:
        fail(f"needs torch and triton: {e}")
    if not torch.cuda.is_available():
        fail("no CUDA GPU visible to torch: this script only runs kernels on a GPU (no dry mode)")
    major, minor = torch.cuda.get_device_capability()
    if major < 8:
        fail(f"needs sm_80 or newer (mma.sync m16n8k16, cp.async); this GPU is sm_{major}{minor}")
    dtypes = [d for d in args.dtypes.split(",") if d]
    shapes = BENCH_SHAPES
    if args.shapes:
        shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]

    env = {
        "gpu": torch.cuda.get_device_name(),
        "capability": f"sm_{major}{minor}",
        "sms": torch.cuda.get_device_properties(0).multi_processor_count,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "triton": triton.__version__,
        "python": platform.python_version(),
        "kernel_source": manifest["source"],
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    print(json.dumps(env))

    workdir = Path(tempfile.mkdtemp(prefix="gemm_h100_"))
    target = triton.runtime.driver.active.get_current_target()
    kernels: dict[tuple[str, str], Kernel] = {}
    compile_info = []
    for entry in manifest["kernels"]:
        if entry["dtype"] not in dtypes:
            continue
        k = Kernel(entry, args.kernels, args.launcher, workdir, target)
        kernels[(entry["dtype"], entry["variant"])] = k
        info = {
            "kernel": entry["file"],
            "launcher": k.launcher,
            "compile_seconds": round(k.compile_seconds, 2),
            **k.resources(),
        }
        compile_info.append(info)
        print("compiled", json.dumps(info))

    # 1. correctness
    checks = []
    for dtype in dtypes:
        shapes_to_check = [*CHECK_SHAPES, *((m, n, kk, 0) for m, n, kk in shapes)]
        for m, n, kk, pad in shapes_to_check:
            for variant in ("aligned", "any"):
                kern = kernels.get((dtype, variant))
                if kern is None or not kern.eligible(m, n, kk, kk + pad, n + pad, n + pad):
                    continue
                if variant == "any" and m * n * kk > 4096**3:
                    continue  # the register-copy variant is slow; it is checked on smaller shapes
                r = check(kern, m, n, kk, dtype, pad)
                checks.append(r)
                status = "ok  " if r["ok"] else "FAIL"
                print(
                    f"check {status} {dtype:9s} {variant:7s} {m}x{n}x{kk} pad={pad} "
                    f"max_abs_err={r['max_abs_err']:.3g} (cuBLAS {r['cublas_max_abs_err']:.3g})"
                )
        torch.cuda.empty_cache()

    # 2. timing
    timings = []
    for dtype in dtypes:
        tdtype = getattr(torch, dtype)
        for m, n, kk in shapes:
            a, b, c, _ = operands(m, n, kk, tdtype, 0, seed=1)
            c_lib = torch.empty(m, n, device="cuda", dtype=tdtype)
            variant = (
                "aligned" if kernels[(dtype, "aligned")].eligible(m, n, kk, kk, n, n) else "any"
            )
            kern = kernels[(dtype, variant)]
            t = bench(
                {
                    "ours": lambda kern=kern, a=a, b=b, c=c: kern(a, b, c),
                    "cublas": lambda a=a, b=b, c_lib=c_lib: torch.matmul(a, b, out=c_lib),
                },
                args.reps,
                args.warmup,
            )
            flop = 2.0 * m * n * kk
            ours = flop / (t["ours"]["median_ms"] * 1e-3) / 1e12
            lib = flop / (t["cublas"]["median_ms"] * 1e-3) / 1e12
            mine = [
                x["ok"]
                for x in checks
                if x["dtype"] == dtype
                and x["shape"] == [m, n, kk]
                and x["kernel"] == kern.entry["file"]
            ]
            ok = all(mine) if mine else None
            row = {
                "shape": f"{m}x{n}x{kk}",
                "dtype": dtype,
                "variant": variant,
                "ours_tflops": round(ours, 1),
                "cublas_tflops": round(lib, 1),
                "ratio": round(ours / lib, 3),
                "ours_ms": t["ours"],
                "cublas_ms": t["cublas"],
                "correct": ok,
            }
            timings.append(row)
            print(
                f"time {dtype:9s} {m}x{n}x{kk}: ours {ours:7.1f} TFLOP/s ({variant}), "
                f"cuBLAS {lib:7.1f} TFLOP/s, ratio {ours / lib:.3f}"
            )
            del a, b, c, c_lib
            torch.cuda.empty_cache()

    args.out.mkdir(parents=True, exist_ok=True)
    result = {
        "environment": env,
        "method": (
            f"median of {args.reps} interleaved samples after {args.warmup} warm-up rounds; "
            "each sample is one call between CUDA events after a 256 MiB L2 flush; "
            "random normal inputs, row-major A (MxK) and B (KxN); cuBLAS is "
            "torch.matmul(a, b, out=c)"
        ),
        "compile": compile_info,
        "checks": checks,
        "timings": timings,
        "all_correct": all(x["ok"] for x in checks),
    }
    (args.out / "results.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "results.md").write_text(markdown(result))
    print(markdown(result))
    print(f"wrote {args.out / 'results.json'} and {args.out / 'results.md'}")
    return 0 if result["all_correct"] else 1


def _yes(flag: bool | None) -> str:
    return "not checked" if flag is None else ("yes" if flag else "NO")


def markdown(result: dict) -> str:
    env = result["environment"]
    lines = [
        f"# Tile GEMM (portable cuda:90 lowering) vs cuBLAS on {env['gpu']}",
        "",
        f"{env['capability']}, {env['sms']} SMs, torch {env['torch']} (CUDA {env['cuda']}), "
        f"triton {env['triton']}, Python {env['python']}, {env['date']}.",
        f"Kernel: {env['kernel_source']} lowered for cuda:90 (mma.sync m16n8k16, 128x128x64 "
        "blocks, 8 warps, 2 shared buffers; warp_used_hint dropped).",
        f"Method: {result['method']}.",
        "",
        "| shape (MxNxK) | dtype | ours TFLOP/s | cuBLAS TFLOP/s | ours/cuBLAS | copies "
        "| correct |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in result["timings"]:
        copies = "cp.async" if r["variant"] == "aligned" else "registers"
        lines.append(
            f"| {r['shape']} | {r['dtype']} | {r['ours_tflops']:.1f} | {r['cublas_tflops']:.1f} | "
            f"{r['ratio']:.2f} | {copies} | {_yes(r['correct'])} |"
        )
    lines += ["", "Correctness (float64 reference; |err| <= atol + rtol*|ref|):", ""]
    lines += [
        "| kernel | shape | pad | max abs err | cuBLAS max abs err | ok |",
        "|---|---|---|---|---|---|",
    ]
    for c in result["checks"]:
        m, n, k = c["shape"]
        lines.append(
            f"| {c['kernel']} | {m}x{n}x{k} | {c['pad']} | {c['max_abs_err']:.3g} | "
            f"{c['cublas_max_abs_err']:.3g} | {'yes' if c['ok'] else 'NO'} |"
        )
    lines += ["", "Compiled kernels:", ""]
    for c in result["compile"]:
        lines.append("- " + ", ".join(f"{k}={v}" for k, v in c.items()))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
