"""Executable per-warp model of tile IR: numpy, no GPU.

:func:`run_function` interprets one ``func.func`` of a parsed tile module for
every program of a grid; inside a program all ``tile.num_warps`` warps run in
lock-step. :func:`run_gemm` wraps it for the GEMM kernel signature
``(a, b, c: !tile.ptr, M, N, K: i32, lda, ldb, ldc: i64)``.

Values
------
* A scalar (integer, index or float) is a numpy array with one entry per warp,
  so ``tile.warp_id`` and everything computed from it may differ per warp.
  Integers are kept sign-extended in int64 ("canonical" form: an ``i1`` true
  is -1, as ``arith.extsi`` sees it); every integer op wraps its result to
  the result's width; unsigned ops reinterpret the low bits.
* A tensor is one numpy array per program. Register layouts do not change
  values, so ``tile.convert_layout`` is the identity. Element types: ``f16``
  is float16, ``f32`` float32, ``f64`` float64, integers int64 in registers,
  and ``bf16`` is float32 holding values rounded to bf16
  (:func:`bf16_round`, round to nearest even).
* ``tile.wmma`` computes ``a @ b + c`` in float64 (where products of 16-bit
  inputs are exact) and rounds the result once to float32: a deterministic
  model of fp32 accumulation that does not depend on the BLAS summation order.
* A ``!tile.ptr`` argument is a C-contiguous numpy array (``f16``: float16,
  ``bf16``: float32 holding bf16 values, ``f32``: float32, ``iN``: an N-bit
  integer array); the pointer is (flat view of the array, element offset).
  Stores write into the caller's array.
* A descriptor holds the base pointer, the tensor shape and strides, the
  block origin, optional bounds and a predicate, all per warp.
  ``update_tensor_descriptor`` adds its offsets to the origin, replaces the
  bounds when given, and ANDs its predicate into the descriptor's (a
  descriptor whose predicate is false stays a no-op for every descriptor
  derived from it).
* A shared buffer (``tile.local_alloc``) is one numpy array per program in
  logical (unswizzled) coordinates; ``tile.memdesc_index`` selects a slot.

TDM copies
----------
Every warp that executes a copy issues one TDM instruction (a fused copy is
one instruction too). The warp's tile comes from the copy's
``tile.warp_layout`` attribute (``tile.warp_layouts`` for a fused copy) when
a pass attached one, else from :func:`gemm_opt.core.tdm_layout.tdm_warp_layout`
for the op's ``warp_used_hint``. A warp writes data iff the descriptor's
predicate, the copy's ``pred`` operand and (unless the op carries
``tile.warp_predicated``, which says the predicate already includes the warp
mask) the layout's warp mask all hold; a fused copy picks, per warp, the first
member whose hint contains it, else the last member (see
:func:`gemm_opt.core.tdm_layout.select_fused_member`). An active warp reads its
tile with TDM's per-warp re-clamped zero fill
(:func:`gemm_opt.model.execute_tile`) when it issues (no op of the dialect
writes global memory asynchronously, so reading at issue is exact); inactive
warps still issue an instruction (it counts for waits) but write nothing.

Synchronization
---------------
Each warp has a FIFO of its in-flight TDM instructions. The shared-memory
writes of an instruction land only when the instruction completes:
``tile.async_tdm_wait {num = N}`` completes, for each warp executing it, all
but that warp's N most recent instructions. Because warps run in lock-step,
the writes completed by a wait are visible to every warp right after it; this
mirrors the barrier Triton inserts after the wait, so the model does not ask
the IR for explicit barriers. ``tile.local_load`` raises :class:`ModelError`
("read of shared memory still being written by an in-flight TDM copy ...")
when any warp's in-flight instruction still writes the region it reads: a
race detector for missing or too weak waits. A warp's copy that writes
elements another warp's in-flight copy writes with other values raises too
("write of shared memory still being written by another warp's ..."): the
model completes warps in id order at a wait, hardware in no defined order, so
such a program has no single result. Reading shared memory that no copy has
written raises too (disable with ``check_uninitialized=False``).
Copies still in flight at ``func.return`` are dropped and counted in
:attr:`Stats.in_flight_at_exit`.

Programs
--------
The programs of a grid share global memory. A function with atomics
(``tile.atomic_rmw``, ``tile.atomic_add_block``) runs ``num_resident``
programs at once, interleaved at atomics and global block accesses, in program
order (``seed=None``) or a seeded random order; a flag wait that can never end
is reported as a deadlock. Every run with more than one program checks that a
program reads or overwrites another's global data only after a release ->
acquire chain orders the accesses. See :mod:`gemm_opt.model.concurrency`.

An op the model does not know raises :class:`ModelError` naming the op and
its location when the function is compiled, before anything runs.

Control flow
------------
``scf.for``, ``scf.while`` and ``scf.if`` are executed under a per-warp
activity mask, so a branch or trip count that depends on ``tile.warp_id``
works: only the warps whose condition holds execute the region (and issue
copies or waits), and the scalar results are merged per warp. Program-level ops (tensor values,
``store_block``) need warp-uniform operands and raise :class:`ModelError`
otherwise.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gemm_opt.core.contract import NUM_WARPS, WARP_LAYOUT, WARP_LAYOUTS, WARP_PREDICATED
from gemm_opt.core.diagnostics import position_of
from gemm_opt.core.ext_compat import cast, ir
from gemm_opt.core.tdm_layout import (
    TdmWarpLayout,
    select_fused_member,
    tdm_dim_order,
    tdm_warp_layout,
)
from gemm_opt.core.warp_hint import WarpHintError, check_warp_used_hint, format_warps
from gemm_opt.dialect.tile import (
    AsyncTDMCopyGlobalToLocalOp,
    AsyncTDMFusedCopyGlobalToLocalOp,
    PtrType,
    SharedType,
    TdmWarpLayoutAttr,
    TensorDescType,
    VerifyError,
    enclosing_int_attr,
)
from gemm_opt.model.concurrency import (
    Grid,
    Inline,
    ProgramClock,
    SyncStats,
    Threaded,
    Waiting,
)
from gemm_opt.model.copy import execute_tile
from gemm_opt.model.errors import ModelError

# ---------------------------------------------------------------------------
# Element types
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Elem:
    """An element type: register dtype, memory (storage) dtype, integer width."""

    name: str
    is_int: bool
    width: int
    dtype: np.dtype
    storage: np.dtype
    bf16: bool = False


_INT_STORAGE = {1: np.bool_, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


def _elem(t: ir.Type) -> _Elem | None:
    """The element info of a scalar type (None for non-numeric types)."""
    it = cast(t, ir.IntegerType)
    if it is not None:
        w = ir.IntegerType(it).width
        storage = np.dtype(_INT_STORAGE.get(w, np.int64))
        return _Elem(f"i{w}", True, w, np.dtype(np.int64), storage)
    if cast(t, ir.IndexType) is not None:
        return _Elem("index", True, 64, np.dtype(np.int64), np.dtype(np.int64))
    if cast(t, ir.F16Type) is not None:
        return _Elem("f16", False, 16, np.dtype(np.float16), np.dtype(np.float16))
    if cast(t, ir.BF16Type) is not None:
        return _Elem("bf16", False, 16, np.dtype(np.float32), np.dtype(np.float32), True)
    if cast(t, ir.F32Type) is not None:
        return _Elem("f32", False, 32, np.dtype(np.float32), np.dtype(np.float32))
    if cast(t, ir.F64Type) is not None:
        return _Elem("f64", False, 64, np.dtype(np.float64), np.dtype(np.float64))
    return None


def _tensor_type(t: ir.Type) -> ir.RankedTensorType | None:
    rt = cast(t, ir.RankedTensorType)
    return None if rt is None else ir.RankedTensorType(rt)


def _value_elem(t: ir.Type) -> tuple[_Elem | None, tuple[int, ...] | None]:
    """(element info, tensor shape or None for a scalar) of a value type."""
    rt = _tensor_type(t)
    if rt is not None:
        return _elem(rt.element_type), tuple(rt.shape)
    return _elem(t), None


def bf16_round(x: Any) -> np.ndarray:
    """Round float32 values to bf16 (nearest even), returned as float32."""
    x = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    bits = x.view(np.uint32)
    lsb = (bits >> np.uint32(16)) & np.uint32(1)
    rounded = (bits + np.uint32(0x7FFF) + lsb) & np.uint32(0xFFFF0000)
    quiet_nan = (bits | np.uint32(0x00400000)) & np.uint32(0xFFFF0000)
    out = np.where(np.isnan(x), quiet_nan, rounded).astype(np.uint32)
    return out.view(np.float32).reshape(x.shape)


def _round_to(x: np.ndarray, elem: _Elem) -> np.ndarray:
    """Convert float data to ``elem``'s register dtype, rounding bf16."""
    out = np.asarray(x).astype(elem.dtype)
    return bf16_round(out) if elem.bf16 else out


def _wrap(x: Any, width: int) -> np.ndarray:
    """Sign-extend the low ``width`` bits of integers to canonical int64."""
    x = np.asarray(x)
    if x.dtype == np.uint64:
        x = x.view(np.int64)
    x = x.astype(np.int64, copy=False)
    if width >= 64:
        return x
    if width == 1:
        return -(x & 1)
    half = np.int64(1 << (width - 1))
    mask = np.int64((1 << width) - 1)
    return ((x + half) & mask) - half


def _unsigned(x: np.ndarray, width: int) -> np.ndarray:
    """The low ``width`` bits of canonical integers, as uint64."""
    u = np.ascontiguousarray(np.asarray(x, dtype=np.int64)).view(np.uint64)
    if width >= 64:
        return u
    return u & np.uint64((1 << width) - 1)


def _from_storage(data: np.ndarray, elem: _Elem) -> np.ndarray:
    if elem.is_int:
        return _wrap(data.astype(np.int64), elem.width)
    return np.array(data, dtype=elem.dtype)


def _to_storage(value: np.ndarray, elem: _Elem) -> np.ndarray:
    if elem.is_int:
        if elem.width == 1:
            return (np.asarray(value) & 1).astype(np.bool_)
        return np.asarray(value, dtype=np.int64).astype(elem.storage)
    return np.asarray(value).astype(elem.storage)


# ---------------------------------------------------------------------------
# Runtime values
# ---------------------------------------------------------------------------


@dataclass
class Pointer:
    """A global pointer: a flat view of the caller's array plus element offsets."""

    array: np.ndarray
    offset: np.ndarray
    name: str
    elem: _Elem


@dataclass
class Descriptor:
    """A TDM descriptor; every field has one row per warp."""

    base: Pointer
    shape: np.ndarray  # [W, rank]
    strides: np.ndarray  # [W, rank]
    origin: np.ndarray  # [W, rank]
    bounds: np.ndarray | None  # [W, rank] or None (the shape)
    pred: np.ndarray  # [W] bool


class SharedBuffer:
    """One ``tile.local_alloc`` of one program.

    ``pending`` counts the in-flight TDM writes covering each element,
    ``written`` says whether a completed copy ever wrote it.
    """

    def __init__(self, label: str, shape: tuple[int, ...], elem: _Elem) -> None:
        self.label = label
        self.elem = elem
        if elem.is_int:
            self.data = np.zeros(shape, dtype=elem.storage)
        else:
            self.data = np.full(shape, np.nan, dtype=elem.storage)
        self.pending = np.zeros(shape, dtype=np.int32)
        self.written = np.zeros(shape, dtype=np.bool_)
        #: In-flight ``tile.async_wmma`` reads covering each element.
        self.mma_reading = np.zeros(shape, dtype=np.int32)
        #: In-flight TDM stores reading each element (see :mod:`gemm_opt.model.barriers`).
        self.store_reading = np.zeros(shape, dtype=np.int32)


@dataclass
class SharedView:
    """A (sub)buffer: ``buffer[prefix[w]]`` for warp w (``tile.memdesc_index``),
    seen with its dims permuted by ``perm`` (``tile.memdesc_trans``: view dim
    ``i`` is dim ``perm[i]`` of the block; None: as it lies)."""

    buffer: SharedBuffer
    prefix: np.ndarray  # [W, k] leading indices
    perm: tuple[int, ...] | None = None

    def read(self, prefix: tuple) -> np.ndarray:
        """The storage of slot ``prefix`` as this view sees it (no copy)."""
        data = self.buffer.data[prefix]
        return data if self.perm is None else data.transpose(self.perm)

    def writable(self, where: str) -> None:
        """Copies and stores write blocks as they lie, never through a permuted view."""
        if self.perm is not None:
            raise ModelError(
                f"{where}: writes through a transposed view (tile.memdesc_trans) of the "
                f"{self.buffer.label}; write the block it views"
            )


@dataclass
class _InFlight:
    """One TDM instruction of one warp (writes nothing when inactive)."""

    op: str
    warp: int
    program: tuple[int, int, int]
    buffer: SharedBuffer | None = None
    index: tuple | None = None
    data: np.ndarray | None = None
    #: Called once the instruction has completed (barrier-tracked copies, stores).
    on_complete: Callable[[], None] | None = None

    def complete(self) -> None:
        if self.on_complete is not None:
            done, self.on_complete = self.on_complete, None
            self._land()
            done()
            return
        self._land()

    def _land(self) -> None:
        if self.buffer is None:  # an inactive warp's instruction writes nothing
            return
        assert self.index is not None  # set with the buffer
        self.buffer.data[self.index] = self.data
        self.buffer.pending[self.index] -= 1
        self.buffer.written[self.index] = True
        self.data = None


# ---------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CopyEvent:
    """What one warp did in one TDM instruction."""

    op: str
    program: tuple[int, int, int]
    warp: int
    member: int
    tensor: str
    buffer: str
    active: bool
    start: tuple[int, ...]
    tile: tuple[int, ...]
    elements: int


@dataclass
class Stats:
    """TDM statistics of a run, summed over programs unless filtered."""

    num_warps: int
    events: list[CopyEvent] = field(default_factory=list)
    max_in_flight: np.ndarray | None = None
    in_flight_at_exit: int = 0

    def __post_init__(self) -> None:
        if self.max_in_flight is None:
            self.max_in_flight = np.zeros(self.num_warps, dtype=np.int64)

    def _select(self, **filters: Any) -> list[CopyEvent]:
        out = self.events
        for key, want in filters.items():
            if want is not None:
                out = [e for e in out if getattr(e, key) == want]
        return out

    def instructions(self, program: tuple[int, int, int] | None = None) -> np.ndarray:
        """TDM instructions issued per warp (predicated-off ones included)."""
        counts = np.zeros(self.num_warps, dtype=np.int64)
        # A fused copy records one event per warp, like a single copy.
        for e in self._select(program=program):
            counts[e.warp] += 1
        return counts

    def active_instructions(self, program: tuple[int, int, int] | None = None) -> np.ndarray:
        """TDM instructions per warp that wrote data."""
        counts = np.zeros(self.num_warps, dtype=np.int64)
        for e in self._select(program=program):
            counts[e.warp] += e.active
        return counts

    def elements_written(
        self,
        tensor: str | None = None,
        buffer: str | None = None,
        program: tuple[int, int, int] | None = None,
    ) -> np.ndarray:
        """Shared elements written per warp (zero fill included)."""
        counts = np.zeros(self.num_warps, dtype=np.int64)
        for e in self._select(tensor=tensor, buffer=buffer, program=program):
            counts[e.warp] += e.elements
        return counts

    def writers(self, tensor: str | None = None) -> tuple[int, ...]:
        """Warps that wrote any element copied from ``tensor``."""
        return tuple(int(w) for w in np.flatnonzero(self.elements_written(tensor)))


@dataclass
class RunResult:
    """The outcome of :func:`run_function`.

    ``args`` maps argument names to the values passed (global arrays are
    updated in place); ``returns`` maps each program id to the per-warp values
    ``func.return`` produced; ``result["c"]`` is ``result.args["c"]``.
    """

    args: dict[str, Any]
    stats: Stats
    returns: dict[tuple[int, int, int], list[Any]]
    grid: tuple[int, int, int]
    sync: SyncStats | None = None

    @property
    def seed(self) -> int | None:
        """The interleaving seed of the run (None: program order)."""
        return None if self.sync is None else self.sync.seed

    def __getitem__(self, name: str) -> Any:
        return self.args[name]


# ---------------------------------------------------------------------------
# Compilation of a function into closures
# ---------------------------------------------------------------------------

Exec = Callable[["_Program", np.ndarray], None]


@dataclass
class _Block:
    arg_slots: list[int]
    instrs: list[Exec]
    term_slots: list[int]


def _location(op: Any) -> str:
    loc = op.location
    try:
        return f"{loc.filename}:{loc.start_line}:{loc.start_col}"
    except Exception:
        return str(loc)


#: Terminators whose operands are a block's results (``tile.warp_yield``: the
#: default partition's; ``tile.warp_return``: a worker's end).
_TERMINATORS = ("scf.yield", "scf.condition", "func.return", "tile.warp_yield", "tile.warp_return")


class _Compiler:
    def __init__(self, num_warps: int) -> None:
        self.num_warps = num_warps
        self.slots: dict[Any, int] = {}
        # Set by the builders of ops through which programs can wait on each
        # other (atomics): the function then needs the concurrent scheduler.
        self.concurrent = False

    def slot(self, value: ir.Value) -> int:
        s = self.slots.get(value)
        if s is None:
            s = self.slots[value] = len(self.slots)
        return s

    def block(self, block: ir.Block) -> _Block:
        args = [self.slot(a) for a in block.arguments]
        instrs: list[Exec] = []
        term: list[int] = []
        for op in block.operations:
            name = op.operation.name
            if name in _TERMINATORS:
                term = [self.slot(v) for v in op.operation.operands]
                continue
            builder = _BUILDERS.get(name)
            if builder is None:
                raise ModelError(
                    f"unsupported op '{name}' at {_location(op.operation)}: the interpreter "
                    "does not model it"
                )
            instrs.append(builder(self, op))
        return _Block(args, instrs, term)


def _where(op: Any) -> str:
    return f"'{op.operation.name}' at {_location(op.operation)}"


def _res(c: _Compiler, op: Any, i: int = 0) -> int:
    return c.slot(op.operation.results[i])


def _opnds(c: _Compiler, op: Any) -> list[int]:
    return [c.slot(v) for v in op.operation.operands]


# ---------------------------------------------------------------------------
# Program state
# ---------------------------------------------------------------------------


class _Program:
    def __init__(
        self,
        num_slots: int,
        num_warps: int,
        pid: tuple[int, int, int],
        run: _Run,
        clock: ProgramClock | None = None,
    ) -> None:
        self.env: list[Any] = [None] * num_slots
        self.W = num_warps
        self.pid = pid
        self.run = run
        self.queues: list[deque[_InFlight]] = [deque() for _ in range(num_warps)]
        self.mmas: deque[_AsyncMma] = deque()  # in-flight tile.async_wmma, oldest first
        # In-flight instructions of barrier-tracked copies (gemm_opt.model.barriers):
        # a barrier wait completes them, tile.async_tdm_wait does not count them.
        self.tracked: list[_InFlight] = []
        # The program's place in the grid's happens-before order (see concurrency).
        self.clock = clock if clock is not None else ProgramClock(0, pid)
        # The partition this program runs as inside a tile.warp_specialize
        # (gemm_opt.model.warp_specialize.Agent; None outside one).
        self.agent: Any = None

    def partners(self) -> list[_Program]:
        """This program and the other partitions of its running warp_specialize."""
        if self.agent is None:
            return [self]
        return [a.program for a in self.agent.sched.agents]

    def exec_block(self, block: _Block, mask: np.ndarray) -> list[Any]:
        for fn in block.instrs:
            fn(self, mask)
        return [self.env[s] for s in block.term_slots]


@dataclass
class _Run:
    stats: Stats
    check_uninitialized: bool
    grid: tuple[int, int, int] = (1, 1, 1)
    sync: Grid | None = None


def _active_warps(mask: np.ndarray) -> list[int]:
    return [int(w) for w in np.flatnonzero(mask)]


def _uniform(values: np.ndarray, mask: np.ndarray, what: str, where: str) -> Any:
    """The common value of ``values`` over the executing warps."""
    vals = values[mask] if mask.any() else values
    first = vals[0]
    if (vals != first).any():
        raise ModelError(
            f"{where}: {what} differs across warps ({values.tolist()}); this program-level "
            "operation needs a warp-uniform value"
        )
    return first


def _uniform_rows(rows: np.ndarray, mask: np.ndarray, what: str, where: str) -> tuple:
    vals = rows[mask] if mask.any() else rows
    if (vals != vals[0]).any():
        raise ModelError(
            f"{where}: {what} differs across warps ({rows.tolist()}); this program-level "
            "operation needs a warp-uniform value"
        )
    return tuple(int(v) for v in vals[0])


def _is_tensor_type(t: ir.Type) -> bool:
    return _tensor_type(t) is not None


def _select_per_warp(sel: np.ndarray, new: Any, old: Any, where: str) -> Any:
    """Per warp: ``new`` where ``sel`` holds, else ``old`` (per-warp values only)."""
    if isinstance(new, np.ndarray) and isinstance(old, np.ndarray):
        return np.where(sel, new, old)
    if isinstance(new, Descriptor) and isinstance(old, Descriptor):
        if new.base.array is not old.base.array:
            raise ModelError(f"{where}: warps hold descriptors of different tensors")
        col = sel[:, None]
        nb = new.bounds if new.bounds is not None else new.shape
        ob = old.bounds if old.bounds is not None else old.shape
        both_none = new.bounds is None and old.bounds is None
        return Descriptor(
            base=_select_per_warp(sel, new.base, old.base, where),
            shape=np.where(col, new.shape, old.shape),
            strides=np.where(col, new.strides, old.strides),
            origin=np.where(col, new.origin, old.origin),
            bounds=None if both_none else np.where(col, nb, ob),
            pred=np.where(sel, new.pred, old.pred),
        )
    if isinstance(new, Pointer) and isinstance(old, Pointer):
        if new.array is not old.array:
            raise ModelError(f"{where}: warps hold pointers to different arrays")
        return Pointer(new.array, np.where(sel, new.offset, old.offset), new.name, new.elem)
    if isinstance(new, SharedView) and isinstance(old, SharedView):
        if (
            new.buffer is not old.buffer
            or new.prefix.shape != old.prefix.shape
            or new.perm != old.perm
        ):
            raise ModelError(f"{where}: warps hold views of different shared buffers")
        return SharedView(new.buffer, np.where(sel[:, None], new.prefix, old.prefix), new.perm)
    raise ModelError(f"{where}: cannot merge {type(new).__name__} values per warp")


def _merge(sel: np.ndarray, outer: np.ndarray, new: Any, old: Any, tensor: bool, where: str) -> Any:
    """The value after a region that only the warps in ``sel`` (of ``outer``) ran."""
    taken = sel & outer
    if not taken.any():
        return old
    if (taken == outer).all() or old is None:
        return new
    if not tensor:
        return _select_per_warp(sel, new, old, where)
    if new is old or (
        new.shape == old.shape and np.array_equal(new, old, equal_nan=new.dtype.kind == "f")
    ):
        return new
    raise ModelError(
        f"{where}: warp-divergent control flow yields a tensor that differs between warps; "
        "tensors are program-level values, only per-warp scalars may diverge"
    )


# ---------------------------------------------------------------------------
# Builders: arith
# ---------------------------------------------------------------------------

_BUILDERS: dict[str, Callable[[_Compiler, Any], Exec]] = {}


def _builder(*names: str):
    def register(fn):
        for n in names:
            _BUILDERS[n] = fn
        return fn

    return register


@_builder("arith.constant")
def _b_constant(c: _Compiler, op: Any) -> Exec:
    r = _res(c, op)
    attr = op.operation.attributes["value"]
    elem, shape = _value_elem(op.operation.results[0].type)
    where = _where(op)
    if elem is None:
        raise ModelError(f"{where}: unsupported constant type {op.operation.results[0].type}")
    if shape is not None:
        dense = cast(attr, ir.DenseElementsAttr)
        if dense is None:
            raise ModelError(f"{where}: unsupported tensor constant {attr}")
        dense = ir.DenseElementsAttr(dense)
        if dense.is_splat:
            scalar = dense.get_splat_value()
            v = _scalar_attr(scalar, elem, where)
            value = _cast_const(np.full(shape, v), elem)
        else:
            try:
                value = _cast_const(np.array(dense).reshape(shape), elem)
            except Exception as e:
                raise ModelError(f"{where}: unsupported dense constant {attr}: {e}") from None

        def run_tensor(p: _Program, mask: np.ndarray) -> None:
            p.env[r] = value

        return run_tensor
    v = _scalar_attr(attr, elem, where)
    warps = _cast_const(np.full(c.num_warps, v), elem)

    def run(p: _Program, mask: np.ndarray) -> None:
        p.env[r] = warps

    return run


def _wrap_int(v: int, width: int) -> int:
    half = 1 << (width - 1)
    return ((int(v) + half) % (1 << width)) - half


def _scalar_attr(attr: Any, elem: _Elem, where: str) -> Any:
    if elem.is_int:
        ia = cast(attr, ir.IntegerAttr)
        if ia is None:
            raise ModelError(f"{where}: expected an integer constant, got {attr}")
        return _wrap_int(ir.IntegerAttr(ia).value, elem.width)
    fa = cast(attr, ir.FloatAttr)
    if fa is None:
        raise ModelError(f"{where}: expected a float constant, got {attr}")
    return ir.FloatAttr(fa).value


def _cast_const(values: np.ndarray, elem: _Elem) -> np.ndarray:
    if elem.is_int:
        return _wrap(np.asarray(values).astype(np.int64), elem.width)
    return _round_to(np.asarray(values, dtype=np.float64), elem)


def _result_elem(c: _Compiler, op: Any) -> tuple[_Elem, bool]:
    elem, shape = _value_elem(op.operation.results[0].type)
    if elem is None:
        raise ModelError(f"{_where(op)}: unsupported result type {op.operation.results[0].type}")
    return elem, shape is not None


def _operand_elem(op: Any, i: int = 0) -> _Elem:
    elem, _ = _value_elem(op.operation.operands[i].type)
    if elem is None:
        raise ModelError(f"{_where(op)}: unsupported operand type {op.operation.operands[i].type}")
    return elem


def _check_divisor(y: np.ndarray, lanes: np.ndarray | None, w: int, where: str) -> np.ndarray:
    bad = y == 0
    if lanes is not None:
        bad = bad & lanes
    if bad.any():
        raise ModelError(f"{where}: integer division by zero")
    return np.where(y == 0, 1, y)


def _check_shift(y: np.ndarray, lanes: np.ndarray | None, w: int, where: str) -> np.ndarray:
    bad = (y < 0) | (y >= w)
    if lanes is not None:
        bad = bad & lanes
    if bad.any():
        raise ModelError(f"{where}: shift amount out of range for i{w} (poison)")
    return y


def _trunc_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    q = np.abs(x) // np.abs(y)
    return np.where((x < 0) ^ (y < 0), -q, q)


_Check = Callable[[np.ndarray, np.ndarray | None, int, str], np.ndarray]


def _int_binary(fn: Callable[..., np.ndarray], check: _Check | None = None):
    """Builder of ``r = fn(x, y, width)``; ``check`` vets ``y`` on the executing lanes."""

    def build(c: _Compiler, op: Any) -> Exec:
        a, b = _opnds(c, op)
        r = _res(c, op)
        elem, is_tensor = _result_elem(c, op)
        w = elem.width
        where = _where(op)

        def run(p: _Program, mask: np.ndarray) -> None:
            x, y = p.env[a], p.env[b]
            if check is not None:
                y = check(y, None if is_tensor else mask, w, where)
            p.env[r] = _wrap(fn(x, y, w), w)

        return run

    return build


def _shli(x, y, w):
    return x << np.clip(y, 0, 63)


def _shrsi(x, y, w):
    return x >> np.clip(y, 0, 63)


def _shrui(x, y, w):
    return _unsigned(x, w) >> np.clip(y, 0, 63).astype(np.uint64)


def _udiv(x, y, w):
    return _unsigned(x, w) // _unsigned(y, w)


def _urem(x, y, w):
    return _unsigned(x, w) % _unsigned(y, w)


def _ceildivsi(x, y, w):
    q = _trunc_div(x, y)
    return q + ((x - q * y != 0) & ((x < 0) == (y < 0)))


def _floordivsi(x, y, w):
    q = _trunc_div(x, y)
    return q - ((x - q * y != 0) & ((x < 0) != (y < 0)))


def _ceildivui(x, y, w):
    ux, uy = _unsigned(x, w), _unsigned(y, w)
    return ux // uy + (ux % uy != 0).astype(np.uint64)


_INT_BINARY: dict[str, tuple[Callable[..., np.ndarray], _Check | None]] = {
    "arith.addi": (lambda x, y, w: x + y, None),
    "arith.subi": (lambda x, y, w: x - y, None),
    "arith.muli": (lambda x, y, w: x * y, None),
    "arith.andi": (lambda x, y, w: x & y, None),
    "arith.ori": (lambda x, y, w: x | y, None),
    "arith.xori": (lambda x, y, w: x ^ y, None),
    "arith.maxsi": (lambda x, y, w: np.maximum(x, y), None),
    "arith.minsi": (lambda x, y, w: np.minimum(x, y), None),
    "arith.maxui": (lambda x, y, w: np.maximum(_unsigned(x, w), _unsigned(y, w)), None),
    "arith.minui": (lambda x, y, w: np.minimum(_unsigned(x, w), _unsigned(y, w)), None),
    "arith.divsi": (lambda x, y, w: _trunc_div(x, y), _check_divisor),
    "arith.remsi": (lambda x, y, w: x - _trunc_div(x, y) * y, _check_divisor),
    "arith.divui": (_udiv, _check_divisor),
    "arith.remui": (_urem, _check_divisor),
    "arith.ceildivsi": (_ceildivsi, _check_divisor),
    "arith.floordivsi": (_floordivsi, _check_divisor),
    "arith.ceildivui": (_ceildivui, _check_divisor),
    "arith.shli": (_shli, _check_shift),
    "arith.shrsi": (_shrsi, _check_shift),
    "arith.shrui": (_shrui, _check_shift),
}
for _name, (_fn, _check) in _INT_BINARY.items():
    _BUILDERS[_name] = _int_binary(_fn, _check)

_CMPI = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
_CMPF = (
    "false",
    "oeq",
    "ogt",
    "oge",
    "olt",
    "ole",
    "one",
    "ord",
    "ueq",
    "ugt",
    "uge",
    "ult",
    "ule",
    "une",
    "uno",
    "true",
)
_COMPARE = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


def _predicate(op: Any, names: tuple[str, ...]) -> str:
    a = op.operation.attributes["predicate"]
    ia = cast(a, ir.IntegerAttr)
    if ia is None:
        raise ModelError(f"{_where(op)}: unreadable predicate {a}")
    v = ir.IntegerAttr(ia).value
    if not 0 <= v < len(names):
        raise ModelError(f"{_where(op)}: unknown predicate {v}")
    return names[v]


def _as_i1(cond: np.ndarray) -> np.ndarray:
    return np.where(cond, -1, 0).astype(np.int64)


@_builder("arith.cmpi")
def _b_cmpi(c: _Compiler, op: Any) -> Exec:
    a, b = _opnds(c, op)
    r = _res(c, op)
    pred = _predicate(op, _CMPI)
    w = _operand_elem(op).width
    unsigned = pred[0] == "u"
    compare = _COMPARE[pred if pred in ("eq", "ne") else pred[1:]]

    def run(p: _Program, mask: np.ndarray) -> None:
        x, y = p.env[a], p.env[b]
        if unsigned:
            x, y = _unsigned(x, w), _unsigned(y, w)
        p.env[r] = _as_i1(compare(x, y))

    return run


@_builder("arith.cmpf")
def _b_cmpf(c: _Compiler, op: Any) -> Exec:
    a, b = _opnds(c, op)
    r = _res(c, op)
    pred = _predicate(op, _CMPF)

    def run(p: _Program, mask: np.ndarray) -> None:
        x, y = p.env[a], p.env[b]
        if pred in ("false", "true"):
            p.env[r] = _as_i1(np.full(np.broadcast(x, y).shape, pred == "true"))
            return
        unordered = np.isnan(x) | np.isnan(y)
        if pred == "ord":
            out = ~unordered
        elif pred == "uno":
            out = unordered
        else:
            base = _COMPARE[pred[1:]](x, y)
            out = (base & ~unordered) if pred[0] == "o" else (base | unordered)
        p.env[r] = _as_i1(out)

    return run


@_builder("arith.select")
def _b_select(c: _Compiler, op: Any) -> Exec:
    cond_s, t_s, f_s = _opnds(c, op)
    r = _res(c, op)
    cond_is_tensor = _is_tensor_type(op.operation.operands[0].type)
    value_is_tensor = _is_tensor_type(op.operation.results[0].type)
    where = _where(op)

    def run(p: _Program, mask: np.ndarray) -> None:
        cond, t, f = p.env[cond_s], p.env[t_s], p.env[f_s]
        if cond_is_tensor:
            p.env[r] = np.where(cond != 0, t, f)
        elif value_is_tensor:
            p.env[r] = t if _uniform(cond, mask, "the select condition", where) else f
        else:
            p.env[r] = _select_per_warp(cond != 0, t, f, where)

    return run


def _float_binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]):
    def build(c: _Compiler, op: Any) -> Exec:
        a, b = _opnds(c, op)
        r = _res(c, op)
        elem, _ = _result_elem(c, op)

        def run(p: _Program, mask: np.ndarray) -> None:
            p.env[r] = _round_to(fn(p.env[a], p.env[b]), elem)

        return run

    return build


for _name, _fn in {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.remf": np.fmod,
    "arith.maximumf": np.maximum,
    "arith.minimumf": np.minimum,
    "arith.maxnumf": np.fmax,
    "arith.minnumf": np.fmin,
}.items():
    _BUILDERS[_name] = _float_binary(_fn)


def _unary(make: Callable[[_Elem, _Elem, bool], Callable[[np.ndarray], np.ndarray]]):
    def build(c: _Compiler, op: Any) -> Exec:
        (a,) = _opnds(c, op)[:1]
        r = _res(c, op)
        out_elem, is_tensor = _result_elem(c, op)
        in_elem = _operand_elem(op)
        fn = make(in_elem, out_elem, is_tensor)

        def run(p: _Program, mask: np.ndarray) -> None:
            p.env[r] = fn(p.env[a])

        return run

    return build


_UNARY: dict[str, Callable[[_Elem, _Elem, bool], Callable[[np.ndarray], np.ndarray]]] = {
    "arith.negf": lambda i, o, t: lambda x: _round_to(-x, o),
    "arith.truncf": lambda i, o, t: lambda x: _round_to(x, o),
    "arith.extf": lambda i, o, t: lambda x: _round_to(x, o),
    "arith.extsi": lambda i, o, t: lambda x: _wrap(x, o.width),
    "arith.extui": lambda i, o, t: lambda x: _wrap(_unsigned(x, i.width), o.width),
    "arith.trunci": lambda i, o, t: lambda x: _wrap(x, o.width),
    "arith.index_cast": lambda i, o, t: lambda x: _wrap(x, o.width),
    "arith.index_castui": lambda i, o, t: lambda x: _wrap(_unsigned(x, i.width), o.width),
    "arith.sitofp": lambda i, o, t: lambda x: _round_to(x.astype(np.float64), o),
    "arith.uitofp": lambda i, o, t: (
        lambda x: _round_to(_unsigned(x, i.width).astype(np.float64), o)
    ),
    "arith.fptosi": lambda i, o, t: (
        lambda x: _wrap(np.trunc(np.nan_to_num(x.astype(np.float64))).astype(np.int64), o.width)
    ),
    "arith.fptoui": lambda i, o, t: (
        lambda x: _wrap(np.trunc(np.nan_to_num(x.astype(np.float64))).astype(np.int64), o.width)
    ),
}
for _name, _make in _UNARY.items():
    _BUILDERS[_name] = _unary(_make)


# ---------------------------------------------------------------------------
# Builders: control flow
# ---------------------------------------------------------------------------


@_builder("scf.for")
def _b_for(c: _Compiler, op: Any) -> Exec:
    operands = _opnds(c, op)
    lb, ub, step, inits = operands[0], operands[1], operands[2], operands[3:]
    results = [c.slot(v) for v in op.operation.results]
    body = c.block(op.operation.regions[0].blocks[0])
    iv_slot, iter_slots = body.arg_slots[0], body.arg_slots[1:]
    iv_elem = _operand_elem(op, 0)
    tensors = [_is_tensor_type(v.type) for v in op.operation.results]
    unsigned = "unsignedCmp" in op.operation.attributes
    where = _where(op)

    def run(p: _Program, mask: np.ndarray) -> None:
        iv = p.env[lb]
        upper = p.env[ub]
        st = p.env[step]
        if ((st <= 0) & mask).any():
            raise ModelError(f"{where}: the step must be positive, got {st.tolist()}")
        iters = [p.env[s] for s in inits]
        while True:
            if unsigned:
                more = _unsigned(iv, iv_elem.width) < _unsigned(upper, iv_elem.width)
            else:
                more = iv < upper
            running = mask & more
            if not running.any():
                break
            p.env[iv_slot] = iv
            for s, v in zip(iter_slots, iters, strict=True):
                p.env[s] = v
            yielded = p.exec_block(body, running)
            iters = [
                _merge(running, mask, new, old, tensor, where)
                for new, old, tensor in zip(yielded, iters, tensors, strict=True)
            ]
            iv = np.where(running, _wrap(iv + st, iv_elem.width), iv)
        for s, v in zip(results, iters, strict=True):
            p.env[s] = v

    return run


def _same(xs: list[Any], ys: list[Any]) -> bool:
    """Whether two lists of runtime values are equal (arrays by value)."""
    for x, y in zip(xs, ys, strict=True):
        if x is y:
            continue
        if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray)):
            return False
        if x.shape != y.shape or not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
            return False
    return True


@_builder("scf.while")
def _b_while(c: _Compiler, op: Any) -> Exec:
    """``scf.while`` per warp: a warp leaves when its condition is false.

    A flag wait is such a loop around an acquire atomic; the values a warp
    passes to ``scf.condition`` when it leaves are its results.
    """
    inits = _opnds(c, op)
    results = [c.slot(v) for v in op.operation.results]
    before = c.block(op.operation.regions[0].blocks[0])
    after = c.block(op.operation.regions[1].blocks[0])
    arg_tensors = [_is_tensor_type(v.type) for v in op.operation.operands]
    res_tensors = [_is_tensor_type(v.type) for v in op.operation.results]
    where = _where(op)

    def run(p: _Program, mask: np.ndarray) -> None:
        vals = [p.env[s] for s in inits]
        out: list[Any] = [None] * len(results)
        active = mask
        prev: list[Any] | None = None
        prev_effects = -1
        while True:
            # An iteration that starts as the last one did, with no atomic or
            # global write in between, can only differ if another program
            # writes: wait for that (a plain-load spin), or report it.
            if prev is not None and p.clock.effects == prev_effects and _same(vals, prev):
                sync = p.run.sync
                assert sync is not None  # every run has one
                sync.scheduler.wait_change(p.clock, Waiting(p.pid, None, "", 0, None, where))
            prev, prev_effects = vals, p.clock.effects
            for s, v in zip(before.arg_slots, vals, strict=True):
                p.env[s] = v
            cond_v, *forwarded = p.exec_block(before, active)
            cond = cond_v != 0
            leaving = active & ~cond
            if leaving.any():
                out = [
                    _merge(leaving, mask, new, old, tensor, where)
                    for new, old, tensor in zip(forwarded, out, res_tensors, strict=True)
                ]
            active = active & cond
            if not active.any():
                break
            for s, v in zip(after.arg_slots, forwarded, strict=True):
                p.env[s] = v
            yielded = p.exec_block(after, active)
            vals = [
                _merge(active, mask, new, old, tensor, where)
                for new, old, tensor in zip(yielded, vals, arg_tensors, strict=True)
            ]
        for s, v in zip(results, out, strict=True):
            p.env[s] = v

    return run


@_builder("scf.if")
def _b_if(c: _Compiler, op: Any) -> Exec:
    (cond_s,) = _opnds(c, op)
    results = [c.slot(v) for v in op.operation.results]
    then_b = c.block(op.operation.regions[0].blocks[0])
    else_region = op.operation.regions[1]
    else_b = c.block(else_region.blocks[0]) if len(else_region.blocks) else None
    tensors = [_is_tensor_type(v.type) for v in op.operation.results]
    where = _where(op)

    def run(p: _Program, mask: np.ndarray) -> None:
        cond = p.env[cond_s] != 0
        then_mask = mask & cond
        else_mask = mask & ~cond
        then_vals = p.exec_block(then_b, then_mask) if then_mask.any() else None
        else_vals = None
        if else_b is not None and else_mask.any():
            else_vals = p.exec_block(else_b, else_mask)
        for i, s in enumerate(results):
            t = None if then_vals is None else then_vals[i]
            e = None if else_vals is None else else_vals[i]
            if t is None:
                p.env[s] = e
            elif e is None:
                p.env[s] = t
            else:
                p.env[s] = _merge(then_mask, mask, t, e, tensors[i], where)

    return run


# ---------------------------------------------------------------------------
# Builders: tile ids, descriptors, shared memory
# ---------------------------------------------------------------------------


@_builder("tile.program_id")
def _b_program_id(c: _Compiler, op: Any) -> Exec:
    r = _res(c, op)
    axis = ir.IntegerAttr(op.operation.attributes["axis"]).value

    def run(p: _Program, mask: np.ndarray) -> None:
        p.env[r] = np.full(p.W, p.pid[axis], dtype=np.int64)

    return run


@_builder("tile.warp_id")
def _b_warp_id(c: _Compiler, op: Any) -> Exec:
    r = _res(c, op)
    ids = np.arange(c.num_warps, dtype=np.int64)

    def run(p: _Program, mask: np.ndarray) -> None:
        p.env[r] = ids

    return run


def _stack(p: _Program, slots: Sequence[int]) -> np.ndarray:
    if not slots:
        return np.zeros((p.W, 0), dtype=np.int64)
    return np.stack([p.env[s] for s in slots], axis=1).astype(np.int64)


@_builder("tile.make_tensor_descriptor")
def _b_make_desc(c: _Compiler, op: Any) -> Exec:
    base = c.slot(op.base)
    shape = [c.slot(v) for v in op.shape]
    strides = [c.slot(v) for v in op.strides]
    r = _res(c, op)

    def run(p: _Program, mask: np.ndarray) -> None:
        sh = _stack(p, shape)
        p.env[r] = Descriptor(
            base=p.env[base],
            shape=sh,
            strides=_stack(p, strides),
            origin=np.zeros_like(sh),
            bounds=None,
            pred=np.ones(p.W, dtype=np.bool_),
        )

    return run


@_builder("tile.update_tensor_descriptor")
def _b_update_desc(c: _Compiler, op: Any) -> Exec:
    desc = c.slot(op.desc)
    offsets = [c.slot(v) for v in op.offsets]
    bounds = [c.slot(v) for v in op.bounds]
    pred = None if op.pred is None else c.slot(op.pred)
    r = _res(c, op)

    def run(p: _Program, mask: np.ndarray) -> None:
        d: Descriptor = p.env[desc]
        new_pred = d.pred if pred is None else d.pred & (p.env[pred] != 0)
        p.env[r] = Descriptor(
            base=d.base,
            shape=d.shape,
            strides=d.strides,
            origin=d.origin + _stack(p, offsets),
            bounds=_stack(p, bounds) if bounds else d.bounds,
            pred=new_pred,
        )

    return run


@_builder("tile.local_alloc")
def _b_local_alloc(c: _Compiler, op: Any) -> Exec:
    r = _res(c, op)
    t = op.operation.results[0].type
    if not isinstance(t, SharedType):
        raise ModelError(f"{_where(op)}: expected a !tile.shared result, got {t}")
    shape = tuple(t.shape)
    elem = _elem(t.element_type)
    if elem is None:
        raise ModelError(f"{_where(op)}: unsupported element type {t.element_type}")
    label = f"local_alloc at {_location(op.operation)}"

    def run(p: _Program, mask: np.ndarray) -> None:
        buf = SharedBuffer(label, shape, elem)
        p.env[r] = SharedView(buf, np.zeros((p.W, 0), dtype=np.int64))

    return run


@_builder("tile.memdesc_index")
def _b_memdesc_index(c: _Compiler, op: Any) -> Exec:
    src = c.slot(op.src)
    idx = c.slot(op.index)
    r = _res(c, op)
    where = _where(op)

    def run(p: _Program, mask: np.ndarray) -> None:
        v: SharedView = p.env[src]
        i = p.env[idx]
        depth = v.prefix.shape[1]
        extent = v.buffer.data.shape[depth]
        bad = ((i < 0) | (i >= extent)) & mask
        if bad.any():
            raise ModelError(f"{where}: index {i.tolist()} out of range for {extent} buffers")
        perm = v.perm
        if perm is not None:
            if perm[0] != 0:
                raise ModelError(
                    f"{where}: indexes a transposed view along a permuted dim {perm[0]}"
                )
            perm = tuple(d - 1 for d in perm[1:])
        p.env[r] = SharedView(v.buffer, np.concatenate([v.prefix, i[:, None]], axis=1), perm)

    return run


@_builder("tile.memdesc_trans")
def _b_memdesc_trans(c: _Compiler, op: Any) -> Exec:
    src = c.slot(op.src)
    r = _res(c, op)
    order = tuple(op.permutation())

    def run(p: _Program, mask: np.ndarray) -> None:
        v: SharedView = p.env[src]
        perm = order if v.perm is None else tuple(v.perm[d] for d in order)
        p.env[r] = SharedView(v.buffer, v.prefix, perm)

    return run


@_builder("tile.local_load")
def _b_local_load(c: _Compiler, op: Any) -> Exec:
    src = c.slot(op.src)
    r = _res(c, op)
    where = _where(op)
    elem, _ = _value_elem(op.operation.results[0].type)
    if elem is None:
        raise ModelError(f"{where}: unsupported result type {op.operation.results[0].type}")

    def run(p: _Program, mask: np.ndarray) -> None:
        view = p.env[src]
        _, prefix = _read_shared(p, view, mask, "the buffer index", where)
        p.env[r] = _from_storage(view.read(prefix), elem)

    return run


def _read_shared(
    p: _Program, v: SharedView, mask: np.ndarray, index: str, where: str
) -> tuple[SharedBuffer, tuple]:
    """The slot a shared-memory read takes (uniform over ``mask``), after the
    checks every read makes: no copy still writing it (a race), and, when the
    run checks it, every element written before."""
    prefix = _uniform_rows(v.prefix, mask, index, where)
    buf = v.buffer
    if buf.pending[prefix].any():
        raise ModelError(_race_message(p, buf, prefix, where))
    if p.run.check_uninitialized and not buf.written[prefix].all():
        missing = int((~buf.written[prefix]).sum())
        raise ModelError(
            f"{where}: read of uninitialized shared memory: {missing} elements of "
            f"slot {list(prefix)} of the {buf.label} were never written"
        )
    return buf, prefix


def _race_message(p: _Program, buf: SharedBuffer, prefix: tuple, where: str) -> str:
    region = np.zeros(buf.data.shape, dtype=np.bool_)
    region[prefix] = True
    culprits = []
    queues = [q for prog in p.partners() for q in (*prog.queues, prog.tracked)]
    tracked = {id(rec) for prog in p.partners() for rec in prog.tracked}
    for q in queues:
        for rec in q:
            if rec.buffer is buf and region[rec.index].any():
                culprits.append(rec)
    shown = ", ".join(f"{rec.op} issued by warp {rec.warp}" for rec in culprits[:4]) + (
        ", ..." if len(culprits) > 4 else ""
    )
    fix = "the preceding tile.async_tdm_wait leaves too many copies outstanding"
    if any(id(rec) in tracked for rec in culprits):
        fix = "no tile.barrier_wait has completed the barrier phase the copy is tracked by"
    return (
        "read of shared memory still being written by an in-flight TDM copy: "
        f"{where} in program {p.pid} reads slot {list(prefix)} of the {buf.label} while "
        f"{len(culprits)} in-flight TDM instruction(s) write it ({shown}); {fix}"
    )


def _check_write_race(
    p: _Program, buf: SharedBuffer, index: tuple, data: np.ndarray, warp: int, where: str
) -> None:
    """Raise when ``warp`` writes elements another warp's in-flight copy writes
    with other values: which lands last is undefined. (Equal values, as warps
    that repeat a tile write, leave one defined result.)"""
    mine = np.full(buf.data.shape, np.nan)
    mine[index] = data
    others = set()
    for q in p.queues:
        for rec in q:
            if rec.warp == warp or rec.buffer is not buf:
                continue
            theirs = np.full(buf.data.shape, np.nan)
            theirs[rec.index] = rec.data
            both = ~np.isnan(mine) & ~np.isnan(theirs)
            if not np.array_equal(mine[both], theirs[both]):
                others.add(rec.warp)
    if not others:
        return
    raise ModelError(
        "write of shared memory still being written by another warp's in-flight TDM copy: "
        f"{where} in program {p.pid}: warp {warp} writes the {buf.label} where in-flight "
        f"TDM instruction(s) of warp(s) {format_warps(sorted(others))} write other values; "
        "copies of different warps complete in no defined order, so a tile.async_tdm_wait must "
        "retire the earlier copy first"
    )


# ---------------------------------------------------------------------------
# Builders: TDM copies and waits
# ---------------------------------------------------------------------------


def _layout_from_attr(
    attr: Any, block: tuple[int, ...], nw: int, hint: int | None, where: str
) -> TdmWarpLayout:
    """A :class:`TdmWarpLayout` from a ``#tile.tdm_warp_layout`` attribute."""
    if not isinstance(attr, TdmWarpLayoutAttr):
        try:
            attr = TdmWarpLayoutAttr(attr)
        except Exception:
            raise ModelError(f"{where}: expected a #tile.tdm_warp_layout, got {attr}") from None
    try:
        v = attr.field_values()
    except VerifyError as e:
        raise ModelError(f"{where}: {e}") from None
    rank = len(block)
    missing = [f for f in ("warps_per_dim", "tile", "warp_bases") if f not in v]
    if missing:
        raise ModelError(f"{where}: #tile.tdm_warp_layout lacks {', '.join(missing)}")
    flat = v["warp_bases"]
    bits = nw.bit_length() - 1
    if len(flat) != bits * rank or len(v["tile"]) != rank or len(v["warps_per_dim"]) != rank:
        raise ModelError(
            f"{where}: #tile.tdm_warp_layout does not fit a rank-{rank} block and "
            f"{nw} warps: {attr}"
        )
    if any(t * w != b for t, w, b in zip(v["tile"], v["warps_per_dim"], block, strict=True)):
        raise ModelError(f"{where}: warp layout tile x warps_per_dim != block {list(block)}")
    try:
        warp_hint = check_warp_used_hint(hint, nw)
    except WarpHintError as e:
        raise ModelError(f"{where}: {e}") from None
    return TdmWarpLayout(
        block_shape=block,
        num_warps=nw,
        hint=warp_hint,
        warps_per_dim=tuple(v["warps_per_dim"]),
        tile=tuple(v["tile"]),
        warp_bases=tuple(tuple(flat[i * rank : (i + 1) * rank]) for i in range(bits)),
        dim_order=tdm_dim_order(rank),
        anchor=v.get("anchor", 0),
        free_mask=v.get("free_mask", 0),
    )


def _copy_layout(
    c: _Compiler, desc_value: ir.Value, hint: int | None, attr: Any, where: str
) -> TdmWarpLayout:
    t = desc_value.type
    if not isinstance(t, TensorDescType):
        raise ModelError(f"{where}: expected a !tile.tensor_desc, got {t}")
    block = tuple(t.shape)
    try:
        shared = t.shared_layout()
        if attr is not None:
            return _layout_from_attr(attr, block, c.num_warps, hint, where)
        return tdm_warp_layout(block, c.num_warps, hint, shared)
    except (WarpHintError, VerifyError, ValueError) as e:
        raise ModelError(f"{where}: cannot lay the copy out over warps: {e}") from None


@dataclass
class _Member:
    """One copy member, with its per-warp plan computed once per op.

    ``active[w]`` is the layout's warp mask, ``start[w]`` the block-relative
    start of warp ``w``'s tile and ``dst[w]`` the slices of that tile.
    """

    desc: int
    dest: int
    layout: TdmWarpLayout
    elem: _Elem
    active: tuple[bool, ...]
    start: tuple[tuple[int, ...], ...]
    dst: tuple[tuple[slice, ...], ...]


def _member(c: _Compiler, desc: ir.Value, dest: ir.Value, hint, attr, where: str) -> _Member:
    layout = _copy_layout(c, desc, hint, attr, where)
    elem = _elem(desc.type.element_type)
    if elem is None:
        raise ModelError(f"{where}: unsupported element type {desc.type.element_type}")
    warps = range(layout.num_warps)
    starts = tuple(tuple(int(x) for x in layout.start(w)) for w in warps)
    return _Member(
        c.slot(desc),
        c.slot(dest),
        layout,
        elem,
        active=tuple(layout.active(w) for w in warps),
        start=starts,
        dst=tuple(
            tuple(slice(s, s + t) for s, t in zip(st, layout.tile, strict=True)) for st in starts
        ),
    )


@_builder("tile.async_tdm_copy_global_to_local")
def _b_tdm_copy(c: _Compiler, op: AsyncTDMCopyGlobalToLocalOp) -> Exec:
    where = _where(op)
    if op.barrier is not None:
        raise ModelError(f"{where}: copies that arrive on an mbarrier are not modelled")
    attrs = op.operation.attributes
    layout_attr = attrs[WARP_LAYOUT] if WARP_LAYOUT in attrs else None
    members = [_member(c, op.desc, op.dest, op.warp_used_hint, layout_attr, where)]
    pred = None if op.pred is None else c.slot(op.pred)
    predicated = WARP_PREDICATED in attrs

    def run(p: _Program, mask: np.ndarray) -> None:
        _issue(p, mask, members, lambda w: 0, pred, predicated, where)

    return run


@_builder("tile.async_tdm_fused_copy_global_to_local")
def _b_tdm_fused_copy(c: _Compiler, op: AsyncTDMFusedCopyGlobalToLocalOp) -> Exec:
    where = _where(op)
    if op.barrier is not None:
        raise ModelError(f"{where}: copies that arrive on an mbarrier are not modelled")
    attrs = op.operation.attributes
    try:
        hints = op.warp_used_hints
    except VerifyError as e:
        raise ModelError(f"{where}: {e}") from None
    descs, dests = op.descs, op.dests
    if not (len(descs) == len(dests) == len(hints)) or not descs:
        raise ModelError(f"{where}: malformed fused copy")
    layout_attrs: list[Any] = [None] * len(descs)
    if WARP_LAYOUTS in attrs:
        arr = cast(attrs[WARP_LAYOUTS], ir.ArrayAttr)
        if arr is None or len(ir.ArrayAttr(arr)) != len(descs):
            raise ModelError(f"{where}: '{WARP_LAYOUTS}' needs one layout per member")
        layout_attrs = list(ir.ArrayAttr(arr))
    members = [
        _member(c, d, b, h, a, f"{where} member {i}")
        for i, (d, b, h, a) in enumerate(zip(descs, dests, hints, layout_attrs, strict=True))
    ]
    layouts = [m.layout for m in members]
    choice = [select_fused_member(layouts, w) for w in range(c.num_warps)]
    predicated = WARP_PREDICATED in attrs

    def run(p: _Program, mask: np.ndarray) -> None:
        _issue(p, mask, members, choice.__getitem__, None, predicated, where)

    return run


def _global_view(ptr: Pointer, warp: int, extent: np.ndarray, strides: np.ndarray, where: str):
    """The strided view of the tensor a descriptor describes, for one warp."""
    flat = ptr.array
    shape = tuple(max(0, int(s)) for s in extent)
    if any(s == 0 for s in shape):
        return np.zeros(shape, dtype=flat.dtype)
    st = [int(s) for s in strides]
    base = int(ptr.offset[warp])
    if any(s < 0 for s in st):
        raise ModelError(f"{where}: negative strides {st} are not modelled")
    last = base + sum((n - 1) * s for n, s in zip(shape, st, strict=True))
    if base < 0 or last >= flat.size:
        raise ModelError(
            f"{where}: the tensor described for '{ptr.name}' (extent {list(shape)}, "
            f"strides {st}, offset {base}) reaches element {last} of a "
            f"{flat.size}-element array"
        )
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(
        flat[base:], shape=shape, strides=[s * item for s in st], writeable=False
    )


def _issue(
    p: _Program,
    mask: np.ndarray,
    members: list[_Member],
    choose: Callable[[int], int],
    pred_slot: int | None,
    predicated: bool,
    where: str,
) -> None:
    """Every executing warp issues one TDM instruction."""
    op_pred = None if pred_slot is None else p.env[pred_slot] != 0
    stats = p.run.stats
    for w in _active_warps(mask):
        i = choose(w)
        m = members[i]
        d: Descriptor = p.env[m.desc]
        view: SharedView = p.env[m.dest]
        view.writable(where)
        lay = m.layout
        active = bool(d.pred[w]) and (op_pred is None or bool(op_pred[w]))
        if not predicated:
            active = active and m.active[w]
        start = m.start[w]
        rec = _InFlight(where, w, p.pid)
        elements = 0
        if active:
            extent = d.bounds[w] if d.bounds is not None else d.shape[w]
            # Equivalent mutant: strict=False (origin and start both have the block's rank).
            origin = [int(o) + s for o, s in zip(d.origin[w], start, strict=True)]
            if any(o < 0 for o in origin):
                raise ModelError(f"{where}: warp {w} copies from negative coordinates {origin}")
            gview = _global_view(d.base, w, extent, d.strides[w], where)
            data = execute_tile(gview, origin, lay.tile, gview.shape)
            if m.elem.bf16 and not np.array_equal(bf16_round(data), data, equal_nan=True):
                raise ModelError(f"{where}: '{d.base.name}' holds values that are not bf16")
            prefix = tuple(int(x) for x in view.prefix[w])
            index = prefix + m.dst[w]
            buf = view.buffer
            if buf.pending[index].any():
                _check_write_race(p, buf, index, data, w, where)
            if buf.mma_reading[index].any():
                raise ModelError(_mma_race_message(p, buf, index, where))
            if buf.store_reading[index].any():
                raise ModelError(_store_race_message(p, buf, index, where))
            buf.pending[index] += 1
            rec.buffer, rec.index, rec.data = view.buffer, index, data
            elements = int(data.size)
        p.queues[w].append(rec)
        stats.max_in_flight[w] = max(stats.max_in_flight[w], len(p.queues[w]))
        stats.events.append(
            CopyEvent(
                op=where,
                program=p.pid,
                warp=w,
                member=i,
                tensor=d.base.name,
                buffer=view.buffer.label,
                active=active,
                start=start,
                tile=tuple(lay.tile),
                elements=elements,
            )
        )


@_builder("tile.async_tdm_wait")
def _b_tdm_wait(c: _Compiler, op: Any) -> Exec:
    num = ir.IntegerAttr(op.operation.attributes["num"]).value

    def run(p: _Program, mask: np.ndarray) -> None:
        for w in _active_warps(mask):
            q = p.queues[w]
            while len(q) > num:
                q.popleft().complete()

    return run


# ---------------------------------------------------------------------------
# Builders: compute and global memory
# ---------------------------------------------------------------------------


@_builder("tile.wmma")
def _b_wmma(c: _Compiler, op: Any) -> Exec:
    a, b, acc = _opnds(c, op)
    r = _res(c, op)

    def run(p: _Program, mask: np.ndarray) -> None:
        x = p.env[a].astype(np.float64)
        y = p.env[b].astype(np.float64)
        z = p.env[acc].astype(np.float64)
        p.env[r] = (x @ y + z).astype(np.float32)

    return run


@_builder("tensor.splat")
def _b_splat(c: _Compiler, op: Any) -> Exec:
    (a,) = _opnds(c, op)[:1]
    r = _res(c, op)
    elem, shape = _value_elem(op.operation.results[0].type)
    if elem is None or shape is None or len(op.operation.operands) != 1:
        raise ModelError(f"{_where(op)}: only static splats of a scalar are modelled")
    where = _where(op)

    def run(p: _Program, mask: np.ndarray) -> None:
        v = _uniform(p.env[a], mask, "the splat value", where)
        p.env[r] = np.full(shape, v, dtype=elem.dtype)

    return run


@_builder("tensor.extract")
def _b_extract(c: _Compiler, op: Any) -> Exec:
    src, *indices = _opnds(c, op)
    r = _res(c, op)
    where = _where(op)

    def run(p: _Program, mask: np.ndarray) -> None:
        t = p.env[src]
        at = tuple(int(_uniform(p.env[i], mask, "the index", where)) for i in indices)
        if any(not 0 <= i < n for i, n in zip(at, t.shape, strict=True)):
            raise ModelError(f"{where}: index {list(at)} outside a {list(t.shape)} tensor")
        p.env[r] = np.full(p.W, t[at], dtype=t.dtype)

    return run


@_builder("tile.convert_layout")
def _b_convert_layout(c: _Compiler, op: Any) -> Exec:
    (a,) = _opnds(c, op)
    r = _res(c, op)

    def run(p: _Program, mask: np.ndarray) -> None:
        p.env[r] = p.env[a]

    return run


def _block_access(c: _Compiler, op: Any, value_type: ir.Type):
    elem, shape = _value_elem(value_type)
    if elem is None or shape is None:
        raise ModelError(f"{_where(op)}: unsupported block type {value_type}")
    slots = (
        c.slot(op.base),
        [c.slot(v) for v in op.shape],
        [c.slot(v) for v in op.strides],
        [c.slot(v) for v in op.offsets],
    )
    return elem, shape, slots


def _block_indices(p: _Program, mask: np.ndarray, block: tuple[int, ...], slots, where: str):
    """(pointer, in-bounds mask, flat indices of the in-bounds elements)."""
    base_s, shape_s, stride_s, off_s = slots
    ptr: Pointer = p.env[base_s]
    shape = _uniform_rows(_stack(p, shape_s), mask, "the block shape", where)
    strides = _uniform_rows(_stack(p, stride_s), mask, "the block strides", where)
    offsets = _uniform_rows(_stack(p, off_s), mask, "the block offsets", where)
    base = int(_uniform(ptr.offset, mask, "the base pointer", where))
    grids = np.indices(block, dtype=np.int64)
    inside = np.ones(block, dtype=np.bool_)
    lin = np.full(block, base, dtype=np.int64)
    for d in range(len(block)):
        pos = grids[d] + offsets[d]
        inside &= (pos >= 0) & (pos < shape[d])
        lin += pos * strides[d]
    idx = lin[inside]
    if idx.size and (idx.min() < 0 or idx.max() >= ptr.array.size):
        raise ModelError(
            f"{where}: access to '{ptr.name}' reaches element {int(idx.max())} of a "
            f"{ptr.array.size}-element array"
        )
    return ptr, inside, idx


@_builder("tile.load_block")
def _b_load_block(c: _Compiler, op: Any) -> Exec:
    where = _where(op)
    elem, block, slots = _block_access(c, op, op.operation.results[0].type)
    r = _res(c, op)

    def run(p: _Program, mask: np.ndarray) -> None:
        sync = p.run.sync
        if sync is not None:
            sync.scheduler.point(p.clock)
        ptr, inside, idx = _block_indices(p, mask, block, slots, where)
        if sync is not None and sync.memory is not None:
            sync.memory.read(p.clock, ptr.array, ptr.name, idx, where)
        out = np.zeros(block, dtype=elem.storage)
        out[inside] = ptr.array[idx]
        p.env[r] = _from_storage(out, elem)

    return run


@_builder("tile.store_block")
def _b_store_block(c: _Compiler, op: Any) -> Exec:
    where = _where(op)
    elem, block, slots = _block_access(c, op, op.value.type)
    value = c.slot(op.value)

    def run(p: _Program, mask: np.ndarray) -> None:
        if not mask.all():
            raise ModelError(
                f"{where}: store_block under warp-divergent control flow is not modelled "
                "(which warp stores which element depends on the register layout)"
            )
        sync = p.run.sync
        if sync is not None:
            sync.scheduler.point(p.clock)
        ptr, inside, idx = _block_indices(p, mask, block, slots, where)
        if sync is not None and sync.memory is not None:
            sync.memory.write(p.clock, ptr.array, ptr.name, idx, where)
        data = _to_storage(p.env[value], elem)
        ptr.array[idx] = data[inside]
        if sync is not None:
            p.clock.effects += 1
            sync.scheduler.changed(ptr.array)

    return run


# ---------------------------------------------------------------------------
# Builders: grid size and atomics (programs that talk to each other)
# ---------------------------------------------------------------------------


def _str_attr(op: Any, name: str, allowed: tuple[str, ...], default: str | None) -> str:
    """A string attribute of ``op`` checked against ``allowed``."""
    attrs = op.operation.attributes
    if name not in attrs:
        if default is None:
            raise ModelError(f"{_where(op)}: requires the attribute '{name}'")
        return default
    a = cast(attrs[name], ir.StringAttr)
    value = None if a is None else ir.StringAttr(a).value
    if value not in allowed:
        raise ModelError(f"{_where(op)}: '{name}' must be one of {', '.join(allowed)}")
    return value


def _segments(op: Any, sizes_if_absent: Sequence[int]) -> list[list[ir.Value]]:
    """The operand groups of ``op`` (``operandSegmentSizes``, else the given sizes)."""
    operands = list(op.operation.operands)
    attrs = op.operation.attributes
    if "operandSegmentSizes" in attrs:
        sizes = [int(x) for x in ir.DenseI32ArrayAttr(attrs["operandSegmentSizes"])]
    else:
        sizes = list(sizes_if_absent)
    if sum(sizes) != len(operands):
        raise ModelError(f"{_where(op)}: malformed operand segments {sizes}")
    out, i = [], 0
    for n in sizes:
        out.append(operands[i : i + n])
        i += n
    return out


_RMW_KINDS = ("add", "xchg", "max", "min")
_SEMS = ("relaxed", "acquire", "release", "acq_rel")
_SCOPES = ("cta", "gpu", "sys")


@_builder("tile.num_programs")
def _b_num_programs(c: _Compiler, op: Any) -> Exec:
    r = _res(c, op)
    axis = ir.IntegerAttr(op.operation.attributes["axis"]).value
    if axis not in (0, 1, 2):
        raise ModelError(f"{_where(op)}: axis must be 0, 1 or 2, got {axis}")

    def run(p: _Program, mask: np.ndarray) -> None:
        p.env[r] = np.full(p.W, p.run.grid[axis], dtype=np.int64)

    return run


@_builder("tile.atomic_rmw")
def _b_atomic_rmw(c: _Compiler, op: Any) -> Exec:
    where = _where(op)
    operands = _opnds(c, op)
    if len(operands) != 3 or len(op.operation.results) != 1:
        raise ModelError(f"{where}: expected (base, index, value) -> old value")
    base, index, value = operands
    r = _res(c, op)
    kind = _str_attr(op, "kind", _RMW_KINDS, None)
    sem = _str_attr(op, "sem", _SEMS, None)
    scope = _str_attr(op, "scope", _SCOPES, None)
    elem, shape = _value_elem(op.operation.results[0].type)
    if elem is None or not elem.is_int or shape is not None:
        raise ModelError(f"{where}: only scalar integer atomics are modelled")
    width = elem.width

    def wrap(v: int) -> int:
        return _wrap_int(v, width)

    c.concurrent = True

    def run(p: _Program, mask: np.ndarray) -> None:
        ptr: Pointer = p.env[base]
        off = int(_uniform(ptr.offset, mask, "the base pointer", where))
        i = int(_uniform(p.env[index], mask, "the atomic's index", where))
        v = int(_uniform(p.env[value], mask, "the atomic's value", where))
        loc = off + i
        if not 0 <= loc < ptr.array.size:
            raise ModelError(
                f"{where}: atomic on '{ptr.name}'[{loc}] outside its {ptr.array.size}-element array"
            )
        sync = p.run.sync
        assert sync is not None  # every run has one
        old = sync.atomic_rmw(p.clock, ptr.array, ptr.name, loc, kind, v, wrap, sem, scope, where)
        p.env[r] = np.full(p.W, old, dtype=np.int64)

    return run


@_builder("tile.load_scalar")
def _b_load_scalar(c: _Compiler, op: Any) -> Exec:
    """``base[index]`` (i32), once per program: device-side sizes (group_lens)."""
    where = _where(op)
    base, index = _opnds(c, op)
    r = _res(c, op)

    def run(p: _Program, mask: np.ndarray) -> None:
        sync = p.run.sync
        if sync is not None:
            sync.scheduler.point(p.clock)
        ptr: Pointer = p.env[base]
        loc = int(_uniform(ptr.offset, mask, "the base pointer", where))
        loc += int(_uniform(p.env[index], mask, "the index", where))
        if not 0 <= loc < ptr.array.size:
            raise ModelError(
                f"{where}: load of '{ptr.name}'[{loc}] outside its {ptr.array.size}-element array"
            )
        if sync is not None and sync.memory is not None:
            sync.memory.read(p.clock, ptr.array, ptr.name, np.array([loc]), where)
        p.env[r] = np.full(p.W, int(ptr.array[loc]), dtype=np.int64)

    return run


@_builder("tile.atomic_add_block")
def _b_atomic_add_block(c: _Compiler, op: Any) -> Exec:
    where = _where(op)
    base_v, shape_v, stride_v, off_v, value_v = _segments(op, ())
    if len(base_v) != 1 or len(value_v) != 1:
        raise ModelError(f"{where}: expected one base and one value")
    elem, block = _value_elem(value_v[0].type)
    if elem is None or block is None or elem.name not in ("f32", "f16", "bf16"):
        raise ModelError(f"{where}: atomic add takes f32, f16 or bf16 blocks")
    slots = (
        c.slot(base_v[0]),
        [c.slot(v) for v in shape_v],
        [c.slot(v) for v in stride_v],
        [c.slot(v) for v in off_v],
    )
    value = c.slot(value_v[0])
    sem = _str_attr(op, "sem", _SEMS, "relaxed")
    scope = _str_attr(op, "scope", _SCOPES, "gpu")
    c.concurrent = True

    def run(p: _Program, mask: np.ndarray) -> None:
        if not mask.all():
            raise ModelError(
                f"{where}: atomic_add_block under warp-divergent control flow is not modelled"
            )
        sync = p.run.sync
        assert sync is not None  # every run has one
        sync.scheduler.point(p.clock)
        ptr, inside, idx = _block_indices(p, mask, block, slots, where)
        add = np.asarray(p.env[value], dtype=np.float32)[inside]
        arr = ptr.array
        # Element-wise atomics: an fp32 add, then one rounding to the element
        # type; an element the block covers twice (stride 0) is added twice.
        if np.unique(idx).size == idx.size:
            arr[idx] = _to_storage(_round_to(arr[idx].astype(np.float32) + add, elem), elem)
        else:
            for k, a in zip(idx.tolist(), add.tolist(), strict=True):
                total = np.float32(arr[k]) + np.float32(a)
                arr[k] = _to_storage(_round_to(np.asarray(total), elem), elem)
        sync.atomic_block(p.clock, arr, ptr.name, idx, sem, scope, where)

    return run


# ---------------------------------------------------------------------------
# Builders: asynchronous MMA (tile.async_wmma, tile.async_wmma_wait)
# ---------------------------------------------------------------------------
#
# An async MMA reads its shared buffers for as long as it is in flight. The
# model computes its result when it is issued (exact, because a copy that
# writes a region an in-flight MMA reads is an error: see the copy's check of
# ``SharedBuffer.mma_reading``) and hands out the result wrapped in
# :class:`_PendingResult` until a wait retires the MMA: any op but another
# async MMA (its accumulator), a wait or a loop carry that reads it raises.
# A ``use_acc`` operand false (warp-uniform) makes the result ``a @ b``: the
# accumulator's values are not read (NaNs or a pending result in it do not
# matter), while the buffers are read and race-checked as always.


@dataclass
class _AsyncMma:
    """One in-flight ``tile.async_wmma`` of a program."""

    where: str
    reads: list[tuple[SharedBuffer, tuple]]
    retired: bool = False

    def retire(self) -> None:
        for buf, prefix in self.reads:
            buf.mma_reading[prefix] -= 1
        self.retired = True


class _PendingResult:
    """The result of an async MMA that has not retired: not a readable tensor."""

    __slots__ = ("mma", "value")

    def __init__(self, value: np.ndarray, mma: _AsyncMma) -> None:
        self.value = value
        self.mma = mma

    def _fail(self) -> ModelError:
        return ModelError(
            f"read of the result of {self.mma.where} while the MMA is still in flight; a "
            "tile.async_wmma_wait with a small enough num must retire it first"
        )

    def __getattr__(self, name: str) -> Any:
        raise self._fail()

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise self._fail()


def _mma_race_message(p: _Program, buf: SharedBuffer, index: tuple, where: str) -> str:
    region = np.zeros(buf.data.shape, dtype=np.bool_)
    region[index] = True
    readers = [
        m.where
        for prog in p.partners()
        for m in prog.mmas
        for b, pre in m.reads
        if b is buf and region[pre].any()
    ]
    return (
        "write of shared memory an in-flight MMA reads: "
        f"{where} in program {p.pid} writes the {buf.label} while {len(readers)} in-flight "
        f"async MMA(s) read it ({', '.join(dict.fromkeys(readers))}); a tile.async_wmma_wait "
        "must retire that MMA before the copy is issued"
    )


def _settled(value: Any) -> np.ndarray:
    """An accumulator operand: a tensor, or a pending MMA result (accumulating
    into it is ordered after that MMA, as the hardware orders them)."""
    return value.value if isinstance(value, _PendingResult) else value


@_builder("tile.async_wmma")
def _b_async_wmma(c: _Compiler, op: Any) -> Exec:
    a, b, acc = (c.slot(v) for v in (op.a, op.b, op.c))
    use_acc = None if op.use_acc is None else c.slot(op.use_acc)
    r = _res(c, op)
    where = _where(op)
    elems = [_value_elem(v.type.element_type)[0] for v in (op.a, op.b)]

    def read(p: _Program, slot: int, mask: np.ndarray, elem: _Elem, name: str):
        index = f"the index of buffer {name}"
        view = p.env[slot]
        buf, prefix = _read_shared(p, view, mask, index, where)
        return buf, prefix, _from_storage(view.read(prefix), elem).astype(np.float64)

    def run(p: _Program, mask: np.ndarray) -> None:
        ba, pa, x = read(p, a, mask, elems[0], "a")
        bb, pb, y = read(p, b, mask, elems[1], "b")
        product = x @ y
        if use_acc is None or _uniform(p.env[use_acc], mask, "use_acc", where):
            product += _settled(p.env[acc]).astype(np.float64)
        mma = _AsyncMma(where, [(ba, pa), (bb, pb)])
        for buf, prefix in mma.reads:
            buf.mma_reading[prefix] += 1
        p.mmas.append(mma)
        p.env[r] = _PendingResult(product.astype(np.float32), mma)

    return run


@_builder("tile.async_wmma_wait")
def _b_async_wmma_wait(c: _Compiler, op: Any) -> Exec:
    num = ir.IntegerAttr(op.operation.attributes["num"]).value
    (v,) = _opnds(c, op)
    r = _res(c, op)

    def run(p: _Program, mask: np.ndarray) -> None:
        while len(p.mmas) > num:
            p.mmas.popleft().retire()
        value = p.env[v]
        if isinstance(value, _PendingResult) and value.mma.retired:
            value = value.value
        p.env[r] = value

    return run


def _store_race_message(p: _Program, buf: SharedBuffer, index: tuple, where: str) -> str:
    region = np.zeros(buf.data.shape, dtype=np.bool_)
    region[index] = True
    stores = [
        rec.op
        for q in p.queues
        for rec in q
        if getattr(rec, "reads", None) is buf and region[rec.read_index].any()
    ]
    return (
        "write of shared memory an in-flight TDM store reads: "
        f"{where} in program {p.pid} writes the {buf.label} while "
        f"{len(stores)} in-flight TDM store instruction(s) read it "
        f"({', '.join(dict.fromkeys(stores))}); a tile.async_tdm_wait must retire the store first"
    )


# ---------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------


def parse_module(text: str) -> ir.Module:
    """Parse tile IR text in a fresh context with the tile dialect loaded."""
    from gemm_opt.dialect import make_context

    ctx = make_context()
    with ctx:
        return ir.Module.parse(text)


def _functions(module: ir.Module) -> list[Any]:
    return [op for op in module.body.operations if op.operation.name == "func.func"]


def _func_name(f: Any) -> str:
    return ir.StringAttr(f.operation.attributes["sym_name"]).value


def _find_function(module: ir.Module, name: str | None) -> Any:
    funcs = _functions(module)
    if name is None:
        if len(funcs) != 1:
            names = [_func_name(f) for f in funcs]
            raise ModelError(f"the module has functions {names}; name the one to run")
        return funcs[0]
    for f in funcs:
        if _func_name(f) == name:
            return f
    raise ModelError(f"no function @{name} in the module")


#: The characters of an SSA name after its ``%`` (LangRef's ``suffix-id``).
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789$._-")


def _arg_names_from_locations(text: str, args: Sequence[Any]) -> list[str] | None:
    """The source names of a function's arguments, if the text still has them.

    The parser keeps no SSA names, but it gives each block argument the
    location of its ``%name`` in the text it parsed: read the name there.
    ``None`` when an argument has no such location (built, not parsed) or the
    text there is no ``%name:`` (text printed from another).
    """
    lines = text.splitlines()
    names = []
    for arg in args:
        line, col = position_of(arg.location)
        source = lines[line - 1] if 0 < line <= len(lines) else ""
        if source[col - 1 : col] != "%":
            return None
        end = col
        while end < len(source) and source[end] in _NAME_CHARS:
            end += 1
        if end == col or not source[end:].lstrip().startswith(":"):
            return None  # not an argument declaration: the text is not the parsed one
        names.append(source[col:end])
    return names


_STORAGE_OK = {
    "f16": (np.float16,),
    "bf16": (np.float32,),
    "f32": (np.float32,),
    "f64": (np.float64,),
}


def _pointer(array: Any, elem: _Elem, name: str, num_warps: int) -> Pointer:
    if not isinstance(array, np.ndarray):
        raise ModelError(f"argument '{name}' is a pointer: pass a numpy array")
    if not array.flags.c_contiguous or not array.flags.writeable:
        raise ModelError(f"argument '{name}' must be a writeable C-contiguous array")
    dt = array.dtype
    if elem.is_int:
        ok = dt.kind in "iub" and dt.itemsize * 8 == max(8, elem.width)
        if ok and dt.kind == "u":
            array = array.view(dt.str.replace("u", "i"))
    else:
        ok = dt.type in _STORAGE_OK[elem.name]
    if not ok:
        raise ModelError(
            f"argument '{name}' points to {elem.name}: expected a "
            f"{np.dtype(elem.storage).name} array, got {dt.name}"
        )
    flat = array.reshape(-1)
    return Pointer(flat, np.zeros(num_warps, dtype=np.int64), name, elem)


def _scalar_arg(value: Any, t: ir.Type, name: str, num_warps: int) -> np.ndarray:
    elem = _elem(t)
    if elem is None:
        raise ModelError(f"argument '{name}' has unsupported type {t}")
    if elem.is_int:
        return _wrap(np.full(num_warps, int(value), dtype=np.int64), elem.width)
    return _round_to(np.full(num_warps, float(value)), elem)


class Interpreter:
    """A compiled function, ready to run over grids.

    ``Interpreter(module, "gemm").run(args, grid)``; see :func:`run_function`.
    """

    def __init__(
        self,
        module: ir.Module | str,
        func_name: str | None = None,
        *,
        num_warps: int | None = None,
        arg_names: Sequence[str] | None = None,
    ) -> None:
        text = module if isinstance(module, str) else None
        self.module = parse_module(module) if isinstance(module, str) else module
        self.func = _find_function(self.module, func_name)
        self.name = _func_name(self.func)
        if num_warps is None:
            num_warps = enclosing_int_attr(self.func.operation, NUM_WARPS)
        if num_warps is None or num_warps < 1:
            raise ModelError(f"@{self.name}: no '{NUM_WARPS}' on an enclosing op")
        self.num_warps = int(num_warps)
        body = self.func.operation.regions[0].blocks[0]
        self.arg_types = [a.type for a in body.arguments]
        n = len(self.arg_types)
        names = list(arg_names) if arg_names is not None else None
        if names is None and text is not None:
            names = _arg_names_from_locations(text, list(body.arguments))
        if names is None or len(names) != n:
            names = [f"arg{i}" for i in range(n)]
        self.arg_names = names
        self._compiler = _Compiler(self.num_warps)
        self.body = self._compiler.block(body)
        self.num_slots = len(self._compiler.slots)

    def _bind(self, args: Sequence[Any] | Mapping[Any, Any]) -> list[Any]:
        n = len(self.arg_types)
        if isinstance(args, Mapping):
            values = []
            for i, name in enumerate(self.arg_names):
                for key in (name, i, f"arg{i}"):
                    if key in args:
                        values.append(args[key])
                        break
                else:
                    raise ModelError(f"@{self.name}: missing argument '{name}'")
            known = {*self.arg_names, *range(n), *(f"arg{i}" for i in range(n))}
            extra = [k for k in args if k not in known]
            if extra:
                raise ModelError(f"@{self.name}: unknown arguments {extra}")
            return values
        if len(args) != n:
            raise ModelError(f"@{self.name} takes {n} arguments, got {len(args)}")
        return list(args)

    def run(
        self,
        args: Sequence[Any] | Mapping[Any, Any],
        grid: Sequence[int] = (1, 1, 1),
        *,
        check_uninitialized: bool = True,
        num_resident: int = 4,
        seed: int | None = None,
    ) -> RunResult:
        values = self._bind(args)
        grid3 = (*(int(g) for g in grid), 1, 1, 1)[:3]
        if any(g < 1 for g in grid3):
            raise ModelError(f"the grid must be positive, got {list(grid3)}")
        if isinstance(num_resident, bool) or not isinstance(num_resident, int):
            raise ModelError(f"num_resident must be an int, got {num_resident!r}")
        if num_resident < 1:
            raise ModelError(f"num_resident must be at least 1, got {num_resident}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ModelError(f"seed must be an int or None, got {seed!r}")
        nw = self.num_warps
        bound: list[Any] = []
        for value, t, name in zip(values, self.arg_types, self.arg_names, strict=True):
            if isinstance(t, PtrType):
                elem = _elem(t.element_type)
                if elem is None:
                    raise ModelError(f"argument '{name}' points to unsupported {t}")
                bound.append(_pointer(value, elem, name, nw))
            else:
                bound.append(_scalar_arg(value, t, name, nw))
        pids = [(x, y, z) for z, y, x in itertools.product(*(range(g) for g in reversed(grid3)))]
        stats = Stats(nw)
        sync_stats = SyncStats(seed, num_resident)
        many = len(pids) > 1
        concurrent = many and self._compiler.concurrent
        sync = Grid(pids, sync_stats, None, check_memory=many)
        state = _Run(stats, check_uninitialized, grid3, sync)
        full = np.ones(nw, dtype=np.bool_)
        clocks = [ProgramClock(i, pid) for i, pid in enumerate(pids)]

        def execute(clock: ProgramClock) -> list[Any]:
            prog = _Program(self.num_slots, nw, clock.pid, state, clock)
            for s, v in zip(self.body.arg_slots, bound, strict=True):
                prog.env[s] = v
            out = prog.exec_block(self.body, full)
            stats.in_flight_at_exit += sum(len(q) for q in prog.queues) + len(prog.tracked)
            return out

        if concurrent:
            sync_stats.concurrent = True
            sched = Threaded(clocks, execute, num_resident, seed, sync_stats)
            sync.scheduler = sched
            results = sched.run()
        else:
            # No program can wait on another: run them in order in this thread.
            results: list[Any] = []
            sync.scheduler = Inline(sync_stats, lambda: len(results))
            with np.errstate(all="ignore"):
                sync_stats.max_resident = 1
                for clock in clocks:
                    sync_stats.start_order.append(clock.pid)
                    results.append(execute(clock))
                    sync_stats.finish_order.append(clock.pid)
        returns = dict(zip(pids, results, strict=True))
        named = dict(zip(self.arg_names, values, strict=True))
        return RunResult(named, stats, returns, grid3, sync_stats)


def run_function(
    module: ir.Module | str,
    func_name: str | None = None,
    args: Sequence[Any] | Mapping[Any, Any] = (),
    grid: Sequence[int] = (1, 1, 1),
    *,
    num_warps: int | None = None,
    arg_names: Sequence[str] | None = None,
    check_uninitialized: bool = True,
    num_resident: int = 4,
    seed: int | None = None,
) -> RunResult:
    """Interpret ``func_name`` of ``module`` for every program of ``grid``.

    ``module`` is a parsed module or its text (argument names are then read
    from the text, so ``args`` may be a dict keyed by them; otherwise keys are
    positions or ``"argN"``). Pointer arguments are numpy arrays, updated in
    place; scalars are Python numbers. ``num_resident`` programs run at once,
    interleaved at atomics and global block accesses; ``seed=None`` runs each
    until it waits or finishes, an int picks a seeded random interleaving
    (see :mod:`gemm_opt.model.concurrency`).
    """
    interp = Interpreter(module, func_name, num_warps=num_warps, arg_names=arg_names)
    return interp.run(
        args,
        grid,
        check_uninitialized=check_uninitialized,
        num_resident=num_resident,
        seed=seed,
    )


GEMM_ARGS = ("a", "b", "c", "M", "N", "K", "lda", "ldb", "ldc")
"""The names :func:`run_gemm` gives the kernel's arguments (and statistics use)."""


def _gemm_function(module: ir.Module, func_name: str | None) -> Any:
    def matches(f: Any) -> bool:
        types = list(f.operation.regions[0].blocks[0].arguments)
        types = [a.type for a in types]
        if len(types) != 9:
            return False
        ptrs = all(isinstance(t, PtrType) for t in types[:3])
        ints = all(cast(t, ir.IntegerType) is not None for t in types[3:])
        return ptrs and ints

    if func_name is not None:
        return _find_function(module, func_name)
    funcs = [f for f in _functions(module) if matches(f)]
    if len(funcs) != 1:
        raise ModelError(
            "expected exactly one function with the GEMM signature (a, b, c: !tile.ptr, "
            f"M, N, K, lda, ldb, ldc), found {len(funcs)}"
        )
    return funcs[0]


def _gemm_block(func: Any) -> tuple[int, int]:
    """(BM, BN): the shape of the block stored through argument 2 (C)."""
    c_arg = func.operation.regions[0].blocks[0].arguments[2]
    found: list[tuple[int, int]] = []

    def walk(block: ir.Block) -> None:
        for op in block.operations:
            if op.operation.name == "tile.store_block" and op.base == c_arg:
                _, shape = _value_elem(op.value.type)
                if shape is not None and len(shape) == 2:
                    found.append((shape[0], shape[1]))
            elif op.operation.name == "tile.async_tdm_copy_local_to_global":
                # A TDM store of C: its descriptor's block (the descriptor made of C).
                root = op.desc
                while isinstance(root.owner, ir.OpView | ir.Operation) and (
                    root.owner.name == "tile.update_tensor_descriptor"
                ):
                    root = root.owner.operands[0]
                owner = root.owner
                if isinstance(owner, ir.OpView | ir.Operation) and owner.operands[0] == c_arg:
                    shape = list(op.desc.type.shape)
                    if len(shape) == 2:
                        found.append((shape[0], shape[1]))
            for region in op.operation.regions:
                for b in region.blocks:
                    walk(b)

    walk(func.operation.regions[0].blocks[0])
    if not found:
        raise ModelError("cannot find the 2-D tile.store_block of C to size the grid")
    return found[0]


def _as_storage(x: np.ndarray, elem: _Elem) -> np.ndarray:
    if elem.is_int:
        return np.ascontiguousarray(x, dtype=elem.storage)
    return np.ascontiguousarray(_round_to(np.asarray(x, dtype=np.float64), elem))


def run_gemm(
    module: ir.Module | str,
    a: np.ndarray,
    b: np.ndarray,
    *,
    func_name: str | None = None,
    grid: Sequence[int] | None = None,
    num_warps: int | None = None,
    check_uninitialized: bool = True,
    return_result: bool = False,
    num_resident: int = 4,
    seed: int | None = None,
) -> np.ndarray | tuple[np.ndarray, RunResult]:
    """C = A @ B through the GEMM kernel of ``module``.

    The kernel is the function with the signature ``(a, b, c: !tile.ptr, M, N,
    K, lda, ldb, ldc)`` (row-major operands). A and B are converted to the
    pointers' element types (bf16 by rounding); C starts as NaN so that
    elements the kernel does not store stand out. The grid is
    ``(cdiv(M, BM), cdiv(N, BN), 1)`` with ``BM x BN`` the block stored into C
    (program_id axis 0 walks M, axis 1 walks N), unless ``grid`` is given.
    With ``return_result`` the :class:`RunResult` (statistics) comes too;
    ``num_resident`` and ``seed`` are :func:`run_function`'s.
    """
    mod = parse_module(module) if isinstance(module, str) else module
    func = _gemm_function(mod, func_name)
    arg_types = [x.type for x in func.operation.regions[0].blocks[0].arguments]
    elems = []
    for t in arg_types[:3]:
        e = _elem(t.element_type) if isinstance(t, PtrType) else None
        if e is None:
            raise ModelError(f"unsupported GEMM pointer type {t}")
        elems.append(e)
    a = np.asarray(a)
    b = np.asarray(b)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ModelError(f"cannot multiply {a.shape} by {b.shape}")
    m, k = a.shape
    n = b.shape[1]
    a_mem = _as_storage(a, elems[0])
    b_mem = _as_storage(b, elems[1])
    if elems[2].is_int:
        c_mem = np.zeros((m, n), dtype=elems[2].storage)
    else:
        c_mem = np.full((m, n), np.nan, dtype=elems[2].storage)
    if grid is None:
        bm, bn = _gemm_block(func)
        grid = (-(-m // bm), -(-n // bn), 1)
    interp = Interpreter(mod, _func_name(func), num_warps=num_warps, arg_names=GEMM_ARGS)
    args = [a_mem, b_mem, c_mem, m, n, k, k, n, n]
    result = interp.run(
        args, grid, check_uninitialized=check_uninitialized, num_resident=num_resident, seed=seed
    )
    return (c_mem, result) if return_result else c_mem


# The barrier ops' builders join _BUILDERS (they wrap the copy builder).
from gemm_opt.model import barriers as _barriers  # noqa: E402, F401

# tile.warp_specialize: partitions run as concurrent agents.
from gemm_opt.model import warp_specialize as _warp_specialize  # noqa: E402, F401

__all__ = [
    "GEMM_ARGS",
    "CopyEvent",
    "Descriptor",
    "Interpreter",
    "ModelError",
    "Pointer",
    "RunResult",
    "SharedBuffer",
    "SharedView",
    "Stats",
    "SyncStats",
    "bf16_round",
    "parse_module",
    "run_function",
    "run_gemm",
]
