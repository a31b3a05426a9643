"""Build the tile module of a scheduled GEMM: ``C = A @ B`` under a ``tile.gemm_schedule``.

Built with the dialect's op builders (no IR text). The kernel is one
function ``@gemm``; its arguments, in order (optional ones only when the
schedule has them, see :func:`gemm_opt.core.schedules.abi.kernel_args`):

==========  ===================  ===============================================
name        type                 meaning
==========  ===================  ===============================================
a           ``!tile.ptr<T>``     A, row-major ``M x K``, or stored ``K x M`` with
                                 ``trans_a``; grouped k: ``S x M``
b           ``!tile.ptr<T>``     B, row-major ``K x N``, or stored ``N x K`` with
                                 ``trans_b``; grouped m: ``(G, K, N)``, or
                                 ``(G, N, K)`` with ``trans_b``; grouped k: ``S x N``
c           ``!tile.ptr<T>``     C, row-major ``M x N`` (grouped k: ``(G*M) x N``), or
                                 column-major with ``trans_c`` (swap-AB: C^T)
M, N, K     ``i32``              grouped m: M = sum(group_lens); grouped k: K = S
lda         ``i64``              leading dimensions of the matrices as stored
ldb, ldc    ``i64``              (the row stride, in elements)
group_lens  ``!tile.ptr<i32>``   grouped only: G group sizes (zeros allowed)
num_groups  ``i32``              grouped only: G
sync        ``!tile.ptr<i32>``   work-stealing, stream-k linear/tree, split-k: counters/flags
partials    ``!tile.ptr<f32>``   stream-k linear/tree, split-k: fp32 partial tiles
scale_a     ``!tile.ptr<f32>``   FP8 with scales: A's scale (tensorwise: one;
                                 rowwise: M, one per row of C)
scale_b     ``!tile.ptr<f32>``   B's scale (tensorwise: one; rowwise: N, one
                                 per column of C); mx32 both ``!tile.ptr<f8E8M0FNU>``:
                                 A's ``M x K/32`` and B's ``N x K/32`` (grouped
                                 ``(G, N, K/32)``), row-major
==========  ===================  ===============================================

``T`` is f16 or bf16 (``dtype`` "fp16" or "bf16"; fp32 accumulation, C in
T), or 8-bit (``dtype`` "f8e4m3" or "f8e5m2", C bf16 or f32: ``out_dtype``);
the names and order are :func:`gemm_opt.core.schedules.abi.kernel_args`.
Grid: ``(tiles, 1, 1)`` for data-parallel (``tiles = cdiv(M, block_m) * cdiv(N, block_n)``), else
``(P, 1, 1)`` for any number of programs P (the runtime's default: the
resident programs, compute units x occupancy); split-k: ``(tiles * S, 1, 1)``. Sizes
of ``sync`` and ``partials`` for P programs:
:func:`gemm_opt.core.schedules.partition.workspace_layout`; the host zeroes ``sync``
before every launch (and C for stream-K with atomic reduction).

Two bodies (one tile, one K range), both for every target: ``blocks``
(``tile.load_block`` of A and B straight into the MMA operand layouts,
masked by the K range and the edges, then ``tile.wmma``; any layout of A
and B) and ``pipelined`` (hinted ``tile.async_tdm_copy_global_to_local`` s
into a ring of ``num_stages`` buffers (fewer where the copies go through
registers: :func:`ring_depth`), ``num_stages - 1`` K blocks in flight
while one multiplies; the descriptors' bounds mask the tile and the K range; TDM on
gfx1250, ``ttg.async_copy`` or register copies and wgmma on cuda:90, or with
``tma`` copies bounded by the tensors' shapes (wgrad: by descriptors that
end at the group's K end, made once per group) that cuda:90's ``lds-copies=tma`` makes
barrier-tracked TMA copies inside the schedule's loops).
"""

from collections.abc import Callable
from typing import Any

from gemm_opt.core.contract import (
    DIVISIBILITY,
    IMPRECISE_ACC,
    NUM_WARPS,
    TARGET,
    THREADS_PER_WARP,
)
from gemm_opt.core.ext_compat import arith, func, ir, scf
from gemm_opt.core.modes import (
    BODIES,
    GROUPED,
    KINDS,
    REDUCTIONS,
    Activation,
    Body,
    CLayout,
    Grouped,
    Kind,
    Reduction,
    Scale,
    TileLoop,
)
from gemm_opt.core.scaling import MX_BLOCK
from gemm_opt.core.schedules.abi import (
    ALIGNMENT_BYTES,
    DTYPES,
    FP8_DTYPES,
    FP8_MX_K,
    FP8_OUT_DTYPES,
    MAX_STAGES,
    MIN_STAGES,
    NO_EPILOGUE,
    OUT_DTYPES,
    EpilogueSpec,
    alignment,
    check_epilogue,
    check_fp8_config,
    check_kernel_config,
    divisibility_facts,
    kernel_args,
    pipelined,
    tma_copies,
    warp_grid,
)
from gemm_opt.core.targets import TARGETS
from gemm_opt.dialect import make_context
from gemm_opt.dialect.scaled_mma import ScaledWmmaOp
from gemm_opt.dialect.schedule import I32_MAX, GemmScheduleOp, ScheduleYieldOp
from gemm_opt.dialect.tile import (
    AsyncTDMCopyGlobalToLocalOp,
    AsyncTDMWaitOp,
    DotOperandAttr,
    LoadBlockOp,
    LocalAllocOp,
    LocalLoadOp,
    MakeTensorDescriptorOp,
    MemdescIndexOp,
    MemdescTransOp,
    PaddedSharedAttr,
    PtrType,
    ScaleLayoutAttr,
    SharedType,
    TensorDescType,
    UpdateTensorDescriptorOp,
    WmmaAttr,
    WmmaOp,
)
from gemm_opt.lowering.convert_tile_to_triton_gpu import LdsCopies, copies_in_flight

#: One K block's MMA into the loop's accumulator: ``step(a, b, acc, k) -> acc``, ``k``
#: the block's first K index (i32).
Step = Callable[[ir.Value, ir.Value, ir.Value, ir.Value], ir.Value]


def build_gemm_module(
    *,
    kind: Kind | str = Kind.DATA_PARALLEL,
    reduction: Reduction | str | None = None,
    grouped: Grouped | str = Grouped.NONE,
    dtype: str = "fp16",
    block_m: int = 64,
    block_n: int = 64,
    block_k: int = 32,
    group_m: int = 8,
    num_xcds: int = 1,
    num_warps: int = 4,
    num_stages: int | None = None,
    target: str = "gfx1250",
    trans_a: bool = False,
    trans_b: bool = False,
    trans_c: bool = False,
    body: Body | str = Body.AUTO,
    aligned: bool = False,
    tma: bool = False,
    vector_bytes: int = ALIGNMENT_BYTES,
    context: ir.Context | None = None,
    scale: Scale | str = Scale.NONE,
    out_dtype: str | None = None,
    epilogue: EpilogueSpec = NO_EPILOGUE,
    imprecise_acc: int | None = None,
) -> ir.Module:
    """The tile module (before ``tile-lower-gemm-schedule``) of one scheduled GEMM.

    ``body``: ``"blocks"`` (each K block loaded into registers when it is
    used; ``num_stages`` 1), ``"pipelined"`` (copies of A by the first half
    of the warps and of B by the second, with ``warp_used_hint`` s, into a
    ring of ``num_stages`` shared buffers per operand (2 to 6, default 2;
    fewer where the copies go through registers: :func:`ring_depth`),
    ``num_stages - 1`` K blocks in flight while one multiplies: TDM on
    gfx1250, wgmma from shared memory on cuda:90; an operand that lies
    transposed (``trans_a``'s A, ``trans_b``'s B, wgrad's A) is copied as it
    lies and read through a ``tile.memdesc_trans`` view) or ``"auto"`` (pipelined on 2 warps or
    more, else blocks). ``num_stages`` None: the
    body's own. ``trans_a`` / ``trans_b`` (dense and grouped "m"): A stored
    ``K x M`` (column-major ``M x K``), B stored ``N x K`` (grouped "m":
    ``(G, N, K)``), each with its leading dimension as stored. ``trans_c``
    (dense): the ``M x N`` output is stored column-major through ``ldc``
    (``c_layout = "col-major"``), so a swap-AB call, which runs ``C^T = B^T
    A^T`` with A and B exchanged, leaves C row-major; its narrow ``block_n``
    (the rows of the original A) folds the warps onto M
    (:func:`~gemm_opt.core.schedules.abi.warp_grid`). ``aligned``: state
    ``tile.divisibility`` of 16 bytes (:func:`~gemm_opt.core.schedules.abi.alignment`
    elements: 8 of fp16/bf16) on N, K and the leading dimensions
    (:func:`~gemm_opt.core.schedules.abi.aligned_args`; M too where A lies
    transposed), so every copy row is whole 16-byte vectors: on cuda:90 the
    copies become direct ``cp.async`` (without the facts they go through
    registers); the launcher refuses
    arguments that break them. ``tma`` (pipelined, ``aligned``): the copies
    bound by the tensors' shapes, not per tile (:func:`_pipelined_body` says
    why that computes the same C), so that cuda:90's ``lds-copies=tma`` can
    make them TMA copies, whose descriptors bound by shape only; grouped "m"
    (not ``trans_b``) then also states K divisible by ``block_k`` (a K block
    never crosses into the next group's weights); grouped "k" makes the
    body's descriptors with the group's K end as their row count instead
    (:func:`_pipelined_body`), and its schedule visits the tiles group by
    group so that the lowering makes them once per group (``tile_loop =
    "per-group"``; other wgrad kernels ``"flat"``). ``vector_bytes`` (``aligned``,
    not ``tma``): the facts are that many bytes instead of 16 (8 or 4: a narrow
    twin, whose ``cp.async`` copies move 8 or 4 bytes). ValueError on a bad
    combination (the op verifier's message for schedule rules).

    FP8 (``dtype`` "f8e4m3" or "f8e5m2", :func:`~gemm_opt.core.schedules.abi.check_fp8_config`
    says which forms are built): C is ``out_dtype`` (bf16 or fp32, default
    bf16), the MMA the 8-bit 16x16x64 instruction, and ``scale`` makes the
    epilogue multiply the fp32 accumulator by the scales before the store
    (:func:`_scale_epilogue`), from the ``scale_a`` and ``scale_b`` arguments;
    ``block128`` scales each K block's product in the loop instead
    (:func:`_block_scaled_step`). ``imprecise_acc``: the MMAs'
    ``tile.imprecise_acc`` (None: one instruction's K; block128: ``block_k``,
    whose products start from zero each block). ``mx32`` (MXFP8, a ``target``
    with the block-scaled MMA: gfx1250, gfx950) multiplies each K block by
    ``tile.scaled_wmma`` with its e8m0 scale tiles (:func:`_mx_scaled_step`), on
    the blocks body (the pipelined body has no scale copies).

    ``epilogue`` (:class:`~gemm_opt.core.schedules.abi.EpilogueSpec`): the
    schedule op's fused epilogue (bias, activation, scales, accumulate), its
    vectors the last arguments; ``out_dtype`` "fp32" gives a 16-bit kernel an
    fp32 C.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if reduction is not None and reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {', '.join(REDUCTIONS)}, got {reduction!r}")
    if grouped not in GROUPED:
        raise ValueError(f"grouped must be one of {', '.join(GROUPED)}, got {grouped!r}")
    if (trans_a or trans_b) and grouped == Grouped.K:
        raise ValueError(
            "trans_a and trans_b are for grouped = 'none' or 'm' (grouped 'k' reads its "
            "A of shape (S, M) transposed already)"
        )
    if trans_c and grouped != Grouped.NONE:
        raise ValueError(
            f"trans_c is for grouped = 'none' (a group's rows are rows of C), not {grouped!r}"
        )
    fp8 = dtype in FP8_DTYPES
    if trans_c and fp8:
        raise ValueError("trans_c is for 16-bit kernels (fp16, bf16)")
    if fp8:
        out_dtype = out_dtype if out_dtype is not None else next(iter(FP8_OUT_DTYPES))
        check_fp8_config(
            kind=kind, grouped=grouped, trans_a=trans_a, trans_b=trans_b, block_k=block_k,
            scale=scale, out_dtype=out_dtype, imprecise_acc=imprecise_acc,
        )  # fmt: skip
    elif dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join((*DTYPES, *FP8_DTYPES))}, got {dtype!r}")
    elif scale != Scale.NONE or imprecise_acc is not None:
        raise ValueError("scale and imprecise_acc are for FP8 kernels (dtype f8e4m3 or f8e5m2)")
    elif out_dtype is not None and out_dtype not in OUT_DTYPES:
        raise ValueError(
            f"out_dtype must be None (C is {dtype}) or one of {tuple(OUT_DTYPES)}, "
            f"got {out_dtype!r}"
        )
    check_epilogue(epilogue, kind, reduction, grouped)
    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    mx = scale == Scale.MX32
    if mx and TARGETS[target].mx_scale_type is None:
        mx_targets = ", ".join(name for name, t in TARGETS.items() if t.mx_scale_type)
        raise ValueError(
            f"target {target!r} has no block-scaled MMA, which scale 'mx32' needs "
            f"(targets with one: {mx_targets})"
        )
    if mx and body == Body.PIPELINED:
        raise ValueError("scale 'mx32' has the blocks body (the pipelined body copies no scales)")
    ints = dict(block_m=block_m, block_n=block_n, block_k=block_k, group_m=group_m)
    for name, value in (*ints.items(), ("num_xcds", num_xcds), ("num_warps", num_warps)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= I32_MAX:
            raise ValueError(f"{name} must be a positive i32 (1 to {I32_MAX}), got {value!r}")
    if num_xcds != 1 and kind != Kind.WORK_STEALING:
        raise ValueError(f"num_xcds={num_xcds} is for kind 'work-stealing', not {kind!r}")
    kind, grouped = Kind(kind), Grouped(grouped)
    reduction = None if reduction is None else Reduction(reduction)
    pipelined_ok = pipelined(num_warps)
    if body == Body.AUTO:
        body = Body.PIPELINED if pipelined_ok and not mx else Body.BLOCKS
    if body not in BODIES:
        raise ValueError(f"body must be 'pipelined', 'blocks' or 'auto', got {body!r}")
    if body == Body.PIPELINED and not pipelined_ok:
        raise ValueError("body 'pipelined' needs at least 2 warps (two halves copy A and B)")
    stages = num_stages if num_stages is not None else (2 if body == Body.PIPELINED else 1)
    if body == Body.BLOCKS and stages != 1:
        raise ValueError(f"the blocks body has 1 stage, got num_stages={num_stages}")
    if body == Body.PIPELINED and not MIN_STAGES <= stages <= MAX_STAGES:
        raise ValueError(
            f"the pipelined body has {MIN_STAGES} to {MAX_STAGES} stages, "
            f"got num_stages={num_stages}"
        )
    if tma and (body != Body.PIPELINED or not aligned or not tma_copies(num_warps)):
        raise ValueError("tma copies need the pipelined body and aligned = True")
    alignment(dtype, vector_bytes)
    if vector_bytes != ALIGNMENT_BYTES and (tma or not aligned):
        raise ValueError(f"vector_bytes={vector_bytes} needs aligned = True and no tma copies")
    check_kernel_config(
        block_m=block_m, block_n=block_n, block_k=block_k, num_warps=num_warps, num_stages=None
    )
    wm, wn = warp_grid(num_warps, block_m=block_m, block_n=block_n)
    # wgrad's TMA twin makes its descriptors in the body, once per group.
    per_group = tma and grouped == Grouped.K
    ctx = context or make_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.create()
        i32 = ir.IntegerType.get_signless(32)
        i64 = ir.IntegerType.get_signless(64)
        attrs = module.operation.attributes
        attrs[NUM_WARPS] = ir.IntegerAttr.get(i32, num_warps)
        attrs[THREADS_PER_WARP] = ir.IntegerAttr.get(i32, TARGETS[target].warp_size)
        attrs[TARGET] = ir.StringAttr.get(target)
        elem = _element_type(dtype)
        f32 = ir.F32Type.get()
        ptr = PtrType.get(ir.TypeAttr.get(elem))
        c_elem = _element_type(out_dtype) if out_dtype is not None else elem
        c_ptr = PtrType.get(ir.TypeAttr.get(c_elem))
        names = kernel_args(kind, reduction, grouped, scale, epilogue)
        types: list[Any] = [ptr, ptr, c_ptr, i32, i32, i32, i64, i64, i64]
        if "group_lens" in names:
            types += [PtrType.get(ir.TypeAttr.get(i32)), i32]
        if "sync" in names:
            types.append(PtrType.get(ir.TypeAttr.get(i32)))
        if "partials" in names:
            types.append(PtrType.get(ir.TypeAttr.get(f32)))
        if "scale_a" in names:
            scale_elem = ir.Type.parse("f8E8M0FNU") if mx else f32
            types += [PtrType.get(ir.TypeAttr.get(scale_elem))] * 2
        if epilogue.bias is not None:
            types.append(PtrType.get(ir.TypeAttr.get(_element_type(epilogue.bias))))
        types += [PtrType.get(ir.TypeAttr.get(f32))] * (epilogue.row_scale + epilogue.col_scale)
        # The 8-bit MMA is 16x16x64 with 16 elements (16 bytes) per lane and K step;
        # the block-scaled one 16x16x128.
        mma_k, k_width = (FP8_MX_K if mx else 64, 16) if fp8 else (32, 8)
        acc_layout = WmmaAttr.build(
            version=3, warps_per_cta=(wm, wn), instr_shape=(16, 16, mma_k), transposed=True
        )
        opa = DotOperandAttr.build(op_idx=0, parent=acc_layout, k_width=k_width)
        opb = DotOperandAttr.build(op_idx=1, parent=acc_layout, k_width=k_width)
        acc_t = ir.RankedTensorType.get([block_m, block_n], f32, acc_layout)
        a_t = ir.RankedTensorType.get([block_m, block_k], elem, opa)
        b_t = ir.RankedTensorType.get([block_k, block_n], elem, opb)
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("gemm", (types, []))
        if aligned:
            facts = divisibility_facts(
                grouped, trans_b, block_k, aligned, tma, trans_a,
                dtype=dtype, vector_bytes=vector_bytes, trans_c=trans_c,
            )  # fmt: skip
            fn.arg_attrs = ir.ArrayAttr.get(
                [
                    ir.DictAttr.get({DIVISIBILITY: ir.IntegerAttr.get(i32, facts[name])})
                    if name in facts
                    else ir.DictAttr.get({})
                    for name in names
                ]
            )
        entry = fn.add_entry_block()
        args = dict(zip(names, entry.arguments, strict=True))
        with ir.InsertionPoint(entry):
            tdm = None
            swiglu = epilogue.activation == Activation.SWIGLU
            if body == Body.PIPELINED:
                tdm = _tdm_setup(
                    args, elem, block_m, block_n, block_k, num_warps, grouped, stages,
                    trans_a, trans_b, per_tile=per_group, swiglu=swiglu,
                    ring=lambda slot_bytes: ring_depth(
                        stages, module.operation, target, tma=tma, slot_bytes=slot_bytes,
                        threads=num_warps * TARGETS[target].warp_size,
                    ),
                )  # fmt: skip
            sched = GemmScheduleOp(
                args["M"],
                args["N"],
                args["K"],
                args["c"],
                args["ldc"],
                group_lens=args.get("group_lens"),
                num_groups=args.get("num_groups"),
                sync=args.get("sync"),
                partials=args.get("partials"),
                bias=args.get("bias"),
                row_scale=args.get("row_scale"),
                col_scale=args.get("col_scale"),
            )
            a = sched.operation.attributes
            if epilogue.activation != "none":
                a["activation"] = ir.StringAttr.get(epilogue.activation)
            if epilogue.accumulate:
                a["accumulate"] = ir.UnitAttr.get()
            a["kind"] = ir.StringAttr.get(kind)
            if reduction is not None:
                a["reduction"] = ir.StringAttr.get(reduction)
            a["grouped"] = ir.StringAttr.get(grouped)
            if trans_c:
                a["c_layout"] = ir.StringAttr.get(CLayout.COL_MAJOR)
            if grouped == Grouped.K:
                loop = TileLoop.PER_GROUP if per_group else TileLoop.FLAT
                a["tile_loop"] = ir.StringAttr.get(loop)
            if kind == Kind.WORK_STEALING:
                ints["num_xcds"] = num_xcds
            for name, value in ints.items():
                a[name] = ir.IntegerAttr.get(i32, value)
            region = sched.operation.regions[0].blocks.append(*([i32] * 6))
            with ir.InsertionPoint(region):
                epilogue = None
                bargs = region.arguments
                # None: the plain tile.wmma (no K index computed for it)
                step = None if imprecise_acc is None else _wmma_step(acc_t, imprecise_acc)
                if scale == Scale.BLOCK128:
                    step = _block_scaled_step(bargs, args, acc_t, block_k, grouped)
                elif mx:
                    step = _mx_scaled_step(bargs, args, acc_t, block_m, block_n, block_k, grouped)
                elif scale != Scale.NONE:

                    def epilogue(acc: ir.Value) -> ir.Value:
                        return _scale_epilogue(acc, bargs, args, acc_t, Scale(scale), grouped)

                if tdm is not None:
                    _pipelined_body(
                        region.arguments, args, tdm, acc_t, a_t, b_t, block_k, grouped, not tma,
                        epilogue, step,
                    )  # fmt: skip
                else:
                    _body(
                        region.arguments, args, acc_t, a_t, b_t, block_k, grouped, trans_a,
                        trans_b, epilogue, swiglu, step,
                    )  # fmt: skip
            func.ReturnOp([])
        try:
            module.operation.verify()
        except ir.MLIRError as e:
            why = "; ".join(d.message for d in e.error_diagnostics) or str(e)
            raise ValueError(f"the schedule does not verify: {why}") from None
    return module


def ring_depth(
    num_stages: int,
    module: ir.Operation,
    target: str,
    *,
    tma: bool,
    slot_bytes: int,
    threads: int,
) -> int:
    """The buffers per operand of the pipelined body's ring for ``num_stages``, in
    ``module`` (its copies' descriptors built) compiled for ``target`` (``tma``:
    with ``lds-copies=tma``, as the bundle builder compiles TMA kernels); a slot
    of every ring together takes ``slot_bytes`` (padding included), and the kernel
    has ``threads``.

    ``num_stages`` where the hand-off's copies stay in flight once issued (TDM,
    direct or TMA copies: :func:`~gemm_opt.lowering.convert_tile_to_triton_gpu.copies_in_flight`,
    the very test that picks them). Copies through registers are complete when
    issued, so in the loop the body's block i+S-1, issued into the slot block
    i-1 left, reaches the MMA no sooner than block i+1 does with S = 2; a
    deeper ring only issues more blocks at once before a tile's first MMA, and
    costs shared memory and compile time (the copy code is unrolled once per
    prologue block). Such a kernel gets the deepest ring, at most
    ``num_stages``, with which an SM holds as many of its workgroups as with a
    ring of 2 (:meth:`~gemm_opt.core.targets.Target.resident_blocks`): the
    shallow ring where it buys a workgroup per SM, the deeper prologue where
    it costs none. A target whose SM the table does not model gets 2. The
    kernel's stages (its name, the runtime's choice of it) stay as asked.
    """
    how = LdsCopies.TMA if tma else LdsCopies.AUTO
    t = TARGETS[target]
    if copies_in_flight(module, t, how) or num_stages <= MIN_STAGES:
        return num_stages
    held = t.resident_blocks(threads, MIN_STAGES * slot_bytes)
    if held is None:
        return MIN_STAGES
    ring = MIN_STAGES
    while ring < num_stages and t.resident_blocks(threads, (ring + 1) * slot_bytes) == held:
        ring += 1
    return ring


def _body(
    bargs: Any,
    args: dict[str, ir.Value],
    acc_t,
    a_t,
    b_t,
    block_k: int,
    grouped: str,
    trans_a: bool,
    trans_b: bool,
    epilogue: Callable[[ir.Value], ir.Value] | None = None,
    swiglu: bool = False,
    step: Step | None = None,
) -> None:
    """acc = sum over K blocks of A[m_off:, k:k+BK] @ B[k:k+BK, n_off:], masked
    (``step``: how one block's product joins the accumulator; plain ``tile.wmma``).

    ``swiglu``: B has ``2N`` columns ``[gate | up]`` (``N`` is C's), and the body
    yields two accumulators, over columns ``n_off`` and ``N + n_off`` of B.

    ``trans_a``: A is stored (K, M) and read with strides ``(1, lda)``, as
    grouped "k" reads its (S, M) A (column m of A is row m of the block).
    ``trans_b``: B is stored (N, K), read with strides ``(1, ldb)``.
    Grouped "m": B is (G, K, N), seen as (G*K, N) rows ``g*K + k``, or with
    ``trans_b`` (G, N, K), seen transposed as (K, G*N) columns ``g*N + n``.
    Grouped "k": A is (S, M) and read transposed, B is (S, N).
    """
    i32 = ir.IntegerType.get_signless(32)
    i64 = ir.IntegerType.get_signless(64)
    group, m_off, m_end, n_off, k_off, k_end = bargs
    zero = arith.ConstantOp(acc_t, ir.DenseElementsAttr.get_splat(acc_t, ir.FloatAttr.get_f32(0.0)))
    one = arith.ConstantOp(i64, 1).result
    bk = arith.ConstantOp(i32, block_k).result
    bk1 = arith.ConstantOp(i32, block_k - 1).result
    c0 = arith.ConstantOp(i32, 0).result
    span = arith.MaxSIOp(arith.SubIOp(k_end, k_off).result, c0)
    nk = arith.DivSIOp(arith.AddIOp(span.result, bk1).result, bk).result
    n, lda, ldb = args["N"], args["lda"], args["ldb"]
    width = arith.AddIOp(n, n).result if swiglu else n  # B's columns
    inits = [zero.result] * (1 + swiglu)
    loop = scf.ForOp(c0, nk, arith.ConstantOp(i32, 1).result, inits)
    with ir.InsertionPoint(loop.body):
        k = arith.AddIOp(k_off, arith.MulIOp(loop.induction_variable, bk).result).result
        if grouped == Grouped.K or trans_a:
            a = LoadBlockOp(args["a"], [m_end, k_end], [one, lda], [m_off, k], a_t).result
        else:
            a = LoadBlockOp(args["a"], [m_end, k_end], [lda, one], [m_off, k], a_t).result

        def load_b(shift: ir.Value | None) -> ir.Value:
            """B's block at column ``n_off`` (+ ``shift``: swiglu's up half), masked
            at the half's end."""
            at = n_off if shift is None else arith.AddIOp(shift, n_off).result
            end = n if shift is None else arith.AddIOp(shift, n).result
            if grouped == Grouped.M and trans_b:
                col = arith.MulIOp(group, width).result
                cols = [arith.AddIOp(col, end).result, arith.AddIOp(col, at).result]
                return LoadBlockOp(
                    args["b"], [k_end, cols[0]], [one, ldb], [k, cols[1]], b_t
                ).result
            if grouped == Grouped.M:
                row = arith.MulIOp(group, args["K"]).result
                rows = [arith.AddIOp(row, k_end).result, arith.AddIOp(row, k).result]
                return LoadBlockOp(args["b"], [rows[0], end], [ldb, one], [rows[1], at], b_t).result
            if trans_b:
                return LoadBlockOp(args["b"], [k_end, end], [one, ldb], [k, at], b_t).result
            return LoadBlockOp(args["b"], [k_end, end], [ldb, one], [k, at], b_t).result

        step = step or _wmma_step(acc_t, None)
        accs = [step(a, load_b(None), loop.inner_iter_args[0], k)]
        if swiglu:
            accs.append(WmmaOp(a, load_b(n), loop.inner_iter_args[1], acc_t).result)
        scf.YieldOp(accs)
    if swiglu:
        ScheduleYieldOp(list(loop.results))
        return
    acc = loop.results[0]
    ScheduleYieldOp([epilogue(acc) if epilogue else acc])


def _wmma_step(acc_t, imprecise_acc: int | None) -> Step:
    """``acc + a @ b`` by one ``tile.wmma`` (with ``tile.imprecise_acc`` when given)."""

    def step(a: ir.Value, b: ir.Value, acc: ir.Value, _k: ir.Value) -> ir.Value:
        mma = WmmaOp(a, b, acc, acc_t)
        if imprecise_acc is not None:
            i32 = ir.IntegerType.get_signless(32)
            mma.operation.attributes[IMPRECISE_ACC] = ir.IntegerAttr.get(i32, imprecise_acc)
        return mma.result

    return step


def _block_scaled_step(bargs: Any, args: dict[str, ir.Value], acc_t, block_k: int, grouped) -> Step:
    """The block128 recipe's K step: ``acc + (a @ b) x sa x sb``.

    The block's product starts from zero (a ``tile.wmma`` onto a zero
    accumulator whose ``tile.imprecise_acc`` is ``block_k``: the tensor core
    may sum the whole block in its own precision) and is promoted into the fp32
    accumulator times its scales, once per block: this promotion is what keeps
    an 8-bit GEMM's long K sums fp32-accurate. ``block_k`` is the recipe's
    :data:`~gemm_opt.core.scaling.BLOCK`, so block ``kb = k / block_k`` has one
    scale per row of A and one per column of B:

    * ``scale_a`` lies (Kb, M), M-major (the API's (M, Kb) with strides (1, M),
      ``torch._scaled_mm``'s layout): element (i, j) of the tile reads
      ``scale_a[kb*M + m_off + i]``, strides (1, 0) from origin ``kb*M + m_off``,
      rows bounded by ``kb*M + m_end`` (grouped "m": M is all groups' rows).
    * ``scale_b`` lies (Kb, N) (dense) or (G, Kb, N): one scale per column of B
      and K block (the 128x128 blocks' scales repeated over their columns),
      read with strides (0, 1) from ``(g*Kb + kb)*N + n_off``, bounded at N.

    Both loads are in the accumulator's layout (no conversion), like the
    epilogue's; masked entries (past m_end or N) read 0 and are never stored.
    Along its stride-0 dim each load starts at the constant 0 and is bounded
    by the constant block size, so the lowering loads one value per row (or
    column) a thread holds and broadcasts it
    (:func:`gemm_opt.lowering.access.broadcast_dims`).
    """
    i32 = ir.IntegerType.get_signless(32)
    i64 = ir.IntegerType.get_signless(64)
    group, m_off, m_end, n_off, _k_off, _k_end = bargs
    m, n = args["M"], args["N"]
    zero64, one64 = arith.ConstantOp(i64, 0).result, arith.ConstantOp(i64, 1).result
    bm, bn = (arith.ConstantOp(i32, x).result for x in ir.RankedTensorType(acc_t).shape)
    c0 = arith.ConstantOp(i32, 0).result
    bk = arith.ConstantOp(i32, block_k).result
    zero_acc = arith.ConstantOp(
        acc_t, ir.DenseElementsAttr.get_splat(acc_t, ir.FloatAttr.get_f32(0.0))
    ).result
    kbs = arith.DivSIOp(
        arith.AddIOp(args["K"], arith.ConstantOp(i32, block_k - 1).result).result, bk
    ).result
    product = _wmma_step(acc_t, block_k)

    def step(a: ir.Value, b: ir.Value, acc: ir.Value, k: ir.Value) -> ir.Value:
        kb = arith.DivSIOp(k, bk).result
        a_row = arith.MulIOp(kb, m).result
        sa = LoadBlockOp(
            args["scale_a"],
            [arith.AddIOp(a_row, m_end).result, bn],
            [one64, zero64],
            [arith.AddIOp(a_row, m_off).result, c0],
            acc_t,
        ).result
        b_row = kb
        if grouped == Grouped.M:  # scale_b is (G, Kb, N)
            b_row = arith.AddIOp(arith.MulIOp(group, kbs).result, kb).result
        b_col = arith.MulIOp(b_row, n).result
        sb = LoadBlockOp(
            args["scale_b"],
            [bm, arith.AddIOp(b_col, n).result],
            [zero64, one64],
            [c0, arith.AddIOp(b_col, n_off).result],
            acc_t,
        ).result
        p = product(a, b, zero_acc, k)
        scaled = arith.MulFOp(arith.MulFOp(p, sa).result, sb).result
        return arith.AddFOp(acc, scaled).result

    return step


def _mx_scaled_step(
    bargs: Any,
    args: dict[str, ir.Value],
    acc_t,
    block_m: int,
    block_n: int,
    block_k: int,
    grouped: str,
) -> Step:
    """The mx32 recipe's K step: ``acc + (a x sa) @ (b x sb)`` by one ``tile.scaled_wmma``.

    The scale tiles are loaded like the operands, straight into the MMA's
    ``#tile.scale_layout`` s: ``scale_a`` (M, K/32) rows ``m_off..``, columns
    ``k/32..`` (``block_k/32`` of them), and ``scale_b`` (N, K/32) (grouped: ``(G, N,
    K/32)`` seen as ``(G*N, K/32)``, rows ``g*N + n``), both row-major with K/32 as
    their leading dimension and masked at the tile's edges and at ``k_end/32`` like
    the operands (K is a multiple of 32, so a K block's partial tail has whole
    scale columns; the masked ones read as code 0 beside zero elements).
    """
    i32 = ir.IntegerType.get_signless(32)
    i64 = ir.IntegerType.get_signless(64)
    group, m_off, m_end, n_off, _k_off, k_end = bargs
    parent = ir.RankedTensorType(acc_t).encoding
    e8m0 = ir.Type.parse("f8E8M0FNU")
    cols = block_k // MX_BLOCK
    sa_t, sb_t = (
        ir.RankedTensorType.get([rows, cols], e8m0, ScaleLayoutAttr.build(op_idx=i, parent=parent))
        for i, rows in enumerate((block_m, block_n))
    )
    one = arith.ConstantOp(i64, 1).result
    per = arith.ConstantOp(i32, MX_BLOCK).result
    ks = arith.DivSIOp(args["K"], per).result  # K/32: the scales' row length
    lds = arith.ExtSIOp(i64, ks).result
    ks_end = arith.DivSIOp(k_end, per).result
    n = args["N"]
    if grouped == Grouped.M:  # scale_b (G, N, K/32): group g's rows from g*N
        row0 = arith.MulIOp(group, n).result
        nb_end, nb_off = arith.AddIOp(row0, n).result, arith.AddIOp(row0, n_off).result
    else:
        nb_end, nb_off = n, n_off

    def step(a: ir.Value, b: ir.Value, acc: ir.Value, k: ir.Value) -> ir.Value:
        kc = arith.DivSIOp(k, per).result
        sa = LoadBlockOp(args["scale_a"], [m_end, ks_end], [lds, one], [m_off, kc], sa_t)
        sb = LoadBlockOp(args["scale_b"], [nb_end, ks_end], [lds, one], [nb_off, kc], sb_t)
        return ScaledWmmaOp.build(a, sa.result, b, sb.result, acc).result

    return step


def _element_type(name: str) -> Any:
    """The MLIR element type of a kernel dtype name (A and B's, or an FP8 kernel's C)."""
    types = {
        "fp16": ir.F16Type.get,
        "bf16": ir.BF16Type.get,
        "fp32": ir.F32Type.get,
        "f8e4m3": ir.Float8E4M3FNType.get,
        "f8e5m2": ir.Float8E5M2Type.get,
    }
    return types[name]()


def _scale_epilogue(
    acc: ir.Value,
    bargs: Any,
    args: dict[str, ir.Value],
    acc_t,
    scale: Scale,
    grouped: Grouped = Grouped.NONE,
) -> ir.Value:
    """acc * scale_a * scale_b, each scale broadcast over the tile by a stride-0 load.

    Rowwise: ``scale_a[m]`` read with strides (1, 0) (one per row of the tile),
    ``scale_b[n]`` with (0, 1) (grouped "m": ``scale_b[g*N + n]``, one row of
    N per group); tensorwise: both with (0, 0), every element of
    the block reading the one scale. The loads are in the accumulator's own
    layout (no layout conversion) and masked by the tile's edges like the
    store, so no thread reads past M scales of A or N of B; along a stride-0
    dim they are in bounds by constants, so each is one load per row or
    column a thread holds (tensorwise: one), broadcast.
    """
    i32 = ir.IntegerType.get_signless(32)
    i64 = ir.IntegerType.get_signless(64)
    group, m_off, m_end, n_off, _k_off, _k_end = bargs
    zero, one = arith.ConstantOp(i64, 0).result, arith.ConstantOp(i64, 1).result
    # A stride-0 dim starts at 0 and is bounded by the block: loaded once and
    # broadcast (gemm_opt.lowering.access.broadcast_dims).
    c0 = arith.ConstantOp(i32, 0).result
    bm, bn = (arith.ConstantOp(i32, x).result for x in ir.RankedTensorType(acc_t).shape)
    rowwise = scale == Scale.ROWWISE
    if rowwise:
        n = args["N"]
        col = arith.MulIOp(group, n).result if grouped == Grouped.M else c0
        sa_at, sa_bounds = [m_off, c0], [m_end, bn]
        sb_at = [c0, arith.AddIOp(col, n_off).result]
        sb_bounds = [bm, arith.AddIOp(col, n).result]
    else:
        sa_at = sb_at = [c0, c0]
        sa_bounds = sb_bounds = [bm, bn]
    sa = LoadBlockOp(args["scale_a"], sa_bounds, [one if rowwise else zero, zero], sa_at, acc_t)
    sb = LoadBlockOp(args["scale_b"], sb_bounds, [zero, one if rowwise else zero], sb_at, acc_t)
    return arith.MulFOp(arith.MulFOp(acc, sa.result).result, sb.result).result


def _tdm_setup(
    args,
    elem,
    bm: int,
    bn: int,
    bk: int,
    num_warps: int,
    grouped: str,
    stages: int,
    trans_a: bool = False,
    trans_b: bool = False,
    per_tile: bool = False,
    swiglu: bool = False,
    ring: Callable[[int], int] | None = None,
) -> dict:
    """Descriptors of A and B (the whole tensors; the body moves and bounds
    them per tile) and the rings of ``stages`` buffers (``ring``: how many
    instead, asked with a slot's bytes once the descriptors are built), made
    once per program;
    ``per_tile`` (wgrad's TMA twin): no descriptors, the body makes them
    from the group's K end (:func:`_pipelined_body`; the lowering hoists
    them out of the tile loop into its group loop).

    Each operand's block is copied as it lies in memory, row-major: A as
    (BM, BK), or (BK, BM) with ``trans_a`` or for grouped "k" (A stored
    (K, M) or (S, M), the MMA takes A^T); B as (BK, BN), or (BN, BK) with
    ``trans_b`` (B stored (N, K); grouped "m": (G, N, K), seen as G*N rows
    of K). The body hands a transposed block to the MMA through a
    ``tile.memdesc_trans`` view (no data moves; wgmma reads it natively).
    """
    i32 = ir.IntegerType.get_signless(32)
    i64 = ir.IntegerType.get_signless(64)
    one = arith.ConstantOp(i64, 1).result

    def padded(inner: int) -> Any:
        # A pad of 8 elements every row breaks LDS bank conflicts (TDM pads, never swizzles).
        return PaddedSharedAttr.build(interval=inner, amount=8, order=(1, 0))

    a_trans, b_trans = grouped == Grouped.K or trans_a, trans_b
    a_block = (bk, bm) if a_trans else (bm, bk)
    b_block = (bn, bk) if b_trans else (bk, bn)
    sa, sb = padded(a_block[1]), padded(b_block[1])
    blk_a = ir.RankedTensorType.get(list(a_block), elem, sa)
    blk_b = ir.RankedTensorType.get(list(b_block), elem, sb)
    da_t = TensorDescType.get(ir.TypeAttr.get(blk_a))
    db_t = TensorDescType.get(ir.TypeAttr.get(blk_b))
    ba_t = SharedType.get(ir.TypeAttr.get(blk_a))
    bb_t = SharedType.get(ir.TypeAttr.get(blk_b))
    m, n, k = args["M"], args["N"], args["K"]
    if swiglu:  # B has 2N columns, [gate | up]
        n = arith.AddIOp(n, n).result
    a_shape = [k, m] if a_trans else [m, k]
    if b_trans and grouped == Grouped.M:  # B is (G, N, K): G*N rows of K
        b_shape = [arith.MulIOp(args["num_groups"], n).result, k]
    elif b_trans:  # B is (N, K)
        b_shape = [n, k]
    elif grouped == Grouped.M:  # B is (G, K, N): G*K rows of N
        b_shape = [arith.MulIOp(args["num_groups"], k).result, n]
    else:
        b_shape = [k, n]
    a_strides, b_strides = [args["lda"], one], [args["ldb"], one]
    if per_tile:  # made by the body (shape: the group's K end)
        da = db = None
    else:
        da = MakeTensorDescriptorOp(args["a"], a_shape, a_strides, da_t).result
        db = MakeTensorDescriptorOp(args["b"], b_shape, b_strides, db_t).result
    if ring is not None:  # a slot's bytes as the verifier counts them (padding included)
        stages = ring(ba_t.allocation_bytes() + bb_t.allocation_bytes() * (2 if swiglu else 1))
    bufa_t = SharedType.get(ir.TypeAttr.get(ir.RankedTensorType.get([stages, *a_block], elem, sa)))
    bufb_t = SharedType.get(ir.TypeAttr.get(ir.RankedTensorType.get([stages, *b_block], elem, sb)))
    half = num_warps // 2
    hints = ((1 << half) - 1, ((1 << num_warps) - 1) ^ ((1 << half) - 1))
    return {
        "da": da, "db": db, "ba_t": ba_t, "bb_t": bb_t,
        "abuf": LocalAllocOp(bufa_t).result, "bbuf": LocalAllocOp(bufb_t).result,
        "ubuf": LocalAllocOp(bufb_t).result if swiglu else None, "swiglu": swiglu,
        "hints": hints, "i32": i32, "stages": stages,
        "a_trans": a_trans, "b_trans": b_trans,
        "da_t": da_t, "db_t": db_t, "a_strides": a_strides, "b_strides": b_strides,
    }  # fmt: skip


def _pipelined_body(
    bargs: Any,
    args,
    tdm: dict,
    acc_t,
    a_t,
    b_t,
    bk: int,
    grouped: str,
    bounded: bool = True,
    epilogue: Callable[[ir.Value], ir.Value] | None = None,
    step: Step | None = None,
) -> None:
    """The pipelined body over a ring of S = ``tdm["stages"]`` buffers: K blocks
    i+1 .. i+S-1 are in flight while block i multiplies.

    The prologue issues blocks 0 .. S-2; iteration i issues block i+S-1 into
    slot (i+S-1) % S (the slot block i-1 was read from) and waits until at
    most the 2*(S-1) copies of blocks i+1 .. i+S-1 are in flight, so block i
    has landed. ``bounded``: the descriptors' bounds are the tile's row end
    and the range's K end, so TDM's zero fill masks ragged edges and the K
    split alike. Unbounded (for TMA, whose descriptors bound by shape only),
    the tensors' shapes bound the copies, and C is the same: rows past
    ``m_end`` are the next group's (grouped "m"; dense: ``m_end`` is M), and
    the store drops them; a K range ends at a multiple of ``block_k`` from
    its start or at K, so no multiplied block crosses ``k_end`` except into
    K's zero fill, and B's rows ``g*K + k`` stay in group g because K is a
    multiple of ``block_k`` there (a stated fact); blocks past the range
    (the prologue's, for short ranges) are never multiplied. With
    ``trans_b`` (dgrad) B's rows are ``g*N + n``: rows past the group's N
    are the next group's, and they only reach output columns past N, which
    the store drops; K is B's inner dim, bounded by its shape. Grouped "k"
    (wgrad): its K ranges end at group boundaries inside A and B, where the
    tensors' shapes stop nothing, so its TMA twin (``tdm["da"]`` None) makes
    descriptors of A and B with ``k_end`` rows (at least 1, a TMA
    dimension's least; never past K) at the top of the body, from the
    group's values only, which ``tile-lower-gemm-schedule`` hoists into its
    group loop (made once per group and program, not per tile): a K block
    straddling ``k_end`` reads the next group's rows as zeros, the very data
    the bounded copies move, and rows below ``k_off`` are never copied. Of
    the two ways to bound a TMA copy per tile, this one is in the kernel:
    the other, lowering a bounded ``tile.update_tensor_descriptor`` to a
    rebuilt TMA descriptor, rebuilds where the bounds are set, which here is
    per K block (a tensormap per copy, rewritten while the copies before it
    still read it) unless the body is restructured to bound once per tile.
    Made once per group, they cost two tensormaps per group a program has
    tiles in (``tensormap.replace`` s into shared memory,
    ``tensormap.cp_fenceproxy`` to the program's global scratch,
    ``fence.proxy.tensormap::generic.acquire``), none per tile or K block.
    The body's final wait drains the tile's copies before the next group
    rewrites the tensormaps (the lowering would drain them itself otherwise:
    :mod:`gemm_opt.lowering.tma_plan`).

    Transposed operands (``trans_a``'s and grouped "k"'s A, ``trans_b``'s B)
    land as they lie and reach the MMA through a ``tile.memdesc_trans``
    ``[1, 0]`` view. The TMA argument holds for them too: a transposed A's
    columns past ``m_end`` are rows of C the store drops (grouped "m": the
    next group's), and a K block never crosses ``k_end`` except into the
    tensor's zero fill, whichever way K runs in memory.
    """
    i32 = tdm["i32"]
    stages = tdm["stages"]
    group, m_off, m_end, n_off, k_off, k_end = bargs
    consts = {0, 1, stages, stages - 1, bk, bk - 1}
    c = {v: arith.ConstantOp(i32, v).result for v in sorted(consts)}
    zero = arith.ConstantOp(acc_t, ir.DenseElementsAttr.get_splat(acc_t, ir.FloatAttr.get_f32(0.0)))
    span = arith.MaxSIOp(arith.SubIOp(k_end, k_off).result, c[0]).result
    nk = arith.DivSIOp(arith.AddIOp(span, c[bk - 1]).result, c[bk]).result
    n = args["N"]
    a_trans, b_trans = tdm["a_trans"], tdm["b_trans"]
    swiglu = tdm["swiglu"]
    b_shift = c[0]
    if b_trans and grouped == Grouped.M:  # B's rows g*N + n (swiglu: g*2N + n)
        b_shift = arith.MulIOp(group, arith.AddIOp(n, n).result if swiglu else n).result
    elif grouped == Grouped.M:  # B's rows g*K + k
        b_shift = arith.MulIOp(group, args["K"]).result
    b_end = arith.AddIOp(b_shift, n if b_trans else k_end).result
    ha, hb = tdm["hints"]
    da0, db0 = tdm["da"], tdm["db"]
    if da0 is None:  # wgrad's TMA twin: the group's descriptors end at its K end
        rows = arith.MinSIOp(arith.MaxSIOp(k_end, c[1]).result, args["K"]).result
        da0 = MakeTensorDescriptorOp(args["a"], [rows, m_end], tdm["a_strides"], tdm["da_t"]).result
        db0 = MakeTensorDescriptorOp(args["b"], [rows, n], tdm["b_strides"], tdm["db_t"]).result

    def issue(k: ir.Value, slot: ir.Value, pred: ir.Value | None) -> None:
        if a_trans:
            a_at, a_bounds = [k, m_off], [k_end, m_end]
        else:
            a_at, a_bounds = [m_off, k], [m_end, k_end]
        da = UpdateTensorDescriptorOp(
            da0, a_at, a_bounds if bounded else [], da0.type, pred=pred
        ).result

        def b_desc(half: ir.Value | None) -> ir.Value:
            """B's block (swiglu's up half: N columns, or rows, further on)."""
            at = n_off if half is None else arith.AddIOp(half, n_off).result
            if b_trans:
                shift = b_shift if half is None else arith.AddIOp(b_shift, half).result
                b_at, b_bounds = (
                    [arith.AddIOp(shift, at if half is None else n_off).result, k],
                    [
                        arith.AddIOp(shift, n).result,
                        k_end,
                    ],
                )
            else:
                end = n if half is None else arith.AddIOp(half, n).result
                b_at, b_bounds = [arith.AddIOp(b_shift, k).result, at], [b_end, end]
            return UpdateTensorDescriptorOp(
                db0, b_at, b_bounds if bounded else [], db0.type, pred=pred
            ).result

        copies = [(da, "abuf", "ba_t", ha), (b_desc(None), "bbuf", "bb_t", hb)]
        if swiglu:
            copies.append((b_desc(n), "ubuf", "bb_t", hb))
        for desc, buf, t, hint in copies:
            dest = MemdescIndexOp(tdm[buf], slot, tdm[t]).result
            copy = AsyncTDMCopyGlobalToLocalOp(desc, dest)
            copy.operation.attributes["warp_used_hint"] = ir.IntegerAttr.get(i32, hint)

    def wait(num: int) -> None:
        w = AsyncTDMWaitOp()
        w.operation.attributes["num"] = ir.IntegerAttr.get(i32, num)

    def operand(buf: str, t: str, slot: ir.Value, trans: bool, reg_t) -> ir.Value:
        block = MemdescIndexOp(tdm[buf], slot, tdm[t]).result
        if trans:
            block = MemdescTransOp.build(block, (1, 0)).result
        return LocalLoadOp(block, reg_t).result

    # Unpredicated: the bounds zero-fill the copies of blocks past the K range
    # (never multiplied), and a branch before the K loop makes ptxas serialize
    # cuda:90's wgmmas.
    for j in range(stages - 1):
        kj = k_off if j == 0 else arith.AddIOp(k_off, arith.ConstantOp(i32, j * bk).result).result
        issue(kj, arith.ConstantOp(i32, j).result, None)
    per_stage = 3 if swiglu else 2  # copies per K block
    loop = scf.ForOp(c[0], nk, c[1], [zero.result] * (1 + swiglu))
    with ir.InsertionPoint(loop.body):
        i = loop.induction_variable
        nxt = arith.AddIOp(i, c[stages - 1]).result
        more = arith.CmpIOp(arith.CmpIPredicate.slt, nxt, nk).result
        kn = arith.AddIOp(k_off, arith.MulIOp(nxt, c[bk]).result).result
        issue(kn, arith.RemSIOp(nxt, c[stages]).result, more)
        # Block i has landed once at most the copies of blocks i+1 .. i+S-1 are in flight.
        wait(per_stage * (stages - 1))
        slot = arith.RemSIOp(i, c[stages]).result
        at = operand("abuf", "ba_t", slot, a_trans, a_t)
        bt = operand("bbuf", "bb_t", slot, b_trans, b_t)
        if step is None:
            accs = [WmmaOp(at, bt, loop.inner_iter_args[0], acc_t).result]
        else:  # the recipe's step reads the block's K offset (block128: its scales)
            ki = arith.AddIOp(k_off, arith.MulIOp(i, c[bk]).result).result
            accs = [step(at, bt, loop.inner_iter_args[0], ki)]
        if swiglu:  # A read again: each MMA its own load (wgmma reads shared memory)
            at2 = operand("abuf", "ba_t", slot, a_trans, a_t)
            ut = operand("ubuf", "bb_t", slot, b_trans, b_t)
            accs.append(WmmaOp(at2, ut, loop.inner_iter_args[1], acc_t).result)
        scf.YieldOp(accs)
    wait(0)
    if swiglu:
        ScheduleYieldOp(list(loop.results))
        return
    acc = loop.results[0]
    ScheduleYieldOp([epilogue(acc) if epilogue else acc])


__all__ = ["build_gemm_module", "ring_depth"]
