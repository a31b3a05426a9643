"""The hand-off's integer ranges (``gemm_opt.lowering.value_range``): sound for every
launch within the grid limits, and exact at the edge where a block's coordinates would
wrap; the lowering drops the ``>= 0`` mask term exactly where they prove it true.

Soundness is checked against evaluation: random i32 expressions over constants, program
ids and program counts, evaluated with i32 wrap-around for every launch of a small grid
(every program count up to the limit, every program id below it), must stay inside the
range the analysis gives.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gemm_opt.core.ext_compat import arith, func, ir
from gemm_opt.core.targets import MAX_GRID
from gemm_opt.dialect import make_context
from gemm_opt.dialect.sync import NumProgramsOp
from gemm_opt.dialect.tile import ProgramIdOp
from gemm_opt.lowering.compile import lower_tile_module
from gemm_opt.lowering.value_range import ValueRanges, type_range

I32_MIN, I32_MAX = -(2**31), 2**31 - 1
#: A grid small enough to enumerate every launch of.
SMALL_GRID = (5, 3, 2)
BINARY = ("addi", "subi", "muli", "divsi", "remsi", "minsi", "maxsi")


@dataclass(frozen=True)
class Leaf:
    kind: str  # "const", "pid" or "nprog"
    value: int


@dataclass(frozen=True)
class Node:
    op: str
    lhs: object
    rhs: object
    other: object = None  # select's second value (``lhs`` is the condition's left side)


CONSTANTS = st.one_of(
    st.integers(-300, 300),
    st.sampled_from([0, 1, 64, 128, 2**16, 2**30, I32_MAX, I32_MIN, -1, -(2**30)]),
)
LEAVES = st.one_of(
    st.builds(Leaf, st.just("const"), CONSTANTS),
    st.builds(Leaf, st.just("pid"), st.integers(0, 2)),
    st.builds(Leaf, st.just("nprog"), st.integers(0, 2)),
)
EXPRS = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.builds(Node, st.sampled_from(BINARY), inner, inner),
        st.builds(Node, st.just("select"), inner, inner, inner),
    ),
    max_leaves=8,
)


def _wrap(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


class _UB(Exception):
    """Division by zero or the one overflowing quotient: no value to check."""


def _evaluate(e: object, pid: tuple[int, ...], nprog: tuple[int, ...]) -> int:
    if isinstance(e, Leaf):
        if e.kind == "const":
            return e.value
        return pid[e.value] if e.kind == "pid" else nprog[e.value]
    assert isinstance(e, Node)
    a, b = _evaluate(e.lhs, pid, nprog), _evaluate(e.rhs, pid, nprog)
    if e.op == "select":
        return b if a < 0 else _evaluate(e.other, pid, nprog)
    if e.op in ("divsi", "remsi"):
        if b == 0 or (a == I32_MIN and b == -1):
            raise _UB
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        return q if e.op == "divsi" else a - q * b
    fn = {
        "addi": lambda: a + b,
        "subi": lambda: a - b,
        "muli": lambda: a * b,
        "minsi": lambda: min(a, b),
        "maxsi": lambda: max(a, b),
    }[e.op]
    return _wrap(fn())


OPS = {
    "addi": arith.AddIOp,
    "subi": arith.SubIOp,
    "muli": arith.MulIOp,
    "divsi": arith.DivSIOp,
    "remsi": arith.RemSIOp,
    "minsi": arith.MinSIOp,
    "maxsi": arith.MaxSIOp,
}


def _build(context: ir.Context, e: object) -> ir.Value:
    """``e`` built as the value a function returns (equal subtrees are one value)."""
    with context, ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("f", ([], [i32]))
            block = fn.add_entry_block()
        built: dict[object, ir.Value] = {}

        def go(x: object) -> ir.Value:
            if x in built:
                return built[x]
            if isinstance(x, Leaf):
                if x.kind == "const":
                    v = arith.ConstantOp(i32, x.value).result
                else:
                    op = ProgramIdOp() if x.kind == "pid" else NumProgramsOp()
                    op.operation.attributes["axis"] = ir.IntegerAttr.get(i32, x.value)
                    v = op.result
            else:
                assert isinstance(x, Node)
                a, b = go(x.lhs), go(x.rhs)
                if x.op == "select":
                    zero = arith.ConstantOp(i32, 0).result
                    cond = arith.CmpIOp(arith.CmpIPredicate.slt, a, zero).result
                    v = arith.SelectOp(cond, b, go(x.other)).result
                else:
                    v = OPS[x.op](a, b).result
            built[x] = v
            return v

        with ir.InsertionPoint(block):
            result = go(e)
            func.ReturnOp([result])
    _build.keep = module  # type: ignore[attr-defined]  # the value lives as long as its module
    return result


@pytest.fixture(scope="module")
def context() -> ir.Context:
    return make_context()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EXPRS)
@example(Node("remsi", Leaf("const", -5), Leaf("pid", 1)))  # a remainder takes the sign
@example(Node("muli", Leaf("const", 2**30), Leaf("pid", 0)))  # wraps for pid >= 2
@example(Node("subi", Leaf("const", I32_MIN), Leaf("nprog", 2)))  # wraps below
def test_every_value_of_every_launch_lies_in_the_range(context: ir.Context, e: object) -> None:
    lo, hi = ValueRanges(SMALL_GRID).of(_build(context, e))
    launches = itertools.product(*(range(1, g + 1) for g in SMALL_GRID))
    for nprog in launches:
        for pid in itertools.product(*(range(n) for n in nprog)):
            try:
                v = _evaluate(e, pid, nprog)
            except _UB:
                continue
            assert lo <= v <= hi, (e, pid, nprog, v, (lo, hi))


def _span(context: ir.Context, e: object, size: int) -> bool:
    return ValueRanges().nonnegative_span(_build(context, e), size)


def _times(axis: int, block: int) -> Node:
    return Node("muli", Leaf("pid", axis), Leaf("const", block))


def test_the_last_block_size_that_cannot_wrap_is_the_edge(context: ir.Context) -> None:
    # Axis 1 has at most 65535 programs: 65534 * 32768 + 127 is below 2**31, one more
    # column per program is not.
    top = MAX_GRID[1] - 1
    assert top * 32768 + 127 <= I32_MAX < top * 32769 + 127
    assert _span(context, _times(1, 32768), 128)
    assert not _span(context, _times(1, 32769), 128)
    assert _span(context, _times(1, 32769), 1)  # the origin itself does not wrap
    # Axis 0 allows 2**31 - 1 programs (ids to 2**31 - 2): pid * 128 may wrap.
    assert not _span(context, _times(0, 128), 128)
    assert _span(context, _times(0, 1), 2)
    assert not _span(context, _times(0, 1), 3)


@pytest.mark.parametrize(
    ("e", "proven"),
    [
        (Leaf("const", 0), True),
        (Leaf("const", -1), False),
        (Leaf("const", I32_MAX - 127), True),
        (Leaf("const", I32_MAX - 126), False),
        (Node("remsi", Leaf("pid", 0), Leaf("const", 64)), True),
        (Node("remsi", Leaf("const", -1), Leaf("const", 64)), False),
        # The range does not know the two are one value: [1 - 65535, 65535 - 1].
        (Node("subi", Leaf("nprog", 2), Leaf("nprog", 2)), False),
    ],
)
def test_constants_and_remainders(context: ir.Context, e: object, proven: bool) -> None:
    assert _span(context, e, 128) is proven


def test_a_function_argument_may_be_anything(context: ir.Context) -> None:
    with context, ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("f", ([i32], []))
            arg = fn.add_entry_block().arguments[0]
        assert ValueRanges().of(arg) == type_range(i32) == (I32_MIN, I32_MAX)
        assert not ValueRanges().nonnegative_span(arg, 1)


#: A store of a 64x64 block at (rows, cols) given by the lines before it.
STORE = """
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "%(target)s"} {
  func.func @s(%%y: !tile.ptr<f32>, %%m: i32, %%n: i32, %%ld: i64, %%arg: i32) {
    %%one = arith.constant 1 : i64
    %%c64 = arith.constant 64 : i32
    %%p0 = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %%p1 = "tile.program_id"() {axis = 1 : i32} : () -> i32
    %%rows = arith.muli %%p0, %%c64 : i32
    %%cols = arith.muli %%p1, %%c64 : i32
    %%v = arith.constant dense<1.0> : tensor<64x64xf32, #bl>
    "tile.store_block"(%%y, %%m, %%n, %%ld, %%one, %%%(row)s, %%%(col)s, %%v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, tensor<64x64xf32, #bl>) -> ()
    return
  }
}
"""


def _compares(ttgir: str, pred: str) -> dict[str, int]:
    """How many ``pred`` compares the lowering made of the row and of the column index."""
    lines = [ln for ln in ttgir.splitlines() if f"arith.cmpi {pred}, " in ln]
    return {
        "rows": sum("tensor<64x1xi32" in ln for ln in lines),
        "cols": sum("tensor<1x64xi32" in ln for ln in lines),
    }


@pytest.mark.parametrize("target", ["gfx1250", "cuda:90"])
@pytest.mark.parametrize(
    ("row", "col", "kept"),
    [
        ("rows", "cols", {"rows": 1, "cols": 0}),  # axis 0 may wrap, axis 1 cannot
        ("cols", "rows", {"rows": 0, "cols": 1}),
        ("arg", "cols", {"rows": 1, "cols": 0}),  # an argument may be negative
        ("cols", "arg", {"rows": 0, "cols": 1}),
    ],
)
def test_the_lowering_keeps_the_term_where_it_is_not_proven(
    target: str, row: str, col: str, kept: dict[str, int]
) -> None:
    ttgir = lower_tile_module(STORE % {"target": target, "row": row, "col": col}).ttgir
    assert _compares(ttgir, "sge") == kept
    assert _compares(ttgir, "slt") == {"rows": 1, "cols": 1}
