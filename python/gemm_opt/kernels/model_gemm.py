"""Run a GEMM plan on the executable model: the API's backend for host operands.

The kernel of a :class:`~gemm_opt.runtime.plan.GemmPlan` is interpreted on
numpy storage (:func:`gemm_opt.kernels.cache.run_on_model`), bf16 held as
bf16-exact float32 like the model; numpy arrays and CPU torch tensors come
back in their own framework and dtype.

A matmul's operands reach the kernel as they lie: the storage is a flat view
from each operand's first element over every element it spans, and the
plan's layout (``trans_a``/``trans_b``, the leading dimensions, a batched
plan's views) says how the kernel reads it, as on the GPU; only bf16 is
converted, element for element (the model holds it as float32). The grouped
GEMMs' operands are copied to dense storage.
"""

from __future__ import annotations

import math
from typing import Any

from gemm_opt.runtime.plan import GemmPlan, batch_view, element_strides


def span(x: Any, dtype: Any) -> Any:
    """``x``'s elements from its first one to its last, as a flat numpy array of
    ``dtype``: a view for numpy storage of that dtype (and CPU torch fp16), else
    the span converted element by element, its layout kept."""
    import numpy as np

    shape, strides = tuple(x.shape), element_strides(x, "x")
    length = 0 if 0 in shape else 1 + sum((d - 1) * s for d, s in zip(shape, strides, strict=True))
    if type(x).__module__.split(".")[0] == "torch":
        flat = x.detach().as_strided((length,), (1,))
        keep = str(flat.dtype) == "torch.float16" and dtype == np.float16
        return (flat if keep else flat.float()).numpy()
    flat = np.lib.stride_tricks.as_strided(x, (length,), (x.itemsize,))
    # The model binds writeable arrays (it never writes A or B): a read-only one's span is copied.
    return flat if flat.dtype == dtype and flat.flags.writeable else flat.astype(dtype)


def _host(x: Any, dtype: Any) -> Any:
    """A numpy copy of ``x`` (a numpy array or CPU tensor) in ``dtype`` (bf16 as float32)."""
    import numpy as np

    if type(x).__module__.split(".")[0] == "torch":
        x = x.detach().float().numpy()
    return np.array(x, dtype=dtype)


def run(
    plan: GemmPlan,
    a: Any,
    b: Any,
    *,
    out: Any = None,
    bias: Any = None,
    row_scale: Any = None,
    col_scale: Any = None,
) -> Any:
    """C of ``plan`` for the operands ``a`` and ``b`` (written into ``out`` when given),
    its programs interleaved as the plan's ``seed`` says. ``bias``, ``row_scale`` and
    ``col_scale``: the epilogue's (with ``accumulate`` the kernel adds into ``out``'s
    values)."""
    import numpy as np

    from gemm_opt.kernels import cache

    spec, layout = plan.spec, plan.layout
    assert spec is not None and layout is not None and plan.backend != "cuda"
    torch_in = plan.backend == "torch-cpu"
    dtype = np.float16 if spec.dtype == "fp16" else np.float32
    c_dtype = np.float32 if spec.out_dtype == "fp32" else dtype
    epilogue: dict[str, Any] = {}
    if spec.epilogue.bias is not None:
        bias_type = np.float16 if spec.epilogue.bias == "fp16" else np.float32
        epilogue["bias"] = _host(bias, bias_type).reshape(-1)  # grouped: (G, N) row by row
    for name, scale in (("row_scale", row_scale), ("col_scale", col_scale)):
        if name in spec.epilogue.args:
            epilogue[name] = _host(scale, np.float32)

    def storage(x: Any) -> Any:
        if plan.op == "matmul":
            return span(x, dtype)
        if torch_in:
            x = x.detach()
            x = x.float() if spec.dtype == "bf16" else x
            return np.ascontiguousarray(x.numpy())
        return np.ascontiguousarray(x, dtype=dtype)

    if spec.epilogue.accumulate:
        c = _host(out, c_dtype).reshape(plan.out_shape)
    else:
        c = np.full(plan.out_shape, 0.0 if layout.zero_output else np.nan, dtype=c_dtype)
    if plan.sub is not None:  # batch by batch, on views
        shape_a, strides_a, shape_b, strides_b = plan.views
        rows = c.reshape(len(plan.offsets), *plan.out_shape[-2:])
        for i, (oa, ob) in enumerate(plan.offsets):
            ai = batch_view(a, shape_a, strides_a, oa)
            bi = batch_view(b, shape_b, strides_b, ob)
            _interpret(plan.sub, storage(ai), storage(bi), rows[i], cache, epilogue)
    else:
        _interpret(plan, storage(a), storage(b), c, cache, epilogue)
    out_type = out.dtype if out is not None else a.dtype
    if torch_in:
        import torch

        result = torch.from_numpy(c).to(out_type)
    else:
        result = c.astype(out_type) if c.dtype != out_type else c
    if out is None:
        return result
    if torch_in:
        out.copy_(result)
    else:
        np.copyto(out, result)
    return out


def _interpret(
    plan: GemmPlan, a: Any, b: Any, c: Any, cache: Any, epilogue: dict[str, Any] | None = None
) -> None:
    """One launch of ``plan``'s kernel on storage ``a`` and ``b``, writing ``c``
    (``epilogue``: its vectors by argument name)."""
    import numpy as np

    spec, layout = plan.spec, plan.layout
    assert spec is not None and layout is not None
    shape = c.shape
    if plan.swap_ab:  # the kernel's A is the call's B and its B the call's A
        a, b = b, a
    values = {
        "a": a,
        "b": b,
        "c": c.reshape(math.prod(shape[:-1]), shape[-1]),  # N may be 0
        "sync": np.zeros(max(layout.sync_elements, 1), dtype=np.int32),
        "partials": np.full(max(layout.partial_elements, 1), np.nan, dtype=np.float32),
        **plan.scalars,
        **(epilogue or {}),
    }
    if plan.lens is not None:  # the model reads host lengths (always checked)
        values["group_lens"] = np.asarray(plan.lens, dtype=np.int32).reshape(-1)
    cache.run_on_model(spec, values, grid=plan.grid, num_resident=plan.programs, seed=plan.seed)


def run_scaled(plan: Any, a: Any, b: Any, scale_a: Any, scale_b: Any) -> Any:
    """C of a scaled FP8 ``plan`` (:class:`~gemm_opt.runtime.scaled.ScaledPlan`, dense or
    grouped) on the model: the operands' 8-bit codes as they lie (flat spans), the
    scales as the kernel reads them (float32), C returned in ``plan.out_dtype`` and the
    operands' framework."""
    import numpy as np

    from gemm_opt.kernels import cache
    from gemm_opt.runtime.scaled import kernel_scales

    scale_a, scale_b = kernel_scales(plan, scale_a, scale_b)

    def codes(x: Any) -> Any:
        if type(x).__module__.split(".")[0] == "torch":
            import torch

            x = x.detach().view(torch.uint8).numpy()
        else:
            x = x.view(np.uint8)
        return span(x, np.uint8)

    def scales(x: Any) -> Any:
        if type(x).__module__.split(".")[0] == "torch":
            import torch

            x = x.detach()
            x = (x.view(torch.uint8) if x.element_size() == 1 else x).numpy()
        if x.dtype.itemsize == 1:  # mx32: the e8m0 codes, as the kernel's 8-bit pointer takes
            return np.ascontiguousarray(x).view(np.uint8).reshape(-1)
        return np.ascontiguousarray(x, dtype=np.float32).reshape(-1)

    layout = plan.layout  # atomic stream-K adds into a zeroed C
    c = np.full(plan.out_shape, 0.0 if layout.zero_output else np.nan, dtype=np.float32)
    values = {
        "a": codes(a), "b": codes(b), "c": c, "M": plan.m, "N": plan.n, "K": plan.k,
        "lda": plan.lda, "ldb": plan.ldb, "ldc": plan.n,
        "scale_a": scales(scale_a), "scale_b": scales(scale_b),
        "sync": np.zeros(max(layout.sync_elements, 1), dtype=np.int32),
        "partials": np.full(max(layout.partial_elements, 1), np.nan, dtype=np.float32),
    }  # fmt: skip
    if plan.groups is not None:  # the model reads host lengths (always checked)
        assert plan.lens is not None
        values |= {"group_lens": np.asarray(plan.lens, dtype=np.int32), "num_groups": plan.groups}
    cache.run_on_model(
        plan.spec, values, grid=plan.grid, num_resident=max(plan.programs, 1), seed=plan.seed
    )
    if plan.backend == "torch-cpu":
        import torch

        return torch.from_numpy(c).to(getattr(torch, plan.out_dtype))
    if plan.out_dtype == "bfloat16":
        import ml_dtypes

        return c.astype(ml_dtypes.bfloat16)
    return c


__all__ = ["run", "run_scaled", "span"]
