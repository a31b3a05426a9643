"""Named pipelines: which passes run, in which order, for each target.

One pass per line, each behind its ``if`` guard, in the style of Triton's
``make_ttgir``, so the order and the conditions read top to bottom.

The passes a target's pipeline runs whatever its options say
(:func:`required_passes`) are the lowering's contract; the others
(``fuse``, ``derive-hints``) are choices. When a user's ``--pass-pipeline``
is followed by ``--emit``, :func:`completion` appends the required passes
that the user's pipeline did not run, then the conversion.
"""

from __future__ import annotations

from collections.abc import Collection

from gemm_opt.core.pipeline import Option
from gemm_opt.core.targets import TARGET_NAMES as TARGETS
from gemm_opt.core.targets import TARGETS as _TARGETS

# TARGETS: the targets the lowering supports, from the one target table
# (``cuda:90``: the portable lowering for NVIDIA Hopper, with wgmma (mma.sync
# where it does not fit) and cp.async; hints dropped).

#: Lowers ``tile.gemm_schedule`` (the first pass of every pipeline).
LOWER_SCHEDULE = "tile-lower-gemm-schedule"

#: The conversion out of the tile dialect (the last pass of every pipeline).
CONVERT = "convert-tile-to-triton-gpu"


def tile_passes(
    target: str, fuse: bool = True, derive_hints: bool = False, pipeline_mma: bool = True
) -> list[str]:
    """The tile-level passes run before the conversion to TritonGPU.

    ``tile-lower-gemm-schedule`` runs first on every target (a no-op without
    a ``tile.gemm_schedule``): the schedule becomes loops and atomics around
    its body, which the other passes then see like any other code. The warp
    passes only concern TDM (gfx1250): on gfx950, gfx942 and cuda:90 the
    conversion drops the hints, so their warp layouts and predicates would describe
    nothing that is emitted. Fusion runs before the warp predicates because
    it only fuses copies without a ``pred`` operand; the copies it leaves
    single are then predicated (and the conversion checks those predicates
    against the hints before stripping them again). On cuda:90, whose wgmma
    reads shared memory while it runs, ``tile-pipeline-mma`` keeps one MMA in
    flight (on the AMD targets the MMA reads registers: nothing to gain).
    """
    check_target(target)
    tdm = _TARGETS[target].tdm
    passes: list[str] = [LOWER_SCHEDULE]
    if pipeline_mma and _TARGETS[target].nvidia:
        passes.append("tile-pipeline-mma")
    if derive_hints and tdm:
        passes.append("tile-derive-warp-hints")
    if tdm:
        passes.append("tile-assign-tdm-warp-layout")
    if fuse and tdm:
        passes.append("tile-fuse-tdm-copies")
    if tdm:
        passes.append("tile-emit-warp-predicates")
    return passes


def tile_to_ttgir(
    target: str, fuse: bool = True, derive_hints: bool = False, pipeline_mma: bool = True
) -> list[str]:
    """Every pass from a tile module to TTGIR for ``target``."""
    passes = tile_passes(target, fuse=fuse, derive_hints=derive_hints, pipeline_mma=pipeline_mma)
    passes.append(convert_pass(target))
    return passes


def convert_pass(target: str) -> str:
    """The conversion's pipeline element for ``target``."""
    check_target(target)
    return f"{CONVERT}{{target={target}}}"


def required_passes(target: str) -> list[str]:
    """The tile passes ``target``'s pipeline runs whatever its options."""
    return tile_passes(target, fuse=False, derive_hints=False, pipeline_mma=False)


def completion(target: str, ran: Collection[str], convert: bool = True) -> list[str]:
    """What to append to a pipeline that ran the passes ``ran`` so that the
    module reaches ``target``'s TTGIR (``convert``) or its final tile IR.

    Nothing after a conversion; otherwise the required passes that did not
    run, in pipeline order, then the conversion. Optional passes the user
    left out stay out (that is how to emit unfused code).
    """
    if CONVERT in ran:
        return []
    rest = [p for p in required_passes(target) if p not in ran]
    return [*rest, convert_pass(target)] if convert else rest


#: The options of ``tile-to-ttgir`` and ``tile-optimize``.
PIPELINE_OPTIONS = (
    Option(
        "target",
        "string",
        "gfx1250",
        "gfx1250, gfx950, gfx942 or cuda:90; gemm-opt fills in the module's tile.target.",
    ),
    Option("fuse", "bool", "true", "Fuse disjoint hinted TDM copies (gfx1250)."),
    Option("derive-hints", "bool", "false", "Give runs of unhinted copies warp hints (gfx1250)."),
    Option(
        "pipeline-mma", "bool", "true", "Keep one asynchronous MMA in flight in K loops (cuda:90)."
    ),
)


def pipeline_text(passes: list[str]) -> str:
    """``--pass-pipeline`` text of a pass list."""
    return f"builtin.module({','.join(passes)})"


def expand(kind: str, options: dict[str, str]) -> str:
    """Expand the named pipeline ``kind`` (see ``gemm_opt.lowering.PIPELINES``)."""
    known = {o.name: o.default for o in PIPELINE_OPTIONS}
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(
            f"pipeline '{kind}' has no option '{unknown[0]}' (options: {', '.join(sorted(known))})"
        )
    options = known | options
    target = options["target"]
    fuse = _flag(options["fuse"])
    derive = _flag(options["derive-hints"])
    mma = _flag(options["pipeline-mma"])
    if kind == "tile-optimize":
        return ",".join(tile_passes(target, fuse=fuse, derive_hints=derive, pipeline_mma=mma))
    return ",".join(tile_to_ttgir(target, fuse=fuse, derive_hints=derive, pipeline_mma=mma))


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


__all__ = [
    "CONVERT",
    "PIPELINE_OPTIONS",
    "TARGETS",
    "check_target",
    "completion",
    "convert_pass",
    "expand",
    "pipeline_text",
    "required_passes",
    "tile_passes",
    "tile_to_ttgir",
]
