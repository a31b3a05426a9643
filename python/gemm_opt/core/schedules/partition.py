"""The math of GEMM schedules: tile order, work split and workspace layout.

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
* ``split-k``: ``tiles x S`` programs, ``S`` slices of every tile's K
  iterations (:func:`split_k_partition`); the last slice of a tile to
  arrive sums all ``S`` fp32 partials in slice order: bitwise the same
  whatever the arrival order, and for every grid.

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


def check_positive(name: str, value: int) -> None:
    """ValueError naming ``name`` unless ``value`` is a positive int (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def check_non_negative(name: str, value: int) -> None:
    """ValueError naming ``name`` unless ``value`` is a non-negative int (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")


def tile_grid(m: int, n: int, block_m: int, block_n: int) -> tuple[int, int]:
    """(tiles along M, tiles along N) of an ``m x n`` output."""
    check_non_negative("m", m)
    check_non_negative("n", n)
    check_positive("block_m", block_m)
    check_positive("block_n", block_n)
    return cdiv(m, block_m), cdiv(n, block_n)


def tile_count(m: int, n: int, block_m: int, block_n: int) -> int:
    """Output tiles of an ``m x n`` output."""
    pm, pn = tile_grid(m, n, block_m, block_n)
    return pm * pn


def iters_per_tile(k: int, block_k: int) -> int:
    """K iterations of one tile (0 when ``k`` is 0: the tile is all zeros)."""
    check_non_negative("k", k)
    check_positive("block_k", block_k)
    return cdiv(k, block_k)


def tile_coords(tile_id: int, num_pid_m: int, num_pid_n: int, group_m: int) -> tuple[int, int]:
    """(pid_m, pid_n) of ``tile_id`` in GROUP_M order.

    Tiles are walked column by column inside bands of ``group_m`` tile rows
    (the last band may be narrower), so consecutive tiles share B columns
    and the band's A rows stay in L2. ``group_m = 1`` is row-major order.
    """
    check_positive("num_pid_m", num_pid_m)
    check_positive("num_pid_n", num_pid_n)
    check_positive("group_m", group_m)
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
    stream-K launches exactly ``num_programs`` (its split depends on it), and
    so does split-K, whose ``num_programs`` is ``tiles * S``
    (:attr:`SplitKPartition.num_programs`).
    """
    check_kind(kind)
    check_non_negative("total_tiles", total_tiles)
    check_positive("num_programs", num_programs)
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
    check_non_negative("total_tiles", total_tiles)
    check_positive("num_xcds", num_xcds)
    per = cdiv(total_tiles, num_xcds)
    return [(min(x * per, total_tiles), min((x + 1) * per, total_tiles)) for x in range(num_xcds)]


def check_work_stealing(num_programs: int, num_xcds: int) -> None:
    """Every chiplet needs a program, or its tiles are never claimed."""
    check_positive("num_programs", num_programs)
    check_positive("num_xcds", num_xcds)
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
        # Equivalent mutant: it <= big: at it == big both branches give r.
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
    check_non_negative("total_tiles", total_tiles)
    check_non_negative("iters_per_tile", iters_per_tile)
    check_positive("num_programs", num_programs)
    t, i, p = total_tiles, iters_per_tile, num_programs
    if t % p == 0:
        sk = 0
    else:
        # Equivalent mutant: t >= p: t == p means t % p == 0, taken by the branch above.
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
    fills and two epilogues, and the slowest program sets the kernel's time
    (figures: ``docs/schedule-tuning-history.md``).
    """
    check_positive("max_programs", max_programs)
    if not 0 < slack <= 1:
        raise ValueError(f"slack must be in (0, 1], got {slack}")
    if stream_k_partition(total_tiles, iters_per_tile, max_programs).sk_tiles == 0:
        return max_programs
    # Equivalent mutant: max(2, ...): one program never aligns (t % 1 == 0: no stream-K tile).
    for p in range(max_programs, max(1, math.ceil(slack * max_programs)) - 1, -1):
        if stream_k_partition(total_tiles, iters_per_tile, p).aligned:
            return p
    return max_programs


# ---- split-K ---------------------------------------------------------------------------

#: The most slices of one tile: a bound on the serial sum of the other ``S - 1``
#: partial tiles that the last program of each tile does (one load and add each).
MAX_SPLIT_K = 256


@dataclass(frozen=True)
class SplitKPartition:
    """Every tile's K iterations cut into ``split_k`` contiguous slices, one program each.

    With ``q, r = divmod(iters_per_tile, S)`` slice ``s`` takes iterations
    ``[s*q + min(s, r), (s+1)*q + min(s+1, r))``: balanced (sizes differ by at
    most one), in order, covering the tile once. Program ``p`` computes slice
    ``p // tiles`` of tile ``p % tiles`` (slice-major: consecutive programs are
    one slice of neighbouring tiles, which read the same K columns of A
    together) and writes its fp32 partial to partial slot ``p``. Each program
    then adds 1 to its tile's counter (acq_rel); the one that sees ``S - 1``
    arrived last: it sums the slots of slices ``0, 1, ..., S-1`` in that order
    (its own partial at its place, from registers) and stores C. The sum's
    order never depends on which program arrives last, nor on the grid: split-K
    is bitwise reproducible. No program waits for another (no residency
    requirement, unlike stream-K's fix-ups).
    """

    total_tiles: int
    iters_per_tile: int
    split_k: int

    @property
    def num_programs(self) -> int:
        """The grid: one program per (tile, slice)."""
        return self.total_tiles * self.split_k

    def slice_range(self, s: int) -> tuple[int, int]:
        """K iterations ``[begin, end)`` of slice ``s`` (empty when the tile has
        fewer iterations than slices, as when K is 0)."""
        if not 0 <= s < self.split_k:
            raise ValueError(f"slice must be in [0, {self.split_k}), got {s}")
        q, r = divmod(self.iters_per_tile, self.split_k)
        return s * q + min(s, r), (s + 1) * q + min(s + 1, r)

    def place(self, program: int) -> tuple[int, int]:
        """(tile, slice) of ``program``."""
        if not 0 <= program < self.num_programs:
            raise ValueError(f"program must be in [0, {self.num_programs}), got {program}")
        s, tile = divmod(program, self.total_tiles)
        return tile, s

    def program(self, tile: int, s: int) -> int:
        """The program (and partial slot) of slice ``s`` of ``tile``."""
        if not 0 <= tile < self.total_tiles or not 0 <= s < self.split_k:
            raise ValueError(f"(tile, slice) must be below {(self.total_tiles, self.split_k)}")
        return s * self.total_tiles + tile

    def segments(self, program: int) -> list[Segment]:
        """What ``program`` computes: one segment, its slice of its tile."""
        tile, s = self.place(program)
        return [Segment(tile, *self.slice_range(s), self.iters_per_tile)]

    def sum_order(self, tile: int) -> list[int]:
        """The partial slots ``tile``'s last program adds, in order (slices 0..S-1)."""
        return [self.program(tile, s) for s in range(self.split_k)]


def check_split_k(split_k: int, iters_per_tile: int) -> None:
    """ValueError naming ``split_k`` unless it is 1 to :data:`MAX_SPLIT_K` and at most
    the iterations per tile (every slice at least one ``block_k`` step; 1 when K is 0)."""
    check_positive("split_k", split_k)
    check_non_negative("iters_per_tile", iters_per_tile)
    most = min(max(iters_per_tile, 1), MAX_SPLIT_K)
    if split_k > most:
        raise ValueError(
            f"split_k must be at most {most} (the {iters_per_tile} block_k iterations of a "
            f"tile, and at most {MAX_SPLIT_K}): every slice takes at least one; got {split_k}"
        )


def split_k_partition(total_tiles: int, iters_per_tile: int, split_k: int) -> SplitKPartition:
    """The split-K partition of ``total_tiles`` tiles into ``split_k`` slices each."""
    check_non_negative("total_tiles", total_tiles)
    check_split_k(split_k, iters_per_tile)
    return SplitKPartition(total_tiles, iters_per_tile, split_k)


def split_k_count(total_tiles: int, iters_per_tile: int, num_programs: int) -> int:
    """The slices per tile that fill ``num_programs`` programs: the most with
    ``tiles * S <= num_programs`` (at least 1), within :func:`check_split_k`'s bounds."""
    check_non_negative("total_tiles", total_tiles)
    check_non_negative("iters_per_tile", iters_per_tile)
    check_positive("num_programs", num_programs)
    most = min(max(iters_per_tile, 1), MAX_SPLIT_K)
    return max(1, min(num_programs // max(total_tiles, 1), most))


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
        check_non_negative(name, v)
    check_positive("group_m", group_m)
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
        check_non_negative(name, v)
    if grouped == Grouped.K:
        return num_groups * tile_count(m, n, block_m, block_n)
    check_positive("block_m", block_m)
    check_positive("block_n", block_n)
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
    program's partial is published (tree); split-K's flag ``t`` counts the
    arrived slices of tile ``t`` (tiles <= programs). ``partials`` (f32): one
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
    """Whether the kernel takes ``partials``: stream-K with a fix-up reduction, split-K."""
    return kind == Kind.SPLIT_K or (kind == Kind.STREAM_K and reduction in FIXUP_REDUCTIONS)


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
    check_positive("num_programs", num_programs)
    check_positive("num_xcds", num_xcds)
    check_positive("block_m", block_m)
    check_positive("block_n", block_n)
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


__all__ = [
    "COUNTER_STRIDE",
    "ELEMENT_BYTES",
    "MAX_SPLIT_K",
    "PARTIALS_ALIGN",
    "STREAM_K_ALIGN_SLACK",
    "GroupTile",
    "GroupedTiles",
    "Segment",
    "SplitKPartition",
    "StreamKPartition",
    "WorkspaceLayout",
    "aligned_stream_k_programs",
    "cdiv",
    "check_kind",
    "check_non_negative",
    "check_positive",
    "check_split_k",
    "check_work_stealing",
    "grid_size",
    "group_starts",
    "grouped_tiles",
    "grouped_tiles_bound",
    "iters_per_tile",
    "needs_partials",
    "needs_sync",
    "persistent_tiles",
    "resolve_reduction",
    "split_k_count",
    "split_k_partition",
    "stream_k_partition",
    "tile_coords",
    "tile_count",
    "tile_grid",
    "work_stealing_ranges",
    "workspace_layout",
]
