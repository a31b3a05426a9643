"""``gemm-opt``: the mlir-opt style tool for the tile dialect.

This module decides what the tool contains (dialects, passes, pipelines and
emitters); :mod:`gemm_opt.opt_main` decides how it behaves.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from gemm_opt import dialect, lowering, passes
from gemm_opt.dialect.tile import verify_module_attributes
from gemm_opt.opt_main import OptTool
from gemm_opt.opt_main import main as opt_main
from gemm_opt.pipeline import Registry


def make_tool() -> OptTool:
    """The gemm-opt tool: every pass, pipeline and emitter of the project."""
    registry = Registry(passes={**passes.PASSES, **lowering.PASSES})
    return OptTool(
        name="gemm-opt",
        registry=registry,
        make_context=dialect.make_context,
        verify_module=verify_module_attributes,
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
