#!/usr/bin/env python3
"""A seeded random sweep of dense GEMMs on the local NVIDIA GPU: ``schedule="auto"`` against
``torch.matmul`` on problems nobody tuned for, every layout and batch form included.

One command, torch only (no Triton, no MLIR bindings, no numpy): the kernels
come from the schedule bundles (``python -m gemm_opt.kernels.build_bundles
--target cuda:90 --out DIR`` where the compiler is; ``--bundles DIR`` here) and
run through ``gemm_opt.matmul(a, b, schedule="auto")``. Triton is blocked for
the whole run.

**Problems.** ``--count`` random problems from ``--seed`` (the same seed gives
the same problems anywhere), then (unless ``--no-suite``) the dense shapes of
the existing suites (``schedules.py``'s speed cases and ``benchlib``'s bench
shapes) in NN, fp16 and bf16 each. A random problem:

- M, N, K log-uniform in [1, 16384], with the share of M = 1 (GEMV) fixed at
  :data:`GEMV_FRACTION` (about what rounding a log-uniform draw gives) so that
  every sweep has some;
- :data:`UNALIGNED_FRACTION` of them unaligned: K or N not a multiple of 8
  elements (16 bytes); the others have both rounded up to multiples of 8 (M is
  free: in TN and TT it is A's leading dimension, the CSV's ``lda``);
- layouts NN, NT, TN, TT a quarter each: the first letter for A, the second for
  B, ``N`` row-major as stored, ``T`` a transposed view of row-major storage
  (``w.t()``: column-major, no copy; ``a @ w.t()`` is NT, what ``nn.Linear``
  computes);
- batch forms by :data:`FORM_SHARES`: 2-D, 3-D A and B, or 3-D A with a 2-D B
  broadcast over the batch (batch log-uniform in [2, 16]);
- fp16 or bf16, half each.
These shares are dealt out in exact proportions (largest remainder), then
shuffled, so every form is present from about 20 problems up.

**Work cap (the rule that keeps the run inside one call).** A random problem
is drawn again while its work (batch x M x N x K) exceeds :data:`MAX_MACS` or
one of A, B, C holds more than :data:`MAX_ELEMENTS` elements (2 GiB as the
float64 reference). The suite runs as it is (its largest, 8192^3, is 2^39).
Each problem takes ``--reps`` timed samples of each side (a sample costs about
0.4 ms of flush and spin besides the kernel), and once ``--budget-s`` seconds
have passed no new problem starts (the rest are listed ``not run``).

**Each problem.** ``gemm_opt.matmul(a, b, schedule="auto")`` on CUDA tensors.
Every layout and batch form runs as it lies (the plan picks the transposed
kernels, folds a broadcast batch into M, runs back-to-back batches as one
grouped launch, others batch by batch: ``docs/api.md``). A ``ValueError`` or
``TypeError`` (the API's word on input it does not take) is recorded as
``refused`` with its message's first line, a kernel the bundles lack as
``missing``; the sweep goes on. A result is checked against float64 with
``schedules.py``'s element-wise bound (:func:`schedules.error_bound`, counting
the programs that add into a tile when the call's plan is atomic stream-K:
:func:`schedules.plan_contributors`); the CSV's ``choice`` is the kernel the
plan runs and its route. Just before the call a NaN tensor
of the output's size is freed to the caching allocator, whose best fit for
the call's C is that block: unwritten elements show as NaN (else as another
problem's data, which fails the bound too). Then ours and ``torch.matmul``
on the same views are timed interleaved, each sample after a 256 MiB L2 flush
(``benchlib.bench``); ratio = torch's median / ours (above 1: ours is faster).

**Classes.** Each problem gets one shape class from (M, N, K), first match
wins (:func:`classify`): ``gemv`` (M = 1); ``unaligned`` (K or N not a
multiple of 8); ``small`` (M N K < 2^27, under 512^3); ``large-square`` (each
of M, N, K >= 2048 and the largest at most 4x the smallest); ``short-k`` (K <=
1024 and M N >= 2^24: a very large output); ``long-k`` (K >= 4096 and K >= 2
min(M, N): tall panels, few output tiles per K step); ``medium`` (the rest).
Layout and batch form are the other axes: ``sweep.md`` also summarises each
layout, batch form and dtype, and ``transposed`` (NT, TN, TT) and ``batched``
(3-D, broadcast) as groups.

**Pairs** (unless ``--no-pairs``, before the random problems): the same
problem in each layout, and batched next to one flat call of the same total
size, timed interleaved in one ``benchlib.bench`` call (:data:`PAIR_SHAPES`,
:data:`BATCH_PAIRS`): the targets are transposed layouts within 3% of NN
(``NN time / layout time >= 0.97``) and a batch within 3% of the flat call.

Writes ``sweep.csv`` (every problem), ``pairs.csv`` (the pairs), ``sweep.md``
(per class: count, refused, geomean and worst ratio of the timed problems;
overall; the problems of at least 2^33 multiply-adds; the pair tables; the
command) and ``sweep.png`` (ratio over flops, by class) when matplotlib
imports (else ``plot_results.py --sweep sweep.csv`` draws it where it does).
Exit 1 on a wrong result or a crash of a call (or of a pair), 2 on misuse,
missing bundles or no GPU; a refusal is not a failure.

    PYTHONPATH=python python3 benchmarks/h100/sweep.py --bundles bundles --out results/sweep
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import random
import re
import shlex
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import benchlib  # noqa: E402
import schedules as suite  # noqa: E402

PROG = "sweep.py"
#: The largest M, N and K drawn.
MAX_DIM = 16384
#: Elements an aligned K or N is a multiple of (16 bytes of fp16/bf16).
ALIGN_ELEMENTS = 8
#: Share of random problems with K or N not a multiple of :data:`ALIGN_ELEMENTS`.
UNALIGNED_FRACTION = 0.3
#: Share of random problems with M = 1.
GEMV_FRACTION = 0.05
#: Batch sizes of the batched forms (log-uniform).
BATCH_RANGE = (2, 16)
#: Most multiply-adds (batch x M x N x K) of one random problem.
MAX_MACS = 2**38
#: Most elements of one operand or output of a random problem.
MAX_ELEMENTS = 2**28
#: Problems of at least this many multiply-adds are listed on their own (the large ones).
BIG_MACS = 2**33
#: Bounds of the shape classes (see :func:`classify`).
SMALL_MACS = 2**27
LARGE_DIM = 2048
SQUARE_SPREAD = 4
SHORT_K = 1024
LARGE_OUTPUT = 2**24
LONG_K = 4096
#: Warm-up calls of each side before the timed samples.
WARMUP = 3
#: Layout pairs: (M, N, K) timed in NN, NT, TN and TT, each dtype.
PAIR_SHAPES = [(4096, 4096, 4096), (8192, 8192, 1024), (2048, 2048, 8192), (16, 4096, 7168)]
#: Batch pairs: (batch, M, N, K) timed batched (3-D x 3-D and 3-D x 2-D) and as one flat
#: (batch x M, K) @ (K, N) call.
BATCH_PAIRS = [
    (8, 512, 4096, 4096),
    (16, 256, 4096, 1024),
    (4, 2048, 2048, 2048),
    (32, 128, 1024, 1024),
]
#: The pairs' target: a transposed layout or a batch within 3% of NN or the flat call.
PAIR_TARGET = 0.97


class Layout(StrEnum):
    """Major order of A and B: ``N`` row-major as stored, ``T`` a transposed view."""

    NN = "NN"
    NT = "NT"
    TN = "TN"
    TT = "TT"

    @property
    def a_transposed(self) -> bool:
        return self.value[0] == "T"

    @property
    def b_transposed(self) -> bool:
        return self.value[1] == "T"


class Form(StrEnum):
    """How a problem is batched: not at all, A and B 3-D, or a 2-D B broadcast over A's batch."""

    PLAIN = "2-D"
    BATCHED = "3-D"
    BROADCAST = "3-D x 2-D"


#: Share of each batch form among the random problems.
FORM_SHARES = {Form.PLAIN: 3, Form.BATCHED: 1, Form.BROADCAST: 1}


class Shape(StrEnum):
    """Shape classes, in the order :func:`classify` tries them."""

    GEMV = "gemv"
    UNALIGNED = "unaligned"
    SMALL = "small"
    LARGE_SQUARE = "large-square"
    SHORT_K = "short-k"
    LONG_K = "long-k"
    MEDIUM = "medium"


class Outcome(StrEnum):
    """What became of a problem."""

    OK = "ok"
    REFUSED = "refused"  # the API raised ValueError/TypeError: input it does not take
    MISSING = "missing"  # no bundle holds the kernel auto picked
    WRONG = "wrong"  # outside the error bound, or unwritten elements
    ERROR = "error"  # any other exception: a crash
    NOT_RUN = "not run"  # the time budget ran out first


#: Outcomes that fail the run.
FAILURES = (Outcome.WRONG, Outcome.ERROR)


@dataclass(frozen=True)
class Problem:
    """One GEMM: C = A @ B with A (batch, M, K) or (M, K) and B (batch, K, N) or (K, N)."""

    name: str
    m: int
    n: int
    k: int
    dtype: str  # torch dtype name
    layout: Layout = Layout.NN
    form: Form = Form.PLAIN
    batch: int = 1

    @property
    def macs(self) -> int:
        return self.batch * self.m * self.n * self.k

    @property
    def unaligned(self) -> bool:
        return bool(self.k % ALIGN_ELEMENTS or self.n % ALIGN_ELEMENTS)

    @property
    def a_shape(self) -> tuple[int, ...]:
        lead = () if self.form is Form.PLAIN else (self.batch,)
        return (*lead, self.m, self.k)

    @property
    def b_shape(self) -> tuple[int, ...]:
        lead = (self.batch,) if self.form is Form.BATCHED else ()
        return (*lead, self.k, self.n)

    @property
    def out_shape(self) -> tuple[int, ...]:
        lead = () if self.form is Form.PLAIN else (self.batch,)
        return (*lead, self.m, self.n)

    @property
    def lda(self) -> int:
        """A's leading dimension: K row-major, M column-major."""
        return self.m if self.layout.a_transposed else self.k

    @property
    def ldb(self) -> int:
        return self.k if self.layout.b_transposed else self.n

    @property
    def largest_elements(self) -> int:
        return max(math.prod(s) for s in (self.a_shape, self.b_shape, self.out_shape))


# ---- problems (pure: testable without a GPU) -------------------------------------------


def log_uniform(rng: random.Random, lo: int, hi: int) -> int:
    """An integer in [lo, hi], its logarithm uniform."""
    return min(hi, max(lo, round(math.exp(rng.uniform(math.log(lo), math.log(hi))))))


def dealt(rng: random.Random, shares: dict[Any, int], count: int) -> list[Any]:
    """``count`` values in the proportions of ``shares`` (largest remainder), shuffled."""
    total = sum(shares.values())
    exact = {v: count * w / total for v, w in shares.items()}
    got = {v: math.floor(x) for v, x in exact.items()}
    by_remainder = sorted(shares, key=lambda v: got[v] - exact[v])  # largest remainder first
    for v in by_remainder[: count - sum(got.values())]:
        got[v] += 1
    out = [v for v in shares for _ in range(got[v])]
    rng.shuffle(out)
    return out


def aligned_up(x: int) -> int:
    return -(-x // ALIGN_ELEMENTS) * ALIGN_ELEMENTS


def within_caps(p: Problem) -> bool:
    """The work cap of random problems (module docstring)."""
    return p.macs <= MAX_MACS and p.largest_elements <= MAX_ELEMENTS


def random_problems(seed: int, count: int) -> list[Problem]:
    """The sweep's random problems (module docstring); the same for the same arguments."""
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    rng = random.Random(seed)
    layouts = dealt(rng, dict.fromkeys(Layout, 1), count)
    forms = dealt(rng, FORM_SHARES, count)
    dtypes = dealt(rng, dict.fromkeys(benchlib.DTYPES, 1), count)
    unaligned = dealt(rng, {True: UNALIGNED_FRACTION, False: 1 - UNALIGNED_FRACTION}, count)
    gemv = dealt(rng, {True: GEMV_FRACTION, False: 1 - GEMV_FRACTION}, count)
    problems = []
    for i in range(count):
        while True:
            m = 1 if gemv[i] else log_uniform(rng, 2, MAX_DIM)
            n, k = log_uniform(rng, 1, MAX_DIM), log_uniform(rng, 1, MAX_DIM)
            if unaligned[i]:
                if not (n % ALIGN_ELEMENTS or k % ALIGN_ELEMENTS):  # nudge one off the grid
                    if rng.random() < 0.5:
                        n += 1 if n < MAX_DIM else -1
                    else:
                        k += 1 if k < MAX_DIM else -1
            else:
                n, k = aligned_up(n), aligned_up(k)
            batch = 1 if forms[i] is Form.PLAIN else log_uniform(rng, *BATCH_RANGE)
            p = Problem(f"r{i:03d}", m, n, k, dtypes[i], layouts[i], forms[i], batch)
            if within_caps(p):
                problems.append(p)
                break
    return problems


def suite_problems() -> list[Problem]:
    """The dense shapes of ``schedules.py``'s speed cases and of ``benchlib``'s suite
    (each once), NN, in each dtype."""
    shapes: dict[tuple[int, int, int], str] = {}
    for case in suite.speed_cases():
        if case.op == "dense":
            shapes.setdefault((case.m, case.n, case.k), case.name)
    for m, n, k in benchlib.BENCH_SHAPES:
        shapes.setdefault((m, n, k), f"{m}x{n}x{k}")
    return [
        Problem(f"suite {name}", m, n, k, dtype)
        for dtype in benchlib.DTYPES
        for (m, n, k), name in shapes.items()
    ]


def classify(p: Problem) -> Shape:
    """The shape class of ``p`` (module docstring), from M, N and K alone."""
    m, n, k = p.m, p.n, p.k
    if m == 1:
        return Shape.GEMV
    if n % ALIGN_ELEMENTS or k % ALIGN_ELEMENTS:
        return Shape.UNALIGNED
    if m * n * k < SMALL_MACS:
        return Shape.SMALL
    if min(m, n, k) >= LARGE_DIM and max(m, n, k) <= SQUARE_SPREAD * min(m, n, k):
        return Shape.LARGE_SQUARE
    if k <= SHORT_K and m * n >= LARGE_OUTPUT:
        return Shape.SHORT_K
    if k >= LONG_K and k >= 2 * min(m, n):
        return Shape.LONG_K
    return Shape.MEDIUM


class Operands(NamedTuple):
    """A and B in the problem's layout, and the tensors whose storage they view."""

    a: Any
    b: Any
    a_store: Any
    b_store: Any


def operands(torch: Any, p: Problem, device: str, seed: int) -> Operands:
    """Random normal A and B of ``p``: row-major storage, viewed transposed (no copy)
    for a ``T`` operand."""
    gen = torch.Generator(device=device).manual_seed(seed)
    dt = getattr(torch, p.dtype)

    def make(shape: tuple[int, ...], transposed: bool) -> tuple[Any, Any]:
        stored = (*shape[:-2], shape[-1], shape[-2]) if transposed else shape
        store = torch.randn(*stored, generator=gen, device=device).to(dt)
        return (store.transpose(-2, -1) if transposed else store), store

    a, a_store = make(p.a_shape, p.layout.a_transposed)
    b, b_store = make(p.b_shape, p.layout.b_transposed)
    return Operands(a, b, a_store, b_store)


# ---- the summary (pure) ----------------------------------------------------------------


def geomean(values: Iterable[float]) -> float:
    vals = list(values)
    if not vals or min(vals) <= 0:
        raise ValueError(f"geomean needs positive values, got {vals[:3]}")
    return math.exp(sum(map(math.log, vals)) / len(vals))


def timed_rows(rows: Iterable[dict]) -> list[dict]:
    """The rows with a ratio: those that ran and were correct (outcome ``ok``)."""
    return [r for r in rows if r["outcome"] == Outcome.OK]


def summarize(rows: Sequence[dict]) -> dict[str, Any]:
    """Count, outcomes, and geomean and worst ratio of the timed problems of ``rows``."""
    timed = timed_rows(rows)
    out: dict[str, Any] = {
        "count": len(rows),
        "timed": len(timed),
        **{o.value: sum(r["outcome"] == o for r in rows) for o in Outcome if o is not Outcome.OK},
        "geomean": None,
        "worst": None,
        "worst_problem": "",
    }
    if timed:
        worst = min(timed, key=lambda r: r["ratio"])
        out.update(
            geomean=geomean(r["ratio"] for r in timed),
            worst=worst["ratio"],
            worst_problem=worst["name"],
        )
    return out


def groups(rows: Sequence[dict]) -> dict[str, list[dict]]:
    """The rows of each shape class, then of each layout, batch form and dtype, and the
    ``transposed`` and ``batched`` groups (a problem is in several)."""
    out: dict[str, list[dict]] = {s.value: [r for r in rows if r["class"] == s] for s in Shape}
    out |= {f"layout {x}": [r for r in rows if r["layout"] == x] for x in Layout}
    out["transposed"] = [r for r in rows if r["layout"] != Layout.NN]
    out |= {f"form {x}": [r for r in rows if r["form"] == x] for x in Form}
    out["batched"] = [r for r in rows if r["form"] != Form.PLAIN]
    out |= {dt: [r for r in rows if r["dtype"] == dt] for dt in benchlib.DTYPES}
    return out


def _ratio(x: float | None) -> str:
    return "" if x is None else f"{x:.2f}"


def markdown(
    rows: Sequence[dict],
    env: dict,
    command: str,
    png: str | None = None,
    pairs: Sequence[dict] = (),
) -> str:
    """``sweep.md``: per-class and overall summaries, the large problems, the pair tables,
    failures, refusals (and the plot ``png``, where there is one)."""
    total = summarize(rows)
    lines = [
        f'# `schedule="auto"` vs `torch.matmul`: a random sweep on {env.get("gpu", "?")}',
        "",
        f"{env.get('date', '')}; torch {env.get('torch', '?')}, CUDA {env.get('cuda', '?')}, "
        f"{env.get('kernels', '?')} kernels. Command:",
        "",
        f"    {command}",
        "",
        "Ratio = torch median / ours (above 1: ours faster), over the problems that ran and "
        "were correct (timed).",
        "",
        f"**Overall**: {total['count']} problems, {total['timed']} timed, "
        f"{total['refused']} refused, {total['missing']} missing kernels, "
        f"{total['wrong']} wrong, {total['error']} errors, {total['not run']} not run; "
        f"geomean {_ratio(total['geomean'])}, worst {_ratio(total['worst'])} "
        f"({total['worst_problem'] or '-'}).",
        "",
        "| group | problems | refused | failed | timed | geomean | worst | worst problem |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, members in groups(rows).items():
        if not members:
            continue
        s = summarize(members)
        lines.append(
            f"| {name} | {s['count']} | {s['refused']} | {s['wrong'] + s['error']} | "
            f"{s['timed']} | "
            f"{_ratio(s['geomean'])} | {_ratio(s['worst'])} | {s['worst_problem']} |"
        )
    big = [r for r in rows if r["macs"] >= BIG_MACS]
    big_timed = timed_rows(big)
    lines += [
        "",
        f"**Problems of at least 2^33 multiply-adds** (batch x M x N x K): {len(big)}, "
        f"{len(big_timed)} timed, min ratio "
        f"{_ratio(min((r['ratio'] for r in big_timed), default=None)) or '-'}.",
        "",
    ]
    if big:
        lines += ["| problem | shape | layout | form | dtype | outcome | ratio |"]
        lines += ["|---|---|---|---|---|---|---|"]
        lines += [
            f"| {r['name']} | {shape_text(r)} | {r['layout']} | {r['form']} | {r['dtype']} | "
            f"{r['outcome']} | {_ratio(r.get('ratio'))} |"
            for r in big
        ]
        lines.append("")
    lines += pair_markdown(pairs)
    if png:
        lines += [f"![ratio over the problems, by class]({png})", ""]
    bad = [r for r in rows if r["outcome"] in FAILURES]
    if bad:
        lines += ["**Failures**:", ""]
        lines += [f"- {r['name']} {shape_text(r)}: {r['outcome']}: {r['detail']}" for r in bad]
        lines.append("")
    refusals: dict[str, list[dict]] = {}
    for r in rows:
        if r["outcome"] in (Outcome.REFUSED, Outcome.MISSING):
            refusals.setdefault(message_kind(r["detail"]), []).append(r)
    if refusals:
        lines += ["**Refusals and missing kernels** (first line of one message of each kind):"]
        lines.append("")
        for members in sorted(refusals.values(), key=lambda x: -len(x)):
            lines.append(f"- {len(members)}x ({members[0]['name']}): {members[0]['detail']}")
        lines.append("")
    return "\n".join(lines)


def message_kind(text: str) -> str:
    """A message with its numbers blanked: the refusals of one rule, whatever the shapes."""
    return re.sub(r"0x[0-9a-f]+|\d+", "#", text)


def shape_text(row: dict) -> str:
    lead = f"{row['batch']}x" if row["form"] != Form.PLAIN else ""
    return f"{lead}{row['m']}x{row['n']}x{row['k']}"


def base_row(p: Problem) -> dict[str, Any]:
    """The CSV fields that describe ``p`` (the measured ones follow)."""
    return {
        "name": p.name,
        "m": p.m,
        "n": p.n,
        "k": p.k,
        "batch": p.batch,
        "form": p.form.value,
        "layout": p.layout.value,
        "dtype": p.dtype,
        "lda": p.lda,
        "ldb": p.ldb,
        "unaligned": p.unaligned,
        "class": classify(p).value,
        "macs": p.macs,
        "outcome": Outcome.NOT_RUN.value,
        "detail": "",
        "choice": "",
        "err_over_bound": None,
        "ours_us": None,
        "torch_us": None,
        "ratio": None,
    }


# ---- the GPU side ----------------------------------------------------------------------


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"


def check(torch: Any, c: Any, ops: Operands, p: Problem, count: int) -> tuple[bool, float, str]:
    """(within the bound everywhere, max |c - ref| / bound, what is wrong)."""
    if tuple(c.shape) != p.out_shape:
        return False, math.inf, f"shape {tuple(c.shape)}, expected {p.out_shape}"
    if not bool(torch.isfinite(c).all()):
        return False, math.inf, "unwritten (NaN) or non-finite elements"
    a64, b64 = ops.a.double(), ops.b.double()
    ref = a64 @ b64
    bound = suite.error_bound(a64, b64, ref, p.dtype, count)
    ratio = float(((c.double() - ref).abs() / bound).max())
    return ratio <= 1.0, ratio, "" if ratio <= 1.0 else f"max err/bound {ratio:.3g}"


def run_problem(
    torch: Any,
    g: Any,
    p: Problem,
    seed: int,
    reps: int,
    flush: Any,
    device: str = "cuda",
) -> dict[str, Any]:
    """Check and time one problem; a refusal or a missing kernel is recorded, not raised."""
    from gemm_opt.runtime.gemm import KernelMissing

    row = base_row(p)
    ops = operands(torch, p, device, seed)
    poison = torch.full(p.out_shape, float("nan"), dtype=ops.a.dtype, device=device)
    del poison  # its block goes back to the allocator, which hands it to the call's C
    try:
        c = g.matmul(ops.a, ops.b, schedule="auto")
        torch.cuda.synchronize()
    except KernelMissing as e:
        return {**row, "outcome": Outcome.MISSING.value, "detail": first_line(e)}
    except (ValueError, TypeError) as e:
        return {**row, "outcome": Outcome.REFUSED.value, "detail": first_line(e)}
    count, row["choice"] = suite.plan_contributors(ops.a, ops.b, "auto")
    ok, ratio, why = check(torch, c, ops, p, count)
    row["err_over_bound"] = round(ratio, 4) if math.isfinite(ratio) else ratio
    del c
    if not ok:
        return {**row, "outcome": Outcome.WRONG.value, "detail": why}
    a, b = ops.a, ops.b
    fns: dict[str, Callable[[], Any]] = {
        "ours": lambda: g.matmul(a, b, schedule="auto"),
        "torch": lambda: torch.matmul(a, b),
    }
    t = benchlib.bench(fns, reps, warmup=WARMUP, flush=flush)
    ours, ref = t["ours"]["median_ms"] * 1e3, t["torch"]["median_ms"] * 1e3
    return {
        **row,
        "outcome": Outcome.OK.value,
        "ours_us": round(ours, 2),
        "torch_us": round(ref, 2),
        "ratio": round(ref / ours, 4),
    }


# ---- pairs: layouts against NN, batches against one flat call -------------------------


class Pair(NamedTuple):
    """Problems timed side by side: ``variants`` by name, ``base`` among them the one
    each other is compared with (``NN``, or ``flat``)."""

    kind: str  # "layout" or "batch"
    label: str
    dtype: str
    base: str
    variants: dict[str, Problem]


def pair_problems() -> list[Pair]:
    """The pairs (module docstring): each :data:`PAIR_SHAPES` in the four layouts and
    each :data:`BATCH_PAIRS` batched, broadcast and flat, in each dtype."""
    out = []
    for dtype in benchlib.DTYPES:
        for m, n, k in PAIR_SHAPES:
            label = f"{m}x{n}x{k}"
            variants = {x.value: Problem(f"pair {label} {x}", m, n, k, dtype, x) for x in Layout}
            out.append(Pair("layout", label, dtype, Layout.NN.value, variants))
        for b, m, n, k in BATCH_PAIRS:
            label = f"{b}x{m}x{n}x{k}"
            variants = {
                "flat": Problem(f"pair {label} flat", b * m, n, k, dtype),
                **{
                    f.value: Problem(f"pair {label} {f}", m, n, k, dtype, Layout.NN, f, b)
                    for f in (Form.BATCHED, Form.BROADCAST)
                },
            }
            out.append(Pair("batch", label, dtype, "flat", variants))
    return out


def pair_row(pair: Pair) -> dict[str, Any]:
    """The fields that name a pair in ``pairs.csv`` (the measured ones follow)."""
    return {
        "kind": pair.kind,
        "problem": pair.label,
        "dtype": pair.dtype,
        "base": pair.base,
        "outcome": Outcome.OK.value,
        "detail": "",
    }


def run_pair(
    torch: Any, g: Any, pair: Pair, seed: int, reps: int, flush: Any, device: str = "cuda"
) -> dict[str, Any]:
    """Check each variant of ``pair`` once against float64, then time them and
    ``torch.matmul`` of the base interleaved: ``<variant>_us`` and
    ``<variant>_vs_base`` (base time / variant time: at least :data:`PAIR_TARGET`
    meets the target)."""
    row = pair_row(pair)
    ops = {
        v: operands(torch, p, device, seed + i) for i, (v, p) in enumerate(pair.variants.items())
    }
    for v, p in pair.variants.items():
        o = ops[v]
        c = g.matmul(o.a, o.b, schedule="auto")
        if device == "cuda":
            torch.cuda.synchronize()
        count, row[f"{v}_choice"] = suite.plan_contributors(o.a, o.b, "auto")
        ok, _, why = check(torch, c, o, p, count)
        if not ok:
            return {**row, "outcome": Outcome.WRONG.value, "detail": f"{v}: {why}"}
    fns: dict[str, Callable[[], Any]] = {
        v: (lambda o=o: g.matmul(o.a, o.b, schedule="auto")) for v, o in ops.items()
    }
    base = ops[pair.base]
    fns["torch"] = lambda: torch.matmul(base.a, base.b)
    t = benchlib.bench(fns, reps, warmup=WARMUP, flush=flush)
    us = {v: t[v]["median_ms"] * 1e3 for v in fns}
    for v in fns:
        row[f"{v}_us"] = round(us[v], 2)
        row[f"{v}_vs_base"] = round(us[pair.base] / us[v], 4)
    return row


def pair_markdown(pairs: Sequence[dict]) -> list[str]:
    """The two pair tables of ``sweep.md``."""
    lines: list[str] = []
    for kind, title, base, others in (
        ("layout", "Layouts against NN", "NN", ("NT", "TN", "TT")),
        ("batch", "Batches against one flat call of the same size", "flat",
         (Form.BATCHED.value, Form.BROADCAST.value)),
    ):  # fmt: skip
        rows = [r for r in pairs if r["kind"] == kind]
        if not rows:
            continue
        ok = [r for r in rows if r["outcome"] == Outcome.OK]
        met = sum(r[f"{v}_vs_base"] >= PAIR_TARGET for r in ok for v in others)
        lines += [
            f"**{title}** ({base} time / time: at least {PAIR_TARGET} meets the target; "
            f"{met} of {len(ok) * len(others)} do; torch: torch.matmul's {base} against ours):",
            "",
            f"| problem | dtype | {base} us | {' | '.join(others)} | torch |",
            "|---|---|---|" + "---|" * (len(others) + 1),
        ]
        for r in rows:
            if r["outcome"] != Outcome.OK:
                lines.append(f"| {r['problem']} | {r['dtype']} | {r['outcome']}: {r['detail']} |")
                continue
            cells = " | ".join(_ratio(r[f"{v}_vs_base"]) for v in others)
            lines.append(
                f"| {r['problem']} | {r['dtype']} | {r[f'{base}_us']} | {cells} | "
                f"{_ratio(r['torch_vs_base'])} |"
            )
        lines.append("")
    return lines


def plot(rows: Sequence[dict], path: Path) -> str | None:
    """``sweep.png``: the ratio of each timed problem over its flops (log-log), one color
    per shape class. None when written, else why not (no matplotlib, nothing timed)."""
    timed = timed_rows(rows)
    if not timed:
        return "nothing was timed"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return f"matplotlib is not importable ({e})"
    fig, ax = plt.subplots(figsize=(10, 5.5))
    for cls in Shape:
        pts = [r for r in timed if r["class"] == cls]
        if pts:
            xs = [2.0 * r["macs"] for r in pts]
            ax.scatter(xs, [r["ratio"] for r in pts], s=18, label=f"{cls} ({len(pts)})")
    ax.set_xscale("log")
    ax.set_yscale("log", base=2)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.axhline(0.9, color="gray", lw=0.8, ls="--")
    ax.set_xlabel("FLOP per call (2 x batch x M x N x K)")
    ax.set_ylabel("torch.matmul time / ours (above 1: ours faster)")
    ax.set_title(f"schedule=\"auto\" vs torch.matmul, {len(timed)} problems, geomean "
                 f"{geomean(r['ratio'] for r in timed):.2f}")  # fmt: skip
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


def write_csv(path: Path, rows: Sequence[dict], fields: Sequence[str] | None = None) -> None:
    """``rows`` as CSV: the problem rows' fields, or ``fields`` (default: every key of
    ``rows``, in first-seen order)."""
    if fields is None and rows and "kind" in rows[0]:
        fields = list(dict.fromkeys(key for r in rows for key in r))
    names = fields or list(base_row(Problem("", 1, 1, 1, "float16")))
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=names, restval="")
        writer.writeheader()
        writer.writerows(rows)


def fail(message: str, status: int = 2) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr, flush=True)
    raise SystemExit(status)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--bundles", type=Path, required=True, help="bundle root (holds cuda90/*.bundle)"
    )
    parser.add_argument("--out", type=Path, required=True, help="results folder")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random problems")
    parser.add_argument("--count", type=int, default=200, help="random problems")
    parser.add_argument("--reps", type=int, default=30, help="timed samples per side")
    parser.add_argument(
        "--budget-s", type=float, default=420.0, help="start no problem after this many seconds"
    )
    parser.add_argument("--no-suite", action="store_true", help="random problems only")
    parser.add_argument("--no-pairs", action="store_true", help="skip the layout and batch pairs")
    args = parser.parse_args(argv)
    if args.count < 1:
        parser.error("--count must be at least 1")
    if args.reps < 1:
        parser.error("--reps must be at least 1")
    if not args.budget_s > 0:
        parser.error("--budget-s must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    given = sys.argv[1:] if argv is None else argv
    command = shlex.join(["PYTHONPATH=python", "python3", "benchmarks/h100/sweep.py", *given])
    sys.modules["triton"] = None  # type: ignore[assignment]  # our cubins only
    os.environ["GEMM_OPT_BUNDLE_DIR"] = str(args.bundles)
    import torch

    import gemm_opt
    from gemm_opt.runtime import BundleError
    from gemm_opt.runtime import gemm as rt

    try:
        have = rt.store().kernels()
    except BundleError as e:
        fail(str(e))
    if not have:
        fail(
            f"no kernels in {rt.store().dir}; build them with "
            f"`python -m gemm_opt.kernels.build_bundles --target cuda:90 --out {args.bundles}`"
        )
    if not torch.cuda.is_available():
        fail("no CUDA GPU visible to torch: this script runs kernels on a GPU")
    try:
        rt.device_target(torch, 0)  # a GPU gemm-opt has kernels for
    except RuntimeError as e:
        fail(str(e))
    sms = rt.sm_count(torch, 0)
    cap = torch.cuda.get_device_capability()
    bad = [k.name for k in have.values() if not k.spec.runs_on(cap)]
    if bad:
        fail(f"{bad[0]} is compiled for another GPU; this one is sm_{cap[0]}{cap[1]}")
    env = {
        "gpu": torch.cuda.get_device_name(),
        "capability": f"sm_{cap[0]}{cap[1]}",
        "sms": sms,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "kernels": len(have),
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
    }
    problems = ([] if args.no_suite else suite_problems()) + random_problems(args.seed, args.count)
    print(f"{env['gpu']} ({env['capability']}, {sms} SMs), {len(have)} kernels; "
          f"{len(problems)} problems", flush=True)  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    flush = benchlib.Flusher()
    pairs: list[dict] = []
    for i, pair in enumerate([] if args.no_pairs else pair_problems()):
        try:
            row = run_pair(torch, gemm_opt, pair, args.seed * 7919 + 10 * i, args.reps, flush)
        except Exception as e:  # a refusal, a missing kernel or a crash: listed with the pair
            row = {**pair_row(pair), "outcome": Outcome.ERROR.value, "detail": first_line(e)}
        pairs.append(row)
        others = [v for v in pair.variants if v != pair.base]
        said = ", ".join(f"{v} {row[f'{v}_vs_base']:.3f}" for v in others if f"{v}_vs_base" in row)
        print(f"[pair {i + 1}] {pair.kind} {pair.label} {pair.dtype}: {row['outcome']} "
              f"{said or row['detail']}", flush=True)  # fmt: skip
        torch.cuda.empty_cache()
    if pairs:
        write_csv(args.out / "pairs.csv", pairs)
    rows: list[dict] = []
    start = time.perf_counter()
    alive = True
    for i, p in enumerate(problems):
        if not alive or time.perf_counter() - start > args.budget_s:
            rows.append(base_row(p))  # not run
            continue
        try:
            row = run_problem(torch, gemm_opt, p, args.seed * 100_003 + i, args.reps, flush)
        except Exception as e:  # a crash is a failed problem, reported with its problem
            row = {**base_row(p), "outcome": Outcome.ERROR.value, "detail": first_line(e)}
            try:
                torch.cuda.synchronize()
            except Exception:  # the context is gone: nothing later can run
                alive = False
        rows.append(row)
        ratio = f"{row['ratio']:.2f}x torch" if row["ratio"] else row["detail"]
        print(f"[{i + 1}/{len(problems)}] {p.name} {shape_text(row)} {p.layout} {p.form} "
              f"{p.dtype} {row['class']}: {row['outcome']} {ratio}", flush=True)  # fmt: skip
        if alive:
            torch.cuda.empty_cache()  # the float64 checks of the next problem need room
    write_csv(args.out / "sweep.csv", rows)
    skipped = plot(rows, args.out / "sweep.png")
    if skipped:
        print(f"no sweep.png: {skipped}", flush=True)
    png = None if skipped else "sweep.png"
    (args.out / "sweep.md").write_text(markdown(rows, env, command, png, pairs))
    failed = sum(r["outcome"] in FAILURES for r in [*rows, *pairs])
    total = summarize(rows)
    print(f"wrote {args.out}: {total['timed']} timed, geomean {_ratio(total['geomean'])}, "
          f"worst {_ratio(total['worst'])}; {total['refused']} refused; {failed} failed",
          flush=True)  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
