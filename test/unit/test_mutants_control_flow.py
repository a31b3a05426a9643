"""``scf.for`` bounds and steps in the model (found by ``benchmarks/mutation.py``
in ``gemm_opt.model.control_flow``).

A loop compares its induction variable signed unless it carries
``unsignedCmp`` (``scf.for unsigned``): bounds across the sign bit of i32 run
a different number of iterations under the two, and only the right one
matches the hardware. A step that is not positive on any warp that runs the
loop is a ``ModelError`` before the first iteration, even a loop that would
run none.
"""

from __future__ import annotations

import numpy as np
import pytest

from gemm_opt.model.interpreter import ModelError, run_function

#: ``@count(%lb, %ub, %st)``: the iterations of a signed and an unsigned loop.
COUNT = """module attributes {tile.num_warps = 1 : i32} {
  func.func @signed(%lb: i32, %ub: i32, %st: i32) -> i32 {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %n = scf.for %i = %lb to %ub step %st iter_args(%k = %c0) -> (i32) : i32 {
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
    return %n : i32
  }
  func.func @unsigned(%lb: i32, %ub: i32, %st: i32) -> i32 {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %n = scf.for unsigned %i = %lb to %ub step %st iter_args(%k = %c0) -> (i32) : i32 {
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
    return %n : i32
  }
}"""

#: Two warps: warp ``w`` steps by ``w`` (warp 0's step is 0).
WARP_STEP = """module attributes {tile.num_warps = 2 : i32} {
  func.func @f(%lb: i32, %ub: i32) -> i32 {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %w = "tile.warp_id"() : () -> i32
    %n = scf.for %i = %lb to %ub step %w iter_args(%k = %c0) -> (i32) : i32 {
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
    return %n : i32
  }
}"""

TOP = 2**31


def _count(kind: str, lb: int, ub: int, step: int) -> int:
    (n,) = run_function(COUNT, kind, {"lb": lb, "ub": ub, "st": step}).returns[(0, 0, 0)]
    return int(n[0])


@pytest.mark.parametrize(
    ("lb", "ub", "step", "signed", "unsigned"),
    [
        (0, 4, 1, 4, 4),
        (3, 4, 2, 1, 1),
        (4, 4, 1, 0, 0),
        (-2, 2, 1, 4, 0),  # unsigned: 0xFFFFFFFE is not below 2
        (TOP - 2, -TOP + 2, 2, 0, 2),  # unsigned: 0x7FFFFFFE, 0x80000000 below 0x80000002
        (-3, -1, 1, 2, 2),
    ],
)
def test_signed_and_unsigned_bounds(lb: int, ub: int, step: int, signed: int, unsigned: int):
    assert _count("signed", lb, ub, step) == signed
    assert _count("unsigned", lb, ub, step) == unsigned


@pytest.mark.parametrize("step", [0, -1])
@pytest.mark.parametrize("kind", ["signed", "unsigned"])
def test_a_step_that_is_not_positive_is_refused(kind: str, step: int) -> None:
    """Even where the loop would run no iteration (lb == ub)."""
    with pytest.raises(ModelError, match="the step must be positive"):
        _count(kind, 5, 5, step)


def test_one_warps_zero_step_is_refused() -> None:
    with pytest.raises(ModelError, match=r"the step must be positive, got \[0, 1\]"):
        run_function(WARP_STEP, "f", {"lb": 0, "ub": 0})


#: ``scf.while`` loops that write nothing: ``@count`` runs 5 iterations whose
#: values differ, ``@same_int`` and ``@same_nan`` repeat one value forever
#: (recomputed each pass, so a new array with the same contents), and
#: ``@descs`` carries a descriptor remade each pass beside a counter.
WHILE = """#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 0>}>
!d = !tile.tensor_desc<tensor<4xf32, #s>>
module attributes {tile.num_warps = 1 : i32} {
  func.func @count() -> i32 {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c5 = arith.constant 5 : i32
    %r = scf.while (%i = %c0) : (i32) -> i32 {
      %more = arith.cmpi slt, %i, %c5 : i32
      scf.condition(%more) %i : i32
    } do {
    ^bb0(%j: i32):
      %j1 = arith.addi %j, %c1 : i32
      scf.yield %j1 : i32
    }
    return %r : i32
  }
  func.func @same_int() -> i32 {
    %c0 = arith.constant 0 : i32
    %true = arith.constant true
    %r = scf.while (%i = %c0) : (i32) -> i32 {
      scf.condition(%true) %i : i32
    } do {
    ^bb0(%j: i32):
      %j1 = arith.addi %j, %c0 : i32
      scf.yield %j1 : i32
    }
    return %r : i32
  }
  func.func @same_nan() -> f32 {
    %zero = arith.constant 0.0 : f32
    %nan = arith.divf %zero, %zero : f32
    %true = arith.constant true
    %r = scf.while (%x = %nan) : (f32) -> f32 {
      scf.condition(%true) %x : f32
    } do {
    ^bb0(%y: f32):
      %y1 = arith.addf %y, %zero : f32
      scf.yield %y1 : f32
    }
    return %r : f32
  }
  func.func @descs(%p: !tile.ptr<f32>) -> i32 {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %c16 = arith.constant 16 : i32
    %one = arith.constant 1 : i64
    %d0 = "tile.make_tensor_descriptor"(%p, %c16, %one) {operandSegmentSizes = array<i32: 1, 1, 1>} : (!tile.ptr<f32>, i32, i64) -> !d
    %rd, %r = scf.while (%d = %d0, %i = %c0) : (!d, i32) -> (!d, i32) {
      %more = arith.cmpi slt, %i, %c3 : i32
      scf.condition(%more) %d, %i : !d, i32
    } do {
    ^bb0(%e: !d, %j: i32):
      %e1 = "tile.update_tensor_descriptor"(%e, %j) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!d, i32) -> !d
      %j1 = arith.addi %j, %c1 : i32
      scf.yield %e1, %j1 : !d, i32
    }
    return %r : i32
  }
}"""


def test_a_loop_whose_values_change_is_no_spin() -> None:
    (n,) = run_function(WHILE, "count").returns[(0, 0, 0)]
    assert int(n[0]) == 5


def test_a_loop_remaking_a_descriptor_is_no_spin() -> None:
    """Values that are not arrays are the same only as the same object."""
    p = np.zeros(16, np.float32)
    (n,) = run_function(WHILE, "descs", {"p": p}).returns[(0, 0, 0)]
    assert int(n[0]) == 3


@pytest.mark.parametrize("name", ["same_int", "same_nan"])
def test_a_loop_repeating_equal_values_is_a_reported_spin(name: str) -> None:
    """Equal contents in a new array (a NaN equal to itself) are the same values."""
    with pytest.raises(ModelError, match="repeats a loop iteration with the same values"):
        run_function(WHILE, name)
