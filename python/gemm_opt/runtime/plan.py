"""The GEMM plan: every decision of one GEMM call, made once per call signature.

A :class:`GemmPlan` holds what a call of ``matmul``, ``grouped_matmul`` or
``grouped_matmul_variable_k`` runs: the problem (shapes, dtype, backend, the
scalars the kernel takes), the schedule, reduction and configuration (the
tuned ones for ``schedule="auto"``), the kernel spec, the program count and
grid, the workspace layout, and on the GPU, after its first launch, the
prepared launch (the twin chosen among the spec's kernels, its checked
arguments: :class:`~gemm_opt.runtime.gemm.Prepared`). The model path, the GPU
path and the torch operators' fake implementations all build their plan here
(:func:`plan`), from the same checks, so a bad call fails with the same
``TypeError``/``ValueError`` naming the argument wherever it runs.

Plans are kept in one cache, keyed by the call's signature: everything the
checks and choices read (shapes, strides, dtypes, devices, addresses modulo
:data:`ALIGN`, host group lengths, the keyword values with their types,
whether ``torch.use_deterministic_algorithms(True)`` is in force). The
one invalidation rule: a plan is used only while the environment it was made
under holds (:func:`environment`: the bundle folder, the on-demand kernel
builder, the tuned table's folder and version for ``"auto"``), and the cache
is emptied when it holds :data:`PLAN_CACHE_SIZE` plans. A call whose
signature cannot be keyed (a traced call, ``config`` as a mapping of non-int
values, unusual ``group_lens``) builds its plan without the cache.

What a plan cannot hold is done per call: the output allocation, host
lengths copied to the device, ``validate``'s checks of device lengths, the
workspace (fresh per launch, its counters zeroed on the launch stream:
:class:`~gemm_opt.runtime.gemm.Prepared`).

Imports only the standard library and the runtime at module level; torch
when a tensor is planned or launched (the GPU half runs with only torch
installed).
"""

from __future__ import annotations

import operator
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from gemm_opt.core import schedules as S
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.runtime import autotune, cost_model
from gemm_opt.runtime import gemm as rt

#: Schedules ``schedule=`` takes besides :data:`AUTO`.
SCHEDULES = S.KINDS
#: The schedule that picks schedule, reduction and config from the tuned tables.
AUTO = "auto"
#: Kernel element type names by framework dtype name.
_DTYPES = {framework: name for name, framework in S.DTYPES.items()}
#: Pointer alignment the compiled kernels assume (bytes).
ALIGN = 16
#: Resident programs on the model when ``num_programs`` is None.
MODEL_PROGRAMS = 4
#: ``validate=`` values: no value check, a host check (reads the lengths: a device
#: sync), a device-side assertion (no sync; a failure is a device-side assert).
VALIDATE = (False, True, "device")
#: The operations a plan is made for.
OPS = ("matmul", "grouped_matmul", "grouped_matmul_variable_k")
#: Plans kept before the cache is emptied.
PLAN_CACHE_SIZE = 1024
#: The most programs a launch can have: CUDA's grid limit in x (the model keeps it too).
MAX_PROGRAMS = rt.MAX_GRID[0]
#: The most chiplets work stealing spreads its counters over (MI300X has 8); each
#: chiplet's counter takes its own 256-byte line of the workspace.
MAX_XCDS = 64
#: The largest value of any config field: the kernels take them as 32-bit attributes.
MAX_CONFIG_VALUE = 2**31 - 1
#: The largest block dimension: a 256 x 256 fp32 accumulator (256 KiB) already
#: needs every register of an H100 SM.
MAX_BLOCK = 256
#: The most warps of a program: CUDA's 1024 threads per block.
MAX_WARPS = 32


# ---- argument checks -------------------------------------------------------------------


def kind_of(x: Any, name: str) -> str:
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


def is_torch_tensor(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "device")


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
    """The grouped GEMMs' CUDA operands (and every ``out``): row-major with unit inner stride,
    groups back to back, 16-byte aligned data."""
    if x.dim() and x.stride(-1) != 1 and x.shape[-1] > 1:
        raise ValueError(
            f"{name}: the kernel reads rows with unit stride; got strides {tuple(x.stride())} "
            f"(pass {name}.contiguous())"
        )
    if x.dim() == 3 and x.shape[0] > 1 and x.stride(0) != x.shape[1] * _ld(x, "cuda", x.shape[2]):
        raise ValueError(
            f"{name}: the groups must be stored back to back, {x.shape[1]} rows of the row "
            f"stride apart (strides {tuple(x.stride())}); pass {name}.contiguous()"
        )
    if x.data_ptr() % ALIGN:
        raise ValueError(
            f"{name}: data at {x.data_ptr():#x} is not {ALIGN}-byte aligned, which the kernel "
            f"assumes (pass {name}.clone())"
        )


def _check_cuda_ptr(
    x: Any, name: str, offsets: tuple[tuple[int, int], ...] = (), which: int = 0
) -> None:
    """The kernels assume 16-byte aligned operands: ``x``'s data, and with
    ``offsets`` (a per-batch route) each batch's first element."""
    if x.data_ptr() % ALIGN:
        raise ValueError(
            f"{name}: data at {x.data_ptr():#x} is not {ALIGN}-byte aligned, which the kernel "
            f"assumes (pass {name}.clone())"
        )
    item = x.element_size()
    for i, offset in enumerate(offsets):
        if offset[which] * item % ALIGN:
            raise ValueError(
                f"{name}: batch {i} starts {offset[which] * item} bytes past the first one, "
                f"not a multiple of {ALIGN} (the kernels assume {ALIGN}-byte aligned operands; "
                f"strides {tuple(x.stride())})"
            )


def _ld(x: Any, backend: str, dense: int) -> int:
    """A row-major operand's leading dimension: its row stride on CUDA (views keep theirs),
    the dense row length on the model (which copies operands to contiguous storage)."""
    if backend == "cuda" and x.dim() >= 2 and x.shape[-2] > 1:
        return int(x.stride(-2))
    return dense


# ---- operand layouts (matmul) ------------------------------------------------------------


def element_strides(x: Any, name: str) -> tuple[int, ...]:
    """The strides of an array or tensor in elements (numpy's are in bytes)."""
    if is_torch_tensor(x):
        return tuple(int(s) for s in x.stride())
    item = x.itemsize
    if any(s % item for s in x.strides):
        raise ValueError(
            f"{name}: strides {x.strides} (bytes) are not whole elements of {item} bytes"
        )
    return tuple(s // item for s in x.strides)


def matrix_layout(
    shape: tuple[int, int], strides: tuple[int, int], name: str, align: int
) -> tuple[bool, int]:
    """(transposed, leading dimension) of a matrix of ``shape`` (rows, cols) with
    ``strides``, read as ``torch.matmul`` reads it: row-major if its columns
    have unit stride (``ld``: the row stride, at least ``cols``), else
    column-major if its rows have unit stride (stored transposed: ``ld`` the
    column stride, at least ``rows``); ValueError naming ``name`` otherwise.
    A dimension of size 1 takes any stride; a matrix that is both (one row
    or one column, or none) is row-major, its ``ld`` the dense one rounded up to
    ``align`` elements (:func:`~gemm_opt.core.schedules.alignment` of its dtype;
    never stepped over: the aligned twins' fact on it holds)."""
    rows, cols = shape
    sr, sc = strides
    if rows == 0 or cols == 0:  # no element: any strides
        return False, _round_up(max(cols, 1), align)
    if (cols <= 1 or sc == 1) and (rows <= 1 or sr >= max(cols, 1)):
        return False, sr if rows > 1 else _round_up(max(cols, 1), align)
    if (rows <= 1 or sr == 1) and (cols <= 1 or sc >= max(rows, 1)):
        return True, sc if cols > 1 else _round_up(max(rows, 1), align)
    raise ValueError(
        f"{name}: a ({rows}, {cols}) matrix with strides ({sr}, {sc}) is neither row-major "
        f"(unit column stride, row stride >= {cols}) nor column-major (unit row stride, "
        f"column stride >= {rows}); the kernels read one of the two as it lies"
    )


def _round_up(n: int, align: int) -> int:
    return -(-n // align) * align


def _collapse(shape: tuple[int, ...], strides: tuple[int, ...]) -> int | None:
    """The stride of ``shape``'s dimensions seen as one (the last one's), or None
    where they do not lie evenly (each dimension of size > 1 must step over the
    whole of the ones inside it)."""
    step, expect = None, None
    for d, s in zip(reversed(shape), reversed(strides), strict=True):
        if d == 1:
            continue
        if step is None:
            step, expect = s, s * d
            continue
        if s != expect:
            return None
        expect = s * d
    return 1 if step is None else step


def _broadcast(sa: tuple[int, ...], sb: tuple[int, ...]) -> tuple[int, ...]:
    """torch.matmul's batch shape of ``a``'s and ``b``'s batch dimensions."""
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    out = []
    for x, y in zip(pa, pb, strict=True):
        if x != y and x != 1 and y != 1:
            raise ValueError(
                f"b: batch dimensions {sb} do not broadcast with a's {sa} (as torch.matmul "
                "broadcasts them)"
            )
        out.append(y if x == 1 else x)
    return tuple(out)


def _batch_strides(
    shape: tuple[int, ...], strides: tuple[int, ...], batch: tuple[int, ...]
) -> tuple[int, ...]:
    """The strides of an operand's batch dimensions over the broadcast ``batch``
    (0 where it is broadcast)."""
    pad = len(batch) - len(shape)
    shape, strides = (1,) * pad + shape, (0,) * pad + strides
    return tuple(0 if d == 1 else s for d, s in zip(shape, strides, strict=True))


@dataclass(frozen=True)
class MatmulRoute:
    """How a matmul call runs (:func:`matmul_route`): the kernel's problem and the
    operands' layouts as stored, all views of the caller's tensors."""

    #: "dense" (the batch folded into M, or none), "grouped" (grouped "m" with equal
    #: group lengths: batches back to back), "grouped-k" (grouped "k", the wgrad
    #: kernels, with equal lengths: per-batch transposed A and row-major B, both
    #: back to back along K) or "loop" (one dense launch per batch).
    how: str
    rows: int  # M of the kernel (dense: batch x M folded)
    groups: int  # batches
    trans_a: bool
    lda: int
    trans_b: bool
    ldb: int
    #: "loop": each batch's element offsets of a and b (from their first elements).
    offsets: tuple[tuple[int, int], ...] = ()


def matmul_route(
    a: Any, b: Any, batch: tuple[int, ...], name_a: str = "a", *, loop: bool = False
) -> MatmulRoute:
    """The cheapest copy-free way to run ``a @ b`` over the broadcast ``batch``:

    * dense: no batch, or ``b`` shared by every batch and ``a``'s batches lying
      back to back along M (the batch folds into M: one GEMM);
    * grouped: both operands' batches back to back (``a`` along M, ``b`` as a
      stack of matrices), run by the grouped "m" kernels with equal group
      lengths: one launch, the batch tiles in one grid;
    * grouped-k: ``a`` column-major in each batch and ``b`` row-major, both
      stacks of matrices back to back along K (``A.mT @ dC``, bmm's dB): the
      stored A is wgrad's (S, M) operand and B its (S, N) one, so the
      grouped "k" kernels with K lengths run it in one launch;
    * loop: anything else (a broadcast ``a``, sliced batches): one dense launch
      per batch, on views (``loop``: this route whenever there is a batch).
    """
    sa, sb = _shape(a), _shape(b)
    ta, tb = element_strides(a, name_a), element_strides(b, "b")
    align = S.alignment(_dtype_of(a, name_a))
    m, k = sa[-2:]
    n = sb[-1]
    groups = 1
    for d in batch:
        groups *= d
    ea, eb = _batch_strides(sa[:-2], ta[:-2], batch), _batch_strides(sb[:-2], tb[:-2], batch)
    for name, st in ((name_a, ea), ("b", eb)):
        if any(s < 0 for s in st):
            raise ValueError(f"{name}: negative batch strides {st} (the kernels step forward)")
    b_shared = not any(eb)
    rows_stride = _collapse((*batch, m), (*ea, ta[-2]))
    if groups <= 1:
        trans_a, lda = matrix_layout(
            (groups * m, k), (rows_stride or ta[-2], ta[-1]), name_a, align
        )
        trans_b, ldb = matrix_layout((k, n), tb[-2:], "b", align)
        return MatmulRoute("dense", groups * m, groups, trans_a, lda, trans_b, ldb)
    trans_a, lda = matrix_layout((m, k), ta[-2:], name_a, align)  # each batch's
    trans_b, ldb = matrix_layout((k, n), tb[-2:], "b", align)
    # a's batches stacked along M, read as one matrix (None where they do not form one)
    stacked = None
    if rows_stride is not None and not loop:
        try:
            stacked = matrix_layout((groups * m, k), (rows_stride, ta[-1]), name_a, align)
        except ValueError:
            stacked = None
    if stacked is not None and b_shared:
        return MatmulRoute("dense", groups * m, groups, *stacked, trans_b, ldb)
    step_b = _collapse(batch, eb)
    if stacked is not None and m and n and k and step_b == (n if trans_b else k) * ldb:
        return MatmulRoute("grouped", groups * m, groups, *stacked, trans_b, ldb)
    if trans_a and not trans_b and m and n and k and not loop:
        along_k_a = _collapse((*batch, k), (*ea, ta[-1]))
        along_k_b = _collapse((*batch, k), (*eb, tb[-2]))
        if along_k_a == lda and along_k_b == ldb:
            return MatmulRoute("grouped-k", m, groups, True, lda, False, ldb)
    offsets = []
    for i in range(groups):
        oa = ob = 0
        rest = i
        for d, s_a, s_b in zip(reversed(batch), reversed(ea), reversed(eb), strict=True):
            rest, j = divmod(rest, d)
            oa, ob = oa + j * s_a, ob + j * s_b
        offsets.append((oa, ob))
    return MatmulRoute("loop", m, groups, trans_a, lda, trans_b, ldb, tuple(offsets))


def check_config(config: Any, default: S.GemmConfig) -> S.GemmConfig:
    """``config`` (a GemmConfig, a partial dict over ``default``, or None) checked."""
    if config is None:
        return default
    if isinstance(config, S.GemmConfig):
        cfg = config
    elif isinstance(config, Mapping):
        known = {f.name for f in fields(S.GemmConfig)}
        bad = sorted(set(config) - known)
        if bad:
            raise ValueError(f"config: unknown key {bad[0]!r} (keys: {', '.join(sorted(known))})")
        cfg = S.GemmConfig(**{**default.__dict__, **config})
    else:
        raise TypeError(f"config: expected a GemmConfig or a dict, got {type(config).__name__}")
    for f in fields(S.GemmConfig):
        v = getattr(cfg, f.name)
        if f.name == "num_stages" and v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"config.{f.name} must be a positive integer, got {v!r}")
        if v > MAX_CONFIG_VALUE:
            raise ValueError(
                f"config.{f.name} must be at most {MAX_CONFIG_VALUE} (the kernels take it as a "
                f"32-bit attribute), got {v}"
            )
    for f, most in (("block_m", MAX_BLOCK), ("block_n", MAX_BLOCK), ("block_k", MAX_BLOCK)):
        if getattr(cfg, f) > most:
            raise ValueError(
                f"config.{f} must be at most {most} (the largest tile a program's "
                f"accumulator and buffers hold), got {getattr(cfg, f)}"
            )
    if cfg.num_warps > MAX_WARPS:
        raise ValueError(
            f"config.num_warps must be at most {MAX_WARPS} (1024 threads per program), "
            f"got {cfg.num_warps}"
        )
    for f in ("block_m", "block_n", "block_k", "num_warps"):
        v = getattr(cfg, f)
        if v & (v - 1):
            raise ValueError(f"config.{f} must be a power of two, got {v}")
    for f in ("block_m", "block_n", "block_k"):
        if getattr(cfg, f) < 16:
            raise ValueError(f"config.{f} must be at least 16, got {getattr(cfg, f)}")
    return cfg


def as_int(value: Any, name: str, what: str = "an int") -> int:
    """An integer argument as an ``int``: Python and numpy integers (anything with
    ``__index__``), not bools (``True`` is not a count)."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        raise TypeError(f"{name}: expected {what}, got bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: expected {what}, got {type(value).__name__}") from None


def _positive_int(value: Any, name: str, most: int) -> int:
    value = as_int(value, name)
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    if value > most:
        raise ValueError(f"{name} must be at most {most}, got {value}")
    return value


def _schedule(schedule: Any, reduction: Any) -> tuple[str, str | None]:
    if schedule == AUTO:
        if reduction is not None and reduction != "atomic":
            raise ValueError(
                f"reduction={reduction!r} with schedule='auto': auto picks the reduction with "
                "the schedule; pass reduction=None (bitwise reproducible picks), "
                "reduction='atomic' (atomic stream-K allowed), or name the schedule "
                "(schedule='stream-k')"
            )
        return AUTO, reduction
    if not isinstance(schedule, str) or schedule not in SCHEDULES:
        raise ValueError(
            f"schedule must be 'auto' or one of {', '.join(map(repr, SCHEDULES))}; got {schedule!r}"
        )
    if reduction is not None and not isinstance(reduction, str):
        raise TypeError(f"reduction: expected a string or None, got {type(reduction).__name__}")
    return schedule, S.resolve_reduction(schedule, reduction)


def resolve_auto(
    kind: str,
    red: str | None,
    cfg: S.GemmConfig | None,
    problem: tuple[str, int, int, int, int],
    backend: str,
    dtype: str,
    a: Any,
    num_programs: int | None,
    num_xcds: int,
    trans_b: bool | None = None,
    trans_a: bool = False,
    swap_ok: bool = True,
) -> tuple[str, str | None, S.GemmConfig, int | None, bool]:
    """Resolve ``schedule="auto"`` (:mod:`gemm_opt.runtime.autotune`) for the device's
    target (the model resolves against ``cuda:90``'s): the tuned choice of exactly this
    problem, else the cost model's, among the kernels the GPU has for the operands'
    layout (:func:`available_kernels`; the model runs any); an explicit ``config``
    replaces the chosen one. Other schedules pass through. Bitwise reproducible unless
    ``red == "atomic"`` (``reduction="atomic"``: atomic stream-K allowed; refused under
    ``torch.use_deterministic_algorithms(True)`` by :func:`_check_deterministic`).
    Without ``swap_ok`` (a fused epilogue, whose bias and scales run along the kernel's
    N) swap-AB is not a candidate.
    Returns (kind, reduction, config, split-K's slices per tile or None, swap-AB)."""
    if kind != AUTO:
        assert cfg is not None
        return kind, red, cfg, None, False
    target, sms, available = autotune.MODEL_TARGET, None, None
    if backend == "cuda":
        import torch

        target, sms = rt.device_target(torch, a.device), rt.sm_count(torch, a.device)
        form, tb = autotune.OP_KERNELS[problem[0]]
        tb = tb if trans_b is None else trans_b
        available = available_kernels(target, form, dtype, num_xcds, tb, trans_a)
    if not swap_ok:
        available = _without_swap_ab(available)
    choice = autotune.choose(
        *problem, dtype, target=target, sms=sms, allow_atomic=red == "atomic",
        available=available,
    )  # fmt: skip
    if choice.schedule == "work-stealing" and num_programs is not None:
        S.check_work_stealing(num_programs, num_xcds)
    split_k = choice.split_k if cfg is None else None
    swap = choice.swap_ab and cfg is None  # an explicit config is one of A @ B's tiles
    return choice.schedule, choice.reduction, cfg or choice.config, split_k, swap


def _without_swap_ab(available: autotune.Available | None) -> autotune.Available:
    """``available`` less every swap-AB kernel (None: any kernel but those)."""
    key = None if available is None else available.key

    def runs(kind: str, red: str | None, cfg: S.GemmConfig, swap_ab: bool = False) -> bool:
        return not swap_ab and (available is None or available.runs(kind, red, cfg, swap_ab))

    return autotune.Available(("without swap-AB", key), runs)


def available_kernels(
    target: str, form: str, dtype: str, num_xcds: int, trans_b: bool, trans_a: bool
) -> autotune.Available | None:
    """The kernels ``auto`` may pick on the GPU for one operand layout and form: those
    the loaded bundles of ``target`` hold (their own index of kernel names), or any
    where missing kernels are built on demand (None)."""
    if rt.has_builder():
        return None
    st = rt.store(target)
    names = st.kernels()

    def runs(kind: str, red: str | None, cfg: S.GemmConfig, swap_ab: bool = False) -> bool:
        try:
            if swap_ab:
                spec = _swapped_spec(kind, red, form, dtype, cfg, num_xcds, trans_b, trans_a)
            else:
                spec = _spec(kind, red, form, dtype, cfg, num_xcds, trans_b, trans_a)
        except ValueError:
            return False
        return spec.name in names

    return autotune.Available((str(st.dir), form, dtype, num_xcds, trans_b, trans_a), runs)


def torch_deterministic() -> bool:
    """Whether ``torch.use_deterministic_algorithms(True)`` is in force (torch loaded)."""
    torch = sys.modules.get("torch")
    return bool(torch is not None and torch.are_deterministic_algorithms_enabled())


def _user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning its caller raises name the user's
    line: the first frame outside gemm_opt and torch (the call reaches here
    through the API, the torch ops and torch's dispatch, at depths that vary)."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None:
        name = frame.f_globals.get("__name__", "")
        if name.split(".")[0] not in ("gemm_opt", "torch"):
            return level
        frame, level = frame.f_back, level + 1
    return level


def _check_deterministic(kind: str, red: str | None) -> None:
    """Atomic stream-K named or allowed (``schedule="auto"``) under
    ``torch.use_deterministic_algorithms(True)``: an error, as PyTorch's own
    nondeterministic operations give (a warning with ``warn_only``)."""
    if not (kind in ("stream-k", AUTO) and red == "atomic" and torch_deterministic()):
        return
    fix = "reduction='linear' or 'tree'" if kind == "stream-k" else "reduction=None"
    message = (
        "reduction='atomic': atomic stream-K adds into C in the order its programs finish, "
        "so its bits vary run to run, and torch.use_deterministic_algorithms(True) is set; "
        f"pass {fix} (deterministic)"
    )
    torch = sys.modules["torch"]
    if torch.is_deterministic_algorithms_warn_only_enabled():
        import warnings

        warnings.warn(message, UserWarning, stacklevel=_user_stacklevel())
        return
    raise RuntimeError(message)


def host_lens(group_lens: Any) -> list[int]:
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
    if is_torch_tensor(group_lens) and group_lens.device.type != "cpu":
        raise ValueError(
            "group_lens: the host reads these lengths, so they must be a sequence, an array "
            f"or a CPU tensor; got a tensor on {group_lens.device}"
        )
    lens = group_lens.tolist() if hasattr(group_lens, "tolist") else list(group_lens)
    for i, n in enumerate(lens):
        lens[i] = as_int(n, f"group_lens[{i}]", "an integer")
        if lens[i] < 0:
            raise ValueError(f"group_lens[{i}] is {lens[i]}; group lengths must be >= 0")
    return lens


def _group_lens(group_lens: Any, num_groups: int | None, total: int, total_name: str):
    """The lengths as a list of ints; checks type, sign, count and sum (reads every length)."""
    lens = host_lens(group_lens)
    if num_groups is not None and len(lens) != num_groups:
        raise ValueError(
            f"group_lens: expected {num_groups} lengths (one per group of b), got {len(lens)}"
        )
    if sum(lens) != total:
        raise ValueError(
            f"group_lens: the lengths sum to {sum(lens)}, but {total_name} has {total} rows"
        )
    return lens


def validate_mode(validate: Any) -> bool | str:
    """``validate`` checked (one of :data:`VALIDATE`)."""
    if not any(validate is v or (isinstance(v, str) and validate == v) for v in VALIDATE):
        raise ValueError(
            f"validate must be False, True (check group_lens on the host: a device sync) or "
            f"'device' (a device-side assertion, no sync); got {validate!r}"
        )
    return validate


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
    if not is_torch_tensor(group_lens):
        return False
    return group_lens.device.type != "cpu" or group_lens.device == device


def _check_out(
    out: Any, shape: tuple[int, ...], dtype: str, backend: str, device: Any, meta: bool = False
) -> None:
    if out is None:
        return
    if _shape(out) != shape:
        raise ValueError(f"out: expected shape {shape}, got {_shape(out)}")
    dt = str(out.dtype).removeprefix("torch.")
    if _DTYPES.get(dt) != dtype and dt != "float32":
        raise TypeError(
            f"out: expected {dtype} elements like the inputs, or float32 (an fp32 C: "
            f"accumulate into a main_grad), got {dt}"
        )
    if backend == "cuda":
        if out.device != device:
            raise ValueError(f"out: expected a tensor on {device}, got {out.device}")
        if not out.is_contiguous():
            raise ValueError("out: the kernel writes a contiguous row-major output")
        if not meta:
            _check_cuda_layout(out, "out")


@dataclass(frozen=True)
class EpilogueCall:
    """A call's checked epilogue: the kernel's :class:`~gemm_opt.core.schedules.EpilogueSpec`
    and C's element type (``"fp32"`` for a float32 ``out``, else None: the inputs')."""

    spec: S.EpilogueSpec
    out_dtype: str | None = None


def has_epilogue(
    bias: Any, activation: Any, accumulate: Any, row_scale: Any = None, col_scale: Any = None
) -> bool:
    """Whether a call names an epilogue (any of the keywords off its default)."""
    return (
        bias is not None
        or activation is not None
        or accumulate is not False
        or row_scale is not None
        or col_scale is not None
    )


def _check_scale(name: str, x: Any, a: Any, backend: str, shape: tuple[int, ...]) -> None:
    """A row or column scale: a float32 vector of ``shape`` where ``a`` is (contiguous
    on the GPU). TypeError or ValueError naming it."""
    if kind_of(x, name) != backend:
        raise TypeError(
            f"{name}: expected a {backend} operand like a, got a {kind_of(x, name)} one"
        )
    dt = str(x.dtype).removeprefix("torch.")
    if dt != "float32":
        raise TypeError(f"{name}: expected float32 elements, got {dt}")
    if _shape(x) != shape:
        raise ValueError(f"{name}: expected shape {shape}, got {_shape(x)}")
    if backend == "cuda":
        if x.device != a.device:
            raise ValueError(f"{name}: expected a tensor on {a.device} like a, got {x.device}")
        if not x.is_contiguous():
            raise ValueError(f"{name}: the kernel reads it contiguous (pass {name}.contiguous())")


def check_epilogue(
    op: str,
    a: Any,
    backend: str,
    dtype: str,
    bias: Any,
    activation: Any,
    accumulate: Any,
    out: Any,
    bias_shape: tuple[int, ...],
    reduction: str | None,
    row_scale: Any = None,
    col_scale: Any = None,
    m: int | None = None,
) -> EpilogueCall | None:
    """The epilogue of a call of ``op`` (None: the plain GEMM), checked: ``activation``
    None or one of :data:`~gemm_opt.core.modes.ACTIVATIONS`; ``accumulate`` a bool,
    True only with ``out`` (``out += ...``); ``bias`` of ``bias_shape`` (``(N,)``,
    grouped: ``(G, N)``), the inputs' dtype or float32, contiguous, where ``a`` is;
    neither an activation nor ``accumulate`` with atomic stream-K (its adds into C
    are not a finished sum, and the host zeroes C for them); ``row_scale`` (``(m,)``)
    and ``col_scale`` (``bias_shape``) float32 vectors, no ``col_scale`` with SwiGLU.
    TypeError or ValueError naming the argument."""
    from gemm_opt.core.modes import ACTIVATION_BY_NAME, ACTIVATIONS, Activation

    if activation is not None and not isinstance(activation, str):
        raise TypeError(f"activation: expected None or a str, got {type(activation).__name__}")
    if activation is not None and activation not in ACTIVATIONS:
        raise ValueError(
            f"activation: expected None or one of {', '.join(map(repr, ACTIVATIONS))}, "
            f"got {activation!r}"
        )
    if not isinstance(accumulate, bool):
        raise TypeError(f"accumulate: expected a bool, got {type(accumulate).__name__}")
    if accumulate and out is None:
        raise ValueError("accumulate: adds the result into out (out += ...); pass out")
    act = ACTIVATION_BY_NAME[activation or Activation.NONE.value]
    out_dtype = None
    if out is not None and str(out.dtype).removeprefix("torch.") == "float32":
        out_dtype = "fp32"
    bias_dtype = None
    if bias is not None:
        if kind_of(bias, "bias") != backend:
            got = kind_of(bias, "bias")
            raise TypeError(f"bias: expected a {backend} operand like a, got a {got} one")
        bt = str(bias.dtype).removeprefix("torch.")
        names = {v: k for k, v in S.BIAS_DTYPES.items()}
        if bt not in names or names[bt] not in (dtype, "fp32"):
            raise TypeError(f"bias: expected {S.DTYPES[dtype]} or float32 elements, got {bt}")
        if _shape(bias) != bias_shape:
            raise ValueError(f"bias: expected shape {bias_shape}, got {_shape(bias)}")
        if backend == "cuda":
            if bias.device != a.device:
                raise ValueError(f"bias: expected a tensor on {a.device} like a, got {bias.device}")
            if not bias.is_contiguous():
                raise ValueError("bias: the kernel reads it contiguous (pass bias.contiguous())")
        bias_dtype = names[bt]
    if reduction == "atomic" and (act != Activation.NONE or accumulate):
        what = "accumulate" if accumulate else "activation"
        raise ValueError(
            f"{what}: atomic stream-K adds partial sums into C, so no program holds a tile's "
            "finished sum (and C is zeroed before): use reduction 'linear' or 'tree'"
        )
    if row_scale is not None:
        _check_scale("row_scale", row_scale, a, backend, (m,))
    if col_scale is not None:
        if act == Activation.SWIGLU:
            raise ValueError("col_scale: activation 'swiglu' takes no col_scale")
        _check_scale("col_scale", col_scale, a, backend, bias_shape)
    spec = S.EpilogueSpec(
        activation=act, bias=bias_dtype, accumulate=accumulate,
        row_scale=row_scale is not None, col_scale=col_scale is not None,
    )  # fmt: skip
    if spec.empty and out_dtype is None:
        return None
    return EpilogueCall(spec, out_dtype)


def swiglu_width(epi: EpilogueCall | None, n: int, name: str) -> int:
    """C's columns for B's ``n``: half of them under a SwiGLU epilogue (B's columns
    are ``[gate | up]``), which needs ``n`` even; else ``n``."""
    if epi is None or epi.spec.activation != "swiglu":
        return n
    if type(n) is int and n % 2:
        raise ValueError(
            f"{name}: activation 'swiglu' reads its N columns as halves [gate | up]; "
            f"expected an even N, got {n}"
        )
    return n // 2


#: The largest tile a SwiGLU kernel takes without a config: its two fp32
#: accumulators of 128x128 are a 128x256 kernel's registers.
SWIGLU_TILE = 128 * 128
#: The shared memory a SwiGLU kernel's rings may take (the 64-row classes' budget):
#: it keeps a third ring, B's up half, so a class's stages are cut to fit.
SWIGLU_RING_BYTES = 192 * 1024


def swiglu_config(cfg: S.GemmConfig, epi: EpilogueCall | S.EpilogueSpec | None) -> S.GemmConfig:
    """A shape class's configuration for a SwiGLU call: ``mid`` instead of a larger
    tile (two accumulators of 128x256 would not fit a thread's registers), and no
    more stages than three rings of 16-bit blocks (A, gate, up) fit in
    :data:`SWIGLU_RING_BYTES` (at least 2)."""
    spec = epi.spec if isinstance(epi, EpilogueCall) else epi
    if spec is None or spec.activation != "swiglu":
        return cfg
    if cfg.block_m * cfg.block_n > SWIGLU_TILE:
        cfg = h100.GPU_CONFIGS["mid"]
    per_stage = 2 * (cfg.block_m * cfg.block_k + 2 * cfg.block_k * cfg.block_n)
    stages = max(2, min(cfg.num_stages or 2, SWIGLU_RING_BYTES // per_stage))
    return replace(cfg, num_stages=stages)


def _spec(
    kind,
    red,
    grouped,
    dtype,
    cfg: S.GemmConfig,
    num_xcds,
    trans_b=False,
    trans_a=False,
    epilogue: EpilogueCall | None = None,
) -> S.KernelSpec:
    """The kernel of a checked call; ValueError naming the ``config`` field the kernels
    are not built for (the block shape must split over the warps' MMAs)."""
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
        trans_a=trans_a,
        # no epilogue: the spec's own default (torch.compile traces this in meta calls)
        **(
            {} if epilogue is None else {"out_dtype": epilogue.out_dtype, "epilogue": epilogue.spec}
        ),
    )


def _swapped_spec(
    kind, red, grouped, dtype, cfg: S.GemmConfig, num_xcds, trans_b=False, trans_a=False
) -> S.KernelSpec:
    """The swap-AB kernel of a dense call whose operands lie as ``trans_a`` and
    ``trans_b`` say: it computes ``C^T = B^T A^T``, so its A is the call's B
    (transposed unless B is: ``B^T`` of a row-major B is column-major), its B the
    call's A, and it stores its output column-major (``trans_c``): C row-major."""
    if grouped != "none":
        raise ValueError(f"swap-AB runs dense problems only, not grouped {grouped!r}")
    spec = _spec(kind, red, grouped, dtype, cfg, num_xcds, not trans_a, not trans_b)
    return replace(spec, trans_c=True)


def _check_group_m(spec: S.KernelSpec, n: int) -> None:
    """GROUP_M times the tile columns is a 32-bit product in the kernels (a band of
    tiles); past the range it wraps and tiles go unwritten, so it is refused."""
    cols = S.cdiv(n, spec.block_n)
    if spec.group_m * cols > MAX_CONFIG_VALUE:
        raise ValueError(
            f"config.group_m={spec.group_m} times the {cols} tile columns of N = {n} must be "
            f"at most {MAX_CONFIG_VALUE} (the kernels index a band of tiles in 32 bits); "
            f"pass a group_m of at most {MAX_CONFIG_VALUE // cols}"
        )


def _shape_config(
    a: Any,
    m: int,
    n: int,
    grouped: str,
    reduction: str | None = None,
    groups: int = 1,
    kind: str | None = None,
) -> S.GemmConfig:
    """The bundled configuration of the shape's class on ``a``'s GPU (no ``config`` given)."""
    import torch

    sms = rt.sm_count(torch, a.device)
    return h100.GPU_CONFIGS[h100.gpu_config_name(m, n, grouped, sms, reduction, groups, kind)]


# ---- the plan ---------------------------------------------------------------------------


@dataclass(eq=False)
class GemmPlan:
    """One call's decisions (see the module docstring); shared by every call of its
    signature, so nothing in it belongs to one call's tensors."""

    op: str
    backend: str  # "numpy", "torch-cpu" or "cuda"
    dtype: str  # the kernels' element type name
    out_shape: tuple[int, ...]
    spec: S.KernelSpec | None  # None: a traced call of schedule="auto" (never run)
    scalars: dict[str, int]
    #: The checked host lengths (the model reads them; the GPU gets a copy), or None:
    #: the lengths are device data, never read by the host.
    lens: tuple[int, ...] | None = None
    num_groups: int = 0
    #: The caller's ``num_programs`` (None: the backend's default).
    num_programs: int | None = None
    #: The model's interleaving of programs (None: program order).
    seed: int | None = None
    #: Tiles of the grid (an upper bound where the lengths stay on the device).
    total_tiles: int = 0
    #: ``schedule="auto"`` chose a stream-K kernel: its default program count
    #: splits the K work into whole segments (:func:`program_count`).
    auto_stream_k: bool = False
    #: ``schedule="auto"`` chose split-K with this many slices per tile: it launches
    #: ``tiles * S`` programs (:func:`program_count`).
    auto_split_k: int | None = None
    #: ``schedule="auto"`` chose swap-AB: the kernel takes the call's B as its A and
    #: its A as its B (``scalars`` are the kernel's: M and N exchanged).
    swap_ab: bool = False
    validate: bool | str = False
    #: Made for ``schedule="auto"`` (its pick depends on the tuned table of ``target``).
    auto: bool = False
    #: The target whose tuned table an ``"auto"`` plan's pick came from.
    target: str = autotune.MODEL_TARGET
    #: Resolved by :func:`_place`: programs run (resident), launch grid, workspace.
    programs: int = 0
    grid: int = 0
    layout: S.WorkspaceLayout | None = None
    #: What the plan's validity depends on (:func:`environment`).
    env: tuple = ()
    #: The GPU launch made on the first call (:class:`~gemm_opt.runtime.gemm.Prepared`).
    prepared: Any = None
    #: A batched matmul run batch by batch (:func:`_loop_plan`): the plan of one
    #: batch, each batch's element offsets of a and b, and the (shape, strides)
    #: of one batch's a and b.
    sub: GemmPlan | None = None
    offsets: tuple[tuple[int, int], ...] = ()
    views: tuple = ()
    #: A batched matmul's equal group lengths on the GPU, made on its first call.
    device_lens: Any = None


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
) -> tuple[str, str, str, str | None, int | None, int, S.GemmConfig | None, int | None]:
    ka, kb = kind_of(a, "a"), kind_of(b, "b")
    if ka != kb:
        raise TypeError(f"{op}: a is a {ka} operand and b a {kb} one; pass both alike")
    da, db = _dtype_of(a, "a"), _dtype_of(b, "b")
    if da != db:
        raise TypeError(f"b: expected {da} elements like a, got {db}")
    if ka == "cuda" and a.device != b.device:
        raise ValueError(f"b: expected a tensor on {a.device} like a, got {b.device}")
    kind, red = _schedule(schedule, reduction)
    _check_deterministic(kind, red)
    default_config = h100.GPU_CONFIG if ka == "cuda" else S.MODEL_CONFIG
    if num_programs is not None:  # the launch limit (a larger grid cannot launch)
        num_programs = _positive_int(num_programs, "num_programs", MAX_PROGRAMS)
    num_xcds = _positive_int(num_xcds, "num_xcds", MAX_XCDS)
    if kind == "work-stealing" and num_programs is not None:
        S.check_work_stealing(num_programs, num_xcds)
    if seed is not None:
        seed = as_int(seed, "seed", "an int or None")
        if ka == "cuda":
            raise ValueError(
                "seed chooses the model's interleaving of programs; on the GPU the hardware "
                "interleaves them (pass seed=None)"
            )
    # "auto" without a config takes the tuned one (resolved once the shapes are known)
    cfg = None if kind == AUTO and config is None else check_config(config, default_config)
    if out is not None and kind_of(out, "out") != ka:
        raise TypeError(f"out: expected a {ka} operand like a, got a {kind_of(out, 'out')} one")
    return ka, da, kind, red, num_programs, num_xcds, cfg, seed


def _traced(spec: S.KernelSpec | None, op: str, backend: str, dtype: str, shape: tuple):
    """A traced call's plan: checked, with its output shape (symbolic sizes kept), not
    runnable."""
    return GemmPlan(op, backend, dtype, shape, spec, {})


def _matmul(
    a: Any,
    b: Any,
    *,
    meta: bool,
    bias: Any = None,
    activation: Any = None,
    accumulate: Any = False,
    row_scale: Any = None,
    col_scale: Any = None,
    epi: EpilogueCall | None = None,
    **kw: Any,
) -> GemmPlan:
    """``epi``: a batch's plan of :func:`_loop_plan`, its epilogue checked already."""
    backend, dtype, kind, red, P, X, cfg, seed = _common("matmul", a, b, **kw)
    sa, sb = _shape(a), _shape(b)
    if len(sa) < 2:
        raise ValueError(f"a: expected an array of shape (..., M, K) (2-D or more), got shape {sa}")
    m, k = sa[-2:]
    if len(sb) < 2:
        raise ValueError(
            f"b: expected an array of shape (..., K, N) with K = {k} (2-D or more), got shape {sb}"
        )
    kb, n = sb[-2:]
    if kb != k:
        raise ValueError(f"b: expected shape (..., K, N) with K = {k} (a's columns), got {sb}")
    batch = _broadcast(sa[:-2], sb[:-2])
    if epi is None:
        if (row_scale is not None or col_scale is not None) and (batch or len(sa) > 2):
            raise ValueError(
                f"row_scale, col_scale: scale a 2-D product (M, K) @ (K, N); got a of shape "
                f"{sa} and b of shape {sb}"
            )
        epi = check_epilogue(
            "matmul", a, backend, dtype, bias, activation, accumulate, kw["out"], (n,), red,
            row_scale, col_scale, m,
        )  # fmt: skip
    n = swiglu_width(epi, n, "b")  # C's columns
    out_shape = (*batch, m, n)
    device = getattr(a, "device", None)
    _check_out(kw["out"], out_shape, dtype, backend, device, meta)
    if meta:  # the output does not depend on the route or the pick
        if kind == AUTO:
            return _traced(None, "matmul", backend, dtype, out_shape)
        spec = _spec(kind, red, "none", dtype, cfg, X, epilogue=epi)
        return _traced(spec, "matmul", backend, dtype, out_shape)
    route = matmul_route(a, b, batch)
    if route.how.startswith("grouped") and (
        kind not in (AUTO, *S.GROUPED_KINDS, "data-parallel") or epi is not None
    ):
        # the named schedule, or an epilogue (one bias for every batch), batch by batch
        route = matmul_route(a, b, batch, loop=True)
    if backend == "cuda":
        _check_cuda_ptr(a, "a", route.offsets, 0)
        _check_cuda_ptr(b, "b", route.offsets, 1)
    if route.how == "loop":
        return _loop_plan(a, b, route, out_shape, backend, dtype, kw, epi)
    form = {"grouped": "m", "grouped-k": "k"}.get(route.how, "none")
    grouped = form != "none"
    rows, groups = route.rows, route.groups
    if grouped and kind == "data-parallel":
        # Batches back to back run as one grid of every batch's tiles: the grouped
        # kernels, whose schedule is persistent (one program per SM, tile by tile).
        kind = S.GROUPED_KINDS[0]
    total_k = k * groups if form == "k" else k  # wgrad's K: every batch's
    if backend == "cuda" and kw["config"] is None and kind != AUTO:  # auto resolves its own
        cfg = _shape_config(a, rows, n, form, None if grouped else red, groups, kind=kind)
        cfg = swiglu_config(cfg, epi)
    auto = kind == AUTO
    problem = {
        "none": ("dense", rows, n, k, 1),
        "m": ("fwd", rows, n, k, groups),
        "k": ("wgrad", rows, n, total_k, groups),
    }[form]
    trans_a = route.trans_a and form != "k"  # wgrad's A lies transposed by definition
    kind, red, cfg, split_k, swap = resolve_auto(
        kind, red, cfg, problem, backend, dtype, a, P, X, route.trans_b, trans_a,
        swap_ok=epi is None,
    )  # fmt: skip
    if auto and epi is not None and epi.spec.activation == "swiglu" and kind != "data-parallel":
        # the tuned pick may split K, which SwiGLU's two sums per tile cannot take
        kind, red, split_k = "data-parallel", None, None
        cfg = swiglu_config(cfg, epi)
    if swap:  # C^T = B^T A^T: the kernel's A is B, its B is A, its M x N is N x rows
        spec = _swapped_spec(kind, red, form, dtype, cfg, X, route.trans_b, trans_a)
        _check_group_m(spec, rows)
        scalars = {"M": n, "N": rows, "K": k, "lda": route.ldb, "ldb": route.lda, "ldc": n}
    else:
        spec = _spec(kind, red, form, dtype, cfg, X, route.trans_b, trans_a, epi)
        _check_group_m(spec, n)
        scalars = {"M": rows, "N": n, "K": total_k, "lda": route.lda, "ldb": route.ldb, "ldc": n}
    lens = None
    tiles = S.tile_count(scalars["M"], scalars["N"], cfg.block_m, cfg.block_n)
    bm, bn = cfg.block_m, cfg.block_n
    if form == "m":
        lens = (m,) * groups
        # Equivalent mutant: m=1; grouped_tiles reads m only for grouped="k".
        tiles = S.grouped_tiles("m", lens, m=0, n=n, k=k, block_m=bm, block_n=bn).total_tiles
    elif form == "k":  # G grids of M x N tiles
        lens = (k,) * groups
        tiles = S.grouped_tiles_bound(
            "k", groups, rows=total_k, m=rows, n=n, block_m=bm, block_n=bn
        )
    if grouped:
        scalars["num_groups"] = groups
    return GemmPlan(
        op="matmul",
        backend=backend,
        dtype=dtype,
        out_shape=out_shape,
        spec=spec,
        scalars=scalars,
        lens=lens,
        # Equivalent mutant: else 1; only a grouped_matmul plan's num_groups is read.
        num_groups=groups if grouped else 0,
        num_programs=P,
        seed=seed,
        total_tiles=tiles,
        auto_stream_k=auto and kind == "stream-k",
        auto_split_k=split_k,
        swap_ab=swap,
        auto=auto,
    )


def batch_view(x: Any, shape: tuple[int, int], strides: tuple[int, int], offset: int) -> Any:
    """The matrix of ``shape`` and element ``strides`` ``offset`` elements past ``x``'s
    first one: a view, never a copy."""
    if is_torch_tensor(x):
        return x.as_strided(shape, strides, x.storage_offset() + offset)
    from numpy.lib.stride_tricks import as_strided

    item = x.itemsize
    base = as_strided(x, (offset + 1,), (item,))[offset:] if offset else x
    return as_strided(base, shape, tuple(s * item for s in strides))


def _loop_plan(
    a: Any,
    b: Any,
    route: MatmulRoute,
    out_shape: tuple,
    backend: str,
    dtype: str,
    kw: Any,
    epi: EpilogueCall | None = None,
) -> GemmPlan:
    """A batched call no single launch reads as it lies (a broadcast ``a``, sliced
    batches, a schedule the grouped kernels lack): the plan of one batch's GEMM,
    launched once per batch on views of the operands (:func:`launch`)."""
    m, k = _shape(a)[-2:]
    n = _shape(b)[-1]
    ta, tb = element_strides(a, "a")[-2:], element_strides(b, "b")[-2:]
    views = ((m, k), ta, (k, n), tb)
    first_a, first_b = route.offsets[0]
    a0, b0 = batch_view(a, (m, k), ta, first_a), batch_view(b, (k, n), tb, first_b)
    sub = _matmul(a0, b0, meta=False, epi=epi, **{**kw, "out": None})
    return GemmPlan(
        op="matmul",
        backend=backend,
        dtype=dtype,
        out_shape=out_shape,
        spec=sub.spec,
        scalars=sub.scalars,
        num_programs=sub.num_programs,
        seed=sub.seed,
        total_tiles=sub.total_tiles,
        auto=sub.auto,
        sub=sub,
        offsets=route.offsets,
        views=views,
    )


def _grouped_kind(kind: str) -> None:
    if kind != AUTO and kind not in S.GROUPED_KINDS:
        raise ValueError(
            f"schedule={kind!r} does not run grouped GEMM; grouped GEMM runs all groups' tiles "
            f"over one grid: schedule must be one of {', '.join(map(repr, S.GROUPED_KINDS))}"
        )


def _check_device_lens(
    group_lens: Any, num_groups: int | None, total: int, validate: bool | str
) -> None:
    """``validate``'s check of lengths on the device, made on every call: ``True`` reads
    them (a device sync), ``"device"`` enqueues a device-side assertion of their signs
    and sum (no sync), ``False`` nothing."""
    if validate is True:
        # reads them: the copy to the host is the device sync validate=True asks for
        _group_lens(group_lens.cpu(), num_groups, total, "a")
    elif validate == "device":
        import torch

        ok = group_lens.sum() == total
        if _shape(group_lens)[0]:
            ok = ok & (group_lens.min() >= 0)
        torch._assert_async(
            ok, f"gemm_opt: group_lens must be >= 0 and sum to {total} (the rows of a)"
        )


def _lens_of_call(
    group_lens: Any,
    num_groups: int | None,
    total: int,
    backend: str,
    device: Any,
    meta: bool,
    validate: bool | str = False,
) -> tuple[list[int] | None, int]:
    """(checked host lengths, or None where they stay on the device; G)."""
    if meta:
        return None, _lens_metadata(group_lens, num_groups, device)
    if backend == "cuda" and _lens_on_device(group_lens, device):
        g = _lens_metadata(group_lens, num_groups, device)
        _check_device_lens(group_lens, num_groups, total, validate)
        return None, g
    lens = _group_lens(group_lens, num_groups, total, "a")  # host data: always checked
    return lens, len(lens)


def _grouped(
    a: Any,
    b: Any,
    group_lens: Any,
    *,
    trans_b: Any,
    validate: Any,
    meta: bool,
    bias: Any = None,
    activation: Any = None,
    accumulate: Any = False,
    **kw: Any,
) -> GemmPlan:
    if not isinstance(trans_b, bool):
        raise TypeError(f"trans_b: expected a bool, got {type(trans_b).__name__}")
    validate = validate_mode(validate)
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
    lens, _ = _lens_of_call(group_lens, g, s, backend, device, meta, validate)
    epi = check_epilogue(
        "grouped_matmul", a, backend, dtype, bias, activation, accumulate, kw["out"], (g, n), red
    )
    ldb = _ld(b, backend, k if trans_b else n)
    n = swiglu_width(epi, n, "b")  # C's columns
    if backend == "cuda" and not meta:
        _check_cuda_layout(a, "a")
        _check_cuda_layout(b, "b")
        if kw["config"] is None and kind != AUTO:  # auto resolves its own config
            cfg = swiglu_config(_shape_config(a, s, n, "m"), epi)
    _check_out(kw["out"], (s, n), dtype, backend, device, meta)
    if meta and kind == AUTO:
        return _traced(None, "grouped_matmul", backend, dtype, (s, n))
    op = "dgrad" if trans_b else "fwd"
    auto = kind == AUTO
    kind, red, cfg, _, _ = resolve_auto(kind, red, cfg, (op, s, n, k, g), backend, dtype, a, P, X)
    spec = _spec(kind, red, "m", dtype, cfg, X, trans_b, epilogue=epi)
    if meta:
        return _traced(spec, "grouped_matmul", backend, dtype, (s, n))
    _check_group_m(spec, n)
    bm, bn = cfg.block_m, cfg.block_n
    if backend == "cuda" or lens is None:
        # The lengths stay where they are: the grid is sized without them.
        # Equivalent mutant: m=1; the bound reads m only for grouped="k".
        tiles = S.grouped_tiles_bound("m", g, rows=s, m=0, n=n, block_m=bm, block_n=bn)
    else:
        # Equivalent mutant: m=1; grouped_tiles reads m only for grouped="k".
        tiles = S.grouped_tiles("m", lens, m=0, n=n, k=k, block_m=bm, block_n=bn).total_tiles
    return GemmPlan(
        op="grouped_matmul",
        backend=backend,
        dtype=dtype,
        out_shape=(s, n),
        spec=spec,
        scalars={
            "M": s,
            "N": n,
            "K": k,
            "num_groups": g,
            "lda": _ld(a, backend, k),
            "ldb": ldb,
            "ldc": n,
        },
        lens=None if lens is None else tuple(lens),
        num_groups=g,
        num_programs=P,
        seed=seed,
        total_tiles=tiles,
        validate=validate,
        auto=auto,
    )


def _variable_k(
    a: Any,
    b: Any,
    group_lens: Any,
    *,
    validate: Any,
    meta: bool,
    bias: Any = None,
    activation: Any = None,
    accumulate: Any = False,
    **kw: Any,
) -> GemmPlan:
    validate = validate_mode(validate)
    backend, dtype, kind, red, P, X, cfg, seed = _common("grouped_matmul_variable_k", a, b, **kw)
    _grouped_kind(kind)
    s, m = _expect_ndim(a, "a", 2, "(sum(group_lens), M)")
    sb, n = _expect_ndim(b, "b", 2, f"(S, N) with S = {s}")
    if sb != s:
        raise ValueError(f"b: expected shape (S, N) with S = {s} (a's rows), got {(sb, n)}")
    device = getattr(a, "device", None)
    lens, g = _lens_of_call(group_lens, None, s, backend, device, meta, validate)
    if backend == "cuda" and not meta:
        _check_cuda_layout(a, "a")
        _check_cuda_layout(b, "b")
        if kw["config"] is None and kind != AUTO:  # auto resolves its own config
            cfg = _shape_config(a, m, n, "k", groups=g)
    _check_out(kw["out"], (g, m, n), dtype, backend, device, meta)
    name = "grouped_matmul_variable_k"
    for arg, value in (("bias", bias), ("activation", activation)):
        if value is not None:
            raise ValueError(
                f"{arg}: {name} (wgrad: one output per group) takes no {arg}; only accumulate"
            )
    epi = check_epilogue(name, a, backend, dtype, None, None, accumulate, kw["out"], (), red)
    if meta and kind == AUTO:
        return _traced(None, name, backend, dtype, (g, m, n))
    auto = kind == AUTO
    problem = ("wgrad", m, n, s, g)
    kind, red, cfg, _, _ = resolve_auto(kind, red, cfg, problem, backend, dtype, a, P, X)
    spec = _spec(kind, red, "k", dtype, cfg, X, epilogue=epi)
    if meta:
        return _traced(spec, name, backend, dtype, (g, m, n))
    _check_group_m(spec, n)
    tiles = S.grouped_tiles_bound(
        "k", g, rows=s, m=m, n=n, block_m=cfg.block_m, block_n=cfg.block_n
    )  # exact: G grids of M x N tiles
    return GemmPlan(
        op=name,
        backend=backend,
        dtype=dtype,
        out_shape=(g, m, n),
        spec=spec,
        scalars={
            "M": m,
            "N": n,
            "K": s,
            "num_groups": g,
            "lda": _ld(a, backend, m),
            "ldb": _ld(b, backend, n),
            "ldc": n,
        },
        lens=None if lens is None else tuple(lens),
        num_groups=g,
        num_programs=P,
        seed=seed,
        total_tiles=tiles,
        validate=validate,
        auto=auto,
    )


def program_count(plan: GemmPlan, default: int) -> int:
    """The program count of a launch: the caller's, else ``default`` (the resident
    programs); when ``schedule="auto"`` chose split-K, ``tiles * S`` for the ``S`` it
    chose; when it chose stream-K (on the GPU), the count its estimate assumed
    (:func:`~gemm_opt.runtime.cost_model.stream_k_programs`: aligned, and no more
    programs than K iterations in all)."""
    if plan.num_programs is not None:
        return plan.num_programs
    if plan.auto_split_k is not None:
        return max(plan.total_tiles, 1) * plan.auto_split_k
    if not plan.auto_stream_k:
        return default
    spec = plan.spec
    assert spec is not None
    ipt = S.iters_per_tile(plan.scalars["K"], spec.block_k)
    return cost_model.stream_k_programs(plan.total_tiles, ipt, default)


def work_programs(plan: GemmPlan, programs: int) -> int:
    """``programs`` bounded by the problem's work: the most programs that can find any.

    Persistent and work-stealing programs past the tile count find no tile (work
    stealing keeps one per chiplet); stream-K's split gives every program some K
    iterations only while there are at least as many iterations as programs, and
    with more programs falls back to whole tiles, one program each; data-parallel
    launches a program per tile whatever ``num_programs`` says. Launching more would
    only start idle programs (and on the model, allocate and interleave them), so a
    plan runs at most this many; the result is the same. Split-K runs ``tiles * S``,
    ``S`` the most slices per tile that ``programs`` fill
    (:func:`~gemm_opt.core.schedules.split_k_count`; pass ``tiles * S`` for an exact S).
    """
    assert plan.spec is not None
    return spec_work_programs(plan.spec, plan.total_tiles, plan.scalars["K"], programs)


def spec_work_programs(spec: S.KernelSpec, tiles: int, k: int, programs: int) -> int:
    """:func:`work_programs` of a kernel ``spec`` on ``tiles`` output tiles and depth ``k``
    (the dense plans' rule, shared by the scaled ones)."""
    if spec.kind == "split-k":
        ipt = S.iters_per_tile(k, spec.block_k)
        return max(tiles, 1) * S.split_k_count(tiles, ipt, programs)
    if spec.kind == "stream-k":
        work = tiles * S.iters_per_tile(k, spec.block_k)
        if programs <= work:
            return programs
        return max(tiles, 1)
    return min(programs, max(tiles, spec.num_xcds if spec.kind == "work-stealing" else 1))


def _place(plan: GemmPlan, device: Any) -> None:
    """Resolve where the plan runs: its program count, grid and workspace layout."""
    spec = plan.spec
    assert spec is not None
    if plan.sub is not None:
        _place(plan.sub, device)
        plan.programs, plan.grid, plan.layout = plan.sub.programs, plan.sub.grid, plan.sub.layout
        plan.target = plan.sub.target
        return
    if plan.total_tiles > MAX_PROGRAMS:
        raise ValueError(
            f"the output has {plan.total_tiles} tiles of {spec.block_m}x{spec.block_n}; the "
            f"kernels number tiles in 32 bits (at most {MAX_PROGRAMS}): pass larger blocks in "
            "config"
        )
    if plan.backend == "cuda":
        import torch

        if plan.auto:
            plan.target = rt.device_target(torch, device)
        resident = None if spec.kind == "data-parallel" else rt.resident_programs(spec, device)
        P = program_count(plan, resident or rt.sm_count(torch, device))
        if spec.kind == "stream-k" and spec.reduction != "atomic" and P > resident:
            raise ValueError(
                f"num_programs={P} exceeds the {resident} resident programs (SMs x occupancy): "
                f"stream-K's {spec.reduction} fix-up waits on other programs, so all of them "
                "must be resident at once"
            )
    elif plan.auto_split_k is not None:
        P = program_count(plan, MODEL_PROGRAMS)
    else:
        P = plan.num_programs or MODEL_PROGRAMS
    if spec.kind == "work-stealing":
        S.check_work_stealing(P, spec.num_xcds)
    P = work_programs(plan, P)
    plan.programs = P
    plan.grid = S.grid_size(spec.kind, plan.total_tiles, P)
    plan.layout = S.workspace_layout(
        spec.kind, spec.reduction, P, spec.num_xcds, spec.block_m, spec.block_n
    )


_BUILDERS = {
    "matmul": _matmul,
    "grouped_matmul": _grouped,
    "grouped_matmul_variable_k": _variable_k,
}


# ---- the cache ---------------------------------------------------------------------------

_PLANS: dict[tuple, GemmPlan] = {}


def gpu_environment() -> tuple:
    """What a GPU plan's kernel choice depends on besides its call: the bundle folder
    and the kernel builder (they decide the kernels and twins)."""
    return (os.environ.get(rt.BUNDLE_DIR_ENV), rt.builder())


def environment(plan: GemmPlan) -> tuple:
    """What a plan's choices depend on besides its call's arguments: for the GPU the
    bundle folder and the kernel builder (they decide the kernels and twins), for
    ``schedule="auto"`` the tuned table's folder and version (its pick)."""
    env = gpu_environment() if plan.backend == "cuda" else ()
    if plan.auto:
        env += (autotune.table_version(plan.target),)
    return env


def _tensor_key(x: Any, backend: str) -> tuple:
    if backend == "cuda":
        return (type(x), x.shape, x.stride(), x.dtype, x.device, x.data_ptr() % ALIGN)
    strides = x.stride() if backend == "torch-cpu" else x.strides  # layouts pick kernels
    return (type(x), tuple(x.shape), tuple(strides), str(x.dtype))


def _lens_key(gl: Any, backend: str, device: Any) -> tuple | None:
    if is_torch_tensor(gl):
        if backend == "cuda" and _lens_on_device(gl, device):
            return ("device", *_tensor_key(gl, "cuda"))
        if gl.device.type != "cpu" or gl.dim() != 1:
            return None
        return ("host", str(gl.dtype), tuple(gl.tolist()))
    if type(gl).__module__.split(".")[0] == "numpy":
        if getattr(gl, "ndim", None) != 1:
            return None
        return ("array", str(gl.dtype), tuple(gl.tolist()))
    if type(gl) in (list, tuple) and all(type(v) is int for v in gl):
        return ("list", tuple(gl))
    return None


def _config_key(config: Any) -> Any:
    if config is None:
        return None
    if type(config) is S.GemmConfig:
        return config
    if isinstance(config, Mapping) and all(type(v) is int for v in config.values()):
        return ("mapping", tuple(sorted(config.items())))
    raise TypeError  # not keyed


def signature(
    op: str, a: Any, b: Any, group_lens: Any, extra: tuple, kw: Mapping[str, Any]
) -> tuple | None:
    """The cache key of a call: everything its checks and choices read (see the module
    docstring), or None where a call is not keyed. ``b``'s and ``out``'s kinds
    follow from their types and devices, which the key holds."""
    try:
        backend = kind_of(a, "a")
        out = kw["out"]
        lens = () if group_lens is None else _lens_key(group_lens, backend, a.device)
        if lens is None:
            return None
        key = (
            op,
            backend,
            _tensor_key(a, backend),
            _tensor_key(b, backend),
            lens,
            None if out is None else _tensor_key(out, backend),
            # each keyword with its type: True == 1 and np.int64(4) == 4 are not the
            # same argument until the checks say so
            type(sched := kw["schedule"]),
            sched,
            type(red := kw["reduction"]),
            red,
            type(programs := kw["num_programs"]),
            programs,
            type(xcds := kw["num_xcds"]),
            xcds,
            type(seed := kw["seed"]),
            seed,
            torch_deterministic(),
            None if (config := kw["config"]) is None else _config_key(config),
            tuple([(type(v), v) for v in extra]) if extra else (),
        )
        hash(key)
    except (TypeError, ValueError, AttributeError, RuntimeError):
        return None
    return key


def plan(
    op: str,
    a: Any,
    b: Any,
    group_lens: Any = None,
    *,
    trans_b: Any = False,
    validate: Any = False,
    meta: bool = False,
    bias: Any = None,
    activation: Any = None,
    accumulate: Any = False,
    row_scale: Any = None,
    col_scale: Any = None,
    **kw: Any,
) -> GemmPlan:
    """The plan of a call of ``op`` (:data:`OPS`) with the API's arguments, checked.

    ``meta``: a traced call (torch fake tensors): only metadata is read (shapes,
    dtypes, devices: no data pointer, no element) and the plan only says the
    output's shape (symbolic sizes kept); it is not cached. Otherwise the plan
    of a signature seen before is returned while its environment holds.
    ``bias``, ``activation``, ``accumulate`` and (``matmul`` only) ``row_scale`` and
    ``col_scale``: the fused epilogue (:func:`check_epilogue`); the vectors themselves
    are each call's (the plan keeps their metadata only).
    """
    extra: tuple = ()
    if op == "grouped_matmul":
        extra = (trans_b, validate)
        build_kw = {"trans_b": trans_b, "validate": validate}
    elif op == "grouped_matmul_variable_k":
        extra = (validate,)
        build_kw = {"validate": validate}
    elif op == "matmul":
        build_kw = {}
    else:
        raise ValueError(f"op must be one of {OPS}, got {op!r}")
    args = (a, b) if op == "matmul" else (a, b, group_lens)
    scales = {"row_scale": row_scale, "col_scale": col_scale}
    if op != "matmul" and (row_scale is not None or col_scale is not None):
        raise ValueError(f"row_scale, col_scale: only matmul takes them, not {op}")
    epilogue = has_epilogue(bias, activation, accumulate, row_scale, col_scale)
    if epilogue:
        build_kw.update(bias=bias, activation=activation, accumulate=accumulate)
        if op == "matmul":
            build_kw.update(scales)
    if meta:  # traced: no key (a fake tensor has no data pointer to key its alignment)
        return _BUILDERS[op](*args, meta=True, **build_kw, **kw)
    if epilogue:
        keys = []
        for name, x in (("bias", bias), *scales.items()):
            try:
                keys.append(None if x is None else _tensor_key(x, kind_of(x, name)))
            except TypeError:
                keys.append(())
        extra = (
            *extra,
            ("epilogue", *keys, type(activation), activation, type(accumulate), accumulate),
        )
    key = signature(op, a, b, group_lens if op != "matmul" else None, extra, kw)
    hit = _PLANS.get(key) if key is not None else None
    if hit is not None and hit.env == environment(hit):
        if hit.lens is None and hit.validate is not False:  # device lengths: every call
            num_groups = hit.num_groups if op == "grouped_matmul" else None
            _check_device_lens(group_lens, num_groups, _shape(a)[0], hit.validate)
        return hit
    p = _BUILDERS[op](*args, meta=False, **build_kw, **kw)
    _place(p, getattr(a, "device", None))
    p.env = environment(p)
    if key is not None:
        if len(_PLANS) >= PLAN_CACHE_SIZE:
            _PLANS.clear()
        _PLANS[key] = p
    return p


def cached_plans() -> int:
    """How many plans the cache holds."""
    return len(_PLANS)


def clear_plans() -> None:
    """Empty the plan cache (the next call of each signature plans again)."""
    _PLANS.clear()


# ---- per call on the GPU -------------------------------------------------------------------


def device_lens(plan: GemmPlan, group_lens: Any, device: Any) -> Any:
    """The int32 lengths on ``device`` the kernel reads, for one call of a grouped plan:
    host lengths (checked in full when planned) copied there, or the device tensor."""
    import torch

    if group_lens is None:  # a batched matmul's equal lengths: made once per plan
        if plan.device_lens is None:
            # a fill on the device: no host-to-device copy, so no sync
            assert plan.lens is not None
            size, length = len(plan.lens), plan.lens[0] if plan.lens else 0
            plan.device_lens = torch.full((size,), length, dtype=torch.int32, device=device)
        return plan.device_lens
    if plan.lens is not None:
        return torch.tensor(plan.lens, dtype=torch.int32, device=device)
    return group_lens if group_lens.dtype == torch.int32 else group_lens.to(torch.int32)


def launch(
    plan: GemmPlan,
    a: Any,
    b: Any,
    group_lens: Any = None,
    out: Any = None,
    bias: Any = None,
    row_scale: Any = None,
    col_scale: Any = None,
) -> Any:
    """Run a GPU plan on one call's tensors on the current stream; returns C.

    The first call of a plan makes its launch (the kernel among twins, its
    checked arguments: :func:`~gemm_opt.runtime.gemm.prepare`); every call then
    launches it on its own tensors with a fresh workspace. ``group_lens`` of
    a grouped plan as :func:`device_lens` gives it; ``bias``, ``row_scale`` and
    ``col_scale`` the epilogue's (checked when planned).
    """
    spec = plan.spec
    assert spec is not None and plan.backend == "cuda"
    c = out
    if c is None:
        c = a.new_empty(plan.out_shape)
    if plan.sub is not None:  # batch by batch, on views
        shape_a, strides_a, shape_b, strides_b = plan.views
        m, n = plan.out_shape[-2:]
        rows = c.view(len(plan.offsets), m, n)
        for i, (oa, ob) in enumerate(plan.offsets):
            ai = batch_view(a, shape_a, strides_a, oa)
            bi = batch_view(b, shape_b, strides_b, ob)
            launch(plan.sub, ai, bi, None, rows[i], bias, row_scale, col_scale)
        return c
    if group_lens is None and spec.grouped != "none":
        group_lens = device_lens(plan, None, a.device)
    grouped = spec.grouped != "none"
    names = ("a", "b", "c", "group_lens") if grouped else ("a", "b", "c")
    if plan.swap_ab:  # the kernel's A is the call's B and its B the call's A
        a, b = b, a
    tensors = (a, b, c, group_lens) if grouped else (a, b, c)
    vectors = {"bias": bias, "row_scale": row_scale, "col_scale": col_scale}
    epilogue = {name: vectors[name] for name in spec.epilogue.args}
    names, tensors = (*names, *epilogue), (*tensors, *epilogue.values())
    if plan.prepared is None:
        values: dict[str, Any] = {"a": a, "b": b, "c": c, **plan.scalars, **epilogue}
        if grouped:
            values["group_lens"] = group_lens  # int32 on the device: read by the kernel only
        plan.prepared = rt.launch(
            spec,
            values,
            num_programs=plan.programs,
            total_tiles=plan.total_tiles,
            prepare=names,
        )
    else:
        plan.prepared(*tensors)
    return c


__all__ = [
    "ALIGN",
    "AUTO",
    "MODEL_PROGRAMS",
    "OPS",
    "PLAN_CACHE_SIZE",
    "SCHEDULES",
    "VALIDATE",
    "EpilogueCall",
    "GemmPlan",
    "available_kernels",
    "batch_view",
    "cached_plans",
    "check_config",
    "check_epilogue",
    "clear_plans",
    "device_lens",
    "element_strides",
    "environment",
    "has_epilogue",
    "host_lens",
    "is_torch_tensor",
    "kind_of",
    "launch",
    "matmul_route",
    "matrix_layout",
    "plan",
    "program_count",
    "resolve_auto",
    "signature",
    "swiglu_config",
    "swiglu_width",
    "validate_mode",
]
