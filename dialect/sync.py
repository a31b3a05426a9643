"""Synchronization ops of the ``tile`` dialect: grid size and global atomics.

GEMM schedules need three things the data ops do not give: the grid size
(a persistent loop strides by it), scalar atomics on i32 counters and flags
(work stealing claims tiles, stream-K signals that a partial is published),
and an element-wise atomic add of a register block into global memory
(stream-K with atomic reduction). Ordering is carried by the atomics
themselves: ``release`` orders the program's earlier global writes before
the atomic, ``acquire`` its later reads after it (there is no separate fence
op). A flag wait is a loop on ``atomic_rmw add 0 acquire``; a flag signal is
``atomic_rmw xchg 1 release``, or ``add 1 release`` where one flag counts
several signals (stream-K's linear fix-up: the owner waits for the count).
"""

from typing import Any

from gemm_opt.core.ext_compat import cast, ext, ir
from gemm_opt.dialect.tile import (
    PtrType,
    TileOp,
    VerifyError,
    _BlockAccessOp,
    _check_ints,
    _ranked,
    _type_of,
    check_grid_axis,
)

RMW_KINDS = ("add", "xchg", "max", "min")
SEMANTICS = ("relaxed", "acquire", "release", "acq_rel")
SCOPES = ("cta", "gpu", "sys")
#: Element types an atomic block add takes (Triton's fadd on every target).
ATOMIC_ADD_ELEMENTS = ("f32", "f16", "bf16")


def _choice(op: TileOp, name: str, allowed: tuple[str, ...], default: str | None) -> str:
    """A string attribute that must be one of ``allowed`` (``default`` if absent)."""
    a = op.attr(name)
    if a is None:
        if default is None:
            raise VerifyError(f"requires attribute '{name}' (one of {', '.join(allowed)})")
        return default
    if cast(a, ir.StringAttr) is None or ir.StringAttr(a).value not in allowed:
        raise VerifyError(f"'{name}' must be one of {', '.join(allowed)}, got {a}")
    return ir.StringAttr(a).value


class NumProgramsOp(TileOp, name="num_programs", traits=[ext.Pure]):
    """The number of programs of the grid along ``axis`` 0, 1 or 2.

    ```mlir
    %n = "tile.num_programs"() {axis = 0 : i32} : () -> i32
    ```
    Rules: ``axis`` is required and is 0, 1 or 2.
    """

    ATTRS = ("axis",)
    result: ext.Result[ir.IntegerType[32]] = ext.infer_result()

    def verify(self) -> None:
        check_grid_axis(self)


class AtomicRmwOp(TileOp, name="atomic_rmw"):
    """Read-modify-write of ``base[index]`` (i32), once per program.

    ``kind``: add, xchg, max or min (signed); ``sem``: relaxed, acquire,
    release or acq_rel; ``scope``: cta, gpu or sys. The old value is the
    result, the same for every warp of the program.

    ```mlir
    %old = "tile.atomic_rmw"(%sync, %i, %one) {kind = "add", sem = "relaxed", scope = "gpu"}
         : (!tile.ptr<i32>, i32, i32) -> i32
    ```
    Rules: an i32 pointer, i32 index and value, an i32 result; the three
    attributes required and in their sets.
    """

    ATTRS = ("kind", "sem", "scope")
    base: ext.Operand[PtrType]
    index: ext.Operand[Any]
    value: ext.Operand[Any]
    result: ext.Result[Any]

    def verify(self) -> None:
        ptr = _type_of(self.operation.operands[0], PtrType)
        if str(ptr.element_type) != "i32":
            raise VerifyError(f"base must point to i32, got {ptr.element_type}")
        _check_ints(list(self.operation.operands[1:]), 32, "index and value")
        results = self.operation.results
        if len(results) != 1 or str(results[0].type) != "i32":
            raise VerifyError("must return one i32 (the old value)")
        _choice(self, "kind", RMW_KINDS, None)
        _choice(self, "sem", SEMANTICS, None)
        _choice(self, "scope", SCOPES, None)

    @property
    def kind(self) -> str:
        return _choice(self, "kind", RMW_KINDS, None)

    @property
    def sem(self) -> str:
        return _choice(self, "sem", SEMANTICS, None)

    @property
    def scope(self) -> str:
        return _choice(self, "scope", SCOPES, None)


class AtomicAddBlockOp(_BlockAccessOp, name="atomic_add_block"):
    """Element-wise atomic add of a register tensor into a block of a global tensor.

    Operands and masking are ``tile.store_block``'s: elements outside
    ``shape`` are not touched.

    ```mlir
    "tile.atomic_add_block"(%c, %m, %n, %sm, %sn, %om, %on, %v)
        {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>, sem = "relaxed", scope = "gpu"}
      : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, tensor<64x64xf32, #acc>) -> ()
    ```
    Rules: as ``store_block``; the element type is f32, f16 or bf16; ``sem``
    and ``scope`` optional (relaxed, gpu).
    """

    ATTRS = ("sem", "scope")
    value: ext.Operand[Any]

    def verify(self) -> None:
        vt = _ranked(self.value, "value")
        self.check_access(vt, "value")
        if str(vt.element_type) not in ATOMIC_ADD_ELEMENTS:
            raise VerifyError(
                f"atomic add takes {', '.join(ATOMIC_ADD_ELEMENTS)} elements, got {vt.element_type}"
            )
        _choice(self, "sem", SEMANTICS, "relaxed")
        _choice(self, "scope", SCOPES, "gpu")

    @property
    def sem(self) -> str:
        return _choice(self, "sem", SEMANTICS, "relaxed")

    @property
    def scope(self) -> str:
        return _choice(self, "scope", SCOPES, "gpu")


class LoadScalarOp(TileOp, name="load_scalar"):
    """Read one i32 of global memory, ``base[index]``, once per program.

    Schedules read device-side sizes with it (grouped GEMM's ``group_lens``),
    so a launch needs no host synchronization to learn them.

    ```mlir
    %len = "tile.load_scalar"(%group_lens, %g) : (!tile.ptr<i32>, i32) -> i32
    ```
    Rules: an i32 pointer and index, an i32 result.
    """

    base: ext.Operand[PtrType]
    index: ext.Operand[Any]
    result: ext.Result[Any]

    def verify(self) -> None:
        ptr = _type_of(self.operation.operands[0], PtrType)
        if str(ptr.element_type) != "i32":
            raise VerifyError(f"base must point to i32, got {ptr.element_type}")
        _check_ints([self.operation.operands[1]], 32, "index")
        results = self.operation.results
        if len(results) != 1 or str(results[0].type) != "i32":
            raise VerifyError("must return one i32")


__all__ = [
    "ATOMIC_ADD_ELEMENTS",
    "RMW_KINDS",
    "SCOPES",
    "SEMANTICS",
    "AtomicAddBlockOp",
    "AtomicRmwOp",
    "LoadScalarOp",
    "NumProgramsOp",
]
