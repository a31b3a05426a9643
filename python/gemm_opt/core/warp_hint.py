"""The ``warp_used_hint`` rule: the single source of truth.

A TDM copy (global to shared memory) is normally split evenly over all
``num_warps`` warps of the CTA.  The optional ``warp_used_hint`` is a bitmask
that names the warps which take part instead: bit ``n`` set means warp ``n``
(its hardware wave id) carries a share of the block.  The data written to
shared memory never changes, only the work split does; the other warps still
issue the instruction, with a zero predicate.

The legal hints
---------------
Write ``T = log2(num_warps)``: a warp id is a ``T``-bit vector.  A hint is
legal iff its set of warps is an *axis-aligned affine subspace* of
``{0, 1}^T``: every warp-id bit is independently

* **free** (it varies over the active warps),
* **pinned to 0**, or
* **pinned to 1**.

Hence there are exactly ``3 ** T`` legal hints (1, 3, 9, 27, 81 for 1, 2, 4,
8, 16 warps), and a legal hint with ``f`` free bits selects ``K = 2 ** f``
warps.  Examples with 8 warps: ``0b00001111`` (bit 2 pinned to 0, bits 0 and 1
free), ``0b11110000`` (bit 2 pinned to 1), ``0b01010101`` (bit 0 pinned to 0),
``0b11001100`` (bit 1 pinned to 1), ``0b00010001`` (bits 0 and 1 pinned to 0,
bit 2 free).  ``0b01101001`` (warps 0, 3, 5, 6) is illegal: its warps differ
in all three bits, yet there are only four of them.

The checks, in order (the order of Triton 3.9.0's verifier, so that the first
failing rule is the one Triton reports; the rule id is ``WarpHintError.rule``):

============================  ==============================================
rule id                       condition
============================  ==============================================
``hint-out-of-range``         the hint fits an ``i32`` attribute: it lies in
                              ``[-2**31, 2**32)``; it is then read as
                              ``uint32`` (``-1`` is ``0xffffffff``)
``num-warps-missing``         ``num_warps`` is known (Triton aborts instead)
``num-warps-not-pow2``        ``num_warps`` is a power of two
``num-warps-too-large``       ``num_warps < 32``
``zero-hint``                 ``hint != 0`` (omit the hint for "all warps")
``bits-beyond``               no bit at or above ``num_warps`` is set
``popcount-not-pow2``         ``K = popcount(hint)`` is a power of two
``not-axis-aligned``          with ``i0`` the lowest active warp,
                              ``popcount(OR_w (w ^ i0)) == log2(K)``
``partitioned-pieces``        for a partitioned shared layout,
                              ``num_logical_pieces`` divides ``K``, so the
                              copy is one TDM instruction
``block-too-small``           (needs ``block_shape``) the TDM warp
                              distribution places all ``K`` warps on the
                              block; Triton only asserts this in lowering
============================  ==============================================

The last rule goes beyond Triton's verifier: Triton accepts such hints and
then fails an assertion while lowering.  Without a partitioned layout it fails
iff ``K`` exceeds the number of block elements (``[2, 2]`` with ``K = 8``);
with a partitioned layout whose partition dim is the innermost dim the warps
cannot be spread past the pieces, so it fails sooner (``[2, 128]`` with two
pieces along dim 1 places at most 4 warps).

The fused copy (:func:`check_fused_warp_hints`) takes 2 to 4 members; every
member's hint must pass the rules above and the hints must be pairwise
disjoint.  Their union is unconstrained.

"All warps": ``hint=None``
--------------------------
``None`` means "no hint attribute": every warp takes part, and the copy is
split over ``num_warps`` warps with the plain distribution, which predicates
surplus warps off on small blocks (so, unlike the full mask, it never fails
the ``block-too-small`` rule).  Triton checks nothing when the attribute is
absent; here ``num_warps`` must still be a power of two so that the active set
can be described, but the ``< 32`` limit (a hint-only limit) does not apply.
When both ``hint`` and ``num_warps`` are ``None`` there is nothing to describe
and :func:`check_warp_used_hint` returns ``None`` (a verifier mirrors Triton
by accepting).  A verifier that wants Triton's exact acceptance calls
:func:`check_warp_used_hint` only when the attribute is present.

Nearest legal hints
-------------------
Error messages and :func:`nearest_legal_hints` suggest replacements.  The
candidates are the hints that would pass every check in the same context
(same ``num_warps``, block shape, shared layout, and for fused members
disjoint from the earlier members).  If any candidate has the hint's own
popcount ``K``, only those are considered (keep the user's warp count: for
``0b01101001`` suggest four-warp hints, not the closer single warps).  The
nearest are those at the minimum Hamming distance from the hint (read as
``uint32``); ties are ordered by ``|popcount(candidate) - K|``, then by
ascending value.  Messages show at most :data:`MESSAGE_SUGGESTIONS` of them,
in binary, zero-padded to ``num_warps`` digits: ``did you mean 0b00001111 or
0b11110000?``.

Hints print in hex as Triton prints them (``0x69``) and in binary where the
bit pattern matters.

Invalid *arguments* (a non-integer hint, an empty block shape, a partitioned
layout whose pieces do not divide the block) raise ``TypeError`` or plain
``ValueError``; :class:`WarpHintError` is reserved for rule violations.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import product
from typing import overload

from gemm_opt.core.layouts import PartitionedShared, SharedLayout

#: Rule ids of the single-copy check, in the order they are tested.
SINGLE_RULES: tuple[str, ...] = (
    "hint-out-of-range",
    "num-warps-missing",
    "num-warps-not-pow2",
    "num-warps-too-large",
    "zero-hint",
    "bits-beyond",
    "popcount-not-pow2",
    "not-axis-aligned",
    "partitioned-pieces",
    "block-too-small",
)

#: Rule ids that only the fused copy can break.
FUSED_RULES: tuple[str, ...] = (
    "fused-member-count",
    "fused-dest-count",
    "fused-hint-count",
    "fused-rank-mismatch",
    "fused-hint-missing",
    "fused-overlap",
)

#: Every rule id a :class:`WarpHintError` can carry.
RULES: tuple[str, ...] = SINGLE_RULES + FUSED_RULES

#: Most suggestions an error message shows.
MESSAGE_SUGGESTIONS = 3

#: Triton stores the hint in an ``i32`` attribute and reads it as ``uint32``.
_U32 = 0xFFFFFFFF
#: ``num_warps`` must stay below this when a hint is given.
_MAX_HINT_WARPS = 32


class WarpHintError(ValueError):
    """A ``warp_used_hint`` (or fused-copy) rule is violated.

    Attributes:
        rule: stable rule id, one of :data:`RULES`.
        hint: the offending hint as given (``None`` when not applicable).
        num_warps: the warp count it was checked against (may be ``None``).
        suggestions: nearest legal hints (see the module docstring); may be
            empty.
        member: index of the offending fused-copy member, else ``None``.

    ``str(err)`` is the full user-facing message.
    """

    def __init__(
        self,
        message: str,
        *,
        rule: str,
        hint: int | None = None,
        num_warps: int | None = None,
        suggestions: tuple[int, ...] = (),
        member: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.rule = rule
        self.hint = hint
        self.num_warps = num_warps
        self.suggestions = tuple(suggestions)
        self.member = member

    def __reduce__(self):  # keep the keyword attributes through pickling
        return (
            _rebuild_error,
            (
                self.message,
                self.rule,
                self.hint,
                self.num_warps,
                self.suggestions,
                self.member,
            ),
        )


def _rebuild_error(message, rule, hint, num_warps, suggestions, member):
    return WarpHintError(
        message,
        rule=rule,
        hint=hint,
        num_warps=num_warps,
        suggestions=suggestions,
        member=member,
    )


# --------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------


def _popcount(x: int) -> int:
    return x.bit_count()


def _is_pow2(x: int) -> bool:
    return x > 0 and x & (x - 1) == 0


def _bits(x: int) -> tuple[int, ...]:
    """Positions of the set bits of a non-negative ``x``, ascending."""
    out = []
    pos = 0
    while x:
        if x & 1:
            out.append(pos)
        x >>= 1
        pos += 1
    return tuple(out)


def _as_int(value, what: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an int, got a bool ({value!r})")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an int, got {type(value).__name__}") from None


def _as_u32(hint: int) -> int:
    """The hint as Triton reads it: ``uint32`` (``-1`` -> ``0xffffffff``)."""
    return hint & _U32 if hint < 0 else hint


def format_hex(hint: int) -> str:
    """Triton's spelling of a hint: lower-case hex of its ``uint32`` value."""
    return f"0x{_as_u32(hint):x}"


def format_mask(hint: int, num_warps: int | None = None) -> str:
    """Binary spelling of a hint, zero-padded to ``num_warps`` digits.

    Negative hints are read as ``uint32``.  Bits at or above ``num_warps``
    widen the field instead of being dropped: ``format_mask(0x201, 8)`` is
    ``0b1000000001``.
    """
    u = _as_u32(_as_int(hint, "warp_used_hint"))
    # A hint has 32 bits: pad to at most that many, however large num_warps is.
    width = max(min(num_warps or 1, 32), u.bit_length(), 1)
    return f"0b{u:0{width}b}"


def format_warps(warps: Sequence[int]) -> str:
    """A warp set as users read it: ``{0, 3, 5, 6}``, runs as ``{0..3}``.

    Runs of three or more consecutive warps are shortened (``{0..3, 8..11}``);
    an empty set is ``{}``.
    """
    return "{" + _runs(warps) + "}"


def _runs(values: Sequence[int]) -> str:
    """``0, 3, 5, 6`` with runs of three or more shortened to ``a..b``."""
    ws = sorted(set(values))
    parts: list[str] = []
    i = 0
    while i < len(ws):
        j = i
        while j + 1 < len(ws) and ws[j + 1] == ws[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(f"{ws[i]}..{ws[j]}")
        else:
            parts.extend(str(w) for w in ws[i : j + 1])
        i = j + 1
    return ", ".join(parts)


def _format_bits(bits: Sequence[int]) -> str:
    """``bit 2``, ``bits 0, 1``, ``bits 8..15``."""
    bits = list(bits)
    if len(bits) == 1:
        return f"bit {bits[0]}"
    return "bits " + _runs(bits)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _describe_selection(u: int, num_warps: int | None) -> str:
    """``hint 0x69 = 0b01101001 selects warps {0, 3, 5, 6}``."""
    warps = _bits(u)
    head = f"hint {format_hex(u)} = {format_mask(u, num_warps)}"
    if not warps:
        return f"{head} selects no warps"
    noun = "warp" if len(warps) == 1 else "warps"
    return f"{head} selects {noun} {format_warps(warps)}"


def _did_you_mean(suggestions: Sequence[int], num_warps: int) -> str:
    shown = [format_mask(s, num_warps) for s in suggestions[:MESSAGE_SUGGESTIONS]]
    if not shown:
        return ""
    if len(shown) == 1:
        return f"; did you mean {shown[0]}?"
    return f"; did you mean {', '.join(shown[:-1])} or {shown[-1]}?"


# --------------------------------------------------------------------------
# Warp distributions (shared with the TDM layout)
# --------------------------------------------------------------------------


def _check_block_shape(block_shape: Sequence[int]) -> tuple[int, ...]:
    shape = tuple(_as_int(d, "block dimension") for d in block_shape)
    if not shape:
        raise ValueError("block_shape must have at least one dimension")
    if any(d < 1 for d in shape):
        raise ValueError(f"block dimensions must be positive, got {list(shape)}")
    return shape


def _check_partition_fits(shape: tuple[int, ...], layout: SharedLayout | None) -> None:
    """A partitioned layout must cut an existing dim into whole pieces."""
    if not isinstance(layout, PartitionedShared):
        return
    pieces = layout.num_logical_pieces
    pdim = layout.partition_dim
    if not 0 <= pdim < len(shape):
        raise ValueError(
            f"partitioned shared layout partitions dim {pdim}, but the block "
            f"{list(shape)} has rank {len(shape)}"
        )
    if pieces < 1 or shape[pdim] % pieces:
        raise ValueError(
            f"partitioned shared layout cuts dim {pdim} into {pieces} logical "
            f"pieces, which does not divide the block extent {shape[pdim]} "
            f"(block {list(shape)})"
        )


def warp_distribution(block_shape: Sequence[int], k: int) -> tuple[int, ...]:
    """Warps per dim (``warpsPerCTA``) when ``k`` warps copy ``block_shape``.

    Greedy from dim 0 (outermost) to the innermost dim: keep doubling a dim's
    warp count while warps remain and the doubled count still fits the dim,
    then move on.  Warps left once every dim is saturated are not placed (the
    plain copy predicates them off).  For power-of-two dims the product is
    ``min(k, prod(block_shape))``.
    """
    shape = _check_block_shape(block_shape)
    warps = [1] * len(shape)
    remaining = _as_int(k, "k")
    for d, extent in enumerate(shape):
        while remaining > 1 and warps[d] * 2 <= extent:
            warps[d] *= 2
            remaining //= 2
    return tuple(warps)


def partitioned_warp_distribution(
    block_shape: Sequence[int], k: int, layout: PartitionedShared
) -> tuple[tuple[int, ...], int]:
    """Partition-aware warp distribution: ``(warpsPerCTA, num_instructions)``.

    Every warp's tile must stay inside one logical piece of ``layout``:

    1. ``gcd(k, pieces)`` warps go along the partition dim; the copy needs
       ``ceil(pieces / that)`` TDM instructions.
    2. If the partition dim is not the innermost dim, pieces are split further
       along it (doubling) while warps remain, the piece size stays divisible
       and the doubled count fits the dim.
    3. The remaining warps are spread greedily over the dims that are neither
       the partition dim nor the innermost dim; the innermost dim is never
       split beyond the pieces (so TDM's linear padding stays row-aligned).

    Warps that cannot be placed are dropped; ``prod(warpsPerCTA) < k`` then.
    """
    shape = _check_block_shape(block_shape)
    _check_partition_fits(shape, layout)
    k = _as_int(k, "k")
    pieces = layout.num_logical_pieces
    pdim = layout.partition_dim
    inner = len(shape) - 1
    piece_size = shape[pdim] // pieces
    along = math.gcd(k, pieces)
    num_instructions = -(-pieces // along)
    remaining = k // along
    if pdim != inner:
        while remaining >= 2 and along * 2 <= shape[pdim]:
            per_piece = along // pieces
            if per_piece == 0 or piece_size % (per_piece * 2):
                break
            along *= 2
            remaining //= 2
    warps = [1] * len(shape)
    warps[pdim] = along
    for d, extent in enumerate(shape):
        if d in (pdim, inner):
            continue
        while remaining > 1 and warps[d] * 2 <= extent:
            warps[d] *= 2
            remaining //= 2
    return tuple(warps), num_instructions


def placeable_warps(
    block_shape: Sequence[int], k: int, shared_layout: SharedLayout | None = None
) -> int:
    """How many of ``k`` warps the TDM distribution gives a tile on the block."""
    if isinstance(shared_layout, PartitionedShared):
        warps, _ = partitioned_warp_distribution(block_shape, k, shared_layout)
    else:
        warps = warp_distribution(block_shape, k)
    return math.prod(warps)


# --------------------------------------------------------------------------
# The described hint
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class WarpHint:
    """A legal warp selection, as the lowering needs it.

    Attributes:
        hint: the mask in use (the full mask ``(1 << num_warps) - 1`` when no
            hint was given).
        num_warps: warps in the CTA.
        explicit: whether a hint was given (``False`` for "all warps").
        active: active warp ids, ascending.
        anchor: the lowest active warp (``i0``); the lowering XORs warp ids
            with it so that the anchor takes tile 0.
        fixed_bits: warp-id bit positions pinned over the active warps.
        varying_bits: warp-id bit positions that vary (the "support").
        fixed_mask: ``((1 << T) - 1) & ~varying_mask`` with
            ``T = log2(num_warps)``: the pinned bits, which Triton's lowering
            calls the free mask (warp-id bits that move no tile); warp ``w``
            is active iff ``(w ^ anchor) & fixed_mask == 0``.
        varying_mask: OR of the varying bits.
        k: number of active warps, ``popcount(hint)``.
    """

    hint: int
    num_warps: int
    explicit: bool
    active: tuple[int, ...]
    anchor: int
    fixed_bits: tuple[int, ...]
    varying_bits: tuple[int, ...]
    fixed_mask: int
    varying_mask: int
    k: int

    @property
    def num_warp_bits(self) -> int:
        """``T = log2(num_warps)``, the width of a warp id."""
        return self.num_warps.bit_length() - 1

    @property
    def fixed_value(self) -> int:
        """Values of the pinned bits: warp ``w`` is active iff
        ``w & fixed_mask == fixed_value``."""
        return self.anchor & self.fixed_mask

    @property
    def is_full(self) -> bool:
        """Whether every warp is active."""
        return self.k == self.num_warps

    def is_active(self, warp: int) -> bool:
        """Whether ``warp`` takes part in the copy."""
        return 0 <= warp < self.num_warps and (self.hint >> warp) & 1 == 1

    def slot(self, warp: int) -> int:
        """Index of an active warp's tile, in ``0 .. k-1``.

        The bits of ``warp ^ anchor`` at the varying positions, packed
        (lowest varying bit first).  The anchor gets slot 0.
        """
        if not self.is_active(warp):
            raise ValueError(
                f"warp {warp} is not active in {format_mask(self.hint, self.num_warps)}"
            )
        rel = warp ^ self.anchor
        return sum(((rel >> b) & 1) << i for i, b in enumerate(self.varying_bits))

    def describe(self) -> str:
        """``0b11110000 (warps {4..7}; bit 2 pinned to 1; bits 0, 1 vary)``."""
        parts = [f"warps {format_warps(self.active)}"]
        pinned = [f"{b} = {(self.anchor >> b) & 1}" for b in self.fixed_bits]
        if pinned:
            parts.append("pinned: bit " + ", bit ".join(pinned))
        if self.varying_bits:
            verb = "varies" if len(self.varying_bits) == 1 else "vary"
            parts.append(f"{_format_bits(self.varying_bits)} {verb}")
        return f"{format_mask(self.hint, self.num_warps)} ({'; '.join(parts)})"


def _support(u: int) -> int:
    """OR over active warps ``w`` of ``w ^ i0``: the bits that vary."""
    i0 = (u & -u).bit_length() - 1
    support = 0
    for w in _bits(u):
        support |= w ^ i0
    return support


def _make_warp_hint(u: int, num_warps: int, explicit: bool) -> WarpHint:
    t = num_warps.bit_length() - 1
    support = _support(u)
    full = (1 << t) - 1
    fixed_mask = full & ~support
    return WarpHint(
        hint=u,
        num_warps=num_warps,
        explicit=explicit,
        active=_bits(u),
        anchor=(u & -u).bit_length() - 1,
        fixed_bits=_bits(fixed_mask),
        varying_bits=_bits(support),
        fixed_mask=fixed_mask,
        varying_mask=support,
        k=_popcount(u),
    )


def _axis_aligned(u: int) -> bool:
    k = _popcount(u)
    return _popcount(_support(u)) == k.bit_length() - 1


@cache
def legal_hints(num_warps: int) -> tuple[int, ...]:
    """Every legal hint for ``num_warps`` warps, ascending (memoized).

    There are ``3 ** log2(num_warps)`` of them for ``num_warps`` in 1, 2, 4,
    8, 16, and none for other warp counts (Triton rejects any hint there).
    """
    num_warps = _as_int(num_warps, "num_warps")
    if not _is_pow2(num_warps) or num_warps >= _MAX_HINT_WARPS:
        return ()
    t = num_warps.bit_length() - 1
    masks = set()
    # Each warp-id bit is free (None), pinned to 0 or pinned to 1.
    for choice in product((None, 0, 1), repeat=t):
        mask = 0
        for w in range(num_warps):
            if all(c is None or (w >> b) & 1 == c for b, c in enumerate(choice)):
                mask |= 1 << w
        masks.add(mask)
    return tuple(sorted(masks))


@lru_cache(maxsize=4096)
def _candidates(
    num_warps: int,
    block_shape: tuple[int, ...] | None,
    shared_layout: SharedLayout | None,
    disjoint_from: int,
) -> tuple[int, ...]:
    """Legal hints that also pass the layout checks in this context."""
    pieces = shared_layout.num_logical_pieces if isinstance(shared_layout, PartitionedShared) else 1
    placeable: dict[int, int] = {}
    out = []
    for c in legal_hints(num_warps):
        if c & disjoint_from:
            continue
        k = c.bit_count()
        if k % pieces:
            continue
        if block_shape is not None:
            if k not in placeable:
                placeable[k] = placeable_warps(block_shape, k, shared_layout)
            if placeable[k] < k:
                continue
        out.append(c)
    return tuple(out)


@lru_cache(maxsize=4096)
def _candidates_with_popcount(
    num_warps: int,
    block_shape: tuple[int, ...] | None,
    shared_layout: SharedLayout | None,
    disjoint_from: int,
    k: int,
) -> tuple[int, ...]:
    cands = _candidates(num_warps, block_shape, shared_layout, disjoint_from)
    return tuple(c for c in cands if c.bit_count() == k)


def nearest_legal_hints(
    hint: int,
    num_warps: int,
    limit: int = 2,
    *,
    block_shape: Sequence[int] | None = None,
    shared_layout: SharedLayout | None = None,
    disjoint_from: int = 0,
) -> tuple[int, ...]:
    """The legal hints nearest to ``hint`` (at most ``limit`` of them).

    Candidates are the hints that pass every check for ``num_warps`` (and,
    when given, ``block_shape`` / ``shared_layout``) and share no warp with
    ``disjoint_from``.  If some candidates select as many warps as ``hint``
    (same popcount), only those are kept: the user's ``K`` is preserved when
    it can be.  Of the rest, only those at the minimum Hamming distance from
    ``hint`` (read as ``uint32``) are returned, ordered by
    ``|popcount(candidate) - popcount(hint)|`` then by ascending value.  Empty
    when no hint is legal in that context (e.g. ``num_warps = 3``).
    """
    u = _as_u32(_as_int(hint, "warp_used_hint"))
    num_warps = _as_int(num_warps, "num_warps")
    if block_shape is not None:
        block_shape = _check_block_shape(block_shape)
    k = u.bit_count()
    cands = _candidates_with_popcount(
        num_warps, block_shape, shared_layout, disjoint_from, k
    ) or _candidates(num_warps, block_shape, shared_layout, disjoint_from)
    if not cands or limit <= 0:
        return ()
    dist = [(c ^ u).bit_count() for c in cands]
    best = min(dist)
    nearest = [c for c, d in zip(cands, dist, strict=True) if d == best]
    nearest.sort(key=lambda c: (abs(c.bit_count() - k), c))
    return tuple(nearest[:limit])


# --------------------------------------------------------------------------
# The checks
# --------------------------------------------------------------------------


class _Ctx:
    """What a check needs to word its errors (single copy or fused member)."""

    def __init__(
        self,
        num_warps: int | None,
        block_shape: tuple[int, ...] | None,
        shared_layout: SharedLayout | None,
        member: int | None = None,
        disjoint_from: int = 0,
    ) -> None:
        self.num_warps = num_warps
        self.block_shape = block_shape
        self.shared_layout = shared_layout
        self.member = member
        self.disjoint_from = disjoint_from

    def fail(
        self,
        rule: str,
        message: str,
        hint: int | None,
        *,
        suggest: bool = True,
        note: str = "",
    ) -> WarpHintError:
        suggestions: tuple[int, ...] = ()
        if note:
            message += f" ({note})"
        if suggest and hint is not None and self.num_warps is not None:
            suggestions = nearest_legal_hints(
                hint,
                self.num_warps,
                limit=MESSAGE_SUGGESTIONS,
                block_shape=self.block_shape,
                shared_layout=self.shared_layout,
                disjoint_from=self.disjoint_from,
            )
            message += _did_you_mean(suggestions, self.num_warps)
        if self.member is not None:
            message = f"member {self.member}: {message}"
        return WarpHintError(
            message,
            rule=rule,
            hint=hint,
            num_warps=self.num_warps,
            suggestions=suggestions,
            member=self.member,
        )


def _check_range(hint: int, ctx: _Ctx) -> int:
    if not -(1 << 31) <= hint <= _U32:
        raise ctx.fail(
            "hint-out-of-range",
            f"warp_used_hint = {hint} ({hint:#x}) does not fit in 32 bits: it is "
            "stored as an i32 attribute and read as uint32",
            None,
        )
    return _as_u32(hint)


def _check_num_warps(hint: int, u: int, ctx: _Ctx) -> None:
    nw = ctx.num_warps
    if nw is not None and _is_pow2(nw) and nw < _MAX_HINT_WARPS:
        return
    sel = _describe_selection(u, nw)
    if nw is None:
        raise ctx.fail(
            "num-warps-missing",
            f"warp_used_hint = {format_hex(u)} needs the number of warps, but the op "
            "is not contained within a context that specifies the number of warps "
            f"({sel}; set num_warps on the kernel, or tile.num_warps on the module)",
            hint,
            suggest=False,
        )
    if not _is_pow2(nw):
        raise ctx.fail(
            "num-warps-not-pow2",
            f"num_warps must be a power of two when using warp_used_hint, got {nw} "
            f"({sel}; each warp-id bit must be free or pinned, which needs a "
            "power-of-two warp count: use 1, 2, 4, 8 or 16)",
            hint,
            suggest=False,
        )
    if nw >= _MAX_HINT_WARPS:
        raise ctx.fail(
            "num-warps-too-large",
            "num_warps must be less than 32 when using warp_used_hint, got "
            f"{nw} ({sel}; a hint addresses at most 16 warps: use num_warps <= 16 "
            "or omit warp_used_hint)",
            hint,
            suggest=False,
        )


def _check_mask(hint: int, u: int, ctx: _Ctx) -> WarpHint:
    """Rules zero-hint .. not-axis-aligned, for a valid ``num_warps``."""
    nw = ctx.num_warps
    assert nw is not None
    if u and not u >> nw and _is_pow2(u.bit_count()) and _axis_aligned(u):
        return _make_warp_hint(u, nw, True)
    sel = _describe_selection(u, nw)
    if u == 0:
        raise ctx.fail(
            "zero-hint",
            f"warp_used_hint must have at least one bit set; {sel}, so no warp would "
            f"copy the block (omit warp_used_hint to use all {nw} warps)",
            hint,
        )
    if u >> nw:
        extra_bits = [b + nw for b in _bits(u >> nw)]
        exist = "warp 0 exists" if nw == 1 else f"warps {format_warps(range(nw))} exist"
        raise ctx.fail(
            "bits-beyond",
            f"warp_used_hint = {format_hex(u)} sets bits beyond num_warps = {nw}; "
            f"{sel}, but only {exist} ({_format_bits(extra_bits)} set)",
            hint,
        )
    k = _popcount(u)
    if not _is_pow2(k):
        raise ctx.fail(
            "popcount-not-pow2",
            f"popcount(warp_used_hint) = {k} must be a power of two (got hint "
            f"{format_hex(u)}); {sel}, but a TDM copy splits the block evenly "
            "over a power-of-two number of warps",
            hint,
        )
    if not _axis_aligned(u):
        t = nw.bit_length() - 1
        log_k = k.bit_length() - 1
        support = _support(u)
        varying = _bits(support)
        pinned = [b for b in range(t) if not (support >> b) & 1]
        i0 = (u & -u).bit_length() - 1
        if pinned:
            pins = ", ".join(f"bit {b} = {(i0 >> b) & 1}" for b in pinned)
            fixed = f"pinned: {pins}"
        else:
            fixed = "no bit is pinned"
        closure = 0
        for w in range(nw):
            if (w ^ i0) & ~support == 0:
                closure |= 1 << w
        why = (
            f"their warp ids vary in {_format_bits(varying)} "
            f"({_plural(len(varying), 'position')}; {fixed}), but {k} warps can "
            f"vary exactly {_plural(log_k, 'bit')}; a legal hint pins some warp-id "
            "bits to 0 or 1 and lets all combinations of the others occur, and the "
            f"smallest one containing these warps is {format_mask(closure, nw)} "
            f"({_popcount(closure)} warps)"
        )
        raise ctx.fail(
            "not-axis-aligned",
            f"warp_used_hint = {format_hex(u)} is not axis-aligned: K = {k} active "
            f"warps must span exactly log2(K) = {log_k} warpId bit positions; "
            f"{sel}: {why}",
            hint,
        )
    return _make_warp_hint(u, nw, True)


def _check_single(hint: int, ctx: _Ctx) -> WarpHint:
    """Rules hint-out-of-range .. not-axis-aligned, in order."""
    u = _check_range(hint, ctx)
    _check_num_warps(hint, u, ctx)
    return _check_mask(hint, u, ctx)


def _pieces_message(wh: WarpHint, layout: PartitionedShared, ctx: _Ctx) -> str:
    pieces = layout.num_logical_pieces
    if ctx.member is None:
        tail = (
            f"(got K = {wh.k}, numLogicalPieces = {pieces}, partitionDim = {layout.partition_dim})"
        )
    else:
        tail = f"(member {ctx.member} got K = {wh.k}, numLogicalPieces = {pieces})"
    return (
        "warp_used_hint with a partitioned shared encoding must select K active "
        "warps such that numLogicalPieces divides K so the copy fits in a single "
        f"TDM instruction {tail}; {_describe_selection(wh.hint, wh.num_warps)}: "
        f"{_plural(wh.k, 'warp')} cannot cover the {pieces} logical pieces "
        f"({_plural(layout.num_partitions, 'partition')} x "
        f"{_plural(layout.num_groups, 'group')} along dim {layout.partition_dim}) "
        "with whole warps, and a hinted copy cannot "
        "be split into several TDM instructions"
    )


def _check_layout(wh: WarpHint, ctx: _Ctx) -> None:
    """Rules partitioned-pieces and block-too-small."""
    layout = ctx.shared_layout
    if isinstance(layout, PartitionedShared) and wh.k % layout.num_logical_pieces:
        note = ""
        if layout.num_logical_pieces > wh.num_warps:
            note = (
                f"no hint can: {layout.num_logical_pieces} pieces need more than "
                f"num_warps = {wh.num_warps} warps"
            )
        raise ctx.fail(
            "partitioned-pieces",
            _pieces_message(wh, layout, ctx),
            wh.hint,
            note=note,
        )
    if ctx.block_shape is None:
        return
    placed = placeable_warps(ctx.block_shape, wh.k, layout)
    if placed >= wh.k:
        return
    shape = list(ctx.block_shape)
    elems = math.prod(shape)
    if isinstance(layout, PartitionedShared):
        inner = len(shape) - 1
        where = (
            f"on block {shape} with a partitioned shared layout "
            f"({layout.num_logical_pieces} logical pieces along dim "
            f"{layout.partition_dim}"
        )
        if layout.partition_dim == inner:
            where += (
                ", the innermost dim, which is never split beyond the pieces; "
                "the other warps can only go to the outer dims"
            )
        where += ")"
    else:
        where = (
            f"on block {shape} ({elems} element{'s' if elems != 1 else ''}; "
            "each warp needs at least one)"
        )
    raise ctx.fail(
        "block-too-small",
        f"warp_used_hint = {format_hex(wh.hint)} selects K = {wh.k} active warps, "
        f"but the TDM warp distribution can place only {placed} of them {where}; "
        f"{_describe_selection(wh.hint, wh.num_warps)}, and a hinted copy must "
        "give every selected warp a tile (without warp_used_hint the surplus "
        "warps are predicated off instead)",
        wh.hint,
    )


@overload
def check_warp_used_hint(
    hint: int,
    num_warps: int | None,
    block_shape: Sequence[int] | None = None,
    shared_layout: SharedLayout | None = None,
) -> WarpHint: ...
@overload
def check_warp_used_hint(
    hint: None,
    num_warps: int,
    block_shape: Sequence[int] | None = None,
    shared_layout: SharedLayout | None = None,
) -> WarpHint: ...
@overload
def check_warp_used_hint(
    hint: None,
    num_warps: None,
    block_shape: Sequence[int] | None = None,
    shared_layout: SharedLayout | None = None,
) -> None: ...
def check_warp_used_hint(
    hint: int | None,
    num_warps: int | None,
    block_shape: Sequence[int] | None = None,
    shared_layout: SharedLayout | None = None,
) -> WarpHint | None:
    """Check a ``warp_used_hint`` and describe the warps it selects.

    Args:
        hint: the mask (bit ``n`` = warp ``n``), or ``None`` for all warps.
            Negative values are read as ``uint32``.
        num_warps: warps in the CTA; ``None`` when unknown.
        block_shape: the copied block; enables the ``block-too-small`` rule.
        shared_layout: the destination's layout; a :class:`PartitionedShared`
            enables the ``partitioned-pieces`` rule.

    Returns:
        The :class:`WarpHint`; ``None`` only when both ``hint`` and
        ``num_warps`` are ``None`` (nothing to check, nothing to describe).

    Raises:
        WarpHintError: the first rule broken, in the order of the module
            docstring.
        TypeError, ValueError: malformed arguments.
    """
    if block_shape is not None:
        block_shape = _check_block_shape(block_shape)
        _check_partition_fits(block_shape, shared_layout)
    if num_warps is not None:
        num_warps = _as_int(num_warps, "num_warps")
    ctx = _Ctx(num_warps, block_shape, shared_layout)
    if hint is None:
        return _all_warps(num_warps)
    wh = _check_single(_as_int(hint, "warp_used_hint"), ctx)
    _check_layout(wh, ctx)
    return wh


def _all_warps(num_warps: int | None) -> WarpHint | None:
    if num_warps is None:
        return None
    if not _is_pow2(num_warps):
        raise WarpHintError(
            f"num_warps must be a power of two to describe the warps of a TDM copy, "
            f"got {num_warps} (no warp_used_hint: all warps take part)",
            rule="num-warps-not-pow2",
            num_warps=num_warps,
        )
    return _make_warp_hint((1 << num_warps) - 1, num_warps, False)


def check_fused_warp_hints(
    hints: Sequence[int],
    num_warps: int | None,
    block_shapes: Sequence[Sequence[int]] | None = None,
    shared_layouts: Sequence[SharedLayout | None] | None = None,
) -> tuple[WarpHint, ...]:
    """Check the hints of a fused TDM copy (2 to 4 members).

    The member count is ``len(block_shapes)`` when given (the descriptors),
    else ``len(shared_layouts)`` (the destinations), else ``len(hints)``.
    Checks, in Triton 3.9.0's order: 2 to 4 members; as many destinations as
    descriptors; one hint per member; then per member ``i``: same rank as
    member 0 (when ``block_shapes`` is given), the single-copy rules through
    ``not-axis-aligned`` (message prefixed ``member <i>: ``), disjointness
    from every earlier member, the partitioned-pieces rule (suffix
    ``(member <i> got K = <K>, numLogicalPieces = <P>)``) and the
    block-too-small rule.  The union of the hints is unconstrained.

    Returns:
        One :class:`WarpHint` per member.
    """
    hints = list(hints)
    if block_shapes is not None:
        block_shapes = [_check_block_shape(s) for s in block_shapes]
        members = len(block_shapes)
    elif shared_layouts is not None:
        members = len(shared_layouts)
    else:
        members = len(hints)
    if num_warps is not None:
        num_warps = _as_int(num_warps, "num_warps")
    if block_shapes is not None and shared_layouts is not None:
        for shape, layout in zip(block_shapes, shared_layouts, strict=False):
            _check_partition_fits(shape, layout)

    def fail(rule: str, message: str) -> WarpHintError:
        return WarpHintError(message, rule=rule, num_warps=num_warps)

    if not 2 <= members <= 4:
        raise fail(
            "fused-member-count",
            f"requires 2 to 4 members, got {members} (a fused TDM copy selects, "
            "per warp, one of at most 4 descriptors)",
        )
    if block_shapes is not None and shared_layouts is not None and len(shared_layouts) != members:
        raise fail(
            "fused-dest-count",
            "requires the same number of descriptors and destinations (got "
            f"{members} descriptors and {len(shared_layouts)} destinations)",
        )
    if len(hints) != members:
        raise fail(
            "fused-hint-count",
            f"requires one warp_used_hint per member (got {len(hints)} hints for "
            f"{members} members)",
        )

    result: list[WarpHint] = []
    union = 0
    for i, hint in enumerate(hints):
        shape = block_shapes[i] if block_shapes is not None else None
        layout = shared_layouts[i] if shared_layouts is not None else None
        if block_shapes is not None and len(shape) != len(block_shapes[0]):
            raise WarpHintError(
                "requires all member descriptors to have the same rank (member "
                f"{i} has rank {len(shape)}, member 0 has rank "
                f"{len(block_shapes[0])})",
                rule="fused-rank-mismatch",
                hint=hint,
                num_warps=num_warps,
                member=i,
            )
        if hint is None:
            raise WarpHintError(
                f"member {i}: warp_used_hint is required (every member of a fused "
                "copy names its warps)",
                rule="fused-hint-missing",
                num_warps=num_warps,
                member=i,
            )
        hint = _as_int(hint, "warp_used_hint")
        ctx = _Ctx(num_warps, shape, layout, member=i)
        wh = _check_single(hint, ctx)
        # Suggestions from here on must avoid the earlier members' warps.
        ctx.disjoint_from = union
        if wh.hint & union:
            j, prev = next((j, p) for j, p in enumerate(result) if p.hint & wh.hint)
            overlap = _bits(wh.hint & prev.hint)
            noun = "warp" if len(overlap) == 1 else "warps"
            raise ctx.fail(
                "fused-overlap",
                "requires pairwise-disjoint warp_used_hint values: member "
                f"{i} ({format_mask(wh.hint, num_warps)}, warps "
                f"{format_warps(wh.active)}) overlaps member {j} "
                f"({format_mask(prev.hint, num_warps)}, warps "
                f"{format_warps(prev.active)}) on {noun} "
                f"{format_warps(overlap)}; each warp loads for at most one member",
                hint,
            )
        _check_layout(wh, ctx)
        union |= wh.hint
        result.append(wh)
    return tuple(result)


__all__ = [
    "FUSED_RULES",
    "MESSAGE_SUGGESTIONS",
    "RULES",
    "SINGLE_RULES",
    "WarpHint",
    "WarpHintError",
    "check_fused_warp_hints",
    "check_warp_used_hint",
    "format_hex",
    "format_mask",
    "format_warps",
    "legal_hints",
    "nearest_legal_hints",
    "partitioned_warp_distribution",
    "placeable_warps",
    "warp_distribution",
]
