"""gemm-opt's transformation passes, one module per pass.

``PASSES`` maps each CLI name to a loader, so the tool imports a pass only
when a pipeline names it (xDSL's lazy pass table). Adding a pass: write
``passes/<snake_name>.py`` with a ``TilePass`` subclass whose ``name`` is the
CLI name, add one line here, and add ``test/lit/passes/<cli-name>.mlir``.
"""

from __future__ import annotations

from collections.abc import Callable

from gemm_opt.core.pass_base import TilePass


def _assign_tdm_warp_layout() -> type[TilePass]:
    from gemm_opt.passes.assign_tdm_warp_layout import AssignTdmWarpLayoutPass

    return AssignTdmWarpLayoutPass


def _emit_warp_predicates() -> type[TilePass]:
    from gemm_opt.passes.emit_warp_predicates import EmitWarpPredicatesPass

    return EmitWarpPredicatesPass


def _fuse_tdm_copies() -> type[TilePass]:
    from gemm_opt.passes.fuse_tdm_copies import FuseTdmCopiesPass

    return FuseTdmCopiesPass


def _derive_warp_hints() -> type[TilePass]:
    from gemm_opt.passes.derive_warp_hints import DeriveWarpHintsPass

    return DeriveWarpHintsPass


def _annotate_warp_plan() -> type[TilePass]:
    from gemm_opt.passes.annotate_warp_plan import AnnotateWarpPlanPass

    return AnnotateWarpPlanPass


def _pipeline_mma() -> type[TilePass]:
    from gemm_opt.passes.pipeline_mma import PipelineMmaPass

    return PipelineMmaPass


def _lower_gemm_schedule() -> type[TilePass]:
    from gemm_opt.passes.lower_gemm_schedule import LowerGemmSchedulePass

    return LowerGemmSchedulePass


PASSES: dict[str, Callable[[], type[TilePass]]] = {
    "tile-annotate-warp-plan": _annotate_warp_plan,
    "tile-assign-tdm-warp-layout": _assign_tdm_warp_layout,
    "tile-derive-warp-hints": _derive_warp_hints,
    "tile-emit-warp-predicates": _emit_warp_predicates,
    "tile-fuse-tdm-copies": _fuse_tdm_copies,
    "tile-pipeline-mma": _pipeline_mma,
    "tile-lower-gemm-schedule": _lower_gemm_schedule,
}

__all__ = ["PASSES"]
