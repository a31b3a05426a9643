#!/usr/bin/env python3
"""Fused GEMM epilogues on the local NVIDIA GPU: ``gemm_opt.linear`` beside torch.

One command, torch only: the kernels come from the bundles (``python -m
gemm_opt.kernels.build_bundles --target cuda:90 --epilogues only --dtypes bf16 --out
DIR`` builds the fused kernels and the plain ones they are compared with;
``--bundles DIR`` points at the folder holding ``cuda90/``).

1. **Correctness**: ``gemm_opt.linear(x, w, b, activation=act)`` (bf16) for a bias
   with no activation, relu, gelu-tanh and silu, on every shape below, against
   ``act(F.linear(x, w, b))`` in float64 (``|y - ref| <= 2^-8 |ref| + 2^-12 (|x| |w|^T
   + |b|)``: bf16 rounding and the tensor core's accumulation); the weight gradient
   accumulated into an fp32 ``main_grad`` (``gemm_opt.matmul(dy.mT, x, out=mg,
   accumulate=True)``) against float64 (``2^-20 |ref| + 2^-12 |dy|^T |x|``).
2. **Speed** (median of ``--reps`` interleaved samples after an L2 flush), per shape and
   activation: ``fused`` (our GEMM with the epilogue), ``torch`` (``F.linear``, whose
   cuBLASLt call fuses the bias; ``torch._addmm_activation`` for relu and gelu-tanh,
   cuBLASLt's fused GELU/ReLU epilogues; silu: ``F.silu(F.linear(...))``, torch has
   no fused one) and ``ours+eager`` (our GEMM, then the bias and activation in eager
   torch: what the epilogue saves). The ratios ``fused / torch`` and ``fused /
   ours+eager`` (>1: fused is faster). wgrad: ``mg += dy.T @ x`` fused, beside
   ``mg.add_(dy.T @ x)`` with torch's GEMM and with ours.
3. **SwiGLU and MoE** (``--no-swiglu`` skips): ``linear(x, w, b, activation="swiglu")``
   (``w`` (2N, K) as ``[W_gate; W_up]``) and the MoE GateUp ``grouped_matmul(x, w,
   lens, activation="swiglu")`` (Mixtral-8x7B and Qwen3-30B-A3B expert shapes,
   seeded routing) against float64 and beside torch (``F.linear`` /
   ``torch._grouped_mm``, then ``silu(gate) * up``) and ours + eager; the MoE wgrad
   accumulated into an fp32 ``main_grad`` beside ``mg.add_(torch._grouped_mm(...))``.

Shapes (M tokens x N out x K in): 4096^3, Llama-3-8B's MLP (up/gate 4096 -> 14336,
down 14336 -> 4096) at 4096 tokens and at 128 (decode-sized), Llama-3-70B's up
projection, and a seeded random sweep (``--count``, ``--seed``; N and K multiples of
64, M a multiple of 8). Writes ``OUT/epilogue.csv``, ``OUT/epilogue.md`` and ``OUT/epilogue.log``;
exit 0 when every check passes, 1 if one fails, 2 on misuse, no GPU or a missing
kernel.

    PYTHONPATH=python python3 benchmarks/h100/epilogue.py --bundles DIR --out OUT
"""

from __future__ import annotations

import argparse
import csv
import random
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import benchlib  # noqa: E402

#: Named shapes (M, N, K): x (M, K), w (N, K), y (M, N).
NAMED = (
    (4096, 4096, 4096),
    (4096, 14336, 4096),
    (4096, 4096, 14336),
    (128, 14336, 4096),
    (128, 4096, 14336),
    (4096, 28672, 8192),
)
ACTIVATIONS = (None, "relu", "gelu-tanh", "silu")
REL, ABS = 2.0**-8, 2.0**-12


def random_shapes(count: int, seed: int) -> list[tuple[int, int, int]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        # M a multiple of 8: it is the wgrad's K, which the TMA kernels take in 16 bytes
        m = 8 * rng.choice([rng.randint(1, 32), rng.randint(32, 1024)])
        n = 64 * rng.randint(4, 256)
        k = 64 * rng.randint(4, 256)
        out.append((m, n, k))
    return out


def _eager(torch: Any, act: str | None, y: Any) -> Any:
    F = torch.nn.functional
    if act is None:
        return y
    if act == "relu":
        return F.relu(y)
    if act == "gelu-tanh":
        return F.gelu(y, approximate="tanh")
    return F.silu(y)


def _operands(torch: Any, m: int, n: int, k: int, seed: int):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(m, k, device="cuda", generator=g).bfloat16()
    w = (torch.randn(n, k, device="cuda", generator=g) / k**0.5).bfloat16()
    b = torch.randn(n, device="cuda", generator=g).bfloat16()
    return x, w, b


def check(torch: Any, shapes: list[tuple[int, int, int]], say: Any) -> tuple[bool, list[dict]]:
    import gemm_opt

    ok = True
    rows = []
    for i, (m, n, k) in enumerate(shapes):
        x, w, b = _operands(torch, m, n, k, i)
        pre = torch.nn.functional.linear(x.double(), w.double(), b.double())
        size = x.double().abs() @ w.double().abs().t() + b.double().abs()
        for act in ACTIVATIONS:
            y = gemm_opt.linear(x, w, b, activation=act)
            ref = _eager(torch, act, pre)
            bound = REL * ref.abs() + ABS * size
            worst = float(((y.double() - ref).abs() / bound).max())
            good = worst <= 1.0 and y.dtype == torch.bfloat16 and y.shape == (m, n)
            ok &= good
            rows.append({"m": m, "n": n, "k": k, "check": f"linear {act}", "worst": worst,
                         "ok": good})  # fmt: skip
            if not good:
                say(f"FAIL {m}x{n}x{k} linear activation={act}: |y-ref|/bound {worst:.3f}")
        # wgrad into an fp32 main_grad: mg (N, K) += dy.T (N, M) @ x (M, K)
        dy = torch.randn(m, n, device="cuda").bfloat16()
        mg = torch.randn(n, k, device="cuda")
        ref = mg.double() + dy.double().t() @ x.double()
        gemm_opt.matmul(dy.mT, x, out=mg, accumulate=True)
        bound = 2.0**-20 * ref.abs() + ABS * (dy.double().abs().t() @ x.double().abs()) + 1e-30
        worst = float(((mg.double() - ref).abs() / bound).max())
        good = worst <= 1.0
        ok &= good
        rows.append({"m": m, "n": n, "k": k, "check": "wgrad accumulate fp32", "worst": worst,
                     "ok": good})  # fmt: skip
        if not good:
            say(f"FAIL {m}x{n}x{k} wgrad accumulate: |mg-ref|/bound {worst:.3f}")
        torch.cuda.synchronize()
    passed = sum(r["ok"] for r in rows)
    say(f"correctness: {passed} of {len(rows)} checks pass")
    return ok, rows


def _torch_fn(torch: Any, act: str | None, x: Any, w: Any, b: Any):
    F = torch.nn.functional
    if act is None:
        return lambda: F.linear(x, w, b)
    if act in ("relu", "gelu-tanh"):
        gelu = act == "gelu-tanh"
        return lambda: torch._addmm_activation(b, x, w.t(), use_gelu=gelu)
    return lambda: F.silu(F.linear(x, w, b))


def speed(torch: Any, shapes, reps: int, warmup: int, say: Any) -> list[dict[str, Any]]:
    import gemm_opt

    flush = benchlib.Flusher()
    rows = []
    for i, (m, n, k) in enumerate(shapes):
        x, w, b = _operands(torch, m, n, k, i)
        for act in ACTIVATIONS:
            fns = {
                "fused": lambda x=x, w=w, b=b, a=act: gemm_opt.linear(x, w, b, activation=a),
                "torch": _torch_fn(torch, act, x, w, b),
                "ours+eager": lambda x=x, w=w, b=b, a=act: _eager(
                    torch, a, gemm_opt.matmul(x, w.mT) + b
                ),
            }
            res = benchlib.bench(fns, reps, warmup, flush)
            rows.append(_row(m, n, k, f"bias {act or 'none'}", res))
            say(_line(rows[-1]))
        dy = torch.randn(m, n, device="cuda").bfloat16()
        mg = torch.zeros(n, k, device="cuda")
        fns = {
            "fused": lambda dy=dy, x=x, mg=mg: gemm_opt.matmul(dy.mT, x, out=mg, accumulate=True),
            "torch": lambda dy=dy, x=x, mg=mg: mg.add_(dy.t() @ x),
            "ours+eager": lambda dy=dy, x=x, mg=mg: mg.add_(gemm_opt.matmul(dy.mT, x)),
        }
        res = benchlib.bench(fns, reps, warmup, flush)
        rows.append(_row(n, k, m, "wgrad += (fp32)", res))
        say(_line(rows[-1]))
    return rows


def _row(m: int, n: int, k: int, what: str, res: dict) -> dict[str, Any]:
    f, t, e = (res[name]["median_ms"] for name in ("fused", "torch", "ours+eager"))
    return {
        "m": m, "n": n, "k": k, "epilogue": what,
        "fused_ms": round(f, 5), "torch_ms": round(t, 5), "ours_eager_ms": round(e, 5),
        "fused_tflops": round(benchlib.tflops(m, n, k, f), 1),
        "vs_torch": round(t / f, 3), "vs_ours_eager": round(e / f, 3),
    }  # fmt: skip


def _line(r: dict[str, Any]) -> str:
    return (
        f"{r['m']}x{r['n']}x{r['k']} {r['epilogue']:16s} fused {r['fused_ms']:8.4f} ms "
        f"({r['fused_tflops']:6.1f} TFLOP/s) torch {r['torch_ms']:8.4f} ours+eager "
        f"{r['ours_eager_ms']:8.4f}: {r['vs_torch']:.2f}x torch, "
        f"{r['vs_ours_eager']:.2f}x ours+eager"
    )


#: SwiGLU (M tokens, N output columns, K): w is (2N, K) dense, (G, K, 2N) per expert.
SWIGLU_DENSE = ((4096, 14336, 4096), (128, 14336, 4096), (4096, 4096, 4096))
#: MoE GateUp (tokens x top-k rows, experts, K, N): Mixtral-8x7B (4096 tokens, top-2),
#: Qwen3-30B-A3B (2048 tokens, top-8, 128 experts).
MOE = ((8192, 8, 4096, 14336), (16384, 128, 2048, 768))


def _swiglu_eager(torch: Any, h: Any) -> Any:
    gate, up = h.chunk(2, dim=-1)
    return torch.nn.functional.silu(gate) * up


def _moe_operands(torch: Any, rows: int, groups: int, k: int, n: int, seed: int):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(rows, k, device="cuda", generator=g).bfloat16()
    w = (torch.randn(groups, k, 2 * n, device="cuda", generator=g) / k**0.5).bfloat16()
    weights = torch.rand(groups, generator=torch.Generator().manual_seed(seed)) + 0.2
    lens = torch.distributions.Multinomial(rows, probs=weights / weights.sum()).sample()
    lens = lens.to(torch.int32)
    lens[0] += rows - int(lens.sum())
    lens_dev = lens.cuda()
    offs = lens_dev.cumsum(0).to(torch.int32)
    return x, w, lens, lens_dev, offs


def _moe_fns(torch: Any, x: Any, w: Any, lens: Any, offs: Any) -> dict[str, Any]:
    import gemm_opt

    return {
        "fused": lambda: gemm_opt.grouped_matmul(x, w, lens, activation="swiglu"),
        "torch": lambda: _swiglu_eager(torch, torch._grouped_mm(x, w, offs=offs)),
        "ours+eager": lambda: _swiglu_eager(torch, gemm_opt.grouped_matmul(x, w, lens)),
    }


def _wgrad_fns(torch: Any, x: Any, dh: Any, lens: Any, offs: Any, mg: Any) -> dict[str, Any]:
    import gemm_opt

    xt = x.t()
    return {
        "fused": lambda: gemm_opt.grouped_matmul_variable_k(x, dh, lens, out=mg, accumulate=True),
        "torch": lambda: mg.add_(torch._grouped_mm(xt, dh, offs=offs)),
        "ours+eager": lambda: mg.add_(gemm_opt.grouped_matmul_variable_k(x, dh, lens)),
    }


def swiglu_and_moe(torch: Any, reps: int, warmup: int, say: Any) -> tuple[bool, list, list]:
    """SwiGLU fused (dense linear with a [gate | up] bias; MoE GateUp per expert)
    against float64 and timed beside torch (F.linear / torch._grouped_mm, then
    silu(gate) * up) and our GEMM + the same eager SwiGLU; the MoE wgrad
    accumulated into an fp32 main_grad (G, K, 2N)."""
    import gemm_opt

    F = torch.nn.functional
    flush = benchlib.Flusher()
    ok, checks, rows = True, [], []
    for i, (m, n, k) in enumerate(SWIGLU_DENSE):
        x, w, b = _operands(torch, m, 2 * n, k, 100 + i)
        y = gemm_opt.linear(x, w, b, activation="swiglu")
        pre = F.linear(x.double(), w.double(), b.double())
        ref = _swiglu_eager(torch, pre)
        gate, up = pre.chunk(2, dim=-1)
        size = (gate.abs() + 1) * (up.abs() + 1)  # |silu(g) u| and its rounding's scale
        worst = float(((y.double() - ref).abs() / (REL * ref.abs() + ABS * size)).max())
        good = worst <= 1.0 and y.shape == (m, n)
        ok &= good
        checks.append({"m": m, "n": n, "k": k, "check": "linear swiglu", "worst": worst,
                       "ok": good})  # fmt: skip
        fns = {
            "fused": lambda x=x, w=w, b=b: gemm_opt.linear(x, w, b, activation="swiglu"),
            "torch": lambda x=x, w=w, b=b: _swiglu_eager(torch, F.linear(x, w, b)),
            "ours+eager": lambda x=x, w=w, b=b: _swiglu_eager(torch, gemm_opt.matmul(x, w.mT) + b),
        }
        rows.append(_row(m, 2 * n, k, "bias swiglu", benchlib.bench(fns, reps, warmup, flush)))
        say(_line(rows[-1]))
    for i, (r, g, k, n) in enumerate(MOE):
        x, w, lens, lens_dev, offs = _moe_operands(torch, r, g, k, n, 200 + i)
        y = gemm_opt.grouped_matmul(x, w, lens_dev, activation="swiglu")
        worst, start = 0.0, 0
        for e, length in enumerate(lens.tolist()):
            pre = x[start : start + length].double() @ w[e].double()
            ref = _swiglu_eager(torch, pre)
            gate, up = pre.chunk(2, dim=-1)
            bound = REL * ref.abs() + ABS * (gate.abs() + 1) * (up.abs() + 1)
            got = y[start : start + length].double()
            if length:
                worst = max(worst, float(((got - ref).abs() / bound).max()))
            start += length
        good = worst <= 1.0 and y.shape == (r, n)
        ok &= good
        checks.append({"m": r, "n": n, "k": k, "check": f"moe swiglu G={g}", "worst": worst,
                       "ok": good})  # fmt: skip
        fns = _moe_fns(torch, x, w, lens_dev, offs)
        rows.append(_row(r, 2 * n, k, f"moe swiglu G={g}", benchlib.bench(fns, reps, warmup,
                                                                           flush)))  # fmt: skip
        say(_line(rows[-1]))
        # wgrad: main_grad (G, K, 2N) += x_g.T @ dh_g
        dh = torch.randn(r, 2 * n, device="cuda").bfloat16()
        mg = torch.randn(g, k, 2 * n, device="cuda")
        want = mg.double().clone()
        start = 0
        for e, length in enumerate(lens.tolist()):
            rows_x = x[start : start + length].double()
            want[e] += rows_x.t() @ dh[start : start + length].double()
            start += length
        gemm_opt.grouped_matmul_variable_k(x, dh, lens_dev, out=mg, accumulate=True)
        err = float(((mg.double() - want).abs() / (2.0**-20 * want.abs() + 2.0**-6)).max())
        good = err <= 1.0
        ok &= good
        checks.append({"m": k, "n": 2 * n, "k": r, "check": f"moe wgrad accumulate G={g}",
                       "worst": err, "ok": good})  # fmt: skip
        mg.zero_()
        fns = _wgrad_fns(torch, x, dh, lens_dev, offs, mg)
        rows.append(_row(k, 2 * n, r, f"moe wgrad += G={g}", benchlib.bench(fns, reps, warmup,
                                                                             flush)))  # fmt: skip
        say(_line(rows[-1]))
    for c in checks:
        if not c["ok"]:
            say(f"FAIL {c['m']}x{c['n']}x{c['k']} {c['check']}: worst {c['worst']:.3f}")
    say(f"swiglu/moe correctness: {sum(c['ok'] for c in checks)} of {len(checks)} checks pass")
    return ok, checks, rows


def _markdown(rows: list[dict[str, Any]], gpu: str) -> str:
    lines = [
        f"# Fused epilogues on {gpu} (bf16, y = act(x @ w.T + b); wgrad: fp32 mg += dy.T @ x)",
        "",
        "| M x N x K | epilogue | fused ms | TFLOP/s | torch ms | ours+eager ms "
        "| vs torch | vs ours+eager |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['m']}x{r['n']}x{r['k']} | {r['epilogue']} | {r['fused_ms']} | "
            f"{r['fused_tflops']} | {r['torch_ms']} | {r['ours_eager_ms']} | "
            f"{r['vs_torch']:.2f}x | {r['vs_ours_eager']:.2f}x |"
        )
    lines += ["", "Geometric means by epilogue (fused vs torch, fused vs ours+eager):", ""]
    for what in sorted({r["epilogue"] for r in rows}):
        sel = [r for r in rows if r["epilogue"] == what]
        gt = statistics.geometric_mean(r["vs_torch"] for r in sel)
        ge = statistics.geometric_mean(r["vs_ours_eager"] for r in sel)
        lines.append(f"- {what}: {gt:.3f}x torch, {ge:.3f}x ours+eager ({len(sel)} shapes)")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundles", help="bundle folder (holds cuda90/); default: the package's")
    ap.add_argument("--out", type=Path, default=Path("results/epilogue"), help="results here")
    ap.add_argument("--count", type=int, default=12, help="random shapes besides the named")
    ap.add_argument("--seed", type=int, default=27, help="the random shapes' seed")
    ap.add_argument("--reps", type=int, default=20, help="timed samples per function")
    ap.add_argument("--warmup", type=int, default=3, help="untimed calls per function first")
    ap.add_argument("--skip-speed", action="store_true", help="the correctness checks only")
    ap.add_argument(
        "--no-swiglu", dest="swiglu", action="store_false", help="skip SwiGLU and the MoE"
    )
    args = ap.parse_args(argv)
    if args.reps < 1 or args.warmup < 0 or args.count < 0:
        ap.error("--reps takes a positive count, --warmup and --count non-negative ones")
    session = benchlib.cuda_session(ap.prog, args.bundles)
    if session is None:
        return 2
    torch, report, gpu = session
    from gemm_opt.runtime.gemm import KernelMissing

    shapes = [*NAMED, *random_shapes(args.count, args.seed)]
    try:
        ok, checks = check(torch, shapes, report)
        rows = [] if args.skip_speed else speed(torch, shapes, args.reps, args.warmup, report)
        if args.swiglu:
            ok2, checks2, rows2 = swiglu_and_moe(torch, args.reps, args.warmup, report)
            ok, checks, rows = ok and ok2, checks + checks2, rows + rows2
    except KernelMissing as e:
        print(f"{ap.prog}: error: {e}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    report.write(args.out / "epilogue.log")
    with open(args.out / "epilogue_checks.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(checks[0]))
        writer.writeheader()
        writer.writerows(checks)
    if rows:
        with open(args.out / "epilogue.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        md = _markdown(rows, gpu)
        (args.out / "epilogue.md").write_text(md)
        report("\n" + md)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
