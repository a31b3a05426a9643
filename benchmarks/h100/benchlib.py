"""What ``bench_gemm.py`` and ``tune.py`` share: operands, checks, timing, the config table.

Needs only torch and ``gemm_opt.runtime`` (no Triton, no numpy), so it runs
on the GPU machine; torch is imported inside the functions that use the GPU,
so the config-table logic is importable (and tested) anywhere.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

HERE = Path(__file__).resolve().parent
#: The config table ``tune.py`` writes.
CONFIG_TABLE = HERE / "configs" / "cuda90.json"
#: The benchmark shape suite (issue: 1024^3 to 8192^3, a wide-short K, a
#: 3840-row shape that quantises badly on 132 SMs, a split-K showcase).
BENCH_SHAPES = (
    (1024, 1024, 1024),
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (8192, 8192, 1024),
    (3840, 4096, 2048),
    (512, 512, 8192),
)
DTYPES = ("float16", "bfloat16")
#: Unit roundoff of the output types.
UNIT_ROUNDOFF = {"float16": 2.0**-11, "bfloat16": 2.0**-8}
#: Bytes read between samples to push the operands out of L2 (50 MB on H100).
FLUSH_BYTES = 256 * 1024 * 1024
#: GPU cycles each sample waits after the flush (about 0.3 ms at the H100's clocks):
#: time for the host to launch the timed call before the GPU reaches it.
HOST_SLACK_CYCLES = 500_000
#: H100 SM resources (for the occupancy estimate from a kernel's attributes).
SM_REGISTERS = 65536
SM_SHARED_BYTES = 228 * 1024
SHARED_RESERVED_PER_CTA = 1024
SM_MAX_WARPS = 64
SM_MAX_CTAS = 32


#: A first-round candidate within this fraction of the best rate goes to the final round.
FINALIST_WITHIN = 0.03


def finalists(rates: dict[str, float], within: float = FINALIST_WITHIN) -> list[str]:
    """The candidates whose rate is within ``within`` of the best, best first: the
    close calls a tuner times again with more samples (on a 10 us kernel the
    first round's medians are a few percent apart run to run)."""
    if not rates:
        raise ValueError("no candidates")
    if not 0 <= within < 1:
        raise ValueError(f"within must be in [0, 1), got {within}")
    best = max(rates.values())
    close = [t for t, r in rates.items() if r >= best * (1 - within)]
    return sorted(close, key=lambda t: -rates[t])


def parse_shapes(text: str) -> list[tuple[int, int, int]]:
    """``MxNxK,...`` as a list of positive triples; ValueError otherwise."""
    shapes = []
    for item in text.split(","):
        dims = tuple(int(x) for x in item.split("x"))
        if len(dims) != 3 or min(dims) < 1:
            raise ValueError(f"{item!r} is not MxNxK with positive sizes")
        shapes.append(dims)
    return shapes  # type: ignore[return-value]


def parse_dtypes(text: str) -> list[str]:
    """``float16,bfloat16`` as a non-empty list of :data:`DTYPES`; ValueError otherwise."""
    dtypes = [d for d in text.split(",") if d]
    if not dtypes or any(d not in DTYPES for d in dtypes):
        raise ValueError(f"takes {', '.join(DTYPES)}")
    return dtypes


# ---- the config table ----------------------------------------------------------------


def shape_distance(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """How far apart two GEMM shapes are: the sum of |log2| ratios of M, N and K."""
    return sum(abs(math.log2(x / y)) for x, y in zip(a, b, strict=True))


def read_table(path: Path) -> dict[str, Any]:
    """A config table: ``{"target", "kernel", "default", "entries": [...]}``.

    Each entry is ``{"dtype", "shape": [M, N, K], "config", ...}``: the config
    ``tune.py`` measured best for that shape, which also serves the shapes
    nearest to it (its shape class).
    """
    table = json.loads(path.read_text())
    if not isinstance(table, dict) or not isinstance(table.get("entries"), list):
        raise ValueError(f"{path}: not a config table (no 'entries' list)")
    for i, e in enumerate(table["entries"]):
        if not (
            isinstance(e, dict)
            and e.get("dtype") in DTYPES
            and isinstance(e.get("config"), str)
            and isinstance(e.get("shape"), list)
            and len(e["shape"]) == 3
            and all(isinstance(x, int) and x > 0 for x in e["shape"])
        ):
            raise ValueError(f"{path}: entries[{i}] needs dtype, shape [M, N, K] and config")
    return table


def choose_config(table: dict[str, Any] | None, dtype: str, shape: tuple[int, int, int]) -> str:
    """The table's config for ``shape``: that of the nearest tuned shape of ``dtype``.

    Without a table (or an entry of that dtype) the kernel's default config.
    """
    default = (table or {}).get("default", "128x128x64_w8")
    entries = [e for e in (table or {}).get("entries", []) if e["dtype"] == dtype]
    if not entries:
        return default
    best = min(entries, key=lambda e: shape_distance(tuple(e["shape"]), shape))
    return best["config"]


# ---- operands and checks -------------------------------------------------------------


def operands(m: int, n: int, k: int, dtype: Any, seed: int) -> tuple[Any, Any]:
    """Fresh random normal A (m x k) and B (k x n), row-major."""
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", dtype=torch.float32, generator=g).to(dtype)
    b = torch.randn(k, n, device="cuda", dtype=torch.float32, generator=g).to(dtype)
    return a, b


def check_output(c: Any, ref: Any, dtype_name: str) -> dict[str, Any]:
    """Compare an output with the float64 reference.

    Passes when every element was written (C starts as NaN) and
    ``|c - ref| <= atol + rtol |ref|`` everywhere, rtol a few units of the
    output type's last place (its final rounding dominates fp32 accumulation).
    """
    import torch

    rtol, atol = 4 * UNIT_ROUNDOFF[dtype_name], 1e-2
    finite = bool(torch.isfinite(c).all())
    out: dict[str, Any] = {"all_written": finite, "rtol": rtol, "atol": atol}
    if not finite:
        return {**out, "ok": False, "max_abs_err": None, "rel_fro_err": None}
    diff = c.double() - ref
    err = diff.abs()
    ok = bool((err <= atol + rtol * ref.abs()).all())
    rel = float(torch.linalg.norm(diff) / torch.linalg.norm(ref))
    return {**out, "ok": ok, "max_abs_err": float(err.max()), "rel_fro_err": rel}


# ---- timing --------------------------------------------------------------------------


class Flusher:
    """Reads :data:`FLUSH_BYTES` so that no operand is left in L2 before a sample,
    then keeps the GPU busy for :data:`HOST_SLACK_CYCLES` more.

    The flush *reads* (a sum into one preallocated scalar): it leaves L2 full
    of clean lines. A flush that writes (``zero_()``) leaves about 50 MB of
    dirty lines, which the timed kernel then pays to write back while it
    reads: memory-bound samples lose a large part of their time to it, so
    roofline fractions measured that way are low.

    The spin puts the host's cost of launching the timed call off the clock: a
    sample measures the kernels' GPU time, whatever Python the call runs first
    (the host cost per call is ``host_path.py``'s measurement, not these
    samples'). Without it a call whose host path outlasts the flush (about 80 us)
    would time the host, by different amounts for different schedules.
    """

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self.buf = torch.ones(FLUSH_BYTES // 2, dtype=torch.float16, device="cuda")
        self.sink = torch.empty((), dtype=torch.float32, device="cuda")

    def __call__(self) -> None:
        self.torch.sum(self.buf, dim=(0,), dtype=self.torch.float32, out=self.sink)
        self.torch.cuda._sleep(HOST_SLACK_CYCLES)


def open_bundle(path: Path, fail: Callable[[str], NoReturn]) -> tuple[Any, dict[str, Any]]:
    """The bundle's kernels loaded on this GPU, and the run's environment facts.

    Blocks the machine's own Triton first (``import triton`` fails and torch's
    ``find_spec`` probe answers None): these runs launch our cubins only.
    """
    sys.modules["triton"] = None  # type: ignore[assignment]
    try:
        import torch
    except ImportError as e:
        fail(f"needs torch: {e}")
    from gemm_opt import runtime

    try:
        loaded = runtime.load_bundle(path)
    except runtime.BundleError as e:
        fail(str(e))
    if not torch.cuda.is_available():
        fail("no CUDA GPU visible to torch: this script runs kernels on a GPU")
    cap = torch.cuda.get_device_capability()
    for k in loaded:
        if not k.spec.runs_on(cap):
            fail(f"{k.name} is compiled for {k.spec.sm}; this GPU is sm_{cap[0]}{cap[1]}")
    first = next(iter(loaded)).spec
    env = {
        "gpu": torch.cuda.get_device_name(),
        "capability": f"sm_{cap[0]}{cap[1]}",
        "sms": torch.cuda.get_device_properties(0).multi_processor_count,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "bundle": path.name,
        "bundle_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "compiled_with": f"triton {first.triton}, gemm-opt {first.gemm_opt}",
    }
    return loaded, env


def persistent_programs(tiles: int, sms: int, per_sm: int) -> int:
    """Programs of a persistent launch: one per resident slot (SMs x CTAs one SM
    holds), no more than there are tiles (0 tiles: an empty grid)."""
    return min(tiles, sms * max(per_sm, 1))


def launch_options(kernel: Any, m: int, n: int, device: int = 0) -> dict[str, Any]:
    """Keyword arguments of a launch of our kernel on an ``m x n`` C: the grid of
    a persistent config (the bundle's grid of one program is correct but
    serial); nothing for the others, whose bundle grid is a program per tile."""
    meta = kernel.spec.meta
    if not meta.get("persistent"):
        return {}
    import torch

    block = meta["block"]
    tiles = -(-m // block["M"]) * -(-n // block["N"])
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    return {"grid": (persistent_programs(tiles, sms, kernel.resident_per_sm(device)), 1, 1)}


def bench(fns: dict[str, Any], reps: int, warmup: int, flush: Flusher) -> dict[str, dict]:
    """Interleaved samples: each one call between CUDA events, right after an L2 flush
    and a GPU spin (:class:`Flusher`).

    Every round runs each function once, in alternating order, so drift in
    clocks or temperature hits all of them alike. Returns median, min and
    the sample count per function.
    """
    import torch

    for _ in range(warmup):
        for f in fns.values():
            f()
    torch.cuda.synchronize()
    events: dict[str, list] = {name: [] for name in fns}
    names = list(fns)
    for r in range(reps):
        for name in names if r % 2 == 0 else names[::-1]:
            flush()
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
            fns[name]()
            e.record()
            events[name].append((s, e))
    torch.cuda.synchronize()
    out = {}
    for name, evs in events.items():
        ms = [s.elapsed_time(e) for s, e in evs]
        out[name] = {"median_ms": statistics.median(ms), "min_ms": min(ms), "samples": len(ms)}
    return out


def tflops(m: int, n: int, k: int, ms: float) -> float:
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12


def occupancy(attrs: dict[str, int], num_warps: int) -> dict[str, int]:
    """CTAs per SM an H100 can hold for these resources, and what limits it (estimate).

    Registers are allocated per warp in units of 256; each CTA also takes
    :data:`SHARED_RESERVED_PER_CTA` bytes of shared memory.
    """
    regs_per_warp = -(-attrs["registers"] * 32 // 256) * 256
    by_regs = (SM_REGISTERS // max(regs_per_warp, 1)) // num_warps
    shared = attrs["dynamic_shared_bytes"] + attrs["static_shared_bytes"]
    by_shared = SM_SHARED_BYTES // (shared + SHARED_RESERVED_PER_CTA)
    by_warps = SM_MAX_WARPS // num_warps
    limits = {"registers": by_regs, "shared": by_shared, "warps": by_warps, "ctas": SM_MAX_CTAS}
    cause = min(limits, key=lambda key: limits[key])
    return {"ctas_per_sm": limits[cause], "limited_by": cause}  # type: ignore[dict-item]


# ---- GPU scripts' plumbing -------------------------------------------------------------


def cuda_torch(prog: str) -> Any | None:
    """torch, when it is installed and sees a CUDA GPU; else None, after saying which
    is missing (``prog: error: ...`` on stderr; the script exits 2)."""
    try:
        import torch
    except ImportError:
        print(f"{prog}: error: needs torch", file=sys.stderr)
        return None
    if not torch.cuda.is_available():
        print(f"{prog}: error: no CUDA GPU", file=sys.stderr)
        return None
    return torch


def cuda_session(prog: str, bundles: str | None) -> tuple[Any, Report, str] | None:
    """A GPU script's start: ``bundles`` (if given) as the bundle folder, torch with a
    CUDA GPU (:func:`cuda_torch`), and its :class:`Report` headed by the GPU's name and
    torch's version: ``(torch, report, gpu name)``, or None where :func:`cuda_torch`
    is (the script exits 2)."""
    if bundles:
        os.environ["GEMM_OPT_BUNDLE_DIR"] = bundles
    torch = cuda_torch(prog)
    if torch is None:
        return None
    report, gpu = Report(), torch.cuda.get_device_name()
    report(f"# {gpu}, torch {torch.__version__}")
    return torch, report, gpu


class Report:
    """A script's report: each line printed as it comes, all of them written to a file
    at the end (:meth:`write`)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, text: str) -> None:
        print(text, flush=True)
        self.lines.append(text)

    def write(self, out: Path | None) -> None:
        if out is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text("\n".join(self.lines) + "\n")


def graph_us(torch: Any, fn: Callable[[], Any], calls: int = 20, replays: int = 20) -> float:
    """GPU microseconds per call of ``fn`` with no host in the way: ``calls`` calls
    captured in one CUDA graph (after 3 warm-up calls on a side stream), median of
    ``replays`` replays (warm L2)."""
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn()
    g.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1) * 1000 / calls)
    return statistics.median(times)
