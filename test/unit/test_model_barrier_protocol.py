"""The barrier protocol in the executable model (``gemm_opt.model.barriers``):
phase parity, transaction bytes, predicated-off tracked copies, landing order
across phases and arrival counts.

Each kernel is built op by op with the dialect's builders: one warp copies
8x16 f16 tiles (256 bytes) of a global array ``a`` into slots of a shared
buffer, tracked by barriers, and stores what it reads back into ``out``. A
correct protocol must give ``out == a``; a broken one must give the exact
report (a race naming the read, a deadlock naming the barrier, its phase and
what is missing), never a silent result or a hang. Op ``n`` of a kernel is at
location ``B:n:1``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from support import tile_build as tb

from gemm_opt.core.ext_compat import arith, ir
from gemm_opt.dialect import barrier, make_context, tile
from gemm_opt.model.interpreter import ModelError, run_function

ROWS, COLS = 8, 16
TILE_BYTES = ROWS * COLS * 2
TILES = 2


class Kernel:
    """Builds one kernel ``k(a, out: !tile.ptr<f16>)`` op by op."""

    def __init__(self, bars: int = 1, count: int = 1) -> None:
        self.ops = 0
        self.f16 = ir.F16Type.get()
        self.i32 = ir.IntegerType.get_signless(32)
        ptr = tb.ptr_type(self.f16)
        self.k = tb.kernel([ptr, ptr], num_warps=1)
        self.a, self.out = self.k.args
        shared = tile.SwizzledSharedAttr.build(vec=1, per_phase=1, max_phase=1, order=[1, 0])
        self.block = tb.block_type([ROWS, COLS], self.f16, shared)
        ring = tb.block_type([TILES, ROWS, COLS], self.f16, shared)
        self.regs = ir.RankedTensorType.get(
            [ROWS, COLS],
            self.f16,
            tile.BlockedAttr.build(
                size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[1, 1], order=[1, 0]
            ),
        )
        with self.at():
            width = [tb.const(ROWS), tb.const(COLS * TILES)]
            strides = [tb.const(COLS * TILES, 64), tb.const(1, 64)]
            self.desc = tile.MakeTensorDescriptorOp(
                self.a, width, strides, tb.desc_type(self.block)
            ).result
            self.buf = tile.LocalAllocOp(tb.shared_type(ring)).result
            ring_t = barrier.MBarrierRingType.get(ir.IntegerAttr.get(self.i32, bars))
            bar_t = tile.MBarrierType.get(ir.TypeAttr.get(ir.IntegerType.get_signless(64)))
            alloc = barrier.BarrierAllocOp(ring_t).result
            self.bars = [
                barrier.BarrierIndexOp(alloc, tb.const(i), bar_t).result for i in range(bars)
            ]
        for b in self.bars:
            with self.at():
                init = barrier.BarrierInitOp(b)
                init.operation.attributes["count"] = tb.i32_attr(count)

    def at(self) -> ir.Location:
        """The location of the next op (and the insertion point of the kernel)."""
        self.ops += 1
        return _Here(self)

    def flag(self, value: bool) -> ir.Value:
        return arith.ConstantOp(ir.IntegerType.get_signless(1), int(value)).result

    def expect(self, bar: int, nbytes: int, pred: bool | None = None) -> None:
        with self.at():
            op = barrier.BarrierExpectOp(
                self.bars[bar], pred=None if pred is None else self.flag(pred)
            )
            op.operation.attributes["bytes"] = tb.i32_attr(nbytes)

    def arrive(self, bar: int, count: int = 1) -> None:
        with self.at():
            op = barrier.BarrierArriveOp(self.bars[bar])
            op.operation.attributes["count"] = tb.i32_attr(count)

    def copy(
        self,
        tile_index: int,
        slot: int,
        bar: int,
        pred: bool | None = None,
        desc_pred: bool | None = None,
    ) -> None:
        """Copy tile ``tile_index`` of ``a`` into ``slot``, tracked by barrier ``bar``
        (``pred``: the copy's operand; ``desc_pred``: its descriptor's predicate)."""
        with self.at():
            desc = tile.UpdateTensorDescriptorOp(
                self.desc,
                [tb.const(0), tb.const(COLS * tile_index)],
                [],
                self.desc.type,
                pred=None if desc_pred is None else self.flag(desc_pred),
            ).result
            dest = tile.MemdescIndexOp(self.buf, tb.const(slot), tb.shared_type(self.block)).result
            tile.AsyncTDMCopyGlobalToLocalOp(
                desc, dest, pred=None if pred is None else self.flag(pred), barrier=self.bars[bar]
            )

    def wait(self, bar: int, parity: int) -> None:
        with self.at():
            barrier.BarrierWaitOp(self.bars[bar], tb.const(parity))

    def read(self, slot: int, into: int) -> None:
        """Load ``slot`` and store it to tile ``into`` of ``out``."""
        with self.at():
            src = tile.MemdescIndexOp(self.buf, tb.const(slot), tb.shared_type(self.block)).result
            value = tile.LocalLoadOp(src, self.regs).result
            tile.StoreBlockOp(
                self.out,
                [tb.const(ROWS), tb.const(COLS * TILES)],
                [tb.const(COLS * TILES, 64), tb.const(1, 64)],
                [tb.const(0), tb.const(COLS * into)],
                value,
            )


class _Here:
    """``with kernel.at():`` builds at the kernel's insertion point and location."""

    def __init__(self, kernel: Kernel) -> None:
        self.loc = ir.Location.file("B", kernel.ops, 1)
        self.ip = kernel.k.ip

    def __enter__(self) -> None:
        self.loc.__enter__()
        self.ip.__enter__()

    def __exit__(self, *exc: object) -> None:
        self.ip.__exit__(*exc)
        self.loc.__exit__(*exc)


def run(build: Callable[[Kernel], None], bars: int = 1, count: int = 1) -> np.ndarray:
    """Build a kernel with ``bars`` barriers of ``count`` arrivals, run it;
    ``out`` (NaN where nothing was stored)."""
    with make_context(), ir.Location.unknown():
        kernel = Kernel(bars, count)
        build(kernel)
        assert kernel.k.module.operation.verify()
        a = np.arange(ROWS * COLS * TILES, dtype=np.float16).reshape(ROWS, COLS * TILES)
        out = np.full_like(a, np.nan)
        run_function(kernel.k.module, "k", [a, out], arg_names=["a", "out"])
        return out


A = np.arange(ROWS * COLS * TILES, dtype=np.float16).reshape(ROWS, COLS * TILES)


def tile_of(i: int) -> np.ndarray:
    return A[:, COLS * i : COLS * (i + 1)]


def deadlock(wait: int, phase: int, parity: int, bar: int, arrivals: str, nbytes: str) -> str:
    return (
        f"deadlock: 'tile.barrier_wait' at B:{wait}:1 in program (0, 0, 0) waits for phase "
        f"{phase} (parity {parity}) of the barrier {bar} of the barrier_alloc at B:1:1, which "
        f"can never complete: {arrivals}, {nbytes}"
    )


def race(read: int, slot: int, copy: int) -> str:
    return (
        f"read of shared memory still being written by an in-flight TDM copy: "
        f"'tile.local_load' at B:{read}:1 in program (0, 0, 0) reads slot [{slot}] of the "
        "local_alloc at B:1:1 while 1 in-flight TDM instruction(s) write it "
        f"('tile.async_tdm_copy_global_to_local' at B:{copy}:1 issued by warp 0); no "
        "tile.barrier_wait has completed the barrier phase the copy is tracked by"
    )


# ---- a correct protocol ---------------------------------------------------------------------


def test_expect_copy_wait_read() -> None:
    def build(k: Kernel) -> None:
        k.expect(0, TILE_BYTES)  # B:3
        k.copy(0, 0, 0)
        k.wait(0, 0)
        k.read(0, 0)

    out = run(build)
    np.testing.assert_array_equal(out[:, :COLS], tile_of(0))
    assert np.isnan(out[:, COLS:].astype(np.float32)).all()


def test_two_phases_of_one_barrier_alternate_parity() -> None:
    def build(k: Kernel) -> None:
        for i in range(TILES):
            k.expect(0, TILE_BYTES)
            k.copy(i, i, 0)
            k.wait(0, i % 2)
            k.read(i, i)

    np.testing.assert_array_equal(run(build), A)


# ---- phase parity -----------------------------------------------------------------------------


def test_waiting_on_the_wrong_parity_returns_early_and_the_read_races() -> None:
    """Parity 1 in phase 0 names the phase before it, complete: the wait does
    not wait, and the copy is still in flight when its slot is read."""

    def build(k: Kernel) -> None:
        k.expect(0, TILE_BYTES)  # B:3
        k.copy(0, 0, 0)  # B:4
        k.wait(0, 1)  # B:5
        k.read(0, 0)  # B:6

    with pytest.raises(ModelError) as e:
        run(build)
    assert str(e.value) == race(6, 0, 4)


def test_waiting_on_the_next_phase_is_a_deadlock() -> None:
    def build(k: Kernel) -> None:
        k.expect(0, TILE_BYTES)
        k.copy(0, 0, 0)
        k.wait(0, 0)  # B:5: phase 0 completes
        k.wait(0, 1)  # B:6: phase 1 has no arrival and no copy

    with pytest.raises(ModelError) as e:
        run(build)
    assert str(e.value) == deadlock(
        6,
        1,
        1,
        0,
        "1 of 1 arrivals missing",
        "0 announced bytes not delivered by any copy in flight",
    )


def test_a_second_wait_on_a_completed_phase_returns() -> None:
    def build(k: Kernel) -> None:
        k.expect(0, TILE_BYTES)
        k.copy(0, 0, 0)
        k.wait(0, 0)
        k.wait(0, 0)
        k.read(0, 0)

    np.testing.assert_array_equal(run(build)[:, :COLS], tile_of(0))


# ---- transaction bytes ----------------------------------------------------------------------


def test_bytes_under_delivered_are_a_deadlock() -> None:
    """The expect announces one byte more than the copy brings."""

    def build(k: Kernel) -> None:
        k.expect(0, TILE_BYTES + 1)
        k.copy(0, 0, 0)
        k.wait(0, 0)  # B:5

    with pytest.raises(ModelError) as e:
        run(build)
    assert str(e.value) == deadlock(
        5,
        0,
        0,
        0,
        "0 of 1 arrivals missing",
        "1 announced bytes not delivered by any copy in flight",
    )


def test_bytes_over_delivered_are_a_deadlock() -> None:
    """The copy brings one byte more than announced: the count goes below zero
    and the phase never completes."""

    def build(k: Kernel) -> None:
        k.expect(0, TILE_BYTES - 1)
        k.copy(0, 0, 0)
        k.wait(0, 0)  # B:5

    with pytest.raises(ModelError) as e:
        run(build)
    assert str(e.value) == deadlock(
        5, 0, 0, 0, "0 of 1 arrivals missing", "1 bytes delivered beyond those announced"
    )


def test_bytes_delivered_before_the_expect_count() -> None:
    """A copy may land before its expect arrives: the phase completes at the expect."""

    def build(k: Kernel) -> None:
        k.copy(0, 0, 0)
        k.expect(0, TILE_BYTES)
        k.wait(0, 0)
        k.read(0, 0)

    np.testing.assert_array_equal(run(build)[:, :COLS], tile_of(0))


def test_two_copies_on_one_expect_of_both() -> None:
    def build(k: Kernel) -> None:
        k.expect(0, 2 * TILE_BYTES)
        k.copy(0, 0, 0)
        k.copy(1, 1, 0)
        k.wait(0, 0)
        k.read(0, 0)
        k.read(1, 1)

    np.testing.assert_array_equal(run(build), A)


# ---- predicated-off copies and expects ------------------------------------------------------------


@pytest.mark.parametrize("off", ["pred", "desc_pred"])
def test_a_predicated_off_tracked_copy_delivers_nothing(off: str) -> None:
    """Off by the copy's own pred or by its descriptor's: no bytes arrive."""

    def build(k: Kernel) -> None:
        k.expect(0, TILE_BYTES)
        k.copy(0, 0, 0, **{off: False})
        k.wait(0, 0)  # B:5

    with pytest.raises(ModelError) as e:
        run(build)
    assert str(e.value) == deadlock(
        5,
        0,
        0,
        0,
        "0 of 1 arrivals missing",
        f"{TILE_BYTES} announced bytes not delivered by any copy in flight",
    )


def test_a_predicated_on_tracked_copy_delivers() -> None:
    def build(k: Kernel) -> None:
        k.expect(0, TILE_BYTES)
        k.copy(0, 0, 0, pred=True, desc_pred=True)
        k.wait(0, 0)
        k.read(0, 0)

    np.testing.assert_array_equal(run(build)[:, :COLS], tile_of(0))


def test_a_predicated_off_expect_neither_arrives_nor_announces() -> None:
    def build(k: Kernel) -> None:
        k.expect(0, TILE_BYTES, pred=False)
        k.copy(0, 0, 0)
        k.wait(0, 0)  # B:5

    with pytest.raises(ModelError) as e:
        run(build)
    # The copy's bytes landed with nothing announced: the count is below zero.
    assert str(e.value) == deadlock(
        5,
        0,
        0,
        0,
        "1 of 1 arrivals missing",
        f"{TILE_BYTES} bytes delivered beyond those announced",
    )


# ---- landing order across phases ---------------------------------------------------------------


def test_a_copy_beyond_the_phase_lands_in_the_next_one() -> None:
    """Two copies on one barrier, bytes announced for one: the first completes
    phase 0, the second is still in flight (a read of it races) and completes
    phase 1 once its expect arrives."""

    def build(k: Kernel) -> None:
        k.expect(0, TILE_BYTES)  # B:3
        k.copy(0, 0, 0)  # B:4
        k.copy(1, 1, 0)  # B:5
        k.wait(0, 0)  # B:6
        k.read(0, 0)  # B:7
        k.read(1, 1)  # B:8

    with pytest.raises(ModelError) as e:
        run(build)
    assert str(e.value) == race(8, 1, 5)

    def fixed(k: Kernel) -> None:
        k.expect(0, TILE_BYTES)
        k.copy(0, 0, 0)
        k.copy(1, 1, 0)
        k.wait(0, 0)
        k.read(0, 0)
        k.expect(0, TILE_BYTES)
        k.wait(0, 1)
        k.read(1, 1)

    np.testing.assert_array_equal(run(fixed), A)


def test_each_barrier_lands_only_its_own_copies() -> None:
    def build(k: Kernel) -> None:
        k.expect(0, TILE_BYTES)  # B:4
        k.copy(0, 0, 0)  # B:5
        k.expect(1, TILE_BYTES)  # B:6
        k.copy(1, 1, 1)  # B:7
        k.wait(0, 0)  # B:8
        k.read(0, 0)  # B:9
        k.read(1, 1)  # B:10

    with pytest.raises(ModelError) as e:
        run(build, bars=2)
    assert str(e.value) == race(10, 1, 7)


# ---- arrival counts -----------------------------------------------------------------------------


def test_a_missing_arrival_is_a_deadlock() -> None:
    def build(k: Kernel) -> None:
        k.expect(0, TILE_BYTES)
        k.copy(0, 0, 0)
        k.wait(0, 0)  # B:5

    with pytest.raises(ModelError) as e:
        run(build, count=2)
    assert str(e.value) == deadlock(
        5,
        0,
        0,
        0,
        "1 of 2 arrivals missing",
        "0 announced bytes not delivered by any copy in flight",
    )


def test_the_last_arrival_completes_the_phase() -> None:
    def build(k: Kernel) -> None:
        k.expect(0, TILE_BYTES)
        k.copy(0, 0, 0)
        k.arrive(0)
        k.wait(0, 0)
        k.read(0, 0)

    np.testing.assert_array_equal(run(build, count=2)[:, :COLS], tile_of(0))


def test_more_arrivals_than_the_count_are_reported() -> None:
    def build(k: Kernel) -> None:
        k.expect(0, TILE_BYTES)
        k.arrive(0, count=2)  # B:4

    with pytest.raises(ModelError) as e:
        run(build, count=2)
    assert str(e.value) == (
        "'tile.barrier_arrive' at B:4:1: barrier 0 of the barrier_alloc at B:1:1 gets more "
        "arrivals than its count (2) in phase 0"
    )


def test_arrivals_complete_a_phase_and_the_next_starts_with_the_count() -> None:
    def build(k: Kernel) -> None:
        k.arrive(0, count=2)
        k.wait(0, 0)
        k.arrive(0)
        k.wait(0, 1)  # B:6: phase 1 still needs one arrival

    with pytest.raises(ModelError) as e:
        run(build, count=2)
    assert str(e.value) == deadlock(
        6,
        1,
        1,
        0,
        "1 of 2 arrivals missing",
        "0 announced bytes not delivered by any copy in flight",
    )


# ---- predicates and run-time indices ------------------------------------------------------


def test_a_predicated_off_arrive_does_not_arrive() -> None:
    def build(k: Kernel) -> None:
        with k.at():
            barrier.BarrierArriveOp(k.bars[0], pred=k.flag(False))  # B:3
        k.wait(0, 0)  # B:4

    with pytest.raises(ModelError) as e:
        run(build)
    assert str(e.value) == deadlock(
        4,
        0,
        0,
        0,
        "1 of 1 arrivals missing",
        "0 announced bytes not delivered by any copy in flight",
    )


def test_a_predicated_on_arrive_arrives() -> None:
    def build(k: Kernel) -> None:
        with k.at():
            barrier.BarrierArriveOp(k.bars[0], pred=k.flag(True))
        k.wait(0, 0)

    assert np.isnan(run(build).astype(np.float32)).all()  # the wait returns


def test_a_predicated_off_wait_does_not_wait() -> None:
    """Phase 0 never completes; a wait predicated off returns at once (and the
    read after it races the copy it did not wait for)."""

    def build(k: Kernel) -> None:
        k.expect(0, TILE_BYTES)
        k.copy(0, 0, 0)  # B:4
        with k.at():
            barrier.BarrierWaitOp(k.bars[0], tb.const(0), pred=k.flag(False))
        k.read(0, 0)  # B:6

    with pytest.raises(ModelError) as e:
        run(build, count=2)
    assert str(e.value) == race(6, 0, 4)


@pytest.mark.parametrize("index", [-1, 2])
def test_a_run_time_ring_index_out_of_range_is_reported(index: int) -> None:
    """The verifier checks constant indices; one computed at run time (here
    ``warp_id + index``, warp 0) is checked by the model: 0 and 1 of 2 only."""

    def build(k: Kernel) -> None:
        alloc = k.bars[0].owner.operands[0]
        with k.at():  # B:4 (after the two inits)
            i = arith.AddIOp(tile.WarpIdOp().result, tb.const(index)).result
            barrier.BarrierIndexOp(alloc, i, k.bars[0].type)

    with pytest.raises(ModelError) as e:
        run(build, bars=2)
    assert str(e.value) == (
        f"'tile.barrier_index' at B:4:1: index {index} out of range for 2 barriers"
    )
