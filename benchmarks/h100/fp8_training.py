#!/usr/bin/env python3
"""FP8 training GEMMs on the local NVIDIA GPU: ``gemm_opt.fp8_linear`` and
``fp8_grouped_linear`` forward, dgrad and wgrad.

One command, torch only (the kernels from ``fp8.bundle``: ``python -m
gemm_opt.kernels.build_bundles --target cuda:90 --dtypes= --out DIR``).

1. **Correctness**: bf16 operands on the GPU (C and the gradients bf16, as
   a bf16 layer has them), each (recipe, grad_recipe) pair; the forward C and
   both gradients against the float64 product of the operands as the recipe
   quantizes them (forward along K, dgrad ``dY`` and ``W^T`` along N, wgrad
   ``dY^T`` and ``X^T`` along M; grouped: dgrad's ``W^T`` per group, and
   wgrad the bf16 variable-K GEMM, against the bf16 operands' product),
   within the bound of the forward checks
   (``benchmarks/h100/fp8.py``'s ``REL |ref| + ABS S``, imported: one rule),
   and against the float64 product of the unquantized operands within
   e4m3's rounding (``2^-3`` of the magnitudes). The same calls with float32
   operands (fp32 C) print the accumulation's own error, ``max |C - ref| /
   S``, which bf16's rounding hides. Ragged shapes (wgrad's K is the
   forward's M: 257 rows take the plain kernel) and a grouped call with an
   empty group, lengths on the GPU.
2. **Speed**: one training step's three GEMMs (forward, dgrad, wgrad, with
   their quantizations) beside torch's bf16 ``F.linear`` forward and backward
   in the same interleaved run (median of ``--reps`` samples after an L2
   flush, which also hides the host up to the flush's spin); its parts on
   their own (each quantization, transposing copy and GEMM: the GPU's
   breakdown) and the step's wall time back to back (the host's share); the
   grouped step beside the bf16 grouped step of ``torch._grouped_mm``.

Writes ``OUT/fp8_training.log`` and ``OUT/fp8_training.csv``; exit 0 when every
check passes, 1 if one fails, 2 on misuse, no GPU or a missing kernel.

    PYTHONPATH=python python3 benchmarks/h100/fp8_training.py --bundles DIR --out OUT
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import benchlib  # noqa: E402
from fp8 import ABS, REL  # noqa: E402  (the forward checks' bound: one rule)

#: (recipe, grad_recipe) pairs checked.
PAIRS = (
    ("rowwise", "rowwise"),
    ("tensorwise", "tensorwise"),
    ("block128", "block128"),
    ("block128", "rowwise"),
)
#: Dense checks (M, N, K): ragged; wgrad's K = M off the 16-element rule; a large one.
CHECK_SHAPES = ((257, 200, 176), (300, 129, 384), (1024, 1024, 4096))
#: Grouped checks: (lengths, N, K), an empty group.
GROUPED_CHECKS = (((50, 0, 81, 30), 90, 300), ((128, 64, 0, 192), 256, 512))
#: Speed: dense (M, N, K) and grouped (G, rows per group, N, K).
SPEED_SHAPES = ((4096, 4096, 4096), (8192, 7168, 2048))
GROUPED_SPEED = ((8, 2048, 4096, 7168),)
BLOCK = 128


def _dequantized(torch: Any, a: Any, w: Any, recipe: str, lens: Any = None):
    """float64 ``q(a)`` and ``q(w)^T`` as the FP8 GEMM of ``a @ w.T`` quantizes them:
    ``a`` (rows, R) and ``w`` ((G,) cols, R) along R."""
    import gemm_opt

    a8, sa = gemm_opt.quantize_fp8(a.contiguous(), recipe=recipe, operand="a")
    b8, sb = gemm_opt.quantize_fp8(w.contiguous().transpose(-1, -2), recipe=recipe, operand="b")
    ad, bd = a8.double(), b8.double()
    sa, sb = sa.double(), sb.double()
    if recipe == "block128":
        sa = sa.repeat_interleave(BLOCK, -1)[..., : ad.shape[-1]]
        sb = sb.repeat_interleave(BLOCK, -2).repeat_interleave(BLOCK, -1)
        sb = sb[..., : bd.shape[-2], : bd.shape[-1]]
    return ad * sa, bd * sb


def _product(torch: Any, a: Any, w: Any, recipe: str, lens: list[int] | None = None):
    """(ref, S): float64 ``q(a) @ q(w)^T`` (grouped: rows of g times ``w[g]``) and the
    sum of the magnitudes."""
    return _products(torch, *_dequantized(torch, a, w, recipe), lens)


def _products(torch: Any, ad: Any, bd: Any, lens: list[int] | None):
    """(``ad @ bd``, ``|ad| @ |bd|``) in float64; grouped: rows of group g times ``bd[g]``."""
    if lens is None:
        return ad @ bd, ad.abs() @ bd.abs()
    ref = torch.empty(ad.shape[0], bd.shape[-1], dtype=torch.float64, device=ad.device)
    mag = torch.empty_like(ref)
    start = 0
    for g, rows in enumerate(lens):
        ref[start : start + rows] = ad[start : start + rows] @ bd[g]
        mag[start : start + rows] = ad[start : start + rows].abs() @ bd[g].abs()
        start += rows
    return ref, mag


def _worst(torch: Any, got: Any, ref: Any, mag: Any, hp: Any, hp_mag: Any) -> tuple[float, float]:
    """The largest error in units of the bound: vs the quantized product, vs the exact one."""
    g = got.double()
    b = ABS * mag + REL * ref.abs()
    e1 = float(((g - ref).abs() / b.clamp_min(1e-300)).max()) if g.numel() else 0.0
    e2 = float(((g - hp).abs() / (2.0**-3 * hp_mag).clamp_min(1e-300)).max()) if g.numel() else 0.0
    return e1, e2


def check(torch: Any, say: Any, dtype: Any) -> tuple[bool, list[dict[str, Any]]]:
    """Every case in ``dtype`` (bf16: checked against the bound; float32: the
    accumulation's error printed, ``max |C - ref| / S``)."""
    import gemm_opt

    bf16 = dtype == torch.bfloat16
    out = torch.bfloat16 if bf16 else torch.float32
    tag = "bf16" if bf16 else "fp32"
    ok, rows = True, []
    gen = torch.Generator(device="cuda").manual_seed(0)

    def leaf(*shape):
        return torch.randn(*shape, device="cuda", generator=gen).to(dtype).requires_grad_()

    def judge(name: str, got: Any, a: Any, b: Any, r: str, gl: Any = None) -> None:
        nonlocal ok
        ref, mag = _product(torch, a, b, r, gl)
        hp, hp_mag = _product_hp(torch, a, b, gl)
        e1, e2 = _worst(torch, got, ref, mag, hp, hp_mag)
        acc = (
            float(((got.double() - ref).abs() / mag.clamp_min(1e-300)).max()) if ref.numel() else 0
        )
        good = (e1 <= 1 or not bf16) and e2 <= 1
        ok &= good
        what = f"{e1:.3f} of the bound, " if bf16 else f"max |C-ref|/S {acc:.2e}, "
        say(f"{'ok  ' if good else 'FAIL'} {tag} {name}: {what}{e2:.3f} of e4m3's")
        rows.append(dict(case=name, c=tag, bound=e1 if bf16 else "", acc=acc, e4m3=e2, ok=good))

    def judge_bf16(name: str, got: Any, a: Any, b: Any) -> None:
        nonlocal ok
        ad, bd = a.to(torch.bfloat16).double(), b.to(torch.bfloat16).double()
        ref, mag = ad @ bd.t(), ad.abs() @ bd.abs().t()
        fp32 = (a.shape[1] + 2) * 2.0**-23 * mag
        bound = fp32 + 2.0**-8 * (ref.abs() + fp32)  # its C is 16-bit either way
        e1 = float(((got.double() - ref).abs() / bound.clamp_min(1e-300)).max())
        good = e1 <= 1
        ok &= good
        say(f"{'ok  ' if good else 'FAIL'} {tag} {name} (bf16 GEMM): {e1:.3f} of its bound")
        rows.append(dict(case=name, c=tag, bound=e1, ok=good))

    for m, n, k in CHECK_SHAPES:
        for recipe, grad_recipe in PAIRS:
            x, w = leaf(m, k), leaf(n, k)
            dy = torch.randn(m, n, device="cuda", generator=gen)
            dy *= torch.exp2(torch.randint(-4, 5, (m, 1), device="cuda", generator=gen))
            dy = dy.to(out)
            y = gemm_opt.fp8_linear(x, w, recipe=recipe, grad_recipe=grad_recipe, out_dtype=out)
            y.backward(dy)
            xd, wd = x.detach(), w.detach()
            name = f"{m}x{n}x{k} {recipe}/{grad_recipe}"
            judge(f"{name} forward", y.detach(), xd, wd, recipe)
            judge(f"{name} dgrad", x.grad, dy, wd.t(), grad_recipe)
            judge(f"{name} wgrad", w.grad, dy.t(), xd.t(), grad_recipe)
    for lens, n, k in GROUPED_CHECKS:
        for grad_recipe in ("rowwise", "tensorwise"):
            s_rows, g = sum(lens), len(lens)
            x, w = leaf(s_rows, k), leaf(g, n, k)
            dy = torch.randn(s_rows, n, device="cuda", generator=gen).to(out)
            lens_dev = torch.tensor(lens, device="cuda")
            y = gemm_opt.fp8_grouped_linear(x, w, lens_dev, grad_recipe=grad_recipe, out_dtype=out)
            y.backward(dy)
            xd, wd = x.detach(), w.detach()
            name = f"grouped {lens} N={n} K={k} {grad_recipe}"
            judge(f"{name} forward", y.detach(), xd, wd, "rowwise", lens)
            judge(f"{name} dgrad", x.grad, dy, wd.transpose(1, 2), grad_recipe, lens)
            start = 0
            for gi, r in enumerate(lens):
                sl = slice(start, start + r)
                if r:  # the bf16 variable-K GEMM: against the bf16 operands' product
                    judge_bf16(f"{name} wgrad[{gi}]", w.grad[gi], dy[sl].t(), xd[sl].t())
                elif bool(w.grad[gi].any()):
                    ok = False
                    say(f"FAIL {tag} {name}: the empty group {gi} has a nonzero gradient")
                start += r
    return ok, rows


def _product_hp(torch: Any, a: Any, w: Any, lens: list[int] | None):
    return _products(torch, a.double(), w.double().transpose(-1, -2), lens)


def _step(forward: Any, x: Any, w: Any, dy: Any) -> Any:
    """One training step's GEMMs: ``forward(x, w)`` and its backward with ``dy`` (the
    gradients of the operands that require one)."""

    def run() -> None:
        x.grad = w.grad = None
        forward(x, w).backward(dy)

    return run


def _no_grad(forward: Any, x: Any, w: Any) -> Any:
    import torch

    with torch.no_grad():
        return forward(x, w)


def _wall_ms(torch: Any, f: Any, n: int) -> float:
    import time

    f()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        f()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n * 1e3


def _breakdown(torch, x, w, dy, reps, warmup, flush, say) -> list[dict[str, Any]]:
    """The GPU time of each part of a rowwise step (its three quantized GEMMs)."""
    import functools

    import torch.nn.functional as F

    import gemm_opt

    q = gemm_opt.quantize_fp8
    a8, sa = q(x)
    b8, sb = q(w.t(), operand="b")
    mm = functools.partial(torch.ops.gemm_opt.scaled_matmul, a8, b8, sa, sb)
    c32 = torch.empty(x.shape[0], w.shape[0], device=x.device)
    parts = {
        "quantize X (M, K) along K": functools.partial(q, x),
        "quantize W^T (K, N) along K": functools.partial(q, w.t(), operand="b"),
        "transposing copy of dY": dy.t().contiguous,
        "transposing copy of W": w.t().contiguous,
        "fp8 GEMM, bf16 C": functools.partial(mm, torch.bfloat16),
        "fp8 GEMM, fp32 C": functools.partial(mm, torch.float32),
        "torch bf16 GEMM": functools.partial(F.linear, x, w),
        "fp32 C to bf16": functools.partial(c32.to, torch.bfloat16),
    }
    res = benchlib.bench(parts, reps, warmup, flush)
    shape = "x".join(map(str, (x.shape[0], w.shape[0], x.shape[1])))
    rows = []
    for name, r in res.items():
        say(f"{shape} part {name}: {r['median_ms']:.3f} ms")
        rows.append(dict(shape=shape, what=f"part: {name}", ms=r["median_ms"]))
    return rows


def _torch_grouped(x: Any, w: Any, offs: Any) -> Any:
    return __import__("torch")._grouped_mm(x, w.transpose(1, 2), offs=offs)


def speed(torch: Any, reps: int, warmup: int, say: Any) -> list[dict[str, Any]]:
    import functools

    import torch.nn.functional as F

    import gemm_opt

    flush = benchlib.Flusher()
    rows = []
    block128 = functools.partial(gemm_opt.fp8_linear, recipe="block128", grad_recipe="block128")
    for m, n, k in SPEED_SHAPES:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        dy = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
        xs, ws = x.detach(), w.detach()
        fns = {
            "torch bf16": _step(F.linear, x, w, dy),
            "fp8 rowwise": _step(gemm_opt.fp8_linear, x, w, dy),
            "fp8 block128": _step(block128, x, w, dy),
            "fp8 rowwise forward only": functools.partial(_no_grad, gemm_opt.fp8_linear, xs, ws),
            "fp8 rowwise forward + dgrad": _step(
                gemm_opt.fp8_linear, xs.clone().requires_grad_(), ws, dy
            ),
            "fp8 rowwise forward + wgrad": _step(
                gemm_opt.fp8_linear, xs, ws.clone().requires_grad_(), dy
            ),
        }
        res = benchlib.bench(fns, reps, warmup, flush)
        base = res["torch bf16"]["median_ms"]
        for name, r in res.items():
            tf = benchlib.tflops(m, n, 3 * k, r["median_ms"])
            say(f"{m}x{n}x{k} step {name}: {r['median_ms']:.3f} ms, {tf:.0f} TFLOP/s "
                f"({base / r['median_ms']:.2f}x torch bf16)")  # fmt: skip
            rows.append(dict(shape=f"{m}x{n}x{k}", what=name, ms=r["median_ms"], tflops=tf))
        for name, f in fns.items():  # back to back, no flush: the host's share shows
            ms = _wall_ms(torch, f, 10)
            say(f"{m}x{n}x{k} step {name}: {ms:.3f} ms wall per step, back to back")
            rows.append(dict(shape=f"{m}x{n}x{k}", what=f"{name} wall", ms=ms))
        rows += _breakdown(torch, x.detach(), w.detach(), dy, reps, warmup, flush, say)
    for g, per, n, k in GROUPED_SPEED:
        s_rows = g * per
        x = torch.randn(s_rows, k, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        w = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        dy = torch.randn(s_rows, n, device="cuda", dtype=torch.bfloat16)
        lens = torch.full((g,), per, device="cuda", dtype=torch.int32)
        offs = torch.cumsum(lens, 0, dtype=torch.int32)
        ours = functools.partial(gemm_opt.fp8_grouped_linear, group_lens=lens)
        fns = {"fp8 rowwise": _step(ours, x, w, dy)}
        # the directions on their own: forward, forward + dgrad, forward + wgrad
        xs, ws = x.detach(), w.detach()
        fns["fp8 forward only"] = functools.partial(_no_grad, ours, xs, ws)
        fns["fp8 forward + dgrad"] = _step(ours, xs.clone().requires_grad_(), ws, dy)
        fns["fp8 forward + wgrad"] = _step(ours, xs, ws.clone().requires_grad_(), dy)
        theirs = _step(functools.partial(_torch_grouped, offs=offs), x, w, dy)
        try:
            theirs()
            fns["torch bf16"] = theirs
        except (RuntimeError, AttributeError) as e:  # no bf16 grouped GEMM (or backward)
            say(f"torch._grouped_mm step not run: {str(e).splitlines()[0]}")
        res = benchlib.bench(fns, reps, warmup, flush)
        base = res.get("torch bf16", {}).get("median_ms")
        for name, r in res.items():
            tf = benchlib.tflops(s_rows, n, 3 * k, r["median_ms"])
            ratio = f" ({base / r['median_ms']:.2f}x torch bf16)" if base else ""
            say(f"grouped G={g}x{per} N={n} K={k} step {name}: {r['median_ms']:.3f} ms, "
                f"{tf:.0f} TFLOP/s{ratio}")  # fmt: skip
            rows.append(dict(shape=f"G{g}x{per}x{n}x{k}", what=name, ms=r["median_ms"],
                             tflops=tf))  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundles", help="bundle folder (holds cuda90/); default: the package's")
    ap.add_argument("--out", type=Path, default=Path("results/fp8_training"))
    ap.add_argument("--reps", type=int, default=7, help="timed samples per step")
    ap.add_argument("--warmup", type=int, default=2, help="untimed steps first")
    ap.add_argument("--skip-speed", action="store_true", help="the correctness checks only")
    args = ap.parse_args(argv)
    if args.reps < 1 or args.warmup < 0:
        ap.error("--reps takes a positive count, --warmup a non-negative one")
    session = benchlib.cuda_session(ap.prog, args.bundles)
    if session is None:
        return 2
    torch, report, _ = session
    from gemm_opt.runtime.gemm import KernelMissing

    try:
        ok, rows = check(torch, report, torch.bfloat16)
        rows += check(torch, report, torch.float32)[1]
        timings = [] if args.skip_speed else speed(torch, args.reps, args.warmup, report)
    except KernelMissing as e:
        print(f"{ap.prog}: error: {e}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    report.write(args.out / "fp8_training.log")
    with open(args.out / "fp8_training.csv", "w", newline="") as f:
        fields = sorted({key for r in rows + timings for key in r})
        writer = csv.DictWriter(f, fieldnames=fields, restval="")
        writer.writeheader()
        writer.writerows(rows + timings)
    report(f"{'all checks pass' if ok else 'SOME CHECKS FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
