"""``convert-tile-to-triton-gpu``: hand a tile module to Triton as TritonGPU IR.

This is a *hand-off*, not a pass over our IR: it walks the tile module (in
the MLIR context of our bindings) and builds a Triton ``ir.module`` in
Triton 3.9.0's own context, through Triton's typed IR builder exactly as
Gluon's front end does (``gluon_ir.GluonOpBuilder`` for ops and types,
Gluon's layout classes for encodings). Why the builder and not text:

* Triton checks every op as it is built (its builders infer and check
  result types and encodings), and its verifier runs on the finished module,
  so a lowering bug is reported at the op that made it, never as a parse
  error in text we printed;
* types and encodings are Triton's objects, not strings: nothing is formatted
  or parsed back, and ``--emit=ttgir`` prints Triton's own pretty TTGIR;
* every Triton op gets the file:line:col of the tile op it comes from (the
  builder's current location), so Triton's diagnostics name the tile line.

The price is that the result lives in Triton's context: it can be printed,
verified and compiled, never handed back to our passes. The pipeline stage
``convert-tile-to-triton-gpu`` is therefore the last stage of a pipeline
(:mod:`gemm_opt.lowering.compile` splits it off and runs it), and because
Triton's C++ can abort the process, :func:`convert` only ever runs in a
child process (:func:`gemm_opt.lowering.triton_bridge.run_isolated`), which
reports the tile op it is building so that a crash is still a located error.

What the lowering builds:

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
  bytes), else a copy goes through registers and ``ttg.local_store``. Warps
  have 32 lanes. The MMA is one of two (option ``mma``), chosen per
  accumulator layout in one place, :meth:`_Lowering.choose_mma`:

  - wgmma (``mma=auto``, the default, where it fits; ``mma=wgmma`` makes
    every misfit an error): when both operands of every ``tile.wmma`` of a
    ``#tile.wmma_layout`` are ``tile.local_load`` s of row-major rank-2 shared
    buffers, or of ``tile.memdesc_trans`` ``[1, 0]`` views of such buffers
    (:func:`wgmma_buffer_refusal`: ``ttg.memdesc_trans`` flips the NVMMA
    layout's ``transposed`` flag and wgmma reads 16-bit operands either way),
    used by that MMA alone, of f16 or bf16 alike, the MMA becomes
    ``ttng.warp_group_dot`` (``isAsync``) on the buffers themselves, then
    ``ttng.warp_group_dot_wait {pendings = 0}`` (``tile.wmma`` is
    synchronous), and the loads vanish. The asynchronous MMA of
    :mod:`gemm_opt.dialect.async_ops` (which ``tile-pipeline-mma`` makes of
    a K loop's ``tile.wmma``) reads its buffers itself: ``tile.async_wmma``
    becomes the ``warp_group_dot`` alone and ``tile.async_wmma_wait {num}``
    the ``warp_group_dot_wait {pendings = num}`` of its accumulator, so one
    MMA stays in flight while the next copy is issued. Where wgmma does not
    fit (or with ``mma=mma_v2``), and on the AMD targets, an async MMA is
    synchronous (loads and a dot) and its wait emits nothing.
    The layout becomes ``#ttg.nvidia_mma`` version 3: warps 4 at a time
    (warpgroups) along M while M has rows for them, then along N, and
    ``instrShape = [16, N, 16]`` with N the largest multiple of 8 up to 256
    dividing a warpgroup's columns (:func:`wgmma_shape`). The buffers those
    loads read (every buffer of their tile shared layout; for a view, the
    buffer it views) become ``#ttg.nvmma_shared`` with the widest swizzle (128, 64 or 32 bytes)
    dividing a row (:func:`nvmma_swizzle`); ``cp.async`` and register copies
    write that layout, and Triton fences the generic-proxy writes before
    wgmma reads them. The whole tile ``warpsPerCTA`` is replaced: the
    accumulator's distribution is the lowering's choice, not the data's.
  - mma.sync (``mma=mma_v2``, or where wgmma does not fit: an operand in
    registers or also used elsewhere, a buffer stored column-major,
    other element types, warps not in whole warpgroups, M not filling the
    warpgroups' 64-row tiles): every shared layout becomes the
    ``#ttg.swizzled_shared`` that ``ldmatrix`` reads without bank conflicts
    (16-byte vectors, phases over 128-byte rows), ``#tile.wmma_layout``
    becomes ``#ttg.nvidia_mma`` version 2 (``m16n8k16``, ``instrShape =
    [16, 8]``, the same ``warpsPerCTA``), and dot operands take ``kWidth =
    32 / element bits`` (2 for f16 and bf16, as Triton picks for mma v2).

  The mma.sync forms are ones Triton 3.6 and 3.9 both parse (default CTA
  layout left out); the wgmma forms are checked with Triton 3.9 only.

  TMA (``lds-copies=tma``, or ``auto`` when the function states 16-byte
  aligned outer strides, which a device-side TMA descriptor needs, and every
  copy can be one; see :func:`_tma_facts_ok`): every copy becomes
  ``ttng.async_tma_copy_global_to_local`` of
  the block at its origin, tracked by an mbarrier, the hint dropped. A
  ``tile.make_tensor_descriptor`` made once from the function's arguments
  becomes a host descriptor, a ``!tt.tensordesc`` parameter after the
  arguments that the launcher encodes (:mod:`gemm_opt.lowering.host_tensormaps`
  says which and why: a device-side one costs microseconds per program);
  any other becomes ``tt.make_tensor_descriptor`` (its
  NVMMA shared layout is the destination buffers'), which Triton's
  ``tma-lowering`` turns into a 128-byte tensormap in per-program global
  scratch before the text is printed (one tensormap per op and program: a
  descriptor made inside a loop, such as wgrad's per-group descriptors, is
  rewritten there on every pass, after the copies still in flight are
  waited for). The counted waits stay exact: a
  function's copies share a ring of single-arrival barriers, copy ``g``
  expects its bytes on barrier ``g % R``, and ``tile.async_tdm_wait {num}``
  waits, with phase parity ``(g / R) % 2``, for the copies it completes
  (:mod:`gemm_opt.lowering.tma_plan` has the argument, and sizes ``R``).
  Mapping the existing waits directly, rather than through barrier ops in
  the tile IR, keeps every pass and the model unchanged; its price is
  that copies and waits must sit at a function's top level or in a
  top-level ``scf.for`` that waits. A predicated-off copy arrives without
  bytes, out-of-bounds rows are TMA's zero fill, and a ``func.return``
  waits for every copy (no TMA may outlive its barrier). Copies TMA cannot
  take (fused copies, descriptors with bounds, buffers not read by wgmma,
  which keep the ``ldmatrix`` swizzle) are errors at the copy under
  ``lds-copies=tma``; under ``auto`` the module keeps ``cp.async`` (or
  register copies) instead. Barrier-tracked copies are not counted (their
  own barrier completes them) and mix freely with counted ones.

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
disagreement (a hand-edited contract attribute) is an error at the copy;
nothing is emitted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy

from gemm_opt.core.contract import (
    DIVISIBILITY,
    NUM_WARPS,
    TARGET,
    TRITON_DIVISIBILITY,
    WARP_LAYOUT,
    WARP_LAYOUTS,
    WARP_PREDICATED,
)
from gemm_opt.core.diagnostics import position_of
from gemm_opt.core.ext_compat import cast, ir
from gemm_opt.core.pass_base import TilePass
from gemm_opt.core.targets import TARGETS, Target
from gemm_opt.core.tdm_layout import TdmWarpLayout, tdm_warp_layout
from gemm_opt.core.warp_hint import WarpHintError
from gemm_opt.dialect.async_ops import AsyncWmmaOp, AsyncWmmaWaitOp
from gemm_opt.dialect.barrier import MBarrierRingType
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
    Tile,
    WmmaAttr,
    cache_modifier,
    verify_for_target,
    viewed_block,
    warp_layout_fields,
)
from gemm_opt.lowering.convert_barrier_ops import HANDLERS as BARRIER_HANDLERS
from gemm_opt.lowering.convert_barrier_ops import prescan_barriers
from gemm_opt.lowering.convert_sync_ops import HANDLERS as SYNC_HANDLERS
from gemm_opt.lowering.convert_warp_specialize import HANDLERS as WARP_SPECIALIZE_HANDLERS
from gemm_opt.lowering.host_tensormaps import HostTensorMap, host_tensormap
from gemm_opt.lowering.tma_plan import FunctionPlan, TmaPlan, TmaRefusal, plan_tma
from gemm_opt.passes.common import (
    COPY_OP,
    FUSED_OP,
    collect_ops,
    descriptor_root,
    num_warps_of,
)

#: The ops of :mod:`gemm_opt.dialect.async_ops` the prescan sizes and chooses MMAs for.
ASYNC_MMA_OPS = (AsyncWmmaOp.OPERATION_NAME,)

#: Argument attributes that state a divisibility fact (tile's and Triton's).
DIVISIBILITY_ATTRS = (DIVISIBILITY, TRITON_DIVISIBILITY)
#: Triton's cache-modifier enum (``ir.CACHE_MODIFIER``) by tile spelling.
CACHE_MODIFIERS = {".ca": "CA", ".cg": "CG", ".wb": "WB", ".cs": "CS", ".wt": "WT", ".cv": "CV"}


#: ``lds-copies`` option values: how targets without TDM fill LDS (``tma``: cuda:90 only).
LDS_COPIES = ("auto", "direct", "registers", "tma")
#: ``mma`` option values: which NVIDIA MMA a ``tile.wmma`` becomes on cuda:90.
MMA_KINDS = ("auto", "mma_v2", "wgmma")
#: wgmma's instruction N: a multiple of 8 up to 256.
WGMMA_MAX_N = 256


class LoweringFailure(Exception):
    """A diagnostic for ``op``: raised deep in the lowering, reported by the pass."""

    def __init__(self, op: Any, message: str) -> None:
        super().__init__(message)
        self.op = op


# ---- layouts (Gluon's layout classes) and element types -------------------------------


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


def _padded(layouts: Any, interval: int, amount: int, order: Sequence[int], shape) -> Any:
    """Gluon's ``PaddedSharedLayout`` with the identity mapping for ``order``.

    That is what ``#ttg.padded_shared<[interval:+amount] {order, shape}>``
    means: offset bases walk the dims fastest first.
    """
    shape = [int(s) for s in shape]
    rank = len(shape)
    bases = [
        [1 << b if i == dim else 0 for i in range(rank)]
        for dim in order
        for b in range(_log2(shape[dim]))
    ]
    return layouts.PaddedSharedLayout([[interval, amount]], bases, [], shape)


def shared_layout(layouts: Any, attr: SharedLayoutAttr, tile_shape: Sequence[int]) -> Any:
    """Gluon's shared layout for a tile shared layout over ``tile_shape``."""
    if isinstance(attr, PaddedSharedAttr):
        layout = attr.to_layout()
        order = list(layout.order)
        return _padded(layouts, layout.interval, layout.amount, order, tile_shape[-len(order) :])
    if isinstance(attr, SwizzledSharedAttr):
        layout = attr.to_layout()
        return layouts.SwizzledSharedLayout(
            layout.vec, layout.per_phase, layout.max_phase, list(layout.order)
        )
    if isinstance(attr, PartitionedSharedAttr):
        layout = attr.to_layout()
        rank = len(layout.inner.order)
        piece = list(tile_shape)[-rank:]
        if 0 <= layout.partition_dim < len(piece):
            piece[layout.partition_dim] //= layout.num_logical_pieces
        inner_attr = attr.field_values().get("layout")
        if inner_attr is None:
            inner = unswizzled_layout(layouts, _row_major(rank))
        else:
            inner = shared_layout(layouts, inner_attr, piece)
        return layouts.PartitionedSharedLayout(
            layout.num_partitions, layout.num_groups, layout.partition_dim, inner
        )
    raise TypeError(f"unsupported shared layout {attr}")


def unswizzled_layout(layouts: Any, order: Sequence[int], vec: int = 1) -> Any:
    """A ``SwizzledSharedLayout`` that does not swizzle."""
    return layouts.SwizzledSharedLayout(vec, 1, 1, list(order))


def mma_swizzle(order: Sequence[int], tile_shape: Sequence[int], elem_bits: int) -> tuple:
    """``(vec, per_phase, max_phase)`` of the swizzle mma.sync operands use on NVIDIA.

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
    return vec, per_phase, max_phase


def wgmma_shape(m: int, n: int, k: int, num_warps: int) -> tuple[list[int], list[int]]:
    """``(warpsPerCTA, instrShape)`` of the ``nvidia_mma`` v3 layout of an MxNxK dot.

    A warpgroup (4 consecutive warps) issues one wgmma over 64 rows, 16 per
    warp, so warps go 4 at a time along M while M has rows for them, then
    along N (Triton's own rule for mma v3). The instruction's N is the
    largest multiple of 8 (at most 256) dividing a warpgroup's columns: the
    fewest instructions per K step. Raises ValueError (why) when the dot
    does not fit.
    """
    if num_warps % 4:
        raise ValueError(f"{num_warps} warps are not whole warpgroups of 4")
    wm, wn = 4, 1
    while wm * wn < num_warps:
        if m > 16 * wm:
            wm *= 2
        else:
            wn *= 2
    if m % (16 * wm):
        raise ValueError(f"M = {m} is not a multiple of the {16 * wm} rows of {wm} warps")
    if n % (8 * wn):
        raise ValueError(f"N = {n} does not split into {wn} warpgroup tiles of multiples of 8")
    if k % 16:
        raise ValueError(f"K = {k} is not a multiple of 16")
    per_group = n // wn
    instr_n = max(d for d in range(8, min(WGMMA_MAX_N, per_group) + 1, 8) if per_group % d == 0)
    return [wm, wn], [16, instr_n, 16]


def nvmma_swizzle(shape: Sequence[int], elem_bits: int) -> int:
    """Swizzle width in bytes of the NVMMA shared layout of a ``shape`` buffer.

    The widest of 128, 64 and 32 bytes that divides a row: wgmma (and TMA)
    then read and write whole swizzle atoms of 8 rows, with no bank
    conflicts; rows narrower than 32 bytes, or fewer than 8 of them, are
    left unswizzled.
    """
    row = int(shape[-1]) * elem_bits // 8
    if len(shape) < 2 or int(shape[-2]) < 8:
        return 0
    return next((w for w in (128, 64, 32) if row % w == 0), 0)


def wgmma_buffer_refusal(view: ir.Value) -> str | None:
    """Why wgmma cannot read the shared operand ``view`` (None: it can).

    wgmma reads a rank-2 block as it lies in an NVMMA layout, K-major or,
    for 16-bit elements, transposed: a row-major block, or the
    ``tile.memdesc_trans`` view of one (``ttg.memdesc_trans``
    flips the NVMMA layout's ``transposed`` flag, which wgmma reads
    natively). A block stored column-major has no NVMMA form here.
    """
    block = viewed_block(view)
    t = block.type
    if len(view.type.shape) != 2 or len(t.shape) != 2:
        return f"buffer has rank {len(view.type.shape)}, not 2"
    if shared_order(t.layout_attr, 2) != [1, 0]:
        return "buffer is not row-major (transposed)"
    if block != view and element_bits(t.element_type) != 16:
        return "transposed view is not of 16-bit elements (wgmma transposes only those)"
    return None


def shared_order(attr: SharedLayoutAttr, rank: int) -> list[int]:
    """The dim order (fastest first) of a tile shared layout."""
    if isinstance(attr, PartitionedSharedAttr):
        attr = attr.field_values().get("layout")
    if isinstance(attr, (PaddedSharedAttr, SwizzledSharedAttr)):
        return list(attr.to_layout().order)
    return _row_major(rank)


def blocked_params(shape: Sequence[int], elem_bits: int, num_warps: int, warp_size: int) -> tuple:
    """``(sizePerThread, threadsPerWarp, warpsPerCTA, order)`` of the row-major
    blocked layout with 16-byte vectors along the last dim."""
    inner = shape[-1]
    vec = max(1, min(128 // max(elem_bits, 8), inner))
    lanes_inner = min(warp_size, max(1, inner // vec))
    if len(shape) == 1:
        return [vec], [warp_size], [num_warps], [0]
    return [1, vec], [warp_size // lanes_inner, lanes_inner], [num_warps, 1], [1, 0]


#: Element types Triton's builder makes, by MLIR type class and its builder getter.
_FLOATS = (
    ("F16Type", "get_half_ty"),
    ("BF16Type", "get_bf16_ty"),
    ("F32Type", "get_float_ty"),
    ("F64Type", "get_double_ty"),
    ("Float8E4M3FNType", "get_fp8e4nv_ty"),
    ("Float8E5M2Type", "get_fp8e5_ty"),
    ("Float8E4M3FNUZType", "get_fp8e4b8_ty"),
    ("Float8E5M2FNUZType", "get_fp8e5b16_ty"),
    ("Float8E4M3B11FNUZType", "get_fp8e4b15_ty"),
)
_INTS = {
    1: "get_int1_ty",
    8: "get_int8_ty",
    16: "get_int16_ty",
    32: "get_int32_ty",
    64: "get_int64_ty",
}


def _float_getter(t: ir.Type) -> str | None:
    for cls_name, getter in _FLOATS:
        cls = getattr(ir, cls_name, None)
        if cls is not None and cast(t, cls) is not None:
            return getter
    return None


def element_bits(t: ir.Type) -> int | None:
    """Bit width of a scalar type Triton can hold in a tensor (None: none)."""
    it = cast(t, ir.IntegerType)
    if it is not None:
        width = ir.IntegerType(t).width
        return width if width in _INTS and ir.IntegerType(t).is_signless else None
    if _float_getter(t) is not None:
        return ir.FloatType(t).width
    return None


def _elements_error(t: ir.Type) -> str:
    return (
        f"element type {t} has no TritonGPU equivalent (Triton holds signless i1, i8, i16, "
        "i32, i64, f16, bf16, f32, f64 and the f8 types it knows)"
    )


# ---- the lowering ------------------------------------------------------------------


@dataclass
class _Desc:
    """Where a tile descriptor value points (Triton values), as far as known.

    ``origin`` is the accumulated block origin (None: the tensor origin);
    ``bounds`` the absolute bounds (None: the shape); ``pred`` the i1 of the
    last update that set one.
    """

    base: Any
    shape: list[Any]
    strides: list[Any]
    #: Per dim: whether the stride is the constant 1.
    unit: list[bool]
    origin: list[Any] | None = None
    bounds: list[Any] | None = None
    pred: Any = None
    #: cuda:90 TMA: the ``tt.make_tensor_descriptor`` of the tensor (None: no TMA).
    tma: Any = None


#: ``arith.cmpi`` / ``arith.cmpf`` predicate codes -> Triton builder suffix.
_ICMP = ("EQ", "NE", "SLT", "SLE", "SGT", "SGE", "ULT", "ULE", "UGT", "UGE")
_FCMP = {1: "OEQ", 2: "OGT", 3: "OGE", 4: "OLT", 5: "OLE", 6: "ONE", 8: "UEQ", 9: "UGT"}
_FCMP |= {10: "UGE", 11: "ULT", 12: "ULE", 13: "UNE"}
#: Kept ops whose Triton builder takes just the new operands.
_ELEMENTWISE = {
    "arith.addi": "create_add",
    "arith.subi": "create_sub",
    "arith.muli": "create_mul",
    "arith.divsi": "create_sdiv",
    "arith.divui": "create_udiv",
    "arith.remsi": "create_srem",
    "arith.remui": "create_urem",
    "arith.andi": "create_and",
    "arith.ori": "create_or",
    "arith.xori": "create_xor",
    "arith.shli": "create_shl",
    "arith.shrsi": "create_ashr",
    "arith.shrui": "create_lshr",
    "arith.maxsi": "create_maxsi",
    "arith.minsi": "create_minsi",
    "arith.maxui": "create_maxui",
    "arith.minui": "create_minui",
    "arith.addf": "create_fadd",
    "arith.subf": "create_fsub",
    "arith.mulf": "create_fmul",
    "arith.divf": "create_fdiv",
    "arith.remf": "create_frem",
    "arith.negf": "create_fneg",
    "arith.maximumf": "create_maximumf",
    "arith.minimumf": "create_minimumf",
    "arith.maxnumf": "create_maxnumf",
    "arith.minnumf": "create_minnumf",
    "arith.select": "create_select",
    "math.exp": "create_exp",
    "math.exp2": "create_exp2",
    "math.log": "create_log",
    "math.log2": "create_log2",
    "math.sin": "create_sin",
    "math.cos": "create_cos",
    "math.sqrt": "create_sqrt",
    "math.rsqrt": "create_rsqrt",
    "math.absf": "create_fabs",
    "math.absi": "create_iabs",
    "math.floor": "create_floor",
    "math.ceil": "create_ceil",
    "math.erf": "create_erf",
    "math.fma": "create_fma",
}
#: Kept casts: builder and whether it also takes a signedness flag.
_CASTS = {
    "arith.extsi": ("create_int_cast", True),
    "arith.extui": ("create_int_cast", False),
    "arith.trunci": ("create_int_cast", True),
    "arith.sitofp": ("create_si_to_fp", None),
    "arith.uitofp": ("create_ui_to_fp", None),
    "arith.fptosi": ("create_fp_to_si", None),
    "arith.fptoui": ("create_fp_to_ui", None),
    "arith.extf": ("create_fp_ext", None),
    "arith.truncf": ("create_fp_trunc", None),
    "arith.bitcast": ("create_bitcast", None),
}
#: Attributes of kept ops that carry no meaning the builders would drop.
_DEFAULT_ATTRS = {"fastmath": "#arith.fastmath<none>", "overflowFlags": "#arith.overflow<none>"}
#: The most runs of equal values a non-splat constant lowers to (one select each).
MAX_CONSTANT_RUNS = 64


@dataclass
class _Lowering:
    module: ir.Operation
    target: Target
    num_warps: int
    tt: Any  #: the Triton handle (:class:`gemm_opt.lowering.triton_bridge.TritonIR`)
    filename: str = "-"
    on_op: Callable[[Any], None] | None = None
    values: dict[ir.Value, Any] = field(default_factory=dict)
    descs: dict[ir.Value, _Desc] = field(default_factory=dict)
    #: Tile ops not to emit (stripped warp-predicate chains).
    dead: set[ir.Operation] = field(default_factory=set)
    #: Copy op -> the user's pred left after stripping (None: no pred).
    stripped: dict[ir.Operation, ir.Value | None] = field(default_factory=dict)
    #: str(#tile.wmma_layout) -> smallest per-warp M/N tile of its dots.
    mma_min_warp_tile: dict[str, int] = field(default_factory=dict)
    functions: dict[str, Any] = field(default_factory=dict)
    _layouts: dict[Any, Any] = field(default_factory=dict)
    _linear_checked: set[tuple[Any, tuple[int, ...]]] = field(default_factory=set)
    #: gfx950: copies go straight to LDS (else through registers).
    direct_copies: bool = False
    #: cuda:90: the ``mma`` option (see :data:`MMA_KINDS`).
    mma: str = "auto"
    #: cuda:90: str(#tile.wmma_layout) -> (warpsPerCTA, instrShape) of the
    #: ``nvidia_mma`` v3 its dots use (absent: mma.sync).
    wgmma_acc: dict[str, tuple[list[int], list[int]]] = field(default_factory=dict)
    #: cuda:90: str(tile shared layout) of buffers wgmma reads: NVMMA shared.
    wgmma_shared: set[str] = field(default_factory=set)
    #: cuda:90: the ``tile.wmma`` ops lowered to wgmma and the operand
    #: ``tile.local_load`` ops they absorb (wgmma reads the buffers itself).
    wgmma_ops: set[ir.Operation] = field(default_factory=set)
    wgmma_loads: set[ir.Operation] = field(default_factory=set)
    #: cuda:90: the ``tile.async_wmma`` ops lowered to an asynchronous wgmma.
    wgmma_async: set[ir.Operation] = field(default_factory=set)
    #: The ``lds-copies`` option (see :data:`LDS_COPIES`).
    lds_copies: str = "auto"
    #: cuda:90: the barrier plan of TMA copies (None: copies are not TMA).
    tma: TmaPlan | None = None
    #: cuda:90 TMA, in the function being lowered: its barrier ring (Triton
    #: value), its plan, and the copies issued so far (Triton i32 value).
    tma_bars: Any = None
    tma_fn: FunctionPlan | None = None
    tma_count: Any = None
    #: The tile op being lowered (diagnostics from builders name it).
    current: Any = None
    #: Barrier ops: the plan of :mod:`gemm_opt.lowering.convert_barrier_ops` (built lazily).
    barrier_plan: Any = None
    #: cuda:90: descriptors that barrier-tracked copies or TDM stores use (TMA ones).
    tma_descs: set[ir.Value] = field(default_factory=set)
    #: cuda:90: TMA descriptors the host encodes (:mod:`gemm_opt.lowering.host_tensormaps`):
    #: their ``tile.make_tensor_descriptor`` -> the lowered function's argument.
    host_descs: dict[ir.Operation, Any] = field(default_factory=dict)
    #: Function name -> (``tile.make_tensor_descriptor``, argument index) of its host descriptors.
    host_desc_args: dict[str, list[tuple[ir.Operation, int]]] = field(default_factory=dict)
    #: Function name -> its host descriptors, in parameter order.
    host_tensormaps: dict[str, list[HostTensorMap]] = field(default_factory=dict)

    @property
    def b(self) -> Any:
        return self.tt.builder

    # -- small helpers --

    def fail(self, op: Any, message: str) -> LoweringFailure:
        """The failure to raise for ``op`` (``raise self.fail(...)``)."""
        return LoweringFailure(op, message)

    def v(self, old: ir.Value) -> Any:
        try:
            return self.values[old]
        except KeyError:
            raise LoweringFailure(
                old.owner if isinstance(old.owner, ir.Operation) else self.module,
                "internal error: value used before it was lowered",
            ) from None

    def at(self, op: Any) -> None:
        """Build what follows at ``op``'s location, and report ``op`` as current."""
        operation = op.operation if hasattr(op, "operation") else op
        self.current = operation
        if self.on_op is not None:
            self.on_op(operation)
        line, col = position_of(operation.location)
        filename = _loc_filename(operation.location)
        if not filename or filename == "-":
            filename = self.filename
        self.b.set_loc(self.b.create_loc(filename, line, col))

    def i32(self) -> Any:
        return self.b.get_int32_ty()

    def i64(self) -> Any:
        return self.b.get_int64_ty()

    def const(self, value: int) -> Any:
        return self.b.get_int32(value)

    def layout(self, gluon_layout: Any) -> Any:
        """Triton's attribute for a Gluon layout (one per distinct layout)."""
        if gluon_layout not in self._layouts:
            self._layouts[gluon_layout] = gluon_layout._to_ir(self.b)
        return self._layouts[gluon_layout]

    def tensor(self, shape: Sequence[int], elem: Any, layout: Any) -> Any:
        """A distributed tensor type; ``elem`` is a Triton type, ``layout`` Gluon's.

        Each new (layout, shape) is first converted to Triton's linear layout:
        Triton's verifier does that for every tensor later, and a layout it
        cannot convert (a ``kWidth`` of 3, say) fails, or aborts, here, at the
        tile op whose type it is, rather than in the verifier, at no op.
        """
        dims = [int(s) for s in shape]
        attr = self.layout(layout)
        if (layout, tuple(dims)) not in self._linear_checked:
            self._linear_checked.add((layout, tuple(dims)))
            self.b.to_linear_layout(attr, dims)
        return self.b.get_distributed_ty(elem, dims, attr)

    def blocked(self, shape: Sequence[int], elem_bits: int) -> Any:
        size, lanes, warps, order = blocked_params(
            shape, elem_bits, self.num_warps, self.target.warp_size
        )
        return self.tt.layouts.BlockedLayout(size, lanes, warps, order)

    # -- types --

    def elem(self, t: ir.Type, op: Any) -> Any:
        """Triton's scalar type for an MLIR scalar type (a located error if none)."""
        it = cast(t, ir.IntegerType)
        if it is not None:
            width = ir.IntegerType(t).width
            if width in _INTS and ir.IntegerType(t).is_signless:
                return getattr(self.b, _INTS[width])()
            raise self.fail(op, _elements_error(t))
        getter = _float_getter(t)
        if getter is None:
            raise self.fail(op, _elements_error(t))
        return getattr(self.b, getter)()

    def bits(self, t: ir.Type, op: Any) -> int:
        bits = element_bits(t)
        if bits is None:
            raise self.fail(op, _elements_error(t))
        return bits

    def convert_encoding(self, attr: Any, op: Any, elem_bits: int = 16) -> Any:
        """Gluon's register layout for a tile register layout."""
        t = self.target
        lay = self.tt.layouts
        if isinstance(attr, WmmaAttr):
            v = attr.field_values()
            warps = list(attr.warps_per_cta())
            if t.nvidia:
                if str(attr) in self.wgmma_acc:
                    warps, instr = self.wgmma_acc[str(attr)]
                    return lay.NVMMADistributedLayout([3, 0], warps, instr)
                return lay.NVMMADistributedLayout([2, 0], warps, [16, 8])
            if t.tdm:
                return lay.AMDWMMALayout(
                    int(v.get("version", 3)),
                    bool(v.get("transposed", False)),
                    wmma_warp_bases(warps),
                    [],
                    list(attr.instr_shape()),
                )
            mn = 32 if self.mma_min_warp_tile.get(str(attr), 32) >= 32 else 16
            k = t.mfma_k32 if mn == 32 else t.mfma_k16
            return lay.AMDMFMALayout(
                t.mfma_version, [mn, mn, k], bool(v.get("transposed", True)), warps
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
            return lay.DotOperandLayout(
                int(v.get("op_idx", 0)), self.convert_encoding(parent, op), int(k_width)
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
            return lay.BlockedLayout(
                list(v.get("size_per_thread", ())),
                list(v.get("threads_per_warp", ())),
                list(v.get("warps_per_cta", ())),
                list(v.get("order", ())),
            )
        raise self.fail(op, f"no TritonGPU equivalent for the layout {attr}")

    def shared(self, t: Any, op: Any) -> Any:
        """Gluon's shared layout of a descriptor or buffer type.

        TDM writes every tile layout. Without TDM a partitioned layout keeps
        only its inner layout (partitions are a TDM notion), and gfx950's
        direct-to-LDS copies, which write each warp's 1 KiB contiguously,
        cannot write padded rows: there a padded layout becomes the
        unswizzled ``swizzled_shared`` of 16-byte vectors. On NVIDIA a
        layout wgmma reads becomes NVMMA shared (:func:`nvmma_swizzle`),
        every other the ``ldmatrix``-friendly swizzle of :func:`mma_swizzle`
        (same dim order). The data a buffer holds is the
        same either way; only the placement in shared memory differs.
        """
        lay = self.tt.layouts
        attr = t.layout_attr
        if self.target.nvidia and str(attr) in self.wgmma_shared:
            # Read by wgmma: NVMMA shared (see the module docstring).
            bits = self.bits(t.element_type, op)
            # Rank 2 for a buffer ring too: its leading dim counts buffers.
            return lay.NVMMASharedLayout(nvmma_swizzle(t.shape, bits), bits, 2)
        if self.target.nvidia:
            order = shared_order(attr, len(t.shape))
            vec, per_phase, max_phase = mma_swizzle(order, t.shape, self.bits(t.element_type, op))
            return lay.SwizzledSharedLayout(vec, per_phase, max_phase, order)
        if not self.target.tdm and isinstance(attr, PartitionedSharedAttr):
            inner = attr.field_values().get("layout")
            if inner is None:
                return unswizzled_layout(lay, _row_major(len(t.shape)))
            attr = inner
        if self.direct_copies and isinstance(attr, PaddedSharedAttr):
            vec = max(1, 128 // self.bits(t.element_type, op))
            return unswizzled_layout(lay, attr.to_layout().order, vec)
        return shared_layout(lay, attr, t.shape)

    def convert_type(self, t: ir.Type, op: Any) -> Any:
        """The Triton type of a tile type (None: it has no value on this target)."""
        if isinstance(t, PtrType):
            return self.b.get_ptr_ty(self.elem(t.element_type, op), "global")
        if isinstance(t, TensorDescType):
            if not self.target.tdm and self.tma is None:
                return None
            block = self.b.get_block_ty(self.elem(t.element_type, op), list(t.shape))
            return self.b.get_tensor_descriptor_layout_type(
                block, False, self.layout(self.shared(t, op))
            )
        if isinstance(t, SharedType):
            shape = list(t.shape)
            return self.b.get_shared_mem_desc_ty(
                self.elem(t.element_type, op), shape, self.layout(self.shared(t, op)), shape
            )
        if isinstance(t, MBarrierType | MBarrierRingType):
            if not (self.target.tdm or self.target.nvidia):
                raise self.fail(op, f"{t} needs TDM (gfx1250) or TMA (cuda:90)")
            shape = [t.num, 1] if isinstance(t, MBarrierRingType) else [1]
            return self.barrier_type(shape)
        rt = cast(t, ir.RankedTensorType)
        if rt is not None:
            rt = ir.RankedTensorType(t)
            if rt.encoding is None:
                raise self.fail(
                    op, f"{t} has no layout; every tensor needs one to lower to TritonGPU"
                )
            elem = self.elem(rt.element_type, op)
            enc = self.convert_encoding(rt.encoding, op, self.bits(rt.element_type, op))
            return self.tensor(rt.shape, elem, enc)
        if isinstance(t, Tile.Type):
            raise self.fail(op, f"no TritonGPU equivalent for the type {t}")
        return self.elem(t, op)

    def must_type(self, t: ir.Type, op: Any) -> Any:
        new = self.convert_type(t, op)
        if new is None:
            raise self.fail(
                op,
                f"{t} cannot be passed through block arguments or results on "
                f"{self.target.name} (descriptors only exist on TDM targets)",
            )
        return new

    # -- driving --

    def run(self) -> Any:
        # Ops always get their tile op's location; this default only serves
        # attribute and type builders that insist on one.
        with ir.Location.unknown(self.module.context):
            return self._run()

    def _run(self) -> Any:
        self.prescan()
        body = self.module.regions[0].blocks[0]
        funcs = [op.operation for op in body.operations]
        for fn in funcs:
            if fn.name != "func.func":
                raise self.fail(fn, f"'{fn.name}' at module level has no lowering")
        self.at(self.module)
        tmod = self.b.create_module()
        i32 = self.b.get_int32_attr
        tmod.set_attr("ttg.num-ctas", i32(1))
        tmod.set_attr("ttg.num-warps", i32(self.num_warps))
        tmod.set_attr("ttg.target", self.b.get_string_attr(self.target.triton_target))
        tmod.set_attr("ttg.threads-per-warp", i32(self.target.warp_size))
        for fn in funcs:
            self.declare_func(tmod, fn)
        for fn in funcs:
            self.lower_func(fn)
        return tmod

    def prescan(self) -> None:
        """Check hints and predicates, find dead predicate chains, size MMA tiles."""
        ops = collect_ops(self.module, (COPY_OP, FUSED_OP, "tile.wmma", *ASYNC_MMA_OPS))
        for op in ops:
            if op.operation.name in ("tile.wmma", AsyncWmmaOp.OPERATION_NAME):
                self.note_mma(op)
        if self.target.nvidia:
            self.choose_mma([op for op in ops if op.operation.name == "tile.wmma"])
            self.choose_async_mma([op for op in ops if isinstance(op, AsyncWmmaOp)])
        chain: set[ir.Operation] = set()
        for op in ops:
            if op.operation.name in (COPY_OP, FUSED_OP):
                chain |= self.check_copy(op)
        self.dead = _dead_ops(chain, set(self.stripped))
        prescan_barriers(self)  # TMA stores read NVMMA shared buffers
        if self.target.nvidia and self.lds_copies == "tma":
            self.plan_tma()
        elif self.target.nvidia and self.lds_copies == "auto" and _tma_facts_ok(self.module):
            self.plan_tma(required=False)

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

    # -- cuda:90: mma.sync or wgmma --

    def choose_mma(self, mmas: list[Any]) -> None:
        """Pick wgmma or mma.sync for each accumulator layout (the one place).

        A ``#tile.wmma_layout`` becomes ``nvidia_mma`` v3 (wgmma) when every
        ``tile.wmma`` accumulating in it can take wgmma (:meth:`wgmma_refusal`)
        and they agree on its shape; else v2 (mma.sync). ``mma=wgmma``
        makes a refusal an error at the MMA, ``mma=mma_v2`` never picks wgmma.
        """
        if self.mma == "mma_v2":
            return
        by_layout: dict[str, list[Any]] = {}
        for op in mmas:
            by_layout.setdefault(str(ir.RankedTensorType(op.c.type).encoding), []).append(op)
        in_registers = self._register_operand_parents()
        for key, ops in by_layout.items():
            shapes = set()
            refusal = None
            for op in ops:
                refusal = self.wgmma_refusal(op)
                if refusal is not None:
                    break
                shapes.add(self._wgmma_shape(op))
            if refusal is None and len(shapes) > 1:
                refusal = "the MMAs sharing its accumulator layout need different wgmma shapes"
            if refusal is None and key in in_registers:
                refusal = (
                    "a dot-operand tensor of its layout is held in registers elsewhere "
                    "(only mma.sync has a register operand layout here)"
                )
            if refusal is not None:
                if self.mma == "wgmma":
                    raise self.fail(op, f"mma=wgmma: this MMA cannot use wgmma: {refusal}")
                continue
            warps, instr = next(iter(shapes))
            self.wgmma_acc[key] = (list(warps), list(instr))
            for op in ops:
                self.wgmma_ops.add(op.operation)
                for operand in (op.a, op.b):
                    load = _def(operand, "tile.local_load")
                    self.wgmma_loads.add(load)
                    self.wgmma_shared.add(str(viewed_block(load.opview.src).type.layout_attr))

    def _register_operand_parents(self) -> set[str]:
        """str(#tile.wmma_layout) of every dot-operand tensor that is not the
        single-use ``tile.local_load`` of an MMA operand (wgmma would leave
        it in registers, in a layout only mma.sync gives it)."""
        parents: set[str] = set()

        def note(value: ir.Value, owner: Any) -> None:
            rt = cast(value.type, ir.RankedTensorType)
            enc = None if rt is None else ir.RankedTensorType(value.type).encoding
            if not isinstance(enc, DotOperandAttr):
                return
            uses = list(value.uses)
            absorbed = (
                owner is not None
                and owner.name == "tile.local_load"
                and len(uses) == 1
                and _user(uses[0]).name == "tile.wmma"
            )
            if not absorbed:
                parents.add(str(enc.field_values().get("parent")))

        def visit(op: ir.Operation) -> ir.WalkResult:
            for r in op.results:
                note(r, op)
            for region in op.regions:
                for block in region.blocks:
                    for a in block.arguments:
                        note(a, None)
            return ir.WalkResult.ADVANCE

        self.module.walk(visit, ir.WalkOrder.PRE_ORDER)
        return parents

    def _wgmma_shape(self, op: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
        m, n = ir.RankedTensorType(op.c.type).shape
        k = ir.RankedTensorType(op.a.type).shape[1]
        warps, instr = wgmma_shape(m, n, k, num_warps_of(op))
        return tuple(warps), tuple(instr)

    def wgmma_refusal(self, op: Any) -> str | None:
        """Why a ``tile.wmma`` cannot be a wgmma (None: it can).

        wgmma reads both operands from shared memory as they lie there, so
        each must be a ``tile.local_load`` used by this MMA alone, of a
        rank-2 row-major buffer or its transposed view
        (:func:`wgmma_buffer_refusal`), of f16 or bf16
        alike, accumulating in f32 or f16, with whole warpgroups and a shape
        :func:`wgmma_shape` accepts.
        """
        elems = []
        for name, operand in (("A", op.a), ("B", op.b)):
            load = _def(operand, "tile.local_load")
            if load is None:
                return f"operand {name} is not a tile.local_load of a shared buffer"
            if len(list(operand.uses)) != 1:
                return f"operand {name} has other uses than this MMA"
            src = load.opview.src.type
            problem = wgmma_buffer_refusal(load.opview.src)
            if problem is not None:
                return f"operand {name}'s {problem}"
            elems.append(str(src.element_type))
        if elems[0] != elems[1] or elems[0] not in ("f16", "bf16"):
            return f"operands are {elems[0]} and {elems[1]}, not both f16 or both bf16"
        acc = str(ir.RankedTensorType(op.c.type).element_type)
        if acc not in ("f32", "f16"):
            return f"the accumulator is {acc}, not f32 or f16"
        try:
            self._wgmma_shape(op)
        except ValueError as e:
            return str(e)
        return None

    # -- hint cross-checks --

    def expected_layout(self, op: Any, desc: ir.Value, hint: int | None) -> TdmWarpLayout:
        t = desc.type
        try:
            return tdm_warp_layout(t.shape, num_warps_of(op), hint, t.shared_layout())
        except (WarpHintError, ValueError) as e:
            raise self.fail(op, f"cannot recompute the TDM warp layout: {e}") from None

    def check_layout_attr(self, op: Any, attr: Any, expected: TdmWarpLayout, what: str) -> None:
        got = attr.field_values() if hasattr(attr, "field_values") else None
        want = warp_layout_fields(expected)
        if got is None or any(got.get(k) != w for k, w in want.items()):
            raise self.fail(
                op,
                f"{what} {attr} disagrees with the layout Triton uses for "
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
                        f"{WARP_LAYOUTS} has {len(layouts)} layouts for {len(hints)} members",
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
            raise self.fail(op, f"marked {WARP_PREDICATED} but has no pred")
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
                f"marked {WARP_PREDICATED} but its pred is not "
                f"'user_pred & ({form})'; refusing to emit it",
            )
        anchor, free_mask = found
        if (anchor, free_mask) != (expected.anchor, expected.free_mask):
            hint = op.warp_used_hint
            shown = "no hint" if hint is None else f"warp_used_hint = {hint:#x}"
            raise self.fail(
                op,
                f"the warp predicate ((warp_id ^ {anchor}) & {free_mask}) == 0 "
                f"disagrees with {shown}, for which Triton predicates "
                f"((warp_id ^ {expected.anchor}) & {expected.free_mask}) == 0; refusing "
                "to emit it",
            )
        return user, chain

    # -- functions and regions --

    def declare_func(self, tmod: Any, fn: ir.Operation) -> None:
        self.at(fn)
        ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        inputs = [self.must_type(t, fn) for t in ftype.inputs]
        results = [self.must_type(t, fn) for t in ftype.results]
        name = ir.StringAttr(fn.attributes["sym_name"]).value
        # Host descriptors follow the arguments: each as Triton passes one.
        hosted = self.host_descriptors(fn)
        desc_args: list[tuple[ir.Operation, int]] = []
        for op, _ in hosted:
            desc_args.append((op.operation, len(inputs)))
            rank = len(op.shape)
            inputs += (
                [self.tma_desc_type(op)] + [self.i32()] * rank + [self.b.get_int64_ty()] * rank
            )
        self.host_tensormaps[name] = [h for _, h in hosted]
        visibility = "public"
        if "sym_visibility" in fn.attributes:
            visibility = ir.StringAttr(fn.attributes["sym_visibility"]).value
        new = self.b.get_or_insert_function(
            tmod, name, self.b.get_function_ty(inputs, results), visibility, False
        )
        tmod.push_back(new)
        self.host_desc_args[name] = desc_args
        old_arg_attrs = (
            list(ir.ArrayAttr(fn.attributes["arg_attrs"])) if "arg_attrs" in fn.attributes else []
        )
        for i, t in enumerate(ftype.inputs):
            divisibility = 16 if isinstance(t, PtrType) else None
            old = ir.DictAttr(old_arg_attrs[i]) if i < len(old_arg_attrs) else None
            if old is not None:
                for attr_name in DIVISIBILITY_ATTRS:
                    if attr_name in old:
                        divisibility = ir.IntegerAttr(old[attr_name]).value
            if divisibility is not None:
                new.set_arg_attr(i, "tt.divisibility", divisibility)
        self.functions[name] = new

    def host_descriptors(self, fn: ir.Operation) -> list[tuple[Any, HostTensorMap]]:
        """cuda:90: the TMA descriptors of ``fn`` the host encodes, in order."""
        blocks = list(fn.regions[0].blocks)
        if not self.target.nvidia or len(blocks) != 1:
            return []
        out = []
        for op in blocks[0].operations:
            if op.operation.name != MakeTensorDescriptorOp.OPERATION_NAME or not self.makes_tma(op):
                continue
            hosted = host_tensormap(op, blocks[0])
            if hosted is not None:
                out.append((op, hosted))
        return out

    def makes_tma(self, op: Any) -> bool:
        """Whether ``tile.make_tensor_descriptor`` ``op`` gets a TMA descriptor."""
        return self.tma is not None or op.result in self.tma_descs

    def tma_desc_type(self, op: Any) -> Any:
        """The ``!tt.tensordesc`` type of the TMA descriptor of ``op``."""
        if self.tma is not None:
            return self.must_type(op.result.type, op)
        t = op.result.type
        block = self.b.get_block_ty(self.elem(t.element_type, op), list(t.shape))
        return self.b.get_tensor_descriptor_layout_type(
            block, False, self.layout(self.shared(t, op))
        )

    def tma_descriptor(self, op: Any, info: _Desc) -> Any:
        """The TMA descriptor of ``op``: the host's parameter, or made on the device."""
        hosted = self.host_descs.get(op.operation)
        if hosted is not None:
            return hosted
        return self.b.create_make_tensor_descriptor(
            self.tma_desc_type(op),
            info.base,
            info.shape,
            info.strides,
            self.tt.ir.PADDING_OPTION.PAD_ZERO,
        )

    def lower_func(self, fn: ir.Operation) -> None:
        self.at(fn)
        new = self.functions[ir.StringAttr(fn.attributes["sym_name"]).value]
        blocks = list(fn.regions[0].blocks)
        if len(blocks) != 1:
            raise self.fail(fn, "functions with more than one block have no lowering to TritonGPU")
        entry = new.add_entry_block()
        for i, a in enumerate(blocks[0].arguments):
            self.values[a] = new.args(i)
        for desc_op, index in self.host_desc_args.get(
            ir.StringAttr(fn.attributes["sym_name"]).value, []
        ):
            self.host_descs[desc_op] = new.args(index)
        self.b.set_insertion_point_to_start(entry)
        self.tma_fn = None if self.tma is None else self.tma.functions.get(fn)
        if self.tma_fn is not None:
            self.init_barriers(self.tma_fn.ring)
        self.lower_block(blocks[0])

    def lower_block(self, block: ir.Block) -> None:
        for op in block.operations:
            self.lower_op(op.operation)

    def lower_op(self, op: ir.Operation) -> None:
        if op in self.dead:
            return
        self.at(op)
        name = op.name
        handler = _HANDLERS.get(name)
        if handler is not None:
            results = handler(self, op.opview)
        elif name in _ELEMENTWISE or name in _CASTS or name in _KEPT:
            results = self.kept(op)
        else:
            raise self.fail(op, f"'{name}' has no lowering to TritonGPU")
        if results is None:
            results = []
        elif not isinstance(results, list):
            results = [results]
        for old, new in zip(op.results, results, strict=False):
            self.values[old] = new

    def check_attrs(self, op: ir.Operation, allowed: Sequence[str]) -> None:
        """Refuse attributes the builders would silently drop."""
        for name in op.attributes:
            if name in allowed or _DEFAULT_ATTRS.get(name) == str(op.attributes[name]):
                continue
            raise self.fail(op, f"'{op.name}' with attribute '{name}' has no lowering to TritonGPU")

    def kept(self, op: ir.Operation) -> Any:
        """An ``arith`` / ``math`` / ``scf`` op, rebuilt by Triton's builder."""
        name = op.name
        if name in _KEPT:
            return _KEPT[name](self, op)
        args = [self.v(o) for o in op.operands]
        if name in _ELEMENTWISE:
            self.check_attrs(op, ())
            return getattr(self.b, _ELEMENTWISE[name])(*args)
        builder, signed = _CASTS[name]
        self.check_attrs(op, ())
        ty = self.must_type(op.results[0].type, op)
        if signed is None:
            return getattr(self.b, builder)(args[0], ty)
        return getattr(self.b, builder)(args[0], ty, signed)

    def lower_cmpi(self, op: ir.Operation) -> Any:
        self.check_attrs(op, ("predicate",))
        code = ir.IntegerAttr(op.attributes["predicate"]).value
        a, b = (self.v(o) for o in op.operands)
        return getattr(self.b, f"create_icmp{_ICMP[code]}")(a, b)

    def lower_cmpf(self, op: ir.Operation) -> Any:
        self.check_attrs(op, ("predicate",))
        code = ir.IntegerAttr(op.attributes["predicate"]).value
        if code not in _FCMP:
            raise self.fail(op, f"'arith.cmpf' predicate {code} has no lowering to TritonGPU")
        a, b = (self.v(o) for o in op.operands)
        return getattr(self.b, f"create_fcmp{_FCMP[code]}")(a, b)

    def scalar(self, value: ir.Attribute, t: ir.Type, op: Any) -> Any:
        """A scalar ``arith.constant`` of MLIR type ``t`` holding ``value``."""
        if cast(t, ir.IntegerType) is not None:
            return self.scalar_of(ir.IntegerAttr(value).value, t, op)
        return self.scalar_of(ir.FloatAttr(value).value, t, op)

    def scalar_of(self, v: float, t: ir.Type, op: Any) -> Any:
        """A scalar ``arith.constant`` of MLIR type ``t`` holding the number ``v``."""
        bits = self.bits(t, op)
        if cast(t, ir.IntegerType) is not None:
            v = int(v)
            if bits == 1:
                return self.b.get_int1(bool(v & 1))
            return getattr(self.b, f"get_int{bits}")(_signed(v, bits))
        v = float(v)
        getter = {"get_half_ty": "get_fp16", "get_bf16_ty": "get_bf16"}.get(_float_getter(t) or "")
        getter = getter or {32: "get_fp32", 64: "get_fp64"}.get(bits)
        if getter is None:
            # f8 constants: build in f32 and truncate (exact for representable values).
            return self.b.create_fp_trunc(self.b.get_fp32(v), self.elem(t, op))
        return getattr(self.b, getter)(v)

    def lower_constant(self, op: ir.Operation) -> Any:
        self.check_attrs(op, ("value",))
        value = op.attributes["value"]
        t = op.results[0].type
        dense = cast(value, ir.DenseElementsAttr)
        if dense is None:
            return self.scalar(value, t, op)
        dense = ir.DenseElementsAttr(value)
        rt = ir.RankedTensorType(t)
        ty = self.must_type(t, op)
        if dense.is_splat:
            splat = self.scalar(dense.get_splat_value(), rt.element_type, op)
            return self.b.create_splat(ty, splat)
        return self.non_splat_constant(op, dense, rt, ty)

    def non_splat_constant(self, op: Any, dense: Any, rt: Any, ty: Any) -> Any:
        """A non-splat tensor constant: a splat of its first value, then one
        ``select`` per other run of equal values (in row-major order) on the
        element's row-major index."""
        shape = list(rt.shape)
        if len(shape) not in (1, 2):
            raise self.fail(op, "only rank-1 and rank-2 tensor constants lower to TritonGPU")
        elem = rt.element_type
        values = numpy.asarray(dense)  # the bindings' buffer protocol
        if values.dtype == object:
            raise self.fail(
                op,
                f"a non-splat constant of {elem} has no lowering: its elements cannot be "
                "read through the MLIR bindings (a splat, or another element type, can)",
            )
        flat = values.reshape(-1).tolist()
        raw = [repr(x) for x in flat]
        runs: list[tuple[int, int]] = []  # [start, end) of each run after the first
        start = 0
        for i in range(1, len(raw) + 1):
            if i == len(raw) or raw[i] != raw[start]:
                if start:
                    runs.append((start, i))
                start = i
        if len(runs) > MAX_CONSTANT_RUNS:
            raise self.fail(
                op,
                f"a non-splat constant lowers as one select per run of equal values; this "
                f"one has {len(runs) + 1} runs (at most {MAX_CONSTANT_RUNS + 1})",
            )
        enc = self.convert_encoding(rt.encoding, op, self.bits(elem, op))
        index = self.linear_index(shape, enc)
        result = self.b.create_splat(ty, self.scalar_of(flat[0], elem, op))
        index_ty = self.tensor(shape, self.i32(), enc)
        for lo, hi in runs:
            lo_t = self.b.create_splat(index_ty, self.const(lo))
            hi_t = self.b.create_splat(index_ty, self.const(hi))
            inside = self.b.create_and(
                self.b.create_icmpSGE(index, lo_t), self.b.create_icmpSLT(index, hi_t)
            )
            value = self.b.create_splat(ty, self.scalar_of(flat[lo], elem, op))
            result = self.b.create_select(inside, value, result)
        return result

    def linear_index(self, shape: Sequence[int], layout: Any) -> Any:
        """The row-major index of each element of a ``shape`` tensor in ``layout``."""
        zero = [self.const(0)] * len(shape)
        parts = self._index_vectors(shape, layout, zero)
        if len(shape) == 1:
            return parts[0]
        full = self.tensor(shape, self.i32(), layout)
        rows = self.b.create_broadcast(parts[0], full)
        cols = self.b.create_broadcast(parts[1], full)
        width = self.b.create_splat(full, self.const(shape[1]))
        return self.b.create_add(self.b.create_mul(rows, width), cols)

    # -- scf --

    def _region_block(self, region: ir.Region, op: Any) -> ir.Block:
        blocks = list(region.blocks)
        if len(blocks) != 1:
            raise self.fail(op, f"'{op.name}' regions with {len(blocks)} blocks have no lowering")
        return blocks[0]

    def _body(self, old: ir.Block, new: Any, args: Sequence[Any]) -> None:
        """Lower ``old``'s ops into ``new`` (block arguments mapped to ``args``)."""
        for a, b in zip(old.arguments, args, strict=True):
            self.values[a] = b
        saved = self.b.get_insertion_point()
        self.b.set_insertion_point_to_start(new)
        self.lower_block(old)
        self.b.restore_insertion_point(saved)

    def carries(self, op: ir.Operation) -> bool:
        """Whether ``op`` threads the TMA copy count through (copies nested in it)."""
        return self.tma_fn is not None and op in self.tma_fn.carried

    def lower_for(self, op: ir.Operation) -> list[Any]:
        self.check_attrs(op, ())
        lb, ub, step, *inits = (self.v(o) for o in op.operands)
        carry = self.carries(op)
        if carry:  # the count is the loop's last iteration argument
            inits.append(self.tma_count)
        for_op = self.b.create_for_op(lb, ub, step, list(inits))
        body = for_op.get_body(0)
        iv = for_op.get_induction_var()
        n = len(op.results)
        args = [iv] + [body.arg(i + 1) for i in range(n)]
        if carry:
            self.tma_count = body.arg(n + 1)
            self._body(self._region_block(op.regions[0], op), body, args)
            self.tma_count = for_op.get_result(n)
            return [for_op.get_result(i) for i in range(n)]
        per_iter = None if self.tma_fn is None else self.tma_fn.loops.get(op)
        if per_iter is None:
            self._body(self._region_block(op.regions[0], op), body, args)
            return [for_op.get_result(i) for i in range(n)]
        # TMA copies: the count at an iteration's start is the count before the
        # loop plus the iterations run times the copies of one (tma_plan.py).
        before = self.tma_count
        saved = self.b.get_insertion_point()
        self.b.set_insertion_point_to_start(body)
        done = self.b.create_sdiv(self.b.create_sub(iv, lb), step)
        self.tma_count = self.b.create_add(before, self.b.create_mul(done, self.const(per_iter)))
        old = self._region_block(op.regions[0], op)
        for a, b in zip(old.arguments, args, strict=True):
            self.values[a] = b
        self.lower_block(old)
        self.b.restore_insertion_point(saved)
        trips = self.b.create_sdiv(
            self.b.create_add(self.b.create_sub(ub, lb), self.b.create_sub(step, self.const(1))),
            step,
        )
        trips = self.b.create_maxsi(trips, self.const(0))
        self.tma_count = self.b.create_add(before, self.b.create_mul(trips, self.const(per_iter)))
        return [for_op.get_result(i) for i in range(n)]

    def lower_if(self, op: ir.Operation) -> list[Any]:
        self.check_attrs(op, ())
        types = [self.must_type(r.type, op) for r in op.results]
        has_else = len(list(op.regions[1].blocks)) > 0
        carry = self.carries(op)
        if carry:  # the count is the last result; an else yields it unchanged
            types.append(self.i32())
        if_op = self.b.create_if_op(types, self.v(op.operands[0]), has_else or carry)
        before = self.tma_count
        self._body(self._region_block(op.regions[0], op), if_op.get_then_block(), [])
        if has_else:
            self.tma_count = before
            self._body(self._region_block(op.regions[1], op), if_op.get_else_block(), [])
        elif carry:
            saved = self.b.get_insertion_point()
            self.b.set_insertion_point_to_start(if_op.get_else_block())
            self.b.create_yield_op([before])
            self.b.restore_insertion_point(saved)
        n = len(op.results)
        if carry:
            self.tma_count = if_op.get_result(n)
        return [if_op.get_result(i) for i in range(n)]

    def lower_while(self, op: ir.Operation) -> list[Any]:
        self.check_attrs(op, ())
        inits = [self.v(o) for o in op.operands]
        before_old = self._region_block(op.regions[0], op)
        after_old = self._region_block(op.regions[1], op)
        before_types = [self.must_type(a.type, op) for a in before_old.arguments]
        after_types = [self.must_type(a.type, op) for a in after_old.arguments]
        result_types = [self.must_type(r.type, op) for r in op.results]
        carry = self.carries(op)
        if carry:  # the count is the last argument of both regions and the last result
            inits.append(self.tma_count)
            for types in (before_types, after_types, result_types):
                types.append(self.i32())
        nb, na = len(before_old.arguments), len(after_old.arguments)
        while_op = self.b.create_while_op(result_types, inits)
        # Creating a block moves the builder into it: come back after the loop.
        saved = self.b.get_insertion_point()
        before = self.b.create_block_with_parent(while_op.get_before(), before_types)
        if carry:
            self.tma_count = before.arg(nb)
        self._body(before_old, before, [before.arg(i) for i in range(nb)])
        after = self.b.create_block_with_parent(while_op.get_after(), after_types)
        if carry:
            self.tma_count = after.arg(na)
        self._body(after_old, after, [after.arg(i) for i in range(na)])
        self.b.restore_insertion_point(saved)
        if carry:
            self.tma_count = while_op.get_result(len(op.results))
        return [while_op.get_result(i) for i in range(len(op.results))]

    def lower_yield(self, op: ir.Operation) -> None:
        args = [self.v(o) for o in op.operands]
        if self.carries(op.parent):
            args.append(self.tma_count)
        block = self.b.get_insertion_block()
        if not args and block.has_terminator():
            return  # the builder already ended the block with an empty yield
        self.b.create_yield_op(args)

    def lower_condition(self, op: ir.Operation) -> None:
        cond, *args = (self.v(o) for o in op.operands)
        if self.carries(op.parent):
            args.append(self.tma_count)
        self.b.create_condition_op(cond, list(args))

    # -- tile ops --

    def lower_return(self, op: Any) -> None:
        if self.tma_fn is not None:  # no TMA copy may outlive its barriers
            self.wait_copies(self.tma_fn.windows.get(op.operation, 0), 0)
        self.b.ret([self.v(o) for o in op.operation.operands])

    def lower_call(self, op: Any) -> list[Any]:
        o = op.operation
        callee = ir.FlatSymbolRefAttr(o.attributes["callee"]).value
        if callee not in self.functions:
            raise self.fail(op, f"call to '{callee}', which is not a function of this module")
        call = self.b.call(self.functions[callee], [self.v(x) for x in o.operands])
        return [call.get_result(i) for i in range(len(o.results))]

    def lower_program_id(self, op: Any) -> Any:
        return self.b.create_get_program_id(ir.IntegerAttr(op.operation.attributes["axis"]).value)

    def lower_warp_id(self, op: Any) -> None:
        raise self.fail(
            op,
            "'tile.warp_id' has no TritonGPU equivalent; it is only lowered as part of "
            f"a warp predicate on a copy marked {WARP_PREDICATED}",
        )

    def lower_make_desc(self, op: Any) -> Any:
        info = _Desc(
            self.v(op.base),
            [self.v(x) for x in op.shape],
            [self.v(x) for x in op.strides],
            [_const_int(x) == 1 for x in op.strides],
        )
        if self.tma is not None:
            if self.tma_fn is not None and op.operation in self.tma_fn.remakes:
                # Made again in a loop: its tensormap is rewritten in place, so
                # no copy of the previous value may be in flight (tma_plan.py).
                self.wait_copies(self.tma_fn.remakes[op.operation], 0)
            info.tma = self.tma_descriptor(op, info)
        if not self.target.tdm:
            self.descs[op.result] = info
            return None
        if _const_int(op.strides[-1]) != 1:
            raise self.fail(
                op,
                "TDM copies need a unit innermost stride: the last stride must be the constant 1",
            )
        self.descs[op.result] = info
        return self.b.create_make_tensor_descriptor(
            self.must_type(op.result.type, op),
            info.base,
            info.shape,
            info.strides,
            self.tt.ir.PADDING_OPTION.PAD_ZERO,
        )

    def lower_update_desc(self, op: Any) -> Any:
        src = self.descs.get(op.desc)
        offsets = [self.v(x) for x in op.offsets]
        bounds = [self.v(x) for x in op.bounds]
        pred = None if op.pred is None else self.v(op.pred)
        info: _Desc | None = None
        if src is not None:
            origin = offsets
            if src.origin is not None:
                origin = [self.b.create_add(a, b) for a, b in zip(src.origin, offsets, strict=True)]
            info = _Desc(
                src.base,
                src.shape,
                src.strides,
                src.unit,
                origin,
                bounds or src.bounds,
                pred if pred is not None else src.pred,
                src.tma,
            )
        if not self.target.tdm:
            if info is None:
                raise self.fail(op, self._untracked())
            self.descs[op.result] = info
            return None
        desc = self.v(op.desc)
        if bounds:
            if src is None:
                raise self.fail(
                    op,
                    "bounds on a descriptor carried through block arguments are not "
                    "supported (its origin is unknown here)",
                )
            rel = bounds
            if src.origin is not None:
                zero = self.const(0)
                rel = [
                    self.b.create_maxsi(self.b.create_sub(b, o), zero)
                    for b, o in zip(bounds, src.origin, strict=True)
                ]
            desc = self._update(desc, set_bounds=rel)
        new = self._update(
            desc,
            add_offsets=offsets,
            pred=None if pred is None else self.b.create_int_cast(pred, self.i32(), False),
            clamp=True,
        )
        if info is not None:
            self.descs[op.result] = info
        return new

    def _update(self, desc, add_offsets=(), set_bounds=(), pred=None, clamp=False) -> Any:
        return self.b.create_update_tensor_descriptor(
            desc,
            list(add_offsets),
            list(set_bounds),
            self.tt.ir.value() if pred is None else pred,
            clamp,
        )

    def _untracked(self) -> str:
        return (
            f"on {self.target.name} a copy's descriptor must come from "
            "tile.make_tensor_descriptor / tile.update_tensor_descriptor in the same "
            "function, not through block arguments"
        )

    def lower_local_alloc(self, op: Any) -> Any:
        return self.b.create_local_alloc(self.must_type(op.result.type, op))

    def lower_memdesc_index(self, op: Any) -> Any:
        return self.b.create_memdesc_index(
            self.must_type(op.result.type, op), self.v(op.src), self.v(op.index)
        )

    def lower_memdesc_trans(self, op: Any) -> Any:
        """``ttg.memdesc_trans``: Triton infers the view's layout (an NVMMA
        layout's ``transposed`` flag flips, a swizzled or padded one's order
        is renamed), the same placement as the tile layout's renamed order."""
        return self.b.create_memdesc_trans(self.v(op.src), op.permutation())

    def lower_local_load(self, op: Any) -> Any:
        if op.operation in self.wgmma_loads:
            return self.v(op.src)  # the buffer itself: wgmma reads shared memory
        return self.b.create_local_load(self.must_type(op.result.type, op), self.v(op.src))

    def user_pred(self, op: Any) -> ir.Value | None:
        """The copy's own pred (tile value), after stripping a warp predicate."""
        if op.operation in self.stripped:
            return self.stripped[op.operation]
        return op.pred

    def _cache(self, op: Any) -> Any:
        mod = cache_modifier(op)
        return getattr(self.tt.ir.CACHE_MODIFIER, CACHE_MODIFIERS[mod] if mod else "NONE")

    def lower_copy(self, op: Any) -> None:
        if op.barrier is not None:
            raise self.fail(op, "copies that arrive on an mbarrier have no lowering yet")
        pred = self.user_pred(op)
        if self.tma is not None:
            self.tma_copy(op, pred)
            return
        if not self.target.tdm:
            self.copy_without_tdm(op, [(op.desc, op.dest)], pred)
            return
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
                p = self.b.create_and(info.pred, p)
            zero = self.const(0)
            rank = len(op.desc.type.shape)
            desc = self._update(
                desc,
                add_offsets=[zero] * rank,
                pred=self.b.create_int_cast(p, self.i32(), False),
            )
        hint = op.warp_used_hint
        self.b.create_async_tdm_copy_global_to_local(
            desc,
            self.v(op.dest),
            self.tt.ir.value(),
            self._cache(op),
            None if hint is None else _signed(hint, 32),
        )

    def lower_fused_copy(self, op: Any) -> None:
        if op.barrier is not None:
            raise self.fail(op, "copies that arrive on an mbarrier have no lowering yet")
        if not self.target.tdm:
            self.copy_without_tdm(op, list(zip(op.descs, op.dests, strict=True)), None)
            return
        self.b.create_async_tdm_fused_copy_global_to_local(
            [self.v(d) for d in op.descs],
            [self.v(d) for d in op.dests],
            [_signed(h, 32) for h in op.warp_used_hints],
            self._cache(op),
        )

    def lower_wait(self, op: Any) -> None:
        num = ir.IntegerAttr(op.operation.attributes["num"]).value
        if self.tma_fn is not None:
            self.wait_copies(self.tma_fn.windows[op.operation], num)
        elif self.target.tdm:
            self.b.create_async_tdm_wait(num)
        elif self.direct_copies:
            self.b.create_async_wait_group(num)
        # gfx942 (and gfx950 register copies): copies are complete when issued.

    # -- cuda:90 TMA copies with barriers (see lowering/tma_plan.py) --

    def plan_tma(self, required: bool = True) -> None:
        """``lds-copies=tma`` (``required``): every copy becomes a TMA copy, or
        the first that cannot is an error (nothing falls back silently).
        ``lds-copies=auto`` with the facts TMA needs (:func:`_tma_facts_ok`):
        TMA copies when every copy can take them, else none (``cp.async`` or
        register copies, as without the facts)."""
        try:
            plan = plan_tma(self.module)
            for copy in plan.copies:
                self.tma_refusal(copy.opview)
        except TmaRefusal as e:
            if not required:
                return
            raise self.fail(e.op, f"lds-copies=tma: {e}") from None
        if required or plan.copies:
            self.tma = plan

    def tma_refusal(self, op: Any) -> None:
        """Raise :class:`TmaRefusal` where ``op`` cannot be a TMA copy."""
        desc = op.desc.type
        root, updates = descriptor_root(op.desc)
        if any(len(u.opview.bounds) for u in updates):
            raise TmaRefusal(
                op.operation, "a descriptor with bounds has no TMA form (TMA bounds by shape)"
            )
        owner = root.owner
        if not isinstance(owner, ir.OpView | ir.Operation) or (
            owner.operation.name != MakeTensorDescriptorOp.OPERATION_NAME
        ):
            raise TmaRefusal(op.operation, self._untracked())
        if _const_int(owner.opview.strides[-1]) != 1:
            raise TmaRefusal(op.operation, "TMA needs a unit innermost stride (the constant 1)")
        if len(desc.shape) != 2:
            rank = len(desc.shape)
            raise TmaRefusal(op.operation, f"TMA copies here are rank 2, got rank {rank}")
        if str(desc.layout_attr) not in self.wgmma_shared:
            raise TmaRefusal(
                op.operation,
                "TMA writes NVMMA shared layouts, which this lowering gives only to buffers "
                "that wgmma reads",
            )
        inner = int(desc.shape[-1]) * self.bits(desc.element_type, op) // 8
        if inner < 16:
            raise TmaRefusal(op.operation, f"a TMA block row needs 16 bytes or more, got {inner}")

    def barrier_type(self, shape: list[int]) -> Any:
        layout = self.layout(self.tt.layouts.MBarrierLayout())
        return self.b.get_shared_mem_desc_ty(self.i64(), shape, layout, shape)

    def barrier(self, index: Any) -> Any:
        return self.b.create_memdesc_index(self.barrier_type([1]), self.tma_bars, index)

    def init_barriers(self, ring: int) -> None:
        """The function's ring of single-arrival barriers, initialised and fenced
        (the async proxy, TMA, must see the initialisation)."""
        self.tma_bars = self.b.create_local_alloc(self.barrier_type([ring, 1]))
        for i in range(ring):
            self.b.create_mbarrier_init(self.barrier(self.const(i)), 1)
        self.b.create_fence_async_shared(False)
        self.tma_count = self.const(0)

    def tma_copy(self, op: Any, pred: ir.Value | None) -> None:
        """Copy number ``g``: expect its bytes on barrier ``g % R`` and issue the
        TMA copy there; a predicated-off copy arrives without bytes."""
        info = self.descs.get(op.desc)
        if info is None or info.tma is None:
            raise self.fail(op, self._untracked())
        shape = list(op.desc.type.shape)
        nbytes = int(numpy.prod(shape)) * self.bits(op.desc.type.element_type, op) // 8
        preds = [p for p in (info.pred, None if pred is None else self.v(pred)) if p is not None]
        cond = preds[0] if preds else None
        if len(preds) == 2:
            cond = self.b.create_and(*preds)
        true = self.b.get_int1(True)
        g = self.tma_count
        bar = self.barrier(self.b.create_srem(g, self.const(self.tma_fn.ring)))
        self.b.create_mbarrier_expect(bar, nbytes, true if cond is None else cond)
        coords = info.origin or [self.const(0)] * len(shape)
        on = true if cond is None else cond
        self.b.create_async_tma_copy_global_to_local(
            info.tma, list(coords), bar, self.v(op.dest), on, False, None
        )
        if cond is not None:
            self.b.create_mbarrier_arrive(bar, 1, self.b.create_xor(cond, true))
        self.tma_count = self.b.create_add(g, self.const(1))

    def wait_copies(self, window: int, num: int) -> None:
        """Wait for copies ``issued - window .. issued - num - 1`` (those >= 0):
        barrier ``g % R``, phase parity ``(g // R) % 2``."""
        ring = self.const(self.tma_fn.ring)
        for j in range(num, window):
            g = self.b.create_sub(self.tma_count, self.const(j + 1))
            issued = self.b.create_icmpSGE(g, self.const(0))
            g = self.b.create_maxsi(g, self.const(0))
            phase = self.b.create_and(self.b.create_sdiv(g, ring), self.const(1))
            bar = self.barrier(self.b.create_srem(g, ring))
            self.b.create_mbarrier_wait(bar, phase, issued, [])

    def lower_wmma(self, op: Any) -> Any:
        if op.operation in self.wgmma_ops:
            a, b = self.v(op.a), self.v(op.b)
            d = self.b.create_warpgroup_mma(
                a, b, self.v(op.c), self.b.get_int1(True), self.tt.ir.INPUT_PRECISION.IEEE, 0, True
            )
            # Synchronous for now: wait until none is in flight (the buffers
            # are kept alive until then).
            return self.b.create_warpgroup_mma_wait([d, a, b], 0)[0]
        return self.b.create_dot(
            self.v(op.a), self.v(op.b), self.v(op.c), self.tt.ir.INPUT_PRECISION.IEEE, 0
        )

    # -- asynchronous MMA (dialect/async_ops.py) --

    def choose_async_mma(self, mmas: list[Any]) -> None:
        """cuda:90: make each ``tile.async_wmma`` an asynchronous wgmma.

        It reads its row-major buffers, or their transposed views, as they
        lie (no loads to absorb) and shares its accumulator layout's
        ``nvidia_mma`` v3 with the ``tile.wmma`` s of that layout. Where wgmma
        does not fit (``mma=mma_v2``, a buffer stored column-major
        (:func:`wgmma_buffer_refusal`), a layout that ``tile.wmma`` s keep on mma.sync,
        a shape :func:`wgmma_shape` refuses) the MMA is lowered synchronously
        as on the AMD targets; ``mma=wgmma`` makes that an error instead.
        """
        sync_layouts = {
            str(ir.RankedTensorType(op.c.type).encoding)
            for op in collect_ops(self.module, ("tile.wmma",))
        }
        for op in mmas:
            refusal = self.async_wgmma_refusal(op, sync_layouts)
            if refusal is not None:
                if self.mma == "wgmma":
                    raise self.fail(op, f"mma=wgmma: this MMA cannot use wgmma: {refusal}")
                continue
            m, n = ir.RankedTensorType(op.c.type).shape
            warps, instr = wgmma_shape(m, n, op.a.type.shape[1], num_warps_of(op))
            self.wgmma_acc[str(ir.RankedTensorType(op.c.type).encoding)] = (warps, instr)
            self.wgmma_async.add(op.operation)
            for buf in (op.a, op.b):
                self.wgmma_shared.add(str(viewed_block(buf).type.layout_attr))

    def async_wgmma_refusal(self, op: Any, sync_layouts: set[str]) -> str | None:
        """Why a ``tile.async_wmma`` cannot be a wgmma (None: it can)."""
        if self.mma == "mma_v2":
            return "mma=mma_v2 asks for mma.sync"
        key = str(ir.RankedTensorType(op.c.type).encoding)
        if key in sync_layouts and key not in self.wgmma_acc:
            return "tile.wmma ops of its accumulator layout use mma.sync"
        for name, buf in (("A", op.a), ("B", op.b)):
            problem = wgmma_buffer_refusal(buf)
            if problem is not None:
                return f"operand {name}'s {problem}"
        m, n = ir.RankedTensorType(op.c.type).shape
        try:
            shape = wgmma_shape(m, n, op.a.type.shape[1], num_warps_of(op))
        except ValueError as e:
            return str(e)
        if self.wgmma_acc.get(key, shape) != shape:
            return "the MMAs sharing its accumulator layout need different wgmma shapes"
        return None

    def lower_async_wmma(self, op: Any) -> Any:
        a, b, c = self.v(op.a), self.v(op.b), self.v(op.c)
        use_acc = None if op.use_acc is None else self.v(op.use_acc)
        if op.operation in self.wgmma_async:
            # use_acc is wgmma's useC: false multiplies without reading C, so a
            # new accumulation needs no zeroed registers.
            use_c = self.b.get_int1(True) if use_acc is None else use_acc
            return self.b.create_warpgroup_mma(
                a, b, c, use_c, self.tt.ir.INPUT_PRECISION.IEEE, 0, True
            )
        if use_acc is not None:
            # A dot always adds C: select zeros in its place where use_acc is false.
            ct = ir.RankedTensorType(op.c.type)
            layout = self.convert_encoding(ct.encoding, op, 32)
            zeros = self._zeros(ct.shape, ct.element_type, layout, op)
            cond = self.b.create_splat(self.tensor(ct.shape, self.b.get_int1_ty(), layout), use_acc)
            c = self.b.create_select(cond, c, zeros)
        # Synchronous: load both operands in the MMA's register layout, then a dot.
        acc = ir.RankedTensorType(op.c.type).encoding
        operands = []
        for idx, (buf, value) in enumerate(((op.a, a), (op.b, b))):
            t = buf.type
            layout = DotOperandAttr.build(op_idx=idx, parent=acc, k_width=op.k_width())
            elem_bits = self.bits(t.element_type, op)
            enc = self.convert_encoding(layout, op, elem_bits)
            ty = self.tensor(t.shape, self.elem(t.element_type, op), enc)
            operands.append(self.b.create_local_load(ty, value))
        return self.b.create_dot(*operands, c, self.tt.ir.INPUT_PRECISION.IEEE, 0)

    def lower_async_wmma_wait(self, op: Any) -> Any:
        value = self.v(op.value)
        if str(ir.RankedTensorType(op.value.type).encoding) not in self.wgmma_acc:
            return value  # its MMAs were synchronous: nothing is in flight
        num = ir.IntegerAttr(op.operation.attributes["num"]).value
        return self.b.create_warpgroup_mma_wait([value], num)[0]

    def lower_convert_layout(self, op: Any) -> Any:
        src = self.v(op.src)
        ty = self.must_type(op.result.type, op)
        if _same_type(src.get_type(), ty):
            return src
        return self.b.create_convert_layout(ty, src)

    # -- global memory: indices, masks, pointers --

    def _index_vectors(self, shape: Sequence[int], layout: Any, origin: Sequence[Any]) -> list[Any]:
        """Per dim d: ``origin[d] + arange(shape[d])`` expanded to rank (i32)."""
        rank = len(shape)
        out = []
        for d in range(rank):
            enc = layout if rank == 1 else self.tt.layouts.SliceLayout(1 - d, layout)
            vt = self.tensor([shape[d]], self.i32(), enc)
            rng = self.b.create_make_range(vt, 0, int(shape[d]))
            idx = self.b.create_add(self.b.create_splat(vt, origin[d]), rng)
            if rank == 2:
                idx = self.b.create_expand_dims(idx, 1 - d)
            out.append(idx)
        return out

    def _block_access(
        self,
        op: Any,
        shape: Sequence[int],
        layout: Any,
        base: Any,
        extents: Sequence[Any],
        strides: Sequence[Any],
        unit: Sequence[bool],
        origin: Sequence[Any],
    ) -> tuple[Any, Any]:
        """(pointers, in-bounds mask) of a block of a global tensor, in ``layout``.

        Element ``i`` is at ``origin + i``; it is in bounds when that is below
        ``extents``. The arithmetic runs per dim on the thin ``[n, 1]`` /
        ``[1, n]`` index tensors and is broadcast afterwards. Offsets are i64
        for a non-unit stride (tile strides are i64, and Triton's axis
        analysis follows ``extsi`` and ``muli``, so stated divisibility still
        proves alignment); a constant unit stride adds the i32 index
        directly, which keeps the contiguity facts vector accesses need.
        ``unit[d]``: dim ``d``'s stride is the constant 1.
        """
        rank = len(shape)
        if rank not in (1, 2):
            raise self.fail(
                op, f"only rank-1 and rank-2 blocks lower to TritonGPU, got rank {rank}"
            )
        shape = [int(s) for s in shape]
        mask: Any = None
        acc: Any = None
        for d, idx in enumerate(self._index_vectors(shape, layout, origin)):
            thin = idx.get_type()
            ok = self.b.create_icmpSLT(idx, self.b.create_splat(thin, extents[d]))
            ok = self._broadcast(ok, shape, layout, self.b.get_int1_ty())
            mask = ok if mask is None else self.b.create_and(mask, ok)
            if unit[d]:
                term = idx
            else:
                wide = self.b.create_int_cast(idx, self._like(idx, layout, self.i64()), True)
                term = self.b.create_mul(wide, self.b.create_splat(wide.get_type(), strides[d]))
            if acc is None:
                ptrs = self.b.create_splat(self._like(idx, layout, base.get_type()), base)
                acc = self._broadcast(
                    self.b.create_addptr(ptrs, term), shape, layout, base.get_type()
                )
            else:
                elem = self.i32() if unit[d] else self.i64()
                acc = self.b.create_addptr(acc, self._broadcast(term, shape, layout, elem))
        assert acc is not None and mask is not None
        return acc, mask

    def _like(self, tensor: Any, layout: Any, elem: Any) -> Any:
        """A tensor type of ``tensor``'s shape in ``layout``, of ``elem``."""
        return self.tensor(tensor.get_shape(), elem, layout)

    def _broadcast(self, v: Any, shape: Sequence[int], layout: Any, elem: Any) -> Any:
        """``v`` (a thin tensor of ``elem`` in ``layout``) broadcast to ``shape``."""
        if list(v.get_shape()) == list(shape):
            return v
        return self.b.create_broadcast(v, self.tensor(shape, elem, layout))

    # -- copies without TDM --

    def copy_without_tdm(
        self, op: Any, members: list[tuple[ir.Value, ir.Value]], pred: ir.Value | None
    ) -> None:
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
                cond = self.b.create_and(*preds)
            saved = None
            if cond is not None:
                if_op = self.b.create_if_op([], cond, False)
                saved = self.b.get_insertion_point()
                self.b.set_insertion_point_to_start(if_op.get_then_block())
            self._copy_member(op, desc.type, info, self.v(dest))
            if saved is not None:
                self.b.restore_insertion_point(saved)
        if self.direct_copies:
            # One group per copy (a fused copy is one), as TDM waits count copies.
            self.b.create_async_commit_group()

    def _copy_member(self, op, dtype: TensorDescType, info: _Desc, dest) -> None:
        shape = list(dtype.shape)
        elem = dtype.element_type
        layout = self.blocked(shape, self.bits(elem, op))
        origin = info.origin or [self.const(0)] * len(shape)
        extents = info.bounds or info.shape
        addr, mask = self._block_access(
            op, shape, layout, info.base, extents, info.strides, info.unit, origin
        )
        zero = self._zeros(shape, elem, layout, op)
        if self.direct_copies:
            policy = self._no_cache_policy()
            self.b.create_async_copy_global_to_local(dest, addr, mask, zero, policy, False)
            return
        val = self._masked_load(addr, mask, zero)
        self.b.create_local_store(dest, val)

    def _zeros(self, shape: Sequence[int], elem: ir.Type, layout: Any, op: Any) -> Any:
        """A splat of zeros of a ``shape`` tensor of ``elem`` in ``layout``."""
        ty = self.tensor(shape, self.elem(elem, op), layout)
        if cast(elem, ir.IntegerType) is not None:
            zero = self.scalar(ir.IntegerAttr.get(elem, 0), elem, op)
        else:
            zero = self.scalar(ir.FloatAttr.get(elem, 0.0), elem, op)
        return self.b.create_splat(ty, zero)

    def _no_cache_policy(self) -> Any:
        return self.b.get_cache_policy("none", "evict_normal")

    def _masked_load(self, ptrs: Any, mask: Any, other: Any) -> Any:
        """``tt.load`` of ``ptrs`` under ``mask``, ``other`` where it is false."""
        policy = self.b.get_cache_policy("none", "evict_normal")
        return self.b.create_masked_load(ptrs, mask, other, policy, False)

    # -- load_block / store_block --

    def lower_load_block(self, op: Any) -> Any:
        rt = ir.RankedTensorType(op.result.type)
        shape = list(rt.shape)
        elem = rt.element_type
        want = self.must_type(rt, op)
        layout = self._access_layout(op, rt, shape, elem)
        ptrs, mask = self._op_block_access(op, shape, layout)
        val = self._masked_load(ptrs, mask, self._zeros(shape, elem, layout, op))
        if not _same_type(val.get_type(), want):
            val = self.b.create_convert_layout(want, val)
        return val

    def lower_store_block(self, op: Any) -> None:
        rt = ir.RankedTensorType(op.value.type)
        shape = list(rt.shape)
        elem = rt.element_type
        layout = self._access_layout(op, rt, shape, elem)
        value = self.v(op.value)
        vt = self.tensor(shape, self.elem(elem, op), layout)
        if not _same_type(value.get_type(), vt):
            value = self.b.create_convert_layout(vt, value)
        ptrs, mask = self._op_block_access(op, shape, layout)
        self.b.create_masked_store(
            ptrs, value, mask, self.b.get_cache_policy("none", "evict_normal")
        )

    def _op_block_access(self, op: Any, shape: Sequence[int], layout: Any):
        """:meth:`_block_access` of a ``tile.load_block`` / ``tile.store_block``."""
        return self._block_access(
            op,
            shape,
            layout,
            self.v(op.base),
            [self.v(x) for x in op.shape],
            [self.v(x) for x in op.strides],
            [_const_int(x) == 1 for x in op.strides],
            [self.v(x) for x in op.offsets],
        )

    def _access_layout(self, op, rt, shape, elem) -> Any:
        """The value's own layout if blocked, else a coalesced blocked layout.

        Except 32-bit values in an NVIDIA MMA accumulator layout (stream-K's
        fp32 partial tiles): each thread holds pairs of adjacent columns, so
        a quad of lanes writes or reads whole 32-byte sectors in that layout;
        a blocked layout would add a shared-memory round trip (its scratch
        as large as the tile, which costs occupancy) for no fewer sectors.
        """
        if isinstance(rt.encoding, BlockedAttr):
            return self.convert_encoding(rt.encoding, op)
        bits = self.bits(elem, op)
        if self.target.nvidia and isinstance(rt.encoding, WmmaAttr) and bits == 32:
            return self.convert_encoding(rt.encoding, op)
        return self.blocked(shape, bits)


# ---- helpers over IR -----------------------------------------------------------------


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


def _user(use: Any) -> ir.Operation:
    """The operation of an operand use."""
    owner = use.owner
    return owner.operation if hasattr(owner, "operation") else owner


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
    "tile.memdesc_trans": _Lowering.lower_memdesc_trans,
    "tile.local_load": _Lowering.lower_local_load,
    "tile.async_tdm_copy_global_to_local": _Lowering.lower_copy,
    "tile.async_tdm_fused_copy_global_to_local": _Lowering.lower_fused_copy,
    "tile.async_tdm_wait": _Lowering.lower_wait,
    "tile.wmma": _Lowering.lower_wmma,
    "tile.convert_layout": _Lowering.lower_convert_layout,
    "tile.load_block": _Lowering.lower_load_block,
    "tile.store_block": _Lowering.lower_store_block,
    AsyncWmmaOp.OPERATION_NAME: _Lowering.lower_async_wmma,
    AsyncWmmaWaitOp.OPERATION_NAME: _Lowering.lower_async_wmma_wait,
}
_HANDLERS.update(SYNC_HANDLERS)  # tile.num_programs, tile.atomic_rmw, tile.atomic_add_block
# Barriers, TDM stores, tile.local_store; it wraps the copy and wait handlers
# above (barrier-tracked copies, cuda:90 store waits) and calls them otherwise.
_HANDLERS.update(BARRIER_HANDLERS)
# tile.warp_specialize and its partitions' terminators.
_HANDLERS.update(WARP_SPECIALIZE_HANDLERS)


_KEPT: dict[str, Callable[[_Lowering, ir.Operation], Any]] = {
    "arith.constant": _Lowering.lower_constant,
    "arith.cmpi": _Lowering.lower_cmpi,
    "arith.cmpf": _Lowering.lower_cmpf,
    "scf.for": _Lowering.lower_for,
    "scf.if": _Lowering.lower_if,
    "scf.while": _Lowering.lower_while,
    "scf.yield": _Lowering.lower_yield,
    "scf.condition": _Lowering.lower_condition,
}


@dataclass(frozen=True)
class ConvertTileToTritonGPUPass(TilePass):
    """Hand a tile module to Triton: TritonGPU IR (tt/ttg/amdg ops) for one target.

    The last stage of a pipeline, and not a pass over our IR: the result is a
    Triton module, built op by op with Triton's builder (see the module
    docstring). :func:`gemm_opt.lowering.compile.split_hand_off` takes it off
    the end of a pipeline and :func:`gemm_opt.lowering.compile.hand_off` runs
    it; this class carries its name, options and documentation. Tile ops map
    one to a few; ``arith``/``math``/``scf`` ops are rebuilt as they are,
    with converted types. Each new op carries the location of the tile op it
    comes from.

    On gfx1250 copies keep their ``warp_used_hint`` (fused copies their
    ``warp_used_hints``); on gfx950, gfx942 and cuda:90, which have no TDM,
    copies become masked loads of the block (direct to shared memory on
    gfx950 and, as ``cp.async``, on cuda:90; with ``lds-copies=tma`` on
    cuda:90, barrier-tracked TMA copies) and the hint is dropped.
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

    After (``target=gfx1250``, Triton's printing, types abbreviated):

    ```mlir
    %p32 = arith.extui %p : i1 to i32
    %d1 = amdg.update_tensor_descriptor %d add_offsets = [%off_m, %k] pred = %p32
          clamp_bounds : !tt.tensordesc<128x64xf16, #shared>
    %t = amdg.async_tdm_copy_global_to_local %d1 into %buf warp_used_hint = 15 : ...
    %w = amdg.async_tdm_wait {num = 1 : i32}
    ```

    An MMA of two shared buffers, before:

    ```mlir
    %at = "tile.local_load"(%ac) : (!ba) -> tensor<128x64xf16, #opa>
    %bt = "tile.local_load"(%bc) : (!bb) -> tensor<64x128xf16, #opb>
    %d = "tile.wmma"(%at, %bt, %acc) : (..., !acc) -> !acc
    ```

    After (``target=cuda:90``, 8 warps; ``#mma`` is ``nvidia_mma`` v3 with
    ``warpsPerCTA = [8, 1]``, ``instrShape = [16, 128, 16]``, ``#shared``
    the 128-byte ``nvmma_shared``):

    ```mlir
    %d = ttng.warp_group_dot %ac, %bc, %acc, %true {isAsync = true}
        : !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
        * !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> tensor<128x128xf32, #mma>
    %r:3 = ttng.warp_group_dot_wait %d, %ac, %bc {pendings = 0 : i32} : ...
    ```
    """

    name: ClassVar[str] = "convert-tile-to-triton-gpu"
    target: str = ""
    """gfx1250, gfx950, gfx942 or cuda:90; empty: the module's ``tile.target``
    (a target given here overrides it; the module's attribute is not read)."""
    lds_copies: str = "auto"
    """gfx950 and cuda:90 copies: ``direct`` to shared memory, through
    ``registers``, ``auto`` (on cuda:90 TMA when the function states 16-byte
    aligned outer strides and every copy can be one; else direct when it
    states the alignment that needs; else registers), or on cuda:90 ``tma``
    (barrier-tracked TMA copies; outer strides must be 16-byte aligned, and
    a copy TMA cannot take is an error)."""
    mma: str = "auto"
    """cuda:90 MMAs: ``wgmma`` (an error where an MMA cannot take it),
    ``mma_v2`` (mma.sync), or ``auto`` (wgmma where every MMA of an
    accumulator layout can take it, else mma.sync); ignored elsewhere."""

    def run(self, module: ir.Operation) -> None:
        self.fail(
            module,
            f"'{self.name}' hands the module to Triton and produces no IR of ours: it must "
            "end the pipeline, and run through gemm_opt.lowering.compile.hand_off",
        )


def check_hand_off(
    module: ir.Operation, target: str, lds_copies: str, mma: str = "auto"
) -> tuple[Target, int]:
    """The checks made before anything reaches Triton; raises :class:`LoweringFailure`."""
    if not target and TARGET in module.attributes:
        target = ir.StringAttr(module.attributes[TARGET]).value
    if not target:
        raise LoweringFailure(
            module, f"needs a target ({', '.join(TARGETS)}): pass target=... or set {TARGET}"
        )
    if target not in TARGETS:
        raise LoweringFailure(module, f"unknown target '{target}' (known: {', '.join(TARGETS)})")
    problem = verify_for_target(module, target)
    if problem is not None:  # the tile verifier's rules for this target, at the tile op
        raise LoweringFailure(problem, problem.message)
    if NUM_WARPS not in module.attributes:
        raise LoweringFailure(module, f"needs '{NUM_WARPS}' on the module")
    if lds_copies not in LDS_COPIES:
        raise LoweringFailure(
            module, f"lds-copies must be one of {', '.join(LDS_COPIES)}, got '{lds_copies}'"
        )
    if mma not in MMA_KINDS:
        raise LoweringFailure(module, f"mma must be one of {', '.join(MMA_KINDS)}, got '{mma}'")
    if lds_copies == "tma" and not TARGETS[target].nvidia:
        raise LoweringFailure(module, f"lds-copies=tma needs cuda:90 (TMA), not {target}")
    return TARGETS[target], ir.IntegerAttr(module.attributes[NUM_WARPS]).value


def convert(
    module: ir.Operation,
    triton: Any,
    target: str = "",
    lds_copies: str = "auto",
    filename: str = "-",
    on_op: Callable[[ir.Operation], None] | None = None,
    mma: str = "auto",
) -> tuple[Any, dict[str, list[HostTensorMap]]]:
    """Build the Triton module of a tile module (run it in a child process),
    and say for each function which descriptors the host encodes
    (:mod:`gemm_opt.lowering.host_tensormaps`), in parameter order.

    Args:
        module: the tile module (after the tile passes); only read.
        triton: the Triton handle (:func:`gemm_opt.lowering.triton_bridge.triton_ir`).
        target, lds_copies, mma: as the options of :class:`ConvertTileToTritonGPUPass`.
        filename: the file named in Triton's locations where the tile module's
            own say ``-`` (parsed from a string).
        on_op: called with each tile op before anything is built for it.

    Raises:
        LoweringFailure: at the tile op that cannot be lowered.
    """
    info, num_warps = check_hand_off(module, target, lds_copies, mma)
    lowering = _Lowering(
        module, info, num_warps, triton, filename, on_op, mma=mma, lds_copies=lds_copies
    )
    if info.direct_to_lds and lds_copies != "registers":
        lowering.direct_copies = lds_copies == "direct" or _direct_copies_ok(
            module, inner_only=info.nvidia
        )
    return lowering.run(), lowering.host_tensormaps


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


def _tma_facts_ok(module: ir.Operation) -> bool:
    """Whether the module states what a TMA descriptor needs of every
    descriptor: 16-byte aligned outer strides (constants, or arguments whose
    ``tile.divisibility`` times the element size is a multiple of 16 bytes)
    and a constant unit inner stride. The base is a pointer argument, 16-byte
    aligned by the lowering's own contract; the shapes need no fact (TMA
    bounds by shape, with zero fill)."""
    for view in collect_ops(module, (MakeTensorDescriptorOp.OPERATION_NAME,)):
        strides = list(view.strides)
        elem_bytes = (element_bits(view.result.type.element_type) or 0) // 8
        if _const_int(strides[-1]) != 1 or not elem_bytes:
            return False
        for v in strides[:-1]:
            c = _const_int(v)
            if (c if c is not None else _arg_divisibility(v)) * elem_bytes % 16:
                return False
    return True


def _divisible(value: ir.Value) -> bool:
    c = _const_int(value)
    if c is not None:
        return c % 16 == 0
    return _arg_divisibility(value) % 16 == 0


def _arg_divisibility(value: ir.Value) -> int:
    """The divisibility a function argument states (``tile.divisibility`` or
    ``tt.divisibility``); 1 for anything else."""
    owner = value.owner
    if not isinstance(owner, ir.Block):
        return 1
    fn = owner.owner
    fn = fn.operation if hasattr(fn, "operation") else fn
    if fn.name != "func.func" or "arg_attrs" not in fn.attributes:
        return 1
    idx = ir.BlockArgument(value).arg_number
    attrs = ir.DictAttr(ir.ArrayAttr(fn.attributes["arg_attrs"])[idx])
    stated = [ir.IntegerAttr(attrs[name]).value for name in DIVISIBILITY_ATTRS if name in attrs]
    stated = [d for d in stated if d > 0]
    return math.lcm(*stated) if stated else 1  # every stated fact holds


def _same_type(a: Any, b: Any) -> bool:
    """Whether two Triton types are the same (types are uniqued; pybind
    compares the wrappers, so compare what they denote)."""
    return a == b or str(a) == str(b)


def _signed(value: int, bits: int) -> int:
    """``value`` as a signed ``bits``-bit integer (what Triton's int builders take)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _loc_filename(loc: ir.Location) -> str:
    """The file of a file location ("" for other kinds)."""
    try:
        return str(loc.filename)
    except (AttributeError, ValueError, RuntimeError):
        return ""


__all__ = [
    "MMA_KINDS",
    "TARGETS",
    "ConvertTileToTritonGPUPass",
    "LoweringFailure",
    "Target",
    "check_hand_off",
    "convert",
    "nvmma_swizzle",
    "shared_layout",
    "wgmma_shape",
    "wmma_warp_bases",
]
