#!/usr/bin/env python3
"""Two builds of the same kernels side by side: bundle folder A (before a compiler change)
and B (after), through the public API, on shapes that take the plain kernels.

One command, torch only. For each case (a schedule, reduction, grouped form and layout
with an explicit config, :data:`CASES`), on odd shapes (N, K and the leading dimensions
not multiples of 8, so no aligned or TMA twin accepts the call; a K below one block too):

1. B against a float64 reference (``|c - ref| <= 2 u |ref| + (K + 2) 2^-23 |A||B|``,
   atomic stream-K ``+ P u |A||B|`` for its P adds into a tile; C starts as NaN), and
   B against A bit for bit where the schedule is deterministic: a change that moves no
   arithmetic (a ring depth, a copy path) must leave C identical.
2. What each build launched: the kernel (it must be the case's plain kernel in both),
   its grid and programs (they differ only where the occupancy from the kernel and its
   twins does), its shared memory and the driver's CTAs per SM.
3. Speed: A and B interleaved, each sample after an L2 flush (``benchlib.bench``),
   median of ``--reps``; B/A per case, their geometric mean and the worst.

Writes ``ab.csv`` and ``results.md`` to ``--out``. Exit 1 if a check fails (a kernel
missing from a folder fails its case), 2 on misuse or no GPU.

    PYTHONPATH=python python3 benchmarks/h100/bundle_ab.py --a BEFORE --b AFTER --out OUT
"""

from __future__ import annotations

import argparse
import csv
import itertools
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import benchlib  # noqa: E402

PROG = "bundle_ab.py"
BUNDLE_ENV = "GEMM_OPT_BUNDLE_DIR"


@dataclass(frozen=True)
class Case:
    """One API call form: ``op`` is ``mm`` (``matmul``; ``ta``/``tb``: A or B given as
    the transpose of row-major storage), ``grouped`` (``grouped_matmul``, ``tb``: its
    dgrad form) or ``wgrad`` (``grouped_matmul_variable_k``)."""

    label: str
    op: str
    schedule: str
    reduction: str | None
    dtype: str
    #: block_m, block_n, block_k, group_m, num_warps, num_stages
    config: tuple[int, int, int, int, int, int]
    ta: bool = False
    tb: bool = False


CASES = (
    Case("dp_fp16_s4", "mm", "data-parallel", None, "float16", (64, 128, 128, 8, 4, 4)),
    Case("dp_bf16_s3_w8", "mm", "data-parallel", None, "bfloat16", (128, 256, 64, 8, 8, 3)),
    Case(
        "dp_ta_tb_fp16_s6",
        "mm",
        "data-parallel",
        None,
        "float16",
        (64, 64, 128, 8, 4, 6),
        ta=True,
        tb=True,
    ),
    Case("persistent_fp16_s6", "mm", "persistent", None, "float16", (64, 64, 128, 8, 4, 6)),
    Case("ws_fp16_s3", "mm", "work-stealing", None, "float16", (128, 128, 64, 8, 8, 3)),
    Case("sk_linear_fp16_s4", "mm", "stream-k", "linear", "float16", (64, 128, 128, 8, 4, 4)),
    Case("sk_tree_bf16_s6", "mm", "stream-k", "tree", "bfloat16", (64, 64, 128, 8, 4, 6)),
    Case("sk_atomic_bf16_s3", "mm", "stream-k", "atomic", "bfloat16", (128, 128, 64, 8, 8, 3)),
    Case("splitk_bf16_s4", "mm", "split-k", None, "bfloat16", (64, 128, 128, 8, 4, 4)),
    Case("grouped_m_fp16_s4", "grouped", "persistent", None, "float16", (64, 128, 128, 8, 4, 4)),
    Case(
        "grouped_m_tb_bf16_s6",
        "grouped",
        "persistent",
        None,
        "bfloat16",
        (64, 64, 128, 8, 4, 6),
        tb=True,
    ),
    Case("grouped_k_fp16_s3", "wgrad", "persistent", None, "float16", (128, 128, 64, 8, 8, 3)),
)
#: Correctness shapes (M, N, K): ragged, K below one block, more K blocks than stages.
CHECK_SHAPES = ((333, 517, 1029), (77, 45, 19), (1001, 999, 4099))
#: The timed shape: large enough that the copies matter, odd so the plain kernel runs.
SPEED_SHAPE = (4095, 4097, 4099)
#: Group lengths of the grouped cases (an empty group, unequal ones): M's split.
GROUP_SHARES = (0.5, 0.0, 0.3, 0.2)


def group_lens(total: int) -> list[int]:
    lens = [int(total * s) for s in GROUP_SHARES]
    lens[-1] += total - sum(lens)
    return lens


def make_call(torch: Any, g: Any, case: Case, shape: tuple[int, int, int], seed: int):
    """(call, reference in float64, |A||B| in float64, K) of ``case`` on ``shape``."""
    m, n, k = shape
    dt = getattr(torch, case.dtype)
    gen = torch.Generator(device="cuda").manual_seed(seed)

    def rand(*s: int) -> Any:
        return torch.randn(*s, device="cuda", generator=gen).to(dt)

    cfg = g.GemmConfig(*case.config)
    how = {"schedule": case.schedule, "reduction": case.reduction, "config": cfg}
    if case.op == "mm":
        a = rand(k, m).t() if case.ta else rand(m, k)
        b = rand(n, k).t() if case.tb else rand(k, n)
        ref = a.double() @ b.double()
        size = a.double().abs() @ b.double().abs()
        return (lambda: g.matmul(a, b, **how)), ref, size, k
    lens = group_lens(m)
    lens_dev = torch.tensor(lens, device="cuda", dtype=torch.int32)
    starts = [sum(lens[:i]) for i in range(len(lens) + 1)]
    if case.op == "grouped":
        a = rand(m, k)
        w = rand(len(lens), n, k) if case.tb else rand(len(lens), k, n)
        wk = w.transpose(1, 2) if case.tb else w  # (G, K, N)
        ref = torch.cat([a[s:e].double() @ wk[i].double() for i, (s, e) in
                         enumerate(itertools.pairwise(starts))])  # fmt: skip
        size = torch.cat([a[s:e].double().abs() @ wk[i].double().abs() for i, (s, e) in
                          enumerate(itertools.pairwise(starts))])  # fmt: skip
        return (lambda: g.grouped_matmul(a, w, lens_dev, trans_b=case.tb, **how)), ref, size, k
    # wgrad: x (S, M) and dy (S, N) split along S = the shape's M; out (G, K, N) here
    x, dy = rand(m, k), rand(m, n)
    ref = torch.stack([x[s:e].double().t() @ dy[s:e].double() for s, e in
                       itertools.pairwise(starts)])  # fmt: skip
    size = torch.stack([x[s:e].double().abs().t() @ dy[s:e].double().abs() for s, e in
                        itertools.pairwise(starts)])  # fmt: skip
    return (lambda: g.grouped_matmul_variable_k(x, dy, lens_dev, **how)), ref, size, max(lens)


def launched(planmod: Any) -> list[dict[str, Any]]:
    """The kernel, grid and programs of every plan made since the last clear."""
    out = []
    for p in planmod._PLANS.values():
        prep = p.prepared
        if prep is None:
            continue
        kernel = prep.kernel
        out.append({
            "kernel": kernel.spec.name, "grid": prep.grid[0], "programs": p.programs,
            "shared": kernel.spec.shared_bytes, "per_sm": kernel.resident_per_sm(prep.device),
        })  # fmt: skip
    return out


def run_in(folder: str, fn: Any) -> Any:
    os.environ[BUNDLE_ENV] = folder
    return fn()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    parser.add_argument("--a", required=True, help="bundle folder A (before)")
    parser.add_argument("--b", required=True, help="bundle folder B (after)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--only", default="", help="comma-separated case labels")
    args = parser.parse_args(argv)
    for name in ("a", "b"):
        if not Path(getattr(args, name)).is_dir():
            print(f"{PROG}: error: --{name}: no folder {getattr(args, name)}", file=sys.stderr)
            return 2
    wanted = [c for c in CASES if not args.only or c.label in args.only.split(",")]
    if not wanted:
        print(f"{PROG}: error: --only: none of {[c.label for c in CASES]}", file=sys.stderr)
        return 2
    session = benchlib.cuda_session(PROG, None)
    if session is None:
        return 2
    torch, report, _gpu = session
    torch.backends.cuda.matmul.allow_tf32 = False
    import gemm_opt as g
    from gemm_opt.runtime import CudaError
    from gemm_opt.runtime import plan as planmod
    from gemm_opt.runtime.gemm import KernelMissing

    # a kernel missing from a folder, a refused call or a failed launch fails its case
    errors = (KernelMissing, CudaError, ValueError, TypeError, RuntimeError)

    failures, rows, ratios = 0, [], []
    report("## correctness (B against float64; B against A bit for bit where deterministic)")
    for case in wanted:
        for i, shape in enumerate(CHECK_SHAPES):
            call, ref, size, k = make_call(torch, g, case, shape, seed=17 + i)
            outs, kernels = {}, {}
            try:
                for side, folder in (("A", args.a), ("B", args.b)):
                    planmod.clear_plans()
                    outs[side] = run_in(folder, call)
                    torch.cuda.synchronize()
                    kernels[side] = launched(planmod)
            except errors as e:
                failures += 1
                report(f"FAIL {case.label} {shape}: {type(e).__name__}: {e}")
                continue
            u = benchlib.UNIT_ROUNDOFF[case.dtype]
            tol = 2 * u * ref.abs() + (k + 2) * 2.0**-23 * size
            if case.reduction == "atomic":
                tol += max(x["programs"] for x in kernels["B"]) * u * size
            c = outs["B"].double()
            ok = bool(torch.isfinite(c).all()) and bool(((c - ref).abs() <= tol).all())
            same = torch.equal(outs["A"], outs["B"])
            names = {s: sorted({x["kernel"] for x in kernels[s]}) for s in kernels}
            plain = all(not n.endswith(("_aligned", "_tma")) and "_aligned_" not in n
                        for s in names for n in names[s])  # fmt: skip
            grids = {s: [x["grid"] for x in kernels[s]] for s in kernels}
            # Bitwise equal where the schedule is deterministic and splits K alike (the
            # same grid): atomic stream-K adds in arrival order.
            must_match = case.reduction != "atomic" and grids["A"] == grids["B"]
            bad = not ok or not plain or names["A"] != names["B"] or (must_match and not same)
            failures += bad
            mark = "FAIL" if bad else "ok  "
            report(f"{mark} {case.label} {shape}: within bound {ok}, A == B {same}, "
                   f"grid {grids['A']} -> {grids['B']}, kernels {names['B']}")  # fmt: skip
    report("\n## launches and speed at " + "x".join(map(str, SPEED_SHAPE)))
    flush = benchlib.Flusher()
    for case in wanted:
        call, _ref, _size, _k = make_call(torch, g, case, SPEED_SHAPE, seed=5)
        info = {}
        fns = {}
        try:
            for side, folder in (("A", args.a), ("B", args.b)):
                planmod.clear_plans()
                run_in(folder, call)
                torch.cuda.synchronize()
                info[side] = launched(planmod)[0]
                fns[side] = lambda f=folder, c=call: run_in(f, c)
        except errors as e:
            failures += 1
            report(f"FAIL {case.label} (speed): {type(e).__name__}: {e}")
            continue
        timing = benchlib.bench(fns, args.reps, warmup=3, flush=flush)
        a_ms, b_ms = timing["A"]["median_ms"], timing["B"]["median_ms"]
        ratios.append(b_ms / a_ms)
        row = {
            "case": case.label,
            "kernel": info["B"]["kernel"],
            "a_ms": round(a_ms, 4),
            "b_ms": round(b_ms, 4),
            "b_over_a": round(b_ms / a_ms, 4),
        }
        for side in ("A", "B"):
            for key in ("grid", "programs", "shared", "per_sm"):
                row[f"{side.lower()}_{key}"] = info[side][key]
        rows.append(row)
        ia, ib = info["A"], info["B"]
        report(f"{case.label:22} A {a_ms:8.4f} ms  B {b_ms:8.4f} ms  B/A {b_ms / a_ms:6.3f}  "
               f"grid {ia['grid']}->{ib['grid']}  shared {ia['shared']}->{ib['shared']}  "
               f"CTAs/SM {ia['per_sm']}->{ib['per_sm']}")  # fmt: skip
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        worst = max(zip(ratios, (r["case"] for r in rows), strict=True))
        report(f"\nB/A geometric mean {geo:.4f}, worst {worst[0]:.4f} ({worst[1]}), "
               f"best {min(ratios):.4f}; failures: {failures}")  # fmt: skip
    if args.out is not None and rows:
        args.out.mkdir(parents=True, exist_ok=True)
        with open(args.out / "ab.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        report.write(args.out / "results.md")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
