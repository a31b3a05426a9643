"""``tile.wmma`` and the asynchronous ``tile.async_wmma`` / ``tile.async_wmma_wait``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gemm_opt.core.ext_compat import ir
from gemm_opt.core.scaling import MX_BLOCK
from gemm_opt.model.core import (
    Compiler,
    Exec,
    Program,
    op_where,
    operand_slots,
    result_slot,
    uniform,
)
from gemm_opt.model.errors import ModelError
from gemm_opt.model.races import (
    read_shared,
)
from gemm_opt.model.registry import OpImpls
from gemm_opt.model.values import (
    Elem,
    SharedBuffer,
    from_storage,
    value_elem,
)

IMPLS = OpImpls("MMA")
"""The MMA family's implementations."""


@IMPLS.impl("tile.wmma")
def _b_wmma(c: Compiler, op: Any) -> Exec:
    a, b, acc = operand_slots(c, op)
    r = result_slot(c, op)

    def run(p: Program, mask: np.ndarray) -> None:
        x = p.env[a].astype(np.float64)
        y = p.env[b].astype(np.float64)
        z = p.env[acc].astype(np.float64)
        p.env[r] = (x @ y + z).astype(np.float32)

    return run


@IMPLS.impl("tile.scaled_wmma")
def _b_scaled_wmma(c: Compiler, op: Any) -> Exec:
    a, sa, b, sb, acc = operand_slots(c, op)
    r = result_slot(c, op)

    def run(p: Program, mask: np.ndarray) -> None:
        # Registers hold exact values: the 8-bit elements and the e8m0 scales
        # (2 ** (code - 127), NaN for 0xFF) decoded by gemm_opt.core.fp8. Each
        # scale covers MX_BLOCK consecutive elements of K; products and
        # sums are in float64 and the result is rounded once to float32.
        x = p.env[a].astype(np.float64) * np.repeat(p.env[sa], MX_BLOCK, axis=1)
        y = p.env[b].astype(np.float64) * np.repeat(p.env[sb], MX_BLOCK, axis=1).T
        z = p.env[acc].astype(np.float64)
        p.env[r] = (x @ y + z).astype(np.float32)

    return run


# An async MMA reads its shared buffers for as long as it is in flight. The
# model computes its result when it is issued (exact, because a copy that
# writes a region an in-flight MMA reads is an error: see the copy's check of
# ``SharedBuffer.mma_reading``) and hands out the result wrapped in
# :class:`_PendingResult` until a wait retires the MMA: any op but another
# async MMA (its accumulator), a wait or a loop carry that reads it raises.
# A ``use_acc`` operand false (warp-uniform) makes the result ``a @ b``: the
# accumulator's values are not read (NaNs or a pending result in it do not
# matter), while the buffers are read and race-checked as always.


@dataclass
class _AsyncMma:
    """One in-flight ``tile.async_wmma`` of a program."""

    where: str
    reads: list[tuple[SharedBuffer, tuple]]
    retired: bool = False

    def retire(self) -> None:
        for buf, prefix in self.reads:
            buf.mma_reading[prefix] -= 1
        self.retired = True


class _PendingResult:
    """The result of an async MMA that has not retired: not a readable tensor."""

    __slots__ = ("mma", "value")

    def __init__(self, value: np.ndarray, mma: _AsyncMma) -> None:
        self.value = value
        self.mma = mma

    def _fail(self) -> ModelError:
        return ModelError(
            f"read of the result of {self.mma.where} while the MMA is still in flight; a "
            "tile.async_wmma_wait with a small enough num must retire it first"
        )

    def __getattr__(self, name: str) -> Any:
        raise self._fail()

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise self._fail()


def _settled(value: Any) -> np.ndarray:
    """An accumulator operand: a tensor, or a pending MMA result (accumulating
    into it is ordered after that MMA, as the hardware orders them)."""
    return value.value if isinstance(value, _PendingResult) else value


@IMPLS.impl("tile.async_wmma")
def _b_async_wmma(c: Compiler, op: Any) -> Exec:
    a, b, acc = (c.slot(v) for v in (op.a, op.b, op.c))
    use_acc = None if op.use_acc is None else c.slot(op.use_acc)
    r = result_slot(c, op)
    where = op_where(op)
    elems = [value_elem(v.type.element_type)[0] for v in (op.a, op.b)]

    def read(p: Program, slot: int, mask: np.ndarray, elem: Elem, name: str):
        index = f"the index of buffer {name}"
        view = p.env[slot]
        buf, prefix = read_shared(p, view, mask, index, where)
        return buf, prefix, from_storage(view.read(prefix), elem).astype(np.float64)

    def run(p: Program, mask: np.ndarray) -> None:
        # Equivalent mutant: elems[0] -> elems[1]. The verifier gives A and B one element
        # type (dialect.tile.mma_input_kind).
        ba, pa, x = read(p, a, mask, elems[0], "a")
        bb, pb, y = read(p, b, mask, elems[1], "b")
        product = x @ y
        if use_acc is None or uniform(p.env[use_acc], mask, "use_acc", where):
            product += _settled(p.env[acc]).astype(np.float64)
        mma = _AsyncMma(where, [(ba, pa), (bb, pb)])
        for buf, prefix in mma.reads:
            buf.mma_reading[prefix] += 1
        p.mmas.append(mma)
        p.env[r] = _PendingResult(product.astype(np.float32), mma)

    return run


@IMPLS.impl("tile.async_wmma_wait")
def _b_async_wmma_wait(c: Compiler, op: Any) -> Exec:
    num = ir.IntegerAttr(op.operation.attributes["num"]).value
    (v,) = operand_slots(c, op)
    r = result_slot(c, op)

    def run(p: Program, mask: np.ndarray) -> None:
        while len(p.mmas) > num:
            p.mmas.popleft().retire()
        value = p.env[v]
        if isinstance(value, _PendingResult) and value.mma.retired:
            value = value.value
        p.env[r] = value

    return run


__all__ = [
    "IMPLS",
]
