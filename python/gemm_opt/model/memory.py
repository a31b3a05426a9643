"""Ids, descriptors, shared buffers and global blocks in the model: ``tile.program_id``,
``tile.warp_id``, the descriptor ops, ``tile.local_alloc``, the ``memdesc``
views, ``tile.local_load`` / ``tile.local_store``, ``tensor.splat`` /
``tensor.extract``, ``tile.convert_layout`` and the global
``tile.load_block`` / ``tile.store_block`` (interleaving points of the grid,
checked by its happens-before order).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect.tile import (
    SharedType,
)
from gemm_opt.model.core import (
    Compiler,
    Exec,
    Program,
    op_location,
    op_where,
    operand_slots,
    program_level,
    result_slot,
    stack_slots,
    uniform,
    uniform_rows,
)
from gemm_opt.model.errors import ModelError
from gemm_opt.model.races import (
    mma_race_message,
    read_shared,
    store_race_message,
)
from gemm_opt.model.registry import OpImpls
from gemm_opt.model.values import (
    Descriptor,
    Pointer,
    SharedBuffer,
    SharedView,
    elem_of,
    from_storage,
    to_storage,
    value_elem,
)

IMPLS = OpImpls("memory")
"""The memory family's implementations."""


@IMPLS.impl("tile.program_id")
def _b_program_id(c: Compiler, op: Any) -> Exec:
    r = result_slot(c, op)
    axis = ir.IntegerAttr(op.operation.attributes["axis"]).value

    def run(p: Program, mask: np.ndarray) -> None:
        p.env[r] = np.full(p.W, p.pid[axis], dtype=np.int64)

    return run


@IMPLS.impl("tile.warp_id")
def _b_warp_id(c: Compiler, op: Any) -> Exec:
    r = result_slot(c, op)
    ids = np.arange(c.num_warps, dtype=np.int64)

    def run(p: Program, mask: np.ndarray) -> None:
        p.env[r] = ids

    return run


@IMPLS.impl("tile.make_tensor_descriptor")
def _b_make_desc(c: Compiler, op: Any) -> Exec:
    base = c.slot(op.base)
    shape = [c.slot(v) for v in op.shape]
    strides = [c.slot(v) for v in op.strides]
    r = result_slot(c, op)

    def run(p: Program, mask: np.ndarray) -> None:
        sh = stack_slots(p, shape)
        p.env[r] = Descriptor(
            base=p.env[base],
            shape=sh,
            strides=stack_slots(p, strides),
            origin=np.zeros_like(sh),
            bounds=None,
            pred=np.ones(p.W, dtype=np.bool_),
        )

    return run


@IMPLS.impl("tile.update_tensor_descriptor")
def _b_update_desc(c: Compiler, op: Any) -> Exec:
    desc = c.slot(op.desc)
    offsets = [c.slot(v) for v in op.offsets]
    bounds = [c.slot(v) for v in op.bounds]
    pred = None if op.pred is None else c.slot(op.pred)
    r = result_slot(c, op)

    def run(p: Program, mask: np.ndarray) -> None:
        d: Descriptor = p.env[desc]
        new_pred = d.pred if pred is None else d.pred & (p.env[pred] != 0)
        p.env[r] = Descriptor(
            base=d.base,
            shape=d.shape,
            strides=d.strides,
            origin=d.origin + stack_slots(p, offsets),
            bounds=stack_slots(p, bounds) if bounds else d.bounds,
            pred=new_pred,
        )

    return run


@IMPLS.impl("tile.local_alloc")
def _b_local_alloc(c: Compiler, op: Any) -> Exec:
    r = result_slot(c, op)
    t = op.operation.results[0].type
    if not isinstance(t, SharedType):
        raise ModelError(f"{op_where(op)}: expected a !tile.shared result, got {t}")
    shape = tuple(t.shape)
    elem = elem_of(t.element_type)
    if elem is None:
        raise ModelError(f"{op_where(op)}: unsupported element type {t.element_type}")
    label = f"local_alloc at {op_location(op.operation)}"

    def run(p: Program, mask: np.ndarray) -> None:
        buf = SharedBuffer(label, shape, elem)
        p.env[r] = SharedView(buf, np.zeros((p.W, 0), dtype=np.int64))

    return run


@IMPLS.impl("tile.memdesc_index")
def _b_memdesc_index(c: Compiler, op: Any) -> Exec:
    src = c.slot(op.src)
    idx = c.slot(op.index)
    r = result_slot(c, op)
    where = op_where(op)

    def run(p: Program, mask: np.ndarray) -> None:
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


@IMPLS.impl("tile.memdesc_trans")
def _b_memdesc_trans(c: Compiler, op: Any) -> Exec:
    src = c.slot(op.src)
    r = result_slot(c, op)
    order = tuple(op.permutation())

    def run(p: Program, mask: np.ndarray) -> None:
        v: SharedView = p.env[src]
        perm = order if v.perm is None else tuple(v.perm[d] for d in order)
        p.env[r] = SharedView(v.buffer, v.prefix, perm)

    return run


@IMPLS.impl("tile.local_load")
def _b_local_load(c: Compiler, op: Any) -> Exec:
    src = c.slot(op.src)
    r = result_slot(c, op)
    where = op_where(op)
    elem, _ = value_elem(op.operation.results[0].type)
    if elem is None:
        raise ModelError(f"{where}: unsupported result type {op.operation.results[0].type}")

    def run(p: Program, mask: np.ndarray) -> None:
        view = p.env[src]
        _, prefix = read_shared(p, view, mask, "the buffer index", where)
        p.env[r] = from_storage(view.read(prefix), elem)

    return run


@IMPLS.impl("tensor.splat")
def _b_splat(c: Compiler, op: Any) -> Exec:
    (a,) = operand_slots(c, op)[:1]
    r = result_slot(c, op)
    elem, shape = value_elem(op.operation.results[0].type)
    if elem is None or shape is None or len(op.operation.operands) != 1:
        raise ModelError(f"{op_where(op)}: only static splats of a scalar are modelled")
    where = op_where(op)

    def run(p: Program, mask: np.ndarray) -> None:
        v = uniform(p.env[a], mask, "the splat value", where)
        p.env[r] = np.full(shape, v, dtype=elem.dtype)

    return run


@IMPLS.impl("tensor.extract")
def _b_extract(c: Compiler, op: Any) -> Exec:
    src, *indices = operand_slots(c, op)
    r = result_slot(c, op)
    where = op_where(op)

    def run(p: Program, mask: np.ndarray) -> None:
        t = p.env[src]
        at = tuple(int(uniform(p.env[i], mask, "the index", where)) for i in indices)
        # Equivalent mutant: strict=False; tensor.extract's verifier gives one index per dim.
        if any(not 0 <= i < n for i, n in zip(at, t.shape, strict=True)):
            raise ModelError(f"{where}: index {list(at)} outside a {list(t.shape)} tensor")
        p.env[r] = np.full(p.W, t[at], dtype=t.dtype)

    return run


@IMPLS.impl("tile.convert_layout")
def _b_convert_layout(c: Compiler, op: Any) -> Exec:
    (a,) = operand_slots(c, op)
    r = result_slot(c, op)

    def run(p: Program, mask: np.ndarray) -> None:
        p.env[r] = p.env[a]

    return run


def _block_access(c: Compiler, op: Any, value_type: ir.Type):
    elem, shape = value_elem(value_type)
    # Equivalent mutant: or->and; the verifier admits only ranked tensors of modelled types.
    if elem is None or shape is None:
        raise ModelError(f"{op_where(op)}: unsupported block type {value_type}")
    slots = (
        c.slot(op.base),
        [c.slot(v) for v in op.shape],
        [c.slot(v) for v in op.strides],
        [c.slot(v) for v in op.offsets],
    )
    return elem, shape, slots


def block_indices(p: Program, mask: np.ndarray, block: tuple[int, ...], slots, where: str):
    """(pointer, in-bounds mask, flat indices of the in-bounds elements)."""
    base_s, shape_s, stride_s, off_s = slots
    ptr: Pointer = p.env[base_s]
    shape = uniform_rows(stack_slots(p, shape_s), mask, "the block shape", where)
    strides = uniform_rows(stack_slots(p, stride_s), mask, "the block strides", where)
    offsets = uniform_rows(stack_slots(p, off_s), mask, "the block offsets", where)
    base = int(uniform(ptr.offset, mask, "the base pointer", where))
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


@IMPLS.impl("tile.load_block")
def _b_load_block(c: Compiler, op: Any) -> Exec:
    where = op_where(op)
    elem, block, slots = _block_access(c, op, op.operation.results[0].type)
    r = result_slot(c, op)

    def run(p: Program, mask: np.ndarray) -> None:
        sync = p.run.sync
        if sync is not None:
            sync.scheduler.point(p.clock)
        ptr, inside, idx = block_indices(p, mask, block, slots, where)
        if sync is not None and sync.memory is not None:
            sync.memory.read(p.clock, ptr.array, ptr.name, idx, where)
        out = np.zeros(block, dtype=elem.storage)
        out[inside] = ptr.array[idx]
        p.env[r] = from_storage(out, elem)

    return run


@IMPLS.impl("tile.store_block")
def _b_store_block(c: Compiler, op: Any) -> Exec:
    where = op_where(op)
    elem, block, slots = _block_access(c, op, op.value.type)
    value = c.slot(op.value)

    def run(p: Program, mask: np.ndarray) -> None:
        if not mask.all():
            raise ModelError(
                f"{where}: store_block under warp-divergent control flow is not modelled "
                "(which warp stores which element depends on the register layout)"
            )
        sync = p.run.sync
        if sync is not None:
            sync.scheduler.point(p.clock)
        ptr, inside, idx = block_indices(p, mask, block, slots, where)
        if sync is not None and sync.memory is not None:
            sync.memory.write(p.clock, ptr.array, ptr.name, idx, where)
        data = to_storage(p.env[value], elem)
        before = ptr.array[idx].tobytes() if sync is not None else b""
        ptr.array[idx] = data[inside]
        # Progress only if the bits changed: rewriting what is there changes
        # nothing a spinning loop or another program could see.
        if sync is not None and ptr.array[idx].tobytes() != before:
            # Equivalent mutant: -= 1 or += 2; effects is only compared with an earlier value.
            p.clock.effects += 1
            sync.scheduler.changed(ptr.array)

    return run


@IMPLS.impl("tile.local_store")
def _b_local_store(c: Compiler, op: Any) -> Exec:
    value, dest = c.slot(op.value), c.slot(op.dest)
    where = op_where(op)
    elem, _ = value_elem(op.value.type)

    def run(p: Program, mask: np.ndarray) -> None:
        if not program_level(mask, where):
            return
        v: SharedView = p.env[dest]
        v.writable(where)
        prefix = uniform_rows(v.prefix, mask, "the buffer index", where)
        buf = v.buffer
        if buf.pending[prefix].any():
            raise ModelError(
                "write of shared memory still being written by an in-flight TDM copy: "
                f"{where} in program {p.pid} writes slot {list(prefix)} of the {buf.label} "
                "before a wait completes the copy into it"
            )
        if buf.mma_reading[prefix].any():
            raise ModelError(mma_race_message(p, buf, prefix, where))
        if buf.store_reading[prefix].any():
            raise ModelError(store_race_message(p, buf, prefix, where))
        buf.data[prefix] = to_storage(np.asarray(p.env[value]), elem)
        buf.written[prefix] = True

    return run


__all__ = [
    "IMPLS",
    "block_indices",
]
