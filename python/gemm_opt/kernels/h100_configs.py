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

from gemm_opt.core.modes import FIXUP_REDUCTIONS, Grouped, Kind
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
#: tuned yet. No 128x256 class: with the epilogue's two broadcast scale tiles
#: beside its 128 accumulator registers a thread spills (hundreds of bytes of
#: stack in every variant), where these two do not (their aligned and TMA twins).
FP8_GPU_CONFIGS = {
    "mid": GemmConfig(128, 128, 128, 8, 8, 4),
    "narrow": GemmConfig(64, 128, 128, 8, 4, 4),
}


#: The promotion intervals besides one instruction's (32) that the FP8 bundle holds
#: for rowwise (``KernelSpec.imprecise_acc``): each wgmma's sum added into fp32 on
#: its own serializes the wgmmas, 128 lets a K block's four run back to back. The
#: benchmark measures the API's choice beside 32.
FP8_IMPRECISE_ACC: tuple[int, ...] = (128,)
#: The interval the API's tensorwise and rowwise kernels run with, per
#: :data:`FP8_GPU_CONFIGS` entry (None: one instruction's K, 32), chosen from the
#: benchmark's speed and accuracy (docs/fp8.md, "Accumulation"): 128 is 1.3x
#: faster on every shape measured and as accurate as ``torch._scaled_mm``.
FP8_EPILOGUE_IMPRECISE_ACC: dict[str, int | None] = {"mid": 128, "narrow": 128}


def fp8_config_name(m: int, n: int, sms: int = 132) -> str:
    """The :data:`FP8_GPU_CONFIGS` entry for an ``m x n`` output: ``mid`` where
    its tiles fill a wave of ``sms`` programs (and M has ``block_m`` rows), else
    ``narrow`` (decode and small outputs: 64-row tiles, more programs)."""
    cfg = FP8_GPU_CONFIGS["mid"]
    if m >= cfg.block_m and tile_count(m, n, cfg.block_m, cfg.block_n) >= sms:
        return "mid"
    return "narrow"


__all__ = [
    "FP8_GPU_CONFIGS",
    "FP8_IMPRECISE_ACC",
    "FP8_EPILOGUE_IMPRECISE_ACC",
    "GPU_CONFIG",
    "GPU_CONFIGS",
    "GPU_SHAPE_CLASSES",
    "SPLIT_K_CLASSES",
    "config_serves",
    "fp8_config_name",
    "gpu_config_name",
]
