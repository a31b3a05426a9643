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


def _store(shape: str, layout: str) -> tuple[str, str]:
    """A TDM store of a ``shape`` f16 block in ``layout``: (body, function arguments)."""
    block = f"tensor<{shape}xf16, {layout}>"
    args = f"%d: !tile.tensor_desc<{block}>, %b: !tile.shared<{block}>"
    body = (
        '"tile.async_tdm_copy_local_to_global"(%d, %b)'
        f" : (!tile.tensor_desc<{block}>, !tile.shared<{block}>) -> ()"
    )
    return body, args


def _padded(interval: int, order: str = "1, 0") -> str:
    return (
        f"#tile.padded_shared<{{interval = {interval}, amount = 8, order = array<i64: {order}>}}>"
    )


@pytest.mark.parametrize(
    ("shape", "order", "inner"), [("32x64", "1, 0", 64), ("32x64", "0, 1", 32)]
)
def test_a_tdm_store_pads_rows_of_its_innermost_dimension(
    shape: str, order: str, inner: int
) -> None:
    """The innermost dimension is ``order[0]``'s, not the first or the last."""
    assert _errors(*_store(shape, _padded(inner, order)), target="gfx1250") == []
    other = 96 - inner  # the other dimension's size
    assert _errors(*_store(shape, _padded(other, order)), target="gfx1250") == [
        "'tile.async_tdm_copy_local_to_global' op a TDM store pads only whole rows: the "
        f"padding interval ({other}) must equal the innermost block dimension ({inner})"
    ]


@pytest.mark.parametrize("target", ["", "cuda:90"])
def test_the_whole_row_rule_binds_only_where_every_possible_target_has_tdm(target: str) -> None:
    """cuda:90 stores with TMA, which pads any interval; a module without a target
    may run there, so it is not refused either."""
    assert _errors(*_store("64x64", _padded(32)), target=target) == []


def test_a_tdm_store_of_a_swizzled_block_has_no_row_rule() -> None:
    swizzled = (
        "#tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>"
    )
    assert _errors(*_store("64x64", swizzled), target="gfx1250") == []
