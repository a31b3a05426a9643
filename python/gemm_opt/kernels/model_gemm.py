"""Run a GEMM plan on the executable model: the API's backend for host operands.

The kernel of a :class:`~gemm_opt.runtime.plan.GemmPlan` is interpreted on
numpy storage (:func:`gemm_opt.kernels.cache.run_on_model`), bf16 held as
bf16-exact float32 like the model; numpy arrays and CPU torch tensors come
back in their own framework and dtype.
"""

from __future__ import annotations

import math
from typing import Any

from gemm_opt.runtime.plan import GemmPlan


def run(plan: GemmPlan, a: Any, b: Any, *, out: Any = None) -> Any:
    """C of ``plan`` for the operands ``a`` and ``b`` (written into ``out`` when given),
    its programs interleaved as the plan's ``seed`` says."""
    import numpy as np

    from gemm_opt.kernels import cache

    spec, layout = plan.spec, plan.layout
    assert spec is not None and layout is not None and plan.backend != "cuda"
    torch_in = plan.backend == "torch-cpu"
    dtype = np.float16 if spec.dtype == "fp16" else np.float32

    def storage(x: Any) -> Any:
        if torch_in:
            x = x.detach()
            x = x.float() if spec.dtype == "bf16" else x
            return np.ascontiguousarray(x.numpy())
        return np.ascontiguousarray(x, dtype=dtype)

    c = np.full(plan.out_shape, 0.0 if layout.zero_output else np.nan, dtype=dtype)
    values = {
        "a": storage(a),
        "b": storage(b),
        "c": c.reshape(math.prod(plan.out_shape[:-1]), plan.out_shape[-1]),  # N may be 0
        "sync": np.zeros(max(layout.sync_elements, 1), dtype=np.int32),
        "partials": np.full(max(layout.partial_elements, 1), np.nan, dtype=np.float32),
        **plan.scalars,
    }
    if plan.lens is not None:  # the model reads host lengths (always checked)
        values["group_lens"] = np.asarray(plan.lens, dtype=np.int32).reshape(-1)
    cache.run_on_model(spec, values, grid=plan.grid, num_resident=plan.programs, seed=plan.seed)
    if torch_in:
        import torch

        result = torch.from_numpy(c).to(a.dtype)
    else:
        result = c.astype(a.dtype) if c.dtype != a.dtype else c
    if out is None:
        return result
    if torch_in:
        out.copy_(result)
    else:
        np.copyto(out, result)
    return out


__all__ = ["run"]
