"""Pure-Python shared-memory layouts of the ``tile`` dialect.

The dialect's ``#tile.*_shared`` attributes are converted to these frozen
dataclasses so that the warp-hint rule, the TDM warp layout, the executable
model and the Triton emitter reason about layouts without importing MLIR.
"""

from __future__ import annotations

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

__all__ = ["PaddedShared", "PartitionedShared", "SharedLayout", "SwizzledShared"]
