"""``tile-pipeline-mma``'s matcher at its edges (found by
``benchmarks/mutation.py`` in ``passes/pipeline_mma.py``).

One K loop, A in a ring of 2 slots and B in a ring of 3, is rewritten; each
test changes one piece of it (a slot's offset or count, the wait, a copy, the
accumulator, an operand, how the result is carried) and checks that the pass
rewrites the loop exactly when the copies it moves provably write other
buffers than the MMA of their iteration reads, and leaves any other loop as
it is, without failing on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from support import tile_build as tb
from support.tile_build import after_passes, ops_named

from gemm_opt.core.ext_compat import arith, ir, scf
from gemm_opt.dialect import edit, make_context, tile

ASYNC = "tile.async_wmma"
SYNC = "tile.wmma"
COPY = "tile.async_tdm_copy_global_to_local"

# A in slots (k + ca) % na, B in slots (cb + k) % nb (the constant on the
# left of the addi); the MMA reads A at (k + ra) % na and B at (k + rb) % nb.
# %single is one more buffer of A's shape, not a ring; %rows one of 128 rows
# (a ring of 1-D buffers) and %drow a descriptor of one row.
LOOP = """
#sa = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#sb = #tile.padded_shared<{interval = 128, amount = 16, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 2>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
#s1 = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #sa>>
!db = !tile.tensor_desc<tensor<64x128xf16, #sb>>
!ba = !tile.shared<tensor<128x64xf16, #sa>>
!bb = !tile.shared<tensor<64x128xf16, #sb>>
!ra = !tile.shared<tensor<2x128x64xf16, #sa>>
!rb = !tile.shared<tensor<3x64x128xf16, #sb>>
!acc = tensor<128x128xf32, #acc>
module attributes {tile.num_warps = 8 : i32, tile.target = "cuda:90"} {
  func.func private @k_loop(%da: !da, %db: !db, %abuf: !ra, %bbuf: !rb, %single: !ba, %nk: i32, %zero: !acc, %drow: !tile.tensor_desc<tensor<64xf16, #s1>>, %rows: !tile.shared<tensor<128x64xf16, #s1>>) -> !acc {
    %lb = arith.constant 0 : i32 loc("lb")
    %step = arith.constant 1 : i32 loc("step")
    %na = arith.constant 2 : i32 loc("na")
    %nb = arith.constant 3 : i32 loc("nb")
    %ca = arith.constant 1 : i32 loc("ca")
    %cb = arith.constant 2 : i32 loc("cb")
    %ra = arith.constant 0 : i32 loc("ra")
    %rb = arith.constant 0 : i32 loc("rb")
    %r = scf.for %k = %lb to %nk step %step iter_args(%acc = %zero) -> (!acc) : i32 {
      %ka = arith.addi %k, %ca : i32 loc("ka")
      %sa = arith.remsi %ka, %na : i32
      %kb = arith.addi %cb, %k : i32 loc("kb")
      %sb = arith.remsi %kb, %nb : i32
      %an = "tile.memdesc_index"(%abuf, %sa) : (!ra, i32) -> !ba
      %bn = "tile.memdesc_index"(%bbuf, %sb) : (!rb, i32) -> !bb
      "tile.async_tdm_copy_global_to_local"(%da, %an) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> () loc("copy_a")
      "tile.async_tdm_copy_global_to_local"(%db, %bn) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!db, !bb) -> () loc("copy_b")
      "tile.async_tdm_wait"() {num = 2 : i32} : () -> () loc("wait")
      %ja = arith.addi %k, %ra : i32
      %s = arith.remsi %ja, %na : i32
      %jb = arith.addi %k, %rb : i32
      %t = arith.remsi %jb, %nb : i32
      %ac = "tile.memdesc_index"(%abuf, %s) : (!ra, i32) -> !ba
      %bc = "tile.memdesc_index"(%bbuf, %t) : (!rb, i32) -> !bb
      %at = "tile.local_load"(%ac) : (!ba) -> tensor<128x64xf16, #opa> loc("load_a")
      %bt = "tile.local_load"(%bc) : (!bb) -> tensor<64x128xf16, #opb> loc("load_b")
      %d = "tile.wmma"(%at, %bt, %acc) : (tensor<128x64xf16, #opa>, tensor<64x128xf16, #opb>, !acc) -> !acc loc("mma")
      scf.yield %d : !acc
    }
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return %r : !acc
  }
}
"""


@pytest.fixture
def ctx() -> Iterator[ir.Context]:
    c = make_context()
    with c, ir.Location.unknown():
        yield c


def _named(module: ir.Module, name: str) -> ir.Operation:
    """The op at ``loc("name")``."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if str(op.location) == f'loc("{name}")':
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    assert len(found) == 1, name
    return found[0]


def _arg(module: ir.Module, index: int) -> ir.Value:
    return edit.functions(module)[0].regions[0].blocks[0].arguments[index]


def _set(name: str, value: int) -> Callable[[ir.Module], None]:
    return lambda module: edit.set_constant(_named(module, name), value)


def _pipelined(*edits: Callable[[ir.Module], object]) -> ir.Module:
    """The loop with ``edits`` (verified) after ``tile-pipeline-mma``."""
    module = ir.Module.parse(LOOP)
    for change in edits:
        change(module)
    assert module.operation.verify()
    return after_passes(module, ["tile-pipeline-mma"])


def _rewritten(module: ir.Module) -> bool:
    asyncs, syncs = len(ops_named(module, ASYNC)), len(ops_named(module, SYNC))
    assert asyncs + syncs == 1
    return asyncs == 1


def _num(op: ir.Operation) -> int:
    return ir.IntegerAttr(op.attributes["num"]).value


def test_rings_of_different_depths_and_offsets_on_either_side(ctx) -> None:
    # A copy and an MMA read of different allocations never meet, whatever
    # their slots; the slot offset may be either operand of the addi.
    after = _pipelined()
    assert _rewritten(after)
    assert [_num(w) for w in ops_named(after, "tile.async_tdm_wait")] == [0, 0]
    assert "k_width" not in ops_named(after, ASYNC)[0].attributes


@pytest.mark.parametrize(
    ("ca", "cb", "ra", "rb", "rewritten"),
    [
        (1, 2, 0, 0, True),
        (1, 1, 0, 2, True),  # B: (k + 1) % 3 against (k + 2) % 3
        (1, 1, 1, 1, False),  # B: the same slot, offsets 1 and 1
        (1, 2, 1, 2, False),
        (1, 4, 0, 1, False),  # B: (k + 4) % 3 is (k + 1) % 3
        (3, 2, 0, 0, True),  # A: (k + 3) % 2 against k % 2
        (3, 2, 1, 0, False),
    ],
)
def test_slots_of_one_ring_are_disjoint_only_at_different_offsets(
    ctx, ca, cb, ra, rb, rewritten
) -> None:
    after = _pipelined(_set("ca", ca), _set("cb", cb), _set("ra", ra), _set("rb", rb))
    assert _rewritten(after) is rewritten


def test_a_ring_of_one_slot_is_never_disjoint(ctx) -> None:
    assert not _rewritten(_pipelined(_set("na", 1)))


def test_a_ring_of_zero_slots_is_left_as_it_is(ctx) -> None:
    # remsi by 0 has no value: no slot, so no proof (and no division by 0).
    assert not _rewritten(_pipelined(_set("na", 0)))


def test_a_slot_offset_not_a_constant_is_left_as_it_is(ctx) -> None:
    def offset_nk(module: ir.Module) -> None:
        _named(module, "ka").operands[1] = _arg(module, 5)

    def count_nk(module: ir.Module) -> None:
        rem = next(iter(_named(module, "ka").result.uses)).owner
        rem.operands[1] = _arg(module, 5)

    assert not _rewritten(_pipelined(offset_nk))
    assert not _rewritten(_pipelined(count_nk))


def test_one_buffer_written_and_read_without_slots_is_left_as_it_is(ctx) -> None:
    def single(module: ir.Module) -> None:
        _named(module, "copy_a").operands[1] = _arg(module, 4)
        _named(module, "load_a").operands[0] = _arg(module, 4)

    assert not _rewritten(_pipelined(single))


def test_a_copy_into_one_row_of_the_buffer_the_mma_reads_is_left_as_it_is(ctx) -> None:
    # The copy's path into %rows is one index long, the MMA's read of all of
    # it none: the row is part of what the MMA reads.
    def row(module: ir.Module) -> None:
        copy, rows = _named(module, "copy_a"), _arg(module, 8)
        slot = next(iter(_named(module, "ka").result.uses)).owner.result
        layout = tile.PaddedSharedAttr.build(interval=64, amount=8, order=[0])
        row_t = tb.shared_type(tb.block_type([64], ir.F16Type.get(), layout))
        dest = tile.MemdescIndexOp(rows, slot, row_t, ip=ir.InsertionPoint(copy)).result
        copy.operands[0] = _arg(module, 7)
        copy.operands[1] = dest
        _named(module, "load_a").operands[0] = rows

    assert not _rewritten(_pipelined(row))


def test_a_copy_into_another_buffer_than_the_rings_is_disjoint(ctx) -> None:
    def single(module: ir.Module) -> None:
        _named(module, "copy_a").operands[1] = _arg(module, 4)

    assert _rewritten(_pipelined(single))


@pytest.mark.parametrize(
    ("lb", "step", "rewritten"), [(0, 1, True), (2, 3, True), (-1, 1, False), (0, 0, False)]
)
def test_the_loop_counts_up_from_a_non_negative_constant(ctx, lb, step, rewritten) -> None:
    assert _rewritten(_pipelined(_set("lb", lb), _set("step", step))) is rewritten


def test_a_loop_without_the_copy_wait_is_left_as_it_is(ctx) -> None:
    assert not _rewritten(_pipelined(lambda m: _named(m, "wait").erase()))


def test_a_loop_without_copies_is_left_as_it_is(ctx) -> None:
    def no_copies(module: ir.Module) -> None:
        _named(module, "copy_a").erase()
        _named(module, "copy_b").erase()

    assert not _rewritten(_pipelined(no_copies))


@pytest.mark.parametrize("after", ["wait", "mma"])
def test_a_copy_after_the_wait_is_left_as_it_is(ctx, after) -> None:
    def late(module: ir.Module) -> None:
        _named(module, "copy_b").move_after(_named(module, after))

    assert not _rewritten(_pipelined(late))


def test_one_copy_moves_and_the_wait_drops_by_one(ctx) -> None:
    after = _pipelined(lambda m: _named(m, "copy_b").erase())
    assert _rewritten(after)
    assert [_num(w) for w in ops_named(after, "tile.async_tdm_wait")] == [1, 0]
    assert len(ops_named(after, COPY)) == 1


def test_an_accumulator_not_carried_by_the_loop_is_left_as_it_is(ctx) -> None:
    def fresh_acc(module: ir.Module) -> None:
        mma = _named(module, "mma")
        zero = arith.ConstantOp(
            mma.operands[2].type,
            ir.DenseElementsAttr.get_splat(mma.operands[2].type, ir.FloatAttr.get_f32(0.0)),
            ip=ir.InsertionPoint(mma),
        )
        mma.operands[2] = zero.result

    assert not _rewritten(_pipelined(fresh_acc))


def test_an_operand_not_loaded_from_shared_memory_is_left_as_it_is(ctx) -> None:
    def register_b(module: ir.Module) -> None:
        mma = _named(module, "mma")
        t = mma.operands[1].type
        zero = arith.ConstantOp(
            t,
            ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(ir.F16Type.get(), 0.0)),
            ip=ir.InsertionPoint(mma),
        )
        mma.operands[1] = zero.result

    assert not _rewritten(_pipelined(register_b))


def _through(carry: Callable[[ir.Value, ir.Value, ir.InsertionPoint], ir.Value]) -> Callable:
    """The MMA's result reaches the loop's yield through ``carry(d, acc, ip)``."""

    def change(module: ir.Module) -> None:
        mma = _named(module, "mma")
        term = mma.operation.block.operations[len(mma.operation.block.operations) - 1]
        term.operands[0] = carry(mma.result, mma.operands[2], ir.InsertionPoint(term))

    return change


def test_a_result_carried_by_an_execute_region_is_left_as_it_is(ctx) -> None:
    def region(d: ir.Value, acc: ir.Value, ip: ir.InsertionPoint) -> ir.Value:
        op = ir.Operation.create("scf.execute_region", results=[d.type], regions=1, ip=ip)
        with ir.InsertionPoint(op.regions[0].blocks.append()):
            scf.YieldOp([d])
        return op.result

    assert not _rewritten(_pipelined(_through(region)))


def _branch(d: ir.Value, ip: ir.InsertionPoint) -> ir.Value:
    """``scf.if %true`` yielding ``d`` or zeros."""
    with ip:
        true = arith.ConstantOp(ir.IntegerType.get_signless(1), 1)
        zero = arith.ConstantOp(
            d.type, ir.DenseElementsAttr.get_splat(d.type, ir.FloatAttr.get_f32(0.0))
        )
        branch = scf.IfOp(true.result, [d.type], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp([d])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([zero.result])
    return branch.results[0]


def test_a_result_carried_by_a_body_scf_if_is_rewritten(ctx) -> None:
    after = _pipelined(_through(lambda d, acc, ip: _branch(d, ip)))
    assert _rewritten(after)


def test_a_result_read_after_its_scf_if_is_left_as_it_is(ctx) -> None:
    # The scf.if's result is negated before the loop yields it: a read of the
    # MMA's result that the rewrite would leave in flight.
    def negated(d: ir.Value, acc: ir.Value, ip: ir.InsertionPoint) -> ir.Value:
        value = _branch(d, ip)
        with ip:
            return arith.NegFOp(value).result

    assert not _rewritten(_pipelined(_through(negated)))


@pytest.mark.parametrize("k_width", [4, 8])
def test_the_operands_k_width_is_kept(ctx, k_width) -> None:
    def retype(module: ir.Module) -> None:
        for load in (_named(module, "load_a"), _named(module, "load_b")):
            layout = ir.RankedTensorType(load.result.type).encoding
            new = edit.with_fields(layout, k_width=k_width)
            edit.substitute_attr(module, layout, new, verify=False)  # verified with both

    started = ops_named(_pipelined(retype), ASYNC)
    assert len(started) == 1
    attrs = started[0].attributes
    if k_width == 8:  # the default: no attribute
        assert "k_width" not in attrs
    else:
        assert ir.IntegerAttr(attrs["k_width"]).value == k_width
