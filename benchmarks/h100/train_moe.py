#!/usr/bin/env python3
"""gemm_opt.nn on the GPU: module checks, then a small MoE decoder trained twice.

One command, torch only (the kernels come from the bundles). Two parts:

1. **Checks** of ``gemm_opt.nn.Linear`` and ``gemm_opt.nn.MoE``, each one
   ``PASS``/``FAIL`` line: Linear against ``torch.nn.Linear`` (bf16, and fp32
   parameters under autocast; output and gradients); MoE against the same
   layer on ``torch._grouped_mm`` (:class:`TorchMoE`: the routing is shared,
   only the GEMMs differ); both bitwise deterministic, both under
   ``torch.compile(fullgraph=True)`` (inductor) equal to eager, forward and
   backward captured in one CUDA graph and replayed with new inputs (new
   routing for the MoE) bitwise equal to eager, and the MoE's forward and
   backward with no host sync (``torch.cuda.set_sync_debug_mode("error")``).
2. **Training**: a Llama-style decoder (RMSNorm, RoPE, causal attention by
   ``F.scaled_dot_product_attention``, MoE FFN with SwiGLU experts) trained
   from the same seed on the same synthetic corpus twice, once with
   ``torch.nn.Linear`` + :class:`TorchMoE` and once with ``gemm_opt.nn``;
   fp32 parameters, bf16 autocast, AdamW. Prints both loss curves, the largest
   per-step loss difference against ``--tol`` and, as its yardstick, the
   torch model's against a second torch run (kernels both models share, the
   attention's backward among them, are not bitwise reproducible); then, eager and under
   ``torch.compile(fullgraph=True)``, side by side: the MoE layer's forward +
   backward time at the model's shape (``block``) and tokens/s of a full
   training step (forward, backward, optimizer; ``model``), also with CUDA
   graphs (``mode="reduce-overhead"``) and at 4x the batch. Compiled
   measurements start only within ``--budget-s`` of the start.

The corpus (:func:`corpus`) is text-like and fixed by its seed: words of 1-4
tokens over a Zipf-distributed vocabulary, chained by a first-order Markov
process in which each word has 8 successors of Zipf-distributed probability.

Writes ``train_moe.json`` (every figure), ``train_moe.md`` (the tables) and
``losses.csv`` (both curves) to ``--out``. Exit 0 if every check passes and the
curves agree within ``--tol``, 1 otherwise, 2 on misuse or no GPU.

    PYTHONPATH=python python3 benchmarks/h100/train_moe.py --out results/train_moe
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from gemm_opt import nn as gnn
from gemm_opt.nn import functional as GF

#: Compiled vs eager (relative to |eager| plus the tensor's max): inductor fuses the
#: elementwise ops around the GEMMs and rounds them differently (bf16 ulp is 2^-8).
COMPILE_TOL = 2.0**-6
#: gemm_opt vs torch on the same bf16 problem: each side rounds its GEMM outputs once,
#: the SwiGLU and the combine read them: a few bf16 ulps of the largest value.
TORCH_TOL = 2.0**-5
#: Rows of each expert group ``torch._grouped_mm``'s backward needs (16 bytes of bf16).
GROUPED_MM_ALIGN = 8


# ---- the torch baseline -----------------------------------------------------------------


class _GroupedMM(torch.autograd.Function):
    """``torch._grouped_mm`` with its backward spelled in ``torch._grouped_mm`` too:
    dgrad on the transposed weights, wgrad in the 2-D x 2-D form."""

    @staticmethod
    def forward(x: Tensor, w: Tensor, offs: Tensor) -> Tensor:
        return torch._grouped_mm(x, w, offs=offs)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Tensor) -> None:
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        x, w, offs = ctx.saved_tensors
        grad = grad.contiguous()
        dx = torch._grouped_mm(grad, w.transpose(-2, -1), offs=offs)
        dw = torch._grouped_mm(x.t(), grad, offs=offs)
        return dx, dw, None


class TorchMoE(gnn.MoE):
    """``gemm_opt.nn.MoE`` with its experts on ``torch._grouped_mm`` (the routing,
    parameters and initialization are the parent's). Each group is padded to
    :data:`GROUPED_MM_ALIGN` rows on the device, as MoE trainers on
    ``torch._grouped_mm`` pad (its wgrad form needs it): a fixed-size buffer of
    ``S + E * (ALIGN - 1)`` rows, so no host sync here either."""

    def _experts(self, rows: Tensor, gate_up: Tensor, down: Tensor, lens: Tensor) -> Tensor:
        s, e, a = rows.shape[0], lens.numel(), GROUPED_MM_ALIGN
        lens = lens.to(torch.int64)
        padded = (lens + a - 1) // a * a
        offs = padded.cumsum(0)
        starts, pstarts = lens.cumsum(0) - lens, offs - padded
        group = torch.repeat_interleave(torch.arange(e, device=rows.device), lens, output_size=s)
        dest = pstarts[group] + torch.arange(s, device=rows.device) - starts[group]
        buf = rows.new_zeros(s + e * (a - 1), rows.shape[1]).index_copy(0, dest, rows)
        offs = offs.to(torch.int32)
        act = GF.swiglu(_GroupedMM.apply(buf, gate_up, offs))
        return _GroupedMM.apply(act, down, offs).index_select(0, dest)


# ---- the model --------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelConfig:
    vocab: int = 8192
    hidden: int = 1024
    heads: int = 16
    layers: int = 4
    ffn: int = 1024
    experts: int = 8
    top_k: int = 2
    seq: int = 512


def rope_tables(seq: int, dim: int, device: Any) -> tuple[Tensor, Tensor]:
    inv = 1.0 / (10000.0 ** (torch.arange(0, dim, 2, device=device).float() / dim))
    ang = torch.outer(torch.arange(seq, device=device).float(), inv)
    return ang.cos(), ang.sin()


def rope(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotary embedding on (B, heads, T, D), halves rotated (GPT-NeoX layout)."""
    a, b = x.float().chunk(2, dim=-1)
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1).to(x.dtype)


class Block(torch.nn.Module):
    def __init__(self, cfg: ModelConfig, linear: type, moe: type) -> None:
        super().__init__()
        self.heads = cfg.heads
        self.attn_norm = torch.nn.RMSNorm(cfg.hidden, eps=1e-5)
        self.qkv = linear(cfg.hidden, 3 * cfg.hidden, bias=False)
        self.proj = linear(cfg.hidden, cfg.hidden, bias=False)
        self.ffn_norm = torch.nn.RMSNorm(cfg.hidden, eps=1e-5)
        self.moe = moe(cfg.hidden, cfg.ffn, cfg.experts, cfg.top_k)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        b, t, h = x.shape
        q, k, v = self.qkv(self.attn_norm(x)).view(b, t, 3, self.heads, -1).unbind(2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(o.transpose(1, 2).reshape(b, t, h))
        return x + self.moe(self.ffn_norm(x))


class Decoder(torch.nn.Module):
    def __init__(self, cfg: ModelConfig, linear: type, moe: type) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(cfg.vocab, cfg.hidden)
        self.blocks = torch.nn.ModuleList(Block(cfg, linear, moe) for _ in range(cfg.layers))
        self.norm = torch.nn.RMSNorm(cfg.hidden, eps=1e-5)
        self.head = linear(cfg.hidden, cfg.vocab, bias=False)
        cos, sin = rope_tables(cfg.seq, cfg.hidden // cfg.heads, None)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, tokens: Tensor, targets: Tensor) -> Tensor:
        x = self.embed(tokens)
        for blk in self.blocks:
            x = blk(x, self.cos, self.sin)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.reshape(-1))


BACKENDS = {
    "torch": (torch.nn.Linear, TorchMoE),
    "gemm_opt": (gnn.Linear, gnn.MoE),
}


def build(backend: str, cfg: ModelConfig, seed: int, device: Any) -> Decoder:
    torch.manual_seed(seed)
    linear, moe = BACKENDS[backend]
    with torch.device(device):
        return Decoder(cfg, linear, moe)


# ---- the corpus -------------------------------------------------------------------------


def corpus(tokens: int, vocab: int, seed: int, words: int = 2048, succ: int = 8) -> Tensor:
    """A deterministic text-like token stream (module docstring), int64 on the CPU."""
    g = torch.Generator().manual_seed(seed)
    zipf = 1.0 / torch.arange(1, vocab + 1, dtype=torch.float64)
    lengths = torch.randint(1, 5, (words,), generator=g).tolist()
    spell = [torch.multinomial(zipf, n, replacement=True, generator=g).tolist() for n in lengths]
    nexts = torch.randint(0, words, (words, succ), generator=g).tolist()
    p = 1.0 / torch.arange(1, succ + 1, dtype=torch.float64)
    cdf = (p / p.sum()).cumsum(0)
    picks = torch.searchsorted(cdf, torch.rand(tokens, generator=g, dtype=torch.float64))
    picks = picks.clamp_max(succ - 1).tolist()
    out: list[int] = []
    w = 0
    for i in range(tokens):
        out += spell[w]
        if len(out) >= tokens:
            break
        w = nexts[w][picks[i]]
    return torch.tensor(out[:tokens], dtype=torch.int64)


# ---- checks -----------------------------------------------------------------------------


#: How far past torch's own run-to-run loss difference gemm_opt's may go.
FLOOR_FACTOR = 1.5


def agreement_bounds(tol: float, floor: list[float]) -> tuple[float, float]:
    """The per-step and the mean |loss difference| allowed against torch, given torch's
    own differences ``floor`` against a second torch run of the same seed and data.

    Kernels both models share are not bitwise reproducible, so torch differs from
    itself by up to 0.03-0.06 nats in a run; a fixed ``tol`` below that fails
    torch itself. Per step: ``tol`` or ``FLOOR_FACTOR`` times torch's largest
    difference, the larger. The mean: ``FLOOR_FACTOR`` times torch's mean (a
    systematic drift moves the mean, where nondeterminism moves single steps), and
    never below a fifth of ``tol``."""
    worst = max(floor)
    mean = sum(floor) / len(floor)
    return max(tol, FLOOR_FACTOR * worst), max(tol / 5, FLOOR_FACTOR * mean)


def within(c: Tensor, e: Tensor, tol: float) -> tuple[bool, float]:
    """|c - e| <= tol (|e| + max|e|) element-wise; (ok, worst ratio of error to bound)."""
    c, e = c.detach().float(), e.detach().float()
    bound = tol * (e.abs() + e.abs().max())
    err = (c - e).abs()
    ratio = float((err / bound.clamp_min(1e-30)).max()) if err.numel() else 0.0
    return bool(torch.isfinite(c).all()) and ratio <= 1.0, ratio


class Report:
    def __init__(self) -> None:
        self.failed = 0
        self.lines: list[dict[str, Any]] = []

    def line(self, ok: bool, name: str, detail: str) -> None:
        self.failed += not ok
        self.lines.append({"ok": ok, "name": name, "detail": detail})
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)

    def compare(self, name: str, got: list[Tensor], want: list[Tensor], names: list[str],
                tol: float | None) -> None:  # fmt: skip
        """Each pair within ``tol`` (None: bitwise equal)."""
        worst, bad = 0.0, []
        for n, c, e in zip(names, got, want, strict=True):
            if tol is None:
                ok, r = torch.equal(c, e), float((c.float() - e.float()).abs().max().detach())
            else:
                ok, r = within(c, e, tol)
            worst = max(worst, r)
            if not ok:
                bad.append(n)
        what = "bitwise equal" if tol is None else f"worst error/bound {worst:.3f} (tol {tol:g})"
        self.line(
            not bad, name, f"{', '.join(names)}: {what}" + (f"; differ: {bad}" if bad else "")
        )


def fwd_bwd(module: torch.nn.Module, x: Tensor, dy: Tensor) -> list[Tensor]:
    """[output, dx, d(parameters)...] without touching ``.grad``. The output comes back
    detached: a live autograd graph would keep the parameters' AccumulateGrad nodes
    (and the stream they were made on) into a later CUDA-graph capture."""
    x = x.detach().requires_grad_()
    out = module(x)
    params = [p for p in module.parameters() if p.requires_grad]
    grads = torch.autograd.grad((out.float() * dy.float()).sum(), [x, *params])
    return [out.detach(), *grads]


def grad_names(module: torch.nn.Module) -> list[str]:
    return ["out", "dx", *(f"d{n}" for n, p in module.named_parameters() if p.requires_grad)]


def check_graph(rep: Report, name: str, module: torch.nn.Module, make_x: Callable,
                dy: Tensor, replays: int = 20) -> None:  # fmt: skip
    """Forward and backward captured in one CUDA graph; each replay with a new input
    bitwise equal to an eager call on it."""
    x = make_x().requires_grad_()
    params = [p for p in module.parameters() if p.requires_grad]

    def step() -> None:
        out = module(x)
        (out.float() * dy.float()).sum().backward()
        return out

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            module.zero_grad(set_to_none=True)
            x.grad = None
            step()
    torch.cuda.current_stream().wait_stream(side)
    module.zero_grad(set_to_none=True)
    x.grad = None
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = step()
    bad = []
    for i in range(replays):
        with torch.no_grad():
            x.copy_(make_x())
        graph.replay()
        want = fwd_bwd(module, x, dy)
        got = [out, x.grad, *(p.grad for p in params)]
        bad += [f"replay {i} {n}" for n, c, e in zip(grad_names(module), got, want, strict=True)
                if not torch.equal(c, e)]  # fmt: skip
    module.zero_grad(set_to_none=True)
    detail = "every output and gradient bitwise equal to eager" if not bad else f"{bad[:3]}"
    rep.line(not bad, f"{name} cuda-graph", f"forward+backward, {replays} new inputs: {detail}")


def check_linear(rep: Report, dev: torch.device) -> None:
    torch.manual_seed(0)
    ref = torch.nn.Linear(1024, 3072, device=dev, dtype=torch.bfloat16)
    ours = gnn.Linear.from_torch(ref)
    x = torch.randn(4, 256, 1024, device=dev, dtype=torch.bfloat16)
    dy = torch.randn(4, 256, 3072, device=dev, dtype=torch.bfloat16)
    names = grad_names(ours)
    rep.compare("Linear vs torch.nn.Linear (bf16)", fwd_bwd(ours, x, dy), fwd_bwd(ref, x, dy),
                names, TORCH_TOL)  # fmt: skip
    ref32 = torch.nn.Linear(1024, 512, device=dev)
    ours32 = gnn.Linear.from_torch(ref32)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        got, want = (
            fwd_bwd(ours32, x.float(), dy[..., :512]),
            fwd_bwd(ref32, x.float(), dy[..., :512]),
        )
    rep.compare("Linear vs torch.nn.Linear (fp32 parameters, bf16 autocast)", got, want,
                grad_names(ours32), TORCH_TOL)  # fmt: skip
    again = fwd_bwd(ours, x, dy)
    rep.compare("Linear deterministic", again, fwd_bwd(ours, x, dy), names, None)
    compiled = torch.compile(ours, fullgraph=True)
    rep.compare("Linear torch.compile(fullgraph=True)", fwd_bwd(compiled, x, dy), again, names,
                COMPILE_TOL)  # fmt: skip


def check_moe(rep: Report, dev: torch.device) -> None:
    h, f, e, k, t = 1024, 512, 8, 2, 2048
    torch.manual_seed(1)
    ours = gnn.MoE(h, f, e, k, device=dev, dtype=torch.bfloat16)
    ref = TorchMoE(h, f, e, k, device=dev, dtype=torch.bfloat16)
    ref.load_state_dict(ours.state_dict())
    x = torch.randn(t, h, device=dev, dtype=torch.bfloat16)
    dy = torch.randn(t, h, device=dev, dtype=torch.bfloat16)
    names = grad_names(ours)
    base = fwd_bwd(ours, x, dy)
    rep.compare("MoE vs the same layer on torch._grouped_mm", base, fwd_bwd(ref, x, dy), names,
                TORCH_TOL)  # fmt: skip
    rep.compare("MoE deterministic", fwd_bwd(ours, x, dy), base, names, None)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        fwd_bwd(ours, x, dy)
        rep.line(True, "MoE no-sync", "forward and backward ran under set_sync_debug_mode('error')")
    except RuntimeError as err:
        rep.line(False, "MoE no-sync", str(err).splitlines()[0][:200])
    finally:
        torch.cuda.set_sync_debug_mode(0)
    compiled = torch.compile(ours, fullgraph=True)
    rep.compare("MoE torch.compile(fullgraph=True)", fwd_bwd(compiled, x, dy), base, names,
                COMPILE_TOL)  # fmt: skip


def check_graphs(rep: Report, dev: torch.device) -> None:
    """Both modules' forward and backward in CUDA graphs (last: a capture that fails
    leaves the CUDA generator in capture mode, failing later random draws)."""
    torch.manual_seed(2)
    bf16 = {"device": dev, "dtype": torch.bfloat16}
    lin = gnn.Linear(1024, 3072, **bf16)
    moe = gnn.MoE(1024, 512, 8, 2, **bf16)
    x, dy = torch.randn(4, 256, 1024, **bf16), torch.randn(4, 256, 3072, **bf16)
    xm, dym = torch.randn(2048, 1024, **bf16), torch.randn(2048, 1024, **bf16)
    check_graph(rep, "Linear", lin, lambda: torch.randn_like(x), dy)
    check_graph(rep, "MoE", moe, lambda: torch.randn_like(xm), dym)


#: The module checks, in order (CUDA graphs last).
CHECKS = {"Linear": check_linear, "MoE": check_moe, "CUDA graphs": check_graphs}


# ---- training ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 300
    batch: int = 8
    lr: float = 6e-4
    warmup: int = 30
    seed: int = 1234
    data_seed: int = 7


def lr_at(step: int, tc: TrainConfig) -> float:
    if step < tc.warmup:
        return tc.lr * (step + 1) / tc.warmup
    frac = (step - tc.warmup) / max(1, tc.steps - tc.warmup)
    return tc.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))


def batches(data: Tensor, cfg: ModelConfig, tc: TrainConfig, step: int) -> tuple[Tensor, Tensor]:
    n = tc.batch * (cfg.seq + 1)
    chunk = data[(step * n) % (data.numel() - n) :][:n].view(tc.batch, cfg.seq + 1)
    return chunk[:, :-1], chunk[:, 1:]


def make_step(model: torch.nn.Module, opt: torch.optim.Optimizer) -> Callable:
    def step(tokens: Tensor, targets: Tensor) -> Tensor:
        with torch.autocast(tokens.device.type, dtype=torch.bfloat16):
            loss = model(tokens, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()

    return step


def optimizer(model: torch.nn.Module, tc: TrainConfig) -> torch.optim.Optimizer:
    return torch.optim.AdamW(model.parameters(), lr=tc.lr, betas=(0.9, 0.95), weight_decay=0.1)


def train(backend: str, cfg: ModelConfig, tc: TrainConfig, data: Tensor,
          dev: torch.device) -> list[float]:  # fmt: skip
    model = build(backend, cfg, tc.seed, dev)
    opt = optimizer(model, tc)
    step = make_step(model, opt)
    losses = []
    for i in range(tc.steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(i, tc)
        losses.append(step(*batches(data, cfg, tc, i)))
    return [float(v) for v in torch.stack(losses).cpu()]


#: How a measurement runs the module: eager, ``torch.compile(fullgraph=True)``, and the
#: same with CUDA graphs (``mode="reduce-overhead"``: no host cost per kernel).
MODES = ("eager", "compiled", "cudagraphs")


def run_as(module: torch.nn.Module, mode: str) -> Any:
    if mode == "eager":
        return module
    return torch.compile(
        module, fullgraph=True, mode="reduce-overhead" if mode == "cudagraphs" else None
    )


def throughput(backend: str, cfg: ModelConfig, tc: TrainConfig, data: Tensor,
               dev: torch.device, mode: str, steps: int) -> float:  # fmt: skip
    """Tokens per second of full training steps (after 3 warm-up steps)."""
    model = build(backend, cfg, tc.seed, dev)
    opt = optimizer(model, tc)
    step = make_step(run_as(model, mode), opt)
    for i in range(3):
        step(*batches(data, cfg, tc, i))
    torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(steps):
        step(*batches(data, cfg, tc, i))
    torch.cuda.synchronize()
    return steps * tc.batch * cfg.seq / (time.perf_counter() - start)


def profile_steps(mode: str, cfg: ModelConfig, tc: TrainConfig, dev: torch.device,
                  out: Path) -> None:  # fmt: skip
    """Where a training step's time goes, per backend: 3 steps under torch.profiler after 5
    of warm-up; the operators by host time and the kernels by GPU time, printed and
    written to ``profile_<mode>_<backend>.txt``."""
    from torch.profiler import ProfilerActivity, profile

    data = corpus((tc.steps + 4) * tc.batch * (cfg.seq + 1), cfg.vocab, tc.data_seed).to(dev)
    for backend in BACKENDS:
        model = build(backend, cfg, tc.seed, dev)
        step = make_step(run_as(model, mode), optimizer(model, tc))
        for i in range(5):
            step(*batches(data, cfg, tc, i))
        torch.cuda.synchronize()
        start = time.perf_counter()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for i in range(3):
                step(*batches(data, cfg, tc, 5 + i))
            torch.cuda.synchronize()
        wall = (time.perf_counter() - start) / 3 * 1e3
        events = prof.key_averages()
        tables = [
            events.table(sort_by=key, row_limit=rows, max_name_column_width=70)
            for key, rows in (("self_cpu_time_total", 25), ("self_device_time_total", 15))
        ]
        text = f"{backend}, {mode}: {wall:.2f} ms per profiled step\n" + "\n".join(tables)
        (out / f"profile_{mode}_{backend}.txt").write_text(text)
        print(text, flush=True)


def block_ms(moe: type, mode: str, dev: torch.device, reps: int = 20) -> float:
    """Median milliseconds of one MoE layer's forward + backward at the model's shape
    (4096 tokens, hidden 1024, 8 experts of 1024, top-2; bf16)."""
    cfg = ModelConfig()
    torch.manual_seed(1)
    layer = moe(cfg.hidden, cfg.ffn, cfg.experts, cfg.top_k, device=dev, dtype=torch.bfloat16)
    x = torch.randn(8 * cfg.seq, cfg.hidden, device=dev, dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn_like(x)
    fn = run_as(layer, mode)
    times = []
    for i in range(reps + 3):
        layer.zero_grad(set_to_none=True)  # no accumulation into a CUDA graph's outputs
        x.grad = None
        if mode == "cudagraphs":
            torch.compiler.cudagraph_mark_step_begin()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(x).backward(dy)
        end.record()
        end.synchronize()
        if i >= 3:
            times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def same_initial_parameters(cfg: ModelConfig, tc: TrainConfig, dev: torch.device) -> bool:
    a = build("torch", cfg, tc.seed, dev).state_dict()
    b = build("gemm_opt", cfg, tc.seed, dev).state_dict()
    return a.keys() == b.keys() and all(torch.equal(a[n], b[n]) for n in a)


# ---- main -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundles", help="bundle folder (holds cuda90/); default: the package's")
    ap.add_argument("--out", type=Path, required=True, help="folder for the result files")
    ap.add_argument("--steps", type=int, default=TrainConfig.steps)
    ap.add_argument("--tol", type=float, default=0.05,
                    help="per-step |loss difference| always allowed (nats); more where torch "
                         "differs more from itself (agreement_bounds)")  # fmt: skip
    ap.add_argument("--bench-steps", type=int, default=20)
    ap.add_argument("--skip-checks", action="store_true")
    ap.add_argument("--skip-compile", action="store_true", help="no compiled throughput")
    ap.add_argument("--budget-s", type=float, default=330,
                    help="start no compiled measurement after this many seconds")  # fmt: skip
    ap.add_argument("--profile", choices=MODES,
                    help="only profile 3 training steps of each backend in this mode "
                         "(torch.profiler tables to --out), nothing else")  # fmt: skip
    args = ap.parse_args(argv)
    if args.steps < 1 or args.bench_steps < 1 or args.tol <= 0:
        print("error: --steps and --bench-steps must be >= 1, --tol > 0", file=sys.stderr)
        return 2
    started = time.perf_counter()
    if args.bundles:
        os.environ["GEMM_OPT_BUNDLE_DIR"] = args.bundles
    if not torch.cuda.is_available():
        print("error: no CUDA GPU", file=sys.stderr)
        return 2
    dev = torch.device("cuda", torch.cuda.current_device())
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(dev)}", flush=True)
    if args.profile:
        profile_steps(args.profile, ModelConfig(), TrainConfig(), dev, args.out)
        return 0
    rep = Report()
    if not args.skip_checks:
        for name, check in CHECKS.items():
            try:
                check(rep, dev)
            except Exception as e:  # a crash is a failed check, with its traceback
                traceback.print_exc()
                rep.line(False, name, f"raised {type(e).__name__}: {str(e).splitlines()[0][:300]}")
    cfg, tc = ModelConfig(), TrainConfig(steps=args.steps)
    result: dict[str, Any] = {
        "model": asdict(cfg), "train": asdict(tc), "tol": args.tol,
        "device": torch.cuda.get_device_name(dev), "torch": torch.__version__,
    }  # fmt: skip
    rep.line(same_initial_parameters(cfg, tc, dev), "same initial parameters",
             "both models from one seed: every state_dict tensor bitwise equal")  # fmt: skip
    n_tokens = (tc.steps + 4) * tc.batch * (cfg.seq + 1)
    data = corpus(n_tokens, cfg.vocab, tc.data_seed).to(dev)
    curves = {}
    for backend in [*BACKENDS, "torch again"]:
        t0 = time.perf_counter()
        curves[backend] = train(backend.split()[0], cfg, tc, data, dev)
        print(f"trained {backend}: {time.perf_counter() - t0:.1f} s", flush=True)
    again = curves.pop("torch again")
    floor = [abs(a - b) for a, b in zip(curves["torch"], again, strict=True)]
    result.update(losses_torch_again=again, torch_vs_torch_max_diff=max(floor))
    print(f"torch against itself (same seed, same data): max per-step |diff| {max(floor):.4f}, "
          f"mean {sum(floor) / len(floor):.4f}")  # fmt: skip
    diffs = [abs(a - b) for a, b in zip(curves["torch"], curves["gemm_opt"], strict=True)]
    worst = max(range(len(diffs)), key=diffs.__getitem__)
    mean = sum(diffs) / len(diffs)
    result.update(losses=curves, max_loss_diff=diffs[worst], max_loss_diff_step=worst,
                  mean_loss_diff=mean)  # fmt: skip
    with open(args.out / "losses.csv", "w") as fh:
        fh.write("step,torch,gemm_opt,abs_diff,torch_again\n")
        for i, (a, b) in enumerate(zip(curves["torch"], curves["gemm_opt"], strict=True)):
            fh.write(f"{i},{a:.6f},{b:.6f},{abs(a - b):.6f},{again[i]:.6f}\n")
    print("step    torch  gemm_opt   |diff|")
    for i in sorted({*range(0, tc.steps, max(1, tc.steps // 30)), tc.steps - 1}):
        a, b = curves["torch"][i], curves["gemm_opt"][i]
        print(f"{i:4d}  {a:7.4f}  {b:7.4f}  {abs(a - b):.4f}")
    bound, mean_bound = agreement_bounds(args.tol, floor)
    result.update(loss_bound=bound, mean_loss_bound=mean_bound)
    rep.line(diffs[worst] <= bound and mean <= mean_bound, "loss curves agree",
             f"max per-step |diff| {diffs[worst]:.4f} at step {worst} (bound {bound:.4f}: "
             f"--tol {args.tol} or {FLOOR_FACTOR}x torch against itself, the larger), "
             f"mean {mean:.4f} (bound {mean_bound:.4f}), final {curves['torch'][-1]:.4f} vs "
             f"{curves['gemm_opt'][-1]:.4f}")  # fmt: skip
    _write(args.out, result, rep)
    speed: dict[str, dict[str, float]] = {}
    big = replace(tc, batch=4 * tc.batch)  # 4x the tokens per step: the GPU sets the pace
    plan = [
        ("eager", "block", tc), ("eager", "model", tc), ("compiled", "model", tc),
        ("cudagraphs", "model", tc), ("eager", "model", big), ("compiled", "model", big),
        ("compiled", "block", tc), ("cudagraphs", "block", tc),
    ]  # fmt: skip
    for mode, what, t in plan:
        if mode != "eager" and args.skip_compile:
            continue
        if mode != "eager" and time.perf_counter() - started > args.budget_s:
            print(f"{what} {mode}: skipped, past --budget-s {args.budget_s}", flush=True)
            continue
        _speed(rep, speed, mode, what, cfg, t, data, dev, args.bench_steps)
        result["speed"] = speed
        _write(args.out, result, rep)
    print(f"{'PASS' if not rep.failed else 'FAIL'}: {rep.failed} failed check(s)")
    return 1 if rep.failed else 0


def _speed(rep: Report, speed: dict, mode: str, what: str, cfg: ModelConfig, tc: TrainConfig,
           data: Tensor, dev: torch.device, steps: int) -> None:  # fmt: skip
    """One side-by-side measurement: the MoE layer's ms per forward+backward
    (``block``) or the model's training tokens/s (``model``), torch then gemm_opt."""
    key = f"{what} {mode}" + (f", {tc.batch * cfg.seq} tokens/step" if what == "model" else "")
    row = speed.setdefault(key, {})
    for backend, (_, moe) in BACKENDS.items():
        try:
            t0 = time.perf_counter()
            if what == "block":
                row[backend] = block_ms(moe, mode, dev)
            else:
                row[backend] = throughput(backend, cfg, tc, data, dev, mode, steps)
            unit = "ms fwd+bwd" if what == "block" else "tokens/s"
            print(f"{key} {backend}: {row[backend]:,.3f} {unit} "
                  f"({time.perf_counter() - t0:.0f} s with warm-up)", flush=True)  # fmt: skip
        except Exception as e:
            traceback.print_exc()
            rep.line(False, f"{key} {backend}", f"raised {type(e).__name__}: {str(e)[:300]}")
    if len(row) == 2:  # gemm_opt's speed over torch's: > 1 is faster
        row["speedup"] = row["torch"] / row["gemm_opt"] if what == "block" else (
            row["gemm_opt"] / row["torch"])  # fmt: skip
        print(f"{key}: gemm_opt speed-up over torch {row['speedup']:.3f}x", flush=True)


def _write(out: Path, result: dict[str, Any], rep: Report) -> None:
    result["checks"] = rep.lines
    (out / "train_moe.json").write_text(json.dumps(result, indent=1))
    lines = ["| check | result | detail |", "|---|---|---|"]
    lines += [f"| {c['name']} | {'PASS' if c['ok'] else 'FAIL'} | {c['detail']} |"
              for c in rep.lines]  # fmt: skip
    speed = result.get("speed", {})
    if speed:
        lines += ["", "| measurement | torch | gemm_opt | gemm_opt speed-up |", "|---|---|---|---|"]
        for key, s in speed.items():
            unit = " ms" if key.startswith("block") else " tok/s"
            cells = [f"{s[b]:,.3f}{unit}" if b in s else "-" for b in BACKENDS]
            ratio = f"{s['speedup']:.3f}x" if "speedup" in s else "-"
            lines.append(f"| {key} | {cells[0]} | {cells[1]} | {ratio} |")
    (out / "train_moe.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
