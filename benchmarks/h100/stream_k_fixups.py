#!/usr/bin/env python3
"""Stream-K's fix-ups and split-K next to atomic stream-K and cuBLAS on the local NVIDIA GPU.

For each shape, reduction, grid and configuration this prints the GPU time
per call (20 calls in a CUDA graph, median of 20 replays, warm L2: the
kernels' own cost, as ``host_path.py`` measures it), whether five runs give
C bit for bit (linear and tree must), the largest error against float64
relative to ``|A| @ |B|``, and what the host partition says of the grid:
programs, contributors per split tile and the fix-up's critical path in K
iterations (:meth:`gemm_opt.core.schedules.StreamKPartition.critical_path`,
one added partial counted as one iteration).

Grids: ``resident`` (the default: SMs x occupancy) and ``sm`` (one program
per SM: fewer contributors per tile, fewer partials to add). Configurations:
the shape class's (``class``, what ``config=None`` runs) and ``mid``
(128x128 tiles: half the operand traffic per flop of 64x64, fewer tiles).

Split-K (``schedule="split-k"``, deterministic whatever the grid) runs each
configuration it is bundled for (:data:`~gemm_opt.kernels.h100_configs.SPLIT_K_CLASSES`) with
``num_programs`` one, two and four times the SMs (``sm``, ``2sm``, ``4sm``):
``S`` is the most slices per tile that fit (:func:`gemm_opt.core.schedules.split_k_count`),
and no program waits, so a grid past the resident programs is allowed.
Last, per shape, what ``schedule="auto"`` picks there and its time.

    PYTHONPATH=python python3 benchmarks/h100/stream_k_fixups.py [--out FILE]

Needs only torch and the bundles (``python -m gemm_opt.kernels.build_bundles
--target cuda:90``). Exit 2 without a GPU.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib
from benchlib import graph_us

from gemm_opt.core import schedules as S
from gemm_opt.kernels import h100_configs as h100

SHAPES = ((512, 512, 8192), (16, 4096, 7168), (128, 7168, 2048))
REDUCTIONS = ("atomic", "linear", "tree")
GRIDS = ("resident", "sm")
CONFIGS = ("class", "mid")
#: Split-K's grids: ``num_programs`` as SMs times this.
SPLIT_K_GRIDS = {"sm": 1, "2sm": 2, "4sm": 4}
REPEATS = 5  # runs compared bit for bit


@dataclass(frozen=True)
class Case:
    m: int
    n: int
    k: int
    reduction: str | None
    grid: str
    config: str
    schedule: str = "stream-k"

    def config_name(self, sms: int) -> str:
        """The :data:`~gemm_opt.kernels.h100_configs.GPU_CONFIGS` entry the case runs."""
        if self.config != "class":
            return self.config
        return h100.gpu_config_name(
            self.m, self.n, sms=sms, reduction=self.reduction, kind=self.schedule
        )

    def num_programs(self, sms: int) -> int | None:
        if self.schedule == "split-k":
            return sms * SPLIT_K_GRIDS[self.grid]
        return sms if self.grid == "sm" else None


def cases() -> list[Case]:
    stream_k = [
        Case(m, n, k, red, grid, cfg)
        for m, n, k in SHAPES
        for cfg in CONFIGS
        for red in REDUCTIONS
        for grid in GRIDS
    ]
    split_k = [
        Case(m, n, k, None, grid, cfg, "split-k")
        for m, n, k in SHAPES
        for cfg in h100.SPLIT_K_CLASSES
        for grid in SPLIT_K_GRIDS
    ]
    return stream_k + split_k


def partition_facts(case: Case, cfg: S.GemmConfig, programs: int) -> str:
    """Stream-K: contributors per split tile and the fix-up's critical path (model, K
    iterations: with an added partial costing one iteration, and the busiest
    program's work). Split-K: slices per tile and iterations per slice."""
    tiles = S.tile_count(case.m, case.n, cfg.block_m, cfg.block_n)
    ipt = S.iters_per_tile(case.k, cfg.block_k)
    if case.schedule == "split-k":
        split = S.split_k_partition(tiles, ipt, programs // max(tiles, 1))
        sizes = [e - b for b, e in map(split.slice_range, range(split.split_k))]
        spread = f"{min(sizes)}-{max(sizes)}"
        return f"tiles {tiles:4d}  slices {split.split_k:5d}  iterations {spread:>5} of {ipt}"
    part = S.stream_k_partition(tiles, ipt, programs)
    split = [len(part.contributors(t)) for t in range(part.dp_tiles, tiles)]
    spread = f"{min(split)}-{max(split)}" if split else "-"
    path, work = part.critical_path(case.reduction, 1.0), part.critical_path(case.reduction)
    return f"tiles {tiles:4d}  contributors {spread:>5}  path {path:4.0f} of work {work:4.0f}"


def run_case(torch: Any, case: Case, a: Any, b: Any, ref: Any, mag: Any, say: Any) -> None:
    import gemm_opt
    from gemm_opt.runtime import gemm as rt
    from gemm_opt.runtime import plan as plans

    sms = rt.sm_count(torch, a.device)
    name = case.config_name(sms)
    cfg = h100.GPU_CONFIGS[name]
    kw = dict(schedule=case.schedule, reduction=case.reduction, config=cfg,
              num_programs=case.num_programs(sms))  # fmt: skip
    first = gemm_opt.matmul(a, b, **kw)
    same = all(torch.equal(first, gemm_opt.matmul(a, b, **kw)) for _ in range(REPEATS - 1))
    err = ((first.double() - ref).abs() / mag.clamp_min(1e-30)).max().item()
    us = graph_us(torch, lambda: gemm_opt.matmul(a, b, **kw))
    programs = plans.plan("matmul", a, b, num_xcds=1, out=None, seed=None, **kw).programs
    say(
        f"{case.m}x{case.n}x{case.k:<5} {name:>6} {case.reduction or case.schedule:>7} "
        f"{case.grid:>8} "
        f"P {programs:4d}  {us:7.1f} us  bitwise {'yes' if same else 'NO '}  "
        f"err {err:.1e}  {partition_facts(case, cfg, programs)}"
    )


def run_auto(torch: Any, a: Any, b: Any, say: Any) -> None:
    """What ``schedule="auto"`` runs on ``a @ b`` (its plan) and its time."""
    import gemm_opt
    from gemm_opt.runtime import plan as plans

    kw = dict(schedule="auto", reduction=None, config=None, num_programs=None)
    us = graph_us(torch, lambda: gemm_opt.matmul(a, b, **kw))
    plan = plans.plan("matmul", a, b, num_xcds=1, out=None, seed=None, **kw)
    spec = plan.spec
    say(f"== auto: {spec.name} P {plan.programs}  {us:.1f} us")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, help="also write the report here")
    args = p.parse_args(argv)
    torch = benchlib.cuda_torch("stream_k_fixups")
    if torch is None:
        return 2
    say = benchlib.Report()
    say(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, bf16, GPU us per call")
    gen = torch.Generator(device="cuda").manual_seed(0)
    for m, n, k in SHAPES:
        a = torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)
        b = torch.randn(k, n, device="cuda", generator=gen).to(torch.bfloat16)
        ref = a.double() @ b.double()
        mag = a.double().abs() @ b.double().abs()
        cublas = graph_us(torch, lambda a=a, b=b: torch.matmul(a, b))
        say(f"== {m}x{n}x{k}: torch.matmul {cublas:.1f} us")
        for case in cases():
            if (case.m, case.n, case.k) == (m, n, k):
                run_case(torch, case, a, b, ref, mag, say)
        run_auto(torch, a, b, say)
    say.write(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
