"""Hypothesis strategies for well-formed tile modules, built through the bindings.

:func:`tile_modules` draws a module op by op and builds it with the dialect's
typed op builders (``tile.MakeTensorDescriptorOp(...)``, ``scf.ForOp(...)``,
...), then prints it. Well-formed means every operand has the type its op
declares; attribute values, shapes, layouts and hints range over legal and
illegal values (as a :class:`Space` says), so the verifier, the passes and
the lowering all get exercised, and the module is printed unverified.

Every draw goes through hypothesis, so a failing module shrinks to a small
one: fewer ops, smaller shapes, the first choice of each list.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from gemm_opt.core.ext_compat import arith, func, ir, scf
from gemm_opt.core.layouts import LayoutError
from gemm_opt.core.schedules import GROUPED, KINDS, REDUCTIONS, needs_partials, needs_sync
from gemm_opt.core.targets import TARGETS
from gemm_opt.dialect import barrier, load_all, tile
from gemm_opt.dialect import warp_specialize as ws
from gemm_opt.dialect.async_ops import AsyncWmmaOp, AsyncWmmaWaitOp
from gemm_opt.dialect.schedule import BODY_ARGS, GemmScheduleOp, ScheduleYieldOp
from gemm_opt.dialect.sync import (
    RMW_KINDS,
    SCOPES,
    SEMANTICS,
    AtomicAddBlockOp,
    AtomicRmwOp,
    LoadScalarOp,
    NumProgramsOp,
)
from support.tile_build import i32_attr

#: Integers at and around the limits of the widths attributes are read at:
#: each is stored in the narrowest of i32, i64 and i128 that holds it.
LIMITS: tuple[int, ...] = (
    0,
    1,
    -1,
    (1 << 31) - 1,
    1 << 31,
    -(1 << 31),
    (1 << 32) + 8,
    (1 << 63) - 1,
    1 << 63,
    1 << 64,
)

# ---- the space of values ------------------------------------------------------------

ELEMENT_TYPES: dict[str, Callable[[], ir.Type]] = {
    "f16": ir.F16Type.get,
    "bf16": ir.BF16Type.get,
    "f32": ir.F32Type.get,
    "i8": lambda: ir.IntegerType.get_signless(8),
    "i32": lambda: ir.IntegerType.get_signless(32),
    "f64": ir.F64Type.get,
    "index": ir.IndexType.get,
    "i128": lambda: ir.IntegerType.get_signless(128),
}


@dataclass(frozen=True)
class Space:
    """The values a generated module may take; each tuple is listed most
    ordinary first, since hypothesis shrinks toward the first entry."""

    num_warps: tuple[int, ...] = (8, 4, 2, 1, 16, 32, 3, 64, 1 << 30)
    threads_per_warp: tuple[int | None, ...] = ("target", 32, 64, None)  # type: ignore[assignment]
    targets: tuple[str | None, ...] = (*TARGETS, None, "gfx90a")
    element_types: tuple[str, ...] = ("f16", "bf16", "f32", "i8", "f64", "index", "i128")
    block_dims: tuple[int, ...] = (64, 32, 16, 128, 8, 256, 1, 2, 48, 3)
    ranks: tuple[int, ...] = (2, 1, 3)
    padded_intervals: tuple[int, ...] = (64, 32, 128, 16, 256, 1, 2, 3)
    padded_amounts: tuple[int, ...] = (8, 4, 16, 1, 2, 0)
    swizzle: tuple[tuple[int, int, int], ...] = ((1, 1, 1), (8, 1, 8), (0, 1, 1), (1, 0, 1))
    orders: tuple[str, ...] = ("natural", "reversed", "repeated", "too-long", "short")
    wmma_shapes: tuple[int, ...] = (64, 128, 32, 16, 256)
    wmma_k: tuple[int, ...] = (32, 64, 128, 16)
    instr_shapes: tuple[tuple[int, ...], ...] = (
        (16, 16, 32),
        (16, 16, 16),
        (32, 32, 16),
        (0, 16, 32),
        (16, 16),
    )
    wmma_versions: tuple[int, ...] = (3, 2, 1, 0, 4)
    wmma_warps: tuple[str, ...] = ("matching", "swapped", "all-m", "mismatched", "zero")
    k_widths: tuple[int, ...] = (8, 4, 16, 2, 1, 3, 0)
    wait_counts: tuple[int, ...] = (0, 1, 2, 3, (1 << 31) - 1, (1 << 63) - 1)
    wait_widths: tuple[int, ...] = (32, 64, 128)
    hints: tuple[str, ...] = ("none", "legal", "random", "zero", "all-ones")
    hint_names: tuple[str, ...] = ("warp_used_hint", "warp_used_hints", "warp_use_hint")
    caches: tuple[str, ...] = ("", ".ca", ".cg", ".cs", ".wt", ".xx")
    layouts: tuple[str, ...] = ("padded", "swizzled", "partitioned")
    partitions: tuple[tuple[int, int], ...] = ((2, 1), (1, 1), (4, 2), (0, 1), (1, 0))
    partition_dims: tuple[str, ...] = ("in-range", "negative", "too-large")
    strides: tuple[str, ...] = ("unit-last", "any")
    fused_ranks: tuple[str, ...] = ("same", "mixed")
    blocked_lanes: tuple[str, ...] = ("matching", "partial")
    blocked_warps: tuple[str, ...] = ("matching", "one", "double")
    axes: tuple[int, ...] = (0, 1, 2, 3, -1)
    buffers: tuple[int, ...] = (0, 2, 3, 1)
    buffer_index: tuple[str, ...] = ("in-range", "any")
    ops: tuple[str, ...] = (
        "copy",
        "fused",
        "wait",
        "wmma",
        "load_store",
        "for",
        "if",
        "arith",
        "ids",
        "convert",
        "nest",
        "barrier",
        "store",
        "schedule",
        "warp_specialize",
        "async_mma",
        "sync",
    )
    ring_sizes: tuple[int, ...] = (2, 1, 3, 0, 65)
    barrier_counts: tuple[int, ...] = (1, 2, 0, -1, 1 << 20)
    barrier_ops: tuple[str, ...] = ("tracked", "init", "expect", "arrive", "wait")
    phase_widths: tuple[int, ...] = (32, 1, 64)
    schedule_kinds: tuple[str, ...] = (*KINDS, "split-k")
    reductions: tuple[str | None, ...] = (None, *REDUCTIONS, "ring")
    grouped: tuple[str, ...] = (*GROUPED, "n")
    schedule_blocks: tuple[int, ...] = (32, 64, 16, 128, 2, 1, 48, 1 << 30, *LIMITS)
    schedule_counts: tuple[int, ...] = (8, 1, 4, 2, *LIMITS)
    """``group_m`` and ``num_xcds``."""
    schedule_operands: tuple[str, ...] = ("as-needed", "missing", "extra", "wrong-type")
    c_elements: tuple[str, ...] = ("f16", "bf16", "f32", "i32", "f64")
    yields: tuple[str, ...] = ("blocked", "wmma", "wrong-shape", "f16", "none")
    worker_warps: tuple[int, ...] = (1, 2, 4, 8, 3, 0, 64, *LIMITS)
    worker_regs: tuple[int | None, ...] = (None, 24, 32, 256, 23, 264, 0, *LIMITS)
    workers: tuple[int, ...] = (1, 2, 3)
    captures: tuple[str, ...] = ("some", "none", "all")
    ws_results: tuple[int, ...] = (0, 1, 2)
    use_acc: tuple[str, ...] = ("none", "i1", "false", "i32")
    mma_waits: tuple[int, ...] = (0, 1, 2, *LIMITS)
    sync_ops: tuple[str, ...] = ("atomic_rmw", "num_programs", "load_scalar", "atomic_add_block")
    rmw_kinds: tuple[str, ...] = (*RMW_KINDS, "sub")
    semantics: tuple[str | None, ...] = (*SEMANTICS, None, "seq_cst")
    scopes: tuple[str | None, ...] = (*SCOPES, None, "device")
    sync_elements: tuple[str, ...] = ("i32", "f32", "f16", "bf16", "i8")
    nesting: tuple[int, ...] = (4, 64, 600)
    """Depths of ``op_nest``'s chains of ``scf.if``."""
    max_ops: int = 8
    max_depth: int = 2

    def without(self, **values: Any) -> Space:
        """A copy of the space with ``values`` removed from the named fields."""
        changes = {}
        for name, drop in values.items():
            drop = drop if isinstance(drop, tuple | list | set | frozenset) else (drop,)
            changes[name] = tuple(v for v in getattr(self, name) if v not in drop)
        return dataclasses.replace(self, **changes)


FULL = Space()
"""Every value the generator knows, legal and illegal."""


# ---- building --------------------------------------------------------------------------


@dataclass
class _Scope:
    """Values visible at the insertion point, by kind."""

    ints: dict[int, list[ir.Value]] = field(default_factory=lambda: {1: [], 32: [], 64: []})
    descs: list[ir.Value] = field(default_factory=list)
    buffers: list[ir.Value] = field(default_factory=list)
    tensors: list[ir.Value] = field(default_factory=list)

    def child(self) -> _Scope:
        return _Scope(
            {k: list(v) for k, v in self.ints.items()},
            list(self.descs),
            list(self.buffers),
            list(self.tensors),
        )


class _Builder:
    """Draws and builds one module; ``draw`` is hypothesis's."""

    def __init__(self, draw: Callable[[Any], Any], space: Space) -> None:
        self.draw = draw
        self.space = space
        self.pick = lambda seq: draw(st.sampled_from(seq))
        self.loc = ir.Location.unknown()

    # -- module ----------------------------------------------------------------------

    def module(self) -> ir.Module:
        s = self.space
        module = ir.Module.create(loc=self.loc)
        attrs = module.operation.attributes
        i32 = ir.IntegerType.get_signless(32)
        self.num_warps = self.pick(s.num_warps)
        self.target = self.pick(s.targets)
        tpw = self.pick(s.threads_per_warp)
        if tpw == "target":
            tpw = TARGETS[self.target].warp_size if self.target in TARGETS else 32
        self.threads = tpw or 32
        attrs[tile.NUM_WARPS] = ir.IntegerAttr.get(i32, self.num_warps)
        if tpw is not None:
            attrs[tile.THREADS_PER_WARP] = ir.IntegerAttr.get(i32, tpw)
        if self.target is not None:
            attrs[tile.TARGET] = ir.StringAttr.get(self.target)
        arg_types = [i32, i32, ir.IntegerType.get_signless(64)]
        with ir.InsertionPoint(module.body):
            self.fn = func.FuncOp("fuzz", ir.FunctionType.get(arg_types, []), loc=self.loc)
        self.entry = self.fn.add_entry_block([self.loc] * len(arg_types))
        self.ptrs: dict[str, ir.Value] = {}
        self.worker_ptrs: dict[str, ir.Value] | None = None
        scope = _Scope()
        scope.ints[32] += list(self.entry.arguments[:2])
        scope.ints[64].append(self.entry.arguments[2])
        with ir.InsertionPoint(self.entry):
            self.body(scope, depth=0)
            func.ReturnOp([], loc=self.loc)
        types = [a.type for a in self.entry.arguments]
        self.fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(types, []))
        return module

    def body(self, scope: _Scope, depth: int) -> None:
        s = self.space
        regions = ("for", "if", "schedule", "warp_specialize")
        ops = s.ops if depth < s.max_depth else tuple(o for o in s.ops if o not in regions)
        ops = ops or ("arith",)
        n = self.draw(st.integers(1, s.max_ops if depth == 0 else max(1, s.max_ops // 2)))
        for _ in range(n):
            getattr(self, "op_" + self.pick(ops))(scope, depth)

    # -- values ----------------------------------------------------------------------

    def ptr(self, elem: str) -> ir.Value:
        """The function argument pointing to ``elem`` (added on first use); in a
        worker partition, the captured pointer when there is one (a worker is
        isolated from above: the function's own is an error there)."""
        inner = self.worker_ptrs.get(elem) if self.worker_ptrs is not None else None
        if inner is not None:
            return inner
        if elem not in self.ptrs:
            t = tile.PtrType.get(ir.TypeAttr.get(ELEMENT_TYPES[elem]()))
            self.ptrs[elem] = self.entry.add_argument(t, self.loc)
        return self.ptrs[elem]

    def wide_attr(self, value: int) -> ir.Attribute:
        """An integer attribute of the narrowest of i32, i64, i128 that holds ``value``."""
        width = next(w for w in (32, 64, 128) if -(1 << (w - 1)) <= value < 1 << (w - 1))
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(width), value)

    def const(self, value: int, width: int) -> ir.Value:
        t = ir.IntegerType.get_signless(width)
        return arith.ConstantOp(t, ir.IntegerAttr.get(t, value), loc=self.loc).result

    def int_value(self, scope: _Scope, width: int) -> ir.Value:
        pool = scope.ints[width]
        if pool and self.draw(st.booleans()):
            return self.pick(pool)
        if width == 1:
            return self.const(self.draw(st.integers(0, 1)), 1)
        v = self.const(self.pick((0, 1, 64, 128, -1, (1 << (width - 1)) - 1)), width)
        pool.append(v)
        return v

    def elem(self, allowed: tuple[str, ...] | None = None) -> str:
        choices = tuple(e for e in self.space.element_types if allowed is None or e in allowed)
        return self.pick(choices or ("f16",))

    def order(self, rank: int) -> list[int]:
        kind = self.pick(self.space.orders)
        natural = list(range(rank - 1, -1, -1))
        if kind == "natural" or rank == 1:
            return natural
        if kind == "reversed":
            return natural[::-1]
        if kind == "repeated":
            return [0] * rank
        if kind == "too-long":
            return [*natural, rank]
        return natural[:-1]

    def shared_layout(self, rank: int) -> ir.Attribute:
        s = self.space
        kind = self.pick(s.layouts)
        if kind == "padded":
            return tile.PaddedSharedAttr.build(
                interval=self.pick(s.padded_intervals),
                amount=self.pick(s.padded_amounts),
                order=self.order(rank),
            )
        vec, per_phase, max_phase = self.pick(s.swizzle)
        inner = tile.SwizzledSharedAttr.build(
            vec=vec, per_phase=per_phase, max_phase=max_phase, order=self.order(rank)
        )
        if kind == "swizzled":
            return inner
        parts, groups = self.pick(s.partitions)
        dim = {"in-range": self.draw(st.integers(0, rank - 1)), "negative": -1, "too-large": rank}
        return tile.PartitionedSharedAttr.build(
            num_partitions=parts,
            num_groups=groups,
            partition_dim=dim[self.pick(s.partition_dims)],
            layout=inner,
        )

    def block(self, rank: int | None = None) -> ir.RankedTensorType:
        """A block tensor type: shape, element type and shared layout."""
        rank = rank or self.pick(self.space.ranks)
        shape = [self.pick(self.space.block_dims) for _ in range(rank)]
        elem = ELEMENT_TYPES[self.elem()]()
        return ir.RankedTensorType.get(shape, elem, self.shared_layout(rank))

    def descriptor(self, scope: _Scope, block: ir.RankedTensorType) -> ir.Value:
        elem = next(k for k, f in ELEMENT_TYPES.items() if f() == block.element_type)
        rank = block.rank
        dims = [self.int_value(scope, 32) for _ in range(rank)]
        strides = [self.int_value(scope, 64) for _ in range(rank)]
        if self.pick(self.space.strides) == "unit-last":
            strides[-1] = self.const(1, 64)
        t = tile.TensorDescType.get(ir.TypeAttr.get(block))
        d = tile.MakeTensorDescriptorOp(self.ptr(elem), dims, strides, t, loc=self.loc).result
        if self.draw(st.booleans()):
            offsets = [self.int_value(scope, 32) for _ in range(rank)]
            bounds = (
                [self.int_value(scope, 32) for _ in range(rank)] if self.draw(st.booleans()) else []
            )
            pred = self.int_value(scope, 1) if self.draw(st.booleans()) else None
            d = tile.UpdateTensorDescriptorOp(d, offsets, bounds, t, pred=pred, loc=self.loc).result
        scope.descs.append(d)
        return d

    def buffer(self, scope: _Scope, block: ir.RankedTensorType) -> ir.Value:
        """A shared buffer of ``block``'s type: allocated, or indexed from a multi-buffer."""
        t = tile.SharedType.get(ir.TypeAttr.get(block))
        n = self.pick(self.space.buffers)
        if n == 0:
            buf = tile.LocalAllocOp(t, loc=self.loc).result
        else:
            multi = ir.RankedTensorType.get([n, *block.shape], block.element_type, block.encoding)
            mt = tile.SharedType.get(ir.TypeAttr.get(multi))
            whole = tile.LocalAllocOp(mt, loc=self.loc).result
            scope.buffers.append(whole)
            if self.pick(self.space.buffer_index) == "in-range":
                idx = self.const(self.draw(st.integers(0, n - 1)), 32)
            else:
                idx = self.int_value(scope, 32)
            buf = tile.MemdescIndexOp(whole, idx, t, loc=self.loc).result
        scope.buffers.append(buf)
        return buf

    def operand_buffer(
        self, scope: _Scope, shape: list[int], elem: ir.Type, layout: Any
    ) -> ir.Value:
        """A shared operand of ``shape``: a buffer, or the ``tile.memdesc_trans``
        view of a buffer holding it transposed (its layout inferred; a layout
        with no transposed view, a partitioned one, keeps the plain buffer)."""
        if self.draw(st.booleans()):
            stored = ir.RankedTensorType.get(shape[::-1], elem, layout)
            try:
                view_t = tile.MemdescTransOp.result_type(
                    tile.SharedType.get(ir.TypeAttr.get(stored)), (1, 0)
                )
            except (LayoutError, tile.VerifyError):
                view_t = None
            if view_t is not None:
                buf = self.buffer(scope, stored)
                view = tile.MemdescTransOp(buf, view_t, loc=self.loc)
                view.operation.attributes["order"] = ir.DenseI32ArrayAttr.get([1, 0])
                return view.result
        return self.buffer(scope, ir.RankedTensorType.get(shape, elem, layout))

    def hint(self) -> int | None:
        kind = self.pick(self.space.hints)
        nw = max(1, min(self.num_warps, 1 << 5))
        if kind == "none":
            return None
        if kind == "zero":
            return 0
        if kind == "all-ones":
            return -1
        if kind == "random":
            return self.draw(st.integers(-(1 << 31), (1 << 32) - 1))
        return self.subspace(nw, self.draw(st.integers(0, max(0, nw.bit_length() - 1))))

    def subspace(self, nw: int, pinned: int, value: int | None = None) -> int:
        """The mask of warps whose ``pinned`` low id bits equal ``value``."""
        bits = max(0, (nw - 1).bit_length())
        pinned = min(pinned, bits)
        mask_bits = (1 << pinned) - 1
        v = self.draw(st.integers(0, mask_bits)) if value is None else value & mask_bits
        return sum(1 << w for w in range(nw) if w & mask_bits == v)

    def set_attrs(self, op: Any, hint_name: str, hints: Any) -> None:
        attrs = op.operation.attributes
        if hints is not None:
            attrs[hint_name] = hints
        cache = self.pick(self.space.caches)
        if cache:
            attrs["cache"] = ir.StringAttr.get(cache)

    # -- ops -------------------------------------------------------------------------

    def op_copy(self, scope: _Scope, depth: int) -> None:
        block = self.block()
        desc = self.descriptor(scope, block)
        buf = self.buffer(scope, block)
        pred = self.int_value(scope, 1) if self.draw(st.booleans()) else None
        op = tile.AsyncTDMCopyGlobalToLocalOp(desc, buf, pred=pred, loc=self.loc)
        h = self.hint()
        name = self.pick(self.space.hint_names)
        if name == "warp_used_hints" and h is not None:
            self.set_attrs(op, name, ir.DenseI32ArrayAttr.get([ir.IntegerAttr(i32_attr(h)).value]))
        else:
            self.set_attrs(op, name, None if h is None else i32_attr(h))

    def op_fused(self, scope: _Scope, depth: int) -> None:
        n = self.draw(st.integers(2, 4))
        nw = max(1, min(self.num_warps, 1 << 5))
        # Members pinned to distinct values of the low bits are disjoint.
        pinned = max(self.draw(st.integers(0, 2)), (n - 1).bit_length())
        kwargs = {}
        hints = []
        same = self.block() if self.draw(st.booleans()) else None
        rank = self.pick(self.space.ranks) if self.pick(self.space.fused_ranks) == "same" else None
        for i in range(n):
            block = same or self.block(rank)
            kwargs[f"desc{i}"] = self.descriptor(scope, block)
            kwargs[f"dest{i}"] = self.buffer(scope, block)
            kind = self.pick(self.space.hints)
            if kind in ("legal", "none"):
                hints.append(self.subspace(nw, pinned, i))
            else:
                hints.append(self.hint() or 0)
        op = tile.AsyncTDMFusedCopyGlobalToLocalOp(**kwargs, loc=self.loc)
        signed = [ir.IntegerAttr(i32_attr(h)).value for h in hints]
        self.set_attrs(op, "warp_used_hints", ir.DenseI32ArrayAttr.get(signed))

    def op_wait(self, scope: _Scope, depth: int) -> None:
        op = tile.AsyncTDMWaitOp(loc=self.loc)
        num = self.pick(self.space.wait_counts)
        width = self.pick(self.space.wait_widths)
        width = max(width, num.bit_length() + 1)
        op.operation.attributes["num"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(width), num)

    def barrier(self, scope: _Scope) -> ir.Value:
        """One barrier of a new ring (its index constant, or any i32)."""
        n = self.pick(self.space.ring_sizes)
        ring_t = barrier.MBarrierRingType.get(i32_attr(n))
        ring = barrier.BarrierAllocOp(ring_t, loc=self.loc).result
        if self.pick(self.space.buffer_index) == "in-range":
            idx = self.const(self.draw(st.integers(0, max(0, n - 1))), 32)
        else:
            idx = self.int_value(scope, 32)
        bar_t = tile.MBarrierType.get(ir.TypeAttr.get(ir.IntegerType.get_signless(64)))
        bar = barrier.BarrierIndexOp(ring, idx, bar_t, loc=self.loc).result
        op = barrier.BarrierInitOp(bar, loc=self.loc)
        op.operation.attributes["count"] = i32_attr(self.pick(self.space.barrier_counts))
        return bar

    def op_barrier(self, scope: _Scope, depth: int) -> None:
        bar = self.barrier(scope)
        kind = self.pick(self.space.barrier_ops)
        pred = self.int_value(scope, 1) if self.draw(st.booleans()) else None
        count = i32_attr(self.pick(self.space.barrier_counts))
        if kind == "tracked":
            block = self.block()
            desc = self.descriptor(scope, block)
            buf = self.buffer(scope, block)
            nbytes = math.prod(block.shape) * max(1, tile.element_bits(block.element_type) // 8)
            op = barrier.BarrierExpectOp(bar, loc=self.loc)
            op.operation.attributes["bytes"] = i32_attr(nbytes)
            tile.AsyncTDMCopyGlobalToLocalOp(desc, buf, barrier=bar, loc=self.loc)
            kind = "wait"
        if kind == "init":
            barrier.BarrierInitOp(bar, loc=self.loc).operation.attributes["count"] = count
        elif kind == "expect":
            op = barrier.BarrierExpectOp(bar, pred=pred, loc=self.loc)
            op.operation.attributes["bytes"] = count
        elif kind == "arrive":
            op = barrier.BarrierArriveOp(bar, pred=pred, loc=self.loc)
            if self.draw(st.booleans()):
                op.operation.attributes["count"] = count
        else:
            width = self.pick(self.space.phase_widths)
            phase = self.const(self.draw(st.integers(0, 1)), width)
            barrier.BarrierWaitOp(bar, phase, pred=pred, loc=self.loc)

    def op_store(self, scope: _Scope, depth: int) -> None:
        block = self.block()
        desc = self.descriptor(scope, block)
        buf = self.buffer(scope, block)
        op = barrier.AsyncTDMCopyLocalToGlobalOp(desc, buf, loc=self.loc)
        cache = self.pick(self.space.caches)
        if cache:
            op.operation.attributes["cache"] = ir.StringAttr.get(cache)
        self.op_wait(scope, depth)

    # -- schedules -------------------------------------------------------------------

    def op_schedule(self, scope: _Scope, depth: int) -> None:
        """A ``tile.gemm_schedule``: kind, reduction and grouping, block sizes and
        counts at the integer limits, the optional operands as the kind needs
        them (or not), and a body that yields the tile's accumulator."""
        s = self.space
        kind = self.pick(s.schedule_kinds)
        operands = self.pick(s.schedule_operands)
        reduction = self.pick(s.reductions)
        grouped = self.pick(s.grouped)
        if operands == "as-needed":  # a consistent schedule but for the drawn values
            legal = tuple(r for r in s.reductions if r in REDUCTIONS) or (None,)
            reduction = (
                (reduction if reduction in legal else legal[0]) if kind == "stream-k" else None
            )
            grouped = grouped if kind == "persistent" else "none"
        i32 = ir.IntegerType.get_signless(32)
        c_elem = self.pick(s.c_elements)
        values = [self.int_value(scope, 32) for _ in range(3)]
        values += [self.ptr(c_elem), self.int_value(scope, 64)]
        wants = {
            "group_lens": grouped != "none",
            "num_groups": grouped != "none",
            "sync": kind in KINDS and needs_sync(kind, reduction),
            "partials": kind in KINDS and needs_partials(kind, reduction),
        }
        if operands == "missing":
            wants[self.pick(tuple(wants))] = False
        elif operands == "extra":
            wants[self.pick(tuple(wants))] = True
        wrong = self.pick(tuple(wants)) if operands == "wrong-type" else None
        segments = [1] * 5
        for name, elem in (
            ("group_lens", "i32"),
            ("num_groups", None),
            ("sync", "i32"),
            ("partials", "f32"),
        ):
            if not wants[name]:
                segments.append(0)
                continue
            if elem is None:
                values.append(self.int_value(scope, 64 if wrong == name else 32))
            else:
                values.append(self.ptr("f16" if wrong == name else elem))
            segments.append(1)
        attrs = {
            "kind": ir.StringAttr.get(kind),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([*segments, 0, 0, 0]),
        }
        if reduction is not None:
            attrs["reduction"] = ir.StringAttr.get(reduction)
        if grouped != "none" or self.draw(st.booleans()):
            attrs["grouped"] = ir.StringAttr.get(grouped)
        blocks = {n: self.pick(s.schedule_blocks) for n in ("block_m", "block_n", "block_k")}
        for name, v in blocks.items():
            attrs[name] = self.wide_attr(v)
        attrs["group_m"] = self.wide_attr(self.pick(s.schedule_counts))
        # num_xcds belongs to work stealing; elsewhere, now and then, it must be refused
        if kind == "work-stealing" or self.draw(st.integers(0, 7)) == 0:
            attrs["num_xcds"] = self.wide_attr(self.pick(s.schedule_counts))
        op = ir.Operation.create(
            GemmScheduleOp.OPERATION_NAME,
            operands=values,
            attributes=attrs,
            regions=1,
            loc=self.loc,
        )
        body = op.regions[0].blocks.append(*[i32] * len(BODY_ARGS))
        inner = scope.child()
        inner.ints[32] += list(body.arguments)
        with ir.InsertionPoint(body):
            self.body(inner, depth + 1)
            acc = self.schedule_acc(inner, blocks["block_m"], blocks["block_n"])
            ir.Operation.create(
                ScheduleYieldOp.OPERATION_NAME, operands=[] if acc is None else [acc], loc=self.loc
            )

    def schedule_acc(self, scope: _Scope, bm: int, bn: int) -> ir.Value | None:
        """The body's accumulator: ``bm x bn`` f32 in a register layout (or not)."""
        kind = self.pick(self.space.yields)
        if kind == "none":
            return None
        fits = 0 < bm <= 1 << 30 and 0 < bn <= 1 << 30
        shape = [bm, bn] if fits and kind != "wrong-shape" else [32, 16]
        elem = ir.F16Type.get() if kind == "f16" else ir.F32Type.get()
        layout = self.wmma_layout() if kind == "wmma" else self.blocked(shape)
        t = ir.RankedTensorType.get(shape, elem, layout)
        same = [v for v in scope.tensors if v.type == t]
        if same and self.draw(st.booleans()):
            return self.pick(same)
        zero = ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(elem, 0.0))
        return arith.ConstantOp(t, zero, loc=self.loc).result

    # -- warp specialization ---------------------------------------------------------

    def op_warp_specialize(self, scope: _Scope, depth: int) -> None:
        """A ``tile.warp_specialize``: the default partition (the kernel's warps)
        and workers of drawn warp and register counts, isolated from above, each
        block taking the captured values (pointers, integers, descriptors,
        buffers)."""
        s = self.space
        pool = [self.ptr(self.elem(("f16", "bf16")))]
        pool += scope.ints[32] + scope.ints[64] + scope.descs + scope.buffers
        how = self.pick(s.captures)
        if how == "none":
            captures: list[ir.Value] = []
        elif how == "all":
            captures = pool[: ws.MAX_CAPTURES]
        else:
            n = self.draw(st.integers(1, min(len(pool), 6)))
            captures = [self.pick(pool) for _ in range(n)]
        n_results = min(self.pick(s.ws_results), len(scope.tensors))
        yielded = [self.pick(scope.tensors) for _ in range(n_results)]
        segs = lambda n, cap: ir.DenseI32ArrayAttr.get([1] * n + [0] * (cap - n))  # noqa: E731
        op = ir.Operation.create(
            ws.WarpSpecializeOp.OPERATION_NAME,
            results=[v.type for v in yielded],
            operands=captures,
            attributes={
                "operandSegmentSizes": segs(len(captures), ws.MAX_CAPTURES),
                "resultSegmentSizes": segs(len(yielded), ws.MAX_RESULTS),
            },
            regions=2,
            loc=self.loc,
        )
        default = op.regions[0].blocks.append()
        with ir.InsertionPoint(default):
            self.body(scope.child(), depth + 1)
            ir.Operation.create(
                ws.WarpYieldOp.OPERATION_NAME,
                operands=yielded,
                attributes={"operandSegmentSizes": segs(len(yielded), ws.MAX_RESULTS)},
                loc=self.loc,
            )
        holder = op.regions[1].blocks.append()
        for _ in range(self.pick(s.workers)):
            with ir.InsertionPoint(holder):
                part = ir.Operation.create(
                    ws.WarpPartitionOp.OPERATION_NAME, regions=1, loc=self.loc
                )
            warps = self.pick(s.worker_warps)
            part.attributes["num_warps"] = self.wide_attr(warps)
            regs = self.pick(s.worker_regs)
            if regs is not None:
                part.attributes["num_regs"] = self.wide_attr(regs)
            block = part.regions[0].blocks.append(*[v.type for v in captures])
            self.worker(block, warps, depth)
        with ir.InsertionPoint(holder):
            ir.Operation.create(ws.PartitionsEndOp.OPERATION_NAME, loc=self.loc)
        scope.tensors += list(op.results)

    def worker(self, block: ir.Block, warps: int, depth: int) -> None:
        """A worker's body: it sees only its block arguments (and what it makes)."""
        inner = _Scope()
        ptrs: dict[str, ir.Value] = {}
        for arg in block.arguments:
            t = arg.type
            if isinstance(t, ir.IntegerType) and ir.IntegerType(t).width in inner.ints:
                inner.ints[ir.IntegerType(t).width].append(arg)
            elif isinstance(t, tile.TensorDescType):
                inner.descs.append(arg)
            elif isinstance(t, tile.SharedType):
                inner.buffers.append(arg)
            elif isinstance(t, tile.PtrType):
                name = next((k for k, f in ELEMENT_TYPES.items() if f() == t.element_type), "")
                ptrs.setdefault(name, arg)
        saved = (self.worker_ptrs, self.num_warps)
        self.worker_ptrs = ptrs
        if 1 <= warps <= 64:  # its layouts are for its own warps
            self.num_warps = warps
        try:
            with ir.InsertionPoint(block):
                self.body(inner, depth + 1)
                ir.Operation.create(ws.WarpReturnOp.OPERATION_NAME, loc=self.loc)
        finally:
            self.worker_ptrs, self.num_warps = saved

    # -- async MMA and sync ops ------------------------------------------------------

    def op_async_mma(self, scope: _Scope, depth: int) -> None:
        """``tile.async_wmma`` from shared A and B (``use_acc`` absent, i1, false or
        of the wrong type), then ``tile.async_wmma_wait`` of a drawn count."""
        s = self.space
        m, n, k = self.pick(s.wmma_shapes), self.pick(s.wmma_shapes), self.pick(s.wmma_k)
        elem = ELEMENT_TYPES[self.elem(("f16", "bf16", "f32", "i8"))]()
        acc = self.wmma_layout()
        a, b = (
            self.operand_buffer(scope, shape, elem, self.shared_layout(2))
            for shape in ([m, k], [k, n])
        )
        f32 = ir.F32Type.get()
        acc_t = ir.RankedTensorType.get([m, n], f32, acc)
        carried = [v for v in scope.tensors if v.type == acc_t]
        if carried and self.draw(st.booleans()):
            c = self.pick(carried)
        else:
            zero = ir.DenseElementsAttr.get_splat(acc_t, ir.FloatAttr.get(f32, 0.0))
            c = arith.ConstantOp(acc_t, zero, loc=self.loc).result
        use = {
            "none": lambda: None,
            "i1": lambda: self.int_value(scope, 1),
            "false": lambda: self.const(0, 1),
            "i32": lambda: self.int_value(scope, 32),
        }[self.pick(s.use_acc)]()
        op = AsyncWmmaOp(a, b, c, acc_t, use_acc=use, loc=self.loc)
        if self.draw(st.booleans()):
            op.operation.attributes["k_width"] = self.wide_attr(self.pick(s.k_widths))
        wait = AsyncWmmaWaitOp(op.result, acc_t, loc=self.loc)
        wait.operation.attributes["num"] = self.wide_attr(self.pick(s.mma_waits))
        scope.tensors.append(wait.result)

    def op_sync(self, scope: _Scope, depth: int) -> None:
        """A grid-size read, an atomic on a counter or a block, or a scalar read."""
        s = self.space
        kind = self.pick(s.sync_ops)
        elem = self.pick(s.sync_elements)
        i32 = ir.IntegerType.get_signless(32)
        if kind == "num_programs":
            op = NumProgramsOp(loc=self.loc)
            op.operation.attributes["axis"] = self.wide_attr(self.pick(s.axes))
            scope.ints[32].append(op.result)
            return
        if kind in ("atomic_rmw", "load_scalar"):
            base = self.ptr(elem if elem == "i8" else "i32")
            index = self.int_value(scope, 32)
            if kind == "load_scalar":
                scope.ints[32].append(LoadScalarOp(base, index, i32, loc=self.loc).result)
                return
            value = self.int_value(scope, self.pick((32, 32, 64)))
            rmw = AtomicRmwOp(base, index, value, i32, loc=self.loc)
            for name, choices in (("kind", s.rmw_kinds), ("sem", s.semantics), ("scope", s.scopes)):
                v = self.pick(choices)
                if v is not None:
                    rmw.operation.attributes[name] = ir.StringAttr.get(v)
            scope.ints[32].append(rmw.result)
            return
        elem = "f32" if elem == "i32" else elem
        shape = [self.pick(s.wmma_shapes) for _ in range(2)]
        layout = self.wmma_layout() if self.draw(st.booleans()) else self.blocked(shape)
        t = ir.RankedTensorType.get(shape, ELEMENT_TYPES[elem](), layout)
        same = [v for v in scope.tensors if v.type == t]
        if same and self.draw(st.booleans()):
            value = self.pick(same)
        else:
            zero = (
                ir.FloatAttr.get(t.element_type, 0.0)
                if elem != "i8"
                else ir.IntegerAttr.get(t.element_type, 0)
            )
            value = arith.ConstantOp(
                t, ir.DenseElementsAttr.get_splat(t, zero), loc=self.loc
            ).result
        dims, strides, offsets = self.access(scope, 2)
        add = AtomicAddBlockOp(self.ptr(elem), dims, strides, offsets, value, loc=self.loc)
        for name, choices in (("sem", s.semantics), ("scope", s.scopes)):
            v = self.pick(choices)
            if v is not None:
                add.operation.attributes[name] = ir.StringAttr.get(v)

    def wmma_layout(self) -> ir.Attribute:
        s = self.space
        nw = self.num_warps
        kind = self.pick(s.wmma_warps)
        wm = 1 << ((nw.bit_length() - 1 + 1) // 2) if nw > 0 else 1
        wn = max(1, nw // wm)
        warps = {
            "matching": (wm, wn),
            "swapped": (wn, wm),
            "all-m": (nw, 1),
            "mismatched": (wm * 2, wn),
            "zero": (0, wn),
        }[kind]
        return tile.WmmaAttr.build(
            version=self.pick(s.wmma_versions),
            warps_per_cta=warps,
            instr_shape=self.pick(s.instr_shapes),
            transposed=self.draw(st.booleans()),
        )

    def op_wmma(self, scope: _Scope, depth: int) -> None:
        s = self.space
        m, n, k = self.pick(s.wmma_shapes), self.pick(s.wmma_shapes), self.pick(s.wmma_k)
        elem_name = self.elem(("f16", "bf16", "f32", "i8"))
        elem = ELEMENT_TYPES[elem_name]()
        acc = self.wmma_layout()
        k_width = self.pick(s.k_widths)
        operands = []
        for idx, shape in enumerate(([m, k], [k, n])):
            layout = tile.SwizzledSharedAttr.build(
                vec=1, per_phase=1, max_phase=1, order=self.order(2)
            )
            if self.draw(st.booleans()):
                layout = self.shared_layout(2)
            buf = self.operand_buffer(scope, shape, elem, layout)
            dot = tile.DotOperandAttr.build(op_idx=idx, parent=acc, k_width=k_width)
            t = ir.RankedTensorType.get(shape, elem, dot)
            operands.append(tile.LocalLoadOp(buf, t, loc=self.loc).result)
        f32 = ir.F32Type.get()
        acc_t = ir.RankedTensorType.get([m, n], f32, acc)
        carried = [v for v in scope.tensors if v.type == acc_t]
        if carried and self.draw(st.booleans()):
            c = self.pick(carried)
        else:
            zero = ir.DenseElementsAttr.get_splat(acc_t, ir.FloatAttr.get(f32, 0.0))
            c = arith.ConstantOp(acc_t, zero, loc=self.loc).result
        d = tile.WmmaOp(*operands, c, acc_t, loc=self.loc).result
        scope.tensors.append(d)
        if self.draw(st.booleans()):
            out_elem = self.elem(("f16", "bf16", "f32"))
            out_t = ir.RankedTensorType.get([m, n], ELEMENT_TYPES[out_elem](), acc)
            if out_elem != "f32":
                d = arith.TruncFOp(out_t, d, loc=self.loc).result
            self.store(scope, d, out_elem)

    def blocked(self, shape: list[int]) -> ir.Attribute:
        rank = len(shape)
        tpw = [1] * rank
        tpw[-1] = self.pick((self.threads, 8, 16, 4))
        if rank > 1:
            tpw[0] = max(1, self.threads // tpw[-1])
        elif self.pick(self.space.blocked_lanes) == "matching":
            tpw[-1] = self.threads
        wpc = [1] * rank
        warps = {"matching": self.num_warps, "one": 1, "double": 2 * self.num_warps}
        wpc[0] = warps[self.pick(self.space.blocked_warps)]
        return tile.BlockedAttr.build(
            size_per_thread=[1] * (rank - 1) + [self.pick((1, 4, 8))],
            threads_per_warp=tpw,
            warps_per_cta=wpc,
            order=self.order(rank),
        )

    def access(self, scope: _Scope, rank: int) -> list[list[ir.Value]]:
        return [
            [self.int_value(scope, 32) for _ in range(rank)],
            [self.int_value(scope, 64) for _ in range(rank)],
            [self.int_value(scope, 32) for _ in range(rank)],
        ]

    def store(self, scope: _Scope, value: ir.Value, elem: str) -> None:
        rank = ir.RankedTensorType(value.type).rank
        dims, strides, offsets = self.access(scope, rank)
        tile.StoreBlockOp(self.ptr(elem), dims, strides, offsets, value, loc=self.loc)

    def op_load_store(self, scope: _Scope, depth: int) -> None:
        rank = self.pick((2, 1))
        shape = [self.pick(self.space.wmma_shapes) for _ in range(rank)]
        elem = self.elem()
        t = ir.RankedTensorType.get(shape, ELEMENT_TYPES[elem](), self.blocked(shape))
        dims, strides, offsets = self.access(scope, rank)
        v = tile.LoadBlockOp(self.ptr(elem), dims, strides, offsets, t, loc=self.loc).result
        scope.tensors.append(v)
        if self.draw(st.booleans()):
            self.store(scope, v, elem)

    def op_convert(self, scope: _Scope, depth: int) -> None:
        if not scope.tensors:
            return self.op_load_store(scope, depth)
        v = self.pick(scope.tensors)
        t = ir.RankedTensorType(v.type)
        out = ir.RankedTensorType.get(list(t.shape), t.element_type, self.blocked(list(t.shape)))
        scope.tensors.append(tile.ConvertLayoutOp(v, out, loc=self.loc).result)
        return None

    def op_arith(self, scope: _Scope, depth: int) -> None:
        a, b = self.int_value(scope, 32), self.int_value(scope, 32)
        kind = self.pick(("addi", "muli", "remsi", "cmpi", "extsi"))
        if kind == "cmpi":
            pred = self.pick((arith.CmpIPredicate.slt, arith.CmpIPredicate.eq))
            scope.ints[1].append(arith.CmpIOp(pred, a, b, loc=self.loc).result)
        elif kind == "extsi":
            i64 = ir.IntegerType.get_signless(64)
            scope.ints[64].append(arith.ExtSIOp(i64, a, loc=self.loc).result)
        else:
            op = {"addi": arith.AddIOp, "muli": arith.MulIOp, "remsi": arith.RemSIOp}[kind]
            scope.ints[32].append(op(a, b, loc=self.loc).result)

    def op_ids(self, scope: _Scope, depth: int) -> None:
        if self.draw(st.booleans()):
            scope.ints[32].append(tile.WarpIdOp(loc=self.loc).result)
            return
        op = tile.ProgramIdOp(loc=self.loc)
        op.operation.attributes["axis"] = i32_attr(self.pick(self.space.axes))
        scope.ints[32].append(op.result)

    def op_for(self, scope: _Scope, depth: int) -> None:
        lo, hi, step = (self.int_value(scope, 32) for _ in range(3))
        carried = [self.pick(scope.tensors)] if scope.tensors and self.draw(st.booleans()) else []
        loop = scf.ForOp(lo, hi, step, carried, loc=self.loc)
        inner = scope.child()
        inner.ints[32].append(loop.induction_variable)
        inner.tensors += list(loop.inner_iter_args)
        with ir.InsertionPoint(loop.body):
            self.body(inner, depth + 1)
            yields = []
            for arg in loop.inner_iter_args:
                same = [v for v in inner.tensors if v.type == arg.type]
                yields.append(self.pick(same))
            scf.YieldOp(yields, loc=self.loc)
        scope.tensors += list(loop.results)

    def op_nest(self, scope: _Scope, depth: int) -> None:
        """A chain of nested ``scf.if`` with a wait at the bottom (deep regions)."""
        cond = self.int_value(scope, 1)
        ips = []
        for _ in range(self.pick(self.space.nesting)):
            op = scf.IfOp(cond, [], has_else=False, loc=self.loc)
            ip = ir.InsertionPoint(op.then_block)
            ip.__enter__()
            ips.append(ip)
        self.op_wait(scope, depth)
        for ip in reversed(ips):
            scf.YieldOp([], loc=self.loc)
            ip.__exit__(None, None, None)

    def op_if(self, scope: _Scope, depth: int) -> None:
        cond = self.int_value(scope, 1)
        has_else = self.draw(st.booleans())
        op = scf.IfOp(cond, [], has_else=has_else, loc=self.loc)
        blocks = [op.then_block, op.else_block] if has_else else [op.then_block]
        for blk in blocks:
            with ir.InsertionPoint(blk):
                self.body(scope.child(), depth + 1)
                scf.YieldOp([], loc=self.loc)


#: Which values of a field every rule accepts (legal modules draw only these).
LEGAL: dict[str, Callable[[Any], bool]] = {
    "num_warps": lambda n: n in (1, 2, 4, 8),
    "targets": lambda t: t is None or t in TARGETS,
    "element_types": lambda e: e in ("f16", "bf16"),
    "threads_per_warp": lambda t: t == "target",
    "ranks": lambda r: r <= 2,
    "block_dims": lambda d: 16 <= d <= 64 and math.log2(d).is_integer(),
    "buffers": lambda b: b <= 2,
    "wmma_shapes": lambda s: s <= 64,
    "blocked_warps": lambda w: w == "matching",
    "orders": lambda o: o == "natural",
    "padded_intervals": lambda i: i >= 16,
    "padded_amounts": lambda a: a >= 4,
    "swizzle": lambda s: s == (1, 1, 1),
    "layouts": lambda x: x != "partitioned",
    "partitions": lambda p: min(p) >= 1,
    "partition_dims": lambda d: d == "in-range",
    "strides": lambda x: x == "unit-last",
    "fused_ranks": lambda x: x == "same",
    "instr_shapes": lambda s: s == (16, 16, 32),
    "wmma_versions": lambda v: v == 3,
    "wmma_warps": lambda w: w == "matching",
    "wmma_k": lambda k: 32 <= k <= 64,
    "k_widths": lambda k: k == 8,
    "wait_counts": lambda n: n < 4,
    "wait_widths": lambda w: w == 32,
    "hints": lambda h: h in ("none", "legal"),
    "hint_names": lambda n: n == "warp_used_hint",
    "caches": lambda c: c == "",
    "blocked_lanes": lambda x: x == "matching",
    "axes": lambda a: a in (0, 1, 2),
    "nesting": lambda d: d <= 8,
    "buffer_index": lambda i: i == "in-range",
    "ring_sizes": lambda n: 1 <= n <= 64,
    "barrier_counts": lambda n: 1 <= n < (1 << 20),
    "phase_widths": lambda w: w in (1, 32),
    "schedule_kinds": lambda k: k in KINDS,
    "reductions": lambda r: r is None or r in REDUCTIONS,
    "grouped": lambda g: g in GROUPED,
    "schedule_blocks": lambda b: 16 <= b <= 64 and math.log2(b).is_integer(),
    "schedule_counts": lambda n: 1 <= n <= 8,
    "schedule_operands": lambda o: o == "as-needed",
    "c_elements": lambda e: e in ("f16", "bf16", "f32"),
    "yields": lambda y: y in ("blocked", "wmma"),
    "worker_warps": lambda w: w in (1, 2, 4),
    "worker_regs": lambda r: r is None or (24 <= r <= 256 and r % 8 == 0),
    "captures": lambda c: c != "all",
    "ws_results": lambda n: n <= 1,
    "use_acc": lambda u: u in ("none", "i1", "false"),
    "mma_waits": lambda n: 0 <= n <= 2,
    "rmw_kinds": lambda k: k in RMW_KINDS,
    "semantics": lambda x: x in SEMANTICS,
    "scopes": lambda x: x in SCOPES,
    "sync_elements": lambda e: e != "i8",
}

#: Fields of :class:`Space` that :func:`legal_space` narrows.
NARROWED = tuple(LEGAL)

#: Integer attribute fields that the "limits" mode of :func:`tile_modules` draws
#: from :data:`LIMITS` alone.
AT_LIMITS = (
    "schedule_blocks",
    "schedule_counts",
    "worker_warps",
    "worker_regs",
    "mma_waits",
    "wait_counts",
    "barrier_counts",
)


def legal_space(space: Space = FULL) -> Space:
    """``space`` restricted to the values every rule accepts (mostly-valid modules);
    a field with no legal value keeps its first."""
    changes = {}
    for name, ok in LEGAL.items():
        values = getattr(space, name)
        changes[name] = tuple(v for v in values if ok(v)) or values[:1]
    return dataclasses.replace(space, **changes)


@st.composite
def tile_modules(draw: Callable[[Any], Any], space: Space = FULL) -> str:
    """A tile module drawn from ``space``, printed (generic ops, pretty types).

    Most modules are legal but for one field of the space (so the rule for
    that field, not the first of many, decides the outcome); some are legal
    throughout (so the passes and the lowering see them), some wild throughout,
    and some legal but for one integer attribute at the integer limits (0, 1,
    2**31 - 1, 2**31, 2**63, ... in the narrowest width that holds them).
    """
    mode = draw(st.sampled_from(("one-wild", "legal", "wild", "limits")))
    if mode != "wild":
        legal = legal_space(space)
        if mode == "one-wild":
            name = draw(st.sampled_from(NARROWED))
            legal = dataclasses.replace(legal, **{name: getattr(space, name)})
        elif mode == "limits":  # legal but for one integer field, at its limits
            name = draw(st.sampled_from(AT_LIMITS))
            at = tuple(v for v in getattr(space, name) if v in LIMITS) or getattr(space, name)
            legal = dataclasses.replace(legal, **{name: at})
        space = legal
    ctx = ir.Context()
    ctx.enable_multithreading(False)
    load_all(ctx)
    with ctx, ir.Location.unknown():
        module = _Builder(draw, space).module()
        return module.operation.get_asm(assume_verified=True)


__all__ = ["ELEMENT_TYPES", "FULL", "Space", "legal_space", "tile_modules"]
