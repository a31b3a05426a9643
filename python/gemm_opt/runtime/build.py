"""Build bundle kernels: compile a tile module and record how to launch it.

This is the writing half of :mod:`gemm_opt.runtime` and the only part that
needs the compiler (the MLIR bindings and Triton): it is imported on its own,
never by ``import gemm_opt.runtime``, so the launcher stays torch-only.

What the bundle records comes from two places, each the source of its fact:

* the tile function (read through the bindings): the argument types and the
  ``tile.divisibility`` facts stated on its arguments;
* the compiled kernel (Triton's metadata and PTX): symbol, warps, shared
  memory, scratch sizes, the SM ptxas compiled for, versions.

Pointer arguments are stated to be 16-byte aligned by the lowering (it gives
every pointer ``tt.divisibility = 16``, see
:mod:`gemm_opt.lowering.convert_tile_to_triton_gpu`), so the bundle records
that as their divisibility and the launcher checks it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gemm_opt.runtime.bundle import Arg, BundleError, BundleKernel, GridDim, Scratch

#: Alignment in bytes the lowering states for every pointer argument.
POINTER_DIVISIBILITY = 16


def _triton_type(t: Any) -> str:
    """Triton's signature spelling of a tile function argument type."""
    from gemm_opt.core.ext_compat import cast, ir
    from gemm_opt.dialect.tile import PtrType

    if isinstance(t, PtrType):
        return "*" + _triton_type(t.element_type)
    it = cast(t, ir.IntegerType)
    if it is not None and it.width in (1, 8, 16, 32, 64):
        return f"{'u' if it.is_unsigned else 'i'}{it.width}"
    for kind, name in (
        (ir.F16Type, "fp16"),
        (ir.BF16Type, "bf16"),
        (ir.F32Type, "fp32"),
        (ir.F64Type, "fp64"),
    ):
        if cast(t, kind) is not None:
            return name
    raise BundleError(f"argument type {t} has no launcher type")


def tile_arguments(module: Any, names: Sequence[str]) -> list[Arg]:
    """The arguments of the module's one function: ``names``, types and divisibility."""
    from gemm_opt.core.contract import DIVISIBILITY, TRITON_DIVISIBILITY
    from gemm_opt.core.ext_compat import func, ir

    funcs = [op for op in module.body.operations if isinstance(op, func.FuncOp)]
    if len(funcs) != 1:
        raise BundleError(f"a bundle kernel module needs one func.func, found {len(funcs)}")
    fn = funcs[0]
    inputs = list(fn.type.inputs)
    if len(names) != len(inputs):
        raise BundleError(
            f"@{fn.name.value} has {len(inputs)} arguments; {len(names)} names were given"
        )
    attrs = list(fn.arg_attrs) if fn.arg_attrs is not None else []
    out = []
    for i, (name, t) in enumerate(zip(names, inputs, strict=True)):
        ty = _triton_type(t)
        div = POINTER_DIVISIBILITY if ty.startswith("*") else 1
        if i < len(attrs) and not ty.startswith("*"):
            entries = ir.DictAttr(attrs[i])
            for key in (DIVISIBILITY, TRITON_DIVISIBILITY):
                if key in entries:
                    div = ir.IntegerAttr(entries[key]).value
        out.append(Arg(name, ty, div))
    return out


def _ptx_target(ptx: str) -> str:
    """The SM of the PTX ``.target`` directive (what ptxas compiled the cubin for)."""
    for line in ptx.splitlines():
        words = line.replace(",", " ").split()
        if words[:1] == [".target"] and len(words) > 1:
            return words[1]
    raise BundleError("the compiled PTX has no .target directive")


def build_kernel(
    module: Any,
    arg_names: Sequence[str],
    *,
    name: str,
    grid: Sequence[int | tuple[str, int]],
    target: str = "cuda:90",
    meta: Mapping[str, Any] | None = None,
) -> BundleKernel:
    """Compile a tile ``ir.Module`` for ``target`` and describe it for the launcher.

    ``grid`` has three entries, each a constant or ``(argument name, block)``
    for ``cdiv(argument, block)``. Raises the compiler's
    :class:`~gemm_opt.lowering.compile.TileCompileError` if compilation fails.
    """
    import gemm_opt
    from gemm_opt.core.targets import TARGETS
    from gemm_opt.lowering.compile import compile_tile_module

    if target not in TARGETS or not TARGETS[target].nvidia:
        cuda = ", ".join(name for name, t in TARGETS.items() if t.nvidia)
        raise BundleError(f"bundles hold CUDA kernels: target {target!r} is not one of {cuda}")
    args = tile_arguments(module, arg_names)
    compiled = compile_tile_module(module, target)
    md = compiled.metadata
    for flag in ("launch_cooperative_grid", "launch_pdl"):
        if md.get(flag):
            raise BundleError(f"{name}: the kernel needs {flag}, which bundles do not carry")
    if len(grid) != 3:
        raise BundleError(f"grid needs 3 dimensions, got {len(grid)}")
    dims = tuple(
        GridDim(arg=d[0], block=d[1]) if isinstance(d, tuple) else GridDim(constant=d) for d in grid
    )
    return BundleKernel(
        name=name,
        symbol=compiled.name,
        target=target,
        sm=_ptx_target(compiled.asm["ptx"]),
        num_warps=int(md["num_warps"]),
        threads_per_warp=int(md.get("warp_size", 32)),
        num_ctas=int(md.get("num_ctas", 1)),
        shared_bytes=int(md["shared"]),
        global_scratch=Scratch(
            int(md.get("global_scratch_size", 0)), int(md.get("global_scratch_align", 1))
        ),
        profile_scratch=Scratch(
            int(md.get("profile_scratch_size", 0)), int(md.get("profile_scratch_align", 1))
        ),
        args=tuple(args),
        grid=dims,  # type: ignore[arg-type]
        binary=compiled.hsaco,
        triton=str(md.get("triton_version", "")),
        gemm_opt=gemm_opt.__version__,
        triton_hash=str(md.get("hash", "")),
        meta=dict(meta or {}),
    )
