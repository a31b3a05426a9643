"""The per-warp tile IR interpreter (``gemm_opt.model.interpreter``).

The GEMM of ``examples/gemm_gfx1250.mlir`` runs end to end and must equal
numpy; variants of it (hints removed or changed, a too-weak wait, the TDM
passes) check the interpreter's warp and synchronization semantics.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gemm_opt.core.ext_compat import arith, ir, scf
from gemm_opt.dialect import make_context, tile
from gemm_opt.dialect.edit import (
    edited,
    erase_ops,
    functions,
    ops_named,
    predicate_copy,
    retype_elements,
    set_wait_counts,
    set_warp_hint,
    set_warp_hints,
    without_hints,
)
from gemm_opt.model.interpreter import (
    Interpreter,
    ModelError,
    bf16_round,
    parse_module,
    run_function,
    run_gemm,
)

ROOT = Path(__file__).resolve().parents[2]
GEMM = (ROOT / "examples" / "gemm_gfx1250.mlir").read_text()
TDM_COPIES = (ROOT / "examples" / "tdm_copies.mlir").read_text()
BK = 64  # the example's K block
RACE = "read of shared memory still being written by an in-flight TDM copy"

SHAPES = [(64, 64, 96), (70, 50, 40), (130, 129, 200)]


def _no_hints(text: str) -> str:
    out = without_hints(text)
    assert "warp_used_hint" not in out
    return out


def _set_wait(source: str | ir.Module, old: int, new: int) -> ir.Module:
    """``source`` (parsed if text) with its one ``num = old`` wait waiting for ``new``."""
    module = parse_module(source) if isinstance(source, str) else source
    assert set_wait_counts(module, new, old=old) == 1
    return module


def _dyadic(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Multiples of 1/8 in [-1, 1]: every partial sum is exact in fp32."""
    return (rng.integers(-8, 9, size=shape) / 8).astype(np.float32)


def _tiled_reference(a: np.ndarray, b: np.ndarray, round_out) -> np.ndarray:
    """fp32 accumulation over K blocks of 64, as the kernel does it, then rounding."""
    acc = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
    for k0 in range(0, a.shape[1], BK):
        part = a[:, k0 : k0 + BK].astype(np.float64) @ b[k0 : k0 + BK].astype(np.float64)
        acc = (part + acc).astype(np.float32)
    return round_out(acc)


def _within_one_ulp(c: np.ndarray, ref: np.ndarray, ulp: np.ndarray) -> bool:
    return bool((np.abs(c.astype(np.float64) - ref.astype(np.float64)) <= ulp).all())


def _f16_ulp(x: np.ndarray) -> np.ndarray:
    return np.spacing(np.abs(x).astype(np.float16)).astype(np.float64)


def _bf16_ulp(x: np.ndarray) -> np.ndarray:
    return np.spacing(np.abs(x).astype(np.float32)).astype(np.float64) * 2.0**16


# ---------------------------------------------------------------------------
# The GEMM example against numpy
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("m,n,k", SHAPES)
def test_gemm_f16_exact_on_dyadic_inputs(m, n, k):
    rng = np.random.default_rng(m * 1000 + n + k)
    a = _dyadic(rng, (m, k)).astype(np.float16)
    b = _dyadic(rng, (k, n)).astype(np.float16)
    c = run_gemm(GEMM, a, b)
    assert c.dtype == np.float16 and c.shape == (m, n)
    exact = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(c, exact)


@pytest.mark.parametrize("m,n,k", SHAPES)
def test_gemm_f16_random_inputs(m, n, k):
    rng = np.random.default_rng(7 + m + n + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c, result = run_gemm(GEMM, a, b, return_result=True)
    assert not np.isnan(c).any(), "the masked store must write every element of C"
    # The same computation (fp32 accumulation per K block) agrees exactly ...
    tiled = _tiled_reference(a, b, lambda x: x.astype(np.float16))
    np.testing.assert_array_equal(c, tiled)
    # ... and a plain float64 matmul rounded once is at most 1 ulp away.
    ref = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16)
    assert _within_one_ulp(c, ref, _f16_ulp(ref))
    np.testing.assert_allclose(c.astype(np.float32), ref.astype(np.float32), rtol=1e-2, atol=1e-2)
    grid = (-(-m // 128), -(-n // 128), 1)
    assert result.grid == grid
    assert result.stats.in_flight_at_exit == 0


@pytest.mark.parametrize("m,n,k", [(70, 50, 40), (130, 129, 200)])
def test_gemm_bf16(m, n, k):
    text = edited(GEMM, lambda m: retype_elements(m, ir.F16Type.get(), ir.BF16Type.get()))
    rng = np.random.default_rng(11 + m)
    a = bf16_round(rng.standard_normal((m, k)))
    b = bf16_round(rng.standard_normal((k, n)))
    c = run_gemm(text, a, b)
    assert c.dtype == np.float32
    np.testing.assert_array_equal(bf16_round(c), c)  # C holds bf16 values
    np.testing.assert_array_equal(c, _tiled_reference(a, b, bf16_round))
    ref = bf16_round((a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32))
    assert _within_one_ulp(c, ref, _bf16_ulp(ref))
    # dyadic inputs are exact
    a = bf16_round(_dyadic(rng, (m, k)))
    b = bf16_round(_dyadic(rng, (k, n)))
    exact = bf16_round((a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32))
    np.testing.assert_array_equal(run_gemm(text, a, b), exact)


# ---------------------------------------------------------------------------
# Warp statistics and hint variants
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def operands():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((130, 200)).astype(np.float16)
    b = rng.standard_normal((200, 129)).astype(np.float16)
    return a, b, run_gemm(GEMM, a, b)


def test_hinted_gemm_splits_a_and_b_between_warp_halves(operands):
    a, b, c = operands
    c2, result = run_gemm(GEMM, a, b, return_result=True)
    np.testing.assert_array_equal(c2, c)
    st = result.stats
    assert st.writers("a") == (0, 1, 2, 3)  # warps 4-7 never write A
    assert st.writers("b") == (4, 5, 6, 7)
    # 4 programs; per program 5 K steps issue A and B (the last predicated off):
    # every warp issues 2 x 5 instructions per program, and half of them write.
    np.testing.assert_array_equal(st.instructions(), [40] * 8)
    np.testing.assert_array_equal(st.active_instructions(), [16] * 8)
    # 4 real K tiles per program, each block split over 4 warps: 32 x 64 elements
    np.testing.assert_array_equal(st.elements_written("a"), [4 * 4 * 32 * 64] * 4 + [0] * 4)
    np.testing.assert_array_equal(st.elements_written("b"), [0] * 4 + [4 * 4 * 16 * 128] * 4)
    np.testing.assert_array_equal(st.max_in_flight, [4] * 8)
    a_starts = {e.warp: e.start for e in st.events if e.tensor == "a" and e.active}
    assert a_starts == {0: (0, 0), 1: (32, 0), 2: (64, 0), 3: (96, 0)}
    b_starts = {e.warp: e.start for e in st.events if e.tensor == "b" and e.active}
    assert b_starts == {4: (0, 0), 5: (16, 0), 6: (32, 0), 7: (48, 0)}


def test_gemm_without_hints_is_copied_by_all_warps(operands):
    a, b, c = operands
    c2, result = run_gemm(_no_hints(GEMM), a, b, return_result=True)
    np.testing.assert_array_equal(c2, c)
    st = result.stats
    assert st.writers("a") == tuple(range(8))
    assert st.writers("b") == tuple(range(8))
    np.testing.assert_array_equal(st.elements_written("a"), [16 * 16 * 64] * 8)
    np.testing.assert_array_equal(st.active_instructions(), [32] * 8)  # last step is off


def test_gemm_with_both_copies_on_warps_0_to_3(operands):
    a, b, c = operands
    module = parse_module(GEMM)
    assert set_warp_hints(module, 15, old=240) == 2
    c2, result = run_gemm(module, a, b, return_result=True)
    np.testing.assert_array_equal(c2, c)
    assert result.stats.writers("a") == (0, 1, 2, 3)
    assert result.stats.writers("b") == (0, 1, 2, 3)
    np.testing.assert_array_equal(result.stats.active_instructions(), [32] * 4 + [0] * 4)


# ---------------------------------------------------------------------------
# Synchronization: the race detector
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("hinted", [True, False])
def test_race_detector_fires_when_the_wait_leaves_too_much_in_flight(operands, hinted):
    a, b, _ = operands
    text = _set_wait(GEMM if hinted else _no_hints(GEMM), 2, 3)
    with pytest.raises(ModelError, match=RACE) as info:
        run_gemm(text, a, b)
    # hinted: B (warps 4-7) of tile 0 is still in flight when it is read
    assert "tile.local_load" in str(info.value)
    first_late_warp = 4 if hinted else 0
    assert f"issued by warp {first_late_warp}" in str(info.value)


def test_the_example_waits_exactly_enough(operands):
    a, b, c = operands
    # waiting for more (num = 1, 0) is correct too; num = 2 is the weakest correct wait
    for num in (1, 0):
        np.testing.assert_array_equal(run_gemm(_set_wait(GEMM, 2, num), a, b), c)


def test_race_detector_without_any_wait():
    module = parse_module(GEMM)
    num = lambda op: ir.IntegerAttr(op.attributes["num"]).value  # noqa: E731
    assert erase_ops(module, "tile.async_tdm_wait", lambda op: num(op) == 2) == 1
    a = np.ones((64, 64), np.float16)
    with pytest.raises(ModelError, match=RACE):
        run_gemm(module, a, a)


# ---------------------------------------------------------------------------
# The TDM passes keep C unchanged
# ---------------------------------------------------------------------------


def _run_pipeline(text: str, pipeline: str) -> ir.Module:
    from gemm_opt.core.pipeline import Registry, build_pass_manager
    from gemm_opt.passes import PASSES

    names = [p.strip() for p in pipeline.split(",")]
    assert all(n in PASSES for n in names), f"unregistered pass in {names}"
    ctx = make_context()
    with ctx:
        module = ir.Module.parse(text)
        pm = build_pass_manager(f"builtin.module({pipeline})", Registry(passes=PASSES))
        pm.run(module.operation)
    return module


PIPELINES = [
    ("hinted", "tile-assign-tdm-warp-layout"),
    ("hinted", "tile-assign-tdm-warp-layout,tile-emit-warp-predicates"),
    ("hinted", "tile-fuse-tdm-copies"),
    ("hinted", "tile-assign-tdm-warp-layout,tile-fuse-tdm-copies"),
    ("unhinted", "tile-derive-warp-hints"),
    ("unhinted", "tile-derive-warp-hints,tile-fuse-tdm-copies"),
    ("unhinted", "tile-assign-tdm-warp-layout,tile-emit-warp-predicates"),
]


@pytest.mark.parametrize("source,pipeline", PIPELINES)
def test_tdm_passes_keep_the_gemm_result(operands, source, pipeline):
    a, b, c = operands
    text = GEMM if source == "hinted" else _no_hints(GEMM)
    module = _run_pipeline(text, pipeline)
    printed = str(module)
    c2, result = run_gemm(module, a, b, return_result=True)
    np.testing.assert_array_equal(c2, c)
    st = result.stats
    if "assign" in pipeline and "fuse" not in pipeline:
        assert "tile.warp_layout" in printed
    if "emit-warp-predicates" in pipeline and source == "hinted":
        assert "tile.warp_predicated" in printed and "tile.warp_id" in printed
    if source == "hinted" or "derive" in pipeline:
        # two disjoint warp groups, each writing every element of its operand
        assert set(st.writers("a")).isdisjoint(st.writers("b"))
        assert len(st.writers("a")) == len(st.writers("b")) == 4
    total_a = 4 * 4 * 128 * 64
    assert st.elements_written("a").sum() == total_a
    if "fuse" in pipeline:
        assert "tile.async_tdm_fused_copy_global_to_local" in printed
        np.testing.assert_array_equal(st.instructions(), [20] * 8)  # one per K step
    else:
        np.testing.assert_array_equal(st.instructions(), [40] * 8)


def test_fused_gemm_with_a_too_weak_wait_races(operands):
    a, b, _ = operands
    module = _run_pipeline(GEMM, "tile-fuse-tdm-copies")
    assert '"tile.async_tdm_wait"() {num = 1 : i32}' in str(module)
    with pytest.raises(ModelError, match=RACE):
        run_gemm(_set_wait(module, 1, 2), a, b)


# ---------------------------------------------------------------------------
# Small kernels: per-warp control flow, fused copies, arith
# ---------------------------------------------------------------------------


#: ``@k(%x, %y, %m, %n, %ld)`` of 8 warps: ``%d`` describes the m x n f32 tensor
#: at ``%x`` in 32x16 blocks; warps 0-3 copy a block (unhinted: each its 4 rows
#: of the 8-warp split) and every warp stores it to ``%y``.
COPY_KERNEL = """
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d = !tile.tensor_desc<tensor<32x16xf32, #s>>
!b = !tile.shared<tensor<32x16xf32, #s>>

module attributes {tile.num_warps = 8 : i32, tile.threads_per_warp = 32 : i32, tile.target = "gfx1250"} {
  func.func @k(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %m: i32, %n: i32, %ld: i64) {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%x, %m, %n, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64) -> !d
    %c4 = arith.constant 4 : i32
    %buf = "tile.local_alloc"() : () -> !b
    %w = "tile.warp_id"() : () -> i32
    %lo = arith.cmpi slt, %w, %c4 : i32
    scf.if %lo {
      "tile.async_tdm_copy_global_to_local"(%d, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!d, !b) -> ()
    }
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %t = "tile.local_load"(%buf) : (!b) -> tensor<32x16xf32>
    "tile.store_block"(%y, %m, %n, %ld, %one, %c0, %c0, %t) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, tensor<32x16xf32>) -> ()
    return
  }
}
"""


#: The arguments of ``@k`` (a module built or edited through the bindings has
#: no source names; they are given to the interpreter).
COPY_ARGS = ("x", "y", "m", "n", "ld")
COPY_OP = "tile.async_tdm_copy_global_to_local"


def _copy_module(hint: int | None = None) -> ir.Module:
    """``COPY_KERNEL`` parsed, its copy given ``warp_used_hint = hint`` (if any)."""
    module = parse_module(COPY_KERNEL)
    if hint is not None:
        (copy,) = ops_named(module, COPY_OP)
        set_warp_hint(copy, hint)
        module.operation.verify()
    return module


def _copy_args(rows: int = 32, cols: int = 16):
    x = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    y = np.full((rows, cols), np.nan, dtype=np.float32)
    return {"x": x, "y": y, "m": rows, "n": cols, "ld": cols}


def test_copy_under_a_warp_divergent_branch():
    module = _copy_module(hint=15)
    args = _copy_args(20, 16)  # 20 rows: rows 20..31 of the block are zero filled
    result = run_function(module, "k", args, arg_names=COPY_ARGS)
    np.testing.assert_array_equal(args["y"], args["x"])
    st = result.stats
    np.testing.assert_array_equal(st.instructions(), [1] * 4 + [0] * 4)
    np.testing.assert_array_equal(st.elements_written("x"), [8 * 16] * 4 + [0] * 4)


def test_divergent_branch_missing_warps_leaves_memory_unwritten():
    text = COPY_KERNEL  # no hint: all 8 warps' tiles, only 4 issue
    with pytest.raises(ModelError, match="uninitialized shared memory"):
        run_function(text, "k", _copy_args())
    result = run_function(text, "k", _copy_args(), check_uninitialized=False)
    np.testing.assert_array_equal(result.stats.elements_written("x"), [4 * 16] * 4 + [0] * 4)


def test_warp_predicated_copy_trusts_its_predicate():
    # The unit attribute says the pred operand already holds the warp mask; with
    # a plain `true` predicate every warp copies its (masked) tile again.
    module = _copy_module(hint=3)
    (copy,) = ops_named(module, COPY_OP)
    predicate_copy(copy, True, warp_predicated=True)
    module.operation.verify()
    args = _copy_args()
    result = run_function(module, "k", args, arg_names=COPY_ARGS)
    np.testing.assert_array_equal(args["y"], args["x"])
    # hint 0x3: warps 0, 1 own 16 rows each; warps 2, 3 (inside the branch) repeat them
    np.testing.assert_array_equal(result.stats.elements_written("x"), [256] * 4 + [0] * 4)


FUSED_KERNEL = """
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d = !tile.tensor_desc<tensor<32x16xf32, #s>>
!b = !tile.shared<tensor<32x16xf32, #s>>

module attributes {tile.num_warps = 8 : i32, tile.threads_per_warp = 32 : i32, tile.target = "gfx1250"} {
  func.func @k(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %m: i32, %n: i32, %ld: i64) {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%x, %m, %n, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64) -> !d
    %c32 = arith.constant 32 : i32
    %d1 = "tile.update_tensor_descriptor"(%d, %c32, %c0) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!d, i32, i32) -> !d
    %b0 = "tile.local_alloc"() : () -> !b
    %b1 = "tile.local_alloc"() : () -> !b
    "tile.async_tdm_fused_copy_global_to_local"(%d, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 3, 12>} : (!d, !d, !b, !b) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %t0 = "tile.local_load"(%b0) : (!b) -> tensor<32x16xf32>
    %t1 = "tile.local_load"(%b1) : (!b) -> tensor<32x16xf32>
    "tile.store_block"(%y, %m, %n, %ld, %one, %c0, %c0, %t0) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, tensor<32x16xf32>) -> ()
    "tile.store_block"(%y, %m, %n, %ld, %one, %c32, %c0, %t1) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, tensor<32x16xf32>) -> ()
    return
  }
}
"""


def test_fused_copy_selects_one_member_per_warp():
    args = _copy_args(64, 16)
    result = run_function(FUSED_KERNEL, "k", args)
    np.testing.assert_array_equal(args["y"], args["x"])
    st = result.stats
    np.testing.assert_array_equal(st.instructions(), [1] * 8)  # one instruction each
    np.testing.assert_array_equal(st.active_instructions(), [1] * 4 + [0] * 4)
    np.testing.assert_array_equal(st.elements_written("x"), [256] * 4 + [0] * 4)
    members = {e.warp: e.member for e in st.events}
    # warps 4-7 are in no hint: they carry the last member's descriptor, pred 0
    assert members == {0: 0, 1: 0, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 7: 1}


# ---- the race detector on small kernels ------------------------------------------------

#: ``@k`` with ``%d1`` (rows 32..63 of ``%x``), ``%buf``, ``%w`` and ``%lo``
#: (``%w < 4``); :class:`_Race` adds ops before its return.
RACE_BASE = """
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
!d = !tile.tensor_desc<tensor<32x16xf32, #s>>
!b = !tile.shared<tensor<32x16xf32, #s>>

module attributes {tile.num_warps = 8 : i32, tile.threads_per_warp = 32 : i32, tile.target = "gfx1250"} {
  func.func @k(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %m: i32, %n: i32, %ld: i64) {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%x, %m, %n, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64) -> !d
    %c4 = arith.constant 4 : i32
    %c32 = arith.constant 32 : i32
    %d1 = "tile.update_tensor_descriptor"(%d, %c32, %c0) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!d, i32, i32) -> !d
    %buf = "tile.local_alloc"() : () -> !b
    %w = "tile.warp_id"() : () -> i32
    %lo = arith.cmpi slt, %w, %c4 : i32
    return
  }
}
"""


class _Race:
    """``RACE_BASE`` with ops added through the dialect's op builders, in
    order, before its return (or into the branch being built)."""

    def __init__(self) -> None:
        self.module = parse_module(RACE_BASE)
        self.context = self.module.context
        (fn,) = functions(self.module)
        self.x, self.y, self.m, self.n, self.ld = fn.arguments
        entry = fn.regions[0].blocks[0]
        ops = list(entry.operations)
        self.c0, self.one = ops[0].result, ops[1].result
        self.d, self.d1 = ops[2].result, ops[5].result
        self.buf, self.w, self.lo = ops[6].result, ops[7].result, ops[8].result
        self.loc = ir.Location.name("race", context=self.context)
        self.points = [ir.InsertionPoint(ops[-1])]

    def _at(self):
        return self.points[-1]

    def copy(self, desc: str = "d", hint: int | None = None) -> None:
        with self.loc, self._at():
            op = tile.AsyncTDMCopyGlobalToLocalOp(getattr(self, desc), self.buf, loc=self.loc)
            if hint is not None:
                set_warp_hint(op.operation, hint)

    def wait(self, num: int) -> None:
        with self.loc, self._at():
            op = tile.AsyncTDMWaitOp(loc=self.loc)
            op.operation.attributes["num"] = ir.IntegerAttr.get(
                ir.IntegerType.get_signless(32), num
            )

    def below(self, value: ir.Value, bound: int) -> ir.Value:
        """``value < bound`` (i32, signed)."""
        with self.loc, self._at():
            i32 = ir.IntegerType.get_signless(32)
            c = arith.ConstantOp(i32, ir.IntegerAttr.get(i32, bound), loc=self.loc).result
            return arith.CmpIOp(arith.CmpIPredicate.slt, value, c, loc=self.loc).result

    @contextmanager
    def branch(self, cond: ir.Value, has_else: bool = False):
        """Build an ``scf.if``; ops added inside the block go to its then
        region; ``yield``s the op (its else region: :meth:`otherwise`)."""
        with self.loc, self._at():
            op = scf.IfOp(cond, [], has_else=has_else, loc=self.loc)
        with self.loc, ir.InsertionPoint(op.then_block):
            scf.YieldOp([], loc=self.loc)
        if has_else:
            with self.loc, ir.InsertionPoint(op.else_block):
                scf.YieldOp([], loc=self.loc)
        self.points.append(ir.InsertionPoint(op.then_block.operations[0]))
        try:
            yield op
        finally:
            self.points.pop()

    @contextmanager
    def otherwise(self, op: Any):
        self.points.append(ir.InsertionPoint(op.else_block.operations[0]))
        try:
            yield
        finally:
            self.points.pop()

    def load_store(self) -> None:
        """Load ``%buf`` and store it to rows 0..31 of ``%y``."""
        with self.loc, self._at():
            t = ir.RankedTensorType.get([32, 16], ir.F32Type.get())
            v = tile.LocalLoadOp(self.buf, t, loc=self.loc).result
            tile.StoreBlockOp(
                self.y, [self.m, self.n], [self.ld, self.one], [self.c0, self.c0], v, loc=self.loc
            )

    def run(self, args: dict, **kw: Any):
        self.module.operation.verify()
        return run_function(self.module, "k", args, arg_names=COPY_ARGS, **kw)


def test_race_on_a_buffer_only_partly_in_flight():
    # The buffer is complete; then warps 0-3 alone (a warp-dependent branch)
    # rewrite their rows 0-15 of it: rows 16-31 are settled, 0-15 are not.
    k = _Race()
    k.copy()
    k.wait(0)
    with k.branch(k.lo):
        k.copy("d1")
    k.load_store()
    with pytest.raises(ModelError, match=RACE) as info:
        k.run(_copy_args(64, 16))
    assert "4 in-flight TDM instruction(s)" in str(info.value)
    assert "issued by warp 0" in str(info.value) and "warp 4" not in str(info.value)


def _two_copies(num: int) -> _Race:
    k = _Race()
    k.copy()
    k.copy("d1")
    k.wait(num)
    k.load_store()
    return k


def test_two_copies_in_flight_to_one_buffer_and_a_wait_that_retires_one():
    with pytest.raises(ModelError, match=RACE) as info:
        _two_copies(1).run(_copy_args(64, 16))
    assert "8 in-flight TDM instruction(s)" in str(info.value)  # the second copy, per warp
    # Waiting for both: the later copy's data lands last (FIFO completion).
    args = _copy_args(64, 16)
    _two_copies(0).run(args)
    np.testing.assert_array_equal(args["y"][:32], args["x"][32:])


def _wait_in_branch(hint: int | None, wait_in_else: bool) -> _Race:
    k = _Race()
    k.copy(hint=hint)
    with k.branch(k.lo, has_else=wait_in_else) as op:
        k.wait(0)
    if wait_in_else:
        with k.otherwise(op):
            k.wait(0)
    k.load_store()
    return k


@pytest.mark.parametrize("hint", [None, 0xF0])
def test_a_wait_under_a_warp_dependent_branch_retires_only_its_warps_copies(hint):
    # Warps 4-7 skip the wait: their part of the copy is still in flight.
    with pytest.raises(ModelError, match=RACE) as info:
        _wait_in_branch(hint, wait_in_else=False).run(_copy_args())
    assert "issued by warp 4" in str(info.value) and "warp 0 " not in str(info.value)
    # The warps that skip the wait in the else branch wait there: no race.
    args = _copy_args()
    _wait_in_branch(hint, wait_in_else=True).run(args)
    np.testing.assert_array_equal(args["y"], args["x"])


def _two_warp_groups(wait_between: bool) -> _Race:
    k = _Race()
    k.copy(hint=0x0F)
    if wait_between:
        k.wait(0)
    k.copy("d1", hint=0xF0)
    k.wait(0)
    k.load_store()
    return k


def test_copies_of_different_warps_in_flight_to_one_buffer_race():
    # Warps 0-3 then warps 4-7 write the whole buffer, other data: no order.
    with pytest.raises(ModelError, match="another warp's in-flight TDM copy") as info:
        _two_warp_groups(wait_between=False).run(_copy_args(64, 16))
    # warp 4 takes rows 0-7, which warp 0 of the first copy writes
    assert "warp 4 writes" in str(info.value) and "warp(s) {0} write" in str(info.value)
    # A wait between them orders the writes.
    args = _copy_args(64, 16)
    _two_warp_groups(wait_between=True).run(args)
    np.testing.assert_array_equal(args["y"][:32], args["x"][32:])


def test_a_write_that_overlaps_another_warps_copy_in_part_races():
    # Warp 0 alone copies its 4 rows (0-3); then warp 4 copies rows 0-15.
    k = _Race()
    with k.branch(k.below(k.w, 1)):
        k.copy()
    k.copy("d1", hint=0x30)
    k.wait(0)
    with pytest.raises(ModelError, match="another warp's in-flight TDM copy") as info:
        k.run(_copy_args(64, 16), check_uninitialized=False)
    assert "warp 4 writes" in str(info.value) and "warp(s) {0} write" in str(info.value)


def test_an_else_branch_runs_only_for_the_warps_that_reach_it():
    # Warps 0-3 reach the inner scf.if; its condition is false, so they (and
    # only they) take the else branch and issue the copy.
    k = _Race()
    with k.branch(k.lo):
        with k.branch(k.below(k.m, 0), has_else=True) as never:
            pass
        with k.otherwise(never):
            k.copy(hint=0x0F)
    k.wait(0)
    k.load_store()
    args = _copy_args()
    result = k.run(args)
    np.testing.assert_array_equal(args["y"], args["x"])
    np.testing.assert_array_equal(result.stats.instructions(), [1] * 4 + [0] * 4)


def test_a_wait_under_a_warp_uniform_branch_not_taken_leaves_the_copy_in_flight():
    k = _Race()
    k.copy()
    with k.branch(k.below(k.m, 0)):
        k.wait(0)
    k.load_store()
    with pytest.raises(ModelError, match=RACE):
        k.run(_copy_args())


def test_descriptor_reaching_past_the_array_is_an_error():
    module = _copy_module(hint=15)
    args = _copy_args()
    args["m"] = 40  # the descriptor claims 40 rows of a 32-row array
    with pytest.raises(ModelError, match="reaches element"):
        run_function(module, "k", args, arg_names=COPY_ARGS)


def test_run_function_on_the_tdm_copies_example():
    a = np.arange(256 * 64, dtype=np.float16).reshape(256, 64)
    b = np.ones((64, 128), np.float16)
    args = {"a": a, "b": b, "m": 256, "n": 128, "k": 64, "sa": 64, "sb": 128}
    result = run_function(TDM_COPIES, "load_a_b", args, grid=(2, 1, 1))
    st = result.stats
    assert st.writers("a") == (0, 1, 2, 3) and st.writers("b") == (4, 5, 6, 7)
    np.testing.assert_array_equal(st.instructions(program=(1, 0, 0)), [2] * 8)
    assert st.in_flight_at_exit == 0
    assert result["a"] is a


SCALARS = """
module attributes {tile.num_warps = 8 : i32} {
  func.func @s(%x: i32, %y: i32, %f: f32) -> (i32, i32, i32, i32, i32, i32, i1, i64, i32, i32, i8, i32, i32, i32, f32, f16, i64) {
    %c4 = arith.constant 4 : i32
    %q = arith.divsi %x, %y : i32
    %r = arith.remsi %x, %y : i32
    %uq = arith.divui %x, %y : i32
    %ur = arith.remui %x, %y : i32
    %cd = arith.ceildivsi %x, %y : i32
    %fd = arith.floordivsi %x, %y : i32
    %lt = arith.cmpi ult, %x, %y : i32
    %e = arith.extui %x : i32 to i64
    %sh = arith.shrui %x, %c4 : i32
    %sa = arith.shrsi %x, %c4 : i32
    %t = arith.trunci %x : i32 to i8
    %mx = arith.maxsi %x, %y : i32
    %sl = arith.shli %y, %c4 : i32
    %lt_s = arith.cmpi slt, %x, %y : i32
    %sel = arith.select %lt_s, %x, %y : i32
    %bf = arith.truncf %f : f32 to bf16
    %bfx = arith.extf %bf : bf16 to f32
    %h = arith.truncf %f : f32 to f16
    %ix = arith.index_cast %x : i32 to index
    %ix64 = arith.index_cast %ix : index to i64
    return %q, %r, %uq, %ur, %cd, %fd, %lt, %e, %sh, %sa, %t, %mx, %sl, %sel, %bfx, %h, %ix64 : i32, i32, i32, i32, i32, i32, i1, i64, i32, i32, i8, i32, i32, i32, f32, f16, i64
  }
}
"""


def test_scalar_arith_semantics():
    result = run_function(SCALARS, "s", {"x": -7, "y": 2, "f": 1.01171875})
    values = [v[0].item() for v in result.returns[(0, 0, 0)]]
    assert values == [
        -3,  # divsi truncates
        -1,  # remsi takes the dividend's sign
        (2**32 - 7) // 2,  # divui
        1,  # remui
        -3,  # ceildivsi
        -4,  # floordivsi
        0,  # ult: 0xfffffff9 < 2 is false
        2**32 - 7,  # extui
        (2**32 - 7) >> 4,  # shrui
        -1,  # shrsi
        -7,  # trunci to i8
        2,  # maxsi
        32,  # shli
        -7,  # select
        1.015625,  # bf16: a tie rounds to the even mantissa
        np.float16(1.01171875).item(),
        -7,  # index_cast sign-extends
    ]


LOOPS = """
module attributes {tile.num_warps = 8 : i32} {
  func.func @l() -> (i32, i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %c10 = arith.constant 10 : i32
    %w = "tile.warp_id"() : () -> i32
    %s = scf.for %i = %c0 to %w step %c1 iter_args(%a = %c0) -> (i32) : i32 {
      %n = arith.addi %a, %i : i32
      scf.yield %n : i32
    }
    %odd = arith.andi %w, %c1 : i32
    %is_odd = arith.cmpi ne, %odd, %c0 : i32
    %v = scf.if %is_odd -> (i32) {
      %m = arith.muli %w, %c10 : i32
      scf.yield %m : i32
    } else {
      scf.yield %c3 : i32
    }
    return %s, %v : i32, i32
  }
}
"""


def test_warp_varying_loops_and_branches():
    s, v = run_function(LOOPS, "l", []).returns[(0, 0, 0)]
    np.testing.assert_array_equal(s, [0, 0, 1, 3, 6, 10, 15, 21])
    np.testing.assert_array_equal(v, [3, 10, 3, 30, 3, 50, 3, 70])


BLOCKS = """
module attributes {tile.num_warps = 4 : i32} {
  func.func @b(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %m: i32, %n: i32, %ld: i64, %om: i32, %on: i32) {
    %one = arith.constant 1 : i64
    %t = "tile.load_block"(%x, %m, %n, %ld, %one, %om, %on) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32) -> tensor<16x16xf32>
    %two = arith.constant dense<2.0> : tensor<16x16xf32>
    %u = arith.mulf %t, %two : tensor<16x16xf32>
    "tile.store_block"(%y, %m, %n, %ld, %one, %om, %on, %u) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, tensor<16x16xf32>) -> ()
    return
  }
}
"""


def test_masked_load_and_store_blocks():
    x = np.arange(20 * 12, dtype=np.float32).reshape(20, 12)
    y = np.full_like(x, np.nan)
    run_function(BLOCKS, "b", [x, y, 20, 12, 12, 8, 4])
    np.testing.assert_array_equal(y[8:, 4:], 2 * x[8:, 4:])
    assert np.isnan(y[:8]).all() and np.isnan(y[:, :4]).all()


def test_unsupported_op_names_the_op_and_its_location():
    text = """
module attributes {tile.num_warps = 4 : i32} {
  func.func @u(%x: i32) -> f32 {
    %f = arith.bitcast %x : i32 to f32
    return %f : f32
  }
}
"""
    with pytest.raises(ModelError, match=r"unsupported op 'arith.bitcast' at -:4:10"):
        run_function(text, "u", [1])


def test_bf16_round():
    x = np.array(
        [1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, -(1.0 + 2.0**-8 + 2.0**-20), np.inf, 3.4e38, np.nan],
        dtype=np.float32,
    )
    r = bf16_round(x)
    assert r.dtype == np.float32
    np.testing.assert_array_equal(r[:5], [1.0, 1.015625, -1.0078125, np.inf, np.inf])
    assert np.isnan(r[5])
    assert (r.view(np.uint32) & 0xFFFF == 0).all()


def test_parse_module_and_argument_errors():
    module = parse_module(GEMM)
    a = np.zeros((8, 8), np.float32)  # f16 pointer: float16 expected
    with pytest.raises(ModelError, match="expected a float16 array"):
        run_function(module, "gemm", [a, a, a, 8, 8, 8, 8, 8, 8])
    with pytest.raises(ModelError, match="takes 9 arguments"):
        run_function(module, "gemm", [a])


def test_argument_names_are_read_where_the_parser_located_them():
    assert Interpreter(COPY_KERNEL, "k").arg_names == list(COPY_ARGS)
    # A module holds no source names: positions, unless names are given.
    assert Interpreter(parse_module(COPY_KERNEL), "k").arg_names == [f"arg{i}" for i in range(5)]
    named = Interpreter(parse_module(COPY_KERNEL), "k", arg_names=COPY_ARGS)
    assert named.arg_names == list(COPY_ARGS)
    # Printed text names its arguments %arg0...; its locations point at the
    # original text, where a name is read only if one starts there.
    printed = edited(COPY_KERNEL, lambda m: None)
    assert Interpreter(printed, "k").arg_names == [f"arg{i}" for i in range(5)]
