"""Tests of gemm_opt.lowering.triton_bridge against the installed Triton 3.9.0.

The minimal hand-written GEMMs in ``examples/reference`` must parse and compile
for their targets, with the expected instructions in the K loop; broken TTGIR
must come back as a clean :class:`TritonError` that names ``<ttgir>:line:col``.
Each compile takes about a second; the compiles are shared per module.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import triton  # noqa: F401  (a pinned dependency: missing triton must fail, not skip)
from support.tdm_ttgir import RUNTIME, CopyKernel, Member, build

from gemm_opt.lowering import triton_bridge as tb

REFERENCE = Path(__file__).resolve().parents[2] / "examples" / "reference"
MIN_GEMMS = {
    "gfx1250": REFERENCE / "min_gemm_gfx1250.ttgir",
    "gfx950": REFERENCE / "min_gemm_gfx950.ttgir",
    "gfx942": REFERENCE / "min_gemm_gfx942.ttgir",
}


def _text(target: str) -> str:
    return MIN_GEMMS[target].read_text()


def _line_of(text: str, needle: str) -> int:
    """1-based line number of the first line containing ``needle``."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.fixture(scope="module")
def compiled() -> dict[str, tb.CompiledArtifact]:
    return {target: tb.compile_ttgir(_text(target), target) for target in MIN_GEMMS}


# ---------------------------------------------------------------------------
# validate


@pytest.mark.parametrize("target", sorted(MIN_GEMMS))
def test_validate_accepts_min_gemm(target: str) -> None:
    tb.validate(_text(target), target)


def test_validate_accepts_gluon_reference() -> None:
    tb.validate((REFERENCE / "gluon_gemm_gfx1250_fused.ttgir").read_text())


def _printed(kernel: CopyKernel) -> str:
    """``kernel`` built with Gluon's op builder (in a child) and printed by Triton,
    unverified (so in the generic form when the verifier would refuse it)."""

    def work(report: object) -> str:
        tir = tb.triton_ir("gfx1250")  # holds the context the module lives in
        return build(tir, kernel).str_nodebug()

    run = tb.run_isolated(work)
    assert run.ok, (run.exception, run.stderr)
    return run.result


@pytest.mark.parametrize(("hints", "accepted"), [((15, 240), True), ((15, 15), False)])
def test_validate_rejects_overlapping_fused_hints(hints: tuple[int, int], accepted: bool) -> None:
    members = (Member((128, 64)), Member((128, 64)))
    text = _printed(CopyKernel(8, members, hints=hints, fused=True, descriptors=RUNTIME))
    if accepted:  # the same kernel with disjoint hints passes
        tb.validate(text)
        return
    with pytest.raises(tb.TritonError) as info:
        tb.validate(text)
    row = _line_of(text, "amdg.async_tdm_fused_copy_global_to_local")
    message = str(info.value)
    assert message.startswith(f"<ttgir>:{row}:")
    assert "requires pairwise-disjoint warp_used_hint values" in message
    assert info.value.locations[0][0] == row
    assert "Traceback" not in message and "loc(" not in message


def test_validate_reports_line_and_column_of_a_type_error() -> None:
    text = _text("gfx942").replace(
        "%k0 = arith.muli %k, %c32 : i32", "%k0 = arith.muli %k, %c32 : i64"
    )
    with pytest.raises(tb.TritonError) as info:
        tb.validate(text, "gfx942")
    row = _line_of(text, "%k0 = arith.muli %k, %c32 : i64")
    col = text.splitlines()[row - 1].index("%k,") + 1
    assert info.value.locations == [(row, col)]
    assert "expects different type than prior uses" in str(info.value)


def test_validate_rejects_wrong_target() -> None:
    with pytest.raises(tb.TritonError, match='requested target is "hip:gfx950"'):
        tb.validate(_text("gfx1250"), "gfx950")


def test_missing_num_warps_is_an_error_not_an_abort() -> None:
    text = _text("gfx1250").replace('"ttg.num-warps" = 8 : i32, ', "")
    with pytest.raises(tb.TritonError, match=r"ttg\.num-warps"):
        tb.validate(text)


def test_silent_attribute_parse_failure_is_a_clean_error() -> None:
    old = "ctaLayout = {warp = [[0, 1], [1, 0], [2, 0]]}"
    text = _text("gfx1250").replace(old, "warpsPerCTA = [4, 2]")
    with pytest.raises(tb.TritonError) as info:
        tb.validate(text)
    message = str(info.value)
    assert message.startswith("<ttgir>: error: Triton could not parse the text")
    assert "Traceback" not in message and "RuntimeError" not in message


def test_an_abort_in_the_child_is_reported_with_what_it_printed() -> None:
    """Without ttg.num-warps Triton 3.9 aborts (LLVM ERROR); the parent lives on."""
    text = _text("gfx1250").replace('"ttg.num-warps" = 8 : i32, ', "")
    with pytest.raises(tb.TritonError) as info:
        tb.compile_ttgir(text)
    lines = str(info.value).splitlines()
    assert lines[-1] == "<ttgir>: error: Triton aborted (SIGABRT)"
    assert any("ttg.num-warps attribute" in line for line in lines)
    assert info.value.locations[0][0] == _line_of(text, "amdg.async_tdm_fused_copy_global_to_local")


def test_run_isolated_returns_progress_and_survives_a_signal() -> None:
    import os
    import signal

    def work(report):
        report("first")
        report("second")
        os.kill(os.getpid(), signal.SIGABRT)

    run = tb.run_isolated(work)
    assert not run.ok and run.died == "aborted (SIGABRT)"
    assert run.progress == ["first", "second"]
    assert tb.run_isolated(lambda report: 41 + 1).result == 42
    failed = tb.run_isolated(lambda report: 1 // 0)
    assert not failed.ok and failed.exception.startswith("ZeroDivisionError")


def test_unknown_target_name() -> None:
    with pytest.raises(ValueError, match="unknown target"):
        tb.validate("", "gfx90a")


def test_targets_map() -> None:
    assert tb.TARGETS["gfx1250"] == ("hip", "gfx1250", 32)
    assert tb.TARGETS["gfx950"] == ("hip", "gfx950", 64)
    assert tb.TARGETS["gfx942"] == ("hip", "gfx942", 64)
    assert tb.TARGETS["cuda:90"] == ("cuda", 90, 32)
    assert tb.target_attr("gfx1250") == "hip:gfx1250"


# ---------------------------------------------------------------------------
# compile_ttgir


def test_compile_gfx1250_min_gemm(compiled: dict[str, tb.CompiledArtifact]) -> None:
    art = compiled["gfx1250"]
    assert {"ttgir", "llir", "amdgcn", "hsaco"} <= set(art.asm)
    assert isinstance(art.asm["hsaco"], bytes)
    m = art.metrics
    assert m.tdm_loads >= 1
    assert m.tdm_loads_in_loop == 1  # one fused copy per K tile
    assert m.wmma >= 1
    assert m.wmma_in_loop == 16  # 128x128x64 over 8 warps, 16x16x32 WMMA
    assert m.spills == 0
    assert m.lds_bytes == art.metadata["shared"] > 0
    assert m.vgprs > 0 and m.sgprs > 0 and m.code_bytes > 0
    assert m.waits.get("s_wait_tensorcnt", 0) >= 1
    assert art.metadata["target"] == ("hip", "gfx1250", 32)
    assert art.compile_seconds > 0


def test_compile_gluon_reference() -> None:
    # The TTGIR Gluon printed (locations stripped) compiles on its own.
    m = tb.compile_ttgir((REFERENCE / "gluon_gemm_gfx1250_fused.ttgir").read_text()).metrics
    assert (m.tdm_loads_in_loop, m.wmma_in_loop, m.spills) == (1, 16, 0)


@pytest.mark.parametrize("target", ["gfx950", "gfx942"])
def test_compile_cdna_min_gemm(compiled: dict[str, tb.CompiledArtifact], target: str) -> None:
    m = compiled[target].metrics
    assert m.mfma >= 1
    assert m.mfma_in_loop == m.mfma  # every MFMA sits in the K loop
    assert m.wmma == 0 and m.tdm_loads == 0
    assert m.spills == 0


#: ``%K`` in ``@min_gemm_gfx950(%A, %B, %C, %M, %N, %K, ...)``.
K_ARG = 5


def _k_divisible_by_one(target: str) -> str:
    """The reference GEMM with ``%K`` known divisible by 1 only, through Triton's
    bindings: parsed, ``tt.divisibility`` of ``%K`` set, printed.

    The bindings set an argument attribute but cannot remove one (no removal
    call, no dictionary attribute to rebuild ``arg_attrs`` with); 1 is what
    Triton's axis analysis assumes for an argument without the attribute, so
    the module means the same as one without it.
    """

    def work(report: object) -> str:
        tir = tb.triton_ir(target)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "min_gemm.ttgir"
            path.write_text(_text(target))
            module = tir.ir.parse_mlir_module(str(path), tir.context)
        fn = module.get_function(module.get_entry_func_name())
        fn.set_arg_attr(K_ARG, "tt.divisibility", 1)
        module.verify()
        return module.str_nodebug()

    run = tb.run_isolated(work)
    assert run.ok, (run.exception, run.stderr)
    return run.result


def test_compile_error_is_clean() -> None:
    # Without divisibility on K the direct-to-LDS mask cannot be vectorised:
    # the copy parses and verifies, but fails in the LLVM lowering.
    text = _k_divisible_by_one("gfx950")
    code = [line for line in _text("gfx950").splitlines() if not line.lstrip().startswith("//")]
    assert text.count("tt.divisibility = 16") == "\n".join(code).count("tt.divisibility = 16") - 1
    assert text.count("tt.divisibility = 1 : i32") == 1
    tb.validate(text, "gfx950")
    tb.compile_ttgir(_text("gfx950"), "gfx950")  # the reference itself compiles
    with pytest.raises(tb.TritonError) as info:
        tb.compile_ttgir(text, "gfx950")
    row = _line_of(text, "amdg.buffer_load_to_local")
    assert info.value.locations and info.value.locations[0][0] == row
    assert "cannot lower 'amdg.buffer_load_to_local'" in str(info.value)
    assert "PassManager" not in str(info.value)
    assert info.value.raw  # the unfiltered stderr is kept for debugging


def test_the_isa_report_is_made_when_read_not_by_the_compile() -> None:
    """An artifact carries no report until asked; then the same report as the
    analysis gives for its assembly."""
    from gemm_opt.lowering.isa_analysis import isa_metrics

    art = tb.compile_ttgir(_text("gfx1250"))
    assert "metrics" not in vars(art)
    assert art.metrics == isa_metrics(art.asm["amdgcn"], art.metadata)
    assert "metrics" in vars(art)
