"""Pass options typed by an enum are checked when the pipeline is parsed.

The mechanism is the pass base's (any pass's enum-typed field), so a bad value is a
``PipelineError`` at the element's column and, in ``gemm-opt``, a usage error (exit 2)
before any input is read; a good value arrives as the enum member.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from gemm_opt.core.pass_base import TilePass, convert_option, option_choices
from gemm_opt.core.pipeline import PipelineError, Registry, pass_options, resolve
from gemm_opt.core.targets import StrEnum
from gemm_opt.lowering import REGISTRY
from gemm_opt.lowering.convert_tile_to_triton_gpu import LdsCopies, MmaOption
from gemm_opt.tools import opt


class Colour(StrEnum):
    RED = "red"
    DEEP_BLUE = "deep-blue"


@dataclass(frozen=True)
class PaintPass(TilePass):
    """A pass with an enum option."""

    name: ClassVar[str] = "paint"
    colour: Colour = Colour.RED
    """What to paint with."""
    coats: int = 1
    """How many coats."""


def test_an_enum_option_takes_its_values_and_refuses_others() -> None:
    registry = Registry(passes={"paint": lambda: PaintPass})
    (step,) = resolve("paint{colour=deep-blue coats=2}", registry)
    assert step.instance == PaintPass(Colour.DEEP_BLUE, 2)
    assert step.instance.colour is Colour.DEEP_BLUE
    with pytest.raises(PipelineError) as e:
        resolve("cse,paint{colour=green}", registry)
    assert e.value.col == 5
    assert str(e.value) == "pass 'paint' option 'colour' expects one of red, deep-blue, got 'green'"
    with pytest.raises(PipelineError, match="expects one of red, deep-blue, got 'RED'"):
        resolve("paint{colour=RED}", registry)  # values, not member names


def test_list_passes_shows_an_enum_option_by_its_values() -> None:
    options = {o.name: o for o in pass_options(PaintPass)}
    assert (options["colour"].type, options["colour"].default) == ("red|deep-blue", "red")
    assert options["coats"].type == "int"


def test_option_conversion_by_type() -> None:
    assert option_choices(Colour) == ("red", "deep-blue")
    assert option_choices(int) is None
    assert convert_option("p", "k", "0x10", int) == 16
    assert convert_option("p", "k", "false", bool) is False
    assert convert_option("p", "k", "text", str) == "text"
    with pytest.raises(ValueError, match="option 'k' expects bool, got 'maybe'"):
        convert_option("p", "k", "maybe", bool)


def test_the_hand_off_options_are_enums_checked_at_parse_time() -> None:
    (step,) = resolve("convert-tile-to-triton-gpu{lds-copies=tma mma=wgmma}", REGISTRY)
    assert (step.instance.lds_copies, step.instance.mma) == (LdsCopies.TMA, MmaOption.WGMMA)
    for option, values in (("lds-copies", LdsCopies), ("mma", MmaOption)):
        with pytest.raises(PipelineError) as e:
            resolve(f"convert-tile-to-triton-gpu{{{option}=bogus}}", REGISTRY)
        assert f"expects one of {', '.join(values)}, got 'bogus'" in str(e.value)


@pytest.mark.parametrize("option", ["mma", "lds-copies"])
def test_a_bad_hand_off_option_exits_2_before_reading_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    missing = tmp_path / "never-read.mlir"  # reading it would be exit 1
    with pytest.raises(SystemExit) as e:
        opt.main([str(missing), f"--pass-pipeline=convert-tile-to-triton-gpu{{{option}=bogus}}"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    assert f"option '{option}' expects one of" in err
    assert "could not open" not in err
