"""IR building for GEMM schedules; not a pass.

A small typed builder over the bindings (``arith``, ``scf`` and the tile
ops) that ``tile-lower-gemm-schedule`` uses to emit index arithmetic, loops,
atomics and the epilogue, so the pass reads as the schedule it emits. Every
method builds at the current insertion point and location.
"""

from collections.abc import Sequence
from typing import Any

from gemm_opt.core.ext_compat import arith, ir, scf
from gemm_opt.dialect.sync import AtomicAddBlockOp, AtomicRmwOp, LoadScalarOp, NumProgramsOp
from gemm_opt.dialect.tile import LoadBlockOp, ProgramIdOp, StoreBlockOp

Value = ir.Value


class Emitter:
    """Emit i32 index arithmetic and the schedule's memory ops."""

    def __init__(self) -> None:
        self.i32 = ir.IntegerType.get_signless(32)
        self.i64 = ir.IntegerType.get_signless(64)
        self.i1 = ir.IntegerType.get_signless(1)

    # -- scalars --

    def c(self, v: int) -> Value:
        return arith.ConstantOp(self.i32, v).result

    def c64(self, v: int) -> Value:
        return arith.ConstantOp(self.i64, v).result

    def add(self, a: Value, b: Value) -> Value:
        return arith.AddIOp(a, b).result

    def sub(self, a: Value, b: Value) -> Value:
        return arith.SubIOp(a, b).result

    def mul(self, a: Value, b: Value) -> Value:
        return arith.MulIOp(a, b).result

    def div(self, a: Value, b: Value) -> Value:
        return arith.DivSIOp(a, b).result

    def rem(self, a: Value, b: Value) -> Value:
        return arith.RemSIOp(a, b).result

    def min(self, a: Value, b: Value) -> Value:
        return arith.MinSIOp(a, b).result

    def max(self, a: Value, b: Value) -> Value:
        return arith.MaxSIOp(a, b).result

    def cdiv(self, a: Value, b: Value) -> Value:
        """Ceiling division of a non-negative ``a`` by a positive ``b``."""
        return self.div(self.add(a, self.sub(b, self.c(1))), b)

    def cmp(self, pred: str, a: Value, b: Value) -> Value:
        return arith.CmpIOp(getattr(arith.CmpIPredicate, pred), a, b).result

    def select(self, cond: Value, a: Value, b: Value) -> Value:
        return arith.SelectOp(cond, a, b).result

    def and_(self, a: Value, b: Value) -> Value:
        return arith.AndIOp(a, b).result

    def or_(self, a: Value, b: Value) -> Value:
        return arith.OrIOp(a, b).result

    # -- grid and atomics --

    def program_id(self) -> Value:
        op = ProgramIdOp()
        op.operation.attributes["axis"] = ir.IntegerAttr.get(self.i32, 0)
        return op.result

    def num_programs(self) -> Value:
        op = NumProgramsOp()
        op.operation.attributes["axis"] = ir.IntegerAttr.get(self.i32, 0)
        return op.result

    def atomic(self, base: Value, index: Value, value: Value, kind: str, sem: str) -> Value:
        op = AtomicRmwOp(base, index, value, self.i32)
        attrs = op.operation.attributes
        attrs["kind"] = ir.StringAttr.get(kind)
        attrs["sem"] = ir.StringAttr.get(sem)
        attrs["scope"] = ir.StringAttr.get("gpu")
        return op.result

    def wait_flag(self, sync: Value, index: Value) -> None:
        """Spin until ``sync[index]`` is non-zero (acquire reads)."""
        w = scf.WhileOp([], [])
        before = w.before.blocks.append()
        after = w.after.blocks.append()
        with ir.InsertionPoint(before):
            old = self.atomic(sync, index, self.c(0), "add", "acquire")
            scf.ConditionOp(self.cmp("eq", old, self.c(0)), [])
        with ir.InsertionPoint(after):
            scf.YieldOp([])

    def wait_count(self, sync: Value, index: Value, count: Value) -> None:
        """Spin until ``sync[index]`` reaches ``count`` (acquire reads): a
        counter raised by ``count`` release adds; the read that sees the last
        of them reads the end of a chain of read-modify-writes, so it
        synchronizes with every one (every earlier release heads a release
        sequence the later adds continue)."""
        w = scf.WhileOp([], [])
        before = w.before.blocks.append()
        after = w.after.blocks.append()
        with ir.InsertionPoint(before):
            old = self.atomic(sync, index, self.c(0), "add", "acquire")
            scf.ConditionOp(self.cmp("slt", old, count), [])
        with ir.InsertionPoint(after):
            scf.YieldOp([])

    def signal_flag(self, sync: Value, index: Value) -> None:
        """Publish: ``sync[index] = 1`` with release (orders the earlier writes)."""
        # Equivalent mutant: any non-zero value publishes (``wait_flag`` waits
        # while the flag is 0; a launch's sync words start at 0, and a tree
        # fix-up's flags are never counted).
        self.atomic(sync, index, self.c(1), "xchg", "release")

    def load_scalar(self, base: Value, index: Value) -> Value:
        return LoadScalarOp(base, index, self.i32).result

    # -- blocks --

    def store(
        self,
        base: Value,
        rows: Value,
        cols: Value,
        ld: Value,
        m: Value,
        n: Value,
        v: Value,
        col_major: bool = False,
    ):
        """Store ``v`` at (m, n) of a ``rows x cols`` matrix: element (i, j) at
        ``i * ld + j``, or ``i + j * ld`` when ``col_major``."""
        StoreBlockOp(base, [rows, cols], self.strides(ld, col_major), [m, n], v)

    def strides(self, ld: Value, col_major: bool = False) -> list[Value]:
        """The (row, column) element strides of a matrix of leading dimension ``ld``."""
        return [self.c64(1), ld] if col_major else [ld, self.c64(1)]

    def atomic_add(
        self,
        base: Value,
        rows: Value,
        cols: Value,
        ld: Value,
        m: Value,
        n: Value,
        v: Value,
        col_major: bool = False,
    ) -> None:
        op = AtomicAddBlockOp(base, [rows, cols], self.strides(ld, col_major), [m, n], v)
        op.operation.attributes["sem"] = ir.StringAttr.get("relaxed")
        op.operation.attributes["scope"] = ir.StringAttr.get("gpu")

    def load(
        self, base: Value, rows: Value, cols: Value, ld: Value, m: Value, n: Value, t: ir.Type
    ) -> Value:
        return LoadBlockOp(base, [rows, cols], [ld, self.c64(1)], [m, n], t).result

    # -- control flow --

    def for_(self, lb: Value, ub: Value, step: Value, inits: Sequence[Value] = ()) -> Any:
        return scf.ForOp(lb, ub, step, list(inits))

    def if_(self, cond: Value, results: Sequence[ir.Type] = (), has_else: bool = False) -> Any:
        return scf.IfOp(cond, list(results), has_else=has_else)


def hoist(loop: Any, name: str) -> None:
    """Move the ops named ``name`` in ``loop``'s body, with the ``arith`` ops
    they are computed from, to just before ``loop``, where none of them
    depends on the loop's induction variable, iteration arguments or any
    other op of its body (those stay). The moved ops are pure, so they
    compute the same values once as on every iteration."""
    body = loop.body

    def closure(op: ir.Operation, chain: list[ir.Operation]) -> bool:
        """Append ``op``'s in-body operand ops, then ``op``, to ``chain``
        (operands first); False if one of them cannot move. An op moved for an
        earlier root is no longer in the body, so it is an invariant here."""
        if op in chain:
            return True
        for v in op.operands:
            owner = v.owner
            if isinstance(owner, ir.Block):
                if owner == body:
                    return False
                continue
            owner = owner.operation
            if owner.block != body:
                continue
            if not owner.name.startswith("arith.") or not closure(owner, chain):
                return False
        chain.append(op)
        return True

    for op in list(body.operations):
        chain: list[ir.Operation] = []
        if op.operation.name == name and closure(op.operation, chain):
            for inner in chain:
                inner.move_before(loop.operation)


__all__ = ["Emitter", "hoist"]
