"""The model's report of a read racing in-flight TDM copies (found by
``benchmarks/mutation.py`` in ``gemm_opt.model.races``): how many copies it
counts, the first four it lists (then "..."), and the fix it names for copies
an ``async_tdm_wait`` would retire and for copies a barrier tracks.
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
