"""The host-side math of GEMM schedules: tile order, work split and workspace layout.

One source of truth for how output tiles and K iterations map to programs.
The API sizes grids and workspaces from it, the lowering passes lay out the
workspace exactly as :func:`workspace_layout` says, and the tests check that
every schedule covers every (tile, K iteration) exactly once. Pure Python: no
MLIR, no numpy, no torch.

Terms: a *tile* is one ``block_m x block_n`` block of C; an *iteration* is
one ``block_k`` step of one tile's K loop; a *program* is one launched CTA.

Schedules (``kind``):

* ``data-parallel``: one program per tile (grid = tiles).
* ``persistent``: ``P`` programs; program ``p`` takes tiles ``p, p+P, ...``.
* ``work-stealing``: ``P`` programs over ``X`` chiplets (``num_xcds``); the
  tiles are cut into ``X`` contiguous ranges (:func:`work_stealing_ranges`),
  program ``p`` claims tiles of range ``p % X`` from that chiplet's atomic
  counter until the range is used up, then stops (it never claims again).
* ``stream-k``: whole tiles first (data-parallel over ``P`` programs), then
  the leftover tiles' iterations split evenly over the ``P`` programs
  (:func:`stream_k_partition`); partials combine by ``atomic`` add into C,
  by a ``linear`` fix-up (the tile's owner, its last contributor, adds the
  other programs' fp32 partials in descending program order) or a ``tree``
  (pairwise, fixed order). Both fix-ups are deterministic for a fixed ``P``.

Every kind visits tiles in GROUP_M order (:func:`tile_coords`).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass

from gemm_opt.core.modes import (
    DEFAULT_REDUCTION,
    FIXUP_REDUCTIONS,
    GROUPED,
    GROUPED_KINDS,
    KINDS,
    REDUCTIONS,
    Grouped,
    Kind,
    Reduction,
)

#: i32 slots between two atomic counters (256 bytes: no two counters share a
#: cache line or an L2 sector group).
COUNTER_STRIDE = 64
#: Bytes of an i32 / f32 workspace element.
ELEMENT_BYTES = 4
#: Byte alignment of the partials region inside one workspace allocation.
PARTIALS_ALIGN = 256


def cdiv(a: int, b: int) -> int:
    """Ceiling division of non-negative ``a`` by positive ``b``."""
    return -(-a // b)


def _positive(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _non_negative(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")


def tile_grid(m: int, n: int, block_m: int, block_n: int) -> tuple[int, int]:
    """(tiles along M, tiles along N) of an ``m x n`` output."""
    _non_negative("m", m)
    _non_negative("n", n)
    _positive("block_m", block_m)
    _positive("block_n", block_n)
    return cdiv(m, block_m), cdiv(n, block_n)


def tile_count(m: int, n: int, block_m: int, block_n: int) -> int:
    """Output tiles of an ``m x n`` output."""
    pm, pn = tile_grid(m, n, block_m, block_n)
    return pm * pn


def iters_per_tile(k: int, block_k: int) -> int:
    """K iterations of one tile (0 when ``k`` is 0: the tile is all zeros)."""
    _non_negative("k", k)
    _positive("block_k", block_k)
    return cdiv(k, block_k)


def tile_coords(tile_id: int, num_pid_m: int, num_pid_n: int, group_m: int) -> tuple[int, int]:
    """(pid_m, pid_n) of ``tile_id`` in GROUP_M order.

    Tiles are walked column by column inside bands of ``group_m`` tile rows
    (the last band may be narrower), so consecutive tiles share B columns
    and the band's A rows stay in L2. ``group_m = 1`` is row-major order.
    """
    _positive("num_pid_m", num_pid_m)
    _positive("num_pid_n", num_pid_n)
    _positive("group_m", group_m)
    total = num_pid_m * num_pid_n
    if isinstance(tile_id, bool) or not isinstance(tile_id, int) or not 0 <= tile_id < total:
        raise ValueError(f"tile_id must be in [0, {total}), got {tile_id!r}")
    in_group = group_m * num_pid_n
    first_m = (tile_id // in_group) * group_m
    size_m = min(num_pid_m - first_m, group_m)
    local = tile_id % in_group
    return first_m + local % size_m, local // size_m


# ---- persistent and work stealing ----------------------------------------------------


def grid_size(kind: str, total_tiles: int, num_programs: int) -> int:
    """Programs launched: all tiles for data-parallel, else ``num_programs``.

    Persistent and work-stealing launch at most one program per tile;
    stream-K launches exactly ``num_programs`` (its split depends on it).
    """
    check_kind(kind)
    _non_negative("total_tiles", total_tiles)
    _positive("num_programs", num_programs)
    if kind == Kind.DATA_PARALLEL:
        return total_tiles
    if kind == Kind.PERSISTENT:
        return min(num_programs, total_tiles)
    return num_programs


def persistent_tiles(program: int, total_tiles: int, num_programs: int) -> range:
    """Tile ids (in GROUP_M order) program ``program`` of a persistent grid computes."""
    return range(program, total_tiles, num_programs)


def work_stealing_ranges(total_tiles: int, num_xcds: int) -> list[tuple[int, int]]:
    """The tile range ``[start, end)`` of each chiplet's counter (may be empty)."""
    _non_negative("total_tiles", total_tiles)
    _positive("num_xcds", num_xcds)
    per = cdiv(total_tiles, num_xcds)
    return [(min(x * per, total_tiles), min((x + 1) * per, total_tiles)) for x in range(num_xcds)]


def check_work_stealing(num_programs: int, num_xcds: int) -> None:
    """Every chiplet needs a program, or its tiles are never claimed."""
    _positive("num_programs", num_programs)
    _positive("num_xcds", num_xcds)
    if num_programs < num_xcds:
        raise ValueError(
            f"work stealing needs at least one program per chiplet: "
            f"num_programs={num_programs} < num_xcds={num_xcds}"
        )


# ---- stream-K --------------------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    """A program's share of one tile: iterations ``[k_begin, k_end)`` of ``tile``."""

    tile: int
    k_begin: int
    k_end: int
    iters_per_tile: int

    @property
    def whole(self) -> bool:
        return self.k_begin == 0 and self.k_end == self.iters_per_tile

    @property
    def owner(self) -> bool:
        """The segment that ends at the tile's last iteration owns the tile (stores C).

        Its program is the tile's highest-numbered contributor, so fix-up
        waits are only on lower-numbered programs (which in-order dispatch
        makes resident first)."""
        return self.k_end == self.iters_per_tile


@dataclass(frozen=True)
class StreamKPartition:
    """How a stream-K grid splits ``total_tiles`` tiles of ``iters_per_tile`` iterations.

    ck_tile's "DP + 2-tile SK": tiles ``[0, dp_tiles)`` are whole tiles done
    data-parallel (program ``p`` takes ``p, p+P, ...``); the last ``sk_tiles``
    are split by K iterations, ``sk_tiles = 0`` when ``T % P == 0`` (whole
    waves), else ``P + T % P`` when ``T > P`` (the last full wave joins the
    ragged one, so no program idles for a whole tile), else ``T``. Their
    ``total_sk_iters`` iterations are numbered from 0 at tile ``dp_tiles``;
    with ``q, r = divmod(total_sk_iters, P)`` program ``p`` owns iterations
    ``[p*q + min(p, r), (p+1)*q + min(p+1, r))``. Fallback: when
    ``total_sk_iters < P`` (some program would get no iteration: too little
    K work to split) ``sk_tiles = 0``, plain data-parallel over ``P``
    programs. A tile's owner is its last contributor (:attr:`Segment.owner`).
    A program visits its stream-K tiles last to first (:meth:`segments`), so
    its only non-owner segment, the one in its last tile, comes first: it
    publishes before it reaches the tile it owns and waits in, and no wait
    depends on another tile's fix-up (:meth:`critical_path`). One partial
    slot and one flag per program suffice. The lowering emits the same
    arithmetic and order on the device.
    """

    total_tiles: int
    iters_per_tile: int
    num_programs: int
    dp_tiles: int
    sk_tiles: int
    iters_per_program: int  #: q
    extra_iters: int  #: r: programs below r take one more iteration

    @property
    def q(self) -> int:
        return self.iters_per_program

    @property
    def r(self) -> int:
        return self.extra_iters

    @property
    def fallback(self) -> bool:
        """No stream-K phase: whole waves, or too little K work to split."""
        return self.sk_tiles == 0

    @property
    def total_sk_iters(self) -> int:
        return self.sk_tiles * self.iters_per_tile

    @property
    def aligned(self) -> bool:
        """Each program's stream-K range lies in one tile: a stream-K phase,
        ``r = 0``, and ``q`` dividing (or a multiple of) the iterations per
        tile (:func:`aligned_stream_k_programs`)."""
        q, i = self.q, self.iters_per_tile
        return self.sk_tiles > 0 and self.r == 0 and (i % q == 0 or q % i == 0)

    def sk_range(self, program: int) -> tuple[int, int]:
        """Stream-K iterations ``[begin, end)`` of ``program`` (empty in fallback)."""
        p = program
        if self.fallback:
            return 0, 0
        return p * self.q + min(p, self.r), (p + 1) * self.q + min(p + 1, self.r)

    def dp_tiles_of(self, program: int) -> range:
        return range(program, self.dp_tiles, self.num_programs)

    def segments(self, program: int) -> list[Segment]:
        """Everything ``program`` computes, in the order it does: whole tiles
        first, then its stream-K segments from its last tile to its first."""
        ipt = self.iters_per_tile
        out = [Segment(t, 0, ipt, ipt) for t in self.dp_tiles_of(program)]
        begin, end = self.sk_range(program)
        sk: list[Segment] = []
        it = begin
        while it < end:
            tile, k = divmod(it, ipt)
            stop = min(end - tile * ipt, ipt)
            sk.append(Segment(self.dp_tiles + tile, k, stop, ipt))
            it = tile * ipt + stop
        return out + sk[::-1]

    def contributors(self, tile: int) -> list[int]:
        """Programs that compute part of ``tile``, owner (the highest) first,
        in descending order: the order a linear owner adds their partials."""
        if tile < self.dp_tiles:
            return [tile % self.num_programs]
        ipt = self.iters_per_tile
        first = (tile - self.dp_tiles) * ipt
        last = first + ipt - 1
        return list(range(self._program_of(last), self._program_of(first) - 1, -1))

    def _program_of(self, it: int) -> int:
        """The program whose stream-K range holds iteration ``it``."""
        q, r = self.q, self.r
        big = r * (q + 1)  # the first r programs own q+1 iterations
        if it < big:
            return it // (q + 1)
        return r + (it - big) // q

    def tree_steps(self, tile: int) -> list[list[tuple[int, int]]]:
        """The tree reduction of ``tile``'s partials: per level, (receiver, sender) pairs.

        Contributors are indexed 0..n-1 as :meth:`contributors` lists them
        (0 = owner, index ``i`` is program ``owner - i``); at level ``l``
        index ``i`` with ``i % 2^(l+1) == 0`` adds the partial of ``i + 2^l``
        (if it exists), after that sender finished its own levels and
        released its flag. The order is fixed, so the result is bitwise
        reproducible.
        """
        progs = self.contributors(tile)
        levels = []
        step = 1
        while step < len(progs):
            levels.append(
                [(progs[i], progs[i + step]) for i in range(0, len(progs) - step, 2 * step)]
            )
            step *= 2
        return levels

    def critical_path(self, reduction: str, add_cost: float = 0.0) -> float:
        """When the last program finishes, in K iterations, if all start at once.

        A model of the fix-up's waits, not of the memory system: an iteration
        costs 1, adding a published partial ``add_cost``, a wait ends when
        its flag is set (``atomic``: nothing waits), programs visit their
        work in :meth:`segments` order. Without waits it is the most work of
        one program, ``cdiv(dp_tiles, P) * iters_per_tile + q + (r > 0)``;
        each added partial on the longest chain of waits adds ``add_cost``.
        """
        if reduction not in REDUCTIONS:
            raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
        published: dict[int, float] = {}  # when each program's partial is released
        end = 0.0
        for p in range(self.num_programs):  # waits are on lower programs only
            t = 0.0
            for s in self.segments(p):
                t += s.k_end - s.k_begin
                if s.whole or reduction == Reduction.ATOMIC:
                    continue
                if reduction == Reduction.LINEAR:  # one wait for the count, then the adds
                    others = self.contributors(s.tile)[1:]
                    if not s.owner:
                        published[p] = t
                    elif others:
                        t = max(t, *(published[o] for o in others)) + add_cost * len(others)
                    continue
                for level in self.tree_steps(s.tile):
                    pair = next((pair for pair in level if p in pair), None)
                    if pair is None:
                        continue
                    sender = pair[1]
                    if sender == p:
                        published[p] = t
                        break
                    t = max(t, published[sender]) + add_cost
            end = max(end, t)
        return end


def stream_k_partition(
    total_tiles: int, iters_per_tile: int, num_programs: int
) -> StreamKPartition:
    """The stream-K split of ``total_tiles`` tiles over ``num_programs`` programs."""
    _non_negative("total_tiles", total_tiles)
    _non_negative("iters_per_tile", iters_per_tile)
    _positive("num_programs", num_programs)
    t, i, p = total_tiles, iters_per_tile, num_programs
    if t % p == 0:
        sk = 0
    else:
        sk = p + t % p if t > p else t
    if sk * i < p:
        sk = 0
    q, r = divmod(sk * i, p)
    return StreamKPartition(t, i, p, t - sk, sk, q, r)


#: How far below its default program count ``schedule="auto"`` may go to split
#: stream-K work into whole segments (:func:`aligned_stream_k_programs`).
STREAM_K_ALIGN_SLACK = 0.9


def aligned_stream_k_programs(
    total_tiles: int, iters_per_tile: int, max_programs: int, slack: float = STREAM_K_ALIGN_SLACK
) -> int:
    """The most programs, from ``ceil(slack * max_programs)`` to ``max_programs``,
    whose stream-K split gives each program one K range inside one tile (or
    whole tiles only): ``r = 0`` and ``q`` dividing (or a multiple of) the
    iterations per tile. ``max_programs`` when none does, or when the split
    at ``max_programs`` has no stream-K tiles.

    Why: a program whose range crosses a tile boundary runs two pipeline
    fills and two epilogues, and the slowest program sets the kernel's time.
    On the H100 (bf16, 132 SMs, one run): 512x512x8192 in 128x128x64 tiles
    takes 20.9 us on 132 programs (15.5 iterations each) and 19.7 us on 128
    (16 each, 8 per tile); 128x2048x7168 in 64x128x128 tiles 21.3 us and
    19.5 us (14 each).
    """
    _positive("max_programs", max_programs)
    if not 0 < slack <= 1:
        raise ValueError(f"slack must be in (0, 1], got {slack}")
    if stream_k_partition(total_tiles, iters_per_tile, max_programs).sk_tiles == 0:
        return max_programs
    for p in range(max_programs, max(1, math.ceil(slack * max_programs)) - 1, -1):
        if stream_k_partition(total_tiles, iters_per_tile, p).aligned:
            return p
    return max_programs


# ---- grouped GEMM ---------------------------------------------------------------------


@dataclass(frozen=True)
class GroupTile:
    """One output tile of a grouped GEMM (rows ``[m_off, m_end)`` hold data)."""

    group: int
    m_off: int
    m_end: int
    n_off: int
    k_off: int
    k_end: int


@dataclass(frozen=True)
class GroupedTiles:
    """All groups' tiles numbered consecutively (group by group).

    ``grouped="m"`` (forward, dgrad): group ``g`` owns rows
    ``[starts[g], starts[g] + lens[g])`` of A and C and sums over all ``k``.
    ``grouped="k"`` (wgrad): group ``g`` owns output rows
    ``[g*m, (g+1)*m)`` and sums over rows ``[starts[g], starts[g] + lens[g])``
    of A and B (an empty group's tiles exist and are stored as zeros). A
    zero-length group has no tiles (``m``) or an empty K range (``k``):
    it never moves another group's offsets, which come from prefix sums.
    """

    grouped: str
    lens: tuple[int, ...]
    starts: tuple[int, ...]
    m: int
    n: int
    k: int
    block_m: int
    block_n: int
    group_m: int
    tile_starts: tuple[int, ...]  # first tile of each group; last entry = total

    @property
    def total_tiles(self) -> int:
        return self.tile_starts[-1]

    def tiles_of(self, group: int) -> int:
        return self.tile_starts[group + 1] - self.tile_starts[group]

    def tile(self, tile_id: int) -> GroupTile:
        """The group, row range, column offset and K range of ``tile_id``."""
        if not 0 <= tile_id < self.total_tiles:
            raise ValueError(f"tile_id must be in [0, {self.total_tiles}), got {tile_id}")
        g = bisect.bisect_right(self.tile_starts, tile_id) - 1
        local = tile_id - self.tile_starts[g]
        rows = self.lens[g] if self.grouped == Grouped.M else self.m
        pm, pn = tile_grid(rows, self.n, self.block_m, self.block_n)
        pid_m, pid_n = tile_coords(local, pm, pn, self.group_m)
        if self.grouped == Grouped.M:
            base = self.starts[g]
            k_off, k_end = 0, self.k
        else:
            base = g * self.m
            k_off, k_end = self.starts[g], self.starts[g] + self.lens[g]
        m_off = base + pid_m * self.block_m
        return GroupTile(g, m_off, base + rows, pid_n * self.block_n, k_off, k_end)


def group_starts(lens: Sequence[int]) -> tuple[int, ...]:
    """Exclusive prefix sum of the group lengths (the row each group starts at)."""
    out, acc = [], 0
    for i, n in enumerate(lens):
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"group_lens[{i}] must be a non-negative integer, got {n!r}")
        out.append(acc)
        acc += n
    return tuple(out)


def grouped_tiles(
    grouped: str,
    lens: Sequence[int],
    *,
    m: int,
    n: int,
    k: int,
    block_m: int,
    block_n: int,
    group_m: int = 1,
) -> GroupedTiles:
    """The tiles of a grouped GEMM; ``m`` is unused for ``grouped="m"`` (rows come from lens).

    For ``grouped="m"`` the output has ``sum(lens)`` rows; for ``"k"`` it has
    ``len(lens) * m`` rows (one ``m x n`` block per group).
    """
    _check_grouped(grouped)
    lens = tuple(lens)
    starts = group_starts(lens)
    for name, v in (("m", m), ("n", n), ("k", k)):
        _non_negative(name, v)
    _positive("group_m", group_m)
    tile_starts = [0]
    for length in lens:
        rows = length if grouped == Grouped.M else m
        tile_starts.append(tile_starts[-1] + tile_count(rows, n, block_m, block_n))
    return GroupedTiles(
        Grouped(grouped), lens, starts, m, n, k, block_m, block_n, group_m, tuple(tile_starts)
    )


def grouped_tiles_bound(
    grouped: str, num_groups: int, *, rows: int, m: int, n: int, block_m: int, block_n: int
) -> int:
    """An upper bound of :func:`grouped_tiles`' ``total_tiles`` that reads no group length.

    What a host that keeps ``group_lens`` on the device sizes a persistent
    grid by (extra programs find no tile). ``grouped="m"``: ``rows`` = sum of
    the lengths; ``sum(cdiv(l, bm)) <= (rows + G (bm - 1)) // bm`` (a sum of
    floors is at most the floor of the sum). ``"k"``: exact, ``G`` grids of
    ``m x n`` tiles whatever the lengths.
    """
    _check_grouped(grouped)
    for name, v in (("num_groups", num_groups), ("rows", rows), ("m", m), ("n", n)):
        _non_negative(name, v)
    if grouped == Grouped.K:
        return num_groups * tile_count(m, n, block_m, block_n)
    _positive("block_m", block_m)
    _positive("block_n", block_n)
    return (rows + num_groups * (block_m - 1)) // block_m * cdiv(n, block_n)


# ---- workspace ------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkspaceLayout:
    """Where a launch's counters, flags and partials live.

    Two buffers, as the kernel takes them. ``sync`` (i32): ``num_counters``
    counters (one per chiplet) from ``counter_offset``, ``counter_stride``
    apart, then ``num_flags`` flags (one per program) from ``flag_offset``,
    ``flag_stride`` apart; ``sync_elements`` in all. A flag is the count of
    published partials of the tile its program owns (linear) or whether its
    program's partial is published (tree). ``partials`` (f32): one
    ``block_m x block_n`` row-major tile (rows ``partial_ld`` apart) per
    program, ``partial_stride`` apart; ``partial_elements`` in all. Offsets
    and strides do not depend on the program count (the kernel reads that at
    run time). The host zeroes ``sync`` on the launch stream before every
    launch; partials are always written before they are read
    (release/acquire on the flags), so they are never zeroed.
    ``zero_output``: C itself must be zero before the launch (atomic
    stream-K adds every contribution into it).
    """

    counter_offset: int
    counter_stride: int
    num_counters: int
    flag_offset: int
    flag_stride: int
    num_flags: int
    sync_elements: int
    partial_stride: int
    partial_ld: int
    partial_elements: int
    zero_output: bool = False

    def counter_index(self, xcd: int) -> int:
        """Index (in i32) of chiplet ``xcd``'s counter in ``sync``."""
        if not 0 <= xcd < self.num_counters:
            raise ValueError(f"xcd must be in [0, {self.num_counters}), got {xcd}")
        return self.counter_offset + xcd * self.counter_stride

    def flag_index(self, program: int) -> int:
        """Index (in i32) of ``program``'s flag in ``sync``."""
        if not 0 <= program < self.num_flags:
            raise ValueError(f"program must be in [0, {self.num_flags}), got {program}")
        return self.flag_offset + program * self.flag_stride

    def partial_index(self, program: int) -> int:
        """Index (in f32) of the first element of ``program``'s partial tile."""
        if not 0 <= program < self.num_flags:
            raise ValueError(f"program must be in [0, {self.num_flags}), got {program}")
        return program * self.partial_stride

    @property
    def sync_bytes(self) -> int:
        return self.sync_elements * ELEMENT_BYTES

    @property
    def partials_bytes(self) -> int:
        return self.partial_elements * ELEMENT_BYTES

    @property
    def partials_byte_offset(self) -> int:
        """Where partials start when both buffers share one allocation (256-byte multiple)."""
        return cdiv(self.sync_bytes, PARTIALS_ALIGN) * PARTIALS_ALIGN

    @property
    def total_bytes(self) -> int:
        """Bytes of one allocation holding both (partials at :attr:`partials_byte_offset`)."""
        if not self.partial_elements:
            return self.sync_bytes
        return self.partials_byte_offset + self.partials_bytes


def needs_sync(kind: str, reduction: str | None) -> bool:
    """Whether the kernel takes ``sync``: work stealing's counters, or fix-up flags."""
    return kind == Kind.WORK_STEALING or needs_partials(kind, reduction)


def needs_partials(kind: str, reduction: str | None) -> bool:
    """Whether the kernel takes ``partials``: stream-K with a fix-up reduction."""
    return kind == Kind.STREAM_K and reduction in FIXUP_REDUCTIONS


def _check_grouped(grouped: str) -> None:
    if grouped not in (Grouped.M, Grouped.K):
        raise ValueError(f"grouped must be 'm' or 'k', got {grouped!r}")


def check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(
            f"unknown schedule kind {kind!r}: schedule must be one of {', '.join(map(repr, KINDS))}"
        )


def resolve_reduction(kind: str, reduction: str | None) -> Reduction | None:
    """The reduction a schedule runs with: stream-K defaults to ``linear``; others take none."""
    check_kind(kind)
    if kind != Kind.STREAM_K:
        if reduction is not None:
            raise ValueError(
                f"reduction={reduction!r} needs schedule='stream-k' "
                f"(schedule={kind!r} combines no partials); pass reduction=None"
            )
        return None
    if reduction is None:
        return DEFAULT_REDUCTION
    if reduction not in REDUCTIONS:
        raise ValueError(
            f"reduction must be one of {', '.join(map(repr, REDUCTIONS))} for stream-K; "
            f"got {reduction!r}"
        )
    return Reduction(reduction)


def workspace_layout(
    kind: str,
    reduction: str | None,
    num_programs: int,
    num_xcds: int,
    block_m: int,
    block_n: int,
) -> WorkspaceLayout:
    """The workspace of one launch (see :class:`WorkspaceLayout`)."""
    reduction = resolve_reduction(kind, reduction)
    _positive("num_programs", num_programs)
    _positive("num_xcds", num_xcds)
    _positive("block_m", block_m)
    _positive("block_n", block_n)
    counters = num_xcds if kind == Kind.WORK_STEALING else 0
    fixup = needs_partials(kind, reduction)
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
        partial_ld=block_n,
        partial_elements=num_programs * block_m * block_n if fixup else 0,
        zero_output=kind == Kind.STREAM_K and reduction == Reduction.ATOMIC,
    )


# ---- compiled kernels ------------------------------------------------------------------

#: Element types of the schedule kernels (A, B and C) by name, with the
#: numpy/torch dtype name of each.
DTYPES: dict[str, str] = {"fp16": "float16", "bf16": "bfloat16"}

#: Argument names of a schedule kernel, in order; the optional ones (after
#: ``ldc``) only where :func:`kernel_args` says. ``a``, ``b``, ``c`` row-major
#: operands with leading dimensions ``lda``, ``ldb``, ``ldc`` (in elements);
#: ``group_lens`` (i32, ``num_groups`` entries) for grouped forms; ``sync``
#: (i32) and ``partials`` (f32) the workspace of :func:`workspace_layout`.
#: Dense: C (M x N) = A (M x K) @ B (K x N). ``m``: A (M x K) with
#: M = sum(group_lens), B (G x K x N) (or G x N x K with trans_b), C (M x N).
#: ``k``: A (K x M) and B (K x N) with K = sum(group_lens), C (G*M x N).
ARG_NAMES = (
    *("a", "b", "c", "M", "N", "K", "lda", "ldb", "ldc"),
    *("group_lens", "num_groups", "sync", "partials"),
)


def kernel_args(kind: str, reduction: str | None, grouped: str = Grouped.NONE) -> tuple[str, ...]:
    """The argument names, in order, of the kernel of ``kind``, ``reduction`` and ``grouped``."""
    names = list(ARG_NAMES[:9])
    if grouped != Grouped.NONE:
        names += ["group_lens", "num_groups"]
    if needs_sync(kind, reduction):
        names.append("sync")
    if needs_partials(kind, reduction):
        names.append("partials")
    return tuple(names)


#: K of the MMA instruction: ``block_k`` must be a multiple of it.
MMA_K = 32
#: Rows and columns of one warp's MMA tile.
MMA_M = MMA_N = 16


def warp_grid(num_warps: int) -> tuple[int, int]:
    """(warps along M, warps along N) of a kernel's accumulator."""
    _positive("num_warps", num_warps)
    wm = 1
    while wm * wm < num_warps:
        wm *= 2
    return wm, num_warps // wm


#: Stages of the pipelined body: a ring of ``num_stages`` shared buffers per
#: operand, ``num_stages - 1`` K blocks in flight while one multiplies.
MIN_STAGES = 2
MAX_STAGES = 6


def pipelined(num_warps: int) -> bool:
    """Whether a kernel of ``num_warps`` warps has the pipelined body (a ring of
    2 or more stages: async copies of A and B by two halves of the warps), else
    the blocks body (1 stage). Every form has it, grouped ones included: an
    operand that lies transposed in memory (dgrad's B with ``trans_b``, wgrad's
    A) is copied as it lies and read through a transposed shared-memory view."""
    return num_warps >= 2


def tma_copies(num_warps: int) -> bool:
    """Whether the kernel has a TMA twin (every pipelined kernel does).

    A TMA descriptor bounds by the tensor's shape only, so each twin says why
    its copies need no other bound (:func:`gemm_opt.kernels.schedule_gemm._pipelined_body`):
    dense and grouped "m" K ranges end on a ``block_k`` boundary or at K;
    dgrad's B rows past a group's N reach only output columns past N, which
    the store drops. wgrad (grouped "k") is the exception: its K ranges end at
    group boundaries inside A and B, so its TMA twin makes the two
    descriptors of each group with ``k_end`` rows (one tensormap each, made
    once per group and program by the lowering's group loop, before the
    group's first copy), and a K block that straddles ``k_end`` reads the
    next group's rows as TMA's zero fill, as the aligned twin's masks do."""
    return pipelined(num_warps)


def check_kernel_config(
    *,
    block_m: int,
    block_n: int,
    block_k: int,
    num_warps: int,
    num_stages: int | None,
) -> None:
    """ValueError, naming the argument, for a block shape the kernels are not built for."""
    if block_k % MMA_K:
        raise ValueError(f"block_k must be a multiple of {MMA_K} (the MMA's K), got {block_k}")
    wm, wn = warp_grid(num_warps)
    for name, value, warps, mma in (
        ("block_m", block_m, wm, MMA_M),
        ("block_n", block_n, wn, MMA_N),
    ):
        if value % (mma * warps):
            raise ValueError(
                f"{name} must be a multiple of {mma * warps} ({mma}-wide MMAs over {warps} "
                f"warps of the {wm}x{wn} warp grid of num_warps={num_warps}); the "
                f"{block_m}x{block_n} tile does not split over the warps; got {value}"
            )
    if num_stages is None:
        return
    if pipelined(num_warps):
        if not MIN_STAGES <= num_stages <= MAX_STAGES:
            raise ValueError(
                f"num_stages must be {MIN_STAGES} to {MAX_STAGES} (or None) for this kernel "
                f"(the pipelined body's ring of shared buffers), got {num_stages}"
            )
    elif num_stages != 1:
        raise ValueError(
            f"num_stages must be 1 (or None) for this kernel (the blocks body has 1 stage), "
            f"got {num_stages}"
        )


@dataclass(frozen=True)
class GemmConfig:
    """A kernel configuration: block shape, GROUP_M, warps and pipeline stages."""

    block_m: int = 128
    block_n: int = 128
    block_k: int = 64
    group_m: int = 8
    num_warps: int = 4
    #: Pipeline depth; None: the kernel body's own (2 for the pipelined body,
    #: 1 for the blocks body that loads each K block when it uses it).
    num_stages: int | None = None


#: The configuration the model runs by default (small blocks: quick to interpret).
MODEL_CONFIG = GemmConfig(64, 64, 32, 4, 4)
#: The configurations bundled for the GPU, by name. ``default`` is the base a
#: partial ``config`` dict fills in (its ``num_stages`` None: the body's own;
#: 8 warps, on which stream-K's fix-up does not spill, as it does on 4); the others are the
#: tuned shape classes :func:`gpu_config_name` picks from: 128x256 tiles on 8
#: warps with 3 stages (the dense kernel's large-shape config on H100), 128x128
#: on 8 warps with 3 (also where stream-K's fix-up holds a partial tile next to
#: the accumulator, which spills at 128x256, and at 128x128 on 4 warps), and
#: 64-row tiles for few-row or few-tile shapes, where smaller tiles give more
#: programs (stream-K splits K on top). The 64-row classes take 128-deep K
#: blocks and 4 or 6 stages (about 192 KB of shared memory, one program per
#: SM): on the H100 these shapes are bound by how many bytes each SM keeps in
#: flight, and against 64-deep blocks with 4 stages they measured 128x7168x2048
#: 21.3 us against 25.0, 1024^3 11.2 against 12.3, 64x4096x7168 35.0 against
#: 49.3 (data-parallel, bf16).
GPU_CONFIGS = {
    "default": GemmConfig(128, 128, 64, 8, 8),
    "wide": GemmConfig(128, 256, 64, 8, 8, 3),
    "mid": GemmConfig(128, 128, 64, 8, 8, 3),
    "narrow": GemmConfig(64, 128, 128, 8, 4, 4),
    "small": GemmConfig(64, 64, 128, 8, 4, 6),
}
#: The configuration a partial ``config`` fills in on the GPU.
GPU_CONFIG = GPU_CONFIGS["default"]
#: The shape classes, first match wins: (config name, the fraction of a wave of
#: programs, one per SM, that its tiles must fill, whether stream-K's fix-up
#: reductions may use it). A class also needs at least ``block_m`` rows (a
#: taller tile only multiplies padding). No match: ``small``.
GPU_SHAPE_CLASSES = (("wide", 1.0, False), ("mid", 1.0, True), ("narrow", 0.5, True))


def config_serves(name: str, reduction: str | None) -> bool:
    """Whether the GPU configuration ``name`` is built for ``reduction``: not a
    fix-up reduction at a class that may not take one (its kernels would spill)."""
    return reduction not in FIXUP_REDUCTIONS or all(
        ok for cls, _, ok in GPU_SHAPE_CLASSES if cls == name
    )


def gpu_config_name(
    m: int,
    n: int,
    grouped: str = Grouped.NONE,
    sms: int = 132,
    reduction: str | None = None,
    groups: int = 1,
) -> str:
    """The :data:`GPU_CONFIGS` entry for an ``m x n`` output (grouped m: all
    groups' rows; grouped k: one group's ``m x n``, of which there are
    ``groups``) on a GPU of ``sms`` SMs: the first of
    :data:`GPU_SHAPE_CLASSES` whose tiles fill its share of a wave (and that
    ``reduction`` may use). Every grouped form, dgrad and wgrad included, has
    the pipelined body and so every class."""
    copies = groups if grouped == Grouped.K else 1
    fixup = reduction in FIXUP_REDUCTIONS
    for name, wave, fixup_ok in GPU_SHAPE_CLASSES:
        cfg = GPU_CONFIGS[name]
        if fixup and not fixup_ok:
            continue
        tiles = copies * tile_count(m, n, cfg.block_m, cfg.block_n)
        if m >= cfg.block_m and tiles >= wave * sms:
            return name
    return "small"


#: Arguments an aligned kernel states ``tile.divisibility`` facts on: the
#: leading dimensions, and N and K (the bounds that mask each copy's rows, so
#: a mask covers whole 16-byte vectors). Pointers are 16-byte aligned always.
ALIGNED_ARGS = ("N", "K", "lda", "ldb", "ldc")
#: The divisibility an aligned kernel assumes of :data:`ALIGNED_ARGS`, in elements.
ALIGNMENT = 16


def aligned_args(grouped: str) -> tuple[str, ...]:
    """The arguments an aligned kernel of ``grouped`` states facts on:
    :data:`ALIGNED_ARGS`, and M for grouped "k" (wgrad), whose A is (S, M)
    and is copied as it lies, so its copy rows run along M."""
    return (*ALIGNED_ARGS, "M") if grouped == Grouped.K else ALIGNED_ARGS


def divisibility_facts(
    grouped: str, trans_b: bool, block_k: int, aligned: bool, tma: bool
) -> dict[str, int]:
    """The ``tile.divisibility`` facts a schedule kernel states on its arguments, by
    name: none for a plain kernel; :data:`ALIGNMENT` on :func:`aligned_args` for an
    aligned one; and for a TMA twin of grouped "m" with row-major B, K a multiple of
    ``block_k`` too (B's rows are ``g*K + k``: a K block never reaches the next
    group's weights, which TMA's shape-only bounds would not stop)."""
    if not aligned:
        return {}
    facts = {name: ALIGNMENT for name in aligned_args(grouped)}
    if tma and grouped == Grouped.M and not trans_b:
        facts["K"] = max(ALIGNMENT, block_k)
    return facts


@dataclass(frozen=True)
class KernelSpec:
    """Everything that changes a schedule kernel's binary; ``name`` is its bundle name."""

    kind: Kind
    reduction: Reduction | None
    grouped: Grouped
    dtype: str
    block_m: int
    block_n: int
    block_k: int
    group_m: int
    num_warps: int
    num_stages: int | None
    num_xcds: int = 1
    trans_b: bool = False
    #: Compiled assuming :func:`aligned_args` are multiples of :data:`ALIGNMENT`
    #: (16-byte rows and K steps: direct ``cp.async`` copies on cuda:90); the
    #: runtime launches it only for arguments that are.
    aligned: bool = False
    #: Compiled with TMA copies (cuda:90's ``lds-copies=tma``; an aligned kernel
    #: whose copies are bounded by the tensors' shapes, wgrad's by per-group
    #: descriptors that end at the group's K end; grouped "m" also assumes K a
    #: multiple of ``block_k``); the runtime launches it only for arguments
    #: that satisfy its facts.
    tma: bool = False

    def __post_init__(self) -> None:
        reduction = resolve_reduction(self.kind, self.reduction)
        if self.kind == Kind.STREAM_K and self.reduction is None:
            raise ValueError("a stream-K kernel names its reduction")
        if self.grouped not in GROUPED:
            raise ValueError(f"grouped must be one of {GROUPED}, got {self.grouped!r}")
        # The modes as enums, whichever form the caller gave (equal either way).
        object.__setattr__(self, "kind", Kind(self.kind))
        object.__setattr__(self, "reduction", reduction)
        object.__setattr__(self, "grouped", Grouped(self.grouped))
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {tuple(DTYPES)}, got {self.dtype!r}")
        for name in ("block_m", "block_n", "block_k", "group_m", "num_warps"):
            _positive(name, getattr(self, name))
        if self.num_stages is not None:
            _positive("num_stages", self.num_stages)
        _positive("num_xcds", self.num_xcds)
        if self.tma and not (self.aligned and tma_copies(self.num_warps)):
            raise ValueError("a TMA kernel is aligned and has the pipelined body")

    @property
    def name(self) -> str:
        red = f"_{self.reduction}" if self.reduction else ""
        grp = "" if self.grouped == Grouped.NONE else f"_grouped{self.grouped}"
        tb = "_tb" if self.trans_b else ""
        xcd = f"_x{self.num_xcds}" if self.num_xcds != 1 else ""
        stages = f"_s{self.num_stages}" if self.num_stages is not None else ""
        al = "_aligned" if self.aligned else ""
        al += "_tma" if self.tma else ""
        return (
            f"gemm_{self.kind.replace('-', '')}{red}{grp}{tb}_{self.dtype}_"
            f"{self.block_m}x{self.block_n}x{self.block_k}_g{self.group_m}"
            f"_w{self.num_warps}{stages}{xcd}{al}"
        )

    @property
    def arg_names(self) -> tuple[str, ...]:
        return kernel_args(self.kind, self.reduction, self.grouped)

    @property
    def facts(self) -> dict[str, int]:
        """The divisibility facts its kernel states (:func:`divisibility_facts`)."""
        return divisibility_facts(self.grouped, self.trans_b, self.block_k, self.aligned, self.tma)


__all__ = [
    "ALIGNED_ARGS",
    "ALIGNMENT",
    "ARG_NAMES",
    "COUNTER_STRIDE",
    "DEFAULT_REDUCTION",
    "DTYPES",
    "FIXUP_REDUCTIONS",
    "GPU_CONFIG",
    "GPU_CONFIGS",
    "GPU_SHAPE_CLASSES",
    "GROUPED",
    "GROUPED_KINDS",
    "KINDS",
    "MAX_STAGES",
    "MIN_STAGES",
    "MMA_K",
    "MMA_M",
    "MMA_N",
    "MODEL_CONFIG",
    "REDUCTIONS",
    "GemmConfig",
    "GroupTile",
    "GroupedTiles",
    "KernelSpec",
    "Segment",
    "StreamKPartition",
    "WorkspaceLayout",
    "aligned_args",
    "cdiv",
    "check_kernel_config",
    "check_kind",
    "check_work_stealing",
    "config_serves",
    "gpu_config_name",
    "grid_size",
    "group_starts",
    "grouped_tiles",
    "grouped_tiles_bound",
    "iters_per_tile",
    "kernel_args",
    "needs_partials",
    "needs_sync",
    "persistent_tiles",
    "pipelined",
    "resolve_reduction",
    "stream_k_partition",
    "tile_coords",
    "tile_count",
    "tile_grid",
    "tma_copies",
    "warp_grid",
    "work_stealing_ranges",
    "workspace_layout",
]
