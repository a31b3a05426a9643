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
from gemm_opt.core.targets import TARGETS
from gemm_opt.dialect import barrier, load_all, tile
from support.tile_build import i32_attr

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
    )
    ring_sizes: tuple[int, ...] = (2, 1, 3, 0, 65)
    barrier_counts: tuple[int, ...] = (1, 2, 0, -1, 1 << 20)
    barrier_ops: tuple[str, ...] = ("tracked", "init", "expect", "arrive", "wait")
    phase_widths: tuple[int, ...] = (32, 1, 64)
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
        ops = s.ops if depth < s.max_depth else tuple(o for o in s.ops if o not in ("for", "if"))
        n = self.draw(st.integers(1, s.max_ops if depth == 0 else max(1, s.max_ops // 2)))
        for _ in range(n):
            getattr(self, "op_" + self.pick(ops))(scope, depth)

    # -- values ----------------------------------------------------------------------

    def ptr(self, elem: str) -> ir.Value:
        """The function argument pointing to ``elem`` (added on first use)."""
        if elem not in self.ptrs:
            t = tile.PtrType.get(ir.TypeAttr.get(ELEMENT_TYPES[elem]()))
            self.ptrs[elem] = self.entry.add_argument(t, self.loc)
        return self.ptrs[elem]

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
}

#: Fields of :class:`Space` that :func:`legal_space` narrows.
NARROWED = tuple(LEGAL)


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
    throughout (so the passes and the lowering see them), some wild throughout.
    """
    mode = draw(st.sampled_from(("one-wild", "legal", "wild")))
    if mode != "wild":
        legal = legal_space(space)
        if mode == "one-wild":
            name = draw(st.sampled_from(NARROWED))
            legal = dataclasses.replace(legal, **{name: getattr(space, name)})
        space = legal
    ctx = ir.Context()
    ctx.enable_multithreading(False)
    load_all(ctx)
    with ctx, ir.Location.unknown():
        module = _Builder(draw, space).module()
        return module.operation.get_asm(assume_verified=True)


__all__ = ["ELEMENT_TYPES", "FULL", "Space", "legal_space", "tile_modules"]
