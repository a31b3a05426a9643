"""Asynchronous MMA ops of the ``tile`` dialect (registered by :func:`load_all`).

``tile.wmma`` is synchronous: its operands are register tensors that a
``tile.local_load`` read before it, so a copy may overwrite their shared
buffers as soon as it returns. A warpgroup MMA (Hopper's ``wgmma``) reads its
operands from shared memory *while it runs*, and the K loop is only fast when
one MMA stays in flight while the next is issued. These ops make that visible
in the IR, so a pass can schedule it and the executable model can check it:

* ``tile.async_wmma`` starts ``d = a @ b + c`` with A and B read from shared
  buffers for as long as it is in flight; an optional i1 ``use_acc`` false
  makes it ``d = a @ b`` (``c`` ignored), so a loop that starts a new
  accumulation need not zero its accumulator registers first;
* ``tile.async_wmma_wait {num}`` waits until at most ``num`` async MMAs
  issued by this program are in flight, and returns the accumulator it is
  given. Threading the accumulator through the wait keeps every use of the
  result after the wait that makes it valid (SSA order is the dependence).

The rules a program must obey, checked by the model's race detector
(:mod:`gemm_opt.model.interpreter`), not by the verifier (they depend on
run-time buffer indices): no copy may write a buffer region that an in-flight
async MMA reads, and only an async MMA (as its accumulator), a wait or a loop
carry may use a result before the wait that retires its MMA.

Lowering: on cuda:90 the pair is ``ttng.warp_group_dot`` (``isAsync``; ``use_acc``
is its ``useC`` predicate) and ``ttng.warp_group_dot_wait {pendings = num}``; on
the AMD targets, whose MMA reads registers, the MMA is synchronous (both
buffers are loaded, then a dot of ``select(use_acc, c, 0)``) and the wait
returns its operand.
"""

from typing import Any

from gemm_opt.core.contract import IMPRECISE_ACC
from gemm_opt.core.ext_compat import cast, ext, ir
from gemm_opt.dialect.tile import (
    WMMA_INSTR_SHAPE,
    SharedType,
    TileOp,
    VerifyError,
    WmmaAttr,
    _check_i1,
    check_imprecise_acc,
    check_instr_shape,
    check_register_layout,
    mma_input_kind,
)

#: k_width when ``tile.async_wmma`` does not give one (the register operands'
#: K elements per thread on targets whose MMA reads registers).
DEFAULT_K_WIDTH = 8


def _accumulator(value: ir.Value, what: str) -> ir.RankedTensorType:
    t = cast(value.type, ir.RankedTensorType)
    if t is None:
        raise VerifyError(f"{what} must be a ranked tensor, got {value.type}")
    t = ir.RankedTensorType(t)
    if not isinstance(t.encoding, WmmaAttr):
        raise VerifyError(f"{what} must have a #tile.wmma_layout layout, got {t.encoding}")
    if cast(t.element_type, ir.F32Type) is None:
        raise VerifyError(f"{what} must be an f32 accumulator, got {t.element_type}")
    return t


class AsyncWmmaOp(TileOp, name="async_wmma"):
    """Start ``d = a @ b + (use_acc ? c : 0)`` reading A and B from shared
    buffers; ``d`` is valid once a ``tile.async_wmma_wait`` retires this MMA.

    ```mlir
    %d = "tile.async_wmma"(%abuf, %bbuf, %acc, %use_acc)
         {operandSegmentSizes = array<i32: 1, 1, 1, 1>}
         : (!tile.shared<tensor<128x64xf16, #sa>>, !tile.shared<tensor<64x128xf16, #sb>>,
            tensor<128x128xf32, #acc>, i1) -> tensor<128x128xf32, #acc>
    ```
    Rules: A is an MxK and B a KxN shared buffer, both f16, both bf16 or both
    of one 8-bit type (as ``tile.wmma``, whose instruction C's layout names); C and
    D are MxN f32 tensors of one ``#tile.wmma_layout``; M, N and K are
    multiples of its instruction shape; the optional ``use_acc`` (absent:
    true) is an i1 scalar: false ignores C's values (C still names the
    accumulator registers D takes, as wgmma's ``useC``); the optional
    ``k_width`` (the register operands' layout where the target's MMA reads
    registers) is a power of two up to the instruction's K.
    """

    ATTRS = ("k_width", IMPRECISE_ACC)

    a: ext.Operand[SharedType]
    b: ext.Operand[SharedType]
    c: ext.Operand[Any]
    result: ext.Result[Any]
    use_acc: ext.Operand[Any] | None = None

    def verify(self) -> None:
        a, b = self.a.type, self.b.type
        if not isinstance(a, SharedType) or not isinstance(b, SharedType):
            raise VerifyError(f"a and b must be !tile.shared buffers, got {a} and {b}")
        if len(a.shape) != 2 or len(b.shape) != 2:
            raise VerifyError(
                f"a and b must be 2-D buffers (index a multi-buffer first), got "
                f"{list(a.shape)} and {list(b.shape)}"
            )
        c = _accumulator(self.c, "c")
        if self.result.type != c:
            raise VerifyError(f"result type {self.result.type} must equal c's type {c}")
        (m, k), (k2, n) = a.shape, b.shape
        if k != k2:
            raise VerifyError(f"expects a's K ({k}) to equal b's K ({k2})")
        if tuple(c.shape) != (m, n):
            raise VerifyError(f"expects c to be {m}x{n} (a is {m}x{k}, b is {k}x{n}), got {c}")
        kind = mma_input_kind(self, a.element_type, b.element_type)
        check_register_layout(self, c, "c")
        check_instr_shape(c.encoding, kind)
        im, in_, ik = c.encoding.instr_shape()
        if m % im or n % in_ or k % ik:
            raise VerifyError(
                f"{m}x{n}x{k} is not a multiple of the instruction shape {im}x{in_}x{ik}"
            )
        kw, kmax = self.k_width(), WMMA_INSTR_SHAPE[2]
        if kw < 1 or kw > kmax or kw & (kw - 1):
            raise VerifyError(f"k_width = {kw} must be a power of two from 1 to {kmax}")
        _check_i1(self.use_acc, "use_acc")
        check_imprecise_acc(self, a.element_type)

    def k_width(self) -> int:
        """K elements per thread of the register operands (targets whose MMA reads registers)."""
        kw = self.int_attr("k_width")
        return DEFAULT_K_WIDTH if kw is None else kw


class AsyncWmmaWaitOp(TileOp, name="async_wmma_wait"):
    """Wait until at most ``num`` async MMAs of this program are in flight;
    return the accumulator ``value``.

    ```mlir
    %r = "tile.async_wmma_wait"(%d) {num = 1 : i32}
         : (tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc>
    ```
    With ``num = 0`` every MMA has retired and the result may be read by
    any op; with ``num > 0`` the most recent MMAs may still run, so the
    result may only feed another ``tile.async_wmma`` (which accumulates in
    issue order) or a later wait. Rules: ``num`` is a required non-negative
    i32; ``value`` is an accumulator (f32, ``#tile.wmma_layout``) and the
    result has its type.
    """

    ATTRS = ("num",)

    value: ext.Operand[Any]
    result: ext.Result[Any]

    def verify(self) -> None:
        num = self.int_attr("num", required=True)
        if num is not None and num < 0:
            raise VerifyError(f"num must be non-negative, got {num}")
        t = _accumulator(self.value, "value")
        if self.result.type != t:
            raise VerifyError(f"result type {self.result.type} must equal the value's type {t}")


__all__ = ["DEFAULT_K_WIDTH", "AsyncWmmaOp", "AsyncWmmaWaitOp"]
