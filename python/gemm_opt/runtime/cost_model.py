"""The cost model behind ``schedule="auto"``: an estimated time per candidate kernel.

For a problem (operation, M, N, K, groups, dtype) on a device of ``sms``
compute units, each candidate (schedule kind, reduction, configuration) gets
an estimate built from the schedule's own arithmetic
(:mod:`gemm_opt.core.schedules.partition`: tiles, K iterations per tile, the
stream-K split and its critical path) and a few machine figures:

* **a K iteration** of one program costs the largest of its MMA time (the
  SM's tensor-core peak shared by the programs resident on it, at
  :attr:`Calibration.mma_efficiency`), its share of the L2-to-SM bandwidth
  (every active program re-reads its A and B blocks: the re-reads across
  tiles) and the memory latency over the ``num_stages - 1`` K blocks the
  ring keeps in flight (Little's law: few stages cannot hide it);
* **a schedule** turns iterations into a critical path: data-parallel runs
  ``ceil(T / resident)`` waves, the last one partial (fewer active programs
  share the bandwidth), persistent and work-stealing rounds of ``P`` tiles
  alike, stream-K the longest program of its split including the fix-up's
  waits (:meth:`~gemm_opt.core.schedules.StreamKPartition.critical_path`);
* **fixed costs**: a launch, each segment a program computes (pipeline fill
  and epilogue), fp32 partial tiles moved by the linear and tree fix-ups and
  their flags' round trips, atomic adds into C and the zeroing of C atomic
  stream-K needs, a work-stealing counter per tile;
* **a floor**: the unique bytes of A, B and C over the HBM bandwidth; the
  host's memset of the counters and flags (work stealing, stream-K's fix-ups,
  split-K) is one more launch before the kernel, which no streaming hides, so
  it adds past the floor.

The free constants (:class:`Calibration`) are fitted to the measured
candidates of the tuned table's run by ``benchmarks/h100/fit_cost_model.py``
and stored beside the table (``kernels/tuned/<target>.cost.json``,
:func:`load_calibration`); the machine figures (:class:`Device`) are the
datasheet's. Kinds join through :func:`register_kind` (an estimate function
per kind), so a new schedule competes once it says what it costs.

Pure standard library over :mod:`gemm_opt.core`: part of the runtime, it
runs where only torch is installed.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from gemm_opt.core import schedules as S
from gemm_opt.core.modes import Kind, Reduction

#: The ``format`` field of a calibration file, and the version this module reads.
CALIBRATION_FORMAT = "gemm-opt-cost-model"
CALIBRATION_VERSION = 1
#: Bytes per element of each kernel dtype.
ELEMENT_BYTES = {"fp16": 2, "bf16": 2}
#: Bytes of an fp32 partial-tile element (stream-K's fix-up workspace).
PARTIAL_BYTES = 4


class CalibrationError(ValueError):
    """A calibration file is unreadable or breaks the schema (the message names file and field)."""


@dataclass(frozen=True)
class Device:
    """Datasheet figures of a GPU (not fitted): the H100 SXM by default."""

    sms: int = 132
    #: Dense fp16/bf16 tensor-core peak of one SM, in flops per microsecond.
    mma_flops_per_us: float = 989.4e6 / 132
    #: HBM bandwidth, bytes per microsecond.
    hbm_bytes_per_us: float = 3.35e6
    #: Shared memory one SM holds, and what each resident program reserves besides its own.
    smem_bytes: int = 228 * 1024
    smem_reserved: int = 1024
    #: 32-bit registers of one SM, and the most a thread may hold.
    registers: int = 65536
    max_thread_registers: int = 255
    max_warps: int = 64


#: Registers a thread holds besides its accumulator (addresses, indices, the ring's
#: fragments): what :func:`occupancy` adds to ``block_m * block_n / threads``.
REGISTER_OVERHEAD = 64


@dataclass(frozen=True)
class Calibration:
    """The fitted constants (see the module docstring for where each one enters)."""

    #: A kernel launch's fixed cost (start and drain), microseconds.
    launch_us: float = 4.0
    #: Each tile or stream-K segment a program computes: pipeline fill and epilogue.
    segment_us: float = 1.0
    #: Memory latency a ring of ``num_stages - 1`` blocks in flight has to hide.
    latency_us: float = 1.0
    #: Fraction of the tensor-core peak a K iteration reaches.
    mma_efficiency: float = 0.7
    #: L2-to-SM bandwidth shared by the active programs, bytes per microsecond.
    l2_bytes_per_us: float = 8.0e6
    #: Fraction of the HBM bandwidth the unique traffic reaches.
    hbm_efficiency: float = 0.8
    #: fp32 partial-tile bytes per microsecond one program writes or adds (linear, tree).
    fixup_bytes_per_us: float = 2.0e4
    #: Each partial a program publishes or waits for: the flag's round trip through L2.
    fixup_wait_us: float = 1.0
    #: fp32 atomic-add bytes per microsecond one program adds into C (atomic).
    atomic_bytes_per_us: float = 2.0e4
    #: A work-stealing program's counter increment per tile.
    steal_us: float = 0.5

    def to_json(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


CALIBRATION_KEYS = tuple(f.name for f in fields(Calibration))


@dataclass(frozen=True)
class Workload:
    """A problem as the kernels see it: ``tiles`` output tiles of ``k`` reduction
    length each (grouped: balanced groups), over A, B and C of the given sizes."""

    op: str
    m: int
    n: int
    k: int
    groups: int
    dtype: str

    @property
    def element_bytes(self) -> int:
        return ELEMENT_BYTES[self.dtype]

    def tiles(self, cfg: S.GemmConfig) -> int:
        """Output tiles: dense one grid, fwd and dgrad one per group of rows (balanced),
        wgrad one ``m x n`` grid per group."""
        if self.op == "dense":
            return S.tile_count(self.m, self.n, cfg.block_m, cfg.block_n)
        if self.op == "wgrad":
            return self.groups * S.tile_count(self.m, self.n, cfg.block_m, cfg.block_n)
        rows = S.cdiv(self.m, self.groups)
        return self.groups * S.tile_count(rows, self.n, cfg.block_m, cfg.block_n)

    @property
    def tile_k(self) -> int:
        """The reduction length of one tile (wgrad: one group's tokens)."""
        return S.cdiv(self.k, self.groups) if self.op == "wgrad" else self.k

    def swapped(self) -> Workload:
        """The problem swap-AB's kernel computes: ``C^T = B^T A^T``, N rows by M
        columns (dense only; the bytes moved are the same)."""
        if self.op != "dense":
            raise ValueError(f"swap-AB runs dense problems only, not {self.op!r}")
        return replace(self, m=self.n, n=self.m)

    @property
    def unique_bytes(self) -> int:
        """A, B and C once each (grouped: one weight per group)."""
        e = self.element_bytes
        if self.op == "wgrad":
            return e * (self.k * (self.m + self.n) + self.groups * self.m * self.n)
        weights = self.groups if self.op != "dense" else 1
        return e * (self.m * self.k + weights * self.k * self.n + self.m * self.n)


@dataclass(frozen=True)
class Candidate:
    """One kernel ``schedule="auto"`` may run: kind, reduction, config (and its name)."""

    schedule: str
    reduction: str | None
    config: S.GemmConfig
    name: str = ""
    #: Split-K's slices per tile (None: the kind has none); launched as ``tiles * S``.
    split_k: int | None = None
    #: Swap-AB: the kernel runs ``C^T = B^T A^T`` (dense only), so its tiles are
    #: ``block_m`` columns of C by ``block_n`` rows (:meth:`Workload.swapped`).
    swap_ab: bool = False

    @property
    def label(self) -> str:
        red = f"/{self.reduction}" if self.reduction else ""
        c = self.config
        cfg = self.name or f"{c.block_m}x{c.block_n}x{c.block_k}_w{c.num_warps}_s{c.num_stages}"
        split = f" S={self.split_k}" if self.split_k is not None else ""
        swap = " swap-AB" if self.swap_ab else ""
        return f"{self.schedule}{red} {cfg}{split}{swap}"


@dataclass(frozen=True)
class Estimate:
    """A candidate's estimated time (microseconds) and the parts it is made of."""

    candidate: Candidate
    us: float
    programs: int
    #: The schedule's own time (the parts, without launch and HBM floor): what breaks a
    #: tie where the HBM floor binds (the shorter schedule has more slack).
    schedule_us: float = 0.0
    #: Named parts (microseconds), for :func:`gemm_opt.explain`'s reader.
    parts: tuple[tuple[str, float], ...] = ()
    #: The part of ``schedule_us`` no streaming hides (the host's memset before the
    #: launch, :func:`finish`): added past the HBM floor, not under it.
    serial_us: float = 0.0


# ---- shared pieces ------------------------------------------------------------------------


def stages(cfg: S.GemmConfig) -> int:
    """The ring depth a config runs with (None: the body's own, 2 pipelined, 1 blocks)."""
    if cfg.num_stages is not None:
        return cfg.num_stages
    return 2 if S.pipelined(cfg.num_warps) else 1


def occupancy(cfg: S.GemmConfig, element_bytes: int, device: Device) -> int:
    """Programs one SM holds: the fewest its shared memory (the ring), registers
    (accumulator plus :data:`REGISTER_OVERHEAD` per thread) and warp slots allow; at least 1."""
    ring = stages(cfg) * (cfg.block_m + cfg.block_n) * cfg.block_k * element_bytes
    by_smem = device.smem_bytes // (ring + device.smem_reserved)
    threads = 32 * cfg.num_warps
    regs = min(
        device.max_thread_registers, cfg.block_m * cfg.block_n // threads + REGISTER_OVERHEAD
    )
    by_regs = device.registers // (threads * regs)
    return max(1, min(by_smem, by_regs, device.max_warps // cfg.num_warps))


def iteration_us(
    cfg: S.GemmConfig, element_bytes: int, active: int, device: Device, cal: Calibration
) -> float:
    """One K iteration of one program while ``active`` programs run on the device."""
    per_sm = max(1, math.ceil(active / device.sms))
    flops = 2 * cfg.block_m * cfg.block_n * cfg.block_k
    mma = per_sm * flops / (device.mma_flops_per_us * cal.mma_efficiency)
    block_bytes = (cfg.block_m + cfg.block_n) * cfg.block_k * element_bytes
    l2 = active * block_bytes / cal.l2_bytes_per_us
    latency = cal.latency_us / max(stages(cfg) - 1, 1)
    return max(mma, l2, latency)


def finish(
    cand: Candidate,
    work: Workload,
    programs: int,
    parts: list[tuple[str, float]],
    device: Device,
    cal: Calibration,
) -> Estimate:
    """Launch plus the schedule's parts, floored by the unique HBM traffic; for a kind
    whose ``sync`` the host zeroes before every launch (work stealing, stream-K's
    fix-ups, split-K: :func:`~gemm_opt.core.schedules.needs_sync`) plus that memset,
    one more launch on the stream before the kernel, which no HBM-bound streaming
    hides: it adds past the floor."""
    body = sum(us for _, us in parts)
    floor = work.unique_bytes / (device.hbm_bytes_per_us * cal.hbm_efficiency)
    memset = cal.launch_us if S.needs_sync(cand.schedule, cand.reduction) else 0.0
    total = cal.launch_us + max(body, floor) + memset
    zero = (("zero counters", memset),) if memset else ()
    named = (("launch", cal.launch_us), *parts, *zero, ("hbm floor", floor))
    return Estimate(cand, total, programs, body + memset, named, memset)


# ---- the kinds ----------------------------------------------------------------------------


def _rounds(tiles: int, slots: int) -> list[int]:
    """Active programs in each round of ``tiles`` tiles over ``slots`` programs at once:
    full rounds, then the partial one."""
    full, last = divmod(tiles, slots)
    return [slots] * full + ([last] if last else [])


def _tiles_in_rounds(
    cand: Candidate, work: Workload, slots: int, device: Device, cal: Calibration
) -> tuple[int, list[tuple[str, float]]]:
    """Whole tiles, ``slots`` programs at a time (fewer share the bandwidth in the last
    round): the K loop of each round and a segment's fixed cost per round."""
    cfg, e = cand.config, work.element_bytes
    tiles, ipt = work.tiles(cfg), S.iters_per_tile(work.tile_k, cfg.block_k)
    rounds = _rounds(tiles, slots)
    loop = sum(ipt * iteration_us(cfg, e, a, device, cal) for a in rounds)
    return len(rounds), [("k loop", loop), ("segments", len(rounds) * cal.segment_us)]


def estimate_data_parallel(
    cand: Candidate, work: Workload, device: Device, cal: Calibration
) -> Estimate:
    """A program per tile, in waves of the resident programs; the last wave partial."""
    resident = device.sms * occupancy(cand.config, work.element_bytes, device)
    _, parts = _tiles_in_rounds(cand, work, resident, device, cal)
    return finish(cand, work, max(work.tiles(cand.config), 1), parts, device, cal)


def estimate_persistent(
    cand: Candidate, work: Workload, device: Device, cal: Calibration
) -> Estimate:
    """One program per resident slot (at most one per tile), program ``p`` taking tiles
    ``p, p + P, ...``: rounds of ``P`` tiles, as data-parallel's waves (work stealing:
    the same, plus a counter increment per tile)."""
    tiles = work.tiles(cand.config)
    programs = max(1, min(tiles, device.sms * occupancy(cand.config, work.element_bytes, device)))
    rounds, parts = _tiles_in_rounds(cand, work, programs, device, cal)
    if cand.schedule == Kind.WORK_STEALING:
        parts.append(("steals", rounds * cal.steal_us))
    return finish(cand, work, programs, parts, device, cal)


def stream_k_programs(tiles: int, ipt: int, resident: int) -> int:
    """The programs ``auto`` launches stream-K on: the aligned count
    (:func:`~gemm_opt.core.schedules.aligned_stream_k_programs`) of at most the
    resident programs and at most the K iterations in all. With more programs than
    iterations the split falls back to whole tiles, one program each, so a count
    above the iterations only loses the split."""
    if not tiles or not ipt:
        return 1
    return S.aligned_stream_k_programs(tiles, ipt, max(1, min(resident, tiles * ipt)))


@functools.lru_cache(maxsize=4096)
def stream_k_shape(
    tiles: int, ipt: int, programs: int, reduction: str
) -> tuple[float, int, int, float]:
    """What a stream-K split costs in schedule units: (critical path in K iterations
    without fix-up cost, the most segments one program computes, the most split
    segments one program computes, partial-tile adds on the longest chain of waits).

    The adds are ``critical_path(red, 1) - critical_path(red, 0)``: the chain that is
    longest at unit add cost, the one the fix-up lengthens most."""
    part = S.stream_k_partition(tiles, ipt, programs)
    base = part.critical_path(reduction, 0.0)
    segs = [part.segments(p) for p in range(programs)]
    most = max(len(s) for s in segs)
    split = max(sum(not x.whole for x in s) for s in segs)
    adds = 0.0
    if reduction != Reduction.ATOMIC and not part.fallback:
        adds = part.critical_path(reduction, 1.0) - base
    return base, most, split, adds


def estimate_stream_k(
    cand: Candidate, work: Workload, device: Device, cal: Calibration
) -> Estimate:
    """Stream-K over the program count ``auto`` launches (:func:`stream_k_programs`):
    the split's critical path, its segments, and the reduction's traffic (fp32
    partials written and added along the longest chain of waits; atomic adds into C
    plus zeroing C)."""
    cfg, e = cand.config, work.element_bytes
    tiles, ipt = work.tiles(cfg), S.iters_per_tile(work.tile_k, cfg.block_k)
    resident = device.sms * occupancy(cfg, e, device)
    programs = stream_k_programs(tiles, ipt, resident)
    red = cand.reduction or S.DEFAULT_REDUCTION
    path, segments, split, adds = stream_k_shape(tiles, ipt, programs, red)
    active = min(programs, tiles * ipt) if tiles * ipt else 1
    tile_bytes = cfg.block_m * cfg.block_n * PARTIAL_BYTES
    parts = [
        ("k loop", path * iteration_us(cfg, e, active, device, cal)),
        ("segments", segments * cal.segment_us),
    ]
    if red == Reduction.ATOMIC:
        zero = work.m * work.n * e / (device.hbm_bytes_per_us * cal.hbm_efficiency)
        parts.append(("atomic adds", split * tile_bytes / cal.atomic_bytes_per_us))
        parts.append(("zero C", cal.launch_us + zero))
    else:
        each = tile_bytes / cal.fixup_bytes_per_us + cal.fixup_wait_us
        parts.append(("fix-up", (split + adds) * each))
    return finish(cand, work, programs, parts, device, cal)


def split_k_slices(tiles: int, ipt: int, split_k: int) -> int:
    """The slices a split-K launch of ``tiles * split_k`` programs runs: ``split_k``,
    at most the iterations per tile (:func:`~gemm_opt.core.schedules.split_k_count`)."""
    return S.split_k_count(tiles, ipt, max(tiles, 1) * split_k)


def estimate_split_k(cand: Candidate, work: Workload, device: Device, cal: Calibration) -> Estimate:
    """Split-K over ``tiles * S`` programs in waves of the resident ones (no program
    waits for another): each runs the longest slice, ``ceil(I / S)`` iterations, and a
    segment per wave; with ``S > 1`` every program writes its fp32 partial (one per
    wave on the critical path), and the last program of a tile takes the counter's
    round trip and adds the other ``S - 1`` partials in slice order; the counters'
    memset is :func:`finish`'s."""
    cfg, e = cand.config, work.element_bytes
    tiles, ipt = work.tiles(cfg), S.iters_per_tile(work.tile_k, cfg.block_k)
    slices = split_k_slices(tiles, ipt, cand.split_k or 1)
    programs = max(tiles, 1) * slices
    resident = device.sms * occupancy(cfg, e, device)
    rounds = _rounds(programs, resident)
    q = S.cdiv(ipt, slices)
    parts = [
        ("k loop", sum(q * iteration_us(cfg, e, a, device, cal) for a in rounds)),
        ("segments", len(rounds) * cal.segment_us),
    ]
    if slices > 1:
        each = cfg.block_m * cfg.block_n * PARTIAL_BYTES / cal.fixup_bytes_per_us
        parts.append(("fix-up", (len(rounds) + slices - 1) * each + cal.fixup_wait_us))
    return finish(cand, work, programs, parts, device, cal)


Estimator = Callable[[Candidate, Workload, Device, Calibration], Estimate]


@dataclass(frozen=True)
class KindModel:
    """How a schedule kind joins ``auto``: its estimate, the reductions it takes, the
    operations it runs (dense, fwd, dgrad, wgrad), and optionally the variants of a
    candidate on a bundled config it launches (e.g. its split factors); None: the
    candidate itself."""

    kind: str
    estimate: Estimator
    reductions: tuple[str | None, ...] = (None,)
    ops: tuple[str, ...] = ("dense",)
    variants: Callable[[Candidate], Iterable[Candidate]] | None = None


_KINDS: dict[str, KindModel] = {}
#: Every operation (dense GEMM and the grouped forward, dgrad and wgrad).
ALL_OPS = ("dense", "fwd", "dgrad", "wgrad")


def register_kind(model: KindModel) -> None:
    """Make ``model.kind`` a candidate of ``auto`` (replaces an earlier registration)."""
    if not isinstance(model, KindModel):
        raise TypeError(f"model: expected a KindModel, got {type(model).__name__}")
    _KINDS[model.kind] = model


def kind_models() -> tuple[KindModel, ...]:
    """The registered kinds, in registration order."""
    return tuple(_KINDS.values())


register_kind(KindModel(Kind.DATA_PARALLEL, estimate_data_parallel))
register_kind(
    KindModel(Kind.PERSISTENT, estimate_persistent, ops=("dense", "fwd", "dgrad", "wgrad"))
)
register_kind(KindModel(Kind.WORK_STEALING, estimate_persistent))
register_kind(KindModel(Kind.STREAM_K, estimate_stream_k, reductions=tuple(S.REDUCTIONS)))
#: The slices per tile split-K is estimated (and launched) with: each doubling halves
#: a program's iterations and adds a wave once the programs pass the resident ones.
SPLIT_K_FACTORS = (2, 4, 8)
register_kind(
    KindModel(
        Kind.SPLIT_K,
        estimate_split_k,
        variants=lambda c: [replace(c, split_k=s) for s in SPLIT_K_FACTORS],
    )
)


def estimate(cand: Candidate, work: Workload, device: Device, cal: Calibration) -> Estimate:
    """``cand``'s estimated time on ``work`` (its kind's registered estimate)."""
    model = _KINDS.get(cand.schedule)
    if model is None:
        raise ValueError(f"no cost model for schedule {cand.schedule!r}; register_kind() one")
    return model.estimate(cand, work.swapped() if cand.swap_ab else work, device, cal)


def rank(
    candidates: Iterable[Candidate], work: Workload, device: Device, cal: Calibration
) -> list[Estimate]:
    """Every candidate's estimate, fastest first (ties: the shorter schedule, then the
    order given)."""
    out = [estimate(c, work, device, cal) for c in candidates]
    return sorted(out, key=lambda est: (est.us, est.schedule_us))


# ---- the calibration file -----------------------------------------------------------------


def _fail(where: str, message: str) -> CalibrationError:
    return CalibrationError(f"{where}: {message}")


def validate_calibration(doc: Any, where: str, target: str | None = None) -> Calibration:
    """The :class:`Calibration` of a calibration document; :class:`CalibrationError` naming
    the field otherwise."""
    if not isinstance(doc, dict) or doc.get("format") != CALIBRATION_FORMAT:
        raise _fail(where, f'not a cost-model calibration: no "format": "{CALIBRATION_FORMAT}"')
    if doc.get("version") != CALIBRATION_VERSION:
        raise _fail(
            where,
            f"version {doc.get('version')!r}; this gemm-opt reads {CALIBRATION_VERSION}",
        )
    if target is not None and doc.get("target") != target:
        raise _fail(where, f"is the calibration of {doc.get('target')!r}, not {target!r}")
    consts = doc.get("constants")
    if not isinstance(consts, dict) or set(consts) != set(CALIBRATION_KEYS):
        raise _fail(f"{where}: constants", f"needs exactly the keys {', '.join(CALIBRATION_KEYS)}")
    for key in CALIBRATION_KEYS:
        v = consts[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise _fail(f"{where}: constants.{key}", f"must be a positive finite number, got {v!r}")
    if consts["mma_efficiency"] > 1 or consts["hbm_efficiency"] > 1:
        raise _fail(f"{where}: constants", "efficiencies must be at most 1")
    return Calibration(**{k: float(consts[k]) for k in CALIBRATION_KEYS})


def calibration_path(folder: str | Path, target: str) -> Path:
    """``<folder>/<target without ':'>.cost.json``: beside the target's tuned table."""
    return Path(folder) / f"{target.replace(':', '')}.cost.json"


@functools.lru_cache(maxsize=32)
def _read(path: str, mtime: int, target: str) -> Calibration:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CalibrationError(f"{path}: not a cost-model calibration: {e}") from None
    return validate_calibration(doc, path, target)


def load_calibration(path: Path, target: str) -> Calibration | None:
    """The checked calibration at ``path`` (None: no file); cached until the file changes."""
    try:
        mtime = path.stat().st_mtime_ns
    except FileNotFoundError:
        return None
    return _read(str(path), mtime, target)


__all__ = [
    "CALIBRATION_FORMAT",
    "CALIBRATION_KEYS",
    "CALIBRATION_VERSION",
    "SPLIT_K_FACTORS",
    "Calibration",
    "CalibrationError",
    "Candidate",
    "Device",
    "Estimate",
    "KindModel",
    "Workload",
    "calibration_path",
    "estimate",
    "finish",
    "iteration_us",
    "kind_models",
    "load_calibration",
    "occupancy",
    "rank",
    "register_kind",
    "split_k_slices",
    "stages",
    "stream_k_programs",
    "stream_k_shape",
    "validate_calibration",
]
