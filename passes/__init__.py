"""gemm-opt's transformation passes, one module per pass.

``PASSES`` maps each CLI name to a loader, so the tool imports a pass only
when a pipeline names it (xDSL's lazy pass table). Adding a pass: write
``passes/<snake_name>.py`` with a ``TilePass`` subclass whose ``name`` is the
CLI name, add one line here, and add ``test/lit/passes/<cli-name>.mlir``.
"""

from __future__ import annotations

from collections.abc import Callable

from gemm_opt.pass_base import TilePass

PASSES: dict[str, Callable[[], type[TilePass]]] = {}

__all__ = ["PASSES"]
