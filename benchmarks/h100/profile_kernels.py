#!/usr/bin/env python3
"""Launch ours, the plain Triton baseline (and the warp-specialized Gluon GEMM) and cuBLAS
once each on one shape, for a profiler.

Meant to run under Nsight Compute on the GPU machine (needs only torch and
``gemm_opt.runtime``); nothing is timed here::

    ncu --clock-control none --section SpeedOfLight --section Occupancy \\
        --section WarpStateStats --csv python3 profile_kernels.py \\
        --bundle bench.bundle --ours gemm_fp16_aligned_128x128x64_w4 \\
        --triton triton_fp16_128x256x64_s3_w8_g8 \\
        --gluon-ws gluon_ws_fp16_128x256x64_s3_w8_g8_tmastore_pers --shape 4096x4096x4096
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import benchlib  # noqa: E402
from bench_gemm import Kernels  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, required=True)
    parser.add_argument("--ours", action="append", default=[], help="bundle kernel name(s)")
    parser.add_argument("--triton", action="append", default=[], help="bundle kernel name(s)")
    parser.add_argument(
        "--gluon-ws", action="append", default=[], help="bundle kernel name(s) (gluon_ws_gemm.py)"
    )
    parser.add_argument("--shape", default="4096x4096x4096")
    args = parser.parse_args(argv)
    sys.modules["triton"] = None  # type: ignore[assignment]
    import torch

    from gemm_opt import runtime

    loaded = runtime.load_bundle(args.bundle)
    (m, n, k), *_ = benchlib.parse_shapes(args.shape)
    launches = (
        (args.ours, Kernels.ours_call),
        (args.triton, Kernels.triton_call),
        (args.gluon_ws, Kernels.named_call),
    )
    for names, call in launches:
        for name in names:
            kernel = loaded[name]
            dtype = getattr(torch, kernel.spec.meta["dtype"])
            a, b = benchlib.operands(m, n, k, dtype, 0)
            c = torch.empty(m, n, device="cuda", dtype=dtype)
            # persistent configs (ours and the Gluon GEMM's): a program per SM
            kw = benchlib.launch_options(kernel, m, n) if call is not Kernels.triton_call else {}
            kernel(*call(kernel, a, b, c), **kw)
            torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    print("launched", args.ours + args.triton + args.gluon_ws, "and cuBLAS on", args.shape)
    return 0


if __name__ == "__main__":
    sys.exit(main())
