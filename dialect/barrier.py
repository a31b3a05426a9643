"""Shared-memory barrier ops and the TDM store of the ``tile`` dialect
(registered by :func:`gemm_opt.dialect.load_all`).

A Hopper-class pipeline tracks each stage of a buffer ring with its own
barrier instead of a per-warp copy counter: the consumer waits for *its*
stage, not for "all but the last N copies". These ops follow Gluon's
``mbarrier`` API (``ttng.init_barrier``, ``ttng.barrier_expect``,
``ttng.arrive_barrier``, ``ttng.wait_barrier``):

* ``tile.barrier_alloc`` allocates a ring of ``N`` barriers in shared memory
  (``!tile.mbarrier_ring<N>``); ``tile.barrier_index`` selects one
  (``!tile.mbarrier<i64>``, the type a copy's ``barrier`` operand takes);
* ``tile.barrier_init {count}`` starts phase 0 expecting ``count`` arrivals;
* ``tile.barrier_expect {bytes}`` is one arrival that also announces
  ``bytes`` of copy data for the current phase;
* ``tile.barrier_arrive {count}`` is ``count`` arrivals (default 1);
* a ``tile.async_tdm_copy_global_to_local`` with a ``barrier`` operand
  completes its bytes on that barrier when its data has landed (it is not
  an arrival, and only a barrier wait completes it: ``tile.async_tdm_wait``
  does not count it);
* ``tile.barrier_wait(%bar, %phase)`` returns once phase ``phase`` (its
  parity) of the barrier has completed.

A phase completes when its arrivals reach ``count`` and every announced
byte has landed; the next phase then starts with the same count. Each op is
executed by the program as a whole (one arrival per op, whatever the number
of warps), and an optional ``pred`` (i1) false makes it a no-op.

The TDM store, ``tile.async_tdm_copy_local_to_global``, writes a shared
buffer to the descriptor's block asynchronously; it reads the buffer until
a ``tile.async_tdm_wait`` retires it (stores and copies share that counter,
as they share gfx1250's tensor counter). ``tile.local_store`` writes a
register tensor into a shared buffer (the epilogue's way into a store).

The rules that depend on run-time state (a wait that can never complete, a
read of a buffer before the wait that orders its copy, a write to a buffer a
store still reads) are the executable model's
(:mod:`gemm_opt.model.interpreter`).
"""

from typing import Any

from gemm_opt.core.ext_compat import cast, ext, ir
from gemm_opt.core.layouts import PaddedShared
from gemm_opt.dialect.tile import (
    MBarrierType,
    SharedType,
    TensorDescType,
    Tile,
    TileOp,
    VerifyError,
    _check_i1,
    _check_ints,
    _type_of,
    cache_modifier,
    check_register_layout,
    check_tdm_layout,
    check_writable,
    constant_int,
    int_value,
)

#: Barriers in one ``tile.barrier_alloc`` (a ring deeper than any pipeline).
MAX_RING = 64
#: A phase's arrival count fits mbarrier's 20-bit pending count on cuda:90.
MAX_ARRIVALS = (1 << 20) - 1
#: A phase's announced bytes fit mbarrier's 20-bit transaction count.
MAX_BYTES = (1 << 20) - 1


class MBarrierRingType(Tile.Type, name="mbarrier_ring"):
    """``!tile.mbarrier_ring<4 : i32>``: ``N`` shared-memory barriers (a ring)."""

    size: Any

    @property
    def num(self) -> int:
        """The number of barriers (checked: 1 to :data:`MAX_RING`)."""
        n = int_value(self.size, "!tile.mbarrier_ring size")
        if not 1 <= n <= MAX_RING:
            raise VerifyError(f"!tile.mbarrier_ring holds 1 to {MAX_RING} barriers, got {n}")
        return n


def _barrier(value: ir.Value, what: str = "the barrier operand") -> MBarrierType:
    t = value.type
    if not isinstance(t, MBarrierType):
        raise VerifyError(f"{what} must be one barrier of a ring (tile.barrier_index), got {t}")
    if str(t.width) != "i64":
        raise VerifyError(f"{what}: barriers are 64-bit (i64), got {t}")
    return t


def _check_targets(op: TileOp, what: str) -> None:
    """Barriers and TDM stores exist on TDM targets (gfx1250) and cuda:90 (TMA)."""
    targets = op.targets()
    if targets and not any(t.tdm or t.nvidia for t in targets):
        names = ", ".join(t.name for t in targets)
        raise VerifyError(f"{what} needs TDM (gfx1250) or TMA (cuda:90); {names} has neither")


def _positive(op: TileOp, name: str, limit: int, default: int | None = None) -> int:
    """The i32 attribute ``name``: 1 to ``limit`` (``default`` when absent and allowed)."""
    value = op.int_attr(name, required=default is None)
    if value is None:
        return default  # type: ignore[return-value]
    if not 1 <= value <= limit:
        raise VerifyError(f"{name} must be from 1 to {limit}, got {value}")
    return value


# ---- barriers ----------------------------------------------------------------------


class BarrierAllocOp(TileOp, name="barrier_alloc"):
    """Allocate a ring of barriers in shared memory (8 bytes each).

    ```mlir
    %bars = "tile.barrier_alloc"() : () -> !tile.mbarrier_ring<3 : i32>
    ```
    Rules: the ring holds 1 to :data:`MAX_RING` barriers. Each barrier must be
    initialised with ``tile.barrier_init`` before any other use.
    """

    result: ext.Result[MBarrierRingType]

    def verify(self) -> None:
        _type_of(self.result, MBarrierRingType).num  # noqa: B018 (checks the size)
        _check_targets(self, "a shared-memory barrier")


class BarrierIndexOp(TileOp, name="barrier_index", traits=[ext.Pure]):
    """Select barrier ``index`` of a ring.

    ```mlir
    %bar = "tile.barrier_index"(%bars, %i)
         : (!tile.mbarrier_ring<3 : i32>, i32) -> !tile.mbarrier<i64>
    ```
    Rules: an i32 index; a constant index is in range.
    """

    ring: ext.Operand[MBarrierRingType]
    index: ext.Operand[Any]
    result: ext.Result[MBarrierType]

    def verify(self) -> None:
        n = _type_of(self.ring, MBarrierRingType).num
        _check_ints([self.index], 32, "index")
        _barrier(self.result, "the result")
        index = constant_int(self.index)
        if index is not None and not 0 <= index < n:
            raise VerifyError(
                f"index {index} is out of range for a ring of {n} barriers (0 to {n - 1})"
            )


class BarrierInitOp(TileOp, name="barrier_init"):
    """Start phase 0 of a barrier, expecting ``count`` arrivals per phase.

    ```mlir
    "tile.barrier_init"(%bar) {count = 1 : i32} : (!tile.mbarrier<i64>) -> ()
    ```
    Rules: ``count`` is a required i32 from 1 to :data:`MAX_ARRIVALS`.
    """

    ATTRS = ("count",)
    barrier: ext.Operand[MBarrierType]

    def verify(self) -> None:
        _barrier(self.barrier)
        _check_targets(self, "a shared-memory barrier")
        _positive(self, "count", MAX_ARRIVALS)

    @property
    def count(self) -> int:
        return _positive(self, "count", MAX_ARRIVALS)


class BarrierExpectOp(TileOp, name="barrier_expect"):
    """Arrive once and announce ``bytes`` of copy data for the current phase.

    The phase cannot complete before copies tracked by this barrier have
    delivered the announced bytes (Hopper's ``mbarrier.arrive.expect_tx``).

    ```mlir
    "tile.barrier_expect"(%bar, %p) {operandSegmentSizes = array<i32: 1, 1>, bytes = 32768 : i32}
      : (!tile.mbarrier<i64>, i1) -> ()
    ```
    Rules: ``bytes`` is a required i32 from 1 to :data:`MAX_BYTES`; ``pred``
    is i1.
    """

    ATTRS = ("bytes",)
    barrier: ext.Operand[MBarrierType]
    pred: ext.Operand[Any] | None = None

    def verify(self) -> None:
        _barrier(self.barrier)
        _check_targets(self, "a shared-memory barrier")
        _check_i1(self.pred, "pred")
        _positive(self, "bytes", MAX_BYTES)

    @property
    def bytes(self) -> int:
        return _positive(self, "bytes", MAX_BYTES)


class BarrierArriveOp(TileOp, name="barrier_arrive"):
    """Arrive ``count`` times (default 1) on a barrier.

    ```mlir
    "tile.barrier_arrive"(%bar) {operandSegmentSizes = array<i32: 1, 0>, count = 1 : i32}
      : (!tile.mbarrier<i64>) -> ()
    ```
    Rules: ``count``, when given, is an i32 from 1 to :data:`MAX_ARRIVALS`;
    ``pred`` is i1.
    """

    ATTRS = ("count",)
    barrier: ext.Operand[MBarrierType]
    pred: ext.Operand[Any] | None = None

    def verify(self) -> None:
        _barrier(self.barrier)
        _check_targets(self, "a shared-memory barrier")
        _check_i1(self.pred, "pred")
        # Equivalent mutant: default=2; verify only checks, any default makes count optional.
        _positive(self, "count", MAX_ARRIVALS, default=1)

    @property
    def count(self) -> int:
        return _positive(self, "count", MAX_ARRIVALS, default=1)


class BarrierWaitOp(TileOp, name="barrier_wait"):
    """Wait until the phase with parity ``phase`` of a barrier has completed.

    ``phase`` is the parity (its lowest bit) of the phase to wait for, as in
    Gluon's ``mbarrier.wait``: a ring stage used for the ``n``-th time waits
    with ``n % 2``.

    ```mlir
    "tile.barrier_wait"(%bar, %phase) {operandSegmentSizes = array<i32: 1, 1, 0>}
      : (!tile.mbarrier<i64>, i32) -> ()
    ```
    Rules: ``phase`` is i1 or i32; ``pred`` is i1.
    """

    barrier: ext.Operand[MBarrierType]
    phase: ext.Operand[Any]
    pred: ext.Operand[Any] | None = None

    def verify(self) -> None:
        _barrier(self.barrier)
        _check_targets(self, "a shared-memory barrier")
        t = cast(self.phase.type, ir.IntegerType)
        if t is None or ir.IntegerType(t).width not in (1, 32):
            raise VerifyError(f"phase must be i1 or i32, got {self.phase.type}")
        _check_i1(self.pred, "pred")


# ---- stores from shared memory -----------------------------------------------------


class LocalStoreOp(TileOp, name="local_store"):
    """Write a register tensor into a shared buffer.

    ```mlir
    "tile.local_store"(%acc, %buf)
      : (tensor<128x128xf16, #acc>, !tile.shared<tensor<128x128xf16, #s>>) -> ()
    ```
    Rules: same shape and element type as the buffer; a register layout.
    """

    value: ext.Operand[Any]
    dest: ext.Operand[SharedType]

    def verify(self) -> None:
        dest = _type_of(self.dest, SharedType)
        check_writable(self.dest, "dest")
        vt = cast(self.value.type, ir.RankedTensorType)
        if vt is None:
            raise VerifyError(f"value must be a ranked tensor, got {self.value.type}")
        vt = ir.RankedTensorType(vt)
        if tuple(vt.shape) != dest.shape or vt.element_type != dest.element_type:
            raise VerifyError(
                f"value {vt} must match the buffer's shape {list(dest.shape)} and "
                f"element type {dest.element_type}"
            )
        check_register_layout(self, vt, "value")


class AsyncTDMCopyLocalToGlobalOp(TileOp, name="async_tdm_copy_local_to_global"):
    """Asynchronously store a shared buffer to the descriptor's block with TDM.

    The store reads ``src`` until a ``tile.async_tdm_wait`` retires it (stores
    count with copies there); elements outside the tensor are not written.

    ```mlir
    "tile.async_tdm_copy_local_to_global"(%d, %buf)
      : (!tile.tensor_desc<tensor<128x128xf16, #s>>, !tile.shared<tensor<128x128xf16, #s>>) -> ()
    ```
    Rules: ``src`` has the descriptor block's shape, element type and layout;
    ``cache`` is one of ``CACHE_MODIFIERS``; on TDM targets a padded layout
    pads whole rows (its interval is the innermost block dimension).
    """

    ATTRS = ("cache",)
    desc: ext.Operand[TensorDescType]
    src: ext.Operand[SharedType]

    def verify(self) -> None:
        desc = _type_of(self.desc, TensorDescType)
        src = _type_of(self.src, SharedType)
        _check_targets(self, "a TDM store")
        if (desc.shape, desc.element_type, desc.layout_attr) != (
            src.shape,
            src.element_type,
            src.layout_attr,
        ):
            raise VerifyError(
                f"source {src} does not match the descriptor block {desc} (shape, element "
                "type and layout must be equal)"
            )
        cache_modifier(self)
        layout = desc.shared_layout()
        check_tdm_layout(layout, desc.element_type)
        targets = self.targets()
        if isinstance(layout, PaddedShared) and targets and all(t.tdm for t in targets):
            inner = desc.shape[layout.order[0]]
            if layout.interval != inner:
                raise VerifyError(
                    f"a TDM store pads only whole rows: the padding interval ({layout.interval}) "
                    f"must equal the innermost block dimension ({inner})"
                )


__all__ = [
    "MAX_ARRIVALS",
    "MAX_BYTES",
    "MAX_RING",
    "AsyncTDMCopyLocalToGlobalOp",
    "BarrierAllocOp",
    "BarrierArriveOp",
    "BarrierExpectOp",
    "BarrierIndexOp",
    "BarrierInitOp",
    "BarrierWaitOp",
    "LocalStoreOp",
    "MBarrierRingType",
]
