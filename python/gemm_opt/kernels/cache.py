"""Built schedule kernels, kept in memory, and their runs on the executable model.

The one place the API meets the compiler: :func:`module_for` builds the tile
module of a :class:`~gemm_opt.core.schedules.KernelSpec` (once per process)
with :func:`~gemm_opt.kernels.schedule_gemm.build_gemm_module`;
:func:`run_on_model` interprets it on numpy storage arrays, its arguments
bound by the names of :func:`~gemm_opt.core.schedules.kernel_args`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from gemm_opt.core import schedules as S
from gemm_opt.core.pipeline import build_pass_manager
from gemm_opt.kernels.schedule_gemm import build_gemm_module

#: Target the model's modules are built for (the model interprets tile IR of any target).
MODEL_TARGET = "gfx1250"
#: The pass that lowers ``tile.gemm_schedule`` (the model interprets its result).
SCHEDULE_PASS = "tile-lower-gemm-schedule"

_lock = threading.Lock()
_modules: dict[tuple[S.KernelSpec, str, bool], Any] = {}


def _build(spec: S.KernelSpec, target: str) -> Any:
    return build_gemm_module(
        kind=spec.kind,
        reduction=spec.reduction,
        grouped=spec.grouped,
        dtype=spec.dtype,
        block_m=spec.block_m,
        block_n=spec.block_n,
        block_k=spec.block_k,
        group_m=spec.group_m,
        num_xcds=spec.num_xcds,
        num_warps=spec.num_warps,
        num_stages=spec.num_stages,
        target=target,
        trans_a=spec.trans_a,
        trans_b=spec.trans_b,
        trans_c=spec.trans_c,
        aligned=spec.aligned,
        tma=spec.tma,
        vector_bytes=spec.vector_bytes,
        scale=spec.scale,
        out_dtype=spec.out_dtype,
        epilogue=spec.epilogue,
        imprecise_acc=spec.imprecise_acc,
    )


def _lower_schedule(module: Any) -> None:
    """Run the schedule lowering in place (compilation runs it in its pipeline)."""
    from gemm_opt.lowering import REGISTRY

    with module.context:
        build_pass_manager(f"builtin.module({SCHEDULE_PASS})", REGISTRY).run(module.operation)


def module_for(spec: S.KernelSpec, target: str = MODEL_TARGET, *, lowered: bool = False) -> Any:
    """The built module of ``spec`` (cached per process); its arguments are ``spec.arg_names``.

    ``lowered``: with ``tile.gemm_schedule`` lowered to loops and atomics, as
    the model runs it (a separate module: the pass rewrites in place).
    """
    key = (spec, target, lowered)
    with _lock:
        module = _modules.get(key)
        if module is None:
            module = _build(spec, target)
            if lowered:
                _lower_schedule(module)
            _modules[key] = module
    return module


def run_on_model(
    spec: S.KernelSpec,
    values: Mapping[str, Any],
    *,
    grid: int,
    num_resident: int,
    seed: int | None,
) -> Any:
    """Interpret the kernel of ``spec`` on ``values`` (numpy arrays updated in place).

    ``grid`` is the number of programs of the schedule (1-D); ``num_resident``
    of them run at once, interleaved as ``seed`` chooses (None: program order).
    """
    from gemm_opt.model import interpreter

    if grid == 0:
        return None
    names = spec.arg_names
    return interpreter.run_function(
        module_for(spec, lowered=True),
        None,
        [values[n] for n in names],
        (grid, 1, 1),
        arg_names=list(names),
        num_resident=num_resident,
        seed=seed,
    )
