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
autograd for ``matmul`` and the grouped GEMMs).

Every kernel accumulates in fp32 and rounds once to the output type (the
input's, or ``out``'s, which must have the input's dtype); atomic stream-K
rounds once per program adding into a tile. ``schedule`` is
``"data-parallel"``, ``"persistent"``, ``"work-stealing"`` or ``"stream-k"``
(see :mod:`gemm_opt.core.schedules`); ``reduction`` is ``"atomic"``,
``"linear"`` or ``"tree"`` and only stream-K takes one (``None`` there means
``"linear"``: deterministic and needing no zeroed output). ``"auto"`` picks
schedule, reduction and config from the tuned table of the device's target
(:mod:`gemm_opt.runtime.autotune`: by shape class, the nearest tuned
problem, else a stated rule; the model resolves as ``cuda:90`` does); it may
pick atomic stream-K, whose bits vary run to run: name the schedule where
bitwise reproducibility matters. A stream-K pick on the GPU without
``num_programs`` launches the count that gives each program one K range in
one tile (:func:`~gemm_opt.core.schedules.aligned_stream_k_programs`). An
explicit ``config`` replaces the tuned one. Bad input is a
``TypeError`` (wrong kind or dtype) or ``ValueError`` (wrong shape, value or
layout) naming the argument and what was expected, raised before any kernel
is built or launched.

This module imports neither numpy, torch nor the compiler at import time.
"""

from __future__ import annotations

import functools
import operator
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from gemm_opt.core import schedules as S
from gemm_opt.kernels import h100_configs as h100

#: Schedules ``schedule=`` takes besides :data:`AUTO`.
SCHEDULES = S.KINDS
#: The schedule that picks schedule, reduction and config from the tuned tables.
AUTO = "auto"
#: Kernel element type names by framework dtype name.
_DTYPES = {framework: name for name, framework in S.DTYPES.items()}
#: Pointer alignment the compiled kernels assume (bytes).
ALIGN = 16


GemmConfig = S.GemmConfig
#: The configuration the model runs by default (small blocks: quick to interpret).
MODEL_CONFIG = S.MODEL_CONFIG
#: The configuration a partial ``config`` dict fills in on the GPU.
GPU_CONFIG = h100.GPU_CONFIG
#: The configurations bundled for the GPU, by name; with ``config=None`` the
#: GPU runs the one of the shape's class (:func:`gemm_opt.kernels.h100_configs.gpu_config_name`).
GPU_CONFIGS = h100.GPU_CONFIGS
#: Resident programs on the model when ``num_programs`` is None.
MODEL_PROGRAMS = 4


# ---- argument checks -------------------------------------------------------------------


def _kind_of(x: Any, name: str) -> str:
    """``"numpy"``, ``"torch-cpu"`` or ``"cuda"``; TypeError for anything else."""
    mod = type(x).__module__.split(".")[0]
    if mod == "numpy" and hasattr(x, "dtype") and hasattr(x, "shape"):
        return "numpy"
    if mod == "torch" and hasattr(x, "device") and hasattr(x, "dtype"):
        dev = x.device.type
        if dev == "cpu":
            return "torch-cpu"
        if dev == "cuda":
            return "cuda"
        raise TypeError(f"{name}: tensors on {x.device} are not supported (use CPU or CUDA)")
    raise TypeError(
        f"{name}: expected a numpy array or a torch tensor, got {type(x).__module__}."
        f"{type(x).__name__}"
    )


def _dtype_of(x: Any, name: str) -> str:
    dt = str(x.dtype).removeprefix("torch.")
    if dt not in _DTYPES:
        extra = " (numpy has no bf16: use ml_dtypes.bfloat16 arrays)" if dt == "float32" else ""
        raise TypeError(f"{name}: expected float16 or bfloat16 elements, got {dt}{extra}")
    return _DTYPES[dt]


def _shape(x: Any) -> tuple[int, ...]:
    """The shape as ints; a traced tensor's symbolic sizes stay symbolic (comparing them
    guards on the relation, ``int()`` would specialize the trace to one size)."""
    shape = tuple(x.shape)
    if all(type(d) is int for d in shape):
        return shape
    return tuple(d if type(d).__name__ == "SymInt" else int(d) for d in shape)


def _expect_ndim(x: Any, name: str, ndim: int, what: str) -> tuple[int, ...]:
    shape = _shape(x)
    if len(shape) != ndim:
        raise ValueError(f"{name}: expected a {ndim}-D array of shape {what}, got shape {shape}")
    return shape


def _check_cuda_layout(x: Any, name: str) -> None:
    """CUDA tensors must be row-major with unit inner stride and 16-byte aligned data."""
    if x.dim() and x.stride(-1) != 1 and x.shape[-1] > 1:
        raise ValueError(
            f"{name}: the kernel reads rows with unit stride; got strides {tuple(x.stride())} "
            f"(pass {name}.contiguous())"
        )
    if x.dim() == 3 and x.shape[1] > 1 and x.stride(0) != x.shape[1] * x.stride(1):
        raise ValueError(
            f"{name}: the groups must be stored back to back (strides {tuple(x.stride())}); "
            f"pass {name}.contiguous()"
        )
    if x.data_ptr() % ALIGN:
        raise ValueError(
            f"{name}: data at {x.data_ptr():#x} is not {ALIGN}-byte aligned, which the kernel "
            f"assumes (pass {name}.clone())"
        )


def _ld(x: Any, backend: str, dense: int) -> int:
    """A row-major operand's leading dimension: its row stride on CUDA (views keep theirs),
    the dense row length on the model (which copies operands to contiguous storage)."""
    if backend == "cuda" and x.dim() >= 2 and x.shape[-2] > 1:
        return int(x.stride(-2))
    return dense


def _config(config: Any, default: GemmConfig) -> GemmConfig:
    if config is None:
        return default
    if isinstance(config, GemmConfig):
        cfg = config
    elif isinstance(config, Mapping):
        known = {f.name for f in fields(GemmConfig)}
        bad = sorted(set(config) - known)
        if bad:
            raise ValueError(f"config: unknown key {bad[0]!r} (keys: {', '.join(sorted(known))})")
        cfg = GemmConfig(**{**default.__dict__, **config})
    else:
        raise TypeError(f"config: expected a GemmConfig or a dict, got {type(config).__name__}")
    for f in fields(GemmConfig):
        v = getattr(cfg, f.name)
        if f.name == "num_stages" and v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"config.{f.name} must be a positive integer, got {v!r}")
    for f in ("block_m", "block_n", "block_k", "num_warps"):
        v = getattr(cfg, f)
        if v & (v - 1):
            raise ValueError(f"config.{f} must be a power of two, got {v}")
    for f in ("block_m", "block_n", "block_k"):
        if getattr(cfg, f) < 16:
            raise ValueError(f"config.{f} must be at least 16, got {getattr(cfg, f)}")
    return cfg


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return value


def _schedule(schedule: Any, reduction: Any) -> tuple[str, str | None]:
    if schedule == AUTO:
        if reduction is not None:
            raise ValueError(
                f"reduction={reduction!r} with schedule='auto': auto picks the reduction with "
                "the schedule; pass reduction=None, or name the schedule (schedule='stream-k')"
            )
        return AUTO, None
    if not isinstance(schedule, str) or schedule not in SCHEDULES:
        raise ValueError(
            f"schedule must be 'auto' or one of {', '.join(map(repr, SCHEDULES))}; got {schedule!r}"
        )
    if reduction is not None and not isinstance(reduction, str):
        raise TypeError(f"reduction: expected a string or None, got {type(reduction).__name__}")
    return schedule, S.resolve_reduction(schedule, reduction)


def _auto(
    kind: str,
    red: str | None,
    cfg: GemmConfig | None,
    problem: tuple[str, int, int, int, int],
    backend: str,
    dtype: str,
    a: Any,
    num_programs: int | None,
    num_xcds: int,
) -> tuple[str, str | None, GemmConfig]:
    """Resolve ``schedule="auto"`` (:mod:`gemm_opt.runtime.autotune`): the tuned table of
    the device's target (the model resolves against ``cuda:90``'s); an explicit
    ``config`` replaces the tuned one. Other schedules pass through."""
    if kind != AUTO:
        assert cfg is not None
        return kind, red, cfg
    from gemm_opt.runtime import autotune

    target, sms = autotune.MODEL_TARGET, None
    if backend == "cuda":
        import torch

        from gemm_opt.runtime import gemm as rt

        target, sms = rt.device_target(torch, a.device), rt.sm_count(torch, a.device)
    choice = autotune.choose(*problem, dtype, target=target, sms=sms)
    if choice.schedule == "work-stealing" and num_programs is not None:
        S.check_work_stealing(num_programs, num_xcds)
    return choice.schedule, choice.reduction, cfg or choice.config


def _host_lens(group_lens: Any) -> list[int]:
    """Host lengths as a list of ints: a 1-D integer sequence, array or CPU tensor, each >= 0."""
    if isinstance(group_lens, (str, bytes)) or not hasattr(group_lens, "__len__"):
        raise TypeError(
            f"group_lens: expected a 1-D integer array or sequence, got {type(group_lens).__name__}"
        )
    dt = str(getattr(group_lens, "dtype", "int")).removeprefix("torch.")
    if not (("int" in dt and "uint" not in dt) or dt.startswith("uint")):
        raise TypeError(f"group_lens: expected integer elements, got {dt}")
    shape = getattr(group_lens, "shape", None)
    if shape is not None and len(shape) != 1:
        raise ValueError(f"group_lens: expected a 1-D array, got shape {tuple(shape)}")
    lens = group_lens.tolist() if hasattr(group_lens, "tolist") else list(group_lens)
    for i, n in enumerate(lens):
        try:
            lens[i] = operator.index(n)
        except TypeError:
            raise TypeError(
                f"group_lens[{i}]: expected an integer, got {type(n).__name__}"
            ) from None
        if lens[i] < 0:
            raise ValueError(f"group_lens[{i}] is {lens[i]}; group lengths must be >= 0")
    return lens


def _group_lens(group_lens: Any, num_groups: int | None, total: int, total_name: str):
    """The lengths as a list of ints; checks type, sign, count and sum (reads every length)."""
    lens = _host_lens(group_lens)
    if num_groups is not None and len(lens) != num_groups:
        raise ValueError(
            f"group_lens: expected {num_groups} lengths (one per group of b), got {len(lens)}"
        )
    if sum(lens) != total:
        raise ValueError(
            f"group_lens: the lengths sum to {sum(lens)}, but {total_name} has {total} rows"
        )
    return lens


#: ``validate=`` values: no value check, a host check (reads the lengths: a device
#: sync), a device-side assertion (no sync; a failure is a device-side assert).
VALIDATE = (False, True, "device")


def _validate_mode(validate: Any) -> bool | str:
    if not any(validate is v or (isinstance(v, str) and validate == v) for v in VALIDATE):
        raise ValueError(
            f"validate must be False, True (check group_lens on the host: a device sync) or "
            f"'device' (a device-side assertion, no sync); got {validate!r}"
        )
    return validate


def _is_torch_tensor(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "device")


def _lens_metadata(group_lens: Any, num_groups: int | None, device: Any) -> int:
    """Checks of a tensor ``group_lens`` that read no element (dtype, rank, count, device);
    returns the number of groups. What the GPU path and the traced (fake) op check."""
    dt = str(group_lens.dtype).removeprefix("torch.")
    if dt not in ("int32", "int64"):
        raise TypeError(f"group_lens: expected int32 or int64 elements, got {dt}")
    if group_lens.dim() != 1:
        raise ValueError(f"group_lens: expected a 1-D tensor, got shape {_shape(group_lens)}")
    g = _shape(group_lens)[0]
    if num_groups is not None and g != num_groups:
        raise ValueError(f"group_lens: expected {num_groups} lengths (one per group of b), got {g}")
    if group_lens.device.type != "cpu" and group_lens.device != device:
        raise ValueError(
            f"group_lens: expected a tensor on {device} like a, got {group_lens.device}"
        )
    return g


def _lens_on_device(group_lens: Any, device: Any) -> bool:
    """Whether ``group_lens`` is device data (never read by the host): a tensor on a GPU
    (on another one than ``device``: refused by :func:`_lens_metadata`), or where the
    operands are."""
    if not _is_torch_tensor(group_lens):
        return False
    return group_lens.device.type != "cpu" or group_lens.device == device


def _cuda_group_lens(
    group_lens: Any, num_groups: int | None, total: int, validate: bool | str, device: Any
) -> tuple[list[int] | None, Any, int]:
    """(host lengths or None, the int32 tensor on ``device`` the kernel reads, G).

    Lengths already on the device are never read by the host unless
    ``validate=True`` asks (a sync): only what their metadata says is
    checked, the sum and signs by ``validate``. Lengths on the host (a
    sequence, an array, a CPU tensor) are checked in full, for free, and
    copied to the device.
    """
    import torch

    if not _lens_on_device(group_lens, device):
        lens = _group_lens(group_lens, num_groups, total, "a")
        return lens, torch.tensor(lens, dtype=torch.int32, device=device), len(lens)
    g = _lens_metadata(group_lens, num_groups, device)
    gl = group_lens if group_lens.dtype == torch.int32 else group_lens.to(torch.int32)
    lens = None
    if validate is True:
        lens = _group_lens(group_lens, num_groups, total, "a")  # reads them: a device sync
    elif validate == "device":
        ok = gl.sum() == total
        if g:
            ok = ok & (gl.min() >= 0)
        torch._assert_async(
            ok, f"gemm_opt: group_lens must be >= 0 and sum to {total} (the rows of a)"
        )
    return lens, gl, g


@dataclass
class _Call:
    """A checked call: the kernel, its operands and where it runs."""

    spec: S.KernelSpec | None  # None: a traced call of schedule="auto" (never run)
    backend: str  # "numpy", "torch-cpu" or "cuda"
    a: Any
    b: Any
    out: Any
    out_shape: tuple[int, ...]
    scalars: dict[str, int]
    lens: list[int] | None
    group_lens: Any
    num_programs: int | None
    seed: int | None
    total_tiles: int
    #: ``schedule="auto"`` chose a stream-K kernel: its default program count
    #: splits the K work into whole segments (:func:`_programs`).
    auto_stream_k: bool = False


def _common(
    op: str,
    a: Any,
    b: Any,
    *,
    schedule: Any,
    reduction: Any,
    num_programs: Any,
    num_xcds: Any,
    config: Any,
    out: Any,
    seed: Any,
) -> tuple[str, str, str, str | None, int | None, int, GemmConfig | None, int | None]:
    ka, kb = _kind_of(a, "a"), _kind_of(b, "b")
    if ka != kb:
        raise TypeError(f"{op}: a is a {ka} operand and b a {kb} one; pass both alike")
    da, db = _dtype_of(a, "a"), _dtype_of(b, "b")
    if da != db:
        raise TypeError(f"b: expected {da} elements like a, got {db}")
    if ka == "cuda" and a.device != b.device:
        raise ValueError(f"b: expected a tensor on {a.device} like a, got {b.device}")
    kind, red = _schedule(schedule, reduction)
    default_config = GPU_CONFIG if ka == "cuda" else MODEL_CONFIG
    if num_programs is not None:
        num_programs = _positive_int(num_programs, "num_programs")
    num_xcds = _positive_int(num_xcds, "num_xcds")
    if kind == "work-stealing" and num_programs is not None:
        S.check_work_stealing(num_programs, num_xcds)
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"seed: expected an int or None, got {type(seed).__name__}")
        if ka == "cuda":
            raise ValueError(
                "seed chooses the model's interleaving of programs; on the GPU the hardware "
                "interleaves them (pass seed=None)"
            )
    # "auto" without a config takes the tuned one (resolved once the shapes are known)
    cfg = None if kind == AUTO and config is None else _config(config, default_config)
    if out is not None and _kind_of(out, "out") != ka:
        raise TypeError(f"out: expected a {ka} operand like a, got a {_kind_of(out, 'out')} one")
    return ka, da, kind, red, num_programs, num_xcds, cfg, seed


def _shape_config(
    a: Any,
    m: int,
    n: int,
    grouped: str,
    trans_b: bool = False,
    reduction: str | None = None,
    groups: int = 1,
) -> GemmConfig:
    """The bundled configuration of the shape's class on ``a``'s GPU (no ``config`` given)."""
    import torch

    from gemm_opt.runtime import gemm as rt

    sms = rt.sm_count(torch, a.device)
    return _class_config(m, n, grouped, trans_b, sms, reduction, groups)


@functools.lru_cache(maxsize=4096)
def _class_config(
    m: int,
    n: int,
    grouped: str,
    trans_b: bool,
    sms: int,
    reduction: str | None,
    groups: int = 1,
) -> GemmConfig:
    """:func:`~gemm_opt.kernels.h100_configs.gpu_config_name`'s config (pure: once per shape)."""
    return GPU_CONFIGS[h100.gpu_config_name(m, n, grouped, sms, reduction, groups)]


def _check_out(
    out: Any, shape: tuple[int, ...], dtype: str, backend: str, device: Any, meta: bool = False
) -> None:
    if out is None:
        return
    if _shape(out) != shape:
        raise ValueError(f"out: expected shape {shape}, got {_shape(out)}")
    dt = str(out.dtype).removeprefix("torch.")
    if _DTYPES.get(dt) != dtype:
        raise TypeError(
            f"out: expected {dtype} elements like the inputs (other output types are not "
            f"built yet), got {dt}"
        )
    if backend == "cuda":
        if out.device != device:
            raise ValueError(f"out: expected a tensor on {device}, got {out.device}")
        if not out.is_contiguous():
            raise ValueError("out: the kernel writes a contiguous row-major output")
        if not meta:
            _check_cuda_layout(out, "out")


def _spec(kind, red, grouped, dtype, cfg: GemmConfig, num_xcds, trans_b=False) -> S.KernelSpec:
    """The kernel of a checked call; ValueError naming the ``config`` field the kernels
    are not built for (the block shape must split over the warps' MMAs). Made and
    validated once per distinct call (every launch asks)."""
    return _spec_of(kind, red, grouped, dtype, cfg, num_xcds, trans_b)


@functools.lru_cache(maxsize=1024)
def _spec_of(kind, red, grouped, dtype, cfg: GemmConfig, num_xcds, trans_b) -> S.KernelSpec:
    try:
        S.check_kernel_config(
            block_m=cfg.block_m,
            block_n=cfg.block_n,
            block_k=cfg.block_k,
            num_warps=cfg.num_warps,
            num_stages=cfg.num_stages,
        )
    except ValueError as e:
        raise ValueError(f"config.{e}") from None
    return S.KernelSpec(
        kind=kind,
        reduction=red,
        grouped=grouped,
        dtype=dtype,
        block_m=cfg.block_m,
        block_n=cfg.block_n,
        block_k=cfg.block_k,
        group_m=cfg.group_m,
        num_warps=cfg.num_warps,
        num_stages=cfg.num_stages,
        num_xcds=num_xcds,
        trans_b=trans_b,
    )


# ---- checked calls ---------------------------------------------------------------------
#
# One function per operation turns the arguments into a checked ``_Call``. With
# ``meta=True`` it reads nothing but metadata (shapes, dtypes, devices: no data
# pointer, no element): what the torch operators' fake implementations run
# while tracing, so a traced call fails with the same message as an eager one.


def _meta_call(spec: S.KernelSpec | None, backend: str, a: Any, b: Any, shape: tuple) -> _Call:
    """A traced call: checked, with its output shape (symbolic sizes kept), not runnable."""
    return _Call(spec, backend, a, b, None, shape, {}, None, None, None, None, 0)


def _matmul_call(a: Any, b: Any, *, meta: bool = False, **kw: Any) -> _Call:
    backend, dtype, kind, red, P, X, cfg, seed = _common("matmul", a, b, **kw)
    m, k = _expect_ndim(a, "a", 2, "(M, K)")
    kb, n = _expect_ndim(b, "b", 2, f"(K, N) with K = {k}")
    if kb != k:
        raise ValueError(f"b: expected shape (K, N) with K = {k} (a's columns), got {(kb, n)}")
    if backend == "cuda" and not meta:
        _check_cuda_layout(a, "a")
        _check_cuda_layout(b, "b")
        if kw["config"] is None and kind != AUTO:  # auto resolves its own config
            cfg = _shape_config(a, m, n, "none", reduction=red)
    _check_out(kw["out"], (m, n), dtype, backend, getattr(a, "device", None), meta)
    if meta and kind == AUTO:  # the output does not depend on the pick
        return _meta_call(None, backend, a, b, (m, n))
    kind, red, cfg = _auto(kind, red, cfg, ("dense", m, n, k, 1), backend, dtype, a, P, X)
    spec = _spec(kind, red, "none", dtype, cfg, X)
    if meta:
        return _meta_call(spec, backend, a, b, (m, n))
    return _Call(
        spec=spec,
        backend=backend,
        a=a,
        b=b,
        out=kw["out"],
        out_shape=(m, n),
        scalars={
            "M": m,
            "N": n,
            "K": k,
            "lda": _ld(a, backend, k),
            "ldb": _ld(b, backend, n),
            "ldc": n,
        },
        lens=None,
        group_lens=None,
        num_programs=P,
        seed=seed,
        total_tiles=S.tile_count(m, n, cfg.block_m, cfg.block_n),
        auto_stream_k=kw["schedule"] == AUTO and kind == "stream-k",
    )


def _grouped_kind(kind: str) -> None:
    if kind != AUTO and kind not in S.GROUPED_KINDS:
        raise ValueError(
            f"schedule={kind!r} does not run grouped GEMM; grouped GEMM runs all groups' tiles "
            f"over one grid: schedule must be one of {', '.join(map(repr, S.GROUPED_KINDS))}"
        )


def _lens_of_call(
    group_lens: Any,
    num_groups: int | None,
    total: int,
    backend: str,
    device: Any,
    validate: bool | str,
    meta: bool,
) -> tuple[list[int] | None, Any, int]:
    """(host lengths or None, what the kernel reads, G) for the call's backend."""
    if meta:
        return None, group_lens, _lens_metadata(group_lens, num_groups, device)
    if backend == "cuda":
        return _cuda_group_lens(group_lens, num_groups, total, validate, device)
    lens = _group_lens(group_lens, num_groups, total, "a")  # host data: always checked
    return lens, group_lens, len(lens)


def _grouped_call(
    a: Any,
    b: Any,
    group_lens: Any,
    trans_b: Any,
    *,
    validate: Any = False,
    meta: bool = False,
    **kw: Any,
) -> _Call:
    if not isinstance(trans_b, bool):
        raise TypeError(f"trans_b: expected a bool, got {type(trans_b).__name__}")
    validate = _validate_mode(validate)
    backend, dtype, kind, red, P, X, cfg, seed = _common("grouped_matmul", a, b, **kw)
    _grouped_kind(kind)
    s, k = _expect_ndim(a, "a", 2, "(sum(group_lens), K)")
    want = "(G, N, K)" if trans_b else "(G, K, N)"
    g, d1, d2 = _expect_ndim(b, "b", 3, want)
    kb, n = (d2, d1) if trans_b else (d1, d2)
    if kb != k:
        raise ValueError(
            f"b: expected shape {want} with K = {k} (a's columns), got {_shape(b)}"
            + ("" if trans_b else " (pass trans_b=True for weights stored (G, N, K))")
        )
    device = getattr(a, "device", None)
    lens, gl, _ = _lens_of_call(group_lens, g, s, backend, device, validate, meta)
    if backend == "cuda" and not meta:
        _check_cuda_layout(a, "a")
        _check_cuda_layout(b, "b")
        if kw["config"] is None and kind != AUTO:  # auto resolves its own config
            cfg = _shape_config(a, s, n, "m", trans_b)
    _check_out(kw["out"], (s, n), dtype, backend, device, meta)
    if meta and kind == AUTO:
        return _meta_call(None, backend, a, b, (s, n))
    op = "dgrad" if trans_b else "fwd"
    kind, red, cfg = _auto(kind, red, cfg, (op, s, n, k, g), backend, dtype, a, P, X)
    spec = _spec(kind, red, "m", dtype, cfg, X, trans_b)
    if meta:
        return _meta_call(spec, backend, a, b, (s, n))
    bm, bn = cfg.block_m, cfg.block_n
    if backend == "cuda" or lens is None:
        # The lengths stay where they are: the grid is sized without them.
        tiles = S.grouped_tiles_bound("m", g, rows=s, m=0, n=n, block_m=bm, block_n=bn)
    else:
        tiles = S.grouped_tiles("m", lens, m=0, n=n, k=k, block_m=bm, block_n=bn).total_tiles
    return _Call(
        spec=spec,
        backend=backend,
        a=a,
        b=b,
        out=kw["out"],
        out_shape=(s, n),
        scalars={
            "M": s,
            "N": n,
            "K": k,
            "num_groups": g,
            "lda": _ld(a, backend, k),
            "ldb": _ld(b, backend, k if trans_b else n),
            "ldc": n,
        },
        lens=lens,
        group_lens=gl,
        num_programs=P,
        seed=seed,
        total_tiles=tiles,
    )


def _variable_k_call(
    a: Any, b: Any, group_lens: Any, *, validate: Any = False, meta: bool = False, **kw: Any
) -> _Call:
    validate = _validate_mode(validate)
    backend, dtype, kind, red, P, X, cfg, seed = _common("grouped_matmul_variable_k", a, b, **kw)
    _grouped_kind(kind)
    s, m = _expect_ndim(a, "a", 2, "(sum(group_lens), M)")
    sb, n = _expect_ndim(b, "b", 2, f"(S, N) with S = {s}")
    if sb != s:
        raise ValueError(f"b: expected shape (S, N) with S = {s} (a's rows), got {(sb, n)}")
    device = getattr(a, "device", None)
    lens, gl, g = _lens_of_call(group_lens, None, s, backend, device, validate, meta)
    if backend == "cuda" and not meta:
        _check_cuda_layout(a, "a")
        _check_cuda_layout(b, "b")
        if kw["config"] is None and kind != AUTO:  # auto resolves its own config
            cfg = _shape_config(a, m, n, "k", groups=g)
    _check_out(kw["out"], (g, m, n), dtype, backend, device, meta)
    if meta and kind == AUTO:
        return _meta_call(None, backend, a, b, (g, m, n))
    kind, red, cfg = _auto(kind, red, cfg, ("wgrad", m, n, s, g), backend, dtype, a, P, X)
    spec = _spec(kind, red, "k", dtype, cfg, X)
    if meta:
        return _meta_call(spec, backend, a, b, (g, m, n))
    tiles = S.grouped_tiles_bound(
        "k", g, rows=s, m=m, n=n, block_m=cfg.block_m, block_n=cfg.block_n
    )  # exact: G grids of M x N tiles
    return _Call(
        spec=spec,
        backend=backend,
        a=a,
        b=b,
        out=kw["out"],
        out_shape=(g, m, n),
        scalars={
            "M": m,
            "N": n,
            "K": s,
            "num_groups": g,
            "lda": _ld(a, backend, m),
            "ldb": _ld(b, backend, n),
            "ldc": n,
        },
        lens=lens,
        group_lens=gl,
        num_programs=P,
        seed=seed,
        total_tiles=tiles,
    )


# ---- the public functions --------------------------------------------------------------


def _torch_pair(a: Any, b: Any) -> bool:
    """Both operands are torch tensors: the call goes through the ``gemm_opt::`` operators
    (:mod:`gemm_opt.torch_ops`), which ``torch.compile`` and autograd see."""
    return _is_torch_tensor(a) and _is_torch_tensor(b)


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
) -> Any:
    """C = A @ B: ``a`` of shape (M, K), ``b`` of shape (K, N), result (M, N).

    See the module docstring for the backends, schedules and reductions.
    ``num_xcds`` is the chiplet count of work stealing (one counter each).
    On torch tensors this is the operator ``torch.ops.gemm_opt.matmul``
    (``matmul_out`` with ``out``), differentiable in ``a`` and ``b``.
    """
    kw = {
        "schedule": schedule, "reduction": reduction, "num_programs": num_programs,
        "num_xcds": num_xcds, "config": config, "out": out, "seed": seed,
    }  # fmt: skip
    if _torch_pair(a, b):
        from gemm_opt import torch_ops

        return torch_ops.matmul(a, b, **kw)
    return _run(_matmul_call(a, b, **kw))


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
    """
    kw = {
        "schedule": schedule, "reduction": reduction, "num_programs": num_programs,
        "num_xcds": num_xcds, "config": config, "out": out, "seed": seed,
    }  # fmt: skip
    if _torch_pair(a, b):
        from gemm_opt import torch_ops

        return torch_ops.grouped_matmul(a, b, group_lens, trans_b=trans_b, validate=validate, **kw)
    return _run(_grouped_call(a, b, group_lens, trans_b, validate=validate, **kw))


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
) -> Any:
    """Grouped GEMM over K (wgrad): ``out[g] = a[rows of g].T @ b[rows of g]``.

    ``a`` (S, M), ``b`` (S, N), S = sum(group_lens); result (G, M, N). An
    empty group's output is exactly zero. ``group_lens`` and ``validate`` as
    in :func:`grouped_matmul`; on torch tensors this is the operator
    ``torch.ops.gemm_opt.grouped_matmul_variable_k``.
    """
    kw = {
        "schedule": schedule, "reduction": reduction, "num_programs": num_programs,
        "num_xcds": num_xcds, "config": config, "out": out, "seed": seed,
    }  # fmt: skip
    if _torch_pair(a, b):
        from gemm_opt import torch_ops

        return torch_ops.grouped_matmul_variable_k(a, b, group_lens, validate=validate, **kw)
    return _run(_variable_k_call(a, b, group_lens, validate=validate, **kw))


# ---- execution -------------------------------------------------------------------------


def _run(call: _Call) -> Any:
    if call.backend == "cuda":
        return _run_cuda(call)
    return _run_model(call)


def _run_model(call: _Call) -> Any:
    """Interpret the kernel on numpy storage (bf16 held as bf16-exact float32, like the model)."""
    import numpy as np

    from gemm_opt.kernels import cache

    spec = call.spec
    torch_in = call.backend == "torch-cpu"

    def storage(x: Any) -> Any:
        if torch_in:
            x = x.detach()
            x = x.float() if spec.dtype == "bf16" else x
            return np.ascontiguousarray(x.numpy())
        return np.ascontiguousarray(x, dtype=np.float16 if spec.dtype == "fp16" else np.float32)

    a, b = storage(call.a), storage(call.b)
    P = call.num_programs or MODEL_PROGRAMS
    if spec.kind == "work-stealing":
        S.check_work_stealing(P, spec.num_xcds)
    layout = S.workspace_layout(
        spec.kind, spec.reduction, P, spec.num_xcds, spec.block_m, spec.block_n
    )
    fill = 0.0 if layout.zero_output else np.nan
    c = np.full(call.out_shape, fill, dtype=np.float16 if spec.dtype == "fp16" else np.float32)
    values = {
        "a": a,
        "b": b,
        "c": c.reshape(-1, call.out_shape[-1]),
        "sync": np.zeros(max(layout.sync_elements, 1), dtype=np.int32),
        "partials": np.full(max(layout.partial_elements, 1), np.nan, dtype=np.float32),
        **call.scalars,
    }
    if call.lens is not None:  # the model reads host lengths (always checked)
        values["group_lens"] = np.asarray(call.lens, dtype=np.int32).reshape(-1)
    cache.run_on_model(
        spec,
        values,
        grid=S.grid_size(spec.kind, call.total_tiles, P),
        num_resident=P,
        seed=call.seed,
    )
    if torch_in:
        import torch

        result = torch.from_numpy(c).to(call.a.dtype)
    else:
        result = c.astype(call.a.dtype) if c.dtype != call.a.dtype else c
    if call.out is not None:
        if torch_in:
            call.out.copy_(result)
        else:
            np.copyto(call.out, result)
        return call.out
    return result


#: Prepared launches of eager CUDA ``matmul`` calls by signature (:func:`_signature`).
_PREPARED: dict[tuple, Any] = {}
#: Signatures kept before the memo is cleared.
PREPARED_MEMO_SIZE = 1024


def _signature(a: Any, b: Any, kw: Mapping[str, Any]) -> tuple | None:
    """Everything a CUDA ``matmul`` call's checks and choices depend on, else None (not
    memoized: ``out=`` or a config given as a mapping). The addresses count only by
    their remainder modulo 16 bytes, the most any kernel assumes of them."""
    config = kw["config"]
    if kw["out"] is not None or not (config is None or isinstance(config, GemmConfig)):
        return None
    from gemm_opt.runtime import gemm as rt

    return (
        a.shape, a.stride(), a.dtype, a.device, a.data_ptr() % 16,
        b.shape, b.stride(), b.dtype, b.device, b.data_ptr() % 16,
        kw["schedule"], kw["reduction"], kw["num_programs"], kw["num_xcds"], config, kw["seed"],
        os.environ.get(rt.BUNDLE_DIR_ENV), rt._builder,
    )  # fmt: skip


def _matmul_eager_cuda(a: Any, b: Any, kw: Mapping[str, Any]) -> Any:
    """``matmul`` of CUDA tensors called eagerly: the first call of a signature runs the
    checks and choices and keeps its prepared launch; a later one allocates C and
    launches. Other calls (and every bad one) take the full path."""
    key = _signature(a, b, kw)
    hit = _PREPARED.get(key) if key is not None else None
    if hit is not None:
        import torch

        out_shape, prepared = hit
        c = torch.empty(out_shape, dtype=a.dtype, device=a.device)
        prepared(a, b, c)
        return c
    call = _matmul_call(a, b, **kw)
    if call.backend != "cuda" or key is None:
        return _run(call)
    c, prepared = _launch_cuda(call, prepare=("a", "b", "c"))
    if prepared is not None:
        if len(_PREPARED) >= PREPARED_MEMO_SIZE:
            _PREPARED.clear()
        _PREPARED[key] = (call.out_shape, prepared)
    return c


def _run_cuda(call: _Call) -> Any:
    return _launch_cuda(call)[0]


def _programs(call: _Call, default: int) -> int:
    """The program count of a GPU launch: the caller's, else ``default`` (the
    resident programs); when ``schedule="auto"`` chose stream-K, the most
    programs within 10% below ``default`` that give each one a single K range
    inside one tile (:func:`~gemm_opt.core.schedules.aligned_stream_k_programs`)."""
    if call.num_programs is not None:
        return call.num_programs
    if not call.auto_stream_k:
        return default
    spec = call.spec
    assert spec is not None
    ipt = S.iters_per_tile(call.scalars["K"], spec.block_k)
    return S.aligned_stream_k_programs(call.total_tiles, ipt, default)


def _launch_cuda(call: _Call, prepare: tuple[str, ...] | None = None) -> tuple[Any, Any]:
    import torch

    from gemm_opt.runtime import gemm as rt

    if rt.compiler_installed() and not rt.has_builder():
        from gemm_opt.kernels import disk_cache  # kernels the bundles lack: built, kept on disk

        disk_cache.install()
    spec = call.spec
    device = call.a.device
    resident = None if spec.kind == "data-parallel" else rt.resident_programs(spec, device)
    P = _programs(call, resident or rt.sm_count(torch, device))
    if spec.kind == "work-stealing":
        S.check_work_stealing(P, spec.num_xcds)
    if spec.kind == "stream-k" and spec.reduction != "atomic":
        if P > resident:
            raise ValueError(
                f"num_programs={P} exceeds the {resident} resident programs (SMs x occupancy): "
                f"stream-K's {spec.reduction} fix-up waits on other programs, so all of them "
                "must be resident at once"
            )
    c = call.out
    if c is None:
        c = torch.empty(call.out_shape, dtype=call.a.dtype, device=device)
    values: dict[str, Any] = {"a": call.a, "b": call.b, "c": c, **call.scalars}
    if call.group_lens is not None:
        values["group_lens"] = call.group_lens  # int32 on the device: read by the kernel only
    prepared = rt.launch(
        spec, values, num_programs=P, total_tiles=call.total_tiles, prepare=prepare
    )
    return c, prepared


__all__ = [
    "AUTO",
    "GPU_CONFIG",
    "GPU_CONFIGS",
    "MODEL_CONFIG",
    "SCHEDULES",
    "GemmConfig",
    "grouped_matmul",
    "grouped_matmul_variable_k",
    "matmul",
]
