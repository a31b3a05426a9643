"""Compile time of our GEMM, end to end, against the same kernel written in Gluon.

Ours: tile text -> parse + verify -> our passes -> TTGIR -> Triton -> hsaco,
through ``gemm_opt.lowering.compile.compile_tile_module`` (the bridge gives
every Triton call a private, empty cache, so each run is a real compile).
Gluon: Python -> TTGIR -> hsaco with ``benchmarks/gluon_gemm_gfx1250.py``
(``compile_gluon_gemm`` also compiles into a private, empty cache), using the
schedule that matches our example (``--schedule``, default ``predicated``);
Gluon's M, N and K are specialised as multiples of 16 only when our text
states that of M, N and K, so both kernels know the same about their sizes
(a masked store of unknown N is one store per element, known N one per 8).

"Cold" is a side's first compile in a fresh process (LLVM initialisation,
the first MLIR contexts, our compiler's imports and its worker process),
with both sides' code byte-compiled (as installed packages have it), after
the same setup on both sides: both kernels' modules imported and
Triton's cache key computed (a hash of its sources and library, about a
second, paid once per process by whichever side compiles first; reported
on its own). ``--cold-runs`` pairs of fresh processes, one per side back to
back, alternating which goes first; the ratio is the median of the pairs'
ratios, and the goal is at most ``--cold-goal`` (1.1).

"Warm" is measured in this one process, after one first compile each:
``--rounds`` rounds alternate the two, swapping which goes first each
round, so drift on the machine hits both alike. Reported per side: median
and min wall time; the ratio is the median of the rounds' ratios (each
round's two compiles ran back to back), beside its range and the ratio of
the two medians (the goal is at most ``--goal``, 1.0 by default).

Our time is broken down by the stages the lowering reports
(``CompiledKernel.stage_seconds``: parse + verify, our passes, conversion to
TTGIR, Triton). Triton's own share is further split, for both sides, with
Triton's compilation listener: ``ir_init`` (parse the TTGIR file for us, run
the Gluon frontend for Gluon), then each backend stage.

When the ratio misses the goal (or with ``--profile``), our compile is run
under cProfile and the functions where our own Python time goes are listed.

``--backend-rounds N`` also runs Triton's backend alone (from the TTGIR
stage down, as our compile does) on our TTGIR and on Gluon's, ``N`` rounds
alternating, and reports each side's median CPU time (this process's,
every thread: steadier than wall time on a loaded machine) and its ``llir``
and ``amdgcn`` stages: what the two TTGIRs ask of LLVM, without either
front half.

``--bundle-every N`` also times the bundle builder
(:func:`gemm_opt.kernels.build_bundles.build`) on every N-th kernel of the
cuda:90 schedule bundle, in :func:`~gemm_opt.kernels.build_bundles.bundle_specs`
order (a fixed subset), in a fresh process (empty caches: no kernel module
built yet, a private Triton cache per compile), and reports kernels per
minute and the time the whole bundle would take at that rate.

The machine's load average is printed at the start and the end: compile
times scale with it, so figures are only comparable at a similar load.

Example::

    python benchmarks/compile_time.py                 # fp16, fused, 5 rounds, 9 cold runs
    python benchmarks/compile_time.py --rounds 9 --dtype bf16 --variant separate
    python benchmarks/compile_time.py --rounds 7 --bundle-every 10
    python benchmarks/compile_time.py --rounds 7 --backend-rounds 15
    python benchmarks/compile_time.py --bundle-only --bundle-every 10
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import importlib.util
import inspect
import io
import os
import pstats
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "gemm_gfx1250.mlir"
GLUON = ROOT / "benchmarks" / "gluon_gemm_gfx1250.py"

#: Gluon variant -> (our text with or without hints, compile_tile_module options).
PAIRS: dict[str, tuple[bool, dict[str, Any]]] = {
    "fused": (True, {}),
    "separate": (True, {"fuse": False}),
    "none": (False, {}),
}


#: The positions of M, N and K among the example's arguments (a, b, c, M, N, K, lda, ldb, ldc).
SIZE_ARGS = (3, 4, 5)


def our_kernel(dtype: str, hinted: bool) -> tuple[str, bool]:
    """``examples/gemm_gfx1250.mlir`` for ``dtype``, with or without its hints,
    and whether it states M, N and K to be multiples of 16 (what Gluon's
    ``aligned`` specialises; both sides take pointers and strides as
    16-aligned, and the example states that of its strides).

    The variants are edits of the parsed module (``gemm_opt.dialect.edit``);
    the text is printed once (plain, without location attributes, like the
    example), outside the timed compiles.
    """
    from gemm_opt.core.contract import DIVISIBILITY, TRITON_DIVISIBILITY
    from gemm_opt.core.ext_compat import ir
    from gemm_opt.dialect.edit import drop_warp_hints, edited, functions, retype_elements

    facts: list[bool] = []

    def divisible_by_16(attrs: ir.DictAttr) -> bool:
        names = (DIVISIBILITY, TRITON_DIVISIBILITY)
        return any(n in attrs and ir.IntegerAttr(attrs[n]).value % 16 == 0 for n in names)

    def edit(module: ir.Module) -> None:
        if dtype == "bf16":
            retype_elements(module, ir.F16Type.get(), ir.BF16Type.get())
        if not hinted:
            drop_warp_hints(module)
        fn = functions(module)[0]
        attrs = [ir.DictAttr(a) for a in fn.arg_attrs] if "arg_attrs" in fn.attributes else []
        facts.append(bool(attrs) and all(divisible_by_16(attrs[i]) for i in SIZE_ARGS))

    text = edited(EXAMPLE.read_text(), edit, locations=False)
    return text, facts[0]


def load_gluon() -> Any:
    """The Gluon benchmark module (``benchmarks/`` is not a package)."""
    spec = importlib.util.spec_from_file_location("gluon_gemm_gfx1250", GLUON)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def triton_stage_times() -> Iterator[list[dict[str, float]]]:
    """Collect Triton's per-stage times (seconds) of every compile in the block."""
    from triton import knobs

    seen: list[dict[str, float]] = []

    def listener(*, src: Any, metadata: Any, metadata_group: Any, times: Any, cache_hit: bool):
        if cache_hit:  # a private, empty cache per call: this must not happen
            raise RuntimeError("Triton reported a cache hit; the timing would be meaningless")
        row = {"ir_init": times.ir_initialization / 1e6}
        for name, micros in times.lowering_stages:
            row[name] = micros / 1e6
        row["store"] = times.store_results / 1e6
        seen.append(row)

    with knobs.compilation.scope():
        knobs.compilation.listener = listener
        yield seen


class Sample:
    """One timed compile: wall and CPU seconds, and a breakdown (name -> wall s)."""

    def __init__(self, wall: float, cpu: float, stages: dict[str, float]) -> None:
        self.wall = wall
        self.cpu = cpu
        self.stages = stages


def _cpu() -> float:
    """CPU seconds of this process, its finished children and the compile
    workers (our compile runs Triton in a long-lived worker process, which
    is never a finished child; Linux's ``/proc`` has its times)."""
    t = os.times()
    seconds = t.user + t.system + t.children_user + t.children_system
    try:
        from gemm_opt.lowering.triton_bridge import WORKERS
    except ImportError:  # a tree without workers: Triton runs in finished children
        return seconds
    tick = os.sysconf("SC_CLK_TCK")
    for pid in WORKERS.workers():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # utime, stime, cutime, cstime: fields 14-17 of stat(5), counted after the name
        seconds += sum(int(x) for x in fields[11:15]) / tick
    return seconds


def timed_compile(compile_fn: Callable[[], Any]) -> tuple[Any, Sample]:
    """Run ``compile_fn`` (one Triton compile); its result and a Sample of Triton's stages."""
    with triton_stage_times() as triton_rows:
        start, cpu = time.perf_counter(), _cpu()
        kernel = compile_fn()
        wall, cpu = time.perf_counter() - start, _cpu() - cpu
    if not triton_rows and getattr(kernel, "triton_stages", None):
        triton_rows.append(dict(kernel.triton_stages))  # Triton ran in a child process
    if len(triton_rows) != 1:
        raise RuntimeError(f"expected one Triton compile per call, saw {len(triton_rows)}")
    return kernel, Sample(wall, cpu, {f"triton:{k}": v for k, v in triton_rows[0].items()})


def time_ours(text: str, options: dict[str, Any]) -> Sample:
    """Compile our kernel from text; wall time plus the lowering's stages."""
    from gemm_opt.lowering.compile import compile_tile_module

    kernel, sample = timed_compile(lambda: compile_tile_module(text, target="gfx1250", **options))
    ours = {f"ours:{k}": float(v) for k, v in dict(kernel.stage_seconds).items()}
    sample.stages = {**ours, **sample.stages}
    return sample


def time_gluon(gluon: Any, dtype: str, variant: str, schedule: str, aligned: bool) -> Sample:
    """Compile the Gluon kernel; wall time plus Triton's stages."""
    return timed_compile(
        lambda: gluon.compile_gluon_gemm(dtype, variant, schedule=schedule, aligned=aligned)
    )[1]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:9.1f}"


def paired(ours: list[float], gluon: list[float]) -> tuple[float, float, float]:
    """The median, lowest and highest of the per-round ratios ``ours[i] / gluon[i]``.

    The two compiles of a round run back to back, so a burst of other work on the
    machine mostly hits both or neither; the ratio of the two medians instead
    pairs compiles from different moments, and one side's slow minute moves it."""
    ratios = [o / g for o, g in zip(ours, gluon, strict=True)]
    return statistics.median(ratios), min(ratios), max(ratios)


def report(ours: list[Sample], gluon: list[Sample]) -> float:
    """Print the side-by-side table; return the median of the per-round wall ratios."""
    med = statistics.median
    ratio, low, high = paired([s.wall for s in ours], [s.wall for s in gluon])
    cpu_ratio = paired([s.cpu for s in ours], [s.cpu for s in gluon])[0]
    print(f"\n{'':34} {'median ms':>9} {'min ms':>9} {'CPU med':>9} {'CPU min':>9}")
    for title, side in (("ours   (tile text -> hsaco)", ours), ("gluon  (Python -> hsaco)", gluon)):
        walls, cpus = [s.wall for s in side], [s.cpu for s in side]
        print(f"{title:34} {_ms(med(walls))} {_ms(min(walls))} {_ms(med(cpus))} {_ms(min(cpus))}")
    of_medians = med(s.wall for s in ours) / med(s.wall for s in gluon)
    print(f"{'median of round ratios (ours / gluon)':34} {ratio:9.3f} {'':9} {cpu_ratio:9.3f}")
    print(f"{'  lowest, highest round ratio':34} {low:9.3f} {high:9.3f}")
    print(f"{'  ratio of the medians':34} {of_medians:9.3f}")
    print("(CPU = this process's CPU time; steadier than wall time on a busy machine)")

    names: list[str] = []
    for s in [*ours, *gluon]:
        names += [n for n in s.stages if n not in names]
    print(f"\n{'stage (median ms)':34} {'ours':>9} {'gluon':>9}")
    for name in names:
        cells = []
        for side in (ours, gluon):
            values = [s.stages[name] for s in side if name in s.stages]
            cells.append(_ms(statistics.median(values)) if values else f"{'-':>9}")
        print(f"{name:34} {cells[0]} {cells[1]}")
    own = [s.wall - sum(v for k, v in s.stages.items() if k.startswith("triton:")) for s in ours]
    glu = [s.wall - sum(s.stages.values()) for s in gluon]
    # Wall time outside triton.compile: for ours the lowering and the bridge.
    print(f"{'outside triton.compile':34} {_ms(med(own))} {_ms(med(glu))}")
    return ratio


def profile_ours(text: str, options: dict[str, Any], runs: int, top: int) -> None:
    """cProfile ``runs`` compiles of ours; list where our own Python time goes."""
    from gemm_opt.lowering.compile import compile_tile_module

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(runs):
        compile_tile_module(text, target="gfx1250", **options)
    profiler.disable()

    def show(title: str, key: str, *restrictions: Any) -> None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats(key).print_stats(*restrictions)
        print(f"\n--- {title} ---")
        lines = out.getvalue().splitlines()
        start = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("ncalls")), 0)
        print("\n".join(lines[start:]))

    for key, title in (("cumulative", "cumulative"), ("tottime", "own (tottime)")):
        show(f"cProfile of {runs} compiles of ours, top {top} by {title}", key, top)
    own_files = r"gemm_opt|/dialect/|/passes/|/lowering/|/python/gemm_opt/"
    show(
        f"the same, restricted to gemm-opt's own files, top {top} by cumulative",
        "cumulative",
        own_files,
        top,
    )


def load() -> str:
    """The 1, 5 and 15 minute load averages, as ``uptime`` prints them."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def time_bundle(every: int, jobs: int | None, target: str = "cuda:90") -> float:
    """Build every ``every``-th kernel of ``target``'s schedule bundle (in this
    process, which must not have built any yet), ``jobs`` at once (None: the
    builder's default); print the rate; return kernels per minute."""
    from gemm_opt.kernels import build_bundles

    every_spec = build_bundles.bundle_specs()
    specs = every_spec[::every]
    # A tree whose builder compiles one kernel at a time takes no jobs.
    parallel = "jobs" in inspect.signature(build_bundles.build).parameters
    how = {"jobs": jobs} if parallel and jobs is not None else {}
    shown = how.get("jobs", build_bundles.default_jobs() if parallel else 1)
    print(
        f"bundle builder: {len(specs)} of the {len(every_spec)} {target} schedule kernels "
        f"(every {every}th), {shown} at once, load {load()}",
        flush=True,
    )
    start, cpu = time.perf_counter(), _cpu()
    bundle = build_bundles.build(target, specs, quiet=True, **how)
    wall, cpu = time.perf_counter() - start, _cpu() - cpu
    if len(bundle) != len(specs):
        raise RuntimeError(f"built {len(bundle)} kernels of {len(specs)}")
    rate = len(specs) / wall * 60
    print(
        f"bundle builder: {wall:.1f} s wall, {cpu:.1f} s CPU (with children) for "
        f"{len(specs)} kernels: {wall / len(specs):.2f} s per kernel, {rate:.1f} kernels "
        f"per minute; all {len(every_spec)} at this rate: {len(every_spec) / rate:.1f} min "
        f"(load {load()})",
        flush=True,
    )
    return rate


def time_backend(texts: dict[str, str], rounds: int) -> float:
    """Triton's backend on each side's TTGIR (``texts``: side -> text), ``rounds``
    rounds alternating after one untimed round; print the medians; return the
    median of the rounds' CPU-time ratios (ours / gluon)."""
    from gemm_opt.lowering import triton_bridge as tb

    rows: dict[str, list[tuple[float, float, float]]] = {side: [] for side in texts}
    for r in range(rounds + 1):
        for side in list(texts) if r % 2 == 0 else list(texts)[::-1]:
            cpu = time.process_time()
            art = tb.compile_module(texts[side], "gfx1250", None)
            cpu = time.process_time() - cpu
            if r:
                rows[side].append((cpu, art.stages["llir"], art.stages["amdgcn"]))
    med = statistics.median
    print(f"\n{'backend from TTGIR (median ms)':34} {'CPU':>9} {'llir':>9} {'amdgcn':>9}")
    for side, got in rows.items():
        cells = " ".join(_ms(med(row[i] for row in got)) for i in range(3))
        print(f"{side:34} {cells}")
    ratio, low, high = paired([r[0] for r in rows["ours"]], [r[0] for r in rows["gluon"]])
    title = "CPU, median of round ratios"
    print(
        f"{title:34} {ratio:9.3f}   (lowest {low:.3f}, highest {high:.3f}; "
        f"{rounds} rounds, load {load()})"
    )
    return ratio


#: The line a ``--cold-only`` process prints: ``cold <side> <seconds>``.
COLD = "cold"


def byte_compile_ours() -> None:
    """Byte-compile the ``gemm_opt`` package, as an installed package is (pip
    compiled Triton's modules when it installed them): a cold process then
    loads both sides' code from bytecode, also where
    ``PYTHONDONTWRITEBYTECODE`` kept earlier runs from writing ours."""
    import compileall

    import gemm_opt

    compileall.compile_dir(Path(gemm_opt.__file__).parent, quiet=1)


def import_ours() -> float:
    """Import our compile path's Python (the worker forked for the first
    compile inherits it); return the seconds it took. A tree without
    ``import_compile_path`` imports it during its first compile instead."""
    from gemm_opt.lowering import compile as compile_module

    start = time.perf_counter()
    preload = getattr(compile_module, "import_compile_path", None)
    if preload is not None:
        preload()
    return time.perf_counter() - start


def time_cold(args: argparse.Namespace, runs: int) -> dict[str, list[float]]:
    """Each side's first compile in ``runs`` fresh processes, alternating sides
    (also ``<side>-imports``: the seconds of its imports before that compile)."""
    seen: dict[str, list[float]] = {
        "ours": [],
        "gluon": [],
        "ours-imports": [],
        "gluon-imports": [],
    }
    same = ["--dtype", args.dtype, "--variant", args.variant, "--schedule", args.schedule]
    for r in range(runs):
        sides = ("ours", "gluon") if r % 2 == 0 else ("gluon", "ours")
        cells = []
        for side in sides:
            own = [sys.executable, __file__, "--cold-only", side, *same]
            out = subprocess.run(own, check=True, capture_output=True, text=True).stdout
            line = next(ln for ln in out.splitlines() if ln.startswith(COLD + " "))
            seconds, imports = (float(f) for f in line.split()[2:4])
            seen[side].append(seconds)
            seen[f"{side}-imports"].append(imports)
            cells.append(f"{side} {seconds:.2f} s (imports before it {imports:.2f} s)")
        print(f"cold {r + 1}: " + ", ".join(cells), flush=True)
    return seen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", choices=("fp16", "bf16"), default="fp16")
    parser.add_argument("--variant", choices=tuple(PAIRS), default="fused")
    parser.add_argument("--schedule", default="predicated", help="Gluon schedule (see there)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--goal", type=float, default=1.0, help="warm: ours / gluon at most")
    parser.add_argument("--cold-goal", type=float, default=1.1, help="cold: ours / gluon at most")
    parser.add_argument("--cold-runs", type=int, default=9, help="fresh processes per side")
    parser.add_argument(
        "--cold-only", choices=("ours", "gluon"), help="time one side's first compile and exit"
    )
    parser.add_argument("--profile", action="store_true", help="always run cProfile on ours")
    parser.add_argument("--no-profile", action="store_true", help="never run cProfile")
    parser.add_argument("--profile-runs", type=int, default=3)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument(
        "--backend-rounds",
        type=int,
        default=0,
        metavar="N",
        help="also run Triton's backend alone on both TTGIRs, N rounds (0: no)",
    )
    parser.add_argument(
        "--bundle-every",
        type=int,
        default=0,
        metavar="N",
        help="also time the bundle builder on every N-th cuda:90 schedule kernel (0: no)",
    )
    parser.add_argument(
        "--bundle-only", action="store_true", help="only time the bundle builder (in this process)"
    )
    parser.add_argument(
        "--bundle-jobs", type=int, help="kernels the builder compiles at once (default: its own)"
    )
    args = parser.parse_args(argv)
    if args.bundle_every < 0 or (args.bundle_only and not args.bundle_every):
        parser.error("--bundle-every takes a positive N (and --bundle-only needs it)")
    if args.cold_runs < 1 or args.rounds < 1 or args.backend_rounds < 0:
        parser.error("--rounds and --cold-runs take a positive count, --backend-rounds a count")
    if args.bundle_only:
        time_bundle(args.bundle_every, args.bundle_jobs)
        return 0

    start = time.perf_counter()
    gluon = load_gluon()
    gluon_import_s = time.perf_counter() - start
    hinted, options = PAIRS[args.variant]
    text, aligned = our_kernel(args.dtype, hinted)

    def gluon_run() -> Sample:
        return time_gluon(gluon, args.dtype, args.variant, args.schedule, aligned)

    from triton.runtime.cache import triton_key

    start = time.perf_counter()
    triton_key()  # Triton's, once per process: not either side's
    key_s = time.perf_counter() - start
    if args.cold_only:
        # Both sides' compile code is imported before the timed compile, as
        # Triton's and Gluon's modules are by load_gluon; the imports are
        # reported on their own (ours: what remains after Triton's).
        imports_s = gluon_import_s
        if args.cold_only == "ours":
            imports_s = import_ours()
        sample = time_ours(text, options) if args.cold_only == "ours" else gluon_run()
        print(f"{COLD} {args.cold_only} {sample.wall:.4f} {imports_s:.4f}")
        return 0

    print(
        f"kernel: examples/gemm_gfx1250.mlir ({args.dtype}, {args.variant}, options {options}) "
        f"against Gluon {args.variant!r} ({args.schedule} schedule, aligned={aligned}), "
        f"target gfx1250, {args.rounds} rounds, Python {sys.version.split()[0]}, "
        f"load {load()}"
    )
    print(f"Triton's cache key (once per process, before either side): {key_s:.2f} s")
    byte_compile_ours()
    cold = time_cold(args, args.cold_runs)
    time_ours(text, options)  # this process's first compiles, untimed
    gluon_run()
    ours: list[Sample] = []
    glu: list[Sample] = []
    runs: list[tuple[str, Callable[[], Sample], list[Sample]]] = [
        ("ours", lambda: time_ours(text, options), ours),
        ("gluon", gluon_run, glu),
    ]
    for r in range(args.rounds):
        order = runs if r % 2 == 0 else runs[::-1]
        cells = []
        for name, run, into in order:
            sample = run()
            into.append(sample)
            cells.append(f"{name} {sample.wall * 1e3:7.1f} ms (CPU {sample.cpu * 1e3:7.1f})")
        print(f"round {r + 1}: " + ", ".join(cells), flush=True)

    ratio = report(ours, glu)
    verdict = "meets" if ratio <= args.goal else "MISSES"
    print(
        f"\nwarm: wall-time ratio {ratio:.3f} (median of {args.rounds} rounds' ratios) "
        f"{verdict} the goal of <= {args.goal:.2f}"
    )
    cold_ratio, low, high = paired(cold["ours"], cold["gluon"])
    verdict = "meets" if cold_ratio <= args.cold_goal else "MISSES"
    print(
        f"cold: median first compile in a fresh process, ours "
        f"{statistics.median(cold['ours']):.2f} s, gluon {statistics.median(cold['gluon']):.2f} s "
        f"({args.cold_runs} processes each); median of the {args.cold_runs} pairs' ratios "
        f"{cold_ratio:.3f} (lowest {low:.3f}, highest {high:.3f}) {verdict} the goal of "
        f"<= {args.cold_goal:.2f}"
    )
    ours_imports = statistics.median(cold["ours-imports"])
    gluon_imports = statistics.median(cold["gluon-imports"])
    print(
        f"imports before the first compile (median): ours {ours_imports:.2f} s (our compile "
        f"path, after Triton's), gluon {gluon_imports:.2f} s (Triton and the Gluon kernel's module)"
    )
    print(f"(load {load()})")
    if args.backend_rounds:
        from gemm_opt.lowering.compile import compile_tile_module

        ttgir = {
            "ours": compile_tile_module(text, target="gfx1250", **options).asm["ttgir"],
            "gluon": str(
                gluon.compile_gluon_gemm(
                    args.dtype, args.variant, schedule=args.schedule, aligned=aligned
                ).asm["ttgir"]
            ),
        }
        time_backend(ttgir, args.backend_rounds)
    if args.profile or (ratio > args.goal and not args.no_profile):
        profile_ours(text, options, args.profile_runs, args.top)
    if args.bundle_every:
        # A fresh process: this one has compiled already (warm imports and caches).
        own = [sys.executable, __file__, "--bundle-only", "--bundle-every", str(args.bundle_every)]
        if args.bundle_jobs is not None:
            own += ["--bundle-jobs", str(args.bundle_jobs)]
        print(flush=True)
        subprocess.run(own, check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
