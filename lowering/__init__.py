"""Lowerings out of the tile dialect and the named pipelines that use them.

``PASSES`` maps each CLI name to a loader (imported only when a pipeline
names it); ``PIPELINES`` maps each named pipeline to a function of its
options that returns the pipeline text, with a one-line doc in
``PIPELINE_DOCS``. The pass lists themselves live in
:mod:`gemm_opt.lowering.pipelines`.

``convert-tile-to-triton-gpu`` is registered like a pass (its name, options
and documentation), but it is the *hand-off* to Triton: it builds a Triton
module with Triton's own typed IR builder, in Triton's context and in a child
process (see :mod:`gemm_opt.lowering.convert_tile_to_triton_gpu` for why),
so it ends any pipeline. :mod:`gemm_opt.lowering.compile` is the one
tile-to-binary path: :func:`~gemm_opt.lowering.compile.split_hand_off` takes
it off the end of a pipeline, :func:`~gemm_opt.lowering.compile.hand_off`
runs it (and Triton's compiler, on request), and both ``gemm-opt`` and
``kernel.compile()`` go through them.
"""

from __future__ import annotations

from collections.abc import Callable

from gemm_opt.core.pass_base import TilePass


def _convert_tile_to_triton_gpu() -> type[TilePass]:
    from gemm_opt.lowering.convert_tile_to_triton_gpu import ConvertTileToTritonGPUPass

    return ConvertTileToTritonGPUPass


PASSES: dict[str, Callable[[], type[TilePass]]] = {
    "convert-tile-to-triton-gpu": _convert_tile_to_triton_gpu,
}


def _pipeline(kind: str) -> Callable[[dict[str, str]], str]:
    def expand(options: dict[str, str]) -> str:
        from gemm_opt.core.pipeline import PipelineError
        from gemm_opt.lowering import pipelines

        try:
            return pipelines.expand(kind, options)
        except ValueError as e:
            raise PipelineError(str(e), 1) from None

    return expand


PIPELINES: dict[str, Callable[[dict[str, str]], str]] = {
    "tile-to-ttgir": _pipeline("tile-to-ttgir"),
    "tile-optimize": _pipeline("tile-optimize"),
}

PIPELINE_DOCS: dict[str, str] = {
    "tile-to-ttgir": (
        "tile passes, then convert-tile-to-triton-gpu "
        "{target=gfx1250|gfx950|gfx942|cuda:90 fuse=true derive-hints=false}"
    ),
    "tile-optimize": (
        "the tile-level passes of tile-to-ttgir only {target=... fuse=true derive-hints=false}"
    ),
}

__all__ = ["PASSES", "PIPELINES", "PIPELINE_DOCS"]
