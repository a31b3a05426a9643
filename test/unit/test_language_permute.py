"""``SharedBuffer.permute`` in the Python front end (``tile.memdesc_trans``):
a one-tile ``C = A @ W^T`` with W stored (N, K) row-major, its block copied as
it lies and read through ``permute((1, 0))``. It equals numpy on the model,
becomes ``ttg.memdesc_trans`` + wgmma on cuda:90, and misuse is a
``CompilationError`` at the user's line."""

from __future__ import annotations

import numpy as np
import pytest

import gemm_opt.language as tl
from gemm_opt.model.interpreter import run_function


@tl.kernel
def nt_tile(
    a: tl.ptr("DTYPE"),
    w: tl.ptr("DTYPE"),
    c: tl.ptr("DTYPE"),
    M: tl.int32,
    N: tl.int32,
    K: tl.constexpr = 80,
    BM: tl.constexpr = 64,
    BN: tl.constexpr = 64,
    BK: tl.constexpr = 32,
    DTYPE: tl.constexpr = tl.float16,
    ORDER: tl.constexpr = (1, 0),
):
    shared = tl.PaddedShared(interval=BK, amount=8, order=[1, 0])
    acc_l = tl.WmmaLayout(
        version=3, warps_per_cta=[4, 1], instr_shape=[16, 16, 32], transposed=True
    )
    a_desc = tl.make_tensor_descriptor(
        a, shape=[M, K], strides=[K, 1], block_shape=[BM, BK], layout=shared
    )
    w_desc = tl.make_tensor_descriptor(
        w, shape=[N, K], strides=[K, 1], block_shape=[BN, BK], layout=shared
    )
    a_buf = tl.allocate_shared(DTYPE, [BM, BK], shared)
    w_buf = tl.allocate_shared(DTYPE, [BN, BK], shared)
    acc = tl.zeros([BM, BN], tl.float32, acc_l)
    for k in range(0, K, BK):  # unrolled at build time
        tl.async_copy(a_desc.update([0, k]), a_buf)
        tl.async_copy(w_desc.update([0, k]), w_buf)
        tl.async_wait(0)
        a_t = tl.local_load(a_buf, tl.DotOperand(op_idx=0, parent=acc_l, k_width=8))
        b_view = w_buf.permute(ORDER)  # MARK: permute
        b_t = tl.local_load(b_view, tl.DotOperand(op_idx=1, parent=acc_l, k_width=8))
        acc = tl.wmma(a_t, b_t, acc)
    tl.store_block(c, shape=[M, N], strides=[N, 1], offsets=[0, 0], value=acc.to(DTYPE))


def test_permuted_operand_equals_numpy_on_the_model() -> None:
    module = nt_tile.build_module(num_warps=4, target="gfx1250")
    assert '"tile.memdesc_trans"' in str(module)
    rng = np.random.default_rng(0)
    m, n, k = 50, 40, 80  # K: 2 whole blocks and a half one (zero fill)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    w = rng.integers(-3, 4, (n, k)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    run_function(module, "nt_tile", [a, w, c, m, n])
    assert np.array_equal(c.astype(np.float64), a.astype(np.float64) @ w.T.astype(np.float64))


def test_permuted_operand_is_a_transposed_wgmma_operand_on_cuda90() -> None:
    kernel = nt_tile.compile(target="cuda:90", num_warps=4)
    assert "ttg.memdesc_trans" in kernel.asm["ttgir"]
    assert "wgmma.mma_async" in kernel.asm["ptx"]


def test_a_bad_permutation_is_reported_at_the_line() -> None:
    with pytest.raises(tl.CompilationError, match="permute order") as info:
        nt_tile.build_module(num_warps=4, target="gfx1250", ORDER=(1, 1))
    assert "# MARK: permute" in info.value.source_line
