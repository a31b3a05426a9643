"""Pure-Python shared-memory layouts of the ``tile`` dialect, and their rules.

The dialect's ``#tile.*_shared`` attributes are converted to these frozen
dataclasses so that the warp-hint rule, the TDM warp layout, the executable
model and the Triton emitter reason about layouts without importing MLIR.
:func:`check_shared_layout` holds the one set of rules a shared layout obeys
(the dialect verifier reports them at the op; anything else that builds a
layout can call it too), and :func:`allocation_bytes` the one size formula
the shared-memory capacity checks use.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class SwizzledShared:
    """XOR-swizzled shared layout (``#ttg.swizzled_shared``); vec=1 is unswizzled."""

    vec: int = 1
    per_phase: int = 1
    max_phase: int = 1
    order: tuple[int, ...] = (1, 0)


@dataclass(frozen=True)
class PaddedShared:
    """Row-major shared layout with ``amount`` pad elements every ``interval``."""

    interval: int
    amount: int
    order: tuple[int, ...] = (1, 0)


@dataclass(frozen=True)
class PartitionedShared:
    """Shared layout split into ``num_partitions * num_groups`` logical pieces.

    The block is cut along ``partition_dim`` into that many equal pieces, each
    laid out with ``inner``; TDM needs one instruction per piece unless enough
    warps take part (see the warp-hint rule).
    """

    num_partitions: int
    num_groups: int
    partition_dim: int
    inner: SwizzledShared | PaddedShared = SwizzledShared()

    @property
    def num_logical_pieces(self) -> int:
        """Pieces the block is cut into: partitions times groups."""
        return self.num_partitions * self.num_groups


SharedLayout = SwizzledShared | PaddedShared | PartitionedShared


class LayoutError(ValueError):
    """A shared layout that no lowering can place; the message says why."""


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def check_order(order: Sequence[int], what: str = "order") -> None:
    """``order`` must be a permutation of ``0 .. len(order) - 1``."""
    if sorted(order) != list(range(len(order))):
        raise LayoutError(
            f"{what} {list(order)} must be a permutation of 0..{len(order) - 1} "
            "(each dimension exactly once)"
        )


def check_shared_layout(
    layout: SharedLayout, shape: Sequence[int], *, multi_buffered: bool = False
) -> None:
    """Check ``layout`` as the layout of a block or buffer of ``shape``.

    The layout's order names the dims it lays out: all of ``shape``, or, for a
    multi-buffered allocation (``multi_buffered``), the trailing dims after the
    buffer index. Raises :class:`LayoutError` naming the offending values.
    """
    rank = len(shape)
    inner = layout.inner if isinstance(layout, PartitionedShared) else layout
    if isinstance(inner, SwizzledShared):
        for name, v in (
            ("vec", inner.vec),
            ("per_phase", inner.per_phase),
            ("max_phase", inner.max_phase),
        ):
            if not _is_pow2(v):
                raise LayoutError(f"swizzled layout {name} = {v} must be a power of two >= 1")
    else:
        if not _is_pow2(inner.interval) or not _is_pow2(inner.amount):
            raise LayoutError(
                "padded layout interval and amount must be powers of two, got "
                f"{inner.interval} and {inner.amount}"
            )
        if inner.interval < 2:
            raise LayoutError(
                f"padded layout interval = {inner.interval} pads after every element; "
                "it must be at least 2"
            )
    check_order(inner.order)
    ranks = (rank, rank - 1) if multi_buffered and rank > 1 else (rank,)
    if len(inner.order) not in ranks:
        want = " or ".join(str(r) for r in ranks)
        raise LayoutError(
            f"order {list(inner.order)} has {len(inner.order)} entries but a "
            f"{'x'.join(map(str, shape))} {'buffer' if multi_buffered else 'block'} "
            f"needs {want}"
        )
    if isinstance(layout, PartitionedShared):
        if not _is_pow2(layout.num_partitions) or not _is_pow2(layout.num_groups):
            raise LayoutError(
                "partitioned layout num_partitions and num_groups must be powers of two, "
                f"got {layout.num_partitions} and {layout.num_groups}"
            )
        laid_out = list(shape)[-len(inner.order) :]
        if not 0 <= layout.partition_dim < len(laid_out):
            raise LayoutError(
                f"partition_dim {layout.partition_dim} is out of range for a "
                f"rank-{len(laid_out)} block"
            )
        extent = laid_out[layout.partition_dim]
        if extent % layout.num_logical_pieces:
            raise LayoutError(
                f"dimension {layout.partition_dim} of size {extent} does not split into "
                f"{layout.num_logical_pieces} pieces (num_partitions x num_groups)"
            )
    if isinstance(inner, PaddedShared):
        _check_padding_fits_row(layout, inner, list(shape)[-len(inner.order) :])


def _check_padding_fits_row(
    layout: SharedLayout, inner: PaddedShared, laid_out: Sequence[int]
) -> None:
    """The padding interval and the row (the layout's fastest dim; of each
    piece, when a partitioned layout cuts that dim) nest: the row holds whole
    intervals, or the interval whole rows. Then every row (every group of
    rows) starts on a padding boundary, so a copy that starts writing at a row
    (a warp's share of a TDM block) pads where the layout says; otherwise the
    pads drift from row to row and each row starts at another phase."""
    row_dim = inner.order[0]
    row = laid_out[row_dim]
    what = f"the {row}-element row"
    if isinstance(layout, PartitionedShared) and layout.partition_dim == row_dim:
        row //= layout.num_logical_pieces
        what = f"the {row}-element row of each of {layout.num_logical_pieces} pieces"
    if row % inner.interval and inner.interval % row:
        raise LayoutError(
            f"padded layout interval = {inner.interval} does not fit {what} (dimension "
            f"{row_dim}, the layout's fastest): a row must hold whole intervals, or an "
            "interval whole rows, so that every row starts on a padding boundary"
        )


def allocation_bytes(layout: SharedLayout, shape: Sequence[int], elem_bits: int) -> int:
    """Bytes of shared memory a buffer of ``shape`` takes with ``layout``.

    A padded layout adds ``amount`` elements after every ``interval`` elements
    of the linearized allocation, except after the last one.
    """
    elements = math.prod(shape)
    inner = layout.inner if isinstance(layout, PartitionedShared) else layout
    # Equivalent mutant: elements > 1; one element gets no pad either way.
    if isinstance(inner, PaddedShared) and elements > 0:
        elements += (elements - 1) // inner.interval * inner.amount
    return (elements * elem_bits + 7) // 8


def permuted_layout(layout: SharedLayout, perm: Sequence[int]) -> SharedLayout:
    """The layout of a view whose dim ``i`` is dim ``perm[i]`` of a block laid
    out with ``layout`` (``tile.memdesc_trans``): the same placement in shared
    memory, so every field stays and only the order is renamed. The order lists
    dims fastest first; source dim ``d`` is view dim ``perm.index(d)``.

    A partitioned layout has no permuted view (its pieces are cut along one
    source dim, which TDM writes, and no Triton op reads them transposed):
    :class:`LayoutError`, as for a ``perm`` that is not a permutation of the
    layout's dims.
    """
    check_order(perm, "permutation")
    if isinstance(layout, PartitionedShared):
        raise LayoutError("a partitioned shared layout has no transposed view")
    if len(perm) != len(layout.order):
        raise LayoutError(
            f"permutation {list(perm)} has {len(perm)} entries but the layout orders "
            f"{len(layout.order)} dims"
        )
    order = tuple(list(perm).index(d) for d in layout.order)
    if isinstance(layout, PaddedShared):
        return PaddedShared(layout.interval, layout.amount, order)
    return SwizzledShared(layout.vec, layout.per_phase, layout.max_phase, order)


__all__ = [
    "LayoutError",
    "PaddedShared",
    "PartitionedShared",
    "SharedLayout",
    "SwizzledShared",
    "allocation_bytes",
    "check_order",
    "check_shared_layout",
    "permuted_layout",
]
