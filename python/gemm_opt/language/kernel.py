"""The ``@tl.kernel`` object: parameters, tracing into a module, compiling.

:meth:`Kernel.build_module` traces the Python function once into a verified
tile module; :meth:`Kernel.compile` hands that module to the one tile-to-binary
path, :func:`gemm_opt.lowering.compile.compile_tile_module`, for any target it
supports (``cuda:90`` included), and maps its positioned errors back to the
kernel's source file through the ops' typed locations.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gemm_opt.core.contract import DIVISIBILITY
from gemm_opt.core.ext_compat import func, ir
from gemm_opt.core.targets import TARGETS, Target
from gemm_opt.dialect import make_context, tile
from gemm_opt.language.builder import Builder, active, tracing
from gemm_opt.language.dtypes import as_dtype, constexpr, divisible, dtype, pointer_type
from gemm_opt.language.errors import (
    CompilationError,
    def_pos,
    fail,
    file_line_col,
    located,
    user_pos,
)
from gemm_opt.language.layouts import is_int
from gemm_opt.language.values import Pointer, Scalar


def _target(name: Any) -> Target:
    """The target called ``name`` in the one target table; else an error."""
    if not isinstance(name, str) or name not in TARGETS:
        raise fail(f"unknown target {name!r}; known: {', '.join(TARGETS)}")
    return TARGETS[name]


@dataclass(frozen=True)
class Param:
    """A kernel parameter, classified by its annotation."""

    name: str
    kind: str  # "constexpr" | "pointer" | "scalar"
    annotation: Any
    default: Any


# Keyword arguments of build_ir/compile: a constexpr of the same name could
# never receive a value.
_COMPILE_OPTIONS = ("fuse", "derive_hints", "pipeline", "num_warps", "target", "debug_info")


class Kernel:
    """A traced kernel; made by :func:`kernel`.

    * :meth:`build_module` / :meth:`build_ir` trace it into a verified tile
      module (no Triton involved);
    * :meth:`compile` also runs the tile pipeline and Triton and returns the
      lowering's ``CompiledKernel`` (``.asm["tile"|"ttgir"|"llir"|"amdgcn"]``,
      ``.asm["ptx"]`` instead of ``"amdgcn"`` on cuda:90, ``.hsaco``,
      ``.metadata``, and ``.metrics``, the ISA report of an AMD target).

    ``num_warps`` is required everywhere: the layouts and warp hints of a
    kernel only mean something for one warp count.
    Called while another kernel is being built, it is inlined like a helper.
    """

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        functools.update_wrapper(self, fn, updated=())
        self._params: list[Param] | None = None

    def __repr__(self) -> str:
        return f"<tl.kernel {self.__qualname__}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not active():
            raise fail(
                f"{self.__name__} is a @tl.kernel: build it with .build_ir(...) or "
                ".compile(...); it can only be called directly from another kernel"
            )
        return self.fn(*args, **kwargs)

    # -- parameters --

    def params(self) -> list[Param]:
        """The kernel's parameters, classified by annotation."""
        if self._params is None:
            self._params = self._classify()
        return self._params

    def _classify(self) -> list[Param]:
        where = def_pos(self.fn)
        try:
            annotations = inspect.get_annotations(self.fn, eval_str=True)
        except Exception as e:  # an annotation failed to evaluate
            raise where.error(f"cannot evaluate the annotations of {self.__name__}: {e}") from e
        out = []
        for p in inspect.signature(self.fn).parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise where.error(f"kernel {self.__name__} cannot take *{p.name}")
            ann = annotations.get(p.name, inspect.Parameter.empty)
            default = p.default
            if ann is constexpr or isinstance(ann, constexpr):
                kind = "constexpr"
                if p.name in _COMPILE_OPTIONS:
                    raise where.error(
                        f"constexpr {p.name!r} clashes with the build option of that name"
                    )
            elif isinstance(ann, pointer_type):
                kind = "pointer"
            elif isinstance(ann, dtype | divisible):
                kind = "scalar"
            else:
                raise where.error(
                    f"parameter {p.name!r} of kernel {self.__name__} needs an annotation: "
                    "tl.ptr(...), tl.int32, tl.int64, tl.divisible(...) or tl.constexpr"
                )
            if kind != "constexpr" and default is not p.empty:
                raise where.error(f"runtime parameter {p.name!r} cannot have a default")
            out.append(Param(p.name, kind, ann, default))
        return out

    def _bind(self, constexprs: dict[str, Any]) -> dict[str, Any]:
        params = {p.name: p for p in self.params()}
        for name in constexprs:
            if name not in params:
                raise fail(f"kernel {self.__name__} has no parameter {name!r}")
            if params[name].kind != "constexpr":
                raise fail(
                    f"{name!r} is a runtime parameter of {self.__name__}; only "
                    "tl.constexpr parameters take values at build time"
                )
        values = {}
        for p in self.params():
            if p.kind != "constexpr":
                continue
            if p.name in constexprs:
                values[p.name] = constexprs[p.name]
            elif p.default is not inspect.Parameter.empty:
                values[p.name] = p.default
            else:
                raise fail(f"kernel {self.__name__} needs a value for constexpr {p.name!r}")
        return values

    def _arg_type(self, p: Param, values: dict[str, Any]) -> tuple[ir.Type, dtype]:
        if p.kind == "scalar":
            d = p.annotation.dtype if isinstance(p.annotation, divisible) else p.annotation
            return d.to_ir(), d
        elem = p.annotation.element
        if isinstance(elem, str):
            if elem not in values:
                raise def_pos(self.fn).error(
                    f"tl.ptr({elem!r}) of parameter {p.name!r} names no constexpr parameter"
                )
            elem = as_dtype(values[elem], f"constexpr {elem!r} (element type of {p.name!r})")
        return tile.PtrType.get(ir.TypeAttr.get(elem.to_ir())), elem

    # -- building --

    def build_module(
        self, *, num_warps: int | None = None, target: str = "gfx1250", **constexprs: Any
    ):
        """Trace the kernel into a verified tile ``ir.Module`` (its own context)."""
        t = _target(target)
        if num_warps is None:
            raise fail(f"{self.__name__}: num_warps is required (the warps of one program)")
        if not is_int(num_warps) or num_warps < 1:
            raise fail(f"num_warps must be a positive int, got {num_warps!r}")
        if num_warps * t.warp_size > t.max_threads_per_block:
            raise fail(
                f"num_warps = {num_warps} is {num_warps * t.warp_size} threads on {target} "
                f"({t.warp_size} per warp); a program launches at most "
                f"{t.max_threads_per_block}"
            )
        values = self._bind(constexprs)
        ctx = make_context()
        b = Builder(ctx, num_warps, target, t.warp_size)
        handle = ctx.attach_diagnostic_handler(b.on_diagnostic)
        ctx.emit_error_diagnostics = True
        try:
            with ctx, ir.Location.unknown(), tracing(b):
                try:
                    module = self._trace(b, values)
                except CompilationError:
                    raise
                except Exception as e:  # a Python error in the kernel's code
                    raise located(e, self.fn.__code__) from e
                b.verify(module.operation)
        finally:
            handle.detach()
        return module

    def _trace(self, b: Builder, values: dict[str, Any]) -> ir.Module:
        where = def_pos(self.fn)
        module = ir.Module.create(loc=where.location())
        attrs = module.operation.attributes
        i32 = ir.IntegerType.get_signless(32)
        attrs[tile.NUM_WARPS] = ir.IntegerAttr.get(i32, b.num_warps)
        attrs[tile.THREADS_PER_WARP] = ir.IntegerAttr.get(i32, b.threads_per_warp)
        attrs[tile.TARGET] = ir.StringAttr.get(b.target)
        b.module = module
        runtime = [p for p in self.params() if p.kind != "constexpr"]
        typed = [self._arg_type(p, values) for p in runtime]
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp(
                self.__name__,
                ir.FunctionType.get([t for t, _ in typed], []),
                loc=where.location(),
            )
        facts = [p.annotation.by if isinstance(p.annotation, divisible) else 0 for p in runtime]
        if any(facts):
            fn.arg_attrs = ir.ArrayAttr.get(
                [
                    ir.DictAttr.get({DIVISIBILITY: ir.IntegerAttr.get(i32, by)} if by else {})
                    for by in facts
                ]
            )
        entry = fn.add_entry_block([where.location()] * len(runtime))
        b.entry = entry
        args: dict[str, Any] = dict(values)
        for p, (_, d), arg in zip(runtime, typed, entry.arguments, strict=True):
            args[p.name] = Pointer(arg, d) if p.kind == "pointer" else Scalar(arg, d)
        with ir.InsertionPoint(entry):
            out = self.fn(**args)
            if out is not None:
                raise where.error(
                    f"kernel {self.__name__} returned {out!r}; kernels return nothing "
                    "(write results with tl.store_block)"
                )
            func.ReturnOp([], loc=where.location())
        return module

    def build_ir(
        self,
        *,
        num_warps: int | None = None,
        target: str = "gfx1250",
        debug_info: bool = False,
        **constexprs: Any,
    ) -> str:
        """The kernel's tile IR as text (verified; no Triton involved).

        ``debug_info=True`` prints the source locations too.
        """
        _check_bool(debug_info, "debug_info")
        module = self.build_module(num_warps=num_warps, target=target, **constexprs)
        return module.operation.get_asm(enable_debug_info=debug_info)

    def compile(
        self,
        target: str = "gfx1250",
        num_warps: int | None = None,
        *,
        fuse: bool = True,
        derive_hints: bool = False,
        pipeline: str | None = None,
        **constexprs: Any,
    ) -> Any:
        """Build, verify, run the tile pipeline and hand off to Triton.

        ``target`` is any target of the lowering: ``gfx1250``, ``gfx950``,
        ``gfx942`` or ``cuda:90`` (PTX and a cubin). Returns the lowering's
        ``CompiledKernel``. ``fuse`` and ``derive_hints`` (bools) are passed to
        the lowering (fuse hinted copies; derive hints for unhinted copies);
        ``pipeline`` (pass-pipeline text) overrides its tile-level passes. A
        pass or Triton failure raises :class:`CompilationError` at the kernel
        line the failing op came from (at this call when the diagnostic has no
        position).
        """
        _check_bool(fuse, "fuse")
        _check_bool(derive_hints, "derive_hints")
        if pipeline is not None and not isinstance(pipeline, str):
            raise fail(f"compile() pipeline must be pass-pipeline text, got {pipeline!r}")
        module = self.build_module(num_warps=num_warps, target=target, **constexprs)
        from gemm_opt.lowering.compile import TileCompileError, compile_tile_module

        try:
            return compile_tile_module(
                module, target, fuse=fuse, derive_hints=derive_hints, pipeline=pipeline
            )
        except TileCompileError as e:
            raise _lowering_error(e, module) from e


def _check_bool(value: Any, name: str) -> None:
    if not isinstance(value, bool):
        raise fail(f"{name} must be True or False, got {value!r}")


def _source_files(module: ir.Module) -> dict[tuple[int, int], set[str]]:
    """(line, col) -> the files of the op locations at that position."""
    found: dict[tuple[int, int], set[str]] = {}

    def walk(op: Any) -> None:
        filename, line, col = file_line_col(op.location)
        if line:
            found.setdefault((line, col), set()).add(filename)
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    walk(child.operation)

    walk(module.operation)
    return found


def _lowering_error(err: Any, module: ir.Module) -> CompilationError:
    """The lowering's positioned error (line and col only) in the user's file."""
    stage = f"{err.stage}: " if getattr(err, "stage", "") else ""
    details = [d for d in str(getattr(err, "details", "")).splitlines() if d != err.message]
    if not err.line:
        pos = user_pos()
        return CompilationError(
            f"{stage}{err.message}", pos.filename, pos.line, pos.col, notes=details
        )
    files = _source_files(module).get((err.line, err.col), set())
    filename = next(iter(files)) if len(files) == 1 else None
    if filename is None:  # ambiguous or unknown: the kernel's own file
        filename = file_line_col(module.operation.location)[0] or None
    return CompilationError(f"{stage}{err.message}", filename, err.line, err.col, notes=details)


def kernel(fn: Callable[..., Any]) -> Kernel:
    """Make ``fn`` a traced kernel (see :mod:`gemm_opt.language`)."""
    if isinstance(fn, Kernel):
        return fn
    if not inspect.isfunction(fn):
        raise fail(f"@tl.kernel decorates a Python function, got {fn!r}")
    return Kernel(fn)


__all__ = ["Kernel", "kernel"]
