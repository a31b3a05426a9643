"""No module formats MLIR text or edits it with regular expressions.

IR is built with typed builders (the dialect's op builders, Triton's Gluon op
builder) and changed with typed edits (:mod:`gemm_opt.dialect.edit`). This
test scans every Python file of the package, the tools, the benchmarks, the
examples and the tests for the ways text building creeps back in:

* ``re.sub``/``search``/``match``/... calls: allowed only in the files listed
  in :data:`REGEX_ALLOWED`, each with the non-MLIR text it reads;
* f-strings that hold MLIR syntax (``#tile.x<``, ``!tt.x<``,
  ``"tile.op"(``, ``= arith.op``, ``func.func @``, ``module attributes {``,
  ``scf.if %``, ...);
* ``str.replace`` of MLIR fragments (``tile.``, ``: i32``, ``%name``,
  ``warp_used_hint``, ...) and ``@NAME@`` text templates.

A hit in a file not listed fails; so does a listed file without hits (the
list must stay exact).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DIRS = ("python", "dialect", "passes", "lowering", "tools", "benchmarks", "test", "examples")

REGEX_USE = re.compile(
    r"\bre\.(?:sub|subn|search|match|findall|finditer|fullmatch|compile|split)\("
)
MLIR_IN_FSTRING = re.compile(
    r"""\bf(?:"|')[^\n]*?(?:[#!](?:tile|ttg|tt|amdg)\.\w+<|"tile\.\w+"\(|=\s*arith\.\w+\s"""
    r"""|func\.func\s+@|tt\.func\s|module\s+attributes\s*\{|scf\.(?:if|for)\s+%|\bamdg\.\w+\s+%)"""
)
MLIR_REPLACE = re.compile(
    r"""\.replace\(\s*(?:"|')[^"'\n]*(?:tile\.|ttg\.|arith\.|scf\.|\s:\s*i\d+|%\w|#\w|!\w"""
    r"""|warp_used_hint|k_width|order\s*=)"""
)
TEMPLATE = re.compile(r"@[A-Z]+@")

#: Files that may call ``re``, and the text they read (none of it MLIR built
#: or edited by us).
REGEX_ALLOWED = {
    "benchmarks/h100/cubin_usage.py": "SASS from cuobjdump: HGMMA and warpgroup-wait mnemonics",
    "benchmarks/h100/gluon_ws_gemm.py": (
        "PTX Triton generated: wgmma, TMA copy and setmaxnreg mnemonics, local memory"
    ),
    "lowering/isa_analysis.py": "AMDGPU assembly: mnemonics, labels, branches, metadata",
    "lowering/triton_bridge.py": "the diagnostic lines Triton printed to stderr",
    "python/gemm_opt/core/diagnostics.py": (
        "the `// -----` separator and `expected-error {{...}}` comments of "
        "--split-input-file/--verify-diagnostics inputs (directives in comments, as in mlir-opt)"
    ),
    "test/support/triton_lowering.py": "the LLVM IR text Triton's AMDGPU backend produced",
    "test/unit/test_mutants_lowering_isa_analysis.py": (
        "AMDGPU assembly listings: instruction lines, and the metadata comments two builds "
        "of one listing differ in"
    ),
    "test/support/fuzz/mutate.py": (
        "the fuzzer's text mutator: it must make malformed text (bad integers, swapped "
        "types, misspelled names), which no builder can represent"
    ),
    "test/support/fuzz/campaign.py": (
        "classifies mutated inputs, which may not parse, without the parser under test"
    ),
    "test/support/fuzz/oracle.py": (
        "the tool's stderr, Python tracebacks, and the launch attributes of the TTGIR it "
        "printed (reading an artifact, like FileCheck)"
    ),
    "test/unit/test_lowering.py": (
        "docstring sections, stderr, and FileCheck-style assertions on printed TTGIR"
    ),
    "test/unit/test_bench_gluon_ws.py": (
        "PTX Triton generated: wgmma waits, the named barriers before mbarrier arrives"
    ),
    "test/unit/test_pass_semantics.py": "the op location a race message names",
    "test/unit/test_portable_lowering.py": "PTX, and FileCheck-style assertions on TTGIR",
    "test/unit/test_tool_robustness.py": "the tool's stderr diagnostics",
    "test/unit/test_warp_hint.py": "the spelling of rule ids",
    "test/unit/test_no_mlir_text.py": "this scan",
    "python/gemm_opt/runtime/bundle.py": "a bundle's GPU name and PTX symbol names (JSON fields)",
    "benchmarks/h100/sweep.py": "groups refusal messages by their text with the numbers blanked",
    "test/unit/test_bundle_fuzz.py": "duplicate JSON keys in a fuzzed bundle document",
    "test/unit/test_docs_links.py": "Markdown links, headings and code spans of README.md and docs/",
    "test/support/ttgir_golden.py": (
        "splits lit files at their separators, reads RUN lines' pipelines, names dump files"
    ),
    "test/unit/test_negative_coordinates.py": "FileCheck-style reading of printed TTGIR masks",
    "test/unit/test_fuzz.py": "reads the integer attributes of the modules the fuzzer ran",
    "test/unit/test_fp8_block128.py": "PTX Triton generated: wgmma operands, global loads",
    "test/unit/test_swap_ab.py": "the MMA instruction in each target's assembly (PTX, AMDGPU)",
}

#: Files whose hits of the text-building patterns are not MLIR being built:
#: assertions comparing printed types, text made malformed on purpose for a
#: text parser's diagnostics, and this scan's own patterns.
BUILD_ALLOWED = {
    "test/unit/test_edit.py": "compares the printed argument types of an edited module",
    "test/unit/test_lowering.py": "asserts a printed TTGIR type is present",
    "test/unit/test_triton_bridge.py": (
        "malformed TTGIR for validate()'s text diagnostics: a use of the wrong type (a parse "
        "error, which no builder can make), an attribute Triton's parser cannot read, a module "
        "without ttg.num-warps (Triton's printer aborts on one, its bindings remove no attribute)"
    ),
    "test/unit/test_mutants_lowering_context.py": "asserts a printed descriptor type is present",
    "test/unit/test_mutants_lowering_control_flow.py": (
        "finds a lowered function's header in printed TTGIR to read its body"
    ),
    "test/unit/test_mutants_lowering_triton_bridge.py": (
        "malformed TTGIR for validate()'s diagnostics: a module without ttg.target, which "
        "Triton's bindings cannot remove"
    ),
    "test/unit/test_no_mlir_text.py": "this scan",
}


def _python_files() -> list[Path]:
    files = []
    for d in DIRS:
        for path in sorted((ROOT / d).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
                continue
            files.append(path)
    return files


def _lines(text: str) -> list[tuple[int, str]]:
    """Numbered lines, a line that ends in an open ``(`` joined with the next
    (so ``x.replace(`` wrapped by the formatter is seen with its arguments)."""
    lines = text.splitlines()
    out = []
    for number, line in enumerate(lines, 1):
        if line.rstrip().endswith("(") and number < len(lines):
            line = line.rstrip() + lines[number].strip()
        out.append((number, line))
    return out


def _hits(patterns: tuple[re.Pattern[str], ...]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in _python_files():
        rel = path.relative_to(ROOT).as_posix()
        for number, line in _lines(path.read_text()):
            if any(p.search(line) for p in patterns):
                found.setdefault(rel, []).append(f"{rel}:{number}: {line.strip()}")
    return found


def test_the_scan_sees_the_tree():
    files = {p.relative_to(ROOT).as_posix() for p in _python_files()}
    assert "dialect/edit.py" in files and "test/support/tdm_ttgir.py" in files
    assert len(files) > 80


def test_regular_expressions_read_only_non_mlir_text():
    hits = _hits((REGEX_USE,))
    unexpected = [line for rel, lines in hits.items() if rel not in REGEX_ALLOWED for line in lines]
    assert not unexpected, "regular expressions in files not allowed to use them:\n" + "\n".join(
        unexpected
    )
    stale = sorted(set(REGEX_ALLOWED) - set(hits))
    assert not stale, f"allowed but no longer using regular expressions: {stale}"


def test_no_mlir_text_is_built_or_edited_as_text():
    hits = _hits((MLIR_IN_FSTRING, MLIR_REPLACE, TEMPLATE))
    known = set(BUILD_ALLOWED)
    unexpected = [line for rel, lines in hits.items() if rel not in known for line in lines]
    assert not unexpected, (
        "MLIR text built with f-strings, str.replace or templates (build it with the op "
        "builders, edit it with gemm_opt.dialect.edit):\n" + "\n".join(unexpected)
    )
    stale = sorted(known - set(hits))
    assert not stale, f"listed but clean now (remove them from the list): {stale}"


def test_the_patterns_catch_what_they_are_for():
    built = [
        "f" + '"#ttg.swizzled_shared<{{vec = {v}}}>"',  # split: not itself a hit
        "f'%d = \"tile.local_alloc\"() : () -> {t}'",
        'f"    %c = arith.constant {v} : i32"',
        'f"module attributes {{\\"ttg.num-warps\\" = {n} : i32}}"',
        'f"  tt.func public @k({args}) {{"',
        'f"%t = amdg.async_tdm_copy_global_to_local %d into %b"',
    ]
    assert all(MLIR_IN_FSTRING.search(s) for s in built)
    edits = [
        'text.replace("warp_used_hint = 240 : i32", "")',
        "GEMM.replace('k_width = 8', 'k_width = 3')",
        'text.replace("%b0", "%b1")',
    ]
    wrapped = 'text = GEMM.replace(\n    "warp_used_hint = 15 : i32", ""\n)\n'
    assert any(MLIR_REPLACE.search(line) for _, line in _lines(wrapped))
    assert all(MLIR_REPLACE.search(s) for s in edits)
    assert TEMPLATE.search('template.replace("@HINT@", value)')
    messages = [
        'f"#tile.blocked threads_per_warp {x} covers {n} lanes"',
        'f"expected a !tile.shared result, got {t}"',
        'name.replace("-", "_")',
    ]
    assert not any(p.search(s) for s in messages for p in (MLIR_IN_FSTRING, MLIR_REPLACE, TEMPLATE))
