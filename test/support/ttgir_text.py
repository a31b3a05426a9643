"""Reading a lowered module's printed TTGIR in tests, one definition per line.

Tests that pin what feeds a lowered op look up each operand's defining op by
its SSA name; plain string splitting of Triton's printing, no regular
expressions (the project reads MLIR text that way nowhere).
"""

from __future__ import annotations


def body_lines(ttgir: str) -> list[str]:
    """The module's lines, stripped, without their locations."""
    return [line.split(" loc(")[0].strip() for line in ttgir.splitlines()]


def definitions(lines: list[str]) -> dict[str, tuple[str, str]]:
    """Each single-result SSA value: (its op's name, the rest of its line)."""
    out: dict[str, tuple[str, str]] = {}
    for line in lines:
        value, sep, rest = line.partition(" = ")
        if not sep or not value.startswith("%") or not value[1:].replace("_", "a").isalnum():
            continue
        op, _, tail = rest.partition(" ")
        if op and tail:
            out[value] = (op, tail)
    return out
