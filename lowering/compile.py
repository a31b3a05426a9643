"""Compile a tile module down to a GPU binary.

``compile_tile_module`` is the one entry point (the authoring API's
``kernel.compile(...)`` and ``gemm-opt --emit`` both end here):

1. parse (or copy) the tile module and check its module attributes;
2. run the tile-level passes of :func:`gemm_opt.lowering.pipelines.tile_passes`
   (or the caller's ``pipeline``) and keep that IR as ``asm["tile"]``;
3. run ``convert-tile-to-triton-gpu`` and print the result in generic form
   with locations: that text is ``asm["ttgir"]``;
4. check it with Triton's parser (:func:`gemm_opt.lowering.triton_bridge.validate`),
   then compile it with Triton (:func:`gemm_opt.lowering.triton_bridge.compile_ttgir`).

Every failure is a :class:`TileCompileError` positioned in the *tile* source:
our own diagnostics carry the op's location, and Triton's do too, because
every TTGIR op keeps the location of the tile op it was lowered from
(diagnostics Triton reports against the TTGIR text itself are mapped back
through the ``loc(...)`` of the op on that line).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from gemm_opt.lowering.triton_bridge import IsaMetrics, TritonError

__all__ = [
    "CompiledKernel",
    "LoweredModule",
    "TileCompileError",
    "compile_tile_module",
    "lower_tile_module",
    "map_triton_error",
    "ttgir_text",
]


@dataclass
class CompiledKernel:
    """A tile kernel compiled for one target.

    ``asm`` holds ``"tile"`` (the tile IR after the tile passes), ``"ttgir"``
    (the TTGIR handed to Triton, generic form with locations), ``"llir"`` and
    ``"amdgcn"`` (``"ptx"`` instead on cuda:90); ``hsaco`` is the code object
    (the cubin on cuda:90). ``stage_seconds`` splits
    ``compile_seconds`` into ``parse``, ``tile_passes``, ``convert``,
    ``validate`` and ``triton``.
    """

    asm: dict[str, str]
    hsaco: bytes
    metadata: dict[str, Any]
    metrics: IsaMetrics
    compile_seconds: float
    stage_seconds: dict[str, float] = field(default_factory=dict)
    target: str = ""
    pipeline: str = ""

    @property
    def name(self) -> str:
        """The kernel symbol."""
        return str(self.metadata.get("name", ""))


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
    passes, the TTGIR text, and the converted module itself."""

    module: Any
    tile: str
    ttgir: str
    target: str
    pipeline: str
    seconds: dict[str, float]


def ttgir_text(module: Any) -> str:
    """The TTGIR text of a converted module: generic form, with locations."""
    op = module.operation if hasattr(module, "operation") else module
    return op.get_asm(print_generic_op_form=True, enable_debug_info=True)


_DIAG_LINE = re.compile(
    r"^(?P<where>.*?):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning|note|remark): "
    r"(?P<msg>.*)$"
)
_LOC_ALIAS = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)\s*$", re.MULTILINE)
_FILE_LOC = re.compile(r'"(?:[^"\\]|\\.)*":(\d+):(\d+)')
_TTGIR = "<ttgir>"


def _position_of_ttgir_line(ttgir: str, row: int) -> tuple[int, int]:
    """Tile position of the op printed on TTGIR line ``row`` (via its ``loc``)."""
    lines = ttgir.splitlines()
    if not 1 <= row <= len(lines):
        return 0, 0
    line = lines[row - 1]
    aliases = {m.group(1): m.group(2) for m in _LOC_ALIAS.finditer(ttgir)}
    at = line.rfind(" loc(")
    if at < 0:
        return 0, 0
    text = line[at + 5 :]
    for _ in range(8):  # follow alias chains (#loc3 = loc(#loc1))
        m = _FILE_LOC.search(text)
        if m:
            return int(m.group(1)), int(m.group(2))
        ref = re.search(r"(#loc\d*)\b", text)  # also inside fused[...] / callsite(...)
        if not ref or ref.group(1) not in aliases:
            break
        text = aliases[ref.group(1)]
    return 0, 0


def map_triton_error(err: TritonError, ttgir: str) -> TileCompileError:
    """A :class:`TileCompileError` at the tile op a Triton diagnostic is about."""
    mapped: list[tuple[str, int, int, str]] = []
    for raw in str(err).splitlines():
        m = _DIAG_LINE.match(raw.strip())
        if not m:
            continue
        line, col = int(m.group("line")), int(m.group("col"))
        if m.group("where") == _TTGIR:
            line, col = _position_of_ttgir_line(ttgir, line)
        mapped.append((m.group("sev"), line, col, m.group("msg")))
    details = "\n".join(
        f"{line}:{col}: {sev}: {msg}" if line else f"{sev}: {msg}" for sev, line, col, msg in mapped
    ) or str(err)
    first = next((d for d in mapped if d[0] == "error"), None)
    if first is None:
        text = str(err).strip().splitlines()
        return TileCompileError(
            f"Triton rejected the lowered kernel: {text[0] if text else 'no diagnostic'}",
            stage="triton",
            details=details,
        )
    _, line, col, msg = first
    return TileCompileError(
        f"Triton rejected the lowered kernel: {msg}", line, col, "triton", details
    )


def _first_error(diags: list[Any], stage: str, fallback: str) -> TileCompileError:
    errors = [d for d in diags if d.severity == "error"]
    details = "\n".join(f"{d.line}:{d.col}: {d.severity}: {d.message}" for d in diags)
    if not errors:
        return TileCompileError(fallback, stage=stage, details=details or fallback)
    d = errors[0]
    return TileCompileError(d.message, d.line, d.col, stage, details)


def _run_pipeline(module: Any, text: str, stage: str, diags: list[Any]) -> None:
    from gemm_opt.core.ext_compat import MLIRError
    from gemm_opt.core.pipeline import PipelineError, build_pass_manager
    from gemm_opt.lowering import REGISTRY

    if not text:
        return
    try:
        pm = build_pass_manager(text, REGISTRY)
    except PipelineError as e:
        raise TileCompileError(f"bad pipeline '{text}': {e}", stage=stage) from None
    try:
        pm.run(module.operation)
    except MLIRError:
        raise _first_error(diags, stage, f"pipeline '{text}' failed") from None


def lower_tile_module(
    module_or_text: Any,
    target: str | None = None,
    *,
    fuse: bool = True,
    derive_hints: bool = False,
    pipeline: str | None = None,
) -> LoweredModule:
    """Steps 1-3 of :func:`compile_tile_module`: the tile IR after the tile
    passes and the TTGIR text, without calling Triton."""
    from gemm_opt import dialect
    from gemm_opt.core.diagnostics import collect
    from gemm_opt.core.ext_compat import MLIRError, ir
    from gemm_opt.dialect.tile import TARGET, verify_module_attributes
    from gemm_opt.lowering import pipelines

    seconds: dict[str, float] = {}
    start = time.perf_counter()
    if isinstance(module_or_text, (str, bytes)):
        text = module_or_text.decode() if isinstance(module_or_text, bytes) else module_or_text
    else:
        # A copy, in a context of our own: the caller's module and context
        # (which the conversion would open to unregistered dialects) stay as
        # they are. The generic form with locations round-trips exactly.
        text = ttgir_text(module_or_text)
    ctx = dialect.make_context(False)
    with ctx, collect(ctx) as diags:
        try:
            module = ir.Module.parse(text)
        except MLIRError:
            raise _first_error(diags, "parse", "could not parse the tile module") from None
        problems = verify_module_attributes(module.operation)
        if problems:
            raise TileCompileError(problems[0], stage="parse")
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
        if pipeline is None:
            pipeline = ",".join(pipelines.tile_passes(target, fuse=fuse, derive_hints=derive_hints))
        _run_pipeline(module, pipeline, "tile_passes", diags)
        tile = module.operation.get_asm()
        seconds["tile_passes"] = time.perf_counter() - start

        start = time.perf_counter()
        convert = f"convert-tile-to-triton-gpu{{target={target}}}"
        _run_pipeline(module, convert, "convert", diags)
        ttgir = ttgir_text(module)
        seconds["convert"] = time.perf_counter() - start
    full = ",".join(p for p in (pipeline, convert) if p)
    return LoweredModule(module, tile, ttgir, target, full, seconds)


def compile_tile_module(
    module_or_text: Any,
    target: str | None = None,
    *,
    fuse: bool = True,
    derive_hints: bool = False,
    pipeline: str | None = None,
    options: dict[str, Any] | None = None,
    isolated: bool = False,
) -> CompiledKernel:
    """Compile a tile module (an ``ir.Module`` or its text) for ``target``.

    Args:
        module_or_text: the tile module; an ``ir.Module`` is copied, not changed.
        target: ``gfx1250``, ``gfx950``, ``gfx942`` or ``cuda:90``; default: the
            module's ``tile.target`` (a target given here overrides it).
        fuse: fuse disjoint hinted TDM copies (gfx1250).
        derive_hints: give unhinted copies hints first (gfx1250).
        pipeline: tile-level passes to run instead of the default ones
            (pass-pipeline text, without the conversion, which always runs).
        options: Triton backend options (for example ``waves_per_eu``).
        isolated: run Triton in a child process (survives a hard abort).

    Raises:
        TileCompileError: at the tile op a diagnostic is about.
    """
    from gemm_opt.lowering.triton_bridge import compile_ttgir, validate

    total = time.perf_counter()
    low = lower_tile_module(
        module_or_text, target, fuse=fuse, derive_hints=derive_hints, pipeline=pipeline
    )
    seconds = dict(low.seconds)
    start = time.perf_counter()
    try:
        validate(low.ttgir, low.target, isolated=isolated)
        seconds["validate"] = time.perf_counter() - start
        start = time.perf_counter()
        art = compile_ttgir(low.ttgir, low.target, options, isolated=isolated)
    except TritonError as e:
        raise map_triton_error(e, low.ttgir) from None
    seconds["triton"] = time.perf_counter() - start
    asm = {
        "tile": low.tile,
        "ttgir": low.ttgir,
        "llir": str(art.asm.get("llir", "")),
        "amdgcn": str(art.asm.get("amdgcn", "")),
    }
    if "ptx" in art.asm:
        asm["ptx"] = str(art.asm["ptx"])
    hsaco = art.asm.get("hsaco", art.asm.get("cubin", b""))
    return CompiledKernel(
        asm=asm,
        hsaco=hsaco if isinstance(hsaco, bytes) else bytes(str(hsaco), "utf-8"),
        metadata=art.metadata,
        metrics=art.metrics,
        compile_seconds=time.perf_counter() - total,
        stage_seconds=seconds,
        target=low.target,
        pipeline=low.pipeline,
    )
