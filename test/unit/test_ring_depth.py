"""The pipelined body's ring depth (:func:`~gemm_opt.kernels.schedule_gemm.ring_depth`):
``num_stages`` buffers where the hand-off's copies stay in flight; where they go through
registers, the deepest ring that lets an SM hold as many workgroups as a ring of 2
(:meth:`~gemm_opt.core.targets.Target.resident_blocks`).

Pinned four ways: the SM model at its edges; the rule at its edges; the built ring of
every target, copy form and stage count against a table written out here (not derived);
the TTGIR the hand-off makes (register copies exactly where the rule applies); and the
shallow rings' kernels on the model against numpy.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from gemm_opt.core.ext_compat import ir
from gemm_opt.core.pipeline import build_pass_manager
from gemm_opt.core.schedules import KernelSpec, workspace_layout
from gemm_opt.core.targets import TARGETS
from gemm_opt.dialect.tile import LocalAllocOp
from gemm_opt.kernels import build_bundles, cache
from gemm_opt.kernels.schedule_gemm import build_gemm_module, ring_depth
from gemm_opt.lowering import REGISTRY
from gemm_opt.lowering.compile import lower_tile_module
from gemm_opt.lowering.pipelines import tile_passes
from gemm_opt.model.interpreter import run_function

#: (aligned, tma, vector_bytes, trans_a) of each copy form of a persistent 64x64x128
#: fp16 kernel of 4 warps (a slot of A's and B's padded rings: 35,840 bytes), or on
#: gfx942, whose 64 KiB of LDS hold no two such slots, 64x64x32 (9,728 bytes).
FORMS = {
    "plain": (False, False, 16, False),
    "aligned": (True, False, 16, False),
    "aligned_v8": (True, False, 8, False),
    "aligned_v4": (True, False, 4, False),
    "aligned_ta": (True, False, 16, True),
    "tma": (True, True, 16, False),
}
BLOCK_K = {"gfx1250": 128, "gfx950": 128, "gfx942": 32, "cuda:90": 128}
#: The copy forms whose copies stay in flight, per target: TDM's always (gfx1250);
#: gfx950's direct-to-LDS loads need 16-byte facts on every descriptor shape, and an
#: aligned kernel leaves A's outer dim free (M, or K when A lies transposed); gfx942
#: copies through registers only; cuda:90's ``cp.async`` moves 4, 8 or 16 bytes given
#: the inner shape's fact, and TMA copies are asynchronous.
ASYNC = {
    "gfx1250": {"plain", "aligned", "aligned_v8", "aligned_v4", "aligned_ta"},
    "gfx950": set(),
    "gfx942": set(),
    "cuda:90": {"aligned", "aligned_v8", "aligned_v4", "aligned_ta", "tma"},
}
#: The deepest ring of register copies for that kernel: cuda:90 holds 2 workgroups
#: by registers (128 threads x 255) and by shared memory up to 3 slots (+1 KiB
#: reserved, 228 KiB); a CDNA CU holds 1 by registers (256 threads x 512), gfx950's
#: 160 KiB LDS 4 slots, gfx942's 64 KiB 6 of its small ones.
SYNC_RING = {"cuda:90": 3, "gfx950": 4, "gfx942": 6}


KIB = 1024


def _want(target: str, form: str, stages: int) -> int:
    return stages if form in ASYNC[target] else min(stages, SYNC_RING[target])


def _build(target: str, form: str, stages: int):
    aligned, tma, vector, trans_a = FORMS[form]
    return build_gemm_module(
        kind="persistent", block_m=64, block_n=64, block_k=BLOCK_K[target], num_warps=4,
        num_stages=stages,
        target=target, aligned=aligned, tma=tma, vector_bytes=vector, trans_a=trans_a,
    )  # fmt: skip


def _rings(module) -> list[int]:
    """The leading dim (the slots) of every shared buffer the module allocates."""
    out = []
    for op in module.body.operations[0].regions[0].blocks[0].operations:
        if op.name == LocalAllocOp.OPERATION_NAME:
            out.append(op.results[0].type.shape[0])
    return out


def test_the_sm_model_at_its_edges() -> None:
    """cuda:90: 2 workgroups by shared memory up to 114 KiB each with the 1 KiB reserve,
    by registers 2 of 128 threads, 1 of 256; CDNA: by LDS and 512 registers a lane;
    gfx1250 is not modelled."""
    t = TARGETS["cuda:90"]
    assert t.resident_blocks(64, 114 * KIB - KIB) == 2
    assert t.resident_blocks(64, 114 * KIB - KIB + 1) == 1
    assert t.resident_blocks(64, 0) == 4 and t.resident_blocks(128, 0) == 2
    assert t.resident_blocks(256, 0) == 1 and t.resident_blocks(64, 228 * KIB) == 0
    gfx942 = TARGETS["gfx942"]
    assert gfx942.resident_blocks(64, 32 * KIB) == 2 and gfx942.resident_blocks(128, 0) == 2
    assert gfx942.resident_blocks(256, 0) == 1 and gfx942.resident_blocks(64, 32 * KIB + 1) == 1
    assert TARGETS["gfx950"].resident_blocks(64, 80 * KIB) == 2
    assert TARGETS["gfx1250"].resident_blocks(128, 0) is None


@pytest.mark.parametrize(
    ("slot", "threads", "want"),
    [
        (38570, 128, 3),  # 3 slots + 1 KiB = 116734 B: 2 a SM, as with 2 slots
        (38571, 128, 2),  # 116737 B: 1 a SM
        (38571, 256, 6),  # 1 a SM by registers whatever the ring, and 6 slots fit
        (38742, 256, 5),  # 6 slots + 1 KiB = 233476 B: more than the SM's 233472
        (1024, 128, 6),  # small slots: 2 a SM by registers at every depth
    ],
)
def test_the_rule_at_its_edges(slot: int, threads: int, want: int) -> None:
    plain = _build("cuda:90", "plain", 2).operation
    assert ring_depth(6, plain, "cuda:90", tma=False, slot_bytes=slot, threads=threads) == want
    assert ring_depth(2, plain, "cuda:90", tma=False, slot_bytes=slot, threads=threads) == 2
    aligned = _build("cuda:90", "aligned", 2).operation
    assert ring_depth(6, aligned, "cuda:90", tma=False, slot_bytes=slot, threads=threads) == 6
    assert ring_depth(6, plain, "cuda:90", tma=True, slot_bytes=slot, threads=threads) == 6


@pytest.mark.parametrize("target", sorted(ASYNC))
@pytest.mark.parametrize("form", sorted(FORMS))
def test_built_ring_per_target_and_copy_form(target: str, form: str) -> None:
    if FORMS[form][1] and target != "cuda:90":
        pytest.skip("TMA copies are cuda:90's")
    for stages in range(2, 7):
        want = _want(target, form, stages)
        assert _rings(_build(target, form, stages)) == [want, want], (target, form, stages)


def test_the_blocks_body_has_no_ring() -> None:
    assert _rings(build_gemm_module(num_warps=1, target="cuda:90")) == []


#: (target, form) lowered to TTGIR: each side of each target's rule.
LOWERED = [
    ("cuda:90", "plain"),
    ("cuda:90", "aligned_v4"),
    ("cuda:90", "tma"),
    ("gfx950", "aligned"),
    ("gfx950", "aligned_ta"),
    ("gfx942", "aligned"),
]


@pytest.mark.parametrize(("target", "form"), LOWERED)
def test_hand_off_copies_match_the_ring(target: str, form: str) -> None:
    """The TTGIR copies through registers (``tt.load`` then ``ttg.local_store``) exactly
    where the rule shrank or kept the ring for register copies, and are ``cp.async`` /
    direct-to-LDS or TMA copies where the ring is ``num_stages`` for copies in flight."""
    module = _build(target, form, 4)
    tma = FORMS[form][1]
    pipeline = None
    if tma:
        pipeline = ",".join([*tile_passes(target), build_bundles.TMA_HAND_OFF])
    ttgir = lower_tile_module(module, target, pipeline=pipeline).ttgir
    ring = _rings(module)[0]
    in_flight = "async_copy_global_to_local" in ttgir or "async_tma_copy_global_to_local" in ttgir
    assert in_flight == (form in ASYNC[target])
    assert ring == _want(target, form, 4)
    assert ("ttg.local_store" in ttgir) == (not in_flight)
    assert f"memdesc<{ring}x" in ttgir


#: (kind, reduction, grouped, block_n, num_stages, its ring on cuda:90) of the bundle's
#: 4-warp configurations 64x128x128 s4 (ring 2) and 64x64x128 s6 (ring 3) on the model.
MODEL_CASES = [
    ("data-parallel", None, "none", 128, 4, 2),
    ("stream-k", "linear", "none", 64, 6, 3),
    ("stream-k", "atomic", "none", 128, 4, 2),
    ("split-k", None, "none", 64, 6, 3),
    ("persistent", None, "m", 64, 6, 3),
]


@pytest.mark.parametrize(("kind", "reduction", "grouped", "bn", "stages", "ring"), MODEL_CASES)
def test_shallow_ring_kernels_compute_c(
    kind: str, reduction: str | None, grouped: str, bn: int, stages: int, ring: int
) -> None:
    """cuda:90's plain kernels with a shallow ring after cuda:90's tile passes on the
    model (which fails a copy into a buffer an MMA in flight still reads): exact on
    integer data with odd M, N, K (ragged tiles, more K blocks than slots, a partial
    last one, stream-K's split K ranges)."""
    spec = KernelSpec(kind, reduction, grouped, "fp16", 64, bn, 128, 2, 4, stages, out_dtype="fp32")
    module = cache.module_for(spec, "cuda:90")
    assert _rings(module) == [ring, ring]
    module = ir.Module.parse(str(module), module.context)  # the passes rewrite in place
    with module.context:  # cuda:90's tile passes: the async MMA reads slot i while i+1 lands
        build_pass_manager(f"builtin.module({','.join(tile_passes('cuda:90'))})", REGISTRY).run(
            module.operation
        )
    assert "tile.async_wmma" in str(module)
    rng = np.random.default_rng(7)
    lens = [21, 0, 70] if grouped == "m" else [91]
    m, n, k = sum(lens), 77, 715
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    groups = len(lens)
    b = rng.integers(-3, 4, (groups, k, n)).astype(np.float16)
    tiles = sum(math.ceil(x / 64) for x in lens) * math.ceil(n / bn)
    programs = 3
    grid = {"data-parallel": tiles, "split-k": tiles * 3}.get(kind, programs)
    layout = workspace_layout(kind, reduction, grid, 1, 64, bn)
    c = (
        np.zeros((m, n), np.float32)
        if reduction == "atomic"
        else np.full((m, n), np.nan, np.float32)
    )
    values = {
        "a": a, "b": b if grouped == "m" else b[0], "c": c, "M": m, "N": n, "K": k,
        "lda": k, "ldb": n, "ldc": n,
        "group_lens": np.array(lens, np.int32), "num_groups": groups,
        "sync": np.zeros(max(layout.sync_elements, 1), np.int32),
        "partials": np.full(max(layout.partial_elements, 1), np.nan, np.float32),
    }  # fmt: skip
    names = spec.arg_names
    run_function(module, None, [values[x] for x in names], (grid, 1, 1), arg_names=list(names),
                 num_resident=programs, seed=3)  # fmt: skip
    starts = np.cumsum([0, *lens])
    want = np.concatenate(
        [a[s:e].astype(np.float64) @ b[g].astype(np.float64)
         for g, (s, e) in enumerate(itertools.pairwise(starts))]
    )  # fmt: skip
    np.testing.assert_array_equal(c, want.astype(np.float32))
