#!/usr/bin/env python3
"""Expert parallelism: ``gemm_opt.nn.MoE`` sharded over the ranks of a process group.

Run with ``torchrun`` (NCCL on GPUs; ``--device cpu`` runs gloo and the
executable model, for tiny shapes). Three parts:

1. **Equality**: every rank builds the single-device layer (all experts) and
   the expert-parallel one (its ``E / P`` experts) from one seed, and draws
   every rank's tokens, with the grouped GEMMs' tile config fixed
   (``--config``) so that both run the same kernels. The expert-parallel
   layer's output and ``dx`` on this rank's tokens are compared with the
   single-device layer's on the same tokens; its experts' gradients with the
   single-device layer's on all ranks' tokens (an expert's rows arrive in the
   same order in both: source rank, then token); the router's gradient (each
   rank's share) summed over ranks with the single-device one. Each must be
   within :data:`TOL` (:data:`ROUTER_TOL`); whether it is bitwise equal is
   reported beside (on CPUs everything but the router's sum is).
2. **Throughput** at fixed per-GPU batches (``--tokens`` per rank): the
   single-device layer on one GPU (all experts, its own tokens) against the
   expert-parallel layer on every rank; forward + backward, median of
   ``--reps`` after warm-up, the slowest rank's time. Tokens/s for 1 and P
   GPUs and the scaling (P GPUs' tokens/s over one's).
3. **Overlap** (GPU): the dispatch all-to-all beside a GateUp grouped GEMM on
   all or fewer SMs, against the two run one after the other (:func:`overlap`).

Writes ``moe_ep.json`` and ``moe_ep.md`` to ``--out`` (rank 0). Exit 0 if
every comparison holds on every rank.

    torchrun --nproc-per-node 2 benchmarks/h100/moe_ep.py --out results/moe_ep
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch import Tensor

from gemm_opt import nn as gnn
from gemm_opt.kernels import h100_configs as h100

#: Output and gradients against the one-device layer, relative to |value| + max |value|: bf16
#: roundings that differ where the fp32 router GEMM (cuBLAS) sums in another order for
#: another token count (a last-bit change in a routing weight moves a bf16 rounding).
TOL = 2.0**-6
#: Router gradient, relative to its largest element: each rank's share is rounded to the
#: parameters' dtype (bf16: 2^-9 relative) before the sum over ranks, which rounds again.
ROUTER_TOL = 2.0**-6


def _grads(layer: gnn.MoE, x: Tensor, dy: Tensor) -> dict[str, Tensor]:
    x = x.detach().requires_grad_()
    out = layer(x)
    names = ["dx", "d_router", "d_gate_up", "d_down"]
    params = [x, layer.router.weight, layer.gate_up, layer.down]
    grads = torch.autograd.grad((out.float() * dy.float()).sum(), params)
    return {"out": out, **dict(zip(names, grads, strict=True))}


def equality(
    group: Any, device: torch.device, sizes: dict[str, int], config: Any, skew: bool = False,
    dtype: torch.dtype = torch.bfloat16,
) -> list[dict[str, Any]]:  # fmt: skip
    """Part 1 on this rank: one row per compared tensor (name, bitwise, max |diff|, ok).

    ``skew`` routes every token to rank 0's experts (a constant first feature
    that their router rows weigh up and the others' down), so the other ranks
    send everything and receive no rows: their grouped GEMMs run empty and
    their experts' gradients must be exactly zero, as on one device."""
    rank, world = dist.get_rank(group), dist.get_world_size(group)
    h, f, e, k, t = (sizes[n] for n in ("hidden", "ffn", "experts", "top_k", "tokens"))
    torch.manual_seed(0)
    full = gnn.MoE(h, f, e, k, config=config, device=device, dtype=dtype)
    torch.manual_seed(0)
    ep = gnn.MoE(h, f, e, k, process_group=group, config=config, device=device, dtype=dtype)
    mine = slice(rank * ep.local_experts, (rank + 1) * ep.local_experts)
    rows = slice(rank * t, (rank + 1) * t)
    gen = torch.Generator().manual_seed(1)
    xs = torch.randn(world * t, h, generator=gen).to(device, dtype)
    dys = torch.randn(world * t, h, generator=gen).to(device, dtype)
    if skew:
        xs[:, 0] = 8.0
        with torch.no_grad():
            for layer in (full, ep):
                layer.router.weight[:, 0] = -8.0
                layer.router.weight[: ep.local_experts, 0] = 8.0
    want = _grads(full, xs, dys)
    same = _grads(full, xs[rows], dys[rows])
    got = _grads(ep, xs[rows], dys[rows])
    dist.all_reduce(got["d_router"], group=group)
    pairs = {
        "weights (same seed)": (ep.gate_up, full.gate_up[mine]),
        "out": (got["out"], same["out"]),
        "dx": (got["dx"], same["dx"]),
        "d_gate_up": (got["d_gate_up"], want["d_gate_up"][mine]),
        "d_down": (got["d_down"], want["d_down"][mine]),
        "d_router (summed over ranks)": (got["d_router"], want["d_router"]),
    }
    report = []
    for name, (a, b) in pairs.items():
        a, b = a.detach(), b.detach()
        diff = float((a.float() - b.float()).abs().max())
        bitwise = torch.equal(a, b)
        if name.startswith("d_router"):
            ok = diff <= ROUTER_TOL * float(b.float().abs().max())
        else:
            bound = TOL * (b.float().abs() + b.float().abs().max())
            ok = bool(((a.float() - b.float()).abs() <= bound).all())
        case = "all tokens to rank 0" if skew else "random routing"
        report.append({"rank": rank, "case": case, "name": name, "bitwise": bitwise,
                       "max_diff": diff, "ok": ok})  # fmt: skip
    return report


def _time(fn: Any, reps: int, device: torch.device, group: Any) -> float:
    """Median seconds of ``fn`` over ``reps`` after 5 warm-ups, the slowest rank's."""
    times = []
    for i in range(reps + 5):
        dist.barrier(group)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        if i >= 5:
            times.append(time.perf_counter() - t0)
    median = torch.tensor(sorted(times)[len(times) // 2], device=device)
    dist.all_reduce(median, op=dist.ReduceOp.MAX, group=group)
    return float(median)


def throughput(group: Any, device: torch.device, sizes: dict[str, int], reps: int,
               dtype: torch.dtype = torch.bfloat16) -> dict[str, float]:  # fmt: skip
    """Part 2: tokens/s of forward + backward on 1 GPU and on every rank."""
    world = dist.get_world_size(group)
    h, f, e, k, t = (sizes[n] for n in ("hidden", "ffn", "experts", "top_k", "tokens"))
    torch.manual_seed(0)
    full = gnn.MoE(h, f, e, k, device=device, dtype=dtype)
    torch.manual_seed(0)
    ep = gnn.MoE(h, f, e, k, process_group=group, device=device, dtype=dtype)
    x = torch.randn(t, h, device=device, dtype=dtype, requires_grad=True)
    dy = torch.randn(t, h, device=device, dtype=dtype)
    one = _time(lambda: full(x).backward(dy), reps, device, group)
    many = _time(lambda: ep(x).backward(dy), reps, device, group)
    with torch.no_grad():  # where the time goes: forwards alone, one dispatch alone
        one_fwd = _time(lambda: full(x), reps, device, group)
        ep_fwd = _time(lambda: ep(x), reps, device, group)
        send = torch.empty(t * k, h, device=device, dtype=dtype)
        recv = torch.empty_like(send)
        a2a = _time(lambda: dist.all_to_all_single(recv, send, group=group), reps, device, group)
    flops = 6 * t * k * h * 3 * f  # forward 2 x (2F + F) per row and expert; backward twice that
    return {
        "gpus": world,
        "tokens_per_gpu": t,
        "one_gpu_ms": one * 1e3,
        "ep_ms": many * 1e3,
        "one_gpu_fwd_ms": one_fwd * 1e3,
        "ep_fwd_ms": ep_fwd * 1e3,
        "all_to_all_ms": a2a * 1e3,
        "one_gpu_tokens_per_s": t / one,
        "ep_tokens_per_s": world * t / many,
        "scaling": world * one / many,
        "one_gpu_tflops": flops / one / 1e12,
        "ep_tflops_per_gpu": flops / many / 1e12,
    }


def overlap(group: Any, device: torch.device, sizes: dict[str, int], reps: int,
            fractions: tuple[float, ...] = (1.0, 0.9, 0.75),
            dtype: torch.dtype = torch.bfloat16) -> list[dict[str, float]]:  # fmt: skip
    """Part 3: does running the dispatch all-to-all beside a grouped GEMM pay?

    The GateUp GEMM of this rank's experts over ``tokens x top_k`` rows, and an
    all-to-all of as many rows of the hidden size, timed alone and together
    (the all-to-all asynchronous on NCCL's stream, the GEMM on ours), with the
    persistent GEMM on all resident programs or on a fraction of them, which
    leaves SMs to NCCL's kernels. ``overlapped`` < ``serial`` means it pays."""
    import gemm_opt

    world = dist.get_world_size(group)
    h, f, e, k, t = (sizes[n] for n in ("hidden", "ffn", "experts", "top_k", "tokens"))
    local, rows = e // world, t * k
    gen = torch.Generator(device=device).manual_seed(2)
    x = torch.randn(rows, h, device=device, generator=gen).to(dtype)
    w = torch.randn(local, h, 2 * f, device=device, generator=gen).to(dtype) * h**-0.5
    lens = torch.full((local,), rows // local, device=device, dtype=torch.int32)
    lens[-1] += rows - int(lens.sum())
    send, recv = torch.randn_like(x), torch.empty_like(x)
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    comm = _time(lambda: dist.all_to_all_single(recv, send, group=group), reps, device, group)
    out = []
    for frac in fractions:
        programs = max(1, int(sms * frac))

        def gemm(programs: int = programs) -> Any:
            return gemm_opt.grouped_matmul(x, w, lens, num_programs=programs)

        def both(gemm: Any = gemm) -> None:
            work = dist.all_to_all_single(recv, send, group=group, async_op=True)
            gemm()
            work.wait()

        alone = _time(gemm, reps, device, group)
        together = _time(both, reps, device, group)
        serial = alone + comm
        out.append({"programs": programs, "sms": sms, "gemm_ms": alone * 1e3,
                    "all_to_all_ms": comm * 1e3, "serial_ms": serial * 1e3,
                    "overlapped_ms": together * 1e3, "gain": serial / together})  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--ffn", type=int, default=4096)
    ap.add_argument("--experts", type=int, default=8)
    ap.add_argument("--top-k", type=int, default=2)
    ap.add_argument("--tokens", type=int, nargs="+", default=[4096, 8192, 16384],
                    help="tokens per rank (throughput), one row each")  # fmt: skip
    ap.add_argument("--check-tokens", type=int, default=2048, help="tokens per rank (equality)")
    ap.add_argument("--config", default="mid", choices=sorted(h100.GPU_CONFIGS),
                    help="tile config of the equality check's grouped GEMMs (GPU)")  # fmt: skip
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--skip-throughput", action="store_true", help="also skips the overlap part")
    args = ap.parse_args(argv)
    if "RANK" not in os.environ:
        print("error: run under torchrun (--nproc-per-node N)", file=sys.stderr)
        return 2
    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        print("error: no CUDA GPU", file=sys.stderr)
        return 2
    local = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device("cuda", local) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if cuda else "gloo", device_id=device if cuda else None)
    group = dist.group.WORLD
    rank, world = dist.get_rank(), dist.get_world_size()
    sizes = {"hidden": args.hidden, "ffn": args.ffn, "experts": args.experts,
             "top_k": args.top_k, "tokens": args.check_tokens}  # fmt: skip
    config = h100.GPU_CONFIGS[args.config] if cuda else None
    rows = equality(group, device, sizes, config) + equality(group, device, sizes, config, True)
    gathered: list[Any] = [None] * world
    dist.all_gather_object(gathered, rows, group=group)
    result: dict[str, Any] = {
        "world": world, "sizes": sizes, "config": args.config if cuda else None,
        "equality": [r for part in gathered for r in part],
    }  # fmt: skip
    ok = all(r["ok"] for r in result["equality"])
    if not args.skip_throughput:
        result["throughput"] = [
            throughput(group, device, {**sizes, "tokens": t}, args.reps) for t in args.tokens
        ]
        if cuda:
            result["overlap"] = overlap(group, device, {**sizes, "tokens": 8192}, args.reps)
    if rank == 0:
        name = torch.cuda.get_device_name(device) if cuda else "cpu"
        result["device"] = f"{world} x {name}"
        for r in result["equality"]:
            print(f"{'PASS' if r['ok'] else 'FAIL'} {r['case']}, rank {r['rank']} {r['name']}: "
                  f"bitwise {r['bitwise']}, max |diff| {r['max_diff']:.3e}")  # fmt: skip
        lines = [f"# expert parallelism, {result['device']}", "",
                 "| routing | rank | tensor | bitwise equal to one device | max abs diff | ok |",
                 "|---|---|---|---|---|---|"]  # fmt: skip
        lines += [f"| {r['case']} | {r['rank']} | {r['name']} | {r['bitwise']} | "
                  f"{r['max_diff']:.3e} | {'PASS' if r['ok'] else 'FAIL'} |"
                  for r in result["equality"]]  # fmt: skip
        if "throughput" in result:
            print(json.dumps(result["throughput"], indent=1))
            head = ("| tokens per GPU | GPUs | ms fwd+bwd | ms fwd | tokens/s | TFLOP/s per GPU "
                    "| scaling |")  # fmt: skip
            lines += ["", head, "|---|---|---|---|---|---|---|"]
            for tp in result["throughput"]:
                lines += [f"| {tp['tokens_per_gpu']} | 1 | {tp['one_gpu_ms']:.3f} | "
                          f"{tp['one_gpu_fwd_ms']:.3f} | {tp['one_gpu_tokens_per_s']:,.0f} | "
                          f"{tp['one_gpu_tflops']:.1f} | |",
                          f"| {tp['tokens_per_gpu']} | {world} | {tp['ep_ms']:.3f} | "
                          f"{tp['ep_fwd_ms']:.3f} | {tp['ep_tokens_per_s']:,.0f} | "
                          f"{tp['ep_tflops_per_gpu']:.1f} | {tp['scaling']:.3f}x |"]  # fmt: skip
            lines += ["", "One dispatch all-to-all alone (tokens x top-k rows): " + ", ".join(
                f"{tp['all_to_all_ms']:.3f} ms at {tp['tokens_per_gpu']}"
                for tp in result["throughput"])]  # fmt: skip
        if "overlap" in result:
            print(json.dumps(result["overlap"], indent=1))
            lines += ["", "| GEMM programs (of SMs) | GEMM ms | all-to-all ms | serial ms | "
                      "overlapped ms | gain |", "|---|---|---|---|---|---|"]  # fmt: skip
            for o in result["overlap"]:
                lines.append(f"| {o['programs']} ({o['sms']}) | {o['gemm_ms']:.3f} | "
                             f"{o['all_to_all_ms']:.3f} | {o['serial_ms']:.3f} | "
                             f"{o['overlapped_ms']:.3f} | {o['gain']:.3f}x |")  # fmt: skip
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "moe_ep.json").write_text(json.dumps(result, indent=1))
        (args.out / "moe_ep.md").write_text("\n".join(lines) + "\n")
        print(f"{'PASS' if ok else 'FAIL'}: expert-parallel layer vs one device")
    # Both ranks tear down together: a rank that leaves while its peer still writes the report
    # closes gloo's connections under it, and gloo aborts the peer.
    dist.barrier(group)
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
