"""Dialects of gemm-opt and the one way to get a context with them loaded."""

from __future__ import annotations

from gemm_opt.core.ext_compat import ir


def import_ops() -> None:
    """Import every module that defines ops of the dialects (they add their
    ops to ``Tile``, which must hold them all before it is loaded)."""
    from gemm_opt.dialect import (  # noqa: F401
        async_ops,
        barrier,
        scaled_mma,
        schedule,
        sync,
        warp_specialize,
    )


def load_all(ctx: ir.Context) -> None:
    """Load every gemm-opt dialect into ``ctx``; safe to call twice."""
    import_ops()
    from gemm_opt.dialect.tile import Tile

    with ctx:
        if not ctx.is_dialect_loaded(Tile.DIALECT_NAMESPACE):
            Tile.load()


def make_context(allow_unregistered: bool = False) -> ir.Context:
    """A fresh MLIR context with the tile dialect and upstream dialects loaded."""
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = allow_unregistered
    load_all(ctx)
    return ctx


__all__ = ["import_ops", "load_all", "make_context"]
