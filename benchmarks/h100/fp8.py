#!/usr/bin/env python3
"""FP8 GEMM on the local NVIDIA GPU: gemm-opt's scaled kernels beside ``torch._scaled_mm``.

One command, torch only (no MLIR bindings, no compiler): the kernels come from
the bundles (``python -m gemm_opt.kernels.build_bundles --target cuda:90``
writes ``fp8.bundle`` beside ``schedules.bundle``; ``--bundles DIR`` points at
the folder holding ``cuda90/``) and run through ``gemm_opt.matmul(a, w.t(),
scale_a=..., scale_b=...)``.

1. **Correctness**: bf16 operands quantized by ``gemm_opt.quantize_fp8``
   (e4m3, tensorwise, rowwise and block128), shapes with ragged edges and K
   off the 16-element rule (the plain kernel) and on it (the TMA twin), both
   schedules, and rowwise again with each bundled promotion interval
   (``imprecise_acc``); C against the float64 product of the decoded operands
   times their scales (``|C - ref| <= 2^-8 |ref| + 2^-12 sum|a_k b_k| sa sb``:
   bf16 rounding, and the tensor core's own accumulation inside each wgmma (or
   K block), which is narrower than fp32) and against ``torch._scaled_mm``
   (twice the bound: both approximate the float64 product within it; torch's
   own distance to it is printed; torch takes only multiples of 16, so the
   ragged shapes are checked against float64 only; where torch has no
   block128 kernel it says so). Each line also prints the largest
   ``|C - ref| / sum|a_k b_k| sa sb`` (the accumulation's error, the number
   the docs' bound is stated in) over the elements where bf16's rounding
   cannot hide it (C in fp32 for this figure).
   Grouped (``gemm_opt.grouped_matmul(a, w, group_lens, trans_b=True,
   scale_a=..., scale_b=...)``, lengths on the GPU): rowwise and block128,
   ragged lengths with an empty group, against float64 and
   ``torch._scaled_grouped_mm`` the same way.
2. **Speed**: DeepGEMM's dense shapes (M x N x K), each recipe, data-parallel
   and persistent (rowwise also with each promotion interval), each beside
   ``torch._scaled_mm`` of the same recipe (block128: rowwise torch where it
   has no block128 kernel, marked) in the same interleaved run (median of
   ``--reps`` samples after an L2 flush), TFLOP/s and the ratio to torch;
   then DeepSeek-V3's grouped shapes (GateUP N=4096 K=7168, Down N=7168
   K=2048, G=4 x 8192 and G=8 x 4096 rows; and G=8 GateUP with unbalanced
   routing) beside ``torch._scaled_grouped_mm`` (rowwise; block128 beside
   torch's rowwise where it has no block128 kernel).
3. **Decode shapes without the host**: the M <= 128 shapes again, each call
   of ours and torch's captured in a CUDA graph (``benchlib.graph_us``: warm
   L2, so below the HBM roofline where the weights fit in L2): the kernels'
   own time, which the event timing above can miss when a call's host path
   outlasts the flush before it.

Writes ``OUT/fp8.csv``, ``OUT/fp8.md`` and ``OUT/fp8.log``. Exit 0 when every
check passes, 1 if one fails, 2 on misuse, no GPU or a missing kernel.

    PYTHONPATH=python python3 benchmarks/h100/fp8.py --bundles DIR --out OUT
"""

from __future__ import annotations

import argparse
import csv
import functools
import math
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import benchlib  # noqa: E402

#: DeepGEMM's dense FP8 benchmark shapes (M, N, K): prefill and decode.
SHAPES = (
    (4096, 7168, 16384),
    (4096, 4096, 7168),
    (4096, 2112, 7168),
    (4096, 24576, 1536),
    (16, 4096, 7168),
    (64, 7168, 16384),
    (128, 7168, 16384),
)
#: The fewest rows of a dense speed shape whose other configurations are measured
#: (:func:`_configs`): the prefill shapes; the decode ones take 64-row tiles.
CONFIG_MIN_ROWS = 256
#: Correctness shapes: ragged M and N; K off the 16-element rule (the plain
#: kernel) and on it (the TMA twin); a decode shape.
CHECK_SHAPES = ((300, 200, 176), (257, 129, 100), (16, 384, 512), (1000, 1000, 4096))
#: Checks of the configurations measured beside the API's (:func:`_configs`): ragged
#: M and N past a 256x128 tile's edges, multiples of 16 (the TMA-only twins' facts).
CONFIG_CHECK_SHAPES = ((1000, 1008, 4096), (272, 400, 1536))
RECIPES = ("rowwise", "tensorwise", "block128")
SCHEDULES = ("data-parallel", "persistent")
#: K per block128 scale.
BLOCK = 128
#: Grouped speed shapes: (G, rows per group, N, K, balanced): DeepSeek-V3's GateUP
#: and Down projections (DeepGEMM's grouped table); unbalanced: the same total rows
#: split at random (seeded).
GROUPED_SHAPES = (
    (4, 8192, 4096, 7168, True),
    (8, 4096, 4096, 7168, True),
    (4, 8192, 7168, 2048, True),
    (8, 4096, 7168, 2048, True),
    (8, 4096, 4096, 7168, False),
)
#: Grouped checks: (lengths, N, K): ragged with an empty group and K off the
#: 16-element rule (no torch there), then torch-sized.
GROUPED_CHECKS = (((50, 0, 81, 30), 90, 300), ((128, 64, 0, 192), 256, 512))
GROUPED_RECIPES = ("rowwise", "block128")
#: The check's bound: C's bf16 rounding (relative) and the accumulation (of sum |a b| s).
REL, ABS = 2.0**-8, 2.0**-12


def bound_ratio(c: Any, ref: Any, bound: Any) -> float:
    """The largest ``|c - ref| / bound`` (float64): at most 1 is within the bound."""
    return ((c.double() - ref.double()).abs() / bound).max().item()


def _quantized(torch: Any, m: int, n: int, k: int, recipe: str, seed: int):
    """a (M, K) e4m3, w (N, K) e4m3 (B is w.t()) and their scales as torch._scaled_mm
    takes them (block128: scale_a (M, Kb) M-major, scale_b (Kb, Nb) with strides (1, Kb))."""
    import gemm_opt

    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(m, k, device="cuda", generator=g).bfloat16()
    y = torch.randn(n, k, device="cuda", generator=g).bfloat16()
    a, sa = gemm_opt.quantize_fp8(x, recipe=recipe)
    if recipe == "block128":  # 128x128 blocks of B = w.t()
        b, sb = gemm_opt.quantize_fp8(y.t(), recipe=recipe, operand="b")
        return a, b.t(), sa.t().contiguous().t(), sb.t().contiguous().t()
    w, sw = gemm_opt.quantize_fp8(y, recipe=recipe)  # per row of w = per column of B
    sb = sw.t() if recipe == "rowwise" else sw
    return a, w, sa.float(), sb.float()


def _element_scales(sa, sb, m: int, n: int, k: int, recipe: str):
    """The scale of every element of A (M, K) and B (K, N), float64."""
    sa, sb = sa.double(), sb.double()
    if recipe == "block128":
        sa = sa.repeat_interleave(BLOCK, dim=1)[:, :k]
        sb = sb.repeat_interleave(BLOCK, dim=0)[:k].repeat_interleave(BLOCK, dim=1)[:, :n]
    return sa, sb


def _reference(torch: Any, a, w, sa, sb, recipe: str = "rowwise"):
    """float64 (A x sa) @ (B x sb) and the same of the magnitudes (the bound's scale)."""
    ad, bd = a.double(), w.double().t()
    (m, k), n = ad.shape, bd.shape[1]
    ea, eb = _element_scales(sa, sb, m, n, k, recipe)
    ref = (ad * ea) @ (bd * eb)
    mag = (ad.abs() * ea) @ (bd.abs() * eb)
    return ref, mag


def _torch_mm(torch: Any, a, b, sa, sb, out_dtype):
    """``torch._scaled_mm`` of the recipe, or None where this torch has no kernel for it."""
    try:
        return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=out_dtype)
    except (RuntimeError, ValueError, NotImplementedError):
        return None


def _variant(a, b, sa, sb, schedule: str, acc: int | None, out_dtype=None):
    """C of the scaled kernel with promotion interval ``acc`` (None: the API's call,
    ``gemm_opt.matmul``; else its plan with ``imprecise_acc`` replaced, 32 being one
    instruction's K: the spec's None). The other intervals are bundled for the
    configurations of ``FP8_GPU_CONFIGS`` only (the TMA-only tile spills at 32), so
    their plan takes the one of those the API picks where no TMA-only tile serves."""
    from dataclasses import replace

    import gemm_opt
    from gemm_opt.kernels import h100_configs as h100
    from gemm_opt.runtime import scaled

    if acc is None:
        return gemm_opt.matmul(a, b, scale_a=sa, scale_b=sb, schedule=schedule, out_dtype=out_dtype)
    cfg = h100.FP8_GPU_CONFIGS[h100.fp8_config_name(a.shape[0], b.shape[1])]
    plan = scaled.scaled_plan(a, b, sa, sb, schedule=schedule, out_dtype=out_dtype, config=cfg)
    plan = replace(plan, spec=replace(plan.spec, imprecise_acc=None if acc == 32 else acc))
    return scaled.launch(plan, a, b, sa, sb)


def _configured(a, b, sa, sb, schedule: str, name: str, lens=None, out_dtype=None):
    """C of the kernel of FP8 configuration ``name`` (an entry of ``FP8_GPU_CONFIGS``
    or ``FP8_TMA_CONFIGS``: those run as their TMA twin, which the arguments must
    suit); ``lens`` on the device: the grouped forward."""
    from gemm_opt.kernels import h100_configs as h100
    from gemm_opt.runtime import scaled

    cfg = {**h100.FP8_GPU_CONFIGS, **h100.FP8_TMA_CONFIGS}[name]
    kw = dict(config=cfg, out_dtype=out_dtype)
    if lens is None:
        plan = scaled.scaled_plan(a, b, sa, sb, schedule=schedule, **kw)
    else:
        plan = scaled.scaled_grouped_plan(a, b, lens, sa, sb, trans_b=True, **kw)
    return scaled.launch(plan, a, b, sa, sb, lens)


def _configs(m: int, recipe: str, chosen: str | None = None) -> tuple[str, ...]:
    """The configurations measured beside the API's for an ``m``-row output of
    ``recipe``: each bundled one other than ``chosen`` (the API's) with rows for
    its tile, ``mid`` (the 128x128 tile) and each TMA-only one (tensorwise and
    rowwise)."""
    from gemm_opt.kernels import h100_configs as h100

    names = ["mid"]
    if recipe != "block128":
        names += list(h100.FP8_TMA_CONFIGS)
    every = {**h100.FP8_GPU_CONFIGS, **h100.FP8_TMA_CONFIGS}
    return tuple(n for n in names if n != chosen and m >= every[n].block_m)


def _chosen(m: int, n: int, recipe: str, aligned: bool = True) -> str:
    """The API's configuration for a bf16-C problem (``aligned``: N, K and the leading
    dimensions multiples of 16, as the benchmark's tables' shapes are)."""
    from gemm_opt.kernels import h100_configs as h100

    return h100.fp8_config_name(m, n, tma_only=aligned and recipe in h100.FP8_TMA_SCALES)


def _accs(recipe: str) -> tuple[int | None, ...]:
    """The promotion intervals measured for ``recipe``: None (the API's,
    ``FP8_EPILOGUE_IMPRECISE_ACC``), and for rowwise the bundled others."""
    from gemm_opt.kernels.h100_configs import FP8_EPILOGUE_IMPRECISE_ACC, FP8_IMPRECISE_ACC

    if recipe != "rowwise":
        return (None,)
    chosen = set(FP8_EPILOGUE_IMPRECISE_ACC.values())
    return (None, *(a for a in (32, *FP8_IMPRECISE_ACC) if a not in chosen))


def _impl(schedule: str, acc: int | None) -> str:
    return schedule if acc is None else f"{schedule}-ia{acc}"


def check(torch: Any, say: Any) -> bool:
    ok = True
    for m, n, k in CHECK_SHAPES:
        for recipe in RECIPES:
            a, w, sa, sb = _quantized(torch, m, n, k, recipe, m + n + k)
            ref, mag = _reference(torch, a, w, sa, sb, recipe)
            # torch._scaled_mm takes only sizes that are multiples of 16: elsewhere (the
            # ragged shapes, which take our plain kernel) the check is against float64 only.
            theirs = None
            if k % 16 == 0 and n % 16 == 0:
                theirs = _torch_mm(torch, a, w.t(), sa, sb, torch.bfloat16)
                theirs32 = _torch_mm(torch, a, w.t(), sa, sb, torch.float32)
                if theirs32 is not None:
                    err = ((theirs32.double() - ref).abs() / mag.clamp_min(1e-300)).max().item()
                    say(
                        f"torch._scaled_mm {m}x{n}x{k} {recipe}: fp32 C: max "
                        f"|C-ref|/sum|ab|s {err:.2e}"
                    )
            for schedule in SCHEDULES:
                for acc in _accs(recipe):
                    c = _variant(a, w.t(), sa, sb, schedule, acc)
                    # The accumulation's own error, in units of sum |a b| s: fp32 C
                    # (bundled for rowwise and block128 on the small shapes' kernels).
                    acc_err = float("nan")
                    if recipe != "tensorwise":
                        c32 = _variant(a, w.t(), sa, sb, schedule, acc, torch.float32)
                        acc_err = (c32.double() - ref).abs().div(mag.clamp_min(1e-300)).max()
                        acc_err = acc_err.item()
                    bound = REL * ref.abs() + ABS * mag
                    err_ref = bound_ratio(c, ref, bound)
                    # Against torch: both results approximate the float64 product within the
                    # bound, so they differ by at most twice it (torch's own error is printed).
                    err_torch = torch_ref = float("nan")
                    if theirs is not None:
                        err_torch = bound_ratio(c, theirs, bound)
                        torch_ref = bound_ratio(theirs, ref, bound)
                    good = err_ref <= 1 and (theirs is None or err_torch <= 2)
                    ok &= good
                    why = "sizes" if k % 16 or n % 16 else "no kernel for the recipe"
                    vs_torch = (
                        f"no torch._scaled_mm ({why})"
                        if theirs is None
                        else f"{err_torch:.3f} (of 2; torch's own |torch-ref|/bound "
                        f"{torch_ref:.3f})"
                    )
                    say(
                        f"{'PASS' if good else 'FAIL'} {m}x{n}x{k} {recipe} "
                        f"{_impl(schedule, acc)}: "
                        f"|C-ref|/bound {err_ref:.3f}, |C-torch|/bound {vs_torch}, "
                        f"fp32 C: max |C-ref|/sum|ab|s {acc_err:.2e}"
                    )
    return ok


def check_configs(torch: Any, say: Any) -> bool:
    """The configurations of :func:`_configs` on :data:`CONFIG_CHECK_SHAPES`, both
    schedules, bf16 C, against float64 and ``torch._scaled_mm`` as :func:`check`."""
    ok = True
    for m, n, k in CONFIG_CHECK_SHAPES:
        for recipe in RECIPES:
            a, w, sa, sb = _quantized(torch, m, n, k, recipe, m + n + k)
            ref, mag = _reference(torch, a, w, sa, sb, recipe)
            theirs = _torch_mm(torch, a, w.t(), sa, sb, torch.bfloat16)
            bound = REL * ref.abs() + ABS * mag
            for schedule in SCHEDULES:
                for name in _configs(m, recipe):
                    c = _configured(a, w.t(), sa, sb, schedule, name)
                    err_ref = bound_ratio(c, ref, bound)
                    err_torch = float("nan")
                    if theirs is not None:
                        err_torch = bound_ratio(c, theirs, bound)
                    good = err_ref <= 1 and (theirs is None or err_torch <= 2)
                    ok &= good
                    say(
                        f"{'PASS' if good else 'FAIL'} {m}x{n}x{k} {recipe} {schedule}-{name}: "
                        f"|C-ref|/bound {err_ref:.3f}, |C-torch|/bound "
                        f"{'n/a' if theirs is None else f'{err_torch:.3f} (of 2)'}"
                    )
    return ok


def _grouped_quantized(torch: Any, lens, n: int, k: int, recipe: str, seed: int):
    """a (S, K), w (G, N, K) e4m3 and their scales as the grouped API takes them."""
    import gemm_opt

    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(sum(lens), k, device="cuda", generator=g).bfloat16()
    y = torch.randn(len(lens), n, k, device="cuda", generator=g).bfloat16()
    a, sa = gemm_opt.quantize_fp8(x, recipe=recipe)
    wt, sw = gemm_opt.quantize_fp8(y.transpose(1, 2), recipe=recipe, operand="b")
    return a, wt.transpose(1, 2), sa, sw  # w (G, N, K) row-major per group


def _torch_grouped(torch: Any, a, w, sa, sw, lens_dev, out_dtype):
    """``torch._scaled_grouped_mm`` (rowwise scales), or None where it has no kernel."""
    g, n, _ = w.shape
    offs = torch.cumsum(lens_dev, 0, dtype=torch.int32)
    try:
        return torch._scaled_grouped_mm(
            a, w.transpose(1, 2), sa.reshape(-1), sw.reshape(g, n), offs=offs,
            out_dtype=out_dtype,
        )  # fmt: skip
    except (RuntimeError, ValueError, NotImplementedError, TypeError):
        return None


def _grouped_reference(torch: Any, a, w, sa, sw, lens, recipe: str):
    """float64 grouped product and the same of the magnitudes."""
    s, n = a.shape[0], w.shape[1]
    ref = torch.zeros(s, n, dtype=torch.float64, device=a.device)
    mag = torch.zeros_like(ref)
    start = 0
    for gi, length in enumerate(lens):
        rows = slice(start, start + length)
        sb = sw[gi].reshape(1, n) if recipe == "rowwise" else sw[gi]
        r, m_ = _reference(torch, a[rows], w[gi], sa[rows], sb, recipe)
        ref[rows], mag[rows] = r, m_
        start += length
    return ref, mag


def check_grouped(torch: Any, say: Any) -> bool:
    import gemm_opt

    ok = True
    for lens, n, k in GROUPED_CHECKS:
        lens_dev = torch.tensor(lens, dtype=torch.int32, device="cuda")
        for recipe in GROUPED_RECIPES:
            a, w, sa, sw = _grouped_quantized(torch, lens, n, k, recipe, n + k)
            ref, mag = _grouped_reference(torch, a, w, sa, sw, lens, recipe)
            theirs = None
            if k % 16 == 0 and n % 16 == 0 and recipe == "rowwise":
                theirs = _torch_grouped(torch, a, w, sa, sw, lens_dev, torch.bfloat16)
            kw = dict(trans_b=True, scale_a=sa, scale_b=sw)
            runs = {"api": functools.partial(gemm_opt.grouped_matmul, a, w, lens_dev, **kw)}
            if k % 128 == 0 and n % 16 == 0:  # the TMA-only twins' facts
                for name in _configs(sum(lens), recipe, _chosen(sum(lens), n, recipe)):
                    runs[name] = functools.partial(
                        _configured, a, w, sa, sw, "persistent", name, lens_dev
                    )
            bound = REL * ref.abs() + ABS * mag
            for name, run in runs.items():
                c = run()
                err_ref = bound_ratio(c, ref, bound)
                err_torch = float("nan")
                if theirs is not None:
                    err_torch = bound_ratio(c, theirs, bound)
                good = err_ref <= 1 and (theirs is None or err_torch <= 2)
                ok &= good
                say(
                    f"{'PASS' if good else 'FAIL'} grouped {lens} N={n} K={k} {recipe} {name}: "
                    f"|C-ref|/bound {err_ref:.3f}, |C-torch|/bound "
                    f"{'n/a' if theirs is None else f'{err_torch:.3f} (of 2)'}"
                )
    return ok


def _routing(g: int, rows: int, balanced: bool) -> list[int]:
    """G lengths summing to g * rows: equal, or a seeded random split (multiples of 16)."""
    if balanced:
        return [rows] * g
    import random

    rnd = random.Random(0)
    units = g * rows // 16
    cuts = sorted(rnd.sample(range(1, units), g - 1))
    return [16 * (b - a) for a, b in zip([0, *cuts], [*cuts, units], strict=True)]


def speed_grouped(torch: Any, reps: int, warmup: int, say: Any) -> list[dict[str, Any]]:
    import gemm_opt

    flush = benchlib.Flusher()
    rows = []
    for g, per, n, k, balanced in GROUPED_SHAPES:
        lens = _routing(g, per, balanced)
        lens_dev = torch.tensor(lens, dtype=torch.int32, device="cuda")
        s = sum(lens)
        for recipe in GROUPED_RECIPES:
            a, w, sa, sw = _grouped_quantized(torch, lens, n, k, recipe, 0)
            ta, tw, tsa, tsw = a, w, sa, sw
            torch_recipe = recipe
            if recipe != "rowwise":  # torch's grouped FP8 is rowwise
                ta, tw, tsa, tsw = _grouped_quantized(torch, lens, n, k, "rowwise", 0)
                torch_recipe = "rowwise"
            fns = {
                "torch": functools.partial(
                    _torch_grouped, torch, ta, tw, tsa, tsw, lens_dev, torch.bfloat16
                ),
                "persistent": functools.partial(
                    gemm_opt.grouped_matmul, a, w, lens_dev, trans_b=True, scale_a=sa,
                    scale_b=sw,
                ),
            }  # fmt: skip
            for name in _configs(s, recipe, _chosen(s, n, recipe)):
                fns[name] = functools.partial(
                    _configured, a, w, sa, sw, "persistent", name, lens_dev
                )
            if fns["torch"]() is None:
                del fns["torch"]
            res = benchlib.bench(fns, reps, warmup, flush)
            base = res["torch"]["median_ms"] if "torch" in res else float("nan")
            shape = f"G={g} {'x'.join(map(str, (per, n, k)))}{'' if balanced else ' unbalanced'}"
            for name, r in res.items():
                ms = r["median_ms"]
                row = {
                    "m": s, "n": n, "k": k, "recipe": recipe, "impl": f"grouped-{name}",
                    "median_ms": round(ms, 5), "tflops": round(benchlib.tflops(s, n, k, ms), 1),
                    "vs_torch": round(base / ms, 3), "torch_recipe": torch_recipe,
                    "shape": shape,
                }  # fmt: skip
                rows.append(row)
                say(
                    f"{shape} {recipe:9s} {name:10s} {ms:8.4f} ms "
                    f"{row['tflops']:7.1f} TFLOP/s {row['vs_torch']:.2f}x torch ({torch_recipe})"
                )
    return rows


#: The decode shapes (M <= 128) of :data:`SHAPES`, timed again in CUDA graphs.
DECODE = tuple(s for s in SHAPES if s[0] <= 128)


def speed_graphs(torch: Any, say: Any) -> list[dict[str, Any]]:
    """The decode shapes, ours (the API, both schedules) and torch's, in CUDA graphs."""
    import gemm_opt

    rows = []
    for m, n, k in DECODE:
        for recipe in RECIPES:
            a, w, sa, sb = _quantized(torch, m, n, k, recipe, 0)
            b = w.t()
            fns = {"torch": functools.partial(_torch_mm, torch, a, b, sa, sb, torch.bfloat16)}
            for schedule in SCHEDULES:
                fns[schedule] = functools.partial(
                    gemm_opt.matmul, a, b, scale_a=sa, scale_b=sb, schedule=schedule
                )
            times = {}
            for name, fn in fns.items():
                try:
                    times[name] = benchlib.graph_us(torch, fn)
                except Exception as e:  # a capture that fails is reported, not fatal
                    say(
                        f"graph {m}x{n}x{k} {recipe} {name}: not captured ({type(e).__name__}: {e})"
                    )
            for name, us in times.items():
                ms = us / 1000
                base = times.get("torch", float("nan"))
                row = {
                    "m": m, "n": n, "k": k, "recipe": recipe, "impl": f"graph-{name}",
                    "median_ms": round(ms, 5), "tflops": round(benchlib.tflops(m, n, k, ms), 1),
                    "vs_torch": round(base / us, 3), "torch_recipe": recipe,
                }  # fmt: skip
                rows.append(row)
                say(
                    f"graph {m}x{n}x{k} {recipe:10s} {name:13s} {us:8.2f} us "
                    f"{row['tflops']:7.1f} TFLOP/s {row['vs_torch']:.2f}x torch"
                )
    return rows


def _graph_markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "",
        "| decode, CUDA graph (warm L2) | recipe | torch us | data-parallel us | persistent us "
        "| best / torch |",
        "|---|---|---|---|---|---|",
    ]
    key = {(r["m"], r["n"], r["k"], r["recipe"], r["impl"]): r for r in rows}
    for m, n, k in DECODE:
        for recipe in RECIPES:
            got = [key.get((m, n, k, recipe, f"graph-{i}")) for i in ("torch", *SCHEDULES)]
            us = ["-" if r is None else f"{r['median_ms'] * 1000:.2f}" for r in got]
            best = max((r["vs_torch"] for r in got[1:] if r is not None), default=float("nan"))
            lines.append(f"| {m}x{n}x{k} | {recipe} | {us[0]} | {us[1]} | {us[2]} | {best:.2f}x |")
    return "\n".join(lines) + "\n"


def _grouped_markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "",
        "| grouped | recipe | torch._scaled_grouped_mm TFLOP/s | ours TFLOP/s | ours / torch "
        "| other kernels (TFLOP/s) |",
        "|---|---|---|---|---|---|",
    ]
    key = {(r["shape"], r["recipe"], r["impl"]): r for r in rows}
    for shape, recipe in dict.fromkeys((r["shape"], r["recipe"]) for r in rows):
        t = key.get((shape, recipe, "grouped-torch"))
        o = key[(shape, recipe, "grouped-persistent")]
        mark = "" if t is None or t["torch_recipe"] == recipe else f" ({t['torch_recipe']})"
        others = ", ".join(
            f"{r['impl'].removeprefix('grouped-')} {r['tflops']} ({r['vs_torch']:.2f}x)"
            for r in rows
            if (r["shape"], r["recipe"]) == (shape, recipe)
            and r["impl"] not in ("grouped-torch", "grouped-persistent")
        )
        lines.append(
            f"| {shape} | {recipe} | {'-' if t is None else t['tflops']}{mark} | {o['tflops']} "
            f"| {o['vs_torch']:.2f}x | {others or '-'} |"
        )
    return "\n".join(lines) + "\n"


def speed(torch: Any, reps: int, warmup: int, say: Any) -> list[dict[str, Any]]:
    import gemm_opt

    flush = benchlib.Flusher()
    rows = []
    for m, n, k in SHAPES:
        for recipe in RECIPES:
            a, w, sa, sb = _quantized(torch, m, n, k, recipe, 0)
            b = w.t()
            ta, tb, tsa, tsb = a, b, sa, sb
            if _torch_mm(torch, a, b, sa, sb, torch.bfloat16) is None:  # torch: rowwise
                ta, tw, tsa, tsb = _quantized(torch, m, n, k, "rowwise", 0)
                tb = tw.t()
            fns = {
                "torch": lambda a=ta, b=tb, sa=tsa, sb=tsb: torch._scaled_mm(
                    a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16
                )
            }
            torch_recipe = recipe if ta is a else "rowwise"
            for schedule in SCHEDULES:
                fns[schedule] = lambda a=a, b=b, sa=sa, sb=sb, s=schedule: gemm_opt.matmul(
                    a, b, scale_a=sa, scale_b=sb, schedule=s
                )
                for acc in _accs(recipe)[1:]:
                    fns[_impl(schedule, acc)] = functools.partial(
                        _variant, a, b, sa, sb, schedule, acc
                    )
                if m >= CONFIG_MIN_ROWS:
                    for name in _configs(m, recipe, _chosen(m, n, recipe)):
                        fns[f"{schedule}-{name}"] = functools.partial(
                            _configured, a, b, sa, sb, schedule, name
                        )
            res = benchlib.bench(fns, reps, warmup, flush)
            base = res["torch"]["median_ms"]
            for name, r in res.items():
                ms = r["median_ms"]
                row = {
                    "m": m, "n": n, "k": k, "recipe": recipe, "impl": name,
                    "median_ms": round(ms, 5), "tflops": round(benchlib.tflops(m, n, k, ms), 1),
                    "vs_torch": round(base / ms, 3), "torch_recipe": torch_recipe,
                }  # fmt: skip
                rows.append(row)
                say(
                    f"{m}x{n}x{k} {recipe:10s} {name:13s} {ms:8.4f} ms "
                    f"{row['tflops']:7.1f} TFLOP/s {row['vs_torch']:.2f}x torch"
                )
    return rows


def sweep_shapes(count: int, seed: int) -> list[tuple[int, int, int, int | None]]:
    """``count`` seeded random problems none of the tuned shapes is: (M, N, K, None)
    dense and (rows per group, N, K, G) grouped, one in four grouped. Sizes
    log-uniform (M 256-8192, a group's rows 256-32768/G, N and K 512-8192),
    multiples of 16 except one dense problem in four whose N or K is off by 8 (the
    plain kernels: the TMA-only tile has none); grouped K a multiple of 128."""
    import random

    rnd = random.Random(seed)

    def size(lo: int, hi: int, step: int) -> int:
        return max(lo, round(2 ** rnd.uniform(math.log2(lo), math.log2(hi)) / step) * step)

    out: list[tuple[int, int, int, int | None]] = []
    while len(out) < count:
        g = rnd.choice((4, 8, 16)) if rnd.random() < 0.25 else None
        m = size(256, 8192 if g is None else 32768 // g, 16)
        n, k = size(512, 8192, 16), size(512, 8192, 16 if g is None else 128)
        if g is None and rnd.random() < 0.25:
            n, k = (n + 8, k) if rnd.random() < 0.5 else (n, k + 8)
        shape = (m, n, k, g)
        if shape[:3] not in SHAPES and shape not in out:
            out.append(shape)
    return out


def speed_sweep(torch: Any, count: int, seed: int, say: Any) -> tuple[list[dict[str, Any]], bool]:
    """:func:`sweep_shapes` through the API (rowwise and tensorwise dense, rowwise
    grouped with seeded unbalanced lengths), each checked against the float64
    product (:data:`REL`, :data:`ABS`) and timed beside torch and beside ``mid``
    where the API chose another tile, each call in a CUDA graph
    (:func:`benchlib.graph_us`: the kernels' time, warm L2, not the host's: the
    API's host path and ``mid``'s plan-and-launch differ); returns the rows and
    whether every check passed."""
    import gemm_opt

    rows, ok = [], True
    for m, n, k, g in sweep_shapes(count, seed):
        for recipe in ("rowwise",) if g else ("rowwise", "tensorwise"):
            if g is None:
                a, w, sa, sb = _quantized(torch, m, n, k, recipe, m + n + k)
                b = w.t()
                fns = {
                    "torch": functools.partial(_torch_mm, torch, a, b, sa, sb, torch.bfloat16),
                    "api": functools.partial(gemm_opt.matmul, a, b, scale_a=sa, scale_b=sb),
                }
                chosen = _chosen(m, n, recipe, aligned=n % 16 == 0 and k % 16 == 0)
                if chosen != "mid" and m >= 128:
                    fns["mid"] = functools.partial(
                        _configured, a, b, sa, sb, "data-parallel", "mid"
                    )
                ref, mag = _reference(torch, a, w, sa, sb, recipe)
                label = f"{m}x{n}x{k}"
            else:
                lens = _routing(g, m, False)
                lens_dev = torch.tensor(lens, dtype=torch.int32, device="cuda")
                a, w, sa, sw = _grouped_quantized(torch, lens, n, k, recipe, m + n + k)
                fns = {
                    "torch": functools.partial(
                        _torch_grouped, torch, a, w, sa, sw, lens_dev, torch.bfloat16
                    ),
                    "api": functools.partial(
                        gemm_opt.grouped_matmul, a, w, lens_dev, trans_b=True, scale_a=sa,
                        scale_b=sw,
                    ),
                }  # fmt: skip
                chosen = _chosen(sum(lens), n, recipe)
                if chosen != "mid":
                    fns["mid"] = functools.partial(
                        _configured, a, w, sa, sw, "persistent", "mid", lens_dev
                    )
                ref, mag = _grouped_reference(torch, a, w, sa, sw, lens, recipe)
                label = f"G={g} {sum(lens)}x{n}x{k}"
            if fns["torch"]() is None:  # torch takes multiples of 16 only
                del fns["torch"]
            c = fns["api"]()
            err = ((c.double() - ref).abs() / (REL * ref.abs() + ABS * mag)).max().item()
            ok &= err <= 1
            del ref, mag
            res = {}
            for name, fn in fns.items():
                try:
                    res[name] = {"median_ms": benchlib.graph_us(torch, fn, 10, 10) / 1000}
                except Exception as e:  # a capture that fails is reported, not fatal
                    say(f"sweep {label} {recipe} {name}: not captured ({type(e).__name__}: {e})")
            if "api" not in res:
                ok = False
                continue
            base = res["torch"]["median_ms"] if "torch" in res else float("nan")
            rows_m = sum(lens) if g else m
            for name, r in res.items():
                ms = r["median_ms"]
                rows.append({
                    "m": rows_m, "n": n, "k": k, "recipe": recipe, "impl": f"sweep-{name}",
                    "median_ms": round(ms, 5),
                    "tflops": round(benchlib.tflops(rows_m, n, k, ms), 1),
                    "vs_torch": round(base / ms, 3), "torch_recipe": recipe, "shape": label,
                    "config": chosen,
                })  # fmt: skip
            api = res["api"]["median_ms"]
            vs_mid = res["mid"]["median_ms"] / api if "mid" in res else float("nan")
            say(
                f"{'PASS' if err <= 1 else 'FAIL'} sweep {label} {recipe:10s} api={chosen:6s} "
                f"|C-ref|/bound {err:.3f}  {benchlib.tflops(rows_m, n, k, api):7.1f} TFLOP/s "
                f"{base / api:.2f}x torch, {vs_mid:.2f}x mid"
            )
    return rows, ok


def _sweep_markdown(rows: list[dict[str, Any]]) -> str:
    """Geomean and worst of the API against torch per recipe and form, and of the API
    against ``mid`` where it chose another tile."""
    lines = [
        "",
        "| sweep | problems | geomean api / torch | worst api / torch "
        "| geomean api / mid (where api is not mid) |",
        "|---|---|---|---|---|",
    ]
    key = {(r["shape"], r["recipe"], r["impl"]): r for r in rows}
    groups: dict[str, list[tuple[str, str]]] = {}
    for shape, recipe in dict.fromkeys((r["shape"], r["recipe"]) for r in rows):
        form = "grouped" if shape.startswith("G=") else "dense"
        groups.setdefault(f"{form} {recipe}", []).append((shape, recipe))
    for name, probs in groups.items():
        ratios = [
            (key[(s, r, "sweep-api")]["vs_torch"], s)
            for s, r in probs
            if (s, r, "sweep-torch") in key
        ]
        mids = [
            key[(s, r, "sweep-api")]["tflops"] / key[(s, r, "sweep-mid")]["tflops"]
            for s, r in probs
            if (s, r, "sweep-mid") in key
        ]
        geo = math.exp(sum(math.log(x) for x, _ in ratios) / len(ratios)) if ratios else math.nan
        worst = min(ratios, default=(math.nan, "-"))
        gmid = math.exp(sum(math.log(x) for x in mids) / len(mids)) if mids else math.nan
        lines.append(
            f"| {name} | {len(probs)} | {geo:.2f}x | {worst[0]:.2f}x ({worst[1]}) "
            f"| {gmid:.2f}x ({len(mids)}) |"
        )
    return "\n".join(lines) + "\n"


def _markdown(rows: list[dict[str, Any]], gpu: str) -> str:
    lines = [
        f"# FP8 GEMM on {gpu}: gemm-opt beside torch._scaled_mm (bf16 out)",
        "",
        "| M x N x K | recipe | torch TFLOP/s | data-parallel | persistent | best / torch "
        "| other kernels (TFLOP/s) |",
        "|---|---|---|---|---|---|---|",
    ]
    key = {(r["m"], r["n"], r["k"], r["recipe"], r["impl"]): r for r in rows}
    for m, n, k in SHAPES:
        for recipe in RECIPES:
            t, dp, pe = (key[(m, n, k, recipe, i)] for i in ("torch", *SCHEDULES))
            best = max(dp["vs_torch"], pe["vs_torch"])
            torch_recipe = t.get("torch_recipe", recipe)
            mark = "" if torch_recipe == recipe else f" ({torch_recipe})"
            others = ", ".join(
                f"{r['impl']} {r['tflops']} ({r['vs_torch']:.2f}x)"
                for r in rows
                if (r["m"], r["n"], r["k"], r["recipe"]) == (m, n, k, recipe)
                and r["impl"] not in ("torch", *SCHEDULES)
            )
            lines.append(
                f"| {m}x{n}x{k} | {recipe} | {t['tflops']}{mark} | {dp['tflops']} "
                f"| {pe['tflops']} | {best:.2f}x | {others or '-'} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundles", help="bundle folder (holds cuda90/); default: the package's")
    ap.add_argument("--out", type=Path, default=Path("results/fp8"), help="CSV and markdown here")
    ap.add_argument("--reps", type=int, default=20, help="timed samples per kernel")
    ap.add_argument("--warmup", type=int, default=3, help="untimed calls per kernel first")
    ap.add_argument("--skip-speed", action="store_true", help="the correctness checks only")
    ap.add_argument(
        "--sweep", type=int, default=0, help="random problems timed after the tables (default 0)"
    )
    ap.add_argument("--sweep-seed", type=int, default=1, help="the sweep's seed")
    args = ap.parse_args(argv)
    if args.reps < 1 or args.warmup < 0 or args.sweep < 0:
        ap.error("--reps takes a positive count, --warmup and --sweep non-negative ones")
    session = benchlib.cuda_session(ap.prog, args.bundles)
    if session is None:
        return 2
    torch, report, gpu = session
    from gemm_opt.runtime.gemm import KernelMissing

    try:
        ok = check(torch, report)
        ok &= check_configs(torch, report)
        ok &= check_grouped(torch, report)
        rows, grouped, graphs, swept = [], [], [], []
        if not args.skip_speed:
            rows = speed(torch, args.reps, args.warmup, report)
            grouped = speed_grouped(torch, args.reps, args.warmup, report)
            graphs = speed_graphs(torch, report)
            if args.sweep:
                swept, good = speed_sweep(torch, args.sweep, args.sweep_seed, report)
                ok &= good
    except KernelMissing as e:
        print(f"{ap.prog}: error: {e}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    report.write(args.out / "fp8.log")
    if rows:
        with open(args.out / "fp8.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=[*rows[0], "shape", "config"], restval="")
            writer.writeheader()
            writer.writerows(rows + grouped + graphs + swept)
        md = _markdown(rows, gpu) + (_grouped_markdown(grouped) if grouped else "")
        md += _graph_markdown(graphs) if graphs else ""
        md += _sweep_markdown(swept) if swept else ""
        (args.out / "fp8.md").write_text(md)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
