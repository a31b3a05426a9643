"""Barrier bookkeeping for cuda:90's TMA copies (an analysis of tile IR, no IR changes).

The tile dialect waits for copies by *count*: ``tile.async_tdm_wait {num}``
returns once at most ``num`` of the copies issued so far are in flight
(``cp.async.wait_group`` and TDM's counter work this way). A TMA copy instead
signals an mbarrier when its bytes have landed, and a wait names a barrier
and a phase parity. The lowering keeps the tile semantics exactly by giving
the copies of a function a ring of ``R`` single-arrival barriers: copy number
``g`` (issue order, counted at run time) arrives on barrier ``g % R`` in
phase ``g // R``, and a wait with ``num`` waits for the barriers of copies
``issued - W .. issued - num - 1`` (those with ``g >= 0``), where ``W`` bounds
the copies not yet waited for when the wait is reached.

Why this is exact: at a wait, every copy below ``issued - W`` has been
waited for already, so waiting for the rest makes every copy below
``issued - num`` complete, which is the tile rule. Re-waiting a completed
copy is free, and its barrier is never reused before the wait (copy
``g + R`` issues only once ``g`` is waited for, as ``R`` bounds the copies in
flight), so the parity test cannot confuse two phases. A predicated-off copy
still arrives (without bytes), so every copy completes one phase.

This module computes, per function, the static part: ``W`` for every wait,
``R``, and how the count ``g`` reaches every copy. A loop whose body issues
copies directly (and waits, else the copies in flight are not bounded) is
*affine*: the count at an iteration's start is ``copies before the loop +
iteration * per-iteration``. A loop, ``scf.while`` or ``scf.if`` with copies
in a nested region (the K loop of a GEMM body inside a persistent tile loop,
a work-stealing ``scf.while``, the data-parallel guard) *carries* the count:
the lowering threads it through the op as one more iteration argument or
result, so the count stays exact whatever the inner trip counts, and the
barriers' phases carry across outer iterations (nothing is re-initialised
per tile: re-initialising a barrier needs every thread past its last wait,
a CTA barrier per tile, while the carried count costs one register). The
windows are found by the same simulation through every nesting level (a
fixpoint per loop, the larger of both branches of an ``scf.if``). Anything
else (copies under other region ops, calls, fused copies) is refused with
the op to blame, and the lowering then keeps ``cp.async`` (or reports the
refusal when TMA was asked for).

A descriptor made inside a loop or branch (``tile.make_tensor_descriptor``
in a region op: a per-group descriptor of a grouped GEMM, made in the
group loop)
is made again on every pass, and Triton gives each
``tt.make_tensor_descriptor`` one 128-byte tensormap per program, which
every pass rewrites in place (``tensormap.cp_fenceproxy``, then
``fence.proxy.tensormap::generic.acquire``). The tile dialect's descriptors
are values, so a copy of the previous pass still in flight must read the
previous value: the lowering first waits for every counted copy not yet
waited for (``W`` before the make, recorded in ``remakes``; nothing when
``W`` is 0, as in a GEMM body that waits for all its copies before the next
tile), and the walk goes on from 0 copies in flight. Waiting for all, not
only this descriptor's copies, is what the count can express; it is exact
and costs nothing where the body already drained.

Barrier-tracked copies (``tile.async_tdm_copy_global_to_local`` with an
mbarrier operand) are not part of the count: the tile dialect completes
them only by the ``tile.barrier_wait`` on their barrier, never by
``tile.async_tdm_wait`` (the model's rule too), so they take no slot in the
ring, move no window, and lower as TMA copies on their own barrier (see
:mod:`gemm_opt.lowering.convert_barrier_ops`). Counting them would make a
wait wait for copies it does not complete, and their bytes would then be
expected on two barriers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gemm_opt.core.ext_compat import cast, ir
from gemm_opt.dialect.tile import (
    AsyncTDMWaitOp,
    MakeTensorDescriptorOp,
)
from gemm_opt.dialect.warp_specialize import WarpSpecializeOp
from gemm_opt.passes.common import COPY_OP, FUSED_OP, descriptor_root

WAIT_OP = AsyncTDMWaitOp.OPERATION_NAME
MAKE_OP = MakeTensorDescriptorOp.OPERATION_NAME
WS_OP = WarpSpecializeOp.OPERATION_NAME
MAX_LOOP_IN_FLIGHT = 256
"""The most counted copies a loop's head may find in flight (the barriers of the
ring, each initialised one by one). The head's bound grows by at least one per
simulated iteration until it settles, so this also bounds the simulation."""


class TmaRefusal(Exception):
    """The module's copies cannot become barrier-tracked TMA copies (why, at ``op``)."""

    def __init__(self, op: ir.Operation, message: str) -> None:
        super().__init__(message)
        self.op = op


@dataclass
class FunctionPlan:
    """The barrier ring of one function."""

    ring: int = 0
    """``R``: barriers in the ring (the most copies ever in flight)."""
    windows: dict[ir.Operation, int] = field(default_factory=dict)
    """Wait (or ``func.return``, which waits for all) -> ``W`` before it."""
    loops: dict[ir.Operation, int] = field(default_factory=dict)
    """Affine ``scf.for`` -> copies per iteration."""
    carried: set[ir.Operation] = field(default_factory=set)
    """``scf.for``, ``scf.while`` and ``scf.if`` ops that carry the count (copies nested)."""
    remakes: dict[ir.Operation, int] = field(default_factory=dict)
    """``tile.make_tensor_descriptor`` inside a region op (made again on every
    pass) whose copies are counted -> ``W`` before it: the copies to drain
    before its tensormap is rewritten (see :func:`plan_tma`)."""


@dataclass
class TmaPlan:
    functions: dict[ir.Operation, FunctionPlan] = field(default_factory=dict)
    copies: list[ir.Operation] = field(default_factory=list)


def _counted(op: ir.Operation) -> bool:
    """Whether ``op`` is a copy the count tracks or a counted wait (a
    barrier-tracked copy is neither)."""
    if op.name == COPY_OP:
        return op.opview.barrier is None
    return op.name in (FUSED_OP, WAIT_OP)


def _has_copy_ops(op: ir.Operation) -> bool:
    found = False

    def visit(inner: ir.Operation) -> ir.WalkResult:
        nonlocal found
        if _counted(inner):
            found = True
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return found


def _root(desc: ir.Value) -> ir.Operation | None:
    """The op that made ``desc`` (through its updates), if an op did."""
    owner = descriptor_root(desc)[0].owner
    return owner.operation if isinstance(owner, ir.OpView | ir.Operation) else None


def _copied_makes(fn: ir.Operation) -> set[ir.Operation]:
    """The ``tile.make_tensor_descriptor`` ops whose descriptors counted copies use."""
    makes: set[ir.Operation] = set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == COPY_OP and _counted(op):
            root = _root(op.opview.desc)
            if root is not None and root.name == MAKE_OP:
                makes.add(root)
        return ir.WalkResult.ADVANCE

    fn.walk(visit)
    return makes


class _Walk:
    def __init__(
        self, plan: FunctionPlan, copies: list[ir.Operation], makes: set[ir.Operation]
    ) -> None:
        self.plan = plan
        self.copies = copies
        self.makes = makes

    def ops(self, block: ir.Block, bound: int, nested: bool = False) -> int:
        """Simulate ``block`` from ``bound`` copies not waited for; the bound after
        it (``nested``: the block is inside a region op, so it may run again)."""
        for view in block.operations:
            op = view.operation
            name = op.name
            if name == MAKE_OP and nested and op in self.makes:
                self.plan.remakes[op] = max(self.plan.remakes.get(op, 0), bound)
                bound = 0  # the lowering drains the copies in flight first
            elif name == COPY_OP:
                if view.barrier is not None:
                    continue  # completed by its barrier's wait, not counted
                bound += 1
                self.plan.ring = max(self.plan.ring, bound)
                if op not in self.copies:
                    self.copies.append(op)
            elif name == FUSED_OP:
                raise TmaRefusal(
                    op, "a fused copy has no TMA form (a TMA copy moves one descriptor's block)"
                )
            elif name == WAIT_OP:
                self.plan.windows[op] = max(self.plan.windows.get(op, 0), bound)
                bound = min(bound, ir.IntegerAttr(op.attributes["num"]).value)
            elif name == "func.return":
                self.plan.windows[op] = max(self.plan.windows.get(op, 0), bound)
                bound = 0  # Equivalent mutant: 0->1; a return ends the block, its bound is unread.
            elif name == "func.call":
                raise TmaRefusal(op, "calls in a function with TMA copies are not supported")
            elif not op.regions or not _has_copy_ops(op):
                continue
            elif name == "scf.for":
                bound = self.loop(op, bound)
            elif name == "scf.while":
                bound = self.while_loop(op, bound)
            elif name == WS_OP:
                self.partitions(op, bound)
            elif name == "scf.if":
                self.plan.carried.add(op)
                ends = [self.ops(r.blocks[0], bound, True) for r in op.regions if len(r.blocks)]
                bound = max([*ends, bound] if len(ends) < 2 else ends)
            else:
                raise TmaRefusal(
                    op,
                    f"TMA copies and waits must be in the function, scf.for, scf.while or "
                    f"scf.if, not inside '{name}' (their count would not be tracked)",
                )
        return bound

    def partitions(self, op: ir.Operation, bound: int) -> None:
        """A ``tile.warp_specialize``: its partitions may hold counted waits (a
        consumer retiring its TMA stores, which have their own counter) but no
        counted copies, and no copies of the function may be in flight when
        they start: a partition's copies are tracked by the barriers its
        partners wait on (barrier-tracked copies), which is what the ring
        cannot follow across concurrent partitions. Their waits wait for no
        copy of the ring (window 0)."""
        if bound:
            raise TmaRefusal(
                op,
                f"{bound} counted TMA copies may still be in flight when the partitions "
                "start; wait for them (tile.async_tdm_wait {num = 0}) before it",
            )

        counted: list[ir.Operation] = []

        def visit(inner: ir.Operation) -> ir.WalkResult:
            if inner.name == WAIT_OP:
                self.plan.windows[inner] = 0
            elif _counted(inner):
                counted.append(inner)  # raised below: the bindings wrap a callback's exception
                return ir.WalkResult.INTERRUPT
            return ir.WalkResult.ADVANCE

        op.walk(visit)  # the tile.warp_specialize itself is neither a wait nor a copy
        if counted:
            raise TmaRefusal(
                counted[0],
                "counted TMA copies inside a 'tile.warp_specialize' partition are not "
                "supported (their count would not be tracked across the partitions): "
                "track them with an mbarrier (the copy's barrier operand)",
            )

    def fixpoint(self, op: ir.Operation, bound: int, step) -> int:
        """The bound at the loop's head: grows monotonically up to a fixpoint
        (``step`` simulates one iteration); also the bound after the loop,
        which may run zero times."""
        entry = bound
        while True:
            end = max(bound, step(entry))
            if end == entry:
                return entry
            if end > MAX_LOOP_IN_FLIGHT:
                raise TmaRefusal(
                    op,
                    "the copies in flight across iterations of this loop are not bounded "
                    f"(or exceed {MAX_LOOP_IN_FLIGHT})",
                )
            entry = end

    def loop(self, op: ir.Operation, bound: int) -> int:
        body = op.regions[0].blocks[0]
        if cast(body.arguments[0].type, ir.IntegerType) is None or (
            ir.IntegerType(body.arguments[0].type).width != 32
        ):
            raise TmaRefusal(op, "a loop issuing TMA copies must count with i32")
        views = list(body.operations)
        nested = any(
            v.operation.regions and _has_copy_ops(v.operation)
            for v in views
            if v.operation.name not in (COPY_OP, FUSED_OP, WAIT_OP)
        )
        if nested:
            self.plan.carried.add(op)
        else:
            per_iter = sum(
                1 for v in views if v.operation.name == COPY_OP and _counted(v.operation)
            )
            if per_iter and not any(v.operation.name == WAIT_OP for v in views):
                raise TmaRefusal(
                    op,
                    "a loop issuing copies must also wait in its body (else copies in flight grow)",
                )
            self.plan.loops[op] = per_iter
        return self.fixpoint(op, bound, lambda entry: self.ops(body, entry, True))

    def while_loop(self, op: ir.Operation, bound: int) -> int:
        self.plan.carried.add(op)
        before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        # The condition runs once more than the body: the bound after the loop is
        # the one after ``before``, from the head's fixpoint.
        head = self.fixpoint(
            op, bound, lambda entry: self.ops(after, self.ops(before, entry, True), True)
        )
        return self.ops(before, head, True)


def plan_tma(module: ir.Operation) -> TmaPlan:
    """The TMA plan of every function of ``module`` with copies; raises :class:`TmaRefusal`."""
    plan = TmaPlan()
    for view in module.regions[0].blocks[0].operations:
        fn = view.operation
        if fn.name != "func.func" or not _has_copy_ops(fn):
            continue
        blocks = list(fn.regions[0].blocks)
        fplan = FunctionPlan()
        _Walk(fplan, plan.copies, _copied_makes(fn)).ops(blocks[0], 0)
        fplan.ring = max(fplan.ring, 1)
        plan.functions[fn] = fplan
    return plan


__all__ = ["FunctionPlan", "TmaPlan", "TmaRefusal", "plan_tma"]
