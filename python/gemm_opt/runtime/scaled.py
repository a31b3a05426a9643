"""The plan of a scaled FP8 GEMM: ``C = (A x scale_a) @ (B x scale_b)``.

Checks a call of :func:`gemm_opt.matmul` with ``scale_a``/``scale_b`` and
picks its kernel, as :mod:`gemm_opt.runtime.plan` does for fp16/bf16: the
operands are 2-D float8 (torch ``float8_e4m3fn``/``float8_e5m2``, numpy the
ml_dtypes types of the same names), A row-major (M, K) and B the transposed
view of a row-major (N, K) tensor (``w.t()``: ``torch._scaled_mm``'s and
``nn.Linear``'s layout; Hopper's 8-bit wgmma reads both operands K-major, so
no other layout has a kernel). The recipe follows from the scale shapes, as
``torch._scaled_mm`` reads them (:func:`gemm_opt.core.scaling.recipe_of`):
0-d or (1, 1) tensorwise, (M, 1) and (1, N) rowwise, (M, ceil(K/128)) and
(ceil(K/128), ceil(N/128)) block128; scales are float32 and lie where the
operands do. e8m0 scales (torch ``float8_e8m0fnu``, ml_dtypes of that name) of
(M, K/32) and (K/32, N) are mx32 (MXFP8), which runs ``tile.scaled_wmma`` on the
model (targets with a block-scaled MMA: gfx1250, gfx950; Hopper has none, so a
CUDA call is refused). C is bfloat16 (or float32), row-major (M, N).

Imports only the standard library and :mod:`gemm_opt.core` at import time;
torch (CUDA launch) and numpy are imported where used.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Any

from gemm_opt.core import schedules as S
from gemm_opt.core.modes import FP8_KINDS, Grouped, Kind, Reduction, Scale
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.runtime import plan as P

#: The framework dtype name of each FP8 kernel dtype, reversed: "float8_e4m3fn" -> "f8e4m3".
_FP8 = {framework: name for name, framework in S.FP8_DTYPES.items()}
#: ``out_dtype`` names the API takes (framework names), to the kernel's C type.
OUT_DTYPES = {framework: name for name, framework in S.FP8_OUT_DTYPES.items()}
#: The default ``out_dtype``.
DEFAULT_OUT = "bfloat16"
#: The configuration the model runs FP8 kernels with (small blocks: quick to interpret).
MODEL_FP8_CONFIG = S.GemmConfig(64, 64, 64, 4, 4)
#: The model's block128 configuration (``block_k`` is the recipe's block).
MODEL_BLOCK128_CONFIG = S.GemmConfig(64, 64, S.FP8_BLOCK_K, 4, 4)
#: The model's mx32 configuration (``block_k`` the block-scaled MMA's K).
MODEL_MX32_CONFIG = S.GemmConfig(64, 64, S.FP8_MX_K, 4, 4)
#: The largest index a block128 kernel forms into its scales, ceil(K/128) * max(M, N),
#: is an i32 (its scale offsets are).
_I32_MAX = 2**31 - 1


@dataclass(frozen=True)
class ScaledPlan:
    """The checked call: its kernel, backend, sizes, leading dimensions and grid."""

    spec: S.KernelSpec
    backend: str
    m: int
    n: int
    k: int
    lda: int
    ldb: int
    #: The torch/numpy dtype name of C.
    out_dtype: str
    #: Programs launched (data-parallel: one per tile).
    grid: int
    #: Programs that run at once on the model (its interleaving); on the GPU, the grid.
    programs: int
    seed: int | None = None
    #: Grouped: G, the host lengths (None where they stay on the device) and the
    #: tiles the persistent grid walks (a bound where the lengths are not read).
    groups: int | None = None
    lens: tuple[int, ...] | None = None
    tiles: int | None = None
    #: What the GPU path makes once per plan and reuses (:func:`launch`): the prepared
    #: launch, the host lengths on the device.
    made: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def recipe(self) -> Scale:
        return self.spec.scale

    @property
    def layout(self) -> S.WorkspaceLayout:
        """The launch's workspace (stream-K and split-K partials, counters, flags) and
        whether C is zeroed first (atomic stream-K adds into it)."""
        spec = self.spec
        return S.workspace_layout(
            spec.kind, spec.reduction, max(self.grid, 1), spec.num_xcds, spec.block_m,
            spec.block_n,
        )  # fmt: skip

    @property
    def out_shape(self) -> tuple[int, int]:
        return (self.m, self.n)


def _dtype_name(x: Any) -> str:
    return str(x.dtype).removeprefix("torch.")


def _recipe(
    scale_a: Any, scale_b: Any, backend: str, *, m: int, n: int, k: int, groups: int | None = None
) -> Scale:
    """The recipe of the call's scales (their dtype, then their shapes:
    :func:`gemm_opt.core.scaling.recipe_of`), or TypeError/ValueError naming the
    scale; mx32 on CUDA tensors is refused (Hopper has no block-scaled MMA)."""
    from gemm_opt.core.scaling import recipe_of, scale_type

    for name, s in (("scale_a", scale_a), ("scale_b", scale_b)):
        if not hasattr(s, "shape") or not hasattr(s, "dtype"):
            raise TypeError(f"{name}: expected a float32 tensor or array, got {type(s).__name__}")
    st = scale_type(scale_a.dtype, "scale_a")
    if scale_type(scale_b.dtype, "scale_b") != st:
        raise TypeError(
            f"scale_b: expected {_dtype_name(scale_a)} scales like scale_a (one recipe "
            f"scales both operands), got {_dtype_name(scale_b)}"
        )
    shapes = tuple(scale_a.shape), tuple(scale_b.shape)
    recipe = recipe_of(*shapes, m=m, n=n, k=k, groups=groups, scale_type=st)
    scale = Scale(recipe.value)
    if scale == Scale.MX32 and backend == "cuda":
        raise ValueError(
            f"scale_a: e8m0 scales of shapes {shapes[0]}, {shapes[1]} are the mx32 (MXFP8) "
            f"recipe, which needs a block-scaled MMA (gfx1250, gfx950): cuda:90 (Hopper) has "
            f"none. Run it on the model (numpy arrays or CPU tensors), or quantize with "
            f"rowwise or block128 float32 scales"
        )
    return scale


def _operands(a: Any, b: Any) -> tuple[str, str, Any]:
    """The backend, FP8 format and device the two operands share (the dense and the
    grouped plans check them alike), or TypeError/ValueError naming ``b``."""
    backend = P.kind_of(a, "a")
    if P.kind_of(b, "b") != backend:
        raise ValueError(f"b: expected the operands in one place, got a on {backend}")
    da, db = _fp8_dtype(a, "a"), _fp8_dtype(b, "b")
    if da != db:
        raise TypeError(
            f"b: expected {S.FP8_DTYPES[da]} like a (the kernels take one format for both), "
            f"got {S.FP8_DTYPES[db]}"
        )
    device = getattr(a, "device", None)
    if backend == "cuda" and b.device != device:
        raise ValueError(f"b: expected a tensor on {device} (a's), got {b.device}")
    return backend, da, device


def _fp8_dtype(x: Any, name: str) -> str:
    dt = _dtype_name(x)
    if dt not in _FP8:
        raise TypeError(
            f"{name}: a scaled GEMM takes float8 elements ({', '.join(_FP8)}), got {dt}"
            + (" (numpy: ml_dtypes.float8_e4m3fn arrays)" if dt.startswith("uint8") else "")
        )
    return _FP8[dt]


def _out_dtype(out_dtype: Any) -> str:
    if out_dtype is None:
        return DEFAULT_OUT
    name = str(out_dtype).removeprefix("torch.")
    if name not in OUT_DTYPES:
        raise ValueError(
            f"out_dtype: a scaled GEMM writes {', '.join(OUT_DTYPES)} (None: {DEFAULT_OUT}), "
            f"got {out_dtype!r}"
        )
    return name


def _check_layouts(a: Any, b: Any) -> tuple[int, int, int, int, int]:
    """(M, N, K, lda, ldb) of A (M, K) row-major and B (K, N) the view of an (N, K) one."""
    for name, x in (("a", a), ("b", b)):
        if len(tuple(x.shape)) != 2:
            raise ValueError(
                f"{name}: a scaled GEMM takes 2-D operands (no batch), got shape {tuple(x.shape)}"
            )
    (m, k), (kb, n) = tuple(a.shape), tuple(b.shape)
    if kb != k:
        raise ValueError(f"b: expected {k} rows (a's K), got shape {(kb, n)}")
    sa, sb = P.element_strides(a, "a"), P.element_strides(b, "b")
    if not (sa[1] == 1 or k <= 1) or (sa[0] < max(k, 1) and m > 1):
        raise ValueError(
            f"a: a scaled GEMM takes A row-major (M, K) with unit stride along K (Hopper's "
            f"8-bit wgmma reads both operands K-major), got strides {sa}"
        )
    if not (sb[0] == 1 or k <= 1) or (sb[1] < max(k, 1) and n > 1):
        raise ValueError(
            f"b: a scaled GEMM takes B as the transposed view of a row-major (N, K) tensor "
            f"(b = w.t(), strides (1, ldb)); got a {'row' if sb[1] == 1 else 'other'}-major "
            f"layout with strides {sb}: Hopper's 8-bit wgmma reads both operands K-major, "
            f"as torch._scaled_mm does"
        )
    return m, n, k, max(sa[0], k, 1), max(sb[1], k, 1)


def _check_scale(
    x: Any, name: str, backend: str, device: Any, vector: int, axis: int | None, mx: bool = False
) -> None:
    """``x`` a float32 (``mx``: float8_e8m0fnu) tensor/array of the operands' framework
    and device; a rowwise scale (``vector`` > 1 along ``axis``) with unit stride along
    it (block128 and mx32: any strides, ``axis`` None; :func:`kernel_scales` lays them
    out)."""
    if backend == "numpy":
        if type(x).__module__.split(".")[0] != "numpy" or not hasattr(x, "shape"):
            raise TypeError(
                f"{name}: the operands are numpy arrays, so is the scale; got "
                f"{type(x).__module__}.{type(x).__name__}"
            )
    elif not P.is_torch_tensor(x):
        raise TypeError(
            f"{name}: the operands are torch tensors, so is the scale; got "
            f"{type(x).__module__}.{type(x).__name__}"
        )
    elif x.device != device:
        raise ValueError(f"{name}: expected a tensor on {device} (the operands'), got {x.device}")
    want = "float8_e8m0fnu" if mx else "float32"
    if _dtype_name(x) != want:
        raise TypeError(f"{name}: expected {want} scales, got {_dtype_name(x)}")
    if axis is not None and vector > 1 and P.element_strides(x, name)[axis] != 1:
        raise ValueError(
            f"{name}: a rowwise scale has unit stride along its {vector} entries, got strides "
            f"{P.element_strides(x, name)}"
        )


def _tma_only_call(dtype: str, scale: Scale, out: str, grouped: Grouped, **ints: int) -> bool:
    """Whether a GPU call suits the kernels of
    :data:`~gemm_opt.kernels.h100_configs.FP8_TMA_CONFIGS`, bundled as TMA twins
    alone: a recipe and C type they are built for, M, N and K of at least 1 (a
    TMA descriptor's least dimension) and ``ints`` (M, N, K, lda, ldb, ldc)
    satisfying the twin's divisibility facts, which its launch checks (the
    pointers' 16 bytes are every FP8 kernel's facts)."""
    if scale not in h100.FP8_TMA_SCALES or OUT_DTYPES[out] != h100.FP8_TMA_OUT:
        return False
    if min(ints["M"], ints["N"], ints["K"]) < 1:
        return False
    return all(
        ints[name] % d == 0
        for cfg in h100.FP8_TMA_CONFIGS.values()
        for name, d in S.divisibility_facts(
            grouped, True, cfg.block_k, True, True, dtype=dtype
        ).items()
    )


def _config(
    m: int, n: int, backend: str, config: Any, scale: Scale, tma_only: bool = False
) -> S.GemmConfig:
    """The call's configuration: ``config`` checked, else the model's, else on the
    GPU the shape class's (:func:`~gemm_opt.kernels.h100_configs.fp8_config_name`;
    ``tma_only``: :func:`_tma_only_call`)."""
    block128, mx = scale == Scale.BLOCK128, scale == Scale.MX32
    model = MODEL_BLOCK128_CONFIG if block128 else MODEL_MX32_CONFIG if mx else MODEL_FP8_CONFIG
    if config is not None:
        default = h100.FP8_GPU_CONFIGS["mid"] if backend == "cuda" else model
        cfg = P.check_config(config, default)
        if backend == "cuda" and cfg in h100.FP8_TMA_CONFIGS.values() and not tma_only:
            raise ValueError(
                f"config: {cfg.block_m}x{cfg.block_n} runs as a TMA kernel only: "
                f"{' or '.join(h100.FP8_TMA_SCALES)} scales, {h100.FP8_TMA_OUT} C, schedule "
                f"{' or '.join(h100.FP8_TMA_KINDS)} (grouped: persistent), and N, K and the "
                f"leading dimensions multiples of {S.alignment('f8e4m3')}"
            )
        if cfg.block_k % S.FP8_MMA_K:
            raise ValueError(
                f"config: block_k must be a multiple of {S.FP8_MMA_K} for FP8 (the 8-bit "
                f"MMA's K), got {cfg.block_k}"
            )
        if block128 and cfg.block_k != S.FP8_BLOCK_K:
            raise ValueError(
                f"config: block_k must be {S.FP8_BLOCK_K} for block128 scales (one scale "
                f"per {S.FP8_BLOCK_K} of K), got {cfg.block_k}"
            )
        if mx and cfg.block_k % S.FP8_MX_K:
            raise ValueError(
                f"config: block_k must be a multiple of {S.FP8_MX_K} for mx32 scales (the "
                f"block-scaled MMA's K), got {cfg.block_k}"
            )
        return cfg
    if backend != "cuda":
        return model
    name = h100.fp8_config_name(m, n, tma_only=tma_only)
    return {**h100.FP8_GPU_CONFIGS, **h100.FP8_TMA_CONFIGS}[name]


def scaled_plan(
    a: Any,
    b: Any,
    scale_a: Any,
    scale_b: Any,
    *,
    out_dtype: Any = None,
    schedule: str = "data-parallel",
    reduction: str | None = None,
    num_programs: int | None = None,
    num_xcds: int = 1,
    config: Any = None,
    seed: int | None = None,
    meta: bool = False,
) -> ScaledPlan:
    """The :class:`ScaledPlan` of a call, or TypeError/ValueError naming the argument.

    ``schedule`` any of :data:`~gemm_opt.core.modes.FP8_KINDS` with the 16-bit
    plans' rules: ``reduction`` for stream-K only (default linear), ``num_xcds``
    work stealing's chiplets, linear and tree stream-K on the GPU at most the
    resident programs (their fix-ups wait on each other), the programs bounded
    by the work (:func:`~gemm_opt.runtime.plan.spec_work_programs`).
    ``meta``: checks only (fake tensors: the GPU's resident programs are not read)."""
    backend, da, device = _operands(a, b)
    out = _out_dtype(out_dtype)
    if schedule not in FP8_KINDS:
        raise ValueError(f"schedule: a scaled GEMM runs {', '.join(FP8_KINDS)}, got {schedule!r}")
    if reduction is not None and not isinstance(reduction, str):
        raise TypeError(f"reduction: expected a string or None, got {type(reduction).__name__}")
    reduction = S.resolve_reduction(schedule, reduction)
    P._check_deterministic(schedule, reduction)  # atomic stream-K's bits vary run to run
    xcds = P._positive_int(num_xcds, "num_xcds", P.MAX_PROGRAMS)
    from gemm_opt.core.scaling import MX_BLOCK

    m, n, k, lda, ldb = _check_layouts(a, b)
    scale = _recipe(scale_a, scale_b, backend, m=m, n=n, k=k)
    rowwise, block128, mx = (scale == s for s in (Scale.ROWWISE, Scale.BLOCK128, Scale.MX32))
    axes = (None, None) if block128 or mx else (0, -1)
    _check_scale(scale_a, "scale_a", backend, device, m if rowwise else 1, axes[0], mx)
    _check_scale(scale_b, "scale_b", backend, device, n if rowwise else 1, axes[1], mx)
    if block128 and S.cdiv(k, S.FP8_BLOCK_K) * max(m, n) > _I32_MAX:
        raise ValueError(
            f"a: block128 scales index ceil(K/{S.FP8_BLOCK_K}) x max(M, N) entries as i32; "
            f"M={m}, N={n}, K={k} is past {_I32_MAX}"
        )
    if mx and k // MX_BLOCK * max(m, n) > _I32_MAX:
        raise ValueError(
            f"a: mx32 scales index K/{MX_BLOCK} x max(M, N) entries as i32; M={m}, N={n}, "
            f"K={k} is past {_I32_MAX}"
        )
    tma_only = _tma_only_call(da, scale, out, Grouped.NONE, M=m, N=n, K=k, lda=lda, ldb=ldb, ldc=n)
    cfg = _config(m, n, backend, config, scale, tma_only and schedule in h100.FP8_TMA_KINDS)
    spec = scaled_spec(
        schedule, da, cfg, scale, out, gpu=backend == "cuda", reduction=reduction,
        num_xcds=xcds,
    )  # fmt: skip
    tiles = S.tile_count(m, n, spec.block_m, spec.block_n)
    programs = _programs(num_programs, spec, backend, device, meta)
    if spec.kind == Kind.WORK_STEALING:
        S.check_work_stealing(programs, spec.num_xcds)
    fixups = spec.kind == Kind.STREAM_K and spec.reduction != Reduction.ATOMIC
    if fixups and backend == "cuda" and not meta and num_programs is not None:
        resident = _resident(spec, device)
        if programs > resident:
            raise ValueError(
                f"num_programs={programs} exceeds the {resident} resident programs (SMs x "
                f"occupancy): stream-K's {spec.reduction} fix-up waits on other programs, so "
                "all of them must be resident at once"
            )
    if spec.kind == Kind.DATA_PARALLEL:
        grid = tiles
    else:
        grid = S.grid_size(spec.kind, tiles, P.spec_work_programs(spec, tiles, k, programs))
    return ScaledPlan(spec, backend, m, n, k, lda, ldb, out, grid, min(programs, grid), seed)


@functools.lru_cache(maxsize=256)
def scaled_spec(
    schedule: str,
    dtype: str,
    config: S.GemmConfig,
    scale: Scale | str,
    out_dtype: str,
    grouped: Grouped = Grouped.NONE,
    *,
    gpu: bool = False,
    reduction: Reduction | str | None = None,
    num_xcds: int = 1,
) -> S.KernelSpec:
    """The kernel of a scaled call: ``schedule`` (stream-K with ``reduction``, default
    linear; work stealing with ``num_xcds``), the FP8 ``dtype`` ("f8e4m3"),
    ``config``, ``scale`` and ``out_dtype`` (a framework name: "bfloat16");
    ``gpu``: the epilogue recipes with the configuration's promotion interval
    (:func:`_epilogue_interval`; the model computes exactly either way).
    Memoized: every call plans twice (the operator's eager check, then its
    implementation), and building and checking a spec is a third of a plan."""
    cfg = config
    spec = S.KernelSpec(
        Kind(schedule), S.resolve_reduction(schedule, reduction), grouped, dtype,
        cfg.block_m, cfg.block_n, cfg.block_k, cfg.group_m, cfg.num_warps, cfg.num_stages,
        num_xcds=num_xcds, trans_b=True, scale=Scale(scale), out_dtype=OUT_DTYPES[out_dtype],
    )  # fmt: skip
    if gpu and spec.scale in (Scale.TENSORWISE, Scale.ROWWISE):
        spec = replace(spec, imprecise_acc=_epilogue_interval(cfg))
    if gpu and cfg in h100.FP8_TMA_CONFIGS.values():  # bundled as the TMA twin alone
        spec = replace(spec, aligned=True, tma=True)
    return spec


def scaled_grouped_plan(
    a: Any,
    b: Any,
    group_lens: Any,
    scale_a: Any,
    scale_b: Any,
    *,
    trans_b: bool = True,
    out_dtype: Any = None,
    num_programs: int | None = None,
    config: Any = None,
    seed: int | None = None,
    validate: bool | str = False,
    meta: bool = False,
) -> ScaledPlan:
    """The plan of a grouped FP8 GEMM (MoE experts, forward): rows of ``a`` (S, K)
    grouped by ``group_lens``, ``b`` (G, N, K) (``trans_b``: one row-major (N, K)
    weight per group, as ``nn.Linear`` stores it; Hopper's 8-bit wgmma reads both
    operands K-major, so B stored (G, K, N) is refused), C (S, N) in
    ``out_dtype``. Scales as :func:`gemm_opt.core.scaling.recipe_of` reads them with
    G groups: tensorwise, rowwise (``scale_a`` (S, 1), ``scale_b`` (G, 1, N)) or
    block128 (``scale_a`` (S, ceil(K/128)), ``scale_b`` (G, ceil(K/128),
    ceil(N/128))). ``group_lens`` and ``validate`` as in the 16-bit grouped plan
    (lengths on the GPU stay there: the grid is a bound, no host sync)."""
    if trans_b is not True:
        raise ValueError(
            "trans_b: a grouped FP8 GEMM takes b (G, N, K), one row-major (N, K) weight "
            "per group (trans_b=True): Hopper's 8-bit wgmma reads both operands K-major"
        )
    validate = P.validate_mode(validate)
    backend, da, device = _operands(a, b)
    out = _out_dtype(out_dtype)
    if len(tuple(a.shape)) != 2 or len(tuple(b.shape)) != 3:
        raise ValueError(
            f"a, b: a grouped FP8 GEMM takes a (S, K) and b (G, N, K), got shapes "
            f"{tuple(a.shape)} and {tuple(b.shape)}"
        )
    (s_rows, k), (g, n, kb) = tuple(a.shape), tuple(b.shape)
    if kb != k:
        raise ValueError(
            f"b: expected shape (G, N, K) with K = {k} (a's columns), got {(g, n, kb)}"
        )
    sa_el, sb_el = P.element_strides(a, "a"), P.element_strides(b, "b")
    if not (sa_el[1] == 1 or k <= 1) or (sa_el[0] < max(k, 1) and s_rows > 1):
        raise ValueError(f"a: expected A row-major (S, K), got strides {sa_el}")
    ldb = max(sb_el[1], k, 1)
    if (
        not (sb_el[2] == 1 or k <= 1)
        or (sb_el[1] < max(k, 1) and n > 1)
        or (g > 1 and sb_el[0] != n * ldb)
    ):
        raise ValueError(
            f"b: expected (G, N, K) with each group's (N, K) row-major and the groups one "
            f"after another (strides (N*ldb, ldb, 1)), got strides {sb_el}"
        )
    from gemm_opt.core.scaling import MX_BLOCK

    lens, g = P._lens_of_call(group_lens, g, s_rows, backend, device, meta, validate)
    scale = _recipe(scale_a, scale_b, backend, m=s_rows, n=n, k=k, groups=g)
    rowwise, block128, mx = (scale == s for s in (Scale.ROWWISE, Scale.BLOCK128, Scale.MX32))
    axes = (None, None) if block128 or mx else (0, -1)
    _check_scale(scale_a, "scale_a", backend, device, s_rows if rowwise else 1, axes[0], mx)
    _check_scale(scale_b, "scale_b", backend, device, n if rowwise else 1, axes[1], mx)
    per = MX_BLOCK if mx else S.FP8_BLOCK_K  # K per scale
    if S.cdiv(k, per) * max(s_rows, n * max(g, 1)) > _I32_MAX or g * n > _I32_MAX:
        raise ValueError(f"a: M={s_rows}, N={n}, K={k}, G={g} index scales past i32")
    lda = max(sa_el[0], k, 1)
    tma_only = _tma_only_call(
        da, scale, out, Grouped.M, M=s_rows, N=n, K=k, lda=lda, ldb=ldb, ldc=n
    )
    cfg = _config(s_rows, n, backend, config, scale, tma_only)
    spec = scaled_spec(Kind.PERSISTENT, da, cfg, scale, out, Grouped.M, gpu=backend == "cuda")
    bm, bn = spec.block_m, spec.block_n
    if lens is None:  # on the device: the grid is sized without them
        tiles = S.grouped_tiles_bound("m", g, rows=s_rows, m=0, n=n, block_m=bm, block_n=bn)
    else:
        tiles = S.grouped_tiles("m", lens, m=0, n=n, k=k, block_m=bm, block_n=bn).total_tiles
    programs = _programs(num_programs, spec, backend, device, meta)
    grid = min(programs, tiles)
    return ScaledPlan(
        spec, backend, s_rows, n, k, lda, ldb, out, grid, min(programs, grid),
        seed, groups=g, lens=None if lens is None else tuple(lens), tiles=tiles,
    )  # fmt: skip


#: GPU plans by their call's signature (:func:`cached_plan`), with the environment
#: they were made in.
_PLANS: dict[tuple, tuple[ScaledPlan, tuple]] = {}


def cached_plan(
    a: Any, b: Any, scale_a: Any, scale_b: Any, group_lens: Any = None, **kw: Any
) -> ScaledPlan:
    """:func:`scaled_plan` (``group_lens`` None) or :func:`scaled_grouped_plan` of a call,
    reused for a call of the same signature on the GPU: the operands' and scales'
    shapes, strides, dtypes, devices and address alignment, the keywords with their
    types, the lengths as the 16-bit plans key them, the deterministic-algorithms flag
    and the bundle environment (:func:`~gemm_opt.runtime.plan.signature`). A hit
    checks device lengths again where ``validate`` asks, as the 16-bit plans do;
    anything that is not keyed (a traced call, the model's arrays) plans every call."""
    grouped = group_lens is not None
    key = _signature(a, b, scale_a, scale_b, group_lens, kw)
    hit = _PLANS.get(key) if key is not None else None
    if hit is not None and hit[1] == P.gpu_environment():
        plan = hit[0]
        validate = P.validate_mode(kw.get("validate", False))
        if grouped and plan.lens is None and validate is not False:
            P._check_device_lens(group_lens, plan.groups, plan.m, validate)
        return plan
    if grouped:
        plan = scaled_grouped_plan(a, b, group_lens, scale_a, scale_b, **kw)
    else:
        plan = scaled_plan(a, b, scale_a, scale_b, **kw)
    if key is not None and plan.backend == "cuda":
        if len(_PLANS) >= P.PLAN_CACHE_SIZE:
            _PLANS.clear()
        _PLANS[key] = (plan, P.gpu_environment())
    return plan


def _signature(
    a: Any, b: Any, scale_a: Any, scale_b: Any, group_lens: Any, kw: dict[str, Any]
) -> tuple | None:
    """The cache key of a scaled call (None: not keyed)."""
    if kw.get("meta"):
        return None
    try:
        if P.kind_of(a, "a") != "cuda":
            return None
        scales = tuple(
            P._tensor_key(s, P.kind_of(s, name))
            for name, s in (("scale_a", scale_a), ("scale_b", scale_b))
        )
    except (TypeError, ValueError, AttributeError, RuntimeError):
        return None
    rest = {k: v for k, v in kw.items() if k not in _SIGNATURE_KW}
    extra = (scales, *sorted((k, type(v), v) for k, v in rest.items()))
    common = {"out": None, "reduction": None, "num_programs": None, "num_xcds": 1,
              "seed": None, "config": None, "schedule": "persistent" if group_lens is not None
              else "data-parallel"}  # fmt: skip
    common.update((k, v) for k, v in kw.items() if k in _SIGNATURE_KW)
    op = "scaled_grouped_matmul" if group_lens is not None else "scaled_matmul"
    return P.signature(op, a, b, group_lens, extra, common)


#: The keywords :func:`~gemm_opt.runtime.plan.signature` keys by name (the others go
#: into its ``extra`` with their types).
_SIGNATURE_KW = frozenset({"schedule", "reduction", "num_programs", "num_xcds", "seed", "config"})


def clear_plans() -> None:
    """Empty the scaled plans' cache."""
    _PLANS.clear()


def _epilogue_interval(cfg: S.GemmConfig) -> int | None:
    """The promotion interval of a GPU tensorwise or rowwise kernel of ``cfg``
    (:data:`~gemm_opt.kernels.h100_configs.FP8_EPILOGUE_IMPRECISE_ACC`, of the
    bundled and the TMA-only configurations; None for a configuration the table
    does not name)."""
    for name, known in {**h100.FP8_GPU_CONFIGS, **h100.FP8_TMA_CONFIGS}.items():
        if known == cfg:
            return h100.FP8_EPILOGUE_IMPRECISE_ACC.get(name)
    return None


def kernel_scales(plan: ScaledPlan, scale_a: Any, scale_b: Any) -> tuple[Any, Any]:
    """The scales as the kernel reads them (torch tensors or numpy arrays, as given).

    Tensorwise and rowwise: as they are. block128
    (:func:`gemm_opt.kernels.schedule_gemm.build_gemm_module`'s ``scale_a`` (Kb, M)
    and ``scale_b`` (Kb, N), Kb = ceil(K/128)): ``scale_a`` (M, Kb) transposed to
    M-major, which costs nothing for ``torch._scaled_mm``'s layout (strides (1, M))
    and one small copy otherwise; ``scale_b`` (Kb, ceil(N/128)) repeated over the
    128 columns of each block (a (Kb, N) float32 copy, made on the operands'
    device without a host sync), so that the kernel reads one scale per column;
    grouped: ``scale_b`` (G, Kb, N). Grouped rowwise: ``scale_b`` (G, 1, N) as G
    rows of N. mx32: ``scale_a`` (M, K/32) row-major and ``scale_b`` (K/32, N)
    transposed to (N, K/32) row-major, as ``tile.scaled_wmma`` reads them (grouped
    (G, N, K/32)): no copy for a transposed view of an (N, K/32) tensor.
    """
    block, n = S.FP8_BLOCK_K, plan.n
    torch_scales = P.is_torch_tensor(scale_a)
    if plan.recipe == Scale.MX32:
        if torch_scales:
            return scale_a.contiguous(), scale_b.transpose(-1, -2).contiguous()
        import numpy as np

        return np.ascontiguousarray(scale_a), np.ascontiguousarray(np.swapaxes(scale_b, -1, -2))
    if plan.recipe != Scale.BLOCK128:
        if plan.groups is None or plan.recipe != Scale.ROWWISE:
            return scale_a, scale_b
        # grouped rowwise: scale_b (G, 1, N) read as G rows of N
        sb = scale_b.reshape(-1, n)
        return scale_a, sb.contiguous() if torch_scales else sb.copy()
    if torch_scales:
        sa = scale_a.t().contiguous()
        sb = scale_b.repeat_interleave(block, dim=-1)[..., :n].contiguous()
        return sa, sb
    import numpy as np

    sa = np.ascontiguousarray(np.asarray(scale_a).T, dtype=np.float32)
    sb = np.ascontiguousarray(np.repeat(scale_b, block, axis=-1)[..., :n], dtype=np.float32)
    return sa, sb


def _programs(num_programs: Any, spec: S.KernelSpec, backend: str, device: Any, meta: bool) -> int:
    """The programs a plan may keep resident: the caller's ``num_programs``, else
    the GPU's resident count (1 while traced), the model's default off the GPU."""
    if num_programs is None:
        gpu = backend == "cuda"
        return 1 if meta and gpu else _resident(spec, device) if gpu else P.MODEL_PROGRAMS
    return P._positive_int(num_programs, "num_programs", P.MAX_PROGRAMS)  # the launch limit


def _resident(spec: S.KernelSpec, device: Any) -> int:
    from gemm_opt.runtime import gemm as rt

    return rt.resident_programs(spec, device)


def launch(
    plan: ScaledPlan, a: Any, b: Any, scale_a: Any, scale_b: Any, group_lens: Any = None
) -> Any:
    """Run ``plan`` on CUDA tensors on the current stream; returns C (M, N) (grouped:
    (S, N), ``group_lens`` the call's lengths, copied to the device as int32 where
    they are host data, as they are where they are int32 there)."""
    import torch

    from gemm_opt.runtime import gemm as rt

    c = torch.empty(plan.out_shape, dtype=getattr(torch, plan.out_dtype), device=a.device)
    if plan.grid == 0 or 0 in plan.out_shape:
        return c
    scale_a, scale_b = kernel_scales(plan, scale_a, scale_b)
    tensors = {"a": a, "b": b, "c": c, "scale_a": scale_a, "scale_b": scale_b}
    if plan.groups is not None:
        if plan.lens is not None:  # host lengths: on the device once per plan and device
            lens = plan.made.get(("lens", a.device))
            if lens is None:
                lens = plan.made[("lens", a.device)] = torch.tensor(
                    plan.lens, dtype=torch.int32, device=a.device
                )
        else:
            lens = group_lens if group_lens.dtype == torch.int32 else group_lens.int()
        tensors["group_lens"] = lens
    prepared = plan.made.get("launch")
    if prepared is not None:  # the same signature: only the tensors are new
        prepared(*tensors.values())
        return c
    tiles = plan.tiles
    if plan.groups is None:
        tiles = S.tile_count(plan.m, plan.n, plan.spec.block_m, plan.spec.block_n)
    values = {
        **tensors, "M": plan.m, "N": plan.n, "K": plan.k, "lda": plan.lda, "ldb": plan.ldb,
        "ldc": plan.n, **({} if plan.groups is None else {"num_groups": plan.groups}),
    }  # fmt: skip
    plan.made["launch"] = rt.launch(
        plan.spec, values, num_programs=plan.grid, total_tiles=tiles, prepare=tuple(tensors)
    )
    return c


__all__ = [
    "DEFAULT_OUT",
    "MODEL_BLOCK128_CONFIG",
    "MODEL_FP8_CONFIG",
    "MODEL_MX32_CONFIG",
    "OUT_DTYPES",
    "ScaledPlan",
    "cached_plan",
    "clear_plans",
    "kernel_scales",
    "launch",
    "scaled_grouped_plan",
    "scaled_plan",
    "scaled_spec",
]
