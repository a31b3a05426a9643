"""The driver's logic: input splitting, expectations, pipeline parsing and
resolving, what --emit appends, and misuse (exit 2 before any work)."""

import re
from pathlib import Path

import pytest

from gemm_opt.core.diagnostics import (
    Diagnostic,
    check_expectations,
    parse_expectations,
    split_input,
)
from gemm_opt.core.pipeline import (
    Option,
    PipelineError,
    check_pipeline,
    find_pass,
    parse_pipeline,
    pass_names,
    pass_options,
    resolve,
)
from gemm_opt.lowering import REGISTRY
from gemm_opt.lowering.pipelines import completion, required_passes, tile_passes
from gemm_opt.tools import opt

ROOT = Path(__file__).resolve().parents[2]


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


# ---- resolving pipelines against the registry ------------------------------------


def test_resolve_expands_named_pipelines_with_the_module_target() -> None:
    steps = resolve("builtin.module(tile-to-ttgir{fuse=false})", REGISTRY, {"target": "gfx950"})
    assert list(pass_names(steps)) == ["tile-lower-gemm-schedule", "convert-tile-to-triton-gpu"]
    conversion = next(find_pass(steps, "convert-tile-to-triton-gpu"))
    assert conversion.target == "gfx950"  # type: ignore[attr-defined]
    # An explicit option wins over the default.
    steps = resolve("tile-optimize{target=gfx1250}", REGISTRY, {"target": "gfx950"})
    assert "tile-assign-tdm-warp-layout" in pass_names(steps)


def test_resolve_keeps_nested_pipelines() -> None:
    steps = resolve("builtin.module(func.func(canonicalize,tile-fuse-tdm-copies),cse)", REGISTRY)
    assert [s.name for s in steps] == ["func.func", "cse"]
    assert steps[0].nested is not None
    assert [s.name for s in steps[0].nested] == ["canonicalize", "tile-fuse-tdm-copies"]
    assert list(pass_names(steps)) == ["canonicalize", "tile-fuse-tdm-copies", "cse"]


@pytest.mark.parametrize(
    ("text", "col", "message"),
    [
        ("func.func(convert-tile-to-triton-gpu)", 11, "runs on builtin.module"),
        ("tile-fuse-tdm-copies(cse)", 1, "takes options, not a nested pipeline"),
        ("tile-to-ttgir{fuse=maybe}", 1, "expected true or false, got 'maybe'"),
        ("tile-optimize{bogus=1}", 1, "has no option 'bogus'"),
        ("a,tile-derive-warp-hints{min-group=x}", 3, "expects int, got 'x'"),
    ],
)
def test_resolve_rejects_with_a_column(text: str, col: int, message: str) -> None:
    with pytest.raises(PipelineError, match=re.escape(message)) as e:
        resolve(text, REGISTRY)
    assert e.value.col == col


@pytest.mark.parametrize(
    ("text", "col", "message"),
    [
        ("builtin.module(no-such-pass)", 16, "'no-such-pass' does not refer to a registered pass"),
        ("func.func(cse,nope)", 15, "'nope' does not refer to a registered pass"),
        ("nope.op(tile-fuse-tdm-copies,nope)", 30, "'nope' does not refer"),
        ("cse{nope=1}", 1, "pass 'cse': <Pass-Options-Parser>: no such option nope"),
    ],
)
def test_upstream_elements_are_checked_before_running(text: str, col: int, message: str) -> None:
    with pytest.raises(PipelineError, match=re.escape(message)) as e:
        check_pipeline(resolve(text, REGISTRY), REGISTRY)
    assert e.value.col == col


def test_completion_appends_only_what_the_target_requires() -> None:
    assert completion("gfx1250", {"tile-fuse-tdm-copies"}) == [
        "tile-lower-gemm-schedule",
        "tile-assign-tdm-warp-layout",
        "tile-emit-warp-predicates",
        "convert-tile-to-triton-gpu{target=gfx1250}",
    ]
    assert completion("gfx1250", set(), convert=False) == [
        "tile-lower-gemm-schedule",
        "tile-assign-tdm-warp-layout",
        "tile-emit-warp-predicates",
    ]
    assert completion("gfx950", set()) == [
        "tile-lower-gemm-schedule",
        "convert-tile-to-triton-gpu{target=gfx950}",
    ]
    assert completion("gfx1250", {"convert-tile-to-triton-gpu"}) == []
    # Fusion and hint derivation are choices: never appended.
    assert "tile-fuse-tdm-copies" not in completion("gfx1250", set())
    assert required_passes("gfx1250") == tile_passes("gfx1250", fuse=False, derive_hints=False)


def test_pass_options_have_types_defaults_and_descriptions() -> None:
    options = {o.name: o for o in pass_options(REGISTRY.passes["tile-fuse-tdm-copies"]())}
    assert options["max-members"] == Option(
        "max-members", "int", "4", "Largest group to form (2 to 4)."
    )
    for name, loader in REGISTRY.passes.items():
        for o in pass_options(loader()):
            assert o.doc, f"{name} option {o.name} has no description"
    for name, named in REGISTRY.pipelines.items():
        assert named.summary and all(o.doc for o in named.options), name


# ---- the command line: misuse is exit 2, one line, before any work ---------------

MISUSE = [
    (["--target=gfx1250"], "--target applies to --emit only"),
    (["--emit=hsaco"], "--emit=hsaco writes a binary file: pass -o FILE"),
    (["--emit=cubin", "--split-input-file", "-o", "x"], "cannot be combined with --split-input"),
    (["--emit=tile", "--pass-pipeline=tile-to-ttgir"], "--emit=tile prints tile IR"),
    (
        ["--emit=ttgir", "--target=gfx950", "--pass-pipeline=tile-to-ttgir{target=gfx942}"],
        "--target=gfx950 contradicts 'convert-tile-to-triton-gpu{target=gfx942}'",
    ),
    (["--pass-pipeline=builtin.module(nope)"], "'nope' does not refer to a registered pass"),
    (["--pass-pipeline=func.func(cse,nope)"], "'nope' does not refer to a registered pass"),
    (["--emit=ptx", "--target=gfx1250"], "--emit=ptx does not exist for target gfx1250"),
    (["--emit=hsaco", "--target=cuda:90", "-o", "x"], "--emit=hsaco does not exist for target"),
    (["--emit=bogus"], "argument --emit: invalid choice: 'bogus'"),
    (["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
]


@pytest.mark.parametrize(("flags", "message"), MISUSE)
def test_misuse_exits_2_with_one_line_before_reading_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    missing = tmp_path / "never-read.mlir"  # reading it would be exit 1
    with pytest.raises(SystemExit) as e:
        opt.main([str(missing), *flags])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    assert message in err
    assert "could not open" not in err


def test_input_errors_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "k.mlir"
    path.write_text("module attributes {tile.num_warps = 4 : i32} {\n}\n")
    assert opt.main([str(path), "--emit=tile"]) == 1  # no target anywhere
    assert "--emit needs a target" in capsys.readouterr().err
    assert opt.main([str(tmp_path / "missing.mlir")]) == 1
    assert "could not open input file" in capsys.readouterr().err
    # The module's target decides what exists, before any pass runs.
    path.write_text('module attributes {tile.num_warps = 4 : i32, tile.target = "gfx950"} {\n}\n')
    assert opt.main([str(path), "--emit=ptx"]) == 1
    err = capsys.readouterr().err
    assert (
        err
        == f"{path}:1:1: error: --emit=ptx does not exist for target gfx950 (it has: tile, ttgir, llir, amdgcn, hsaco)\n"
    )


def test_binary_emit_writes_one_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "k.hsaco"
    assert (
        opt.main([str(ROOT / "examples" / "gemm_gfx1250.mlir"), "--emit=hsaco", "-o", str(out)])
        == 0
    )
    data = out.read_bytes()
    assert data[:4] == b"\x7fELF" and data.count(b"\x7fELF") == 1
    assert capsys.readouterr().err == ""
