"""TTGIR modules of one TDM copy, built with Triton's typed IR builder.

The Triton differentials (``test_warp_hint_triton.py``, ``test_tdm_layout_triton.py``)
hand Triton 3.9.0 small kernels that hold one ``amdg.async_tdm_copy_global_to_local``
(or one ``amdg.async_tdm_fused_copy_global_to_local``) and read what Triton
makes of them. Those kernels are built here the way the compiler's own
hand-off builds its modules: Gluon's op builder and Gluon's layout classes,
through :func:`gemm_opt.lowering.triton_bridge.triton_ir`, so Triton checks
every op as it is built and prints the text itself. Nothing here writes or
edits TTGIR text.

A :class:`CopyKernel` is a plain, picklable description (it crosses process
boundaries: Triton aborts on some inputs, so builds run in a child).
:func:`build` turns it into a Triton module in a :class:`TritonIR` handle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gemm_opt.core.layouts import PaddedShared, PartitionedShared, SharedLayout, SwizzledShared
from gemm_opt.lowering.layouts import padded_layout, unswizzled_layout

#: Where the descriptors come from.
ARGUMENTS = "arguments"  # function arguments of descriptor type
RUNTIME = "runtime"  # built in the kernel from (%a: !tt.ptr<f16>, %n: i32): dims n, strides n..1
CONSTANT = "constant"  # built in the kernel from constant dims, strides, offsets and pred
DESCRIPTOR_SOURCES = (ARGUMENTS, RUNTIME, CONSTANT)


@dataclass(frozen=True)
class Member:
    """One f16 block copied to shared memory.

    ``tensor_shape``, ``strides``, ``offsets`` and ``pred`` are the constant
    descriptor operands (:data:`CONSTANT` descriptors only).
    ``layout`` ``None`` is the unswizzled row-major ``swizzled_shared``.
    """

    block_shape: tuple[int, ...]
    layout: SharedLayout | None = None
    tensor_shape: tuple[int, ...] = ()
    strides: tuple[int, ...] = ()
    offsets: tuple[int, ...] = ()
    pred: int = 1


@dataclass(frozen=True)
class CopyKernel:
    """A kernel ``@name`` that performs one copy (and, unless the descriptors
    are arguments, waits for it).

    ``hints``: ``None`` for a single copy without ``warp_used_hint``; one value
    for a hinted single copy; one per member (any count, to reach Triton's
    verifier) for a fused copy. Values are taken as 32-bit patterns
    (``0xFFFFFFFF`` is ``-1``), as an ``i32`` attribute holds them.
    ``num_warps`` ``None`` leaves ``ttg.num-warps`` off the module.
    """

    num_warps: int | None
    members: tuple[Member, ...]
    hints: tuple[int, ...] | None = None
    fused: bool = False
    descriptors: str = ARGUMENTS
    name: str = "k"


def _unsigned32(value: int) -> int:
    """The 32-bit pattern of ``value``, unsigned (the single copy's builder takes ``uint32``)."""
    return value & 0xFFFFFFFF


def _signed32(value: int) -> int:
    """The 32-bit pattern of ``value``, signed (the fused copy's builder takes ``int32``)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >> 31 else value


def gluon_layout(layouts: Any, layout: SharedLayout | None, block_shape: Sequence[int]) -> Any:
    """Gluon's shared layout for a core layout over ``block_shape``."""
    rank = len(block_shape)
    row_major = list(range(rank - 1, -1, -1))
    if layout is None:
        return unswizzled_layout(layouts, row_major)
    if isinstance(layout, SwizzledShared):
        order = list(layout.order) if len(layout.order) == rank else row_major
        return layouts.SwizzledSharedLayout(layout.vec, layout.per_phase, layout.max_phase, order)
    if isinstance(layout, PaddedShared):
        order = list(layout.order) if len(layout.order) == rank else row_major
        return padded_layout(layouts, layout.interval, layout.amount, order, block_shape)
    if isinstance(layout, PartitionedShared):
        piece = list(block_shape)
        piece[layout.partition_dim] //= layout.num_logical_pieces
        inner = gluon_layout(layouts, layout.inner, piece)
        return layouts.PartitionedSharedLayout(
            layout.num_partitions, layout.num_groups, layout.partition_dim, inner
        )
    raise TypeError(f"unsupported shared layout {layout!r}")


def build(tt: Any, kernel: CopyKernel) -> Any:
    """Build ``kernel`` with ``tt`` (a :class:`gemm_opt.lowering.triton_bridge.TritonIR`
    for gfx1250); returns the Triton module, not verified.

    The builder's insertion point is restored afterwards (a fresh builder has
    none), so one handle builds any number of separate modules.
    """
    if kernel.descriptors not in DESCRIPTOR_SOURCES:
        raise ValueError(f"descriptors must be one of {DESCRIPTOR_SOURCES}")
    saved = tt.builder.get_insertion_point()
    try:
        return _build(tt, kernel)
    finally:
        tt.builder.restore_insertion_point(saved)


def _build(tt: Any, kernel: CopyKernel) -> Any:
    b, lay = tt.builder, tt.layouts
    b.set_loc(b.create_loc(kernel.name, 1, 1))
    module = b.create_module()
    i32 = b.get_int32_attr
    module.set_attr("ttg.num-ctas", i32(1))
    if kernel.num_warps is not None:
        module.set_attr("ttg.num-warps", i32(kernel.num_warps))
    module.set_attr("ttg.target", b.get_string_attr("hip:gfx1250"))
    module.set_attr("ttg.threads-per-warp", i32(32))

    f16 = b.get_half_ty()
    desc_types, buf_types = [], []
    for m in kernel.members:
        attr = gluon_layout(lay, m.layout, m.block_shape)._to_ir(b)
        shape = list(m.block_shape)
        block = b.get_block_ty(f16, shape)
        desc_types.append(b.get_tensor_descriptor_layout_type(block, False, attr))
        buf_types.append(b.get_shared_mem_desc_ty(f16, shape, attr, shape))

    ptr = b.get_ptr_ty(f16, "global")
    if kernel.descriptors == ARGUMENTS:
        inputs = desc_types
    elif kernel.descriptors == RUNTIME:
        inputs = [ptr, b.get_int32_ty()]
    else:
        inputs = [ptr] * len(kernel.members)
    fn = b.get_or_insert_function(
        module, kernel.name, b.get_function_ty(inputs, []), "public", None
    )
    module.push_back(fn)
    entry = fn.add_entry_block()
    b.set_insertion_point_to_start(entry)

    descs = _descriptors(b, tt.ir, kernel, fn, desc_types)
    bufs = [b.create_local_alloc(t) for t in buf_types]
    cache = tt.ir.CACHE_MODIFIER.NONE
    if kernel.fused:
        hints = [_signed32(h) for h in kernel.hints or ()]
        b.create_async_tdm_fused_copy_global_to_local(descs, bufs, hints, cache)
    else:
        (desc,), (buf,) = descs, bufs
        hint = None if kernel.hints is None else _unsigned32(kernel.hints[0])
        b.create_async_tdm_copy_global_to_local(desc, buf, tt.ir.value(), cache, hint)
    if kernel.descriptors != ARGUMENTS:
        b.create_async_tdm_wait(0)
    b.ret([])
    return module


def _descriptors(b: Any, ir: Any, kernel: CopyKernel, fn: Any, types: list[Any]) -> list[Any]:
    if kernel.descriptors == ARGUMENTS:
        return [fn.args(i) for i in range(len(types))]
    pad = ir.PADDING_OPTION.PAD_ZERO
    if kernel.descriptors == RUNTIME:
        base, n = fn.args(0), fn.args(1)
        n64 = b.create_int_cast(n, b.get_int64_ty(), True)
        out = []
        for m, t in zip(kernel.members, types, strict=True):
            rank = len(m.block_shape)
            strides = [n64] * (rank - 1) + [b.get_int64(1)]
            out.append(b.create_make_tensor_descriptor(t, base, [n] * rank, strides, pad))
        return out
    out = []
    for i, (m, t) in enumerate(zip(kernel.members, types, strict=True)):
        dims = [b.get_int32(s) for s in m.tensor_shape]
        strides = [b.get_int64(s) for s in m.strides]
        desc = b.create_make_tensor_descriptor(t, fn.args(i), dims, strides, pad)
        offsets = [b.get_int32(o) for o in m.offsets]
        out.append(b.create_update_tensor_descriptor(desc, offsets, [], b.get_int32(m.pred), True))
    return out
