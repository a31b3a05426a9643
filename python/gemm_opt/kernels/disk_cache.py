"""Kernels built on demand, kept in memory and on disk.

A CUDA call whose kernel no bundle holds (a configuration passed as
``config=``, or a schedule the bundles were built without) is compiled where
the compiler is installed, and kept:

* in memory, for the process (the runtime's kernel store keeps what it got);
* on disk, under ``$GEMM_OPT_CACHE_DIR`` (default
  ``$XDG_CACHE_HOME/gemm-opt`` or ``~/.cache/gemm-opt``), one single-kernel
  bundle file per kernel: ``<target folder>/<kernel name>-<key>.bundle``.

The key (:func:`cache_key`) hashes everything that changes the binary: the
target, every field of the :class:`~gemm_opt.core.schedules.KernelSpec`
(dtype, block shape, GROUP_M, warps, stages, schedule, reduction, grouped
form, trans_b, alignment, chiplets), the Triton and gemm-opt versions, a
fingerprint of gemm-opt's sources (:func:`source_fingerprint`) and the
bundle format version. Entries are written atomically (a temporary file
in the same folder, then ``os.replace``), so processes filling the cache at
once never see half a file and leave one valid entry; an unreadable or
mismatched entry is rebuilt and replaced.

Without the compiler (the GPU machine: torch only) nothing is installed and
a missing kernel is :class:`~gemm_opt.runtime.gemm.KernelMissing`.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import json
import os
import threading
import warnings
from pathlib import Path
from typing import Any

import gemm_opt
from gemm_opt.core import schedules as S
from gemm_opt.runtime import bundle as B
from gemm_opt.runtime import gemm as rt

#: Environment variable naming the on-disk cache folder.
CACHE_DIR_ENV = "GEMM_OPT_CACHE_DIR"
#: Hex digits of the key in an entry's file name.
KEY_DIGITS = 24

_lock = threading.Lock()
_memory: dict[str, B.BundleKernel] = {}


def cache_dir() -> Path:
    """The cache folder: ``$GEMM_OPT_CACHE_DIR``, else ``$XDG_CACHE_HOME/gemm-opt``, else
    ``~/.cache/gemm-opt``."""
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "gemm-opt"


def triton_version() -> str | None:
    """The installed Triton's version (read from its metadata: Triton is not imported)."""
    try:
        return importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        return None


@functools.cache
def source_fingerprint() -> str:
    """SHA-256 of the gemm_opt package's Python sources (relative path and bytes of
    each ``.py`` file, in order), once per process.

    The version string does not change while the compiler's code does (a
    checkout between two commits, an edited pass), and a kernel built by one
    compiler must not be served to another: the fingerprint keys the entries
    too.
    """
    root = Path(gemm_opt.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def versions() -> dict[str, str]:
    """The tool versions in every key (the compiler's by version and by source)."""
    return {
        "triton": triton_version() or "none",
        "gemm_opt": gemm_opt.__version__,
        "gemm_opt_source": source_fingerprint(),
        "bundle_format": f"{B.FORMAT}/{B.VERSION}",
    }


def cache_key(spec: S.KernelSpec, target: str, tools: dict[str, str] | None = None) -> str:
    """The hex SHA-256 of the canonical JSON of everything that changes the binary."""
    doc = {"target": target, "spec": dataclasses.asdict(spec), **(tools or versions())}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def entry_path(
    spec: S.KernelSpec, target: str, root: Path | None = None, tools: dict[str, str] | None = None
) -> Path:
    """The file of ``spec``'s entry (named so that a listing reads as kernel names)."""
    key = cache_key(spec, target, tools)[:KEY_DIGITS]
    return (root or cache_dir()) / rt.target_folder(target) / f"{spec.name}-{key}.bundle"


def _matches(kernel: B.BundleKernel, spec: S.KernelSpec, target: str, tools: dict) -> bool:
    """Whether a read entry is the kernel of ``spec`` built by these tools (a hash
    collision or a hand-edited file is rebuilt, not launched)."""
    return (
        kernel.name == spec.name
        and kernel.target == target
        and kernel.triton == tools["triton"]
        and kernel.gemm_opt == tools["gemm_opt"]
        and kernel.meta == {**kernel.meta, **dataclasses.asdict(spec)}
    )


def _read(path: Path, spec: S.KernelSpec, target: str, tools: dict) -> B.BundleKernel | None:
    try:
        bundle = B.read_bundle(path)
    except B.BundleError:
        return None  # absent, torn by a crash before the rename, or malformed in any way: rebuild
    if len(bundle) != 1 or not _matches(bundle.kernels[0], spec, target, tools):
        return None
    return bundle.kernels[0]


def build(spec: S.KernelSpec, target: str) -> B.BundleKernel:
    """Compile ``spec`` for ``target`` (needs the compiler)."""
    from gemm_opt.kernels.build_bundles import build as build_bundle

    return build_bundle(target, [spec], quiet=True).kernels[0]


def load_or_build(
    spec: S.KernelSpec, target: str = "cuda:90", root: str | os.PathLike[str] | None = None
) -> B.BundleKernel:
    """``spec``'s kernel: from memory, else from the disk cache, else built and stored."""
    tools = versions()
    path = entry_path(spec, target, Path(root) if root else None, tools)
    key = str(path)
    with _lock:
        hit = _memory.get(key)
    if hit is not None:
        return hit
    kernel = _read(path, spec, target, tools)
    if kernel is None:
        kernel = build(spec, target)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            B.Bundle((kernel,)).write(path)  # temporary file + os.replace
        except OSError as e:  # a read-only or full disk costs the next process a build
            warnings.warn(
                f"gemm-opt: cannot write the kernel cache entry {path} ({e}); "
                f"the kernel is kept in memory only (set ${CACHE_DIR_ENV} to a writable folder)",
                RuntimeWarning,
                stacklevel=2,
            )
    with _lock:
        return _memory.setdefault(key, kernel)


def clear_memory() -> None:
    """Forget the in-memory kernels (the disk cache stays)."""
    with _lock:
        _memory.clear()


def install() -> bool:
    """Let the runtime build missing kernels through this cache, where the compiler is
    installed; returns whether it did."""
    if not rt.compiler_installed():
        return False
    rt.set_builder(_builder)
    return True


def _builder(spec: S.KernelSpec, target: str) -> Any:
    return load_or_build(spec, target)


__all__ = [
    "CACHE_DIR_ENV",
    "cache_dir",
    "cache_key",
    "clear_memory",
    "entry_path",
    "install",
    "load_or_build",
    "versions",
]
