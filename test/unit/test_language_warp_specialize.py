"""``tl.warp_specialize`` and ``tl.mbarrier`` (the front end's warp
specialization, spelled as Gluon spells it).

The kernel is the model's producer/consumer ring, written in Python: a worker
fills a two-slot ring with barrier-tracked copies, the default partition waits
on each slot, sums it and gives it back. It must build to the same IR shape,
equal numpy in the model under several interleavings, and compile for cuda:90.
"""

from __future__ import annotations

import numpy as np
import pytest

import gemm_opt.language as tl
from gemm_opt.lowering.compile import compile_tile_module
from gemm_opt.model.interpreter import run_function

SHARED = tl.SwizzledShared(vec=1, per_phase=1, max_phase=1, order=[1, 0])
ACC = tl.Blocked([1, 4], [8, 4], [4, 1], [1, 0])
BM, BK = 64, 32


def _consumer(ring, ready, empty, tiles):
    def body(i, acc):
        s = i % 2
        tl.mbarrier.wait(ready.index(s), (i // 2) % 2)
        x = ring.index(s).load(ACC)
        tl.mbarrier.arrive(empty.index(s))
        return acc + x.to(tl.float32)

    return tl.for_loop(0, tiles, 1, init=tl.zeros([BM, BK], tl.float32, ACC), body=body)


def _producer(a, m, k, lda, tiles, ring, ready, empty, NBYTES):
    assert tl.num_warps() == 1  # the worker's own warps
    desc = tl.make_tensor_descriptor(
        a, shape=[m, k], strides=[lda, 1], block_shape=[BM, BK], layout=SHARED
    )

    def body(i):
        s = i % 2
        tl.mbarrier.wait(empty.index(s), ((i // 2) % 2) ^ 1)
        tl.mbarrier.expect(ready.index(s), NBYTES)
        tl.async_copy(desc.update(offsets=[0, i * BK]), ring.index(s), barrier=ready.index(s))

    tl.for_loop(0, tiles, 1, body=body)


@tl.kernel
def ws_sum(
    a: tl.ptr(tl.float16),
    c: tl.ptr(tl.float32),
    m: tl.int32,
    k: tl.int32,
    lda: tl.int64,
    ldc: tl.int64,
    tiles: tl.int32,
    REGS: tl.constexpr = None,
):
    ring = tl.allocate_shared(tl.float16, [2, BM, BK], SHARED)
    ready = tl.allocate_mbarrier(2)
    empty = tl.allocate_mbarrier(2)
    for i in range(2):
        tl.mbarrier.init(ready.index(i), count=1)
        tl.mbarrier.init(empty.index(i), count=1)
    total = tl.warp_specialize(
        [
            (_consumer, (ring, ready, empty, tiles)),
            (_producer, (a, m, k, lda, tiles, ring, ready, empty, BM * BK * 2)),
        ],
        [1],
        None if REGS is None else [REGS],
    )
    out = tl.allocate_shared(tl.float32, [BM, BK], SHARED)
    tl.local_store(out, total)
    dc = tl.make_tensor_descriptor(
        c, shape=[m, BK], strides=[ldc, 1], block_shape=[BM, BK], layout=SHARED
    )
    tl.async_store(dc, out)
    tl.async_wait(0)


def test_builds_a_warp_specialize_with_a_one_warp_worker():
    text = ws_sum.build_ir(num_warps=4)
    assert text.count('"tile.warp_specialize"') == 1
    assert text.count('"tile.warp_partition"') == 1
    assert "num_warps = 1 : i32" in text
    assert '"tile.warp_yield"' in text and '"tile.warp_return"' in text


@pytest.mark.parametrize("seed", [None, 0, 1, 2])
@pytest.mark.parametrize("tiles", [1, 4])
def test_model_equals_numpy(tiles, seed):
    rng = np.random.default_rng(tiles)
    a = rng.integers(-8, 9, size=(BM, BK * tiles)).astype(np.float16)
    c = np.full((BM, BK), np.nan, dtype=np.float32)
    text = ws_sum.build_ir(num_warps=4)
    run_function(text, "ws_sum", [a, c, BM, BK * tiles, BK * tiles, BK, tiles], seed=seed)
    np.testing.assert_array_equal(c, a.astype(np.float32).reshape(BM, tiles, BK).sum(axis=1))


def test_compiles_for_cuda90_with_registers_given_back():
    text = ws_sum.build_ir(num_warps=4, target="cuda:90", REGS=24)
    ptx = compile_tile_module(text, "cuda:90").asm["ptx"]
    assert "setmaxnreg.dec.sync.aligned.u32" in ptx
    assert ".local" not in ptx


@tl.kernel
def closure_capture(p: tl.ptr(tl.float16), n: tl.int32):
    def worker(q):
        tl.num_programs(0) + n  # n is the kernel's, not an argument of the worker

    tl.warp_specialize([(lambda: None, ()), (worker, (p,))], [1])


def test_a_worker_using_a_kernel_value_is_an_error():
    with pytest.raises(tl.CompilationError, match="isolated from above"):
        closure_capture.build_ir(num_warps=4)


@tl.kernel
def tensor_arg(p: tl.ptr(tl.float16)):
    t = tl.zeros([32, 32], tl.float32, ACC)

    def worker(x):
        pass

    tl.warp_specialize([(lambda: None, ()), (worker, (t,))], [1])


def test_a_register_tensor_argument_is_an_error():
    with pytest.raises(tl.CompilationError, match="takes a register tensor"):
        tensor_arg.build_ir(num_warps=4)


@tl.kernel
def bad_counts(p: tl.ptr(tl.float16)):
    tl.warp_specialize([(lambda: None, ()), (lambda q: None, (p,))], [1, 2])


def test_warp_counts_must_match_the_workers():
    with pytest.raises(tl.CompilationError, match="got 1 workers but 2 warp counts"):
        bad_counts.build_ir(num_warps=4)
