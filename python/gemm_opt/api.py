"""The public GEMM API: ``matmul``, ``grouped_matmul``, ``grouped_matmul_variable_k``.

One API on two machines:

* **numpy arrays** (and **CPU torch tensors**) run the kernel on the executable
  model: ``num_programs`` resident programs (default 4) interleaved in the order
  ``seed`` chooses (``None``: program order). Inputs are float16, or bfloat16
  as ``ml_dtypes.bfloat16`` arrays (numpy has no bf16 of its own) or CPU
  ``torch.bfloat16`` tensors; the result has the input's type and framework.
* **CUDA torch tensors** run the ahead-of-time compiled kernels of the bundles
  (:mod:`gemm_opt.runtime.gemm`) on the current stream; ``num_programs``
  defaults to the number of resident programs (compute units x occupancy).
  Only torch is needed. The host never reads device data on this path: a
  ``group_lens`` tensor on the GPU goes to the kernel as it is (its values
  are checked only if ``validate`` asks), grids are sized without it, so a
  call can be captured in a CUDA graph.

Torch tensors (CPU or CUDA) go through the operators ``torch.ops.gemm_opt.*``
(:mod:`gemm_opt.torch_ops`: fake implementations for ``torch.compile``,
autograd for ``matmul`` and the grouped GEMMs). Every call's checks and
choices are its plan (:mod:`gemm_opt.runtime.plan`), made once per call
signature.

Every kernel accumulates in fp32 and rounds once to the output type (the
input's, or ``out``'s, which must have the input's dtype); atomic stream-K
rounds once per program adding into a tile. ``schedule`` is
``"data-parallel"``, ``"persistent"``, ``"work-stealing"``, ``"stream-k"``
or ``"split-k"`` (see :mod:`gemm_opt.core.schedules`). ``"split-k"`` is for
shapes with too few tiles to fill the GPU: ``tiles x S`` programs, ``S`` the
most slices of each tile's K that ``num_programs`` programs hold (at most
its ``block_k`` steps; pass ``num_programs = tiles x S`` for an exact ``S``),
the fp32 partials summed in slice order: bitwise reproducible, for any
grid. ``reduction`` is ``"atomic"``,
``"linear"`` or ``"tree"`` and only stream-K takes one (``None`` there means
``"linear"``: deterministic and needing no zeroed output). ``"auto"`` runs the
tuned table's choice on exactly a tuned problem, else the cost model's fastest
candidate (:mod:`gemm_opt.runtime.autotune`, :func:`explain` says why; the
model resolves as ``cuda:90`` does). Its results are bitwise reproducible:
atomic stream-K (whose adds into C land in the order programs finish) is a
candidate only when the caller opts in with ``reduction="atomic"``, which
``torch.use_deterministic_algorithms(True)`` refuses, as it refuses a named
atomic stream-K: a RuntimeError (a warning with ``warn_only``). A stream-K pick on the GPU without
``num_programs`` launches the count that gives each program one K range in
one tile (:func:`~gemm_opt.core.schedules.aligned_stream_k_programs`). An
explicit ``config`` replaces the tuned one. ``num_programs`` (a Python or
numpy integer) is at most 2**31 - 1, CUDA's grid limit; a call runs at most
the programs that can find work (:func:`~gemm_opt.runtime.plan.work_programs`:
the result is the same). Config values are 32-bit, blocks at most 256, warps
a power of two up to 32. Bad input is a
``TypeError`` (wrong kind or dtype) or ``ValueError`` (wrong shape, value or
layout) naming the argument and what was expected, raised before any kernel
is built or launched.

This module imports neither numpy, torch nor the compiler at import time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gemm_opt.core import schedules as S
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.runtime import autotune
from gemm_opt.runtime import plan as P

#: Schedules ``schedule=`` takes besides :data:`AUTO`.
SCHEDULES = P.SCHEDULES
#: The schedule that picks schedule, reduction and config from the tuned tables.
AUTO = P.AUTO

GemmConfig = S.GemmConfig
#: The configuration the model runs by default (small blocks: quick to interpret).
MODEL_CONFIG = S.MODEL_CONFIG
#: The configuration a partial ``config`` dict fills in on the GPU.
GPU_CONFIG = h100.GPU_CONFIG
#: The configurations bundled for the GPU, by name; with ``config=None`` the
#: GPU runs the one of the shape's class (:func:`gemm_opt.kernels.h100_configs.gpu_config_name`).
GPU_CONFIGS = h100.GPU_CONFIGS
#: Resident programs on the model when ``num_programs`` is None.
MODEL_PROGRAMS = P.MODEL_PROGRAMS
#: ``validate=`` values (see :func:`grouped_matmul`).
VALIDATE = P.VALIDATE


def _torch_pair(a: Any, b: Any) -> bool:
    """Both operands are torch tensors: the call goes through the ``gemm_opt::`` operators
    (:mod:`gemm_opt.torch_ops`), which ``torch.compile`` and autograd see."""
    return P.is_torch_tensor(a) and P.is_torch_tensor(b)


def matmul(
    a: Any,
    b: Any,
    *,
    schedule: str = "data-parallel",
    reduction: str | None = None,
    num_programs: int | None = None,
    num_xcds: int = 1,
    config: GemmConfig | Mapping[str, int] | None = None,
    out: Any = None,
    seed: int | None = None,
    scale_a: Any = None,
    scale_b: Any = None,
    out_dtype: Any = None,
    bias: Any = None,
    activation: str | None = None,
    accumulate: bool = False,
    row_scale: Any = None,
    col_scale: Any = None,
) -> Any:
    """C = A @ B as ``torch.matmul`` computes it: ``a`` (..., M, K), ``b`` (..., K, N),
    batch dimensions broadcast, result row-major (..., M, N).

    Each operand is read as it lies, never copied: row-major or column-major
    (a transposed view such as ``w.t()``: the transposed-layout kernels), any
    leading dimension (a slice of a wider matrix); a batch folds into M where
    ``b`` is shared, runs as one grouped launch where both operands' batches
    lie back to back, else batch by batch on views (``docs/api.md``,
    "Operand layouts and batches"). A matrix with no unit stride is a
    ValueError naming it. See the module docstring for the backends,
    schedules and reductions.
    ``num_xcds`` is the chiplet count of work stealing (one counter each).
    On torch tensors this is the operator ``torch.ops.gemm_opt.matmul``
    (``matmul_out`` with ``out``), differentiable in ``a`` and ``b``.

    **FP8** (``scale_a`` and ``scale_b`` given): ``C = (A x scale_a) @ (B x
    scale_b)`` on float8 operands (``float8_e4m3fn`` or ``float8_e5m2``, both
    the same; numpy: ml_dtypes arrays), 2-D, A row-major (M, K) and B the
    transposed view of a row-major (N, K) tensor (``w.t()``, as
    ``torch._scaled_mm`` takes it). The recipe follows from the float32 scale
    shapes as ``torch._scaled_mm`` reads them: 0-d or (1, 1) tensorwise,
    (M, 1) and (1, N) rowwise (the epilogue multiplies the fp32 accumulator
    by them), (M, ceil(K/128)) and (ceil(K/128), ceil(N/128)) block128
    (DeepSeek-V3's: each 128-deep K block's product promoted into the fp32
    accumulator times its scales); e8m0 (``float8_e8m0fnu``) scales of
    (M, K/32) and (K/32, N) are mx32 (MXFP8: ``tile.scaled_wmma``, on the
    model only; Hopper has no block-scaled MMA); C rounded once to
    ``out_dtype`` (bfloat16, the default, or float32). ``schedule`` any but
    "auto", with ``reduction`` and ``num_xcds`` as for 16-bit operands (stream-K
    and split-K add each program's scaled fp32 partial; atomic stream-K into
    C, bfloat16 or float32, zeroed first); ``out`` is not taken. On torch tensors
    this is ``torch.ops.gemm_opt.scaled_matmul`` (not differentiable: its operands
    are FP8 already; :func:`fp8_linear` is the training form). See :mod:`gemm_opt.runtime.scaled`.

    **Fused epilogue** (applied to each output tile's fp32 sum before the one
    rounding, in the kernel): ``C = activation(A @ B + bias)``, and with
    ``accumulate=True`` ``out += activation(A @ B + bias)`` (``out`` required;
    it may be float32, e.g. a ``main_grad``, whatever the inputs). ``bias`` has
    shape (N,), the inputs' dtype or float32, and is shared by every batch;
    ``activation`` is None, ``"relu"``, ``"gelu"`` (erf), ``"gelu-tanh"``
    (``F.gelu(approximate="tanh")``) or ``"silu"``. On torch tensors this is
    ``torch.ops.gemm_opt.matmul_epilogue`` (differentiable in ``a``, ``b`` and
    ``bias``) or ``matmul_epilogue_out``. Atomic stream-K takes neither an
    activation nor ``accumulate`` (no program holds a tile's finished sum).
    ``row_scale`` (M,) and ``col_scale`` (N,), float32, scale the sum before the
    bias: ``C = activation(row_scale[:, None] * col_scale[None, :] * (A @ B) + bias)``
    (2-D ``a`` and ``b``; no ``col_scale`` with SwiGLU); differentiable in ``a``,
    ``b`` and ``bias``, not in the scales (a scale that requires grad is a
    RuntimeError).
    """
    if scale_a is not None or scale_b is not None or out_dtype is not None:
        for name, value in (
            ("bias", bias), ("activation", activation), ("row_scale", row_scale),
            ("col_scale", col_scale),
        ):  # fmt: skip
            if value is not None:
                raise ValueError(f"{name}: the scaled (FP8) GEMM has no fused epilogue yet")
        if accumulate is not False:
            raise ValueError("accumulate: the scaled (FP8) GEMM has no fused epilogue yet")
        return _scaled(a, b, scale_a, scale_b, out_dtype, schedule, reduction, num_programs,
                       num_xcds, config, out, seed)  # fmt: skip
    kw = {
        "schedule": schedule, "reduction": reduction, "num_programs": num_programs,
        "num_xcds": num_xcds, "config": config, "out": out, "seed": seed,
    }  # fmt: skip
    epi = {"bias": bias, "activation": activation, "accumulate": accumulate}
    scales = {"row_scale": row_scale, "col_scale": col_scale}
    fused = P.has_epilogue(bias, activation, accumulate, row_scale, col_scale)
    if _torch_pair(a, b):
        from gemm_opt import torch_ops

        if fused:
            return torch_ops.matmul_epilogue(a, b, **epi, **scales, **kw)
        return torch_ops.matmul(a, b, **kw)
    if not fused:
        return _run_model(P.plan("matmul", a, b, **kw), a, b, kw)
    plan = P.plan("matmul", a, b, **epi, **scales, **kw)
    return _run_model(plan, a, b, kw, bias, **scales)


def linear(
    x: Any,
    weight: Any,
    bias: Any = None,
    *,
    activation: str | None = None,
    **kw: Any,
) -> Any:
    """``activation(F.linear(x, weight, bias))``: ``x`` (..., in_features), ``weight``
    (out_features, in_features) read as it lies (``x @ weight.T`` through the
    transposed-layout kernels, nothing copied), ``bias`` (out_features,) or None;
    the bias and the activation fused into the GEMM's epilogue (see :func:`matmul`,
    whose other keywords it takes). Result (..., out_features)."""
    for name, value in (("x", x), ("weight", weight)):
        if not hasattr(value, "shape"):
            raise TypeError(f"{name}: expected a numpy array or a torch tensor, got "
                            f"{type(value).__name__}")  # fmt: skip
    if len(weight.shape) != 2:
        raise ValueError(
            f"weight: expected shape (out_features, in_features), got {tuple(weight.shape)}"
        )
    if len(x.shape) < 1 or x.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"x: expected shape (..., in_features) with in_features = {weight.shape[1]} "
            f"(weight's columns), got {tuple(x.shape)}"
        )
    wt = weight.mT if P.is_torch_tensor(weight) else weight.T
    if len(x.shape) == 1:  # F.linear's vector input: one row, the row dropped again
        return matmul(x[None], wt, bias=bias, activation=activation, **kw)[0]
    return matmul(x, wt, bias=bias, activation=activation, **kw)


def fp8_linear(
    x: Any,
    weight: Any,
    *,
    recipe: str = "rowwise",
    grad_recipe: str = "rowwise",
    out_dtype: Any = None,
) -> Any:
    """``x @ weight.T`` as an FP8 GEMM for training: ``x`` (M, K) (or (..., K): its
    leading dims folded into M) and ``weight`` (N, K)
    high-precision torch tensors (bfloat16, float16, float32), quantized inside to
    e4m3fn along K with ``recipe`` (tensorwise, rowwise or block128); C (M, N) in
    ``out_dtype`` (bfloat16 default, or float32). Differentiable in both: the
    backward is two more FP8 GEMMs of ``grad_recipe`` (dgrad ``dY @ W`` with ``dY``
    and ``W^T`` quantized along N, wgrad ``dY^T @ X`` with both quantized along M),
    computed with fp32 C and cast to the operands' dtypes. The operator is
    ``torch.ops.gemm_opt.fp8_linear``; see :mod:`gemm_opt.torch_ops`."""
    _torch_only("fp8_linear", x, weight)
    from gemm_opt import torch_ops

    kw = dict(recipe=recipe, grad_recipe=grad_recipe, out_dtype=out_dtype)
    if x.dim() > 2:  # (..., K): the leading dims are rows of one GEMM
        y = torch_ops.fp8_linear(x.reshape(-1, x.shape[-1]), weight, **kw)
        return y.reshape(*x.shape[:-1], y.shape[-1])
    return torch_ops.fp8_linear(x, weight, **kw)


def fp8_grouped_linear(
    x: Any,
    weight: Any,
    group_lens: Any,
    *,
    recipe: str = "rowwise",
    grad_recipe: str = "rowwise",
    out_dtype: Any = None,
) -> Any:
    """The grouped (MoE experts) :func:`fp8_linear`: ``x`` (S, K) rows grouped by
    ``group_lens``, ``weight`` (G, N, K); rows of group g get ``x_g @ weight[g].T``.
    Differentiable in ``x`` and ``weight``: dgrad is the grouped FP8 GEMM on each
    group's ``W^T`` (quantized along N), wgrad the 16-bit variable-K grouped GEMM on
    bf16 ``dY`` and ``X`` (one launch; the lengths stay where they are: no host sync)."""
    _torch_only("fp8_grouped_linear", x, weight)
    from gemm_opt import torch_ops

    return torch_ops.fp8_grouped_linear(
        x, weight, group_lens, recipe=recipe, grad_recipe=grad_recipe, out_dtype=out_dtype
    )


def _torch_only(fn: str, x: Any, weight: Any) -> None:
    """TypeError naming the argument unless both are torch tensors (the backward is
    torch autograd; numpy callers quantize with ``quantize_fp8`` and call ``matmul``)."""
    for name, value in (("x", x), ("weight", weight)):
        if not P.is_torch_tensor(value):
            raise TypeError(
                f"{name}: {fn} takes torch tensors (its backward is autograd's; for numpy "
                f"arrays quantize with quantize_fp8 and call matmul), got {type(value).__name__}"
            )


def grouped_matmul(
    a: Any,
    b: Any,
    group_lens: Any,
    *,
    trans_b: bool = False,
    schedule: str = "persistent",
    reduction: str | None = None,
    num_programs: int | None = None,
    num_xcds: int = 1,
    config: GemmConfig | Mapping[str, int] | None = None,
    out: Any = None,
    seed: int | None = None,
    validate: bool | str = False,
    bias: Any = None,
    activation: str | None = None,
    accumulate: bool = False,
    scale_a: Any = None,
    scale_b: Any = None,
    out_dtype: Any = None,
) -> Any:
    """Grouped GEMM (MoE experts): rows of ``a`` grouped by ``group_lens``, one ``b`` per group.

    ``a`` (S, K) with S = sum(group_lens); ``b`` (G, K, N), or (G, N, K) with
    ``trans_b`` (dgrad, or weights stored output-major); result (S, N), rows
    of group g = ``a[rows of g] @ b[g]``. Lengths may be 0 (no rows, nothing
    shifts). On torch tensors this is the operator
    ``torch.ops.gemm_opt.grouped_matmul``, differentiable in ``a`` and ``b``
    (dgrad and wgrad through these kernels).

    ``group_lens`` on the host (a sequence, an array, a CPU tensor) is
    checked in full (count, signs, sum). An int32/int64 tensor on the GPU
    stays there: the kernel reads it, the host checks its dtype, rank, count
    and device only, and ``validate`` says how its values are checked:
    ``False`` not at all (they must be >= 0 and sum to S), ``True`` on the
    host (a device sync: not inside a CUDA graph), ``"device"`` by a
    device-side assertion (no sync; a failure ends the CUDA context).

    Fused epilogue as in :func:`matmul`, with ``bias`` of shape (G, N) (group g's
    rows get row g); on torch tensors ``torch.ops.gemm_opt.grouped_matmul_epilogue``
    (differentiable in ``a``, ``b`` and ``bias``) or ``grouped_matmul_epilogue_out``.

    **FP8** (``scale_a`` and ``scale_b`` given): float8 ``a``
    (S, K) and ``b`` (G, N, K) with ``trans_b=True`` (one row-major (N, K)
    weight per group); scales float32, the recipe from their shapes as
    :func:`matmul`'s FP8 form reads them with G groups: tensorwise, rowwise
    (``scale_a`` (S, 1), ``scale_b`` (G, 1, N)) or block128 (``scale_a`` (S,
    ceil(K/128)), ``scale_b`` (G, ceil(K/128), ceil(N/128))), or mx32 (e8m0
    ``scale_a`` (S, K/32), ``scale_b`` (G, K/32, N); on the model only); C (S, N)
    in ``out_dtype`` (bfloat16 by default). The persistent schedule only; no
    ``reduction``, ``num_xcds`` or ``out``. On torch tensors this is
    ``torch.ops.gemm_opt.scaled_grouped_matmul`` (not differentiable; the
    training form with dgrad and wgrad is :func:`fp8_grouped_linear`).
    """
    kw = {
        "schedule": schedule, "reduction": reduction, "num_programs": num_programs,
        "num_xcds": num_xcds, "config": config, "out": out, "seed": seed,
    }  # fmt: skip
    if scale_a is not None or scale_b is not None or out_dtype is not None:
        if P.has_epilogue(bias, activation, accumulate):
            raise ValueError(
                "bias, activation, accumulate: a scaled (FP8) grouped GEMM takes no fused "
                "epilogue (its epilogue applies the scales)"
            )
        return _scaled_grouped(a, b, group_lens, trans_b, validate, scale_a, scale_b,
                               out_dtype, kw)  # fmt: skip
    epi = {"bias": bias, "activation": activation, "accumulate": accumulate}
    fused = P.has_epilogue(bias, activation, accumulate)
    if _torch_pair(a, b):
        from gemm_opt import torch_ops

        if fused:
            return torch_ops.grouped_matmul_epilogue(
                a, b, group_lens, trans_b=trans_b, validate=validate, **epi, **kw
            )
        return torch_ops.grouped_matmul(a, b, group_lens, trans_b=trans_b, validate=validate, **kw)
    if not fused:
        epi = {}
    p = P.plan("grouped_matmul", a, b, group_lens, trans_b=trans_b, validate=validate, **epi, **kw)
    return _run_model(p, a, b, kw, bias)


def grouped_matmul_variable_k(
    a: Any,
    b: Any,
    group_lens: Any,
    *,
    schedule: str = "persistent",
    reduction: str | None = None,
    num_programs: int | None = None,
    num_xcds: int = 1,
    config: GemmConfig | Mapping[str, int] | None = None,
    out: Any = None,
    seed: int | None = None,
    validate: bool | str = False,
    accumulate: bool = False,
) -> Any:
    """Grouped GEMM over K (wgrad): ``out[g] = a[rows of g].T @ b[rows of g]``.

    ``a`` (S, M), ``b`` (S, N), S = sum(group_lens); result (G, M, N). An
    empty group's output is exactly zero. ``group_lens`` and ``validate`` as
    in :func:`grouped_matmul`; on torch tensors this is the operator
    ``torch.ops.gemm_opt.grouped_matmul_variable_k``. ``accumulate=True``: ``out[g]
    += ...`` in the epilogue (``out`` required, float32 for a ``main_grad`` or the
    inputs' dtype; ``grouped_matmul_variable_k_accumulate`` on torch tensors).
    """
    kw = {
        "schedule": schedule, "reduction": reduction, "num_programs": num_programs,
        "num_xcds": num_xcds, "config": config, "out": out, "seed": seed,
    }  # fmt: skip
    epi = {"accumulate": accumulate} if accumulate is not False else {}
    if _torch_pair(a, b):
        from gemm_opt import torch_ops

        return torch_ops.grouped_matmul_variable_k(a, b, group_lens, validate=validate, **epi, **kw)
    p = P.plan("grouped_matmul_variable_k", a, b, group_lens, validate=validate, **epi, **kw)
    return _run_model(p, a, b, kw)


# ---- explain ---------------------------------------------------------------------------


def explain(
    m: int,
    n: int,
    k: int,
    *,
    dtype: str = "bf16",
    op: str = "dense",
    groups: int = 1,
    reduction: str | None = None,
    sms: int | None = None,
    target: str = autotune.MODEL_TARGET,
) -> autotune.Explanation:
    """What ``schedule="auto"`` (with ``reduction``) runs on a problem, and why.

    The problem in :class:`~gemm_opt.runtime.autotune.Problem` terms: ``op`` is
    ``"dense"`` (C = A (m x k) @ B (k x n)), ``"fwd"`` or ``"dgrad"`` (``m`` rows over
    all ``groups`` groups, each group's weight k x n) or ``"wgrad"`` (an m x n output
    per group, ``k`` tokens over all groups); ``dtype`` ``"bf16"``/``"fp16"`` (or
    ``"bfloat16"``/``"float16"``); ``reduction`` None (bitwise reproducible) or
    ``"atomic"`` (atomic stream-K allowed), as ``matmul`` takes it; ``sms`` the
    device's compute units (default the target's). Returns the choice, its source
    (``"table"``: tuned on exactly this problem; ``"model"``: the cost model) and every
    candidate's estimate, fastest first; ``print()`` it for a table.
    """
    sizes = [P.as_int(v, name) for name, v in (("m", m), ("n", n), ("k", k), ("groups", groups))]
    if not isinstance(dtype, str) or dtype not in (*S.DTYPES, *S.DTYPES.values()):
        raise ValueError(f"dtype must be one of {(*S.DTYPES, *S.DTYPES.values())}, got {dtype!r}")
    short = {v: key for key, v in S.DTYPES.items()}.get(dtype, dtype)
    if reduction not in (None, "atomic"):
        raise ValueError(
            f"reduction must be None (bitwise reproducible) or 'atomic' (atomic stream-K "
            f"allowed), got {reduction!r}"
        )
    if target not in autotune.TARGET_SMS:
        raise ValueError(f"target must be one of {tuple(autotune.TARGET_SMS)}, got {target!r}")
    if sms is not None and P.as_int(sms, "sms", "an int or None") < 1:
        raise ValueError(f"sms must be at least 1, got {sms}")
    problem = autotune.Problem(op, *sizes)
    return autotune.explain(
        problem, short, target=target, sms=sms, allow_atomic=reduction == "atomic"
    )


# ---- execution -------------------------------------------------------------------------


def _scaled(
    a: Any,
    b: Any,
    scale_a: Any,
    scale_b: Any,
    out_dtype: Any,
    schedule: str,
    reduction: str | None,
    num_programs: int | None,
    num_xcds: int,
    config: Any,
    out: Any,
    seed: int | None,
) -> Any:
    """:func:`matmul`'s FP8 form (its docstring)."""
    from gemm_opt.runtime import scaled

    for name, value in (("scale_a", scale_a), ("scale_b", scale_b)):
        if value is None:
            raise ValueError(f"{name}: a scaled GEMM takes both scale_a and scale_b, got None")
    if out is not None:
        raise ValueError(f"out: a scaled GEMM does not take out (got {out!r})")
    if _torch_pair(a, b):
        from gemm_opt import torch_ops

        return torch_ops.scaled_matmul(
            a, b, scale_a, scale_b, out_dtype=out_dtype, schedule=schedule,
            reduction=reduction, num_programs=num_programs, num_xcds=num_xcds,
            config=config, seed=seed,
        )  # fmt: skip
    from gemm_opt.kernels import model_gemm

    plan = scaled.scaled_plan(
        a, b, scale_a, scale_b, out_dtype=out_dtype, schedule=schedule,
        reduction=reduction, num_programs=num_programs, num_xcds=num_xcds, config=config,
        seed=seed,
    )  # fmt: skip
    return model_gemm.run_scaled(plan, a, b, scale_a, scale_b)


def _scaled_grouped(
    a: Any,
    b: Any,
    group_lens: Any,
    trans_b: Any,
    validate: Any,
    scale_a: Any,
    scale_b: Any,
    out_dtype: Any,
    kw: Mapping[str, Any],
) -> Any:
    """:func:`grouped_matmul`'s FP8 form (its docstring)."""
    from gemm_opt.runtime import scaled

    for name, value in (("scale_a", scale_a), ("scale_b", scale_b)):
        if value is None:
            raise ValueError(f"{name}: a scaled GEMM takes both scale_a and scale_b, got None")
    if kw["schedule"] != "persistent":
        raise ValueError(f"schedule: a grouped FP8 GEMM runs 'persistent', got {kw['schedule']!r}")
    for name, default in (("reduction", None), ("num_xcds", 1), ("out", None)):
        if kw[name] is not default:
            raise ValueError(f"{name}: a scaled GEMM does not take {name} (got {kw[name]!r})")
    call = dict(
        trans_b=trans_b, out_dtype=out_dtype, num_programs=kw["num_programs"],
        config=kw["config"], seed=kw["seed"], validate=validate,
    )  # fmt: skip
    if _torch_pair(a, b):
        from gemm_opt import torch_ops

        return torch_ops.scaled_grouped_matmul(a, b, group_lens, scale_a, scale_b, **call)
    from gemm_opt.kernels import model_gemm

    plan = scaled.scaled_grouped_plan(a, b, group_lens, scale_a, scale_b, **call)
    return model_gemm.run_scaled(plan, a, b, scale_a, scale_b)


def _run_model(
    plan: P.GemmPlan,
    a: Any,
    b: Any,
    kw: Mapping[str, Any],
    bias: Any = None,
    row_scale: Any = None,
    col_scale: Any = None,
) -> Any:
    """Run a host call's plan on the executable model."""
    from gemm_opt.kernels import model_gemm

    return model_gemm.run(
        plan, a, b, out=kw["out"], bias=bias, row_scale=row_scale, col_scale=col_scale
    )


__all__ = [
    "AUTO",
    "GPU_CONFIG",
    "GPU_CONFIGS",
    "MODEL_CONFIG",
    "SCHEDULES",
    "VALIDATE",
    "GemmConfig",
    "explain",
    "fp8_grouped_linear",
    "fp8_linear",
    "grouped_matmul",
    "grouped_matmul_variable_k",
    "linear",
    "matmul",
]
