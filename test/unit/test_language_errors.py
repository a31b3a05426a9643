"""Every authoring mistake in ``gemm_opt.language`` is a ``tl.CompilationError``
at the user's line: never a raw ``TypeError``, an abort, or a kernel that
silently means something else. Each case asserts the type, the message and
the line (tagged ``# MARK: <name>``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.scripts import load_script

import gemm_opt.language as tl

THIS_FILE = Path(__file__).resolve()
ROOT = THIS_FILE.parents[2]

_SA = tl.SwizzledShared(vec=1, per_phase=1, max_phase=1, order=[1, 0])
_ACC = tl.WmmaLayout(version=3, warps_per_cta=[4, 2], instr_shape=[16, 16, 32])
_BLOCKED = tl.Blocked([1, 4], [4, 8], [8, 1], [1, 0])


def line_of(marker: str) -> int:
    """The 1-based line of this file that ends with ``marker`` (exactly one)."""
    lines = THIS_FILE.read_text().splitlines()
    hits = [i for i, text in enumerate(lines, 1) if text.rstrip().endswith(marker)]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


def assert_at(err: tl.CompilationError, mark: str, *fragments: str) -> None:
    """``err`` is at the line tagged ``# MARK: <mark>`` and its message holds ``fragments``."""
    assert isinstance(err, tl.CompilationError)
    line = line_of(f"# MARK: {mark}")
    assert (err.filename, err.lineno) == (str(THIS_FILE), line), str(err)
    assert str(err).startswith(f"{THIS_FILE}:{line}: "), str(err)
    assert f"# MARK: {mark}" in err.source_line
    for fragment in fragments:
        assert fragment in err.message, (fragment, err.message)


def build_error(kernel, **kwargs) -> tl.CompilationError:
    kwargs.setdefault("num_warps", 8)
    with pytest.raises(tl.CompilationError) as info:
        kernel.build_ir(**kwargs)
    return info.value


def _copy_pair(a, M, K, lda, shape=(128, 64)):
    desc = tl.make_tensor_descriptor(a, [M, K], [lda, 1], list(shape), _SA)
    return desc, tl.allocate_shared(tl.float16, list(shape), _SA)


def _mma_operands():
    """B (64x64) and an accumulator for an MMA with :func:`_copy_pair`'s buffer as A."""
    return tl.allocate_shared(tl.float16, [64, 64], _SA), tl.zeros([128, 64], tl.float32, _ACC)


# ---- the known holes ---------------------------------------------------------------------


@tl.kernel
def python_range_kernel(M: tl.int32):
    for _ in range(M):  # MARK: range
        tl.async_wait(0)


def test_python_range_over_a_traced_value():
    err = build_error(python_range_kernel)
    assert_at(err, "range", "traced scalar is not a Python int", "tl.for_loop")


@tl.kernel
def huge_wait_kernel():
    tl.async_wait(2**40)  # MARK: huge-wait


def test_wait_count_out_of_range_is_not_truncated():
    err = build_error(huge_wait_kernel)
    assert_at(err, "huge-wait", "async_wait num must be a constexpr int in [0, 2147483647]")
    assert "1099511627776" in err.message


@tl.kernel
def big_lds_kernel():
    tl.allocate_shared(tl.float16, [512, 512], _SA)  # MARK: lds


def test_shared_buffer_beyond_the_lds_is_reported_at_the_allocation():
    err = build_error(big_lds_kernel)
    assert_at(err, "lds", "bytes")
    assert err.diagnostics, "the dialect's verifier judged it"


@tl.kernel
def buffer_index_kernel():
    bufs = tl.allocate_shared(tl.float16, [2, 128, 64], _SA)
    bufs.index(5)  # MARK: index


def test_constant_buffer_index_out_of_range():
    err = build_error(buffer_index_kernel)
    assert_at(err, "index", "buffer index 5 is out of range", "holds 2 buffers")


@tl.kernel
def tiny_kernel(M: tl.int32):
    tl.program_id(0) + M


def test_compile_options_must_be_bools():
    with pytest.raises(tl.CompilationError) as info:
        tiny_kernel.compile(target="gfx1250", num_warps=8, fuse="yes")  # MARK: fuse
    assert_at(info.value, "fuse", "fuse must be True or False, got 'yes'")
    with pytest.raises(tl.CompilationError) as info:
        tiny_kernel.compile(num_warps=8, derive_hints=1)  # MARK: derive
    assert_at(info.value, "derive", "derive_hints must be True or False, got 1")
    with pytest.raises(tl.CompilationError) as info:
        tiny_kernel.compile(num_warps=8, pipeline=["tile-fuse-tdm-copies"])  # MARK: pipeline
    assert_at(info.value, "pipeline", "pipeline must be pass-pipeline text")


def test_num_warps_is_required():
    with pytest.raises(tl.CompilationError) as info:
        tiny_kernel.build_ir()  # MARK: no-warps
    assert_at(info.value, "no-warps", "num_warps is required")
    with pytest.raises(tl.CompilationError) as info:
        tiny_kernel.compile(target="gfx1250")  # MARK: no-warps-compile
    assert_at(info.value, "no-warps-compile", "num_warps is required")


def test_unlaunchable_warp_counts_are_reported_in_the_users_file():
    # Three warps build (no tl.* call depends on a power of two here) but no
    # backend launches them: the lowering says so at the compile call (module
    # rule) or at the kernel's def (Triton's rule, located by the function).
    with pytest.raises(tl.CompilationError) as info:
        tiny_kernel.compile(target="gfx1250", num_warps=3)  # MARK: warps-3
    err = info.value
    assert "num_warps" in err.message and "power of" in err.message, err.message
    assert err.filename == str(THIS_FILE)
    assert err.lineno in (line_of("# MARK: warps-3"), line_of("def tiny_kernel(M: tl.int32):"))


def test_num_warps_must_be_launchable():
    with pytest.raises(tl.CompilationError) as info:
        tiny_kernel.build_ir(num_warps=64)  # MARK: too-many-warps
    assert_at(info.value, "too-many-warps", "2048 threads on gfx1250", "at most 1024")
    with pytest.raises(tl.CompilationError) as info:
        tiny_kernel.build_ir(num_warps=True)  # MARK: bool-warps
    assert_at(info.value, "bool-warps", "num_warps must be a positive int, got True")


def test_dot_operand_k_width_is_checked_before_triton_sees_it():
    # k_width = 3 used to abort the whole process inside Triton; run it in a
    # child so that a regression fails this test instead of killing the run.
    code = (
        "import gemm_opt.language as tl\n"
        "acc = tl.WmmaLayout(version=3, warps_per_cta=[4, 2])\n"
        "try:\n"
        "    tl.DotOperand(op_idx=0, parent=acc, k_width=3)\n"
        "except tl.CompilationError as e:\n"
        "    print('ERR', e.lineno, e.message)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ERR 4 DotOperand k_width"), out.stdout
    assert "power of two, got 3" in out.stdout

    with pytest.raises(tl.CompilationError) as info:
        tl.DotOperand(op_idx=1, parent=_ACC, k_width=6)  # MARK: k-width
    assert_at(info.value, "k-width", "must be a positive power of two, got 6")


def _example():
    return load_script(ROOT / "examples" / "gemm_gfx1250.py", "gemm_example")


def test_cuda90_compiles_from_the_front_end():
    compiled = _example().gemm.compile(target="cuda:90", num_warps=8)
    assert compiled.target == "cuda:90"
    assert compiled.metadata["target"] == ("cuda", 90, 32)
    assert ".target sm_90a" in compiled.asm["ptx"]
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in compiled.asm["ptx"]
    assert compiled.hsaco  # the cubin
    assert '"ttg.threads-per-warp" = 32' in compiled.asm["ttgir"]
    assert "warp_used_hint" not in compiled.asm["ttgir"]


def test_example_compiles_for_cuda90_from_its_command_line(capsys):
    assert _example().main(["--target", "cuda:90", "--unhinted", "--num-warps", "4"]) == 0
    out = capsys.readouterr().out
    assert "compiled for cuda:90" in out
    assert "cubin: " in out


def test_unknown_target_is_reported_at_the_call():
    with pytest.raises(tl.CompilationError) as info:
        tiny_kernel.compile(target="cuda:80", num_warps=8)  # MARK: bad-target
    assert_at(info.value, "bad-target", "unknown target 'cuda:80'", "cuda:90")


# ---- traced values in Python protocols ----------------------------------------------------


@tl.kernel
def protocol_kernel(M: tl.int32, c: tl.ptr(tl.float32), ld: tl.int64, CASE: tl.constexpr):
    x = tl.zeros([64, 64], tl.float32, _BLOCKED)
    if CASE == "int":
        int(M)  # MARK: proto-int
    elif CASE == "iter":
        for _ in x:  # MARK: proto-iter
            pass
    elif CASE == "len":
        len(x)  # MARK: proto-len
    elif CASE == "index":
        x[0]  # MARK: proto-index
    elif CASE == "eq":
        _ = x == x  # MARK: proto-eq
    elif CASE == "floordiv":
        x // 2  # MARK: proto-floordiv
    elif CASE == "matmul":
        x @ x  # MARK: proto-matmul
    elif CASE == "pow":
        M**2  # MARK: proto-pow
    elif CASE == "hash":
        _ = {M: 1}  # MARK: proto-hash
    elif CASE == "list-mul":
        [0] * M  # MARK: proto-list-mul
    elif CASE == "ptr-add":
        c + 1  # MARK: proto-ptr-add


@pytest.mark.parametrize(
    ("case", "fragment"),
    [
        ("int", "int() of a traced scalar"),
        ("iter", "cannot be iterated"),
        ("len", "len() of a traced tensor"),
        ("index", "cannot be indexed"),
        ("eq", "operator == is not defined"),
        ("floordiv", "operator // is not defined"),
        ("matmul", "operator @ is not defined"),
        ("pow", "operator ** is not defined"),
        ("hash", "traced scalar is unhashable"),
        ("list-mul", "unsupported operand for *"),
        ("ptr-add", "operator + is not defined"),
    ],
)
def test_traced_values_refuse_python_protocols(case, fragment):
    err = build_error(protocol_kernel, CASE=case)
    assert_at(err, f"proto-{case}", fragment)


# ---- argument types and values of every public op ------------------------------------------


@tl.kernel
def misuse_kernel(
    a: tl.ptr(tl.float16), M: tl.int32, K: tl.int32, lda: tl.int64, CASE: tl.constexpr
):
    desc, buf = _copy_pair(a, M, K, lda)
    if CASE == "program-id-str":
        tl.program_id("0")  # MARK: program-id-str
    elif CASE == "program-id-3":
        tl.program_id(3)  # MARK: program-id-3
    elif CASE == "hint-str":
        tl.async_copy(desc, buf, warp_used_hint="0b1111")  # MARK: hint-str
    elif CASE == "hint-traced":
        tl.async_copy(desc, buf, warp_used_hint=M)  # MARK: hint-traced
    elif CASE == "hint-wide":
        tl.async_copy(desc, buf, warp_used_hint=1 << 40)  # MARK: hint-wide
    elif CASE == "cache":
        tl.async_copy(desc, buf, cache=1)  # MARK: cache
    elif CASE == "pred":
        tl.async_copy(desc, buf, pred=1)  # MARK: pred
    elif CASE == "block-not-pow2":
        tl.make_tensor_descriptor(a, [M, K], [lda, 1], [96, 64], _SA)  # MARK: block-not-pow2
    elif CASE == "block-traced":
        tl.make_tensor_descriptor(a, [M, K], [lda, 1], [M, 64], _SA)  # MARK: block-traced
    elif CASE == "shape-not-list":
        tl.make_tensor_descriptor(a, M, [lda, 1], [128, 64], _SA)  # MARK: shape-not-list
    elif CASE == "stride-float":
        tl.make_tensor_descriptor(a, [M, K], [lda, 1.0], [128, 64], _SA)  # MARK: stride-float
    elif CASE == "base-not-ptr":
        tl.make_tensor_descriptor(M, [M, K], [lda, 1], [128, 64], _SA)  # MARK: base-not-ptr
    elif CASE == "alloc-dtype":
        tl.allocate_shared("float8", [128, 64], _SA)  # MARK: alloc-dtype
    elif CASE == "alloc-float-dim":
        tl.allocate_shared(tl.float16, [128, 64.0], _SA)  # MARK: alloc-float-dim
    elif CASE == "alloc-layout":
        tl.allocate_shared(tl.float16, [128, 64], "swizzled")  # MARK: alloc-layout
    elif CASE == "padded-not-pow2":
        layout = tl.PaddedShared(interval=48, amount=8)
        tl.allocate_shared(tl.float16, [128, 64], layout)  # MARK: padded-not-pow2
    elif CASE == "order-repeats":
        layout = tl.SwizzledShared(order=(0, 0))
        tl.allocate_shared(tl.float16, [128, 64], layout)  # MARK: order-repeats
    elif CASE == "order-rank":
        layout = tl.SwizzledShared(order=(2, 1, 0))
        tl.make_tensor_descriptor(a, [M, K], [lda, 1], [128, 64], layout)  # MARK: order-rank
    elif CASE == "swizzle-vec-0":
        layout = tl.SwizzledShared(vec=0)
        tl.allocate_shared(tl.float16, [128, 64], layout)  # MARK: swizzle-vec-0
    elif CASE == "full-float-int":
        tl.full([64, 64], 1.5, tl.int32, _BLOCKED)  # MARK: full-float-int
    elif CASE == "full-traced":
        tl.full([64, 64], M, tl.int32, _BLOCKED)  # MARK: full-traced
    elif CASE == "zeros-huge":
        tl.zeros([2048, 1024], tl.float32, _BLOCKED)  # MARK: zeros-huge
    elif CASE == "zeros-layout":
        tl.zeros([64, 64], tl.float32, "blocked")  # MARK: zeros-layout
    elif CASE == "layout-rank":
        tl.zeros([64], tl.float32, _BLOCKED)  # MARK: layout-rank
    elif CASE == "wmma-rank":
        tl.zeros([64, 64, 2], tl.float32, _ACC)  # MARK: wmma-rank
    elif CASE == "where-float":
        tl.where(M > 0, M, 1.5)  # MARK: where-float
    elif CASE == "where-cond":
        tl.where(M, M, 1)  # MARK: where-cond
    elif CASE == "loop-step-0":
        tl.for_loop(0, M, 0, body=lambda i: None)  # MARK: loop-step-0
    elif CASE == "loop-body":
        tl.for_loop(0, M, 1, body=None)  # MARK: loop-body
    elif CASE == "loop-float-bound":
        tl.for_loop(0, 2.5, 1, body=lambda i: None)  # MARK: loop-float-bound
    elif CASE == "if-cond":
        tl.if_(M, lambda: None)  # MARK: if-cond
    elif CASE == "tensor-to-int":
        tl.zeros([64, 64], tl.float32, _BLOCKED).to(tl.int32)  # MARK: tensor-to-int
    elif CASE == "update-offsets":
        desc.update(offsets=M)  # MARK: update-offsets
    elif CASE == "store-offsets":
        value = tl.zeros([64, 64], tl.float16, _BLOCKED)
        tl.store_block(a, [M, K], [lda, 1], [0], value)  # MARK: store-offsets
    elif CASE == "fused-hint":
        tl.async_copy_fused([(desc, buf, "x"), (desc, buf, 2)])  # MARK: fused-hint
    elif CASE == "fused-members":
        tl.async_copy_fused(desc)  # MARK: fused-members
    elif CASE == "copy-dtype":
        other = tl.allocate_shared(tl.bfloat16, [128, 64], _SA)
        tl.async_copy(desc, other)  # MARK: copy-dtype
    elif CASE == "wait-float":
        tl.async_wait(1.0)  # MARK: wait-float
    elif CASE == "static-assert-traced":
        tl.static_assert(M > 0)  # MARK: static-assert-traced
    elif CASE == "scalar-float-mix":
        M + 0.5  # MARK: scalar-float-mix
    elif CASE == "scalar-to-bad":
        M.to("float8")  # MARK: scalar-to-bad
    elif CASE == "local-load-not-buffer":
        tl.local_load(desc, _BLOCKED)  # MARK: local-load-not-buffer
    elif CASE == "use-acc-int":
        b_buf, acc = _mma_operands()
        tl.async_wmma(buf, b_buf, acc, use_acc=1)  # MARK: use-acc-int
    elif CASE == "use-acc-i32":
        b_buf, acc = _mma_operands()
        tl.async_wmma(buf, b_buf, acc, use_acc=M)  # MARK: use-acc-i32


MISUSES = [
    ("program-id-str", "program_id axis must be 0, 1 or 2, got '0'"),
    ("program-id-3", "program_id axis must be 0, 1 or 2, got 3"),
    ("hint-str", "warp_used_hint must be an int"),
    ("hint-traced", "warp_used_hint must be a constexpr int"),
    ("hint-wide", "does not fit in 32 bits"),
    ("cache", "cache must be one of"),
    ("pred", "pred must be a bool or a traced i1"),
    ("block-not-pow2", "block dims must be powers of two"),
    (
        "block-traced",
        "block_shape[0] must be a constexpr int in [1, 2147483647], got Scalar(tl.int32)",
    ),
    ("shape-not-list", "shape must be a list or tuple"),
    ("stride-float", "stride must be a Python int or a traced tl.int64, got 1.0"),
    ("base-not-ptr", "base must be a pointer argument"),
    ("alloc-dtype", "allocate_shared dtype must be a tl dtype"),
    (
        "alloc-float-dim",
        "allocate_shared shape[1] must be a constexpr int in [1, 2147483647], got 64.0",
    ),
    ("alloc-layout", "allocate_shared layout must be a shared layout"),
    ("padded-not-pow2", "powers of two, got 48 and 8"),
    ("order-repeats", "order [0, 0] must be a permutation of 0..1"),
    ("order-rank", "order [2, 1, 0] has 3 entries but a 128x64 block needs 2"),
    ("swizzle-vec-0", "swizzled layout vec = 0 must be a power of two >= 1"),
    ("full-float-int", "cannot fill a tl.int32 tensor with the float 1.5"),
    ("full-traced", "full value must be a Python number"),
    ("zeros-huge", "has 2097152 elements; a block holds at most 1048576"),
    ("zeros-layout", "full layout must be a register layout"),
    ("layout-rank", "has rank 2, the tensor has rank 1"),
    ("wmma-rank", "WmmaLayout needs a 2-D tensor"),
    ("where-float", "cannot mix the tl.int32 value with the float 1.5"),
    ("where-cond", "where condition must be a bool or a traced i1"),
    ("loop-step-0", "for_loop step must be positive, got 0"),
    ("loop-body", "for_loop body must be a function, got None"),
    ("loop-float-bound", "for_loop bound must be a Python int or a traced tl.int32, got 2.5"),
    ("if-cond", "if_ condition must be a bool or a traced i1"),
    ("tensor-to-int", "converts between float types"),
    ("update-offsets", "update offsets must be a list or tuple"),
    ("store-offsets", "store_block expects 2 offsets for a rank-2 block, got 1"),
    ("fused-hint", "member 0 warp_used_hint must be an int"),
    ("fused-members", "async_copy_fused members must be a list or tuple"),
    ("copy-dtype", "destination element type tl.bfloat16 does not match"),
    ("wait-float", "async_wait num must be a constexpr int"),
    ("static-assert-traced", "static_assert needs a constexpr condition"),
    ("scalar-float-mix", "cannot mix the tl.int32 value with the float 0.5"),
    ("scalar-to-bad", "to() must be a tl dtype"),
    ("local-load-not-buffer", "local_load expects a shared buffer"),
    ("use-acc-int", "async_wmma use_acc must be a bool or a traced i1 (a comparison), got 1"),
    ("use-acc-i32", "async_wmma use_acc must be a bool or a traced i1 (a comparison), got"),
]


@pytest.mark.parametrize(("case", "fragment"), MISUSES, ids=[c for c, _ in MISUSES])
def test_op_misuse_is_a_compilation_error_at_the_call(case, fragment):
    err = build_error(misuse_kernel, CASE=case)
    assert_at(err, case, fragment)


def test_every_misuse_case_is_tested():
    source = THIS_FILE.read_text()
    body = source[source.index("def misuse_kernel(") : source.index("MISUSES = [")]
    cases = {
        line.split('"')[1]
        for line in body.splitlines()
        if line.strip().startswith(("if CASE ==", "elif CASE =="))
    }
    assert cases == {c for c, _ in MISUSES}


# ---- layouts and kernels ------------------------------------------------------------------


def test_layout_constructors_check_their_fields():
    with pytest.raises(tl.CompilationError) as info:
        tl.WmmaLayout(version=3, warps_per_cta=[4, 2], instr_shape=[16, 0, 32])  # MARK: instr-0
    assert_at(info.value, "instr-0", "instr_shape entries must be positive, got [16, 0, 32]")
    with pytest.raises(tl.CompilationError) as info:
        tl.WmmaLayout(version=3, warps_per_cta=[4, 2], instr_shape=[16, 16, 24])  # MARK: instr-24
    assert_at(info.value, "instr-24", "powers of two")
    with pytest.raises(tl.CompilationError) as info:
        tl.WmmaLayout(version=7, warps_per_cta=[4, 2])  # MARK: version
    assert_at(info.value, "version", "version must be 1, 2 or 3, got 7")
    with pytest.raises(tl.CompilationError) as info:
        tl.Blocked([1, 4], [4, 8], [8, 1], [0, 0])  # MARK: blocked-order
    assert_at(info.value, "blocked-order", "permutation of 0..1")
    with pytest.raises(tl.CompilationError) as info:
        tl.DotOperand(op_idx=True, parent=_ACC, k_width=8)  # MARK: op-idx
    assert_at(info.value, "op-idx", "op_idx must be 0 (A) or 1 (B), got True")


def test_kernel_level_mistakes():
    with pytest.raises(tl.CompilationError) as info:
        tl.kernel(3)  # MARK: kernel-of-int
    assert_at(info.value, "kernel-of-int", "decorates a Python function")
    with pytest.raises(tl.CompilationError) as info:
        tiny_kernel(1)  # MARK: direct-call
    assert_at(info.value, "direct-call", "build it with .build_ir")
    with pytest.raises(tl.CompilationError) as info:
        tiny_kernel.build_ir(num_warps=8, debug_info="yes")  # MARK: debug-info
    assert_at(info.value, "debug-info", "debug_info must be True or False")


@tl.kernel
def typed_ptr_kernel(a: tl.ptr("DTYPE"), DTYPE: tl.constexpr):
    tl.program_id(0)


def test_constexpr_element_type_must_be_a_dtype():
    with pytest.raises(tl.CompilationError) as info:
        typed_ptr_kernel.build_ir(num_warps=8, DTYPE=16)  # MARK: ptr-dtype
    assert_at(info.value, "ptr-dtype", "constexpr 'DTYPE' (element type of 'a') must be a tl dtype")


# ---- Python errors raised while tracing ----------------------------------------------------


@tl.kernel
def python_error_kernel(M: tl.int32, CASE: tl.constexpr):
    if CASE == "missing-arg":
        tl.zeros([64, 64], tl.float32)  # MARK: missing-arg
    elif CASE == "bad-keyword":
        tl.async_wait(count=1)  # MARK: bad-keyword
    elif CASE == "zero-division":
        64 // (CASE == "nope")  # MARK: zero-division
    elif CASE == "recursion":
        python_error_kernel(M, CASE)  # MARK: recursion


PYTHON_ERRORS = [
    ("missing-arg", "TypeError: zeros() missing 1 required positional argument: 'layout'"),
    ("bad-keyword", "TypeError: async_wait() got an unexpected keyword argument 'count'"),
    ("zero-division", "ZeroDivisionError: integer division or modulo by zero"),
    ("recursion", "RecursionError: maximum recursion depth exceeded"),
]


@pytest.mark.parametrize(("case", "fragment"), PYTHON_ERRORS, ids=[c for c, _ in PYTHON_ERRORS])
def test_python_errors_in_the_kernel_become_compilation_errors(case, fragment):
    err = build_error(python_error_kernel, CASE=case)
    assert_at(err, case, fragment)
    assert "internal error" not in err.message
    assert err.__cause__ is not None  # the original traceback stays reachable


LEAK_SCRIPT = """\
import gemm_opt.language as tl

stash = []


@tl.kernel
def k(M: tl.int32, FIRST: tl.constexpr):
    if FIRST:
        stash.append(M)
    else:
        stash[0] + 1


k.build_ir(num_warps=8, FIRST=True)
try:
    k.build_ir(num_warps=8, FIRST=False)
except tl.CompilationError as e:
    print("ERR", e.lineno, e.message)
"""


def test_a_traced_value_kept_from_another_build_is_refused(tmp_path):
    # Its IR lives in the other build's context: using it used to crash the
    # process (SIGSEGV), so the case runs in a child.
    script = tmp_path / "leak.py"
    script.write_text(LEAK_SCRIPT)
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert out.stdout.startswith("ERR 11 this traced scalar belongs to another kernel build")


# ---- constexpr values of the wrong type or value ------------------------------------------

EXAMPLE_PY = ROOT / "examples" / "gemm_gfx1250.py"


def _example_line(text: str) -> int:
    lines = EXAMPLE_PY.read_text().splitlines()
    hits = [i for i, line in enumerate(lines, 1) if line.strip() == text]
    assert len(hits) == 1, (text, hits)
    return hits[0]


BAD_CONSTEXPRS = [
    ({"DTYPE": tl.float32}, "return tl.wmma(a_tile, b_tile, acc)", "both float16 or both bfloat16"),
    ({"DTYPE": "float8"}, None, "constexpr 'DTYPE' (element type of 'a') must be a tl dtype"),
    ({"BLOCK_K": 48}, "a_desc = tl.make_tensor_descriptor(", "must be powers of two"),
    ({"BLOCK_M": 128.0}, "off_m = pid_m * BLOCK_M", "cannot mix the tl.int32 value"),
    (
        {"HINT_A": "0b1111"},
        "tl.async_copy(a0, a_bufs.index(i), warp_used_hint=HINT_A)",
        "warp_used_hint must be an int",
    ),
    (
        {"NUM_BUFFERS": 1},
        'tl.static_assert(NUM_BUFFERS >= 2, "the schedule needs one buffer to fill while one is read")',
        "the schedule needs one buffer to fill while one is read",
    ),
]


@pytest.mark.parametrize(("constexprs", "line", "fragment"), BAD_CONSTEXPRS)
def test_bad_constexprs_are_reported_where_the_kernel_uses_them(constexprs, line, fragment):
    example = _example()
    with pytest.raises(tl.CompilationError) as info:
        example.gemm.build_ir(num_warps=8, **constexprs)  # MARK: bad-constexpr
    err = info.value
    assert fragment in err.message, err.message
    if line is None:  # the parameter types are read at the build call
        assert err.lineno == line_of("# MARK: bad-constexpr")
    else:
        assert (err.filename, err.lineno) == (str(EXAMPLE_PY), _example_line(line)), str(err)
