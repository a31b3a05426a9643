"""``gemm-opt``: the mlir-opt style tool for the tile dialect.

This module decides what the tool contains (dialects, passes, pipelines and
emitters); :mod:`gemm_opt.tools.opt_main` decides how it behaves.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from gemm_opt import dialect
from gemm_opt.core.contract import TARGET
from gemm_opt.core.diagnostics import position_of, positioned_location
from gemm_opt.core.pipeline import Step
from gemm_opt.core.targets import TARGET_NAMES as TARGETS
from gemm_opt.core.targets import TARGETS as TARGET_TABLE
from gemm_opt.dialect.tile import module_problems
from gemm_opt.lowering import REGISTRY, pipelines
from gemm_opt.tools.opt_main import EmitError, Emitter, HandOffRunner, OptTool
from gemm_opt.tools.opt_main import main as opt_main

EMIT_KINDS = ("ttgir", "llir", "amdgcn", "hsaco", "ptx", "cubin")
#: Kinds written as binary objects (one per file).
BINARY_KINDS = frozenset({"hsaco", "cubin"})
#: The artifacts each Triton backend produces (its compile stages).
BACKEND_KINDS = {
    "hip": ("ttgir", "llir", "amdgcn", "hsaco"),
    "cuda": ("ttgir", "llir", "ptx", "cubin"),
}


def _kinds(target: str) -> tuple[str, ...]:
    """The ``--emit`` kinds ``target`` has (besides ``tile``)."""
    return BACKEND_KINDS[TARGET_TABLE[target].backend]


def _default(target: str, convert: bool) -> list[str]:
    """The target's whole pipeline (``--emit`` without ``--pass-pipeline``)."""
    return pipelines.tile_to_ttgir(target) if convert else pipelines.tile_passes(target)


def _artifact(result: object, target: str, kind: str) -> str | bytes:
    """The ``kind`` artifact of a hand-off result."""
    if kind == "ttgir":
        return result.ttgir  # type: ignore[attr-defined]
    asm = result.artifact.asm  # type: ignore[attr-defined]
    if kind not in asm:
        have = ", ".join(k for k in EMIT_KINDS if k in asm)
        raise EmitError(f"--emit={kind} does not exist for target {target} (it has: {have})")
    out = asm[kind]
    return out if isinstance(out, bytes) else str(out)


def _hand_off(
    module: object,
    target: str,
    kind: str,
    filename: str,
    lds_copies: str = "auto",
    mma: str = "auto",
) -> str | bytes:
    """The ``kind`` artifact of a module after the tile passes, through the one
    tile-to-binary path (:func:`gemm_opt.lowering.compile.hand_off`)."""
    from gemm_opt.lowering.compile import TileCompileError, hand_off

    try:
        result = hand_off(
            module,
            target,
            lds_copies=lds_copies,
            mma=mma,
            filename=filename,
            compile=kind != "ttgir",
        )
    except TileCompileError as e:
        line, col = e.line, e.col
        if not line:  # a module-level error: where the module (or its first op) is
            line, col = position_of(positioned_location(module.operation)) or (1, 1)  # type: ignore[attr-defined]
        raise EmitError(e.message, line or 1, col or 1) from None
    return _artifact(result, target, kind)


def _emit(module: object, target: str, kind: str, filename: str) -> str | bytes:
    """``--emit=kind`` of a module whose pipeline had no trailing hand-off."""
    return _hand_off(module, target, kind, filename)


def _split_hand_off(steps: list[Step]) -> tuple[list[Step], HandOffRunner | None]:
    """The steps without a trailing hand-off, and what runs the hand-off."""
    from gemm_opt.lowering.compile import split_hand_off

    rest, handoff = split_hand_off(steps)
    if handoff is None:
        return rest, None

    def finish(module: object, filename: str, kind: str) -> str | bytes:
        return _hand_off(module, handoff.target, kind, filename, handoff.lds_copies, handoff.mma)

    return rest, finish


def make_tool() -> OptTool:
    """The gemm-opt tool: every pass, pipeline and emitter of the project."""
    return OptTool(
        name="gemm-opt",
        registry=REGISTRY,
        make_context=dialect.make_context,
        verify_module=module_problems,
        emitter=Emitter(
            emit=_emit,
            default=_default,
            complete=pipelines.completion,
            kinds=EMIT_KINDS,
            binary_kinds=BINARY_KINDS,
            kinds_for=_kinds,
            final_pass=pipelines.CONVERT,
        ),
        targets=TARGETS,
        target_attr=TARGET,
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
