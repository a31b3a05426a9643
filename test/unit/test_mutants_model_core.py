"""Per-warp values merged after warp-divergent control flow (found by
``benchmarks/mutation.py`` in ``gemm_opt.model.core``).

In a two-warp program, warp 0 takes one branch of an ``scf.if`` on the warp
id and warp 1 the other; the descriptor each yields stays its own: a TDM
copy through the merged descriptor moves warp 0's share of the block (the
first 32 of 64 elements) through warp 0's descriptor and warp 1's share
through warp 1's (bounds included, on either side). Values that cannot be merged per warp (descriptors or
pointers of different tensors) are a ``ModelError``.
"""

from __future__ import annotations

import numpy as np
import pytest

import gemm_opt.language as tl
from gemm_opt.model.interpreter import ModelError, run_function

LANES = tl.SwizzledShared(vec=1, per_phase=1, max_phase=1, order=[0])
SRC = np.arange(128, dtype=np.int32)


def _copy_out(desc, dst) -> None:
    buf = tl.allocate_shared(tl.int32, [64], LANES)
    tl.async_copy(desc, buf)
    tl.async_wait(0)
    tl.store_block(dst, [64], [1], [0], tl.local_load(buf, tl.Blocked([1], [32], [2], [0])))


@tl.kernel
def per_warp_descriptor(
    src: tl.ptr(tl.int32), dst: tl.ptr(tl.int32), SHIFT: tl.constexpr, BOUND: tl.constexpr
):
    d = tl.make_tensor_descriptor(src, shape=[128], strides=[1], block_shape=[64], layout=LANES)
    if BOUND:
        first = lambda: d.update(offsets=[SHIFT], bounds=[BOUND])  # noqa: E731
    else:
        first = lambda: d.update(offsets=[SHIFT])  # noqa: E731
    merged = tl.if_(tl.warp_id() == 0, first, lambda: d.update(offsets=[0]))
    _copy_out(merged, dst)


@tl.kernel
def bound_on_warp_1(src: tl.ptr(tl.int32), dst: tl.ptr(tl.int32)):
    d = tl.make_tensor_descriptor(src, shape=[128], strides=[1], block_shape=[64], layout=LANES)
    second = lambda: d.update(offsets=[0], bounds=[40])  # noqa: E731
    _copy_out(tl.if_(tl.warp_id() == 0, lambda: d.update(offsets=[0]), second), dst)


@tl.kernel
def two_tensors(src: tl.ptr(tl.int32), dst: tl.ptr(tl.int32)):
    a = tl.make_tensor_descriptor(src, shape=[128], strides=[1], block_shape=[64], layout=LANES)
    b = tl.make_tensor_descriptor(dst, shape=[64], strides=[1], block_shape=[64], layout=LANES)
    _copy_out(tl.if_(tl.warp_id() == 0, lambda: a, lambda: b), dst)


@tl.kernel
def two_pointers(src: tl.ptr(tl.int32), dst: tl.ptr(tl.int32)):
    p = tl.if_(tl.warp_id() == 0, lambda: src, lambda: dst)
    x = tl.load_block(p, [64], [1], [0], [64], tl.Blocked([1], [32], [2], [0]))
    tl.store_block(dst, [64], [1], [0], x)


def _run(kernel, **constexprs) -> np.ndarray:
    dst = np.full(64, -1, np.int32)
    run_function(kernel.build_ir(num_warps=2, **constexprs), kernel.__name__, [SRC.copy(), dst])
    return dst


@pytest.mark.parametrize("shift", [0, 64])
def test_each_warp_copies_through_its_own_descriptor(shift: int) -> None:
    want = np.concatenate([np.arange(shift, shift + 32), np.arange(32, 64)])
    np.testing.assert_array_equal(_run(per_warp_descriptor, SHIFT=shift, BOUND=0), want)


def test_a_bound_on_one_warps_descriptor_only() -> None:
    """Warp 0's descriptor ends at element 20 (zeros after it), warp 1's at the shape."""
    want = np.concatenate([np.arange(20), np.zeros(12), np.arange(32, 64)])
    np.testing.assert_array_equal(_run(per_warp_descriptor, SHIFT=0, BOUND=20), want)


def test_a_bound_on_the_other_warps_descriptor_only() -> None:
    """Warp 1's descriptor ends at element 40, warp 0's at the shape."""
    want = np.concatenate([np.arange(40), np.zeros(24)])
    np.testing.assert_array_equal(_run(bound_on_warp_1), want)


def test_descriptors_of_two_tensors_do_not_merge() -> None:
    with pytest.raises(ModelError, match="warps hold descriptors of different tensors"):
        _run(two_tensors)


def test_pointers_to_two_arrays_do_not_merge() -> None:
    with pytest.raises(ModelError, match="warps hold pointers to different arrays"):
        _run(two_pointers)
