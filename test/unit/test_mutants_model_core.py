"""Per-warp values merged after warp-divergent control flow (found by
``benchmarks/mutation.py`` in ``gemm_opt.model.core``).

In a two-warp program, warp 0 takes one branch of an ``scf.if`` on the warp
id and warp 1 the other; the descriptor each yields stays its own: a TDM
copy through the merged descriptor moves warp 0's share of the block (the
first 32 of 64 elements) through warp 0's descriptor and warp 1's share
through warp 1's (bounds included, on either side). Values that cannot be merged per warp (descriptors or
pointers of different tensors) are a ``ModelError``.

The helpers every op uses, at their edges: a warp-uniform value read over
the executing warps only, a program-level op under all warps or none, a
tensor after divergent control flow equal on every warp (NaN equal to NaN),
and shared views merged per warp of one buffer, slot depth and transpose.
"""

from __future__ import annotations

import numpy as np
import pytest

import gemm_opt.language as tl
from gemm_opt.model.core import (
    merge_region,
    program_level,
    select_per_warp,
    uniform,
    uniform_rows,
)
from gemm_opt.model.interpreter import ModelError, run_function
from gemm_opt.model.values import Elem, SharedBuffer, SharedView

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


# ---- the per-warp helpers at their edges -------------------------------------------------

T, F = True, False
I32 = Elem("i32", True, 32, np.dtype(np.int64), np.dtype(np.int32))


def test_a_uniform_value_is_read_over_the_executing_warps_only() -> None:
    # the warps that do not execute may hold anything
    assert uniform(np.array([5, 7, 5]), np.array([T, F, T]), "x", "here") == 5
    assert uniform(np.array([1, 2]), np.array([F, T]), "x", "here") == 2  # one warp executes
    with pytest.raises(ModelError, match=r"^here: x differs across warps \(\[1, 1, 2\]\)"):
        uniform(np.array([1, 1, 2]), np.array([T, T, T]), "x", "here")


def test_uniform_rows_are_read_over_the_executing_warps_only() -> None:
    rows = np.array([[1, 2], [3, 4], [1, 2]])
    assert uniform_rows(rows, np.array([T, F, T]), "x", "here") == (1, 2)
    assert uniform_rows(rows, np.array([F, T, F]), "x", "here") == (3, 4)
    with pytest.raises(ModelError, match=r"^here: x differs across warps"):
        uniform_rows(np.array([[1, 2], [1, 2], [1, 3]]), np.array([T, T, T]), "x", "here")


def test_a_program_level_op_runs_with_all_warps_or_none() -> None:
    assert program_level(np.array([T, T]), "here") is True
    assert program_level(np.array([F, F]), "here") is False
    for some in ([T, F], [F, T]):
        with pytest.raises(
            ModelError, match=r"^here: barrier ops and TDM stores are the program's"
        ):
            program_level(np.array(some), "here")


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_a_tensor_after_divergent_control_flow_must_be_the_same_on_every_warp(dtype) -> None:
    """Tensors are program-level: a branch only some warps ran may yield one only
    when it equals the other side's (NaN equal to NaN for floats)."""
    sel, outer = np.array([T, F]), np.array([T, T])
    old = np.array([np.nan, 1.0] if dtype is np.float32 else [0, 1], dtype=dtype)
    same = old.copy()
    assert merge_region(sel, outer, same, old, True, "here") is same
    assert merge_region(sel, outer, old, old, True, "here") is old
    for other in (np.array([2, 1], dtype=dtype), np.array([[0, 1]], dtype=dtype)):
        with pytest.raises(ModelError, match=r"^here: warp-divergent control flow yields a tensor"):
            merge_region(sel, outer, other, old, True, "here")


def test_shared_views_merge_per_warp_of_one_buffer_only() -> None:
    buf = SharedBuffer("ring", (2, 4), I32)
    sel = np.array([T, F])
    new = SharedView(buf, np.array([[1], [1]]))
    old = SharedView(buf, np.array([[0], [0]]))
    merged = select_per_warp(sel, new, old, "here")
    assert merged.buffer is buf and merged.perm is None
    np.testing.assert_array_equal(merged.prefix, [[1], [0]])
    unlike = [
        SharedView(SharedBuffer("other", (2, 4), I32), np.array([[0], [0]])),
        SharedView(buf, np.zeros((2, 0), np.int64)),  # the whole ring, not a slot
        SharedView(buf, np.array([[0], [0]]), perm=(0,)),
    ]
    for o in unlike:
        with pytest.raises(
            ModelError, match=r"^here: warps hold views of different shared buffers"
        ):
            select_per_warp(sel, new, o, "here")
