"""The grid-synchronization ops for the model's tests, until the dialect defines them.

The dialect's own definitions (``gemm_opt.dialect.sync``: ``tile.num_programs``,
``tile.atomic_rmw``, ``tile.atomic_add_block``) are used when they exist. Until
then this module registers minimal versions with the same names, operands and
attributes (no verifier), so the model's tests parse the same IR. Import it
before creating a context: ``Tile.load()`` registers the ops defined by then.
"""

import importlib.util
from typing import Any

from gemm_opt.core.ext_compat import ext, ir

HAVE_DIALECT_SYNC = importlib.util.find_spec("gemm_opt.dialect.sync") is not None

if HAVE_DIALECT_SYNC:
    importlib.import_module("gemm_opt.dialect.sync")
else:
    from gemm_opt.dialect.tile import PtrType, TileOp, _BlockAccessOp

    class NumProgramsOp(TileOp, name="num_programs", traits=[ext.Pure]):
        """``%n = "tile.num_programs"() {axis = 0 : i32} : () -> i32``."""

        ATTRS = ("axis",)
        result: ext.Result[ir.IntegerType[32]] = ext.infer_result()

    class AtomicRmwOp(TileOp, name="atomic_rmw"):
        """``%old = "tile.atomic_rmw"(%base, %index, %value) {kind, sem, scope}``."""

        ATTRS = ("kind", "sem", "scope")
        base: ext.Operand[PtrType]
        index: ext.Operand[Any]
        value: ext.Operand[Any]
        result: ext.Result[Any]

    class AtomicAddBlockOp(_BlockAccessOp, name="atomic_add_block"):
        """``"tile.atomic_add_block"(base, shape, strides, offsets, value) {sem, scope}``."""

        ATTRS = ("sem", "scope")
        value: ext.Operand[Any]


__all__ = ["HAVE_DIALECT_SYNC"]
