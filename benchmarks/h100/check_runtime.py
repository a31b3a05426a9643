#!/usr/bin/env python3
"""Check the bundle launcher's error paths and stream handling on the local NVIDIA GPU.

The unit tests cover what can be checked without a GPU; this covers the
rest, with the GEMM bundle of ``build_bundle.py`` (needs only torch and
``gemm_opt.runtime``; ``import triton`` is blocked):

* a bundle whose argument list disagrees with the binary is refused when the
  binary is loaded (the driver reports the binary's parameter sizes);
* a kernel compiled for another GPU, a missing symbol and a corrupt binary
  raise the launcher's errors, and the process and its GPU context survive;
* a launch on a side stream is ordered on that stream and correct;
* an empty grid launches nothing.

Prints one line per check and exits 1 if any fails.

    PYTHONPATH=python python3 benchmarks/h100/check_runtime.py --bundle gemm_cuda90.bundle
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import sys
import time
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, required=True)
    args = parser.parse_args(argv)
    sys.modules["triton"] = None  # type: ignore[assignment]
    import torch

    from gemm_opt import runtime as rt

    spec = rt.read_bundle(args.bundle)["gemm_fp16_any"]
    results: list[tuple[str, bool, str]] = []

    def expect(what: str, error: type, needle: str, kernel: Any, *call: Any) -> None:
        try:
            rt.Kernel(kernel)(*call)
            torch.cuda.synchronize()
        except error as e:
            results.append((what, needle in str(e), f"{type(e).__name__}: {e}"))
            return
        except Exception as e:  # the wrong kind of error
            results.append((what, False, f"{type(e).__name__}: {e}"))
            return
        results.append((what, False, "no error"))

    def gemm_args(m: int, n: int, k: int, stream: Any = None) -> tuple:
        g = torch.Generator(device="cuda").manual_seed(m * 7 + n)
        a = torch.randn(m, k, device="cuda", generator=g).half()
        b = torch.randn(k, n, device="cuda", generator=g).half()
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
        return a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0)

    call = gemm_args(256, 256, 128)
    no_ldc = dataclasses.replace(spec, args=spec.args[:-1])
    expect(
        "argument list that disagrees with the binary",
        rt.BundleError,
        "do not match its arguments in the bundle",
        no_ldc,
        *call[:-1],
    )
    expect(
        "binary for another GPU",
        rt.DeviceError,
        "compiled for sm_80",
        dataclasses.replace(spec, sm="sm_80"),
        *call,
    )
    expect(
        "missing symbol",
        rt.CudaError,
        "CUDA_ERROR_NOT_FOUND",
        dataclasses.replace(spec, symbol="no_such_kernel"),
        *call,
    )
    # After those errors the context still works: a launch on a side stream.
    kernel = rt.Kernel(spec)
    side = torch.cuda.Stream()
    a, b, c, *rest = gemm_args(300, 200, 100)
    side.wait_stream(torch.cuda.current_stream())
    kernel(a, b, c, *rest, stream=side)
    done = torch.cuda.Event()
    done.record(side)
    torch.cuda.current_stream().wait_event(done)
    ref = a.double() @ b.double()
    err = float((c.double() - ref).abs().max())
    results.append(("launch on a side stream", err < 0.05, f"max abs err {err:.3g}"))

    a, b, c, *rest = gemm_args(128, 128, 64)
    c0 = c.clone()
    kernel(a, b, c, 0, *rest[1:])  # M = 0: the grid is empty
    torch.cuda.synchronize()
    same = bool(torch.equal(c.isnan(), c0.isnan()))
    results.append(("empty grid launches nothing", same, "C untouched" if same else "C written"))
    # Host cost of a launch (argument checks, packing, cuLaunchKernel) on a tiny problem.
    a, b, c, *rest = gemm_args(16, 16, 16)
    for _ in range(10):
        kernel(a, b, c, *rest)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(2000):
        kernel(a, b, c, *rest)
    host_us = (time.perf_counter() - start) / 2000 * 1e6
    torch.cuda.synchronize()
    results.append(("host time per launch", True, f"{host_us:.1f} us (2000 launches, 16x16x16)"))
    # Last: a driver that mishandled a corrupt image would take the process down.
    corrupt = spec.binary[:64] + bytes(len(spec.binary) - 64)
    expect(
        "corrupt binary",
        rt.CudaError,
        "cuModuleLoadData failed",
        dataclasses.replace(spec, binary=corrupt),
        *call,
    )

    results.append(("triton stayed unimported", sys.modules.get("triton") is None, ""))

    for what, ok, detail in results:
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {detail}")
    print(f"bundle sha256 {hashlib.sha256(args.bundle.read_bytes()).hexdigest()[:16]}...")
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
