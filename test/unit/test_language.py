"""Tests of the Python front end (gemm_opt.language) and the Python GEMM example."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from support.scripts import load_script

import gemm_opt.language as tl
from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_MLIR = ROOT / "examples" / "gemm_gfx1250.mlir"
EXAMPLE_PY = ROOT / "examples" / "gemm_gfx1250.py"
THIS_FILE = Path(__file__).resolve()


def _load_example():
    return load_script(EXAMPLE_PY, "gemm_gfx1250_example")


example = _load_example()


def line_of(marker: str, path: Path = THIS_FILE) -> int:
    """The 1-based line of ``path`` that ends with ``marker`` (exactly one)."""
    lines = path.read_text().splitlines()
    hits = [i for i, text in enumerate(lines, 1) if text.rstrip().endswith(marker)]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


def op_histogram(text: str) -> Counter:
    """Op names inside every func.func of ``text``, counted (nested regions included)."""
    ctx = make_context()
    with ctx:
        module = ir.Module.parse(text)
        assert module.operation.verify()
        counts: Counter = Counter()

        def walk(block):
            for op in block.operations:
                counts[op.operation.name] += 1
                for region in op.operation.regions:
                    for b in region.blocks:
                        walk(b)

        for f in module.body.operations:
            assert f.operation.name == "func.func"
            walk(f.operation.regions[0].blocks[0])
    return counts


def build_error(kernel, **kwargs) -> tl.CompilationError:
    kwargs.setdefault("num_warps", 8)
    with pytest.raises(tl.CompilationError) as info:
        kernel.build_ir(**kwargs)
    return info.value


def assert_points_at(err: tl.CompilationError, mark: str) -> None:
    """``err`` is reported at the line tagged ``# MARK: <mark>`` and shows it."""
    marker = f"# MARK: {mark}"
    line = line_of(marker)
    assert str(err).startswith(f"{THIS_FILE}:{line}: "), str(err)
    assert err.lineno == line
    assert marker in err.source_line
    assert marker in str(err)


# ---- the GEMM example ---------------------------------------------------------------------


def test_gemm_ir_matches_the_mlir_example_op_for_op():
    python_ops = op_histogram(example.gemm.build_ir(num_warps=8))
    mlir_ops = op_histogram(EXAMPLE_MLIR.read_text())
    assert python_ops == mlir_ops
    assert python_ops["tile.async_tdm_copy_global_to_local"] == 4
    assert python_ops["scf.for"] == 1


def _arg_attrs(text: str) -> list[str]:
    with make_context():
        module = ir.Module.parse(text)  # kept: the function is the module's, freed with it
        fn = module.body.operations[0]
        return [str(d) for d in fn.arg_attrs]


def test_gemm_states_the_mlir_examples_argument_facts():
    # lda, ldb and ldc multiples of 16 (what cuda:90's TMA descriptors need),
    # in both forms of the example, with the same contract attribute.
    facts = _arg_attrs(example.gemm.build_ir(num_warps=8))
    assert facts == _arg_attrs(EXAMPLE_MLIR.read_text())
    assert facts == ["{}"] * 6 + ["{tile.divisibility = 16 : i32}"] * 3


def test_divisible_annotation_is_checked():
    @tl.kernel
    def k(n: tl.divisible(tl.int32, 8)):
        pass

    assert "%arg0: i32 {tile.divisibility = 8 : i32}" in k.build_ir(num_warps=4)
    with pytest.raises(
        tl.CompilationError, match=r"expects tl\.int32 or tl\.int64, got tl\.float16"
    ):
        tl.divisible(tl.float16, 16)
    with pytest.raises(tl.CompilationError, match=r"positive int divisor below 2\*\*31, got 0"):
        tl.divisible(tl.int64, 0)


def test_local_store_and_async_store_check_their_operands():
    acc = tl.WmmaLayout(version=3, warps_per_cta=[2, 2], instr_shape=[16, 16, 32], transposed=True)
    sl = tl.PaddedShared(interval=64, amount=8, order=[1, 0])

    @tl.kernel
    def k(c: tl.ptr(tl.float16), M: tl.int32, ldc: tl.int64, BN: tl.constexpr):
        d = tl.make_tensor_descriptor(
            c, shape=[M, M], strides=[ldc, 1], block_shape=[64, BN], layout=sl
        )
        buf = tl.allocate_shared(tl.float16, [64, 64], sl)
        tl.local_store(buf, tl.zeros([64, BN], tl.float16, acc))
        tl.async_store(d, buf)
        tl.async_wait(0)

    text = k.build_ir(num_warps=4, BN=64)
    assert '"tile.local_store"' in text and '"tile.async_tdm_copy_local_to_global"' in text
    with pytest.raises(tl.CompilationError, match=r"local_store: the value \(\[64, 32\]"):
        k.build_ir(num_warps=4, BN=32)


def test_gemm_ir_carries_module_attributes_and_hints():
    text = example.gemm.build_ir(num_warps=8)
    assert "tile.num_warps = 8 : i32" in text
    assert "tile.threads_per_warp = 32 : i32" in text
    assert 'tile.target = "gfx1250"' in text
    assert text.count("warp_used_hint = 15 : i32") == 2
    assert text.count("warp_used_hint = 240 : i32") == 2


@pytest.mark.parametrize(("target", "threads"), [("gfx1250", 32), ("gfx950", 64), ("gfx942", 64)])
def test_gemm_threads_per_warp_follows_the_target(target, threads):
    # gfx942 has 64 KiB of LDS: the default double-buffered 128x128x64 blocks
    # (73,680 bytes) do not fit, 128x128x32 blocks do.
    small = {"BLOCK_K": 32} if target == "gfx942" else {}
    text = example.gemm.build_ir(num_warps=8, target=target, **small)
    assert f"tile.threads_per_warp = {threads} : i32" in text


def test_gemm_bf16_and_unhinted_variants_verify():
    text = example.gemm.build_ir(num_warps=8, DTYPE=tl.bfloat16, HINT_A=None, HINT_B=None)
    assert "!tile.ptr<bf16>" in text
    assert "warp_used_hint" not in text
    assert "arith.truncf" in text


def test_gemm_ops_carry_the_example_source_locations():
    wmma_line = line_of("return tl.wmma(a_tile, b_tile, acc)", EXAMPLE_PY)
    module = example.gemm.build_module(num_warps=8)
    with module.context:
        found = []

        def walk(op):
            if op.name == "tile.wmma":
                loc = op.location
                assert isinstance(loc, ir.FileLineColLoc)
                found.append((loc.filename, loc.start_line))
            for region in op.regions:
                for block in region.blocks:
                    for child in block.operations:
                        walk(child.operation)

        walk(module.operation)
    assert found == [(str(EXAMPLE_PY), wmma_line)]
    text = example.gemm.build_ir(num_warps=8, debug_info=True)
    assert f'"{EXAMPLE_PY}":{wmma_line}:' in text


def test_gemm_example_main_builds(capsys):
    assert example.main(["--dtype", "bf16"]) == 0
    assert "verified" in capsys.readouterr().out


# ---- authoring errors ------------------------------------------------------------------------

_SA = tl.SwizzledShared(vec=1, per_phase=1, max_phase=1, order=[1, 0])


def _desc_and_buffer(a, M, K, lda):
    """A 128x64 descriptor over the MxK tensor at ``a`` and a buffer for its block."""
    desc = tl.make_tensor_descriptor(
        a, shape=[M, K], strides=[lda, 1], block_shape=[128, 64], layout=_SA
    )
    return desc, tl.allocate_shared(tl.float16, [128, 64], _SA)


@tl.kernel
def bad_hint_kernel(a: tl.ptr(tl.float16), M: tl.int32, K: tl.int32, lda: tl.int64):
    desc, buf = _desc_and_buffer(a, M, K, lda)
    tl.async_copy(desc, buf, warp_used_hint=0b00000111)  # MARK: bad-hint
    tl.async_wait(0)


def test_illegal_hint_points_at_the_call_with_suggestions():
    err = build_error(bad_hint_kernel, num_warps=8)
    assert_points_at(err, "bad-hint")
    assert "did you mean" in str(err)
    assert "0b00001111" in str(err)
    assert "tl.async_copy(desc, buf, warp_used_hint=0b00000111)" in str(err)


@tl.kernel
def hinted_copy_kernel(a: tl.ptr(tl.float16), M: tl.int32, K: tl.int32, lda: tl.int64):
    desc, buf = _desc_and_buffer(a, M, K, lda)
    tl.async_copy(desc, buf, warp_used_hint=0b0011)  # MARK: hinted-copy
    tl.async_wait(0)


def test_hint_with_num_warps_3_is_rejected():
    err = build_error(hinted_copy_kernel, num_warps=3)
    assert_points_at(err, "hinted-copy")
    assert "power of two" in err.message


def test_hinted_copy_builds_with_4_warps():
    assert "warp_used_hint = 3 : i32" in hinted_copy_kernel.build_ir(num_warps=4)


@tl.kernel
def rank_mismatch_kernel(a: tl.ptr(tl.float16), M: tl.int32, K: tl.int32, lda: tl.int64):
    desc = tl.make_tensor_descriptor(
        a, shape=[M, K], strides=[lda, 1], block_shape=[128, 64], layout=_SA
    )
    desc.update(offsets=[0, 0, 0])  # MARK: rank


def test_rank_mismatch_points_at_the_update():
    err = build_error(rank_mismatch_kernel)
    assert_points_at(err, "rank")
    assert "expects 2 offsets" in err.message
    assert "got 3" in err.message


_ACC_42 = tl.WmmaLayout(version=3, warps_per_cta=[4, 2], instr_shape=[16, 16, 32])
_ACC_24 = tl.WmmaLayout(version=3, warps_per_cta=[2, 4], instr_shape=[16, 16, 32])


@tl.kernel
def wmma_mismatch_kernel(a: tl.ptr(tl.float16), b: tl.ptr(tl.float16), lda: tl.int64):
    ta = tl.load_block(a, [128, 64], [lda, 1], [0, 0], [128, 64], tl.DotOperand(0, _ACC_24, 8))
    tb = tl.load_block(b, [64, 128], [lda, 1], [0, 0], [64, 128], tl.DotOperand(1, _ACC_42, 8))
    acc = tl.zeros([128, 128], tl.float32, _ACC_42)
    tl.wmma(ta, tb, acc)  # MARK: wmma


def test_mismatched_wmma_layouts_point_at_the_wmma():
    err = build_error(wmma_mismatch_kernel)
    assert_points_at(err, "wmma")
    assert "layouts do not match" in err.message


@tl.kernel
def wmma_dtype_kernel(a: tl.ptr(tl.float16), b: tl.ptr(tl.bfloat16), lda: tl.int64):
    ta = tl.load_block(a, [128, 64], [lda, 1], [0, 0], [128, 64], tl.DotOperand(0, _ACC_42, 8))
    tb = tl.load_block(b, [64, 128], [lda, 1], [0, 0], [64, 128], tl.DotOperand(1, _ACC_42, 8))
    tl.wmma(ta, tb, tl.zeros([128, 128], tl.float32, _ACC_42))  # MARK: wmma-dtype


def test_mixed_wmma_dtypes_are_rejected():
    err = build_error(wmma_dtype_kernel)
    assert_points_at(err, "wmma-dtype")
    assert "both float16 or both bfloat16" in err.message


@tl.kernel
def layout_warps_kernel():
    tl.zeros([128, 128], tl.float32, _ACC_42)  # MARK: layout-warps


def test_register_layout_must_cover_num_warps():
    err = build_error(layout_warps_kernel, num_warps=4)
    assert_points_at(err, "layout-warps")
    assert "num_warps = 4" in err.message


_BAD_PARTITION = tl.PartitionedShared(num_partitions=2, num_groups=1, partition_dim=4)


@tl.kernel
def verifier_error_kernel(a: tl.ptr(tl.float16), M: tl.int32, K: tl.int32, lda: tl.int64):
    tl.make_tensor_descriptor(
        a, shape=[M, K], strides=[lda, 1], block_shape=[128, 64], layout=_BAD_PARTITION
    )  # MARK: verifier


def test_verifier_failures_become_compilation_errors_at_the_call():
    err = build_error(verifier_error_kernel)
    # A multi-line call is reported at its first line.
    call_line = line_of("# MARK: verifier") - 2
    assert str(err).startswith(f"{THIS_FILE}:{call_line}: "), str(err)
    assert "'tile.make_tensor_descriptor' op" in err.message
    assert err.diagnostics and err.diagnostics[0][3] == "error"


@tl.kernel
def store_dtype_kernel(c: tl.ptr(tl.float16), ldc: tl.int64):
    acc = tl.zeros([128, 128], tl.float32, _ACC_42)
    tl.store_block(c, [128, 128], [ldc, 1], [0, 0], acc)  # MARK: store-dtype


def test_store_of_the_wrong_dtype_is_rejected():
    err = build_error(store_dtype_kernel)
    assert_points_at(err, "store-dtype")
    assert "value.to(" in err.message


@tl.kernel
def truth_value_kernel(M: tl.int32):
    if M > 0:  # MARK: truth
        tl.async_wait(0)


def test_traced_values_have_no_truth_value():
    err = build_error(truth_value_kernel)
    assert_points_at(err, "truth")
    assert "tl.if_" in err.message


@tl.kernel
def loop_type_kernel(M: tl.int32, ld: tl.int64):
    tl.for_loop(0, M, 1, init=ld, body=lambda i, x: i)  # MARK: loop-type


def test_loop_body_must_keep_carried_types():
    err = build_error(loop_type_kernel)
    assert_points_at(err, "loop-type")
    assert "carried value 0" in err.message


@tl.kernel
def fused_overlap_kernel(a: tl.ptr(tl.float16), M: tl.int32, K: tl.int32, lda: tl.int64):
    da = tl.make_tensor_descriptor(a, [M, K], [lda, 1], [128, 64], _SA)
    ba = tl.allocate_shared(tl.float16, [128, 64], _SA)
    bb = tl.allocate_shared(tl.float16, [128, 64], _SA)
    tl.async_copy_fused([(da, ba, 0b00001111), (da, bb, 0b00000011)])  # MARK: fused


def test_overlapping_fused_hints_are_rejected():
    err = build_error(fused_overlap_kernel)
    assert_points_at(err, "fused")
    assert "async_copy_fused" in err.message
    assert "overlaps member 0" in err.message


def test_constexpr_binding_errors():
    with pytest.raises(tl.CompilationError, match="needs a value for constexpr 'BLOCK'"):
        constexpr_kernel.build_ir(num_warps=8)
    with pytest.raises(tl.CompilationError, match="no parameter 'BLOCKS'"):
        constexpr_kernel.build_ir(num_warps=8, BLOCK=64, BLOCKS=1)
    with pytest.raises(tl.CompilationError, match="runtime parameter"):
        constexpr_kernel.build_ir(num_warps=8, BLOCK=64, M=3)
    with pytest.raises(tl.CompilationError, match="unknown target"):
        constexpr_kernel.build_ir(num_warps=8, BLOCK=64, target="gfx90a")
    with pytest.raises(tl.CompilationError, match="build it with"):
        constexpr_kernel(1, 2)


@tl.kernel
def constexpr_kernel(M: tl.int32, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK % 16 == 0, "BLOCK must be a multiple of 16")  # MARK: static
    tl.program_id(0) * BLOCK + M


def test_static_assert_points_at_the_assert():
    err = build_error(constexpr_kernel, BLOCK=24)
    assert_points_at(err, "static")
    assert "BLOCK must be a multiple of 16" in err.message


def test_missing_annotation_is_reported_at_the_def():
    def no_annotation(a, M: tl.int32):  # MARK: def
        pass

    k = tl.kernel(no_annotation)
    err = build_error(k)
    assert_points_at(err, "def")
    assert "needs an annotation" in err.message


def test_builders_outside_a_kernel_raise():
    with pytest.raises(tl.CompilationError, match=r"while a @tl\.kernel is being built"):
        tl.program_id(0)


# ---- scalars and control flow ----------------------------------------------------------------


@tl.kernel
def scalar_kernel(M: tl.int32, ld: tl.int64, c: tl.ptr(tl.float32)):
    pid = tl.program_id(0)
    wide = pid * ld + 3  # i32 * i64 -> i64
    q = (M - 1) // 4 % 3
    mixed = tl.where(q < 2, pid, 7)
    neg = -mixed
    total, count = tl.for_loop(0, M, 2, init=(0, wide), body=lambda i, acc, w: (acc + i, w + ld))
    picked = tl.if_(total > neg, lambda: total * 2, lambda: count.to(tl.int32))
    tl.if_(picked == 0, lambda: tl.async_wait(0))
    layout = tl.Blocked([1, 4], [4, 8], [8, 1], [1, 0])
    x = tl.load_block(c, [M, M], [ld, 1], [picked, 0], [64, 64], layout)
    y = tl.convert_layout(x * 2.0 + x, layout)
    tl.store_block(c, [M, M], [ld, 1], [0, 0], y)


def test_scalar_arithmetic_loops_and_conditionals_verify():
    text = scalar_kernel.build_ir(num_warps=8)
    ops = op_histogram(text)
    assert ops["arith.extsi"] == 1
    assert ops["arith.divsi"] == 1 and ops["arith.remsi"] == 1
    assert ops["arith.select"] == 1
    assert ops["scf.for"] == 1
    assert ops["scf.if"] == 2
    assert ops["tile.convert_layout"] == 1
    assert ops["arith.mulf"] == 1 and ops["arith.addf"] == 1
    assert "iter_args" in text


def test_constants_are_hoisted_and_shared():
    text = constexpr_kernel.build_ir(num_warps=8, BLOCK=64)
    ops = op_histogram(text)
    assert ops["arith.constant"] == 1
    body = text.split("func.func", 1)[1].splitlines()
    assert body[1].strip() == "%c64_i32 = arith.constant 64 : i32"


def test_i32_constant_range_is_checked():
    @tl.kernel
    def big(M: tl.int32):
        M + (1 << 40)  # MARK: big

    err = build_error(big)
    assert_points_at(err, "big")
    assert "does not fit" in err.message


def test_fused_copy_builds():
    @tl.kernel
    def fused(a: tl.ptr(tl.float16), M: tl.int32, K: tl.int32, lda: tl.int64):
        da = tl.make_tensor_descriptor(a, [M, K], [lda, 1], [128, 64], _SA)
        ba = tl.allocate_shared(tl.float16, [128, 64], _SA)
        bb = tl.allocate_shared(tl.float16, [128, 64], _SA)
        tl.async_copy_fused([(da, ba, 0b00001111), (da.update([64, 0]), bb, 0b11110000)])
        tl.async_wait(0)

    text = fused.build_ir(num_warps=8)
    assert "warp_used_hints = array<i32: 15, 240>" in text


# ---- lowering and interpretation ------------------------------------------------------------


def test_gemm_compiles_for_gfx1250():
    compiled = example.gemm.compile(target="gfx1250", num_warps=8)
    assert "tile.async_tdm" in compiled.asm["tile"]
    assert compiled.asm["ttgir"]
    assert "tensor_load_to_lds" in compiled.asm["amdgcn"]
    assert "v_wmma" in compiled.asm["amdgcn"]
    assert compiled.hsaco
    assert compiled.metadata
    assert compiled.metrics.wmma > 0


@tl.kernel
def strided_kernel(a: tl.ptr(tl.float16), M: tl.int32, K: tl.int32, lda: tl.int64):
    desc = tl.make_tensor_descriptor(a, [M, K], [1, lda], [128, 64], _SA)  # MARK: strided
    buf = tl.allocate_shared(tl.float16, [128, 64], _SA)
    tl.async_copy(desc, buf)
    tl.async_wait(0)


def test_lowering_rules_point_at_the_kernel_source():
    with pytest.raises(tl.CompilationError) as info:
        strided_kernel.compile(target="gfx1250", num_warps=8)
    assert_points_at(info.value, "strided")
    assert "unit innermost stride" in info.value.message


def test_pipeline_errors_point_at_the_compile_call():
    with pytest.raises(tl.CompilationError) as info:
        example.gemm.compile(pipeline="no-such-pass", num_warps=8)  # MARK: bad-pipeline
    assert_points_at(info.value, "bad-pipeline")


@pytest.mark.parametrize(("m", "n", "k"), [(64, 64, 96), (70, 50, 40)])
@pytest.mark.parametrize("hinted", [True, False])
def test_gemm_runs_in_the_interpreter(m, n, k, hinted):
    from gemm_opt.model.interpreter import run_gemm

    hints = {} if hinted else {"HINT_A": None, "HINT_B": None}
    text = example.gemm.build_ir(num_warps=8, **hints)
    rng = np.random.default_rng(m * 10000 + n * 100 + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = run_gemm(text, a, b)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert not np.isnan(c).any()
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-2)


@pytest.mark.parametrize("stages", [3, 4])
@pytest.mark.parametrize(("m", "n", "k"), [(64, 64, 320), (70, 50, 40), (130, 120, 200)])
def test_deeper_pipelines_run_in_the_interpreter(stages, m, n, k):
    """NUM_BUFFERS tiles in flight: the prologue fills NUM_BUFFERS-1 buffers and
    each step waits for 2*(NUM_BUFFERS-1) copies; the model (race detector on)
    equals numpy before and after the tile passes, also when K has fewer tiles
    than the pipeline has stages."""
    from gemm_opt.core.pipeline import build_pass_manager
    from gemm_opt.lowering import REGISTRY
    from gemm_opt.lowering.pipelines import tile_passes
    from gemm_opt.model.interpreter import parse_module, run_gemm

    text = example.gemm.build_ir(num_warps=8, NUM_BUFFERS=stages, BLOCK_M=64, BLOCK_N=64)
    rng = np.random.default_rng(stages * 1000 + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    module = parse_module(text)
    with module.context:
        build_pass_manager(",".join(tile_passes("gfx1250")), REGISTRY).run(module.operation)
    for kernel in (text, module):
        c = run_gemm(kernel, a, b)
        assert not np.isnan(c).any()
        np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-2)


def test_bf16_gemm_runs_in_the_interpreter():
    from gemm_opt.model.interpreter import bf16_round, run_gemm

    text = example.gemm.build_ir(num_warps=8, DTYPE=tl.bfloat16)
    rng = np.random.default_rng(7)
    a = bf16_round(rng.standard_normal((70, 40)))
    b = bf16_round(rng.standard_normal((40, 50)))
    c = run_gemm(text, a, b)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-2, atol=1e-1)


@tl.kernel
def escape_kernel(M: tl.int32):
    leaked = []
    tl.for_loop(0, M, 1, body=lambda i: leaked.append(i + 1))  # MARK: escape-def
    leaked[0] * 2  # MARK: escape-use


def test_module_verifier_errors_point_at_the_use_with_notes():
    err = build_error(escape_kernel)
    assert_points_at(err, "escape-use")
    assert "does not dominate" in err.message
    assert f"{THIS_FILE}:{line_of('# MARK: escape-def')}:" in str(err)


def test_shared_layouts_are_the_one_core_model():
    from gemm_opt.core import layouts

    assert tl.SwizzledShared is layouts.SwizzledShared
    assert tl.PaddedShared is layouts.PaddedShared
    assert tl.PartitionedShared is layouts.PartitionedShared

    part = tl.PartitionedShared(2, 1, 0, inner=tl.PaddedShared(64, 8, order=(1, 0)))

    @tl.kernel
    def partitioned(a: tl.ptr(tl.float16), M: tl.int32, K: tl.int32, lda: tl.int64):
        desc = tl.make_tensor_descriptor(a, [M, K], [lda, 1], [128, 64], part)
        buf = tl.allocate_shared(tl.float16, [128, 64], part)
        tl.async_copy(desc, buf, warp_used_hint=0b00001111)
        tl.async_wait(0)
        # The layout reaches the IR as the dialect's attribute and comes back equal.
        assert desc.layout == buf.layout == part

    text = partitioned.build_ir(num_warps=8)
    assert "#tile.partitioned_shared<" in text and "#tile.padded_shared<" in text
