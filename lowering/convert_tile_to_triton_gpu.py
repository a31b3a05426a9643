"""``convert-tile-to-triton-gpu``: rewrite a tile module into TritonGPU IR.

The pass rebuilds every function of a tile module, op by op, as ops of
Triton 3.9.0's ``tt``, ``ttg`` and ``amdg`` dialects. The upstream bindings
do not know those dialects, so the new ops are *unregistered* ops, and
Triton's types and attributes are opaque (``!tt.ptr<f16>``,
``#ttg.amd_wmma<{...}>``). Printed in MLIR's generic form they are exactly
what Triton's parser reads (``"tt.func"() ({...}) {sym_name = ...}``), so the
hand-off to Triton is ``module.get_asm(print_generic_op_form=True,
enable_debug_info=True)``. Every new op keeps the location of the tile op it
comes from, so Triton's own diagnostics name the tile source line.

``arith``, ``math`` and ``scf`` ops stay what they are; only their types
change (tile encodings and types become Triton's, in results, block
arguments and ``arith.constant`` values).

Target differences (all data semantics are the tile dialect's):

* gfx1250: TDM descriptors and copies, hints kept, WMMA v3, 32-lane warps.
* gfx950: no TDM. A copy becomes a direct-to-LDS
  ``ttg.async_copy_global_to_local`` of the block (masked by the bounds, zero
  fill; a false pred skips it under ``scf.if``) and one
  ``ttg.async_commit_group`` per copy (a fused copy is one group), so
  ``tile.async_tdm_wait {num}`` maps to ``ttg.async_wait {num}`` unchanged.
  Direct-to-LDS loads need 16-byte vectors, which Triton only proves with
  ``tt.divisibility`` facts, and it cannot write padded rows, so there a
  padded layout becomes an unswizzled one. When the kernel does not state
  the facts (see *Divisibility* below) the copy takes the gfx942 path
  instead (option ``lds-copies`` forces either).
* gfx942: a copy is a masked ``tt.load`` into registers plus a
  ``ttg.local_store``; it is complete when it returns, so waits vanish.
* On both, ``warp_used_hint`` is dropped (it never changes the data),
  ``#tile.wmma_layout`` becomes ``#ttg.amd_mfma`` (v4 ``32x32x16`` on gfx950,
  v3 ``32x32x8`` on gfx942; ``16x16`` when a warp's tile is narrower than 32),
  dot operands take the MFMA's ``kWidth`` (8 and 4), and warps have 64 lanes.
* cuda:90 (the portable lowering for NVIDIA Hopper): no TDM, hints dropped.
  Copies are ``ttg.async_copy_global_to_local`` (``cp.async``) with one
  ``ttg.async_commit_group`` per copy, so ``tile.async_tdm_wait {num}``
  becomes ``ttg.async_wait {num}`` (``cp.async.wait_group``) unchanged; as
  on gfx950 that needs the divisibility facts (``cp.async`` moves 4 to 16
  bytes), else a copy goes through registers and ``ttg.local_store``. Every
  shared layout becomes the ``#ttg.swizzled_shared`` that ``ldmatrix`` reads
  without bank conflicts (16-byte vectors, phases over 128-byte rows),
  ``#tile.wmma_layout`` becomes ``#ttg.nvidia_mma`` version 2 (``mma.sync``
  ``m16n8k16``, ``instrShape = [16, 8]``, the same ``warpsPerCTA``), dot
  operands take ``kWidth = 32 / element bits`` (2 for f16 and bf16, as
  Triton picks for mma v2), and warps have 32 lanes. The forms emitted are
  the ones Triton 3.6 and 3.9 both parse (default CTA layout left out).

Divisibility: pointer arguments get ``tt.divisibility = 16`` (16-byte
aligned base pointers). An integer argument gets it only when the tile
function says so with ``tile.divisibility`` (or ``tt.divisibility``) in its
argument attributes.

Hints are cross-checked before anything is emitted: a copy's
``tile.warp_layout`` (from ``tile-assign-tdm-warp-layout``) must equal the
layout :func:`gemm_opt.core.tdm_layout.tdm_warp_layout` computes for its hint, and a
copy marked ``tile.warp_predicated`` (by ``tile-emit-warp-predicates``) must
carry the predicate ``((warp_id ^ anchor) & free_mask) == 0`` with the hint's
anchor and free mask. That predicate is then stripped back to the user's,
because Triton's lowering of the hint predicates the warps itself. Any
disagreement is an internal error at the copy; nothing is emitted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from gemm_opt.core.contract import (
    DIVISIBILITY,
    NUM_WARPS,
    TARGET,
    THREADS_PER_WARP,
    TRITON_DIVISIBILITY,
    WARP_LAYOUT,
    WARP_LAYOUTS,
    WARP_PREDICATED,
)
from gemm_opt.core.ext_compat import cast, ir
from gemm_opt.core.pass_base import TilePass
from gemm_opt.core.targets import TARGETS, Target
from gemm_opt.core.tdm_layout import TdmWarpLayout, tdm_warp_layout
from gemm_opt.core.warp_hint import WarpHintError
from gemm_opt.dialect.tile import (
    BlockedAttr,
    DotOperandAttr,
    MakeTensorDescriptorOp,
    MBarrierType,
    PaddedSharedAttr,
    PartitionedSharedAttr,
    PtrType,
    SharedLayoutAttr,
    SharedType,
    SwizzledSharedAttr,
    TensorDescType,
    WmmaAttr,
    cache_modifier,
    warp_layout_fields,
)
from gemm_opt.passes.common import COPY_OP, FUSED_OP, collect_ops

#: Argument attributes that state a divisibility fact (tile's and Triton's).
DIVISIBILITY_ATTRS = (DIVISIBILITY, TRITON_DIVISIBILITY)
#: Triton's cache-modifier enum (``triton::CacheModifier``) by tile spelling.
CACHE_CODES = {".ca": 2, ".cg": 3, ".wb": 4, ".cs": 5, ".wt": 6, ".cv": 7}
#: Dialects whose ops are kept (only their types change).
KEPT_DIALECTS = ("arith", "math", "scf")


#: ``lds-copies`` option values: how targets without TDM fill LDS.
LDS_COPIES = ("auto", "direct", "registers")


class LoweringFailure(Exception):
    """A diagnostic for ``op``: raised deep in the lowering, reported by the pass."""

    def __init__(self, op: Any, message: str) -> None:
        super().__init__(message)
        self.op = op


# ---- attributes and types ----------------------------------------------------------


def _ints(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def _log2(n: int) -> int:
    return n.bit_length() - 1


def _row_major(rank: int) -> list[int]:
    """The default dim order (fastest first): the last dim fastest."""
    return list(range(rank - 1, -1, -1))


def wmma_warp_bases(warps_per_cta: Sequence[int]) -> list[list[int]]:
    """``ctaLayout`` warp bases (in instruction tiles) for ``[WM, WN]`` warps.

    Warp-id bits step N first, then M (Triton's ``warpsPerCTA`` order
    ``[1, 0]``): ``[4, 2]`` gives ``[[0, 1], [1, 0], [2, 0]]``.
    """
    wm, wn = warps_per_cta
    bases = [[0, 1 << b] for b in range(_log2(wn))]
    bases += [[1 << b, 0] for b in range(_log2(wm))]
    return bases


def shared_encoding(attr: SharedLayoutAttr, tile_shape: Sequence[int]) -> str:
    """``#ttg.*_shared`` text for a tile shared layout over ``tile_shape``."""
    if isinstance(attr, PaddedSharedAttr):
        layout = attr.to_layout()
        order = layout.order
        shape = list(tile_shape)[-len(order) :]
        return (
            f"#ttg.padded_shared<[{layout.interval}:+{layout.amount}] "
            f"{{order = {_ints(order)}, shape = {_ints(shape)}}}>"
        )
    if isinstance(attr, SwizzledSharedAttr):
        layout = attr.to_layout()
        return (
            f"#ttg.swizzled_shared<{{vec = {layout.vec}, perPhase = {layout.per_phase}, "
            f"maxPhase = {layout.max_phase}, order = {_ints(layout.order)}}}>"
        )
    if isinstance(attr, PartitionedSharedAttr):
        layout = attr.to_layout()
        rank = len(layout.inner.order)
        piece = list(tile_shape)[-rank:]
        if 0 <= layout.partition_dim < len(piece):
            piece[layout.partition_dim] //= layout.num_logical_pieces
        inner_attr = attr.field_values().get("layout")
        if inner_attr is None:
            inner = unswizzled_encoding(_row_major(rank))
        else:
            inner = shared_encoding(inner_attr, piece)
        return (
            f"#ttg.partitioned_shared<{{numPartitions = {layout.num_partitions}, "
            f"numGroups = {layout.num_groups}, partitionDim = {layout.partition_dim}, "
            f"partitionLayout = {inner}}}>"
        )
    raise TypeError(f"unsupported shared layout {attr}")


def unswizzled_encoding(order: Sequence[int], vec: int = 1) -> str:
    """A ``#ttg.swizzled_shared`` layout that does not swizzle."""
    return (
        f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = 1, maxPhase = 1, order = {_ints(order)}}}>"
    )


def mma_swizzled_encoding(order: Sequence[int], tile_shape: Sequence[int], elem_bits: int) -> str:
    """The ``#ttg.swizzled_shared`` that mma.sync operands use on NVIDIA.

    16-byte vectors along the contiguous dim (what one ``cp.async`` writes
    and one ``ldmatrix`` row reads), and the vector index XOR-ed with the
    row's phase, where a phase spans 128 bytes of rows (8 phases of 16
    bytes): ``ldmatrix``'s eight 16-byte rows then fall in distinct banks.
    For 16-bit elements this is what Triton picks for mma v2 operands
    (``vec = 8``; 64-element rows: ``perPhase = 1, maxPhase = 8``).
    """
    elem_bytes = max(1, elem_bits // 8)
    shape = list(tile_shape)[-len(order) :]
    inner = int(shape[order[0]])
    vec = max(1, min(16 // elem_bytes, inner))
    per_phase = max(1, 128 // max(1, inner * elem_bytes))
    max_phase = max(1, (128 // 16) // per_phase)
    return (
        f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = {per_phase}, "
        f"maxPhase = {max_phase}, order = {_ints(order)}}}>"
    )


def nvidia_mma_encoding(warps_per_cta: Sequence[int]) -> str:
    """``#ttg.nvidia_mma`` version 2 (mma.sync m16n8k16) over ``[WM, WN]`` warps.

    The CTA layout is the default (one CTA), which Triton leaves out when it
    prints; both Triton 3.6 and 3.9 parse this form.
    """
    return (
        f"#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = "
        f"{_ints(warps_per_cta)}, instrShape = [16, 8]}}>"
    )


def shared_order(attr: SharedLayoutAttr, rank: int) -> list[int]:
    """The dim order (fastest first) of a tile shared layout."""
    if isinstance(attr, PartitionedSharedAttr):
        attr = attr.field_values().get("layout")
    if isinstance(attr, (PaddedSharedAttr, SwizzledSharedAttr)):
        return list(attr.to_layout().order)
    return _row_major(rank)


def blocked_encoding(shape: Sequence[int], elem_bits: int, num_warps: int, warp_size: int) -> str:
    """A row-major ``#ttg.blocked`` layout with 16-byte vectors along the last dim."""
    inner = shape[-1]
    vec = max(1, min(128 // max(elem_bits, 8), inner))
    lanes_inner = min(warp_size, max(1, inner // vec))
    if len(shape) == 1:
        return (
            f"#ttg.blocked<{{sizePerThread = [{vec}], threadsPerWarp = [{warp_size}], "
            f"warpsPerCTA = [{num_warps}], order = [0]}}>"
        )
    return (
        f"#ttg.blocked<{{sizePerThread = [1, {vec}], threadsPerWarp = "
        f"[{warp_size // lanes_inner}, {lanes_inner}], warpsPerCTA = [{num_warps}, 1], "
        "order = [1, 0]}>"
    )


_FLOAT_BITS = {"f64": 64, "f32": 32, "f16": 16, "bf16": 16}


def _elem_bits(t: ir.Type) -> int:
    if cast(t, ir.IntegerType) is not None:
        return ir.IntegerType(t).width
    text = str(t)
    if text in _FLOAT_BITS:
        return _FLOAT_BITS[text]
    return 8 if text.startswith("f8") else 16


# ---- the lowering ------------------------------------------------------------------


@dataclass
class _Desc:
    """Where a tile descriptor value points (new values), as far as known.

    ``origin`` is the accumulated block origin (None: the tensor origin);
    ``bounds`` the absolute bounds (None: the shape); ``pred`` the i1 of the
    last update that set one.
    """

    base: ir.Value
    shape: list[ir.Value]
    strides: list[ir.Value]
    origin: list[ir.Value] | None = None
    bounds: list[ir.Value] | None = None
    pred: ir.Value | None = None


@dataclass
class _Lowering:
    module: ir.Operation
    target: Target
    num_warps: int
    values: dict[ir.Value, ir.Value] = field(default_factory=dict)
    descs: dict[ir.Value, _Desc] = field(default_factory=dict)
    #: Tile ops not to emit (stripped warp-predicate chains).
    dead: set[ir.Operation] = field(default_factory=set)
    #: Copy op -> the user's pred left after stripping (None: no pred).
    stripped: dict[ir.Operation, ir.Value | None] = field(default_factory=dict)
    #: str(#tile.wmma_layout) -> smallest per-warp M/N tile of its dots.
    mma_min_warp_tile: dict[str, int] = field(default_factory=dict)
    ip: Any = None
    _encodings: dict[str, ir.Attribute] = field(default_factory=dict)
    _types: dict[str, ir.Type] = field(default_factory=dict)
    #: gfx950: copies go straight to LDS (else through registers).
    direct_copies: bool = False

    # -- small helpers --

    def fail(self, op: Any, message: str) -> LoweringFailure:
        """The failure to raise for ``op`` (``raise self.fail(...)``)."""
        return LoweringFailure(op, message)

    def v(self, old: ir.Value) -> ir.Value:
        try:
            return self.values[old]
        except KeyError:
            raise LoweringFailure(
                old.owner if isinstance(old.owner, ir.Operation) else self.module,
                "internal error: value used before it was lowered",
            ) from None

    def create(
        self,
        name: str,
        operands: Sequence[ir.Value] = (),
        results: Sequence[ir.Type] = (),
        attributes: dict[str, ir.Attribute] | None = None,
        loc: ir.Location | None = None,
        regions: int = 0,
    ) -> ir.Operation:
        return ir.Operation.create(
            name,
            results=list(results),
            operands=list(operands),
            attributes=attributes or {},
            regions=regions,
            loc=loc,
            ip=self.ip,
        )

    def one(
        self,
        name: str,
        operands: Sequence[ir.Value],
        result: ir.Type,
        loc: ir.Location,
        **attrs: ir.Attribute,
    ) -> ir.Value:
        """Create a one-result op and return its result."""
        return self.create(name, operands, [result], attrs, loc).result

    def i32(self) -> ir.Type:
        return ir.IntegerType.get_signless(32)

    def i64(self) -> ir.Type:
        return ir.IntegerType.get_signless(64)

    def i1(self) -> ir.Type:
        return ir.IntegerType.get_signless(1)

    def const(self, value: int, ty: ir.Type, loc) -> ir.Value:
        return self.one("arith.constant", [], ty, loc, value=ir.IntegerAttr.get(ty, value))

    def enc(self, text: str) -> ir.Attribute:
        if text not in self._encodings:
            self._encodings[text] = ir.Attribute.parse(text)
        return self._encodings[text]

    def parsed_type(self, text: str) -> ir.Type:
        if text not in self._types:
            self._types[text] = ir.Type.parse(text)
        return self._types[text]

    def token(self) -> ir.Type:
        return self.parsed_type("!ttg.async.token")

    def tensor(self, shape: Sequence[int], elem: ir.Type, encoding: str) -> ir.Type:
        return ir.RankedTensorType.get(
            list(shape), elem, encoding=self.enc(encoding), loc=ir.Location.unknown()
        )

    # -- types --

    def convert_encoding(
        self, attr: Any, op: Any, shape: Sequence[int], elem_bits: int = 16
    ) -> str:
        t = self.target
        if isinstance(attr, WmmaAttr):
            v = attr.field_values()
            warps = list(attr.warps_per_cta())
            if t.nvidia:
                return nvidia_mma_encoding(warps)
            if t.tdm:
                instr = list(attr.instr_shape())
                return (
                    f"#ttg.amd_wmma<{{version = {v.get('version', 3)}, isTranspose = "
                    f"{str(bool(v.get('transposed', False))).lower()}, ctaLayout = "
                    f"{{warp = {_ints_nested(wmma_warp_bases(warps))}}}, instrShape = "
                    f"{_ints(instr)}}}>"
                )
            mn = 32 if self.mma_min_warp_tile.get(str(attr), 32) >= 32 else 16
            k = t.mfma_k32 if mn == 32 else t.mfma_k16
            return (
                f"#ttg.amd_mfma<{{version = {t.mfma_version}, warpsPerCTA = {_ints(warps)}, "
                f"instrShape = [{mn}, {mn}, {k}], isTransposed = "
                f"{str(bool(v.get('transposed', True))).lower()}}}>"
            )
        if isinstance(attr, DotOperandAttr):
            v = attr.field_values()
            parent = v.get("parent")
            if not isinstance(parent, WmmaAttr):
                raise self.fail(
                    op, f"a #tile.dot_operand parent must be a #tile.wmma_layout, got {parent}"
                )
            if t.nvidia:
                # Triton's rule for mma v2: 32 bits of K per register.
                k_width = max(1, 32 // elem_bits)
            else:
                k_width = v.get("k_width", 8) if t.tdm else t.mfma_k_width
            return (
                f"#ttg.dot_op<{{opIdx = {v.get('op_idx', 0)}, parent = "
                f"{self.convert_encoding(parent, op, shape)}, kWidth = {k_width}}}>"
            )
        if isinstance(attr, BlockedAttr):
            v = attr.field_values()
            lanes = 1
            for n in v.get("threads_per_warp", ()):
                lanes *= n
            if lanes != t.warp_size:
                raise self.fail(
                    op,
                    f"#tile.blocked threads_per_warp {list(v.get('threads_per_warp', ()))} "
                    f"covers {lanes} lanes but {t.name} warps have {t.warp_size}",
                )
            return (
                f"#ttg.blocked<{{sizePerThread = {_ints(v.get('size_per_thread', ()))}, "
                f"threadsPerWarp = {_ints(v.get('threads_per_warp', ()))}, warpsPerCTA = "
                f"{_ints(v.get('warps_per_cta', ()))}, order = {_ints(v.get('order', ()))}}}>"
            )
        raise self.fail(op, f"no TritonGPU equivalent for the layout {attr}")

    def shared(self, t: Any) -> str:
        """The ``#ttg`` shared encoding of a descriptor or buffer type.

        TDM writes every tile layout. Without TDM a partitioned layout keeps
        only its inner layout (partitions are a TDM notion), and gfx950's
        direct-to-LDS copies, which write each warp's 1 KiB contiguously,
        cannot write padded rows: there a padded layout becomes the
        unswizzled ``swizzled_shared`` of 16-byte vectors. On NVIDIA every
        layout becomes the ``ldmatrix``-friendly swizzle of
        :func:`mma_swizzled_encoding` (same dim order). The data a buffer
        holds is the same either way; only the placement in shared memory
        differs.
        """
        attr = t.layout_attr
        if self.target.nvidia:
            order = shared_order(attr, len(t.shape))
            return mma_swizzled_encoding(order, t.shape, _elem_bits(t.element_type))
        if not self.target.tdm and isinstance(attr, PartitionedSharedAttr):
            inner = attr.field_values().get("layout")
            if inner is None:
                return unswizzled_encoding(_row_major(len(t.shape)))
            attr = inner
        if self.direct_copies and isinstance(attr, PaddedSharedAttr):
            vec = max(1, 128 // _elem_bits(t.element_type))
            return unswizzled_encoding(attr.to_layout().order, vec)
        return shared_encoding(attr, t.shape)

    def convert_type(self, t: ir.Type, op: Any) -> ir.Type | None:
        """The Triton type of a tile type (None: it has no value on this target)."""
        if isinstance(t, PtrType):
            return self.parsed_type(f"!tt.ptr<{t.element_type}>")
        if isinstance(t, TensorDescType):
            if not self.target.tdm:
                return None
            enc = self.shared(t)
            return self.parsed_type(f"!tt.tensordesc<{_dims(t.shape)}x{t.element_type}, {enc}>")
        if isinstance(t, SharedType):
            enc = self.shared(t)
            return self.parsed_type(
                f"!ttg.memdesc<{_dims(t.shape)}x{t.element_type}, {enc}, "
                "#ttg.shared_memory, mutable>"
            )
        if isinstance(t, MBarrierType):
            raise self.fail(op, "mbarriers have no lowering to TritonGPU yet")
        rt = cast(t, ir.RankedTensorType)
        if rt is not None:
            if rt.encoding is None:
                raise self.fail(
                    op, f"{t} has no layout; every tensor needs one to lower to TritonGPU"
                )
            enc = self.convert_encoding(rt.encoding, op, rt.shape, _elem_bits(rt.element_type))
            return self.tensor(rt.shape, rt.element_type, enc)
        if "tile." in str(t):
            raise self.fail(op, f"no TritonGPU equivalent for the type {t}")
        return t

    def must_type(self, t: ir.Type, op: Any) -> ir.Type:
        new = self.convert_type(t, op)
        if new is None:
            raise self.fail(
                op,
                f"{t} cannot be passed through block arguments or results on "
                f"{self.target.name} (descriptors only exist on TDM targets)",
            )
        return new

    def convert_attr(self, attr: ir.Attribute, op: Any) -> ir.Attribute:
        ta = cast(attr, ir.TypeAttr)
        if ta is not None:
            return ir.TypeAttr.get(self.must_type(ta.value, op))
        de = cast(attr, ir.DenseElementsAttr)
        if de is not None:
            new_type = self.must_type(de.type, op)
            if new_type == de.type:
                return attr
            if de.is_splat:
                return ir.DenseElementsAttr.get_splat(new_type, de.get_splat_value())
            text = str(attr)
            return ir.Attribute.parse(text[: text.rindex(":")] + f": {new_type}")
        return attr

    # -- driving --

    def run(self) -> None:
        # Ops always get their tile op's location; this default only serves
        # attribute and type builders that insist on one.
        with ir.Location.unknown(self.module.context):
            self._run()

    def _run(self) -> None:
        self.prescan()
        body = self.module.regions[0].blocks[0]
        old_ops = list(body.operations)
        for op in old_ops:
            if op.operation.name != "func.func":
                raise self.fail(op, f"'{op.operation.name}' at module level has no lowering")
        for op in old_ops:
            self.ip = ir.InsertionPoint(op.operation)
            self.lower_func(op.operation)
        for op in old_ops:
            op.operation.erase()
        attrs = self.module.attributes
        for name in (NUM_WARPS, THREADS_PER_WARP, TARGET):
            if name in attrs:
                del attrs[name]
        i32 = self.i32()
        attrs["ttg.num-ctas"] = ir.IntegerAttr.get(i32, 1)
        attrs["ttg.num-warps"] = ir.IntegerAttr.get(i32, self.num_warps)
        attrs["ttg.target"] = ir.StringAttr.get(self.target.triton_target)
        attrs["ttg.threads-per-warp"] = ir.IntegerAttr.get(i32, self.target.warp_size)

    def prescan(self) -> None:
        """Check hints and predicates, find dead predicate chains, size MMA tiles."""
        ops = collect_ops(self.module, (COPY_OP, FUSED_OP, "tile.wmma"))
        for op in ops:
            if op.operation.name == "tile.wmma":
                self.note_mma(op)
        chain: set[ir.Operation] = set()
        for op in ops:
            if op.operation.name != "tile.wmma":
                chain |= self.check_copy(op)
        self.dead = _dead_ops(chain, set(self.stripped))

    def note_mma(self, op: Any) -> None:
        c = ir.RankedTensorType(op.c.type)
        acc = c.encoding
        if not isinstance(acc, WmmaAttr):
            return
        wm, wn = acc.warps_per_cta()
        m, n = c.shape
        key = str(acc)
        self.mma_min_warp_tile[key] = min(
            self.mma_min_warp_tile.get(key, 1 << 30), m // wm, n // wn
        )

    # -- hint cross-checks --

    def expected_layout(self, op: Any, desc: ir.Value, hint: int | None) -> TdmWarpLayout:
        t = desc.type
        try:
            return tdm_warp_layout(t.shape, self.num_warps, hint, t.shared_layout())
        except (WarpHintError, ValueError) as e:
            raise self.fail(
                op, f"internal error: cannot recompute the TDM warp layout: {e}"
            ) from None

    def check_layout_attr(self, op: Any, attr: Any, expected: TdmWarpLayout, what: str) -> None:
        got = attr.field_values() if hasattr(attr, "field_values") else None
        want = warp_layout_fields(expected)
        if got is None or any(got.get(k) != w for k, w in want.items()):
            raise self.fail(
                op,
                f"internal error: {what} {attr} disagrees with the layout Triton uses for "
                f"this copy (warps_per_dim = {list(want['warps_per_dim'])}, tile = "
                f"{list(want['tile'])}, warp_bases = {list(want['warp_bases'])}, anchor = "
                f"{want['anchor']}, free_mask = {want['free_mask']}); refusing to emit it",
            )

    def check_copy(self, op: Any) -> set[ir.Operation]:
        """Cross-check a copy's layout attribute and predicate; return its chain ops."""

        attrs = op.operation.attributes
        if op.operation.name == FUSED_OP:
            if WARP_LAYOUTS in attrs:
                layouts = list(ir.ArrayAttr(attrs[WARP_LAYOUTS]))
                hints = op.warp_used_hints
                if len(layouts) != len(hints):
                    raise self.fail(
                        op,
                        f"internal error: {WARP_LAYOUTS} has {len(layouts)} layouts for "
                        f"{len(hints)} members",
                    )
                for i, (desc, hint, lay) in enumerate(zip(op.descs, hints, layouts, strict=True)):
                    expected = self.expected_layout(op, desc, hint)
                    self.check_layout_attr(op, lay, expected, f"{WARP_LAYOUTS}[{i}]")
            return set()
        hint = op.warp_used_hint
        expected = None
        if WARP_LAYOUT in attrs:
            expected = self.expected_layout(op, op.desc, hint)
            self.check_layout_attr(op, attrs[WARP_LAYOUT], expected, WARP_LAYOUT)
        if WARP_PREDICATED not in attrs:
            return set()
        expected = expected or self.expected_layout(op, op.desc, hint)
        user, chain = self.match_warp_predicate(op, expected)
        self.stripped[op.operation] = user
        return chain

    def match_warp_predicate(
        self, op: Any, expected: TdmWarpLayout
    ) -> tuple[ir.Value | None, set[ir.Operation]]:
        """Split ``pred`` into the user's part and the warp predicate's ops."""
        pred = op.pred
        form = "((warp_id ^ anchor) & free_mask) == 0"
        if pred is None:
            raise self.fail(op, f"internal error: marked {WARP_PREDICATED} but has no pred")
        chain: set[ir.Operation] = set()
        found = _match_warp_test(pred, chain)
        user: ir.Value | None = None
        if found is None:
            top = _def(pred, "arith.andi")
            if top is not None:
                for mine, other in ((0, 1), (1, 0)):
                    sub: set[ir.Operation] = set()
                    found = _match_warp_test(top.operands[mine], sub)
                    if found is not None:
                        user = top.operands[other]
                        chain = sub | {top}
                        break
        if found is None:
            raise self.fail(
                op,
                f"internal error: marked {WARP_PREDICATED} but its pred is not "
                f"'user_pred & ({form})'; refusing to emit it",
            )
        anchor, free_mask = found
        if (anchor, free_mask) != (expected.anchor, expected.free_mask):
            hint = op.warp_used_hint
            shown = "no hint" if hint is None else f"warp_used_hint = {hint:#x}"
            raise self.fail(
                op,
                f"internal error: the warp predicate ((warp_id ^ {anchor}) & {free_mask}) == 0 "
                f"disagrees with {shown}, for which Triton predicates "
                f"((warp_id ^ {expected.anchor}) & {expected.free_mask}) == 0; refusing "
                "to emit it",
            )
        return user, chain

    # -- functions and regions --

    def lower_func(self, fn: ir.Operation) -> None:
        ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        inputs = [self.must_type(t, fn) for t in ftype.inputs]
        results = [self.must_type(t, fn) for t in ftype.results]
        old_arg_attrs = (
            list(ir.ArrayAttr(fn.attributes["arg_attrs"])) if "arg_attrs" in fn.attributes else []
        )
        arg_attrs = []
        i32 = self.i32()
        for i, t in enumerate(ftype.inputs):
            entries: dict[str, ir.Attribute] = {}
            old = ir.DictAttr(old_arg_attrs[i]) if i < len(old_arg_attrs) else None
            if isinstance(t, PtrType):
                entries["tt.divisibility"] = ir.IntegerAttr.get(i32, 16)
            if old is not None:
                for name in DIVISIBILITY_ATTRS:
                    if name in old:
                        entries["tt.divisibility"] = ir.IntegerAttr.get(
                            i32, ir.IntegerAttr(old[name]).value
                        )
            arg_attrs.append(ir.DictAttr.get(entries))
        attrs: dict[str, ir.Attribute] = {
            "sym_name": fn.attributes["sym_name"],
            "function_type": ir.TypeAttr.get(ir.FunctionType.get(inputs, results)),
            "arg_attrs": ir.ArrayAttr.get(arg_attrs),
        }
        if "sym_visibility" in fn.attributes:
            attrs["sym_visibility"] = fn.attributes["sym_visibility"]
        new = self.create("tt.func", attributes=attrs, loc=fn.location, regions=1)
        self.lower_region(fn.regions[0], new.regions[0], fn)

    def lower_region(self, old: ir.Region, new: ir.Region, owner: Any) -> None:
        saved = self.ip
        for block in old.blocks:
            types = [self.must_type(a.type, owner) for a in block.arguments]
            locs = [a.location for a in block.arguments]
            nb = new.blocks.append(*types, arg_locs=locs)
            for a, b in zip(block.arguments, nb.arguments, strict=True):
                self.values[a] = b
            self.ip = ir.InsertionPoint(nb)
            for op in block.operations:
                self.lower_op(op.operation)
        self.ip = saved

    def lower_op(self, op: ir.Operation) -> None:
        if op in self.dead:
            return
        name = op.name
        handler = _HANDLERS.get(name)
        if handler is not None:
            results = handler(self, op.opview)
            if results is None:
                results = []
            elif isinstance(results, ir.Value):
                results = [results]
            for old, new in zip(op.results, results, strict=False):
                self.values[old] = new
            return
        if name.split(".", 1)[0] not in KEPT_DIALECTS:
            raise self.fail(op, f"'{name}' has no lowering to TritonGPU")
        self.clone(op)

    def clone(self, op: ir.Operation) -> None:
        if len(op.successors):
            raise self.fail(op, "ops with successors have no lowering to TritonGPU")
        attrs = {n: self.convert_attr(op.attributes[n], op) for n in op.attributes}
        new = self.create(
            op.name,
            [self.v(o) for o in op.operands],
            [self.must_type(r.type, op) for r in op.results],
            attrs,
            op.location,
            regions=len(op.regions),
        )
        for old_r, new_r in zip(op.results, new.results, strict=True):
            self.values[old_r] = new_r
        for old_region, new_region in zip(op.regions, new.regions, strict=True):
            self.lower_region(old_region, new_region, op)

    # -- tile ops --

    def lower_return(self, op: Any) -> None:
        self.create("tt.return", [self.v(o) for o in op.operation.operands], loc=op.location)

    def lower_call(self, op: Any) -> list[ir.Value]:
        o = op.operation
        attrs = {n: o.attributes[n] for n in o.attributes}
        new = self.create(
            "tt.call",
            [self.v(x) for x in o.operands],
            [self.must_type(r.type, o) for r in o.results],
            attrs,
            o.location,
        )
        return list(new.results)

    def lower_program_id(self, op: Any) -> ir.Value:
        axis = ir.IntegerAttr(op.operation.attributes["axis"]).value
        return self.one(
            "tt.get_program_id",
            [],
            self.i32(),
            op.location,
            axis=ir.IntegerAttr.get(self.i32(), axis),
        )

    def lower_warp_id(self, op: Any) -> None:
        raise self.fail(
            op,
            "'tile.warp_id' has no TritonGPU equivalent; it is only lowered as part of "
            f"a warp predicate on a copy marked {WARP_PREDICATED}",
        )

    def lower_make_desc(self, op: Any) -> ir.Value | None:
        info = _Desc(
            self.v(op.base),
            [self.v(x) for x in op.shape],
            [self.v(x) for x in op.strides],
        )
        if not self.target.tdm:
            self.descs[op.result] = info
            return None
        if _const_int(op.strides[-1]) != 1:
            raise self.fail(
                op,
                "TDM copies need a unit innermost stride: the last stride must be the constant 1",
            )
        self.descs[op.result] = info
        return self.one(
            "tt.make_tensor_descriptor",
            [info.base, *info.shape, *info.strides],
            self.must_type(op.result.type, op),
            op.location,
        )

    def lower_update_desc(self, op: Any) -> ir.Value | None:
        loc = op.location
        src = self.descs.get(op.desc)
        offsets = [self.v(x) for x in op.offsets]
        bounds = [self.v(x) for x in op.bounds]
        pred = None if op.pred is None else self.v(op.pred)
        info: _Desc | None = None
        if src is not None:
            origin = offsets
            if src.origin is not None:
                origin = [
                    self.one("arith.addi", [a, b], self.i32(), loc)
                    for a, b in zip(src.origin, offsets, strict=True)
                ]
            info = _Desc(
                src.base,
                src.shape,
                src.strides,
                origin,
                bounds or src.bounds,
                pred if pred is not None else src.pred,
            )
        if not self.target.tdm:
            if info is None:
                raise self.fail(op, self._untracked())
            self.descs[op.result] = info
            return None
        desc = self.v(op.desc)
        dtype = desc.type
        if bounds:
            if src is None:
                raise self.fail(
                    op,
                    "bounds on a descriptor carried through block arguments are not "
                    "supported (its origin is unknown here)",
                )
            rel = bounds
            if src.origin is not None:
                zero = self.const(0, self.i32(), loc)
                rel = [
                    self.one(
                        "arith.maxsi",
                        [self.one("arith.subi", [b, o], self.i32(), loc), zero],
                        self.i32(),
                        loc,
                    )
                    for b, o in zip(bounds, src.origin, strict=True)
                ]
            desc = self._update(desc, dtype, loc, set_bounds=rel)
        new = self._update(
            desc,
            dtype,
            loc,
            add_offsets=offsets,
            pred=None if pred is None else self.one("arith.extui", [pred], self.i32(), loc),
            clamp=True,
        )
        if info is not None:
            self.descs[op.result] = info
        return new

    def _update(self, desc, dtype, loc, add_offsets=(), set_bounds=(), pred=None, clamp=False):
        operands = [desc, *add_offsets, *set_bounds]
        if pred is not None:
            operands.append(pred)
        attrs: dict[str, ir.Attribute] = {
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get(
                [1, len(add_offsets), len(set_bounds), 0 if pred is None else 1]
            )
        }
        if clamp:
            attrs["clamp_bounds"] = ir.UnitAttr.get()
        return self.create("amdg.update_tensor_descriptor", operands, [dtype], attrs, loc).result

    def _untracked(self) -> str:
        return (
            f"on {self.target.name} a copy's descriptor must come from "
            "tile.make_tensor_descriptor / tile.update_tensor_descriptor in the same "
            "function, not through block arguments"
        )

    def lower_local_alloc(self, op: Any) -> ir.Value:
        return self.one("ttg.local_alloc", [], self.must_type(op.result.type, op), op.location)

    def lower_memdesc_index(self, op: Any) -> ir.Value:
        return self.one(
            "ttg.memdesc_index",
            [self.v(op.src), self.v(op.index)],
            self.must_type(op.result.type, op),
            op.location,
        )

    def lower_local_load(self, op: Any) -> ir.Value:
        return self.one(
            "ttg.local_load", [self.v(op.src)], self.must_type(op.result.type, op), op.location
        )

    def user_pred(self, op: Any) -> ir.Value | None:
        """The copy's own pred (tile value), after stripping a warp predicate."""
        if op.operation in self.stripped:
            return self.stripped[op.operation]
        return op.pred

    def lower_copy(self, op: Any) -> None:
        if op.barrier is not None:
            raise self.fail(op, "copies that arrive on an mbarrier have no lowering yet")
        pred = self.user_pred(op)
        if not self.target.tdm:
            self.copy_without_tdm(op, [(op.desc, op.dest)], pred)
            return
        loc = op.location
        desc = self.v(op.desc)
        if pred is not None:
            info = self.descs.get(op.desc)
            if info is None:
                raise self.fail(
                    op,
                    "a pred on a copy whose descriptor is carried through block arguments "
                    "is not supported (Triton predicates through the descriptor)",
                )
            p = self.v(pred)
            if info.pred is not None:
                p = self.one("arith.andi", [info.pred, p], self.i1(), loc)
            zero = self.const(0, self.i32(), loc)
            rank = len(op.desc.type.shape)
            desc = self._update(
                desc,
                desc.type,
                loc,
                add_offsets=[zero] * rank,
                pred=self.one("arith.extui", [p], self.i32(), loc),
            )
        attrs: dict[str, ir.Attribute] = {}
        hint = op.warp_used_hint
        if hint is not None:
            attrs["warp_used_hint"] = _i32_attr(hint)
        self._cache(op, attrs)
        self.create(
            "amdg.async_tdm_copy_global_to_local",
            [desc, self.v(op.dest)],
            [self.token()],
            attrs,
            loc,
        )

    def _cache(self, op: Any, attrs: dict[str, ir.Attribute]) -> None:
        mod = cache_modifier(op)
        if mod:
            attrs["cache"] = ir.IntegerAttr.get(self.i32(), CACHE_CODES[mod])

    def lower_fused_copy(self, op: Any) -> None:
        if op.barrier is not None:
            raise self.fail(op, "copies that arrive on an mbarrier have no lowering yet")
        if not self.target.tdm:
            self.copy_without_tdm(op, list(zip(op.descs, op.dests, strict=True)), None)
            return
        # The tile attribute is already the array<i32: ...> Triton reads.
        attrs = {"warp_used_hints": op.operation.attributes["warp_used_hints"]}
        self._cache(op, attrs)
        self.create(
            "amdg.async_tdm_fused_copy_global_to_local",
            [*(self.v(d) for d in op.descs), *(self.v(d) for d in op.dests)],
            [self.token()],
            attrs,
            op.location,
        )

    def lower_wait(self, op: Any) -> None:
        num = ir.IntegerAttr(op.operation.attributes["num"]).value
        attrs = {"num": ir.IntegerAttr.get(self.i32(), num)}
        if self.target.tdm:
            self.create("amdg.async_tdm_wait", [], [self.token()], attrs, op.location)
        elif self.direct_copies:
            self.create("ttg.async_wait", [], [self.token()], attrs, op.location)
        # gfx942 (and gfx950 register copies): copies are complete when issued.

    def lower_wmma(self, op: Any) -> ir.Value:
        return self.one(
            "tt.dot",
            [self.v(op.a), self.v(op.b), self.v(op.c)],
            self.must_type(op.result.type, op),
            op.location,
        )

    def lower_convert_layout(self, op: Any) -> ir.Value:
        src = self.v(op.src)
        ty = self.must_type(op.result.type, op)
        if src.type == ty:
            return src
        return self.one("ttg.convert_layout", [src], ty, op.location)

    # -- global memory: indices, masks, pointers --

    def _index_vectors(
        self,
        shape: Sequence[int],
        layout: str,
        origin: Sequence[ir.Value],
        loc,
    ) -> list[tuple[ir.Value, ir.Type]]:
        """Per dim d: ``origin[d] + arange(shape[d])`` expanded to rank (i32)."""
        rank = len(shape)
        i32 = self.i32()
        out = []
        for d in range(rank):
            if rank == 1:
                enc = layout
            else:
                enc = f"#ttg.slice<{{dim = {1 - d}, parent = {layout}}}>"
            vt = self.tensor([shape[d]], i32, enc)
            rng = self.one(
                "tt.make_range",
                [],
                vt,
                loc,
                start=ir.IntegerAttr.get(i32, 0),
                end=ir.IntegerAttr.get(i32, shape[d]),
            )
            idx = self.one("arith.addi", [self.one("tt.splat", [origin[d]], vt, loc), rng], vt, loc)
            if rank == 2:
                full = [shape[0], 1] if d == 0 else [1, shape[1]]
                et = self.tensor(full, i32, layout)
                idx = self.one(
                    "tt.expand_dims", [idx], et, loc, axis=ir.IntegerAttr.get(i32, 1 - d)
                )
                out.append((idx, et))
            else:
                out.append((idx, vt))
        return out

    def _block_access(
        self,
        op: Any,
        shape: Sequence[int],
        layout: str,
        base: ir.Value,
        extents: Sequence[ir.Value],
        strides: Sequence[ir.Value],
        origin: Sequence[ir.Value],
        loc: ir.Location,
    ) -> tuple[ir.Value, ir.Value]:
        """(pointers, in-bounds mask) of a block of a global tensor, in ``layout``.

        Element ``i`` is at ``origin + i``; it is in bounds when that is below
        ``extents``. The arithmetic runs per dim on the thin ``[n, 1]`` /
        ``[1, n]`` index tensors and is broadcast afterwards. Offsets are i64
        for a non-unit stride (tile strides are i64, and Triton's axis
        analysis follows ``extsi`` and ``muli``, so stated divisibility still
        proves alignment); a constant unit stride adds the i32 index
        directly, which keeps the contiguity facts vector accesses need.
        """
        rank = len(shape)
        if rank not in (1, 2):
            raise self.fail(
                op, f"only rank-1 and rank-2 blocks lower to TritonGPU, got rank {rank}"
            )
        i64, i1 = self.i64(), self.i1()
        ptr = base.type
        mask: ir.Value | None = None
        acc: ir.Value | None = None
        for d, (idx, it) in enumerate(self._index_vectors(shape, layout, origin, loc)):
            enc = _enc_of(it)
            thin = list(ir.RankedTensorType(it).shape)
            ok = self.one(
                "arith.cmpi",
                [idx, self.one("tt.splat", [extents[d]], it, loc)],
                self.tensor(thin, i1, enc),
                loc,
                predicate=ir.IntegerAttr.get(i64, 2),  # slt
            )
            ok = self._broadcast(ok, shape, layout, loc)
            mask = ok if mask is None else self.one("arith.andi", [mask, ok], ok.type, loc)
            if _const_int(strides[d]) == 1:
                term = idx
            else:
                wide_t = self.tensor(thin, i64, enc)
                wide = self.one("arith.extsi", [idx], wide_t, loc)
                term = self.one(
                    "arith.muli",
                    [wide, self.one("tt.splat", [strides[d]], wide_t, loc)],
                    wide_t,
                    loc,
                )
            if acc is None:
                pt = self.parsed_type(f"tensor<{_dims(thin)}x{ptr}, {enc}>")
                rows = self.one("tt.addptr", [self.one("tt.splat", [base], pt, loc), term], pt, loc)
                acc = self._broadcast(rows, shape, layout, loc)
            else:
                term = self._broadcast(term, shape, layout, loc)
                acc = self.one("tt.addptr", [acc, term], acc.type, loc)
        assert acc is not None and mask is not None
        return acc, mask

    def _broadcast(self, v: ir.Value, shape: Sequence[int], layout: str, loc) -> ir.Value:
        t = ir.RankedTensorType(v.type)
        if list(t.shape) == list(shape):
            return v
        return self.one("tt.broadcast", [v], self.tensor(shape, t.element_type, layout), loc)

    # -- copies without TDM --

    def copy_without_tdm(
        self, op: Any, members: list[tuple[ir.Value, ir.Value]], pred: ir.Value | None
    ) -> None:
        loc = op.location
        infos = []
        for desc, _dest in members:
            info = self.descs.get(desc)
            if info is None:
                raise self.fail(op, self._untracked())
            infos.append(info)
        user = None if pred is None else self.v(pred)
        for (desc, dest), info in zip(members, infos, strict=True):
            # A false pred makes the copy a no-op (the buffer keeps its data),
            # so it guards the member rather than masking it to zeros.
            preds = [p for p in (info.pred, user) if p is not None]
            cond = preds[0] if preds else None
            if len(preds) == 2:
                cond = self.one("arith.andi", preds, self.i1(), loc)
            saved = self.ip
            if cond is not None:
                if_op = self.create("scf.if", [cond], [], {}, loc, regions=2)
                self.ip = ir.InsertionPoint(if_op.regions[0].blocks.append())
            self._copy_member(op, desc.type, info, self.v(dest), loc)
            if cond is not None:
                self.create("scf.yield", [], [], {}, loc)
                self.ip = saved
        if self.direct_copies:
            # One group per copy (a fused copy is one), as TDM waits count copies.
            self.create("ttg.async_commit_group", [], [self.token()], {}, loc)

    def _copy_member(self, op, dtype: TensorDescType, info: _Desc, dest, loc) -> None:
        shape = list(dtype.shape)
        elem = dtype.element_type
        layout = blocked_encoding(shape, _elem_bits(elem), self.num_warps, self.target.warp_size)
        origin = info.origin or [self.const(0, self.i32(), loc)] * len(shape)
        extents = info.bounds or info.shape
        addr, mask = self._block_access(
            op,
            shape,
            layout,
            info.base,
            extents,
            info.strides,
            origin,
            loc=loc,
        )
        vt = self.tensor(shape, elem, layout)
        zero = self._zeros(vt, elem, loc)
        if self.direct_copies:
            self.create(
                "ttg.async_copy_global_to_local",
                [addr, dest, mask, zero],
                [self.token()],
                {"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 1, 1])},
                loc,
            )
            return
        val = self._masked_load(addr, mask, zero, loc)
        self.create("ttg.local_store", [val, dest], [], {}, loc)

    def _zeros(self, vt: ir.Type, elem: ir.Type, loc: ir.Location) -> ir.Value:
        """An ``arith.constant`` splat of zeros of tensor type ``vt``."""
        value = ir.DenseElementsAttr.get_splat(vt, _zero_attr(elem))
        return self.one("arith.constant", [], vt, loc, value=value)

    def _masked_load(
        self, ptrs: ir.Value, mask: ir.Value, other: ir.Value, loc: ir.Location
    ) -> ir.Value:
        """``tt.load`` of ``ptrs`` under ``mask``, ``other`` where it is false."""
        return self.create(
            "tt.load",
            [ptrs, mask, other],
            [other.type],
            {"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 1])},
            loc,
        ).result

    def _op_block_access(self, op: Any, shape: Sequence[int], layout: str):
        """:meth:`_block_access` of a ``tile.load_block`` / ``tile.store_block``."""
        return self._block_access(
            op,
            shape,
            layout,
            self.v(op.base),
            [self.v(x) for x in op.shape],
            [self.v(x) for x in op.strides],
            [self.v(x) for x in op.offsets],
            op.location,
        )

    # -- load_block / store_block --

    def lower_load_block(self, op: Any) -> ir.Value:
        loc = op.location
        rt = ir.RankedTensorType(op.result.type)
        shape = list(rt.shape)
        elem = rt.element_type
        want = self.must_type(rt, op)
        layout = self._access_layout(op, rt, shape, elem)
        ptrs, mask = self._op_block_access(op, shape, layout)
        vt = self.tensor(shape, elem, layout)
        val = self._masked_load(ptrs, mask, self._zeros(vt, elem, loc), loc)
        if vt != want:
            val = self.one("ttg.convert_layout", [val], want, loc)
        return val

    def lower_store_block(self, op: Any) -> None:
        loc = op.location
        rt = ir.RankedTensorType(op.value.type)
        shape = list(rt.shape)
        elem = rt.element_type
        layout = self._access_layout(op, rt, shape, elem)
        value = self.v(op.value)
        vt = self.tensor(shape, elem, layout)
        if value.type != vt:
            value = self.one("ttg.convert_layout", [value], vt, loc)
        ptrs, mask = self._op_block_access(op, shape, layout)
        self.create("tt.store", [ptrs, value, mask], [], {}, loc)

    def _access_layout(self, op, rt, shape, elem) -> str:
        """The value's own layout if blocked, else a coalesced blocked layout."""
        if isinstance(rt.encoding, BlockedAttr):
            return self.convert_encoding(rt.encoding, op, shape)
        return blocked_encoding(shape, _elem_bits(elem), self.num_warps, self.target.warp_size)


# ---- helpers over IR -----------------------------------------------------------------


def _dims(shape: Sequence[int]) -> str:
    return "x".join(str(int(s)) for s in shape)


def _ints_nested(rows: Sequence[Sequence[int]]) -> str:
    return "[" + ", ".join(_ints(r) for r in rows) + "]"


def _enc_of(t: ir.Type) -> str:
    return str(ir.RankedTensorType(t).encoding)


def _i32_attr(value: int) -> ir.Attribute:
    v = value & 0xFFFFFFFF
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), v - (1 << 32) if v >= 1 << 31 else v)


def _zero_attr(elem: ir.Type) -> ir.Attribute:
    if cast(elem, ir.IntegerType) is not None:
        return ir.IntegerAttr.get(elem, 0)
    return ir.FloatAttr.get(elem, 0.0)


def _def(value: ir.Value, name: str) -> ir.Operation | None:
    """The op defining ``value`` if it is named ``name``."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    op = owner.operation if hasattr(owner, "operation") else owner
    return op if op.name == name else None


def _const_int(value: ir.Value | None) -> int | None:
    if value is None:
        return None
    op = _def(value, "arith.constant")
    if op is None:
        return None
    a = cast(op.attributes["value"], ir.IntegerAttr)
    return None if a is None else ir.IntegerAttr(a).value


def _commuted(op: ir.Operation) -> list[tuple[ir.Value, ir.Value]]:
    a, b = op.operands[0], op.operands[1]
    return [(a, b), (b, a)]


def _match_warp_test(pred: ir.Value, chain: set[ir.Operation]) -> tuple[int, int] | None:
    """``((warp_id ^ anchor) & free_mask) == 0`` -> (anchor, free_mask), adding its ops."""
    cmp = _def(pred, "arith.cmpi")
    if cmp is None or ir.IntegerAttr(cmp.attributes["predicate"]).value != 0:
        return None
    for masked, zero in _commuted(cmp):
        if _const_int(zero) != 0:
            continue
        andi = _def(masked, "arith.andi")
        if andi is None:
            continue
        for x, fm in _commuted(andi):
            free_mask = _const_int(fm)
            if free_mask is None:
                continue
            ops = {cmp, andi, _def(zero, "arith.constant"), _def(fm, "arith.constant")}
            if _def(x, "tile.warp_id") is not None:
                chain |= ops | {_def(x, "tile.warp_id")}
                return 0, free_mask
            xor = _def(x, "arith.xori")
            if xor is None:
                continue
            for w, an in _commuted(xor):
                anchor = _const_int(an)
                wid = _def(w, "tile.warp_id")
                if anchor is not None and wid is not None:
                    chain |= ops | {xor, wid, _def(an, "arith.constant")}
                    return anchor, free_mask
    return None


def _dead_ops(candidates: set[ir.Operation], stripped: set[ir.Operation]) -> set[ir.Operation]:
    """The candidates all of whose uses are by other dead candidates or stripped preds."""
    dead = set(candidates)
    changed = True
    while changed:
        changed = False
        for op in list(dead):
            for r in op.results:
                for use in r.uses:
                    user = use.owner
                    user = user.operation if hasattr(user, "operation") else user
                    if user not in dead and user not in stripped:
                        dead.discard(op)
                        changed = True
                        break
                if op not in dead:
                    break
    return dead


_HANDLERS: dict[str, Callable[[_Lowering, Any], Any]] = {
    "func.return": _Lowering.lower_return,
    "func.call": _Lowering.lower_call,
    "tile.program_id": _Lowering.lower_program_id,
    "tile.warp_id": _Lowering.lower_warp_id,
    "tile.make_tensor_descriptor": _Lowering.lower_make_desc,
    "tile.update_tensor_descriptor": _Lowering.lower_update_desc,
    "tile.local_alloc": _Lowering.lower_local_alloc,
    "tile.memdesc_index": _Lowering.lower_memdesc_index,
    "tile.local_load": _Lowering.lower_local_load,
    "tile.async_tdm_copy_global_to_local": _Lowering.lower_copy,
    "tile.async_tdm_fused_copy_global_to_local": _Lowering.lower_fused_copy,
    "tile.async_tdm_wait": _Lowering.lower_wait,
    "tile.wmma": _Lowering.lower_wmma,
    "tile.convert_layout": _Lowering.lower_convert_layout,
    "tile.load_block": _Lowering.lower_load_block,
    "tile.store_block": _Lowering.lower_store_block,
}


@dataclass(frozen=True)
class ConvertTileToTritonGPUPass(TilePass):
    """Lower the tile dialect to TritonGPU IR (tt/ttg/amdg ops) for one target.

    Rewrites every ``func.func`` into a ``tt.func`` whose ops are Triton
    3.9.0's, as unregistered ops with opaque Triton types; printed in generic
    form (with locations) the module is TTGIR that Triton parses. Tile ops
    map one to a few; ``arith``/``math``/``scf`` ops stay, with converted
    types. Each new op carries the location of the tile op it comes from.

    On gfx1250 copies keep their ``warp_used_hint`` (fused copies their
    ``warp_used_hints``); on gfx950, gfx942 and cuda:90, which have no TDM,
    copies become masked loads of the block (direct to shared memory on
    gfx950 and, as ``cp.async``, on cuda:90) and the hint is dropped.
    Before emitting, each copy's ``tile.warp_layout`` and warp predicate are
    checked against the layout Triton derives from the hint.

    Before:

    ```mlir
    %d1 = "tile.update_tensor_descriptor"(%d, %off_m, %k, %p)
            {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    "tile.async_tdm_copy_global_to_local"(%d1, %buf)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 15 : i32}
      : (!da, !ba) -> ()
    "tile.async_tdm_wait"() {num = 1 : i32} : () -> ()
    ```

    After (``target=gfx1250``, types abbreviated):

    ```mlir
    %p32 = "arith.extui"(%p) : (i1) -> i32
    %d1 = "amdg.update_tensor_descriptor"(%d, %off_m, %k, %p32)
            {clamp_bounds, operandSegmentSizes = array<i32: 1, 2, 0, 1>}
          : (!tt.tensordesc<128x64xf16, #ttg.padded_shared<...>>, i32, i32, i32) -> ...
    %t = "amdg.async_tdm_copy_global_to_local"(%d1, %buf) {warp_used_hint = 15 : i32}
          : (!tt.tensordesc<...>, !ttg.memdesc<...>) -> !ttg.async.token
    %w = "amdg.async_tdm_wait"() {num = 1 : i32} : () -> !ttg.async.token
    ```
    """

    name: ClassVar[str] = "convert-tile-to-triton-gpu"
    target: str = ""
    """gfx1250, gfx950, gfx942 or cuda:90; empty: the module's ``tile.target``
    (a target given here overrides it; the module's attribute is not read)."""
    lds_copies: str = "auto"
    """gfx950 and cuda:90 copies: ``direct`` to shared memory, through
    ``registers``, or ``auto`` (direct when the function states the alignment
    it needs)."""

    def run(self, module: ir.Operation) -> None:
        module.context.allow_unregistered_dialects = True
        target = self.target
        if not target and TARGET in module.attributes:
            target = ir.StringAttr(module.attributes[TARGET]).value
        if not target:
            self.fail(
                module,
                f"needs a target ({', '.join(TARGETS)}): pass target=... or set {TARGET}",
            )
        if target not in TARGETS:
            self.fail(module, f"unknown target '{target}' (known: {', '.join(TARGETS)})")
        if NUM_WARPS not in module.attributes:
            self.fail(module, f"needs '{NUM_WARPS}' on the module")
        num_warps = ir.IntegerAttr(module.attributes[NUM_WARPS]).value
        if self.lds_copies not in LDS_COPIES:
            self.fail(
                module,
                f"lds-copies must be one of {', '.join(LDS_COPIES)}, got '{self.lds_copies}'",
            )
        info = TARGETS[target]
        lowering = _Lowering(module, info, num_warps)
        if info.direct_to_lds and self.lds_copies != "registers":
            lowering.direct_copies = self.lds_copies == "direct" or _direct_copies_ok(
                module, inner_only=info.nvidia
            )
        try:
            lowering.run()
        except LoweringFailure as e:
            self.fail(e.op, str(e))


def _direct_copies_ok(module: ir.Operation, inner_only: bool = False) -> bool:
    """Whether direct-to-LDS copies can be proven 16-byte aligned.

    Triton vectorises a direct-to-LDS load only when its mask and offsets are
    provably constant over 16 bytes, and fails to compile it otherwise; that
    takes divisibility facts on every descriptor shape and outer stride
    (constants, or function arguments with ``tile.divisibility`` >= 16) and
    a constant unit inner stride. With ``inner_only`` (NVIDIA's
    ``cp.async``) only the innermost shape needs the fact: an outer bound
    masks whole rows, which never splits a vector.
    """
    ok = True
    for view in collect_ops(module, (MakeTensorDescriptorOp.OPERATION_NAME,)):
        shape = list(view.shape)[-1:] if inner_only else list(view.shape)
        strides = list(view.strides)
        divisible = [_divisible(v) for v in (*shape, *strides[:-1])]
        ok = ok and all(divisible) and _const_int(strides[-1]) == 1
    return ok


def _divisible(value: ir.Value) -> bool:
    c = _const_int(value)
    if c is not None:
        return c % 16 == 0
    owner = value.owner
    if not isinstance(owner, ir.Block):
        return False
    fn = owner.owner
    fn = fn.operation if hasattr(fn, "operation") else fn
    if fn.name != "func.func" or "arg_attrs" not in fn.attributes:
        return False
    idx = ir.BlockArgument(value).arg_number
    attrs = ir.DictAttr(ir.ArrayAttr(fn.attributes["arg_attrs"])[idx])
    return any(
        name in attrs and ir.IntegerAttr(attrs[name]).value % 16 == 0 for name in DIVISIBILITY_ATTRS
    )


__all__ = [
    "TARGETS",
    "ConvertTileToTritonGPUPass",
    "Target",
    "blocked_encoding",
    "shared_encoding",
    "wmma_warp_bases",
]
