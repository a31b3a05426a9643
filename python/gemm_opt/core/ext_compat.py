"""The one adapter over the MLIR Python bindings.

Every other module imports MLIR through here, so moving from the
``torch-mlir`` wheel (which ships upstream LLVM's ``mlir`` package under the
``torch_mlir`` namespace) to an official ``mlir`` wheel is a one-line change.
The quirks of the pinned bindings are absorbed here too:

* ``ext`` type/attribute parameters must be constrained as ``Any``; builtin
  attribute classes have no IRDL name.
* ``ext`` has no optional attributes, so optional attributes (``warp_used_hint``)
  are left undeclared and checked by the op's verifier.
* Python passes are called as ``fn(op, pass_)`` and fail through
  ``pass_.signal_pass_failure()``.
* A Python exception raised in ``verify_invariants`` escapes ``Module.parse``;
  verifiers therefore catch everything (see ``gemm_opt.dialect.tile``).
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, ext, func, scf, transform
from torch_mlir.dialects import math as math_dialect
from torch_mlir.dialects._ods_common import _cext
from torch_mlir.dialects.transform import debug as transform_debug
from torch_mlir.dialects.transform import structured as transform_structured
from torch_mlir.passmanager import PassManager

# The bindings look a dialect's Python module up by namespace on every type
# cast and do not cache a failed import; pointing them at our package makes the
# lookup of "tile" succeed once (4x faster lowering of the example GEMM).
_cext.globals.append_dialect_search_prefix("gemm_opt.dialect")

#: Pattern callbacks return a truthy value to say "no match".
NO_MATCH = True

MLIRError = ir.MLIRError

__all__ = [
    "NO_MATCH",
    "MLIRError",
    "PassManager",
    "arith",
    "cast",
    "ext",
    "func",
    "ir",
    "math_dialect",
    "scf",
    "transform",
    "transform_debug",
    "transform_structured",
]


def cast(obj: object, cls: type) -> object | None:
    """``cls(obj)`` when ``obj`` is of that MLIR kind, else None.

    Attributes and types handed out by the bindings (type parameters, dictionary
    entries) are often of the generic class, so ``isinstance`` is not enough.
    """
    if isinstance(obj, cls):
        return obj
    try:
        return cls(obj)
    except (ValueError, TypeError):
        return None
