"""``schedule="auto"``: the tuned schedule tables, the cost model's pick, and why.

A tuned table (``gemm_opt/kernels/tuned/<target folder>.json``, or the folder named
by ``$GEMM_OPT_TUNED_DIR``) is written on the GPU by
``benchmarks/h100/tune_schedules.py``: for each tuned problem it records the
schedule, reduction and kernel configuration that were fastest there, with
the run's provenance (GPU, date, command, torch and CUDA versions, the
bundle's hash). A call resolves in two steps (:func:`resolve`):

1. **exact hit**: a table entry of exactly its problem (operation, M, N, K,
   groups) and dtype runs the tuned choice, if the call admits it (an atomic
   choice only where atomics are allowed);
2. otherwise the **cost model**'s argmin (:mod:`gemm_opt.runtime.cost_model`)
   over the candidates the bundles hold (:func:`candidates`), with the
   constants fitted to the table's run (``<target folder>.cost.json`` beside
   the table, else the packaged one).

Both steps take only kernels that can run where the call runs: a caller on
the GPU passes ``available`` (:class:`Available`: the loaded bundle's own
index of kernel names, for the call's operand layout), so a candidate the
bundles lack is skipped for the next one, and :func:`explain` lists what was
skipped; the model runs any kernel (``available=None``).

**Bitwise reproducible by default**: atomic stream-K (whose adds into C land
in the order programs finish) is a candidate only when the caller allows it
(``allow_atomic``: ``reduction="atomic"`` with ``schedule="auto"``).
:func:`explain` says what was chosen, from where, and every candidate's
estimate. Resolution does not depend on where the call runs: the model
backend resolves against the ``cuda:90`` table as the GPU does, so the choice
is testable without a GPU. Pure standard library (plus
:mod:`gemm_opt.core.schedules`): part of the runtime, it runs where only
torch is installed.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from gemm_opt.core import schedules as S
from gemm_opt.core.modes import Kind
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.runtime import cost_model as C

#: The ``format`` field of a tuned table, and the version this module reads.
TABLE_FORMAT = "gemm-opt-tuned-schedules"
TABLE_VERSION = 1
#: Environment variable naming a folder of tuned tables (replaces the packaged one).
TUNED_DIR_ENV = "GEMM_OPT_TUNED_DIR"
#: The packaged tables (beside the bundles, under ``kernels/``).
DEFAULT_TUNED_DIR = Path(__file__).resolve().parents[1] / "kernels" / "tuned"
_DEFAULT_TUNED_DIR = os.fspath(DEFAULT_TUNED_DIR)  # as a string: every "auto" call reads it
#: The target the model backend resolves against (the one target with kernels on a GPU).
MODEL_TARGET = "cuda:90"
#: Compute units per target, for the fallback rule where no device is at hand (the model).
TARGET_SMS = {"cuda:90": 132}

#: Operations: a dense GEMM, and the grouped forward (``grouped_matmul``),
#: dgrad (``grouped_matmul(..., trans_b=True)``) and wgrad
#: (``grouped_matmul_variable_k``).
#: The ops a table tunes: how each one's kernels are grouped, and whether B is read
#: transposed (dgrad).
OP_KERNELS = {"dense": ("none", False), "fwd": ("m", False), "dgrad": ("m", True),
              "wgrad": ("k", False)}  # fmt: skip
OPS = tuple(OP_KERNELS)
#: Upper bounds of the row buckets (dense M, grouped tokens per group):
#: decode (<= 16), small batch (<= 128), medium (<= 1024), large.
ROW_BOUNDS = (16, 128, 1024)
#: Upper bounds of the weight-dimension buckets (N, K; wgrad's M, N).
DIM_BOUNDS = (1024, 4096)
#: Provenance fields every table carries, with their types.
PROVENANCE = {
    "gpu": str,
    "capability": str,
    "sms": int,
    "date": str,
    "command": str,
    "torch": str,
    "cuda": str,
    "bundle_sha256": str,
    "compiled_with": str,
}
#: Keys of a table entry's ``config`` (those of :class:`~gemm_opt.core.schedules.GemmConfig`).
CONFIG_KEYS = tuple(f.name for f in fields(S.GemmConfig))


class TunedTableError(ValueError):
    """A tuned table is unreadable or breaks the schema; the message names the file and field."""


@dataclass(frozen=True)
class Problem:
    """The sizes a schedule choice depends on.

    ``dense``: C (m x n) = A (m x k) @ B (k x n), ``groups`` = 1. ``fwd`` and
    ``dgrad``: ``m`` = total rows over all ``groups`` groups, (n, k) each
    group's weight. ``wgrad``: (m x n) output per group, ``k`` = total rows
    (tokens) over all groups.
    """

    op: str
    m: int
    n: int
    k: int
    groups: int = 1

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise ValueError(f"op must be one of {OPS}, got {self.op!r}")
        for name in ("m", "n", "k", "groups"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {v!r}")
        if self.groups < 1 or (self.op == "dense" and self.groups != 1):
            raise ValueError(f"groups must be 1 for dense and >= 1 otherwise, got {self.groups}")

    @property
    def rows_per_group(self) -> int:
        """Dense M, or the tokens per group (rounded up) of a grouped GEMM."""
        if self.op == "dense":
            return self.m
        total = self.k if self.op == "wgrad" else self.m
        return S.cdiv(total, self.groups)

    @property
    def dims(self) -> tuple[int, int]:
        """The two dimensions fixed by the weights: (N, K), or wgrad's (M, N)."""
        return (self.m, self.n) if self.op == "wgrad" else (self.n, self.k)

    def to_json(self) -> dict[str, Any]:
        return {"m": self.m, "n": self.n, "k": self.k, "groups": self.groups}


def bucket(value: int, bounds: tuple[int, ...]) -> str:
    """``"<=b"`` for the first bound ``b`` that ``value`` does not exceed, else ``">last"``."""
    for b in bounds:
        if value <= b:
            return f"<={b}"
    return f">{bounds[-1]}"


def shape_class(problem: Problem) -> str:
    """The class label of ``problem``, e.g. ``"dense m<=16 n<=4096 k>4096"``.

    Rows are named ``m`` for dense and ``t`` (tokens per group) for grouped
    operations; wgrad's weight dimensions are its output's ``m``, ``n``.
    """
    rows = bucket(problem.rows_per_group, ROW_BOUNDS)
    d1, d2 = (bucket(d, DIM_BOUNDS) for d in problem.dims)
    if problem.op == "dense":
        return f"dense m{rows} n{d1} k{d2}"
    names = ("m", "n") if problem.op == "wgrad" else ("n", "k")
    return f"{problem.op} t{rows} {names[0]}{d1} {names[1]}{d2}"


@dataclass(frozen=True)
class Choice:
    """What ``schedule="auto"`` runs: schedule, reduction and config, and where that came
    from (``"table"``: the entry tuned on exactly this problem, ``tuned``; ``"model"``: the
    cost model's argmin)."""

    schedule: str
    reduction: str | None
    config: S.GemmConfig
    source: str
    tuned: Problem | None = None
    #: Split-K's slices per tile (the launch runs ``tiles * split_k`` programs); None
    #: for the other kinds.
    split_k: int | None = None
    #: Swap-AB (dense): the kernel runs ``C^T = B^T A^T`` with A and B exchanged and
    #: C stored through its transpose (:class:`~gemm_opt.runtime.cost_model.Candidate`).
    swap_ab: bool = False


# ---- tables -------------------------------------------------------------------------------


def table_path(target: str, root: str | os.PathLike[str] | None = None) -> Path:
    """Where ``target``'s table is: ``<root or $GEMM_OPT_TUNED_DIR or packaged>/cuda90.json``."""
    base = Path(root or os.environ.get(TUNED_DIR_ENV) or DEFAULT_TUNED_DIR)
    return base / f"{target.replace(':', '')}.json"


def _fail(where: str, message: str) -> TunedTableError:
    return TunedTableError(f"{where}: {message}")


def _config_of(value: Any, where: str) -> S.GemmConfig:
    if not isinstance(value, dict) or set(value) != set(CONFIG_KEYS):
        raise _fail(where, f"needs exactly the keys {', '.join(CONFIG_KEYS)}")
    for key in CONFIG_KEYS:
        v = value[key]
        if key == "num_stages" and v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise _fail(f"{where}.{key}", f"must be a positive integer, got {v!r}")
    return S.GemmConfig(**value)


def validate_entry(entry: Any, where: str) -> tuple[Problem, Choice, str]:
    """(problem, choice, dtype) of one table entry; :class:`TunedTableError` otherwise.

    The stored ``class`` must be the one :func:`shape_class` computes (a table
    tuned under other bucket bounds is refused, not silently misread).
    """
    if not isinstance(entry, dict):
        raise _fail(where, "an entry must be an object")
    for key in ("op", "dtype", "class", "shape", "schedule", "config"):
        if key not in entry:
            raise _fail(where, f"missing field {key!r}")
    if entry["dtype"] not in S.DTYPES:
        raise _fail(f"{where}.dtype", f"must be one of {tuple(S.DTYPES)}, got {entry['dtype']!r}")
    shape = entry["shape"]
    if not isinstance(shape, dict) or set(shape) != {"m", "n", "k", "groups"}:
        raise _fail(f"{where}.shape", "needs exactly the keys m, n, k, groups")
    try:
        problem = Problem(entry["op"], shape["m"], shape["n"], shape["k"], shape["groups"])
    except ValueError as e:
        raise _fail(where, str(e)) from None
    if entry["class"] != shape_class(problem):
        raise _fail(
            f"{where}.class",
            f"{entry['class']!r} is not the class of its shape ({shape_class(problem)!r}): "
            "the table was tuned under other shape classes; re-tune",
        )
    try:
        kind = entry["schedule"]
        if problem.op != "dense" and kind not in S.GROUPED_KINDS:
            raise ValueError(f"grouped GEMM runs under {S.GROUPED_KINDS}, not {kind!r}")
        red = S.resolve_reduction(kind, entry.get("reduction"))
    except ValueError as e:
        raise _fail(f"{where}.schedule", str(e)) from None
    cfg = _config_of(entry["config"], f"{where}.config")
    try:
        S.check_kernel_config(
            **{k: getattr(cfg, k) for k in ("block_m", "block_n", "block_k", "num_warps")},
            num_stages=cfg.num_stages,
        )
    except ValueError as e:
        raise _fail(f"{where}.config", str(e)) from None
    return problem, Choice(kind, red, cfg, "table", problem), entry["dtype"]


def validate_table(doc: Any, where: str, target: str | None = None) -> list[tuple]:
    """The (problem, choice, dtype) of every entry of a table document, checked."""
    if not isinstance(doc, dict) or doc.get("format") != TABLE_FORMAT:
        raise _fail(where, f'not a tuned table: no "format": "{TABLE_FORMAT}" field')
    if doc.get("version") != TABLE_VERSION:
        raise _fail(
            where, f"table version {doc.get('version')!r}; this gemm-opt reads {TABLE_VERSION}"
        )
    if target is not None and doc.get("target") != target:
        raise _fail(where, f"is the table of {doc.get('target')!r}, not {target!r}")
    prov = doc.get("provenance")
    if not isinstance(prov, dict):
        raise _fail(where, "missing the provenance object")
    for key, kind in PROVENANCE.items():
        if not isinstance(prov.get(key), kind) or isinstance(prov.get(key), bool):
            raise _fail(f"{where}: provenance.{key}", f"must be a {kind.__name__}")
    entries = doc.get("entries")
    if not isinstance(entries, list):
        raise _fail(where, "missing the entries list")
    out = [validate_entry(e, f"{where}: entries[{i}]") for i, e in enumerate(entries)]
    seen: set[tuple] = set()
    for problem, _, dtype in out:
        key = (problem, dtype)
        if key in seen:
            raise _fail(where, f"two entries for {dtype} {problem}")
        seen.add(key)
    return out


_lock = threading.Lock()
_tables: dict[Path, tuple[float, list[tuple]]] = {}


def load_table(target: str, root: str | os.PathLike[str] | None = None) -> list[tuple] | None:
    """The checked entries of ``target``'s table (None: no table); cached until the file changes."""
    path = table_path(target, root)
    try:
        mtime = path.stat().st_mtime_ns
    except FileNotFoundError:
        return None
    with _lock:
        hit = _tables.get(path)
        if hit is not None and hit[0] == mtime:
            return hit[1]
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise TunedTableError(f"{path}: not a tuned table: {e}") from None
    entries = validate_table(doc, str(path), target)
    with _lock:
        _tables[path] = (mtime, entries)
    return entries


#: Resolved choices by (table folder, the table's and calibration's mtimes, sizes, dtype,
#: target, SMs, atomics allowed): a call's resolution is a dict lookup, not a ranking (it
#: precedes every launch).
_resolved: dict[tuple, Choice] = {}
#: Entries kept before the memo is cleared (shapes seen by one process are few).
MEMO_SIZE = 4096
#: Seconds between two looks at a table file's mtime (a replaced table is read again).
RECHECK_S = 1.0
_mtimes: dict[tuple[str, str], tuple[float, tuple[int | None, int | None]]] = {}


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return None


def _table_version(base: str, target: str) -> tuple[int | None, int | None]:
    """The mtimes of the table and of its calibration (None: no file), looked up at most
    every :data:`RECHECK_S`."""
    now = time.monotonic()
    seen = _mtimes.get((base, target))
    if seen is not None and now - seen[0] < RECHECK_S:
        return seen[1]
    version = (_mtime(table_path(target, base)), _mtime(C.calibration_path(base, target)))
    _mtimes[(base, target)] = (now, version)
    return version


def table_version(target: str, root: str | os.PathLike[str] | None = None) -> tuple:
    """Which table and calibration ``target``'s choices come from now: their folder and the
    files' mtimes (looked at most every :data:`RECHECK_S`); a plan made under another is
    stale."""
    base = root or os.environ.get(TUNED_DIR_ENV) or _DEFAULT_TUNED_DIR
    base = base if type(base) is str else os.fspath(base)
    return (base, _table_version(base, target))


# ---- the cost model's candidates and constants --------------------------------------------


@dataclass(frozen=True)
class Available:
    """Which candidates can run where a call runs: ``runs(schedule, reduction, config)``
    says whether that kernel is there (the GPU: in the loaded bundles, for the call's
    operand layout and form), and ``key`` names that set for the memo of choices (e.g.
    the bundle folder and the layout). None where any kernel runs (the model, or a GPU
    whose missing kernels are built on demand)."""

    key: Hashable
    #: ``runs(schedule, reduction, config, swap_ab)``.
    runs: Callable[[str, str | None, S.GemmConfig, bool], bool]

    def __call__(self, cand: C.Candidate | Choice) -> bool:
        return self.runs(cand.schedule, cand.reduction, cand.config, cand.swap_ab)


def candidates(op: str, *, allow_atomic: bool = False) -> list[C.Candidate]:
    """What ``auto`` chooses among for ``op``: every registered kind
    (:func:`~gemm_opt.runtime.cost_model.register_kind`) that runs ``op``, with each
    reduction it takes (atomic only if ``allow_atomic``), on each bundled GPU config
    built for that kind and reduction (:func:`~gemm_opt.kernels.h100_configs.config_serves`),
    expanded into the kind's variants (split-K's slices), in a fixed order (ties in the
    ranking keep it); grouped forward and dgrad also (first) the tiny-group 16-row
    tiles, dense also swap-AB (data-parallel)."""
    out: list[C.Candidate] = []
    if op in ("fwd", "dgrad"):  # tiny groups' 16-row tiles first: on a tie, the least padding
        out.extend(
            C.Candidate(Kind.PERSISTENT, None, cfg, name)
            for name, cfg in h100.TINY_GROUP_CONFIGS.items()
        )
    for model in C.kind_models():
        if op not in model.ops:
            continue
        for red in model.reductions:
            if red == "atomic" and not allow_atomic:
                continue
            for name, base in h100.GPU_CONFIGS.items():
                if not h100.config_serves(name, red, model.kind):
                    continue
                cand = C.Candidate(model.kind, red, base, name)
                out.extend(model.variants(cand) if model.variants else (cand,))
    if op == "dense":  # swap-AB over (N, rows of A) tiles, data-parallel
        out.extend(
            C.Candidate(Kind.DATA_PARALLEL, None, cfg, name, swap_ab=True)
            for name, cfg in h100.SWAP_AB_CONFIGS.items()
        )
    return out


def calibration(target: str, root: str | os.PathLike[str] | None = None) -> C.Calibration:
    """The cost model's constants for ``target``: the calibration beside the table in use,
    else the packaged one, else the model's defaults (a target never calibrated)."""
    base = root or os.environ.get(TUNED_DIR_ENV) or DEFAULT_TUNED_DIR
    for folder in (base, DEFAULT_TUNED_DIR):
        cal = C.load_calibration(C.calibration_path(folder, target), target)
        if cal is not None:
            return cal
    return C.Calibration()


def device(target: str, sms: int | None) -> C.Device:
    """The cost model's device: ``target``'s figures with the call's compute units."""
    return replace(C.Device(), sms=sms or TARGET_SMS.get(target, C.Device().sms))


def _work(problem: Problem, dtype: str) -> C.Workload:
    return C.Workload(problem.op, problem.m, problem.n, problem.k, problem.groups, dtype)


# ---- resolution ---------------------------------------------------------------------------


def choose(
    op: str,
    m: int,
    n: int,
    k: int,
    groups: int,
    dtype: str,
    *,
    target: str = MODEL_TARGET,
    sms: int | None = None,
    root: str | os.PathLike[str] | None = None,
    allow_atomic: bool = False,
    available: Available | None = None,
) -> Choice:
    """:func:`resolve` of ``Problem(op, m, n, k, groups)``, memoized until the table or
    its calibration changes (and per set of ``available`` kernels)."""
    base = os.fspath(root or os.environ.get(TUNED_DIR_ENV) or DEFAULT_TUNED_DIR)
    kernels = None if available is None else available.key
    key = (base, _table_version(base, target), op, m, n, k, groups, dtype, target, sms,
           allow_atomic, kernels)  # fmt: skip
    choice = _resolved.get(key)
    if choice is None:
        choice = resolve(
            Problem(op, m, n, k, groups), dtype, target=target, sms=sms, root=base,
            allow_atomic=allow_atomic, available=available,
        )  # fmt: skip
        if len(_resolved) >= MEMO_SIZE:
            _resolved.clear()
        _resolved[key] = choice
    return choice


def _exact_hit(
    problem: Problem,
    dtype: str,
    target: str,
    root: Any,
    allow_atomic: bool,
    available: Available | None = None,
) -> Choice | None:
    for p, choice, d in load_table(target, root) or []:
        if p == problem and d == dtype and (allow_atomic or choice.reduction != "atomic"):
            return choice if available is None or available(choice) else None
    return None


def resolve(
    problem: Problem,
    dtype: str,
    *,
    target: str = MODEL_TARGET,
    sms: int | None = None,
    root: str | os.PathLike[str] | None = None,
    allow_atomic: bool = False,
    available: Available | None = None,
) -> Choice:
    """The schedule, reduction and config ``schedule="auto"`` runs ``problem`` with: the
    table's choice on an exact hit, else the cost model's fastest candidate; both only
    among the ``available`` kernels (None: any). Where none is available, the fastest
    of all: its launch then says which kernel is missing and how to build it.

    ``sms``: the device's compute units (default the target's nominal count);
    ``allow_atomic``: whether atomic stream-K may be chosen (its bits vary run to run).
    """
    hit = _exact_hit(problem, dtype, target, root, allow_atomic, available)
    if hit is not None:
        return hit
    ranked = rank(problem, dtype, target=target, sms=sms, root=root, allow_atomic=allow_atomic)
    runs = [e for e in ranked if available is None or available(e.candidate)]
    cand = (runs or ranked)[0].candidate
    return Choice(
        cand.schedule, cand.reduction, cand.config, "model", split_k=cand.split_k,
        swap_ab=cand.swap_ab,
    )  # fmt: skip


def rank(
    problem: Problem,
    dtype: str,
    *,
    target: str = MODEL_TARGET,
    sms: int | None = None,
    root: str | os.PathLike[str] | None = None,
    allow_atomic: bool = False,
) -> list[C.Estimate]:
    """Every candidate's estimate for ``problem``, fastest first (split-K only with
    ``S`` at most the iterations per tile: a larger ``S`` launches a smaller one;
    swap-AB only for at most :data:`~gemm_opt.kernels.h100_configs.SWAP_AB_MAX_ROWS`
    rows of A)."""
    if dtype not in S.DTYPES:
        raise ValueError(f"dtype must be one of {tuple(S.DTYPES)}, got {dtype!r}")
    work = _work(problem, dtype)
    cands = [
        c
        for c in candidates(problem.op, allow_atomic=allow_atomic)
        if (
            c.split_k is None
            or c.split_k <= max(S.iters_per_tile(work.tile_k, c.config.block_k), 1)
        )
        and (not c.swap_ab or swap_ab_fits(work.m))
    ]
    return C.rank(cands, work, device(target, sms), calibration(target, root))


def swap_ab_fits(rows: int) -> bool:
    """Whether swap-AB is a candidate for ``rows`` rows of A: 1 to
    :data:`~gemm_opt.kernels.h100_configs.SWAP_AB_MAX_ROWS` (each swap-AB
    configuration then; the estimate weighs a second tile of tokens, which reads
    the weights twice, against fewer waves)."""
    return 0 < rows <= h100.SWAP_AB_MAX_ROWS


# ---- explain ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Explanation:
    """Why ``schedule="auto"`` runs what it runs on one problem: the choice, its source,
    and every candidate's estimate (fastest first). ``str()`` is a small table."""

    problem: Problem
    dtype: str
    target: str
    sms: int
    allow_atomic: bool
    choice: Choice
    estimates: tuple[C.Estimate, ...]
    #: Candidates the call's kernels lack (:class:`Available`), fastest first: skipped.
    missing: tuple[C.Estimate, ...] = ()

    def _is_choice(self, cand: C.Candidate) -> bool:
        c = self.choice
        mine = (cand.schedule, cand.reduction, cand.config, cand.split_k)
        return mine == (c.schedule, c.reduction, c.config, c.split_k)

    @property
    def estimated_us(self) -> float | None:
        """The chosen candidate's estimate (None: a tuned choice that is no candidate)."""
        return next((e.us for e in self.estimates if self._is_choice(e.candidate)), None)

    @property
    def plain_kernel(self) -> bool:
        """Whether contiguous operands of this problem miss the TMA and aligned twins'
        divisibility facts (N, K and the leading dimensions, wgrad's M too, multiples
        of :func:`~gemm_opt.core.schedules.alignment` elements), so the launch takes the plain
        kernel, which the estimates do not model (``docs/cost-model.md``)."""
        p = self.problem
        dims = (p.m, p.n, p.k) if p.op == "wgrad" else (p.n, p.k)
        return any(d % S.alignment(self.dtype) for d in dims)

    def __str__(self) -> str:
        p, c = self.problem, self.choice
        names = {cfg: name for name, cfg in h100.GPU_CONFIGS.items()}
        label = C.Candidate(
            c.schedule, c.reduction, c.config, names.get(c.config, ""), c.split_k
        ).label
        if c.source == "table":
            source = f"tuned table, exact hit ({self.target})"
        else:
            source = f"cost model ({self.target}, {self.sms} SMs)"
        groups = f" x {p.groups} groups" if p.groups > 1 else ""
        atomics = "allowed" if self.allow_atomic else "not allowed (bitwise reproducible)"
        lines = [
            f"{p.op} {p.m}x{p.n}x{p.k}{groups} {self.dtype}: {label}  [{source}]",
            f"atomic stream-K: {atomics}",
        ]
        if self.plain_kernel:
            lines.append(
                f"note: N or K (wgrad: or M) is not a multiple of {S.alignment(self.dtype)} "
                "elements (16 bytes): no TMA or 16-byte twin runs (a narrower twin or the "
                "plain kernel), slower than these estimates"
            )
        chosen = next((e for e in self.estimates if self._is_choice(e.candidate)), None)
        for est in self.missing:
            ahead = chosen is not None and (est.us, est.schedule_us) < (
                chosen.us, chosen.schedule_us,
            )  # fmt: skip
            if ahead:
                lines.append(
                    f"skipped: {est.candidate.label} (est. {est.us:.1f} us): no such kernel "
                    "where the call runs (not in the bundles)"
                )
        lines.append(
            f"{'rank':>4}  {'candidate':<28} {'est. us':>9} {'programs':>8}  largest parts (us)"
        )
        for i, est in enumerate(self.estimates, 1):
            parts = sorted(est.parts, key=lambda kv: -kv[1])[:2]
            text = ", ".join(f"{k} {v:.1f}" for k, v in parts)
            mark = "*" if self._is_choice(est.candidate) else " "
            lines.append(
                f"{i:>3}{mark}  {est.candidate.label:<28} {est.us:>9.1f} {est.programs:>8}  {text}"
            )
        return "\n".join(lines)


def explain(
    problem: Problem,
    dtype: str,
    *,
    target: str = MODEL_TARGET,
    sms: int | None = None,
    root: str | os.PathLike[str] | None = None,
    allow_atomic: bool = False,
    available: Available | None = None,
) -> Explanation:
    """What ``schedule="auto"`` runs on ``problem`` and why (:class:`Explanation`); with
    ``available``, the candidates whose kernels are not there are listed as skipped."""
    choice = resolve(
        problem, dtype, target=target, sms=sms, root=root, allow_atomic=allow_atomic,
        available=available,
    )  # fmt: skip
    estimates = rank(problem, dtype, target=target, sms=sms, root=root, allow_atomic=allow_atomic)
    runs = tuple(e for e in estimates if available is None or available(e.candidate))
    missing = tuple(e for e in estimates if available is not None and not available(e.candidate))
    dev = device(target, sms)
    return Explanation(
        problem, dtype, target, dev.sms, allow_atomic, choice, runs or tuple(estimates), missing
    )


__all__ = [
    "OPS",
    "Available",
    "Choice",
    "Explanation",
    "Problem",
    "TunedTableError",
    "calibration",
    "candidates",
    "choose",
    "explain",
    "load_table",
    "rank",
    "resolve",
    "shape_class",
    "swap_ab_fits",
    "table_path",
    "table_version",
    "validate_table",
]
