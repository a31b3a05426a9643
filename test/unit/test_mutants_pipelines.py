"""The named pipelines, every target under every option (found by
``benchmarks/mutation.py``): which passes run, in which order, what a user's
pipeline is completed with, and how the options' text is read.

The expected lists are written out: a rule that changes one of them changes
what every kernel of that target is compiled with.
"""

from __future__ import annotations

import itertools

import pytest

from gemm_opt.lowering.pipelines import (
    completion,
    convert_pass,
    expand,
    pipeline_text,
    required_passes,
    tile_passes,
    tile_to_ttgir,
)

SCHED = "tile-lower-gemm-schedule"
MMA = "tile-pipeline-mma"
DERIVE = "tile-derive-warp-hints"
ASSIGN = "tile-assign-tdm-warp-layout"
FUSE = "tile-fuse-tdm-copies"
EMIT = "tile-emit-warp-predicates"

FLAGS = list(itertools.product((False, True), repeat=3))


def _expected(target: str, fuse: bool, derive: bool, mma: bool) -> list[str]:
    """The table: TDM's warp passes on gfx1250 only, the MMA pipelining on cuda:90 only."""
    if target == "gfx1250":
        return [SCHED, *([DERIVE] if derive else []), ASSIGN, *([FUSE] if fuse else []), EMIT]
    if target == "cuda:90":
        return [SCHED, *([MMA] if mma else [])]
    return [SCHED]


@pytest.mark.parametrize("target", ["gfx1250", "gfx950", "gfx942", "cuda:90"])
@pytest.mark.parametrize(("fuse", "derive", "mma"), FLAGS)
def test_tile_passes_of_every_target_and_option(
    target: str, fuse: bool, derive: bool, mma: bool
) -> None:
    expected = _expected(target, fuse, derive, mma)
    got = tile_passes(target, fuse=fuse, derive_hints=derive, pipeline_mma=mma)
    assert got == expected
    conv = f"convert-tile-to-triton-gpu{{target={target}}}"
    assert convert_pass(target) == conv
    full = tile_to_ttgir(target, fuse=fuse, derive_hints=derive, pipeline_mma=mma)
    assert full == [*expected, conv]
    options = {
        "target": target,
        "fuse": str(fuse).lower(),
        "derive-hints": "1" if derive else "0",
        "pipeline-mma": "True" if mma else "FALSE",
    }
    assert expand("tile-optimize", options) == ",".join(expected)
    assert expand("tile-to-ttgir", options) == ",".join([*expected, conv])


def test_defaults_fuse_and_pipeline_but_derive_no_hints() -> None:
    assert tile_passes("gfx1250") == [SCHED, ASSIGN, FUSE, EMIT]
    assert tile_passes("cuda:90") == [SCHED, MMA]
    assert expand("tile-optimize", {}) == ",".join([SCHED, ASSIGN, FUSE, EMIT])
    assert expand("tile-optimize", {"target": "cuda:90"}) == f"{SCHED},{MMA}"


def test_required_passes_are_the_ones_no_option_removes() -> None:
    assert required_passes("gfx1250") == [SCHED, ASSIGN, EMIT]
    for target in ("gfx950", "gfx942", "cuda:90"):
        assert required_passes(target) == [SCHED]


@pytest.mark.parametrize("convert", [True, False])
def test_completion_appends_the_missing_required_passes_in_order(convert: bool) -> None:
    conv = ["convert-tile-to-triton-gpu{target=gfx1250}"] if convert else []
    assert completion("gfx1250", set(), convert) == [SCHED, ASSIGN, EMIT, *conv]
    assert completion("gfx1250", {ASSIGN}, convert) == [SCHED, EMIT, *conv]
    assert completion("gfx1250", {SCHED, ASSIGN, EMIT, FUSE}, convert) == conv
    # After the conversion nothing is appended, whatever else ran.
    assert completion("gfx1250", {"convert-tile-to-triton-gpu"}, convert) == []
    cuda = ["convert-tile-to-triton-gpu{target=cuda:90}"] if convert else []
    assert completion("cuda:90", {MMA}, convert) == [SCHED, *cuda]


def test_pipeline_text_wraps_the_passes_in_the_module() -> None:
    assert pipeline_text([SCHED, EMIT]) == f"builtin.module({SCHED},{EMIT})"
    assert pipeline_text([]) == "builtin.module()"


@pytest.mark.parametrize("text", ["yes", "", "2", "t"])
def test_a_flag_that_is_not_a_boolean_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=f"expected true or false, got '{text}'"):
        expand("tile-to-ttgir", {"fuse": text})


def test_an_unknown_option_or_target_is_named() -> None:
    with pytest.raises(ValueError, match="no option 'bogus'"):
        expand("tile-optimize", {"bogus": "1", "fuse": "true"})
    with pytest.raises(ValueError, match="unknown target 'gfx90a'"):
        expand("tile-optimize", {"target": "gfx90a"})
    for fn in (tile_passes, convert_pass, required_passes):
        with pytest.raises(ValueError, match="unknown target 'sm_80'"):
            fn("sm_80")
