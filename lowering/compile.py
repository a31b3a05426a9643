"""Compile a tile module down to a GPU binary: the one tile-to-binary path.

``gemm-opt --emit`` and the authoring API's ``kernel.compile(...)`` both end
here. :func:`compile_tile_module` sends the tile text (an ``ir.Module`` is
printed in generic form with locations, which round-trips exactly) to a
worker process (:func:`gemm_opt.lowering.triton_bridge.run_in_worker`),
which does all of it, so the text is parsed once and no C++ of MLIR's or
Triton's runs in the caller:

1. parse the tile module and check its module attributes;
2. run the tile-level passes of :func:`gemm_opt.lowering.pipelines.tile_passes`
   (or the caller's ``pipeline``) and keep that IR as ``asm["tile"]``;
3. hand it to Triton: build the Triton module with Triton's builder
   (:func:`gemm_opt.lowering.convert_tile_to_triton_gpu.convert`), verify it
   and print it (Triton's pretty TTGIR: ``asm["ttgir"]``), then compile it
   with Triton's backend.

A tool that runs passes itself calls :func:`hand_off` with its module for
step 3 alone.

The hand-off is the last stage of any pipeline: its result lives in
Triton's context, not ours. :func:`split_hand_off` takes a trailing
``convert-tile-to-triton-gpu`` (also inside a named pipeline such as
``tile-to-ttgir``) off a pipeline, so a tool runs the rest as passes and
then calls :func:`hand_off`.

Every failure is a :class:`TileCompileError` positioned in the *tile* source:
our own diagnostics carry the op's location; every Triton op carries the
location of the tile op it was built for, so Triton's diagnostics name the
tile line; the worker sends our own diagnostics back as data, positions
unchanged; and if Triton aborts, the worker's last progress report names the
tile op it was building (and the next compile gets a fresh worker).
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gemm_opt.core.targets import TARGETS
from gemm_opt.lowering.isa_analysis import IsaMetrics, isa_metrics

if TYPE_CHECKING:
    from gemm_opt.core.pipeline import Step

__all__ = [
    "CompiledKernel",
    "HandOff",
    "HandOffResult",
    "LoweredModule",
    "TileCompileError",
    "compile_tile_module",
    "hand_off",
    "import_compile_path",
    "lower_tile_module",
    "split_hand_off",
]

#: The pipeline name of the hand-off stage.
HAND_OFF = "convert-tile-to-triton-gpu"


@dataclass
class CompiledKernel:
    """A tile kernel compiled for one target.

    ``asm`` holds ``"tile"`` (the tile IR after the tile passes), ``"ttgir"``
    (Triton's TTGIR of the kernel, pretty form with locations), ``"llir"`` and
    ``"amdgcn"`` (``"ptx"`` instead on cuda:90); ``hsaco`` is the code object
    (the cubin on cuda:90). :attr:`metrics`, the ISA report, reads AMDGPU
    assembly: AMD targets only (``amd_metrics`` is None on others, and
    ``metrics`` says why instead of reporting zeros). ``stage_seconds`` splits
    ``compile_seconds`` into ``parse``, ``tile_passes``, ``convert`` (building,
    verifying and printing the Triton module) and ``triton``.
    """

    asm: dict[str, str]
    hsaco: bytes
    metadata: dict[str, Any]
    compile_seconds: float
    stage_seconds: dict[str, float] = field(default_factory=dict)
    target: str = ""
    pipeline: str = ""
    #: Triton's own split of ``stage_seconds["triton"]`` (see
    #: :attr:`gemm_opt.lowering.triton_bridge.CompiledArtifact.stages`).
    triton_stages: dict[str, float] = field(default_factory=dict)
    #: cuda:90: the TMA descriptors the host encodes and passes after the
    #: arguments, in order (:mod:`gemm_opt.lowering.host_tensormaps`).
    tensormaps: list[dict[str, Any]] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The kernel symbol."""
        return str(self.metadata.get("name", ""))

    @functools.cached_property
    def amd_metrics(self) -> IsaMetrics | None:
        """The ISA report of the AMDGPU assembly, made when first read (a
        compile does not pay for it); None on other targets."""
        amdgcn = self.asm.get("amdgcn")
        return isa_metrics(amdgcn, self.metadata) if amdgcn is not None else None

    @property
    def metrics(self) -> IsaMetrics:
        """The ISA report of an AMD target's kernel; a ValueError on another."""
        if self.amd_metrics is None:
            amd = ", ".join(n for n, t in TARGETS.items() if t.backend == "hip")
            raise ValueError(
                f"the ISA report reads AMDGPU assembly, and a {self.target} kernel has none "
                f"(AMD targets: {amd}); read asm['ptx'] or the metadata instead"
            )
        return self.amd_metrics


class TileCompileError(Exception):
    """Compilation failed; ``line``/``col`` point into the tile source (0: unknown).

    ``str(err)`` is ``line:col: error: message``; ``details`` keeps every
    diagnostic that was reported, in order.
    """

    def __init__(
        self, message: str, line: int = 0, col: int = 0, stage: str = "", details: str = ""
    ) -> None:
        where = f"{line}:{col}: " if line else ""
        super().__init__(f"{where}error: {message}")
        self.message = message
        self.line = line
        self.col = col
        self.stage = stage
        self.details = details or message


@dataclass
class LoweredModule:
    """What :func:`lower_tile_module` returns: the tile IR after the tile
    passes and Triton's TTGIR text (the Triton module itself lives and dies
    in the child process that built it)."""

    tile: str
    ttgir: str
    target: str
    pipeline: str
    seconds: dict[str, float]
    artifact: Any = None
    tensormaps: list[dict[str, Any]] = field(default_factory=list)


def import_compile_path() -> None:
    """Import into this process now the Python every compile runs (the
    dialects, every registered pass, the conversion and Triton) and build the
    tile dialect's IRDL module once.

    Compiles run in worker processes forked from this one, which inherit
    what it has imported and built; without this, a fresh worker does it
    during its first compile. A long-lived caller (a build service, a
    benchmark that times compiles apart from imports) calls it once at
    start-up; the tool does not, so that a parse or a single pass stays
    cheap. (Loading the dialect runs no user input and starts no threads.)
    """
    from gemm_opt import dialect
    from gemm_opt.lowering import REGISTRY
    from gemm_opt.lowering import triton_bridge as tb

    dialect.make_context()  # imports the op modules, fills the IRDL cache
    for load in REGISTRY.passes.values():
        load()
    tb.import_triton()


#: Compiles one MLIR context serves before a fresh one replaces it (a context
#: keeps every type and attribute it ever made).
CONTEXT_USES = 100
_contexts = threading.local()


def _context() -> Any:
    """This thread's MLIR context for compiles (dialects loaded), made once per
    :data:`CONTEXT_USES` compiles: making one costs more than parsing a kernel."""
    from gemm_opt import dialect

    held = getattr(_contexts, "held", None)
    if held is None or held[0] != os.getpid() or held[2] >= CONTEXT_USES:
        held = [os.getpid(), dialect.make_context(False), 0]
        _contexts.held = held
    held[2] += 1
    return held[1]


def _first_error(diags: list[Any], stage: str, fallback: str) -> TileCompileError:
    errors = [d for d in diags if d.severity == "error"]
    details = "\n".join(f"{d.line}:{d.col}: {d.severity}: {d.message}" for d in diags)
    if not errors:
        return TileCompileError(fallback, stage=stage, details=details or fallback)
    d = errors[0]
    return TileCompileError(d.message, d.line, d.col, stage, details)


def _run_pipeline(
    module: Any, text: str, target: str, stage: str, diags: list[Any]
) -> tuple[str, HandOff | None]:
    """Run ``text`` (named pipelines default to ``target``) up to a trailing
    hand-off, which is returned rather than run, after the text of the passes
    that ran (the compile reports those, then the hand-off once)."""
    from gemm_opt.core.ext_compat import MLIRError
    from gemm_opt.core.pipeline import PipelineError, build_pass_manager, resolve
    from gemm_opt.lowering import REGISTRY

    if not text:
        return "", None
    try:
        steps, handoff = split_hand_off(resolve(text, REGISTRY, {"target": target}))
        pm = build_pass_manager(steps, REGISTRY)
    except PipelineError as e:
        raise TileCompileError(f"bad pipeline '{text}': {e}", stage=stage) from None
    # Verified once, after the last pass, not after each: the op verifiers are
    # most of the passes' time, and a pass's output is checked by its own
    # tests (the tool verifies after each pass).
    # Equivalent mutant: verifying between passes too only costs time; every
    # registered pass leaves verified IR, and the module is verified after the
    # last pass either way, with the same diagnostics collected.
    pm.enable_verifier(False)
    try:
        pm.run(module.operation)
        module.operation.verify()
    except MLIRError:
        raise _first_error(diags, stage, f"pipeline '{text}' failed") from None
    return ",".join(step.text for step in steps), handoff


@dataclass(frozen=True)
class HandOff:
    """The options of a pipeline's trailing ``convert-tile-to-triton-gpu``."""

    target: str = ""
    lds_copies: str = "auto"
    mma: str = "auto"


@dataclass
class HandOffResult:
    """What :func:`hand_off` returns: Triton's TTGIR text (pretty form, with
    locations), the compiled artifact when asked for, and stage seconds."""

    ttgir: str
    artifact: Any = None
    seconds: dict[str, float] = field(default_factory=dict)
    #: The descriptors the host encodes, in parameter order (JSON-able, see
    #: :class:`gemm_opt.lowering.host_tensormaps.HostTensorMap`).
    tensormaps: list[dict[str, Any]] = field(default_factory=list)


def _tensormaps(
    hosted: dict[str, list[Any]], triton_md: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Our host descriptors (one kernel function: bundles hold one) with the
    block, swizzle and element type Triton reads from their types."""
    ours = [h for maps in hosted.values() for h in maps]
    if len(ours) != len(triton_md):
        raise RuntimeError(
            f"internal error: {len(ours)} host descriptors, Triton sees {len(triton_md)}"
        )
    # Equivalent mutant: strict=False; the lengths were found equal just above.
    return [{**h.to_json(), **md} for h, md in zip(ours, triton_md, strict=True)]


def split_hand_off(steps: Sequence[Step]) -> tuple[list[Step], HandOff | None]:
    """Split resolved pipeline ``steps`` into the passes to run and a trailing hand-off.

    Named pipelines are already expanded by :func:`gemm_opt.core.pipeline.resolve`
    (``tile-to-ttgir`` ends in the hand-off). Without a hand-off the steps come
    back unchanged.

    Raises:
        PipelineError: the hand-off is not last, or sits in a nested pipeline.
    """
    from gemm_opt.core.pipeline import PipelineError

    def nested_hand_off(items: Sequence[Step]) -> Step | None:
        for step in items:
            if step.nested is not None:
                inner = next((s for s in step.nested if s.name == HAND_OFF), None)
                found = inner or nested_hand_off(step.nested)
                if found is not None:
                    return found
        return None

    while len(steps) == 1 and steps[0].name == "builtin.module" and steps[0].nested is not None:
        steps = steps[0].nested  # the pass manager is anchored on the module already
    inner = nested_hand_off(steps)
    if inner is not None:
        raise PipelineError(
            f"'{HAND_OFF}' hands the whole module to Triton: it cannot run nested", inner.col
        )
    where = [i for i, step in enumerate(steps) if step.name == HAND_OFF]
    if not where:
        return list(steps), None
    first = steps[where[0]]
    if where[0] != len(steps) - 1:
        raise PipelineError(
            f"'{HAND_OFF}' hands the module to Triton, so it must end the pipeline", first.col
        )
    # The enum-typed options were checked when the pipeline was parsed.
    opts = first.instance
    assert opts is not None
    return list(steps[:-1]), HandOff(
        opts.target,  # type: ignore[attr-defined]
        opts.lds_copies,  # type: ignore[attr-defined]
        opts.mma,  # type: ignore[attr-defined]
    )


def _position(location: Any) -> tuple[int, int]:
    from gemm_opt.core.diagnostics import position_of

    return position_of(location)


def hand_off(
    module: Any,
    target: str | None = None,
    *,
    lds_copies: str = "auto",
    mma: str = "auto",
    filename: str = "-",
    compile: bool = False,
    options: dict[str, Any] | None = None,
) -> HandOffResult:
    """Hand a tile module (after the tile passes) to Triton, in a worker process.

    Builds the Triton module, verifies and prints it, and with ``compile``
    compiles it with Triton's backend (``options`` are Triton's backend
    options). ``filename`` names the tile source in Triton's locations where
    the module's own locations say ``-``. Nothing of Triton's runs in this
    process, so an abort in Triton's C++ is an error like any other.

    Raises:
        TileCompileError: at the tile op a diagnostic is about.
    """
    from gemm_opt.lowering import triton_bridge as tb

    op = module.operation if hasattr(module, "operation") else module
    # An idle worker parses the generic form with locations (it round-trips
    # exactly: diagnostics keep their tile positions) in a context of its own;
    # a worker forked for this hand-off works on the module it inherited.
    text = op.get_asm(print_generic_op_form=True, enable_debug_info=True)
    how = (target or "", lds_copies, mma, filename, compile, options)
    run = tb.run_in_worker(
        _hand_off_job, text, *how, first=lambda report: _hand_off_work(report, op, *how)
    )
    if run.ok and run.result == ("unparsable",):
        run = tb.run_isolated(lambda report: _hand_off_work(report, op, *how))
    if run.ok and run.result[0] == "ok":
        _, text, art, seconds, tensormaps = run.result
        return HandOffResult(text, art, seconds, tensormaps)
    if run.ok:
        _, line, col, message = run.result
        raise TileCompileError(message, line, col, "convert")
    raise _triton_failure(run, op)


def _hand_off_job(
    report: Any,
    module_text: str,
    target: str,
    lds_copies: str,
    mma: str,
    filename: str,
    compile: bool,
    options: dict[str, Any] | None,
) -> tuple:
    """:func:`hand_off`'s work in a worker: parse the tile module in a context
    of its own, then :func:`_hand_off_work`. A module that does not verify
    (a pass left it so; the lowering locates what is wrong) cannot be parsed:
    ``("unparsable",)`` sends it to a child forked with the module itself."""
    from gemm_opt.core.ext_compat import MLIRError, ir

    with _context():
        try:
            module = ir.Module.parse(module_text)
        except MLIRError:
            return ("unparsable",)
        return _hand_off_work(
            report, module.operation, target, lds_copies, mma, filename, compile, options
        )


def _hand_off_work(
    report: Any,
    op: Any,
    target: str,
    lds_copies: str,
    mma: str,
    filename: str,
    compile: bool,
    options: dict[str, Any] | None,
) -> tuple:
    """Build, verify and print the Triton module of ``op``, and compile it when
    asked. Reports each tile op as it is built and each stage as it starts."""
    from gemm_opt.lowering import triton_bridge as tb
    from gemm_opt.lowering.convert_tile_to_triton_gpu import (
        LoweringFailure,
        check_hand_off,
        convert,
    )

    seconds: dict[str, float] = {}
    start = time.perf_counter()
    try:
        resolved = check_hand_off(op, target, lds_copies, mma)[0].name
        triton = tb.triton_ir(resolved)

        def on_op(tile_op: Any) -> None:
            report(("op", *_position(tile_op.location), tile_op.name))

        built, hosted = convert(op, triton, target, lds_copies, filename, on_op, mma=mma)
        report(("stage", "verify"))
        text = tb.verified_text(built, resolved, triton.context)
        tensormaps = (
            _tensormaps(hosted, tb.tensordesc_metadata(built)) if any(hosted.values()) else []
        )
    except LoweringFailure as e:
        return ("failed", *_position(e.op.location), str(e))
    seconds["convert"] = time.perf_counter() - start
    if not compile:
        return ("ok", text, None, seconds, tensormaps)
    report(("stage", "compile"))
    start = time.perf_counter()
    art = tb.compile_module(text, resolved, options)
    seconds["triton"] = time.perf_counter() - start
    return ("ok", text, art, seconds, tensormaps)


#: Exceptions of the dialect and the rule modules: a child that raised one met
#: a rule of ours while reading the tile op, not a failure of Triton's.
_OUR_ERRORS = frozenset({"VerifyError", "WarpHintError", "LayoutError"})


def _triton_failure(run: Any, op: Any = None) -> TileCompileError:
    """The error for work in a worker that failed without a diagnostic of
    ours: located by Triton's own diagnostics, else at the tile op the worker
    was building when it failed (past the building, or before it, the kernel
    function, else the module: as the worker reported it, or ``op``)."""
    from gemm_opt.lowering.triton_bridge import parse_diagnostics

    diags = parse_diagnostics(run.stderr)
    building = [p for p in run.progress if p[0] == "op"]
    stages = [p[1] for p in run.progress if p[0] == "stage"]
    stage = stages[-1] if stages else "convert"
    details = [str(d) for d in diags] + run.assertions()
    if run.exception:
        details.append(run.exception)
    located = [d for d in diags if d.line and d.severity == "error"]
    if located:
        d = located[0]
        return TileCompileError(
            f"Triton rejected the lowered kernel: {d.message}"
            if stage in _TRITON_STAGES
            else d.message,
            d.line,
            d.col,
            "triton" if stage == "compile" else stage,
            "\n".join(details),
        )
    how = run.died or "failed"
    reason = run.exception or "; ".join(run.assertions()) or "no diagnostic"
    if stage not in _TRITON_STAGES:  # our own parse or passes, before any op was built
        message = f"the compile {how} while {_DOING[stage]}: {reason}"
        return TileCompileError(message, stage=stage, details="\n".join(details))
    if stage == "convert" and building:
        _, line, col, name = building[-1]
        ours = reason.split(": ", 1)
        if not run.died and len(ours) == 2 and ours[0] in _OUR_ERRORS:
            # Our own dialect rule, met while reading the op: not Triton's failure.
            return TileCompileError(
                f"'{name}': {ours[1]}", line, col, "convert", "\n".join(details)
            )
        message = f"Triton {how} while building the TritonGPU IR of '{name}': {reason}"
        return TileCompileError(message, line, col, "convert", "\n".join(details))
    # Verifying or compiling: the module has no op to blame, so the function
    # (the last one built) is named.
    funcs = [p for p in building if p[3] == "func.func"]
    module = [p[1:] for p in run.progress if p[0] == "module"]
    if funcs:
        line, col = funcs[-1][1:3]
    elif module:
        line, col = module[-1]
    else:
        line, col = _position(op.location) if op is not None else (0, 0)
    message = f"Triton {how} while {_DOING[stage]} the lowered kernel: {reason}"
    return TileCompileError(message, line, col, stage, "\n".join(details))


#: The stages of a compile in a worker, as its reports name them, and what
#: each is doing (for a failure's message).
_DOING = {
    "parse": "parsing the tile module",
    "tile_passes": "running the tile passes",
    "convert": "building",
    "verify": "verifying",
    "compile": "compiling",
}
#: The stages where Triton's C++ runs.
_TRITON_STAGES = frozenset({"convert", "verify", "compile"})


def lower_tile_module(
    module_or_text: Any,
    target: str | None = None,
    *,
    fuse: bool = True,
    derive_hints: bool = False,
    pipeline: str | None = None,
    filename: str = "-",
    mma: str = "auto",
) -> LoweredModule:
    """Steps 1-3 of :func:`compile_tile_module` without compiling: the tile IR
    after the tile passes and Triton's TTGIR text. ``filename`` names the
    source in Triton's locations where the module's own say ``-``."""
    return _lower(module_or_text, target, fuse, derive_hints, pipeline, None, filename, mma)


def _lower(
    module_or_text, target, fuse, derive_hints, pipeline, options, filename="-", mma="auto"
) -> LoweredModule:
    """Send the tile text to a worker, which parses it, runs the tile passes
    and hands the module to Triton there: the text is parsed once, and
    nothing of MLIR's or Triton's C++ runs in this process."""
    from gemm_opt.lowering import triton_bridge as tb

    if isinstance(module_or_text, (str, bytes)):
        text = module_or_text.decode() if isinstance(module_or_text, bytes) else module_or_text
    else:
        # A copy: the caller's module stays as it is. The generic form with
        # locations round-trips exactly (diagnostics keep their positions).
        op = module_or_text.operation if hasattr(module_or_text, "operation") else module_or_text
        text = op.get_asm(print_generic_op_form=True, enable_debug_info=True)
    how = (target, fuse, derive_hints, pipeline, options, filename, mma)
    run = tb.run_in_worker(_lower_job, text, *how)
    if run.ok and isinstance(run.result, _Rejected):
        raise run.result.error()
    if run.ok:
        return run.result
    raise _triton_failure(run)


@dataclass(frozen=True)
class _Rejected:
    """A :class:`TileCompileError` raised in a worker, as data (it pickles)."""

    message: str
    line: int
    col: int
    stage: str
    details: str

    def error(self) -> TileCompileError:
        return TileCompileError(self.message, self.line, self.col, self.stage, self.details)


def _lower_job(
    report: Any,
    text: str,
    target: str | None,
    fuse: bool,
    derive_hints: bool,
    pipeline: str | None,
    options: dict[str, Any] | None,
    filename: str,
    mma: str,
) -> LoweredModule | _Rejected:
    """:func:`_lower`'s work in a worker: a located error comes back as data."""
    try:
        return _lower_here(
            report, text, target, fuse, derive_hints, pipeline, options, filename, mma
        )
    except TileCompileError as e:
        return _Rejected(e.message, e.line, e.col, e.stage, e.details)


def _lower_here(
    report: Any,
    text: str,
    target: str | None,
    fuse: bool,
    derive_hints: bool,
    pipeline: str | None,
    options: dict[str, Any] | None,
    filename: str,
    mma: str,
) -> LoweredModule:
    """Parse ``text`` in this process's context, run the tile passes and hand
    the module to Triton; reports each stage as it starts (an abort is
    located by the last report)."""
    from gemm_opt.core.diagnostics import collect, position_of
    from gemm_opt.core.ext_compat import MLIRError, ir
    from gemm_opt.dialect.tile import TARGET, module_problems
    from gemm_opt.lowering import pipelines

    seconds: dict[str, float] = {}
    start = time.perf_counter()
    report(("stage", "parse"))
    ctx = _context()
    with ctx, collect(ctx) as diags:
        try:
            module = ir.Module.parse(text)
        except MLIRError:
            raise _first_error(diags, "parse", "could not parse the tile module") from None
        problems = module_problems(module.operation)
        if problems:
            line, col = position_of(problems[0].location)
            raise TileCompileError(problems[0].message, line, col, stage="parse")
        # Where a failure with no op to blame is placed (see _triton_failure).
        report(("module", *position_of(module.operation.location)))
        attrs = module.operation.attributes
        if target is None and TARGET in attrs:
            target = ir.StringAttr(attrs[TARGET]).value
        if target is None:
            raise TileCompileError(
                f"no target: pass target= or set {TARGET} on the module", stage="parse"
            )
        try:
            pipelines.check_target(target)
        except ValueError as e:
            raise TileCompileError(str(e), stage="parse") from None
        seconds["parse"] = time.perf_counter() - start

        start = time.perf_counter()
        report(("stage", "tile_passes"))
        if pipeline is None:
            # mma.sync reads registers: keeping an MMA in flight gains nothing there.
            passes = pipelines.tile_passes(
                target, fuse=fuse, derive_hints=derive_hints, pipeline_mma=mma != "mma_v2"
            )
            pipeline = ",".join(passes)
        ran, given = _run_pipeline(module, pipeline, target, "tile_passes", diags)
        handoff = given or HandOff(target)
        if handoff.target and handoff.target != target:  # one compile, one target
            raise TileCompileError(
                f"the pipeline's hand-off lowers for target={handoff.target}, but this "
                f"compile is for {target}: drop the hand-off's target or pass "
                f"target={handoff.target!r}",
                stage="tile_passes",
            )
        if handoff.mma != "auto":  # the pipeline's own hand-off names the MMA
            mma = handoff.mma
        tile = module.operation.get_asm()
        seconds["tile_passes"] = time.perf_counter() - start

        report(("stage", "convert"))
        outcome = _hand_off_work(
            report,
            module.operation,
            target,
            handoff.lds_copies,
            mma,
            filename,
            options is not None,
            options,
        )
    if outcome[0] == "failed":
        _, line, col, message = outcome
        raise TileCompileError(message, line, col, "convert")
    _, ttgir, art, more, tensormaps = outcome
    seconds.update(more)
    how = f"target={target}" + ("" if mma == "auto" else f" mma={mma}")
    full = ",".join(p for p in (ran, f"{HAND_OFF}{{{how}}}") if p)
    return LoweredModule(tile, ttgir, target, full, seconds, art, tensormaps)


def compile_tile_module(
    module_or_text: Any,
    target: str | None = None,
    *,
    fuse: bool = True,
    derive_hints: bool = False,
    pipeline: str | None = None,
    options: dict[str, Any] | None = None,
    mma: str = "auto",
) -> CompiledKernel:
    """Compile a tile module (an ``ir.Module`` or its text) for ``target``.

    Args:
        module_or_text: the tile module; an ``ir.Module`` is copied, not changed.
        target: ``gfx1250``, ``gfx950``, ``gfx942`` or ``cuda:90``; default: the
            module's ``tile.target`` (a target given here overrides it).
        fuse: fuse disjoint hinted TDM copies (gfx1250).
        derive_hints: give unhinted copies hints first (gfx1250).
        pipeline: tile-level passes to run instead of the default ones
            (pass-pipeline text, without the hand-off, which always runs).
        options: Triton backend options (for example ``waves_per_eu``).
        mma: cuda:90 MMAs: ``auto``, ``mma_v2`` or ``wgmma`` (the option of
            ``convert-tile-to-triton-gpu``).

    Raises:
        TileCompileError: at the tile op a diagnostic is about.
    """
    total = time.perf_counter()
    low = _lower(module_or_text, target, fuse, derive_hints, pipeline, dict(options or {}), mma=mma)
    art = low.artifact
    asm = {
        "tile": low.tile,
        "ttgir": low.ttgir,
        "llir": str(art.asm.get("llir", "")),
    }
    for kind in ("amdgcn", "ptx"):  # the backend's assembly, only that
        if kind in art.asm:
            asm[kind] = str(art.asm[kind])
    hsaco = art.asm.get("hsaco", art.asm.get("cubin", b""))
    return CompiledKernel(
        asm=asm,
        hsaco=hsaco if isinstance(hsaco, bytes) else bytes(str(hsaco), "utf-8"),
        metadata=art.metadata,
        compile_seconds=time.perf_counter() - total,
        stage_seconds=low.seconds,
        target=low.target,
        pipeline=low.pipeline,
        triton_stages=dict(art.stages),
        tensormaps=list(low.tensormaps),
    )
