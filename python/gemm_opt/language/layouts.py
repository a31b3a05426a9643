"""Layouts: where elements live, in shared memory and in registers.

The shared-memory layouts are the project's one model of them,
:mod:`gemm_opt.core.layouts` (the same classes the warp-hint rule and the
executable model use); the dialect converts them to and from its
``#tile.*_shared`` attributes, and its rules (powers of two, field types)
are checked when a layout is used, at that call. Register layouts exist only
in the front end and the dialect, so they are defined here and checked when
constructed and against the kernel's warps and target when used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gemm_opt.core.layouts import (
    LayoutError,
    PaddedShared,
    PartitionedShared,
    SharedLayout,
    SwizzledShared,
    check_order,
)
from gemm_opt.dialect import tile
from gemm_opt.language.arguments import constexpr_int, constexpr_ints, is_int
from gemm_opt.language.errors import fail

SHARED_LAYOUTS = (SwizzledShared, PaddedShared, PartitionedShared)


def is_pow2(v: int) -> bool:
    return v >= 1 and v & (v - 1) == 0


def ints(values: Any, what: str) -> tuple[int, ...]:
    """``values`` as a tuple of non-negative i32 Python ints, else a CompilationError."""
    return tuple(constexpr_ints(values, what))


def _check_order(order: Sequence[int], what: str) -> None:
    try:
        check_order(order, f"{what} order")
    except LayoutError as e:
        raise fail(str(e)) from None


def shared_layout(layout: Any, what: str) -> SharedLayout:
    """Check a shared layout's Python types where it is used; returns its
    canonical form (tuples, as the dialect reads it back).

    The rules a layout obeys for a shape
    (:func:`gemm_opt.core.layouts.check_shared_layout`) are the dialect
    verifier's: the op built with the layout reports them at the user's call.
    """
    if not isinstance(layout, SHARED_LAYOUTS):
        raise fail(
            f"{what} must be a shared layout (tl.SwizzledShared, tl.PaddedShared, "
            f"tl.PartitionedShared), got {layout!r}"
        )
    inner = layout.inner if isinstance(layout, PartitionedShared) else layout
    if isinstance(layout, PartitionedShared):
        for f in ("num_partitions", "num_groups", "partition_dim"):
            constexpr_int(getattr(layout, f), f"PartitionedShared {f}")
        if not isinstance(inner, SwizzledShared | PaddedShared):
            raise fail(
                f"PartitionedShared inner must be a SwizzledShared or PaddedShared, got {inner!r}"
            )
    fields = (
        ("vec", "per_phase", "max_phase")
        if isinstance(inner, SwizzledShared)
        else ("interval", "amount")
    )
    for f in fields:
        constexpr_int(getattr(inner, f), f"{type(inner).__name__} {f}")
    ints(inner.order, f"{type(inner).__name__} order")
    try:
        return tile.shared_layout_attr(layout).to_layout()
    except tile.VerifyError as e:
        raise fail(f"{what}: {e}") from None


def shared_attr(layout: SharedLayout) -> tile.LayoutAttr:
    """The ``#tile.*_shared`` attribute of a checked shared layout."""
    return tile.shared_layout_attr(layout)


class RegisterLayout:
    """Base of register layouts; ``_attr()`` builds the ``#tile.*`` attribute."""

    def _attr(self) -> tile.LayoutAttr:
        raise NotImplementedError

    def _check(self, num_warps: int, threads_per_warp: int, target: str) -> None:
        """Raise when the layout does not fit the kernel's warps or target."""

    def _check_warps(self, warps_per_cta: Sequence[int], num_warps: int) -> None:
        if math.prod(warps_per_cta) != num_warps:
            raise fail(
                f"{type(self).__name__} warps_per_cta {list(warps_per_cta)} covers "
                f"{math.prod(warps_per_cta)} warps, but the kernel has num_warps = {num_warps}"
            )


def _positive_ints(values: Any, what: str) -> tuple[int, ...]:
    out = ints(values, what)
    if any(v < 1 for v in out):
        raise fail(f"{what} entries must be positive, got {list(out)}")
    return out


@dataclass(frozen=True)
class WmmaLayout(RegisterLayout):
    """Accumulator layout of WMMA (gfx1250; MFMA on gfx950/gfx942, mma.sync on cuda:90).

    ``warps_per_cta`` is ``[WM, WN]`` with ``WM * WN == num_warps``.
    """

    version: int = 3
    warps_per_cta: Sequence[int] = ()
    instr_shape: Sequence[int] = (16, 16, 32)
    transposed: bool = True

    def __post_init__(self) -> None:
        if not is_int(self.version) or self.version not in (1, 2, 3):
            raise fail(f"WmmaLayout version must be 1, 2 or 3, got {self.version!r}")
        w = _positive_ints(self.warps_per_cta, "WmmaLayout warps_per_cta")
        if len(w) != 2:
            raise fail(f"WmmaLayout warps_per_cta must be [WM, WN], got {list(w)}")
        s = _positive_ints(self.instr_shape, "WmmaLayout instr_shape")
        if len(s) != 3:
            raise fail(f"WmmaLayout instr_shape must be [M, N, K], got {list(s)}")
        if not all(is_pow2(v) for v in s):
            raise fail(f"WmmaLayout instr_shape entries must be powers of two, got {list(s)}")
        if not isinstance(self.transposed, bool):
            raise fail(f"WmmaLayout transposed must be a bool, got {self.transposed!r}")
        object.__setattr__(self, "warps_per_cta", w)
        object.__setattr__(self, "instr_shape", s)

    def _attr(self) -> tile.LayoutAttr:
        return tile.WmmaAttr.build(
            version=self.version,
            warps_per_cta=self.warps_per_cta,
            instr_shape=self.instr_shape,
            transposed=self.transposed,
        )

    def _check(self, num_warps: int, threads_per_warp: int, target: str) -> None:
        self._check_warps(self.warps_per_cta, num_warps)


@dataclass(frozen=True)
class DotOperand(RegisterLayout):
    """Layout of WMMA operand A (``op_idx=0``) or B (``op_idx=1``) for the
    accumulator layout ``parent``; ``k_width`` K elements per thread."""

    op_idx: int
    parent: WmmaLayout
    k_width: int

    def __post_init__(self) -> None:
        if not is_int(self.op_idx) or self.op_idx not in (0, 1):
            raise fail(f"DotOperand op_idx must be 0 (A) or 1 (B), got {self.op_idx!r}")
        if not isinstance(self.parent, WmmaLayout):
            raise fail(f"DotOperand parent must be a WmmaLayout, got {self.parent!r}")
        # gfx1250's WMMA lays the k_width elements of a thread out as one
        # linear-layout basis run, which exists for powers of two only (Triton
        # asserts on anything else); the other targets choose their own.
        if not is_int(self.k_width) or not is_pow2(self.k_width):
            raise fail(
                "DotOperand k_width (K elements per thread) must be a positive power of "
                f"two, got {self.k_width!r}"
            )

    def _attr(self) -> tile.LayoutAttr:
        return tile.DotOperandAttr.build(
            op_idx=self.op_idx, parent=self.parent._attr(), k_width=self.k_width
        )

    def _check(self, num_warps: int, threads_per_warp: int, target: str) -> None:
        self.parent._check(num_warps, threads_per_warp, target)


@dataclass(frozen=True)
class Blocked(RegisterLayout):
    """Blocked register layout: per thread, per warp and per CTA tiling."""

    size_per_thread: Sequence[int]
    threads_per_warp: Sequence[int]
    warps_per_cta: Sequence[int]
    order: Sequence[int]

    def __post_init__(self) -> None:
        for name in ("size_per_thread", "threads_per_warp", "warps_per_cta"):
            object.__setattr__(self, name, _positive_ints(getattr(self, name), f"Blocked {name}"))
        object.__setattr__(self, "order", ints(self.order, "Blocked order"))
        ranks = {len(self.size_per_thread), len(self.threads_per_warp)}
        ranks |= {len(self.warps_per_cta), len(self.order)}
        if len(ranks) != 1:
            raise fail("Blocked fields must all have the same rank")
        _check_order(self.order, "Blocked")

    def _attr(self) -> tile.LayoutAttr:
        return tile.BlockedAttr.build(
            size_per_thread=self.size_per_thread,
            threads_per_warp=self.threads_per_warp,
            warps_per_cta=self.warps_per_cta,
            order=self.order,
        )

    def _check(self, num_warps: int, threads_per_warp: int, target: str) -> None:
        if math.prod(self.threads_per_warp) != threads_per_warp:
            raise fail(
                f"Blocked threads_per_warp {list(self.threads_per_warp)} covers "
                f"{math.prod(self.threads_per_warp)} threads, but a warp has "
                f"{threads_per_warp} on this target"
            )
        self._check_warps(self.warps_per_cta, num_warps)


def register_layout(layout: Any, what: str, rank: int) -> RegisterLayout:
    """Check a register layout against the kernel being built."""
    from gemm_opt.language.builder import current

    if not isinstance(layout, RegisterLayout):
        raise fail(
            f"{what} must be a register layout (tl.WmmaLayout, tl.DotOperand, "
            f"tl.Blocked), got {layout!r}"
        )
    b = current()
    layout._check(b.num_warps, b.threads_per_warp, b.target)
    if isinstance(layout, Blocked) and len(layout.order) != rank:
        raise fail(f"{what} {layout!r} has rank {len(layout.order)}, the tensor has rank {rank}")
    if isinstance(layout, WmmaLayout | DotOperand) and rank != 2:
        raise fail(f"{what} {type(layout).__name__} needs a 2-D tensor, got rank {rank}")
    return layout


__all__ = [
    "Blocked",
    "DotOperand",
    "PaddedShared",
    "PartitionedShared",
    "RegisterLayout",
    "SwizzledShared",
    "WmmaLayout",
    "register_layout",
    "shared_attr",
    "shared_layout",
]
