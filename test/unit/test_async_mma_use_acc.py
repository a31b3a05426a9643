"""``tile.async_wmma``'s ``use_acc`` operand end to end, on a one-tile MMA
written with the front end (``tl.async_wmma(..., use_acc=...)``):

* the model computes ``a @ b`` when it is false, whatever the accumulator
  holds (NaN included), and ``a @ b + c`` when it is true or left out, for a
  Python bool and for a value known only at run time;
* a per-warp ``use_acc`` is a model error (the MMA is one program-wide op);
* with ``use_acc`` false the MMA still reads its buffers: a copy into one
  before the wait is the race it always was;
* cuda:90 passes it to wgmma as ``useC``; gfx1250 (a synchronous dot)
  selects zeros for the accumulator, and both compile to machine code.
"""

from __future__ import annotations

import numpy as np
import pytest

import gemm_opt.language as tl
from gemm_opt.dialect.edit import ops_named
from gemm_opt.model.interpreter import ModelError, run_function

_SA = tl.PaddedShared(interval=32, amount=8, order=[1, 0])
_SB = tl.PaddedShared(interval=64, amount=8, order=[1, 0])
_ACC = tl.WmmaLayout(version=3, warps_per_cta=[4, 1], instr_shape=[16, 16, 32], transposed=True)


@tl.kernel
def mma_tile(
    a: tl.ptr(tl.float16),
    b: tl.ptr(tl.float16),
    c: tl.ptr(tl.float32),
    M: tl.int32,
    USE: tl.constexpr = "omitted",
    INIT: tl.constexpr = 0.0,
    RACE: tl.constexpr = False,
):
    a_desc = tl.make_tensor_descriptor(
        a, shape=[64, 32], strides=[32, 1], block_shape=[64, 32], layout=_SA
    )
    b_desc = tl.make_tensor_descriptor(
        b, shape=[32, 64], strides=[64, 1], block_shape=[32, 64], layout=_SB
    )
    a_buf = tl.allocate_shared(tl.float16, [64, 32], _SA)
    b_buf = tl.allocate_shared(tl.float16, [32, 64], _SB)
    tl.async_copy(a_desc, a_buf)
    tl.async_copy(b_desc, b_buf)
    tl.async_wait(0)
    acc = tl.full([64, 64], INIT, tl.float32, _ACC)
    if USE == "omitted":
        d = tl.async_wmma(a_buf, b_buf, acc)
    elif USE == "run-time":
        d = tl.async_wmma(a_buf, b_buf, acc, use_acc=M > 0)
    elif USE == "per-warp":
        d = tl.async_wmma(a_buf, b_buf, acc, use_acc=tl.warp_id() > 0)
    else:
        d = tl.async_wmma(a_buf, b_buf, acc, use_acc=USE)
    if RACE:
        tl.async_copy(a_desc, a_buf)  # the MMA still reads a_buf
    d = tl.async_wmma_wait(d, 0)
    tl.store_block(c, shape=[64, 64], strides=[64, 1], offsets=[0, 0], value=d)
    if RACE:
        tl.async_wait(0)


def _run(m: int = 0, **constexprs) -> tuple[np.ndarray, np.ndarray]:
    """(C from the model, A @ B in float64) for small integers (exact in fp32)."""
    module = mma_tile.build_module(num_warps=4, target="cuda:90", **constexprs)
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (64, 32)).astype(np.float16)
    b = rng.integers(-3, 4, (32, 64)).astype(np.float16)
    c = np.full((64, 64), -7.0, np.float32)
    run_function(module, "mma_tile", [a, b, c, m])
    return c, a.astype(np.float64) @ b.astype(np.float64)


@pytest.mark.parametrize("use", [False, "run-time"])
def test_use_acc_false_ignores_the_accumulator(use) -> None:
    got, product = _run(USE=use, INIT=float("nan"), m=0)
    np.testing.assert_array_equal(got, product)


@pytest.mark.parametrize(("use", "m"), [("omitted", 0), (True, 0), ("run-time", 5)])
def test_use_acc_true_or_omitted_adds_the_accumulator(use, m) -> None:
    got, product = _run(USE=use, INIT=1.5, m=m)
    np.testing.assert_array_equal(got, product + 1.5)


def test_per_warp_use_acc_is_a_model_error() -> None:
    with pytest.raises(ModelError, match="use_acc differs across warps"):
        _run(USE="per-warp")


def test_use_acc_false_still_reads_the_buffers() -> None:
    with pytest.raises(ModelError, match="write of shared memory an in-flight MMA reads"):
        _run(USE=False, RACE=True)


def test_true_leaves_the_operand_out_and_false_is_a_constant() -> None:
    def mma(use):
        module = mma_tile.build_module(num_warps=4, target="cuda:90", USE=use)
        (op,) = ops_named(module, "tile.async_wmma")
        return list(op.operands)

    assert len(mma("omitted")) == 3 and len(mma(True)) == 3
    (*_, false) = mma(False)
    assert false.owner.name == "arith.constant" and str(false.owner.attributes["value"]) == "false"


def test_cuda90_passes_use_acc_to_wgmma() -> None:
    kernel = mma_tile.compile(target="cuda:90", num_warps=4, USE="run-time")
    ttgir = kernel.asm["ttgir"]
    (dot,) = [line for line in ttgir.splitlines() if "ttng.warp_group_dot " in line]
    use_c = dot.split(",")[3].split()[0]  # a, b, c, useC
    assert use_c.startswith("%") and use_c != "%true", dot
    assert "arith.select" not in ttgir
    assert "wgmma.mma_async" in kernel.asm["ptx"]


def test_gfx1250_selects_zeros_for_the_dot() -> None:
    kernel = mma_tile.compile(target="gfx1250", num_warps=4, USE="run-time")
    ttgir = kernel.asm["ttgir"]
    assert "arith.select" in ttgir and "tt.dot" in ttgir
    assert "v_wmma" in kernel.asm["amdgcn"]
