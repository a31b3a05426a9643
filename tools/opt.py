"""``gemm-opt``: the mlir-opt style tool for the tile dialect.

This module decides what the tool contains (dialects, passes, pipelines and
emitters); :mod:`gemm_opt.tools.opt_main` decides how it behaves.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from gemm_opt import dialect, lowering, passes
from gemm_opt.core.pipeline import Registry
from gemm_opt.core.targets import TARGET_NAMES as TARGETS
from gemm_opt.dialect.tile import verify_module_attributes
from gemm_opt.tools.opt_main import EmitError, Emitter, OptTool
from gemm_opt.tools.opt_main import main as opt_main

EMIT_KINDS = ("ttgir", "llir", "amdgcn", "hsaco", "ptx", "cubin")


def _tile_pipeline(target: str) -> str:
    from gemm_opt.lowering.pipelines import tile_passes

    return ",".join(tile_passes(target))


def _pipeline(target: str) -> str:
    """What runs before the hand-off of ``--emit``: the target's tile passes."""
    return _tile_pipeline(target)


def _emit(module: object, target: str, kind: str, filename: str) -> str | bytes:
    """The ``kind`` artifact of a module after the tile passes: the one
    tile-to-binary path of :func:`gemm_opt.lowering.compile.hand_off`."""
    from gemm_opt.lowering.compile import TileCompileError, hand_off

    try:
        result = hand_off(module, target, filename=filename, compile=kind != "ttgir")
    except TileCompileError as e:
        raise EmitError(e.message, e.line, e.col) from None
    if kind == "ttgir":
        return result.ttgir
    asm = result.artifact.asm
    if kind not in asm:
        have = ", ".join(k for k in EMIT_KINDS if k in asm)
        raise EmitError(f"--emit={kind} does not exist for target {target} (it has: {have})")
    out = asm[kind]
    return out if isinstance(out, bytes) else str(out)


def _split_hand_off(pipeline: str) -> tuple[str, Callable[[object, str], str] | None]:
    """The pipeline without a trailing hand-off, and what prints the hand-off's result."""
    from gemm_opt.lowering.compile import TileCompileError, hand_off, split_hand_off

    rest, handoff = split_hand_off(pipeline)
    if handoff is None:
        return rest, None

    def finish(module: object, filename: str) -> str:
        try:
            return hand_off(
                module, handoff.target, lds_copies=handoff.lds_copies, filename=filename
            ).ttgir
        except TileCompileError as e:
            raise EmitError(e.message, e.line, e.col) from None

    return rest, finish


def make_tool() -> OptTool:
    """The gemm-opt tool: every pass, pipeline and emitter of the project."""
    registry = Registry(
        passes={**passes.PASSES, **lowering.PASSES},
        pipelines=dict(lowering.PIPELINES),
        pipeline_docs=dict(lowering.PIPELINE_DOCS),
    )
    return OptTool(
        name="gemm-opt",
        registry=registry,
        make_context=dialect.make_context,
        verify_module=verify_module_attributes,
        emitter=Emitter(
            pipeline=_pipeline, emit=_emit, kinds=EMIT_KINDS, tile_pipeline=_tile_pipeline
        ),
        targets=TARGETS,
        split_hand_off=_split_hand_off,
        description="Parse, verify, transform and lower tile-dialect GEMM kernels.",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``gemm-opt`` console script."""
    try:
        return opt_main(make_tool(), argv)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug in gemm-opt itself: one line, not a traceback
        sys.stderr.write(f"gemm-opt: internal error: {type(e).__name__}: {e}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
