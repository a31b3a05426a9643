"""The interpreter core: a function compiled into closures, and the programs that run them.

:class:`Compiler` turns each op of a block into the closure its family's
builder returns (the table it reads is :data:`gemm_opt.model.interpreter.OPS`);
:class:`Program` is one program's state while it runs (values per warp, the
warps' in-flight TDM instructions, in-flight MMAs, its place in the grid's
happens-before order and, inside a ``tile.warp_specialize``, its partition).
The helpers here are the rules every family shares: warp-uniform values,
merging per-warp values after divergent control flow, and ops that only the
whole program executes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gemm_opt.core.ext_compat import ir
from gemm_opt.model.concurrency import Grid, ProgramClock
from gemm_opt.model.errors import ModelError
from gemm_opt.model.registry import Builder
from gemm_opt.model.values import (
    Descriptor,
    Elem,
    InFlight,
    Pointer,
    SharedView,
    Stats,
    tensor_type,
    value_elem,
)

#: One compiled op: runs it on a program for the warps whose mask entry is true.
Exec = Callable[["Program", np.ndarray], None]


@dataclass
class Block:
    """A compiled block: the slots of its arguments, one closure per op, and
    the slots its terminator yields."""

    arg_slots: list[int]
    instrs: list[Exec]
    term_slots: list[int]


def op_location(op: Any) -> str:
    """``file:line:col`` of an op (the location as printed when it has no file)."""
    loc = op.location
    try:
        return f"{loc.filename}:{loc.start_line}:{loc.start_col}"
    except Exception:
        return str(loc)


#: Terminators whose operands are a block's results (``tile.warp_yield``: the
#: default partition's; ``tile.warp_return``: a worker's end).
TERMINATORS = ("scf.yield", "scf.condition", "func.return", "tile.warp_yield", "tile.warp_return")


class Compiler:
    """Compiles blocks into closures, each op through its implementation in ``ops``."""

    def __init__(self, num_warps: int, ops: Mapping[str, Builder]) -> None:
        self.num_warps = num_warps
        self.ops = ops
        self.slots: dict[Any, int] = {}
        # Set by the builders of ops through which programs can wait on each
        # other (atomics): the function then needs the concurrent scheduler.
        self.concurrent = False

    def slot(self, value: ir.Value) -> int:
        s = self.slots.get(value)
        if s is None:
            s = self.slots[value] = len(self.slots)
        return s

    def block(self, block: ir.Block) -> Block:
        args = [self.slot(a) for a in block.arguments]
        instrs: list[Exec] = []
        term: list[int] = []
        for op in block.operations:
            name = op.operation.name
            if name in TERMINATORS:
                term = [self.slot(v) for v in op.operation.operands]
                continue
            builder = self.ops.get(name)
            if builder is None:
                raise ModelError(
                    f"unsupported op '{name}' at {op_location(op.operation)}: the interpreter "
                    "does not model it"
                )
            instrs.append(builder(self, op))
        return Block(args, instrs, term)


def op_where(op: Any) -> str:
    return f"'{op.operation.name}' at {op_location(op.operation)}"


def result_slot(c: Compiler, op: Any, i: int = 0) -> int:
    return c.slot(op.operation.results[i])


def operand_slots(c: Compiler, op: Any) -> list[int]:
    return [c.slot(v) for v in op.operation.operands]


# ---------------------------------------------------------------------------
# Program state
# ---------------------------------------------------------------------------


class Program:
    def __init__(
        self,
        num_slots: int,
        num_warps: int,
        pid: tuple[int, int, int],
        run: Run,
        clock: ProgramClock | None = None,
    ) -> None:
        self.env: list[Any] = [None] * num_slots
        self.W = num_warps
        self.pid = pid
        self.run = run
        self.queues: list[deque[InFlight]] = [deque() for _ in range(num_warps)]
        # In-flight tile.async_wmma, oldest first (gemm_opt.model.mma.AsyncMma).
        self.mmas: deque[Any] = deque()
        # In-flight instructions of barrier-tracked copies (gemm_opt.model.barriers):
        # a barrier wait completes them, tile.async_tdm_wait does not count them.
        self.tracked: list[InFlight] = []
        # The program's place in the grid's happens-before order (see concurrency).
        # Equivalent mutant: 0 -> 1; the package always passes a clock (the default
        # serves a program built alone, which no memory model compares).
        self.clock = clock if clock is not None else ProgramClock(0, pid)
        # The partition this program runs as inside a tile.warp_specialize
        # (gemm_opt.model.warp_specialize.Agent; None outside one).
        self.agent: Any = None

    def partners(self) -> list[Program]:
        """This program and the other partitions of its running warp_specialize."""
        if self.agent is None:
            return [self]
        return [a.program for a in self.agent.sched.agents]

    def exec_block(self, block: Block, mask: np.ndarray) -> list[Any]:
        for fn in block.instrs:
            fn(self, mask)
        return [self.env[s] for s in block.term_slots]


@dataclass
class Run:
    stats: Stats
    check_uninitialized: bool
    grid: tuple[int, int, int] = (1, 1, 1)
    sync: Grid | None = None


def active_warps(mask: np.ndarray) -> list[int]:
    return [int(w) for w in np.flatnonzero(mask)]


def uniform(values: np.ndarray, mask: np.ndarray, what: str, where: str) -> Any:
    """The common value of ``values`` over the executing warps."""
    vals = values[mask] if mask.any() else values
    first = vals[0]
    if (vals != first).any():
        raise ModelError(
            f"{where}: {what} differs across warps ({values.tolist()}); this program-level "
            "operation needs a warp-uniform value"
        )
    return first


def uniform_rows(rows: np.ndarray, mask: np.ndarray, what: str, where: str) -> tuple:
    vals = rows[mask] if mask.any() else rows
    if (vals != vals[0]).any():
        raise ModelError(
            f"{where}: {what} differs across warps ({rows.tolist()}); this program-level "
            "operation needs a warp-uniform value"
        )
    return tuple(int(v) for v in vals[0])


def is_tensor_type(t: ir.Type) -> bool:
    return tensor_type(t) is not None


def select_per_warp(sel: np.ndarray, new: Any, old: Any, where: str) -> Any:
    """Per warp: ``new`` where ``sel`` holds, else ``old`` (per-warp values only)."""
    # Equivalent mutant: and -> or in the isinstance tests; new and old have one type
    # (the verifier of the yielding op), so both are of one kind.
    if isinstance(new, np.ndarray) and isinstance(old, np.ndarray):
        return np.where(sel, new, old)
    # Equivalent mutant: and -> or (as above).
    if isinstance(new, Descriptor) and isinstance(old, Descriptor):
        if new.base.array is not old.base.array:
            raise ModelError(f"{where}: warps hold descriptors of different tensors")
        col = sel[:, None]
        nb = new.bounds if new.bounds is not None else new.shape
        ob = old.bounds if old.bounds is not None else old.shape
        both_none = new.bounds is None and old.bounds is None
        return Descriptor(
            base=select_per_warp(sel, new.base, old.base, where),
            shape=np.where(col, new.shape, old.shape),
            strides=np.where(col, new.strides, old.strides),
            origin=np.where(col, new.origin, old.origin),
            bounds=None if both_none else np.where(col, nb, ob),
            pred=np.where(sel, new.pred, old.pred),
        )
    # Equivalent mutant: and -> or (as above).
    if isinstance(new, Pointer) and isinstance(old, Pointer):
        if new.array is not old.array:
            raise ModelError(f"{where}: warps hold pointers to different arrays")
        return Pointer(new.array, np.where(sel, new.offset, old.offset), new.name, new.elem)
    # Equivalent mutant: and -> or (as above).
    if isinstance(new, SharedView) and isinstance(old, SharedView):
        if (
            new.buffer is not old.buffer
            or new.prefix.shape != old.prefix.shape
            or new.perm != old.perm
        ):
            raise ModelError(f"{where}: warps hold views of different shared buffers")
        return SharedView(new.buffer, np.where(sel[:, None], new.prefix, old.prefix), new.perm)
    raise ModelError(f"{where}: cannot merge {type(new).__name__} values per warp")


def merge_region(
    sel: np.ndarray, outer: np.ndarray, new: Any, old: Any, tensor: bool, where: str
) -> Any:
    """The value after a region that only the warps in ``sel`` (of ``outer``) ran."""
    taken = sel & outer
    if not taken.any():
        return old
    if (taken == outer).all() or old is None:
        return new
    if not tensor:
        return select_per_warp(sel, new, old, where)
    if new is old or (
        new.shape == old.shape and np.array_equal(new, old, equal_nan=new.dtype.kind == "f")
    ):
        return new
    raise ModelError(
        f"{where}: warp-divergent control flow yields a tensor that differs between warps; "
        "tensors are program-level values, only per-warp scalars may diverge"
    )


def stack_slots(p: Program, slots: Sequence[int]) -> np.ndarray:
    if not slots:
        # Equivalent mutant: (p.W, 1). Only a rank-0 block access has no slots (a
        # descriptor's rank is at least 1), and it reads no column (block_indices
        # walks the block's dims).
        return np.zeros((p.W, 0), dtype=np.int64)
    return np.stack([p.env[s] for s in slots], axis=1).astype(np.int64)


def result_elem(c: Compiler, op: Any) -> tuple[Elem, bool]:
    elem, shape = value_elem(op.operation.results[0].type)
    if elem is None:
        raise ModelError(f"{op_where(op)}: unsupported result type {op.operation.results[0].type}")
    return elem, shape is not None


def operand_elem(op: Any, i: int = 0) -> Elem:
    elem, _ = value_elem(op.operation.operands[i].type)
    if elem is None:
        raise ModelError(
            f"{op_where(op)}: unsupported operand type {op.operation.operands[i].type}"
        )
    return elem


def program_level(mask: np.ndarray, where: str) -> bool:
    """Whether the program executes the op (all warps, or none)."""
    if not mask.any():
        return False
    if not mask.all():
        raise ModelError(
            f"{where}: barrier ops and TDM stores are the program's; under warp-divergent "
            "control flow they are not modelled"
        )
    return True


def pred_holds(p: Program, slot: int | None, mask: np.ndarray, where: str) -> bool:
    """Whether an optional ``pred`` operand (warp-uniform) holds; no operand: true."""
    return slot is None or bool(uniform(p.env[slot] != 0, mask, "the pred", where))


def optional_slot(c: Compiler, value: Any) -> int | None:
    """The slot of an optional operand (None when absent)."""
    return None if value is None else c.slot(value)


def partition_point(p: Program) -> None:
    """An interleaving point of the warp partition running ``p``, if any
    (:mod:`gemm_opt.model.warp_specialize`): another partition may run first."""
    if p.agent is not None:
        p.agent.sched.point(p.agent)


__all__ = [
    "TERMINATORS",
    "Block",
    "Compiler",
    "Exec",
    "Program",
    "Run",
    "active_warps",
    "is_tensor_type",
    "merge_region",
    "op_location",
    "op_where",
    "operand_elem",
    "operand_slots",
    "optional_slot",
    "partition_point",
    "pred_holds",
    "program_level",
    "result_elem",
    "result_slot",
    "select_per_warp",
    "stack_slots",
    "uniform",
    "uniform_rows",
]
