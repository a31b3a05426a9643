"""Mutations of the project's own inputs: the examples and the lit tests.

The tool reads text, so its inputs are mutated as text: integer values set
to edge cases (0, 1, -1, 2^31-1, 2^63-1, ...), element types swapped for
``index``, ``i128`` or ``f64``, ``array<...>`` entries dropped or repeated,
attribute names misspelled, operands deleted, lines duplicated, deleted or
swapped, the text truncated. Each draw picks a seed chunk and 1 to 3
mutations, all through hypothesis, so a failing input shrinks toward the
unmutated seed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[3]
SEPARATOR = re.compile(r"^// -----\s*$", re.M)


def seed_inputs(root: Path = ROOT) -> list[tuple[str, str]]:
    """(name, text) of every example and lit chunk that holds a module."""
    files = sorted((root / "examples").glob("*.mlir")) + sorted(
        (root / "test" / "lit").rglob("*.mlir")
    )
    seeds = []
    for path in files:
        if ".lit_out" in path.parts:
            continue
        for i, chunk in enumerate(SEPARATOR.split(path.read_text())):
            if "module" in chunk or "func.func" in chunk:
                seeds.append((f"{path.relative_to(root)}#{i}", chunk))
    return seeds


INTEGER = re.compile(r"(?<![\w%#!@.])-?\d+(?![\w.])")
TYPE = re.compile(r"\b(f16|bf16|f32|f64|i1|i8|i32|i64)\b")
ARRAY = re.compile(r"array<i(?:32|64): ([-\d, ]+)>")
ATTR_NAME = re.compile(r"\b([a-z_]+) = ")
SEGMENTS = re.compile(r"operandSegmentSizes = array<[^>]*>")
OPERAND_LIST = re.compile(r"\"\((%[\w#]+(?:, %[\w#]+)+)\)")

EDGE_INTS = (
    0,
    1,
    -1,
    2,
    3,
    (1 << 31) - 1,
    1 << 31,
    (1 << 32) - 1,
    1 << 32,
    (1 << 63) - 1,
    -(1 << 63),
    1 << 64,
    10**30,
)
TYPES = ("index", "i128", "f64", "i1", "f16", "bf16", "f32", "i64", "i32", "f8E4M3FN", "i0")


@dataclass(frozen=True)
class Mutation:
    """One kind of edit: its name and how to apply it to a text."""

    name: str
    apply: Callable[[Callable[[Any], Any], str], str]


def _replace_match(
    draw: Callable[[Any], Any],
    text: str,
    pattern: re.Pattern[str],
    new: Callable[[re.Match[str]], str],
) -> str:
    matches = list(pattern.finditer(text))
    if not matches:
        return text
    m = matches[draw(st.integers(0, len(matches) - 1))]
    return text[: m.start()] + new(m) + text[m.end() :]


def _int(draw: Callable[[Any], Any], text: str) -> str:
    value = draw(st.sampled_from(EDGE_INTS) | st.integers(-(1 << 33), 1 << 33))
    return _replace_match(draw, text, INTEGER, lambda m: str(value))


def _type(draw: Callable[[Any], Any], text: str) -> str:
    new = draw(st.sampled_from(TYPES))
    return _replace_match(draw, text, TYPE, lambda m: new)


def _array(draw: Callable[[Any], Any], text: str) -> str:
    def edit(m: re.Match[str]) -> str:
        items = [s.strip() for s in m.group(1).split(",") if s.strip()]
        how = draw(st.sampled_from(("drop", "repeat", "zero", "append", "empty")))
        i = draw(st.integers(0, max(0, len(items) - 1)))
        if how == "drop" and items:
            items.pop(i)
        elif how == "repeat" and items:
            items.insert(i, items[i])
        elif how == "zero" and items:
            items[i] = "0"
        elif how == "append":
            items.append(str(draw(st.sampled_from(EDGE_INTS[:6]))))
        else:
            items = []
        head = m.group(0)[: m.group(0).index(":") + 1]
        return f"{head} {', '.join(items)}>" if items else head[:-1] + ">"

    return _replace_match(draw, text, ARRAY, edit)


def _attr_name(draw: Callable[[Any], Any], text: str) -> str:
    how = draw(st.sampled_from(("plural", "typo", "unknown")))

    def edit(m: re.Match[str]) -> str:
        name = m.group(1)
        new = {
            "plural": name + "s",
            "typo": name.replace("_", "", 1) or name + "x",
            "unknown": "fuzz_attr",
        }[how]
        return f"{new} = "

    return _replace_match(draw, text, ATTR_NAME, edit)


def _delete_operand(draw: Callable[[Any], Any], text: str) -> str:
    def edit(m: re.Match[str]) -> str:
        operands = m.group(1).split(", ")
        operands.pop(draw(st.integers(0, len(operands) - 1)))
        return f'"({", ".join(operands)})'

    return _replace_match(draw, text, OPERAND_LIST, edit)


def _lines(draw: Callable[[Any], Any], text: str) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    i = draw(st.integers(0, len(lines) - 1))
    j = draw(st.integers(0, len(lines) - 1))
    how = draw(st.sampled_from(("delete", "duplicate", "swap")))
    if how == "delete":
        del lines[i]
    elif how == "duplicate":
        lines.insert(j, lines[i])
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines)


def _truncate(draw: Callable[[Any], Any], text: str) -> str:
    return text[: draw(st.integers(0, len(text)))]


MUTATIONS = (
    Mutation("int", _int),
    Mutation("type", _type),
    Mutation("array", _array),
    Mutation("attr-name", _attr_name),
    Mutation("delete-operand", _delete_operand),
    Mutation("lines", _lines),
    Mutation("truncate", _truncate),
)


@st.composite
def mutated_inputs(
    draw: Callable[[Any], Any],
    seeds: list[tuple[str, str]] | None = None,
    mutations: tuple[Mutation, ...] = MUTATIONS,
    keep_segments: bool = False,
) -> str:
    """A seed chunk with 1 to 3 mutations applied; with ``keep_segments``, none
    that changes an ``operandSegmentSizes`` attribute."""
    seeds = seeds if seeds is not None else seed_inputs()
    _, text = draw(st.sampled_from(seeds))
    segments = sorted(SEGMENTS.findall(text))
    if draw(st.integers(0, 3)) == 3:  # two chunks, for --split-input-file
        text += "\n// -----\n" + draw(st.sampled_from(seeds))[1]
    for _ in range(draw(st.integers(1, 3))):
        text = draw(st.sampled_from(mutations)).apply(draw, text)
    assume(not keep_segments or sorted(SEGMENTS.findall(text)) == segments)
    return text


__all__ = ["MUTATIONS", "Mutation", "mutated_inputs", "seed_inputs"]
