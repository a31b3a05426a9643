"""gemm-opt's GEMMs as PyTorch operators: ``torch.ops.gemm_opt.*``.

Registered with ``torch.library`` when this module is imported
(``gemm_opt.matmul`` and the grouped functions import it on their first call
with torch tensors; ``import gemm_opt`` does not import torch):

=========================================  ===========================================
``gemm_opt::matmul``                       ``(..., M, K) @ (..., K, N)`` (torch.matmul's
                                           batching, any row- or column-major
                                           operand); differentiable
``gemm_opt::grouped_matmul``               MoE experts, ``group_lens`` rows per group;
                                           differentiable (dgrad: itself with
                                           ``trans_b`` flipped, wgrad: variable K)
``gemm_opt::grouped_matmul_variable_k``    wgrad: ``out[g] = a_g^T @ b_g``
``gemm_opt::*_out``                        the same, writing ``out`` (mutated, not
                                           differentiable)
``gemm_opt::scaled_matmul``                FP8 ``(A x scale_a) @ (B x scale_b)``,
                                           tensorwise, rowwise or block128 scales
                                           (:mod:`gemm_opt.runtime.scaled`); not
                                           differentiable
``gemm_opt::scaled_grouped_matmul``        its grouped form (MoE forward, ``b``
                                           (G, N, K)); not differentiable
``gemm_opt::fp8_linear``                   ``x @ weight.T`` quantized inside (FP8
                                           training); differentiable: dgrad and
                                           wgrad are scaled GEMMs too
``gemm_opt::fp8_grouped_linear``           its grouped form (MoE experts; wgrad
                                           in bf16, the variable-K kernel)
=========================================  ===========================================

Each operator has a CPU implementation (the executable model) and a CUDA one
(the bundled kernels, launched on the current stream), and a fake one
(``register_fake``) that runs the API's metadata checks (shapes, dtypes,
devices, schedule and config) and allocates the output, reading no data, so
``torch.compile(fullgraph=True)`` traces a model through these operators
without a graph break and a bad call fails at trace time with the eager
message. The CUDA path never reads device data on the host: ``group_lens``
on the GPU goes to the kernel as it is (see ``validate`` in
:func:`gemm_opt.api.grouped_matmul`), the workspace is allocated and zeroed
on the launch stream, so a call can be captured in a CUDA graph and
replayed with new lengths copied into the captured tensor.

The backward of ``matmul`` is two more matmuls on transposed views,
``dA = dC @ B.mT`` and ``dB = A.mT @ dC``, which the plan runs with the
transposed-layout kernels (``trans_b``, ``trans_a``), so neither operand is
copied; a batch that folded into M forward folds into K for ``dB`` (one
GEMM over every row), ``bmm``'s ``dB`` runs the wgrad kernels (one launch),
and broadcast batch dimensions are summed. After a ``schedule="auto"``
forward both resolve ``auto`` for their own problems (a decode step's dgrad
takes swap-AB or split-K, its wgrad large tiles); after a named schedule
they run the default (``docs/decode.md``, "The backward").
"""

from __future__ import annotations

from dataclasses import fields
from types import SimpleNamespace
from typing import Any

import torch
from torch import Tensor

from gemm_opt.core import schedules as S
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.runtime import gemm as rt
from gemm_opt.runtime import plan as P

#: The operators' namespace: ``torch.ops.gemm_opt``.
NAMESPACE = "gemm_opt"

_CONFIG_FIELDS = tuple(f.name for f in fields(S.GemmConfig))
#: ``validate=`` of the API as the operators' ``str?`` argument.
_VALIDATE = {False: None, True: "host", "device": "device"}
_VALIDATE_BACK = {v: k for k, v in _VALIDATE.items()}
#: The operators take their inputs' strides as eager code gives them (the plan picks the
#: kernel from them: row- or column-major; a layout inductor picks could break that).
_TAGS = (torch.Tag.needs_fixed_stride_order,)
#: The library the functional operators are defined on (:func:`_functional_op`).
_LIB = torch.library.Library(NAMESPACE, "FRAGMENT")


class _FunctionalOp:
    """An operator that returns new tensors, defined on the library directly: its schema
    inferred from the function's hints (as ``torch.library.custom_op`` infers it), the
    function its implementation for every device, then ``register_fake`` and
    ``torch.library.register_autograd`` as for a custom op.

    ``custom_op`` would call the function through a shim that disables dynamo and then
    check the result for aliases, on every call: 25-40 us of host time, as much as
    the kernel takes at a model's sizes (``benchmarks/h100/host_overhead.py``). A
    function that returns a fresh tensor needs neither, and ``torch.compile`` does
    not trace into an operator it finds in a graph. The operators that write into
    ``out`` stay custom ops: those bump the version of what they write, which
    autograd relies on."""

    def __init__(self, name: str, fn: Any) -> None:
        self.qualname = f"{NAMESPACE}::{name}"
        _LIB.define(name + torch.library.infer_schema(fn, mutates_args=()), tags=_TAGS)
        _LIB.impl(name, fn, "CompositeExplicitAutograd")
        #: The implementation, called directly where no dispatch is needed (``_IMPLS``).
        self._init_fn = fn
        self._overload = getattr(getattr(torch.ops, NAMESPACE), name).default

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The operator, through the dispatcher (as a custom op object calls it)."""
        return self._overload(*args, **kwargs)

    def register_fake(self, fn: Any) -> Any:
        torch.library.register_fake(self.qualname, fn, lib=_LIB)
        return fn


def _functional_op(name: str) -> Any:
    """Decorator: the function as the functional operator ``gemm_opt::<name>``."""
    return lambda fn: _FunctionalOp(name, fn)


def _pack_config(config: S.GemmConfig | None) -> list[int] | None:
    """A config as the operators' ``int[]?``: its fields in order, ``num_stages`` None as 0."""
    if config is None:
        return None
    return [getattr(config, f) or 0 for f in _CONFIG_FIELDS]


def _unpack_config(config: list[int] | None) -> S.GemmConfig | None:
    if config is None:
        return None
    values = dict(zip(_CONFIG_FIELDS, config, strict=True))
    values["num_stages"] = values["num_stages"] or None
    return S.GemmConfig(**values)


def _kw(
    schedule: str,
    reduction: str | None,
    num_programs: int | None,
    num_xcds: int,
    config: list[int] | None,
    seed: int | None,
    out: Tensor | None = None,
) -> dict[str, Any]:
    """The API's keyword arguments from an operator's."""
    return {
        "schedule": schedule,
        "reduction": reduction,
        "num_programs": num_programs,
        "num_xcds": num_xcds,
        "config": _unpack_config(config),
        "out": out,
        "seed": seed,
    }


def _run(
    op: str,
    a: Tensor,
    b: Tensor,
    group_lens: Any = None,
    *,
    bias: Tensor | None = None,
    activation: str | None = None,
    accumulate: bool = False,
    row_scale: Tensor | None = None,
    col_scale: Tensor | None = None,
    **kw: Any,
) -> Any:
    """One call of an operator: its plan (:func:`gemm_opt.runtime.plan.plan`), run on
    the GPU or on the model, where its tensors are (with the fused epilogue's
    ``bias``, ``activation``, ``accumulate``, ``row_scale`` and ``col_scale``)."""
    if not rt.has_builder() and _safe_kind(a) == "cuda" and rt.compiler_installed():
        from gemm_opt.kernels import disk_cache  # kernels the bundles lack: built, kept on disk

        disk_cache.install()
    epi = {"bias": bias, "activation": activation, "accumulate": accumulate}
    scales = {"row_scale": row_scale, "col_scale": col_scale}
    if row_scale is not None or col_scale is not None:
        epi.update(scales)
    elif not P.has_epilogue(bias, activation, accumulate):
        epi = {}
    p = P.plan(op, a, b, group_lens, **epi, **kw)
    if p.backend == "cuda":
        lens = None if op == "matmul" else P.device_lens(p, group_lens, a.device)
        return P.launch(p, a, b, lens, kw["out"], bias, row_scale, col_scale)
    from gemm_opt.kernels import model_gemm

    return model_gemm.run(p, a, b, out=kw["out"], bias=bias, **scales)


def _safe_kind(x: Any) -> str | None:
    try:
        return P.kind_of(x, "a")
    except TypeError:
        return None


# ---- the operators ---------------------------------------------------------------------


@_functional_op("matmul")
def _matmul(
    a: Tensor,
    b: Tensor,
    schedule: str = "data-parallel",
    reduction: str | None = None,
    num_programs: int | None = None,
    num_xcds: int = 1,
    config: list[int] | None = None,
    seed: int | None = None,
) -> Tensor:
    return _run("matmul", a, b, **_kw(schedule, reduction, num_programs, num_xcds, config, seed))


@_matmul.register_fake
def _(
    a,
    b,
    schedule="data-parallel",
    reduction=None,
    num_programs=None,
    num_xcds=1,
    config=None,
    seed=None,
):
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed)
    return a.new_empty(P.plan("matmul", a, b, meta=True, **kw).out_shape)


@torch.library.custom_op(f"{NAMESPACE}::matmul_out", mutates_args=("out",), tags=_TAGS)
def _matmul_out(
    a: Tensor,
    b: Tensor,
    out: Tensor,
    schedule: str = "data-parallel",
    reduction: str | None = None,
    num_programs: int | None = None,
    num_xcds: int = 1,
    config: list[int] | None = None,
    seed: int | None = None,
) -> None:
    _run("matmul", a, b, **_kw(schedule, reduction, num_programs, num_xcds, config, seed, out))


@_matmul_out.register_fake
def _(
    a,
    b,
    out,
    schedule="data-parallel",
    reduction=None,
    num_programs=None,
    num_xcds=1,
    config=None,
    seed=None,
):
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed, out)
    P.plan("matmul", a, b, meta=True, **kw)


@_functional_op("grouped_matmul")
def _grouped_matmul(
    a: Tensor,
    b: Tensor,
    group_lens: Tensor,
    trans_b: bool = False,
    schedule: str = "persistent",
    reduction: str | None = None,
    num_programs: int | None = None,
    num_xcds: int = 1,
    config: list[int] | None = None,
    seed: int | None = None,
    validate: str | None = None,
) -> Tensor:
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed)
    v = _VALIDATE_BACK[validate]
    return _run("grouped_matmul", a, b, group_lens, trans_b=trans_b, validate=v, **kw)


@_grouped_matmul.register_fake
def _(
    a,
    b,
    group_lens,
    trans_b=False,
    schedule="persistent",
    reduction=None,
    num_programs=None,
    num_xcds=1,
    config=None,
    seed=None,
    validate=None,
):
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed)
    shape = P.plan("grouped_matmul", a, b, group_lens, trans_b=trans_b, meta=True, **kw).out_shape
    return a.new_empty(shape)


@torch.library.custom_op(f"{NAMESPACE}::grouped_matmul_out", mutates_args=("out",), tags=_TAGS)
def _grouped_matmul_out(
    a: Tensor,
    b: Tensor,
    group_lens: Tensor,
    out: Tensor,
    trans_b: bool = False,
    schedule: str = "persistent",
    reduction: str | None = None,
    num_programs: int | None = None,
    num_xcds: int = 1,
    config: list[int] | None = None,
    seed: int | None = None,
    validate: str | None = None,
) -> None:
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed, out)
    v = _VALIDATE_BACK[validate]
    _run("grouped_matmul", a, b, group_lens, trans_b=trans_b, validate=v, **kw)


@_grouped_matmul_out.register_fake
def _(
    a,
    b,
    group_lens,
    out,
    trans_b=False,
    schedule="persistent",
    reduction=None,
    num_programs=None,
    num_xcds=1,
    config=None,
    seed=None,
    validate=None,
):
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed, out)
    P.plan("grouped_matmul", a, b, group_lens, trans_b=trans_b, meta=True, **kw)


@_functional_op("grouped_matmul_variable_k")
def _grouped_matmul_variable_k(
    a: Tensor,
    b: Tensor,
    group_lens: Tensor,
    schedule: str = "persistent",
    reduction: str | None = None,
    num_programs: int | None = None,
    num_xcds: int = 1,
    config: list[int] | None = None,
    seed: int | None = None,
    validate: str | None = None,
) -> Tensor:
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed)
    v = _VALIDATE_BACK[validate]
    return _run("grouped_matmul_variable_k", a, b, group_lens, validate=v, **kw)


@_grouped_matmul_variable_k.register_fake
def _(
    a,
    b,
    group_lens,
    schedule="persistent",
    reduction=None,
    num_programs=None,
    num_xcds=1,
    config=None,
    seed=None,
    validate=None,
):
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed)
    shape = P.plan("grouped_matmul_variable_k", a, b, group_lens, meta=True, **kw).out_shape
    return a.new_empty(shape)


@torch.library.custom_op(
    f"{NAMESPACE}::grouped_matmul_variable_k_out", mutates_args=("out",), tags=_TAGS
)
def _grouped_matmul_variable_k_out(
    a: Tensor,
    b: Tensor,
    group_lens: Tensor,
    out: Tensor,
    schedule: str = "persistent",
    reduction: str | None = None,
    num_programs: int | None = None,
    num_xcds: int = 1,
    config: list[int] | None = None,
    seed: int | None = None,
    validate: str | None = None,
) -> None:
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed, out)
    v = _VALIDATE_BACK[validate]
    _run("grouped_matmul_variable_k", a, b, group_lens, validate=v, **kw)


@_grouped_matmul_variable_k_out.register_fake
def _(
    a,
    b,
    group_lens,
    out,
    schedule="persistent",
    reduction=None,
    num_programs=None,
    num_xcds=1,
    config=None,
    seed=None,
    validate=None,
):
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed, out)
    P.plan("grouped_matmul_variable_k", a, b, group_lens, meta=True, **kw)


# ---- autograd --------------------------------------------------------------------------


def _grouped_setup(ctx: Any, inputs: tuple, output: Tensor) -> None:
    a, b, group_lens, trans_b, *rest = inputs
    ctx.save_for_backward(a, b, group_lens)
    ctx.trans_b = trans_b
    ctx.rest = rest[:-1]  # schedule, reduction, num_programs, num_xcds, config, seed


def _grouped_backward(ctx: Any, grad: Tensor) -> tuple:
    """dA = dC @ B_g^T per group (B read the other way round); dB_g = A_g^T @ dC_g
    (G, K, N), or dC_g^T @ A_g (G, N, K) with ``trans_b``. Lengths were checked forward."""
    a, b, lens = ctx.saved_tensors
    grad = grad.contiguous()
    da = db = None
    if ctx.needs_input_grad[0]:
        da = _call("grouped_matmul", grad, b, lens, not ctx.trans_b, *ctx.rest, None)
    if ctx.needs_input_grad[1]:
        x, y = (grad, a) if ctx.trans_b else (a, grad)
        db = _call("grouped_matmul_variable_k", x, y, lens, *ctx.rest, None)
    return (da, db) + (None,) * 9


torch.library.register_autograd(
    f"{NAMESPACE}::grouped_matmul", _grouped_backward, setup_context=_grouped_setup
)


def _variable_k_setup(ctx: Any, inputs: tuple, output: Tensor) -> None:
    a, b, group_lens, *rest = inputs
    ctx.save_for_backward(a, b, group_lens)
    ctx.rest = rest[:-1]


def _variable_k_backward(ctx: Any, grad: Tensor) -> tuple:
    """out_g = A_g^T @ B_g: dA_g = B_g @ dout_g^T (``trans_b``), dB_g = A_g @ dout_g."""
    a, b, lens = ctx.saved_tensors
    grad = grad.contiguous()
    da = db = None
    if ctx.needs_input_grad[0]:
        da = _call("grouped_matmul", b, grad, lens, True, *ctx.rest, None)
    if ctx.needs_input_grad[1]:
        db = _call("grouped_matmul", a, grad, lens, False, *ctx.rest, None)
    return (da, db) + (None,) * 8


torch.library.register_autograd(
    f"{NAMESPACE}::grouped_matmul_variable_k", _variable_k_backward, setup_context=_variable_k_setup
)


def _backward_tail(schedule: str, reduction: str | None, seed: int | None) -> tuple:
    """The arguments after ``(a, b)`` of the ``matmul`` calls of dgrad and wgrad, from the
    forward's. A forward of ``schedule="auto"`` has each backward GEMM resolve its own
    pick: dgrad of a few rows is a few-row problem (swap-AB, split-K), wgrad one of
    K = the row count (large tiles over a large output), neither the forward's shape.
    The forward's reduction carries over (None: every pick bitwise reproducible;
    ``"atomic"`` where the forward allowed it), its ``config`` and ``num_programs`` do
    not (tiles of the forward's problem). A named schedule, with its config, describes
    the forward's kernel only: the backward runs the default (data-parallel, the
    shape's configuration), as it did before ``auto`` existed."""
    if schedule == P.AUTO:
        return (P.AUTO, reduction, None, 1, None, seed)
    return ("data-parallel", None, None, 1, None, seed)


#: The most rows (tokens) of a wgrad ``A^T @ dC`` that :func:`_wgrad_operands` pads.
WGRAD_PAD_MAX_ROWS = 128


def _wgrad_operands(a: Tensor, grad: Tensor) -> tuple[Tensor, Tensor]:
    """``(A^T, dC)`` of wgrad ``A^T @ dC`` (A (K, M) and dC (K, N) row-major, K the
    tokens), A read transposed as it lies. A few tokens off the 16-byte alignment
    (K = 1 to :data:`WGRAD_PAD_MAX_ROWS`, not a multiple of 8 16-bit elements) would
    leave every twin's facts unmet, and the plain kernel writes the large output
    element by element: there both are copied into zero-padded rows up to the
    alignment (K x (M + N) elements, small next to the M x N output). The zero rows
    add exact zeros to every fp32 sum: the values are the unpadded product's."""
    k = a.shape[0]
    align = S.ALIGNMENT_BYTES // a.element_size()
    # Equivalent mutant: >= for >, 128 rows are aligned for every element size.
    if k % align == 0 or k > WGRAD_PAD_MAX_ROWS:
        return a.mT, grad
    rows = k + (-k) % align
    pa, pg = a.new_zeros(rows, a.shape[1]), grad.new_zeros(rows, grad.shape[1])
    pa[:k], pg[:k] = a, grad
    return pa.mT, pg


def _matmul_setup(ctx: Any, inputs: tuple, output: Tensor) -> None:
    a, b, schedule, reduction, *_, seed = inputs
    ctx.save_for_backward(a, b)
    ctx.tail = _backward_tail(schedule, reduction, seed)


def _matmul_backward(ctx: Any, grad: Tensor) -> tuple:
    """dA = dC @ B^T and dB = A^T @ dC on views (``mT``: the ``trans_b`` and ``trans_a``
    kernels read them as they lie), scheduled by :func:`_backward_tail`. A batch that
    folded into M forward (``b`` 2-D) folds into K for dB: one GEMM over every row
    (:func:`_wgrad_operands`: a few tokens padded to the alignment); other broadcast
    batch dimensions are summed (``sum_to_size``)."""
    a, b = ctx.saved_tensors
    grad = grad.contiguous()  # the output's gradient; dense already unless autograd expanded it
    da = db = None
    tail = ctx.tail
    if ctx.needs_input_grad[0]:
        da = _call("matmul", grad, b.mT, *tail)
        if da.shape != a.shape:
            da = da.sum_to_size(a.shape)
    if ctx.needs_input_grad[1]:
        if b.dim() == 2:  # every row of a and dC (a batch folded forward): one GEMM
            rows_a, rows_g = a.reshape(-1, a.shape[-1]), grad.reshape(-1, grad.shape[-1])
            db = _call("matmul", *_wgrad_operands(rows_a, rows_g), *tail)
        else:
            db = _call("matmul", a.mT, grad, *tail)
            # Equivalent mutant: autograd sums a broadcast gradient to the input's shape
            # itself; summing to the same shape is a no-op.
            if db.shape != b.shape:
                db = db.sum_to_size(b.shape)
    return (da, db) + (None,) * 6


torch.library.register_autograd(
    f"{NAMESPACE}::matmul", _matmul_backward, setup_context=_matmul_setup
)


# ---- fused epilogues -------------------------------------------------------------------
#
# The backward of a fused activation recomputes the pre-activation ``A @ B + bias``
# (one more GEMM with the bias fused) instead of saving it: the forward writes one
# tensor, as an unfused layer would, and the recomputation's GEMM costs less than
# an extra output's HBM traffic forward and its lifetime until the backward.


@_functional_op("matmul_epilogue")
def _matmul_epilogue(
    a: Tensor,
    b: Tensor,
    bias: Tensor | None = None,
    activation: str | None = None,
    schedule: str = "data-parallel",
    reduction: str | None = None,
    num_programs: int | None = None,
    num_xcds: int = 1,
    config: list[int] | None = None,
    seed: int | None = None,
    row_scale: Tensor | None = None,
    col_scale: Tensor | None = None,
) -> Tensor:
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed)
    return _run("matmul", a, b, bias=bias, activation=activation, row_scale=row_scale,
                col_scale=col_scale, **kw)  # fmt: skip


@_matmul_epilogue.register_fake
def _(
    a, b, bias=None, activation=None, schedule="data-parallel", reduction=None,
    num_programs=None, num_xcds=1, config=None, seed=None, row_scale=None, col_scale=None,
):  # fmt: skip
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed)
    p = P.plan("matmul", a, b, bias=bias, activation=activation, row_scale=row_scale,
               col_scale=col_scale, meta=True, **kw)  # fmt: skip
    return a.new_empty(p.out_shape)


@torch.library.custom_op(f"{NAMESPACE}::matmul_epilogue_out", mutates_args=("out",), tags=_TAGS)
def _matmul_epilogue_out(
    a: Tensor,
    b: Tensor,
    out: Tensor,
    bias: Tensor | None = None,
    activation: str | None = None,
    accumulate: bool = False,
    schedule: str = "data-parallel",
    reduction: str | None = None,
    num_programs: int | None = None,
    num_xcds: int = 1,
    config: list[int] | None = None,
    seed: int | None = None,
    row_scale: Tensor | None = None,
    col_scale: Tensor | None = None,
) -> None:
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed, out)
    _run("matmul", a, b, bias=bias, activation=activation, accumulate=accumulate,
         row_scale=row_scale, col_scale=col_scale, **kw)  # fmt: skip


@_matmul_epilogue_out.register_fake
def _(
    a, b, out, bias=None, activation=None, accumulate=False, schedule="data-parallel",
    reduction=None, num_programs=None, num_xcds=1, config=None, seed=None, row_scale=None,
    col_scale=None,
):  # fmt: skip
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed, out)
    P.plan("matmul", a, b, bias=bias, activation=activation, accumulate=accumulate,
           row_scale=row_scale, col_scale=col_scale, meta=True, **kw)  # fmt: skip


def activation_grad(pre: Tensor, activation: str | None) -> Tensor:
    """d activation / d x at ``pre`` (float32), the derivative of the function the
    epilogue computes (:class:`~gemm_opt.core.modes.Activation`)."""
    x = pre.float()
    if activation in (None, "none"):
        return torch.ones_like(x)
    if activation == "relu":
        return (x > 0).to(x.dtype)
    if activation == "silu":
        s = torch.sigmoid(x)
        return s * (1 + x * (1 - s))
    if activation == "gelu":
        cdf = 0.5 * (1 + torch.erf(x * 0.7071067811865476))
        return cdf + x * torch.exp(-0.5 * x * x) * 0.3989422804014327
    if activation == "gelu-tanh":
        k = 0.7978845608028654
        u = k * (x + 0.044715 * x**3)
        t = torch.tanh(u)
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
    raise ValueError(f"activation: no derivative for {activation!r}")


def _through_activation(grad: Tensor, pre: Tensor, activation: str) -> Tensor:
    """The gradient of the pre-activation from the output's: ``grad * act'(pre)``;
    swiglu's ``pre`` is ``[gate | up]`` (twice the output's columns):
    ``d gate = grad * up * silu'(gate)``, ``d up = grad * silu(gate)``."""
    g = grad.float()
    if activation == "swiglu":
        gate, up = pre.float().chunk(2, dim=-1)
        s = torch.sigmoid(gate)
        dgate = g * up * (s * (1 + gate * (1 - s)))
        return torch.cat([dgate, g * gate * s], dim=-1).to(grad.dtype)
    return (g * activation_grad(pre, activation)).to(grad.dtype)


#: Where ``matmul_epilogue``'s inputs hold the seed and the two scales.
_SEED, _ROW_SCALE, _COL_SCALE = 9, 10, 11


def _epilogue_setup(ctx: Any, inputs: tuple, output: Tensor) -> None:
    a, b, bias, activation, schedule, reduction = inputs[:6]
    ctx.save_for_backward(a, b, bias, *inputs[_ROW_SCALE:])
    ctx.activation = activation
    ctx.seed = inputs[_SEED]
    ctx.tail = _backward_tail(schedule, reduction, ctx.seed)


def _epilogue_backward(ctx: Any, grad: Tensor) -> tuple:
    """Through the activation (its derivative at the recomputed pre-activation, see
    above), the bias's gradient the sum of the pre-activation's over every row (in
    float32, rounded once), then times the scales and ``matmul``'s backward. The
    scales take no gradient: a RuntimeError where one is asked for."""
    a, b, bias, row_scale, col_scale = ctx.saved_tensors
    if any(ctx.needs_input_grad[_ROW_SCALE:]):
        raise RuntimeError(
            "gemm_opt.matmul: row_scale and col_scale are not differentiable (pass them "
            "detached, or compute their gradient outside)"
        )
    tail = ("data-parallel", None, None, 1, None, ctx.seed)
    if ctx.activation not in (None, "none"):
        pre = _call("matmul_epilogue", a, b, bias, None, *tail, row_scale, col_scale)
        grad = _through_activation(grad, pre, ctx.activation)
    dbias = None
    if bias is not None and ctx.needs_input_grad[2]:
        dbias = grad.float().reshape(-1, grad.shape[-1]).sum(0).to(bias.dtype)
    if row_scale is not None or col_scale is not None:
        g = grad.float()
        g = g if row_scale is None else g * row_scale[:, None]
        grad = (g if col_scale is None else g * col_scale).to(grad.dtype)
    # Equivalent mutant: [:3], matmul's backward reads the first two flags only.
    plain = SimpleNamespace(saved_tensors=(a, b), needs_input_grad=ctx.needs_input_grad[:2],
                            tail=ctx.tail)  # fmt: skip
    da, db = _matmul_backward(plain, grad)[:2]
    return (da, db, dbias) + (None,) * 9


torch.library.register_autograd(
    f"{NAMESPACE}::matmul_epilogue", _epilogue_backward, setup_context=_epilogue_setup
)


@_functional_op("grouped_matmul_epilogue")
def _grouped_matmul_epilogue(
    a: Tensor,
    b: Tensor,
    group_lens: Tensor,
    bias: Tensor | None = None,
    activation: str | None = None,
    trans_b: bool = False,
    schedule: str = "persistent",
    reduction: str | None = None,
    num_programs: int | None = None,
    num_xcds: int = 1,
    config: list[int] | None = None,
    seed: int | None = None,
    validate: str | None = None,
) -> Tensor:
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed)
    v = _VALIDATE_BACK[validate]
    return _run("grouped_matmul", a, b, group_lens, bias=bias, activation=activation,
                trans_b=trans_b, validate=v, **kw)  # fmt: skip


@_grouped_matmul_epilogue.register_fake
def _(
    a, b, group_lens, bias=None, activation=None, trans_b=False, schedule="persistent",
    reduction=None, num_programs=None, num_xcds=1, config=None, seed=None, validate=None,
):  # fmt: skip
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed)
    p = P.plan("grouped_matmul", a, b, group_lens, trans_b=trans_b, bias=bias,
               activation=activation, meta=True, **kw)  # fmt: skip
    return a.new_empty(p.out_shape)


@torch.library.custom_op(
    f"{NAMESPACE}::grouped_matmul_epilogue_out", mutates_args=("out",), tags=_TAGS
)
def _grouped_matmul_epilogue_out(
    a: Tensor,
    b: Tensor,
    group_lens: Tensor,
    out: Tensor,
    bias: Tensor | None = None,
    activation: str | None = None,
    accumulate: bool = False,
    trans_b: bool = False,
    schedule: str = "persistent",
    reduction: str | None = None,
    num_programs: int | None = None,
    num_xcds: int = 1,
    config: list[int] | None = None,
    seed: int | None = None,
    validate: str | None = None,
) -> None:
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed, out)
    v = _VALIDATE_BACK[validate]
    _run("grouped_matmul", a, b, group_lens, bias=bias, activation=activation,
         accumulate=accumulate, trans_b=trans_b, validate=v, **kw)  # fmt: skip


@_grouped_matmul_epilogue_out.register_fake
def _(
    a, b, group_lens, out, bias=None, activation=None, accumulate=False, trans_b=False,
    schedule="persistent", reduction=None, num_programs=None, num_xcds=1, config=None,
    seed=None, validate=None,
):  # fmt: skip
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed, out)
    P.plan("grouped_matmul", a, b, group_lens, trans_b=trans_b, bias=bias,
           activation=activation, accumulate=accumulate, meta=True, **kw)  # fmt: skip


@torch.library.custom_op(
    f"{NAMESPACE}::grouped_matmul_variable_k_accumulate", mutates_args=("out",), tags=_TAGS
)
def _grouped_matmul_variable_k_accumulate(
    a: Tensor,
    b: Tensor,
    group_lens: Tensor,
    out: Tensor,
    schedule: str = "persistent",
    reduction: str | None = None,
    num_programs: int | None = None,
    num_xcds: int = 1,
    config: list[int] | None = None,
    seed: int | None = None,
    validate: str | None = None,
) -> None:
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed, out)
    v = _VALIDATE_BACK[validate]
    _run("grouped_matmul_variable_k", a, b, group_lens, accumulate=True, validate=v, **kw)


@_grouped_matmul_variable_k_accumulate.register_fake
def _(
    a, b, group_lens, out, schedule="persistent", reduction=None, num_programs=None,
    num_xcds=1, config=None, seed=None, validate=None,
):  # fmt: skip
    kw = _kw(schedule, reduction, num_programs, num_xcds, config, seed, out)
    P.plan("grouped_matmul_variable_k", a, b, group_lens, accumulate=True, meta=True, **kw)


def _grouped_epilogue_setup(ctx: Any, inputs: tuple, output: Tensor) -> None:
    a, b, group_lens, bias, activation, trans_b, *rest = inputs
    ctx.save_for_backward(a, b, group_lens, bias)
    ctx.activation = activation
    ctx.trans_b = trans_b
    ctx.rest = rest[:-1]  # schedule, reduction, num_programs, num_xcds, config, seed


def _grouped_epilogue_backward(ctx: Any, grad: Tensor) -> tuple:
    """As :func:`_epilogue_backward`, per group: the pre-activation recomputed with
    the bias fused, then the grouped GEMM's backward; group g's bias gradient is the
    sum of its rows' (rows to groups by ``repeat_interleave`` with the row count
    given, so no host sync)."""
    a, b, lens, bias = ctx.saved_tensors
    if ctx.activation not in (None, "none"):
        pre = _call("grouped_matmul_epilogue", a, b, lens, bias, None, ctx.trans_b, *ctx.rest, None)
        grad = _through_activation(grad, pre, ctx.activation)
    # Equivalent mutant: [:3], the grouped backward reads the first two flags only.
    plain = SimpleNamespace(saved_tensors=(a, b, lens), trans_b=ctx.trans_b, rest=ctx.rest,
                            needs_input_grad=ctx.needs_input_grad[:2])  # fmt: skip
    da, db = _grouped_backward(plain, grad)[:2]
    dbias = None
    if bias is not None and ctx.needs_input_grad[3]:
        groups = torch.arange(bias.shape[0], device=grad.device)
        rows = torch.repeat_interleave(groups, lens, output_size=grad.shape[0])
        dbias = torch.zeros(bias.shape, dtype=torch.float32, device=grad.device)
        dbias = dbias.index_add_(0, rows, grad.float()).to(bias.dtype)
    return (da, db, None, dbias) + (None,) * 9


torch.library.register_autograd(
    f"{NAMESPACE}::grouped_matmul_epilogue",
    _grouped_epilogue_backward,
    setup_context=_grouped_epilogue_setup,
)


# ---- the API's entry points ------------------------------------------------------------


def _scalar_types_ok(kw: dict[str, Any]) -> bool:
    """Whether the scalar arguments have the operators' schema types (else the API's own
    checks raise their TypeError/ValueError instead of the dispatcher's)."""

    def opt_int(v: Any) -> bool:
        return v is None or (isinstance(v, int) and not isinstance(v, bool))

    return (
        (kw["out"] is None or isinstance(kw["out"], Tensor))
        and isinstance(kw["schedule"], str)
        and (kw["reduction"] is None or isinstance(kw["reduction"], str))
        and opt_int(kw["num_programs"])
        and kw["num_xcds"] is not None
        and opt_int(kw["num_xcds"])
        and opt_int(kw["seed"])
    )


def _op_args(a: Tensor, b: Tensor, kw: dict[str, Any], eager_check: Any) -> tuple:
    """(schedule, reduction, num_programs, num_xcds, config, seed) for an operator.

    Scalars of the wrong type go through the API's eager checks (``eager_check``),
    which name the argument; ``config`` is resolved against the backend's default
    and packed.
    """
    if not _scalar_types_ok(kw):
        eager_check()
        raise TypeError("gemm_opt: bad scalar arguments")  # eager_check raises first
    default = h100.GPU_CONFIG if a.device.type == "cuda" else S.MODEL_CONFIG
    config = P.check_config(kw["config"], default) if kw["config"] is not None else None
    return (
        kw["schedule"],
        kw["reduction"],
        kw["num_programs"],
        kw["num_xcds"],
        _pack_config(config),
        kw["seed"],
    )


def _plain_ints(kw: dict[str, Any]) -> dict[str, Any]:
    """The integer keywords as ``int`` (the operators' schema takes Python ints; numpy
    integers are accepted as the API accepts them). Anything else is left for the
    checks to name."""
    for name in ("num_programs", "num_xcds", "seed"):
        v = kw[name]
        # Equivalent mutant: or, as_int of None raises the TypeError caught below.
        if v is not None and type(v) is not int:
            try:
                kw = {**kw, name: P.as_int(v, name)}
            except TypeError:
                pass
    return kw


def _lens_tensor(group_lens: Any) -> Tensor:
    """``group_lens`` as a tensor: a tensor as it is (on the GPU it stays there); host
    lengths (a sequence or an array) checked element by element, as a CPU tensor
    (the operator checks them in full and copies them to the GPU)."""
    if isinstance(group_lens, Tensor):
        return group_lens
    return torch.tensor(P.host_lens(group_lens), dtype=torch.int64)


def _no_grad_out(name: str, *tensors: Tensor) -> None:
    """``out=`` is not differentiable (as for torch's own ``out=`` functions)."""
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        raise RuntimeError(
            f"gemm_opt.{name}: out= is not differentiable, but an input requires grad "
            "(call it without out=, or under torch.no_grad())"
        )


def _dispatch_free() -> bool:
    """The checks :func:`_direct` needs exist in this PyTorch (else every call dispatches)."""
    C = torch._C
    return all(
        hasattr(mod, name)
        for mod, name in (
            (C, "_is_torch_function_mode_enabled"),
            (C, "_len_torch_dispatch_stack"),
            (C, "_are_functorch_transforms_active"),
            (C._autograd, "_profiler_enabled"),
            (torch.autograd.graph, "increment_version"),
        )
    )


_DIRECT_OK = _dispatch_free()
#: The device type whose eager calls may skip the dispatcher (:func:`_direct`).
_DIRECT_DEVICE = "cuda"
#: The tensor types the dispatcher adds nothing for (a module's weight is a Parameter).
_PLAIN = (Tensor, torch.nn.Parameter)


def _direct(*tensors: Tensor, autograd: bool = False) -> bool:
    """Whether an eager call may run the operator's CUDA implementation without going
    through the dispatcher, which costs about as much host time as the launch itself
    (a decode-sized GEMM is host-bound).

    Only where the dispatcher would add nothing: not traced by ``torch.compile``,
    plain CUDA tensors or parameters (no subclass such as a fake tensor), no gradient to record
    (with ``autograd``: a gradient recorded by :class:`_EagerAutograd` instead), no
    torch function or dispatch mode, no functorch transform, and the profiler off
    (it records the operators). Anything else goes through ``torch.ops``.
    """
    if not _DIRECT_OK or torch.compiler.is_compiling():
        return False
    grad = torch.is_grad_enabled() and not autograd
    for t in tensors:
        if type(t) not in _PLAIN or t.device.type != _DIRECT_DEVICE or (grad and t.requires_grad):
            return False
    C = torch._C
    return not (
        C._is_torch_function_mode_enabled()
        or C._len_torch_dispatch_stack()
        or C._are_functorch_transforms_active()
        or C._autograd._profiler_enabled()
    )


def _mutated(out: Tensor) -> None:
    """What the operator's dispatch does for a mutated argument: bump its version."""
    torch.autograd.graph.increment_version(out)


#: The differentiable operators' implementations, setup and backward, by name: what
#: :class:`_EagerAutograd` runs (the functions registered with ``torch.library``, so the
#: eager and the dispatched autograd are one definition).
_AUTOGRAD = {
    "matmul": (_matmul, _matmul_setup, _matmul_backward),
    "matmul_epilogue": (_matmul_epilogue, _epilogue_setup, _epilogue_backward),
    "grouped_matmul": (_grouped_matmul, _grouped_setup, _grouped_backward),
    "grouped_matmul_epilogue": (
        _grouped_matmul_epilogue, _grouped_epilogue_setup, _grouped_epilogue_backward,
    ),
    "grouped_matmul_variable_k": (
        _grouped_matmul_variable_k, _variable_k_setup, _variable_k_backward,
    ),
}  # fmt: skip
#: Each operator's Python implementation (``_FunctionalOp`` and ``custom_op`` keep it);
#: empty where this PyTorch does not keep it, and every call dispatches.
_IMPLS: dict[str, Any] = {
    name: getattr(op, "_init_fn", None) for name, (op, _, _) in _AUTOGRAD.items()
}
if not all(_IMPLS.values()):
    _IMPLS = {}


class _EagerAutograd(torch.autograd.Function):
    """An operator's eager call that records its gradient without ``torch.library``'s
    dispatch (60-110 us of host time per call, as much as the launch): the forward
    runs the operator's implementation, the context and the backward are the
    functions registered for it. Used only where :func:`_direct` allows (never
    while ``torch.compile`` traces: graphs keep the operators)."""

    @staticmethod
    def forward(ctx: Any, *args: Any) -> Tensor:
        *inputs, name = args
        setup = _AUTOGRAD[name][1]
        out = _IMPLS[name](*inputs)  # the implementation itself: the operator would dispatch
        setup(ctx, tuple(inputs), out)
        ctx.op = name
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        return (*_AUTOGRAD[ctx.op][2](ctx, grad), None)


def _eager_autograd(name: str, tensors: tuple[Tensor, ...]) -> bool:
    """Whether ``name``'s call on ``tensors`` records its gradient through
    :class:`_EagerAutograd` (some input requires one, and no dispatch is needed)."""
    return (
        bool(_IMPLS)
        and _direct(*tensors, autograd=True)  # first: False at once while compiling
        and torch.is_grad_enabled()
        and any(t.requires_grad for t in tensors)
    )


def _call(name: str, *args: Any) -> Tensor:
    """``torch.ops.gemm_opt.<name>(*args)`` of a backward: the implementation called
    directly where the dispatcher adds nothing (:func:`_direct`: no gradient recorded)."""
    if _IMPLS and _direct(*(a for a in args if isinstance(a, Tensor))):
        return _IMPLS[name](*args)
    return getattr(torch.ops.gemm_opt, name)(*args)


@_functional_op("scaled_matmul")
def _scaled_matmul(
    a: Tensor,
    b: Tensor,
    scale_a: Tensor,
    scale_b: Tensor,
    out_dtype: torch.dtype | None = None,
    schedule: str = "data-parallel",
    num_programs: int | None = None,
    config: list[int] | None = None,
    seed: int | None = None,
    reduction: str | None = None,
    num_xcds: int = 1,
) -> Tensor:
    from gemm_opt.runtime import scaled

    kw = dict(out_dtype=out_dtype, schedule=schedule, num_programs=num_programs, seed=seed,
              reduction=reduction, num_xcds=num_xcds)  # fmt: skip
    p = scaled.cached_plan(a, b, scale_a, scale_b, config=_unpack_config(config), **kw)
    return _run_scaled(p, a, b, scale_a, scale_b)


def _run_scaled(p: Any, a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, lens=None):
    """Run a scaled plan: the bundled kernel on CUDA tensors, else the model."""
    from gemm_opt.runtime import scaled

    if p.backend == "cuda":
        return scaled.launch(p, a, b, scale_a, scale_b, lens)
    from gemm_opt.kernels import model_gemm

    return model_gemm.run_scaled(p, a, b, scale_a, scale_b)


@_scaled_matmul.register_fake
def _(
    a, b, scale_a, scale_b, out_dtype=None, schedule="data-parallel", num_programs=None,
    config=None, seed=None, reduction=None, num_xcds=1,
):  # fmt: skip
    from gemm_opt.runtime import scaled

    p = scaled.scaled_plan(
        a, b, scale_a, scale_b, out_dtype=out_dtype, schedule=schedule, reduction=reduction,
        num_programs=num_programs, num_xcds=num_xcds, config=_unpack_config(config), seed=seed,
        meta=True,
    )  # fmt: skip
    return a.new_empty(p.out_shape, dtype=getattr(torch, p.out_dtype))


def scaled_matmul(
    a: Tensor, b: Tensor, scale_a: Any, scale_b: Any, *, config: Any = None, **kw: Any
) -> Tensor:
    """``gemm_opt.matmul``'s FP8 form on torch tensors (keywords as there): the
    arguments are checked eagerly (the same plan the operator makes), then the
    operator ``torch.ops.gemm_opt.scaled_matmul`` runs."""
    from gemm_opt.runtime import scaled

    out_dtype = kw.get("out_dtype")
    if out_dtype is not None and not isinstance(out_dtype, torch.dtype):
        raise TypeError(f"out_dtype: expected a torch.dtype, got {out_dtype!r}")
    for name, s in (("scale_a", scale_a), ("scale_b", scale_b)):
        if not isinstance(s, Tensor):
            raise TypeError(f"{name}: expected a float32 tensor, got {type(s).__name__}")
    if _direct(a, b, scale_a, scale_b):  # eager on the GPU: no dispatch, the plan cached
        p = scaled.cached_plan(a, b, scale_a, scale_b, config=config, **kw)
        return _run_scaled(p, a, b, scale_a, scale_b)
    p = scaled.scaled_plan(a, b, scale_a, scale_b, config=config, meta=True, **kw)
    cfg = S.GemmConfig(
        p.spec.block_m, p.spec.block_n, p.spec.block_k, p.spec.group_m, p.spec.num_warps,
        p.spec.num_stages,
    )  # fmt: skip
    return torch.ops.gemm_opt.scaled_matmul(
        a, b, scale_a, scale_b, kw.get("out_dtype"), kw.get("schedule", "data-parallel"),
        kw.get("num_programs"), _pack_config(cfg), kw.get("seed"),
        None if p.spec.reduction is None else str(p.spec.reduction), kw.get("num_xcds", 1),
    )  # fmt: skip


@_functional_op("scaled_grouped_matmul")
def _scaled_grouped_matmul(
    a: Tensor,
    b: Tensor,
    group_lens: Tensor,
    scale_a: Tensor,
    scale_b: Tensor,
    out_dtype: torch.dtype | None = None,
    num_programs: int | None = None,
    config: list[int] | None = None,
    seed: int | None = None,
    validate: str | None = None,
) -> Tensor:
    from gemm_opt.runtime import scaled

    kw = dict(out_dtype=out_dtype, num_programs=num_programs, seed=seed)
    p = scaled.cached_plan(
        a, b, scale_a, scale_b, group_lens, config=_unpack_config(config),
        validate=_VALIDATE_BACK[validate], **kw,
    )  # fmt: skip
    return _run_scaled(p, a, b, scale_a, scale_b, group_lens)


@_scaled_grouped_matmul.register_fake
def _(
    a, b, group_lens, scale_a, scale_b, out_dtype=None, num_programs=None, config=None,
    seed=None, validate=None,
):  # fmt: skip
    from gemm_opt.runtime import scaled

    p = scaled.scaled_grouped_plan(
        a, b, group_lens, scale_a, scale_b, out_dtype=out_dtype, num_programs=num_programs,
        config=_unpack_config(config), seed=seed, meta=True,
    )  # fmt: skip
    return a.new_empty(p.out_shape, dtype=getattr(torch, p.out_dtype))


def scaled_grouped_matmul(
    a: Tensor,
    b: Tensor,
    group_lens: Any,
    scale_a: Any,
    scale_b: Any,
    *,
    trans_b: Any,
    validate: Any,
    config: Any = None,
    **kw: Any,
) -> Tensor:
    """``gemm_opt.grouped_matmul``'s FP8 form on torch tensors (keywords as there):
    checked eagerly (the same plan the operator makes), then the operator
    ``torch.ops.gemm_opt.scaled_grouped_matmul`` runs."""
    from gemm_opt.runtime import scaled

    out_dtype = kw.get("out_dtype")
    if out_dtype is not None and not isinstance(out_dtype, torch.dtype):
        raise TypeError(f"out_dtype: expected a torch.dtype, got {out_dtype!r}")
    for name, t in (("scale_a", scale_a), ("scale_b", scale_b), ("group_lens", group_lens)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: expected a tensor, got {type(t).__name__}")
    v = P.validate_mode(validate)
    if _direct(a, b, group_lens, scale_a, scale_b):  # eager on the GPU, as scaled_matmul
        p = scaled.cached_plan(
            a, b, scale_a, scale_b, group_lens, trans_b=trans_b, config=config, validate=v, **kw
        )
        return _run_scaled(p, a, b, scale_a, scale_b, group_lens)
    p = scaled.scaled_grouped_plan(
        a, b, group_lens, scale_a, scale_b, trans_b=trans_b, config=config, meta=True, **kw
    )
    cfg = S.GemmConfig(
        p.spec.block_m, p.spec.block_n, p.spec.block_k, p.spec.group_m, p.spec.num_warps,
        p.spec.num_stages,
    )  # fmt: skip
    return torch.ops.gemm_opt.scaled_grouped_matmul(
        a, b, group_lens, scale_a, scale_b, out_dtype, kw.get("num_programs"),
        _pack_config(cfg), kw.get("seed"), _VALIDATE[v],
    )  # fmt: skip


# ---- FP8 training: quantized inside, differentiable in the high-precision operands -----
#
# The scaled operators take operands already in FP8, and a gradient of an FP8 leaf is
# rounded to FP8 by autograd, so their training form quantizes inside instead:
# ``fp8_linear(x, weight)`` is ``x @ weight.T`` with both operands quantized along the
# reduction dim (the recipe's layout), and its backward is two more scaled GEMMs, each
# of whose operands is quantized along *its* reduction dim:
#
# * dgrad ``dX = dY @ W``: ``dY`` quantized along N, ``W^T`` along N (a transposing
#   copy: the 8-bit MMA reads both operands K-major);
# * wgrad ``dW = dY^T @ X``: ``dY^T`` and ``X^T`` quantized along M (two transposing
#   copies); grouped, the 16-bit variable-K grouped GEMM on bf16 ``dY`` and ``X`` (one
#   launch, no host read of the lengths; see ``_fp8_grouped_backward``).
#
# Gradients use ``grad_recipe`` (default rowwise) and e4m3fn (the kernels take one
# format for both operands) and are computed with fp32 C, then cast to the operand's
# dtype. Forward and backward save the high-precision operands, not their FP8 forms:
# each direction quantizes along another dim.

#: Recipes of the differentiable FP8 GEMMs (those with a kernel on every backend).
FP8_TRAINING_RECIPES = ("tensorwise", "rowwise", "block128")
#: High-precision element types they take.
_HP_DTYPES = (torch.bfloat16, torch.float16, torch.float32)


def _fp8_mm(a: Tensor, w: Tensor, recipe: str, out_dtype: torch.dtype) -> Tensor:
    """``a @ w.T`` through the scaled GEMM, ``a`` (M, R) and ``w`` (N, R) quantized
    (e4m3fn) along R: ``a`` as A, ``w.T`` as B (the view of a row-major (N, R))."""
    from gemm_opt.quantize import quantize_fp8

    a8, sa = quantize_fp8(a.contiguous(), recipe=recipe, operand="a")
    b8, sb = quantize_fp8(w.contiguous().t(), recipe=recipe, operand="b")
    # The operator (traced in the backward), without the public wrapper's eager plan:
    # these operands are well formed by construction, so one plan per GEMM.
    op = torch.ops.gemm_opt.scaled_matmul
    return op(a8, b8, sa, sb, out_dtype, "data-parallel", None, None, None)


def _fp8_grouped_mm(
    a: Tensor, w: Tensor, group_lens: Tensor, recipe: str, out_dtype: torch.dtype
) -> Tensor:
    """Rows of group g: ``a_g @ w[g].T``, ``a`` (S, R), ``w`` (G, N, R), both quantized
    along R (``w`` per group: scale_b (G, 1, N) rowwise)."""
    from gemm_opt.quantize import quantize_fp8

    a8, sa = quantize_fp8(a.contiguous(), recipe=recipe, operand="a")
    b8, sb = quantize_fp8(w.contiguous().transpose(1, 2), recipe=recipe, operand="b")
    op = torch.ops.gemm_opt.scaled_grouped_matmul  # one plan, as in _fp8_mm
    return op(a8, b8.transpose(1, 2), group_lens, sa, sb, out_dtype, None, None, None, None)


def _check_fp8_training(
    x: Tensor, weight: Tensor, recipe: str, grad_recipe: str, out_dtype: Any, grouped: bool
) -> torch.dtype:
    """C's dtype, or TypeError/ValueError naming the argument (eager and fake alike)."""
    for name, r in (("recipe", recipe), ("grad_recipe", grad_recipe)):
        if r not in FP8_TRAINING_RECIPES:
            raise ValueError(
                f"{name}: an FP8 training GEMM quantizes with {', '.join(FP8_TRAINING_RECIPES)}, "
                f"got {r!r}"
            )
    for name, t in (("x", x), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: expected a torch tensor, got {type(t).__name__}")
        if t.dtype not in _HP_DTYPES:
            raise TypeError(
                f"{name}: expected high-precision elements (bfloat16, float16, float32; "
                f"the GEMM quantizes them), got {t.dtype}"
            )
    want = 3 if grouped else 2
    if x.dim() != 2 or weight.dim() != want or weight.shape[-1] != x.shape[1]:
        what = "(G, N, K)" if grouped else "(N, K)"
        raise ValueError(
            f"weight: expected x (M, K) and weight {what} with K = x's columns, got shapes "
            f"{tuple(x.shape)} and {tuple(weight.shape)}"
        )
    if weight.device != x.device:
        raise ValueError(f"weight: expected a tensor on {x.device} (x's), got {weight.device}")
    if out_dtype is None:
        return torch.bfloat16
    if out_dtype not in (torch.bfloat16, torch.float32):
        raise ValueError(f"out_dtype: expected torch.bfloat16 or torch.float32, got {out_dtype!r}")
    return out_dtype


@_functional_op("fp8_linear")
def _fp8_linear(
    x: Tensor, weight: Tensor, recipe: str, grad_recipe: str, out_dtype: torch.dtype | None
) -> Tensor:
    out = _check_fp8_training(x, weight, recipe, grad_recipe, out_dtype, grouped=False)
    return _fp8_mm(x, weight, recipe, out)


@_fp8_linear.register_fake
def _(x, weight, recipe, grad_recipe, out_dtype):
    out = _check_fp8_training(x, weight, recipe, grad_recipe, out_dtype, grouped=False)
    return x.new_empty((x.shape[0], weight.shape[0]), dtype=out)


def _fp8_linear_setup(ctx: Any, inputs: tuple, output: Tensor) -> None:
    x, weight, _, grad_recipe, _ = inputs
    ctx.save_for_backward(x, weight)
    ctx.grad_recipe = grad_recipe


def _fp8_linear_backward(ctx: Any, grad: Tensor) -> tuple:
    """dX = dY @ W and dW = dY^T @ X, both scaled GEMMs of ``grad_recipe``."""
    x, weight = ctx.saved_tensors
    dx = dw = None
    if ctx.needs_input_grad[0]:
        dx = _fp8_mm(grad, weight.t(), ctx.grad_recipe, torch.float32).to(x.dtype)
    if ctx.needs_input_grad[1]:
        dw = _fp8_mm(grad.t(), x.t(), ctx.grad_recipe, torch.float32).to(weight.dtype)
    return dx, dw, None, None, None


torch.library.register_autograd(
    f"{NAMESPACE}::fp8_linear", _fp8_linear_backward, setup_context=_fp8_linear_setup
)


@_functional_op("fp8_grouped_linear")
def _fp8_grouped_linear(
    x: Tensor,
    weight: Tensor,
    group_lens: Tensor,
    recipe: str,
    grad_recipe: str,
    out_dtype: torch.dtype | None,
) -> Tensor:
    out = _check_fp8_training(x, weight, recipe, grad_recipe, out_dtype, grouped=True)
    return _fp8_grouped_mm(x, weight, group_lens, recipe, out)


@_fp8_grouped_linear.register_fake
def _(x, weight, group_lens, recipe, grad_recipe, out_dtype):
    out = _check_fp8_training(x, weight, recipe, grad_recipe, out_dtype, grouped=True)
    return x.new_empty((x.shape[0], weight.shape[1]), dtype=out)


def _fp8_grouped_setup(ctx: Any, inputs: tuple, output: Tensor) -> None:
    x, weight, group_lens, _, grad_recipe, _ = inputs
    ctx.save_for_backward(x, weight, group_lens)
    ctx.grad_recipe = grad_recipe


def _fp8_grouped_backward(ctx: Any, grad: Tensor) -> tuple:
    """dgrad: the grouped FP8 GEMM on ``W^T`` per group (G, K, N). wgrad: ``dW_g =
    dY_g^T @ X_g`` by the 16-bit variable-K grouped GEMM (one launch, the lengths read
    where they lie: no host sync), on ``dY`` and ``X`` in bf16 (fp16 where ``x`` is):
    an FP8 wgrad per group would need the group sizes on the host, or a grouped "k"
    FP8 kernel with scales per group of rows, which is not built."""
    x, weight, group_lens = ctx.saved_tensors
    dx = dw = None
    if ctx.needs_input_grad[0]:
        wt = weight.transpose(1, 2)
        dx = _fp8_grouped_mm(grad, wt, group_lens, ctx.grad_recipe, torch.float32).to(x.dtype)
    if ctx.needs_input_grad[1]:
        half = x.dtype if x.dtype in (torch.bfloat16, torch.float16) else torch.bfloat16
        dy, xs = grad.to(half).contiguous(), x.to(half).contiguous()
        op = torch.ops.gemm_opt.grouped_matmul_variable_k
        # Equivalent mutant: 2 for num_xcds, a persistent kernel's spec sets num_xcds to 1.
        dw = op(dy, xs, group_lens, "persistent", None, None, 1, None, None, None)
        dw = dw.to(weight.dtype)
    return dx, dw, None, None, None, None


torch.library.register_autograd(
    f"{NAMESPACE}::fp8_grouped_linear", _fp8_grouped_backward, setup_context=_fp8_grouped_setup
)


def fp8_linear(
    x: Tensor,
    weight: Tensor,
    *,
    recipe: str = "rowwise",
    grad_recipe: str = "rowwise",
    out_dtype: torch.dtype | None = None,
) -> Tensor:
    """``x @ weight.T`` as an FP8 GEMM, differentiable in ``x`` and ``weight`` (the
    operator ``torch.ops.gemm_opt.fp8_linear``; checked eagerly first)."""
    _check_fp8_training(x, weight, recipe, grad_recipe, out_dtype, grouped=False)
    return torch.ops.gemm_opt.fp8_linear(x, weight, recipe, grad_recipe, out_dtype)


def fp8_grouped_linear(
    x: Tensor,
    weight: Tensor,
    group_lens: Any,
    *,
    recipe: str = "rowwise",
    grad_recipe: str = "rowwise",
    out_dtype: torch.dtype | None = None,
) -> Tensor:
    """Rows of group g: ``x_g @ weight[g].T`` as a grouped FP8 GEMM, differentiable in
    ``x`` and ``weight`` (the operator ``torch.ops.gemm_opt.fp8_grouped_linear``)."""
    _check_fp8_training(x, weight, recipe, grad_recipe, out_dtype, grouped=True)
    lens = _lens_tensor(group_lens)
    return torch.ops.gemm_opt.fp8_grouped_linear(x, weight, lens, recipe, grad_recipe, out_dtype)


def matmul(a: Tensor, b: Tensor, **kw: Any) -> Tensor:
    """``gemm_opt.matmul`` on torch tensors (keywords as there)."""
    kw = _plain_ints(kw)
    if _direct(a, b):
        result = _run("matmul", a, b, **kw)
        if kw["out"] is not None:
            _mutated(kw["out"])
        return result
    args = _op_args(a, b, kw, lambda: P.plan("matmul", a, b, **kw))
    if kw["out"] is not None:
        _no_grad_out("matmul", a, b)
        torch.ops.gemm_opt.matmul_out(a, b, kw["out"], *args)
        return kw["out"]
    if _eager_autograd("matmul", (a, b)):
        return _EagerAutograd.apply(a, b, *args, "matmul")
    return torch.ops.gemm_opt.matmul(a, b, *args)


def matmul_epilogue(
    a: Tensor,
    b: Tensor,
    *,
    bias: Tensor | None,
    activation: str | None,
    accumulate: bool,
    row_scale: Tensor | None = None,
    col_scale: Tensor | None = None,
    **kw: Any,
) -> Tensor:
    """``gemm_opt.matmul`` with a fused epilogue on torch tensors (keywords as there):
    ``matmul_epilogue`` (differentiable in ``a``, ``b`` and ``bias``), or
    ``matmul_epilogue_out`` with ``out`` (``accumulate``: ``out += ...``)."""
    kw = _plain_ints(kw)
    epi = {"bias": bias, "activation": activation, "accumulate": accumulate}
    scales = {"row_scale": row_scale, "col_scale": col_scale}
    for name, x in (("bias", bias), *scales.items()):
        if x is not None and not isinstance(x, Tensor):
            raise TypeError(f"{name}: expected a tensor like a, got {type(x).__name__}")
        if x is not None and name != "bias" and torch.is_grad_enabled() and x.requires_grad:
            raise RuntimeError(
                f"gemm_opt.matmul: {name} is not differentiable, but it requires grad (pass "
                f"{name}.detach())"
            )
    epi.update({k: v for k, v in scales.items() if v is not None})
    tensors = (a, b, *(x for x in (bias, row_scale, col_scale) if x is not None))
    if _direct(*tensors):
        result = _run("matmul", a, b, **epi, **kw)
        if kw["out"] is not None:
            _mutated(kw["out"])
        return result
    args = _op_args(a, b, kw, lambda: P.plan("matmul", a, b, **epi, **kw))
    plain = kw["out"] is None and accumulate is False
    if plain and _eager_autograd("matmul_epilogue", tensors):
        # its plan (the implementation's) says what the meta plan below would
        return _EagerAutograd.apply(
            a, b, bias, activation, *args, row_scale, col_scale, "matmul_epilogue"
        )
    if not plain:
        _no_grad_out("matmul", *tensors)
        P.plan("matmul", a, b, meta=True, **epi, **kw)  # checks eagerly (out, accumulate)
        torch.ops.gemm_opt.matmul_epilogue_out(a, b, kw["out"], bias, activation, accumulate,
                                               *args, row_scale, col_scale)  # fmt: skip
        return kw["out"]
    P.plan("matmul", a, b, meta=True, **epi, **kw)  # bad input: the eager message
    return torch.ops.gemm_opt.matmul_epilogue(a, b, bias, activation, *args, row_scale, col_scale)


def grouped_matmul(
    a: Tensor, b: Tensor, group_lens: Any, *, trans_b: Any, validate: Any, **kw: Any
) -> Tensor:
    """``gemm_opt.grouped_matmul`` on torch tensors (keywords as there)."""
    kw = _plain_ints(kw)
    if not isinstance(trans_b, bool):
        raise TypeError(f"trans_b: expected a bool, got {type(trans_b).__name__}")
    mode = P.validate_mode(validate)
    if _direct(a, b):
        lens = _lens_tensor(group_lens)
        result = _run("grouped_matmul", a, b, lens, trans_b=trans_b, validate=mode, **kw)
        if kw["out"] is not None:
            _mutated(kw["out"])
        return result
    v = _VALIDATE[mode]
    args = _op_args(
        a, b, kw, lambda: P.plan("grouped_matmul", a, b, group_lens, trans_b=trans_b, **kw)
    )
    lens = _lens_tensor(group_lens)
    if kw["out"] is not None:
        _no_grad_out("grouped_matmul", a, b)
        torch.ops.gemm_opt.grouped_matmul_out(a, b, lens, kw["out"], trans_b, *args, v)
        return kw["out"]
    if _eager_autograd("grouped_matmul", (a, b, lens)):
        return _EagerAutograd.apply(a, b, lens, trans_b, *args, v, "grouped_matmul")
    return torch.ops.gemm_opt.grouped_matmul(a, b, lens, trans_b, *args, v)


def grouped_matmul_epilogue(
    a: Tensor,
    b: Tensor,
    group_lens: Any,
    *,
    trans_b: Any,
    validate: Any,
    bias: Tensor | None,
    activation: str | None,
    accumulate: bool,
    **kw: Any,
) -> Tensor:
    """``gemm_opt.grouped_matmul`` with a fused epilogue on torch tensors (keywords as
    there): ``grouped_matmul_epilogue`` (differentiable in ``a``, ``b`` and ``bias``), or
    ``grouped_matmul_epilogue_out`` with ``out`` (``accumulate``: ``out += ...``)."""
    kw = _plain_ints(kw)
    if not isinstance(trans_b, bool):
        raise TypeError(f"trans_b: expected a bool, got {type(trans_b).__name__}")
    if bias is not None and not isinstance(bias, Tensor):
        raise TypeError(f"bias: expected a tensor like a, got {type(bias).__name__}")
    mode = P.validate_mode(validate)
    epi = {"bias": bias, "activation": activation, "accumulate": accumulate}
    tensors = (a, b) if bias is None else (a, b, bias)
    if _direct(*tensors):
        lens = _lens_tensor(group_lens)
        result = _run("grouped_matmul", a, b, lens, trans_b=trans_b, validate=mode, **epi, **kw)
        if kw["out"] is not None:
            _mutated(kw["out"])
        return result
    v = _VALIDATE[mode]
    check = {"trans_b": trans_b, **epi, **kw}
    args = _op_args(a, b, kw, lambda: P.plan("grouped_matmul", a, b, group_lens, **check))
    lens = _lens_tensor(group_lens)
    plain = kw["out"] is None and accumulate is False
    if plain and _eager_autograd("grouped_matmul_epilogue", (*tensors, lens)):
        # its plan (the implementation's) says what the meta plan below would
        return _EagerAutograd.apply(
            a, b, lens, bias, activation, trans_b, *args, v, "grouped_matmul_epilogue"
        )
    P.plan("grouped_matmul", a, b, lens, meta=True, **check)  # the eager messages
    if not plain:
        _no_grad_out("grouped_matmul", *tensors)
        torch.ops.gemm_opt.grouped_matmul_epilogue_out(
            a, b, lens, kw["out"], bias, activation, accumulate, trans_b, *args, v
        )
        return kw["out"]
    return torch.ops.gemm_opt.grouped_matmul_epilogue(
        a, b, lens, bias, activation, trans_b, *args, v
    )


def grouped_matmul_variable_k(
    a: Tensor, b: Tensor, group_lens: Any, *, validate: Any, accumulate: Any = False, **kw: Any
) -> Tensor:
    """``gemm_opt.grouped_matmul_variable_k`` on torch tensors (keywords as there);
    ``accumulate``: ``grouped_matmul_variable_k_accumulate`` (``out[g] += ...``)."""
    kw = _plain_ints(kw)
    mode = P.validate_mode(validate)
    epi = {"accumulate": accumulate} if accumulate is not False else {}
    if _direct(a, b):
        lens = _lens_tensor(group_lens)
        result = _run("grouped_matmul_variable_k", a, b, lens, validate=mode, **epi, **kw)
        if kw["out"] is not None:
            _mutated(kw["out"])
        return result
    v = _VALIDATE[mode]
    args = _op_args(
        a, b, kw, lambda: P.plan("grouped_matmul_variable_k", a, b, group_lens, **epi, **kw)
    )
    lens = _lens_tensor(group_lens)
    if epi:
        P.plan("grouped_matmul_variable_k", a, b, lens, meta=True, **epi, **kw)
        _no_grad_out("grouped_matmul_variable_k", a, b)
        torch.ops.gemm_opt.grouped_matmul_variable_k_accumulate(a, b, lens, kw["out"], *args, v)
        return kw["out"]
    if kw["out"] is not None:
        _no_grad_out("grouped_matmul_variable_k", a, b)
        torch.ops.gemm_opt.grouped_matmul_variable_k_out(a, b, lens, kw["out"], *args, v)
        return kw["out"]
    if _eager_autograd("grouped_matmul_variable_k", (a, b, lens)):
        return _EagerAutograd.apply(a, b, lens, *args, v, "grouped_matmul_variable_k")
    return torch.ops.gemm_opt.grouped_matmul_variable_k(a, b, lens, *args, v)


__all__ = [
    "FP8_TRAINING_RECIPES",
    "NAMESPACE",
    "activation_grad",
    "fp8_grouped_linear",
    "fp8_linear",
    "grouped_matmul",
    "grouped_matmul_epilogue",
    "grouped_matmul_variable_k",
    "matmul",
    "matmul_epilogue",
]
