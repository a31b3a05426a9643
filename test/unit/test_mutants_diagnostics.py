"""Where diagnostics point (found by ``benchmarks/mutation.py`` in
``gemm_opt.core.diagnostics``): the chunks of a split input keep the file's
line numbers, a location's position is found through every wrapping kind (and
is (0, 0) when there is none), and an op without one is reported at the first
op inside it that has one; a collected diagnostic keeps its severity and
goes no further; ``--verify-diagnostics`` annotations find their target
line, skipping annotation-only lines and stopping past either end of the file.
"""

from __future__ import annotations

import pytest

from gemm_opt.core.diagnostics import (
    collect,
    parse_expectations,
    position_of,
    positioned_location,
    split_input,
)
from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context
from gemm_opt.passes.annotate_warp_plan import emit_remarks

TEXT = "a\nb\n// -----\nc\n// -----\n\nd\n"


def test_chunks_keep_the_files_line_numbers() -> None:
    (whole,) = split_input(TEXT, False)
    assert (whole.text, whole.first_line) == (TEXT, 1)
    chunks = split_input(TEXT, True)
    assert [c.first_line for c in chunks] == [1, 3, 6]
    assert chunks[0].text == "a\nb\n"
    assert chunks[1].text.splitlines()[3] == "c"  # line 4 of the file
    assert chunks[2].text.splitlines()[6] == "d"  # line 7 of the file
    lead = split_input("\n// -----\nx\n", True)  # a file that starts with an empty line
    assert lead[1].text.splitlines().index("x") == 2  # line 3 of the file


def test_a_diagnostics_position() -> None:
    """Diagnostics hand over untyped locations: the kind is found first."""
    with make_context() as ctx, collect(ctx) as found:
        ir.Location.unknown().emit_error("nowhere")
        ir.Location.file("f.mlir", 3, 7).emit_error("here")
    assert [(d.line, d.col, d.message) for d in found] == [(0, 0, "nowhere"), (3, 7, "here")]


def test_positions_through_every_location_kind() -> None:
    with make_context():
        at = ir.Location.file("f.mlir", 3, 7)
        unknown = ir.Location.unknown()
        assert position_of(unknown) == (0, 0)
        assert position_of(None) == (0, 0)
        assert position_of(at) == (3, 7)
        assert position_of(ir.Location.name("x", childLoc=at)) == (3, 7)
        assert position_of(ir.Location.callsite(at, [ir.Location.file("g", 9, 1)])) == (3, 7)
        # (a fused location drops unknown members: a name without a position stays)
        assert position_of(ir.Location.fused([ir.Location.name("y"), at])) == (3, 7)
        nowhere = ir.Location.fused([ir.Location.name("y"), ir.Location.name("z")])
        assert position_of(nowhere) == (0, 0)


def test_an_op_without_a_position_points_at_its_first_positioned_op() -> None:
    with make_context():
        module = ir.Module.parse("func.func @f() {\n  return\n}")
        func = module.body.operations[0]
        assert position_of(positioned_location(func)) == (1, 1)
        with ir.Location.unknown():
            bare = ir.Module.create()
            holder = ir.Module.create()
        assert position_of(positioned_location(bare.operation)) == (0, 0)
        with ir.InsertionPoint(holder.body):
            func.operation.clone()
        assert position_of(positioned_location(holder.operation)) == (1, 1)


def test_an_untyped_location_of_no_position() -> None:
    """A location handed over through the C API is untyped: its kind is looked
    up, and one of none of the four kinds (unknown) has no position."""
    with make_context():
        unknown = ir.Location._CAPICreate(ir.Location.unknown()._CAPIPtr)
        at = ir.Location._CAPICreate(ir.Location.file("f.mlir", 3, 7)._CAPIPtr)
        assert type(unknown) is ir.Location and type(at) is ir.Location
        assert position_of(unknown) == (0, 0)
        assert position_of(at) == (3, 7)


def test_a_collected_remark_keeps_its_severity_and_goes_no_further(
    capfd: pytest.CaptureFixture[str],
) -> None:
    with make_context() as ctx, collect(ctx) as found:
        module = ir.Module.parse("func.func @f() {\n  return\n}", ctx)
        ir.Location.file("f.mlir", 3, 7).emit_error("here")
        emit_remarks([(module.body.operations[0], ["a remark"])])
    assert [(d.severity, d.line, d.col, d.message) for d in found] == [
        ("error", 3, 7, "here"),
        ("remark", 1, 1, "a remark"),
    ]
    assert capfd.readouterr().err == ""  # the collector handled both


#: ``@above``/``@below`` name the nearest line in that direction that is not an
#: annotation-only comment (a plain comment or code with an annotation counts);
#: past the first line that is line 0, past the last ``len(lines) + 1``.
EXPECT_TEXT = """%a = op
// expected-error@above {{above code}}
// expected-note@above {{above an annotation}}
%b = op  // expected-error {{same line}}
// expected-warning@below {{below an annotation}}
// expected-error@below {{below code}}
%c = op
// expected-remark@+1 {{plus one}}
// a plain comment
// expected-error@-2 {{minus two}}
// expected-error@above {{above a plain comment}}
%d = op // expected-error@below {{below a plain comment}}
// plain
%e = op"""
#: (annotation line, target line, text) of each annotation of ``EXPECT_TEXT``.
EXPECTED = [
    (2, 1, "above code"),
    (3, 1, "above an annotation"),
    (4, 4, "same line"),
    (5, 7, "below an annotation"),
    (6, 7, "below code"),
    (8, 9, "plus one"),
    (10, 8, "minus two"),
    (11, 9, "above a plain comment"),
    (12, 13, "below a plain comment"),
]


def test_expectations_find_their_target_lines() -> None:
    got = [(e.source_line, e.line, e.text) for e in parse_expectations(EXPECT_TEXT)]
    assert got == EXPECTED


def test_expectations_past_either_end_of_the_file() -> None:
    top = "// expected-error@unknown {{u}}\n// expected-error@above {{nothing above}}\n%a = op"
    assert [e.line for e in parse_expectations(top)] == [0, 0]
    assert [e.line for e in parse_expectations("// expected-error@above {{first}}")] == [0]
    end = "%a = op\n// expected-error@below {{nothing below}}\n// expected-error@below {{last}}"
    assert [e.line for e in parse_expectations(end)] == [4, 4]
