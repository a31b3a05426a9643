"""isa_analysis on listings Triton 3.9.0 compiled from the examples.

``data/isa/gemm_gfx1250.s`` is ``examples/gemm_gfx1250.mlir`` for gfx1250 (one
innermost loop, its header comment on the label's line);
``data/isa/gemm_stream_k_gfx950.s`` is ``examples/gemm_stream_k.mlir`` for
gfx950: three innermost loops at depth 2 inside an outer loop, two of them
rotated (a block of the loop laid out before its header), their header
comments on comment-only lines after the label. The expected loop sizes are
the instruction lines between the listing lines named in each test, counted
without the parser. Metadata cases edit the listing's own fields.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gemm_opt.lowering import isa_analysis as ia

DATA = Path(__file__).parent / "data" / "isa"
GFX1250 = (DATA / "gemm_gfx1250.s").read_text()
STREAM_K = (DATA / "gemm_stream_k_gfx950.s").read_text()

_INSTRUCTION = re.compile(r"^\t[a-z]")


def instruction_lines(text: str, first: int, last: int) -> list[str]:
    """Instruction lines of listing lines ``first..last`` (1-based, inclusive)."""
    lines = text.splitlines()[first - 1 : last]
    return [ln.split(";")[0].strip() for ln in lines if _INSTRUCTION.match(ln)]


def edited(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


# ---------------------------------------------------------------------------
# innermost loops from LLVM's loop comments


def test_nested_innermost_loops_are_found_from_indented_header_comments() -> None:
    # Loops with headers .LBB0_7 (blocks 551..815), .LBB0_83 (1178..1214: its
    # latch blocks .LBB0_81/.LBB0_82 come before the header) and .LBB0_88
    # (1220..1327, block .LBB0_87 before the header); the outer loop .LBB0_4
    # is not innermost.
    expected = [
        instruction_lines(STREAM_K, 551, 815),
        instruction_lines(STREAM_K, 1178, 1214),
        instruction_lines(STREAM_K, 1220, 1327),
    ]
    assert [len(x) for x in expected] == [188, 24, 82]
    assert ia.innermost_loops(STREAM_K) == expected
    assert ia.innermost_loop_lines(STREAM_K) == expected[0]


def test_stream_k_metrics_count_the_three_innermost_loops() -> None:
    m = ia.isa_metrics(STREAM_K)
    assert m.loop_instructions == 188 + 24 + 82
    assert (m.vgprs, m.sgprs, m.code_bytes, m.occupancy) == (106, 90, 5416, 4)
    assert (m.mfma, m.mfma_in_loop, m.wmma) == (2, 2, 0)  # listing lines 588, 595
    assert ia.loop_mma_mnemonics(STREAM_K) == ["v_mfma_f32_32x32x16_f16"]


def test_one_innermost_loop_with_its_header_comment_on_the_label_line() -> None:
    loop = instruction_lines(GFX1250, 266, 453)  # .LBB0_4 .. its back edge
    assert ia.innermost_loops(GFX1250) == [loop]
    m = ia.isa_metrics(GFX1250, {"shared": 73680})
    assert (m.vgprs, m.sgprs, m.code_bytes, m.occupancy) == (112, 68, 5624, 9)
    assert m.lds_bytes == 73680
    assert (m.tdm_loads, m.tdm_loads_in_loop, m.wmma, m.wmma_in_loop) == (2, 1, 16, 16)
    assert m.loop_instructions == len(loop) == 136
    assert ia.loop_mma_mnemonics(GFX1250) == ["v_wmma_f32_16x16x32_f16"]


def test_loop_mma_mnemonics_are_the_opcodes_alone_of_the_largest_loop() -> None:
    # A second MFMA opcode only in a smaller loop does not show.
    text = edited(
        STREAM_K,
        "\tbuffer_inv sc1\n\ts_branch .LBB0_81",
        "\tv_mfma_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], v[0:3]\n\ts_branch .LBB0_81",
    )
    assert ia.isa_metrics(text).mfma_in_loop == 3
    assert ia.loop_mma_mnemonics(text) == ["v_mfma_f32_32x32x16_f16"]
    text = edited(
        STREAM_K,
        "\tglobal_load_ushort v101, v[34:35], off offset:14\n\ts_branch .LBB0_6",
        "\tv_mfma_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], v[0:3]\n\ts_branch .LBB0_6",
    )
    assert ia.loop_mma_mnemonics(text) == ["v_mfma_f32_16x16x16_f16", "v_mfma_f32_32x32x16_f16"]


def test_back_edges_stand_in_when_the_loop_comments_are_gone() -> None:
    # Without the comments, the loop is the label .LBB0_4 .. its back edge:
    # the same lines as from the comments.
    text = "\n".join(ln.split(";")[0].rstrip() for ln in GFX1250.splitlines())
    assert "Inner Loop" not in text
    assert ia.innermost_loops(text) == [instruction_lines(GFX1250, 266, 453)]


def test_a_loop_nested_in_a_back_edge_range_is_the_innermost_one() -> None:
    # Comment-free stream-k: back edges give the innermost ranges that hold
    # no other range; the outer loop (.LBB0_4 .. its back edge) holds them.
    text = "\n".join(ln.split(";")[0].rstrip() for ln in STREAM_K.splitlines())
    loops = ia.innermost_loops(text)
    outer = instruction_lines(STREAM_K, 402, 1330)
    assert loops and all(len(loop) < len(outer) for loop in loops)
    # the range of .LBB0_6 (551) .. its last branch back (815) holds no other
    assert instruction_lines(STREAM_K, 551, 815) in loops


def test_back_edge_ranges_are_innermost_when_no_other_lies_inside() -> None:
    # A range is not nested in itself; ranges that overlap without one
    # holding the other are both innermost.
    body = [".LBB0_1:", "\ts_nop 0", "\ts_cbranch_scc1 .LBB0_1", "\ts_endpgm"]
    assert ia._back_edge_loops(body) == [[0, 1, 2]]
    body = [
        ".LBB0_1:",
        "\ts_nop 0",
        ".LBB0_2:",
        "\ts_nop 1",
        "\ts_cbranch_scc1 .LBB0_2",
        "\ts_cbranch_scc0 .LBB0_1",
        "\ts_endpgm",
    ]
    # .LBB0_2..4 lies inside .LBB0_1..5 and sharing no end with it
    assert ia._back_edge_loops(body) == [[2, 3, 4]]
    body = [
        ".LBB0_1:",
        "\ts_nop 0",
        ".LBB0_2:",
        "\ts_nop 1",
        "\ts_cbranch_scc1 .LBB0_2",
        "\ts_nop 2",
        "\ts_cbranch_scc0 .LBB0_2",
        "\ts_cbranch_scc0 .LBB0_1",
    ]
    # the inner range 2..6 ends one line before the outer's branch
    assert ia._back_edge_loops(body) == [[2, 3, 4, 5, 6]]
    body = [".LBB0_1:", ".LBB0_2:", "\ts_nop 1", "\ts_cbranch_scc0 .LBB0_1"]
    body += ["\ts_cbranch_scc0 .LBB0_2"]
    # .LBB0_1..3 and .LBB0_2..4: neither inside the other
    assert ia._back_edge_loops(body) == [[0, 1, 2, 3], [1, 2, 3, 4]]


# ---------------------------------------------------------------------------
# the kernel's text


def test_text_before_the_kernels_type_line_is_not_counted() -> None:
    whole = ia.isa_metrics(GFX1250).instructions
    assert ia.isa_metrics("\ts_nop 0\n" + GFX1250).instructions == whole


def test_text_without_a_type_line_is_read_from_its_first_line() -> None:
    assert ia.isa_metrics("\ts_nop 0\n\ts_endpgm\n").instructions == 2


# ---------------------------------------------------------------------------
# metadata fields and their fallbacks


def test_an_empty_listing_reads_as_all_zero() -> None:
    assert ia.isa_metrics("") == ia.IsaMetrics()
    assert ia.innermost_loop_lines("") == []


def test_the_metadata_block_wins_over_the_comments() -> None:
    text = edited(GFX1250, ".vgpr_count:     112", ".vgpr_count:     120")
    text = edited(text, ".sgpr_count:     68", ".sgpr_count:     70")
    m = ia.isa_metrics(text)
    assert (m.vgprs, m.sgprs) == (120, 70)


def test_the_comments_stand_in_without_the_metadata_block() -> None:
    head, rest = GFX1250.split("\t.amdgpu_metadata", 1)
    text = head + rest.split("\t.end_amdgpu_metadata", 1)[1]
    m = ia.isa_metrics(text)
    assert (m.vgprs, m.sgprs, m.code_bytes, m.occupancy) == (112, 68, 5624, 9)
    assert (m.spills, m.scratch_bytes, m.lds_bytes) == (0, 0, 0)
    bare = re.sub(r"^; (NumVgprs|TotalNumSgprs|codeLenInByte|Occupancy).*$", "", text, flags=re.M)
    m = ia.isa_metrics(bare)
    assert (m.vgprs, m.sgprs, m.code_bytes, m.occupancy) == (0, 0, 0, 0)
    assert (m.vgpr_spills, m.sgpr_spills) == (0, 0)


@pytest.mark.parametrize(("vgpr", "sgpr"), [(3, 0), (0, 2), (5, 7)])
def test_spills_add_the_vgpr_and_sgpr_counts(vgpr: int, sgpr: int) -> None:
    text = edited(GFX1250, ".vgpr_spill_count: 0", f".vgpr_spill_count: {vgpr}")
    text = edited(text, ".sgpr_spill_count: 0", f".sgpr_spill_count: {sgpr}")
    m = ia.isa_metrics(text)
    assert (m.vgpr_spills, m.sgpr_spills, m.spills) == (vgpr, sgpr, vgpr + sgpr)


def test_scratch_and_fixed_lds_come_from_the_metadata_block() -> None:
    text = edited(GFX1250, ".private_segment_fixed_size: 0", ".private_segment_fixed_size: 256")
    text = edited(text, ".group_segment_fixed_size: 0", ".group_segment_fixed_size: 1024")
    m = ia.isa_metrics(text)
    assert m.scratch_bytes == 256
    assert m.lds_bytes == 1024  # no Triton metadata: the fixed size
    assert ia.isa_metrics(text, {"shared": 0}).lds_bytes == 0  # Triton's word wins
    assert ia.isa_metrics(GFX1250).lds_bytes == 0
