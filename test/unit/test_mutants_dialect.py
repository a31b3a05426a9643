"""Verifier rules at their exact edges (found by ``benchmarks/mutation.py``).

Each case pins one comparison of a dialect verifier: the value at a limit is
accepted and the one past it is refused with the verifier's message, so an
off-by-one or a flipped test in the rule fails here. Kernels are built with
the dialect's op builders (``support.tile_build``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
import support.tile_build as tb

from gemm_opt.core.diagnostics import collect
from gemm_opt.core.ext_compat import MLIRError, ir
from gemm_opt.dialect import barrier, make_context, tile

#: The limits, as the hardware states them: a ring deeper than any pipeline, and
#: mbarrier's 20-bit pending-arrival and transaction counts.
MAX_RING, MAX_ARRIVALS, MAX_BYTES = 64, (1 << 20) - 1, (1 << 20) - 1


def _errors(
    arg_types: Callable[[], Sequence[ir.Type]],
    body: Callable[[list[ir.Value]], None],
    target: str | None = None,
) -> list[str]:
    """The verifier's messages for a 4-warp kernel (empty: it verifies)."""
    with make_context() as ctx, ir.Location.unknown():
        k = tb.kernel(list(arg_types()), num_warps=4, target=target)
        with k.ip:
            body(k.args)
        with collect(ctx) as diags:
            try:
                k.module.operation.verify()
            except MLIRError:
                return [d.message for d in diags if d.severity == "error"]
        return []


def _i32(value: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), value)


def _bar_type() -> ir.Type:
    return tile.MBarrierType.get(ir.TypeAttr.get(ir.IntegerType.get_signless(64)))


def _ring(n: int, index: int | None = None) -> Callable[[list[ir.Value]], None]:
    def body(_: list[ir.Value]) -> None:
        ring = barrier.MBarrierRingType.get(_i32(n))
        alloc = barrier.BarrierAllocOp(ring).result
        if index is not None:
            barrier.BarrierIndexOp(alloc, tb.const(index), _bar_type())

    return body


def _none() -> list[ir.Type]:
    return []


@pytest.mark.parametrize("n", [1, MAX_RING])
def test_a_ring_of_one_to_max_ring_barriers_verifies(n: int) -> None:
    assert _errors(_none, _ring(n)) == []


def test_a_ring_one_past_max_ring_is_refused() -> None:
    assert _errors(_none, _ring(MAX_RING + 1)) == [
        f"'tile.barrier_alloc' op !tile.mbarrier_ring holds 1 to {MAX_RING} barriers, "
        f"got {MAX_RING + 1}"
    ]


@pytest.mark.parametrize(("n", "index", "ok"), [(3, 0, True), (3, 2, True), (3, -1, False)])
def test_a_constant_ring_index_is_from_zero_to_n_minus_one(n: int, index: int, ok: bool) -> None:
    errors = _errors(_none, _ring(n, index))
    assert (
        errors == []
        if ok
        else errors
        == [
            f"'tile.barrier_index' op index {index} is out of range for a ring of {n} barriers "
            f"(0 to {n - 1})"
        ]
    )


def _counted(op: str, name: str, value: int) -> Callable[[list[ir.Value]], None]:
    def body(args: list[ir.Value]) -> None:
        built = {
            "barrier_init": barrier.BarrierInitOp,
            "barrier_expect": barrier.BarrierExpectOp,
            "barrier_arrive": barrier.BarrierArriveOp,
        }[op](args[0])
        built.operation.attributes[name] = _i32(value)

    return body


@pytest.mark.parametrize(
    ("op", "name", "limit"),
    [
        ("barrier_init", "count", MAX_ARRIVALS),
        ("barrier_expect", "bytes", MAX_BYTES),
        ("barrier_arrive", "count", MAX_ARRIVALS),
    ],
)
def test_barrier_counts_are_from_one_to_their_limit(op: str, name: str, limit: int) -> None:
    def bar() -> list[ir.Type]:
        return [_bar_type()]

    assert _errors(bar, _counted(op, name, 1)) == []
    assert _errors(bar, _counted(op, name, limit)) == []
    assert _errors(bar, _counted(op, name, limit + 1)) == [
        f"'tile.{op}' op {name} must be from 1 to {limit}, got {limit + 1}"
    ]


@pytest.mark.parametrize("width", [1, 32])
def test_a_barrier_wait_takes_an_i1_or_i32_phase(width: int) -> None:
    def types() -> list[ir.Type]:
        return [_bar_type(), ir.IntegerType.get_signless(width)]

    def body(args: list[ir.Value]) -> None:
        barrier.BarrierWaitOp(args[0], args[1])

    assert _errors(types, body) == []


@pytest.mark.parametrize(
    ("target", "ok"), [("gfx1250", True), ("cuda:90", True), ("gfx950", False), ("gfx942", False)]
)
def test_barriers_exist_on_tdm_and_tma_targets_only(target: str, ok: bool) -> None:
    errors = _errors(_none, _ring(2), target=target)
    assert (
        errors == []
        if ok
        else errors
        == [
            f"'tile.barrier_alloc' op a shared-memory barrier needs TDM (gfx1250) or TMA "
            f"(cuda:90); {target} has neither"
        ]
    )


# ---- the TDM store's whole-row rule ---------------------------------------------------------


def _store_errors(shape: list[int], layout: Callable[[], ir.Attribute], target: str | None):
    """The verifier's messages for a TDM store of a ``shape`` f16 block in ``layout``."""

    def types() -> list[ir.Type]:
        block = tb.block_type(shape, ir.F16Type.get(), layout())
        return [tb.desc_type(block), tb.shared_type(block)]

    def body(args: list[ir.Value]) -> None:
        barrier.AsyncTDMCopyLocalToGlobalOp(args[0], args[1])

    return _errors(types, body, target)


def _padded(interval: int, order: list[int]) -> Callable[[], ir.Attribute]:
    return lambda: tile.PaddedSharedAttr.build(interval=interval, amount=8, order=order)


@pytest.mark.parametrize(("order", "inner"), [([1, 0], 64), ([0, 1], 32)])
def test_a_tdm_store_pads_rows_of_its_innermost_dimension(order: list[int], inner: int) -> None:
    """A 32x64 block: the innermost dimension is ``order[0]``'s, not the first or the last."""
    assert _store_errors([32, 64], _padded(inner, order), "gfx1250") == []
    other = 96 - inner  # the other dimension's size
    assert _store_errors([32, 64], _padded(other, order), "gfx1250") == [
        "'tile.async_tdm_copy_local_to_global' op a TDM store pads only whole rows: the "
        f"padding interval ({other}) must equal the innermost block dimension ({inner})"
    ]


@pytest.mark.parametrize("target", [None, "cuda:90"])
def test_the_whole_row_rule_binds_only_where_every_possible_target_has_tdm(target) -> None:
    """cuda:90 stores with TMA, which pads any interval; a module without a target
    may run there, so it is not refused either."""
    assert _store_errors([64, 64], _padded(32, [1, 0]), target) == []


def test_a_tdm_store_of_a_swizzled_block_has_no_row_rule() -> None:
    def swizzled() -> ir.Attribute:
        return tile.SwizzledSharedAttr.build(vec=1, per_phase=1, max_phase=1, order=[1, 0])

    assert _store_errors([64, 64], swizzled, "gfx1250") == []


# ---- the sync ops' result type ------------------------------------------------------------

SYNC_RESULT = {
    "tile.atomic_rmw": (
        '%r = "tile.atomic_rmw"(%p, %i, %i) {kind = "add", sem = "relaxed", scope = "gpu"} '
        ": (!tile.ptr<i32>, i32, i32) -> ",
        "must return one i32 (the old value)",
    ),
    "tile.load_scalar": (
        '%r = "tile.load_scalar"(%p, %i) : (!tile.ptr<i32>, i32) -> ',
        "must return one i32",
    ),
}


@pytest.mark.parametrize("name", SYNC_RESULT)
@pytest.mark.parametrize("result", ["i32", "i64", "i16"])
def test_a_sync_op_returns_one_i32(name: str, result: str) -> None:
    op, message = SYNC_RESULT[name]
    text = "func.func @f(%p: !tile.ptr<i32>, %i: i32) {\n" + op + result + "\n  return\n}\n"
    with make_context():
        if result == "i32":
            assert ir.Module.parse(text).operation.verify()
            return
        with pytest.raises(MLIRError) as e:
            ir.Module.parse(text)
    assert f"'{name}' op {message}" in str(e.value)


# ---- tile.async_wmma's k_width at its limits --------------------------------------------

ASYNC_WMMA_HEAD = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
!a = !tile.shared<tensor<128x64xf16, #s>>
!b = !tile.shared<tensor<64x128xf16, #s>>
!c = tensor<128x128xf32, #acc>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func @f(%a: !a, %b: !b, %c: !c) {
    %d = "tile.async_wmma"(%a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0>, k_width = """
ASYNC_WMMA_TAIL = """ : i32} : (!a, !b, !c) -> !c
    return
  }
}
"""


@pytest.mark.parametrize(("k_width", "ok"), [(1, True), (32, True), (0, False), (64, False)])
def test_async_wmma_k_width_from_1_to_32(k_width: int, ok: bool) -> None:
    text = ASYNC_WMMA_HEAD + str(k_width) + ASYNC_WMMA_TAIL
    with make_context():
        if ok:
            assert ir.Module.parse(text).operation.verify()
            return
        with pytest.raises(MLIRError) as e:
            ir.Module.parse(text)
    assert f"k_width = {k_width} must be a power of two from 1 to 32" in str(e.value)
