"""The values the model computes with: element types and their storage, global
pointers, TDM descriptors, shared buffers and views, in-flight TDM
instructions, and the statistics and result of a run.

Every op family reads and writes these; none of them knows an op.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gemm_opt.core.ext_compat import cast, ir
from gemm_opt.core.fp8 import decode, encode, format_of_mlir_type
from gemm_opt.model.concurrency import SyncStats
from gemm_opt.model.errors import ModelError


@dataclass(frozen=True)
class Elem:
    """An element type: register dtype, memory (storage) dtype, integer width."""

    name: str
    is_int: bool
    width: int
    dtype: np.dtype
    storage: np.dtype
    bf16: bool = False
    #: 8-bit floats: the :class:`gemm_opt.core.fp8.Fp8Format` name. Memory holds
    #: the codes (uint8), registers their exact values (float32).
    fp8: str | None = None


_INT_STORAGE = {1: np.bool_, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


def elem_of(t: ir.Type) -> Elem | None:
    """The element info of a scalar type (None for non-numeric types)."""
    it = cast(t, ir.IntegerType)
    if it is not None:
        w = ir.IntegerType(it).width
        storage = np.dtype(_INT_STORAGE.get(w, np.int64))
        return Elem(f"i{w}", True, w, np.dtype(np.int64), storage)
    if cast(t, ir.IndexType) is not None:
        return Elem("index", True, 64, np.dtype(np.int64), np.dtype(np.int64))
    if cast(t, ir.F16Type) is not None:
        return Elem("f16", False, 16, np.dtype(np.float16), np.dtype(np.float16))
    if cast(t, ir.BF16Type) is not None:
        return Elem("bf16", False, 16, np.dtype(np.float32), np.dtype(np.float32), True)
    if cast(t, ir.F32Type) is not None:
        return Elem("f32", False, 32, np.dtype(np.float32), np.dtype(np.float32))
    if cast(t, ir.F64Type) is not None:
        return Elem("f64", False, 64, np.dtype(np.float64), np.dtype(np.float64))
    fmt = format_of_mlir_type(str(t))
    if fmt is not None:
        return Elem(str(t), False, 8, np.dtype(np.float32), np.dtype(np.uint8), fp8=fmt.value)
    return None


def tensor_type(t: ir.Type) -> ir.RankedTensorType | None:
    rt = cast(t, ir.RankedTensorType)
    return None if rt is None else ir.RankedTensorType(rt)


def value_elem(t: ir.Type) -> tuple[Elem | None, tuple[int, ...] | None]:
    """(element info, tensor shape or None for a scalar) of a value type."""
    rt = tensor_type(t)
    if rt is not None:
        return elem_of(rt.element_type), tuple(rt.shape)
    return elem_of(t), None


def bf16_round(x: Any) -> np.ndarray:
    """Round float32 values to bf16 (nearest even), returned as float32."""
    x = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    bits = x.view(np.uint32)
    lsb = (bits >> np.uint32(16)) & np.uint32(1)
    rounded = (bits + np.uint32(0x7FFF) + lsb) & np.uint32(0xFFFF0000)
    # Equivalent mutant: 0x00400001 (the low half is masked off).
    quiet_nan = (bits | np.uint32(0x00400000)) & np.uint32(0xFFFF0000)
    out = np.where(np.isnan(x), quiet_nan, rounded).astype(np.uint32)
    return out.view(np.float32).reshape(x.shape)


def round_to(x: np.ndarray, elem: Elem) -> np.ndarray:
    """Convert float data to ``elem``'s register dtype, rounding bf16 and the 8-bit
    formats (once, to nearest even; overflow as the format's ``cast_overflow``)."""
    if elem.fp8 is not None:
        return decode(encode(np.asarray(x), elem.fp8), elem.fp8, np.float32)
    out = np.asarray(x).astype(elem.dtype)
    return bf16_round(out) if elem.bf16 else out


def wrap_bits(x: Any, width: int) -> np.ndarray:
    """Sign-extend the low ``width`` bits of integers to canonical int64."""
    x = np.asarray(x)
    if x.dtype == np.uint64:
        x = x.view(np.int64)
    # Equivalent mutant: copy=True (the same values; the copy only costs time).
    x = x.astype(np.int64, copy=False)
    if width >= 64:
        return x
    if width == 1:
        return -(x & 1)
    half = np.int64(1 << (width - 1))
    mask = np.int64((1 << width) - 1)
    # Equivalent mutant: x - half (it differs from x + half by 2**width, masked off).
    return ((x + half) & mask) - half


def unsigned_bits(x: np.ndarray, width: int) -> np.ndarray:
    """The low ``width`` bits of canonical integers, as uint64."""
    u = np.ascontiguousarray(np.asarray(x, dtype=np.int64)).view(np.uint64)
    # Equivalent mutant: > 64 or >= 65 (at 64 the mask keeps all 64 bits).
    if width >= 64:
        return u
    return u & np.uint64((1 << width) - 1)


def from_storage(data: np.ndarray, elem: Elem) -> np.ndarray:
    if elem.fp8 is not None:
        return decode(np.asarray(data, dtype=np.uint8), elem.fp8, np.float32)
    if elem.is_int:
        return wrap_bits(data.astype(np.int64), elem.width)
    return np.array(data, dtype=elem.dtype)


def to_storage(value: np.ndarray, elem: Elem) -> np.ndarray:
    if elem.fp8 is not None:
        return encode(np.asarray(value), elem.fp8)
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
    elem: Elem


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

    def __init__(self, label: str, shape: tuple[int, ...], elem: Elem) -> None:
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
class InFlight:
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


def wrap_int(v: int, width: int) -> int:
    half = 1 << (width - 1)
    # Equivalent mutant: v - half (it differs from v + half by 2**width, taken modulo).
    return ((int(v) + half) % (1 << width)) - half


__all__ = [
    "CopyEvent",
    "Descriptor",
    "Elem",
    "InFlight",
    "Pointer",
    "RunResult",
    "SharedBuffer",
    "SharedView",
    "Stats",
    "bf16_round",
    "elem_of",
    "from_storage",
    "round_to",
    "tensor_type",
    "to_storage",
    "unsigned_bits",
    "value_elem",
    "wrap_bits",
    "wrap_int",
]
