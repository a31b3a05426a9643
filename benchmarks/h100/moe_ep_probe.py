#!/usr/bin/env python3
"""Where the expert-parallel MoE layer's backward time goes (diagnosis, not a benchmark).

Three parts, each printing one JSON line per case and writing ``<part>.json`` under ``--out``:

* ``rank``: one rank's expert work (E experts of R rows, hidden = ffn = 4096) on one GPU,
  forward and backward (CUDA events), beside the one-GPU layer's share.
* ``wgrad``: ``grouped_matmul_variable_k`` (the experts' weight gradient) alone on one GPU over
  group-length patterns (equal, off by 1 or 16, multinomial, skewed) and sizes.
* ``ep``: the expert-parallel layer under ``torchrun --nproc-per-node 2``: forward and backward
  wall time, then one step under torch.profiler on rank 0 (top CUDA kernels and CUDA runtime
  calls) and the caching allocator's counters, at 4096, 8192 and 16384 tokens per GPU.

    PYTHONPATH=python python3 benchmarks/h100/moe_ep_probe.py --part rank --out OUT
    PYTHONPATH=python python3 benchmarks/h100/moe_ep_probe.py --part wgrad --out OUT
    NCCL_NVLS_ENABLE=0 PYTHONPATH=python python3 -m torch.distributed.run --standalone \\
        --nproc-per-node 2 benchmarks/h100/moe_ep_probe.py --part ep --out OUT
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from gemm_opt import api
from gemm_opt import nn as gnn
from gemm_opt.nn import functional as GF

HIDDEN = FFN = 4096
BF16 = torch.bfloat16


def _events(fn: Callable[[], Any], reps: int) -> float:
    """Median milliseconds of ``fn`` between CUDA events, after 3 warm-ups."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return sorted(times)[reps // 2]


def part_rank(reps: int) -> list[dict[str, Any]]:
    dev, rows = torch.device("cuda"), []
    for experts, per in ((8, 1024), (4, 2048), (8, 2048), (4, 4096), (8, 4096), (4, 8192)):
        torch.manual_seed(0)
        s = experts * per
        x = torch.randn(s, HIDDEN, device=dev, dtype=BF16, requires_grad=True)
        wg = (torch.randn(experts, HIDDEN, 2 * FFN, device=dev, dtype=BF16) / 64).requires_grad_()
        wd = (torch.randn(experts, FFN, HIDDEN, device=dev, dtype=BF16) / 64).requires_grad_()
        lens = torch.full((experts,), per, device=dev, dtype=torch.int32)
        dy = torch.randn(s, HIDDEN, device=dev, dtype=BF16)

        def fwd(x=x, wg=wg, wd=wd, lens=lens) -> torch.Tensor:  # type: ignore[no-untyped-def]
            return GF.expert_down(GF.expert_gate_up(x, wg, lens, None), wd, lens, None)

        fwd_ms = _events(fwd, reps)
        step_ms = _events(lambda fwd=fwd, dy=dy: fwd().backward(dy), reps)
        rows.append({"experts": experts, "rows_per_expert": per, "fwd_ms": fwd_ms,
                     "bwd_ms": step_ms - fwd_ms})  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)
    return rows


def _lengths(kind: str, groups: int, total: int) -> torch.Tensor:
    lens = torch.full((groups,), total // groups)
    if kind in ("off1", "off16"):
        step = 1 if kind == "off1" else 16
        lens[0] += step
        lens[1] -= step
    elif kind == "multinomial":
        gen = torch.Generator().manual_seed(0)
        lens = torch.multinomial(torch.ones(groups), total, True, generator=gen).bincount(
            minlength=groups
        )
    elif kind == "skewed":
        w = torch.arange(1, groups + 1, dtype=torch.float64)
        lens = (w / w.sum() * total).long()
        lens[-1] += total - lens.sum()
    return lens.to(torch.int32)


def part_wgrad(reps: int) -> list[dict[str, Any]]:
    dev, rows = torch.device("cuda"), []
    for total in (8192, 16384, 32768):
        for groups in (4, 8):
            for kind in ("equal", "off16", "off1", "multinomial", "skewed"):
                lens = _lengths(kind, groups, total).to(dev)
                x = torch.randn(total, HIDDEN, device=dev, dtype=BF16)
                for n in (2 * FFN, HIDDEN):
                    y = torch.randn(total, n, device=dev, dtype=BF16)
                    ms = _events(
                        lambda x=x, y=y, lens=lens: api.grouped_matmul_variable_k(x, y, lens), reps
                    )
                    tflops = 2 * total * HIDDEN * n / ms / 1e9
                    rows.append({"rows": total, "groups": groups, "lengths": kind, "n": n,
                                 "ms": ms, "tflops": tflops})  # fmt: skip
                    print(json.dumps(rows[-1]), flush=True)
    return rows


def part_ep(reps: int) -> dict[int, dict[str, Any]]:
    import torch.distributed as dist
    from torch.profiler import ProfilerActivity, profile

    local = int(os.environ["LOCAL_RANK"])
    dev = torch.device("cuda", local)
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", device_id=dev)
    rank, out = dist.get_rank(), {}
    for tokens in (4096, 8192, 16384):
        torch.manual_seed(0)
        layer = gnn.MoE(HIDDEN, FFN, 8, 2, process_group=dist.group.WORLD, device=dev, dtype=BF16)
        x = torch.randn(tokens, HIDDEN, device=dev, dtype=BF16, requires_grad=True)
        dy = torch.randn(tokens, HIDDEN, device=dev, dtype=BF16)
        for _ in range(4):
            layer(x).backward(dy)
        fwd, bwd = [], []
        for _ in range(reps):
            dist.barrier()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            y = layer(x)
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            y.backward(dy)
            torch.cuda.synchronize()
            fwd.append(t1 - t0)
            bwd.append(time.perf_counter() - t1)
        dist.barrier()
        with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
            layer(x).backward(dy)
            torch.cuda.synchronize()
        events = prof.key_averages()
        cuda = sorted(((e.key[:90], e.device_time_total / 1e3, e.count) for e in events
                       if e.device_time_total > 0), key=lambda r: -r[1])[:14]  # fmt: skip
        runtime = sorted(((e.key[:60], e.cpu_time_total / 1e3, e.count) for e in events
                          if e.key.startswith("cuda")), key=lambda r: -r[1])[:10]  # fmt: skip
        stats = torch.cuda.memory_stats(dev)
        replay = _replay_wgrad(layer, x, dist.group.WORLD, reps)
        mid = reps // 2
        out[tokens] = {"fwd_ms": sorted(fwd)[mid] * 1e3, "bwd_ms": sorted(bwd)[mid] * 1e3,
                       "cuda_ms": cuda, "runtime_ms": runtime,
                       "alloc_retries": stats.get("num_alloc_retries"),
                       "device_frees": stats.get("num_device_free"),
                       "wgrad_replay": replay}  # fmt: skip
        print(json.dumps({"rank": rank, "tokens": tokens, **out[tokens]}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return out if rank == 0 else {}


def _replay_wgrad(layer: Any, x: torch.Tensor, group: Any, reps: int) -> dict[str, Any]:
    """The rank's expert weight gradient replayed alone (no collective in flight), on the
    local group lengths this step's routing gives and on equal lengths of the same
    total: slow on the routed lengths alone means the data, not the other rank."""
    import torch.distributed as dist

    from gemm_opt.nn import expert_parallel as EP
    from gemm_opt.nn import routing as R

    with torch.no_grad():
        routing = R.route(x, layer.router.weight, layer.top_k)
        perm = R.permutation(routing.experts, layer.num_experts)
        splits = EP.exchange_counts(perm.group_lens, group)
        lens = EP.local_permutation(splits.recv_counts, sum(splits.recv)).group_lens
    total = int(lens.sum())
    equal = torch.full_like(lens, total // lens.numel())
    equal[-1] += total - int(equal.sum())
    xs = torch.randn(total, HIDDEN, device=x.device, dtype=BF16)
    result: dict[str, Any] = {"lens": lens.tolist()}
    for n in (2 * FFN, HIDDEN):
        dy = torch.randn(total, n, device=x.device, dtype=BF16)
        for name, ls in (("routed", lens), ("equal", equal)):
            dist.barrier()
            ms = _events(lambda ls=ls, dy=dy: api.grouped_matmul_variable_k(xs, dy, ls), reps)
            result[f"{name}_n{n}_ms"] = ms
            result[f"{name}_n{n}_tflops"] = 2 * total * HIDDEN * n / ms / 1e9
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("rank", "wgrad", "ep"), required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--reps", type=int, default=9)
    args = parser.parse_args(argv)
    if args.reps < 1:
        parser.error("--reps takes a positive count")
    if not torch.cuda.is_available():
        print("error: no CUDA GPU")
        return 2
    parts = {"rank": part_rank, "wgrad": part_wgrad, "ep": part_ep}
    result = parts[args.part](args.reps)
    if result:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"{args.part}.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
