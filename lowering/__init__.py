"""Lowerings out of the tile dialect, and gemm-opt's one pass registry.

``REGISTRY`` is the one place a tool or the compile path finds passes and
named pipelines: the transformation passes of :mod:`gemm_opt.passes`, the
conversion of this package (each imported only when a pipeline names it)
and the named pipelines, whose pass lists live in
:mod:`gemm_opt.lowering.pipelines`. ``gemm-opt`` and
:func:`gemm_opt.lowering.compile.compile_tile_module` both build their
pipelines from it.

``convert-tile-to-triton-gpu`` is registered like a pass (its name, options
and documentation), but it is the *hand-off* to Triton: it builds a Triton
module with Triton's own typed IR builder, in Triton's context and in a child
process (see :mod:`gemm_opt.lowering.convert_tile_to_triton_gpu` for why),
so it ends any pipeline. :mod:`gemm_opt.lowering.compile` is the one
tile-to-binary path: :func:`~gemm_opt.lowering.compile.split_hand_off` takes
it off the end of a resolved pipeline, :func:`~gemm_opt.lowering.compile.hand_off`
runs it (and Triton's compiler, on request), and both ``gemm-opt`` and
``kernel.compile()`` go through them.
"""

from __future__ import annotations

import atexit
import sys
from collections.abc import Callable

from gemm_opt import passes as _passes
from gemm_opt.core.pass_base import TilePass
from gemm_opt.core.pipeline import NamedPipeline, Registry


def _convert_tile_to_triton_gpu() -> type[TilePass]:
    from gemm_opt.lowering.convert_tile_to_triton_gpu import ConvertTileToTritonGPUPass

    return ConvertTileToTritonGPUPass


#: The lowering's own passes (CLI name -> loader).
PASSES: dict[str, Callable[[], type[TilePass]]] = {
    "convert-tile-to-triton-gpu": _convert_tile_to_triton_gpu,
}


def _expander(kind: str) -> Callable[[dict[str, str]], str]:
    def expand(options: dict[str, str]) -> str:
        from gemm_opt.lowering import pipelines

        return pipelines.expand(kind, options)

    return expand


def _pipeline(kind: str, summary: str) -> NamedPipeline:
    from gemm_opt.lowering.pipelines import PIPELINE_OPTIONS

    return NamedPipeline(summary, _expander(kind), PIPELINE_OPTIONS)


PIPELINES: dict[str, NamedPipeline] = {
    "tile-to-ttgir": _pipeline(
        "tile-to-ttgir", "The target's tile passes, then convert-tile-to-triton-gpu."
    ),
    "tile-optimize": _pipeline("tile-optimize", "The tile passes of tile-to-ttgir only."),
}

#: One-line summary of each named pipeline.
PIPELINE_DOCS: dict[str, str] = {name: p.summary for name, p in PIPELINES.items()}

#: Every pass and named pipeline of gemm-opt.
REGISTRY = Registry(
    passes={**_passes.PASSES, **PASSES},
    pipelines=PIPELINES,
    module_passes=frozenset(PASSES),
)


def _release_gluon_modules() -> None:
    """Drop the globals of Triton's Gluon modules at interpreter exit.

    Once Gluon has built a kernel, ``triton._C.libtriton`` holds Gluon's
    Python modules (``...gluon.language._layouts`` and others it imports from
    C++) in static storage that is never released, so their globals (the
    ``GluonOpBuilder`` type among them) outlive the interpreter's module
    teardown, and nanobind's exit check prints a page of "leaked ..." lines.
    Clearing those module dicts first lets the types be freed normally. A
    no-op when Gluon was never imported; registered at import, so it runs
    after every exit handler Triton registers later.
    """
    for name in [n for n in sys.modules if n.startswith(_GLUON)]:
        module = sys.modules.get(name)
        if module is not None:
            module.__dict__.clear()


_GLUON = "triton.experimental.gluon"
atexit.register(_release_gluon_modules)

__all__ = ["PASSES", "PIPELINES", "PIPELINE_DOCS", "REGISTRY"]
