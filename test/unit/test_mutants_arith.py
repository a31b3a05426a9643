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


def _run(
    name: str, x: np.ndarray, y: np.ndarray, dtype: type = np.int8, predicate: int | None = None
) -> np.ndarray:
    """``name(x, y)`` in the model, on tensors of ``x.size`` lanes (a comparison
    with ``predicate`` returns i1)."""
    with make_context(), ir.Location.unknown():
        et = ir.F32Type.get() if dtype is np.float32 else ir.IntegerType.get_signless(8)
        layout = tile.BlockedAttr.build(
            size_per_thread=[x.size // 32], threads_per_warp=[32], warps_per_cta=[1], order=[0]
        )
        t = ir.RankedTensorType.get([x.size], et, layout)
        rt = t
        attrs = {}
        if predicate is not None:
            rt = ir.RankedTensorType.get([x.size], ir.IntegerType.get_signless(1), layout)
            attrs["predicate"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), predicate)
        module = ir.Module.create()
        module.operation.attributes["tile.num_warps"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(32), 1
        )
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("k", ir.FunctionType.get([], [rt]))
        with ir.InsertionPoint(fn.add_entry_block()):
            a, b = (
                ir.Operation.create(
                    "arith.constant",
                    results=[t],
                    attributes={"value": ir.DenseElementsAttr.get(v.astype(dtype), type=t)},
                ).result
                for v in (x, y)
            )
            r = ir.Operation.create(name, results=[rt], operands=[a, b], attributes=attrs)
            func.ReturnOp([r.result])
        assert module.operation.verify()
        (out,) = run_function(module, "k").returns[(0, 0, 0)]
        return np.asarray(out)


@pytest.mark.parametrize("name", INT_BINARY)
def test_every_i8_pair(name: str) -> None:
    ref, defined = INT_BINARY[name]
    keep = DEFINED[defined]
    x, y = X[keep], Y[keep]
    pad = -x.size % 32  # a whole number of lanes per thread
    x, y = np.concatenate([x, x[:pad]]), np.concatenate([y, y[:pad]])
    got = _run(name, x, y).astype(np.int64)
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


@pytest.mark.parametrize("elem", ["f32", "f16"])
def test_a_float_tensor_constant_keeps_its_fractions(elem: str) -> None:
    """A dense float constant is rounded to its type, never truncated to integers."""
    values = np.linspace(-3.75, 4.25, 64)
    with make_context(), ir.Location.unknown():
        et = ir.F32Type.get() if elem == "f32" else ir.F16Type.get()
        layout = tile.BlockedAttr.build(
            size_per_thread=[2], threads_per_warp=[32], warps_per_cta=[1], order=[0]
        )
        t = ir.RankedTensorType.get([64], et, layout)
        dtype = np.float32 if elem == "f32" else np.float16
        module = ir.Module.create()
        module.operation.attributes["tile.num_warps"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(32), 1
        )
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("k", ir.FunctionType.get([], [t]))
        with ir.InsertionPoint(fn.add_entry_block()):
            attr = ir.DenseElementsAttr.get(values.astype(dtype), type=t)
            c = ir.Operation.create("arith.constant", results=[t], attributes={"value": attr})
            func.ReturnOp([c.result])
        (out,) = run_function(module, "k").returns[(0, 0, 0)]
    np.testing.assert_array_equal(np.asarray(out, dtype=np.float64), values.astype(dtype))


DIVERGENT = """
module attributes {tile.num_warps = 2 : i32} {
  func.func @k(%x: i32) -> (i32, i32) {
    %c0 = arith.constant 0 : i32
    %w = "tile.warp_id"() : () -> i32
    %on = arith.cmpi ne, %w, %c0 : i32
    %q, %s = scf.if %on -> (i32, i32) {
      %d = arith.divsi %x, %w : i32
      %sh = arith.shli %x, %w : i32
      scf.yield %d, %sh : i32, i32
    } else {
      scf.yield %c0, %c0 : i32, i32
    }
    return %q, %s : i32, i32
  }
}
"""


def test_scalar_poison_only_on_warps_that_execute() -> None:
    """The divisor and shift amount are the warp id: 0 on warp 0, which does
    not execute the branch, so its zero divisor is no error."""
    q, s = run_function(DIVERGENT, "k", {"x": 7}).returns[(0, 0, 0)]
    assert np.asarray(q).tolist() == [0, 7]
    assert np.asarray(s).tolist() == [0, 14]


CMPI: dict[str, Ref] = {
    "eq": np.equal,
    "ne": np.not_equal,
    "slt": np.less,
    "sle": np.less_equal,
    "sgt": np.greater,
    "sge": np.greater_equal,
    "ult": lambda x, y: _u8(x) < _u8(y),
    "ule": lambda x, y: _u8(x) <= _u8(y),
    "ugt": lambda x, y: _u8(x) > _u8(y),
    "uge": lambda x, y: _u8(x) >= _u8(y),
}


@pytest.mark.parametrize("predicate", range(len(CMPI)))
def test_cmpi_on_every_i8_pair(predicate: int) -> None:
    """True is the i1 value -1 (all bits set), false 0."""
    ref = list(CMPI.values())[predicate]
    got = _run("arith.cmpi", X, Y, predicate=predicate)
    np.testing.assert_array_equal(got, np.where(ref(X, Y), -1, 0))


F = np.array([-np.inf, -1.5, -0.0, 0.0, 1.5, 2.0, np.inf, np.nan])
FX, FY = (v.ravel() for v in np.meshgrid(F, F))
ORDERED = {"eq": np.equal, "gt": np.greater, "ge": np.greater_equal}
ORDERED |= {"lt": np.less, "le": np.less_equal, "ne": np.not_equal}
#: arith.cmpf's predicates in their enum order.
CMPF = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord"]
CMPF += ["ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"]


def _cmpf_ref(pred: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    unordered = np.isnan(x) | np.isnan(y)
    if pred in ("false", "true"):
        return np.full(x.shape, pred == "true")
    if pred in ("ord", "uno"):
        return unordered == (pred == "uno")
    with np.errstate(invalid="ignore"):
        base = ORDERED[pred[1:]](x, y)
    return (base & ~unordered) if pred[0] == "o" else (base | unordered)


@pytest.mark.parametrize("predicate", range(len(CMPF)))
def test_cmpf_on_pairs_of_specials(predicate: int) -> None:
    """Every predicate on every pair of infinities, signed zeros, NaN and finite values."""
    got = _run("arith.cmpf", FX, FY, dtype=np.float32, predicate=predicate)
    want = _cmpf_ref(CMPF[predicate], FX, FY)
    np.testing.assert_array_equal(got, np.where(want, -1, 0))


SELECT = """
#bl = #tile.blocked<{size_per_thread = array<i64: 1>, threads_per_warp = array<i64: 32>, warps_per_cta = array<i64: 2>, order = array<i64: 0>}>
!t = tensor<64xi32, #bl>
module attributes {tile.num_warps = 2 : i32} {
  func.func @k(%x: i32) -> (!t, !t, i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %a = arith.constant dense<1> : !t
    %b = arith.constant dense<2> : !t
    %lanes = arith.constant dense<[1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0]> : !t
    %on = arith.cmpi ne, %lanes, %a : !t
    %per_lane = arith.select %on, %a, %b : tensor<64xi1, #bl>, !t
    %big = arith.cmpi sgt, %x, %c1 : i32
    %whole = arith.select %big, %a, %b : !t
    %w = "tile.warp_id"() : () -> i32
    %odd = arith.cmpi ne, %w, %c0 : i32
    %per_warp = arith.select %odd, %c1, %c2 : i32
    return %per_lane, %whole, %per_warp : !t, !t, i32
  }
}
"""


@pytest.mark.parametrize("x", [0, 5])
def test_select_per_lane_per_tensor_and_per_warp(x: int) -> None:
    lanes = np.array(
        [int(c) for c in "1011001011110000101010100101010111001100000000011010110111111100"]
    )
    per_lane, whole, per_warp = run_function(SELECT, "k", {"x": x}).returns[(0, 0, 0)]
    np.testing.assert_array_equal(np.asarray(per_lane), np.where(lanes != 1, 1, 2))
    np.testing.assert_array_equal(np.asarray(whole), np.full(64, 1 if x > 1 else 2))
    assert np.asarray(per_warp).tolist() == [2, 1]
