"""The H100 tuning of the schedule kernels: the configurations bundled for the GPU
and the shape classes that pick one for a problem.

Tuning, not ABI: the kernels take any configuration
:func:`~gemm_opt.core.schedules.abi.check_kernel_config` accepts; these are the
ones the bundles are built with and the API launches when no ``config`` is
given. The autotune table (``tuned/cuda90.json``) is measured over the same
kernels. The measurements behind them: ``docs/schedule-tuning-history.md``.
Pure Python (the standard library and :mod:`gemm_opt.core`): the runtime's
autotune fallback reads them where no compiler is installed.
"""

from __future__ import annotations

from gemm_opt.core.modes import FIXUP_REDUCTIONS, Grouped, Kind, Scale
from gemm_opt.core.schedules.abi import GemmConfig
from gemm_opt.core.schedules.partition import tile_count

#: The configurations bundled for the GPU, by name. ``default`` is the base a
#: partial ``config`` dict fills in (its ``num_stages`` None: the body's own;
#: 8 warps, on which stream-K's fix-up does not spill, as it does on 4); the
#: others are the tuned shape classes :func:`gpu_config_name` picks from:
#: 128x256 tiles on 8 warps with 3 stages (the dense kernel's large-shape
#: config), 128x128 on 8 warps with 3 (also where stream-K's fix-up holds a
#: partial tile next to the accumulator, which spills at 128x256, and at
#: 128x128 on 4 warps), and 64-row tiles for few-row or few-tile shapes, where
#: smaller tiles give more programs (stream-K splits K on top). The 64-row
#: classes take 128-deep K blocks and 4 or 6 stages (about 192 KB of shared
#: memory, one program per SM): these shapes are bound by how many bytes each
#: SM keeps in flight.
GPU_CONFIGS = {
    "default": GemmConfig(128, 128, 64, 8, 8),
    "wide": GemmConfig(128, 256, 64, 8, 8, 3),
    "mid": GemmConfig(128, 128, 64, 8, 8, 3),
    "narrow": GemmConfig(64, 128, 128, 8, 4, 4),
    "small": GemmConfig(64, 64, 128, 8, 4, 6),
}
#: The configuration a partial ``config`` fills in on the GPU.
GPU_CONFIG = GPU_CONFIGS["default"]
#: The shape classes, first match wins: (config name, the fraction of a wave of
#: programs, one per SM, that its tiles must fill, whether stream-K's fix-up
#: reductions may use it). A class also needs at least ``block_m`` rows (a
#: taller tile only multiplies padding). No match: ``small``.
GPU_SHAPE_CLASSES = (("wide", 1.0, False), ("mid", 1.0, True), ("narrow", 0.5, True))
#: The classes split-K is bundled for: the decode and small shapes it exists for
#: (too few tiles to fill the SMs), whose 64-row tiles each slice splits further.
SPLIT_K_CLASSES = ("narrow", "small")

#: Swap-AB's configurations (``C^T = B^T A^T``: ``block_m`` runs over N, ``block_n``
#: over the rows of A, the tokens of a decode step), by name. The kernels exist
#: for data-parallel (a program per tile: no workspace, nothing to zero before
#: the launch) and split-K; ``auto`` runs them data-parallel
#: (``docs/decode.md`` has the measurements). Stages are chosen by the bytes in
#: flight: one program per SM keeps ``(num_stages - 1) * (block_m + block_n) *
#: block_k * 2`` bytes of A and B in flight, 123 KB (``swap16k``: 64 wide, 256-deep
#: K blocks, half the loop trips), 110 KB (``swap16``: 128 wide, two 64-row wgmmas
#: per K step) or 123 KB (``swap32``), against the ~25-31 KB per SM that 3.35-4.2
#: TB/s needs at a microsecond of latency (a fifth stage for ``swap16k``, 164 KB in
#: flight, measured the same). ``swap16k`` makes twice the tiles of ``swap16``:
#: more programs for narrow N, more waves for wide N.
SWAP_AB_CONFIGS = {
    "swap16k": GemmConfig(64, 16, 256, 8, 4, 4),
    "swap16": GemmConfig(128, 16, 128, 8, 4, 4),
    "swap32": GemmConfig(128, 32, 128, 8, 4, 4),
}
#: Grouped "m" configurations for tiny groups (MoE decode: most experts see 0 to
#: 16 tokens): 16-row tiles, so a group is padded to 16 rows, not 64 or 128. The
#: warps fold onto N (:func:`~gemm_opt.core.schedules.abi.warp_grid`); 16 rows are
#: under a wgmma's 64, so cuda:90 multiplies with ``mma.sync`` from the ``cp.async``
#: ring (no TMA twin: :func:`~gemm_opt.core.schedules.abi.tma_copies`); the weights'
#: bytes in flight are what count, 3 stages of 36 KB.
TINY_GROUP_CONFIGS = {"tiny16": GemmConfig(16, 128, 128, 8, 4, 4)}
#: The most rows of A (tokens) swap-AB is a candidate for: at 64 rows the regular
#: 64-row tiles waste nothing and were faster on every decode weight measured.
SWAP_AB_MAX_ROWS = 32


def config_serves(name: str, reduction: str | None, kind: str | None = None) -> bool:
    """Whether the GPU configuration ``name`` is built for ``reduction`` and
    ``kind``: not a fix-up reduction at a class that may not take one (its
    kernels would spill), split-K only at :data:`SPLIT_K_CLASSES`."""
    if kind == Kind.SPLIT_K and name not in SPLIT_K_CLASSES:
        return False
    return reduction not in FIXUP_REDUCTIONS or all(
        ok for cls, _, ok in GPU_SHAPE_CLASSES if cls == name
    )


def gpu_config_name(
    m: int,
    n: int,
    grouped: str = Grouped.NONE,
    sms: int = 132,
    reduction: str | None = None,
    groups: int = 1,
    kind: str | None = None,
) -> str:
    """The :data:`GPU_CONFIGS` entry for an ``m x n`` output (grouped m: all
    groups' rows; grouped k: one group's ``m x n``, of which there are
    ``groups``) on a GPU of ``sms`` SMs: the first of
    :data:`GPU_SHAPE_CLASSES` whose tiles fill its share of a wave (and that
    ``reduction`` and ``kind`` may use: :func:`config_serves`). Every grouped
    form, dgrad and wgrad included, has the pipelined body and so every class."""
    copies = groups if grouped == Grouped.K else 1
    for name, wave, _ in GPU_SHAPE_CLASSES:
        cfg = GPU_CONFIGS[name]
        if not config_serves(name, reduction, kind):
            continue
        tiles = copies * tile_count(m, n, cfg.block_m, cfg.block_n)
        if m >= cfg.block_m and tiles >= wave * sms:
            return name
    return "small"


#: The FP8 kernels' configurations (dense, B stored (N, K)), by name: 128-deep K
#: blocks (a copy row of 128 bytes, as the 16-bit classes' 64-deep ones); not
#: tuned yet. No 128x256 class: its one m64n256 wgmma per warpgroup holds 128
#: registers of partial sums (the promotion interval's) beside the 128 of the
#: accumulator and spills in the K loop, with scales or without; block128's block
#: product does the same at 256x128 (:data:`FP8_TMA_CONFIGS`).
FP8_GPU_CONFIGS = {
    "mid": GemmConfig(128, 128, 128, 8, 8, 4),
    "narrow": GemmConfig(64, 128, 128, 8, 4, 4),
}
#: FP8 configurations bundled as TMA twins only, bf16 C, tensorwise and rowwise
#: at their :data:`FP8_EPILOGUE_IMPRECISE_ACC` interval: the kernels that fit in
#: registers without a stack. ``tall``, 256x128 on 8 warps: a warpgroup's 128 rows
#: are two m64n128 wgmmas over the same B, 128 accumulator registers and 32 scale_b
#: columns a thread, and ptxas runs the wgmmas one at a time (C7514) rather than
#: hold both halves' partial sums, so the TMA twins take 252-255 registers and no
#: stack; the plain and ``cp.async`` twins (more address registers) spill, as do
#: fp32 C on grouped rowwise and rowwise at interval 32.
FP8_TMA_CONFIGS = {"tall": GemmConfig(256, 128, 128, 8, 8, 4)}


#: The promotion intervals besides one instruction's (32) that the FP8 bundle holds
#: for rowwise (``KernelSpec.imprecise_acc``): each wgmma's sum added into fp32 on
#: its own serializes the wgmmas, 128 lets a K block's four run back to back. The
#: benchmark measures the API's choice beside 32.
FP8_IMPRECISE_ACC: tuple[int, ...] = (128,)
#: The interval the API's tensorwise and rowwise kernels run with, per
#: :data:`FP8_GPU_CONFIGS` entry (None: one instruction's K, 32), chosen from the
#: benchmark's speed and accuracy (docs/fp8.md, "Accumulation"): 128 is 1.3x
#: faster on every shape measured and as accurate as ``torch._scaled_mm``.
FP8_EPILOGUE_IMPRECISE_ACC: dict[str, int | None] = {"tall": 128, "mid": 128, "narrow": 128}


#: The recipes, C type and dense schedules :data:`FP8_TMA_CONFIGS` are bundled for
#: (and the grouped "m" forward).
FP8_TMA_SCALES = (Scale.TENSORWISE, Scale.ROWWISE)
FP8_TMA_OUT = "bf16"
FP8_TMA_KINDS = (Kind.DATA_PARALLEL, Kind.PERSISTENT)
#: The FP8 shape classes, first match wins, as :data:`GPU_SHAPE_CLASSES`: (config
#: name, the waves of programs, one per SM, its tiles must fill). A class also needs
#: ``block_m`` rows, and a TMA-only one a call its TMA twin takes; no match (decode
#: and small outputs): ``narrow``, 64-row tiles, more programs. ``tall`` from two
#: waves: every problem measured there ran at least as fast on it as on ``mid``
#: (4096x2112, 2.1 waves, alike; 1.13-1.25x from 2.75 waves on), and nothing
#: smaller was measured (docs/fp8.md, "Larger tiles").
FP8_SHAPE_CLASSES: tuple[tuple[str, float], ...] = (("tall", 2.0), ("mid", 1.0))


def fp8_config_name(m: int, n: int, sms: int = 132, *, tma_only: bool = False) -> str:
    """The :data:`FP8_GPU_CONFIGS` or :data:`FP8_TMA_CONFIGS` entry for an ``m x n``
    output (grouped "m": all groups' rows): the first of :data:`FP8_SHAPE_CLASSES`
    whose tiles fill its waves of ``sms`` programs (and M has ``block_m`` rows),
    the TMA-only ones where ``tma_only`` says the call suits them (a recipe, C type
    and schedule they are bundled for, arguments that satisfy their TMA twin's
    facts); else ``narrow``."""
    for name, waves in FP8_SHAPE_CLASSES:
        if name in FP8_TMA_CONFIGS and not tma_only:
            continue
        cfg = {**FP8_GPU_CONFIGS, **FP8_TMA_CONFIGS}[name]
        if m >= cfg.block_m and tile_count(m, n, cfg.block_m, cfg.block_n) >= waves * sms:
            return name
    return "narrow"


__all__ = [
    "FP8_EPILOGUE_IMPRECISE_ACC",
    "FP8_GPU_CONFIGS",
    "FP8_IMPRECISE_ACC",
    "FP8_SHAPE_CLASSES",
    "FP8_TMA_CONFIGS",
    "FP8_TMA_KINDS",
    "FP8_TMA_OUT",
    "FP8_TMA_SCALES",
    "GPU_CONFIG",
    "GPU_CONFIGS",
    "GPU_SHAPE_CLASSES",
    "SPLIT_K_CLASSES",
    "SWAP_AB_CONFIGS",
    "SWAP_AB_MAX_ROWS",
    "TINY_GROUP_CONFIGS",
    "config_serves",
    "fp8_config_name",
    "gpu_config_name",
]
