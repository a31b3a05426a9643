"""The hand-off to Triton: its IR builder, its verifier and its compiler.

This is the only compiler module that imports :mod:`triton`, and it does so
lazily inside functions, so ``import gemm_opt.lowering.triton_bridge`` stays cheap.

* :func:`triton_ir` gives the conversion Triton's context (Triton's and the
  target backend's dialects loaded), Gluon's op builder and Gluon's layout
  classes, so the conversion builds Triton IR with typed constructors.
* :func:`verified_text` verifies a built module and prints it (Triton's
  pretty TTGIR, with locations); :func:`compile_module` compiles it to a
  binary with Triton's backend, from the TTGIR stage down.
* :func:`run_in_worker` runs work that reaches Triton's C++ in a long-lived
  worker process (:mod:`gemm_opt.lowering.isolation`), :func:`run_isolated`
  in a child forked for the call. Triton aborts the process on some bad
  input (C++ assertions, ``std::bad_cast``); in another process an abort
  only ends that process, and the work's progress reports (which op it was
  building) let the caller name the op. Its file descriptor 2, where MLIR
  prints diagnostics from C++, goes to a file the caller reads.
* :func:`validate` and :func:`compile_ttgir` do the same for TTGIR *text*:
  the hand-written reference kernels of ``examples/reference`` and TTGIR
  printed earlier (by the lowering, or by Triton's bindings after a typed
  edit); diagnostics against the text name ``<ttgir>``.

Triton's diagnostics come back as :class:`TritonError`: one
``where:line:col: severity: message`` line each, where ``where`` is the file
named in the op's location (the tile source, for modules we built).

Pinned: triton 3.9.0 (``amdg`` dialect spelling, ``ttg.target = "hip:..."``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from gemm_opt.core.targets import TARGETS as CORE_TARGETS
from gemm_opt.lowering.isa_analysis import IsaMetrics, isa_metrics
from gemm_opt.lowering.isolation import Isolated, WorkerPool, run_forked, scratch_dir

__all__ = [
    "TARGETS",
    "CompiledArtifact",
    "Isolated",
    "TritonError",
    "TritonIR",
    "compile_module",
    "compile_ttgir",
    "gpu_target",
    "import_triton",
    "run_in_worker",
    "run_isolated",
    "target_attr",
    "triton_ir",
    "validate",
    "verified_text",
    "warm_for_compile",
]

#: Short target names and the ``GPUTarget(backend, arch, warp_size)`` they mean,
#: from the one target table (:data:`gemm_opt.core.targets.TARGETS`).
TARGETS: dict[str, tuple[str, str | int, int]] = {
    t.name: (t.backend, t.arch, t.warp_size) for t in CORE_TARGETS.values()
}

# The name of the temporary file TTGIR text is handed to Triton in;
# diagnostics that point at it name ``<ttgir>``.
_STEM = "kernel"
_SHOWN_NAME = "<ttgir>"
_TMP_PREFIX = "gemm_opt_ttgir_"
_PARSE_FAILED = "Parse MLIR file failed."


@dataclass(frozen=True)
class Diag:
    """One diagnostic Triton printed (``line`` 0: no position)."""

    severity: str
    where: str
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        at = f"{self.where}:{self.line}:{self.col}" if self.line else self.where
        return f"{at}: {self.severity}: {self.message}"


class TritonError(RuntimeError):
    """Triton rejected IR, or failed (or aborted) while compiling it.

    ``str(err)`` is the clean diagnostic text, one line per diagnostic, never
    a traceback.

    Attributes:
        diags: the diagnostics, in order.
        locations: ``(line, column)`` of each diagnostic that had one.
        raw: everything Triton wrote to stderr during the call, unfiltered.
    """

    def __init__(self, diagnostics: str, raw: str = "", diags: list[Diag] | None = None) -> None:
        super().__init__(diagnostics)
        self.diagnostics = diagnostics
        self.raw = raw
        self.diags = list(diags or [])
        self.locations = [(d.line, d.col) for d in self.diags if d.line]


@dataclass
class CompiledArtifact:
    """What :func:`compile_module` returns.

    ``asm`` holds each stage Triton kept: ``"ttgir"``, ``"llir"``,
    ``"amdgcn"`` and ``"hsaco"`` (bytes) for AMD targets (``"ptx"`` and
    ``"cubin"`` on NVIDIA).
    """

    asm: dict[str, str | bytes]
    metadata: dict[str, Any]
    compile_seconds: float
    #: Triton's own timing of the compile (seconds): ``ir_init`` (parsing the
    #: TTGIR), each backend stage, ``store``; from its compilation listener.
    stages: dict[str, float] = field(default_factory=dict)

    @functools.cached_property
    def metrics(self) -> IsaMetrics:
        """The ISA report of the AMDGPU assembly (only the LDS size on other
        targets); read when asked for, not by every compile."""
        amdgcn = self.asm.get("amdgcn")
        if isinstance(amdgcn, str):
            return isa_metrics(amdgcn, self.metadata)
        return IsaMetrics(lds_bytes=int(self.metadata.get("shared") or 0))


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


# ---------------------------------------------------------------------------
# Building


@dataclass
class TritonIR:
    """What the conversion builds with: Triton's ``ir`` module, a context with
    the target's dialects, Gluon's op builder on it and Gluon's layout classes."""

    ir: Any
    context: Any
    builder: Any
    layouts: Any


#: Builds one kept Triton context serves before a fresh one replaces it (a context
#: keeps every type and attribute it ever made).
TRITON_CONTEXT_USES = 100
_triton_contexts = threading.local()


def _triton_context(target: str) -> Any:
    """A Triton MLIR context with Triton's and the target backend's dialects loaded:
    this thread's for ``target``, made once per :data:`TRITON_CONTEXT_USES` builds
    (making one, 2-3 ms, was a tenth of the conversion's time) and never one made
    before a fork (a forked worker makes its own)."""
    from triton._C.libtriton import ir
    from triton.compiler.compiler import make_backend

    kept: dict[str, list[Any]] = _triton_contexts.__dict__.setdefault("by_target", {})
    held = kept.get(target)
    if held is None or held[0] != os.getpid() or held[2] >= TRITON_CONTEXT_USES:
        context = ir.context()
        ir.load_dialects(context)
        make_backend(gpu_target(target)).load_dialects(context)
        held = kept[target] = [os.getpid(), context, 0]
    held[2] += 1
    return held[1]


def triton_ir(target: str) -> TritonIR:
    """A fresh :class:`TritonIR` for ``target`` (call it in the isolated child)."""
    from triton._C.libtriton import gluon_ir, ir
    from triton.experimental.gluon.language import _layouts as generic
    from triton.experimental.gluon.language.amd import _layouts as amd
    from triton.experimental.gluon.language.amd.cdna5 import _layouts as cdna5
    from triton.experimental.gluon.language.nvidia.ampere.mbarrier import MBarrierLayout

    context = _triton_context(target)
    _, arch, _ = _target_entry(target)
    builder = gluon_ir.GluonOpBuilder(context, str(arch))
    layouts = SimpleNamespace(
        BlockedLayout=generic.BlockedLayout,
        SliceLayout=generic.SliceLayout,
        DotOperandLayout=generic.DotOperandLayout,
        NVMMADistributedLayout=generic.NVMMADistributedLayout,
        NVMMASharedLayout=generic.NVMMASharedLayout,
        SwizzledSharedLayout=generic.SwizzledSharedLayout,
        PaddedSharedLayout=generic.PaddedSharedLayout,
        PartitionedSharedLayout=cdna5.PartitionedSharedLayout,
        AMDMFMALayout=amd.AMDMFMALayout,
        AMDWMMALayout=amd.AMDWMMALayout,
        MBarrierLayout=MBarrierLayout,
        # The linear layouts of block scales (Gluon's get_wmma/mfma_scale_layout).
        amd_wmma_scale_layout=gluon_ir.get_amd_wmma_scale_layout,
        amd_mfma_scale_layout=gluon_ir.get_amd_mfma_scale_layout,
    )
    return TritonIR(ir, context, builder, layouts)


#: Triton ops that make a module a TMA module (see :func:`verified_text`).
_TMA_OPS = frozenset(
    {
        "tt.make_tensor_descriptor",
        "ttng.async_tma_copy_global_to_local",
        "ttng.async_tma_copy_local_to_global",
    }
)


def verified_text(module: Any, target: str = "", context: Any = None) -> str:
    """Verify a built Triton module; return its pretty text, with locations.

    On AMD targets a module with ``ttg.warp_specialize`` first gets Triton's
    ``allocate-warp-groups`` (each partition's first warp, the total warps),
    which Triton runs for Gluon kernels on AMD before the TTGIR stage.

    On cuda:90, device-side TMA descriptors (``tt.make_tensor_descriptor``)
    are first lowered by Triton's own ``tma-lowering`` pass, as Triton does
    for Gluon kernels before the TTGIR stage (our text enters there): each
    becomes a 128-byte TMA descriptor written into per-program global
    scratch memory (``ttng.tensormap_create``), which the kernel's metadata
    sizes and the launcher allocates.

    Raises:
        TritonError: the verifier's diagnostics (they print to fd 2, which the
            isolated child sends to its parent; the message here says so).
    """
    if not module.verify():
        raise TritonError("Triton's verifier rejected the lowered module")
    names: set[str] = set()
    if context is not None and target:
        module.walk(lambda op: names.add(op.get_name()))
    cuda = bool(target) and TARGETS[target][0] == "cuda"
    # Only modules with TMA (descriptors made here or passed by the host): the
    # pass also folds and reorders constants (TMA modules print folded).
    if cuda and names & _TMA_OPS:
        from triton._C.libtriton import ir, nvidia

        pm = ir.pass_manager(context)
        nvidia.passes.ttnvgpuir.add_tma_lowering(pm)
        pm.run(module, "tma_lowering")
    # AMD: Triton allocates the partitions' warps in its Gluon pipeline, before
    # the TTGIR stage our text enters at (NVIDIA's TTGIR stage does it itself).
    if not cuda and "ttg.warp_specialize" in names:
        from triton._C.libtriton import ir, passes

        pm = ir.pass_manager(context)
        passes.ttgpuir.add_allocate_warp_groups(pm)
        pm.run(module, "allocate_warp_groups")
    return str(module.str())


def tensordesc_metadata(module: Any) -> list[dict[str, Any]]:
    """Per ``!tt.tensordesc`` argument of the built module's kernel, in order:
    the block, swizzle mode, element size and ``CU_TENSOR_MAP_DATA_TYPE_*`` a
    host must encode its tensormap with (Triton's own reading of the layouts,
    as its compiler records it for its launcher; the element type mapped to
    the driver's code by the table Triton's own launcher uses)."""
    from triton.backends.nvidia.driver import TMA_DTYPE_DEVICE_TO_HOST

    out = []
    for md in module.get_tensordesc_metadata():
        if md.get("is_im2col") or md.get("fp4_padded"):
            raise TritonError(f"host descriptor {md} is not a plain tiled one")
        code = int(md["elem_type"])
        out.append(
            {
                "block": [int(b) for b in md["block_size"]],
                "swizzle": int(md["swizzle"]),
                "elem_bytes": int(md["elem_size"]),
                "dtype": TMA_DTYPE_DEVICE_TO_HOST.get(code, code),
            }
        )
    return out


# ---------------------------------------------------------------------------
# Compiling


def _write(text: str, directory: str) -> str:
    path = os.path.join(directory, f"{_STEM}.ttgir")
    Path(path).write_text(text)
    return path


@contextlib.contextmanager
def _workdir() -> Iterator[str]:
    """A directory for one compile's files: a worker's own (emptied again
    afterwards), else a temporary directory. Triton's private cache is its
    ``cache`` folder."""
    scratch = scratch_dir()
    if scratch is None:
        with tempfile.TemporaryDirectory(prefix=_TMP_PREFIX) as tmp:
            yield tmp
        return
    try:
        yield scratch
    finally:
        for folder in (os.path.join(scratch, "cache"), scratch):
            if not os.path.isdir(folder):  # no compile made Triton's cache
                continue
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_file(follow_symlinks=False):
                        os.unlink(entry.path)


@functools.cache
def _private_cache() -> type:
    """Triton's file cache manager for a private folder no other process
    writes: files go straight to their place (Triton's own writes each
    through a new temporary directory, and on some file systems removing a
    directory costs milliseconds), and nothing is ever found, so every
    compile compiles. Triton's dump and override folders keep its own."""
    from triton import knobs
    from triton.runtime.cache import FileCacheManager

    class PrivateCache(FileCacheManager):
        def __init__(self, key: str, override: bool = False, dump: bool = False) -> None:
            self.private = not (override or dump)
            if not self.private:
                super().__init__(key, override, dump)
                return
            self.key, self.lock_path = key, None
            self.cache_dir = knobs.cache.dir
            os.makedirs(self.cache_dir, exist_ok=True)

        def get_group(self, filename: str) -> dict[str, str] | None:
            return None if self.private else super().get_group(filename)

        # Equivalent mutant: ``binary`` defaulting to False: Triton's put sets
        # it again from the data (``isinstance(data, bytes)``) and ours reads the
        # data's type, so no caller can tell the default.
        def put(self, data: Any, filename: str, binary: bool = True) -> str:
            if not self.private:
                return super().put(data, filename, binary)
            path = os.path.join(self.cache_dir, filename)
            if isinstance(data, bytes):
                Path(path).write_bytes(data)
            else:
                Path(path).write_text(str(data))
            return path

    return PrivateCache


def compile_module(text: str, target: str, options: dict[str, Any] | None) -> CompiledArtifact:
    """Compile TTGIR text that Triton printed (or that a test wrote) to a binary.

    Runs Triton's backend from the TTGIR stage down (``.ttgir`` selects that
    first stage) with a private, empty cache, so every call really compiles
    (and the time is honest) and nothing lands in the user's Triton cache.
    Call it in the isolated child.
    """
    import triton
    from triton import knobs

    opts = dict(options or {})
    # Triton 3.9 warns when fp fusion is left implicit; keep its default (on).
    opts.setdefault("enable_fp_fusion", True)
    stages: dict[str, float] = {}

    def listener(*, src: Any, metadata: Any, metadata_group: Any, times: Any, cache_hit: bool):
        stages["ir_init"] = times.ir_initialization / 1e6
        for name, micros in times.lowering_stages:
            stages[name] = micros / 1e6
        stages["store"] = times.store_results / 1e6

    with _workdir() as tmp:
        path = _write(text, tmp)
        with knobs.cache.scope(), knobs.compilation.scope():
            knobs.compilation.listener = listener
            knobs.cache.dir = os.path.join(tmp, "cache")
            knobs.cache.manager_class = _private_cache()
            start = time.perf_counter()
            kernel = triton.compile(path, target=gpu_target(target), options=opts)
            seconds = time.perf_counter() - start
            asm = {key: kernel.asm[key] for key in kernel.asm}
            metadata = dict(kernel.metadata._asdict())
    if "target" in metadata:
        tgt = metadata["target"]
        metadata["target"] = (tgt.backend, tgt.arch, tgt.warp_size)
    return CompiledArtifact(asm, metadata, seconds, stages)


def warm_for_compile() -> None:
    """Do in this process, once, the pure-Python work every compile starts
    with: Triton's cache key hashes its own sources and library (most of a
    cold compile's time). A process forked afterwards inherits the result."""
    from triton.runtime.cache import triton_key

    triton_key()


def _parse_text(text: str, target: str) -> Any:
    """Parse and verify TTGIR text in Triton's context; check its target."""
    from triton._C.libtriton import ir

    context = _triton_context(target)
    with _workdir() as tmp:
        module = ir.parse_mlir_module(_write(text, tmp), context)
    op = module.get_operation()
    declared = op.get_str_attr("ttg.target")
    if declared is not None and declared != target_attr(target):
        raise TritonError(
            f'{_SHOWN_NAME}: error: module declares ttg.target = "{declared}" but the '
            f'requested target is "{target_attr(target)}"'
        )
    if op.get_int_attr("ttg.num-warps") is None:
        raise TritonError(
            f'{_SHOWN_NAME}: error: module has no "ttg.num-warps" attribute (Triton requires it)'
        )
    return module


def validate(ttgir_text: str, target: str = "gfx1250") -> None:
    """Parse and verify TTGIR text with Triton's own dialects (no GPU needed).

    Raises:
        TritonError: with ``<ttgir>:line:col: error: ...`` lines, if the parser
            or a verifier rejects the text, if the module's ``ttg.target`` is
            not ``target``, or if Triton aborts on it.
        ValueError: for an unknown ``target`` name.
    """
    gpu_target(target)  # a ValueError for a bad name, before any work
    _text_work(_validate_job, ttgir_text, target)


def _validate_job(report: Callable[[Any], None], text: str, target: str) -> None:
    _parse_text(text, target)


def compile_ttgir(
    ttgir_text: str, target: str = "gfx1250", options: dict[str, Any] | None = None
) -> CompiledArtifact:
    """Compile TTGIR text to a binary with Triton's backend (in a child).

    Raises:
        TritonError: with the clean diagnostics if parsing, a pass or LLVM
            fails, or if Triton aborts.
    """
    gpu_target(target)
    return _text_work(_compile_ttgir_job, ttgir_text, target, options)


def _compile_ttgir_job(
    report: Callable[[Any], None], text: str, target: str, options: dict[str, Any] | None
) -> CompiledArtifact:
    _parse_text(text, target)
    return compile_module(text, target, options)


def _text_work(work: Callable[..., Any], *args: Any) -> Any:
    run = run_in_worker(work, *args)
    if run.ok:
        return run.result
    diags = parse_diagnostics(run.stderr)
    lines = [str(d) for d in diags if d.line] or [str(d) for d in diags]
    if run.exception and not lines:
        reason = run.exception.removeprefix("RuntimeError: ")
        if reason == _PARSE_FAILED:
            # Some of Triton's attribute parsers fail without a diagnostic.
            reason = (
                "Triton could not parse the text and gave no reason (look for unknown "
                "or missing keys in its attributes)"
            )
        lines = [f"{_SHOWN_NAME}: error: {reason}"]
    if run.died:
        lines = [*lines, *run.assertions(), f"{_SHOWN_NAME}: error: Triton {run.died}"]
    else:  # MLIR's crash recovery caught an abort: its assertion still says why
        lines = [*lines, *run.assertions()]
    raise TritonError("\n".join(dict.fromkeys(lines)), run.stderr, diags)


# ---------------------------------------------------------------------------
# Diagnostics Triton printed

_DIAG = re.compile(
    r"""^(?:loc\("(?P<lpath>[^"]*)":(?P<lline>\d+):(?P<lcol>\d+)\)
        |(?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+)
        |<unknown>:0)
        :\s(?P<sev>error|warning|note|remark):\s?(?P<msg>.*)$""",
    re.VERBOSE,
)


def _is_our_file(path: str) -> bool:
    """Whether ``path`` is a temporary TTGIR file this module wrote."""
    p = Path(path)
    return p.name == f"{_STEM}.ttgir" and p.parent.name.startswith(_TMP_PREFIX)


def parse_diagnostics(stderr: str) -> list[Diag]:
    """The diagnostic lines among what Triton printed, in order, deduplicated."""
    out: list[Diag] = []
    for raw in stderr.splitlines():
        m = _DIAG.match(raw.rstrip())
        if not m:
            continue
        path = m.group("lpath") or m.group("path")
        if path is None:
            d = Diag(m.group("sev"), "<unknown>", 0, 0, m.group("msg"))
        else:
            row = int(m.group("lline") or m.group("line"))
            col = int(m.group("lcol") or m.group("col"))
            where = _SHOWN_NAME if _is_our_file(path) else path
            d = Diag(m.group("sev"), where, row, col, m.group("msg"))
        if d not in out:
            out.append(d)
    return out


# ---------------------------------------------------------------------------
# Isolation


def import_triton() -> None:
    """Python imports only: Triton, its backends and Gluon's layout classes,
    which the hand-off builds with."""
    import triton
    import triton._C.libtriton
    import triton.compiler.compiler
    import triton.experimental.gluon.language.amd.cdna5  # noqa: F401


def _prepare_worker() -> None:
    """What a new worker does once, before its first job: import Triton and
    hash its cache key (:func:`warm_for_compile`)."""
    import_triton()
    warm_for_compile()


#: The workers that run this process's Triton work (see :mod:`.isolation`).
WORKERS = WorkerPool(prepare=_prepare_worker, scratch=_TMP_PREFIX)


def run_in_worker(
    work: Callable[..., Any],
    *args: Any,
    first: Callable[[Callable[[Any], None]], Any] | None = None,
) -> Isolated:
    """Run ``work(report, *args)`` in a long-lived worker process (Triton
    imported there, its cache key hashed once); never raises for what it does.

    ``work`` is a module-level function, ``args`` and its result picklable;
    ``report(item)`` sends ``item`` back at once, so the last report survives
    an abort. A worker that aborts is replaced for the next job. ``first``
    (the same work as a closure) is what a worker forked for this call runs.
    """
    return WORKERS.run(work, *args, first=first)


def run_isolated(work: Callable[[Callable[[Any], None]], Any]) -> Isolated:
    """Run ``work(report)`` (any callable, a closure too) in a forked child;
    never raises for what it does.

    ``report(item)`` sends ``item`` (picklable) to the parent at once, so the
    last report survives an abort. The return value must be picklable.
    Triton is imported (Python only) before forking, so each child starts
    warm. Repeated work is cheaper in :func:`run_in_worker`.
    """
    import_triton()
    return run_forked(work)
