"""Build bundle kernels: compile a tile module and record how to launch it.

This is the writing half of :mod:`gemm_opt.runtime` and the only part that
needs the compiler (the MLIR bindings and Triton): it is imported on its own,
never by ``import gemm_opt.runtime``, so the launcher stays torch-only.

What the bundle records comes from two places, each the source of its fact:

* the tile function (read through the bindings): the argument types and the
  ``tile.divisibility`` facts stated on its arguments;
* the compiled kernel (Triton's metadata and PTX): symbol, warps, shared
  memory, scratch sizes, the SM ptxas compiled for, versions.

A kernel written directly in Triton and compiled with ``triton.compile``
(the plain-Triton baseline of the benchmarks) is bundled by
:func:`bundle_triton_kernel`: its arguments come from the signature,
constexprs and divisibility it was compiled with, checked against the PTX.

Pointer arguments are stated to be 16-byte aligned by the lowering (it gives
every pointer ``tt.divisibility = 16``, see
:mod:`gemm_opt.lowering.convert_tile_to_triton_gpu`), so the bundle records
that as their divisibility and the launcher checks it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gemm_opt.runtime.bundle import (
    Arg,
    BundleError,
    BundleKernel,
    GridDim,
    Scratch,
    TensorMap,
)

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
        (ir.Float8E4M3FNType, "fp8e4nv"),
        (ir.Float8E5M2Type, "fp8e5"),
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
    # Equivalent mutant: strict=False (the lengths are compared above).
    for i, (name, t) in enumerate(zip(names, inputs, strict=True)):
        ty = _triton_type(t)
        div = POINTER_DIVISIBILITY if ty.startswith("*") else 1
        # Equivalent mutant: < -> <= (arg_attrs is absent or has one entry per argument).
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
    mma: str = "auto",
    pipeline: str | None = None,
) -> BundleKernel:
    """Compile a tile ``ir.Module`` for ``target`` and describe it for the launcher.

    ``grid`` has three entries, each a constant or ``(argument name, block)``
    for ``cdiv(argument, block)``. Raises the compiler's
    :class:`~gemm_opt.lowering.compile.TileCompileError` if compilation fails.
    ``mma`` picks wgmma or mma.sync (the lowering's ``mma`` option);
    ``pipeline`` replaces the target's tile passes (``""``: none).
    """
    from gemm_opt.core.targets import TARGETS
    from gemm_opt.lowering.compile import compile_tile_module

    if target not in TARGETS or not TARGETS[target].nvidia:
        cuda = ", ".join(name for name, t in TARGETS.items() if t.nvidia)
        raise BundleError(f"bundles hold CUDA kernels: target {target!r} is not one of {cuda}")
    args = tile_arguments(module, arg_names)
    compiled = compile_tile_module(module, target, mma=mma, pipeline=pipeline)
    return _describe(
        compiled.metadata,
        name=name,
        symbol=compiled.name,
        ptx=compiled.asm["ptx"],
        binary=compiled.hsaco,
        args=args,
        grid=grid,
        target=target,
        meta=meta,
        tensormaps=[_tensormap(t, args) for t in compiled.tensormaps],
    )


def _tensormap(t: Mapping[str, Any], args: Sequence[Arg]) -> TensorMap:
    """A host descriptor of the compiler (argument indices) as the bundle names it."""

    def source(s: Sequence[Any]) -> str | int:
        kind, v = s
        return args[v].name if kind == "arg" else int(v)

    return TensorMap(
        base=args[t["base"]].name,
        shape=tuple(source(s) for s in t["shape"]),
        strides=tuple(source(s) for s in t["strides"]),
        block=tuple(t["block"]),
        swizzle=t["swizzle"],
        elem_bytes=t["elem_bytes"],
        dtype=t["dtype"],
    )


def _describe(
    md: Mapping[str, Any],
    *,
    name: str,
    symbol: str,
    ptx: str,
    binary: bytes,
    args: Sequence[Arg],
    grid: Sequence[int | tuple[str, int]],
    target: str,
    meta: Mapping[str, Any] | None,
    tensormaps: Sequence[TensorMap] = (),
) -> BundleKernel:
    """The bundle kernel of a compiled binary, from Triton's metadata of it."""
    import gemm_opt

    for flag in ("launch_cooperative_grid", "launch_pdl"):
        if md.get(flag):
            raise BundleError(f"{name}: the kernel needs {flag}, which bundles do not carry")
    if len(grid) != 3:
        raise BundleError(f"grid needs 3 dimensions, got {len(grid)}")
    dims = tuple(
        GridDim(arg=d[0], block=d[1]) if isinstance(d, tuple) else GridDim(constant=d) for d in grid
    )
    kernel = BundleKernel(
        name=name,
        symbol=symbol,
        target=target,
        sm=_ptx_target(ptx),
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
        binary=binary,
        triton=str(md.get("triton_version", "")),
        gemm_opt=gemm_opt.__version__,
        triton_hash=str(md.get("hash", "")),
        meta=dict(meta or {}),
        tensormaps=tuple(tensormaps),
    )
    from gemm_opt.runtime.launch import parameter_sizes

    # The bundle never records a calling convention the binary does not have.
    have, want = ptx_parameter_sizes(ptx), parameter_sizes(kernel)
    if have != want:
        raise BundleError(
            f"{name}: the PTX entry has parameters of sizes {have}; the bundle gives {want}"
        )
    return kernel


def triton_arguments(
    arg_names: Sequence[str],
    signature: Mapping[str, str],
    *,
    constexprs: Mapping[str, int | float | bool] | None = None,
    divisibility: Mapping[str, int] | None = None,
) -> list[Arg]:
    """The bundle arguments of a Triton kernel compiled from ``signature``.

    ``signature`` is the one given to ``triton.compile`` (``"constexpr"`` for
    specialised arguments, whose values are in ``constexprs``);
    ``divisibility`` holds the ``tt.divisibility`` facts it was compiled
    with, which the launcher then checks.
    """
    constexprs = dict(constexprs or {})
    divisibility = dict(divisibility or {})
    unknown = (set(signature) | set(constexprs) | set(divisibility)) - set(arg_names)
    if unknown:
        raise BundleError(f"the kernel has no argument {sorted(unknown)[0]!r}")
    out = []
    for name in arg_names:
        ty = signature.get(name)
        if ty is None:
            raise BundleError(f"argument {name!r} is missing from the signature")
        if ty == "constexpr":
            if name not in constexprs:
                raise BundleError(f"constexpr argument {name!r} has no value")
            value = constexprs[name]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise BundleError(
                    f"constexpr argument {name!r} is {value!r}: bundles carry numbers only"
                )
            out.append(Arg(name, "fp32" if isinstance(value, float) else "i32", 1, value))
            continue
        if name in constexprs:
            raise BundleError(
                f"argument {name!r} has a value but is not 'constexpr' in the signature"
            )
        out.append(Arg(name, ty, divisibility.get(name, 1)))
    return out


def bundle_triton_kernel(
    compiled: Any,
    arg_names: Sequence[str],
    signature: Mapping[str, str],
    *,
    name: str,
    grid: Sequence[int | tuple[str, int]],
    constexprs: Mapping[str, int | float | bool] | None = None,
    divisibility: Mapping[str, int] | None = None,
    target: str = "cuda:90",
    meta: Mapping[str, Any] | None = None,
) -> BundleKernel:
    """Describe a kernel already compiled by ``triton.compile`` for the launcher.

    ``compiled`` is Triton's ``CompiledKernel`` (its cubin, PTX and metadata);
    ``arg_names``, ``signature``, ``constexprs`` and ``divisibility`` are what
    it was compiled from (see :func:`triton_arguments`). The PTX's parameter
    list is checked against the arguments, so a bundle never records a
    calling convention the binary does not have.
    """
    from gemm_opt.core.targets import TARGETS

    if target not in TARGETS or not TARGETS[target].nvidia:
        cuda = ", ".join(n for n, t in TARGETS.items() if t.nvidia)
        raise BundleError(f"bundles hold CUDA kernels: target {target!r} is not one of {cuda}")
    md = compiled.metadata
    md = md._asdict() if hasattr(md, "_asdict") else dict(md)
    backend = getattr(md.get("target"), "backend", "cuda")
    if backend != "cuda" or "cubin" not in compiled.asm:
        raise BundleError(f"{name}: not a CUDA kernel (compiled for {md.get('target')})")
    args = triton_arguments(arg_names, signature, constexprs=constexprs, divisibility=divisibility)
    ptx = compiled.asm["ptx"]
    return _describe(
        md,
        name=name,
        symbol=str(md.get("name", compiled.name)),
        ptx=ptx,
        binary=bytes(compiled.asm["cubin"]),
        args=args,
        grid=grid,
        target=target,
        meta=meta,
    )


def ptx_parameter_sizes(ptx: str) -> list[int]:
    """Byte sizes of the parameters of the PTX's ``.entry`` (``.param .u64 ...`` is 8)."""
    start = ptx.find(".entry")
    if start < 0:
        raise BundleError("the compiled PTX has no .entry")
    head = ptx[start:]
    # Equivalent mutant: + 1 -> + 2 (a declaration's first word, ``.param``, is never read).
    params = head[head.index("(") + 1 : head.index(")")]
    sizes = []
    for decl in params.split(","):
        words = decl.split()
        if not words:
            continue
        if words[1] == ".align":  # .param .align 64 .b8 name[128]: a CUtensorMap
            sizes.append(int(words[-1][words[-1].index("[") + 1 : -1]))
            continue
        kind = words[1]  # .param .u32 name / .param .u64 .ptr .global .align 1 name
        sizes.append(int(kind.lstrip(".ubsf")) // 8)
    return sizes
