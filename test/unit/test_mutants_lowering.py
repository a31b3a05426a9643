"""Lowering rules the lit files left open (found by ``benchmarks/mutation.py``).

Each test pins one rule a mutant of the rule code broke without any other
test failing: the warp test of a copy's pred is found on either side of the
user's ``arith.andi``.
"""

from __future__ import annotations

import pytest

from gemm_opt import dialect
from gemm_opt.core.ext_compat import PassManager, ir
from gemm_opt.dialect.edit import ops_named
from gemm_opt.lowering.compile import hand_off
from gemm_opt.passes.assign_tdm_warp_layout import AssignTdmWarpLayoutPass
from gemm_opt.passes.emit_warp_predicates import EmitWarpPredicatesPass

#: One copy of warps 2 and 3 (hint 0xc) of 8, under the user's pred ``%q``.
HINTED_COPY = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @k(%a: !tile.ptr<f16>, %m: i32 {tile.divisibility = 16 : i32},
               %lda: i64 {tile.divisibility = 16 : i32}, %q: i1) {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one)
      {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %b = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%d, %b, %q)
      {operandSegmentSizes = array<i32: 1, 1, 1, 0>, warp_used_hint = 12 : i32}
      : (!da, !ba, i1) -> ()
    return
  }
}
"""


@pytest.mark.parametrize("warp_test_first", [False, True])
def test_the_warp_test_is_stripped_from_either_side_of_the_users_pred(
    warp_test_first: bool,
) -> None:
    """``user & warp_test`` and ``warp_test & user`` mean the same pred: the
    lowering strips the warp test from both and keeps exactly ``%q`` as the
    guard of the copy (gfx950 has no TDM: the guard is an ``scf.if``)."""
    with dialect.make_context():
        module = ir.Module.parse(HINTED_COPY)
        pm = PassManager("builtin.module")
        pm.add(AssignTdmWarpLayoutPass(), AssignTdmWarpLayoutPass.name)
        pm.add(EmitWarpPredicatesPass(), EmitWarpPredicatesPass.name)
        pm.run(module.operation)
        (both,) = [op for op in ops_named(module, "arith.andi") if str(op.result.type) == "i1"]
        user, warp_test = both.operands[0], both.operands[1]
        assert isinstance(user, ir.BlockArgument)  # the emit pass puts the user's pred first
        if warp_test_first:
            both.operands[0], both.operands[1] = warp_test, user
        ttgir = hand_off(module, "gfx950").ttgir
    # The one guard is the user's pred itself: no warp test is left around it.
    assert ttgir.count("scf.if ") == 1 and "scf.if %arg3 {" in ttgir
    assert "warp_id" not in ttgir


# ---- gfx1250's barrier plan (lowering/barrier_plan.py) ----------------------------------


def _barrier_module(body: str, shape: str = "64x64") -> str:
    """A kernel with descriptor ``%d`` and buffer ``%b`` of a ``shape`` f16 block,
    barrier ``%bar`` and ``body``; ``COPY(hint)`` is a tracked copy."""
    s = "#tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>"
    if shape != "64x64":
        s = "#tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>"
    return f"""
#s = {s}
!desc = !tile.tensor_desc<tensor<{shape}xf16, #s>>
!buf = !tile.shared<tensor<{shape}xf16, #s>>
module attributes {{tile.num_warps = 4 : i32}} {{
  func.func @k(%c: !tile.ptr<f16>, %m: i32, %ld: i64, %b: !buf, %bar: !tile.mbarrier<i64>) {{
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%c, %m, %m, %ld, %one)
      {{operandSegmentSizes = array<i32: 1, 2, 2>}} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    {body}
    return
  }}
}}
"""


def _expect(nbytes: int) -> str:
    return (
        '"tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, '
        f"bytes = {nbytes} : i32}} : (!tile.mbarrier<i64>) -> ()\n"
    )


def _copy(hint: int | None = None) -> str:
    attr = "" if hint is None else f", warp_used_hint = {hint} : i32"
    return (
        '"tile.async_tdm_copy_global_to_local"(%d, %b, %bar) '
        f"{{operandSegmentSizes = array<i32: 1, 1, 0, 1>{attr}}} "
        ": (!desc, !buf, !tile.mbarrier<i64>) -> ()\n"
    )


STORE = '"tile.async_tdm_copy_local_to_global"(%d, %b) : (!desc, !buf) -> ()\n'


def _plan(text: str, num_warps: int = 4, tdm: bool = True):
    from gemm_opt.lowering.barrier_plan import plan_barriers

    with dialect.make_context():
        module = ir.Module.parse(text)
        plan = plan_barriers(module.operation, num_warps, tdm)
        expects = ops_named(module, "tile.barrier_expect")
        return plan, [plan.covered.get(e) for e in expects], len(plan.storing)


@pytest.mark.parametrize("copies", [1, 2, 3])
def test_per_arrival_is_the_most_copies_one_expect_covers(copies: int) -> None:
    body = _expect(8192) + _copy() + _expect(8192 * copies) + _copy() * copies
    plan, covered, _ = _plan(_barrier_module(body))
    assert covered == [1, copies] and plan.per_arrival == copies


def test_no_tracked_copy_is_one_arrival_per_warp() -> None:
    plan, covered, storing = _plan(_barrier_module(""))
    assert (plan.per_arrival, covered, storing) == (1, [], 0)


@pytest.mark.parametrize(("hint", "ok"), [(None, True), (0xF, True), (0x3, False), (0xC, False)])
def test_a_tracked_copy_is_issued_by_every_warp(hint: int | None, ok: bool) -> None:
    from gemm_opt.lowering.barrier_plan import BarrierRefusal

    text = _barrier_module(_expect(8192) + _copy(hint))
    if ok:
        assert _plan(text)[1] == [1]
        return
    with pytest.raises(BarrierRefusal, match=f"warp_used_hint = {hint:#x} leaves warps out"):
        _plan(text)


@pytest.mark.parametrize(("num_warps", "ok"), [(4, True), (5, False)])
def test_a_tracked_copy_moves_at_least_one_element_per_warp(num_warps: int, ok: bool) -> None:
    """A 2x2 block: 4 elements, one for each of 4 warps; a fifth warp would not arrive."""
    from gemm_opt.lowering.barrier_plan import BarrierRefusal

    text = _barrier_module(_expect(8) + _copy(), shape="2x2")
    if ok:
        assert _plan(text, num_warps)[1] == [1]
        return
    with pytest.raises(BarrierRefusal, match="needs a block of at least 5 elements"):
        _plan(text, num_warps)


def test_copies_short_of_the_expect_at_the_blocks_end_are_refused() -> None:
    from gemm_opt.lowering.barrier_plan import BarrierRefusal

    with pytest.raises(
        BarrierRefusal, match="announces 16384, the copies that follow it deliver 8192"
    ):
        _plan(_barrier_module(_expect(16384) + _copy()))


@pytest.mark.parametrize("tdm", [True, False])
def test_a_function_that_stores_is_found_in_nested_blocks(tdm: bool) -> None:
    loop = (
        "%c0 = arith.constant 0 : index\n%c2 = arith.constant 2 : index\n"
        "%c1 = arith.constant 1 : index\n"
        f"scf.for %i = %c0 to %c2 step %c1 {{\n{STORE}}}\n"
    )
    assert _plan(_barrier_module(loop), tdm=tdm)[2] == 1
    assert _plan(_barrier_module(STORE), tdm=tdm)[2] == 1
