"""The pipelined body's ring depth: ``num_stages`` buffers where the hand-off's copies stay
in flight, two where they go through registers (:func:`~gemm_opt.kernels.schedule_gemm.ring_depth`).

Pinned three ways: the built ring of every target, copy form and stage count against a
table of which copies are asynchronous (written out here, not derived); the TTGIR the
hand-off makes of both kinds of kernel (register copies exactly where the ring is
shallow); and the shallow ring's kernels on the model against numpy.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from gemm_opt.core.ext_compat import ir
from gemm_opt.core.pipeline import build_pass_manager
from gemm_opt.core.schedules import KernelSpec, workspace_layout
from gemm_opt.dialect.tile import LocalAllocOp
from gemm_opt.kernels import build_bundles, cache
from gemm_opt.kernels.schedule_gemm import build_gemm_module
from gemm_opt.lowering import REGISTRY
from gemm_opt.lowering.compile import lower_tile_module
from gemm_opt.lowering.pipelines import tile_passes
from gemm_opt.model.interpreter import run_function

#: (aligned, tma, vector_bytes, trans_a) of each copy form of a persistent 64x64x32 kernel.
FORMS = {
    "plain": (False, False, 16, False),
    "aligned": (True, False, 16, False),
    "aligned_v8": (True, False, 8, False),
    "aligned_v4": (True, False, 4, False),
    "aligned_ta": (True, False, 16, True),
    "tma": (True, True, 16, False),
}
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


def _build(target: str, form: str, stages: int):
    aligned, tma, vector, trans_a = FORMS[form]
    return build_gemm_module(
        kind="persistent", block_m=64, block_n=64, block_k=32, num_warps=4, num_stages=stages,
        target=target, aligned=aligned, tma=tma, vector_bytes=vector, trans_a=trans_a,
    )  # fmt: skip


def _rings(module) -> list[int]:
    """The leading dim (the slots) of every shared buffer the module allocates."""
    out = []
    for op in module.body.operations[0].regions[0].blocks[0].operations:
        if op.name == LocalAllocOp.OPERATION_NAME:
            out.append(op.results[0].type.shape[0])
    return out


@pytest.mark.parametrize("target", sorted(ASYNC))
@pytest.mark.parametrize("form", sorted(FORMS))
def test_built_ring_per_target_and_copy_form(target: str, form: str) -> None:
    if FORMS[form][1] and target != "cuda:90":
        pytest.skip("TMA copies are cuda:90's")
    for stages in range(2, 7):
        want = stages if form in ASYNC[target] else 2
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
    """A ring of 2 for 4 stages exactly where the TTGIR copies through registers
    (``tt.load`` then ``ttg.local_store``); the full ring where they are ``cp.async`` /
    direct-to-LDS or TMA copies."""
    module = _build(target, form, 4)
    tma = FORMS[form][1]
    pipeline = None
    if tma:
        pipeline = ",".join([*tile_passes(target), build_bundles.TMA_HAND_OFF])
    ttgir = lower_tile_module(module, target, pipeline=pipeline).ttgir
    ring = _rings(module)[0]
    in_flight = "async_copy_global_to_local" in ttgir or "async_tma_copy_global_to_local" in ttgir
    assert ring == (4 if in_flight else 2)
    assert in_flight == (form in ASYNC[target])
    assert ("ttg.local_store" in ttgir) == (not in_flight)
    assert f"memdesc<{ring}x" in ttgir and f"memdesc<{6 - ring}x" not in ttgir


#: (kind, reduction, grouped) run on the model with a ring of 2 for num_stages 4.
MODEL_CASES = [
    ("data-parallel", None, "none"),
    ("stream-k", "linear", "none"),
    ("stream-k", "atomic", "none"),
    ("split-k", None, "none"),
    ("persistent", None, "m"),
]


@pytest.mark.parametrize(("kind", "reduction", "grouped"), MODEL_CASES)
def test_shallow_ring_kernels_compute_c(kind: str, reduction: str | None, grouped: str) -> None:
    """cuda:90's plain s4 kernels (a ring of 2) after cuda:90's tile passes on the model
    (which fails a copy into a buffer an MMA in flight still reads): exact on integer
    data with odd M, N, K (ragged tiles, a partial last K block, stream-K's split K ranges)."""
    spec = KernelSpec(kind, reduction, grouped, "fp16", 32, 32, 32, 2, 4, 4, out_dtype="fp32")
    module = cache.module_for(spec, "cuda:90")
    assert _rings(module) == [2, 2]
    module = ir.Module.parse(str(module), module.context)  # the passes rewrite in place
    with module.context:  # cuda:90's tile passes: the async MMA reads slot i while i+1 lands
        build_pass_manager(f"builtin.module({','.join(tile_passes('cuda:90'))})", REGISTRY).run(
            module.operation
        )
    assert "tile.async_wmma" in str(module)
    rng = np.random.default_rng(7)
    lens = [21, 0, 30] if grouped == "m" else [45]
    m, n, k = sum(lens), 37, 203
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    groups = len(lens)
    b = rng.integers(-3, 4, (groups, k, n)).astype(np.float16)
    tiles = sum(math.ceil(x / 32) for x in lens) * math.ceil(n / 32)
    programs = 3
    grid = {"data-parallel": tiles, "split-k": tiles * 3}.get(kind, programs)
    layout = workspace_layout(kind, reduction, grid, 1, 32, 32)
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
