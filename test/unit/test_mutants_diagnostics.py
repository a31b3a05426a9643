"""Where diagnostics point (found by ``benchmarks/mutation.py`` in
``gemm_opt.core.diagnostics``): the chunks of a split input keep the file's
line numbers, a location's position is found through every wrapping kind (and
is (0, 0) when there is none), and an op without one is reported at the first
op inside it that has one.
"""

from __future__ import annotations

from gemm_opt.core.diagnostics import collect, position_of, positioned_location, split_input
from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context

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
