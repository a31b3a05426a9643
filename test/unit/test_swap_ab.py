"""Swap-AB: ``C = A @ B`` run as ``C^T = B^T A^T`` with the output stored through its
transpose (``c_layout = "col-major"``, ``KernelSpec.trans_c``).

The kernels on the model against numpy (integer-valued inputs: every product and
fp32 sum exact, so C must equal numpy exactly) for each operand layout, split-K's
fixed-order sum bit for bit across interleavings, the facts and names of the
specs, ``auto``'s pick and the API on the model, and every target's compile.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import gemm_opt
from gemm_opt.core import schedules as S
from gemm_opt.core.ext_compat import ir
from gemm_opt.kernels import cache
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.kernels.build_bundles import bundle_specs
from gemm_opt.kernels.schedule_gemm import build_gemm_module
from gemm_opt.lowering.compile import compile_tile_module
from gemm_opt.runtime import autotune
from gemm_opt.runtime import plan as plans

#: (rows of A, N, K): one token, a ragged token count, more tokens than one tile
#: column, N off the tile, K below one block and K = 0.
SHAPES = [(1, 70, 96), (5, 130, 200), (21, 64, 64), (3, 40, 20), (2, 33, 0)]
LAYOUTS = [(False, False), (False, True), (True, False), (True, True)]


def _swap_spec(kind: str, trans_a: bool, trans_b: bool, **kw) -> S.KernelSpec:
    """The swap-AB kernel of a call whose A and B lie as ``trans_a``, ``trans_b`` say."""
    cfg = dict(block_m=64, block_n=16, block_k=32, group_m=2, num_warps=4, num_stages=2)
    return S.KernelSpec(
        kind, None, "none", "fp16", **{**cfg, **kw}, trans_a=not trans_b, trans_b=not trans_a,
        trans_c=True,
    )  # fmt: skip


def _stored(x: np.ndarray, trans: bool) -> tuple[np.ndarray, int]:
    """``x`` as the kernel reads it: row-major, or its transpose stored row-major
    (a column-major ``x``); and the leading dimension."""
    s = np.ascontiguousarray(x.T if trans else x)
    return s, s.shape[1]


def _run(spec, a, b, trans_a, trans_b, slices=1, seed=None):
    """C = a @ b through the swap-AB kernel ``spec``: the kernel's A is B, its B is A."""
    m, k = a.shape
    n = b.shape[1]
    sa, lda = _stored(a, trans_a)
    sb, ldb = _stored(b, trans_b)
    tiles = S.tile_count(n, m, spec.block_m, spec.block_n)
    grid = max(tiles, 1) * slices
    lay = S.workspace_layout(spec.kind, None, grid, 1, spec.block_m, spec.block_n)
    c = np.full((m, n), np.nan, np.float16)
    values = dict(
        a=sb, b=sa, c=c, M=n, N=m, K=k, lda=ldb, ldb=lda, ldc=n,
        sync=np.zeros(max(lay.sync_elements, 1), np.int32),
        partials=np.full(max(lay.partial_elements, 1), np.nan, np.float32),
    )  # fmt: skip
    cache.run_on_model(spec, values, grid=grid, num_resident=4, seed=seed)
    return c


def _ints(rng, m, n, k):
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    return a, b, a.astype(np.float64) @ b.astype(np.float64)


@pytest.mark.parametrize(("trans_a", "trans_b"), LAYOUTS)
@pytest.mark.parametrize(("kind", "slices"), [("data-parallel", 1), ("split-k", 3)])
def test_swap_ab_equals_numpy_in_every_layout(kind, slices, trans_a, trans_b) -> None:
    rng = np.random.default_rng(1)
    for m, n, k in SHAPES:
        a, b, ref = _ints(rng, m, n, k)
        spec = _swap_spec(kind, trans_a, trans_b)
        c = _run(spec, a, b, trans_a, trans_b, slices, seed=2)
        assert np.array_equal(c.astype(np.float64), ref), (m, n, k)


def test_a_row_major_store_of_the_swapped_kernel_is_wrong() -> None:
    """The guard of the tests above: without ``trans_c`` the kernel writes C^T
    into C's rows, which is not C (so the store's layout is what makes them pass)."""
    rng = np.random.default_rng(3)
    a, b, ref = _ints(rng, 5, 40, 64)
    spec = S.KernelSpec("data-parallel", None, "none", "fp16", 64, 16, 32, 2, 4, 2,
                        trans_a=True, trans_b=True)  # fmt: skip
    sb, _ = _stored(b, False)
    c = np.full((40, 40), np.nan, np.float16)  # room for the 40 x 5 C^T it writes
    values = dict(a=sb, b=np.ascontiguousarray(a), c=c, M=40, N=5, K=64, lda=40, ldb=64, ldc=40)
    cache.run_on_model(spec, values, grid=1, num_resident=1, seed=None)
    assert np.array_equal(c[:, :5].astype(np.float64), ref.T)
    assert not np.array_equal(c[:5].astype(np.float64), ref)


def test_swap_ab_split_k_is_bitwise_the_same_under_every_interleaving() -> None:
    rng = np.random.default_rng(4)
    a = rng.standard_normal((7, 7 * 32 + 5)).astype(np.float16)
    b = rng.standard_normal((7 * 32 + 5, 50)).astype(np.float16)
    spec = _swap_spec("split-k", False, True)
    first = _run(spec, a, b, False, True, slices=4)
    for seed in range(8):
        assert np.array_equal(first, _run(spec, a, b, False, True, slices=4, seed=seed)), seed
    ref = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    assert np.all(np.abs(first - ref) <= 2.0**-10 * np.abs(ref) + 2.0**-12 * scale)


# ---- specs, facts, configs -------------------------------------------------------------


def test_narrow_tiles_fold_the_warps_onto_m() -> None:
    assert S.warp_grid(4) == (2, 2) and S.warp_grid(4, block_n=16) == (4, 1)
    assert S.warp_grid(4, block_n=32) == (2, 2) and S.warp_grid(8, block_n=16) == (8, 1)
    assert S.warp_grid(4, block_m=16, block_n=128) == (1, 4)
    assert S.warp_grid(4, block_m=64, block_n=64) == (2, 2)
    S.check_kernel_config(block_m=128, block_n=16, block_k=128, num_warps=4, num_stages=4)
    with pytest.raises(ValueError, match="block_n must be a multiple of 16"):
        S.check_kernel_config(block_m=64, block_n=8, block_k=32, num_warps=4, num_stages=None)


def test_trans_c_facts_leave_the_token_count_free() -> None:
    """A swap-AB kernel's N is the call's row count (any number): with B read
    transposed nothing is copied or stored along it; M is stated instead (C^T's
    stored rows run along it)."""
    spec = _swap_spec("split-k", False, True)
    tma = S.KernelSpec(**{**spec.__dict__, "aligned": True, "tma": True})
    assert set(tma.facts) == {"M", "K", "lda", "ldb", "ldc"}
    row_major_b = S.KernelSpec(**{**tma.__dict__, "trans_b": False})
    assert set(row_major_b.facts) == {"M", "N", "K", "lda", "ldb", "ldc"}
    assert S.aligned_args("none") == S.ALIGNED_ARGS  # the other kernels' facts unchanged
    assert tma.name.endswith("_tb_tc_fp16_64x16x32_g2_w4_s2_aligned_tma")


def test_trans_c_is_for_dense_16_bit_kernels() -> None:
    with pytest.raises(ValueError, match="trans_c is for dense"):
        S.KernelSpec("persistent", None, "m", "fp16", 64, 64, 32, 8, 4, None, trans_c=True)
    with pytest.raises(ValueError, match="trans_c is for grouped = 'none'"):
        build_gemm_module(kind="persistent", grouped="m", trans_c=True)


def test_swap_ab_configs_keep_bytes_in_flight_and_fit_shared_memory() -> None:
    for name, cfg in h100.SWAP_AB_CONFIGS.items():
        S.check_kernel_config(**{k: getattr(cfg, k) for k in
                                 ("block_m", "block_n", "block_k", "num_warps", "num_stages")})  # fmt: skip
        ring = (cfg.block_m + cfg.block_n) * cfg.block_k * 2
        assert (cfg.num_stages - 1) * ring >= 96 * 1024, name
        assert cfg.num_stages * ring <= 200 * 1024, name


def test_the_bundles_hold_swap_ab_for_every_call_layout() -> None:
    """What auto runs: data-parallel swap-AB, plain and TMA twin, every call layout."""
    names = {s.name for s in bundle_specs(("bf16",), "picked")}
    for ta, tb in LAYOUTS:
        for cfg in h100.SWAP_AB_CONFIGS.values():
            spec = S.KernelSpec("data-parallel", None, "none", "bf16", **cfg.__dict__,
                                trans_a=not tb, trans_b=not ta, trans_c=True)  # fmt: skip
            assert spec.name in names
            tma = S.KernelSpec(**{**spec.__dict__, "aligned": True, "tma": True})
            assert tma.name in names


# ---- auto and the API ------------------------------------------------------------------


def test_auto_picks_swap_ab_for_decode_rows_only() -> None:
    """The cost model takes swap-AB where the tokens are few, with the narrowest
    tile that holds them, and never past :data:`h100.SWAP_AB_MAX_ROWS` rows."""
    for m in (1, 8, 16):
        ch = autotune.resolve(autotune.Problem("dense", m, 4096, 4096, 1), "bf16", sms=132)
        assert ch.swap_ab and ch.config.block_n == 16, (m, ch)
    ch = autotune.resolve(autotune.Problem("dense", 32, 14336, 4096, 1), "bf16", sms=132)
    assert ch.swap_ab and ch.config.block_n == 32
    for m in (h100.SWAP_AB_MAX_ROWS + 1, 64, 128, 512):
        ranked = autotune.rank(autotune.Problem("dense", m, 4096, 4096, 1), "bf16", sms=132)
        assert not any(e.candidate.swap_ab for e in ranked), m


def test_api_swap_ab_on_the_model_equals_numpy() -> None:
    """A problem ``auto`` runs swap-AB on (the model resolves as cuda:90 does): the
    plan exchanges A and B and their layouts, and C comes out right, row-major,
    in every layout and interleaving."""
    rng = np.random.default_rng(7)
    a, b, ref = _ints(rng, 16, 512, 2048)
    for ta, tb in LAYOUTS:
        x = np.asfortranarray(a) if ta else a
        y = np.asfortranarray(b) if tb else b
        pl = plans.plan("matmul", x, y, schedule="auto", reduction=None, num_programs=None,
                        num_xcds=1, config=None, out=None, seed=None)  # fmt: skip
        assert pl.swap_ab and pl.spec.trans_c
        assert (pl.spec.trans_a, pl.spec.trans_b) == (not tb, not ta)
        assert (pl.scalars["M"], pl.scalars["N"], pl.scalars["ldc"]) == (512, 16, 512)
        c = gemm_opt.matmul(x, y, schedule="auto", seed=ta + 2 * tb)
        assert c.flags.c_contiguous and np.array_equal(c.astype(np.float64), ref), (ta, tb)


def test_an_explicit_config_is_never_swapped() -> None:
    """``config`` names tiles of ``A @ B`` itself: auto keeps its schedule, no swap."""
    a = np.zeros((16, 2048), np.float16)
    b = np.zeros((2048, 512), np.float16)
    cfg = {"block_m": 64, "block_n": 64, "block_k": 64, "group_m": 8, "num_warps": 4}
    pl = plans.plan("matmul", a, b, schedule="auto", reduction=None, num_programs=None,
                    num_xcds=1, config=cfg, out=None, seed=None)  # fmt: skip
    assert not pl.swap_ab and not pl.spec.trans_c and pl.scalars["M"] == 16


# ---- every target ----------------------------------------------------------------------

#: Each target's assembly, and the MMA its narrow tile compiles to.
TARGET_MMA = {
    "gfx1250": ("amdgcn", r"v_wmma_f32_16x16x32_f16"),
    "gfx950": ("amdgcn", r"v_mfma_f32_16x16x32_f16"),
    "gfx942": ("amdgcn", r"v_mfma_f32_16x16x16_?f16"),
    "cuda:90": ("ptx", r"wgmma\.mma_async\.sync\.aligned\.m64n16k16\.f32\.f16\.f16"),
}


@pytest.mark.parametrize("target", list(TARGET_MMA))
def test_swap_ab_compiles_for_every_target(target) -> None:
    """64 rows by 16 tokens on 4 warps (all on M), split-K, C stored column-major."""
    module = build_gemm_module(
        kind="split-k", target=target, block_m=64, block_n=16, block_k=64, num_warps=4,
        num_stages=3, trans_b=True, trans_c=True,
    )  # fmt: skip
    with module.context:
        text = str(module)
    assert 'c_layout = "col-major"' in text
    kernel = compile_tile_module(module, target)
    asm_kind, mma = TARGET_MMA[target]
    assert re.search(mma, kernel.asm[asm_kind]), target


def test_the_attribute_round_trips() -> None:
    module = build_gemm_module(kind="persistent", block_n=16, trans_c=True)
    with module.context:
        again = ir.Module.parse(str(module))
        assert again.operation.verify()


# ---- tiny groups -----------------------------------------------------------------------


@pytest.mark.parametrize("trans_b", [False, True])
def test_tiny_group_tiles_equal_numpy_with_empty_groups(trans_b) -> None:
    """16-row tiles over groups of 0 to 16 rows (empty first, middle and last): the
    warps fold onto N, the group walk stays on the device, C is exact."""
    rng = np.random.default_rng(9)
    lens = [0, 3, 16, 0, 1, 9, 0]
    k, n = 40, 70
    a = rng.integers(-3, 4, (sum(lens), k)).astype(np.float16)
    w = rng.integers(-3, 4, (len(lens), k, n)).astype(np.float16)
    b = np.ascontiguousarray(w.transpose(0, 2, 1)) if trans_b else w
    cfg = {"block_m": 16, "block_n": 64, "block_k": 32, "group_m": 8, "num_warps": 4}
    for seed in (None, 1):
        c = gemm_opt.grouped_matmul(
            a, b, np.array(lens, np.int32), trans_b=trans_b, schedule="persistent", config=cfg,
            seed=seed,
        )  # fmt: skip
        ref = np.concatenate([
            a[sum(lens[:g]) : sum(lens[: g + 1])].astype(np.float64) @ w[g].astype(np.float64)
            for g in range(len(lens))
        ])  # fmt: skip
        assert np.array_equal(c.astype(np.float64), ref), seed


def test_auto_takes_the_tiny_group_tiles_for_moe_decode() -> None:
    """G experts of 0 to 16 tokens: ``auto`` pads each group to 16 rows, not 64 or 128;
    its kernel has no TMA twin (16 rows are under a wgmma's 64)."""
    for groups, tokens in ((8, 47), (64, 451), (256, 2040)):
        ch = autotune.resolve(autotune.Problem("fwd", tokens, 1536, 2048, groups), "bf16")
        assert ch.config in h100.TINY_GROUP_CONFIGS.values(), groups
    tiny = next(iter(h100.TINY_GROUP_CONFIGS.values()))
    assert not S.tma_copies(4, tiny.block_m) and S.tma_copies(4, 64)
    names = {s.name for s in bundle_specs(("bf16",))}
    spec = S.KernelSpec("persistent", None, "m", "bf16", **tiny.__dict__)
    assert spec.name in names and S.KernelSpec(**{**spec.__dict__, "aligned": True}).name in names
    assert S.KernelSpec(**{**spec.__dict__, "aligned": True, "tma": False}).name in names
    from gemm_opt.runtime.gemm import twins

    assert [t.tma for t in twins(spec)] == [False]  # the aligned twin only
