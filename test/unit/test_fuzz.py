"""gemm-opt under fuzzing: generated modules, mutated inputs and the regression corpus.

Each case runs through ``gemm-opt`` in a child process (see
``test/support/fuzz``): parse, then a drawn pass, named pipeline or
``--emit`` for a drawn target. The oracle accepts exit 0 with a valid
artifact or exit 1 with a located error; a traceback, signal, timeout,
internal error, unlocated error or empty artifact fails the test with the
shrunk input and its command. The budget is fixed (derandomized examples),
so a run is reproducible; ``test/fuzz/run.py`` fuzzes for longer.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.fuzz.campaign import (
    CI_CHECKS,
    CI_COMMANDS,
    CI_SPACE,
    COMMAND_HEADER,
    campaign,
    cases,
    load,
    run_case,
)
from support.fuzz.oracle import Oracle, classify

CORPUS = sorted((Path(__file__).resolve().parents[1] / "fuzz" / "corpus").glob("*.mlir"))


@pytest.fixture(scope="module")
def oracle() -> Iterator[Oracle]:
    with Oracle(timeout=60.0, binary_timeout=180.0) as o:
        yield o


@pytest.mark.parametrize(("kind", "examples"), [("modules", 120), ("mutations", 80)])
def test_fuzz(oracle: Oracle, kind: str, examples: int) -> None:
    strategy = cases(kind, CI_SPACE, CI_COMMANDS, CI_CHECKS)
    stats = campaign(oracle, strategy, examples=examples, derandomize=True, checks=CI_CHECKS)
    if stats.findings:
        pytest.fail("\n\n".join(f.report() for f in stats.findings), pytrace=False)
    assert stats.cases >= examples


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_corpus(oracle: Oracle, path: Path) -> None:
    """Every input that once broke gemm-opt is now handled."""
    text, command = load(path)
    assert text.startswith(COMMAND_HEADER), f"{path.name} has no '{COMMAND_HEADER}' header"
    found = run_case(oracle, text, command)
    if found is not None:
        pytest.fail(found.report(), pytrace=False)


def test_corpus_is_not_empty() -> None:
    assert CORPUS


# ---- the oracle itself -------------------------------------------------------------


@pytest.mark.parametrize(
    ("rc", "stderr", "output", "kind"),
    [
        (0, "", b"module {\n}\n", None),
        (1, "in.mlir:3:5: error: 'tile.wmma' op bad\n", None, None),
        (1, "<stdin>:1:1: error: expected operation name\n", None, None),
        (-signal.SIGABRT, "", None, "signal"),
        (-signal.SIGSEGV, "", None, "signal"),
        (-signal.SIGALRM, "", None, "timeout"),
        (1, "Traceback (most recent call last):\n  File ...\nKeyError: 'x'\n", None, "traceback"),
        (1, "in.mlir:1:1: error: internal error in pass 'p': ValueError\n", None, "internal-error"),
        (1, "in.mlir: error: needs a target\n", None, "unlocated-error"),
        (1, "in.mlir:0:0: error: somewhere\n", None, "unlocated-error"),
        (1, "", None, "unlocated-error"),
        (2, "<pass-pipeline>:1:5: error: 'p' must end the pipeline\n", None, None),
        (
            2,
            "<pass-pipeline>:1:1: error: 'func.func' does not refer to a registered pass\n",
            None,
            "misuse-exit",
        ),
        (2, "usage: gemm-opt [-h]\n", None, "misuse-exit"),
        (
            1,
            "in.mlir:4:3: error: Triton failed: IndexError: list index out of range\n",
            None,
            "leaked-exception",
        ),
        (134, "", None, "exit-code"),
        (0, "", b"", "bad-artifact"),
        (0, "in.mlir:2:1: error: lost\n", b"module {}", "error-on-success"),
    ],
)
def test_classify(rc: int, stderr: str, output: bytes | None, kind: str | None) -> None:
    got = classify((), rc, stderr, output)
    assert (got[0] if got else None) == kind


@pytest.mark.parametrize(
    ("command", "output", "ok"),
    [
        (("--emit=ttgir",), b"module {\n  tt.func @k() {\n  }\n}\n", True),
        (("--emit=ttgir",), b"module {\n}\n", False),
        (("--emit=hsaco",), b"\x7fELF\x02\x01", True),
        (("--emit=cubin",), b"// -----\n", False),
        (("--emit=amdgcn",), b"\t.text\n", False),
        (("--emit=ptx",), b".version 8.0\n.entry k()\n", True),
        (
            ("--emit=ttgir",),
            b'module attributes {"ttg.num-warps" = 8 : i32, "ttg.threads-per-warp" = 32 : i32} {\n  tt.func @k()',
            True,
        ),
        (
            ("--emit=ttgir",),
            b'module attributes {"ttg.num-warps" = 64 : i32, "ttg.threads-per-warp" = 32 : i32} {\n  tt.func @k()',
            False,
        ),
    ],
)
def test_classify_artifacts(command: tuple[str, ...], output: bytes, ok: bool) -> None:
    assert (classify(command, 0, "", output) is None) == ok
