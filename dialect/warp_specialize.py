"""Warp specialization in the ``tile`` dialect: partitions of one program that
run different code on disjoint warps, as Gluon's ``gl.warp_specialize`` and
TritonGPU's ``ttg.warp_specialize`` have it.

A Hopper-class GEMM splits roles: one producer warp fills a ring of shared
buffers with barrier-tracked copies while consumer warpgroups wait on the
barriers and issue the MMAs. The roles synchronise only through shared-memory
barriers, so the hardware overlaps them (the producer loads the next tile
while the consumers run the epilogue).

```mlir
%r = "tile.warp_specialize"(%bufs, %ready, %empty) ({
  // default partition: the function's own warps (tile.num_warps)
  ...
  "tile.warp_yield"(%acc) {operandSegmentSizes = array<i32: 1, 0, 0, 0>}
      : (tensor<64x64xf32, #acc>) -> ()
}, {
  "tile.warp_partition"() ({
  ^bb0(%b: !ring, %rdy: !tile.mbarrier_ring<2 : i32>, %emp: !tile.mbarrier_ring<2 : i32>):
    ...  // a worker of num_warps warps: sees only its block arguments
    "tile.warp_return"() : () -> ()
  }) {num_warps = 1 : i32, num_regs = 24 : i32} : () -> ()
  "tile.warp_partitions_end"() : () -> ()
}) {operandSegmentSizes = array<i32: 1, 1, 1, 0, ..., 0>,  // 24 entries
    resultSegmentSizes = array<i32: 1, 0, 0, 0>}
  : (!ring, !tile.mbarrier_ring<2 : i32>, !tile.mbarrier_ring<2 : i32>) -> tensor<64x64xf32, #acc>
```

Captures, results and yielded values are up to :data:`MAX_CAPTURES` (24) and
:data:`MAX_RESULTS` (4) optional operands/results, one each, hence the segment
attributes (an entry of 1 per value present): the dialect is defined through
IRDL, which binds every element of one variadic group to a single type, and
captures of one op have many types.

The operands are the values the workers capture; every worker's block takes
all of them, in order (Triton's form: a worker ignores those it does not
use). The default partition runs on the function's ``tile.num_warps`` warps,
sees the enclosing values and yields the op's results. Workers are isolated
from above and capture no register tensors (a register tensor lives in the
registers of the warps that made it, which a worker does not own): scalars,
pointers, shared buffers, barriers and descriptors only. Register layouts in
a worker are for its own ``num_warps`` (see :meth:`TileOp.num_warps`).
``num_regs`` asks the hardware to set the worker's registers per thread
(``setmaxnreg`` on cuda:90; a multiple of 8 from 24 to 256).

The order between partitions is the barriers': the executable model
(:mod:`gemm_opt.model.warp_specialize`) runs the partitions as concurrent
agents and reports a deadlock or a shared-memory race between them; the
hand-off is :mod:`gemm_opt.lowering.convert_warp_specialize`.
"""

from typing import Any

from gemm_opt.core.contract import NUM_WARPS
from gemm_opt.core.ext_compat import cast, ext, ir
from gemm_opt.dialect.tile import (
    PARTITION_NUM_WARPS,
    WARP_PARTITION_OP,
    TileOp,
    VerifyError,
    check_parent,
    enclosing_int_attr,
    enclosing_op,
    value_name,
)

#: ``setmaxnreg``'s range of registers per thread (a multiple of 8).
MIN_REGS, MAX_REGS = 24, 256


#: Values one ``tile.warp_specialize`` captures, and results it returns.
MAX_CAPTURES, MAX_RESULTS = 24, 4


def _optional(prefix: str, n: int, kind: Any) -> dict[str, Any]:
    """Annotations of ``n`` optional operands or results (``prefix0`` ...)."""
    return {f"{prefix}{i}": kind[Any] | None for i in range(n)}


def _single_block(region: ir.Region, what: str) -> ir.Block:
    blocks = list(region.blocks)
    if len(blocks) != 1:
        raise VerifyError(f"the {what} region must have one block, got {len(blocks)}")
    return blocks[0]


class WarpSpecializeOp(TileOp, name="warp_specialize"):
    """Run a default partition and worker partitions concurrently (see the module doc).

    Rules: the ``default`` region is one block without arguments ending in
    ``tile.warp_yield`` of values typed as the op's results; the
    ``partitions`` region is one block of ``tile.warp_partition`` ops (at
    least one) ending in ``tile.warp_partitions_end``; operands are no
    register tensors; no ``tile.warp_specialize`` nested in another; the
    function's warps plus the workers' fit the target's workgroup.
    """

    # (Captures and results are optional fields, not one variadic group each:
    # IRDL binds every element of a variadic group to one type.)
    ATTRS = ("resultSegmentSizes",)
    __annotations__ = {
        **_optional("c", MAX_CAPTURES, ext.Operand),
        **_optional("r", MAX_RESULTS, ext.Result),
        "default": ir.Region,
        "partitions": ir.Region,
    }
    locals().update(dict.fromkeys(_optional("c", MAX_CAPTURES, ext.Operand)))
    locals().update(dict.fromkeys(_optional("r", MAX_RESULTS, ext.Result)))

    def verify(self) -> None:
        op = self.operation
        if enclosing_op(op.parent, self.OPERATION_NAME) is not None:
            raise VerifyError(
                "is nested in another 'tile.warp_specialize'; partitions cannot be "
                "specialized again (Triton has no nested warp specialization)"
            )
        for i, v in enumerate(op.operands):
            if cast(v.type, ir.RankedTensorType) is not None:
                raise VerifyError(
                    f"captures {value_name(v)} (operand {i}) of register tensor type {v.type}; "
                    "worker partitions capture scalars, pointers, shared buffers, barriers "
                    "and descriptors only (store a tensor to a shared buffer and pass that)"
                )
        block = _single_block(op.regions[0], "default")
        if len(block.arguments):
            raise VerifyError("the default region takes no block arguments")
        ops = list(block.operations)
        if not ops or ops[-1].operation.name != WarpYieldOp.OPERATION_NAME:
            raise VerifyError("the default region must end with 'tile.warp_yield'")
        got = [str(v.type) for v in ops[-1].operation.operands]
        want = [str(r.type) for r in op.results]
        if got != want:
            raise VerifyError(
                f"the default region yields ({', '.join(got)}) but the op returns "
                f"({', '.join(want)})"
            )
        workers = self.workers()
        self._check_warps(workers)

    def workers(self) -> list[ir.Operation]:
        """The ``tile.warp_partition`` ops, in order (checked)."""
        block = _single_block(self.operation.regions[1], "partitions")
        ops = [o.operation for o in block.operations]
        if not ops or ops[-1].name != PartitionsEndOp.OPERATION_NAME:
            raise VerifyError("the partitions region must end with 'tile.warp_partitions_end'")
        workers = ops[:-1]
        if not workers:
            raise VerifyError("needs at least one 'tile.warp_partition'")
        for w in workers:
            if w.name != WarpPartitionOp.OPERATION_NAME:
                raise VerifyError(
                    f"the partitions region holds only 'tile.warp_partition' ops, got '{w.name}'"
                )
        return workers

    def _check_warps(self, workers: list[ir.Operation]) -> None:
        own = enclosing_int_attr(self.operation, NUM_WARPS)
        if own is None:
            return
        try:
            counts = [w.opview.warps() for w in workers]
        except VerifyError:
            return  # the partition reports its own count
        total = own + sum(counts)
        for t in self.targets():
            limit = t.max_threads_per_block // t.warp_size
            if total > limit:
                raise VerifyError(
                    f"needs {total} warps ({NUM_WARPS} = {own} for the default partition + "
                    f"{' + '.join(map(str, counts))} for the workers), but {t.name} launches "
                    f"at most {limit} per workgroup"
                )


class WarpYieldOp(TileOp, name="warp_yield", traits=[ir.IsTerminatorTrait]):
    """End the default partition with the ``tile.warp_specialize`` results.

    ```mlir
    "tile.warp_yield"(%acc) {operandSegmentSizes = array<i32: 1, 0, 0, 0>}
      : (tensor<64x64xf32, #acc>) -> ()
    ```
    Rules: the terminator of a ``tile.warp_specialize``'s default region.
    """

    __annotations__ = _optional("v", MAX_RESULTS, ext.Operand)
    locals().update(dict.fromkeys(__annotations__))

    def verify(self) -> None:
        what = "end a 'tile.warp_specialize' default region"
        check_parent(self.operation, WarpSpecializeOp.OPERATION_NAME, what)


class WarpPartitionOp(TileOp, name=WARP_PARTITION_OP.split(".", 1)[1]):
    """A worker partition: ``num_warps`` warps running its region.

    Rules: in a ``tile.warp_specialize``'s partitions region; ``num_warps`` a
    power of two >= 1; ``num_regs`` (optional) a multiple of 8 from 24 to
    256; one block taking one argument per captured operand, of its type,
    ending in ``tile.warp_return``; isolated from above (every value it uses
    is defined in it).
    """

    ATTRS = (PARTITION_NUM_WARPS, "num_regs")
    body: ir.Region

    def warps(self) -> int:
        """The partition's warps (checked)."""
        n = self.int_attr(PARTITION_NUM_WARPS, required=True)
        if n is None or n < 1 or n & (n - 1):
            raise VerifyError(f"'num_warps' must be a power of two >= 1, got {n}")
        return n

    def regs(self) -> int | None:
        """The requested registers per thread, if any (checked)."""
        n = self.int_attr("num_regs")
        if n is not None and (not MIN_REGS <= n <= MAX_REGS or n % 8):
            raise VerifyError(
                f"'num_regs' must be a multiple of 8 from {MIN_REGS} to {MAX_REGS} "
                f"(setmaxnreg's range), got {n}"
            )
        return n

    def verify(self) -> None:
        op = self.operation
        what = "be in a 'tile.warp_specialize' partitions region"
        holder = check_parent(op, WarpSpecializeOp.OPERATION_NAME, what)
        self.warps()
        self.regs()
        block = _single_block(op.regions[0], "partition")
        captures = list(holder.operands)
        args = list(block.arguments)
        if len(args) != len(captures):
            raise VerifyError(
                f"the block takes {len(args)} arguments but the 'tile.warp_specialize' "
                f"captures {len(captures)} values (one argument per captured value)"
            )
        # Equivalent mutant: strict=False; the lengths are compared just above.
        for i, (a, c) in enumerate(zip(args, captures, strict=True)):
            if a.type != c.type:
                raise VerifyError(
                    f"block argument {i} has type {a.type} but the captured value has {c.type}"
                )
        ops = list(block.operations)
        if not ops or ops[-1].operation.name != WarpReturnOp.OPERATION_NAME:
            raise VerifyError("the partition must end with 'tile.warp_return'")
        self._check_isolated()

    def _check_isolated(self) -> None:
        op = self.operation
        outside: list[tuple[ir.Value, str]] = []

        def visit(inner: ir.Operation) -> ir.WalkResult:
            for v in inner.operands:
                owner = v.owner
                if isinstance(owner, ir.Block):
                    owner = owner.owner
                holder = enclosing_op(owner, op.name)
                if holder is None or holder != op:
                    outside.append((v, inner.name))
                    return ir.WalkResult.INTERRUPT
            return ir.WalkResult.ADVANCE

        op.walk(visit, ir.WalkOrder.PRE_ORDER)
        if outside:
            v, user = outside[0]
            raise VerifyError(
                f"uses {value_name(v)}, defined outside the partition ('{user}' uses it); "
                "worker partitions are isolated from above: pass it as an operand of "
                "the 'tile.warp_specialize' and use the block argument"
            )


class WarpReturnOp(TileOp, name="warp_return", traits=[ir.IsTerminatorTrait]):
    """End a worker partition (it returns nothing).

    ```mlir
    "tile.warp_return"() : () -> ()
    ```
    """

    def verify(self) -> None:
        check_parent(self.operation, WarpPartitionOp.OPERATION_NAME, "end a 'tile.warp_partition'")


class PartitionsEndOp(TileOp, name="warp_partitions_end", traits=[ir.IsTerminatorTrait]):
    """End a ``tile.warp_specialize``'s partitions region.

    ```mlir
    "tile.warp_partitions_end"() : () -> ()
    ```
    """

    def verify(self) -> None:
        what = "end a 'tile.warp_specialize' partitions region"
        check_parent(self.operation, WarpSpecializeOp.OPERATION_NAME, what)


__all__ = [
    "MAX_REGS",
    "MIN_REGS",
    "PartitionsEndOp",
    "WarpPartitionOp",
    "WarpReturnOp",
    "WarpSpecializeOp",
    "WarpYieldOp",
]
