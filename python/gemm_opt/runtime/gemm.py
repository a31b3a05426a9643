"""Launch the schedule GEMM kernels of bundles on CUDA tensors, with only torch installed.

The GPU half of ``gemm_opt.matmul`` and the grouped API. Kernels come from the
bundle files of one directory per target (``gemm_opt/kernels/bundles/cuda90/``
by default, ``$GEMM_OPT_BUNDLE_DIR`` to override, built by
``python -m gemm_opt.kernels.build_bundles --target cuda:90``), found by the
name of their :class:`~gemm_opt.core.schedules.KernelSpec`.

The host contract, kept on every launch:

* the workspace (counters, flags, fp32 partials:
  :func:`~gemm_opt.core.schedules.workspace_layout`) is owned by the call:
  allocated from PyTorch's caching allocator on the launch stream, so two
  launches that may overlap (two streams, or one stream captured into two
  graphs) never share it, and the allocator reuses the memory only after
  the launch on that stream;
* its counters and flags are zeroed on the launch stream right before the
  launch (one memset of the ``sync`` part; partials are always written
  before they are read, so they are never zeroed); atomic stream-K zeroes
  C the same way;
* persistent kinds launch ``num_programs`` programs (default: the number of
  resident programs, compute units x occupancy: :func:`resident_programs`);
  stream-K with a fix-up reduction waits on other programs' flags, so its
  grid must be co-resident: at most that many programs are allowed;
* a kernel with an aligned twin (the same spec, ``aligned=True``: copies
  straight to shared memory) runs as the twin whenever the arguments satisfy
  the twin's divisibility facts, checked by the launcher's own checks
  (:meth:`~gemm_opt.runtime.launch.Kernel.accepts`), else as itself.

Imports only the standard library and :mod:`gemm_opt.core.schedules` at
module level; torch when a kernel launches.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from gemm_opt.core import schedules as S
from gemm_opt.runtime.bundle import BundleError, BundleKernel, read_bundle
from gemm_opt.runtime.launch import Kernel

#: Environment variable naming the bundle directory (it holds one folder per target).
BUNDLE_DIR_ENV = "GEMM_OPT_BUNDLE_DIR"
#: Where the bundles are by default.
DEFAULT_BUNDLE_DIR = Path(__file__).resolve().parents[1] / "kernels" / "bundles"
#: The command that builds them (named in errors).
BUILD_COMMAND = "python -m gemm_opt.kernels.build_bundles --target {target}"


class KernelMissing(BundleError):
    """No bundle holds the kernel a call needs; the message says how to build it."""


def target_folder(target: str) -> str:
    """``cuda:90`` -> ``cuda90`` (the folder of a target's bundles)."""
    return target.replace(":", "")


def bundle_dir(target: str, root: str | os.PathLike[str] | None = None) -> Path:
    base = Path(root or os.environ.get(BUNDLE_DIR_ENV) or DEFAULT_BUNDLE_DIR)
    return base / target_folder(target)


class KernelStore:
    """The kernels of every bundle in one target's folder, by name (read on first use)."""

    def __init__(self, target: str, root: str | os.PathLike[str] | None = None) -> None:
        self.target = target
        self.dir = bundle_dir(target, root)
        self._kernels: dict[str, Kernel] | None = None
        self._lock = threading.Lock()

    def _load(self) -> dict[str, Kernel]:
        kernels: dict[str, Kernel] = {}
        files = sorted(self.dir.glob("*.bundle")) if self.dir.is_dir() else []
        for path in files:
            for spec in read_bundle(path):
                if spec.name in kernels:
                    raise BundleError(f"{path}: kernel {spec.name!r} is also in another bundle")
                kernels[spec.name] = Kernel(spec)
        return kernels

    def kernels(self) -> dict[str, Kernel]:
        with self._lock:
            if self._kernels is None:
                self._kernels = self._load()
            return self._kernels

    def get(self, name: str) -> Kernel:
        kernels = self.kernels()
        kernel = kernels.get(name)
        if kernel is None:
            where = f"{self.dir}" if kernels else f"{self.dir} (no bundles there)"
            raise KernelMissing(
                f"no compiled kernel {name!r} for {self.target} in {where}; build the "
                f"bundles with `{BUILD_COMMAND.format(target=self.target)}` "
                f"(or point ${BUNDLE_DIR_ENV} at a folder holding {target_folder(self.target)}/)"
            )
        return kernel

    def has(self, name: str) -> bool:
        return name in self.kernels()


_stores: dict[tuple[str, str], KernelStore] = {}
_stores_lock = threading.Lock()


def store(target: str = "cuda:90") -> KernelStore:
    """The process's kernel store of ``target`` (re-read when ``$GEMM_OPT_BUNDLE_DIR`` changes)."""
    key = (target, str(bundle_dir(target)))
    with _stores_lock:
        s = _stores.get(key)
        if s is None:
            s = _stores[key] = KernelStore(target)
        return s


def sm_count(torch: Any, device: Any) -> int:
    return int(torch.cuda.get_device_properties(device).multi_processor_count)


def resident_programs(spec: S.KernelSpec, device: Any, target: str = "cuda:90") -> int:
    """The number of resident programs of ``spec`` on ``device``: compute units x occupancy.

    The occupancy (CTAs one SM holds, from the driver) is the smaller of the
    kernel's and its aligned twin's, whichever of them the launch picks, so a
    grid of this size is co-resident (what stream-K's fix-up waits need).
    """
    import torch

    index = torch.device(device).index
    if index is None:
        index = torch.cuda.current_device()
    st = store(target)
    kernels = [st.get(spec.name)]
    twin = replace(spec, aligned=True)
    if not spec.aligned and st.has(twin.name):
        kernels.append(st.get(twin.name))
    per_sm = min(k.resident_per_sm(index) for k in kernels)
    return sm_count(torch, index) * max(per_sm, 1)


def bind_arguments(bundled: BundleKernel, name: str, values: Mapping[str, Any]) -> list[Any]:
    """The bundle kernel's arguments in its order, from ``values`` by name."""
    args = []
    for arg in bundled.args:
        if arg.name in values:
            args.append(values[arg.name])
        elif arg.constexpr is not None:
            args.append(arg.constexpr)
        else:
            raise KernelMissing(
                f"{name}: the bundle's kernel takes argument {arg.name!r}, "
                "which the API does not provide (rebuild the bundles)"
            )
    return args


def select_kernel(
    st: KernelStore, spec: S.KernelSpec, values: Mapping[str, Any]
) -> tuple[Kernel, list[Any]]:
    """The kernel that runs ``spec`` on ``values`` and its bound arguments: the
    aligned twin where the store has one and ``values`` pass its launch checks
    (divisibility facts included), else ``spec``'s own kernel."""
    twin = replace(spec, aligned=True)
    if not spec.aligned and st.has(twin.name):
        aligned = st.get(twin.name)
        args = bind_arguments(aligned.spec, twin.name, values)
        if aligned.accepts(*args):
            return aligned, args
    kernel = st.get(spec.name)
    return kernel, bind_arguments(kernel.spec, spec.name, values)


def launch_grid(spec: S.KernelSpec, num_programs: int, total_tiles: int) -> tuple[int, int, int]:
    """The launch grid: one program per tile (data-parallel), else ``num_programs`` (1-D)."""
    return (S.grid_size(spec.kind, total_tiles, num_programs), 1, 1)


def allocate_workspace(torch: Any, layout: S.WorkspaceLayout, device: Any) -> tuple[Any, int, int]:
    """A fresh workspace for one launch: (buffer, sync address, partials address).

    Allocated from the caching allocator on the current stream (so no other
    launch that may overlap this one gets it) with its ``sync`` part (counters
    and flags) zeroed by a memset on that stream, ordered before the launch.
    Partials are left as they are: every partial is written before a flag
    releases it. Keep the buffer alive until the launch is enqueued.
    """
    workspace = torch.empty(max(layout.total_bytes, 16), dtype=torch.uint8, device=device)
    if layout.sync_bytes:
        workspace[: layout.sync_bytes].zero_()
    base = workspace.data_ptr()
    partials = base + (layout.partials_byte_offset if layout.partial_elements else 0)
    return workspace, base, partials


def launch(
    spec: S.KernelSpec,
    values: Mapping[str, Any],
    *,
    num_programs: int,
    total_tiles: int,
    target: str = "cuda:90",
) -> None:
    """Launch ``spec``'s kernel on the current stream of the tensors' device.

    ``values`` holds the kernel's tensors and scalars by name
    (:func:`~gemm_opt.core.schedules.kernel_args`) except ``sync`` and
    ``partials``, which this call allocates and zeroes per the host contract.
    ``total_tiles`` sizes a data-parallel grid (an upper bound is fine: extra
    programs find no tile).
    """
    import torch

    st = store(target)
    c = values["c"]
    device = c.device
    layout = S.workspace_layout(
        spec.kind, spec.reduction, num_programs, spec.num_xcds, spec.block_m, spec.block_n
    )
    with torch.cuda.device(device):  # its current stream: where the launch goes
        workspace, sync, partials = allocate_workspace(torch, layout, device)
        if layout.zero_output:
            c.zero_()
        bound = {**values, "sync": sync, "partials": partials}
        kernel, args = select_kernel(st, spec, bound)
        grid = launch_grid(spec, num_programs, total_tiles)
        kernel(*args, grid=grid)
    # The caching allocator reuses `workspace` only after the launch on this stream.
    del workspace
