"""The kernel ABI of the schedule GEMMs: arguments, block shapes, facts and specs.

What a compiled schedule kernel takes and assumes, shared by the kernel
builder (:mod:`gemm_opt.kernels.schedule_gemm`), the bundles and the runtime
that launches them: the argument list of each form (:func:`kernel_args`),
the block shapes the kernels are built for (:func:`check_kernel_config`), the
divisibility facts an aligned or TMA kernel states (:func:`divisibility_facts`)
and the :class:`KernelSpec` that names one binary. Pure Python: no MLIR.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gemm_opt.core.modes import (
    ACTIVATIONS,
    FP8_KINDS,
    GROUPED,
    GROUPED_KINDS,
    SCALES,
    SWIGLU_KINDS,
    Activation,
    Grouped,
    Kind,
    Reduction,
    Scale,
)
from gemm_opt.core.schedules.partition import (
    check_positive,
    needs_partials,
    needs_sync,
    resolve_reduction,
)
from gemm_opt.core.targets import VECTOR_BYTES

#: Element types of the schedule kernels (A, B and C) by name, with the
#: numpy/torch dtype name of each.
DTYPES: dict[str, str] = {"fp16": "float16", "bf16": "bfloat16"}
#: 8-bit element types of the FP8 schedule kernels (A and B) by name, with the
#: torch dtype name of each (numpy: the ml_dtypes type of that name).
FP8_DTYPES: dict[str, str] = {"f8e4m3": "float8_e4m3fn", "f8e5m2": "float8_e5m2"}
#: C's element type of an FP8 kernel by name (the first is the default), with
#: the numpy/torch dtype name of each.
FP8_OUT_DTYPES: dict[str, str] = {"bf16": "bfloat16", "fp32": "float32"}
#: K of the 8-bit MMA instruction: an FP8 kernel's ``block_k`` is a multiple of it.
FP8_MMA_K = 64
#: The scale arguments an FP8 kernel with a :class:`~gemm_opt.core.modes.Scale`
#: other than ``none`` takes, last: fp32 pointers, one element each
#: (tensorwise), ``scale_a`` M and ``scale_b`` N elements (rowwise), or
#: ``scale_a`` (Kb, M) and ``scale_b`` (Kb, N) (block128, Kb = ceil(K/128): one
#: per row or column and K block; grouped "m": ``scale_b`` (G, Kb, N)).
SCALE_ARGS = ("scale_a", "scale_b")
#: ``block_k`` of a block128 kernel: the recipe's block (one scale per 128 of K).
FP8_BLOCK_K = 128
#: The wgmma K of an 8-bit instruction: ``imprecise_acc`` is a multiple of it.
FP8_INSTR_K = 32
#: K of the block-scaled (MXFP8) MMA instruction (16x16x128): an mx32 kernel's
#: ``block_k`` is a multiple of it.
FP8_MX_K = 128

#: Argument names of a schedule kernel, in order; the optional ones (after
#: ``ldc``) only where :func:`kernel_args` says. ``a``, ``b``, ``c`` row-major
#: operands with leading dimensions ``lda``, ``ldb``, ``ldc`` (in elements);
#: ``group_lens`` (i32, ``num_groups`` entries) for grouped forms; ``sync``
#: (i32) and ``partials`` (f32) the workspace of
#: :func:`~gemm_opt.core.schedules.partition.workspace_layout`.
#: Dense: C (M x N) = A (M x K) @ B (K x N); with ``trans_a`` A is stored
#: K x M, with ``trans_b`` B is stored N x K (each ``ld`` is the stored row
#: stride). ``m``: A (M x K) with M = sum(group_lens) (or stored K x M with
#: trans_a), B (G x K x N) (or G x N x K with trans_b), C (M x N).
#: ``k``: A (K x M) and B (K x N) with K = sum(group_lens), C (G*M x N).
ARG_NAMES = (
    *("a", "b", "c", "M", "N", "K", "lda", "ldb", "ldc"),
    *("group_lens", "num_groups", "sync", "partials"),
)


#: C's element types of a 16-bit (fp16/bf16) kernel besides its input type: fp32
#: (a ``main_grad`` accumulated into, or an fp32 result).
OUT_DTYPES: dict[str, str] = {"fp32": "float32"}
#: Element types of an epilogue's bias, with the numpy/torch dtype name of each.
BIAS_DTYPES: dict[str, str] = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}
#: The epilogue's vector arguments, in order after every other argument.
EPILOGUE_ARGS = ("bias", "row_scale", "col_scale")


@dataclass(frozen=True)
class EpilogueSpec:
    """A schedule kernel's fused epilogue (``tile.gemm_schedule``'s, see
    :mod:`gemm_opt.dialect.schedule`): ``act(acc * row_scale[m] * col_scale[n] +
    bias[n])``, plus C's old value with ``accumulate``. ``bias`` is the bias's
    element type (:data:`BIAS_DTYPES`) or None; the scales are fp32 vectors."""

    activation: Activation = Activation.NONE
    bias: str | None = None
    accumulate: bool = False
    row_scale: bool = False
    col_scale: bool = False

    def __post_init__(self) -> None:
        if self.activation not in ACTIVATIONS:
            raise ValueError(
                f"activation must be one of {', '.join(ACTIVATIONS)}, got {self.activation!r}"
            )
        object.__setattr__(self, "activation", Activation(self.activation))
        if self.bias is not None and self.bias not in BIAS_DTYPES:
            raise ValueError(f"bias must be None or one of {tuple(BIAS_DTYPES)}, got {self.bias!r}")

    @property
    def empty(self) -> bool:
        return self == EpilogueSpec()

    @property
    def args(self) -> tuple[str, ...]:
        """Its arguments (:data:`EPILOGUE_ARGS` it has), in order."""
        have = (self.bias is not None, self.row_scale, self.col_scale)
        # Equivalent mutant: strict=False (three names, three flags).
        return tuple(n for n, h in zip(EPILOGUE_ARGS, have, strict=True) if h)

    @property
    def suffix(self) -> str:
        """Its part of a kernel's bundle name ("" when empty)."""
        parts = [] if self.activation == Activation.NONE else [self.activation.replace("-", "")]
        parts += [f"b{self.bias}"] if self.bias is not None else []
        parts += ["acc"] if self.accumulate else []
        parts += ["rs"] if self.row_scale else []
        parts += ["cs"] if self.col_scale else []
        return "".join(f"_{p}" for p in parts)


#: No epilogue: the sum rounded to C's type.
NO_EPILOGUE = EpilogueSpec()


def kernel_args(
    kind: str,
    reduction: str | None,
    grouped: str = Grouped.NONE,
    scale: str = Scale.NONE,
    epilogue: EpilogueSpec | None = None,
) -> tuple[str, ...]:
    """The argument names, in order, of the kernel of ``kind``, ``reduction``,
    ``grouped``, ``scale`` (an FP8 kernel's :data:`SCALE_ARGS`) and ``epilogue``
    (its :data:`EPILOGUE_ARGS`, last)."""
    names = list(ARG_NAMES[:9])
    if grouped != Grouped.NONE:
        names += ["group_lens", "num_groups"]
    if needs_sync(kind, reduction):
        names.append("sync")
    if needs_partials(kind, reduction):
        names.append("partials")
    if scale != Scale.NONE:
        names += SCALE_ARGS
    if epilogue is not None:
        names += epilogue.args
    return tuple(names)


def check_fp8_config(
    *,
    kind: str,
    grouped: str,
    trans_a: bool,
    trans_b: bool,
    block_k: int,
    scale: str,
    out_dtype: str,
    imprecise_acc: int | None = None,
) -> None:
    """ValueError, naming the argument, for an FP8 kernel that is not built.

    Built: dense, :data:`~gemm_opt.core.modes.FP8_KINDS` (every kind: where
    stream-K or split-K split a tile's K range, each program's fp32 partial is
    scaled before the reduction adds it, which the recipes' linearity allows),
    or grouped "m" (:data:`~gemm_opt.core.modes.GROUPED_KINDS`), A stored (M, K) and B stored
    (N, K) or (G, N, K) (``trans_b``; Hopper's 8-bit wgmma reads both operands
    K-major), ``block_k`` a multiple of :data:`FP8_MMA_K` (block128:
    :data:`FP8_BLOCK_K`; mx32: a multiple of :data:`FP8_MX_K`), C bf16 or fp32;
    ``imprecise_acc`` None or a positive multiple of :data:`FP8_INSTR_K`
    (block128: none, its MMAs take ``block_k``; mx32: none).
    """
    if kind not in FP8_KINDS:
        raise ValueError(f"kind {kind!r} has no FP8 kernel; built: {', '.join(FP8_KINDS)}")
    if grouped not in (Grouped.NONE, Grouped.M):
        raise ValueError(
            f"grouped {grouped!r} has no FP8 kernel; built: dense ('none') and grouped 'm'"
        )
    if grouped == Grouped.M and kind not in GROUPED_KINDS:
        raise ValueError(
            f"kind {kind!r} has no grouped FP8 kernel; built: {', '.join(GROUPED_KINDS)}"
        )
    if trans_a or not trans_b:
        raise ValueError(
            "FP8 kernels are built for A stored (M, K) and B stored (N, K) (trans_a=False, "
            f"trans_b=True; got trans_a={trans_a}, trans_b={trans_b}): Hopper's 8-bit wgmma "
            "reads both operands K-major"
        )
    if block_k % FP8_MMA_K:
        raise ValueError(
            f"block_k must be a multiple of {FP8_MMA_K} (the 8-bit MMA's K), got {block_k}"
        )
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {', '.join(SCALES)}, got {scale!r}")
    if scale == Scale.BLOCK128 and block_k != FP8_BLOCK_K:
        raise ValueError(
            f"block_k must be {FP8_BLOCK_K} for scale 'block128' (one scale per "
            f"{FP8_BLOCK_K} of K), got {block_k}"
        )
    if imprecise_acc is not None and (
        isinstance(imprecise_acc, bool)
        or not isinstance(imprecise_acc, int)
        # Equivalent mutant: <= 1 (1 is no multiple of FP8_INSTR_K either).
        or imprecise_acc <= 0
        or imprecise_acc % FP8_INSTR_K
    ):
        raise ValueError(
            f"imprecise_acc must be a positive multiple of {FP8_INSTR_K}, got {imprecise_acc!r}"
        )
    if scale == Scale.MX32 and block_k % FP8_MX_K:
        raise ValueError(
            f"block_k must be a multiple of {FP8_MX_K} for scale 'mx32' (the block-scaled "
            f"MMA's K), got {block_k}"
        )
    if imprecise_acc is not None and scale == Scale.MX32:
        raise ValueError("imprecise_acc is for Hopper's wgmma; mx32 runs the block-scaled MMA")
    if imprecise_acc is not None and scale == Scale.BLOCK128:
        raise ValueError(
            "imprecise_acc is for the epilogue recipes: block128's MMAs sum each "
            f"{FP8_BLOCK_K}-deep block from zero and promote it (their imprecise_acc is block_k)"
        )
    if out_dtype not in FP8_OUT_DTYPES:
        raise ValueError(
            f"out_dtype must be one of {', '.join(FP8_OUT_DTYPES)} for FP8, got {out_dtype!r}"
        )


#: K of the MMA instruction: ``block_k`` must be a multiple of it.
MMA_K = 32
#: Rows and columns of one warp's MMA tile.
MMA_M = MMA_N = 16


def warp_grid(
    num_warps: int, *, block_m: int | None = None, block_n: int | None = None
) -> tuple[int, int]:
    """(warps along M, warps along N) of a kernel's accumulator: as square as the
    warps allow, or, for a ``block_n`` too narrow for its columns of
    :data:`MMA_N`-wide MMAs (swap-AB's 16 or 32 rows of A on the N side), with
    the warps folded onto M until it splits (every warp still has MMA work);
    likewise onto N for a ``block_m`` too short for its rows (16-row tiles of
    tiny groups)."""
    check_positive("num_warps", num_warps)
    wm = 1
    while wm * wm < num_warps:
        wm *= 2
    wn = num_warps // wm
    if block_n is not None:
        while wn > 1 and block_n % (MMA_N * wn):
            wm, wn = wm * 2, wn // 2
    if block_m is not None:
        while wm > 1 and block_m % (MMA_M * wm) and (block_n or 0) % (MMA_N * wn * 2) == 0:
            wm, wn = wm // 2, wn * 2
    return wm, wn


#: Stages of the pipelined body: a ring of ``num_stages`` shared buffers per
#: operand, ``num_stages - 1`` K blocks in flight while one multiplies.
MIN_STAGES = 2
MAX_STAGES = 6


def pipelined(num_warps: int) -> bool:
    """Whether a kernel of ``num_warps`` warps has the pipelined body (a ring of
    2 or more stages: async copies of A and B by two halves of the warps), else
    the blocks body (1 stage). Every form has it, grouped ones included: an
    operand that lies transposed in memory (dgrad's B with ``trans_b``, wgrad's
    A) is copied as it lies and read through a transposed shared-memory view."""
    return num_warps >= 2


#: The rows of one wgmma (a warpgroup's): TMA writes the NVMMA shared layouts that
#: only wgmma reads, so a TMA twin's ``block_m`` is a multiple of it.
WGMMA_M = 64


def tma_copies(num_warps: int, block_m: int | None = None) -> bool:
    """Whether the kernel has a TMA twin (every pipelined kernel does; given
    ``block_m``, on cuda:90, whose TMA copies need the wgmma it takes whole
    :data:`WGMMA_M`-row blocks for: a 16-row tile multiplies with ``mma.sync``
    from its ``cp.async`` ring instead).

    A TMA descriptor bounds by the tensor's shape only, so each twin says why
    its copies need no other bound (:func:`gemm_opt.kernels.schedule_gemm._pipelined_body`):
    dense and grouped "m" K ranges end on a ``block_k`` boundary or at K;
    dgrad's B rows past a group's N reach only output columns past N, which
    the store drops. wgrad (grouped "k") is the exception: its K ranges end at
    group boundaries inside A and B, so its TMA twin makes the two
    descriptors of each group with ``k_end`` rows (one tensormap each, made
    once per group and program by the lowering's group loop, before the
    group's first copy), and a K block that straddles ``k_end`` reads the
    next group's rows as TMA's zero fill, as the aligned twin's masks do."""
    return pipelined(num_warps) and (block_m is None or block_m % WGMMA_M == 0)


def check_kernel_config(
    *,
    block_m: int,
    block_n: int,
    block_k: int,
    num_warps: int,
    num_stages: int | None,
) -> None:
    """ValueError, naming the argument, for a block shape the kernels are not built for."""
    if block_k % MMA_K:
        raise ValueError(f"block_k must be a multiple of {MMA_K} (the MMA's K), got {block_k}")
    wm, wn = warp_grid(num_warps, block_m=block_m, block_n=block_n)
    for name, value, warps, mma in (
        ("block_m", block_m, wm, MMA_M),
        ("block_n", block_n, wn, MMA_N),
    ):
        if value % (mma * warps):
            raise ValueError(
                f"{name} must be a multiple of {mma * warps} ({mma}-wide MMAs over {warps} "
                f"warps of the {wm}x{wn} warp grid of num_warps={num_warps}); the "
                f"{block_m}x{block_n} tile does not split over the warps; got {value}"
            )
    if num_stages is None:
        return
    if pipelined(num_warps):
        if not MIN_STAGES <= num_stages <= MAX_STAGES:
            raise ValueError(
                f"num_stages must be {MIN_STAGES} to {MAX_STAGES} (or None) for this kernel "
                f"(the pipelined body's ring of shared buffers), got {num_stages}"
            )
    elif num_stages != 1:
        raise ValueError(
            f"num_stages must be 1 (or None) for this kernel (the blocks body has 1 stage), "
            f"got {num_stages}"
        )


@dataclass(frozen=True)
class GemmConfig:
    """A kernel configuration: block shape, GROUP_M, warps and pipeline stages."""

    block_m: int = 128
    block_n: int = 128
    block_k: int = 64
    group_m: int = 8
    num_warps: int = 4
    #: Pipeline depth; None: the kernel body's own (2 for the pipelined body,
    #: 1 for the blocks body that loads each K block when it uses it).
    num_stages: int | None = None


#: The configuration the model runs by default (small blocks: quick to interpret).
MODEL_CONFIG = GemmConfig(64, 64, 32, 4, 4)
#: Arguments an aligned kernel states ``tile.divisibility`` facts on: the
#: leading dimensions, and N and K (the bounds that mask each copy's rows, so
#: a mask covers whole 16-byte vectors; K only where an operand's rows run along
#: it, :func:`aligned_args`). Pointers are 16-byte aligned always.
ALIGNED_ARGS = ("N", "K", "lda", "ldb", "ldc")
#: The alignment, in bytes, an aligned kernel assumes of every row start and
#: copy bound: the widest vector copy's (16-byte ``cp.async``, TMA strides,
#: gfx950's direct-to-LDS loads).
ALIGNMENT_BYTES = VECTOR_BYTES
#: Bytes of one element of each :data:`DTYPES` type.
DTYPE_BYTES: dict[str, int] = {"fp16": 2, "bf16": 2, **dict.fromkeys(FP8_DTYPES, 1)}


#: The copy vector widths, in bytes, an aligned kernel may be built for
#: (``cp.async`` moves 16, 8 or 4): 16 is the aligned and TMA twins'; 8 and 4
#: are the narrow twins' (no TMA: its strides are multiples of 16 bytes), for
#: sizes a multiple of 4 or 2 elements of a 16-bit type but not of 8.
VECTOR_WIDTHS = (ALIGNMENT_BYTES, 8, 4)


def alignment(dtype: str, vector_bytes: int = ALIGNMENT_BYTES) -> int:
    """The divisibility, in elements of ``dtype``, an aligned kernel of copy vectors
    of ``vector_bytes`` assumes of :func:`aligned_args`: the vector over the element
    size (16 bytes: 8 elements of a 16-bit type, 16 of an 8-bit one)."""
    if dtype not in DTYPE_BYTES:
        raise ValueError(f"dtype must be one of {tuple(DTYPE_BYTES)}, got {dtype!r}")
    # Equivalent mutant: <= (every width is 4 bytes or more, every element 2 or less).
    if vector_bytes not in VECTOR_WIDTHS or vector_bytes < DTYPE_BYTES[dtype]:
        raise ValueError(
            f"vector_bytes must be one of {VECTOR_WIDTHS} and at least one {dtype} "
            f"element, got {vector_bytes!r}"
        )
    return vector_bytes // DTYPE_BYTES[dtype]


def aligned_args(
    grouped: str, trans_a: bool = False, trans_b: bool = False, trans_c: bool = False
) -> tuple[str, ...]:
    """The arguments an aligned kernel of ``grouped`` states facts on:
    :data:`ALIGNED_ARGS`, and M where A lies transposed (grouped "k"'s (S, M)
    A, ``trans_a``'s (K, M) one): it is copied as it lies, so its copy rows
    run along M. With ``trans_c`` the stored rows of C run along M too (M
    stated), and where B also lies transposed nothing runs along N, which is
    then left free: swap-AB's N is the token count, any number. Likewise K
    where neither operand's rows run along it (A stored (K, M) or (S, M) and B
    (K, N)): K then only bounds whole rows, so wgrad's K, the routed token
    count, may be any number."""
    a_along_k = not (grouped == Grouped.K or trans_a)
    names = ALIGNED_ARGS
    if trans_c and trans_b:
        names = tuple(n for n in names if n != "N")
    if not (a_along_k or trans_b):
        names = tuple(n for n in names if n != "K")
    if not a_along_k or trans_c:
        names = (*names, "M")
    return names


def divisibility_facts(
    grouped: str,
    trans_b: bool,
    block_k: int,
    aligned: bool,
    tma: bool,
    trans_a: bool = False,
    *,
    dtype: str,
    vector_bytes: int = ALIGNMENT_BYTES,
    trans_c: bool = False,
) -> dict[str, int]:
    """The ``tile.divisibility`` facts a schedule kernel states on its arguments, by
    name: none for a plain kernel; :func:`alignment` of ``dtype`` and ``vector_bytes``
    on :func:`aligned_args` for an aligned one; and for a TMA twin of grouped "m" with
    row-major B, K a multiple of ``block_k`` too (B's rows are ``g*K + k``: a K
    block never reaches the next group's weights, which TMA's shape-only bounds
    would not stop; ``block_k`` is a multiple of :data:`MMA_K`, so of the
    alignment)."""
    if not aligned:
        return {}
    align = alignment(dtype, vector_bytes)
    facts = {name: align for name in aligned_args(grouped, trans_a, trans_b, trans_c)}
    if tma and grouped == Grouped.M and not trans_b:
        facts["K"] = math.lcm(align, block_k)
    return facts


def check_epilogue(epilogue: EpilogueSpec, kind: str, reduction: str | None, grouped: str) -> None:
    """ValueError for an epilogue the schedule op refuses (its verifier's rules,
    stated before any IR is built): no activation with atomic stream-K (no
    program holds a split tile's sum); wgrad (grouped "k") only accumulates."""
    if not isinstance(epilogue, EpilogueSpec):
        raise TypeError(f"epilogue must be an EpilogueSpec, got {type(epilogue).__name__}")
    if epilogue.activation != Activation.NONE and reduction == Reduction.ATOMIC:
        raise ValueError(
            f"activation {epilogue.activation!r} needs each tile's finished sum in one "
            "program; atomic stream-K adds partials into C (use reduction 'linear' or 'tree')"
        )
    if epilogue.activation == Activation.SWIGLU and kind not in SWIGLU_KINDS:
        raise ValueError(
            f"activation 'swiglu' needs each tile's two sums in one program: schedule "
            f"{', '.join(map(repr, SWIGLU_KINDS))}, not {kind!r}"
        )
    if epilogue.activation == Activation.SWIGLU and epilogue.col_scale:
        raise ValueError("activation 'swiglu' takes no col_scale")
    if grouped == Grouped.K and (epilogue.activation != Activation.NONE or epilogue.args):
        raise ValueError(
            "grouped 'k' (wgrad, one output per group) takes no activation, bias or "
            "scales; only accumulate"
        )


@dataclass(frozen=True)
class KernelSpec:
    """Everything that changes a schedule kernel's binary; ``name`` is its bundle name."""

    kind: Kind
    reduction: Reduction | None
    grouped: Grouped
    dtype: str
    block_m: int
    block_n: int
    block_k: int
    group_m: int
    num_warps: int
    num_stages: int | None
    #: Work stealing's chiplets (one counter each); the other kinds claim no
    #: tiles, so their kernels have none: taken as 1 (the machine's chiplet
    #: count a caller passes whatever the kind does not change their binary).
    num_xcds: int = 1
    #: B stored (N, K) (grouped "m": (G, N, K)), read through a transposed view.
    trans_b: bool = False
    #: Compiled assuming :func:`aligned_args` are multiples of :func:`alignment`
    #: (16-byte rows and copy bounds: direct 16-byte ``cp.async`` copies on
    #: cuda:90); the runtime launches it only for arguments that are.
    aligned: bool = False
    #: Compiled with TMA copies (cuda:90's ``lds-copies=tma``; an aligned kernel
    #: whose copies are bounded by the tensors' shapes, wgrad's by per-group
    #: descriptors that end at the group's K end; grouped "m" also assumes K a
    #: multiple of ``block_k``); the runtime launches it only for arguments
    #: that satisfy its facts.
    tma: bool = False
    #: A stored (K, M) (a column-major (M, K) operand), read through a transposed
    #: view; dense and grouped "m" only, like ``trans_b`` (grouped "k" reads its
    #: A transposed already). After the fields above, so that positional specs
    #: keep their meaning.
    trans_a: bool = False
    #: An aligned kernel's copy vector, in bytes (:data:`VECTOR_WIDTHS`): its facts
    #: are this many bytes in elements (:func:`alignment`); below 16 a narrow twin
    #: (``cp.async`` of 8 or 4 bytes, no TMA).
    vector_bytes: int = ALIGNMENT_BYTES
    #: FP8 kernels (``dtype`` in :data:`FP8_DTYPES`): how the epilogue scales the
    #: accumulator (:class:`~gemm_opt.core.modes.Scale`); ``none`` otherwise.
    scale: Scale = Scale.NONE
    #: C's element type: None for fp16/bf16 (C is ``dtype``) or one of
    #: :data:`OUT_DTYPES`; FP8 kernels one of :data:`FP8_OUT_DTYPES` (None: bf16).
    out_dtype: str | None = None
    #: The fused epilogue; None is taken as :data:`NO_EPILOGUE` (a None default, not a
    #: shared instance, so that torch.compile traces a spec made without one).
    epilogue: EpilogueSpec = None  # type: ignore[assignment]
    #: C written transposed: the kernel's ``M x N`` output stored column-major
    #: through ``ldc`` (:class:`~gemm_opt.core.modes.CLayout`), dense only. Swap-AB
    #: launches it on ``C^T = B^T A^T`` (A and B exchanged, each read as it lies
    #: through ``trans_a`` / ``trans_b``), so C comes out row-major.
    trans_c: bool = False
    #: FP8 kernels: K elements the tensor core sums in its own accumulator before
    #: each fp32 add (``tile.imprecise_acc``); None: one instruction's K.
    imprecise_acc: int | None = None

    def __post_init__(self) -> None:
        reduction = resolve_reduction(self.kind, self.reduction)
        if self.kind == Kind.STREAM_K and self.reduction is None:
            raise ValueError("a stream-K kernel names its reduction")
        if self.grouped not in GROUPED:
            raise ValueError(f"grouped must be one of {GROUPED}, got {self.grouped!r}")
        # The modes as enums, whichever form the caller gave (equal either way).
        object.__setattr__(self, "kind", Kind(self.kind))
        object.__setattr__(self, "reduction", reduction)
        object.__setattr__(self, "grouped", Grouped(self.grouped))
        if self.kind != Kind.WORK_STEALING:
            check_positive("num_xcds", self.num_xcds)
            object.__setattr__(self, "num_xcds", 1)
        if self.dtype in FP8_DTYPES:
            out = self.out_dtype if self.out_dtype is not None else next(iter(FP8_OUT_DTYPES))
            check_fp8_config(
                kind=self.kind,
                grouped=self.grouped,
                trans_a=self.trans_a,
                trans_b=self.trans_b,
                block_k=self.block_k,
                scale=self.scale,
                out_dtype=out,
                imprecise_acc=self.imprecise_acc,
            )
            object.__setattr__(self, "scale", Scale(self.scale))
            object.__setattr__(self, "out_dtype", out)
        elif self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {(*DTYPES, *FP8_DTYPES)}, got {self.dtype!r}")
        elif self.scale != Scale.NONE or self.imprecise_acc is not None:
            raise ValueError("scale and imprecise_acc are for FP8 kernels (dtype f8e4m3 or f8e5m2)")
        elif self.out_dtype is not None and self.out_dtype not in OUT_DTYPES:
            raise ValueError(
                f"out_dtype must be None (C is {self.dtype}) or one of {tuple(OUT_DTYPES)}, "
                f"got {self.out_dtype!r}"
            )
        if self.epilogue is None:
            object.__setattr__(self, "epilogue", NO_EPILOGUE)
        if self.dtype in FP8_DTYPES and self.epilogue != NO_EPILOGUE:
            raise ValueError(
                "FP8 kernels take no fused epilogue (their epilogue applies the scales)"
            )
        check_epilogue(self.epilogue, self.kind, self.reduction, self.grouped)
        for name in ("block_m", "block_n", "block_k", "group_m", "num_warps"):
            check_positive(name, getattr(self, name))
        if self.num_stages is not None:
            check_positive("num_stages", self.num_stages)
        check_positive("num_xcds", self.num_xcds)
        if self.tma and not (self.aligned and tma_copies(self.num_warps)):
            raise ValueError("a TMA kernel is aligned and has the pipelined body")
        alignment(self.dtype, self.vector_bytes)
        if self.vector_bytes != ALIGNMENT_BYTES and (self.tma or not self.aligned):
            raise ValueError(
                f"vector_bytes={self.vector_bytes} is for an aligned kernel without TMA "
                f"(TMA strides are multiples of {ALIGNMENT_BYTES} bytes)"
            )
        if (self.trans_a or self.trans_b) and self.grouped == Grouped.K:
            raise ValueError("trans_a and trans_b are for grouped 'none' or 'm'")
        if self.trans_c and (self.grouped != Grouped.NONE or self.dtype in FP8_DTYPES):
            raise ValueError("trans_c is for dense 16-bit kernels (grouped 'none')")
        if self.trans_c and self.epilogue != NO_EPILOGUE:
            # the epilogue's bias and scales run along the kernel's N, which swap-AB
            # (the one user of trans_c) exchanges with the call's M
            raise ValueError("trans_c kernels take no fused epilogue")

    @property
    def name(self) -> str:
        red = f"_{self.reduction}" if self.reduction else ""
        grp = "" if self.grouped == Grouped.NONE else f"_grouped{self.grouped}"
        tb = ("_ta" if self.trans_a else "") + ("_tb" if self.trans_b else "")
        tb += "_tc" if self.trans_c else ""
        xcd = f"_x{self.num_xcds}" if self.num_xcds != 1 else ""
        stages = f"_s{self.num_stages}" if self.num_stages is not None else ""
        al = "_aligned" if self.aligned else ""
        al += "_tma" if self.tma else ""
        al += f"_v{self.vector_bytes}" if self.vector_bytes != ALIGNMENT_BYTES else ""
        # FP8: the recipe, and C's type where it is not the default bf16.
        fp8 = "" if self.scale == Scale.NONE else f"_{self.scale}"
        fp8 += "_of32" if self.out_dtype == "fp32" else ""
        fp8 += self.epilogue.suffix
        fp8 += f"_ia{self.imprecise_acc}" if self.imprecise_acc is not None else ""
        return (
            f"gemm_{self.kind.replace('-', '')}{red}{grp}{tb}_{self.dtype}{fp8}_"
            f"{self.block_m}x{self.block_n}x{self.block_k}_g{self.group_m}"
            f"_w{self.num_warps}{stages}{xcd}{al}"
        )

    @property
    def arg_names(self) -> tuple[str, ...]:
        return kernel_args(self.kind, self.reduction, self.grouped, self.scale, self.epilogue)

    @property
    def facts(self) -> dict[str, int]:
        """The divisibility facts its kernel states (:func:`divisibility_facts`)."""
        return divisibility_facts(
            self.grouped,
            self.trans_b,
            self.block_k,
            self.aligned,
            self.tma,
            self.trans_a,
            dtype=self.dtype,
            vector_bytes=self.vector_bytes,
            trans_c=self.trans_c,
        )


__all__ = [
    "ALIGNED_ARGS",
    "ALIGNMENT_BYTES",
    "ARG_NAMES",
    "BIAS_DTYPES",
    "DTYPES",
    "DTYPE_BYTES",
    "EPILOGUE_ARGS",
    "FP8_BLOCK_K",
    "FP8_DTYPES",
    "FP8_INSTR_K",
    "FP8_MMA_K",
    "FP8_MX_K",
    "FP8_OUT_DTYPES",
    "MAX_STAGES",
    "MIN_STAGES",
    "MMA_K",
    "MMA_M",
    "MMA_N",
    "MODEL_CONFIG",
    "NO_EPILOGUE",
    "OUT_DTYPES",
    "SCALE_ARGS",
    "VECTOR_WIDTHS",
    "WGMMA_M",
    "EpilogueSpec",
    "GemmConfig",
    "KernelSpec",
    "aligned_args",
    "alignment",
    "check_epilogue",
    "check_fp8_config",
    "check_kernel_config",
    "divisibility_facts",
    "kernel_args",
    "pipelined",
    "tma_copies",
    "warp_grid",
]
