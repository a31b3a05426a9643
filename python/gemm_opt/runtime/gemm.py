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
  the launch on that stream (a schedule whose layout is empty, data-parallel,
  persistent and atomic stream-K, takes no workspace argument and gets none);
* its counters and flags are zeroed on the launch stream right before the
  launch (one memset of the ``sync`` part; partials are always written
  before they are read, so they are never zeroed); atomic stream-K zeroes
  C the same way;
* persistent kinds launch ``num_programs`` programs (default: the number of
  resident programs, compute units x occupancy: :func:`resident_programs`);
  stream-K with a fix-up reduction waits on other programs' flags, so its
  grid must be co-resident: at most that many programs are allowed;
* a kernel with twins (the same spec with ``aligned=True, tma=True``: TMA
  copies, or ``aligned=True``: copies straight to shared memory) runs as the
  first twin whose divisibility facts the arguments satisfy, checked by the
  launcher's own checks (:meth:`~gemm_opt.runtime.launch.Kernel.accepts`),
  else as itself.

A kernel no bundle holds is built on demand where the compiler is installed
(:func:`set_builder`; :mod:`gemm_opt.kernels.disk_cache` keeps such kernels
on disk), else :class:`KernelMissing` says how to build the bundles. A GPU
without kernels (:data:`CAPABILITY_TARGETS`) is a RuntimeError naming the
ones gemm-opt has (:func:`device_target`).

Every decision that depends only on the spec, the device and the facts of
the arguments (the kernel among twins, its checked arguments, the grid, the
workspace layout) is made once, by :func:`prepare_launch`; the API keeps the
result in its call's plan (:mod:`gemm_opt.runtime.plan`), so a later call's
host cost is the packing, the workspace when there is one, and the launch.

Imports only the standard library and :mod:`gemm_opt.core.schedules` at
module level; torch when a kernel launches.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from gemm_opt.core import schedules as S
from gemm_opt.runtime.bundle import BundleError, BundleKernel, read_bundle
from gemm_opt.runtime.launch import MAX_GRID, Kernel

#: Environment variable naming the bundle directory (it holds one folder per target).
BUNDLE_DIR_ENV = "GEMM_OPT_BUNDLE_DIR"
#: Where the bundles are by default.
DEFAULT_BUNDLE_DIR = Path(__file__).resolve().parents[1] / "kernels" / "bundles"
#: The command that builds them (named in errors).
BUILD_COMMAND = "python -m gemm_opt.kernels.build_bundles --target {target}"


#: The compute capabilities gemm-opt has kernels for, and the target of each.
CAPABILITY_TARGETS = {(9, 0): "cuda:90"}
#: The GPUs of those capabilities, named in errors.
CAPABILITY_GPUS = {(9, 0): "H100, H200"}


class KernelMissing(BundleError):
    """No bundle holds the kernel a call needs; the message says how to build it."""


def device_target(torch: Any, device: Any) -> str:
    """The compiler target of a CUDA device; RuntimeError naming what is supported otherwise."""
    return _target_of(torch, device)


def _target_of(torch: Any, device: Any) -> str:
    cap = tuple(int(x) for x in torch.cuda.get_device_capability(device))
    target = CAPABILITY_TARGETS.get(cap)  # type: ignore[call-overload]
    if target is None:
        have = ", ".join(
            f"sm_{c[0]}{c[1]} ({CAPABILITY_GPUS[c]})" for c in sorted(CAPABILITY_TARGETS)
        )
        raise RuntimeError(
            f"gemm-opt has kernels for {have} only; CUDA device {device} "
            f"({torch.cuda.get_device_name(device)}) is sm_{cap[0]}{cap[1]}"
        )
    return target


@functools.cache
def compiler_installed() -> bool:
    """Whether kernels can be built here (the MLIR bindings and Triton are installed),
    found without importing either (once per process: every CUDA call asks)."""
    import importlib.metadata
    import importlib.util

    try:
        if importlib.util.find_spec("torch_mlir") is None:
            return False
        importlib.metadata.version("triton")
    except (ImportError, ValueError, importlib.metadata.PackageNotFoundError):
        return False
    return True


#: Builds a kernel no bundle holds (``(spec, target) -> BundleKernel``); installed by
#: :func:`gemm_opt.kernels.disk_cache.install` where the compiler is, else None.
Builder = Callable[[S.KernelSpec, str], BundleKernel]
_builder: Builder | None = None


def has_builder() -> bool:
    """Whether a builder of missing kernels is installed."""
    return _builder is not None


def builder() -> Builder | None:
    """The installed builder of missing kernels (None: none)."""
    return _builder


def set_builder(builder: Builder | None) -> None:
    """Install (or remove, with None) the builder of kernels the bundles lack."""
    global _builder
    _builder = builder


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
        #: Memos of decisions that depend only on this store's kernels (see
        #: :func:`select_kernel`, :func:`resident_programs`).
        self._selections: dict[Any, tuple[Kernel, tuple[Any, ...]]] = {}
        self._fact_plans: dict[Any, tuple[Any, ...]] = {}

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

    def lookup(self, spec: S.KernelSpec, *, build: bool = True) -> Kernel | None:
        """The kernel of ``spec``: bundled, else built on demand by the installed builder
        (when ``build``; kept for the process), else None."""
        kernels = self.kernels()
        kernel = kernels.get(spec.name)
        if kernel is None and build and _builder is not None:
            built = _builder(spec, self.target)
            with self._lock:
                kernel = kernels.setdefault(spec.name, Kernel(built))
        return kernel

    def for_spec(self, spec: S.KernelSpec) -> Kernel:
        """:meth:`lookup`, or :class:`KernelMissing` saying how to build the bundles."""
        return self.lookup(spec) or self.get(spec.name)

    def twins(self, spec: S.KernelSpec) -> list[tuple[S.KernelSpec, Kernel]]:
        """The twins of ``spec`` (:func:`twins`, preferred first) it has: bundled, or
        built on demand for the pipelined bodies, the ones the bundles pair with twins."""
        build = S.pipelined(spec.num_warps)
        found = ((t, self.lookup(t, build=build)) for t in _twins_of(spec))
        return [(t, k) for t, k in found if k is not None]


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
    """The device's compute units."""
    return int(torch.cuda.get_device_properties(device).multi_processor_count)


def resident_programs(spec: S.KernelSpec, device: Any) -> int:
    """The number of resident programs of ``spec`` on ``device``: compute units x occupancy.

    The occupancy (CTAs one SM holds, from the driver) is the smallest of the
    kernel's and its twins', whichever of them the launch picks, so a
    grid of this size is co-resident (what stream-K's fix-up waits need).
    """
    import torch

    index = torch.device(device).index
    if index is None:
        index = torch.cuda.current_device()
    st = store(device_target(torch, index))
    kernels = [st.for_spec(spec), *(k for _, k in st.twins(spec))]
    per_sm = min(k.resident_per_sm(index) for k in kernels)
    return sm_count(torch, index) * max(per_sm, 1)


def _binding(bundled: BundleKernel, name: str, names: Any) -> tuple[tuple[str | None, Any], ...]:
    """How :func:`bind_arguments` fills the kernel's arguments from values named ``names``:
    ``(name, None)`` takes the value, ``(None, c)`` the specialized constant ``c``."""
    out: list[tuple[str | None, Any]] = []
    for arg in bundled.args:
        if arg.name in names:
            out.append((arg.name, None))
        elif arg.constexpr is not None:
            out.append((None, arg.constexpr))
        else:
            raise KernelMissing(
                f"{name}: the bundle's kernel takes argument {arg.name!r}, "
                "which the API does not provide (rebuild the bundles)"
            )
    return tuple(out)


def _bind(binding: tuple[tuple[str | None, Any], ...], values: Mapping[str, Any]) -> list[Any]:
    return [values[n] if n is not None else c for n, c in binding]


def bind_arguments(bundled: BundleKernel, name: str, values: Mapping[str, Any]) -> list[Any]:
    """The bundle kernel's arguments in its order, from ``values`` by name."""
    return _bind(_binding(bundled, name, values), values)


def _twins_of(spec: S.KernelSpec) -> tuple[S.KernelSpec, ...]:
    if spec.aligned or spec.tma:
        return ()
    out = [replace(spec, aligned=True)]
    if S.tma_copies(spec.num_warps, spec.block_m):
        out.insert(0, replace(spec, aligned=True, tma=True))
    if narrow_twins(spec):
        out += [replace(spec, aligned=True, vector_bytes=v) for v in S.VECTOR_WIDTHS[1:]]
    return tuple(out)


def narrow_twins(spec: S.KernelSpec) -> bool:
    """Whether a plain ``spec`` has narrow twins (``cp.async`` of 8 and 4 bytes, for
    sizes a multiple of 4 or 2 elements but not of 8): the dense data-parallel
    kernels with the pipelined body, the default schedule's."""
    return spec.kind == "data-parallel" and spec.grouped == "none" and S.pipelined(spec.num_warps)


def twins(spec: S.KernelSpec) -> list[S.KernelSpec]:
    """The twins of a plain ``spec``, preferred first: TMA copies, aligned 16-byte
    ``cp.async``, then where :func:`narrow_twins` 8- and 4-byte ``cp.async``."""
    return list(_twins_of(spec))


#: A value's facts (see :func:`_facts`) that no fact plan covers: the memo is skipped.
_NO_MEMO = object()


def _fact_plan(
    st: KernelStore, spec: S.KernelSpec
) -> tuple[tuple[str, tuple[int, ...], tuple[Any, ...], bool], ...]:
    """What the launch checks of ``spec``'s twins look at, by argument name: the
    divisibilities any twin requires (their least common multiple: a value's
    remainder by it decides each), the integer ranges, and whether some twin
    specialized it to a constant (``(name, lcm, ranges, exact)``). A call's facts
    under this plan (:func:`_facts`) decide which twin accepts it, so they key the
    memo of :func:`select_kernel`."""
    key = (spec, _builder)
    plan = st._fact_plans.get(key)
    if plan is None:
        from gemm_opt.runtime.launch import _int_range

        divs: dict[str, set[int]] = {}
        ranges: dict[str, set[tuple[int, int]]] = {}
        exact: set[str] = set()  # constexprs (compared by value) in some twin
        for _, kernel in st.twins(spec):
            for arg in kernel.spec.args:
                divs.setdefault(arg.name, set())
                ranges.setdefault(arg.name, set())
                if arg.constexpr is not None:
                    exact.add(arg.name)
                # Equivalent mutant: > -> >=; a divisibility of 1 leaves the lcm as it is.
                if arg.divisibility > 1:
                    divs[arg.name].add(arg.divisibility)
                if arg.is_pointer:
                    ranges[arg.name].add((0, 2**64 - 1))
                elif arg.constexpr is None and arg.type.startswith(("i", "u")):
                    ranges[arg.name].add(_int_range(arg.type))
        plan = st._fact_plans[key] = tuple(
            (name, math.lcm(*divs[name]), tuple(sorted(ranges[name])), name in exact)
            for name in divs
        )
    return plan


def _facts(plan: Any, values: Mapping[str, Any]) -> Any:
    """The facts of ``values`` the twins' launch checks depend on (:func:`_fact_plan`):
    per named value, its type, its remainder by the divisibilities' lcm, which
    ranges it fits, and a tensor's dtype and device; a constant by its value.
    :data:`_NO_MEMO` when a value is of no kind this covers."""
    out: list[Any] = []
    for name, lcm, ranges, exact in plan:
        v = values.get(name, _NO_MEMO)
        t = type(v)
        if t is int or t is bool:
            # Equivalent mutant: 0 -> 1; a leading bit, the same for every value of a plan.
            fits = 0
            for lo, hi in ranges:
                # Equivalent mutant: << 1 -> << 2; one bit per range either way, none lost.
                fits = fits << 1 | (lo <= v <= hi)
            out.append((t, v) if exact else (t, v % lcm, fits))
        elif v is _NO_MEMO:
            out.append(None)
        elif hasattr(v, "data_ptr"):
            out.append(
                (t, getattr(v, "dtype", None), getattr(v, "device", None), v.data_ptr() % lcm)
            )
        elif t is float:
            out.append((t, v))
        else:
            return _NO_MEMO
    return tuple(out)


def select_kernel(
    st: KernelStore, spec: S.KernelSpec, values: Mapping[str, Any]
) -> tuple[Kernel, list[Any]]:
    """The kernel that runs ``spec`` on ``values`` and its bound arguments: the
    first twin (:func:`twins`) the store has (or builds) whose launch checks
    ``values`` pass (divisibility facts included; a TMA twin also needs M, N
    and K of at least 1, its descriptors' smallest dimensions), else
    ``spec``'s own kernel.

    The choice is memoized per store by (spec, builder, the facts of the values
    the twins' checks look at): a call whose facts were seen skips the checks
    of the twins it would try (the launch still checks the chosen kernel's
    arguments in full)."""
    usable = min(values["M"], values["N"], values["K"]) >= 1
    facts = _facts(_fact_plan(st, spec), values)
    key = (spec, _builder, usable, facts) if facts is not _NO_MEMO else None
    hit = st._selections.get(key) if key is not None else None
    if hit is not None:
        return hit[0], _bind(hit[1], values)
    kernel, binding = _select(st, spec, values, usable)
    if key is not None:
        if len(st._selections) >= SELECTION_MEMO_SIZE:
            st._selections.clear()
        st._selections[key] = (kernel, binding)
    return kernel, _bind(binding, values)


#: Entries of a store's memo of kernel choices before it is cleared.
SELECTION_MEMO_SIZE = 4096


def _select(
    st: KernelStore, spec: S.KernelSpec, values: Mapping[str, Any], usable: bool
) -> tuple[Kernel, tuple[tuple[str | None, Any], ...]]:
    for twin, kernel in st.twins(spec):
        if twin.tma and not usable:
            continue  # a TMA descriptor's dimensions are at least 1
        binding = _binding(kernel.spec, kernel.name, values)
        if kernel.accepts(*_bind(binding, values)):
            return kernel, binding
    kernel = st.for_spec(spec)
    return kernel, _binding(kernel.spec, spec.name, values)


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
    # Equivalent mutant: 16 -> 17; a kernel reads total_bytes of it at most (the floor only
    # makes an empty layout's buffer an allocation), and the caching allocator hands out
    # 512-byte blocks either way.
    workspace = torch.empty(max(layout.total_bytes, 16), dtype=torch.uint8, device=device)
    if layout.sync_bytes:
        workspace[: layout.sync_bytes].zero_()
    base = workspace.data_ptr()
    partials = base + (layout.partials_byte_offset if layout.partial_elements else 0)
    return workspace, base, partials


class Prepared:
    """A launch with its decisions made (the kernel among twins, its checked arguments,
    the grid, the workspace layout): :func:`prepare_launch` makes it, each call launches it
    on one call's tensors, keeping the host contract.

    Valid for a call whose scalars equal the first call's and whose tensors have
    the same dtypes, device and address divisibility (the caller keys it by
    them: :mod:`gemm_opt.runtime.plan`): its addresses replace the first call's.
    Every call gets a fresh workspace with its counters zeroed on the launch
    stream, and C zeroed for atomic stream-K; an empty grid launches nothing.
    """

    __slots__ = ("c_index", "device", "grid", "kernel", "layout", "slots", "sync_slots", "values")

    def __init__(
        self,
        kernel: Kernel,
        values: list[Any],
        names: tuple[str, ...],
        device: int,
        grid: tuple[int, int, int],
        layout: S.WorkspaceLayout,
    ) -> None:
        positions = kernel.value_positions()
        index = {arg.name: i for i, arg in enumerate(kernel.spec.args)}

        def slot(name: str) -> int | None:
            i = index.get(name)
            return positions.get(i) if i is not None else None

        self.kernel = kernel
        self.values = values
        #: Positions among ``values`` of the tensors' addresses, in the order of ``names``.
        self.slots = tuple(slot(n) for n in names)
        self.sync_slots = (slot("sync"), slot("partials"))
        self.c_index = names.index("c")
        self.device = device
        self.grid = grid
        self.layout = layout

    def __call__(self, *tensors: Any) -> None:
        """Launch on ``tensors`` (in the order of the names it was prepared with; C
        among them, named ``c``) on the current stream of their device."""
        values = self.values.copy()
        for pos, t in zip(self.slots, tensors, strict=True):
            if pos is not None:
                values[pos] = t.data_ptr()
        c = tensors[self.c_index]
        layout = self.layout
        workspace = None
        if layout.total_bytes:
            import torch

            workspace, sync, partials = allocate_workspace(torch, layout, c.device)
            ps, pp = self.sync_slots
            if ps is not None:
                values[ps] = sync
            if pp is not None:
                values[pp] = partials
        if layout.zero_output:
            c.zero_()
        if 0 not in self.grid:
            self.kernel.launch_values(values, self.device, *self.grid)
        del workspace  # reused by the caching allocator only after the launch on this stream


def prepare_launch(
    spec: S.KernelSpec,
    values: Mapping[str, Any],
    *,
    num_programs: int,
    total_tiles: int,
    target: str | None = None,
    names: tuple[str, ...] = ("c",),
) -> Prepared:
    """The launch of ``spec``'s kernel on ``values`` (:class:`Prepared`), checked.

    ``values`` holds the kernel's tensors and scalars by name
    (:func:`~gemm_opt.core.schedules.kernel_args`) except ``sync`` and
    ``partials``, which each launch allocates and zeroes per the host contract.
    ``total_tiles`` sizes a data-parallel grid (an upper bound is fine: extra
    programs find no tile). ``target``: the device's (:func:`device_target`)
    when None. ``names``: the tensors (``c`` among them) each launch supplies.
    """
    import torch

    device = values["c"].device
    st = store(device_target(torch, device) if target is None else target)
    layout = S.workspace_layout(
        spec.kind, spec.reduction, num_programs, spec.num_xcds, spec.block_m, spec.block_n
    )
    # The workspace's addresses are 0 here (16-byte multiples, as every fresh
    # workspace's are): each launch puts its own in their slots.
    kernel, args = select_kernel(st, spec, {**values, "sync": 0, "partials": 0})
    grid = launch_grid(spec, num_programs, total_tiles)
    if not 0 <= grid[0] <= MAX_GRID[0]:
        raise ValueError(
            f"{spec.name}: a grid of {grid[0]} programs is past the launch limit {MAX_GRID[0]}"
        )
    checked, device_index = kernel.checked_values(*args)
    if device_index == -1:
        device_index = torch.cuda.current_device()
    return Prepared(kernel, checked, names, device_index, grid, layout)


def launch(
    spec: S.KernelSpec,
    values: Mapping[str, Any],
    *,
    num_programs: int,
    total_tiles: int,
    target: str | None = None,
    prepare: tuple[str, ...] | None = None,
) -> Prepared | None:
    """Launch ``spec``'s kernel on ``values`` on the current stream of the tensors'
    device (:func:`prepare_launch`, then the launch). ``prepare``: the names of the
    tensors a later call supplies to the returned :class:`Prepared` launch."""
    names = prepare or ("c",)
    made = prepare_launch(
        spec, values, num_programs=num_programs, total_tiles=total_tiles, target=target,
        names=names,
    )  # fmt: skip
    made(*(values[n] for n in names))
    return made if prepare is not None else None
