#!/usr/bin/env python3
"""gemm-opt's PyTorch operators on the local NVIDIA GPU: compile, CUDA graphs, streams.

One command, torch only (numpy optional; no MLIR bindings, no compiler): the
kernels come from the bundles (``python -m gemm_opt.kernels.build_bundles
--target cuda:90`` where the compiler is; the default bundle folder, or
``--bundles DIR``) and run through ``torch.ops.gemm_opt.*``. Checks, each
printed as one ``PASS``/``FAIL`` line:

1. ``no-sync``: under ``torch.cuda.set_sync_debug_mode("error")`` (any
   synchronizing call raises) the MoE block below runs forward and backward,
   every schedule of ``matmul`` runs, so do ``x @ W.t()`` (and its backward),
   ``A.mT @ B``, ``torch.bmm``-style batches and a broadcast A on their first
   call (each plan's first: the kernels read the views as they lie), and
   grouped forward, dgrad and wgrad run with ``group_lens`` on the device;
   ``validate=True`` (the opt-in host check) must be caught as a sync,
   ``validate="device"`` must not.
2. ``compile``: a small MoE block (router logits -> softmax -> top-1 ->
   ``group_lens`` counted on the device -> ``grouped_matmul`` GateUp -> SwiGLU
   -> ``grouped_matmul`` Down, plus a dense shared expert through
   ``gemm_opt.matmul``) under ``torch.compile(fullgraph=True)`` (inductor):
   one graph, the ``gemm_opt`` operators in it, forward and the gradients of
   x and every weight equal to eager within ``|c - e| <= 2^-6 (|e| +
   max|e|)`` (inductor fuses the elementwise ops around our kernels and
   rounds them differently; the routing must be identical), and eager
   within ``2^-5 max|ref|`` of a float32 per-expert reference.
3. ``cuda-graph``: GateUp -> SwiGLU -> Down and the backward GEMMs (dgrad
   ``trans_b``, wgrad variable-K, the dense matmul and its backward)
   captured once, replayed 100 times with new group lengths (same total,
   empty groups included) and new activations copied into the captured
   tensors; every replay bitwise equal to the eager calls on the same inputs.
4. ``streams``: stream-K (linear), work-stealing and grouped GEMMs of
   different shapes enqueued on two streams at once, 20 rounds with no
   synchronization in between; every result bitwise equal to the same call
   run alone.

Exit 0 if every check passes, 1 if any fails, 2 on misuse, no GPU or a
missing kernel.

    PYTHONPATH=python python3 benchmarks/h100/torch_ops.py
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

import gemm_opt
from gemm_opt.core import schedules as S

#: Tolerance of compiled vs eager (relative to |eager| plus the tensor's max): inductor
#: rounds the fused elementwise ops around the GEMMs differently (bf16 ulp is 2^-8).
COMPILE_TOL = 2.0**-6
#: Tolerance of eager vs the float32 reference, relative to the reference's max.
REF_TOL = 2.0**-5


# ---- the MoE block (shared with the CPU tests) -------------------------------------------


@dataclass
class MoeWeights:
    router: torch.Tensor  # (H, E)
    gate_up: torch.Tensor  # (E, H, 2F)
    down: torch.Tensor  # (E, F, H)
    shared: torch.Tensor  # (H, H)

    def tensors(self) -> list[torch.Tensor]:
        return [self.router, self.gate_up, self.down, self.shared]


def make_weights(
    hidden: int, ffn: int, experts: int, dtype: torch.dtype, device: Any, seed: int = 0
) -> MoeWeights:
    g = torch.Generator().manual_seed(seed)

    def rnd(*shape: int, scale: float) -> torch.Tensor:
        t = torch.randn(*shape, generator=g) * scale
        return t.to(dtype).to(device).requires_grad_()

    s = hidden**-0.5
    return MoeWeights(
        router=rnd(hidden, experts, scale=s),
        gate_up=rnd(experts, hidden, 2 * ffn, scale=s),
        down=rnd(experts, ffn, hidden, scale=ffn**-0.5),
        shared=rnd(hidden, hidden, scale=s),
    )


def route(x: torch.Tensor, router: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Top-1 routing on the device: (token order by expert, its gate, group_lens int32)."""
    probs = (x @ router).float().softmax(-1)
    gate, expert = probs.max(-1)
    order = expert.argsort(stable=True)
    experts = torch.arange(router.shape[1], device=x.device)
    group_lens = (expert[None, :] == experts[:, None]).sum(1).to(torch.int32)
    return order, gate, group_lens


def swiglu(h: torch.Tensor) -> torch.Tensor:
    f = h.shape[-1] // 2
    return (F.silu(h[:, :f].float()) * h[:, f:].float()).to(h.dtype)


def moe_block(
    x: torch.Tensor,
    router: torch.Tensor,
    gate_up: torch.Tensor,
    down: torch.Tensor,
    shared: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(output, group_lens): top-1 MoE through gemm_opt's grouped GEMMs, plus a dense
    shared expert through gemm_opt.matmul. No host sync anywhere (gathers by
    index_select, whose backward is index_add)."""
    order, gate, group_lens = route(x, router)
    xs = x.index_select(0, order)
    h = gemm_opt.grouped_matmul(xs, gate_up, group_lens)  # GateUp (T, 2F)
    y = gemm_opt.grouped_matmul(swiglu(h), down, group_lens)  # Down (T, H)
    y = y * gate.index_select(0, order)[:, None].to(y.dtype)
    routed = torch.zeros_like(y).index_add(0, order, y)
    return routed + gemm_opt.matmul(x, shared), group_lens


def moe_reference(x: torch.Tensor, w: MoeWeights) -> torch.Tensor:
    """The same block in float32, expert by expert (reads group_lens on the host)."""
    order, gate, group_lens = route(x, w.router)
    xs = x.index_select(0, order).float()
    out = torch.empty(xs.shape[0], x.shape[1], device=x.device)
    start = 0
    for e, n in enumerate(group_lens.tolist()):
        rows = slice(start, start + n)
        h = (xs[rows] @ w.gate_up[e].float()).to(x.dtype)
        out[rows] = (swiglu(h).float() @ w.down[e].float()).to(x.dtype).float()
        start += n
    out = out * gate.index_select(0, order)[:, None]
    routed = torch.zeros_like(out).index_add(0, order, out)
    return (routed + x.float() @ w.shared.float()).detach()


def within(c: torch.Tensor, e: torch.Tensor, tol: float) -> tuple[bool, float]:
    """|c - e| <= tol (|e| + max|e|) element-wise; (ok, worst ratio of error to bound)."""
    c, e = c.detach().float(), e.detach().float()
    bound = tol * (e.abs() + e.abs().max())
    err = (c - e).abs()
    ratio = float((err / bound.clamp_min(1e-30)).max()) if err.numel() else 0.0
    return bool(torch.isfinite(c).all()) and ratio <= 1.0, ratio


def run_block(fn: Callable, x: torch.Tensor, w: MoeWeights, dy: torch.Tensor) -> list:
    """[output, group_lens, dx, d(router), d(gate_up), d(down), d(shared)]."""
    x = x.detach().requires_grad_()
    out, lens = fn(x, *w.tensors())
    grads = torch.autograd.grad((out.float() * dy).sum(), [x, *w.tensors()])
    return [out, lens, *grads]


# ---- the checks --------------------------------------------------------------------------

GRAD_NAMES = ("out", "group_lens", "dx", "d_router", "d_gate_up", "d_down", "d_shared")


class Report:
    def __init__(self) -> None:
        self.failed = 0

    def line(self, ok: bool, name: str, detail: str) -> None:
        self.failed += not ok
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)


def check_no_sync(rep: Report, dtype: torch.dtype, dev: torch.device) -> None:
    w = make_weights(256, 128, 8, dtype, dev, seed=1)
    x = torch.randn(384, 256, device=dev).to(dtype)
    dy = torch.randn(384, 256, device=dev)
    lens = torch.tensor([100, 0, 84, 200], dtype=torch.int32, device=dev)
    a = torch.randn(384, 192, device=dev).to(dtype)
    wt = torch.randn(4, 192, 160, device=dev).to(dtype)
    b = torch.randn(192, 160, device=dev).to(dtype)
    torch.cuda.synchronize()
    calls: list[tuple[str, Callable[[], Any]]] = [
        ("moe forward+backward", lambda: run_block(moe_block, x, w, dy)),
        ("grouped forward", lambda: gemm_opt.grouped_matmul(a, wt, lens)),
        (
            "grouped dgrad",
            lambda: gemm_opt.grouped_matmul(a[:, :160].contiguous(), wt, lens, trans_b=True),
        ),
        ("grouped wgrad", lambda: gemm_opt.grouped_matmul_variable_k(a, a, lens)),
        (
            "grouped validate='device'",
            lambda: gemm_opt.grouped_matmul(a, wt, lens, validate="device"),
        ),
    ]
    for kind in S.KINDS:
        reds = S.REDUCTIONS if kind == "stream-k" else (None,)
        for red in reds:
            calls.append(
                (f"matmul {kind}{'/' + red if red else ''}",
                 lambda k=kind, r=red: gemm_opt.matmul(a, b, schedule=k, reduction=r))
            )  # fmt: skip
    xb = torch.randn(3, 128, 192, device=dev).to(dtype).requires_grad_()
    wl = torch.randn(160, 192, device=dev).to(dtype).requires_grad_()
    b3 = torch.randn(3, 192, 160, device=dev).to(dtype)
    x3 = xb.detach()
    calls += [
        ("matmul x @ W.t() fwd+bwd", lambda: gemm_opt.matmul(xb, wl.t()).sum().backward()),
        ("matmul A.mT @ B", lambda: gemm_opt.matmul(a.t(), a)),
        ("matmul bmm (grouped)", lambda: gemm_opt.matmul(x3, b3)),
        ("matmul bmm A.mT @ B (wgrad kernels)", lambda: gemm_opt.matmul(x3.mT, x3)),
        ("matmul broadcast A (per batch)", lambda: gemm_opt.matmul(a[:128], b3)),
    ]
    for name, call in calls:
        torch.cuda.set_sync_debug_mode("error")
        try:
            call()
            ok, detail = True, "no host sync"
        except RuntimeError as e:
            ok, detail = False, f"synchronized: {str(e).splitlines()[0]}"
        finally:
            torch.cuda.set_sync_debug_mode("default")
        rep.line(ok, f"no-sync {name}", detail)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        gemm_opt.grouped_matmul(a, wt, lens, validate=True)
        caught = False
    except RuntimeError:
        caught = True
    finally:
        torch.cuda.set_sync_debug_mode("default")
    rep.line(caught, "no-sync control", "validate=True (the opt-in host check) is seen as a sync")
    torch.cuda.synchronize()


def check_compile(rep: Report, dtype: torch.dtype, dev: torch.device) -> None:
    import torch._dynamo.testing as dt

    torch._dynamo.reset()
    w = make_weights(256, 256, 8, dtype, dev, seed=2)
    x = torch.randn(512, 256, device=dev).to(dtype)
    dy = torch.randn(512, 256, device=dev)
    eager = run_block(moe_block, x, w, dy)
    counter = dt.CompileCounterWithBackend("inductor")
    compiled = torch.compile(moe_block, backend=counter, fullgraph=True)
    got = run_block(compiled, x, w, dy)
    graphs = getattr(counter, "graphs", [])
    ops = sorted(
        {
            str(n.target)
            for gm in graphs
            for n in gm.graph.nodes
            if n.op == "call_function" and "gemm_opt" in str(n.target)
        }
    )
    rep.line(
        counter.frame_count == 1 and bool(ops),
        "compile fullgraph",
        f"{counter.frame_count} graph(s), gemm_opt operators in it: {', '.join(ops) or 'none'}",
    )
    rep.line(torch.equal(got[1], eager[1]), "compile routing", f"group_lens {eager[1].tolist()}")
    for name, c, e in zip(GRAD_NAMES[2:], got[2:], eager[2:], strict=True):
        ok, ratio = within(c, e, COMPILE_TOL)
        rep.line(ok, f"compile {name}", f"worst error/bound {ratio:.3f} (tol 2^-6)")
    ok, ratio = within(got[0], eager[0], COMPILE_TOL)
    rep.line(ok, "compile out", f"worst error/bound {ratio:.3f} (tol 2^-6)")
    ref = moe_reference(x, w)
    err = float((eager[0].detach().float() - ref).abs().max() / ref.abs().max())
    rep.line(err <= REF_TOL, "eager vs float32 reference", f"max error {err:.2e} of max|ref|")


def _partition(total: int, groups: int, gen: torch.Generator) -> list[int]:
    """A random split of ``total`` rows into ``groups`` lengths, often with empty groups."""
    cuts = sorted(torch.randint(0, total + 1, (groups - 1,), generator=gen).tolist())
    lens = [b - a for a, b in zip([0, *cuts], [*cuts, total], strict=True)]
    if torch.rand(1, generator=gen).item() < 0.3:  # one group takes everything
        lens = [0] * groups
        lens[int(torch.randint(0, groups, (1,), generator=gen))] = total
    return lens


def check_cuda_graph(rep: Report, dtype: torch.dtype, dev: torch.device) -> None:
    tokens, hidden, ffn, experts = 512, 256, 256, 8
    w = make_weights(hidden, ffn, experts, dtype, dev, seed=3)
    gu, down, shared = (t.detach() for t in (w.gate_up, w.down, w.shared))
    gen = torch.Generator().manual_seed(4)
    xs = torch.randn(tokens, hidden, device=dev).to(dtype)
    dy = torch.randn(tokens, hidden, device=dev).to(dtype)
    lens = torch.tensor(_partition(tokens, experts, gen), dtype=torch.int32, device=dev)

    def step() -> list[torch.Tensor]:
        h = gemm_opt.grouped_matmul(xs, gu, lens)
        act = swiglu(h)
        y = gemm_opt.grouped_matmul(act, down, lens)
        d_act = gemm_opt.grouped_matmul(dy, down, lens, trans_b=True)  # dgrad
        d_down = gemm_opt.grouped_matmul_variable_k(act, dy, lens)  # wgrad
        z = gemm_opt.matmul(y, shared, schedule="stream-k")
        x_req = xs.detach().requires_grad_()
        dense = gemm_opt.matmul(x_req, shared)
        (dx,) = torch.autograd.grad(dense, x_req, dy)  # matmul's backward
        return [h, y, d_act, d_down, z, dx]

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static = step()
    bad, worst = [], 0
    for i in range(100):
        new = _partition(tokens, experts, gen)
        lens.copy_(torch.tensor(new, dtype=torch.int32))
        xs.copy_(torch.randn(tokens, hidden, generator=gen).to(dtype))
        graph.replay()
        want = step()
        for name, c, e in zip(("h", "y", "d_act", "d_down", "z", "dx"), static, want, strict=True):
            if not torch.equal(c, e):
                bad.append(f"replay {i} {name} (lens {new})")
                worst = max(worst, float((c.float() - e.float()).abs().max()))
    rep.line(
        not bad,
        "cuda-graph 100 replays",
        "every output bitwise equal to eager with the new group_lens"
        if not bad
        else f"{len(bad)} mismatches, first {bad[0]}, max diff {worst:.3e}",
    )


def check_streams(rep: Report, dtype: torch.dtype, dev: torch.device) -> None:
    def rnd(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, device=dev).to(dtype)

    a1, b1 = rnd(520, 3000), rnd(3000, 264)  # stream-K's home: few tiles, long K
    a2, b2 = rnd(1000, 640), rnd(640, 776)
    x3, w3 = rnd(700, 384), rnd(5, 384, 256)
    lens3 = torch.tensor([300, 0, 1, 399, 0], dtype=torch.int32, device=dev)
    calls = [
        lambda: gemm_opt.matmul(a1, b1, schedule="stream-k", reduction="linear"),
        lambda: gemm_opt.matmul(a2, b2, schedule="work-stealing"),
        lambda: gemm_opt.grouped_matmul(x3, w3, lens3),
    ]
    alone = [call() for call in calls]
    torch.cuda.synchronize()
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    for s in (s1, s2):
        s.wait_stream(torch.cuda.current_stream())
    results: list[tuple[int, torch.Tensor]] = []
    for _ in range(20):
        with torch.cuda.stream(s1):
            results.append((0, calls[0]()))
        with torch.cuda.stream(s2):
            results.append((1, calls[1]()))
            results.append((2, calls[2]()))
    torch.cuda.synchronize()
    bad = sum(not torch.equal(r, alone[i]) for i, r in results)
    rep.line(
        bad == 0,
        "streams",
        f"{len(results)} results from two streams at once, {bad} differ from the call run alone",
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundles", help="bundle folder (holds cuda90/); default: the package's")
    ap.add_argument("--dtype", choices=("bf16", "fp16"), default="bf16")
    ap.add_argument("--only", help="comma-separated checks: no-sync,compile,cuda-graph,streams")
    args = ap.parse_args(argv)
    if args.bundles:
        os.environ["GEMM_OPT_BUNDLE_DIR"] = args.bundles
    if not torch.cuda.is_available():
        print("error: no CUDA GPU", file=sys.stderr)
        return 2
    checks = {
        "no-sync": check_no_sync,
        "compile": check_compile,
        "cuda-graph": check_cuda_graph,
        "streams": check_streams,
    }
    chosen = args.only.split(",") if args.only else list(checks)
    if unknown := [c for c in chosen if c not in checks]:
        print(f"error: unknown check {unknown[0]!r} (checks: {', '.join(checks)})", file=sys.stderr)
        return 2
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]
    dev = torch.device("cuda", torch.cuda.current_device())
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(dev)}, {args.dtype}")
    from gemm_opt.runtime.gemm import KernelMissing

    rep = Report()
    for name in chosen:
        try:
            checks[name](rep, dtype, dev)
        except KernelMissing as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        except Exception as e:  # a crash is a failed check, with its traceback
            traceback.print_exc()
            rep.line(False, name, f"raised {type(e).__name__}: {str(e).splitlines()[0][:300]}")
    print(f"{'PASS' if not rep.failed else 'FAIL'}: {rep.failed} failed check(s)")
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main())
