"""Pass options and summaries at their edges (found by ``benchmarks/mutation.py``
in ``gemm_opt.core.pass_base``)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from gemm_opt.core.pass_base import TilePass, convert_option


@dataclass(frozen=True)
class Tuned(TilePass):
    """Moves nothing, with two options.

    A second paragraph the summary leaves out.
    """

    name = "tuned"
    depth: int = 1
    strict: bool = False


@dataclass(frozen=True)
class Bare(TilePass):
    name = "bare"


def test_the_summary_is_the_docstrings_first_line() -> None:
    assert Tuned.summary() == "Moves nothing, with two options."


@pytest.mark.parametrize(("cls", "known"), [(Tuned, "depth, strict"), (Bare, "none")])
def test_an_unknown_option_names_the_known_ones(cls: type[TilePass], known: str) -> None:
    with pytest.raises(ValueError, match=rf"has no option 'width' \(options: {known}\)$"):
        cls.from_options({"width": "2"})


@pytest.mark.parametrize(("text", "value"), [("1", True), ("true", True), ("True", True)])
def test_a_true_bool_option(text: str, value: bool) -> None:
    assert convert_option("tuned", "strict", text, bool) is value
    assert Tuned.from_options({"strict": text}).strict is value


@pytest.mark.parametrize("text", ["0", "false", "FALSE"])
def test_a_false_bool_option(text: str) -> None:
    assert convert_option("tuned", "strict", text, bool) is False
