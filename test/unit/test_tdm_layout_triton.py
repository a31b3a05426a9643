"""Differential test: gemm_opt.core.tdm_layout against Triton 3.9.0's gfx1250 lowering.

Each configuration is written as TTGIR, compiled by the installed Triton to
LLVM IR, and the LLVM IR is interpreted once per ``llvm.amdgcn.wave.id``
(see ``support.triton_lowering``). Per warp we compare the
predicate, the member a fused copy selects, the start coordinates (also for
inactive warps: they still name their masked tile), the tile dims, the
per-warp re-clamped tensor dims, and the LDS address (``alloc base +
2 * shared_offset(start)``, with one base per partition, each in its
own 64 KiB LDS region). A configuration the
model rejects (``WarpHintError``) must fail to compile in Triton, and vice
versa.

A fast subset runs first; the full sweep is marked ``slow`` and runs too
(``-m "not slow"`` leaves it out of a quick local run).
Compiled LLVM IR is cached under ``$GEMM_OPT_LLIR_CACHE`` or the temp dir.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import pytest
import triton  # noqa: F401  (a pinned dependency: missing triton must fail, not skip)
from support.triton_lowering import (
    ELEMENT_BYTES,
    CopyMember,
    LoweringConfig,
    LoweringError,
    lower,
)

from gemm_opt.core.layouts import PaddedShared, PartitionedShared, SwizzledShared
from gemm_opt.core.tdm_layout import fused_warp_plan, warp_plan
from gemm_opt.core.warp_hint import WarpHintError, legal_hints
from gemm_opt.model.copy import shared_offset, shared_partitions

#: Triton's gfx1250 allocator gives each partition of a partitioned buffer
#: its own buffer, in its own 64 KiB LDS region (the base inside the region
#: depends on the other allocations).
PARTITION_REGION_BYTES = 64 * 1024

#: The lowering assertion a hint fails when its K warps do not fit the block.
ACTIVE_WARPS_ASSERT = "== activeWarps' failed"


def _model_plan(config: LoweringConfig):
    if config.fused:
        return fused_warp_plan(
            [(m.block_shape, m.hint, m.shared_layout) for m in config.members],
            config.num_warps,
        )
    (m,) = config.members
    return warp_plan(m.block_shape, config.num_warps, m.hint, m.shared_layout)


def compare(config: LoweringConfig) -> tuple[str, list[str]]:
    """Compile and compare; returns (outcome, mismatches).

    outcome is "match" (both accept), "both-reject" or "mismatch".
    """
    try:
        plan = _model_plan(config)
        model_error = None
    except WarpHintError as exc:
        plan, model_error = None, exc
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = lower(config)
        triton_error = None
    except LoweringError as exc:
        result, triton_error = None, exc
    if model_error is not None or triton_error is not None:
        if model_error is not None and triton_error is not None:
            # The model's block-too-small rule is Triton's lowering assertion.
            if model_error.rule == "block-too-small" and ACTIVE_WARPS_ASSERT in str(triton_error):
                return "both-reject", []
            return "mismatch", [f"model: {model_error}; triton: {triton_error}"]
        return "mismatch", [f"model error: {model_error!r}; triton error: {triton_error}"]

    problems: list[str] = []
    if result.num_instructions != 1:
        problems.append(f"{result.num_instructions} TDM instructions")
    bases: dict[tuple[int, int], set[int]] = {}
    for entry, got in zip(plan, result.warps, strict=True):
        w = entry.warp
        member_index = getattr(entry, "member", 0)
        member = config.members[member_index]
        want_pred = int(entry.active and bool(member.pred))
        if got.member != member_index:
            problems.append(f"warp {w}: member {got.member} != model {member_index}")
            continue
        if got.pred != want_pred:
            problems.append(f"warp {w}: pred {got.pred} != model {want_pred}")
        if got.start != entry.start:
            problems.append(f"warp {w}: start {got.start} != model {entry.start}")
        if got.tile != entry.tile:
            problems.append(f"warp {w}: tile {got.tile} != model {entry.tile}")
        dims = tuple(
            max(0, s - o - st)
            for s, o, st in zip(
                member.full_tensor_shape, member.full_offsets, entry.start, strict=True
            )
        )
        if got.tensor_dims != dims:
            problems.append(f"warp {w}: tensor dims {got.tensor_dims} != model {dims}")
        layout = member.shared_layout
        # Offset inside the partition; each partition has its own base.
        off = shared_offset(entry.start, member.block_shape, layout, 0)
        part = int(shared_partitions([entry.start], member.block_shape, layout)[0])
        bases.setdefault((member_index, part), set()).add(got.lds_address - ELEMENT_BYTES * off)
    for (member_index, part), base in bases.items():
        if len(base) != 1:
            problems.append(
                f"member {member_index} partition {part}: LDS addresses "
                f"inconsistent with shared_offset (implied bases {sorted(base)})"
            )
    by_member: dict[int, list[int]] = {}
    for (member_index, _part), base in sorted(bases.items()):
        if len(base) == 1:
            region = next(iter(base)) // PARTITION_REGION_BYTES
            by_member.setdefault(member_index, []).append(region)
    for member_index, regions in by_member.items():
        if len(set(regions)) != len(regions):
            problems.append(f"member {member_index}: partitions share an LDS region {regions}")
    return ("mismatch" if problems else "match"), problems


# ---------------------------------------------------------------------------
# Configurations
# ---------------------------------------------------------------------------

SWEEP_HINTS_16 = (
    0xFFFF,
    0x8888,
    0x0F0F,
    0x3333,
    0xFF00,
    0x00FF,
    0x5555,
    0xAAAA,
    0x1111,
    0x000F,
    0xF000,
    0x0101,
    0x8000,
    0x0001,
    0x0303,
    0x0C0C,
)

SHAPES_BY_RANK = {
    1: [(64,), (4,), (1,), (256,), (2,)],
    2: [(128, 64), (4, 64), (2, 2), (1, 1), (1, 64), (16, 16), (8, 2)],
    3: [(2, 4, 64), (1, 8, 64), (8, 2, 32), (2, 1, 1)],
    4: [(2, 2, 2, 64), (1, 1, 4, 8)],
    5: [(1, 2, 2, 2, 32), (2, 2, 2, 2, 32), (2, 1, 2, 1, 4)],
}

PARTITIONED = [
    ((128, 16), PartitionedShared(2, 1, 0, PaddedShared(16, 4))),
    ((128, 16), PartitionedShared(2, 2, 0)),
    ((16, 128), PartitionedShared(2, 1, 1)),
    ((64, 64), PartitionedShared(2, 2, 1, PaddedShared(16, 4))),
    ((4, 64, 64), PartitionedShared(2, 1, 1, PaddedShared(64, 8))),
    ((2, 128), PartitionedShared(2, 1, 1)),
    ((1, 128), PartitionedShared(2, 1, 1)),
    ((8, 4, 32), PartitionedShared(4, 1, 0)),
    ((256, 32), PartitionedShared(4, 2, 0, PaddedShared(32, 8))),
]

FUSED = [
    (8, [((128, 64), 0x0F), ((128, 64), 0xF0)]),
    (8, [((128, 64), 0x55), ((128, 64), 0xAA)]),
    (8, [((128, 64), 0x0F), ((128, 64), 0x30), ((128, 64), 0xC0)]),
    (8, [((128, 64), 1), ((128, 64), 2), ((128, 64), 4), ((128, 64), 8)]),
    (8, [((128, 64), 0x03), ((128, 64), 0x0C)]),
    (8, [((128, 64), 0x01), ((128, 64), 0x08)]),
    (8, [((64, 64), 0x0F), ((32, 128), 0xF0)]),
    (8, [((2, 4, 64), 0x33), ((8, 2, 32), 0xCC)]),
    (16, [((128, 64), 0x00FF), ((128, 64), 0xFF00)]),
    (4, [((64,), 0x5), ((16,), 0x2), ((4,), 0x8)]),
]


def _hints(nw: int):
    if nw == 16:
        return [None, *SWEEP_HINTS_16]
    return [None, *legal_hints(nw)]


def sweep_configs() -> list[LoweringConfig]:
    """The full sweep (hinted, unhinted, partitioned, padded, OOB, fused)."""
    out: list[LoweringConfig] = []
    for nw in (1, 2, 4, 8, 16):
        for rank, shapes in SHAPES_BY_RANK.items():
            for shape in shapes:
                if nw == 16 and rank in (1, 3) and math.prod(shape) < 16:
                    continue  # keep the sweep bounded
                for hint in _hints(nw):
                    out.append(LoweringConfig.single(shape, nw, hint))
    for shape, layout in PARTITIONED:
        pieces = layout.num_logical_pieces
        for nw in (4, 8, 16):
            hints = [h for h in _hints(nw) if h is None or bin(h).count("1") % pieces == 0]
            for hint in hints:
                if hint is None and nw % pieces:
                    continue  # several TDM instructions: not modelled
                out.append(LoweringConfig.single(shape, nw, hint, layout))
    for nw, hint in [(8, None), (8, 0x55), (8, 0xF0), (4, 0x3)]:
        out.append(LoweringConfig.single((128, 64), nw, hint, PaddedShared(64, 8)))
        out.append(LoweringConfig.single((2, 8, 32), nw, hint, PaddedShared(32, 4)))
    # Out-of-bounds reads: per-warp re-clamped tensor dims.
    for nw, hint in [(8, None), (8, 0x0F), (8, 0xCC), (4, 0xA), (16, 0x8888)]:
        out.append(
            LoweringConfig.single((128, 64), nw, hint, tensor_shape=(200, 100), offsets=(100, 50))
        )
        out.append(
            LoweringConfig.single((2, 4, 64), nw, hint, tensor_shape=(3, 5, 70), offsets=(1, 2, 30))
        )
    for nw, members in FUSED:
        out.append(LoweringConfig.fused_copy([(s, h, None) for s, h in members], nw))
    # A fused member with descriptor pred 0, and partitioned members.
    out.append(
        LoweringConfig(
            8,
            (CopyMember((128, 64), 0x0F), CopyMember((128, 64), 0xF0, pred=0)),
            fused=True,
        )
    )
    out.append(
        LoweringConfig.fused_copy(
            [
                ((128, 16), 0x0F, PartitionedShared(2, 1, 0, PaddedShared(16, 4))),
                ((64, 64), 0xF0, PaddedShared(64, 8)),
            ],
            8,
        )
    )
    return out


def fast_configs() -> list[LoweringConfig]:
    """~20 representative configurations for the default run."""
    single = LoweringConfig.single
    return [
        single((128, 64), 8, None),
        single((128, 64), 8, 0x0F),
        single((128, 64), 8, 0xF0),
        single((128, 64), 8, 0x55),
        single((128, 64), 8, 0xCC),
        single((128, 64), 8, 0x10),
        single((128, 64), 16, 0x8888),
        single((2, 4, 64), 8, None),
        single((2, 4, 64), 8, 0x0F),
        single((2, 2, 2, 64), 8, 0x55),
        single((1, 2, 2, 2, 32), 8, 0xCC),
        single((2, 2), 8, None),
        single((2, 2), 8, 0xFF),  # both reject (block too small)
        single((64,), 4, 0xA),
        single((128, 16), 4, 0x3, PartitionedShared(2, 1, 0, PaddedShared(16, 4))),
        single((16, 128), 8, 0x0F, PartitionedShared(2, 1, 1)),
        single((1, 128), 4, 0xF, PartitionedShared(2, 1, 1)),  # both reject
        single((128, 64), 8, 0xCC, tensor_shape=(200, 100), offsets=(100, 50)),
        LoweringConfig.fused_copy(
            [((128, 64), 0x0F, None), ((32, 128), 0x30, None), ((128, 64), 0xC0, None)],
            8,
        ),
        LoweringConfig.fused_copy([((128, 64), 0x01, None), ((128, 64), 0x08, None)], 8),
    ]


def _id(config: LoweringConfig) -> str:
    parts = [f"nw{config.num_warps}"]
    for m in config.members:
        shape = "x".join(map(str, m.block_shape))
        hint = "none" if m.hint is None else f"{m.hint:#x}"
        lay = type(m.shared_layout).__name__ if m.shared_layout else ""
        parts.append(f"{shape}-{hint}{'-' + lay if lay else ''}")
    return "_".join(parts)


FAST = fast_configs()


@pytest.mark.parametrize("config", FAST, ids=[_id(c) for c in FAST])
def test_fast_subset_matches_triton(config):
    outcome, problems = compare(config)
    assert outcome != "mismatch", "\n".join(problems)


def test_fast_subset_rejections_are_expected():
    rejected = [c for c in FAST if compare(c)[0] == "both-reject"]
    assert len(rejected) == 2


#: Compares every ``count``-th configuration of the full sweep from ``first`` on
#: (interleaved, so the workers get alike mixes), in a process of its own.
SWEEP_WORKER = r"""
import importlib.util, json, sys
path, first, count, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
spec = importlib.util.spec_from_file_location("tdm_layout_sweep", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
configs = module.sweep_configs()
outcomes = [module.compare(configs[i]) for i in range(first, len(configs), count)]
with open(out, "w") as f:
    json.dump(outcomes, f)
"""


def _sweep_outcomes(configs: list[LoweringConfig], workers: int, tmp: Path) -> list:
    """``compare`` of every configuration of the full sweep, split over ``workers``."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    me = str(Path(__file__).resolve())
    results = [tmp / f"sweep-{k}.json" for k in range(workers)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SWEEP_WORKER, me, str(k), str(workers), str(results[k])],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for k in range(workers)
    ]
    outcomes: list = [None] * len(configs)
    try:
        for k, proc in enumerate(procs):
            _, err = proc.communicate(timeout=3600)
            assert proc.returncode == 0, err[-4000:]
            outcomes[k::workers] = json.loads(results[k].read_text())
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    return outcomes


def run_sweep(configs=None) -> dict:
    """Run the sweep; returns counts and mismatches (for reports).

    The full sweep (``configs=None``) runs in one worker process per CPU (up
    to 4), side by side.
    """
    if configs is None:
        configs = sweep_configs()
        workers = max(1, min(os.cpu_count() or 1, 4))
        with tempfile.TemporaryDirectory() as scratch:
            outcomes = _sweep_outcomes(configs, workers, Path(scratch))
    else:
        outcomes = [compare(c) for c in configs]
    stats = {"configs": len(configs), "match": 0, "both-reject": 0, "mismatch": []}
    for config, (outcome, problems) in zip(configs, outcomes, strict=True):
        if outcome == "mismatch":
            stats["mismatch"].append((_id(config), problems))
        else:
            stats[outcome] += 1
    return stats


def test_sweep_is_large_enough():
    assert len(sweep_configs()) >= 200


@pytest.mark.slow
def test_full_sweep_matches_triton():
    stats = run_sweep()
    print(
        f"\nTriton sweep: {stats['configs']} configurations, {stats['match']} match, "
        f"{stats['both-reject']} rejected by both, {len(stats['mismatch'])} mismatches"
    )
    assert not stats["mismatch"], "\n".join(
        f"{name}: {'; '.join(p)}" for name, p in stats["mismatch"][:20]
    )


# The swizzled layout used by default must be the unswizzled one: TDM rejects
# swizzling ("TDM does not support swizzling").
def test_tdm_rejects_swizzled_destination():
    config = LoweringConfig.single((128, 64), 8, None, SwizzledShared(8, 1, 8, (1, 0)))
    with pytest.raises(LoweringError, match="does not support swizzling"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lower(config)
