"""Built schedule kernels, kept in memory, and their runs on the executable model.

The one place the API meets the compiler: :func:`module_for` builds the tile
module of a :class:`~gemm_opt.core.schedules.KernelSpec` (once per process),
:func:`run_on_model` interprets it on numpy storage arrays. Arguments are bound
by name (:data:`~gemm_opt.core.schedules.ARG_NAMES`), so the kernel may order
its parameters as it likes.

Until ``gemm_opt.kernels.schedule_gemm`` exists in this tree, the dense
data-parallel schedule runs the example GEMM of ``examples/gemm_gfx1250.py``
(a source checkout only); every other schedule raises
:class:`KernelUnavailable`.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gemm_opt.core import schedules as S

#: The example GEMM the dense data-parallel schedule falls back to (source checkout).
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "gemm_gfx1250.py"
#: Target the model's modules are built for (the model interprets tile IR of any target).
MODEL_TARGET = "gfx1250"


class KernelUnavailable(NotImplementedError):
    """This gemm-opt cannot build the kernel a call needs."""


_lock = threading.Lock()
_modules: dict[S.KernelSpec, tuple[Any, tuple[str, ...], str]] = {}


def _builder() -> Any:
    """``schedule_gemm.build_gemm_module``, or None where this tree has no schedule kernels."""
    try:
        mod = importlib.import_module("gemm_opt.kernels.schedule_gemm")
    except ModuleNotFoundError as e:
        if e.name != "gemm_opt.kernels.schedule_gemm":
            raise
        return None
    return mod


def builder_accepts(name: str) -> bool:
    """Whether the schedule kernel builder takes keyword ``name`` (``trans_b``, ``num_xcds``)."""
    mod = _builder()
    if mod is None:
        return False
    return name in inspect.signature(mod.build_gemm_module).parameters


def _example_gemm() -> Any:
    if not EXAMPLE.exists():
        raise KernelUnavailable(
            "this gemm-opt has no schedule kernels (gemm_opt.kernels.schedule_gemm) "
            "and no example GEMM to fall back to"
        )
    spec = importlib.util.spec_from_file_location("gemm_opt_example_gemm", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.gemm


def _build(spec: S.KernelSpec, target: str) -> tuple[Any, tuple[str, ...], str]:
    """(module, argument names in order, grid convention: ``"tiles"`` or ``"mn"``)."""
    mod = _builder()
    if mod is not None:
        # The builder spells fp16 "f16" (MLIR's name); bind by its own table.
        dtypes = getattr(mod, "DTYPES", S.DTYPES)
        dtype = spec.dtype if spec.dtype in dtypes else {"fp16": "f16"}.get(spec.dtype, spec.dtype)
        kwargs: dict[str, Any] = {
            "kind": spec.kind,
            "reduction": spec.reduction,
            "grouped": spec.grouped,
            "dtype": dtype,
            "block_m": spec.block_m,
            "block_n": spec.block_n,
            "block_k": spec.block_k,
            "group_m": spec.group_m,
            "num_warps": spec.num_warps,
            "num_stages": spec.num_stages,
            "target": target,
        }
        params = inspect.signature(mod.build_gemm_module).parameters
        for extra in ("trans_b", "num_xcds"):
            if extra in params:
                kwargs[extra] = getattr(spec, extra)
        try:
            module = mod.build_gemm_module(**kwargs)
        except ValueError as e:  # a combination the builder does not make (yet)
            raise KernelUnavailable(f"{spec.name}: {e}") from None
        if hasattr(mod, "kernel_args"):  # names depend on the kind (optional workspace)
            takes_grouped = "grouped" in inspect.signature(mod.kernel_args).parameters
            extra = (spec.grouped,) if takes_grouped else ()
            names = tuple(mod.kernel_args(spec.kind, spec.reduction, *extra))
        else:
            table = getattr(mod, "ARG_NAMES", S.ARG_NAMES)
            names = tuple(table[spec.grouped] if isinstance(table, Mapping) else table)
        return module, names, "tiles"
    if spec.kind != "data-parallel" or spec.grouped != "none" or spec.trans_b:
        raise KernelUnavailable(
            f"schedule={spec.kind!r}"
            + (f", grouped={spec.grouped!r}" if spec.grouped != "none" else "")
            + " needs the schedule kernels (gemm_opt.kernels.schedule_gemm), "
            "which this gemm-opt does not have yet"
        )
    import gemm_opt.language as tl

    half = (1 << (spec.num_warps // 2)) - 1
    module = _example_gemm().build_module(
        num_warps=spec.num_warps,
        target=target,
        DTYPE={"fp16": tl.float16, "bf16": tl.bfloat16}[spec.dtype],
        BLOCK_M=spec.block_m,
        BLOCK_N=spec.block_n,
        BLOCK_K=spec.block_k,
        NUM_BUFFERS=max(spec.num_stages or 2, 2),
        HINT_A=half,
        HINT_B=((1 << spec.num_warps) - 1) ^ half,
    )
    return module, ("a", "b", "c", "M", "N", "K", "lda", "ldb", "ldc"), "mn"


#: The pass that lowers ``tile.gemm_schedule`` (the model interprets its result).
SCHEDULE_PASS = "tile-lower-gemm-schedule"


def _lower_schedule(module: Any) -> None:
    """Run the schedule lowering in place (compilation runs it in its pipeline)."""
    from gemm_opt.core.pipeline import build_pass_manager
    from gemm_opt.lowering import REGISTRY

    with module.context:
        build_pass_manager(f"builtin.module({SCHEDULE_PASS})", REGISTRY).run(module.operation)


def module_for(
    spec: S.KernelSpec, target: str = MODEL_TARGET, *, lowered: bool = False
) -> tuple[Any, tuple[str, ...], str]:
    """The built module of ``spec`` (cached per process), its argument names, grid kind.

    ``lowered``: with ``tile.gemm_schedule`` lowered to loops and atomics, as
    the model runs it (a separate module: the pass rewrites in place).
    """
    key = (spec, target, lowered)
    with _lock:
        hit = _modules.get(key)  # type: ignore[call-overload]
        if hit is None:
            hit = _build(spec, target)
            if lowered and hit[2] == "tiles":
                _lower_schedule(hit[0])
            _modules[key] = hit  # type: ignore[index]
    return hit


def run_on_model(
    spec: S.KernelSpec,
    values: Mapping[str, Any],
    *,
    grid: int,
    num_resident: int,
    seed: int | None,
) -> Any:
    """Interpret the kernel of ``spec`` on ``values`` (numpy arrays updated in place).

    ``grid`` is the number of programs of the schedule (1-D). The interim
    example GEMM takes a 2-D ``(tiles along M, tiles along N)`` grid instead.
    """
    from gemm_opt.model import interpreter

    module, names, convention = module_for(spec, lowered=True)
    missing = [n for n in names if n not in values]
    if missing:
        raise KernelUnavailable(
            f"{spec.name}: the kernel takes argument(s) {missing} the API does not provide"
        )
    args = [values[n] for n in names]
    run_params = inspect.signature(interpreter.run_function).parameters
    kwargs: dict[str, Any] = {"arg_names": list(names)}
    if "num_resident" in run_params:
        kwargs["num_resident"] = num_resident
        kwargs["seed"] = seed
    elif seed is not None:
        raise KernelUnavailable("seed needs the concurrent model (run_function(seed=...))")
    if convention == "mn":
        pm, pn = S.tile_grid(values["M"], values["N"], spec.block_m, spec.block_n)
        launch = (pm, pn, 1)
    else:
        launch = (grid, 1, 1)
    if 0 in launch:
        return None
    return interpreter.run_function(module, None, args, launch, **kwargs)
