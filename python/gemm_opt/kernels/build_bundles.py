"""Compile the schedule kernels the API launches on the GPU into bundle files.

    python -m gemm_opt.kernels.build_bundles --target cuda:90 [--out DIR] [--dtypes fp16,bf16]

writes ``DIR/<target folder>/schedules.bundle`` (default ``DIR``: the
package's ``kernels/bundles``, where :mod:`gemm_opt.runtime.gemm` looks), one
kernel per :class:`~gemm_opt.core.schedules.KernelSpec` of :func:`bundle_specs`.
Needs the compiler (MLIR bindings, Triton 3.9.0); the bundle then runs with
torch alone. ``--list`` prints the kernel names without compiling.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from gemm_opt.core import schedules as S
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.kernels.h100_configs import GPU_CONFIGS

#: The GPU configurations bundled (the API's, by name).
CONFIGS = {name: cfg.__dict__ for name, cfg in GPU_CONFIGS.items()}
TARGETS = ("cuda:90",)


def bundle_specs(dtypes: tuple[str, ...] = S.DTYPES) -> list[S.KernelSpec]:
    """Every kernel the API may launch: each schedule, reduction, grouped form and config,
    and the twins of each with the pipelined body: aligned ``cp.async`` and TMA
    (:func:`~gemm_opt.core.schedules.tma_copies`; wgrad's with per-tile
    descriptors), which the runtime launches instead where the arguments
    satisfy their facts."""
    specs = _plain_specs(dtypes)
    twins = [s for s in specs if S.pipelined(s.num_warps)]
    tma = [s for s in twins if S.tma_copies(s.num_warps)]
    return (
        specs
        + [replace(s, aligned=True) for s in twins]
        + [replace(s, aligned=True, tma=True) for s in tma]
    )


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
                    if h100.config_serves(name, red):
                        specs.append(S.KernelSpec(kind, red, "none", dtype, **cfg))
        for kind in S.GROUPED_KINDS:
            for cfg in CONFIGS.values():  # forward, dgrad (trans_b), wgrad
                specs.append(S.KernelSpec(kind, None, "m", dtype, **cfg))
                specs.append(S.KernelSpec(kind, None, "m", dtype, **cfg, trans_b=True))
                specs.append(S.KernelSpec(kind, None, "k", dtype, **cfg))
    return specs


def build(target: str, specs: list[S.KernelSpec], *, quiet: bool = False):
    """The bundle of ``specs``' kernels compiled for ``target``."""
    from gemm_opt.kernels.cache import module_for
    from gemm_opt.runtime import Bundle
    from gemm_opt.runtime.build import build_kernel

    kernels = []
    for i, spec in enumerate(specs, 1):
        start = time.perf_counter()
        module = module_for(spec, target)
        meta = {"kind": "schedule", **spec.__dict__}
        with module.context:  # the bindings read argument attributes in the module's context
            k = build_kernel(
                module,
                spec.arg_names,
                name=spec.name,
                grid=[1, 1, 1],
                target=target,
                meta=meta,
                pipeline=pipeline_of(spec, target),
            )
        kernels.append(k)
        if not quiet:
            print(
                f"[{i}/{len(specs)}] {k.name}: {k.sm}, {k.shared_bytes} B shared, "
                f"{len(k.binary)} B cubin ({time.perf_counter() - start:.1f} s)",
                flush=True,
            )
    return Bundle(tuple(kernels))


def main(argv: list[str] | None = None) -> int:
    from gemm_opt.runtime.gemm import DEFAULT_BUNDLE_DIR, target_folder

    parser = argparse.ArgumentParser(
        prog="python -m gemm_opt.kernels.build_bundles", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--target", required=True, choices=TARGETS)
    parser.add_argument("--out", type=Path, default=DEFAULT_BUNDLE_DIR, help="bundle root folder")
    parser.add_argument("--dtypes", default=",".join(S.DTYPES), help="fp16,bf16 (default: both)")
    parser.add_argument("--list", action="store_true", help="print the kernel names and exit")
    args = parser.parse_args(argv)
    dtypes = tuple(d for d in args.dtypes.split(",") if d)
    if not dtypes or any(d not in S.DTYPES for d in dtypes):
        parser.error(f"--dtypes takes {', '.join(S.DTYPES)}; got {args.dtypes!r}")
    specs = bundle_specs(dtypes)
    if args.list:
        print("\n".join(s.name for s in specs))
        return 0
    bundle = build(args.target, specs)
    folder = args.out / target_folder(args.target)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "schedules.bundle"
    bundle.write(path)
    print(f"wrote {path} ({path.stat().st_size} bytes, {len(bundle)} kernels)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
