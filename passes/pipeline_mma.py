"""``tile-pipeline-mma``: keep one MMA in flight across K-loop iterations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from gemm_opt.core.contract import IMPRECISE_ACC
from gemm_opt.core.ext_compat import cast, ir
from gemm_opt.core.pass_base import TilePass
from gemm_opt.dialect.async_ops import DEFAULT_K_WIDTH, AsyncWmmaOp, AsyncWmmaWaitOp
from gemm_opt.dialect.tile import AsyncTDMWaitOp, DotOperandAttr, WmmaOp
from gemm_opt.passes.common import COPY_OP, FUSED_OP, buffer_root, is_pure

#: The MMAs left in flight at the end of an iteration.
IN_FLIGHT = 1

#: Ops that may sit between the copies the pass moves and the MMA.
_STEPPED_OVER = frozenset({"tile.local_load", "tile.async_tdm_wait", "scf.yield"})


class _NoMatch(Exception):
    """The loop is not the copy-then-MMA K loop the pass rewrites (left as it is)."""


def _owner(value: ir.Value, name: str) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.OpView | ir.Operation) and owner.operation.name == name:
        return owner.operation
    return None


def _const(value: ir.Value) -> int | None:
    op = _owner(value, "arith.constant")
    if op is None:
        return None
    attr = cast(op.attributes["value"], ir.IntegerAttr)
    return None if attr is None else ir.IntegerAttr(attr).value


def _slot(index: ir.Value, iv: ir.Value) -> tuple[int, int] | None:
    """``(offset, count)`` when ``index`` is ``(iv + offset) % count`` (``arith.remsi``
    of the induction variable, or of it plus a non-negative constant)."""
    rem = _owner(index, "arith.remsi")
    if rem is None:
        return None
    count = _const(rem.operands[1])
    base = rem.operands[0]
    if base == iv:
        offset = 0
    else:
        add = _owner(base, "arith.addi")
        if add is None:
            return None
        x, y = add.operands
        offset = _const(y) if x == iv else _const(x) if y == iv else None
    # Equivalent mutant: a count of 1 taken as a slot makes every two slots equal
    # ((o1 - o2) % 1 == 0), so `_disjoint` says False as it does for no slot.
    if count is None or count <= 0 or offset is None or offset < 0:
        return None
    return offset, count


def _disjoint(dest: ir.Value, read: ir.Value, iv: ir.Value) -> bool:
    """Whether a copy into ``dest`` and an MMA reading ``read`` never touch the
    same buffer in one iteration: other allocations, or slots
    ``(iv + o1) % n`` and ``(iv + o2) % n`` with ``o1 != o2 (mod n)``."""
    rd, pd = buffer_root(dest)
    rr, pr = buffer_root(read)
    if rd != rr:
        return True
    if len(pd) != 1 or len(pr) != 1:
        return False
    a, b = _slot(pd[0], iv), _slot(pr[0], iv)
    return a is not None and b is not None and a[1] == b[1] and (a[0] - b[0]) % a[1] != 0


def _carried_result(
    mma: Any, term: ir.Operation, result_index: int, loop: Any
) -> list[ir.Operation]:
    """The ops that read the MMA's result, other than the yields that carry it
    to the next iteration.

    It is carried by the loop's yield at ``result_index``, either directly or
    through one ``scf.if`` of the loop body whose result there the loop yields
    (the other branch yielding another value: a persistent loop's epilogue
    stores the accumulator and restarts it at zero). Every other use is a
    read, which needs the MMA complete.
    """
    carried = 0
    reads: list[ir.Operation] = []
    for use in mma.result.uses:
        user = use.owner.operation
        if user == term:
            if use.operand_number != result_index:
                raise _NoMatch("the MMA's result is yielded in another position than its acc")
            carried += 1
        elif user.name == "scf.yield":
            branch = user.parent
            if branch.name != "scf.if" or branch.parent != loop.operation:
                raise _NoMatch("the MMA's result is yielded by an op other than a body scf.if")
            result = branch.results[use.operand_number]
            uses = list(result.uses)
            if (
                len(uses) != 1
                or uses[0].owner.operation != term
                or uses[0].operand_number != result_index
            ):
                raise _NoMatch("the scf.if carrying the MMA's result is not yielded as its acc")
            carried += 1
        else:
            reads.append(user)
    if carried != 1:
        raise _NoMatch(f"the MMA's result reaches the loop's yield on {carried} paths, not 1")
    return reads


@dataclass
class _Plan:
    mma: Any
    loads: tuple[Any, Any]
    wait: Any
    copies: list[ir.Operation]
    result_index: int
    reads: list[ir.Operation]
    """Ops (in the loop, after the MMA) that read its result: each gets a wait for 0."""


def _plan(loop: Any) -> _Plan:
    body = loop.regions[0].blocks[0]
    ops = [op.operation for op in body.operations]
    iv = body.arguments[0]
    lb, step = _const(loop.operation.operands[0]), _const(loop.operation.operands[2])
    if lb is None or lb < 0 or step is None or step <= 0:
        raise _NoMatch("the loop does not count up from a non-negative constant")
    mmas = [op for op in ops if op.name == WmmaOp.OPERATION_NAME]
    if len(mmas) != 1:
        raise _NoMatch(f"the loop body has {len(mmas)} tile.wmma, not 1")
    mma = mmas[0].opview
    acc = mma.c
    if not isinstance(acc, ir.BlockArgument) or acc.owner != body or acc.arg_number == 0:
        raise _NoMatch("the MMA does not accumulate into a loop-carried value")
    if len(list(acc.uses)) != 1:
        raise _NoMatch("the carried accumulator has other uses than the MMA")
    term = ops[-1]
    result_index = acc.arg_number - 1
    reads = _carried_result(mma, term, result_index, loop)
    loads = []
    for operand in (mma.a, mma.b):
        load = _owner(operand, "tile.local_load")
        if load is None or len(list(operand.uses)) != 1 or load.parent != loop.operation:
            raise _NoMatch("an MMA operand is not a single-use tile.local_load in the loop")
        loads.append(load.opview)
    at = ops.index(mma.operation)
    waits = [i for i, op in enumerate(ops) if op.name == AsyncTDMWaitOp.OPERATION_NAME]
    # Equivalent mutant: `>=` for `>`: the wait and the MMA are different ops of
    # `ops`, so their indices are never equal.
    if len(waits) != 1 or waits[0] > at:
        raise _NoMatch("the loop body has no single tile.async_tdm_wait before the MMA")
    wait = ops[waits[0]]
    copies = [op for op in ops[: waits[0]] if op.name in (COPY_OP, FUSED_OP)]
    if not copies or any(op.name in (COPY_OP, FUSED_OP) for op in ops[waits[0] :]):
        raise _NoMatch("the loop body does not issue its copies before the wait")
    num = ir.IntegerAttr(wait.attributes["num"]).value
    if num < len(copies):
        raise _NoMatch(f"the wait (num = {num}) completes copies issued in the same iteration")
    first = ops.index(copies[0])
    for op in ops[first:at]:  # ops after the MMA stay after the copies
        if op in copies or is_pure(op) or op.name in _STEPPED_OVER:
            continue
        raise _NoMatch(f"'{op.name}' after the copies may depend on their order")
    for copy in copies:
        dests = list(copy.opview.dests) if copy.name == FUSED_OP else [copy.opview.dest]
        for dest in dests:
            for load in loads:
                if not _disjoint(dest, load.src, iv):
                    raise _NoMatch("a copy may write a buffer the MMA of its iteration reads")
    return _Plan(mma, (loads[0], loads[1]), wait, copies, result_index, reads)


@dataclass(frozen=True)
class PipelineMmaPass(TilePass):
    """Issue each K step's MMA asynchronously and keep one in flight.

    In the K loop of a pipelined GEMM (copies of tile ``k+S-1`` issued, wait
    for tile ``k``, load it, ``tile.wmma``), the MMA of step ``k`` could run
    while step ``k+1`` is issued, but its shared operands must not be
    overwritten while it reads them. The pass rewrites the loop so that

    1. the copy wait comes first (its ``num`` lowered by the copies moved,
       so the same copies are complete as before);
    2. the MMA becomes ``tile.async_wmma`` on the shared buffers themselves
       (the ``tile.local_load`` s vanish), followed by
       ``tile.async_wmma_wait {num = 1}``, which retires the MMA of step
       ``k-1`` and leaves step ``k``'s in flight; the accumulator is carried
       through the wait;
    3. the copies of the iteration are issued after that wait, into the
       slot that step ``k-1`` read;

    and a ``tile.async_wmma_wait {num = 0}`` follows the loop. The MMA's
    result may also reach the loop's yield through one ``scf.if`` of the body
    (a persistent loop's epilogue: on a tile's last K step one branch stores
    the accumulator and yields zeros, the other carries the result on); any
    op that reads the result (the epilogue's convert) then gets a
    ``tile.async_wmma_wait {num = 0}`` of its own right before it, and ops
    after the MMA keep their place after the moved copies. A loop is
    rewritten only when it has one ``tile.wmma`` accumulating into a
    loop-carried value that it yields (directly or through that ``scf.if``),
    operands loaded by single-use
    ``tile.local_load`` s, one ``tile.async_tdm_wait`` before it that does not
    wait for the iteration's own copies, only pure ops, loads and the wait
    between the copies and the MMA, and every copy's destination
    provably another buffer than the MMA reads in that iteration: another
    allocation, or slot ``(k + o1) % n`` against ``(k + o2) % n`` with
    ``o1 != o2 (mod n)`` and ``k`` counting up from a non-negative constant.
    Other loops are left as they are. Running the pass twice changes nothing.

    Before (S = 2, copy and wait of tile k+1 simplified):

    ```mlir
    %r = scf.for %k = %c0 to %nk step %c1 iter_args(%acc = %zero) -> (!acc) : i32 {
      %s1 = arith.remsi %k1, %c2 : i32            // %k1 = %k + 1
      "tile.async_tdm_copy_global_to_local"(%da, %abuf[%s1]) ...
      "tile.async_tdm_copy_global_to_local"(%db, %bbuf[%s1]) ...
      "tile.async_tdm_wait"() {num = 2 : i32} : () -> ()
      %s = arith.remsi %k, %c2 : i32
      %a = "tile.local_load"(%abuf[%s]) ...
      %b = "tile.local_load"(%bbuf[%s]) ...
      %d = "tile.wmma"(%a, %b, %acc) ...
      scf.yield %d : !acc
    }
    ```

    After:

    ```mlir
    %r = scf.for %k = %c0 to %nk step %c1 iter_args(%acc = %zero) -> (!acc) : i32 {
      %s1 = arith.remsi %k1, %c2 : i32
      "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
      %s = arith.remsi %k, %c2 : i32
      %d = "tile.async_wmma"(%abuf[%s], %bbuf[%s], %acc) ...
      %w = "tile.async_wmma_wait"(%d) {num = 1 : i32} ...
      "tile.async_tdm_copy_global_to_local"(%da, %abuf[%s1]) ...
      "tile.async_tdm_copy_global_to_local"(%db, %bbuf[%s1]) ...
      scf.yield %w : !acc
    }
    %r0 = "tile.async_wmma_wait"(%r) {num = 0 : i32} ...
    ```
    """

    name: ClassVar[str] = "tile-pipeline-mma"

    def run(self, module: ir.Operation) -> None:
        loops: list[Any] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "scf.for":
                loops.append(op.opview)
            return ir.WalkResult.ADVANCE

        module.walk(visit, ir.WalkOrder.POST_ORDER)
        for loop in loops:
            try:
                plan = _plan(loop)
            except _NoMatch:
                continue
            self.rewrite(loop, plan)

    def rewrite(self, loop: Any, plan: _Plan) -> None:
        mma, wait = plan.mma, plan.wait
        loc = mma.location
        i32 = ir.IntegerType.get_signless(32, loc.context)
        k_width = ir.RankedTensorType(mma.a.type).encoding
        k_width = k_width.k_width() if isinstance(k_width, DotOperandAttr) else DEFAULT_K_WIDTH
        ip = ir.InsertionPoint(mma.operation)
        a, b = (load.src for load in plan.loads)
        started = AsyncWmmaOp(a, b, mma.c, mma.result.type, loc=loc, ip=ip)
        if k_width != DEFAULT_K_WIDTH:
            started.operation.attributes["k_width"] = ir.IntegerAttr.get(i32, k_width)
        if IMPRECISE_ACC in mma.operation.attributes:
            limit = mma.operation.attributes[IMPRECISE_ACC]
            started.operation.attributes[IMPRECISE_ACC] = limit
        waited = AsyncWmmaWaitOp(started.result, mma.result.type, loc=loc, ip=ip)
        waited.operation.attributes["num"] = ir.IntegerAttr.get(i32, IN_FLIGHT)
        mma.result.replace_all_uses_with(waited.result)
        for read in plan.reads:  # e.g. an epilogue's store: the MMA must be complete
            done = AsyncWmmaWaitOp(
                waited.result, mma.result.type, loc=read.location, ip=ir.InsertionPoint(read)
            )
            done.operation.attributes["num"] = ir.IntegerAttr.get(i32, 0)
            for i, operand in enumerate(read.operands):
                if operand == waited.result:
                    read.operands[i] = done.result
        mma.operation.erase()
        for load in plan.loads:
            load.operation.erase()
        after = waited.operation
        for copy in plan.copies:
            copy.move_after(after)
            after = copy
        num = ir.IntegerAttr(wait.attributes["num"]).value - len(plan.copies)
        wait.attributes["num"] = ir.IntegerAttr.get(i32, num)

        result = loop.operation.results[plan.result_index]
        final = AsyncWmmaWaitOp(
            result, result.type, loc=loop.location, ip=ir.InsertionPoint.after(loop.operation)
        )
        final.operation.attributes["num"] = ir.IntegerAttr.get(i32, 0)
        result.replace_all_uses_except(final.result, final.operation)


__all__ = ["PipelineMmaPass"]
