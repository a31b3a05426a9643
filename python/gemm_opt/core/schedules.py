"""GEMM schedule arithmetic shared by the host and the lowering (pure Python).

The lowering of ``tile.gemm_schedule`` emits the same arithmetic in IR (the
sizes are runtime values there); this module is the host's copy and the one
place where the workspace layout is decided. ``tile-lower-gemm-schedule``
reads its offsets and strides from :func:`workspace_layout`, so host and
kernel cannot disagree about where a counter, a flag or a partial lives.

Stream-K partition (as ck_tile's "DP + 2-tile SK"): with ``T`` output tiles
of ``I`` K iterations each on ``P`` programs, tiles ``[0, dp_tiles)`` are
whole (data-parallel, program ``p`` takes ``p, p + P, ...``) and the last
``sk_tiles`` are split by K iterations: ``sk_tiles = 0`` if ``T % P == 0``,
else ``P + T % P`` when ``T > P``, else ``T``; the ``sk_tiles * I`` iterations
are dealt out evenly, ``q, r = divmod(sk_tiles * I, P)``, program ``p`` taking
``q + (p < r)`` consecutive ones from ``p * q + min(p, r)``. With fewer
iterations than programs (``sk_tiles * I < P``) the schedule falls back to
data-parallel: ``sk_tiles = 0``.
"""

from __future__ import annotations

from dataclasses import dataclass

COUNTER_STRIDE = 64
"""i32 elements between two work-stealing counters (256 B: no false sharing)."""

KINDS = ("data-parallel", "persistent", "work-stealing", "stream-k")
REDUCTIONS = ("atomic", "linear", "tree")
GROUPED = ("none", "m", "k")


def cdiv(a: int, b: int) -> int:
    """Ceiling division of non-negative ``a`` by positive ``b``."""
    return -(-a // b)


def tile_count(m: int, n: int, block_m: int, block_n: int) -> int:
    """Output tiles of an ``m x n`` GEMM."""
    return cdiv(m, block_m) * cdiv(n, block_n)


@dataclass(frozen=True)
class StreamKPartition:
    """How a stream-K launch splits its tiles (see the module docstring)."""

    total_tiles: int
    iters_per_tile: int
    num_programs: int
    dp_tiles: int
    sk_tiles: int
    iters_per_program: int  #: q
    extra_iters: int  #: r: programs below r take one more iteration

    @property
    def total_sk_iters(self) -> int:
        return self.sk_tiles * self.iters_per_tile

    def sk_range(self, program: int) -> tuple[int, int]:
        """[begin, end) of ``program``'s stream-K iterations (tile-major)."""
        q, r = self.iters_per_program, self.extra_iters
        begin = program * q + min(program, r)
        return begin, begin + q + (1 if program < r else 0)


def stream_k_partition(
    total_tiles: int, iters_per_tile: int, num_programs: int
) -> StreamKPartition:
    """Data-parallel tiles and stream-K iteration ranges, with the fallback rule."""
    t, i, p = total_tiles, iters_per_tile, num_programs
    if p < 1:
        raise ValueError(f"num_programs must be positive, got {p}")
    if t % p == 0:
        sk = 0
    else:
        sk = p + t % p if t > p else t
    if sk * i < p:
        sk = 0
    q, r = divmod(sk * i, p)
    return StreamKPartition(t, i, p, t - sk, sk, q, r)


@dataclass(frozen=True)
class WorkspaceLayout:
    """Where a schedule's synchronization state lives.

    ``sync`` (i32): ``num_counters`` counters from ``counter_offset``,
    ``counter_stride`` apart, and ``num_flags`` flags from ``flag_offset``,
    ``flag_stride`` apart; ``sync_elements`` in all. ``partials`` (f32): one
    ``block_m x block_n`` row-major tile per program, ``partial_stride``
    apart; ``partial_elements`` in all. Offsets and strides do not depend on
    the program count (the kernel reads that at run time). The host zeroes
    ``sync`` on the launch stream before every launch.
    """

    counter_offset: int
    counter_stride: int
    num_counters: int
    flag_offset: int
    flag_stride: int
    num_flags: int
    sync_elements: int
    partial_stride: int
    partial_elements: int


def workspace_layout(
    kind: str,
    reduction: str | None,
    num_programs: int,
    num_xcds: int,
    block_m: int,
    block_n: int,
) -> WorkspaceLayout:
    """The workspace of a launch of ``num_programs`` programs."""
    if kind not in KINDS:
        raise ValueError(f"unknown schedule kind '{kind}' (known: {', '.join(KINDS)})")
    counters = num_xcds if kind == "work-stealing" else 0
    fixup = kind == "stream-k" and reduction in ("linear", "tree")
    flags = num_programs if fixup else 0
    counter_words = counters * COUNTER_STRIDE
    return WorkspaceLayout(
        counter_offset=0,
        counter_stride=COUNTER_STRIDE,
        num_counters=counters,
        flag_offset=counter_words,
        flag_stride=1,
        num_flags=flags,
        sync_elements=counter_words + flags,
        partial_stride=block_m * block_n,
        partial_elements=(num_programs * block_m * block_n) if fixup else 0,
    )


__all__ = [
    "COUNTER_STRIDE",
    "GROUPED",
    "KINDS",
    "REDUCTIONS",
    "StreamKPartition",
    "WorkspaceLayout",
    "cdiv",
    "stream_k_partition",
    "tile_count",
    "workspace_layout",
]
