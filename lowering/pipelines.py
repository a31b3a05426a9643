"""Named pipelines: which passes run, in which order, for each target.

One pass per line, each behind its ``if`` guard, in the style of Triton's
``make_ttgir``, so the order and the conditions read top to bottom.
"""

from __future__ import annotations

from gemm_opt.core.targets import TARGET_NAMES as TARGETS
from gemm_opt.core.targets import TARGETS as _TARGETS

# TARGETS: the targets the lowering supports, from the one target table
# (``cuda:90``: the portable lowering for NVIDIA Hopper, with mma.sync and
# cp.async; hints dropped).


def tile_passes(target: str, fuse: bool = True, derive_hints: bool = False) -> list[str]:
    """The tile-level passes run before the conversion to TritonGPU.

    They only concern TDM (gfx1250): on gfx950, gfx942 and cuda:90 the
    conversion drops the hints, so their warp layouts and predicates would describe
    nothing that is emitted. Fusion runs before the warp predicates because
    it only fuses copies without a ``pred`` operand; the copies it leaves
    single are then predicated (and the conversion checks those predicates
    against the hints before stripping them again).
    """
    check_target(target)
    tdm = _TARGETS[target].tdm
    passes: list[str] = []
    if derive_hints and tdm:
        passes.append("tile-derive-warp-hints")
    if tdm:
        passes.append("tile-assign-tdm-warp-layout")
    if fuse and tdm:
        passes.append("tile-fuse-tdm-copies")
    if tdm:
        passes.append("tile-emit-warp-predicates")
    return passes


def tile_to_ttgir(target: str, fuse: bool = True, derive_hints: bool = False) -> list[str]:
    """Every pass from a tile module to TTGIR for ``target``."""
    passes = tile_passes(target, fuse=fuse, derive_hints=derive_hints)
    passes.append(f"convert-tile-to-triton-gpu{{target={target}}}")
    return passes


def pipeline_text(passes: list[str]) -> str:
    """``--pass-pipeline`` text of a pass list."""
    return f"builtin.module({','.join(passes)})"


def expand(kind: str, options: dict[str, str]) -> str:
    """Expand the named pipeline ``kind`` (see ``gemm_opt.lowering.PIPELINES``)."""
    known = {"target", "fuse", "derive-hints"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ValueError(
            f"pipeline '{kind}' has no option '{unknown[0]}' (options: {', '.join(sorted(known))})"
        )
    target = options.get("target", "gfx1250")
    fuse = _flag(options.get("fuse", "true"))
    derive = _flag(options.get("derive-hints", "false"))
    if kind == "tile-optimize":
        return ",".join(tile_passes(target, fuse=fuse, derive_hints=derive))
    return ",".join(tile_to_ttgir(target, fuse=fuse, derive_hints=derive))


def _flag(text: str) -> bool:
    if text.lower() in ("1", "true"):
        return True
    if text.lower() in ("0", "false"):
        return False
    raise ValueError(f"expected true or false, got '{text}'")


def check_target(target: str) -> None:
    """A ValueError unless ``target`` is one of :data:`TARGETS`."""
    if target not in TARGETS:
        raise ValueError(f"unknown target '{target}' (known: {', '.join(TARGETS)})")


__all__ = ["TARGETS", "check_target", "expand", "pipeline_text", "tile_passes", "tile_to_ttgir"]
