"""The reusable mlir-opt style driver behind ``gemm-opt``.

``tools/opt.py`` decides what the tool contains (passes, pipelines, emitters);
this module decides how an opt tool behaves: parse, verify, run a pipeline,
print, and report every problem as ``file:line:col: error: ...`` with exit
status 1 (2 for command-line misuse, detected before any input is read),
never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import NoReturn, TextIO

from gemm_opt.core.diagnostics import (
    Chunk,
    Diagnostic,
    check_expectations,
    collect,
    parse_expectations,
    position_of,
    split_input,
)
from gemm_opt.core.pipeline import (
    Option,
    PipelineError,
    Registry,
    Step,
    build_pass_manager,
    check_pipeline,
    find_pass,
    pass_names,
    pass_options,
    resolve,
)


@dataclass
class Emitter:
    """How a tool takes a module to an artifact for a target.

    ``default(target, convert)`` is the pipeline (list of elements) run when
    the user gives none; ``complete(target, ran, convert)`` what to append to
    a user pipeline that ran the passes ``ran``. ``convert`` is False for
    ``--emit=tile`` (stop at the tile IR). ``final_pass`` is the pass whose
    output ``emit`` turns into the artifact: a user pipeline that runs it is
    complete, and its ``target`` option names the target.
    """

    emit: Callable[[object, str, str, str], str | bytes]
    """(module, target, kind, filename) -> artifact; raises EmitError."""
    default: Callable[[str, bool], list[str]]
    complete: Callable[[str, Collection[str], bool], list[str]]
    kinds: tuple[str, ...] = ()
    binary_kinds: frozenset[str] = frozenset()
    final_pass: str = ""
    kinds_for: Callable[[str], Collection[str]] | None = None
    """Target -> the kinds it has (default: all)."""

    def lacks(self, target: str, kind: str) -> str | None:
        """Why ``target`` has no ``kind`` artifact, or None if it has one."""
        if kind == "tile" or self.kinds_for is None or kind in self.kinds_for(target):
            return None
        have = ", ".join(k for k in self.kinds if k in self.kinds_for(target))
        return f"--emit={kind} does not exist for target {target} (it has: tile, {have})"


#: Runs a pipeline's trailing hand-off: (module, filename, kind) -> artifact;
#: raises EmitError.
HandOffRunner = Callable[[object, str, str], str | bytes]


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
    verify_module: Callable[[object], Sequence[tuple[object, str]]] = lambda op: []
    """Module op -> its problems as (location, message); a location without a
    position (a module-wide rule) is reported where the module is."""
    emitter: Emitter | None = None
    targets: tuple[str, ...] = ()
    target_attr: str = ""
    """Module attribute naming the target (read when --target is absent)."""
    split_hand_off: Callable[[list[Step]], tuple[list[Step], HandOffRunner | None]] | None = None
    """Resolved steps -> (what the pass manager runs, what runs a trailing
    hand-off stage, whose result replaces the printed module; None without one).
    Raises PipelineError when the hand-off is not last."""
    description: str = ""


class _ArgParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        _misuse(self.prog, f"{message} (see --help)")


def _misuse(prog: str, message: str) -> NoReturn:
    sys.stderr.write(f"{prog}: error: {message}\n")
    sys.exit(EXIT_MISUSE)


EXIT_OK, EXIT_ERRORS, EXIT_MISUSE = 0, 1, 2


def _epilog(tool: OptTool) -> str:
    lines = [
        "exit status:",
        "  0  success",
        "  1  errors in the input or in a pass (reported as file:line:col: error: ...)",
        "  2  misuse: bad flags, flag combinations or pipeline (nothing is read or run)",
    ]
    if tool.emitter is not None:
        binary = ", ".join(sorted(tool.emitter.binary_kinds))
        lines += [
            "",
            "--emit:",
            "  Without --pass-pipeline, --emit runs the target's default pipeline.",
            "  With it, the user's pipeline runs first, then the passes the target",
            "  requires that it did not run, then the conversion (optional passes such",
            "  as tile-fuse-tdm-copies run only if the pipeline names them).",
            f"  The target is --target, else the module's {tool.target_attr}.",
            f"  Binary kinds ({binary}) need -o FILE and one module: they are rejected",
            "  with --split-input-file (exit 2).",
        ]
    return "\n".join(lines)


def _arg_parser(tool: OptTool) -> argparse.ArgumentParser:
    p = _ArgParser(
        prog=tool.name,
        description=tool.description,
        epilog=_epilog(tool),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", nargs="?", default="-", help="input .mlir file, or - for stdin")
    p.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    p.add_argument(
        "--pass-pipeline",
        "-pass-pipeline",
        default="",
        metavar="PIPELINE",
        help="passes to run, e.g. 'builtin.module(tile-assign-tdm-warp-layout)'; "
        "nested 'func.func(...)' pass managers are accepted",
    )
    p.add_argument(
        "--split-input-file",
        "-split-input-file",
        action="store_true",
        help="process each '// -----' chunk as its own module (text output only)",
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
    p.add_argument(
        "--list-passes",
        action="store_true",
        help="list passes and pipelines with their options",
    )
    if tool.emitter is not None:
        p.add_argument(
            "--target",
            choices=tool.targets,
            default=None,
            help=f"target GPU for --emit; overrides the module's {tool.target_attr}",
        )
        p.add_argument(
            "--emit",
            choices=("tile", *tool.emitter.kinds),
            default=None,
            help="write this artifact (tile: the tile IR after the target's tile passes)",
        )
    return p


def list_passes(tool: OptTool, out: TextIO) -> None:
    """Print each pass and named pipeline with its summary and options
    (``name=<type>``, description, default)."""
    out.write("Passes:\n")
    for name in sorted(tool.registry.passes):
        cls = tool.registry.passes[name]()
        out.write(f"  {name:<34} {cls.summary()}\n")
        _write_options(out, pass_options(cls))
    if tool.registry.pipelines:
        out.write("Pipelines:\n")
        for name in sorted(tool.registry.pipelines):
            named = tool.registry.pipelines[name]
            out.write(f"  {name:<34} {named.summary}\n")
            _write_options(out, named.options)


def _write_options(out: TextIO, options: Sequence[Option]) -> None:
    for o in options:
        spec = f"{o.name}=<{o.type}>"
        default = f'"{o.default}"' if o.default == "" else o.default
        doc = f"{o.doc} " if o.doc else ""
        out.write(f"      {spec:<32} {doc}(default: {default})\n")


@dataclass
class _Plan:
    """What the command line asks for, checked before any input is read."""

    pipeline: str
    emit: str | None
    target: str | None


def _plan(tool: OptTool, args: argparse.Namespace) -> _Plan:
    """Check flag combinations and the pipeline; exit 2 on misuse."""
    emit = getattr(args, "emit", None)
    target = getattr(args, "target", None)
    if target is not None and emit is None:
        _misuse(tool.name, "--target applies to --emit only")
    binary = tool.emitter is not None and emit in tool.emitter.binary_kinds
    if binary and args.output == "-":
        _misuse(tool.name, f"--emit={emit} writes a binary file: pass -o FILE")
    if binary and args.split_input_file:
        _misuse(
            tool.name,
            f"--emit={emit} writes one binary object per file; it cannot be combined "
            "with --split-input-file",
        )
    lacks = tool.emitter.lacks(target, emit) if tool.emitter and target and emit else None
    if lacks is not None:
        _misuse(tool.name, lacks)
    plan = _Plan(args.pass_pipeline, emit, target)
    if not plan.pipeline:
        return plan
    try:
        steps = resolve(plan.pipeline, tool.registry, {"target": target} if target else None)
        check_pipeline(steps, tool.registry)
    except PipelineError as e:
        sys.stderr.write(f"<pass-pipeline>:1:{e.col}: error: {e}\n")
        sys.exit(EXIT_MISUSE)
    if tool.emitter is None or emit is None or not tool.emitter.final_pass:
        return plan
    final = tool.emitter.final_pass
    converts = _final_targets(tool, steps)
    if converts and emit == "tile":
        _misuse(tool.name, f"--emit=tile prints tile IR, but the pipeline runs '{final}'")
    if len(converts - {""}) > 1:
        _misuse(tool.name, f"the pipeline runs '{final}' for several targets")
    other = converts - {"", target}
    if target is not None and other:
        _misuse(tool.name, f"--target={target} contradicts '{final}{{target={other.pop()}}}'")
    return plan


def _final_targets(tool: OptTool, steps: Sequence[Step]) -> set[str]:
    """The ``target`` option of each run of the emitter's final pass ("" = unset)."""
    assert tool.emitter is not None
    found = find_pass(steps, tool.emitter.final_pass)
    return {str(getattr(p, "target", "")) for p in found}


def main(tool: OptTool, argv: Sequence[str] | None = None) -> int:
    """Run the tool; return the exit status."""
    args = _arg_parser(tool).parse_args(argv)
    if args.list_passes:
        list_passes(tool, sys.stdout)
        return EXIT_OK
    plan = _plan(tool, args)
    filename = "<stdin>" if args.input == "-" else args.input
    try:
        raw = sys.stdin.buffer.read() if args.input == "-" else open(args.input, "rb").read()
    except OSError as e:
        sys.stderr.write(
            f"{tool.name}: error: could not open input file '{filename}': {e.strerror}\n"
        )
        return EXIT_ERRORS
    text, problem = _decode(raw)
    if problem is not None:
        sys.stderr.write(problem.format(filename) + "\n")
        return EXIT_ERRORS

    outputs: list[str | bytes] = []
    ok = True
    for chunk in split_input(text, args.split_input_file):
        result, chunk_ok = _process(tool, args, plan, chunk, filename)
        ok &= chunk_ok
        if result is not None:
            outputs.append(result)
    return _write_outputs(tool, args.output, outputs, args.split_input_file) if ok else EXIT_ERRORS


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
    plan: _Plan,
    chunk: Chunk,
    filename: str,
) -> tuple[str | bytes | None, bool]:
    """Parse, verify, transform and print one chunk; report its diagnostics."""
    ctx = tool.make_context(args.allow_unregistered_dialect)
    result: str | bytes | None = None
    with ctx, collect(ctx) as diags:
        result = _run_chunk(tool, args, plan, chunk, filename, diags)
    if args.verify_diagnostics:
        failures = check_expectations(diags, parse_expectations(chunk.text), filename)
        for f in failures:
            sys.stderr.write(f + "\n")
        return (result if result is not None else ""), not failures
    for d in diags:
        sys.stderr.write(d.format(filename) + "\n")
    failed = result is None or any(d.severity == "error" for d in diags)
    return result, not failed


def _run_chunk(
    tool: OptTool,
    args: argparse.Namespace,
    plan: _Plan,
    chunk: Chunk,
    filename: str,
    diags: list[Diagnostic],
) -> str | bytes | None:
    from gemm_opt.core.ext_compat import MLIRError, ir

    try:
        module = ir.Module.parse(chunk.text)
    except MLIRError:
        return None
    except Exception as e:  # a dialect bug must still read as a diagnostic
        diags.append(Diagnostic("error", 1, 1, f"internal error while parsing: {e}"))
        return None
    for location, message in tool.verify_module(module.operation):
        if position_of(location) == (0, 0):
            location = _module_location(module, filename)
        location.emit_error(message)  # type: ignore[attr-defined]
    if any(d.severity == "error" for d in diags):
        return None
    target = plan.target or _module_target(tool, module)
    defaults = {"target": target} if target else {}
    try:
        steps = resolve(plan.pipeline, tool.registry, defaults) if plan.pipeline else []
        if plan.emit is not None and tool.emitter is not None:
            # A conversion in the user's pipeline decides the target (its option
            # overrides the module's attribute; --target already agreed with it).
            target = next(iter(_final_targets(tool, steps) - {""}), target)
            if target is None:
                _module_location(module, filename).emit_error(
                    f"--emit needs a target: pass --target or set {tool.target_attr} on the module"
                )
                return None
            lacks = tool.emitter.lacks(target, plan.emit)
            if lacks is not None:
                _module_location(module, filename).emit_error(lacks)
                return None
            steps += _completion(tool, plan, steps, target, defaults)
        finish: HandOffRunner | None = None
        if tool.split_hand_off is not None:
            steps, finish = tool.split_hand_off(steps)
        pm = build_pass_manager(
            steps,
            tool.registry,
            print_ir_before_all=args.mlir_print_ir_before_all,
            print_ir_after_all=args.mlir_print_ir_after_all,
        )
    except PipelineError as e:  # checked up front; only a target-specific value can fail
        _module_location(module, filename).emit_error(f"pipeline: {e}")
        return None
    if steps:
        try:
            pm.run(module.operation)
        except MLIRError:
            return None
        except Exception as e:
            diags.append(Diagnostic("error", 1, 1, f"internal error in pipeline: {e}"))
            return None
    emit = plan.emit if plan.emit != "tile" else None
    if emit is not None or finish is not None:
        try:
            if finish is not None:
                return finish(module, filename, emit or "ttgir")
            assert tool.emitter is not None and target is not None and emit is not None
            return tool.emitter.emit(module, target, emit, filename)
        except EmitError as e:
            diags.append(Diagnostic("error", e.line, e.col, str(e)))
            return None
    return module.operation.get_asm(
        print_generic_op_form=args.mlir_print_op_generic,
        enable_debug_info=args.mlir_print_debuginfo,
    )


def _module_location(module: object, filename: str) -> object:
    """Where module-level errors point: the module, or for a file without an
    explicit ``module`` (whose implicit one names no position) its first op,
    or the file's first character when it holds no op."""
    from gemm_opt.core.diagnostics import position_of, positioned_location
    from gemm_opt.core.ext_compat import ir

    loc = positioned_location(module.operation)  # type: ignore[attr-defined]
    return loc if position_of(loc) != (0, 0) else ir.Location.file(filename, 1, 1)


def _completion(
    tool: OptTool, plan: _Plan, steps: list[Step], target: str, defaults: dict[str, str]
) -> list[Step]:
    """What --emit appends: the default pipeline, or what the user's lacks."""
    assert tool.emitter is not None
    convert = plan.emit != "tile"
    if not plan.pipeline:
        extra = tool.emitter.default(target, convert)
    else:
        extra = tool.emitter.complete(target, set(pass_names(steps)), convert)
    return resolve(",".join(extra), tool.registry, defaults)


def _module_target(tool: OptTool, module: object) -> str | None:
    from gemm_opt.core.ext_compat import ir

    attrs = module.operation.attributes  # type: ignore[attr-defined]
    if not tool.target_attr or tool.target_attr not in attrs:
        return None
    return ir.StringAttr(attrs[tool.target_attr]).value


def _write_outputs(tool: OptTool, output: str, outputs: list[str | bytes], split: bool) -> int:
    if any(isinstance(o, bytes) for o in outputs):
        # One object (binary kinds reject --split-input-file and stdout up front).
        assert len(outputs) == 1 and output != "-"
        data = outputs[0]
        return _write(tool, output, data if isinstance(data, bytes) else data.encode())
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


__all__ = [
    "EXIT_ERRORS",
    "EXIT_MISUSE",
    "EXIT_OK",
    "EmitError",
    "Emitter",
    "HandOffRunner",
    "OptTool",
    "list_passes",
    "main",
]
