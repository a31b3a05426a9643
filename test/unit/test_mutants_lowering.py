"""Lowering rules the lit files left open (found by ``benchmarks/mutation.py``).

Each test pins one rule a mutant of the rule code broke without any other
test failing: the warp test of a copy's pred is found on either side of the
user's ``arith.andi``; gfx1250's barrier plan (arrivals per expect, tracked
copies issued by every warp and moving an element per warp, bytes checked
at a block's end, the functions that store).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
import support.tile_build as tb

from gemm_opt import dialect
from gemm_opt.core.ext_compat import PassManager, arith, ir, scf
from gemm_opt.dialect import barrier, tile
from gemm_opt.dialect.edit import ops_named
from gemm_opt.lowering.compile import hand_off
from gemm_opt.lowering.tma_plan import MAX_LOOP_IN_FLIGHT, TmaRefusal, plan_tma
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


@dataclass
class _Barrier:
    """Builds into a kernel with descriptor ``desc``, buffer ``buf`` and barrier ``bar``."""

    desc: ir.Value
    buf: ir.Value
    bar: ir.Value

    def expect(self, nbytes: int) -> None:
        op = barrier.BarrierExpectOp(self.bar)
        op.operation.attributes["bytes"] = tb.i32_attr(nbytes)

    def copy(self, hint: int | None = None, update: bool | None = None) -> None:
        """A tracked copy; ``update``: through an update of the descriptor (True:
        with a pred, False: without)."""
        desc = self.desc
        if update is not None:
            pred = arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result if update else None
            offsets = [tb.const(0), tb.const(0)]
            desc = tile.UpdateTensorDescriptorOp(desc, offsets, [], desc.type, pred=pred).result
        op = tile.AsyncTDMCopyGlobalToLocalOp(desc, self.buf, barrier=self.bar)
        if hint is not None:
            op.operation.attributes["warp_used_hint"] = tb.i32_attr(hint)

    def store(self) -> None:
        barrier.AsyncTDMCopyLocalToGlobalOp(self.desc, self.buf)


def _plan(
    build: Callable[[_Barrier], None],
    shape: tuple[int, int] = (64, 64),
    num_warps: int = 4,
    tdm: bool = True,
):
    """Plan the barriers of a 4-warp kernel ``build`` fills: (plan, the copies each
    expect covers, how many functions store)."""
    from gemm_opt.lowering.barrier_plan import plan_barriers

    with dialect.make_context(), ir.Location.unknown():
        f16, i32, i64 = (
            ir.F16Type.get(),
            ir.IntegerType.get_signless(32),
            ir.IntegerType.get_signless(64),
        )
        if shape == (64, 64):
            layout = tile.PaddedSharedAttr.build(interval=64, amount=8, order=[1, 0])
        else:
            layout = tile.SwizzledSharedAttr.build(vec=1, per_phase=1, max_phase=1, order=[1, 0])
        block = tb.block_type(shape, f16, layout)
        bar_t = tile.MBarrierType.get(ir.TypeAttr.get(i64))
        k = tb.kernel([tb.ptr_type(f16), i32, i64, tb.shared_type(block), bar_t], num_warps=4)
        ptr, m, ld, buf, bar = k.args
        with k.ip:
            desc = tile.MakeTensorDescriptorOp(
                ptr, [m, m], [ld, tb.const(1, 64)], tb.desc_type(block)
            ).result
            build(_Barrier(desc, buf, bar))
        assert k.module.operation.verify()
        plan = plan_barriers(k.module.operation, num_warps, tdm)
        expects = ops_named(k.module, "tile.barrier_expect")
        return plan, [plan.covered.get(e) for e in expects], len(plan.storing)


@pytest.mark.parametrize("copies", [1, 2, 3])
def test_per_arrival_is_the_most_copies_one_expect_covers(copies: int) -> None:
    def build(k: _Barrier) -> None:
        k.expect(8192)
        k.copy()
        k.expect(8192 * copies)
        for _ in range(copies):
            k.copy()

    plan, covered, _ = _plan(build)
    assert covered == [1, copies] and plan.per_arrival == copies


def test_no_tracked_copy_is_one_arrival_per_warp() -> None:
    plan, covered, storing = _plan(lambda k: None)
    assert (plan.per_arrival, covered, storing) == (1, [], 0)


@pytest.mark.parametrize(("hint", "ok"), [(None, True), (0xF, True), (0x3, False), (0xC, False)])
def test_a_tracked_copy_is_issued_by_every_warp(hint: int | None, ok: bool) -> None:
    from gemm_opt.lowering.barrier_plan import BarrierRefusal

    def build(k: _Barrier) -> None:
        k.expect(8192)
        k.copy(hint)

    if ok:
        assert _plan(build)[1] == [1]
        return
    with pytest.raises(BarrierRefusal, match=f"warp_used_hint = {hint:#x} leaves warps out"):
        _plan(build)


@pytest.mark.parametrize(("num_warps", "ok"), [(4, True), (5, False)])
def test_a_tracked_copy_moves_at_least_one_element_per_warp(num_warps: int, ok: bool) -> None:
    """A 2x2 block: 4 elements, one for each of 4 warps; a fifth warp would not arrive."""
    from gemm_opt.lowering.barrier_plan import BarrierRefusal

    def build(k: _Barrier) -> None:
        k.expect(8)
        k.copy()

    if ok:
        assert _plan(build, (2, 2), num_warps)[1] == [1]
        return
    with pytest.raises(BarrierRefusal, match="needs a block of at least 5 elements"):
        _plan(build, (2, 2), num_warps)


def test_copies_short_of_the_expect_at_the_blocks_end_are_refused() -> None:
    from gemm_opt.lowering.barrier_plan import BarrierRefusal

    def build(k: _Barrier) -> None:
        k.expect(16384)
        k.copy()

    with pytest.raises(
        BarrierRefusal, match="announces 16384, the copies that follow it deliver 8192"
    ):
        _plan(build)


@pytest.mark.parametrize("tdm", [True, False])
def test_a_function_that_stores_is_found_in_nested_blocks(tdm: bool) -> None:
    def in_loop(k: _Barrier) -> None:
        with tb.for_loop(tb.const(0), tb.const(2), tb.const(1)):
            k.store()

    assert _plan(in_loop, tdm=tdm)[2] == 1
    assert _plan(_Barrier.store, tdm=tdm)[2] == 1


@pytest.mark.parametrize("update", [None, False, True])
def test_cuda90_checks_an_expect_unless_a_descriptor_update_carries_a_pred(update) -> None:
    """cuda:90 refuses an expect its copies certainly under-deliver; a copy through a
    descriptor update with a pred may deliver nothing, so the bytes are not certain."""
    from gemm_opt.lowering.barrier_plan import BarrierRefusal

    def build(k: _Barrier) -> None:
        k.expect(16384)
        k.copy(update=update)

    if update:
        assert _plan(build, tdm=False)[0].per_arrival == 1
        return
    with pytest.raises(BarrierRefusal, match=r"on cuda:90 .* announces 16384, .* deliver 8192"):
        _plan(build, tdm=False)


# ---- the TMA plan across branches --------------------------------------------------------


def _tma_plan(body: Callable[[ir.Value, ir.Value, ir.Value, ir.Value], None], plans=None):
    """The TMA plan of a cuda:90 kernel ``@k(%ptr, %desc, %buf, %flag)`` whose
    body ``body`` builds, with its waits (program order) and its return
    (``plans`` gets its ``scf.for``'s copies per iteration and whether its count
    is carried)."""
    with dialect.make_context(), ir.Location.unknown():
        f16 = ir.F16Type.get()
        layout = tile.SwizzledSharedAttr.build(vec=1, per_phase=1, max_phase=1, order=[1, 0])
        block = tb.block_type([64, 64], f16, layout)
        i1 = ir.IntegerType.get_signless(1)
        k = tb.kernel(
            [tb.ptr_type(f16), tb.desc_type(block), tb.shared_type(block), i1],
            num_warps=4,
            target="cuda:90",
        )
        with k.ip:
            body(*k.args)
        assert k.module.operation.verify()
        fplan = plan_tma(k.module.operation).functions[k.fn.operation]
        waits = [fplan.windows[w] for w in ops_named(k.module, "tile.async_tdm_wait")]
        (ret,) = ops_named(k.module, "func.return")
        makes = [fplan.remakes.get(m) for m in ops_named(k.module, "tile.make_tensor_descriptor")]
        if plans is not None:
            (loop,) = ops_named(k.module, "scf.for")
            plans.append((fplan.loops.get(loop), loop in fplan.carried))
        return waits, fplan.windows[ret], fplan.ring, makes


def _if(flag: ir.Value, then: Callable[[], None], other: Callable[[], None] | None = None) -> None:
    op = scf.IfOp(flag, [], has_else=other is not None)
    with tb.region(op.then_block):
        then()
    if other is not None:
        with tb.region(op.else_block):
            other()


def test_an_if_whose_branches_both_drain_leaves_nothing_in_flight() -> None:
    """copy; copy; if { wait 0 } else { wait 0 }; wait 1: every path drains, so the
    last wait and the return find nothing (the skipped path exists only without else)."""

    def body(ptr, desc, buf, flag):
        tb.copy(desc, buf)
        tb.copy(desc, buf)
        _if(flag, lambda: tb.wait(0), lambda: tb.wait(0))
        tb.wait(1)

    assert _tma_plan(body)[:3] == ([2, 2, 0], 0, 2)


def test_a_descriptor_made_in_a_branch_inside_a_loop_is_made_again() -> None:
    """for { copy; if { make; copy of it; wait 0 }; wait 1 }: the make may run on
    every pass, and from the second on it finds the copy the pass before left in
    flight and this pass's copy: the lowering drains 2 before it."""

    def body(ptr, desc, buf, flag):
        with tb.for_loop(tb.const(0), tb.const(4), tb.const(1)):
            tb.copy(desc, buf)

            def then() -> None:
                c64, one = tb.const(64), tb.const(1, 64)
                made = tile.MakeTensorDescriptorOp(
                    ptr, [c64, c64], [tb.const(64, 64), one], desc.type
                )
                tb.copy(made.result, buf)
                tb.wait(0)

            _if(flag, then)
            tb.wait(1)

    assert _tma_plan(body) == ([1, 2], 1, 2, [2])


# ---- the TMA plan around warp specialization --------------------------------------------

#: A cuda:90 kernel ``@k(%c, %m, %ldc)`` whose one-warp partition stores a tile
#: with TMA and waits for the store: ``WS_HEAD`` + (``COPY_BEFORE``) + ``WS_OPEN``
#: + (``COPY_INSIDE``) + ``WS_CLOSE``.
WS_HEAD = """
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 1, 1>, order = array<i64: 1, 0>}>
!d = !tile.tensor_desc<tensor<64x32xf32, #s>>
!buf = !tile.shared<tensor<64x32xf32, #s>>
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @k(%c: !tile.ptr<f32>, %m: i32, %ldc: i64) {
    %c32 = arith.constant 32 : i32
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%c, %m, %c32, %ldc, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64) -> !d
    %b = "tile.local_alloc"() : () -> !buf
"""
COPY_BEFORE = (
    '"tile.async_tdm_copy_global_to_local"(%d, %b) '
    "{operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!d, !buf) -> ()\n"
)
WS_OPEN = """
    "tile.warp_specialize"(%c, %m, %ldc) ({
      "tile.warp_yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0>} : () -> ()
    }, {
      "tile.warp_partition"() ({
      ^bb0(%pc: !tile.ptr<f32>, %pm: i32, %pldc: i64):
        %w = arith.constant 32 : i32
        %u = arith.constant 1 : i64
        %pd = "tile.make_tensor_descriptor"(%pc, %pm, %w, %pldc, %u) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64) -> !d
        %pb = "tile.local_alloc"() : () -> !buf
        %z = arith.constant dense<0.0> : tensor<64x32xf32, #bl>
        "tile.local_store"(%z, %pb) : (tensor<64x32xf32, #bl>, !buf) -> ()
        "tile.async_tdm_copy_local_to_global"(%pd, %pb) : (!d, !buf) -> ()
        "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
"""
COPY_INSIDE = (
    '"tile.async_tdm_copy_global_to_local"(%pd, %pb) '
    "{operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!d, !buf) -> ()\n"
)
WS_CLOSE = """
        "tile.warp_return"() : () -> ()
      }) {num_warps = 1 : i32} : () -> ()
      "tile.warp_partitions_end"() : () -> ()
    }) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0>} : (!tile.ptr<f32>, i32, i64) -> ()
    return
  }
}
"""


def _ws_plan(text: str) -> tuple[list[int], int]:
    with dialect.make_context():
        module = ir.Module.parse(text)
        (fplan,) = plan_tma(module.operation).functions.values()
        return [fplan.windows[w] for w in ops_named(module, "tile.async_tdm_wait")], fplan.ring


def test_a_partitions_wait_for_its_stores_waits_for_no_copy_of_the_ring() -> None:
    assert _ws_plan(WS_HEAD + WS_OPEN + WS_CLOSE) == ([0], 1)


def test_counted_copies_in_flight_when_the_partitions_start_are_refused() -> None:
    with pytest.raises(TmaRefusal, match=r"^1 counted TMA copies may still be in flight when"):
        _ws_plan(WS_HEAD + COPY_BEFORE + WS_OPEN + WS_CLOSE)
    drain = '"tile.async_tdm_wait"() {num = 0 : i32} : () -> ()\n'
    assert _ws_plan(WS_HEAD + COPY_BEFORE + drain + WS_OPEN + WS_CLOSE) == ([1, 0], 1)


def test_a_counted_copy_inside_a_partition_is_refused_at_the_copy() -> None:
    with pytest.raises(
        TmaRefusal, match=r"^counted TMA copies inside a 'tile.warp_specialize'"
    ) as e:
        _ws_plan(WS_HEAD + WS_OPEN + COPY_INSIDE + WS_CLOSE)
    assert e.value.op.name == "tile.async_tdm_copy_global_to_local"


def _loop_plan(width: int | None, branch: bool = False):
    """The plan of ``for (i: i<width> or index) { copy; [if { }]; wait 0 }``: the
    loop's copies per iteration (None: not a counted loop) and whether its count
    is carried."""

    def body(ptr, desc, buf, flag):
        t = ir.IndexType.get() if width is None else ir.IntegerType.get_signless(width)
        lo, hi, step = (arith.ConstantOp(t, ir.IntegerAttr.get(t, v)).result for v in (0, 4, 1))
        with tb.for_loop(lo, hi, step):
            tb.copy(desc, buf)
            if branch:
                _if(flag, lambda: None)
            tb.wait(0)

    plans: list[tuple[int | None, bool]] = []
    _tma_plan(body, plans)
    return plans[0]


@pytest.mark.parametrize("width", [None, 64])
def test_a_loop_issuing_tma_copies_must_count_with_i32(width: int | None) -> None:
    with pytest.raises(TmaRefusal, match=r"^a loop issuing TMA copies must count with i32$"):
        _loop_plan(width)


@pytest.mark.parametrize("branch", [False, True])
def test_a_branch_without_copies_leaves_a_loop_counted(branch: bool) -> None:
    """Only a region op that holds copies or waits makes the count carried."""
    assert _loop_plan(32, branch) == (1, False)


def _wait_then_copy_loop(num: int):
    """``for { wait num; copy }; wait 0``: the head settles at ``num + 1`` in flight."""

    def body(ptr, desc, buf, flag):
        with tb.for_loop(tb.const(0), tb.const(4), tb.const(1)):
            tb.wait(num)
            tb.copy(desc, buf)
        tb.wait(0)

    return _tma_plan(body)


def test_a_loop_head_may_find_up_to_the_cap_of_copies_in_flight() -> None:
    cap = MAX_LOOP_IN_FLIGHT
    assert _wait_then_copy_loop(cap - 1)[:3] == ([cap, cap], 0, cap)
    with pytest.raises(TmaRefusal, match=rf"not bounded \(or exceed {cap}\)$"):
        _wait_then_copy_loop(cap)


def test_a_function_without_copies_has_no_plan() -> None:
    with dialect.make_context(), ir.Location.unknown():
        k = tb.kernel([ir.IntegerType.get_signless(32)], num_warps=4, target="cuda:90")
        assert plan_tma(k.module.operation).functions == {}


def _while(flag: ir.Value, before: Callable[[], None], after: Callable[[], None]) -> None:
    op = scf.WhileOp([], [])
    with ir.InsertionPoint(op.before.blocks.append()):
        before()
        scf.ConditionOp(flag, [])
    with ir.InsertionPoint(op.after.blocks.append()):
        after()
        scf.YieldOp([])


def _make_and_copy(ptr: ir.Value, desc: ir.Value, buf: ir.Value) -> None:
    c64, one = tb.const(64), tb.const(1, 64)
    made = tile.MakeTensorDescriptorOp(ptr, [c64, c64], [tb.const(64, 64), one], desc.type)
    tb.copy(made.result, buf)


def test_a_descriptor_made_in_a_while_body_is_made_again() -> None:
    """while { copy } do { make; copy of it; wait 0 }; wait 0: the body's make
    finds the condition's copy in flight and drains it."""

    def body(ptr, desc, buf, flag):
        _while(
            flag, lambda: tb.copy(desc, buf), lambda: (_make_and_copy(ptr, desc, buf), tb.wait(0))
        )
        tb.wait(0)

    waits, _, _, makes = _tma_plan(body)
    assert (waits, makes) == ([1, 1], [1])


def test_a_descriptor_made_in_a_while_condition_is_made_again() -> None:
    """while { make; copy of it } do { wait 1 }; wait 0: from the second pass the
    condition's make finds the copy the body left in flight and drains it, so
    the body's wait and the one after the loop each find 1 copy, never 2."""

    def body(ptr, desc, buf, flag):
        _while(flag, lambda: _make_and_copy(ptr, desc, buf), lambda: tb.wait(1))
        tb.wait(0)

    waits, _, _, makes = _tma_plan(body)
    assert (waits, makes) == ([1, 1], [1])
