"""What a TMA descriptor made on the device costs: one Triton GEMM three ways.

The same 1024^3 fp16 GEMM body, JIT-compiled by the Triton installed on the
GPU machine, with its TMA descriptors made in the kernel
(``tl.make_tensor_descriptor``: a 128-byte tensormap per program written to
global scratch and fenced), passed from the host (``TensorDescriptor``,
encoded by the launcher), and with plain pointer loads; cuBLAS beside them.
Each is captured in a CUDA graph and timed between events after an L2 flush
(a read) and a GPU spin, interleaved, median of 200. This is what made the
lowering pass descriptors from the host (``lowering/host_tensormaps.py``).

    python3 benchmarks/h100/descriptor_probe.py   # GPU machine; writes $OUT/descriptor_probe.txt
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

SIZE = 1024
#: (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps)
CONFIGS = [(64, 128, 128, 4, 4), (64, 128, 64, 4, 4), (128, 128, 64, 4, 4), (128, 128, 64, 3, 8)]
SAMPLES = 200


@triton.jit
def _body(a_desc, b_desc, c_desc, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    npn = tl.cdiv(N, BN)
    off_m = (pid // npn) * BM
    off_n = (pid % npn) * BN
    acc = tl.zeros([BM, BN], tl.float32)
    for k in tl.range(0, K, BK, num_stages=4):
        acc = tl.dot(a_desc.load([off_m, k]), b_desc.load([k, off_n]), acc)
    c_desc.store([off_m, off_n], acc.to(tl.float16))


@triton.jit
def device_desc(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    ad = tl.make_tensor_descriptor(a, [M, K], [K, 1], [BM, BK])
    bd = tl.make_tensor_descriptor(b, [K, N], [N, 1], [BK, BN])
    cd = tl.make_tensor_descriptor(c, [M, N], [N, 1], [BM, BN])
    _body(ad, bd, cd, N, K, BM, BN, BK)


@triton.jit
def host_desc(ad, bd, cd, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    _body(ad, bd, cd, N, K, BM, BN, BK)


@triton.jit
def pointers(a, b, c, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    npn = tl.cdiv(N, BN)
    rm = (pid // npn) * BM + tl.arange(0, BM)
    rn = (pid % npn) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    ap = a + rm[:, None] * K + rk[None, :]
    bp = b + rk[:, None] * N + rn[None, :]
    acc = tl.zeros([BM, BN], tl.float32)
    for _ in tl.range(0, K, BK, num_stages=4):
        acc = tl.dot(tl.load(ap), tl.load(bp), acc)
        ap += BK
        bp += BK * N
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def _graph(fn: Callable[[], None]) -> torch.cuda.CUDAGraph:
    fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g


def main() -> None:
    triton.set_allocator(
        lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda")
    )
    out = open(os.path.join(os.environ.get("OUT", "."), "descriptor_probe.txt"), "w")
    n = SIZE
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    ref = a.float() @ b.float()
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for bm, bn, bk, stages, warps in CONFIGS:
        grid = (triton.cdiv(n, bm) * triton.cdiv(n, bn),)
        c = torch.empty(n, n, device="cuda", dtype=torch.float16)
        descs = [
            TensorDescriptor.from_tensor(t, blk)
            for t, blk in ((a, [bm, bk]), (b, [bk, bn]), (c, [bm, bn]))
        ]
        opts = {"num_warps": warps, "num_stages": stages}
        runs = {
            "device_desc": lambda: device_desc[grid](a, b, c, n, n, n, bm, bn, bk, **opts),  # noqa: B023
            "host_desc": lambda: host_desc[grid](*descs, n, n, bm, bn, bk, **opts),  # noqa: B023
            "pointers": lambda: pointers[grid](a, b, c, n, n, bm, bn, bk, **opts),  # noqa: B023
            "torch": lambda: torch.matmul(a, b, out=c),  # noqa: B023
        }
        graphs = {}
        for name, fn in runs.items():
            graphs[name] = _graph(fn)
            err = (c.float() - ref).abs().max().item()
            assert err < 0.5, (name, err)
        samples: dict[str, list[float]] = {name: [] for name in graphs}
        for _ in range(SAMPLES):
            for name, g in graphs.items():
                flush.sum()  # an L2 flush that reads
                start, end = torch.cuda.Event(True), torch.cuda.Event(True)
                torch.cuda._sleep(20000)
                start.record()
                g.replay()
                end.record()
                end.synchronize()
                samples[name].append(start.elapsed_time(end) * 1e3)
        med = {name: statistics.median(v) for name, v in samples.items()}
        line = f"{bm}x{bn}x{bk} s{stages} w{warps}: " + "  ".join(
            f"{name} {t:.2f}us" for name, t in med.items()
        )
        line += f"  host/device {med['host_desc'] / med['device_desc']:.3f}"
        line += f"  ptr/device {med['pointers'] / med['device_desc']:.3f}"
        print(line, flush=True)
        print(line, file=out, flush=True)


if __name__ == "__main__":
    main()
