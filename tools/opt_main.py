"""The reusable mlir-opt style driver behind ``gemm-opt``.

``tools/opt.py`` decides what the tool contains (passes, pipelines, emitters);
this module decides how an opt tool behaves: parse, verify, run a pipeline,
print, and report every problem as ``file:line:col: error: ...`` with exit
status 1 (2 for command-line misuse), never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NoReturn, TextIO

from gemm_opt.core.contract import TARGET
from gemm_opt.core.diagnostics import (
    Chunk,
    Diagnostic,
    check_expectations,
    collect,
    parse_expectations,
    split_input,
)
from gemm_opt.core.pipeline import PipelineError, Registry, build_pass_manager


@dataclass
class Emitter:
    """Turns a module that went through ``pipeline(target)`` into an artifact."""

    pipeline: Callable[[str], str]
    """Target -> pipeline text run before emitting."""
    emit: Callable[[object, str, str, str], str | bytes]
    """(module, target, kind, filename) -> artifact; raises EmitError."""
    kinds: tuple[str, ...] = ()
    tile_pipeline: Callable[[str], str] | None = None
    """Target -> pipeline text run for ``--emit=tile`` (default: ``pipeline``)."""


class EmitError(Exception):
    """An emission failure already phrased for the user, with its position."""

    def __init__(self, message: str, line: int = 0, col: int = 0) -> None:
        super().__init__(message)
        self.line = line
        self.col = col


@dataclass
class OptTool:
    """What one opt tool offers."""

    name: str
    registry: Registry
    make_context: Callable[[bool], object]
    verify_module: Callable[[object], list[str]] = lambda op: []
    emitter: Emitter | None = None
    targets: tuple[str, ...] = ()
    description: str = ""
    extra_epilog: list[str] = field(default_factory=list)
    split_hand_off: Callable[[str], tuple[str, Callable[[object, str], str] | None]] | None = None
    """Pipeline -> (what the pass manager runs, what prints a trailing hand-off
    stage's result instead of the module; None without one)."""


class _ArgParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        sys.exit(2)


def _arg_parser(tool: OptTool) -> argparse.ArgumentParser:
    p = _ArgParser(prog=tool.name, description=tool.description)
    p.add_argument("input", nargs="?", default="-", help="input .mlir file, or - for stdin")
    p.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    p.add_argument(
        "--pass-pipeline",
        "-pass-pipeline",
        default="",
        metavar="PIPELINE",
        help="passes to run, e.g. 'builtin.module(tile-assign-tdm-warp-layout)'",
    )
    p.add_argument(
        "--split-input-file",
        "-split-input-file",
        action="store_true",
        help="process each '// -----' chunk as its own module",
    )
    p.add_argument(
        "--verify-diagnostics",
        "-verify-diagnostics",
        action="store_true",
        help="check emitted diagnostics against expected-* annotations in the input",
    )
    p.add_argument(
        "--allow-unregistered-dialect",
        "-allow-unregistered-dialect",
        action="store_true",
        help="accept ops of unregistered dialects",
    )
    p.add_argument(
        "--mlir-print-ir-after-all",
        action="store_true",
        help="print IR after each pass",
    )
    p.add_argument(
        "--mlir-print-ir-before-all",
        action="store_true",
        help="print IR before each pass",
    )
    p.add_argument("--mlir-print-op-generic", action="store_true", help="print ops in generic form")
    p.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations")
    p.add_argument("--list-passes", action="store_true", help="list passes and pipelines")
    if tool.emitter is not None:
        p.add_argument(
            "--target",
            choices=tool.targets,
            default=None,
            help="target GPU; overrides the module's tile.target",
        )
        p.add_argument(
            "--emit",
            choices=("tile", *tool.emitter.kinds),
            default=None,
            help="run the target's default pipeline and write this artifact",
        )
    return p


def list_passes(tool: OptTool, out: TextIO) -> None:
    """Print each pass and named pipeline with its summary and options."""
    out.write("Passes:\n")
    for name in sorted(tool.registry.passes):
        cls = tool.registry.passes[name]()
        out.write(f"  {name:<34} {cls.summary()}\n")
        for opt, f in cls.options().items():
            out.write(f"    {{{opt}={f.type}}}\n")
    if tool.registry.pipelines:
        out.write("Pipelines:\n")
        for name in sorted(tool.registry.pipelines):
            doc = tool.registry.pipeline_docs.get(name, "")
            out.write(f"  {name:<34} {doc}\n")


def main(tool: OptTool, argv: Sequence[str] | None = None) -> int:
    """Run the tool; return the exit status."""
    args = _arg_parser(tool).parse_args(argv)
    if args.list_passes:
        list_passes(tool, sys.stdout)
        return 0
    filename = "<stdin>" if args.input == "-" else args.input
    try:
        raw = sys.stdin.buffer.read() if args.input == "-" else open(args.input, "rb").read()
    except OSError as e:
        sys.stderr.write(
            f"{tool.name}: error: could not open input file '{filename}': {e.strerror}\n"
        )
        return 1
    text, problem = _decode(raw)
    if problem is not None:
        sys.stderr.write(problem.format(filename) + "\n")
        return 1

    emit_kind = getattr(args, "emit", None)
    outputs: list[str | bytes] = []
    ok = True
    for chunk in split_input(text, args.split_input_file):
        result, chunk_ok = _process(tool, args, chunk, filename, emit_kind)
        ok &= chunk_ok
        if result is not None:
            outputs.append(result)
    return _write_outputs(tool, args.output, outputs, args.split_input_file) if ok else 1


def _decode(raw: bytes) -> tuple[str, Diagnostic | None]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return "", _at(raw, e.start, f"input is not UTF-8 text (byte 0x{raw[e.start]:02x})")
    nul = raw.find(b"\0")
    if nul >= 0:
        return "", _at(raw, nul, "input contains a NUL byte; expected MLIR text")
    if not text.strip():
        return "", Diagnostic("error", 1, 1, "input is empty; expected an MLIR module")
    return text, None


def _at(raw: bytes, offset: int, message: str) -> Diagnostic:
    line = raw.count(b"\n", 0, offset) + 1
    col = offset - (raw.rfind(b"\n", 0, offset) + 1) + 1
    return Diagnostic("error", line, col, message)


def _process(
    tool: OptTool,
    args: argparse.Namespace,
    chunk: Chunk,
    filename: str,
    emit_kind: str | None,
) -> tuple[str | bytes | None, bool]:
    """Parse, verify, transform and print one chunk; report its diagnostics."""
    ctx = tool.make_context(args.allow_unregistered_dialect)
    result: str | bytes | None = None
    with ctx, collect(ctx) as diags:
        result = _run_chunk(tool, args, chunk, filename, emit_kind, ctx, diags)
    if args.verify_diagnostics:
        failures = check_expectations(diags, parse_expectations(chunk.text), filename)
        for f in failures:
            sys.stderr.write(f + "\n")
        return (result if result is not None else ""), not failures
    for d in diags:
        sys.stderr.write(d.format(filename) + "\n")
    failed = result is None or any(d.severity == "error" for d in diags)
    return result, not failed


def _run_chunk(tool, args, chunk, filename, emit_kind, ctx, diags) -> str | bytes | None:
    from gemm_opt.core.ext_compat import MLIRError, ir

    try:
        module = ir.Module.parse(chunk.text)
    except MLIRError:
        return None
    except Exception as e:  # a dialect bug must still read as a diagnostic
        diags.append(Diagnostic("error", 1, 1, f"internal error while parsing: {e}"))
        return None
    for problem in tool.verify_module(module.operation):
        module.operation.location.emit_error(problem)
    if any(d.severity == "error" for d in diags):
        return None
    pipeline = args.pass_pipeline
    target = getattr(args, "target", None)
    if (emit_kind and emit_kind != "tile") or (emit_kind == "tile" and target):
        assert tool.emitter is not None
        target = target or _module_target(module)
        if target is None:
            module.operation.location.emit_error(
                "--emit needs a target: pass --target or set tile.target on the module"
            )
            return None
        make = tool.emitter.pipeline
        if emit_kind == "tile" and tool.emitter.tile_pipeline is not None:
            make = tool.emitter.tile_pipeline
        default = make(target)
        pipeline = ",".join(p for p in (pipeline, default) if p)
    finish = None
    if pipeline and tool.split_hand_off is not None:
        try:
            pipeline, finish = tool.split_hand_off(pipeline)
        except PipelineError as e:
            sys.stderr.write(f"<pass-pipeline>:1:{e.col}: error: {e}\n")
            raise SystemExit(2) from None
    if pipeline:
        try:
            pm = build_pass_manager(pipeline, tool.registry)
        except PipelineError as e:
            sys.stderr.write(f"<pass-pipeline>:1:{e.col}: error: {e}\n")
            raise SystemExit(2) from None
        if args.mlir_print_ir_after_all or args.mlir_print_ir_before_all:
            pm.enable_ir_printing(
                print_before_all=args.mlir_print_ir_before_all,
                print_after_all=args.mlir_print_ir_after_all,
            )
        try:
            pm.run(module.operation)
        except MLIRError:
            return None
        except Exception as e:
            diags.append(Diagnostic("error", 1, 1, f"internal error in pipeline: {e}"))
            return None
    if emit_kind and emit_kind != "tile":
        assert tool.emitter is not None
        try:
            return tool.emitter.emit(module, target, emit_kind, filename)
        except EmitError as e:
            diags.append(Diagnostic("error", e.line, e.col, str(e)))
            return None
    if finish is not None:
        try:
            return finish(module, filename)
        except EmitError as e:
            diags.append(Diagnostic("error", e.line, e.col, str(e)))
            return None
    return module.operation.get_asm(
        print_generic_op_form=args.mlir_print_op_generic,
        enable_debug_info=args.mlir_print_debuginfo,
    )


def _module_target(module: object) -> str | None:
    from gemm_opt.core.ext_compat import ir

    attrs = module.operation.attributes  # type: ignore[attr-defined]
    return ir.StringAttr(attrs[TARGET]).value if TARGET in attrs else None


def _write_outputs(tool: OptTool, output: str, outputs: list[str | bytes], split: bool) -> int:
    if any(isinstance(o, bytes) for o in outputs):
        if output == "-":
            sys.stderr.write(f"{tool.name}: error: binary output needs -o FILE\n")
            return 1
        data = b"".join(o if isinstance(o, bytes) else o.encode() for o in outputs)
        return _write(tool, output, data)
    sep = "// -----\n" if split else ""
    text = sep.join(o if str(o).endswith("\n") else f"{o}\n" for o in outputs)  # type: ignore[str-bytes-safe]
    if output == "-":
        sys.stdout.write(text)
        return 0
    return _write(tool, output, text.encode())


def _write(tool: OptTool, path: str, data: bytes) -> int:
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        sys.stderr.write(f"{tool.name}: error: could not write '{path}': {e.strerror}\n")
        return 1
    return 0


__all__ = ["EmitError", "Emitter", "OptTool", "list_passes", "main"]
