"""The compile driver's rules that the end-to-end lowering tests leave open (found by
``benchmarks/mutation.py`` in ``gemm_opt.lowering.compile``): the per-thread context
cache and when it renews, how an error reads, the hand-off split of hand-built step
lists (nesting that :func:`gemm_opt.core.pipeline.resolve` never produces), the host
descriptor count check, the ISA report's refusal on a non-AMD kernel, and what a
compiled kernel reports of its pipeline and its stage times.
"""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from gemm_opt.core.ext_compat import ir
from gemm_opt.core.pipeline import PipelineError, Step, resolve
from gemm_opt.core.targets import TARGETS
from gemm_opt.dialect import make_context
from gemm_opt.lowering import REGISTRY
from gemm_opt.lowering import compile as compile_mod
from gemm_opt.lowering.compile import (
    HAND_OFF,
    CompiledKernel,
    HandOff,
    TileCompileError,
    compile_tile_module,
    hand_off,
    lower_tile_module,
    split_hand_off,
)
from gemm_opt.lowering.isolation import Isolated

ROOT = Path(__file__).resolve().parents[2]
GEMM = (ROOT / "examples" / "gemm_gfx1250.mlir").read_text()


# -- the per-thread context cache -------------------------------------------------------


def test_the_context_is_reused_for_exactly_context_uses_compiles_then_renewed():
    compile_mod._contexts.held = None
    first = compile_mod._context()
    for _ in range(compile_mod.CONTEXT_USES - 1):
        assert compile_mod._context() is first
    renewed = compile_mod._context()  # use CONTEXT_USES + 1
    assert renewed is not first
    assert compile_mod._context() is renewed
    compile_mod._contexts.held = None


def test_the_context_rejects_unregistered_dialects():
    compile_mod._contexts.held = None
    assert compile_mod._context().allow_unregistered_dialects is False
    compile_mod._contexts.held = None


def test_a_context_made_in_another_process_is_not_reused():
    compile_mod._contexts.held = None
    mine = compile_mod._context()
    compile_mod._contexts.held[0] = -1  # as a forked child sees its parent's entry
    assert compile_mod._context() is not mine
    compile_mod._contexts.held = None


# -- how an error reads ------------------------------------------------------------------


def test_an_error_names_its_position_only_when_it_has_one():
    assert str(TileCompileError("bad tile", 3, 7)) == "3:7: error: bad tile"
    assert str(TileCompileError("bad tile")) == "error: bad tile"
    assert str(TileCompileError("bad tile", 0, 7)) == "error: bad tile"


def test_an_errors_details_default_to_its_message():
    assert TileCompileError("bad tile").details == "bad tile"
    assert TileCompileError("bad tile", details="1:2: error: x").details == "1:2: error: x"


def test_the_first_error_without_diagnostics_is_the_fallback():
    err = compile_mod._first_error([], "parse", "could not parse")
    assert (err.message, err.stage, err.details, err.line) == (
        "could not parse",
        "parse",
        "could not parse",
        0,
    )
    note = SimpleNamespace(severity="note", line=2, col=5, message="see here")
    err = compile_mod._first_error([note], "parse", "could not parse")
    assert (err.message, err.details) == ("could not parse", "2:5: note: see here")


# -- the hand-off split of hand-built steps ----------------------------------------------


def _hand_off_step(text: str = f"{HAND_OFF}{{target=gfx942}}") -> Step:
    (step,) = resolve(text, REGISTRY)
    return step


def test_a_hand_off_nested_in_an_op_pipeline_is_refused_at_its_column():
    inner = _hand_off_step()
    with pytest.raises(PipelineError, match="cannot run nested") as info:
        split_hand_off([Step("func.func", 1, "func.func(...)", nested=[inner])])
    assert info.value.col == inner.col
    deep = Step("func.func", 1, "", nested=[Step("scf.for", 11, "", nested=[inner])])
    with pytest.raises(PipelineError, match="cannot run nested") as info:
        split_hand_off([deep])
    assert info.value.col == inner.col


def test_an_op_pipeline_without_a_hand_off_is_kept():
    (fuse,) = resolve("tile-fuse-tdm-copies", REGISTRY)
    nested = Step("func.func", 1, "", nested=[Step("scf.for", 11, "", nested=[fuse])])
    assert split_hand_off([nested]) == ([nested], None)


def test_a_module_anchored_step_list_is_unwrapped_once_or_more():
    (fuse,) = resolve("tile-fuse-tdm-copies", REGISTRY)
    body = [fuse, _hand_off_step()]
    expect = ([fuse], HandOff("gfx942", "auto"))
    wrapped = Step("builtin.module", 1, "", nested=body)
    assert split_hand_off([wrapped]) == expect
    assert split_hand_off([Step("builtin.module", 1, "", nested=[wrapped])]) == expect
    # Not a lone module step: the module's body is a nested pipeline.
    with pytest.raises(PipelineError, match="cannot run nested"):
        split_hand_off([wrapped, fuse])
    with pytest.raises(PipelineError, match="cannot run nested"):
        split_hand_off([Step("func.func", 1, "", nested=body)])


# -- host descriptors --------------------------------------------------------------------


def test_a_host_descriptor_count_unlike_tritons_is_an_internal_error():
    one = SimpleNamespace(to_json=lambda: {"arg": 0})
    with pytest.raises(RuntimeError, match="1 host descriptors, Triton sees 0"):
        compile_mod._tensormaps({"a": [one]}, [])
    with pytest.raises(RuntimeError, match="0 host descriptors, Triton sees 1"):
        compile_mod._tensormaps({}, [{"block": [64, 64]}])
    assert compile_mod._tensormaps({"a": [one]}, [{"block": [64, 64]}]) == [
        {"arg": 0, "block": [64, 64]}
    ]


# -- the ISA report ----------------------------------------------------------------------


def test_the_isa_report_of_a_non_amd_kernel_names_the_amd_targets():
    k = CompiledKernel({"ptx": "//"}, b"", {}, 0.0, target="cuda:90")
    assert k.amd_metrics is None
    amd = sorted(n for n, t in TARGETS.items() if t.backend == "hip")
    assert amd and "cuda:90" not in amd
    with pytest.raises(ValueError, match="a cuda:90 kernel has none") as info:
        _ = k.metrics
    listed = str(info.value).split("(AMD targets: ")[1].split(")")[0].split(", ")
    assert sorted(listed) == amd


# -- what a compiled kernel reports ------------------------------------------------------


@pytest.fixture(scope="module")
def timed():
    start = time.perf_counter()
    kernel = compile_tile_module(GEMM, "gfx1250")
    return kernel, time.perf_counter() - start


def test_stage_times_are_durations_within_the_compile(timed):
    kernel, wall = timed
    assert set(kernel.stage_seconds) >= {"parse", "tile_passes", "convert", "triton"}
    for stage, seconds in kernel.stage_seconds.items():
        assert 0 <= seconds <= wall, stage
    assert 0 < kernel.compile_seconds <= wall
    assert sum(kernel.stage_seconds.values()) <= kernel.compile_seconds


def test_the_reported_pipeline_ends_in_the_hand_off_and_names_no_default_mma(timed):
    kernel, _ = timed
    steps = kernel.pipeline.split(",")
    assert steps[-1] == f"{HAND_OFF}{{target=gfx1250}}"
    assert steps[:-1] and all(steps[:-1])


def test_a_given_pipeline_is_reported_with_the_hand_off_after_it():
    kernel = compile_tile_module(GEMM, "gfx1250", pipeline="tile-lower-gemm-schedule")
    assert kernel.pipeline == f"tile-lower-gemm-schedule,{HAND_OFF}{{target=gfx1250}}"


# -- a worker's failure without a diagnostic of ours -------------------------------------


def _failed(
    stages: tuple[str, ...] = (),
    ops: tuple[tuple[int, int, str], ...] = (),
    module: tuple[int, int] | None = None,
    stderr: str = "",
    exception: str = "",
    died: str = "",
) -> Isolated:
    progress: list[tuple] = []
    if module is not None:
        progress.append(("module", *module))
    progress += [("stage", s) for s in stages]
    progress += [("op", *op) for op in ops]
    return Isolated(exception=exception, died=died, progress=progress, stderr=stderr)


TRITON_SAYS = "\n".join(
    [
        "<unknown>:0: error: no position",
        "k.mlir:4:2: note: see the copy",
        "k.mlir:5:3: error: bad layout",
        "k.mlir:9:1: error: second",
    ]
)


@pytest.mark.parametrize(
    ("stages", "message", "stage"),
    [
        (("parse",), "bad layout", "parse"),
        (("parse", "tile_passes"), "bad layout", "tile_passes"),
        (
            ("parse", "tile_passes", "convert"),
            "Triton rejected the lowered kernel: bad layout",
            "convert",
        ),
        (("convert", "verify"), "Triton rejected the lowered kernel: bad layout", "verify"),
        (
            ("convert", "verify", "compile"),
            "Triton rejected the lowered kernel: bad layout",
            "triton",
        ),
        ((), "Triton rejected the lowered kernel: bad layout", "convert"),
    ],
)
def test_tritons_first_located_error_places_the_failure(stages, message, stage):
    run = _failed(stages, ops=((2, 1, "func.func"),), stderr=TRITON_SAYS, exception="E: boom")
    err = compile_mod._triton_failure(run)
    assert (err.message, err.line, err.col, err.stage) == (message, 5, 3, stage)
    assert err.details.split("\n") == [
        "<unknown>: error: no position",
        "k.mlir:4:2: note: see the copy",
        "k.mlir:5:3: error: bad layout",
        "k.mlir:9:1: error: second",
        "E: boom",
    ]


def test_without_an_exception_the_details_are_tritons_lines_alone():
    err = compile_mod._triton_failure(_failed(("compile",), stderr=TRITON_SAYS))
    assert err.details.split("\n")[-1] == "k.mlir:9:1: error: second"


@pytest.mark.parametrize(
    ("exception", "stderr", "died", "reason", "how"),
    [
        ("RuntimeError: boom", "", "", "RuntimeError: boom", "failed"),
        (
            "",
            "Assertion `x' failed.\nLLVM ERROR: y",
            "aborted (SIGABRT)",
            "Assertion `x' failed.; LLVM ERROR: y",
            "aborted (SIGABRT)",
        ),
        ("", "", "killed (SIGKILL)", "no diagnostic", "killed (SIGKILL)"),
    ],
)
def test_before_any_op_is_built_the_failure_names_the_stage(exception, stderr, died, reason, how):
    for stage, doing in (
        ("parse", "parsing the tile module"),
        ("tile_passes", "running the tile passes"),
    ):
        err = compile_mod._triton_failure(
            _failed((stage,), stderr=stderr, exception=exception, died=died)
        )
        assert (err.message, err.line, err.stage) == (
            f"the compile {how} while {doing}: {reason}",
            0,
            stage,
        )


BUILT = ((2, 1, "func.func"), (5, 3, "tile.copy"), (6, 7, "tile.mma"))


@pytest.mark.parametrize(
    ("exception", "died", "message"),
    [
        ("VerifyError: bad hint", "", "'tile.mma': bad hint"),
        ("WarpHintError: w: x", "", "'tile.mma': w: x"),
        (
            "LayoutError: bad",
            "killed (SIGKILL)",
            "Triton killed (SIGKILL) while building the TritonGPU IR of 'tile.mma': LayoutError: bad",
        ),
        (
            "RuntimeError: bad",
            "",
            "Triton failed while building the TritonGPU IR of 'tile.mma': RuntimeError: bad",
        ),
        (
            "VerifyError",
            "",
            "Triton failed while building the TritonGPU IR of 'tile.mma': VerifyError",
        ),
    ],
)
def test_a_failure_while_building_is_placed_at_the_last_op_built(exception, died, message):
    err = compile_mod._triton_failure(_failed(("convert",), BUILT, exception=exception, died=died))
    assert (err.message, err.line, err.col, err.stage) == (message, 6, 7, "convert")


def test_a_failure_verifying_or_compiling_is_placed_at_the_last_function_built():
    two = (*BUILT, (11, 5, "func.func"), (12, 9, "tile.store"))
    for stage, doing in (("verify", "verifying"), ("compile", "compiling")):
        for ops, at in ((BUILT, (2, 1)), (two, (11, 5))):
            run = _failed(("convert", stage), ops, module=(1, 1), exception="RuntimeError: x")
            err = compile_mod._triton_failure(run)
            message = f"Triton failed while {doing} the lowered kernel: RuntimeError: x"
            assert (err.message, (err.line, err.col), err.stage) == (message, at, stage)


def test_without_a_function_built_a_late_failure_is_placed_at_the_module():
    ctx = make_context()
    with ctx, ir.Location.file("k.mlir", 7, 4):
        op = ir.Module.create().operation
    ops = ((5, 3, "tile.copy"),)
    for module, expect in (((3, 8), (3, 8)), (None, (7, 4))):
        err = compile_mod._triton_failure(_failed(("verify",), ops, module=module), op)
        assert (err.line, err.col, err.message) == (
            *expect,
            "Triton failed while verifying the lowered kernel: no diagnostic",
        )
    err = compile_mod._triton_failure(_failed(("verify",), ops))
    assert (err.line, err.col) == (0, 0)


# -- cuda:90: the MMA choice and the pipeline's own hand-off -----------------------------

FP8_CUDA90 = (ROOT / "examples" / "gemm_fp8_cuda90.mlir").read_text()


@pytest.mark.parametrize(
    ("mma", "passes", "wgmma"),
    [
        ("auto", "tile-lower-gemm-schedule,tile-pipeline-mma", True),
        ("wgmma", "tile-lower-gemm-schedule,tile-pipeline-mma", True),
        ("mma_v2", "tile-lower-gemm-schedule", False),
    ],
)
def test_mma_sync_is_not_pipelined_and_the_choice_is_reported(mma, passes, wgmma):
    low = lower_tile_module(FP8_CUDA90, "cuda:90", mma=mma)
    how = "target=cuda:90" + ("" if mma == "auto" else f" mma={mma}")
    assert low.pipeline == f"{passes},{HAND_OFF}{{{how}}}"
    assert ("ttng.warp_group_dot " in low.ttgir) is wgmma
    assert ("versionMajor = 3" in low.ttgir) is wgmma


def test_a_pipelines_own_hand_off_picks_the_mma_and_is_reported_once():
    given = f"tile-lower-gemm-schedule,{HAND_OFF}{{target=cuda:90 mma=mma_v2}}"
    low = lower_tile_module(FP8_CUDA90, "cuda:90", pipeline=given)
    assert low.pipeline == given
    assert "ttng.warp_group_dot " not in low.ttgir and "versionMajor = 2" in low.ttgir


def test_a_hand_off_the_worker_parsed_is_not_run_again_isolated(monkeypatch):
    from gemm_opt.lowering import triton_bridge as tb

    def again(*_: object, **__: object) -> None:
        raise AssertionError("the hand-off ran a second time")

    tile = lower_tile_module(FP8_CUDA90, "cuda:90").tile  # after the tile passes
    monkeypatch.setattr(tb, "run_isolated", again)
    with make_context():
        module = ir.Module.parse(tile)
        assert "ttng.warp_group_dot " in hand_off(module, "cuda:90").ttgir


def test_a_module_argument_lowers_as_its_text_does_locations_included():
    from_text = lower_tile_module(GEMM, "gfx1250")
    with make_context():
        from_module = lower_tile_module(ir.Module.parse(GEMM), "gfx1250")
    assert "loc(" in from_text.ttgir
    assert from_module.ttgir == from_text.ttgir
    assert from_module.tile == from_text.tile
