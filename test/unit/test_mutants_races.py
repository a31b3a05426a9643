"""The model's race reports (found by ``benchmarks/mutation.py`` in
``gemm_opt.model.races``): for a read racing in-flight TDM copies, how many
copies it counts, the first four it lists (then "...") and the fix it names
for copies an ``async_tdm_wait`` would retire and for copies a barrier tracks;
for a write racing in-flight TDM stores or async MMAs, exactly the ones that
read the written elements (one warp's share of a copy), not those reading
another buffer or another slot.
"""

from __future__ import annotations

import numpy as np
import pytest

import gemm_opt.language as tl
from gemm_opt.model.interpreter import ModelError, run_function

LANES = tl.SwizzledShared(vec=1, per_phase=1, max_phase=1, order=[0])
COPY = "'tile.async_tdm_copy_global_to_local' at "
WAIT_FIX = "the preceding tile.async_tdm_wait leaves too many copies outstanding"
BARRIER_FIX = "no tile.barrier_wait has completed the barrier phase the copy is tracked by"


@tl.kernel
def copies_then_read(
    src: tl.ptr(tl.int32), dst: tl.ptr(tl.int32), N: tl.constexpr, TRACKED: tl.constexpr
):
    desc = tl.make_tensor_descriptor(src, shape=[32], strides=[1], block_shape=[32], layout=LANES)
    buf = tl.allocate_shared(tl.int32, [32], LANES)
    for _ in range(N):
        tl.async_copy(desc, buf)
    if TRACKED:
        bars = tl.allocate_mbarrier(1)
        tl.mbarrier.init(bars.index(0), count=1)
        tl.mbarrier.expect(bars.index(0), 128)
        tl.async_copy(desc, buf, barrier=bars.index(0))
    tl.store_block(dst, [32], [1], [0], tl.local_load(buf, tl.Blocked([1], [32], [1], [0])))


def _report(n: int, tracked: bool) -> str:
    text = copies_then_read.build_ir(num_warps=1, N=n, TRACKED=tracked)
    args = [np.arange(32, dtype=np.int32), np.zeros(32, np.int32)]
    with pytest.raises(ModelError) as e:
        run_function(text, "copies_then_read", args)
    return str(e.value)


@pytest.mark.parametrize(("n", "more"), [(1, False), (4, False), (5, True)])
def test_a_read_lists_the_first_four_copies_in_flight(n: int, more: bool) -> None:
    msg = _report(n, tracked=False)
    assert f"while {n} in-flight TDM instruction(s) write it (" in msg
    assert msg.count(COPY) == min(n, 4)
    assert msg.endswith((", ...); " if more else "0); ") + WAIT_FIX)


def test_a_barrier_tracked_copy_in_flight_names_the_barrier_wait() -> None:
    msg = _report(1, tracked=True)
    assert "while 2 in-flight TDM instruction(s) write it (" in msg
    assert msg.endswith(BARRIER_FIX)


# ---- which in-flight ops a report names ----------------------------------------------------

#: ``@k(%x, %y)`` of 4 warps on gfx1250: a two-slot ring and a buffer ``%other``
#: of the slot's shape, all written with zeros first; ``%slot`` is ring slot 1.
#: Each case adds in-flight ops (named by their ``loc``) and the access that
#: races them.
NAMED_HEAD = """
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{instr_shape = array<i64: 16, 16, 32>, transposed = true, version = 3 : i64, warps_per_cta = array<i64: 4, 1>}>
!ring = !tile.shared<tensor<2x64x32xf16, #s>>
!slot = !tile.shared<tensor<64x32xf16, #s>>
!bbuf = !tile.shared<tensor<32x64xf16, #s>>
!d = !tile.tensor_desc<tensor<64x32xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250", tile.threads_per_warp = 32 : i32} {
  func.func @k(%x: !tile.ptr<f16>, %y: !tile.ptr<f16>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    %c64 = arith.constant 64 : i32
    %l32 = arith.constant 32 : i64
    %one = arith.constant 1 : i64
    %dx = "tile.make_tensor_descriptor"(%x, %c64, %c32, %l32, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !d
    %dy = "tile.make_tensor_descriptor"(%y, %c64, %c32, %l32, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !d
    %z = arith.constant dense<0.0> : tensor<2x64x32xf16>
    %zs = arith.constant dense<0.0> : tensor<64x32xf16>
    %zb = arith.constant dense<0.0> : tensor<32x64xf16>
    %acc = arith.constant dense<0.0> : !acc
    %ring = "tile.local_alloc"() : () -> !ring
    %other = "tile.local_alloc"() : () -> !slot
    %b = "tile.local_alloc"() : () -> !bbuf
    "tile.local_store"(%z, %ring) : (tensor<2x64x32xf16>, !ring) -> ()
    "tile.local_store"(%zs, %other) : (tensor<64x32xf16>, !slot) -> ()
    "tile.local_store"(%zb, %b) : (tensor<32x64xf16>, !bbuf) -> ()
    %slot0 = "tile.memdesc_index"(%ring, %c0) : (!ring, i32) -> !slot
    %slot = "tile.memdesc_index"(%ring, %c1) : (!ring, i32) -> !slot
"""
NAMED_TAIL = """
    return
  }
}
"""
STORE_OP = "'tile.async_tdm_copy_local_to_global' at "
MMA_OP = "'tile.async_wmma' at "


def _race(body: str) -> str:
    x = np.ones((64, 32), np.float16)
    y = np.zeros((64, 32), np.float16)
    with pytest.raises(ModelError) as e:
        run_function(NAMED_HEAD + body + NAMED_TAIL, "k", {"x": x, "y": y})
    return str(e.value)


def test_a_store_race_lists_the_stores_reading_the_written_elements_only() -> None:
    """One TDM store reads slot 1, another ``%other``; each warp's share of a
    TDM copy into slot 1 races the first (it reads more than the share) only."""
    msg = _race(
        '"tile.async_tdm_copy_local_to_global"(%dy, %slot) : (!d, !slot) -> () loc("ONE":1:1)\n'
        '"tile.async_tdm_copy_local_to_global"(%dy, %other) : (!d, !slot) -> () loc("OTHER":1:1)\n'
        '"tile.async_tdm_copy_global_to_local"(%dx, %slot) '
        "{operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!d, !slot) -> ()\n"
    )
    assert msg.startswith("write of shared memory an in-flight TDM store reads")
    # the one store, in each warp's queue
    assert f"while 4 in-flight TDM store instruction(s) read it ({STORE_OP}ONE:1:1); " in msg


def test_an_mma_race_lists_the_mmas_reading_the_written_elements_only() -> None:
    """One MMA reads slot 1 and ``%b``, another slot 0 and ``%b``; each warp's
    share of a TDM copy into slot 1 races the first only."""
    msg = _race(
        '%r = "tile.async_wmma"(%slot, %b, %acc) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} '
        ': (!slot, !bbuf, !acc) -> !acc loc("ONE":1:1)\n'
        '%r0 = "tile.async_wmma"(%slot0, %b, %acc) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} '
        ': (!slot, !bbuf, !acc) -> !acc loc("ZERO":1:1)\n'
        '"tile.async_tdm_copy_global_to_local"(%dx, %slot) '
        "{operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!d, !slot) -> ()\n"
    )
    assert msg.startswith("write of shared memory an in-flight MMA reads")
    assert f"while 1 in-flight async MMA(s) read it ({MMA_OP}ONE:1:1); " in msg
