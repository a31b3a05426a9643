"""The model's integer arithmetic, exhaustively on i8 (found by ``benchmarks/mutation.py``).

Each kernel applies one ``arith`` op to two constant tensors holding every
pair of i8 values (65,536 lanes) and returns the result; the model must equal
a Python reference of the op's MLIR semantics on every pair: two's-complement
wrap, truncating signed division, the unsigned ops on the low 8 bits, shifts
below the width. Division by zero and shifts out of range are poison (the
model refuses them: tested apart), and so are the signed divisions of -128 by
-1 (left out).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from gemm_opt.core.ext_compat import func, ir
from gemm_opt.dialect import make_context, tile
from gemm_opt.model.interpreter import ModelError, run_function

X, Y = (v.ravel() for v in np.meshgrid(np.arange(-128, 128), np.arange(-128, 128)))


def _s8(v: np.ndarray) -> np.ndarray:
    return ((v + 128) & 0xFF) - 128


def _u8(v: np.ndarray) -> np.ndarray:
    return v & 0xFF


def _trunc_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    q = np.abs(x) // np.abs(y)
    return np.where((x < 0) != (y < 0), -q, q)


def _ceil_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return -((-x) // y)


Ref = Callable[[np.ndarray, np.ndarray], np.ndarray]
#: op -> (reference on int64 values, which pairs are defined)
INT_BINARY: dict[str, tuple[Ref, str]] = {
    "arith.addi": (lambda x, y: x + y, "all"),
    "arith.subi": (lambda x, y: x - y, "all"),
    "arith.muli": (lambda x, y: x * y, "all"),
    "arith.andi": (lambda x, y: x & y, "all"),
    "arith.ori": (lambda x, y: x | y, "all"),
    "arith.xori": (lambda x, y: x ^ y, "all"),
    "arith.maxsi": (np.maximum, "all"),
    "arith.minsi": (np.minimum, "all"),
    "arith.maxui": (lambda x, y: np.maximum(_u8(x), _u8(y)), "all"),
    "arith.minui": (lambda x, y: np.minimum(_u8(x), _u8(y)), "all"),
    "arith.divsi": (_trunc_div, "signed division"),
    "arith.remsi": (lambda x, y: x - _trunc_div(x, y) * y, "signed division"),
    "arith.ceildivsi": (_ceil_div, "signed division"),
    "arith.floordivsi": (lambda x, y: x // y, "signed division"),
    "arith.divui": (lambda x, y: _u8(x) // _u8(y), "division"),
    "arith.remui": (lambda x, y: _u8(x) % _u8(y), "division"),
    "arith.ceildivui": (lambda x, y: -((-_u8(x)) // _u8(y)), "division"),
    "arith.shli": (lambda x, y: x << y, "shift"),
    "arith.shrsi": (lambda x, y: x >> y, "shift"),
    "arith.shrui": (lambda x, y: _u8(x) >> y, "shift"),
}
DEFINED = {
    "all": np.ones(X.size, bool),
    "division": Y != 0,
    "signed division": (Y != 0) & ~((X == -128) & (Y == -1)),
    "shift": (Y >= 0) & (Y < 8),
}


def _run(name: str, x: np.ndarray, y: np.ndarray, elem: str = "i8") -> np.ndarray:
    """``name(x, y)`` in the model, on tensors of ``x.size`` lanes."""
    with make_context(), ir.Location.unknown():
        et = ir.IntegerType.get_signless(int(elem[1:]))
        layout = tile.BlockedAttr.build(
            size_per_thread=[x.size // 32], threads_per_warp=[32], warps_per_cta=[1], order=[0]
        )
        t = ir.RankedTensorType.get([x.size], et, layout)
        module = ir.Module.create()
        module.operation.attributes["tile.num_warps"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(32), 1
        )
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("k", ir.FunctionType.get([], [t]))
        with ir.InsertionPoint(fn.add_entry_block()):
            a, b = (
                ir.Operation.create(
                    "arith.constant",
                    results=[t],
                    attributes={"value": ir.DenseElementsAttr.get(v.astype(np.int8), type=t)},
                ).result
                for v in (x, y)
            )
            r = ir.Operation.create(name, results=[t], operands=[a, b]).result
            func.ReturnOp([r])
        assert module.operation.verify()
        (out,) = run_function(module, "k").returns[(0, 0, 0)]
        return np.asarray(out, dtype=np.int64)


@pytest.mark.parametrize("name", INT_BINARY)
def test_every_i8_pair(name: str) -> None:
    ref, defined = INT_BINARY[name]
    keep = DEFINED[defined]
    x, y = X[keep], Y[keep]
    pad = -x.size % 32  # a whole number of lanes per thread
    x, y = np.concatenate([x, x[:pad]]), np.concatenate([y, y[:pad]])
    got = _run(name, x, y)
    want = _s8(ref(x, y))
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(int(x[i]), int(y[i]), int(got[i]), int(want[i])) for i in bad[:5]]


@pytest.mark.parametrize("name", ["arith.divsi", "arith.remui", "arith.ceildivsi"])
def test_a_zero_divisor_is_refused(name: str) -> None:
    x, y = np.arange(32), np.arange(1, 33)
    y[7] = 0
    with pytest.raises(ModelError, match="integer division by zero"):
        _run(name, x, y)


@pytest.mark.parametrize("amount", [-1, 8])
@pytest.mark.parametrize("name", ["arith.shli", "arith.shrsi", "arith.shrui"])
def test_a_shift_out_of_range_is_refused(name: str, amount: int) -> None:
    x, y = np.arange(32), np.full(32, 7)
    y[3] = amount
    with pytest.raises(ModelError, match=r"shift amount out of range for i8 \(poison\)"):
        _run(name, x, y)
