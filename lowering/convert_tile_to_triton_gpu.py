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
Triton's C++ can abort the process, :func:`convert` only ever runs outside
the caller's process: in a long-lived worker (:mod:`gemm_opt.lowering.isolation`)
or a child forked for one call (:func:`gemm_opt.lowering.triton_bridge.run_isolated`),
each reporting the tile op it is building, so that a crash is still a located
error.

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
  accumulator layout in one place, :class:`gemm_opt.lowering.sm90_mma.WgmmaChoice`:

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
  copy can be one; see :func:`tma_facts_ok`): every copy becomes
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
anchor and free mask. The lowering consumes that predicate as it is and keeps only
the user's part, because Triton's lowering of the hint predicates the warps itself
(:mod:`gemm_opt.lowering.warp_predicates` says why the pass stays required). Any
disagreement (a hand-edited contract attribute) is an error at the copy;
nothing is emitted.

How the code is laid out (as Triton's backends are): this module is the driver (the
options, the checks before anything reaches Triton, the functions and the one handler
table); one module per op family holds the handlers (:mod:`~gemm_opt.lowering.convert_copies`,
:mod:`~gemm_opt.lowering.convert_mma`, :mod:`~gemm_opt.lowering.convert_memory`,
:mod:`~gemm_opt.lowering.convert_control_flow`, :mod:`~gemm_opt.lowering.convert_barrier_ops`,
:mod:`~gemm_opt.lowering.convert_sync_ops`, :mod:`~gemm_opt.lowering.convert_warp_specialize`);
each asks the target strategy (:mod:`~gemm_opt.lowering.target_amd`,
:mod:`~gemm_opt.lowering.target_nvidia`) for what depends on the target, through the
interface of :mod:`gemm_opt.lowering.context`. A new target is a row of the target table
(:mod:`gemm_opt.core.targets`) and, for a new MMA family, a strategy in :data:`STRATEGIES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from gemm_opt.core.contract import NUM_WARPS, TARGET
from gemm_opt.core.ext_compat import ir
from gemm_opt.core.pass_base import TilePass
from gemm_opt.core.targets import TARGETS, Mma, StrEnum, Target
from gemm_opt.dialect.async_ops import AsyncWmmaOp
from gemm_opt.dialect.scaled_mma import ScaledWmmaOp
from gemm_opt.dialect.tile import (
    MakeTensorDescriptorOp,
    PtrType,
    verify_for_target,
)
from gemm_opt.lowering import (
    convert_barrier_ops,
    convert_control_flow,
    convert_copies,
    convert_memory,
    convert_mma,
    convert_sync_ops,
    convert_warp_specialize,
)
from gemm_opt.lowering.context import (
    Handler,
    HandOffContext,
    LoweringFailure,
    TargetStrategy,
)
from gemm_opt.lowering.host_tensormaps import HostTensorMap
from gemm_opt.lowering.ir_match import (
    const_int,
    stated_divisibility,
    whole_vectors,
)
from gemm_opt.lowering.layouts import (
    element_bits,
    mma_swizzle,
    nvmma_swizzle,
    padded_layout,
    shared_layout,
    unswizzled_layout,
    wgmma_shape,
    wmma_warp_bases,
)
from gemm_opt.lowering.sm90_mma import MmaOption
from gemm_opt.lowering.target_amd import AmdMfmaStrategy, AmdTdmStrategy
from gemm_opt.lowering.target_nvidia import NvidiaSm90Strategy
from gemm_opt.lowering.warp_predicates import consume_warp_predicates
from gemm_opt.passes.common import COPY_OP, FUSED_OP, collect_ops


class LdsCopies(StrEnum):
    """The ``lds-copies`` option: how targets without TDM fill shared memory."""

    AUTO = "auto"
    DIRECT = "direct"
    REGISTERS = "registers"
    #: cuda:90 only: barrier-tracked TMA copies.
    TMA = "tma"


#: ``lds-copies`` option values (``tma``: cuda:90 only).
LDS_COPIES = tuple(LdsCopies)
#: ``mma`` option values: which NVIDIA MMA a ``tile.wmma`` becomes on cuda:90.
MMA_KINDS = tuple(MmaOption)


def build_handler_table(*families: Mapping[str, Handler]) -> dict[str, Handler]:
    """One table of every op family's handlers; an op with two handlers is an error."""
    table: dict[str, Handler] = {}
    for family in families:
        for name, handler in family.items():
            if name in table:
                raise ValueError(f"'{name}' has two handlers: {table[name]} and {handler}")
            table[name] = handler
    return table


#: Every op the hand-off lowers, by name: exactly one handler each.
HANDLERS: dict[str, Handler] = build_handler_table(
    convert_control_flow.HANDLERS,
    convert_copies.HANDLERS,
    convert_memory.HANDLERS,
    convert_mma.HANDLERS,
    convert_barrier_ops.HANDLERS,
    convert_sync_ops.HANDLERS,
    convert_warp_specialize.HANDLERS,
)

#: Tile ops the hand-off never meets as ops of their own: lowered by an earlier pass
#: (``tile-lower-gemm-schedule``) or as parts of the op that holds them.
CONSUMED_EARLIER: dict[str, str] = {
    "tile.gemm_schedule": "tile-lower-gemm-schedule lowers it to loops and atomics",
    "tile.schedule_yield": "the terminator of tile.gemm_schedule",
    "tile.warp_partition": "lowered by its tile.warp_specialize",
    "tile.warp_partitions_end": "lowered by its tile.warp_specialize",
}


#: The target strategy of each MMA family (a new target with a known family is a row of
#: the target table only).
STRATEGIES: dict[Mma, Callable[..., TargetStrategy]] = {
    Mma.WMMA_V3: lambda direct, mma, tma: AmdTdmStrategy(),
    Mma.MFMA_V4: lambda direct, mma, tma: AmdMfmaStrategy(direct),
    Mma.MFMA_V3: lambda direct, mma, tma: AmdMfmaStrategy(direct),
    Mma.WGMMA: lambda direct, mma, tma: NvidiaSm90Strategy(direct, MmaOption(mma), tma),
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
    lds_copies: LdsCopies = LdsCopies.AUTO
    """gfx950 and cuda:90 copies: ``direct`` to shared memory, through
    ``registers``, ``auto`` (on cuda:90 TMA when the function states 16-byte
    aligned outer strides and every copy can be one; else direct when it
    states the alignment that needs; else registers), or on cuda:90 ``tma``
    (barrier-tracked TMA copies; outer strides must be 16-byte aligned, and
    a copy TMA cannot take is an error)."""
    mma: MmaOption = MmaOption.AUTO
    """cuda:90 MMAs: ``wgmma`` (an error where an MMA cannot take it),
    ``mma_v2`` (mma.sync), or ``auto`` (wgmma where every MMA of an
    accumulator layout can take it, else mma.sync); ignored elsewhere."""

    def run(self, module: ir.Operation) -> None:
        self.fail(
            module,
            f"'{self.name}' hands the module to Triton and produces no IR of ours: it must "
            "end the pipeline, and run through gemm_opt.lowering.compile.hand_off",
        )


# ---- the driver ----------------------------------------------------------------------


def _prescan(ctx: HandOffContext) -> None:
    """Before any type is converted: the MMA forms, the warp predicates, the copy forms."""
    mma_names = ("tile.wmma", AsyncWmmaOp.OPERATION_NAME, ScaledWmmaOp.OPERATION_NAME)
    ops = collect_ops(ctx.module, (COPY_OP, FUSED_OP, *mma_names))
    mmas = [op for op in ops if op.operation.name in mma_names]
    ctx.strategy.prescan_mma(ctx, mmas)
    consume_warp_predicates(ctx, ops)
    ctx.strategy.prescan_copies(ctx)


def _run(ctx: HandOffContext) -> Any:
    # Ops always get their tile op's location; this default only serves
    # attribute and type builders that insist on one.
    with ir.Location.unknown(ctx.module.context):
        _prescan(ctx)
        body = ctx.module.regions[0].blocks[0]
        funcs = [op.operation for op in body.operations]
        for fn in funcs:
            if fn.name != "func.func":
                raise ctx.fail(fn, f"'{fn.name}' at module level has no lowering")
        ctx.at(ctx.module)
        tmod = ctx.b.create_module()
        i32 = ctx.b.get_int32_attr
        tmod.set_attr("ttg.num-ctas", i32(1))
        tmod.set_attr("ttg.num-warps", i32(ctx.num_warps))
        tmod.set_attr("ttg.target", ctx.b.get_string_attr(ctx.target.triton_target))
        tmod.set_attr("ttg.threads-per-warp", i32(ctx.target.warp_size))
        for fn in funcs:
            _declare_func(ctx, tmod, fn)
        for fn in funcs:
            _lower_func(ctx, fn)
        return tmod


def _declare_func(ctx: HandOffContext, tmod: Any, fn: ir.Operation) -> None:
    ctx.at(fn)
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    inputs = [ctx.must_type(t, fn) for t in ftype.inputs]
    results = [ctx.must_type(t, fn) for t in ftype.results]
    name = ir.StringAttr(fn.attributes["sym_name"]).value
    # Host descriptors follow the arguments: each as Triton passes one.
    hosted = ctx.strategy.host_descriptors(ctx, fn)
    desc_args: list[tuple[ir.Operation, int]] = []
    for op, _ in hosted:
        desc_args.append((op.operation, len(inputs)))
        rank = len(op.shape)
        inputs += (
            [ctx.strategy.host_descriptor_type(ctx, op)]
            + [ctx.i32()] * rank
            + [ctx.b.get_int64_ty()] * rank
        )
    ctx.host_tensormaps[name] = [h for _, h in hosted]
    visibility = "public"
    if "sym_visibility" in fn.attributes:
        visibility = ir.StringAttr(fn.attributes["sym_visibility"]).value
    new = ctx.b.get_or_insert_function(
        tmod, name, ctx.b.get_function_ty(inputs, results), visibility, False
    )
    tmod.push_back(new)
    ctx.host_desc_args[name] = desc_args
    old_arg_attrs = (
        list(ir.ArrayAttr(fn.attributes["arg_attrs"])) if "arg_attrs" in fn.attributes else []
    )
    for i, t in enumerate(ftype.inputs):
        # What the hand-off's own checks assume of the argument (ir_match's rule), so
        # Triton proves the same vectors: 16-byte aligned pointers unless stated.
        stated = stated_divisibility(ir.DictAttr(old_arg_attrs[i])) if old_arg_attrs else None
        divisibility = 16 if stated is None and isinstance(t, PtrType) else stated
        if divisibility is not None:
            new.set_arg_attr(i, "tt.divisibility", divisibility)
    ctx.functions[name] = new


def _lower_func(ctx: HandOffContext, fn: ir.Operation) -> None:
    ctx.at(fn)
    new = ctx.functions[ir.StringAttr(fn.attributes["sym_name"]).value]
    blocks = list(fn.regions[0].blocks)
    if len(blocks) != 1:
        raise ctx.fail(fn, "functions with more than one block have no lowering to TritonGPU")
    entry = new.add_entry_block()
    for i, a in enumerate(blocks[0].arguments):
        ctx.values[a] = new.args(i)
    ctx.b.set_insertion_point_to_start(entry)
    ctx.strategy.begin_function(ctx, fn, new)
    ctx.lower_block(blocks[0])


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
    if lds_copies == LdsCopies.TMA and not TARGETS[target].nvidia:
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
    direct, tma = copy_paths(module, info, lds_copies)
    strategy = STRATEGIES[info.mma](direct, mma, tma)
    ctx = HandOffContext(module, info, num_warps, triton, strategy, HANDLERS, filename, on_op)
    return _run(ctx), ctx.host_tensormaps


def copy_paths(module: ir.Operation, target: Target, lds_copies: str) -> tuple[bool, str]:
    """How the hand-off moves ``module``'s copies on a target without TDM: whether
    directly (``cp.async``, direct-to-LDS) rather than through registers, and its
    TMA mode (``tma``, ``auto``: where a copy can be one, or ``none``)."""
    direct = False
    if target.direct_to_lds and lds_copies != LdsCopies.REGISTERS:
        direct = lds_copies == LdsCopies.DIRECT or direct_copies_ok(module, target)
    tma = "none"
    if lds_copies == LdsCopies.TMA:
        tma = "tma"
    elif lds_copies == LdsCopies.AUTO and target.nvidia and tma_facts_ok(module):
        tma = "auto"
    return direct, tma


def copies_in_flight(
    module: ir.Operation, target: Target, lds_copies: str = LdsCopies.AUTO
) -> bool:
    """Whether the hand-off's copies of ``module`` stay in flight once issued (TDM,
    direct or TMA copies; ``auto`` TMA counted as such), rather than load into
    registers and store to shared memory, complete when issued. Read on the copies'
    descriptors and the function's facts, so it may be asked of a module whose
    descriptors are built and whose copies are not yet."""
    direct, tma = copy_paths(module, target, lds_copies)
    return target.tdm or direct or tma != "none"


def direct_copies_ok(module: ir.Operation, target: Target) -> bool:
    """Whether direct-to-LDS copies can be proven to move whole vectors.

    Triton vectorises a direct-to-LDS load only when its mask and offsets are
    provably constant over a vector, and fails to compile it otherwise; that
    takes facts of whole vectors (:func:`~gemm_opt.lowering.ir_match.whole_vectors`:
    constants, or function arguments whose ``tile.divisibility`` times the
    element size is a multiple of the vector) on every descriptor shape and
    outer stride, and a constant unit inner stride, of the vectors ``target``'s
    direct copies move (:attr:`~gemm_opt.core.targets.Target.direct_copy_bytes`:
    16 bytes on AMD; ``cp.async`` moves 4, 8 or 16, and Triton picks the widest
    the facts prove). On NVIDIA only the innermost shape needs the fact: an
    outer bound masks whole rows, which never splits a vector.
    """
    vector, nvidia = target.direct_copy_bytes, target.nvidia
    ok = True
    for view in collect_ops(module, (MakeTensorDescriptorOp.OPERATION_NAME,)):
        # Equivalent mutant: 'or 1'; 1 // 8 is 0 as well.
        elem_bytes = (element_bits(view.result.type.element_type) or 0) // 8
        shape = list(view.shape)[-1:] if nvidia else list(view.shape)
        strides = list(view.strides)
        facts = [whole_vectors(v, elem_bytes, vector) for v in (*shape, *strides[:-1])]
        ok = ok and all(facts) and const_int(strides[-1]) == 1
    return ok


def tma_facts_ok(module: ir.Operation) -> bool:
    """Whether the module states what a TMA descriptor needs of every
    descriptor: 16-byte aligned outer strides (:func:`~gemm_opt.lowering.ir_match.whole_vectors`)
    and a constant unit inner stride. The base is a pointer argument, 16-byte
    aligned by the lowering's own contract; the shapes need no fact (TMA
    bounds by shape, with zero fill)."""
    for view in collect_ops(module, (MakeTensorDescriptorOp.OPERATION_NAME,)):
        strides = list(view.strides)
        # Equivalent mutant: 'or 1'; 1 // 8 is 0 as well.
        elem_bytes = (element_bits(view.result.type.element_type) or 0) // 8
        if const_int(strides[-1]) != 1 or not elem_bytes:
            return False
        if not all(whole_vectors(v, elem_bytes) for v in strides[:-1]):
            return False
    return True


__all__ = [
    "CONSUMED_EARLIER",
    "HANDLERS",
    "LDS_COPIES",
    "MMA_KINDS",
    "STRATEGIES",
    "TARGETS",
    "ConvertTileToTritonGPUPass",
    "LdsCopies",
    "LoweringFailure",
    "MmaOption",
    "Target",
    "build_handler_table",
    "check_hand_off",
    "convert",
    "copies_in_flight",
    "copy_paths",
    "direct_copies_ok",
    "element_bits",
    "mma_swizzle",
    "nvmma_swizzle",
    "padded_layout",
    "shared_layout",
    "unswizzled_layout",
    "wgmma_shape",
    "wmma_warp_bases",
]
