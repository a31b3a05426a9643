"""The driver's pure logic: input splitting, expectations, pipeline parsing."""

import pytest

from gemm_opt.core.diagnostics import (
    Diagnostic,
    check_expectations,
    parse_expectations,
    split_input,
)
from gemm_opt.core.pipeline import PipelineError, parse_pipeline


def test_split_keeps_line_numbers() -> None:
    text = "a\n// -----\nb\nc\n// -----\nd\n"
    chunks = split_input(text, split=True)
    assert [c.first_line for c in chunks] == [
        1,
        2,
        5,
    ]  # chunks start on the marker line
    assert chunks[1].text.split("\n")[2] == "b"  # line 3 of the file
    assert chunks[2].text.split("\n")[5] == "d"


def test_no_split_is_one_chunk() -> None:
    assert len(split_input("a\n// -----\nb", split=False)) == 1


def test_expectation_offsets() -> None:
    text = "\n".join(
        [
            "// expected-error@+2 {{two below}}",
            "x",
            "y",
            "z // expected-warning {{same line}}",
            "// expected-note@-1 {{one above}}",
            "w",
            "// expected-remark@above {{above}}",
            "// expected-error@below {{below}}",
            "v",
            "// expected-error@unknown {{anywhere}}",
        ]
    )
    got = [(e.severity, e.line, e.text) for e in parse_expectations(text)]
    assert got == [
        ("error", 3, "two below"),
        ("warning", 4, "same line"),
        ("note", 4, "one above"),
        ("remark", 6, "above"),
        ("error", 9, "below"),
        ("error", 0, "anywhere"),
    ]


def test_expectations_match_substring_severity_and_line() -> None:
    exps = parse_expectations("x // expected-error {{bad thing}}")
    assert check_expectations([Diagnostic("error", 1, 3, "a bad thing here")], exps, "f") == []
    exps = parse_expectations("x // expected-error {{bad thing}}")
    failures = check_expectations([Diagnostic("warning", 1, 3, "a bad thing")], exps, "f")
    assert failures == [
        "f:1:3: error: unexpected warning: a bad thing",
        'f:1: error: expected error "bad thing" was not produced',
    ]


def test_unexpected_diagnostic_fails_without_expectations() -> None:
    failures = check_expectations([Diagnostic("error", 2, 1, "boom")], [], "f.mlir")
    assert failures == ["f.mlir:2:1: error: unexpected error: boom"]


def test_pipeline_parse_nested_and_options() -> None:
    els = parse_pipeline("builtin.module(a{x=1 y=true z},func.func(canonicalize,cse), b)")
    assert [e.name for e in els] == ["a", "func.func", "b"]
    assert els[0].options == {"x": "1", "y": "true", "z": "true"}
    assert els[1].nested is not None and [e.name for e in els[1].nested] == [
        "canonicalize",
        "cse",
    ]
    assert els[1].text == "func.func(canonicalize,cse)"


@pytest.mark.parametrize(
    ("text", "col"),
    [("builtin.module(a", 17), ("a,,b", 3), ("a{x=1", 6), ("", 1)],
)
def test_pipeline_syntax_errors_have_columns(text: str, col: int) -> None:
    if text == "":
        assert parse_pipeline(text) == []
        return
    with pytest.raises(PipelineError) as e:
        parse_pipeline(text)
    assert e.value.col == col
