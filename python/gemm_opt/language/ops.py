"""The ``tl.*`` operations: each checks its arguments, then builds and verifies
one tile op at the caller's line.

The checks here are the authoring rules that need the front end's view
(Python types, constexpr values, shapes known at build time); the rules the
IR can state are the dialect verifiers', whose diagnostics are raised at the
same line (see :class:`gemm_opt.language.builder.Builder`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from gemm_opt import WarpHintError, check_fused_warp_hints, check_warp_used_hint
from gemm_opt.core.ext_compat import ir
from gemm_opt.core.layouts import SharedLayout
from gemm_opt.dialect import tile
from gemm_opt.dialect.async_ops import AsyncWmmaOp, AsyncWmmaWaitOp
from gemm_opt.dialect.barrier import AsyncTDMCopyLocalToGlobalOp, LocalStoreOp
from gemm_opt.dialect.sync import NumProgramsOp
from gemm_opt.language.arguments import (
    MASK_MAX,
    MASK_MIN,
    constexpr_int,
    constexpr_ints,
    i32_attr,
    is_int,
    sequence,
)
from gemm_opt.language.builder import current
from gemm_opt.language.dtypes import as_dtype, bfloat16, dtype, float16, float32, int32, int64
from gemm_opt.language.errors import fail
from gemm_opt.language.layouts import (
    DotOperand,
    RegisterLayout,
    WmmaLayout,
    is_pow2,
    register_layout,
    shared_layout,
)
from gemm_opt.language.values import (
    Pointer,
    Scalar,
    SharedBuffer,
    Tensor,
    TensorDescriptor,
    Value,
    desc_type,
    int_operand,
    pred_operand,
    shared_type,
    splat,
    tensor_type,
)

# ---- program ids ------------------------------------------------------------------------


def program_id(axis: int) -> Scalar:
    """The program (workgroup) id along ``axis`` 0, 1 or 2 (``i32``)."""
    if not is_int(axis) or axis not in (0, 1, 2):
        raise fail(f"program_id axis must be 0, 1 or 2, got {axis!r}")
    b = current()
    op = tile.ProgramIdOp(loc=b.loc())
    op.operation.attributes["axis"] = i32_attr(axis, "program_id axis", 0, 2)
    return Scalar(b.checked(op).result, int32)


def num_programs(axis: int) -> Scalar:
    """The number of programs of the grid along ``axis`` 0, 1 or 2 (``i32``): what a
    persistent kernel strides its tiles by."""
    if not is_int(axis) or axis not in (0, 1, 2):
        raise fail(f"num_programs axis must be 0, 1 or 2, got {axis!r}")
    b = current()
    op = NumProgramsOp(loc=b.loc())
    op.operation.attributes["axis"] = i32_attr(axis, "num_programs axis", 0, 2)
    return Scalar(b.checked(op).result, int32)


def warp_id() -> Scalar:
    """The calling warp's id within the program (``i32``)."""
    b = current()
    return Scalar(b.checked(tile.WarpIdOp(loc=b.loc())).result, int32)


def num_warps() -> int:
    """The kernel's ``num_warps`` (a Python int at build time)."""
    return current().num_warps


def target() -> str:
    """The target being built for (``"gfx1250"``, ...)."""
    return current().target


# ---- shapes ----------------------------------------------------------------------------------


# Triton's own bound on a tensor's elements (``TRITON_MAX_TENSOR_NUMEL``): its
# front end rejects larger blocks, and its backends were never meant to lower
# them (a 64K x 64K register tensor would not finish compiling).
MAX_TENSOR_NUMEL = 1 << 20


def _block_shape(shape: Any, what: str, *, leading_any: bool = False) -> tuple[int, ...]:
    """A constexpr block shape: positive ints, powers of two and at most
    :data:`MAX_TENSOR_NUMEL` elements (as Triton's tensors); a shared
    allocation (``leading_any``) may have any count of buffers and is bounded
    by the dialect's shared-memory capacity rule instead."""
    dims = tuple(constexpr_ints(shape, what, lo=1))
    if not dims:
        raise fail(f"{what} must have at least one dim, got {shape!r}")
    checked = dims[1:] if leading_any and len(dims) > 1 else dims
    if not all(is_pow2(d) for d in checked):
        raise fail(f"{what} {list(dims)}: block dims must be powers of two")
    if not leading_any and math.prod(dims) > MAX_TENSOR_NUMEL:
        raise fail(
            f"{what} {list(dims)} has {math.prod(dims)} elements; a block holds at most "
            f"{MAX_TENSOR_NUMEL}"
        )
    return dims


# ---- descriptors and shared memory -----------------------------------------------------------


def make_tensor_descriptor(
    base: Pointer,
    shape: Sequence[Any],
    strides: Sequence[Any],
    block_shape: Sequence[int],
    layout: SharedLayout,
) -> TensorDescriptor:
    """Describe the global tensor at ``base`` for TDM copies of ``block_shape``.

    ``shape`` entries are i32 (Python ints or traced), ``strides`` i64 (i32
    values are sign-extended); ``block_shape`` is constexpr; ``layout`` is the
    shared layout the block takes in LDS. The block starts at the origin; move
    it with :meth:`TensorDescriptor.update`.
    """
    if not isinstance(base, Pointer):
        raise fail(f"make_tensor_descriptor base must be a pointer argument, got {base!r}")
    block = _block_shape(block_shape, "block_shape")
    rank = len(block)
    if not 1 <= rank <= 5:
        raise fail(f"TDM blocks have rank 1 to 5, got block_shape {list(block)}")
    layout = shared_layout(layout, "make_tensor_descriptor layout")
    shape = sequence(shape, "make_tensor_descriptor shape")
    strides = sequence(strides, "make_tensor_descriptor strides")
    if len(shape) != rank or len(strides) != rank:
        raise fail(
            f"make_tensor_descriptor expects {rank} shape and {rank} stride entries for "
            f"block_shape {list(block)}, got {len(shape)} and {len(strides)}"
        )
    b = current()
    dims = [int_operand(v, int32, "shape entry") for v in shape]
    strd = [int_operand(v, int64, "stride") for v in strides]
    desc = TensorDescriptor(base.handle, block, base.dtype, layout)
    op = tile.MakeTensorDescriptorOp(base.handle, dims, strd, desc_type(desc), loc=b.loc())
    return desc._with(b.checked(op).result)


def allocate_shared(dtype_: dtype, shape: Sequence[int], layout: SharedLayout) -> SharedBuffer:
    """Allocate a shared-memory buffer of ``shape`` (constexpr) for the program.

    A leading extra dim makes a multi-buffer; select one with ``buf.index(i)``.
    The dialect's verifier checks the allocation against the target's shared
    memory (LDS) capacity.
    """
    d = as_dtype(dtype_, "allocate_shared dtype")
    dims = _block_shape(shape, "allocate_shared shape", leading_any=True)
    layout = shared_layout(layout, "allocate_shared layout")
    b = current()
    buf = SharedBuffer(None, dims, d, layout)  # type: ignore[arg-type]
    op = tile.LocalAllocOp(shared_type(buf), loc=b.loc())
    return buf._with(b.checked(op).result)


def _check_copy_pair(desc: Any, buf: Any, what: str) -> tuple[TensorDescriptor, SharedBuffer]:
    if not isinstance(desc, TensorDescriptor):
        raise fail(f"{what} source must be a tensor descriptor, got {desc!r}")
    if not isinstance(buf, SharedBuffer):
        raise fail(f"{what} destination must be a shared buffer, got {buf!r}")
    if desc.block_shape != buf.shape:
        raise fail(
            f"{what}: destination shape {list(buf.shape)} does not match the "
            f"descriptor block {list(desc.block_shape)}"
            + (" (index a multi-buffer with buf.index(i))" if len(buf.shape) > desc.rank else "")
        )
    if desc.dtype is not buf.dtype:
        raise fail(
            f"{what}: destination element type {buf.dtype!r} does not match the "
            f"descriptor's {desc.dtype!r}"
        )
    if desc.layout != buf.layout:
        raise fail(
            f"{what}: destination layout {buf.layout!r} does not match the "
            f"descriptor's {desc.layout!r}"
        )
    return desc, buf


def _check_cache(cache: Any) -> str:
    if not isinstance(cache, str) or cache not in tile.CACHE_MODIFIERS:
        raise fail(f"cache must be one of {tile.CACHE_MODIFIERS}, got {cache!r}")
    return cache


def _check_hint(hint: Any, what: str) -> int:
    if isinstance(hint, Value):
        raise fail(f"{what} must be a constexpr int (a warp bit mask), got the {hint!r}")
    if not is_int(hint):
        raise fail(f"{what} must be an int (a warp bit mask), got {hint!r}")
    return hint


def async_copy(
    desc: TensorDescriptor,
    buf: SharedBuffer,
    warp_used_hint: int | None = None,
    pred: Any = None,
    cache: str = "",
    barrier: Any = None,
) -> None:
    """Asynchronously copy the descriptor's block into ``buf`` with TDM.

    ``warp_used_hint`` (bit n = warp n) restricts the copy to the selected
    warps; ``None`` lets every warp take part. The hint is checked against
    the warp-hint rule right away, with the nearest legal hints in the error.
    ``pred`` false skips the copy. Wait for it with :func:`async_wait`, or,
    with ``barrier`` (one barrier of ``tl.allocate_mbarrier``), with
    ``tl.mbarrier.wait`` on the phase it completes (its bytes count there).
    """
    desc, buf = _check_copy_pair(desc, buf, "async_copy")
    b = current()
    if warp_used_hint is not None:
        hint = _check_hint(warp_used_hint, "async_copy warp_used_hint")
        try:
            check_warp_used_hint(hint, b.num_warps, desc.block_shape, desc.layout)
        except (WarpHintError, TypeError, ValueError) as e:
            raise fail(f"async_copy: {e}") from None
    cache = _check_cache(cache)
    p = pred_operand(pred)
    bar = None
    if barrier is not None:
        if not isinstance(barrier, Value) or not isinstance(barrier.handle.type, tile.MBarrierType):
            raise fail(f"async_copy barrier must be one barrier of a ring, got {barrier!r}")
        bar = barrier.handle
    op = tile.AsyncTDMCopyGlobalToLocalOp(desc.handle, buf.handle, pred=p, barrier=bar, loc=b.loc())
    attrs = op.operation.attributes
    if warp_used_hint is not None:
        attrs["warp_used_hint"] = i32_attr(hint, "async_copy warp_used_hint", MASK_MIN, MASK_MAX)
    if cache:
        attrs["cache"] = ir.StringAttr.get(cache)
    b.checked(op)


def async_copy_fused(
    members: Sequence[tuple[TensorDescriptor, SharedBuffer, int]], cache: str = ""
) -> None:
    """Issue 2 to 4 hinted TDM copies as one instruction.

    ``members`` are ``(desc, buf, warp_used_hint)``; the hints must be legal
    and pairwise disjoint. The fused copy counts as one copy for
    :func:`async_wait`.
    """
    members = sequence(members, "async_copy_fused members")
    if not 2 <= len(members) <= 4:
        raise fail(f"async_copy_fused takes 2 to 4 members, got {len(members)}")
    pairs, hints = [], []
    for i, m in enumerate(members):
        if not isinstance(m, tuple | list) or len(m) != 3:
            raise fail(f"async_copy_fused member {i} must be (desc, buf, warp_used_hint)")
        pairs.append(_check_copy_pair(m[0], m[1], f"async_copy_fused member {i}"))
        hints.append(_check_hint(m[2], f"async_copy_fused member {i} warp_used_hint"))
    b = current()
    try:
        check_fused_warp_hints(
            hints,
            b.num_warps,
            [d.block_shape for d, _ in pairs],
            [d.layout for d, _ in pairs],
        )
    except (WarpHintError, TypeError, ValueError) as e:
        raise fail(f"async_copy_fused: {e}") from None
    cache = _check_cache(cache)
    kwargs = {}
    for i, (d, s) in enumerate(pairs):
        kwargs[f"desc{i}"] = d.handle
        kwargs[f"dest{i}"] = s.handle
    op = tile.AsyncTDMFusedCopyGlobalToLocalOp(**kwargs, loc=b.loc())
    attrs = op.operation.attributes
    signed = [
        ir.IntegerAttr(
            i32_attr(h, f"async_copy_fused member {i} warp_used_hint", MASK_MIN, MASK_MAX)
        ).value
        for i, h in enumerate(hints)
    ]
    attrs["warp_used_hints"] = ir.DenseI32ArrayAttr.get(signed)
    if cache:
        attrs["cache"] = ir.StringAttr.get(cache)
    b.checked(op)


# The wait count is an i32 of the instruction's counter; larger values cannot
# be encoded (and would silently wrap).
MAX_WAIT = (1 << 31) - 1


def async_wait(num: int = 0) -> None:
    """Wait until at most ``num`` TDM copies of this warp are in flight."""
    constexpr_int(num, "async_wait num", 0, MAX_WAIT, " (copies left in flight)")
    b = current()
    op = tile.AsyncTDMWaitOp(loc=b.loc())
    op.operation.attributes["num"] = i32_attr(num, "async_wait num", 0, MAX_WAIT)
    b.checked(op)


def local_store(buf: SharedBuffer, value: Tensor) -> None:
    """Write the register tensor ``value`` into the shared buffer ``buf``
    (same shape and element type)."""
    if not isinstance(buf, SharedBuffer):
        raise fail(f"local_store expects a shared buffer, got {buf!r}")
    if not isinstance(value, Tensor):
        raise fail(f"local_store value must be a tensor, got {value!r}")
    if tuple(value.shape) != tuple(buf.shape) or value.dtype is not buf.dtype:
        raise fail(
            f"local_store: the value ({list(value.shape)}, {value.dtype!r}) must match the "
            f"buffer ({list(buf.shape)}, {buf.dtype!r})"
        )
    b = current()
    b.checked(LocalStoreOp(value.handle, buf.handle, loc=b.loc()))


def async_store(desc: TensorDescriptor, buf: SharedBuffer) -> None:
    """Asynchronously store ``buf`` to the descriptor's block (TDM on gfx1250,
    TMA on cuda:90); elements outside the tensor are not written. The store
    reads ``buf`` until an :func:`async_wait` retires it (it counts like a
    copy there): wait before writing ``buf`` again."""
    desc, buf = _check_copy_pair(desc, buf, "async_store")
    b = current()
    b.checked(AsyncTDMCopyLocalToGlobalOp(desc.handle, buf.handle, loc=b.loc()))


def local_load(buf: SharedBuffer, layout: RegisterLayout) -> Tensor:
    """Read a shared buffer into a register tensor of ``layout``."""
    if not isinstance(buf, SharedBuffer):
        raise fail(f"local_load expects a shared buffer, got {buf!r}")
    return buf.load(layout)


# ---- compute --------------------------------------------------------------------------------


def wmma(a: Tensor, b: Tensor, acc: Tensor) -> Tensor:
    """``a @ b + acc`` on matrix cores: f16/bf16 A (MxK) and B (KxN), f32 acc (MxN).

    A and B need ``DotOperand(0, L, ...)`` and ``DotOperand(1, L, ...)``
    layouts whose parent ``L`` is the accumulator's ``WmmaLayout``.
    """
    for name, v in (("a", a), ("b", b), ("acc", acc)):
        if not isinstance(v, Tensor) or len(v.shape) != 2:
            raise fail(f"wmma {name} must be a 2-D tensor, got {v!r}")
    if not isinstance(acc.layout, WmmaLayout):
        raise fail(f"wmma acc must have a tl.WmmaLayout layout, got {acc.layout!r}")
    for idx, (name, v) in enumerate((("a", a), ("b", b))):
        lay = v.layout
        if not isinstance(lay, DotOperand) or lay.op_idx != idx:
            raise fail(
                f"wmma {name} must have a tl.DotOperand(op_idx={idx}, ...) layout, got {lay!r}"
            )
        if lay.parent != acc.layout:
            raise fail(
                f"wmma layouts do not match: {name}'s DotOperand parent {lay.parent!r} "
                f"is not acc's layout {acc.layout!r}"
            )
    _check_mma_shapes("wmma", a, b, acc)
    if a.dtype not in (float16, bfloat16) or a.dtype is not b.dtype:
        raise fail(
            f"wmma a and b must be both float16 or both bfloat16, got {a.dtype!r} and {b.dtype!r}"
        )
    if acc.dtype is not float32:
        raise fail(f"wmma acc must be float32, got {acc.dtype!r}")
    bld = current()
    op = tile.WmmaOp(a.handle, b.handle, acc.handle, acc.handle.type, loc=bld.loc())
    return acc._with(bld.checked(op).result)


def _check_mma_shapes(what: str, a: Any, b: Any, acc: Tensor) -> None:
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2 or acc.shape != (m, n):
        raise fail(
            f"{what} shapes do not match: a is {m}x{k}, b is {k2}x{n}, acc is "
            f"{acc.shape[0]}x{acc.shape[1]} (want a MxK, b KxN, acc MxN)"
        )


def async_wmma(
    a: SharedBuffer, b: SharedBuffer, acc: Tensor, use_acc: bool | Scalar = True
) -> Tensor:
    """Start ``a @ b + acc`` with A (MxK) and B (KxN) read from shared buffers for as
    long as the MMA runs (Hopper's wgmma). The result is valid once
    :func:`async_wmma_wait` retires this MMA; until then the buffers must not be
    overwritten (the model reports a copy into them as a race). ``tile-pipeline-mma``
    makes this form out of :func:`wmma` in copy-then-MMA K loops; a kernel whose
    loop waits on barriers instead (a warp-specialized consumer) writes it itself.

    ``use_acc`` (a Python bool or a traced i1, e.g. ``k > 0``) false computes
    ``a @ b`` alone: ``acc`` only names the registers the result takes, so a
    loop that starts a new accumulation needs no zeroed accumulator."""
    for name, v in (("a", a), ("b", b)):
        if not isinstance(v, SharedBuffer) or len(v.shape) != 2:
            raise fail(f"async_wmma {name} must be a 2-D shared buffer, got {v!r}")
    if not isinstance(acc, Tensor) or not isinstance(acc.layout, WmmaLayout):
        raise fail(f"async_wmma acc must be a tensor with a tl.WmmaLayout layout, got {acc!r}")
    _check_mma_shapes("async_wmma", a, b, acc)
    if a.dtype not in (float16, bfloat16) or a.dtype is not b.dtype or acc.dtype is not float32:
        raise fail(
            "async_wmma takes float16 or bfloat16 buffers of one type and a float32 acc, "
            f"got {a.dtype!r}, {b.dtype!r} and {acc.dtype!r}"
        )
    use = pred_operand(use_acc, "async_wmma use_acc")
    bld = current()
    op = AsyncWmmaOp(a.handle, b.handle, acc.handle, acc.handle.type, use_acc=use, loc=bld.loc())
    return acc._with(bld.checked(op).result)


def async_wmma_wait(acc: Tensor, num: int = 0) -> Tensor:
    """Wait until at most ``num`` of this partition's async MMAs are in flight and
    return ``acc``; with ``num > 0`` the result may only feed another
    :func:`async_wmma` or a later wait."""
    if not isinstance(acc, Tensor) or not isinstance(acc.layout, WmmaLayout):
        raise fail(f"async_wmma_wait takes an accumulator tensor, got {acc!r}")
    constexpr_int(num, "async_wmma_wait num", 0, MAX_WAIT, " (MMAs left in flight)")
    bld = current()
    op = AsyncWmmaWaitOp(acc.handle, acc.handle.type, loc=bld.loc())
    op.operation.attributes["num"] = i32_attr(num, "async_wmma_wait num", 0, MAX_WAIT)
    return acc._with(bld.checked(op).result)


def full(shape: Sequence[int], value: int | float, dtype_: dtype, layout: RegisterLayout) -> Tensor:
    """A register tensor of ``shape`` filled with ``value`` (an ``arith.constant``)."""
    d = as_dtype(dtype_, "full dtype")
    dims = _block_shape(shape, "full shape")
    layout = register_layout(layout, "full layout", len(dims))
    if isinstance(value, Value):
        raise fail(f"full value must be a Python number, got the {value!r}")
    return splat(dims, value, d, layout)


def zeros(shape: Sequence[int], dtype_: dtype, layout: RegisterLayout) -> Tensor:
    """A zero register tensor of ``shape``, ``dtype`` and ``layout``."""
    return full(shape, 0, dtype_, layout)


def convert_layout(x: Tensor, layout: RegisterLayout) -> Tensor:
    """Move a register tensor to another layout (same shape and element type)."""
    if not isinstance(x, Tensor):
        raise fail(f"convert_layout expects a tensor, got {x!r}")
    b = current()
    layout = register_layout(layout, "convert_layout layout", len(x.shape))
    t = tensor_type(x.shape, x.dtype, layout)
    op = tile.ConvertLayoutOp(x.handle, t, loc=b.loc())
    return Tensor(b.checked(op).result, x.shape, x.dtype, layout)


def _block_access(
    what: str,
    base: Any,
    shape: Sequence[Any],
    strides: Sequence[Any],
    offsets: Sequence[Any],
    rank: int,
) -> tuple[list[ir.Value], list[ir.Value], list[ir.Value]]:
    if not isinstance(base, Pointer):
        raise fail(f"{what} base must be a pointer argument, got {base!r}")
    shape = sequence(shape, f"{what} shape")
    strides = sequence(strides, f"{what} strides")
    offsets = sequence(offsets, f"{what} offsets")
    for name, vals in (("shape", shape), ("strides", strides), ("offsets", offsets)):
        if len(vals) != rank:
            raise fail(f"{what} expects {rank} {name} for a rank-{rank} block, got {len(vals)}")
    return (
        [int_operand(v, int32, "shape entry") for v in shape],
        [int_operand(v, int64, "stride") for v in strides],
        [int_operand(v, int32, "offset") for v in offsets],
    )


def store_block(
    base: Pointer,
    shape: Sequence[Any],
    strides: Sequence[Any],
    offsets: Sequence[Any],
    value: Tensor,
) -> None:
    """Masked store of ``value`` at ``offsets`` of the global tensor at ``base``.

    Elements outside ``shape`` (ragged edges) are not written.
    """
    if not isinstance(value, Tensor):
        raise fail(f"store_block value must be a tensor, got {value!r}")
    dims, strd, offs = _block_access("store_block", base, shape, strides, offsets, len(value.shape))
    if base.dtype is not value.dtype:
        raise fail(
            f"store_block: base points to {base.dtype!r} but the value holds {value.dtype!r} "
            "(convert with value.to(...))"
        )
    b = current()
    op = tile.StoreBlockOp(base.handle, dims, strd, offs, value.handle, loc=b.loc())
    b.checked(op)


def load_block(
    base: Pointer,
    shape: Sequence[Any],
    strides: Sequence[Any],
    offsets: Sequence[Any],
    block_shape: Sequence[int],
    layout: RegisterLayout,
) -> Tensor:
    """Masked load of a ``block_shape`` block at ``offsets`` into registers
    (zero outside ``shape``)."""
    block = _block_shape(block_shape, "load_block block_shape")
    dims, strd, offs = _block_access("load_block", base, shape, strides, offsets, len(block))
    b = current()
    layout = register_layout(layout, "load_block layout", len(block))
    t = tensor_type(block, base.dtype, layout)
    op = tile.LoadBlockOp(base.handle, dims, strd, offs, t, loc=b.loc())
    return Tensor(b.checked(op).result, block, base.dtype, layout)


def static_assert(cond: Any, message: str = "") -> None:
    """Fail the build at this line when the constexpr ``cond`` is false."""
    if isinstance(cond, Value):
        raise fail("static_assert needs a constexpr condition, got a traced value")
    if not cond:
        raise fail(f"static_assert failed{': ' + message if message else ''}")


__all__ = [
    "allocate_shared",
    "async_copy",
    "async_copy_fused",
    "async_wait",
    "convert_layout",
    "full",
    "load_block",
    "local_load",
    "make_tensor_descriptor",
    "num_programs",
    "num_warps",
    "program_id",
    "static_assert",
    "store_block",
    "target",
    "warp_id",
    "wmma",
    "zeros",
]
