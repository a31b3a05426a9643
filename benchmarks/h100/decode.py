#!/usr/bin/env python3
"""Decode and small GEMMs at the memory limit on the local NVIDIA GPU: ours, torch and
the HBM roofline, side by side in one run.

Dense: ``C = A @ W^T`` with A (M, K) row-major (the tokens) and W (N, K)
row-major (an ``nn.Linear`` weight, passed as ``w.t()``), M in
:data:`ROWS` over each (N, K) of :data:`WEIGHTS`, plus :data:`EXTRA` (512x512x8192,
128x7168x2048). Per problem:

* ``torch``: ``torch.matmul`` (cuBLAS);
* ``auto``: ``gemm_opt.matmul(schedule="auto")``, what the API runs;
* ``prior``: what ``auto`` picks when swap-AB is not a candidate (the schedules
  before it), launched through the API with that schedule, config and split;
* ``swap <config> dp`` / ``S=<s>``: each swap-AB kernel of
  :data:`~gemm_opt.kernels.h100_configs.SWAP_AB_CONFIGS` where ``auto`` takes
  swap-AB for the rows: data-parallel, and split-K with ``S`` slices per tile
  where the bundle holds it, launched directly (its prepared launch: the
  kernel's own time).

Each is checked once against float64 (``benchlib.check_output``), split-K
kernels also for bitwise equality over :data:`REPEATS` runs, then timed two
ways: ``graph`` (20 calls in one CUDA graph, median of 20 replays:
``benchlib.graph_us``; warm L2, which holds weights up to ~50 MB) and
``flushed`` (one call between CUDA events after a 256 MB L2 flush:
``benchlib.bench``). The roofline is A, B and C once each over the peak HBM
bandwidth, measured in the same run by a device-to-device copy; its fraction
is taken of the flushed time (the graph time of a weight that stays in L2 can
beat HBM).

Backward (``--passes``, default all): the two GEMMs of ``matmul``'s backward
for ``y = A @ W^T`` at M in :data:`BACKWARD_ROWS` over :data:`WEIGHTS`, on the
views the backward passes (:func:`backward_operands`): dgrad ``dA = dY @ W``
(M x K from M x N by N x K: few rows, swap-AB or split-K territory) and wgrad
``dB = A^T @ dY`` (K x N from K x M by M x N: K = the token count), each
``torch`` (``torch.matmul`` of the same views), ``auto`` (what the backward of a
``schedule="auto"`` forward runs) and ``prior`` (the default data-parallel
schedule: the backward of a forward with a named schedule), checked against
float64 (split-K picks bit for bit), and once per problem through autograd:
the gradients of ``gemm_opt.matmul(A, W.t(), schedule="auto")`` must equal the
timed outputs bit for bit (the timed calls are the backward's).

MoE decode: G experts (:data:`MOE_GROUPS`) with W (G, K, N), each expert
receiving 0 to 16 tokens (seeded), ``gemm_opt.grouped_matmul(schedule="auto")``
with the lengths on the device, and ``prior`` (``auto`` without the tiny-group
16-row tiles), against ``torch._grouped_mm``.

    PYTHONPATH=python python3 benchmarks/h100/decode.py --bundles DIR [--fp16] [--out DIR] \
        [--passes fwd,dgrad,wgrad]

``--out`` writes ``decode.txt``, ``decode.json`` and (with matplotlib, else
later by ``--plot DIR``) ``decode.png``, the roofline fraction over M.
``--list-kernels`` prints the kernel names the run launches (of ``--passes``,
for ``build_bundles --only``) and needs no GPU; ``--profile MxNxK`` launches each
variant once, untimed, under a profiler::

    ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
        --csv python3 benchmarks/h100/decode.py --bundles DIR --profile 16x4096x7168

Exit 2 without a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib
from benchlib import graph_us

from gemm_opt.core import schedules as S
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.runtime import autotune

#: Rows of A (tokens of a decode step).
ROWS = (1, 2, 4, 8, 16, 32, 64, 128)
#: (N, K) of the weights.
WEIGHTS = ((4096, 4096), (4096, 7168), (7168, 2048), (14336, 4096), (4096, 14336))
#: Rows of the backward problems (dgrad and wgrad of each of :data:`WEIGHTS`).
BACKWARD_ROWS = (1, 4, 16, 32, 64, 128)
#: What a run measures: the forward, and the backward's two GEMMs.
PASSES = ("fwd", "dgrad", "wgrad")
#: Further (M, N, K).
EXTRA = ((512, 512, 8192), (128, 7168, 2048))
#: MoE decode: experts, and (N, K) of each expert's weight.
MOE_GROUPS = (8, 64, 256)
MOE_NK = (1536, 2048)
#: Tokens one expert receives: uniform in 0..MOE_MAX_TOKENS.
MOE_MAX_TOKENS = 16
#: Runs of a split-K kernel compared bit for bit.
REPEATS = 3
#: The SMs whose kernels ``--list-kernels`` names (the H100's and H200's).
LIST_SMS = 132
#: Bytes copied to measure the HBM bandwidth (read and written once each).
COPY_BYTES = 1 << 30


@dataclass(frozen=True)
class Problem:
    m: int
    n: int
    k: int

    @property
    def name(self) -> str:
        return f"{self.m}x{self.n}x{self.k}"

    def bytes(self, elem: int = 2) -> int:
        return elem * (self.m * self.k + self.k * self.n + self.m * self.n)


def moe_lens(groups: int) -> list[int]:
    """Tokens per expert of the MoE problem of ``groups`` experts (seeded)."""
    rng = random.Random(groups)
    return [rng.randint(0, MOE_MAX_TOKENS) for _ in range(groups)]


def problems() -> list[Problem]:
    dense = [Problem(m, n, k) for n, k in WEIGHTS for m in ROWS]
    return list(dict.fromkeys(dense + [Problem(*x) for x in EXTRA]))  # 128x7168x2048 once


def backward_problems() -> list[Problem]:
    """The forward problems whose dgrad and wgrad are measured."""
    return [Problem(m, n, k) for n, k in WEIGHTS for m in BACKWARD_ROWS]


def backward_operands(a: Any, w: Any, dy: Any) -> dict[str, tuple[Any, Any]]:
    """dgrad's and wgrad's ``(A, B)`` as ``matmul``'s backward passes them for
    ``y = a @ w.t()``: ``dA = dY @ w`` (``b.mT`` of ``b = w.t()``: W (N, K)
    row-major, a view) and ``dB = a.mT @ dY`` (a read transposed, a few tokens
    off the alignment padded with zero rows: ``torch_ops._wgrad_operands``; dB is
    (K, N), which autograd hands to ``w`` transposed)."""
    from gemm_opt import torch_ops

    return {"dgrad": (dy, w), "wgrad": torch_ops._wgrad_operands(a, dy)}


def backward_problem(p: Problem, pass_: str) -> Problem:
    """The GEMM of ``pass_`` of forward ``p`` (M x N x K): dgrad M x K x N, wgrad K x N x M."""
    return {"dgrad": Problem(p.m, p.k, p.n), "wgrad": Problem(p.k, p.n, p.m)}[pass_]


# ---- what runs -----------------------------------------------------------------------------


def prior_choice(p: Problem, dtype: str, sms: int, runs: Any = None) -> autotune.Choice:
    """``auto``'s pick without swap-AB (only among kernels ``runs`` accepts, if given)."""

    def ok(kind: str, red: str | None, cfg: S.GemmConfig, swap_ab: bool = False) -> bool:
        return not swap_ab and (runs is None or runs(kind, red, cfg, swap_ab))

    avail = autotune.Available(("no swap-AB", runs is None), ok)
    return autotune.resolve(
        autotune.Problem("dense", p.m, p.n, p.k, 1), dtype, sms=sms, available=avail
    )


def moe_prior_choice(total: int, groups: int, dtype: str, sms: int, runs: Any = None):
    """``auto``'s pick for the MoE problem without the tiny-group tiles (only among
    kernels ``runs`` accepts, if given)."""
    tiny = set(h100.TINY_GROUP_CONFIGS.values())

    def ok(kind: str, red: str | None, cfg: S.GemmConfig, swap_ab: bool = False) -> bool:
        return cfg not in tiny and (runs is None or runs(kind, red, cfg, swap_ab))

    avail = autotune.Available(("no tiny groups", runs is None), ok)
    problem = autotune.Problem("fwd", total, *MOE_NK, groups)
    return autotune.resolve(problem, dtype, sms=sms, available=avail)


#: Split-K slices the benchmark times swap-AB with (``auto`` runs it data-parallel).
SWAP_SPLITS = (1, 2, 4)


def swap_variants(p: Problem) -> list[tuple[str, S.GemmConfig, str, int]]:
    """(config name, config, kind, S) of the swap-AB kernels tried on ``p``: each
    config, if ``auto`` would consider swap-AB for its rows, data-parallel and
    split-K with :data:`SWAP_SPLITS` slices (``S`` = 1: the data-parallel tiles
    plus the counters' memset) where each slice keeps at least 2 K iterations."""
    if not autotune.swap_ab_fits(p.m):
        return []
    out = []
    for name, cfg in h100.SWAP_AB_CONFIGS.items():
        ipt = S.iters_per_tile(p.k, cfg.block_k)
        out.append((name, cfg, "data-parallel", 1))
        out += [(name, cfg, "split-k", s) for s in SWAP_SPLITS if s == 1 or ipt >= 2 * s]
    return out


def swap_spec(cfg: S.GemmConfig, dtype: str, kind: str = "split-k") -> S.KernelSpec:
    """Swap-AB on ``A @ w.t()``: the kernel's A is W (N, K) row-major, its B is A
    (M, K) read transposed, C stored through its transpose."""
    return S.KernelSpec(
        kind, None, "none", dtype, cfg.block_m, cfg.block_n, cfg.block_k, cfg.group_m,
        cfg.num_warps, cfg.num_stages, trans_b=True, trans_c=True,
    )  # fmt: skip


def backward_specs(
    p: Problem, passes: tuple[str, ...], dtype: str, wgrad_configs: bool = False
) -> list[S.KernelSpec]:
    """The kernels :func:`backward_calls` launches for forward ``p``: the forward of
    ``auto`` (the autograd check), and ``auto``'s and ``prior``'s on each backward GEMM
    of ``passes``. They come from the plans of the same views (:func:`backward_operands`,
    whose layouts the plan reads: a one-row A read transposed is row-major too) of CPU
    tensors, never written: ``auto`` resolves as on cuda:90 with :data:`LIST_SMS` SMs,
    ``prior`` takes the GPU's configuration of the shape's class; with
    ``wgrad_configs`` wgrad's data-parallel kernel on each GPU configuration too."""
    import torch

    from gemm_opt.runtime import plan as plans

    dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    a, w, dy = (torch.empty(shape, dtype=dt) for shape in ((p.m, p.k), (p.n, p.k), (p.m, p.n)))
    kw: dict[str, Any] = dict(reduction=None, num_programs=None, num_xcds=1, out=None, seed=None)
    specs = [plans.plan("matmul", a, w.t(), schedule="auto", config=None, **kw).spec]
    for pass_ in (x for x in ("dgrad", "wgrad") if x in passes):
        x, y = backward_operands(a, w, dy)[pass_]
        q = backward_problem(p, pass_)
        cfg = h100.GPU_CONFIGS[h100.gpu_config_name(q.m, q.n, sms=LIST_SMS)]
        specs.append(plans.plan("matmul", x, y, schedule="auto", config=None, **kw).spec)
        specs.append(plans.plan("matmul", x, y, schedule="data-parallel", config=cfg, **kw).spec)
        for cfg in h100.GPU_CONFIGS.values() if wgrad_configs and pass_ == "wgrad" else ():
            specs.append(
                plans.plan("matmul", x, y, schedule="data-parallel", config=cfg, **kw).spec
            )
    return specs


def kernel_names(
    dtype: str, sms: int = LIST_SMS, passes: tuple[str, ...] = PASSES, wgrad_configs: bool = False
) -> list[str]:
    """Every kernel the run of ``passes`` may launch (plain kernels and TMA twins):
    ``auto``'s and ``prior``'s picks and the swap variants for the dense problems,
    ``auto``'s grouped kernel for the MoE problems (with the forward), and
    :func:`backward_specs` for dgrad and wgrad."""
    from dataclasses import replace

    from gemm_opt.runtime import plan as plans

    specs: set[S.KernelSpec] = set()
    if "dgrad" in passes or "wgrad" in passes:
        for p in backward_problems():
            specs.update(backward_specs(p, passes, dtype, wgrad_configs))
    for p in problems() if "fwd" in passes else ():
        for choice in (
            autotune.resolve(autotune.Problem("dense", p.m, p.n, p.k, 1), dtype, sms=sms),
            prior_choice(p, dtype, sms),
        ):
            make = plans._swapped_spec if choice.swap_ab else plans._spec
            # the call's B is w.t(): stored (N, K), trans_b
            specs.add(make(choice.schedule, choice.reduction, "none", dtype, choice.config, 1,
                           True, False))  # fmt: skip
        for _, cfg, kind, _ in swap_variants(p):
            if kind == "data-parallel":  # split-K swap-AB is timed where bundled
                specs.add(swap_spec(cfg, dtype, kind))
    for g in MOE_GROUPS if "fwd" in passes else ():
        total = sum(moe_lens(g))
        ch = autotune.resolve(autotune.Problem("fwd", total, *MOE_NK, g), dtype, sms=sms)
        specs.add(plans._spec(ch.schedule, ch.reduction, "m", dtype, ch.config, 1))
        ch = moe_prior_choice(total, g, dtype, sms)
        specs.add(plans._spec(ch.schedule, ch.reduction, "m", dtype, ch.config, 1))
    out = set()
    for s in specs:
        out.add(s.name)
        if S.tma_copies(s.num_warps, s.block_m):
            out.add(replace(s, aligned=True, tma=True).name)
        if S.pipelined(s.num_warps) and not (s.trans_a or s.trans_b or s.trans_c):
            out.add(replace(s, aligned=True).name)
    return sorted(out)


# ---- measuring ---------------------------------------------------------------------------


def hbm_bytes_per_us(torch: Any) -> float:
    """The device's HBM bandwidth as a copy sees it: :data:`COPY_BYTES` read and
    written, median of 10 copies between CUDA events."""
    src = torch.empty(COPY_BYTES // 2, dtype=torch.float16, device="cuda").fill_(1)
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    times = []
    for _ in range(10):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        dst.copy_(src)
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1) * 1000)
    times.sort()
    return 2 * COPY_BYTES / times[len(times) // 2]


def swap_launch(
    torch: Any, a: Any, w: Any, c: Any, cfg: S.GemmConfig, kind: str, s: int, dtype: str
):
    """The prepared launch of swap-AB (``kind``, ``s`` slices) on ``a @ w.t()`` into
    ``c`` (a call launches it on the current stream with a fresh workspace)."""
    from gemm_opt.runtime import gemm as rt

    m, k = a.shape
    n = w.shape[0]
    spec = swap_spec(cfg, dtype, kind)
    tiles = S.tile_count(n, m, cfg.block_m, cfg.block_n)
    programs = max(tiles, 1) * s
    values = {"a": w, "b": a, "c": c, "M": n, "N": m, "K": k, "lda": k, "ldb": k, "ldc": n}
    made = rt.prepare_launch(
        spec, values, num_programs=programs, total_tiles=tiles, names=("a", "b", "c")
    )
    return lambda: made(w, a, c), made.kernel.name


def dense_row(
    torch: Any, p: Problem, dt: Any, dtype: str, peak: float, reps: int, flush: Any, say: Any
) -> list[dict[str, Any]]:
    import gemm_opt
    from gemm_opt.runtime import gemm as rt
    from gemm_opt.runtime import plan as plans

    gen = torch.Generator(device="cuda").manual_seed(p.m * 7919 + p.n)
    a = torch.randn(p.m, p.k, device="cuda", generator=gen).to(dt)
    w = torch.randn(p.n, p.k, device="cuda", generator=gen).to(dt)
    b = w.t()
    ref = a.double() @ b.double()
    sms = rt.sm_count(torch, a.device)
    fns: dict[str, Any] = {"torch": lambda: torch.matmul(a, b)}
    kernels: dict[str, str] = {"torch": "cuBLAS"}
    auto_kw = dict(schedule="auto", reduction=None, num_programs=None, num_xcds=1, config=None)
    fns["auto"] = lambda: gemm_opt.matmul(a, b, schedule="auto")
    plan = plans.plan("matmul", a, b, out=None, seed=None, **auto_kw)
    kernels["auto"] = plan.spec.name + (f" S={plan.auto_split_k}" if plan.auto_split_k else "")
    st = rt.store(rt.device_target(torch, a.device))
    have = st.kernels()

    def runs(kind: str, red: str | None, cfg: S.GemmConfig, swap_ab: bool = False) -> bool:
        return plans._spec(kind, red, "none", dtype, cfg, 1, True, False).name in have

    prior = prior_choice(p, dtype, sms, runs)
    kw: dict[str, Any] = dict(schedule=prior.schedule, reduction=prior.reduction,
                              config=prior.config)  # fmt: skip
    if prior.split_k is not None:
        tiles = S.tile_count(p.m, p.n, prior.config.block_m, prior.config.block_n)
        kw["num_programs"] = max(tiles, 1) * prior.split_k
    fns["prior"] = lambda: gemm_opt.matmul(a, b, **kw)
    kernels["prior"] = plans.plan("matmul", a, b, out=None, seed=None, num_xcds=1,
                                  **{"num_programs": None, **kw}).spec.name  # fmt: skip
    kernels["prior"] += f" S={prior.split_k}" if prior.split_k else ""
    outs = {}
    for name, cfg, kind, s in swap_variants(p):
        if swap_spec(cfg, dtype, kind).name not in have:
            continue  # split-K swap-AB: not in the bundles auto's kernels come from
        label = f"swap {name} " + ("dp" if kind == "data-parallel" else f"S={s}")
        c = torch.empty(p.m, p.n, device="cuda", dtype=dt)
        fns[label], kernels[label] = swap_launch(torch, a, w, c, cfg, kind, s, dtype)
        outs[label] = c
    checks: dict[str, Any] = {}
    for label, fn in fns.items():
        got = fn()
        c = outs.get(label, got)
        if label in outs:
            torch.cuda.synchronize()
        checks[label] = benchlib.check_output(c, ref, str(dt).removeprefix("torch."))
        if label.startswith("swap") or "splitk" in kernels[label]:
            first = c.clone()
            same = True
            for _ in range(REPEATS - 1):
                again = fn()
                same &= bool(torch.equal(first, outs.get(label, again)))
            checks[label]["bitwise"] = same
    return timed_rows(torch, p, "fwd", fns, kernels, checks, peak, reps, flush, say)


def timed_rows(
    torch: Any,
    p: Problem,
    pass_: str,
    fns: dict[str, Any],
    kernels: dict[str, str],
    checks: dict[str, dict[str, Any]],
    peak: float,
    reps: int,
    flush: Any,
    say: Any,
) -> list[dict[str, Any]]:
    """Time each of ``fns`` (``torch`` among them) in a CUDA graph and flushed; one row
    each, against torch and the roofline of ``p``'s bytes, printed as it comes.
    ``pass_``: ``fwd``, or the backward GEMM of forward ``p`` (dgrad, wgrad: the same
    three matrices move)."""
    flushed = benchlib.bench(fns, reps, warmup=3, flush=flush)
    roof_us = p.bytes() / peak
    name = p.name if pass_ == "fwd" else f"{pass_} {p.name}"
    rows = []
    torch_graph = graph_us(torch, fns["torch"])
    torch_flush = flushed["torch"]["median_ms"] * 1000
    for label, fn in fns.items():
        g_us = torch_graph if label == "torch" else graph_us(torch, fn)
        f_us = flushed[label]["median_ms"] * 1000
        rows.append({
            "problem": name, "pass": pass_, "m": p.m, "n": p.n, "k": p.k, "variant": label,
            "kernel": kernels[label], "graph_us": g_us, "flushed_us": f_us,
            "roofline_us": roof_us, "roofline_fraction": roof_us / f_us,
            "vs_torch_graph": torch_graph / g_us, "vs_torch_flushed": torch_flush / f_us,
            **{f"check_{k}": v for k, v in checks[label].items()},
        })  # fmt: skip
    best = min((r for r in rows if r["variant"] != "torch"), key=lambda r: r["flushed_us"])
    for r in rows:
        r["best"] = r is best
        ok = "ok" if r["check_ok"] else "FAIL"
        bit = (
            ""
            if "check_bitwise" not in r
            else (" bitwise" if r["check_bitwise"] else " NOT-BITWISE")
        )
        grad = "" if "check_autograd" not in r else (
            " autograd" if r["check_autograd"] else " NOT-AUTOGRAD"
        )  # fmt: skip
        say(
            f"{name:>22} {r['variant']:<18} graph {r['graph_us']:7.1f} us "
            f"({r['vs_torch_graph']:4.2f}x)  flushed {r['flushed_us']:7.1f} us "
            f"({r['vs_torch_flushed']:4.2f}x)  roofline {100 * r['roofline_fraction']:5.1f}%  "
            f"{ok}{bit}{grad}{'  <- best' if r['best'] else ''}  {r['kernel']}"
        )
    return rows


def backward_calls(
    torch: Any,
    p: Problem,
    dt: Any,
    passes: tuple[str, ...],
    device: str = "cuda",
    wgrad_configs: bool = False,
) -> dict[str, tuple[dict[str, Any], dict[str, str], dict[str, dict[str, Any]]]]:
    """Per backward GEMM of ``passes`` (dgrad, wgrad) of forward ``p`` = ``a @ w.t()``:
    the calls (torch, ``auto`` and ``prior`` on :func:`backward_operands`, with
    ``wgrad_configs`` also ``dp <config>``: wgrad data-parallel on each GPU
    configuration), their kernels, and each one's checks: against float64, split-K
    picks bit for bit over :data:`REPEATS` runs, and ``auto``'s output against the
    gradient autograd computes through ``gemm_opt.matmul(a, w.t(), schedule="auto")``,
    bit for bit."""
    import gemm_opt
    from gemm_opt.runtime import plan as plans

    gen = torch.Generator(device=device).manual_seed(p.m * 7919 + p.n + 1)
    a, w, dy = (
        torch.randn(*shape, device=device, generator=gen).to(dt)
        for shape in ((p.m, p.k), (p.n, p.k), (p.m, p.n))
    )
    a_, w_ = a.clone().requires_grad_(), w.clone().requires_grad_()
    gemm_opt.matmul(a_, w_.t(), schedule="auto").backward(dy)
    grads = {"dgrad": a_.grad, "wgrad": w_.grad.t()}  # dB = (dW)^T: (K, N)
    out = {}
    for pass_ in (x for x in ("dgrad", "wgrad") if x in passes):
        x, y = backward_operands(a, w, dy)[pass_]
        ref = x.double() @ y.double()
        fns: dict[str, Any] = {
            "torch": lambda x=x, y=y: torch.matmul(x, y),
            "auto": lambda x=x, y=y: gemm_opt.matmul(x, y, schedule="auto"),
            "prior": lambda x=x, y=y: gemm_opt.matmul(x, y),
        }
        kernels = {"torch": "cuBLAS" if device == "cuda" else "torch"}
        runs: list[tuple[str, str, Any]] = [
            ("auto", "auto", None),
            ("prior", "data-parallel", None),
        ]
        for name, cfg in h100.GPU_CONFIGS.items() if wgrad_configs and pass_ == "wgrad" else ():
            label = f"dp {name}"
            fns[label] = lambda x=x, y=y, cfg=cfg: gemm_opt.matmul(x, y, config=cfg)
            runs.append((label, "data-parallel", cfg))
        for label, kind, cfg in runs:
            pl = plans.plan("matmul", x, y, schedule=kind, reduction=None, num_programs=None,
                            num_xcds=1, config=cfg, out=None, seed=None)  # fmt: skip
            kernels[label] = pl.spec.name + (f" S={pl.auto_split_k}" if pl.auto_split_k else "")
        checks: dict[str, dict[str, Any]] = {}
        for label, fn in fns.items():
            got = fn()
            checks[label] = benchlib.check_output(got, ref, str(dt).removeprefix("torch."))
            if "splitk" in kernels[label]:
                checks[label]["bitwise"] = all(
                    bool(torch.equal(got, fn())) for _ in range(REPEATS - 1)
                )
            if label == "auto":
                checks[label]["autograd"] = bool(torch.equal(got, grads[pass_]))
        out[pass_] = (fns, kernels, checks)
    return out


def backward_rows(
    torch: Any, p: Problem, dt: Any, dtype: str, peak: float, reps: int, flush: Any, say: Any,
    passes: tuple[str, ...], wgrad_configs: bool = False,
) -> list[dict[str, Any]]:  # fmt: skip
    """dgrad and wgrad (those of ``passes``) of forward ``p``: :func:`backward_calls`,
    timed."""
    rows = []
    calls = backward_calls(torch, p, dt, passes, wgrad_configs=wgrad_configs)
    for pass_, (fns, kernels, checks) in calls.items():
        rows += timed_rows(torch, p, pass_, fns, kernels, checks, peak, reps, flush, say)
    return rows


def moe_row(
    torch: Any, g: int, dt: Any, dtype: str, peak: float, reps: int, flush: Any, say: Any
) -> list[dict[str, Any]]:
    """MoE decode: G experts of (K, N) weights, 0..16 tokens each (seeded): torch,
    ``auto``, and ``prior`` (``auto`` without the tiny-group tiles)."""
    import gemm_opt
    from gemm_opt.runtime import gemm as rt
    from gemm_opt.runtime import plan as plans

    n, k = MOE_NK
    lens = moe_lens(g)
    total = sum(lens)
    gen = torch.Generator(device="cuda").manual_seed(g)
    x = torch.randn(total, k, device="cuda", generator=gen).to(dt)
    w = torch.randn(g, k, n, device="cuda", generator=gen).to(dt)
    lens_dev = torch.tensor(lens, device="cuda", dtype=torch.int32)
    offs = lens_dev.cumsum(0).to(torch.int32)
    have = rt.store(rt.device_target(torch, x.device)).kernels()

    def runs(kind: str, red: str | None, cfg: S.GemmConfig, swap_ab: bool = False) -> bool:
        return plans._spec(kind, red, "m", dtype, cfg, 1).name in have

    prior = moe_prior_choice(total, g, dtype, rt.sm_count(torch, x.device), runs)
    fns = {
        "torch": lambda: torch._grouped_mm(x, w, offs=offs),
        "auto": lambda: gemm_opt.grouped_matmul(x, w, lens_dev, schedule="auto"),
        "prior": lambda: gemm_opt.grouped_matmul(
            x, w, lens_dev, schedule=prior.schedule, config=prior.config
        ),
    }
    try:
        fns["torch"]()
    except RuntimeError as e:  # torch builds without this dtype's grouped GEMM
        say(f"{'moe G=' + str(g):>16} skipped: torch._grouped_mm: {str(e).splitlines()[0]}")
        return []
    ref = torch.cat([
        x[o - ln : o].double() @ w[i].double() for i, (o, ln) in enumerate(zip(
            offs.tolist(), lens, strict=True))
    ])  # fmt: skip
    checks = {
        label: benchlib.check_output(fns[label](), ref, str(dt).removeprefix("torch."))
        for label in ("auto", "prior")
    }
    kernels = {"torch": "torch._grouped_mm"}
    for label, kw in (
        ("auto", {"schedule": "auto", "config": None}),
        ("prior", {"schedule": prior.schedule, "config": prior.config}),
    ):
        kernels[label] = plans.plan(
            "grouped_matmul", x, w, lens_dev, reduction=None, num_programs=None, num_xcds=1,
            out=None, seed=None, **kw,
        ).spec.name  # fmt: skip
    flushed = benchlib.bench(fns, reps, warmup=3, flush=flush)
    used = sum(1 for ln in lens if ln)
    moved = 2 * (total * k + used * k * n + total * n)
    rows = []
    try:
        base_g = graph_us(torch, fns["torch"])
    except RuntimeError as e:  # torch's fallback for this dtype copies from the host
        say(f"{'moe G=' + str(g):>16} torch: no CUDA-graph time ({str(e).splitlines()[0]})")
        base_g = float("nan")
    base_f = flushed["torch"]["median_ms"] * 1000
    for label, fn in fns.items():
        g_us = base_g if label == "torch" else graph_us(torch, fn)
        f_us = flushed[label]["median_ms"] * 1000
        row = {
            "problem": f"moe G={g}", "groups": g, "tokens": total, "experts_used": used,
            "n": n, "k": k, "variant": label, "graph_us": g_us, "flushed_us": f_us,
            "roofline_us": moved / peak, "roofline_fraction": moved / peak / f_us,
            "vs_torch_graph": base_g / g_us, "vs_torch_flushed": base_f / f_us,
            "check_ok": checks[label]["ok"] if label in checks else True,
            "kernel": kernels[label],
        }  # fmt: skip
        rows.append(row)
        say(
            f"{'moe G=' + str(g):>16} {label:<18} graph {g_us:7.1f} us "
            f"({row['vs_torch_graph']:4.2f}x)  flushed {f_us:7.1f} us "
            f"({row['vs_torch_flushed']:4.2f}x)  roofline "
            f"{100 * row['roofline_fraction']:5.1f}%  tokens {total} experts {used}/{g}"
            f"{'' if row['check_ok'] else '  FAIL'}  {kernels[label]}"
        )
    return rows


def profile(torch: Any, p: Problem, dt: Any, dtype: str) -> int:
    """One untimed launch of torch, auto and every swap-AB variant on ``p``, each named
    on stdout before it runs, in order (a profiler's kernels follow that order)."""
    import gemm_opt

    a = torch.randn(p.m, p.k, device="cuda").to(dt)
    w = torch.randn(p.n, p.k, device="cuda").to(dt)
    fns: dict[str, Any] = {
        "torch": lambda: torch.matmul(a, w.t()),
        "auto": lambda: gemm_opt.matmul(a, w.t(), schedule="auto"),
    }
    from gemm_opt.runtime import gemm as rt

    have = rt.store(rt.device_target(torch, a.device)).kernels()
    for name, cfg, kind, s in swap_variants(p):
        if swap_spec(cfg, dtype, kind).name not in have:
            continue
        label = f"swap {name} " + ("dp" if kind == "data-parallel" else f"S={s}")
        c = torch.empty(p.m, p.n, device="cuda", dtype=dt)
        fns[label], _ = swap_launch(torch, a, w, c, cfg, kind, s, dtype)
    for label, fn in fns.items():
        print(f"profile: {p.name} {label}", flush=True)
        fn()
        torch.cuda.synchronize()
    return 0


# ---- output ------------------------------------------------------------------------------


def summary(rows: list[dict[str, Any]], say: Any) -> None:
    """Per problem: torch, auto and the best of ours, against the targets."""
    say("")
    say("== summary (flushed time; roofline = A+B+C once at the measured HBM bandwidth)")
    say(f"{'problem':>22} {'torch %roof':>11} {'auto %roof':>10} {'auto/torch':>10} "
        f"{'best %roof':>10} {'best/torch':>10}  best")  # fmt: skip
    by: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        by.setdefault(r["problem"], {})[r["variant"]] = r
    for prob, vs in by.items():
        t, a = vs["torch"], vs["auto"]
        best = min((r for k, r in vs.items() if k != "torch"), key=lambda r: r["flushed_us"])
        say(
            f"{prob:>22} {100 * t['roofline_fraction']:10.1f}% "
            f"{100 * a['roofline_fraction']:9.1f}% {a['vs_torch_flushed']:9.2f}x "
            f"{100 * best['roofline_fraction']:9.1f}% "
            f"{best['vs_torch_flushed']:9.2f}x  {best['variant']}"
        )


def plot(doc: dict[str, Any], path: Path) -> bool:
    """Roofline fraction (flushed) over M per (N, K): torch, auto, auto without
    swap-AB and the best of ours; False where matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    weights = set(map(tuple, WEIGHTS))
    rows = [
        r for r in doc["rows"]
        if "m" in r and r.get("pass", "fwd") == "fwd" and (r["n"], r["k"]) in weights
    ]  # fmt: skip
    fig, axes = plt.subplots(1, len(WEIGHTS), figsize=(4 * len(WEIGHTS), 3.6), sharey=True)
    for ax, (n, k) in zip(axes, WEIGHTS, strict=True):
        mine = [r for r in rows if (r["n"], r["k"]) == (n, k)]
        for label, pick in (
            ("torch.matmul", lambda r: r["variant"] == "torch"),
            ("auto", lambda r: r["variant"] == "auto"),
            ("auto without swap-AB", lambda r: r["variant"] == "prior"),
        ):
            pts = sorted((r["m"], r["roofline_fraction"]) for r in mine if pick(r))
            ax.plot([m for m, _ in pts], [f for _, f in pts], marker="o", label=label)
        best: dict[int, float] = {}
        for r in mine:
            if r["variant"] != "torch":
                best[r["m"]] = max(best.get(r["m"], 0.0), r["roofline_fraction"])
        ax.plot(sorted(best), [best[m] for m in sorted(best)], marker="x", ls="--",
                label="best of ours")  # fmt: skip
        ax.axhline(0.8, color="grey", lw=0.8, ls=":")
        ax.set_xscale("log", base=2)
        ax.set_title(f"N={n} K={k}")
        ax.set_xlabel("M (tokens)")
    axes[0].set_ylabel("fraction of HBM roofline (flushed L2)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"{doc['env']['gpu']}, {doc['env']['dtype']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bundles", type=Path, help="bundle root (holds cuda90/*.bundle)")
    p.add_argument("--fp16", action="store_true", help="fp16 operands (default bf16)")
    p.add_argument("--out", type=Path, help="folder for decode.txt, decode.json, decode.png")
    p.add_argument("--reps", type=int, default=30, help="flushed samples per variant")
    p.add_argument("--rows", default=",".join(map(str, ROWS)), help="M values (default all)")
    p.add_argument("--no-moe", action="store_true", help="skip the MoE problems")
    p.add_argument(
        "--passes",
        default=",".join(PASSES),
        help="what to measure: fwd (dense and MoE), dgrad, wgrad (default: all)",
    )
    p.add_argument(
        "--wgrad-configs",
        action="store_true",
        help="also time wgrad data-parallel on each GPU configuration",
    )
    p.add_argument("--no-plot", action="store_true", help="write no decode.png (see --plot)")
    p.add_argument("--list-kernels", action="store_true", help="print the kernels and exit")
    p.add_argument("--plot", type=Path, help="draw DIR/decode.png from DIR/decode.json; exit")
    p.add_argument(
        "--profile",
        metavar="MxNxK",
        help="launch torch, auto and each swap-AB variant once on this problem, untimed "
        "(for a profiler such as Nsight Compute); exit",
    )
    args = p.parse_args(argv)
    dtype = "fp16" if args.fp16 else "bf16"
    passes = tuple(x for x in args.passes.split(",") if x)
    if not passes or any(x not in PASSES for x in passes):
        p.error(
            f"--passes takes a comma-separated subset of {','.join(PASSES)}, got {args.passes!r}"
        )
    if args.list_kernels:
        print("\n".join(kernel_names(dtype, passes=passes, wgrad_configs=args.wgrad_configs)))
        return 0
    if args.plot is not None:
        doc = json.loads((args.plot / "decode.json").read_text())
        if not plot(doc, args.plot / "decode.png"):
            print("decode: error: --plot needs matplotlib", file=sys.stderr)
            return 2
        return 0
    try:
        rows_m = tuple(int(x) for x in args.rows.split(","))
    except ValueError:
        p.error(f"--rows takes comma-separated ints, got {args.rows!r}")
    if args.reps < 1:
        p.error(f"--reps must be at least 1, got {args.reps}")
    if args.bundles is not None:
        os.environ["GEMM_OPT_BUNDLE_DIR"] = str(args.bundles)
    sys.modules["triton"] = None  # type: ignore[assignment]  # our cubins only
    torch = benchlib.cuda_torch("decode")
    if torch is None:
        return 2
    dt = getattr(torch, "float16" if args.fp16 else "bfloat16")
    if args.profile is not None:
        try:
            m, n, k = (int(x) for x in args.profile.lower().split("x"))
        except ValueError:
            p.error(f"--profile takes MxNxK, got {args.profile!r}")
        return profile(torch, Problem(m, n, k), dt, dtype)
    say = benchlib.Report()
    peak = hbm_bytes_per_us(torch)
    env = {
        "gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "dtype": dtype,
        "sms": torch.cuda.get_device_properties(0).multi_processor_count,
        "hbm_tb_per_s": peak / 1e6, "reps": args.reps,
    }  # fmt: skip
    say(f"{env['gpu']}, torch {env['torch']}, {dtype}, {env['sms']} SMs, "
        f"HBM copy {env['hbm_tb_per_s']:.2f} TB/s")  # fmt: skip
    flush = benchlib.Flusher()
    rows: list[dict[str, Any]] = []
    for prob in problems() if "fwd" in passes else ():
        if prob.m in rows_m or (prob.m, prob.n, prob.k) in EXTRA:
            rows += dense_row(torch, prob, dt, dtype, peak, args.reps, flush, say)
    if "dgrad" in passes or "wgrad" in passes:
        for prob in backward_problems():
            if prob.m in rows_m:
                rows += backward_rows(
                    torch, prob, dt, dtype, peak, args.reps, flush, say, passes,
                    args.wgrad_configs,
                )  # fmt: skip
    if not args.no_moe and "fwd" in passes:
        for g in MOE_GROUPS:
            rows += moe_row(torch, g, dt, dtype, peak, args.reps, flush, say)
    summary(rows, say)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        say.write(args.out / "decode.txt")
        doc = {"env": env, "rows": rows}
        (args.out / "decode.json").write_text(json.dumps(doc, indent=1) + "\n")
        if not args.no_plot:
            plot(doc, args.out / "decode.png")
    bad = [
        r for r in rows
        if not r.get("check_ok", True) or False in (r.get("check_bitwise"), r.get("check_autograd"))
    ]  # fmt: skip
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
