"""The signed range of an integer tile value, as far as the hand-off can prove it: whether
a block coordinate ``origin + i`` can be negative, so whether its in-bounds mask needs the
``>= 0`` term (a compare and an ``and`` per index vector that LLVM cannot fold).

The facts are those of the op that defines a value: a constant is itself; a
``tile.program_id`` is below its axis's launch limit (:data:`~gemm_opt.core.targets.MAX_GRID`)
and ``tile.num_programs`` at most it; ``arith`` adds, subtracts, multiplies, divides,
takes remainders, minima, maxima, selects and extends them as integers. A result whose
range leaves its type's (the i32 product of two large ranges, which wraps) and anything
else (a function argument, a loop's induction variable, a loaded value) may be any value
of its type.
"""

from __future__ import annotations

from gemm_opt.core.ext_compat import cast, ir
from gemm_opt.core.targets import MAX_GRID

#: A closed signed range ``(lo, hi)``.
Range = tuple[int, int]


def type_range(t: ir.Type) -> Range | None:
    """Every value of a signless integer or index type, read as signed (None: not one)."""
    if isinstance(t, ir.IndexType) or cast(t, ir.IndexType) is not None:
        bits = 64
    else:
        it = cast(t, ir.IntegerType)
        if it is None:
            return None
        bits = ir.IntegerType(it).width
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def _div(a: Range, b: Range) -> Range | None:
    """``a / b`` rounded toward zero (``arith.divsi``), where ``b`` excludes 0 and the
    quotients of the corners bound it; None where ``b`` may be 0."""
    if b[0] <= 0 <= b[1]:
        return None
    qs = [_tdiv(x, y) for x in a for y in b]
    return min(qs), max(qs)


def _tdiv(x: int, y: int) -> int:
    """``x / y`` rounded toward zero."""
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def _rem(a: Range, b: Range) -> Range | None:
    """``a % b`` with the sign of ``a`` (``arith.remsi``); None where ``b`` may be 0."""
    if b[0] <= 0 <= b[1]:
        return None
    m = max(abs(b[0]), abs(b[1])) - 1
    lo = 0 if a[0] >= 0 else max(a[0], -m)
    hi = 0 if a[1] <= 0 else min(a[1], m)
    return lo, hi


def _binary(name: str, a: Range, b: Range) -> Range | None:
    if name == "arith.addi":
        return a[0] + b[0], a[1] + b[1]
    if name == "arith.subi":
        return a[0] - b[1], a[1] - b[0]
    if name == "arith.muli":
        ps = [x * y for x in a for y in b]
        return min(ps), max(ps)
    if name == "arith.divsi":
        return _div(a, b)
    if name == "arith.remsi":
        return _rem(a, b)
    if name == "arith.minsi":
        return min(a[0], b[0]), min(a[1], b[1])
    if name == "arith.maxsi":
        return max(a[0], b[0]), max(a[1], b[1])
    return None


_BINARY = frozenset(
    (
        "arith.addi",
        "arith.subi",
        "arith.muli",
        "arith.divsi",
        "arith.remsi",
        "arith.minsi",
        "arith.maxsi",
    )
)


class ValueRanges:
    """The range of each integer value of one module, computed once per value on demand."""

    def __init__(self, max_grid: tuple[int, int, int] = MAX_GRID) -> None:
        self.max_grid = max_grid
        self._memo: dict[ir.Value, Range | None] = {}

    def of(self, value: ir.Value) -> Range | None:
        """The signed range of ``value`` (None: not an integer)."""
        if value not in self._memo:
            self._memo[value] = self._compute(value)
        return self._memo[value]

    def _compute(self, value: ir.Value) -> Range | None:
        full = type_range(value.type)
        if full is None:
            return None
        owner = value.owner
        if isinstance(owner, ir.Block):
            return full
        op = owner.operation if hasattr(owner, "operation") else owner
        got = self._of_op(op, full)
        if got is None or got[0] < full[0] or got[1] > full[1]:
            return full  # unknown, or it may wrap
        return got

    def _of_op(self, op: ir.Operation, full: Range) -> Range | None:
        name = op.name
        if name == "arith.constant":
            a = cast(op.attributes["value"], ir.IntegerAttr)
            if a is None:
                return None
            v = ir.IntegerAttr(a).value
            return v, v
        if name in ("tile.program_id", "tile.num_programs"):
            axis = ir.IntegerAttr(op.attributes["axis"]).value
            if not 0 <= axis < len(self.max_grid):
                return None
            top = self.max_grid[axis]
            return (0, top - 1) if name == "tile.program_id" else (1, top)
        if name == "arith.extsi":
            return self.of(op.operands[0])
        if name == "arith.select":
            a, b = self.of(op.operands[1]), self.of(op.operands[2])
            return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
        if name in _BINARY:
            a, b = self.of(op.operands[0]), self.of(op.operands[1])
            return None if a is None or b is None else _binary(name, a, b)
        return None

    def nonnegative_span(self, origin: ir.Value, size: int) -> bool:
        """Whether every coordinate ``origin + i`` (``0 <= i < size``) is provably at
        least 0 and, computed in ``origin``'s type, does not wrap: the ``>= 0`` half of
        a block's in-bounds mask along that dim is then always true."""
        r = self.of(origin)
        full = type_range(origin.type)
        return r is not None and full is not None and r[0] >= 0 and r[1] + size - 1 <= full[1]


__all__ = ["Range", "ValueRanges", "type_range"]
