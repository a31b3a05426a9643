"""Tests of the warp_used_hint rule (gemm_opt.core.warp_hint)."""

from __future__ import annotations

import functools
import itertools
import pickle
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gemm_opt
from gemm_opt.core.layouts import PaddedShared, PartitionedShared, SwizzledShared
from gemm_opt.core.warp_hint import (
    FUSED_RULES,
    MESSAGE_SUGGESTIONS,
    RULES,
    SINGLE_RULES,
    WarpHint,
    WarpHintError,
    check_fused_warp_hints,
    check_warp_used_hint,
    format_hex,
    format_mask,
    format_warps,
    legal_hints,
    nearest_legal_hints,
    partitioned_warp_distribution,
    placeable_warps,
    warp_distribution,
)

NUM_WARPS = (1, 2, 4, 8, 16)


def rule_of(hint, nw, *args):
    try:
        check_warp_used_hint(hint, nw, *args)
    except WarpHintError as e:
        return e.rule
    return None


def error_of(hint, nw, *args) -> WarpHintError:
    with pytest.raises(WarpHintError) as info:
        check_warp_used_hint(hint, nw, *args)
    return info.value


@functools.cache
def affine_subspaces(nw: int) -> frozenset[int]:
    """Independent construction: each warp-id bit is free, pinned 0 or pinned 1."""
    t = nw.bit_length() - 1
    masks = set()
    for choice in itertools.product(("free", 0, 1), repeat=t):
        warps = [
            w
            for w in range(nw)
            if all(c == "free" or (w >> b) & 1 == c for b, c in enumerate(choice))
        ]
        masks.add(sum(1 << w for w in warps))
    return frozenset(masks)


# --------------------------------------------------------------------------
# The legal set
# --------------------------------------------------------------------------


@pytest.mark.parametrize("nw", NUM_WARPS)
def test_legal_hints_are_the_axis_aligned_affine_subspaces(nw):
    expected = affine_subspaces(nw)
    t = nw.bit_length() - 1
    assert len(expected) == 3**t
    assert legal_hints(nw) == tuple(sorted(expected))
    accepted = {h for h in range(1 << nw) if rule_of(h, nw) is None}
    assert accepted == expected


def test_legal_hints_memoized_and_empty_for_bad_warp_counts():
    assert legal_hints(8) is legal_hints(8)
    assert [len(legal_hints(nw)) for nw in NUM_WARPS] == [1, 3, 9, 27, 81]
    for nw in (0, 3, 6, 12, 32, 64, -4):
        assert legal_hints(nw) == ()


def test_listed_accepted_masks():
    assert legal_hints(4) == (0x1, 0x2, 0x3, 0x4, 0x5, 0x8, 0xA, 0xC, 0xF)
    assert legal_hints(8) == tuple(
        int(x, 16)
        for x in (
            "01 02 03 04 05 08 0a 0c 0f 10 11 20 22 30 33 40 44 50 55 80 88 a0 aa c0 cc f0 ff"
        ).split()
    )
    for h in (0x8888, 0x0F0F, 0x3333, 0xFF00, 0x5555, 0x8000, 0xFFFF):
        assert h in legal_hints(16)


# Reference table: rejected masks of [0, 2**nw) per rule.
REJECTION_COUNTS = {
    1: {"zero-hint": 1},
    2: {"zero-hint": 1},
    4: {"zero-hint": 1, "popcount-not-pow2": 4, "not-axis-aligned": 2},
    8: {"zero-hint": 1, "popcount-not-pow2": 148, "not-axis-aligned": 80},
    16: {"zero-hint": 1, "popcount-not-pow2": 50708, "not-axis-aligned": 14746},
}


@pytest.mark.parametrize("nw", NUM_WARPS)
def test_rejection_counts_per_rule(nw):
    counts: dict[str, int] = {}
    for h in range(1 << nw):
        r = rule_of(h, nw)
        if r is not None:
            counts[r] = counts.get(r, 0) + 1
    assert counts == REJECTION_COUNTS[nw]
    assert (1 << nw) - sum(counts.values()) == 3 ** (nw.bit_length() - 1)


def test_nw4_rejections_by_name():
    assert [h for h in range(16) if rule_of(h, 4) == "popcount-not-pow2"] == [
        7,
        11,
        13,
        14,
    ]
    assert [h for h in range(16) if rule_of(h, 4) == "not-axis-aligned"] == [6, 9]


# --------------------------------------------------------------------------
# Reference cases (verifier, single op and fused op)
# --------------------------------------------------------------------------

SWZ = SwizzledShared()
BLOCK = [256, 64]

SINGLE_CASES = [
    # (case, nw, hint, layout, rule, substrings)
    ("1", 8, 0, None, "zero-hint", ["warp_used_hint must have at least one bit set"]),
    (
        "2",
        8,
        0x07,
        None,
        "popcount-not-pow2",
        ["popcount(warp_used_hint) = 3 must be a power of two (got hint 0x7)"],
    ),
    (
        "3",
        8,
        0x69,
        None,
        "not-axis-aligned",
        [
            "warp_used_hint = 0x69 is not axis-aligned: K = 4 active warps must "
            "span exactly log2(K) = 2 warpId bit positions",
            "selects warps {0, 3, 5, 6}",
        ],
    ),
    ("4", 8, 0x1B, None, "not-axis-aligned", ["0x1b is not axis-aligned"]),
    ("5a", 4, 0x6, None, "not-axis-aligned", ["0x6 is not axis-aligned"]),
    ("5b", 4, 0x9, None, "not-axis-aligned", ["0x9 is not axis-aligned"]),
    (
        "6",
        8,
        0xFFFF,
        None,
        "bits-beyond",
        ["warp_used_hint = 0xffff sets bits beyond num_warps = 8"],
    ),
    ("7", 8, 0x201, None, "bits-beyond", ["0x201 sets bits beyond num_warps = 8"]),
    ("8", 1, 0x2, None, "bits-beyond", ["0x2 sets bits beyond num_warps = 1"]),
    ("9", 2, 0x7, None, "bits-beyond", ["0x7 sets bits beyond num_warps = 2"]),
    (
        "10a",
        3,
        1,
        None,
        "num-warps-not-pow2",
        ["num_warps must be a power of two when using warp_used_hint, got 3"],
    ),
    (
        "10b",
        3,
        0,
        None,
        "num-warps-not-pow2",
        ["num_warps must be a power of two when using warp_used_hint, got 3"],
    ),
    (
        "11a",
        32,
        1,
        None,
        "num-warps-too-large",
        ["num_warps must be less than 32 when using warp_used_hint, got 32"],
    ),
    (
        "11b",
        32,
        0,
        None,
        "num-warps-too-large",
        ["num_warps must be less than 32 when using warp_used_hint, got 32"],
    ),
    ("11c", 64, 1, None, "num-warps-too-large", ["got 64"]),
    (
        "12",
        16,
        -1,
        None,
        "bits-beyond",
        ["warp_used_hint = 0xffffffff sets bits beyond num_warps = 16"],
    ),
    (
        "15",
        None,
        240,
        None,
        "num-warps-missing",
        ["not contained within a context that specifies the number of warps"],
    ),
    (
        "16a",
        4,
        0x3,
        PartitionedShared(2, 2, 0, SWZ),
        "partitioned-pieces",
        [
            "warp_used_hint with a partitioned shared encoding must select K active "
            "warps such that numLogicalPieces divides K so the copy fits in a single "
            "TDM instruction (got K = 2, numLogicalPieces = 4, partitionDim = 0)"
        ],
    ),
    (
        "16c",
        8,
        0x0F,
        PartitionedShared(4, 2, 0, SWZ),
        "partitioned-pieces",
        ["(got K = 4, numLogicalPieces = 8, partitionDim = 0)"],
    ),
    (
        "16e",
        4,
        0x1,
        PartitionedShared(2, 1, 0, SWZ),
        "partitioned-pieces",
        ["(got K = 1, numLogicalPieces = 2, partitionDim = 0)"],
    ),
]


@pytest.mark.parametrize(
    ("nw", "hint", "layout", "rule", "subs"),
    [c[1:] for c in SINGLE_CASES],
    ids=[f"case{c[0]}" for c in SINGLE_CASES],
)
def test_reference_rejections(nw, hint, layout, rule, subs):
    block = [128, 16] if layout is not None else BLOCK
    # The verifier rules do not depend on the block (pass it anyway).
    err = error_of(hint, nw, block, layout)
    assert err.rule == rule
    assert err.hint == hint
    assert err.num_warps == nw
    for s in subs:
        assert s in str(err)
    # Same result without a block: the verifier rules are shape-independent.
    assert rule_of(hint, nw, None, layout) == rule


@pytest.mark.parametrize(
    ("nw", "hint", "layout"),
    [
        (1, 0x1, None),  # case 8
        (8, 0x11, None),  # case 13
        (16, 0x8888, None),
        (16, 0xFFFF, None),
        (4, 0xF, PartitionedShared(2, 2, 0, SWZ)),  # case 16
        (8, 0xFF, PartitionedShared(4, 2, 0, SWZ)),
        (4, 0x3, PartitionedShared(2, 1, 0, SWZ)),
        (4, 0x5, PartitionedShared(2, 1, 0, SWZ)),
    ],
)
def test_reference_acceptances(nw, hint, layout):
    block = [128, 16] if layout is not None else BLOCK
    wh = check_warp_used_hint(hint, nw, block, layout)
    assert wh.hint == hint and wh.explicit


@pytest.mark.parametrize(
    "block",
    [
        [4, 64],
        [8, 64],
        [16, 16],
        [128, 64],
        [1, 64],
        [64],
        [2, 4, 64],
        [1, 8, 64],
        [2, 2, 2, 64],
        [1, 2, 2, 2, 32],
    ],
)
def test_verifier_rules_do_not_depend_on_rank(block):
    # Case 14: the accepted set is the same for every rank when the block is
    # large enough for every K (16 elements or more for nw = 16).
    for nw in (4, 8):
        accepted = tuple(h for h in range(1 << nw) if rule_of(h, nw, block) is None)
        assert accepted == legal_hints(nw)
    # nw = 16: every legal mask plus a sample of the others.
    for h in sorted(set(legal_hints(16)) | set(range(0, 1 << 16, 97))):
        assert rule_of(h, 16, block) == rule_of(h, 16)


# Case 28: the fused op.
def test_fused_member_count():
    for hints in ([0xF], [1, 2, 4, 8, 16]):
        with pytest.raises(WarpHintError, match="requires 2 to 4 members") as info:
            check_fused_warp_hints(hints, 8)
        assert info.value.rule == "fused-member-count"


def test_fused_overlap():
    with pytest.raises(WarpHintError) as info:
        check_fused_warp_hints([0x0F, 0x03], 8)
    err = info.value
    assert err.rule == "fused-overlap" and err.member == 1 and err.hint == 0x03
    msg = str(err)
    assert msg.startswith("member 1: requires pairwise-disjoint warp_used_hint values")
    assert (
        "member 1 (0b00000011, warps {0, 1}) overlaps member 0 "
        "(0b00001111, warps {0..3}) on warps {0, 1}" in msg
    )
    # Suggestions avoid member 0's warps.
    assert err.suggestions and all(s & 0x0F == 0 for s in err.suggestions)
    assert all(s in legal_hints(8) for s in err.suggestions)
    # Identical hints overlap too.
    with pytest.raises(WarpHintError, match="pairwise-disjoint"):
        check_fused_warp_hints([0x0F, 0x0F], 8)


def test_fused_overlap_names_the_overlapping_member():
    with pytest.raises(WarpHintError) as info:
        check_fused_warp_hints([0x03, 0x0C, 0x30, 0x0F], 8)
    assert "member 3 (0b00001111, warps {0..3}) overlaps member 0" in str(info.value)
    assert info.value.member == 3


def test_fused_same_rank():
    with pytest.raises(WarpHintError, match="same rank") as info:
        check_fused_warp_hints([0x0F, 0xF0], 8, [[64, 64], [64]])
    assert info.value.rule == "fused-rank-mismatch"
    assert info.value.member == 1


def test_fused_hint_count_and_dest_count():
    with pytest.raises(WarpHintError, match="one warp_used_hint per member") as info:
        check_fused_warp_hints([0x0F, 0x30, 0xC0], 8, [[64, 64], [64, 64]])
    assert info.value.rule == "fused-hint-count"
    with pytest.raises(WarpHintError, match="one warp_used_hint per member"):
        check_fused_warp_hints([0x0F], 8, [[64, 64], [64, 64]])
    with pytest.raises(WarpHintError, match="same number of descriptors and destinations") as info:
        check_fused_warp_hints([0x0F, 0xF0], 8, [[64, 64], [64, 64]], [None])
    assert info.value.rule == "fused-dest-count"


def test_fused_member_hint_rules():
    with pytest.raises(WarpHintError) as info:
        check_fused_warp_hints([0xF0, 0x07], 8)
    err = info.value
    assert err.rule == "popcount-not-pow2" and err.member == 1
    assert str(err).startswith(
        "member 1: popcount(warp_used_hint) = 3 must be a power of two (got hint 0x7)"
    )
    for hints, rule, sub in [
        ([0x0F, 0], "zero-hint", "at least one bit set"),
        ([0x0F, 0x69], "not-axis-aligned", "is not axis-aligned"),
        ([0x0F, 0x100], "bits-beyond", "sets bits beyond num_warps = 8"),
    ]:
        with pytest.raises(WarpHintError, match=re.escape(sub)) as info:
            check_fused_warp_hints(hints, 8)
        assert info.value.rule == rule
    with pytest.raises(WarpHintError, match="less than 32") as info:
        check_fused_warp_hints([1, 2], 32)
    assert info.value.member == 0
    with pytest.raises(WarpHintError, match="warp_used_hint is required") as info:
        check_fused_warp_hints([1, None], 8)
    assert info.value.rule == "fused-hint-missing"


def test_fused_partitioned_member():
    part = PartitionedShared(2, 2, 0, SWZ)
    with pytest.raises(WarpHintError) as info:
        check_fused_warp_hints([0xF0, 0x03], 8, [[128, 16], [128, 16]], [SWZ, part])
    err = info.value
    assert err.rule == "partitioned-pieces" and err.member == 1
    assert "(member 1 got K = 2, numLogicalPieces = 4)" in str(err)
    assert "partitionDim" not in str(err)
    # Suggestions: legal, K divisible by 4, disjoint from member 0.
    assert err.suggestions == (0x0F,)


@pytest.mark.parametrize(
    ("hints", "nw", "shapes"),
    [
        ([0x01, 0x08], 8, None),
        ([0x03, 0x0C], 8, None),
        ([0x0F, 0x30, 0xC0], 8, None),
        ([1, 2, 4, 8], 8, None),
        ([0x0F, 0xF0], 8, [[64, 64], [32, 128]]),
        ([0xFF, 0xFF00], 16, None),
        ([0x5, 0xA], 4, None),
    ],
)
def test_fused_accepted(hints, nw, shapes):
    whs = check_fused_warp_hints(hints, nw, shapes)
    assert [w.hint for w in whs] == hints
    assert all(isinstance(w, WarpHint) and w.explicit for w in whs)


# --------------------------------------------------------------------------
# Beyond Triton
# --------------------------------------------------------------------------


def test_missing_num_warps_is_a_clean_error():
    err = error_of(0xF0, None)
    assert err.rule == "num-warps-missing"
    assert "selects warps {4..7}" in str(err)
    assert err.suggestions == ()
    # Without a hint there is nothing to check (Triton parses that module).
    assert check_warp_used_hint(None, None) is None


@pytest.mark.parametrize(
    ("nw", "hint", "block", "layout", "placed"),
    [
        (8, 0xFF, [2, 2], None, 4),
        (8, 0xFF, [4], None, 4),
        *[(8, h, [1, 1], None, 1) for h in (0xFF, 0xF, 0xF0, 0x55, 0xAA, 0xCC)],
        *[(8, h, [1, 1], None, 1) for h in (0x33, 0x3, 0xC, 0x11)],
        (2, 0x3, [1, 1], None, 1),
        (8, 0xFF, [2, 128], PartitionedShared(2, 1, 1, SWZ), 4),
        (4, 0xF, [1, 128], PartitionedShared(2, 1, 1, SWZ), 2),
    ],
)
def test_block_too_small(nw, hint, block, layout, placed):
    err = error_of(hint, nw, block, layout)
    assert err.rule == "block-too-small"
    msg = str(err)
    k = bin(hint).count("1")
    assert f"selects K = {k} active warps" in msg
    assert f"can place only {placed} of them on block {block}" in msg
    assert placeable_warps(block, k, layout) == placed
    for s in err.suggestions:
        wh = check_warp_used_hint(s, nw, block, layout)
        assert wh.k <= placed
    # The verifier rules alone accept it (as Triton's verifier does).
    assert rule_of(hint, nw, None, layout) is None


@pytest.mark.parametrize(
    ("nw", "hint", "block", "layout"),
    [
        (8, 0x1, [1, 1], None),
        (8, 0xF, [2, 2], None),
        (8, 0xFF, [2, 4], None),
        (8, 0x0F, [2, 128], PartitionedShared(2, 1, 1, SWZ)),
        (4, 0x3, [1, 128], PartitionedShared(2, 1, 1, SWZ)),
        (4, 0x3, [128, 16], PartitionedShared(2, 1, 0, SWZ)),
    ],
)
def test_block_large_enough(nw, hint, block, layout):
    assert check_warp_used_hint(hint, nw, block, layout).hint == hint


def test_no_hint_never_fails_on_small_blocks():
    # Unhinted copies predicate surplus warps off; the full mask does not.
    wh = check_warp_used_hint(None, 8, [2, 2])
    assert not wh.explicit and wh.hint == 0xFF and wh.k == 8
    assert rule_of(0xFF, 8, [2, 2]) == "block-too-small"


def test_no_hint_semantics():
    assert check_warp_used_hint(None, 32).hint == (1 << 32) - 1  # no < 32 limit
    err = error_of(None, 3)
    assert err.rule == "num-warps-not-pow2" and err.hint is None


def test_hint_range():
    assert rule_of(-(1 << 31), 8) == "bits-beyond"  # 0x80000000
    assert rule_of((1 << 32) - 1, 8) == "bits-beyond"
    assert rule_of(1 << 32, 8) == "hint-out-of-range"
    assert rule_of(-(1 << 31) - 1, 8) == "hint-out-of-range"
    assert "0x80000000 sets bits beyond" in str(error_of(-(1 << 31), 8))


def test_argument_errors():
    with pytest.raises(TypeError):
        check_warp_used_hint("15", 8)
    with pytest.raises(TypeError):
        check_warp_used_hint(True, 8)
    with pytest.raises(ValueError, match="at least one dimension"):
        check_warp_used_hint(1, 8, [])
    with pytest.raises(ValueError, match="does not divide"):
        check_warp_used_hint(0xF, 4, [2, 64], PartitionedShared(4, 1, 0, SWZ))
    with pytest.raises(ValueError) as info:
        check_warp_used_hint(0xF, 4, [2, 64], PartitionedShared(4, 1, 0, SWZ))
    assert not isinstance(info.value, WarpHintError)


# --------------------------------------------------------------------------
# WarpHint fields
# --------------------------------------------------------------------------


def test_warp_hint_fields_0xf0():
    wh = check_warp_used_hint(0xF0, 8)
    assert wh == WarpHint(
        hint=0xF0,
        num_warps=8,
        explicit=True,
        active=(4, 5, 6, 7),
        anchor=4,
        fixed_bits=(2,),
        varying_bits=(0, 1),
        fixed_mask=0b100,
        varying_mask=0b011,
        k=4,
    )
    assert wh.fixed_value == 0b100 and wh.num_warp_bits == 3
    assert [wh.is_active(w) for w in range(-1, 9)] == [False] * 5 + [True] * 4 + [False]
    assert [wh.slot(w) for w in wh.active] == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        wh.slot(0)
    assert wh.describe() == "0b11110000 (warps {4..7}; pinned: bit 2 = 1; bits 0, 1 vary)"


def test_warp_hint_fields_0xcc():
    wh = check_warp_used_hint(0xCC, 8)
    assert wh.active == (2, 3, 6, 7)
    assert wh.anchor == 2
    assert wh.varying_bits == (0, 2) and wh.varying_mask == 0b101
    assert wh.fixed_bits == (1,) and wh.fixed_mask == 0b010
    assert wh.fixed_value == 0b010
    # Warps 2, 3, 6, 7 take tiles 0..3 (rows 0, 32, 64, 96 of a 128-row block).
    assert [wh.slot(w) for w in wh.active] == [0, 1, 2, 3]


def test_warp_hint_fields_0x8888():
    wh = check_warp_used_hint(0x8888, 16)
    assert wh.active == (3, 7, 11, 15)
    assert wh.anchor == 3
    assert wh.varying_bits == (2, 3) and wh.fixed_bits == (0, 1)
    assert wh.fixed_mask == 0b0011 and wh.fixed_value == 0b0011
    assert wh.k == 4 and not wh.is_full


def test_warp_hint_reference_table():
    # (hint, anchor, support, free mask) from the reference's predicate table.
    for hint, i0, support, free in [
        (0x0F, 0, 0b011, 0b100),
        (0xF0, 4, 0b011, 0b100),
        (0x55, 0, 0b110, 0b001),
        (0xAA, 1, 0b110, 0b001),
        (0xCC, 2, 0b101, 0b010),
        (0x03, 0, 0b001, 0b110),
        (0x10, 4, 0b000, 0b111),
        (0xFF, 0, 0b111, 0b000),
    ]:
        wh = check_warp_used_hint(hint, 8)
        assert (wh.anchor, wh.varying_mask, wh.fixed_mask) == (i0, support, free)
        for w in range(8):
            # pred = ((w ^ i0) & freeMask) == 0
            assert wh.is_active(w) == (((w ^ i0) & free) == 0)


def test_all_warps():
    wh = check_warp_used_hint(None, 8)
    assert wh == WarpHint(
        hint=0xFF,
        num_warps=8,
        explicit=False,
        active=tuple(range(8)),
        anchor=0,
        fixed_bits=(),
        varying_bits=(0, 1, 2),
        fixed_mask=0,
        varying_mask=0b111,
        k=8,
    )
    assert wh.is_full
    one = check_warp_used_hint(None, 1)
    assert one.active == (0,) and one.varying_bits == () and one.fixed_bits == ()


# --------------------------------------------------------------------------
# Distributions
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("block", "k", "expected"),
    [
        ([128, 64], 8, (8, 1)),
        ([128, 64], 4, (4, 1)),
        ([4, 64], 8, (4, 2)),
        ([2, 4, 64], 8, (2, 4, 1)),
        ([2, 4, 64], 4, (2, 2, 1)),
        ([2, 2, 2, 64], 8, (2, 2, 2, 1)),
        ([2, 2], 8, (2, 2)),
        ([1, 1], 8, (1, 1)),
        ([4], 8, (4,)),
        ([64], 1, (1,)),
    ],
)
def test_warp_distribution(block, k, expected):
    assert warp_distribution(block, k) == expected


@pytest.mark.parametrize(
    ("block", "k", "layout", "expected"),
    [
        ([128, 16], 4, PartitionedShared(2, 1, 0), ((4, 1), 1)),
        ([128, 16], 2, PartitionedShared(2, 1, 0), ((2, 1), 1)),
        ([128, 16], 4, PartitionedShared(2, 2, 0), ((4, 1), 1)),
        ([128, 16], 8, PartitionedShared(2, 2, 0), ((8, 1), 1)),
        ([128, 16], 2, PartitionedShared(2, 2, 0), ((2, 1), 2)),
        ([16, 128], 2, PartitionedShared(2, 1, 1), ((1, 2), 1)),
        ([16, 128], 4, PartitionedShared(2, 1, 1), ((2, 2), 1)),
        ([2, 128], 8, PartitionedShared(2, 1, 1), ((2, 2), 1)),
        ([1, 128], 4, PartitionedShared(2, 1, 1), ((1, 2), 1)),
    ],
)
def test_partitioned_warp_distribution(block, k, layout, expected):
    assert partitioned_warp_distribution(block, k, layout) == expected


# --------------------------------------------------------------------------
# Formatting, suggestions, errors
# --------------------------------------------------------------------------


def test_formatting():
    assert format_mask(0x0F, 8) == "0b00001111"
    assert format_mask(0x201, 8) == "0b1000000001"
    assert format_mask(-1, 16) == "0b" + "1" * 32
    assert format_mask(0, 4) == "0b0000"
    # A hint has 32 bits: a huge num_warps does not pad it to billions of digits.
    assert format_mask(0x0F, 1 << 30) == "0b" + "0" * 28 + "1111"
    assert format_hex(-1) == "0xffffffff" and format_hex(0x69) == "0x69"
    assert format_warps([0, 3, 5, 6]) == "{0, 3, 5, 6}"
    assert format_warps(range(4)) == "{0..3}"
    assert format_warps([0, 1]) == "{0, 1}"
    assert format_warps([0, 1, 2, 3, 8, 9, 10, 11, 15]) == "{0..3, 8..11, 15}"
    assert format_warps([]) == "{}"


def test_nearest_definition_examples():
    # Same K preferred: four-warp hints for the four-warp 0x69.
    assert nearest_legal_hints(0x69, 8, limit=3) == (0x0F, 0x33, 0x55)
    # No legal hint with 3 warps: the closest of any K.
    assert nearest_legal_hints(0x07, 8, limit=3) == (0x03, 0x05, 0x0F)
    assert nearest_legal_hints(0xFFFF, 8) == (0xFF,)
    assert nearest_legal_hints(0x0F, 8) == (0x0F,)  # a legal hint is its own nearest
    assert nearest_legal_hints(1, 3) == ()
    assert nearest_legal_hints(0x3, 4, shared_layout=PartitionedShared(2, 2, 0)) == (0xF,)
    assert nearest_legal_hints(0x03, 8, disjoint_from=0x0F, limit=3) == (
        0x30,
        0x50,
        0xA0,
    )


def test_did_you_mean_in_binary():
    msg = str(error_of(0x69, 8))
    assert msg.endswith("did you mean 0b00001111, 0b00110011 or 0b01010101?")
    msg = str(error_of(0xFFFF, 8))
    assert msg.endswith("did you mean 0b11111111?")
    assert "bits 8..15 set" in msg


def test_not_axis_aligned_explains_bits():
    msg = str(error_of(0x12, 8))  # warps {1, 4}
    assert "selects warps {1, 4}" in msg
    assert "vary in bits 0, 2" in msg
    assert "pinned: bit 1 = 0" in msg
    assert "smallest one containing these warps is 0b00110011" in msg


def test_error_pickles():
    err = error_of(0x69, 8)
    again = pickle.loads(pickle.dumps(err))
    assert isinstance(again, WarpHintError)
    assert (again.rule, again.hint, again.num_warps, again.suggestions) == (
        err.rule,
        err.hint,
        err.num_warps,
        err.suggestions,
    )
    assert str(again) == str(err)


def test_rule_ids():
    assert RULES == SINGLE_RULES + FUSED_RULES
    assert len(set(RULES)) == len(RULES)
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r) for r in RULES)


def test_package_reexports():
    for name in (
        "check_warp_used_hint",
        "WarpHintError",
        "WarpHint",
        "legal_hints",
        "check_fused_warp_hints",
    ):
        assert name in gemm_opt.__all__
        assert getattr(gemm_opt, name) is globals()[name]
    assert isinstance(gemm_opt.__version__, str)


def test_non_partitioned_layouts_do_not_matter():
    for layout in (None, SWZ, SwizzledShared(8, 2, 4), PaddedShared(64, 8)):
        assert rule_of(0x0F, 8, [128, 64], layout) is None
        assert rule_of(0xFF, 8, [2, 2], layout) == "block-too-small"


# --------------------------------------------------------------------------
# Message contract (property-based)
# --------------------------------------------------------------------------


def expected_nearest(hint, nw, block=None, layout=None, disjoint_from=0):
    """Brute-force reading of the documented definition."""
    u = hint & 0xFFFFFFFF

    def passes(c):
        if c & disjoint_from:
            return False
        try:
            check_warp_used_hint(c, nw, block, layout)
        except WarpHintError:
            return False
        return True

    cands = sorted(c for c in affine_subspaces(nw) if passes(c))
    same = [c for c in cands if bin(c).count("1") == bin(u).count("1")]
    cands = same or cands
    if not cands:
        return []
    best = min(bin(c ^ u).count("1") for c in cands)
    near = [c for c in cands if bin(c ^ u).count("1") == best]
    return sorted(near, key=lambda c: (abs(bin(c).count("1") - bin(u).count("1")), c))


num_warps_st = st.sampled_from(NUM_WARPS)


@st.composite
def hint_and_nw(draw):
    nw = draw(num_warps_st)
    hint = draw(
        st.one_of(
            st.integers(0, (1 << (nw + 1)) - 1),
            st.sampled_from(legal_hints(nw)),
            st.integers(-(1 << 31), (1 << 32) - 1),
        )
    )
    return hint, nw


def assert_message_contract(err, hint, nw, block=None, layout=None, disjoint=0):
    u = hint & 0xFFFFFFFF
    msg = str(err)
    assert err.rule in RULES
    warps = [w for w in range(32) if (u >> w) & 1]
    if err.rule == "fused-overlap":
        assert f"({format_mask(u, nw)}, warps {format_warps(warps)})" in msg
    else:
        assert format_hex(u) in msg
    if err.rule == "fused-overlap":
        pass
    elif warps:
        noun = "warp" if len(warps) == 1 else "warps"
        assert f"selects {noun} {format_warps(warps)}" in msg
    else:
        assert "selects no warps" in msg
    if nw in NUM_WARPS:
        for s in err.suggestions:
            assert check_warp_used_hint(s, nw, block, layout).hint == s
            assert s & disjoint == 0
        assert (
            list(err.suggestions)
            == expected_nearest(hint, nw, block, layout, disjoint)[:MESSAGE_SUGGESTIONS]
        )
        if err.suggestions:
            assert "did you mean " + format_mask(err.suggestions[0], nw) in msg
    else:
        assert err.suggestions == ()


@settings(max_examples=300, deadline=None)
@given(hint_and_nw())
def test_message_contract_single(args):
    hint, nw = args
    u = hint & 0xFFFFFFFF
    try:
        wh = check_warp_used_hint(hint, nw)
    except WarpHintError as err:
        assert u not in legal_hints(nw)
        assert err.hint == hint and err.num_warps == nw
        assert_message_contract(err, hint, nw)
        return
    assert u in legal_hints(nw)
    assert set(wh.active) == {w for w in range(32) if (u >> w) & 1}
    assert wh.k == len(wh.active) and wh.anchor == min(wh.active)
    assert wh.fixed_mask | wh.varying_mask == nw - 1
    assert wh.fixed_mask & wh.varying_mask == 0
    assert 1 << len(wh.varying_bits) == wh.k
    for w in range(nw):
        assert wh.is_active(w) == ((w & wh.fixed_mask) == wh.fixed_value)
    assert sorted(wh.slot(w) for w in wh.active) == list(range(wh.k))


@settings(max_examples=100, deadline=None)
@given(st.sampled_from((3, 5, 6, 12, 32, 64)), st.integers(0, 1 << 20))
def test_message_contract_bad_num_warps(nw, hint):
    err = error_of(hint, nw)
    assert err.rule in ("num-warps-not-pow2", "num-warps-too-large")
    assert_message_contract(err, hint, nw)


@st.composite
def layout_case(draw):
    nw = draw(st.sampled_from((2, 4, 8, 16)))
    rank = draw(st.integers(1, 3))
    block = [1 << draw(st.integers(0, 4)) for _ in range(rank)]
    layout = None
    if draw(st.booleans()):
        pdim = draw(st.integers(0, rank - 1))
        parts = 1 << draw(st.integers(1, 2))
        groups = 1 << draw(st.integers(0, 1))
        pieces = parts * groups
        if block[pdim] % pieces:
            block[pdim] = pieces * block[pdim]
        layout = PartitionedShared(parts, groups, pdim, SWZ)
    hint = draw(st.one_of(st.sampled_from(legal_hints(nw)), st.integers(0, (1 << nw) - 1)))
    return hint, nw, block, layout


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout_case())
def test_message_contract_with_layouts(args):
    hint, nw, block, layout = args
    try:
        wh = check_warp_used_hint(hint, nw, block, layout)
    except WarpHintError as err:
        assert_message_contract(err, hint, nw, block, layout)
        if err.rule == "block-too-small":
            k = bin(hint).count("1")
            assert placeable_warps(block, k, layout) < k
        if err.rule == "partitioned-pieces":
            assert bin(hint).count("1") % layout.num_logical_pieces
        return
    assert placeable_warps(block, wh.k, layout) == wh.k
    if isinstance(layout, PartitionedShared):
        assert wh.k % layout.num_logical_pieces == 0
        assert partitioned_warp_distribution(block, wh.k, layout)[1] == 1


@st.composite
def fused_case(draw):
    nw = draw(st.sampled_from((2, 4, 8, 16)))
    n = draw(st.integers(2, 4))
    hints = draw(
        st.lists(
            st.one_of(st.sampled_from(legal_hints(nw)), st.integers(0, (1 << nw) - 1)),
            min_size=n,
            max_size=n,
        )
    )
    return hints, nw


@settings(max_examples=300, deadline=None)
@given(fused_case())
def test_fused_contract(args):
    hints, nw = args
    try:
        whs = check_fused_warp_hints(hints, nw)
    except WarpHintError as err:
        i = err.member
        assert i is not None and str(err).startswith(f"member {i}: ")
        assert err.hint == hints[i]
        # Every earlier member is fine and disjoint from the others before it.
        union = 0
        for h in hints[:i]:
            assert h in legal_hints(nw) and h & union == 0
            union |= h
        if err.rule == "fused-overlap":
            assert hints[i] in legal_hints(nw) and hints[i] & union
            assert_message_contract(err, hints[i], nw, disjoint=union)
        else:
            assert hints[i] not in legal_hints(nw)
            assert_message_contract(err, hints[i], nw)
        return
    union = 0
    for wh, h in zip(whs, hints, strict=True):
        assert wh.hint == h and h & union == 0
        union |= h
