"""Random JSON mutations of a full bundle document: the reader answers each with a
BundleError or a bundle that survives its own round trip, never another exception.

Mutations: a value swapped for one of another type (or a boundary number: negative,
huge, NaN, infinite), a field or list entry deleted, one inserted, ASCII digits made
Unicode digits, a value nested past the parser's stack, a key duplicated, digits past
Python's integer-string limit, and the text truncated or a byte of it changed. What is
read also makes a launch plan (:class:`~gemm_opt.runtime.Kernel`, no driver needed).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support.bundle_docs import document

from gemm_opt.runtime import BundleError, Kernel, loads, parameter_sizes
from gemm_opt.runtime.bundle import SCRATCH_PARAMS

BASE = document()

NUMBERS: list[Any] = [
    0,
    -1,
    1,
    3,
    31,
    32,
    64,
    1024,
    1025,
    65535,
    65536,
    2**31 - 1,
    2**31,
    -(2**31) - 1,
    2**63,
    2**64,
    2**70,
    0.5,
    -0.0,
    1e308,
    float("nan"),
    float("inf"),
    float("-inf"),
]
TEXTS: list[Any] = [
    "",
    "M",
    "lda",
    "a",
    "i32",
    "*fp16",
    "u64",
    "cuda:90",
    "gfx1250",
    "sm_90",
    "sm_\u00b2\u00b3a",
    "\u0663",
    "\ud800",
    "x" * 300,
]
OTHERS: list[Any] = [None, True, False, [], {}, [1, 2, 3], ["M", "K"], {"cdiv": ["M", 128]}]
VALUES = NUMBERS + TEXTS + OTHERS
KEYS = ["name", "type", "constexpr", "divisibility", "cdiv", "shape", "meta", "binary", "x"]
#: ASCII digit -> a Unicode digit of the same value (Arabic-Indic) or a superscript.
UNICODE_DIGITS = [
    str.maketrans("0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669"),
    str.maketrans("0123", "\u2070\u00b9\u00b2\u00b3"),
]
#: Placeholders replaced in the text (what json.dumps cannot write).
DEEP, BIG, DUP = "@@deep@@", "@@big@@", "@@dup:"


def _slots(doc: Any) -> list[tuple[Any, Any]]:
    """Every (container, key or index) in ``doc``, found without recursion."""
    out: list[tuple[Any, Any]] = []
    stack = [doc]
    while stack:
        node = stack.pop()
        keys = list(node) if isinstance(node, dict) else range(len(node))
        for k in keys:
            out.append((node, k))
            if isinstance(node[k], (dict, list)):
                stack.append(node[k])
    return out


def _containers(doc: Any) -> list[Any]:
    return [doc, *(c[k] for c, k in _slots(doc) if isinstance(c[k], (dict, list)))]


def _fresh(value: Any) -> Any:
    """A copy of a drawn value: the lists and dicts of :data:`VALUES` are shared, and a
    later edit of the document would change them for every later example (hypothesis
    then sees a strategy that is not deterministic: a flaky-strategy error)."""
    return copy.deepcopy(value)


@st.composite
def mutated_text(draw: st.DrawFn) -> str:
    doc = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["swap", "number", "delete", "insert", "digits", "special"]))
        slots = _slots(doc)
        if not slots:
            break
        container, key = draw(st.sampled_from(slots))
        if op == "swap":
            container[key] = _fresh(draw(st.sampled_from(VALUES)))
        elif op == "number":
            container[key] = draw(st.sampled_from(NUMBERS) | st.integers() | st.floats())
        elif op == "delete":
            del container[key]
        elif op == "insert":
            target = draw(st.sampled_from(_containers(doc)))
            value = _fresh(draw(st.sampled_from(VALUES)))
            if isinstance(target, dict):
                target[draw(st.sampled_from(KEYS))] = value
            else:
                target.insert(draw(st.integers(0, len(target))), value)
        elif op == "digits":
            strings = [(c, k) for c, k in slots if isinstance(c[k], str)] or [(container, key)]
            c, k = draw(st.sampled_from(strings))
            c[k] = str(c[k]).translate(draw(st.sampled_from(UNICODE_DIGITS)))
        else:
            special = draw(st.sampled_from([DEEP, BIG, DUP]))
            if special == DUP:
                dicts = [d for d in _containers(doc) if isinstance(d, dict) and d] or [doc]
                d = draw(st.sampled_from(dicts))
                d[DUP + draw(st.sampled_from(sorted(d) or ["x"])) + "@@"] = _fresh(
                    draw(st.sampled_from(VALUES))
                )
            else:
                container[key] = special
    text = json.dumps(doc)  # NaN and Infinity written as JavaScript names, as Python does
    depth = draw(st.sampled_from([31, 33, 5000]))
    text = text.replace(f'"{DEEP}"', "[" * depth + "]" * depth)
    text = text.replace(f'"{BIG}"', "9" * 5000)
    text = re.sub(r'"@@dup:(.*?)@@"', r'"\1"', text)
    edit = draw(st.sampled_from(["none", "none", "truncate", "byte"]))
    if edit == "truncate":
        text = text[: draw(st.integers(0, len(text)))]
    elif edit == "byte":
        at = draw(st.integers(0, max(len(text) - 1, 0)))
        text = text[:at] + draw(st.characters()) + text[at + 1 :]
    return text


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=mutated_text())
def test_a_mutated_bundle_is_a_bundle_error_or_round_trips(text: str) -> None:
    try:
        bundle = loads(text, "fuzz.bundle")
    except BundleError as e:
        assert str(e).startswith("fuzz.bundle: ")
        event("refused")
        return
    event("read")
    again = loads(bundle.dumps(), "again.bundle")
    assert again.kernels == bundle.kernels
    assert again.dumps() == bundle.dumps()
    for kernel in bundle:  # the launcher's plan of what it read (no driver needed)
        assert len(parameter_sizes(kernel)) == len(Kernel(kernel).value_positions()) + sum(
            1 + 2 * t.rank for t in kernel.tensormaps
        ) + len(SCRATCH_PARAMS)


def test_the_unmutated_document_is_read() -> None:
    assert loads(json.dumps(BASE)).to_json() == BASE
