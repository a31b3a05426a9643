#!/usr/bin/env python3
"""The GEMM schedules on the local NVIDIA GPU: correctness suite, then speed next to torch.

One command, torch only (no Triton, no MLIR bindings, no numpy): the kernels
come from the schedule bundles (``python -m gemm_opt.kernels.build_bundles
--target cuda:90 --out DIR`` where the compiler is; ``--bundles DIR`` here)
and run through ``gemm_opt.matmul`` / ``grouped_matmul`` /
``grouped_matmul_variable_k``. Triton is blocked for the whole run.

1. Correctness, every schedule and reduction, fp16 and bf16, against a
   float64 reference. Allowed error, element-wise, from the accumulation:
   ``|c - ref| <= 2 u |ref| + (K + 2) 2^-23 (|A| |B|)`` with u the output
   type's unit roundoff (fp32 sums, one final rounding; plus the type's
   subnormal spacing, where rounding is absolute); atomic stream-K adds
   ``r u (|A| |B|)``, ``r`` the most programs adding into one tile (each
   atomic add into fp16/bf16 C rounds a running sum no larger than |A||B|).
   C starts as NaN (every element must be written; atomic stream-K zeroes
   it itself). Shapes: ragged, K
   smaller than one block, fewer tiles than programs, more programs than K
   iterations, grouped with empty and very unequal groups (forward, dgrad,
   wgrad; an empty group's wgrad must be exactly 0). Linear and tree
   stream-K must be bitwise identical run to run. Then 50 back-to-back
   launches per schedule (no synchronisation between them: stale counters or
   flags would corrupt a later launch) and two streams running different
   shapes at once, ten launches each. Then every operand layout and batch
   form ``matmul`` takes (:data:`LAYOUT_SHAPES`: NT, TN and TT views of
   row-major storage, a sliced leading dimension, a batch folded into M,
   ``bmm`` with row-major and per-batch transposed operands, a broadcast A,
   4-D broadcasting), read as they lie, under ``data-parallel`` (the
   default) and ``auto``, and the backward of ``x @ W.t()``, against
   float64 with the same bound.
2. Speed: ours and ``torch.matmul`` (cuBLAS) / ``torch._grouped_mm`` on the
   issue's shapes, interleaved samples, each after a 256 MiB L2 flush (a read) and a 0.3 ms
   GPU spin (the host's launch cost off the clock: ``host_path.py`` times it), median
   of ``--reps``; TFLOP/s, our/torch ratio, and for the decode shape the
   fraction of the HBM roofline (operand bytes / 3.35 TB/s).

Writes ``correctness.csv``, ``speed.csv``, ``results.md`` and ``env.json``
to ``--out``. Exit 1 if any check fails, 2 on misuse, a missing kernel or no GPU.

    PYTHONPATH=python python3 benchmarks/h100/schedules.py --bundles bundles --out results/schedules
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import benchlib  # noqa: E402

from gemm_opt.core import schedules as S  # noqa: E402
from gemm_opt.kernels import h100_configs as h100  # noqa: E402
from gemm_opt.kernels.h100_configs import GPU_CONFIGS  # noqa: E402

PROG = "schedules.py"
#: torch dtype names, and the kernels' name of each.
SHORT = {framework: name for name, framework in S.DTYPES.items()}
DTYPES = tuple(SHORT)
UNIT_ROUNDOFF = benchlib.UNIT_ROUNDOFF
HBM_BYTES_PER_S = 3.35e12
#: Subnormal spacing of the output types: below the normal range rounding is absolute.
SUBNORMAL = {"float16": 2.0**-24, "bfloat16": 2.0**-133}
#: (schedule, reduction) pairs of the dense API.
DENSE = [
    ("data-parallel", None),
    ("persistent", None),
    ("work-stealing", None),
    ("stream-k", "atomic"),
    ("stream-k", "linear"),
    ("stream-k", "tree"),
]
GROUPED = [(kind, None) for kind in S.GROUPED_KINDS]
#: Correctness shapes (M, N, K): ragged, K < one block, fewer tiles than
#: programs, more programs than K iterations, one tile, a wave and a bit.
CHECK_SHAPES = [
    (257, 129, 300),
    (64, 64, 17),
    (512, 512, 8192),
    (128, 128, 64),
    (1, 1, 1),
    (16, 4096, 7168),
    (1100, 1300, 520),
]
#: Layout correctness shapes (M, N, K): aligned, unaligned (K and N off the
#: 8-element grid), one row.
LAYOUT_SHAPES = [(512, 384, 1024), (257, 129, 100), (300, 200, 136), (1, 4096, 4096)]
#: Batch forms checked: (name, A's shape, B's shape, A per-batch transposed, B
#: per-batch transposed) for M, N, K = 300, 200, 136 and a batch of 4.
BATCH_FORMS = [
    ("folded (4, M, K) @ (K, N)", (4, 300, 136), (136, 200), False, False),
    ("folded NT (4, M, K) @ (N, K).mT", (4, 300, 136), (136, 200), False, True),
    ("bmm", (4, 300, 136), (4, 136, 200), False, False),
    ("bmm NT", (4, 300, 136), (4, 136, 200), False, True),
    ("bmm TN", (4, 300, 136), (4, 136, 200), True, False),
    ("broadcast A (M, K) @ (4, K, N)", (300, 136), (4, 136, 200), False, False),
    ("4-D broadcast (2, 1, M, K) @ (3, K, N)", (2, 1, 300, 136), (3, 136, 200), False, False),
]
#: Grouped correctness cases: (group lengths, N, K).
CHECK_GROUPS = [
    ([0, 300, 0, 1, 77, 0], 200, 96),
    ([1000, 3, 3, 3], 256, 130),
    ([0, 0, 0], 64, 64),
    ([129], 64, 33),
]


def fail(message: str, status: int = 2) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr, flush=True)
    raise SystemExit(status)


# ---- cases (pure: testable without a GPU) ----------------------------------------------


def group_sizes(groups: int, per_group: int, balanced: bool, seed: int) -> list[int]:
    """Rows per expert: balanced, or from weights 0.2 + 0.8 U renormalised (total kept)."""
    total = groups * per_group
    if balanced:
        return [per_group] * groups
    rng = random.Random(seed)
    w = [0.2 + 0.8 * rng.random() for _ in range(groups)]
    s = sum(w)
    lens = [int(total * x / s) for x in w]
    for i in range(total - sum(lens)):  # hand the rounding remainder out round-robin
        lens[i % groups] += 1
    return lens


@dataclass(frozen=True)
class SpeedCase:
    """One timed comparison."""

    name: str
    op: str  # "dense", "fwd", "dgrad", "wgrad"
    m: int
    n: int
    k: int
    schedules: tuple[tuple[str, str | None], ...]
    lens: tuple[int, ...] = ()
    config: dict = field(default_factory=dict, hash=False, compare=False)
    target: str = ""

    @property
    def flops(self) -> float:
        if self.op == "dense":
            return 2.0 * self.m * self.n * self.k
        return 2.0 * sum(self.lens) * self.n * self.k  # every pass is S x N x K MACs


def speed_cases(quick: bool = False) -> list[SpeedCase]:
    """The issue's shapes: skinny/decode dense, large squares, DeepSeek-V3 and gpt-oss MoE."""
    cases = [
        SpeedCase("512x512x8192", "dense", 512, 512, 8192, tuple(DENSE), target=">= 1.5x cuBLAS"),
        SpeedCase(
            "16x4096x7168 (decode)",
            "dense",
            16,
            4096,
            7168,
            tuple(DENSE),
            target=">= 1.5x cuBLAS, >= 80% HBM roofline",
        ),
        SpeedCase(
            "128x7168x2048",
            "dense",
            128,
            7168,
            2048,
            tuple(DENSE),
            target=">= 1.5x cuBLAS",
        ),
    ]
    squares = (4096,) if quick else (4096, 8192)
    for s in squares:
        cases.append(
            SpeedCase(f"{s}^3", "dense", s, s, s, tuple(DENSE[:3]), target="WS, persistent >= DP")
        )
    moe = [
        ("DSv3 GateUP", (16, 32), 2048, 4096, 7168),
        ("DSv3 Down", (16, 32), 2048, 7168, 2048),
        ("gpt-oss-20B GateUP", (4, 32), 2048, 5760, 2880),
        ("gpt-oss-20B Down", (4, 32), 2048, 2880, 2880),
    ]
    for model, gs, per, n, k in moe:
        for g in gs[:1] if quick else gs:
            for balanced in (True,) if quick else (True, False):
                lens = tuple(group_sizes(g, per, balanced, seed=g))
                tag = "balanced" if balanced else "unbalanced"
                for op in ("fwd", "dgrad", "wgrad"):
                    cases.append(
                        SpeedCase(
                            f"{model} G={g} {tag} {op}",
                            op,
                            sum(lens),
                            n,
                            k,
                            tuple(GROUPED),
                            lens=lens,
                            target=">= 1.1x torch._grouped_mm",
                        )
                    )
    return cases


def kernel_names(dtypes: list[str], quick: bool = False) -> list[str]:
    """Every kernel the run launches (checked against the bundles before anything runs)."""
    names = set()
    for dtype in dtypes:
        d = SHORT[dtype]
        for name, config in GPU_CONFIGS.items():  # the API picks one per shape class
            cfg = config.__dict__
            for kind, red in DENSE:
                red = S.resolve_reduction(kind, red)
                if h100.config_serves(name, red):
                    names.add(S.KernelSpec(kind, red, "none", d, **cfg).name)
            for kind, _ in GROUPED:  # forward, dgrad and wgrad: one per shape class too
                for grouped, tb in (("m", False), ("m", True), ("k", False)):
                    names.add(S.KernelSpec(kind, None, grouped, d, **cfg, trans_b=tb).name)
    return sorted(names)


def shape_config(
    m: int,
    n: int,
    sms: int,
    grouped: str = "none",
    trans_b: bool = False,
    reduction=None,
    groups: int = 1,
) -> dict:
    """The configuration the API runs an ``m x n`` output with (no ``config`` given;
    wgrad: ``groups`` outputs of ``m x n``)."""
    name = h100.gpu_config_name(m, n, grouped, sms, reduction, groups=groups)
    return GPU_CONFIGS[name].__dict__


def error_bound(a: Any, b: Any, ref: Any, dtype: str, contributors: int) -> Any:
    """The allowed error of each element (see the module docstring)."""
    k = a.shape[-1]
    mag = a.abs() @ b.abs()
    u = UNIT_ROUNDOFF[dtype]
    atomic = contributors * u * mag if contributors > 1 else 0.0
    return 2 * u * ref.abs() + (k + 2) * 2.0**-23 * mag + atomic + SUBNORMAL[dtype]


def plan_contributors(a: Any, b: Any, schedule: str) -> tuple[int, str]:
    """The most programs adding into one tile when ``gemm_opt.matmul(a, b, schedule=...)``
    runs (1 unless its plan is atomic stream-K), and what it runs: the kernel and the
    route (folded, grouped or per batch). The plan is the one the call made (cached)."""
    from gemm_opt.runtime import plan as P

    kw = dict(reduction=None, num_programs=None, num_xcds=1, config=None, out=None, seed=None)
    plan = P.plan("matmul", a, b, schedule=schedule, **kw)
    spec = plan.sub.spec if plan.sub is not None else plan.spec
    route = "per batch" if plan.sub is not None else "grouped" if spec.grouped == "m" else ""
    what = f"{spec.name}{' ' + route if route else ''}"
    if (spec.kind, spec.reduction) != ("stream-k", "atomic"):
        return 1, what
    sub = plan.sub or plan
    cfg = {f: getattr(spec, f) for f in ("block_m", "block_n", "block_k")}
    rows, n, k = sub.scalars["M"], sub.scalars["N"], sub.scalars["K"]
    return atomic_contributors(rows, n, k, sub.programs, cfg), what


def atomic_contributors(m: int, n: int, k: int, programs: int, cfg: dict) -> int:
    """The most programs adding into one tile under atomic stream-K."""
    tiles = S.tile_count(m, n, cfg["block_m"], cfg["block_n"])
    part = S.stream_k_partition(tiles, S.iters_per_tile(k, cfg["block_k"]), programs)
    return max((len(part.contributors(t)) for t in range(tiles)), default=1)


# ---- correctness -----------------------------------------------------------------------


class Checker:
    """Runs the checks and records one row per check."""

    def __init__(
        self, torch: Any, gemm_opt: Any, sms: int, missing: set[str], device: str = "cuda"
    ) -> None:
        self.torch, self.g, self.sms = torch, gemm_opt, sms
        #: Where the layout checks run ("cpu": the model, for a test of the checks).
        self.device = device
        self.rows: list[dict] = []
        self.missing = missing  # kernels not in the bundles (run with --skip-missing)
        self.skipped: list[str] = []

    def programs(self, dtype: str, cfg: dict) -> int:
        """Programs of an atomic stream-K launch with ``cfg``: the API's default, the
        resident programs (SMs x occupancy), which set how many add into a tile."""
        from gemm_opt.runtime import gemm as rt

        spec = S.KernelSpec("stream-k", "atomic", "none", SHORT[dtype], **cfg)
        return rt.resident_programs(spec, 0)

    def absent(self, dtype: str, kind: str, red: str | None, m: int, n: int, case: str,
               grouped: bool = False, k: int = 0, groups: int = 1) -> bool:  # fmt: skip
        """Whether a kernel the case needs is not bundled (the case is then listed as
        skipped): the one of the ``m x n`` output's class, or with ``grouped`` the
        forward (``m x n``), dgrad (``m x k``) and wgrad (``groups`` of ``k x n``)
        kernels of ``m`` rows."""
        red = S.resolve_reduction(kind, red)
        forms = [("none", False, m, n, 1)]
        if grouped:
            forms = [("m", False, m, n, 1), ("m", True, m, k, 1), ("k", False, k, n, groups)]
        names = [
            S.KernelSpec(
                kind,
                red,
                g,
                SHORT[dtype],
                **shape_config(x, y, self.sms, g, t, red, gs),
                trans_b=t,
            ).name
            for g, t, x, y, gs in forms
        ]
        gone = [n for n in names if n in self.missing]
        if gone:
            self.skipped.append(f"{case} (not built: {', '.join(gone)})")
            print(f"  skip {case}: not built", flush=True)
        return bool(gone)

    def record(self, **row: Any) -> bool:
        self.rows.append(row)
        mark = "ok  " if row["ok"] else "FAIL"
        print(f"  {mark} {row['check']}: {row['case']} {row.get('detail', '')}", flush=True)
        return row["ok"]

    def compare(self, c: Any, a64: Any, b64: Any, dtype: str, contributors: int) -> dict:
        torch = self.torch
        ref = a64 @ b64
        finite = bool(torch.isfinite(c).all())
        if not finite:
            return {"ok": False, "detail": "unwritten (NaN) or non-finite elements"}
        err = (c.double() - ref).abs()
        bound = error_bound(a64, b64, ref, dtype, contributors)
        ok = bool((err <= bound).all())
        worst = float((err / (bound + 1e-300)).max()) if err.numel() else 0.0
        return {"ok": ok, "detail": f"max err/bound {worst:.3f}", "max_abs_err": float(err.max())}

    def operands(self, shape_a, shape_b, dtype, seed):
        torch = self.torch
        gen = torch.Generator(device="cuda").manual_seed(seed)
        dt = getattr(torch, dtype)
        a = torch.randn(*shape_a, device="cuda", generator=gen).to(dt)
        b = torch.randn(*shape_b, device="cuda", generator=gen).to(dt)
        return a, b

    def dense(self, dtype: str) -> None:
        torch, g = self.torch, self.g
        for m, n, k in CHECK_SHAPES:
            cfg_full = shape_config(m, n, self.sms)
            a, b = self.operands((m, k), (k, n), dtype, seed=m + n + k)
            a64, b64 = a.double(), b.double()
            for kind, red in DENSE:
                red_name = S.resolve_reduction(kind, red)
                case = f"{SHORT[dtype]} {m}x{n}x{k} {kind}{'/' + red_name if red_name else ''}"
                if self.absent(dtype, kind, red, m, n, case):
                    continue
                contributors = 1
                if red_name == "atomic":
                    programs = self.programs(dtype, cfg_full)
                    contributors = atomic_contributors(m, n, k, programs, cfg_full)
                out = torch.full((m, n), float("nan"), dtype=a.dtype, device="cuda")
                g.matmul(a, b, schedule=kind, reduction=red, out=out)
                torch.cuda.synchronize()
                res = self.compare(out, a64, b64, dtype, contributors)
                self.record(check="vs float64", case=case, **res)
                if red_name in ("linear", "tree"):
                    again = g.matmul(a, b, schedule=kind, reduction=red)
                    torch.cuda.synchronize()
                    self.record(check="bitwise repeat", case=case, ok=bool(torch.equal(out, again)))

    def stored(self, shape: tuple[int, ...], transposed: bool, dtype: str, seed: int, pad: int = 0):
        """A random operand of ``shape``: a view of row-major storage, transposed (its
        last two dimensions swapped, no copy) when ``transposed``, with ``pad`` more
        elements per stored row than it needs (a sliced leading dimension)."""
        torch = self.torch
        gen = torch.Generator(device=self.device).manual_seed(seed)
        *lead, r, c = shape
        rows, inner = (c, r) if transposed else (r, c)
        store = torch.randn(*lead, rows, inner + pad, device=self.device, generator=gen)
        view = store.to(getattr(torch, dtype))[..., :inner]
        return view.transpose(-2, -1) if transposed else view

    def sync(self) -> None:
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def layouts(
        self, dtype: str, shapes: Any = LAYOUT_SHAPES, forms: Any = BATCH_FORMS, x_shape: Any = None
    ) -> None:
        """Every layout and batch form on CUDA tensors (views, never copied), data-parallel
        and auto, and x @ W^T's backward, against float64 (``shapes``, ``forms`` and
        ``x_shape``: other sizes, for a test of the checks on the model)."""
        from gemm_opt.runtime.gemm import KernelMissing

        g = self.g
        cases = []
        for m, n, k in shapes:
            for layout in ("NN", "NT", "TN", "TT"):
                for pad in (0, 8) if layout != "NN" else (8,):
                    a = self.stored((m, k), layout[0] == "T", dtype, m + k + pad, pad)
                    b = self.stored((k, n), layout[1] == "T", dtype, n + k + pad + 1, pad)
                    lead = f" ld+{pad}" if pad else ""
                    cases.append((f"{m}x{n}x{k} {layout}{lead}", a, b))
        for name, sa, sb, ta, tb in forms:
            a = self.stored(sa, ta, dtype, len(cases))
            b = self.stored(sb, tb, dtype, len(cases) + 1)
            cases.append((name, a, b))
        for label, a, b in cases:
            a64, b64 = a.double(), b.double()
            for schedule in ("data-parallel", "auto"):
                case = f"{SHORT[dtype]} {label} {schedule}"
                try:
                    out = g.matmul(a, b, schedule=schedule)
                    self.sync()
                except KernelMissing as e:
                    self.skipped.append(f"{case} (not built: {str(e).split(chr(39))[1]})")
                    print(f"  skip {case}: not built", flush=True)
                    continue
                count, what = plan_contributors(a, b, schedule)
                res = self.compare(out, a64, b64, dtype, count)
                self.record(check="layout vs float64", case=f"{case} [{what}]", **res)
        self.linear_backward(dtype, *(x_shape or (4, 300, 136, 200)))

    def linear_backward(self, dtype: str, batch: int, m: int, k: int, n: int) -> None:
        """y = x @ W^T on (batch, m, k) activations, W (n, k): dx = dy @ W and
        dW = dy^T x (the transposed kernels on views) against float64."""
        g = self.g
        x = self.stored((batch, m, k), False, dtype, 11).requires_grad_()
        w = self.stored((n, k), False, dtype, 12).requires_grad_()
        dy = self.stored((batch, m, n), False, dtype, 13)
        g.matmul(x, w.t()).backward(dy)
        self.sync()
        x64, w64, dy64 = x.detach().double(), w.detach().double(), dy.double()
        case = f"{SHORT[dtype]} x @ W.t() backward"
        res = self.compare(x.grad, dy64, w64, dtype, 1)
        self.record(check="layout vs float64", case=f"{case} dx", **res)
        rows_x, rows_dy = x64.reshape(-1, k), dy64.reshape(-1, n)
        res = self.compare(w.grad, rows_dy.t(), rows_x, dtype, 1)
        self.record(check="layout vs float64", case=f"{case} dW", **res)

    def grouped(self, dtype: str) -> None:
        torch, g = self.torch, self.g
        for lens, n, k in CHECK_GROUPS:
            s = sum(lens)
            a, w = self.operands((s, k), (len(lens), k, n), dtype, seed=s + n)
            dy, _ = self.operands((s, n), (1, 1), dtype, seed=s + n + 1)
            starts = [sum(lens[:i]) for i in range(len(lens) + 1)]
            for kind, _ in GROUPED:
                case = f"{SHORT[dtype]} lens={lens} N={n} K={k} {kind}"
                if self.absent(dtype, kind, None, s, n, case, True, k, len(lens)):
                    continue
                y = g.grouped_matmul(a, w, lens, schedule=kind)
                dx = g.grouped_matmul(dy, w, lens, trans_b=True, schedule=kind)
                dw = g.grouped_matmul_variable_k(a, dy, lens, schedule=kind)
                torch.cuda.synchronize()
                ok_f = ok_d = ok_w = True
                worst = ""
                for i in range(len(lens)):
                    r = slice(starts[i], starts[i + 1])
                    a64, w64, dy64 = a[r].double(), w[i].double(), dy[r].double()
                    for name, got, x, yy in (
                        ("fwd", y[r], a64, w64),
                        ("dgrad", dx[r], dy64, w64.T),
                        ("wgrad", dw[i], a64.T, dy64),
                    ):
                        res = self.compare(got, x, yy, dtype, 1) if got.numel() else {"ok": True}
                        if not res["ok"]:
                            worst += f" {name}[g={i}] {res['detail']}"
                        ok_f &= res["ok"] or name != "fwd"
                        ok_d &= res["ok"] or name != "dgrad"
                        ok_w &= res["ok"] or name != "wgrad"
                    if lens[i] == 0:
                        ok_w &= bool((dw[i] == 0).all())
                self.record(check="grouped fwd", case=case, ok=ok_f, detail=worst)
                self.record(check="grouped dgrad", case=case, ok=ok_d, detail=worst)
                self.record(check="grouped wgrad (empty groups exactly 0)", case=case, ok=ok_w)

    def back_to_back(self, dtype: str, launches: int = 50) -> None:
        torch, g = self.torch, self.g
        m, n, k = 1100, 1300, 2080
        a, b = self.operands((m, k), (k, n), dtype, seed=7)
        for kind, red in DENSE:
            case = f"{SHORT[dtype]} {m}x{n}x{k} {kind}/{red or '-'} x{launches}"
            if self.absent(dtype, kind, red, m, n, case):
                continue
            outs = [g.matmul(a, b, schedule=kind, reduction=red) for _ in range(launches)]
            torch.cuda.synchronize()
            if red == "atomic":
                cfg = shape_config(m, n, self.sms)
                r = atomic_contributors(m, n, k, self.programs(dtype, cfg), cfg)
                a64, b64 = a.double(), b.double()
                ok = all(self.compare(o, a64, b64, dtype, r)["ok"] for o in outs)
            else:  # deterministic: every launch gives the first one's bits
                ok = all(torch.equal(outs[0], o) for o in outs[1:])
                ok &= self.compare(outs[0], a.double(), b.double(), dtype, 1)["ok"]
            self.record(check="back-to-back launches", case=case, ok=ok)

    def two_streams(self, dtype: str, rounds: int = 10) -> None:
        torch, g = self.torch, self.g
        shapes = [(1100, 1300, 2080), (512, 512, 8192)]
        ops = [self.operands((m, k), (k, n), dtype, seed=m) for m, n, k in shapes]
        streams = [torch.cuda.Stream(), torch.cuda.Stream()]
        torch.cuda.synchronize()
        for kind, red in DENSE:
            case = f"{SHORT[dtype]} {kind}/{red or '-'} x{rounds} on 2 streams"
            if any(self.absent(dtype, kind, red, m, n, case) for m, n, _ in shapes):
                continue
            outs: list[list[Any]] = [[], []]
            for _ in range(rounds):
                for i, st in enumerate(streams):
                    with torch.cuda.stream(st):
                        outs[i].append(g.matmul(*ops[i], schedule=kind, reduction=red))
            torch.cuda.synchronize()
            ok = True
            for i, (m, n, k) in enumerate(shapes):
                a, b = ops[i]
                r = 1
                if red == "atomic":
                    cfg = shape_config(m, n, self.sms)
                    r = atomic_contributors(m, n, k, self.programs(dtype, cfg), cfg)
                for o in outs[i]:
                    ok &= self.compare(o, a.double(), b.double(), dtype, r)["ok"]
            self.record(check="two streams at once", case=case, ok=ok)


# ---- speed -----------------------------------------------------------------------------


def time_case(
    torch: Any, g: Any, case: SpeedCase, dtype: str, reps: int, flush: Any, skip: bool = False
) -> list:
    dt = getattr(torch, dtype)
    gen = torch.Generator(device="cuda").manual_seed(0)
    cfg = case.config or None
    fns: dict[str, Any] = {}
    if case.op == "dense":
        a = torch.randn(case.m, case.k, device="cuda", generator=gen).to(dt)
        b = torch.randn(case.k, case.n, device="cuda", generator=gen).to(dt)
        fns["torch"] = lambda: torch.matmul(a, b)
        for kind, red in case.schedules:
            label = kind + (f"/{red}" if red else "")
            fns[label] = lambda kind=kind, red=red: g.matmul(
                a, b, schedule=kind, reduction=red, config=cfg
            )
    else:
        lens = list(case.lens)
        groups = len(lens)
        offs = torch.tensor(lens, device="cuda", dtype=torch.int32).cumsum(0).to(torch.int32)
        lens_dev = torch.tensor(lens, device="cuda", dtype=torch.int32)
        x = torch.randn(case.m, case.k, device="cuda", generator=gen).to(dt)
        w = torch.randn(groups, case.k, case.n, device="cuda", generator=gen).to(dt)
        dy = torch.randn(case.m, case.n, device="cuda", generator=gen).to(dt)
        if case.op == "fwd":
            fns["torch"] = lambda: torch._grouped_mm(x, w, offs=offs)
            ours = lambda kind: g.grouped_matmul(x, w, lens_dev, schedule=kind)  # noqa: E731
        elif case.op == "dgrad":
            wt = w.transpose(-2, -1)
            fns["torch"] = lambda: torch._grouped_mm(dy, wt, offs=offs)
            ours = lambda kind: g.grouped_matmul(dy, w, lens_dev, trans_b=True, schedule=kind)  # noqa: E731
        else:
            xt = x.t()
            fns["torch"] = lambda: torch._grouped_mm(xt, dy, offs=offs)
            ours = lambda kind: g.grouped_matmul_variable_k(x, dy, lens_dev, schedule=kind)  # noqa: E731
        for kind, _ in case.schedules:
            fns[kind] = lambda kind=kind: ours(kind)
    if skip:  # --skip-missing: leave out the schedules whose kernels are not bundled
        from gemm_opt.runtime.gemm import KernelMissing

        for label in [x for x in fns if x != "torch"]:
            try:
                fns[label]()
            except KernelMissing:
                print(f"  skip {case.name} {label}: not built", flush=True)
                del fns[label]
        if len(fns) == 1:
            return []
    timing = benchlib.bench(fns, reps, warmup=3, flush=flush)
    base = timing["torch"]["median_ms"]
    rows = []
    for label, t in timing.items():
        ms = t["median_ms"]
        row = {
            "case": case.name,
            "dtype": SHORT[dtype],
            "kernel": label,
            "median_ms": round(ms, 4),
            "min_ms": round(t["min_ms"], 4),
            "samples": t["samples"],
            "tflops": round(case.flops / (ms * 1e-3) / 1e12, 1),
            "vs_torch": round(base / ms, 3),
            "target": case.target,
        }
        if label != "torch":  # the configuration the API picked for the shape
            sms = torch.cuda.get_device_properties(0).multi_processor_count
            # The output's shape: dense and fwd (m, n), dgrad (m, k), wgrad G x (k, n).
            grouped = "none" if case.op == "dense" else {"fwd": "m", "dgrad": "m"}.get(case.op, "k")
            m, n = {"dgrad": (case.m, case.k), "wgrad": (case.k, case.n)}.get(
                case.op, (case.m, case.n)
            )
            groups = len(case.lens) if case.lens else 1
            red = label.split("/")[1] if "/" in label else None
            row["config"] = h100.gpu_config_name(m, n, grouped, sms, red, groups=groups)
        if case.op == "dense" and case.m <= 64:
            size = 2 * (case.m * case.k + case.k * case.n + case.m * case.n)
            row["hbm_roofline"] = round(size / HBM_BYTES_PER_S / (ms * 1e-3), 3)
        rows.append(row)
    return rows


# ---- the run ---------------------------------------------------------------------------


def markdown(env: dict, checks: list[dict], speed: list[dict], skipped: list[str]) -> str:
    passed = sum(r["ok"] for r in checks)
    lines = [
        f"# GEMM schedules on {env.get('gpu', '?')}",
        "",
        f"Correctness: {passed} of {len(checks)} checks pass.",
        "",
    ]
    if skipped:
        lines += [f"Skipped ({len(skipped)}, kernels not bundled):", ""]
        lines += [f"- {x}" for x in skipped] + [""]
    failed = [r for r in checks if not r["ok"]]
    if failed:
        lines += ["| failed check | case | detail |", "|---|---|---|"]
        lines += [f"| {r['check']} | {r['case']} | {r.get('detail', '')} |" for r in failed]
        lines.append("")
    if speed:
        lines += [
            "| case | dtype | kernel | median ms | TFLOP/s | vs torch | HBM roofline | target |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in speed:
            roof = f"{r['hbm_roofline']:.0%}" if "hbm_roofline" in r else ""
            lines.append(
                f"| {r['case']} | {r['dtype']} | {r['kernel']} | {r['median_ms']} | "
                f"{r['tflops']} | {r['vs_torch']:.2f} | {roof} | {r['target']} |"
            )
    return "\n".join(lines) + "\n"


def write_csv(path: Path, rows: list[dict]) -> None:
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--bundles", type=Path, required=True, help="bundle root (holds cuda90/*.bundle)"
    )
    parser.add_argument("--out", type=Path, required=True, help="results folder")
    parser.add_argument("--reps", type=int, default=50, help="timed samples per kernel")
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="float16,bfloat16")
    parser.add_argument("--speed-dtypes", default="bfloat16", help="dtypes timed")
    parser.add_argument(
        "--only", choices=("correctness", "speed"), help="run one half of the suite"
    )
    parser.add_argument("--quick", action="store_true", help="fewer speed cases (one G each)")
    parser.add_argument(
        "--skip-missing",
        action="store_true",
        help="run what is bundled and list the rest as skipped (default: refuse to start)",
    )
    args = parser.parse_args(argv)
    for opt in ("dtypes", "speed_dtypes"):
        items = [d for d in getattr(args, opt).split(",") if d]
        if not items or any(d not in DTYPES for d in items):
            parser.error(f"--{opt.replace('_', '-')} takes {', '.join(DTYPES)}")
        setattr(args, opt, items)
    if args.reps < 1:
        parser.error("--reps must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sys.modules["triton"] = None  # type: ignore[assignment]  # our cubins only
    os.environ["GEMM_OPT_BUNDLE_DIR"] = str(args.bundles)
    import torch

    import gemm_opt
    from gemm_opt.runtime import BundleError
    from gemm_opt.runtime import gemm as rt

    try:
        store = rt.store()
        have = store.kernels()
    except BundleError as e:
        fail(str(e))
    need = kernel_names(sorted(set(args.dtypes) | set(args.speed_dtypes)))
    missing = [n for n in need if n not in have]
    if len(missing) == len(need) or (missing and not args.skip_missing):
        fail(
            f"{len(missing)} of {len(need)} kernels are missing from {store.dir} "
            f"(first: {missing[0]}); build them with "
            f"`python -m gemm_opt.kernels.build_bundles --target cuda:90 --out {args.bundles}`"
        )
    if missing:
        print(f"{len(missing)} of {len(need)} kernels are not bundled: skipping what needs them")
    if not torch.cuda.is_available():
        fail("no CUDA GPU visible to torch: this script runs kernels on a GPU")
    cap = torch.cuda.get_device_capability()
    bad = [k.name for k in have.values() if not k.spec.runs_on(cap)]
    if bad:
        fail(f"{bad[0]} is compiled for another GPU; this one is sm_{cap[0]}{cap[1]}")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    env = {
        "gpu": torch.cuda.get_device_name(),
        "capability": f"sm_{cap[0]}{cap[1]}",
        "sms": sms,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "kernels": len(have),
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "env.json").write_text(json.dumps(env, indent=1) + "\n")
    print(f"{env['gpu']} ({env['capability']}, {sms} SMs), {len(have)} kernels", flush=True)

    checker = Checker(torch, gemm_opt, sms, set(missing))
    if args.only != "speed":
        for dtype in args.dtypes:
            for step in ("dense", "grouped", "back_to_back", "two_streams", "layouts"):
                print(f"[correctness] {dtype} {step}", flush=True)
                try:
                    getattr(checker, step)(dtype)
                except Exception as e:  # a crash is a failed check, reported with its case
                    checker.record(check=step, case=dtype, ok=False, detail=repr(e))
        write_csv(args.out / "correctness.csv", checker.rows)
    speed: list[dict] = []
    if args.only != "correctness":
        flush = benchlib.Flusher()
        cases = speed_cases(args.quick)
        for dtype in args.speed_dtypes:
            for i, case in enumerate(cases, 1):
                start = time.perf_counter()
                rows = time_case(torch, gemm_opt, case, dtype, args.reps, flush, args.skip_missing)
                if not rows:
                    continue
                speed += rows
                best = max((r for r in rows if r["kernel"] != "torch"), key=lambda r: r["vs_torch"])
                print(
                    f"[speed {i}/{len(cases)}] {dtype} {case.name}: best {best['kernel']} "
                    f"{best['vs_torch']:.2f}x torch ({time.perf_counter() - start:.1f} s)",
                    flush=True,
                )
        write_csv(args.out / "speed.csv", speed)
    (args.out / "results.md").write_text(markdown(env, checker.rows, speed, checker.skipped))
    failed = sum(not r["ok"] for r in checker.rows)
    print(f"wrote {args.out}; {failed} failed checks", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
