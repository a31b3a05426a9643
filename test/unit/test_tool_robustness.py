"""gemm-opt on damaged input: always a diagnostic and exit 1, never a crash.

Runs the tool in-process (its ``main``) on truncations and random mutations
of the example GEMM, with and without a pass pipeline, and checks that the
first line of stderr is an mlir-style diagnostic and that nothing reports a
traceback or an internal error. Successful runs of the installed tool print
nothing on stderr.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect.edit import edited, set_num_warps, set_warp_hints
from gemm_opt.tools.opt import main

ROOT = Path(__file__).resolve().parents[2]
GEMM = (ROOT / "examples" / "gemm_gfx1250.mlir").read_bytes()
DIAG = re.compile(r"^(\S+:\d+:\d+: (error|warning|note|remark): |\S+: error: |gemm-opt: error: )")


def run_tool(
    tmp_path: Path, data: bytes, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, str]:
    path = tmp_path / "input.mlir"
    path.write_bytes(data)
    code = main([str(path), "-o", str(tmp_path / "out.mlir"), *extra])
    return code, capsys.readouterr().err


def assert_clean(code: int, err: str) -> None:
    assert "Traceback" not in err
    assert "internal error" not in err, err
    if code == 0:
        return
    assert code in (1, 2), err
    first = err.splitlines()[0] if err else ""
    assert DIAG.match(first), f"not a diagnostic: {first!r}"


@pytest.mark.parametrize("cut", range(1, 100, 3))
def test_truncated_gemm(tmp_path: Path, capsys: pytest.CaptureFixture[str], cut: int) -> None:
    data = GEMM[: len(GEMM) * cut // 100]
    code, err = run_tool(tmp_path, data, capsys)
    if b"module" in data:  # before that the input is only comments: an empty module
        assert code == 1
    assert_clean(code, err)


PIPELINES = [
    (),
    (
        "--pass-pipeline=builtin.module(tile-assign-tdm-warp-layout,tile-fuse-tdm-copies,tile-emit-warp-predicates)",
    ),
    ("--pass-pipeline=builtin.module(tile-derive-warp-hints,tile-annotate-warp-plan)",),
    (
        "--pass-pipeline=builtin.module(tile-optimize{target=gfx1250},convert-tile-to-triton-gpu{target=gfx1250})",
    ),
    (
        "--pass-pipeline=builtin.module(func.func(tile-fuse-tdm-copies,canonicalize,tile-annotate-warp-plan))",
        "--emit=tile",
    ),
]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    edits=st.lists(
        st.tuples(st.integers(0, len(GEMM) - 1), st.binary(min_size=0, max_size=4)),
        min_size=1,
        max_size=4,
    ),
    pipeline=st.sampled_from(PIPELINES),
)
def test_mutated_gemm(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    edits: list[tuple[int, bytes]],
    pipeline: tuple[str, ...],
) -> None:
    data = bytearray(GEMM)
    for pos, new in edits:
        data[pos : pos + len(new) or pos + 1] = new
    code, err = run_tool(tmp_path, bytes(data), capsys, *pipeline)
    assert_clean(code, err)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(hint=st.integers(-(2**31), 2**32 - 1), nw=st.sampled_from([1, 2, 3, 4, 8, 16, 32]))
def test_any_hint_in_the_gemm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], hint: int, nw: int
) -> None:
    """Any i32 hint and warp count: the GEMM verifies or is rejected cleanly."""

    def variant(module: ir.Module) -> None:
        assert set_warp_hints(module, hint, old=15, verify=False) == 2  # the A copies
        set_num_warps(module, nw, verify=False)

    text = edited(GEMM.decode(), variant, locations=False, verify=False)
    code, err = run_tool(tmp_path, text.encode(), capsys, PIPELINES[1][0])
    assert_clean(code, err)


# ---- quiet success ---------------------------------------------------------------

GEMM_PATH = ROOT / "examples" / "gemm_gfx1250.mlir"
TOOL = [sys.executable, "-m", "gemm_opt.tools.opt"]


@pytest.mark.parametrize(
    "flags",
    [
        (),
        ("--pass-pipeline=builtin.module(tile-annotate-warp-plan)", "-o", os.devnull),
        ("--emit=ttgir", "-o", os.devnull),
        ("--emit=amdgcn", "--pass-pipeline=builtin.module()", "-o", os.devnull),
    ],
)
def test_success_prints_nothing_on_stderr(flags: tuple[str, ...]) -> None:
    """A successful run writes no stderr at all (no nanobind leak report at exit)."""
    run = subprocess.run([*TOOL, str(GEMM_PATH), *flags], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    if "annotate" in " ".join(flags):  # the remarks are the requested output
        assert run.stderr.startswith(f"{GEMM_PATH}:") and ": remark: warp plan" in run.stderr
        assert "nanobind" not in run.stderr and "error" not in run.stderr
    else:
        assert run.stderr == ""


def test_exit_is_quiet_after_gluon_built_a_kernel() -> None:
    """Gluon (the reference of the differential test) leaves libtriton holding
    its modules; gemm_opt.lowering releases them at exit, so nothing is printed."""
    script = (
        "import importlib.util, gemm_opt.lowering\n"
        f"spec = importlib.util.spec_from_file_location('g', {str(ROOT / 'benchmarks' / 'gluon_gemm_gfx1250.py')!r})\n"
        "g = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(g)\n"
        "g.compile_gluon_gemm('fp16', 'fused')\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""


def test_a_verifier_naming_an_outside_value_ends(tmp_path: Path) -> None:
    """A warp partition that uses a value from outside is reported by name (``%arg1``).
    Naming a value re-verifies its parent op, which re-entered the verifier without end
    where the file holds two such modules unsplit (a fuzzed input): the tool spun
    until killed. It must end with the two located errors."""
    lit = (ROOT / "test/lit/dialect/tile-warp-specialize-invalid.mlir").read_text()
    case = lit.split("// -----")[0]
    assert "uses %arg1, defined outside the partition" in case
    path = tmp_path / "input.mlir"
    path.write_text(case + case)
    script = (
        "import sys; from gemm_opt.tools.opt import main; "
        f"sys.exit(main([{str(path)!r}, '-o', {str(tmp_path / 'out')!r}]))"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 1, run.stderr
    errors = [line for line in run.stderr.splitlines() if "defined outside the partition" in line]
    assert len(errors) == 2 and all(e.startswith(f"{path}:") for e in errors), run.stderr
    assert "%arg1" in errors[0]
