"""The hand-off to Triton: verify and compile TTGIR text, and read the ISA.

This is the only compiler module that imports :mod:`triton`, and it does so
lazily inside functions, so ``import gemm_opt.lowering.triton_bridge`` stays cheap.

* :func:`validate` parses TTGIR with Triton's own parser and verifiers (the
  TritonGPU and AMD dialects are loaded), so an emitter bug surfaces as a
  :class:`TritonError` naming ``<ttgir>:line:col`` in the text we produced.
* :func:`compile_ttgir` runs Triton's backend from the TTGIR stage down to the
  binary (``.ttgir`` selects that first stage), and returns every stage's
  text together with :class:`IsaMetrics` parsed from the assembly.
* :func:`isa_metrics` reads register counts, LDS, spills, code size and
  instruction counts from AMDGPU assembly; "in loop" counts come from the
  innermost loop(s), found from LLVM's loop comments or, without them, from
  back-edge branches (:func:`innermost_loops`).

MLIR prints diagnostics from C++ straight to file descriptor 2, so each call
redirects fd 2 into a temporary file and turns what it caught into clean text.
Pass ``isolated=True`` to run the call in a child process instead; that also
survives a hard abort inside Triton.

Pinned: triton 3.9.0 (``amdg`` dialect spelling, ``ttg.target = "hip:..."``).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gemm_opt.core.targets import TARGETS as CORE_TARGETS

__all__ = [
    "TARGETS",
    "CompiledArtifact",
    "IsaMetrics",
    "TritonError",
    "compile_ttgir",
    "gpu_target",
    "innermost_loop_lines",
    "innermost_loops",
    "isa_metrics",
    "target_attr",
    "validate",
]

#: Short target names and the ``GPUTarget(backend, arch, warp_size)`` they mean,
#: from the one target table (:data:`gemm_opt.core.targets.TARGETS`).
TARGETS: dict[str, tuple[str, str | int, int]] = {
    t.name: (t.backend, t.arch, t.warp_size) for t in CORE_TARGETS.values()
}

# The name of the temporary file handed to Triton; diagnostics that point at
# it are rewritten to ``<ttgir>:line:col``.
_STEM = "kernel"
_SHOWN_NAME = "<ttgir>"


class TritonError(RuntimeError):
    """Triton rejected TTGIR, or failed while compiling it.

    ``str(err)`` is the clean diagnostic text: one ``<ttgir>:line:col: error:
    ...`` line per MLIR diagnostic (notes included), never a traceback.

    Attributes:
        diagnostics: the clean text (same as ``str(err)``).
        locations: ``(line, column)`` of each diagnostic that had one.
        raw: everything Triton wrote to stderr during the call, unfiltered
            (can hold a full IR dump and a crash reproducer).
    """

    def __init__(self, diagnostics: str, raw: str = "") -> None:
        super().__init__(diagnostics)
        self.diagnostics = diagnostics
        self.raw = raw
        self.locations: list[tuple[int, int]] = [
            (int(m.group(1)), int(m.group(2)))
            for m in re.finditer(rf"{re.escape(_SHOWN_NAME)}:(\d+):(\d+)", diagnostics)
        ]


@dataclass
class IsaMetrics:
    """Static facts about one compiled AMDGPU kernel.

    Register, spill and size fields come from the assembler metadata; LDS is
    Triton's ``shared`` metadata when given (Triton allocates LDS dynamically,
    so ``.group_segment_fixed_size`` is 0 in its kernels). Instruction counts
    are over the kernel's text; ``*_in_loop`` counts are over the innermost
    loop(s) only (see :func:`innermost_loops`).
    """

    vgprs: int = 0
    sgprs: int = 0
    lds_bytes: int = 0
    spills: int = 0
    code_bytes: int = 0
    tdm_loads: int = 0
    tdm_loads_in_loop: int = 0
    wmma: int = 0
    mfma: int = 0
    instructions: int = 0
    #: Count per ``s_wait*`` / ``s_waitcnt*`` opcode (whole kernel).
    waits: dict[str, int] = field(default_factory=dict)
    vgpr_spills: int = 0
    sgpr_spills: int = 0
    scratch_bytes: int = 0
    tdm_stores: int = 0
    wmma_in_loop: int = 0
    mfma_in_loop: int = 0
    barriers: int = 0
    loop_instructions: int = 0
    occupancy: int = 0


@dataclass
class CompiledArtifact:
    """What :func:`compile_ttgir` returns.

    ``asm`` holds each stage Triton kept: ``"ttgir"`` (after Triton's own
    parse), ``"llir"``, ``"amdgcn"`` and ``"hsaco"`` (bytes) for AMD targets.
    """

    asm: dict[str, str | bytes]
    metadata: dict[str, Any]
    compile_seconds: float
    metrics: IsaMetrics


# ---------------------------------------------------------------------------
# Targets


def _target_entry(target: str) -> tuple[str, str | int, int]:
    """``(backend, arch, warp_size)`` of a short name; ValueError if unknown."""
    try:
        return TARGETS[target]
    except KeyError:
        raise ValueError(f"unknown target {target!r}; known: {', '.join(TARGETS)}") from None


def gpu_target(target: str) -> Any:
    """``triton.backends.compiler.GPUTarget`` for a short name in :data:`TARGETS`."""
    from triton.backends.compiler import GPUTarget

    return GPUTarget(*_target_entry(target))


def target_attr(target: str) -> str:
    """The module's ``ttg.target`` string for a target, e.g. ``"hip:gfx1250"``."""
    _target_entry(target)
    return CORE_TARGETS[target].triton_target


def _position(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"{_SHOWN_NAME}:{line}:{col}"


def _precheck(text: str, target: str) -> None:
    """Checks made before Triton sees the text.

    * the module's ``ttg.target`` must name the requested target;
    * ``ttg.num-warps`` must be present: without it Triton 3.9 aborts the
      whole process (an assertion) instead of reporting an error.
    """
    found = re.search(r'ttg\.target\s*=\s*"([^"]*)"', text)
    if found and found.group(1) != target_attr(target):
        raise TritonError(
            f"{_position(text, found.start())}: error: module declares "
            f'ttg.target = "{found.group(1)}" but the requested target is '
            f'"{target_attr(target)}"'
        )
    module = re.search(r"^\s*module\b", text, re.MULTILINE)
    if module and '"ttg.num-warps"' not in text:
        raise TritonError(
            f"{_position(text, module.end() - len('module'))}: error: module "
            'has no "ttg.num-warps" attribute (Triton requires it)'
        )


# ---------------------------------------------------------------------------
# Capturing C-level diagnostics

_DIAG = re.compile(
    r"""^(?:loc\("(?P<lpath>[^"]*)":(?P<lline>\d+):(?P<lcol>\d+)\)
        |(?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+)
        |<unknown>:0)
        :\s(?P<sev>error|warning|note|remark):\s?(?P<msg>.*)$""",
    re.VERBOSE,
)
_PARSE_FAILED = "Parse MLIR file failed."


@contextlib.contextmanager
def _captured_fd2(enabled: bool = True) -> Iterator[list[str]]:
    """Redirect file descriptor 2 to a temporary file; yield [captured text].

    With ``enabled=False`` nothing is redirected and the text stays empty (a
    child process leaves fd 2 alone, so that its parent sees the output even
    if Triton aborts the process).
    """
    out: list[str] = []
    if not enabled:
        yield out
        out.append("")
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield out
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            out.append(sink.read().decode("utf-8", errors="replace"))


def _is_our_file(path: str) -> bool:
    """Whether ``path`` is the temporary TTGIR file this module wrote."""
    p = Path(path)
    return p.name == f"{_STEM}.ttgir" and p.parent.name.startswith(_TMP_PREFIX)


def _clean(raw: str, fallback: str) -> str:
    """Keep only diagnostic lines, with our temp file shown as ``<ttgir>``.

    Without any diagnostic line, ``fallback`` (the Python exception text) is
    used, or else the last lines of ``raw``.
    """
    kept: list[str] = []
    for line in raw.splitlines():
        line = line.rstrip()
        m = _DIAG.match(line)
        if m:
            where_path = m.group("lpath") or m.group("path")
            if where_path is not None:
                row = m.group("lline") or m.group("line")
                col = m.group("lcol") or m.group("col")
                shown = _SHOWN_NAME if _is_our_file(where_path) else where_path
                where = f"{shown}:{row}:{col}"
            else:
                where = "<unknown>"
            kept.append(f"{where}: {m.group('sev')}: {m.group('msg')}")
        elif "Assertion" in line and "failed" in line:
            kept.append(line.strip())
    # A pass failure also reports "Failures have been detected ..." and the
    # reproducer location; those add nothing once a located error exists.
    located = [k for k in kept if not k.startswith("<unknown>")]
    if located:
        kept = located
    if not kept:
        tail = [ln for ln in raw.strip().splitlines() if ln.strip()][-20:]
        kept = [fallback] if fallback else tail
    return "\n".join(dict.fromkeys(kept))


_ALIAS = re.compile(r"^#[\w.$-]+\s*=")


def _locate_silent_parse_failure(text: str, target: str) -> str | None:
    """Find the attribute alias that Triton's parser rejected without a word.

    Some of Triton's attribute parsers (``#ttg.amd_wmma`` with an unknown key,
    for instance) fail without emitting a diagnostic. Aliases are parsed
    before the module, so parsing growing prefixes of the alias block, with an
    empty module, names the first one that fails.
    """
    from triton._C.libtriton import ir

    lines = text.splitlines()
    alias_rows = [i for i, line in enumerate(lines) if _ALIAS.match(line)]
    context = _triton_context(target)
    with tempfile.TemporaryDirectory(prefix=_TMP_PREFIX) as tmp:
        for row in alias_rows:
            prefix = [lines[i] for i in alias_rows if i <= row]
            path = _write("\n".join([*prefix, "module {\n}\n"]), tmp)
            with _captured_fd2():
                try:
                    ir.parse_mlir_module(path, context)
                except Exception:
                    name = lines[row].split("=", 1)[0].strip()
                    return (
                        f"{_SHOWN_NAME}:{row + 1}:1: error: Triton could not parse "
                        f"attribute alias {name} (its parser gave no reason; "
                        "check for unknown or missing keys)"
                    )
    return None


def _failure(error: Exception, raw: str, ttgir_text: str, target: str) -> TritonError:
    """A :class:`TritonError` for an exception Triton raised."""
    diagnostics = _clean(raw, str(error))
    if diagnostics == _PARSE_FAILED:
        located = _locate_silent_parse_failure(ttgir_text, target)
        diagnostics = located or f"{_SHOWN_NAME}: error: {_PARSE_FAILED}"
    return TritonError(diagnostics, raw)


# ---------------------------------------------------------------------------
# validate / compile (in-process workers)

_TMP_PREFIX = "gemm_opt_ttgir_"


def _triton_context(target: str) -> Any:
    """A Triton MLIR context with Triton's and the target backend's dialects loaded."""
    from triton._C.libtriton import ir
    from triton.compiler.compiler import make_backend

    context = ir.context()
    ir.load_dialects(context)
    make_backend(gpu_target(target)).load_dialects(context)
    return context


def _write(text: str, directory: str) -> str:
    path = os.path.join(directory, f"{_STEM}.ttgir")
    Path(path).write_text(text)
    return path


def _validate_here(ttgir_text: str, target: str, capture: bool = True) -> None:
    from triton._C.libtriton import ir

    _precheck(ttgir_text, target)
    context = _triton_context(target)
    with tempfile.TemporaryDirectory(prefix=_TMP_PREFIX) as tmp:
        path = _write(ttgir_text, tmp)
        error: Exception | None = None
        with _captured_fd2(capture) as captured:
            try:
                ir.parse_mlir_module(path, context)
            except Exception as exc:  # Triton raises a bare RuntimeError
                error = exc
    if error is not None:
        raise _failure(error, captured[0], ttgir_text, target) from None


def _compile_here(
    ttgir_text: str,
    target: str,
    options: dict[str, Any] | None,
    capture: bool = True,
) -> CompiledArtifact:
    import triton
    from triton import knobs

    _precheck(ttgir_text, target)
    opts = dict(options or {})
    # Triton 3.9 warns when fp fusion is left implicit; keep its default (on).
    opts.setdefault("enable_fp_fusion", True)
    error: Exception | None = None
    with tempfile.TemporaryDirectory(prefix=_TMP_PREFIX) as tmp:
        path = _write(ttgir_text, tmp)
        # A private cache directory: every call really compiles (so the time is
        # honest) and nothing lands in the user's Triton cache.
        with knobs.cache.scope(), _captured_fd2(capture) as captured:
            knobs.cache.dir = os.path.join(tmp, "cache")
            start = time.perf_counter()
            try:
                kernel = triton.compile(path, target=gpu_target(target), options=opts)
            except Exception as exc:  # PassManager / LLVM failures
                error = exc
            seconds = time.perf_counter() - start
            if error is None:
                asm = {key: kernel.asm[key] for key in kernel.asm}
                metadata = dict(kernel.metadata._asdict())
    if error is not None:
        raise _failure(error, captured[0], ttgir_text, target) from None
    if "target" in metadata:
        tgt = metadata["target"]
        metadata["target"] = (tgt.backend, tgt.arch, tgt.warp_size)
    amdgcn = asm.get("amdgcn")
    metrics = (
        isa_metrics(amdgcn, metadata)
        if isinstance(amdgcn, str)
        else IsaMetrics(lds_bytes=int(metadata.get("shared") or 0))
    )
    return CompiledArtifact(asm, metadata, seconds, metrics)


# ---------------------------------------------------------------------------
# Running a worker in a child process

_WORKERS = {"validate": _validate_here, "compile": _compile_here}


def _run_isolated(func: str, kwargs: dict[str, Any]) -> Any:
    """Run worker ``func(**kwargs)`` in a fresh interpreter.

    The child leaves fd 2 alone; its stderr comes back through a pipe, so the
    diagnostics survive even when Triton aborts the child.
    """
    payload = pickle.dumps((func, kwargs))
    code = "from gemm_opt.lowering.triton_bridge import _child_main; _child_main()"
    proc = subprocess.run(
        [sys.executable, "-c", code], input=payload, capture_output=True, check=False
    )
    stderr = proc.stderr.decode("utf-8", errors="replace")
    if proc.returncode != 0 or not proc.stdout:
        how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
        raise TritonError(_clean(stderr, f"Triton child process died ({how})"), stderr)
    status, value = pickle.loads(proc.stdout)
    if status == "error":
        # The child could only see the exception text; its diagnostics went
        # to the pipe.
        raise TritonError(_clean(stderr, value), stderr)
    return value


def _child_main() -> None:
    """Entry point of the child started by :func:`_run_isolated`."""
    func, kwargs = pickle.loads(sys.stdin.buffer.read())
    try:
        result: tuple[str, Any] = ("ok", _WORKERS[func](**kwargs, capture=False))
    except TritonError as err:
        result = ("error", err.diagnostics)
    sys.stdout.buffer.write(pickle.dumps(result))
    sys.stdout.buffer.flush()


# ---------------------------------------------------------------------------
# Public entry points


def validate(ttgir_text: str, target: str = "gfx1250", *, isolated: bool = False) -> None:
    """Parse and verify TTGIR with Triton's own dialects; no GPU is needed.

    Raises:
        TritonError: with ``<ttgir>:line:col: error: ...`` lines, if the parser
            or an op/attribute verifier rejects the text, or if the module's
            ``ttg.target`` is not ``target``.
        ValueError: for an unknown ``target`` name.
    """
    gpu_target(target)  # a ValueError for a bad name, before any work
    if isolated:
        _run_isolated("validate", {"ttgir_text": ttgir_text, "target": target})
    else:
        _validate_here(ttgir_text, target)


def compile_ttgir(
    ttgir_text: str,
    target: str = "gfx1250",
    options: dict[str, Any] | None = None,
    *,
    isolated: bool = False,
) -> CompiledArtifact:
    """Compile TTGIR text down to a binary with Triton's backend.

    ``options`` are Triton backend options (for example ``waves_per_eu``);
    ``num_warps`` and ``num_ctas`` come from the module's attributes.
    ``compile_seconds`` is wall time of ``triton.compile`` with a private,
    empty cache (so always a real compile).

    Raises:
        TritonError: with the clean diagnostics if any pass or LLVM fails.
    """
    gpu_target(target)
    if isolated:
        return _run_isolated(
            "compile",
            {"ttgir_text": ttgir_text, "target": target, "options": options},
        )
    return _compile_here(ttgir_text, target, options)


# ---------------------------------------------------------------------------
# Reading AMDGPU assembly

_LABEL = re.compile(r"^(\.?[A-Za-z_$][\w.$]*):")
_MNEMONIC = re.compile(r"^\s+([a-z][a-z0-9_]*)\b")
_BRANCH = re.compile(r"^\s+(s_cbranch_\w+|s_branch)\s+(\.?[\w.$]+)")


def _kernel_body(amdgcn: str) -> list[str]:
    """The kernel's text lines, from its entry label to ``.Lfunc_end``."""
    lines = amdgcn.splitlines()
    start = 0
    for i, line in enumerate(lines):
        if re.match(r"^\s*\.type\s+[\w.$]+,\s*@function", line):
            start = i
            break
    body: list[str] = []
    for line in lines[start:]:
        if line.startswith(".Lfunc_end"):
            break
        body.append(line)
    return body


def _instructions(lines: list[str]) -> list[str]:
    """Instruction lines (mnemonic first), with comments stripped."""
    out = []
    for line in lines:
        if _MNEMONIC.match(line):
            out.append(line.split(";")[0].strip())
    return out


_BLOCK_START = re.compile(r"^(?:\.(LBB\w+):|; %bb\.\d+:)")
_INNER_HEADER = re.compile(r"=>This Inner Loop Header: Depth=\d+")
_IN_LOOP = re.compile(r"in Loop: Header=(BB\w+) Depth=\d+")


def _annotated_loops(body: list[str]) -> list[list[int]]:
    """Innermost loops from LLVM's loop comments, as lists of body line indices.

    LLVM's assembly printer marks each block: ``=>This Inner Loop Header``
    on the header of an innermost loop, and ``in Loop: Header=BBx_y`` on
    every other block, naming the innermost loop that contains it. That also
    handles rotated loops, whose latch block is laid out before the header.
    """
    blocks: list[tuple[str | None, list[int]]] = []  # (loop header, lines)
    for i, line in enumerate(body):
        start = _BLOCK_START.match(line)
        if start or not blocks:
            blocks.append((None, []))
        header, lines = blocks[-1]
        lines.append(i)
        # The comment sits on the block's first line or on comment-only lines
        # right after it.
        if header is None and (start or line.lstrip().startswith(";")):
            if start and start.group(1) and _INNER_HEADER.search(line):
                header = start.group(1)
            elif m := _IN_LOOP.search(line):
                header = "L" + m.group(1)
            blocks[-1] = (header, lines)
    inner = {
        m.group(1)
        for line in body
        if _INNER_HEADER.search(line) and (m := _BLOCK_START.match(line)) and m.group(1)
    }
    loops: dict[str, list[int]] = {}
    for header, lines in blocks:
        if header in inner:
            loops.setdefault(header, []).extend(lines)
    return [sorted(lines) for lines in loops.values()]


def _back_edge_loops(body: list[str]) -> list[list[int]]:
    """Innermost loops from backward branches (for text without loop comments).

    A branch (``s_cbranch_*`` or ``s_branch``) to a textually earlier label is
    taken as a back edge, and the loop as the lines between that label and the
    last branch back to it (LLVM lays loops out contiguously). A range holding
    ``s_endpgm`` is not a loop (block placement can put an exit block before
    its predecessor). A loop is innermost when no other lies inside it.
    """
    labels: dict[str, int] = {}
    last_branch: dict[int, int] = {}
    for i, line in enumerate(body):
        m = _LABEL.match(line)
        if m:
            labels[m.group(1)] = i
            continue
        b = _BRANCH.match(line)
        if b and b.group(2) in labels:
            last_branch[labels[b.group(2)]] = i
    edges = sorted(
        (lo, hi)
        for lo, hi in last_branch.items()
        if not any(ln.strip().startswith("s_endpgm") for ln in body[lo:hi])
    )
    return [
        list(range(lo, hi + 1))
        for lo, hi in edges
        if not any((a, b) != (lo, hi) and lo <= a and b <= hi for a, b in edges)
    ]


def innermost_loops(amdgcn_text: str) -> list[list[str]]:
    """The instructions of each innermost loop of the kernel.

    Uses LLVM's loop comments when the text has them, else back edges: a
    branch to an earlier label closes a loop spanning label..branch (see
    ``_back_edge_loops``).
    """
    return _innermost_loops(_kernel_body(amdgcn_text))


def _innermost_loops(body: list[str]) -> list[list[str]]:
    """:func:`innermost_loops` of the kernel's text lines."""
    if any(_INNER_HEADER.search(line) for line in body):
        loops = _annotated_loops(body)
    else:
        loops = _back_edge_loops(body)
    return [_instructions([body[i] for i in lines]) for lines in loops]


def innermost_loop_lines(amdgcn_text: str) -> list[str]:
    """Instructions of the largest innermost loop (empty if there is none)."""
    return max(innermost_loops(amdgcn_text), key=len, default=[])


def _yaml_int(text: str, key: str) -> int | None:
    m = re.search(rf"^\s*\.{re.escape(key)}:\s*(\d+)", text, re.MULTILINE)
    return int(m.group(1)) if m else None


def _comment_int(text: str, key: str) -> int | None:
    m = re.search(rf"^;\s*{re.escape(key)}\s*[:=]\s*(\d+)", text, re.MULTILINE)
    return int(m.group(1)) if m else None


def isa_metrics(amdgcn_text: str, metadata: dict[str, Any] | None = None) -> IsaMetrics:
    """Parse :class:`IsaMetrics` from AMDGPU assembly text.

    Sources, in order of preference: the ``amdhsa.kernels`` metadata block
    (``.vgpr_count``, ``.sgpr_count``, ``.vgpr_spill_count``,
    ``.sgpr_spill_count``, ``.private_segment_fixed_size``), then the
    ``; NumVgprs:`` style comments; ``code_bytes`` is ``; codeLenInByte``.
    ``metadata`` is Triton's kernel metadata; its ``shared`` field is the LDS
    size Triton allocates at launch.
    """
    meta = metadata or {}
    vgpr_spills = _yaml_int(amdgcn_text, "vgpr_spill_count") or 0
    sgpr_spills = _yaml_int(amdgcn_text, "sgpr_spill_count") or 0
    lds = meta.get("shared")
    if lds is None:
        lds = _yaml_int(amdgcn_text, "group_segment_fixed_size") or 0
    body = _kernel_body(amdgcn_text)
    insts = _instructions(body)
    loop_insts = [ln for loop in _innermost_loops(body) for ln in loop]

    def count(lines: list[str], prefix: str) -> int:
        return sum(1 for ln in lines if ln.startswith(prefix))

    waits: dict[str, int] = {}
    for ln in insts:
        op = ln.split()[0]
        if op.startswith("s_wait"):
            waits[op] = waits.get(op, 0) + 1
    return IsaMetrics(
        vgprs=_yaml_int(amdgcn_text, "vgpr_count") or _comment_int(amdgcn_text, "NumVgprs") or 0,
        sgprs=_yaml_int(amdgcn_text, "sgpr_count")
        or _comment_int(amdgcn_text, "TotalNumSgprs")
        or 0,
        lds_bytes=int(lds),
        spills=vgpr_spills + sgpr_spills,
        code_bytes=_comment_int(amdgcn_text, "codeLenInByte") or 0,
        tdm_loads=count(insts, "tensor_load_to_lds"),
        tdm_loads_in_loop=count(loop_insts, "tensor_load_to_lds"),
        wmma=count(insts, "v_wmma"),
        mfma=count(insts, "v_mfma"),
        instructions=len(insts),
        waits=waits,
        vgpr_spills=vgpr_spills,
        sgpr_spills=sgpr_spills,
        scratch_bytes=_yaml_int(amdgcn_text, "private_segment_fixed_size") or 0,
        tdm_stores=count(insts, "tensor_store_from_lds"),
        wmma_in_loop=count(loop_insts, "v_wmma"),
        mfma_in_loop=count(loop_insts, "v_mfma"),
        barriers=count(insts, "s_barrier"),
        loop_instructions=len(loop_insts),
        occupancy=_comment_int(amdgcn_text, "Occupancy") or 0,
    )
