"""Compile the schedule kernels the API launches on the GPU into bundle files.

    python -m gemm_opt.kernels.build_bundles --target cuda:90 [--out DIR] [--dtypes fp16,bf16]
        [--fp8 f8e4m3,f8e5m2] [--layouts nn|picked|all] [--jobs N]

writes ``DIR/<target folder>/schedules.bundle`` (default ``DIR``: the
package's ``kernels/bundles``, where :mod:`gemm_opt.runtime.gemm` looks), one
kernel per :class:`~gemm_opt.core.schedules.KernelSpec` of :func:`bundle_specs`,
and ``fp8.bundle`` beside it, the FP8 kernels of :func:`fp8_bundle_specs`
(``--fp8``, default f8e4m3; ``--fp8=`` builds none, ``--dtypes=`` only it).
Needs the compiler (MLIR bindings, Triton 3.9.0); the bundle then runs with
torch alone. ``--list`` prints the kernel names without compiling; ``--jobs``
compiles that many kernels at once (default: one per core); ``--layouts``
chooses the operand layouts bundled (:data:`LAYOUT_SETS`); any other kernel
is built on demand where the compiler is installed
(:mod:`gemm_opt.kernels.disk_cache`).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path
from typing import Any

from gemm_opt.core import schedules as S
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.kernels import nn_gemms as NG
from gemm_opt.kernels.h100_configs import GPU_CONFIGS
from gemm_opt.runtime.plan import SWIGLU_TILE, swiglu_config

#: The GPU configurations bundled (the API's, by name).
CONFIGS = {name: cfg.__dict__ for name, cfg in GPU_CONFIGS.items()}
TARGETS = ("cuda:90",)
#: The operand layouts a bundle may hold (``--layouts``): ``nn`` row-major operands
#: only; ``picked`` (the default) also NT, TN and TT for the dense kernels a call
#: runs without naming a config: data-parallel on every configuration (the default
#: schedule, ``matmul``'s backward, batches run one by one) and the dense picks of
#: ``schedule="auto"``: the tuned table's, and split-K (the deterministic split of
#: small outputs); ``all``: every dense kernel in all four.
LAYOUT_SETS = ("nn", "picked", "all")
#: (trans_a, trans_b) of NT, TN and TT.
TRANSPOSED = ((False, True), (True, False), (True, True))


def bundle_specs(dtypes: tuple[str, ...] = S.DTYPES, layouts: str = "picked") -> list[S.KernelSpec]:
    """Every kernel the API may launch: each schedule, reduction, grouped form and config,
    and the twins of each with the pipelined body: aligned ``cp.async`` and TMA
    (:func:`~gemm_opt.core.schedules.tma_copies`; wgrad's with per-tile
    descriptors), which the runtime launches instead where the arguments
    satisfy their facts; then the transposed layouts of ``layouts``
    (:data:`LAYOUT_SETS`), each with its TMA twin only: a dense kernel's TMA
    twin states the aligned one's facts, so it takes every call the aligned
    one would (but an empty problem, which the plain kernel runs); then the
    narrow twins (8- and 4-byte ``cp.async``) of the row-major data-parallel
    kernels (:func:`~gemm_opt.runtime.gemm.narrow_twins`), for N, K and
    leading dimensions a multiple of 4 or 2 elements but not of 8. Swap-AB's
    data-parallel kernels (:data:`~gemm_opt.kernels.h100_configs.SWAP_AB_CONFIGS`) come
    with the transposed layouts: plain and TMA twin, for the call layouts of
    ``layouts`` (``nn``: row-major calls only)."""
    if layouts not in LAYOUT_SETS:
        raise ValueError(f"layouts must be one of {', '.join(LAYOUT_SETS)}, got {layouts!r}")
    specs = _plain_specs(dtypes)
    twins = [s for s in specs if S.pipelined(s.num_warps)]
    tma = [s for s in twins if S.tma_copies(s.num_warps, s.block_m)]
    transposed = _transposed_specs(specs, layouts) + _swap_ab_specs(dtypes, layouts)
    from gemm_opt.runtime.gemm import narrow_twins

    narrow = [
        replace(s, aligned=True, vector_bytes=v)
        for s in specs
        if narrow_twins(s)
        for v in S.VECTOR_WIDTHS[1:]
    ]
    return (
        specs
        + [replace(s, aligned=True) for s in twins]
        + [replace(s, aligned=True, tma=True) for s in tma]
        + transposed
        + [
            replace(s, aligned=True, tma=True)
            for s in transposed
            if S.tma_copies(s.num_warps, s.block_m)
        ]
        + narrow
    )


def _transposed_specs(specs: list[S.KernelSpec], layouts: str) -> list[S.KernelSpec]:
    """NT, TN and TT of the dense ``specs`` that ``layouts`` bundles (plain kernels)."""
    if layouts == "nn":
        return []
    dense = [s for s in specs if s.grouped == "none"]
    if layouts == "picked":
        from gemm_opt.runtime import autotune

        picks = {
            (dtype, choice.schedule, choice.reduction, choice.config)
            for problem, choice, dtype in autotune.load_table("cuda:90") or []
            if problem.op == "dense"
        }

        def picked(s: S.KernelSpec) -> bool:
            cfg = S.GemmConfig(
                s.block_m, s.block_n, s.block_k, s.group_m, s.num_warps, s.num_stages
            )
            if s.kind == "split-k":  # auto's deterministic split of small outputs
                return True
            return s.kind == "data-parallel" or (s.dtype, s.kind, s.reduction, cfg) in picks

        dense = [s for s in dense if picked(s)]
    return [replace(s, trans_a=ta, trans_b=tb) for s in dense for ta, tb in TRANSPOSED]


def _swap_ab_specs(dtypes: tuple[str, ...], layouts: str) -> list[S.KernelSpec]:
    """Swap-AB's data-parallel kernels (plain; what ``auto`` runs) for the call
    layouts ``layouts`` bundles:
    a call's (trans_a, trans_b) runs the kernel of (not trans_b, not trans_a)
    with C stored through its transpose (``trans_c``)."""
    calls = ((False, False),) if layouts == "nn" else ((False, False), *TRANSPOSED)
    flags = [dict(trans_a=not tb, trans_b=not ta, trans_c=True) for ta, tb in calls]
    return [
        S.KernelSpec("data-parallel", None, "none", dtype, **cfg.__dict__, **f)
        for dtype in dtypes
        for cfg in h100.SWAP_AB_CONFIGS.values()
        for f in flags
    ]


def select(specs: list[S.KernelSpec], names: list[str]) -> list[S.KernelSpec]:
    """The ``specs`` named in ``names`` (``--only``), in ``specs`` order; ValueError
    naming any name that is not among them."""
    known = {s.name for s in specs}
    missing = [n for n in names if n not in known]
    if missing:
        raise ValueError(
            f"not bundle kernels of these options: {', '.join(missing)} (see --list with "
            "--layouts all)"
        )
    wanted = set(names)
    return [s for s in specs if s.name in wanted]


#: The hand-off of a TMA kernel: every copy a barrier-tracked TMA copy.
TMA_HAND_OFF = "convert-tile-to-triton-gpu{target=cuda:90 lds-copies=tma}"


def pipeline_of(spec: S.KernelSpec, target: str) -> str | None:
    """The passes a kernel compiles with: the target's (None), or for a TMA kernel
    the same tile passes then the TMA hand-off."""
    if not spec.tma:
        return None
    from gemm_opt.lowering.pipelines import tile_passes

    return ",".join([*tile_passes(target), TMA_HAND_OFF])


def _plain_specs(dtypes: tuple[str, ...]) -> list[S.KernelSpec]:
    specs = []
    for dtype in dtypes:
        for name, cfg in CONFIGS.items():
            for kind in S.KINDS:
                reductions = S.REDUCTIONS if kind == "stream-k" else (None,)
                for red in reductions:
                    if h100.config_serves(name, red, kind):
                        specs.append(S.KernelSpec(kind, red, "none", dtype, **cfg))
        for kind in S.GROUPED_KINDS:
            for cfg in CONFIGS.values():  # forward, dgrad (trans_b), wgrad
                specs.append(S.KernelSpec(kind, None, "m", dtype, **cfg))
                specs.append(S.KernelSpec(kind, None, "m", dtype, **cfg, trans_b=True))
                specs.append(S.KernelSpec(kind, None, "k", dtype, **cfg))
            for tiny in h100.TINY_GROUP_CONFIGS.values():  # forward and dgrad, tiny groups
                specs.append(S.KernelSpec(kind, None, "m", dtype, **tiny.__dict__))
                specs.append(S.KernelSpec(kind, None, "m", dtype, **tiny.__dict__, trans_b=True))
    return specs


#: The FP8 schedules beyond data-parallel and persistent, (kind, reduction), that
#: :func:`fp8_bundle_specs` bundles: the scaled API runs every kind.
FP8_SPLIT_SCHEDULES: tuple[tuple[str, str | None], ...] = (
    ("work-stealing", None),
    ("stream-k", "atomic"),
    ("stream-k", "linear"),
    ("stream-k", "tree"),
    ("split-k", None),
)


def fp8_bundle_specs(dtypes: tuple[str, ...] = ("f8e4m3",)) -> list[S.KernelSpec]:
    """The FP8 kernels the scaled API launches (:mod:`gemm_opt.runtime.scaled`):
    each of :data:`~gemm_opt.kernels.h100_configs.FP8_GPU_CONFIGS`, schedule
    (data-parallel, persistent) and recipe (tensorwise, rowwise, block128), bf16 C, B
    stored (N, K), the epilogue recipes with the promotion interval the API picks
    (:data:`~gemm_opt.kernels.h100_configs.FP8_EPILOGUE_IMPRECISE_ACC`) and rowwise
    also with one instruction's and each of
    :data:`~gemm_opt.kernels.h100_configs.FP8_IMPRECISE_ACC` (the benchmark
    compares them), the grouped "m" forward (persistent, B stored (G, N, K)) of
    each configuration and recipe, and fp32-C kernels of the ``narrow``
    configuration's dense rowwise (each interval) and block128 (the benchmark's
    accumulation-error figures, which bf16's rounding would hide; small float32
    calls), fp32-C kernels of every configuration and recipe for the FP8 training
    GEMMs' gradients (data-parallel dense, grouped "m"), and the split kinds of
    :data:`FP8_SPLIT_SCHEDULES` (work stealing, stream-K's three reductions, split-K)
    of every configuration and recipe at the API's interval, bf16 C; each plain
    kernel (for K or leading dimensions off the 16-element rule) with its aligned
    and TMA twins; and the TMA twins alone of
    :data:`~gemm_opt.kernels.h100_configs.FP8_TMA_CONFIGS` (tensorwise and rowwise,
    data-parallel, persistent and grouped, bf16 C), whose other twins spill."""
    from gemm_opt.core.modes import GROUPED_KINDS, Kind, Scale

    def epilogue(name: str) -> tuple[tuple[Scale, int | None], ...]:
        # The API's interval for tensorwise and rowwise; rowwise also with each other.
        chosen = h100.FP8_EPILOGUE_IMPRECISE_ACC[name]
        rowwise = dict.fromkeys((chosen, None, *h100.FP8_IMPRECISE_ACC))
        return ((Scale.TENSORWISE, chosen), *((Scale.ROWWISE, a) for a in rowwise))

    def spec(kind, grouped, dtype, cfg, scale, acc, out=None, reduction=None) -> S.KernelSpec:
        return S.KernelSpec(
            kind, reduction, grouped, dtype, **cfg.__dict__, trans_b=True, scale=scale,
            imprecise_acc=acc, out_dtype=out,
        )  # fmt: skip

    configs = h100.FP8_GPU_CONFIGS
    narrow = configs["narrow"]
    whole = (Kind.DATA_PARALLEL, Kind.PERSISTENT)  # a tile's K range in one program
    plain = (
        [
            spec(kind, "none", dtype, cfg, scale, acc)
            for dtype in dtypes
            for name, cfg in configs.items()
            for kind in whole
            for scale, acc in (*epilogue(name), (Scale.BLOCK128, None))
        ]
        + [
            spec(kind, "m", dtype, cfg, scale, acc)
            for dtype in dtypes
            for name, cfg in configs.items()
            for kind in GROUPED_KINDS
            for scale, acc in (
                (Scale.TENSORWISE, h100.FP8_EPILOGUE_IMPRECISE_ACC[name]),
                (Scale.ROWWISE, h100.FP8_EPILOGUE_IMPRECISE_ACC[name]),
                (Scale.BLOCK128, None),
            )
        ]
        + [
            spec(kind, "none", dtype, narrow, scale, acc, "fp32")
            for dtype in dtypes
            for kind in whole
            for scale, acc in (*epilogue("narrow")[1:], (Scale.BLOCK128, None))
        ]
        + [
            spec(kind, "none", dtype, cfg, scale, acc, reduction=reduction)
            for dtype in dtypes
            for name, cfg in configs.items()
            for kind, reduction in FP8_SPLIT_SCHEDULES
            for scale, acc in (
                (Scale.TENSORWISE, h100.FP8_EPILOGUE_IMPRECISE_ACC[name]),
                (Scale.ROWWISE, h100.FP8_EPILOGUE_IMPRECISE_ACC[name]),
                (Scale.BLOCK128, None),
            )
        ]
    )
    # The FP8 training GEMMs' gradients (``fp8_linear``'s dgrad and wgrad, data-parallel;
    # ``fp8_grouped_linear``'s grouped dgrad) have fp32 C, for every configuration and
    # recipe at the API's interval.
    training = [
        spec(kind, grouped, dtype, cfg, scale, acc, "fp32")
        for dtype in dtypes
        for name, cfg in configs.items()
        for kind, grouped in ((Kind.DATA_PARALLEL, "none"), (Kind.PERSISTENT, "m"))
        for scale, acc in (
            (Scale.TENSORWISE, h100.FP8_EPILOGUE_IMPRECISE_ACC[name]),
            (Scale.ROWWISE, h100.FP8_EPILOGUE_IMPRECISE_ACC[name]),
            (Scale.BLOCK128, None),
        )
    ]
    plain += [s for s in training if s not in plain]
    # The TMA-only configurations: tensorwise and rowwise at their interval, bf16 C.
    tma_only = [
        replace(spec(kind, grouped, dtype, cfg, scale, h100.FP8_EPILOGUE_IMPRECISE_ACC[name],
                     h100.FP8_TMA_OUT), aligned=True, tma=True)
        for dtype in dtypes
        for name, cfg in h100.FP8_TMA_CONFIGS.items()
        for kind, grouped in (*((k, "none") for k in h100.FP8_TMA_KINDS), (Kind.PERSISTENT, "m"))
        for scale in h100.FP8_TMA_SCALES
    ]  # fmt: skip
    return (
        plain
        + [replace(s, aligned=True) for s in plain]
        + [replace(s, aligned=True, tma=True) for s in plain]
        + tma_only
    )


#: The fused epilogues bundled for the dense kernels (:func:`epilogue_bundle_specs`): a
#: bias with each activation a linear layer runs (gelu-tanh: the GELU cuBLASLt fuses).
DENSE_EPILOGUES = tuple(
    S.EpilogueSpec(activation=act, bias=bias)
    for bias in ("fp16", "bf16")
    for act in ("none", "relu", "gelu-tanh", "silu")
)


#: The scaled epilogue bundled for the dense ``x @ W.T`` kernels: both fp32 scales.
SCALES_EPILOGUE = S.EpilogueSpec(row_scale=True, col_scale=True)


def epilogue_bundle_specs(dtypes: tuple[str, ...] = S.DTYPES) -> list[S.KernelSpec]:
    """The fused-epilogue kernels (``epilogue.bundle``), TMA twins (the shapes a linear
    layer has are 16-byte aligned; any other call builds its kernel on demand where the
    compiler is), and for a persistent schedule the plain kernel too (it sizes the grid:
    resident programs per SM). On each shape class's configuration: ``x @ W.T`` (B
    stored (N, K), as ``F.linear`` reads it) data-parallel with a bias in the inputs'
    dtype and each activation of :data:`DENSE_EPILOGUES`, and with
    :data:`SCALES_EPILOGUE`'s row and column scales; the weight gradient
    accumulated into an fp32 ``main_grad`` (``dY.T @ X``: A stored (K, M); ``out +=
    ...``), and per expert (grouped "k"); every kernel ``gemm_opt.nn``'s fused calls
    request (:mod:`gemm_opt.kernels.nn_gemms`: its Linear's bias, the MoE GateUp's
    SwiGLU); on the classes whose tile two accumulators fit, SwiGLU ``x @ W.T`` with its
    ``[gate | up]`` bias. Each name once."""
    out = []
    for dtype in dtypes:
        # the classes a call without a config runs (small: the fallback of gpu_config_name)
        for name in (*(c for c, _, _ in h100.GPU_SHAPE_CLASSES), "small"):
            tma = dict(**CONFIGS[name], aligned=True, tma=True)
            for ep in DENSE_EPILOGUES:
                if ep.bias == dtype:
                    out.append(S.KernelSpec("data-parallel", None, "none", dtype, **tma,
                                            trans_b=True, epilogue=ep))  # fmt: skip
            # rowwise-scaled x @ W.T (per-token and per-channel dequantization scales)
            out.append(S.KernelSpec("data-parallel", None, "none", dtype, **tma, trans_b=True,
                                    epilogue=SCALES_EPILOGUE))  # fmt: skip
            acc = S.EpilogueSpec(accumulate=True)
            out.append(S.KernelSpec("data-parallel", None, "none", dtype, **tma, trans_a=True,
                                    out_dtype="fp32", epilogue=acc))  # fmt: skip
            # MoE: wgrad into an fp32 main_grad per expert (persistent: the plain kernel
            # too, which sizes the grid)
            wgrad = S.KernelSpec("persistent", None, "k", dtype, **CONFIGS[name],
                                 out_dtype="fp32", epilogue=acc)  # fmt: skip
            out += [wgrad, replace(wgrad, aligned=True, tma=True)]
            cfg = GPU_CONFIGS[name]
            for call in NG.BUNDLED:
                out += call.specs(dtype, call.config(cfg))
            if cfg.block_m * cfg.block_n > SWIGLU_TILE:  # two accumulators do not fit
                continue
            swiglu = S.EpilogueSpec(activation="swiglu", bias=dtype)
            # the class's configuration as a SwiGLU call runs it (fewer stages: three rings)
            sw = dict(swiglu_config(cfg, swiglu).__dict__, aligned=True, tma=True)
            out.append(S.KernelSpec("data-parallel", None, "none", dtype, **sw, trans_b=True,
                                    epilogue=swiglu))  # fmt: skip
    return list({s.name: s for s in out}.values())


def default_jobs() -> int:
    """Kernels compiled at once by default: one per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity on this platform
        return max(1, os.cpu_count() or 1)


def build(target: str, specs: list[S.KernelSpec], *, quiet: bool = False, jobs: int | None = None):
    """The bundle of ``specs``' kernels compiled for ``target``, in ``specs`` order.

    ``jobs`` kernels compile at once (default :func:`default_jobs`), each in a
    builder process of its own (the MLIR bindings are not safe to share
    between threads), which hands its modules to a Triton worker of its own.
    """
    from gemm_opt.runtime import Bundle

    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    kernels: list[Any] = [None] * len(specs)
    started = time.perf_counter()

    def done(i: int, kernel: Any, when: str) -> None:
        kernels[i] = kernel
        if not quiet:
            count = sum(k is not None for k in kernels)
            print(
                f"[{count}/{len(specs)}] {kernel.name}: {kernel.sm}, "
                f"{kernel.shared_bytes} B shared, {len(kernel.binary)} B cubin ({when})",
                flush=True,
            )

    if jobs == 1 or len(specs) == 1:
        for i, spec in enumerate(specs):
            start = time.perf_counter()
            done(i, _build_one(spec, target), f"{time.perf_counter() - start:.1f} s")
        return Bundle(tuple(kernels))
    with ProcessPoolExecutor(
        max_workers=min(jobs, len(specs)), initializer=_stop_workers_at_exit
    ) as pool:
        futures = {pool.submit(_build_one, specs[i], target): i for i in _longest_first(specs)}
        for future in as_completed(futures):
            done(futures[future], future.result(), f"at {time.perf_counter() - started:.1f} s")
    return Bundle(tuple(kernels))


def _longest_first(specs: list[S.KernelSpec]) -> list[int]:
    """The positions of ``specs`` in the order their builds start: the
    kernels expected to compile longest first, so that no long one starts
    last and keeps one builder busy while the others idle. Masked
    (unaligned) loads compile longest, then fewer warps (more code per warp),
    deeper pipelines and bigger tiles; TMA copies shortest."""

    def quickest(spec: S.KernelSpec) -> tuple[bool, bool, int, int, int]:
        work = spec.block_m * spec.block_n * spec.block_k
        return (spec.aligned, spec.tma, spec.num_warps, -(spec.num_stages or 0), -work)

    return sorted(range(len(specs)), key=lambda i: quickest(specs[i]))


def _stop_workers_at_exit() -> None:
    """In a builder process: stop its Triton workers when it ends (it ends
    without running ``atexit``), so that it reaps them."""
    from multiprocessing import util

    from gemm_opt.lowering.triton_bridge import WORKERS

    util.Finalize(WORKERS, WORKERS.shutdown, exitpriority=0)


def _build_one(spec: S.KernelSpec, target: str):
    """One spec's bundle kernel."""
    from gemm_opt.kernels.cache import module_for
    from gemm_opt.runtime.build import build_kernel

    module = module_for(spec, target)
    meta = {"kind": "schedule", **dataclasses.asdict(spec)}  # the epilogue as a dict
    with module.context:  # the bindings read argument attributes in the module's context
        return build_kernel(
            module,
            spec.arg_names,
            name=spec.name,
            grid=[1, 1, 1],
            target=target,
            meta=meta,
            pipeline=pipeline_of(spec, target),
        )


def main(argv: list[str] | None = None) -> int:
    from gemm_opt.runtime.gemm import DEFAULT_BUNDLE_DIR, target_folder

    parser = argparse.ArgumentParser(
        prog="python -m gemm_opt.kernels.build_bundles", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--target", required=True, choices=TARGETS)
    parser.add_argument("--out", type=Path, default=DEFAULT_BUNDLE_DIR, help="bundle root folder")
    parser.add_argument("--dtypes", default=",".join(S.DTYPES), help="fp16,bf16 (default: both)")
    parser.add_argument(
        "--fp8",
        default="f8e4m3",
        help="FP8 formats bundled into fp8.bundle: f8e4m3,f8e5m2 (default: %(default)s; '' none)",
    )
    parser.add_argument(
        "--layouts",
        default="picked",
        choices=LAYOUT_SETS,
        help="operand layouts bundled (default: %(default)s; see LAYOUT_SETS)",
    )
    parser.add_argument(
        "--epilogues",
        choices=("yes", "no", "only"),
        default="yes",
        help="fused-epilogue kernels into epilogue.bundle (default: %(default)s; only: "
        "epilogue.bundle and the plain kernels' TMA twins they are compared with)",
    )
    parser.add_argument("--list", action="store_true", help="print the kernel names and exit")
    parser.add_argument(
        "--only",
        type=Path,
        help="build only the kernels named in this file (one a line; e.g. a benchmark's "
        "--list-kernels), from the kernels of --dtypes, --fp8 and --layouts",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=default_jobs(),
        help="kernels compiled at once (default: one per core, here %(default)s)",
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs takes a positive count; got {args.jobs}")
    dtypes = tuple(d for d in args.dtypes.split(",") if d)
    fp8 = tuple(d for d in args.fp8.split(",") if d)
    if any(d not in S.FP8_DTYPES for d in fp8):
        parser.error(f"--fp8 takes {', '.join(S.FP8_DTYPES)} (or ''); got {args.fp8!r}")
    # `--dtypes=` with `--fp8`: only fp8.bundle.
    if (not dtypes and not fp8) or any(d not in S.DTYPES for d in dtypes):
        parser.error(f"--dtypes takes {', '.join(S.DTYPES)}; got {args.dtypes!r}")
    specs = bundle_specs(dtypes, args.layouts)
    fp8_specs = fp8_bundle_specs(fp8)
    epi_specs = epilogue_bundle_specs(dtypes) if args.epilogues != "no" else []
    if args.epilogues == "only":  # the plain kernels the fused ones are measured against
        fp8_specs = []
        plain = [replace(s, epilogue=S.NO_EPILOGUE, out_dtype=None) for s in epi_specs]
        # the MoE forward unfused on every class (its 2N-wide output may take the widest)
        plain += [replace(s, grouped="m") for s in plain if s.grouped == "k"]
        specs = list({s.name: s for s in plain}.values())
    if args.only is not None:
        try:
            names = [x.strip() for x in args.only.read_text().splitlines() if x.strip()]
        except OSError as e:
            parser.error(f"--only: cannot read {args.only}: {e.strerror}")
        try:
            chosen = select(specs + fp8_specs + epi_specs, names)
        except ValueError as e:
            parser.error(f"--only {args.only}: {e}")
        specs = [s for s in specs if s in chosen]
        fp8_specs = [s for s in fp8_specs if s in chosen]
        epi_specs = [s for s in epi_specs if s in chosen]
    if args.list:
        print("\n".join(s.name for s in specs + fp8_specs + epi_specs))
        return 0
    folder = args.out / target_folder(args.target)
    folder.mkdir(parents=True, exist_ok=True)
    groups = (("schedules", specs), ("fp8", fp8_specs), ("epilogue", epi_specs))
    for name, group in groups:
        if not group:
            continue
        bundle = build(args.target, group, jobs=args.jobs)
        path = folder / f"{name}.bundle"
        bundle.write(path)
        print(f"wrote {path} ({path.stat().st_size} bytes, {len(bundle)} kernels)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
