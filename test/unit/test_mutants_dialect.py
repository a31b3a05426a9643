"""Verifier rules at their exact edges (found by ``benchmarks/mutation.py``).

Each case pins one comparison of a dialect verifier: the value at a limit is
accepted and the one past it is refused with the verifier's message, so an
off-by-one or a flipped test in the rule fails here.
"""

from __future__ import annotations

import pytest

from gemm_opt.core.diagnostics import collect
from gemm_opt.core.ext_compat import MLIRError, ir
from gemm_opt.dialect import make_context
from gemm_opt.dialect.barrier import MAX_ARRIVALS, MAX_BYTES, MAX_RING


def _errors(body: str, args: str = "", target: str = "") -> list[str]:
    """The verifier's messages for one function (empty: it verifies)."""
    attrs = "tile.num_warps = 4 : i32" + (f', tile.target = "{target}"' if target else "")
    text = f"module attributes {{{attrs}}} {{\n func.func @f({args}) {{\n{body}\n return\n }}\n}}"
    with make_context() as ctx, collect(ctx) as diags:
        try:
            ir.Module.parse(text)
        except MLIRError:
            return [d.message for d in diags if d.severity == "error"]
    return []


def _ring(n: int, index: int | None = None) -> str:
    ring = f"!tile.mbarrier_ring<{n} : i32>"
    text = f'%bars = "tile.barrier_alloc"() : () -> {ring}'
    if index is not None:
        text += (
            f"\n%i = arith.constant {index} : i32"
            f'\n%bar = "tile.barrier_index"(%bars, %i) : ({ring}, i32) -> !tile.mbarrier<i64>'
        )
    return text


@pytest.mark.parametrize("n", [1, MAX_RING])
def test_a_ring_of_one_to_max_ring_barriers_verifies(n: int) -> None:
    assert _errors(_ring(n)) == []


def test_a_ring_one_past_max_ring_is_refused() -> None:
    assert _errors(_ring(MAX_RING + 1)) == [
        f"'tile.barrier_alloc' op !tile.mbarrier_ring holds 1 to {MAX_RING} barriers, "
        f"got {MAX_RING + 1}"
    ]


@pytest.mark.parametrize(("n", "index", "ok"), [(3, 0, True), (3, 2, True), (3, -1, False)])
def test_a_constant_ring_index_is_from_zero_to_n_minus_one(n: int, index: int, ok: bool) -> None:
    errors = _errors(_ring(n, index))
    assert (
        errors == []
        if ok
        else errors
        == [
            f"'tile.barrier_index' op index {index} is out of range for a ring of {n} barriers "
            f"(0 to {n - 1})"
        ]
    )


BAR = "%bar: !tile.mbarrier<i64>"
INIT = '"tile.barrier_init"(%bar) {{count = {} : i32}} : (!tile.mbarrier<i64>) -> ()'
EXPECT = (
    '"tile.barrier_expect"(%bar) {{operandSegmentSizes = array<i32: 1, 0>, bytes = {} : i32}}'
    " : (!tile.mbarrier<i64>) -> ()"
)
ARRIVE = (
    '"tile.barrier_arrive"(%bar) {{operandSegmentSizes = array<i32: 1, 0>, count = {} : i32}}'
    " : (!tile.mbarrier<i64>) -> ()"
)


@pytest.mark.parametrize(
    ("op", "form", "name", "limit"),
    [
        ("barrier_init", INIT, "count", MAX_ARRIVALS),
        ("barrier_expect", EXPECT, "bytes", MAX_BYTES),
        ("barrier_arrive", ARRIVE, "count", MAX_ARRIVALS),
    ],
)
def test_barrier_counts_are_from_one_to_their_limit(
    op: str, form: str, name: str, limit: int
) -> None:
    assert _errors(form.format(1), BAR) == []
    assert _errors(form.format(limit), BAR) == []
    assert _errors(form.format(limit + 1), BAR) == [
        f"'tile.{op}' op {name} must be from 1 to {limit}, got {limit + 1}"
    ]


@pytest.mark.parametrize("width", [1, 32])
def test_a_barrier_wait_takes_an_i1_or_i32_phase(width: int) -> None:
    wait = (
        '"tile.barrier_wait"(%bar, %p) {operandSegmentSizes = array<i32: 1, 1, 0>}'
        f" : (!tile.mbarrier<i64>, i{width}) -> ()"
    )
    assert _errors(wait, f"{BAR}, %p: i{width}") == []


@pytest.mark.parametrize(
    ("target", "ok"), [("gfx1250", True), ("cuda:90", True), ("gfx950", False), ("gfx942", False)]
)
def test_barriers_exist_on_tdm_and_tma_targets_only(target: str, ok: bool) -> None:
    errors = _errors(_ring(2), target=target)
    assert (
        errors == []
        if ok
        else errors
        == [
            f"'tile.barrier_alloc' op a shared-memory barrier needs TDM (gfx1250) or TMA "
            f"(cuda:90); {target} has neither"
        ]
    )
