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

import re
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
from support.fuzz.oracle import MUST_REFUSE, Oracle, accepted_bad_program, classify

CORPUS = sorted((Path(__file__).resolve().parents[1] / "fuzz" / "corpus").glob("*.mlir"))


@pytest.fixture(scope="module")
def oracle() -> Iterator[Oracle]:
    with Oracle(timeout=60.0, binary_timeout=180.0) as o:
        yield o


@pytest.mark.parametrize(("kind", "examples"), [("modules", 60), ("mutations", 80)])
def test_fuzz(oracle: Oracle, kind: str, examples: int) -> None:
    texts: list[str] = []
    strategy = cases(kind, CI_SPACE, CI_COMMANDS, CI_CHECKS).map(
        lambda case: texts.append(case[0]) or case
    )
    stats = campaign(oracle, strategy, examples=examples, derandomize=True, checks=CI_CHECKS)
    if stats.findings:
        pytest.fail("\n\n".join(f.report() for f in stats.findings), pytrace=False)
    assert stats.cases >= examples
    if kind == "modules":
        _reaches_the_newer_surface("\n".join(texts))


#: Ops of the newer surface that the CI's generated modules must reach.
NEWER_SURFACE = (
    '"tile.gemm_schedule"',
    '"tile.schedule_yield"',
    '"tile.warp_specialize"',
    '"tile.warp_partition"',
    '"tile.async_wmma"',
    '"tile.async_wmma_wait"',
    '"tile.barrier_alloc"',
    '"tile.barrier_expect"',
    '"tile.barrier_arrive"',
    '"tile.barrier_wait"',
    '"tile.async_tdm_copy_local_to_global"',
    '"tile.atomic_rmw"',
    '"tile.atomic_add_block"',
    '"tile.load_scalar"',
    '"tile.num_programs"',
)


def _reaches_the_newer_surface(seen: str) -> None:
    """The modules the CI ran hold every op of the newer surface, and schedule
    attributes at the integer limits."""
    missing = [op for op in NEWER_SURFACE if op not in seen]
    assert not missing, f"never generated: {missing}"
    drawn = {int(v) for v in re.findall(r"(?:block_[mnk]|group_m|num_xcds) = (-?\d+) : i", seen)}
    assert drawn & {(1 << 31) - 1, 1 << 31, 1 << 63, -(1 << 31)}, sorted(drawn)


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


_ACC = (
    "#tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, "
    "warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>"
)
_SCHEDULE = """"tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({{
^bb0(%{p}g: i32, %{p}mo: i32, %{p}me: i32, %{p}no: i32, %{p}ko: i32, %{p}ke: i32):
{inner}  "tile.schedule_yield"(%x) : (tensor<32x32xf32, #acc>) -> ()
}}) {{kind = "persistent", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>}} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
"""


def _schedule_module(inner: str, results: str = "") -> str:
    ret = "-> i32 " if results else ""
    value = " %M : i32" if results else ""
    return (
        f"#acc = {_ACC}\n"
        "module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {\n"
        "func.func @k(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, "
        f"%x: tensor<32x32xf32, #acc>) {ret}{{\n"
        + _SCHEDULE.format(inner=inner, p="")
        + f"return{value}\n}}\n}}\n"
    )


def test_the_oracle_knows_programs_the_verifier_must_refuse() -> None:
    one = _schedule_module("")
    nested = _schedule_module(_SCHEDULE.format(inner="", p="inner_"))
    rules = tuple(MUST_REFUSE)
    assert accepted_bad_program(one, rules) is None
    # The schedule verifier refuses a nested schedule itself, so gemm-opt never accepts
    # one; the oracle's rule stays as the guard should that verifier rule regress.
    assert accepted_bad_program(nested, rules) is None
    from gemm_opt.core.ext_compat import MLIRError, ir
    from gemm_opt.dialect import make_context

    with make_context(True), pytest.raises(MLIRError, match="must not be nested"):
        ir.Module.parse(nested)
    returning = accepted_bad_program(_schedule_module("", results="i32"), rules)
    assert returning is not None and returning.startswith("kernel-results: a kernel")
    assert accepted_bad_program("not mlir", rules) is None  # judged by gemm-opt, not here
