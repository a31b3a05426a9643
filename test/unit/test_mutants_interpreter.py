"""The model's entry point at its edges (found by ``benchmarks/mutation.py``):
which function runs, the argument names read back from the text, the
arrays a pointer argument takes or refuses (``ModelError`` naming the
argument, never a wrong reinterpretation of the bytes), and ``run_gemm``'s
staging (each operand in its pointer's element type, integer C from zero)
and grid (the block of C's 2-D store, a TDM store's through updated
descriptors).
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import gemm_opt.language as tl
from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context
from gemm_opt.model.interpreter import Interpreter, ModelError, run_function, run_gemm

ONE = """module attributes {tile.num_warps = 1 : i32} {
  func.func @f(%x: i32, %y_2: i32) -> i32 {
    %s = arith.addi %x, %y_2 : i32
    return %s : i32
  }
}"""
TWO = """module attributes {tile.num_warps = 1 : i32} {
  func.func @f(%x: i32) -> i32 { return %x : i32 }
  func.func @g(%x: i32) -> i32 {
    %c1 = arith.constant 1 : i32
    %y = arith.addi %x, %c1 : i32
    return %y : i32
  }
}"""
#: The argument on the text's first line.
FIRST_LINE = (
    "module attributes {tile.num_warps = 1 : i32} { func.func @f(%x: i32) -> i32 "
    "{ return %x : i32 } }"
)
#: The argument on the text's last line.
LAST_LINE = """module attributes {tile.num_warps = 1 : i32} {
func.func @f(%x: i32) -> i32 { return %x : i32 } }"""
#: The argument's name ends its line: the text does not declare it as ``%x:``.
NAME_ENDS_LINE = """module attributes {tile.num_warps = 1 : i32} {
  func.func @f(%x
      : i32) -> i32 { return %x : i32 }
}"""
NO_WARPS = "func.func @f(%x: i32) -> i32 { return %x : i32 }"


def _value(text: str, name: str | None, args) -> int:
    (out,) = run_function(text, name, args).returns[(0, 0, 0)]
    return int(out[0])


def test_the_one_function_runs_unnamed() -> None:
    assert _value(ONE, None, {"x": 5, "y_2": 6}) == 11


def test_of_two_functions_the_named_one_runs() -> None:
    assert _value(TWO, "g", {"x": 2}) == 3
    assert _value(TWO, "f", {"x": 2}) == 2
    with pytest.raises(ModelError, match=r"the module has functions \['f', 'g'\]; name the one"):
        run_function(TWO, None, {"x": 2})


@pytest.mark.parametrize("text", [FIRST_LINE, LAST_LINE])
def test_argument_names_on_the_first_and_last_line(text: str) -> None:
    assert _value(text, None, {"x": 7}) == 7


def test_a_name_ending_its_line_leaves_positions() -> None:
    assert _value(NAME_ENDS_LINE, None, [9]) == 9
    assert _value(NAME_ENDS_LINE, None, {"arg0": 4}) == 4
    with pytest.raises(ModelError, match="missing argument 'arg0'"):
        run_function(NAME_ENDS_LINE, None, {"x": 4})


def test_warps_come_from_the_module_or_the_caller() -> None:
    with pytest.raises(ModelError, match=r"no 'tile\.num_warps' on an enclosing op"):
        Interpreter(NO_WARPS)
    with pytest.raises(ModelError, match=r"no 'tile\.num_warps' on an enclosing op"):
        Interpreter(NO_WARPS, num_warps=0)
    assert Interpreter(NO_WARPS, num_warps=1).num_warps == 1


POINTERS = """module attributes {tile.num_warps = 1 : i32} {
  func.func @f(%i: !tile.ptr<i32>, %b: !tile.ptr<i8>, %q: !tile.ptr<f8E4M3FN>) -> (i32, i8) {
    %c0 = arith.constant 0 : i32
    %v = "tile.load_scalar"(%i, %c0) : (!tile.ptr<i32>, i32) -> i32
    %c1 = arith.constant 1 : i32
    %w = arith.addi %v, %c1 : i32
    %prev = "tile.atomic_rmw"(%i, %c0, %w) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    %t = arith.trunci %v : i32 to i8
    return %v, %t : i32, i8
  }
}"""
I32 = np.full(4, 7, np.int32)
I8 = np.zeros(4, np.int8)
CODES = np.zeros(4, np.uint8)


def _pointers(i=I32, b=I8, q=CODES):
    return run_function(POINTERS, "f", {"i": i.copy(), "b": b.copy(), "q": q.copy()})


@pytest.mark.parametrize(
    "i",
    [
        np.full(4, 7, np.uint32),  # same width, reinterpreted as signed
        np.full(4, 7, np.int32),
    ],
)
def test_an_i32_pointer_takes_4_byte_integers(i: np.ndarray) -> None:
    v, _ = _pointers(i=i).returns[(0, 0, 0)]
    assert int(v[0]) == 7


def test_an_unsigned_array_is_read_as_its_signed_bits() -> None:
    i = np.full(4, 2**32 - 2, np.uint32)
    r = _pointers(i=i)
    v, t = r.returns[(0, 0, 0)]
    assert int(v[0]) == -2 and int(t[0]) == -2
    assert int(r.args["i"][0]) == 2**32 - 1  # -2 + 1, written back through the view


@pytest.mark.parametrize("dtype", [np.int64, np.int16, np.float32, np.uint64])
def test_an_i32_pointer_refuses_other_arrays(dtype) -> None:
    with pytest.raises(ModelError, match="argument 'i' points to i32: expected a int32 array"):
        _pointers(i=np.zeros(4, dtype))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.bool_])
def test_an_i8_pointer_takes_1_byte_integers(dtype) -> None:
    _pointers(b=np.zeros(4, dtype))


@pytest.mark.parametrize("dtype", [np.uint8, ml_dtypes.float8_e4m3fn])
def test_an_fp8_pointer_takes_codes_or_float8(dtype) -> None:
    _pointers(q=np.zeros(4, dtype))


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.float16])
def test_an_fp8_pointer_refuses_other_arrays(dtype) -> None:
    with pytest.raises(ModelError, match="argument 'q' points to f8E4M3FN"):
        _pointers(q=np.zeros(4, dtype))


def test_a_strided_or_read_only_array_is_refused() -> None:
    frozen = np.zeros(4, np.int32)
    frozen.flags.writeable = False
    for i in (np.zeros(8, np.int32)[::2], frozen):
        with pytest.raises(ModelError, match="argument 'i' must be a writeable C-contiguous"):
            run_function(POINTERS, "f", {"i": i, "b": I8.copy(), "q": CODES.copy()})


FP8 = """
#bl = #tile.blocked<{size_per_thread = array<i64: 1>, threads_per_warp = array<i64: 32>, warps_per_cta = array<i64: 1>, order = array<i64: 0>}>
module attributes {tile.num_warps = 1 : i32} {
  func.func @f(%q: !tile.ptr<f8E4M3FN>) -> tensor<32xf32, #bl> {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %one = arith.constant 1 : i64
    %v = "tile.load_block"(%q, %c32, %one, %c0) {operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!tile.ptr<f8E4M3FN>, i32, i64, i32) -> tensor<32xf8E4M3FN, #bl>
    %f = arith.extf %v : tensor<32xf8E4M3FN, #bl> to tensor<32xf32, #bl>
    return %f : tensor<32xf32, #bl>
  }
}
"""


def test_a_float8_array_is_read_by_its_codes() -> None:
    values = np.linspace(-3.5, 4.5, 32).astype(ml_dtypes.float8_e4m3fn)
    for q in (values, values.view(np.uint8)):
        (out,) = run_function(FP8, "f", {"q": q.copy()}).returns[(0, 0, 0)]
        np.testing.assert_array_equal(np.asarray(out), values.astype(np.float32))


@pytest.mark.parametrize(
    ("grid", "grid3"),
    [((), (1, 1, 1)), ((3,), (3, 1, 1)), ((3, 2), (3, 2, 1)), ((1, 2, 3), (1, 2, 3))],
)
def test_a_short_grid_is_padded_with_ones(grid: tuple, grid3: tuple) -> None:
    r = run_function(ONE, None, {"x": 1, "y_2": 2}, grid)
    assert r.grid == grid3
    assert not r.sync.concurrent  # no atomics: the programs run one after another
    assert sorted(r.returns) == sorted(
        (x, y, z) for x in range(grid3[0]) for y in range(grid3[1]) for z in range(grid3[2])
    )


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"grid": (2, 0)}, r"the grid must be positive, got \[2, 0, 1\]"),
        ({"num_resident": 0}, "num_resident must be at least 1, got 0"),
        ({"num_resident": True}, "num_resident must be an int, got True"),
        ({"num_resident": 1.5}, "num_resident must be an int, got 1.5"),
        ({"seed": True}, "seed must be an int or None, got True"),
        ({"seed": 1.5}, "seed must be an int or None, got 1.5"),
        ({"seed": "3"}, "seed must be an int or None, got '3'"),
    ],
)
def test_run_options_are_checked(kw: dict, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        run_function(ONE, None, {"x": 1, "y_2": 2}, **kw)


CHAIN = """module attributes {tile.num_warps = 1 : i32} {
  func.func @chain(%flags: !tile.ptr<i32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %first = arith.cmpi eq, %pid, %c0 : i32
    scf.if %first {
      %seen = scf.while (%s = %c0) : (i32) -> i32 {
        %got = "tile.atomic_rmw"(%flags, %c1, %c0) {kind = "add", sem = "acquire", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
        %unset = arith.cmpi eq, %got, %c0 : i32
        scf.condition(%unset) %got : i32
      } do {
      ^bb0(%o: i32):
        scf.yield %o : i32
      }
    }
    %prev = "tile.atomic_rmw"(%flags, %pid, %c1) {kind = "xchg", sem = "release", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    return
  }
}"""


@pytest.mark.parametrize("seed", [None, 3])
def test_two_programs_run_concurrently_and_one_inline(seed: int | None) -> None:
    """Program 0 waits for program 1's flag: two programs must interleave
    (with one resident slot each, in any order); one program runs inline."""
    flags = np.zeros(2, np.int32)
    r = run_function(CHAIN, "chain", {"flags": flags}, (2, 1, 1), num_resident=2, seed=seed)
    assert r.sync.concurrent and flags.tolist() == [1, 1]
    flags = np.array([0, 1], np.int32)
    r = run_function(CHAIN, "chain", {"flags": flags}, (1, 1, 1), num_resident=1, seed=seed)
    assert not r.sync.concurrent and r.sync.max_resident == 1


# ---- run_gemm: which function is the GEMM ---------------------------------------------

GEMM = (Path(__file__).resolve().parents[2] / "examples" / "gemm_gfx1250.mlir").read_text()
#: Functions next to the GEMM that do not have its signature (a, b, c pointers,
#: then six integers): one argument short, a pointer among the integers (first
#: and last), an integer among the pointers.
LOOKALIKES = """module {
  func.func @eight(%a: !tile.ptr<f16>, %b: !tile.ptr<f16>, %c: !tile.ptr<f16>, %M: i32, %N: i32, %K: i32, %lda: i64, %ldb: i64) { return }
  func.func @ptr_m(%a: !tile.ptr<f16>, %b: !tile.ptr<f16>, %c: !tile.ptr<f16>, %M: !tile.ptr<f16>, %N: i32, %K: i32, %lda: i64, %ldb: i64, %ldc: i64) { return }
  func.func @ptr_ldc(%a: !tile.ptr<f16>, %b: !tile.ptr<f16>, %c: !tile.ptr<f16>, %M: i32, %N: i32, %K: i32, %lda: i64, %ldb: i64, %ldc: !tile.ptr<f16>) { return }
  func.func @int_b(%a: !tile.ptr<f16>, %b: i32, %c: !tile.ptr<f16>, %M: i32, %N: i32, %K: i32, %lda: i64, %ldb: i64, %ldc: i64) { return }
}"""


def _gemm_module(*, lookalikes: bool, twin: bool) -> ir.Module:
    """The example GEMM with the lookalikes and/or a copy of itself named @twin."""
    module = ir.Module.parse(GEMM)
    with ir.InsertionPoint(module.body):
        if lookalikes:
            source = ir.Module.parse(LOOKALIKES)  # kept alive while its ops are cloned
            for op in source.body.operations:
                op.operation.clone()
        if twin:
            copy = module.body.operations[0].operation.clone()
            copy.attributes["sym_name"] = ir.StringAttr.get("twin")
    return module


def _ab() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    a = rng.integers(-3, 4, size=(16, 32)).astype(np.float16)
    return a, rng.integers(-3, 4, size=(32, 24)).astype(np.float16)


def test_run_gemm_finds_the_one_function_with_the_gemm_signature() -> None:
    a, b = _ab()
    with make_context():
        c = run_gemm(_gemm_module(lookalikes=True, twin=False), a, b)
    np.testing.assert_array_equal(c, (a.astype(np.float64) @ b).astype(np.float16))


def test_run_gemm_of_two_gemms_needs_a_name() -> None:
    a, b = _ab()
    with make_context():
        module = _gemm_module(lookalikes=True, twin=True)
        with pytest.raises(ModelError, match="exactly one function with the GEMM signature"):
            run_gemm(module, a, b)
        c = run_gemm(module, a, b, func_name="twin")
    np.testing.assert_array_equal(c, (a.astype(np.float64) @ b).astype(np.float16))


LANES = tl.SwizzledShared(vec=1, per_phase=1, max_phase=1, order=[0])


@tl.kernel
def copies_left_in_flight(src: tl.ptr(tl.int32), TRACKED: tl.constexpr):
    desc = tl.make_tensor_descriptor(src, shape=[32], strides=[1], block_shape=[32], layout=LANES)
    tl.async_copy(desc, tl.allocate_shared(tl.int32, [32], LANES))
    if TRACKED:
        bars = tl.allocate_mbarrier(1)
        tl.mbarrier.init(bars.index(0), count=1)
        tl.mbarrier.expect(bars.index(0), 128)
        tl.async_copy(desc, tl.allocate_shared(tl.int32, [32], LANES), barrier=bars.index(0))


@pytest.mark.parametrize(("tracked", "left"), [(False, 1), (True, 2)])
def test_copies_in_flight_at_exit_are_counted(tracked: bool, left: int) -> None:
    """An untracked copy never waited for and a barrier-tracked one never waited on."""
    text = copies_left_in_flight.build_ir(num_warps=1, TRACKED=tracked)
    r = run_function(text, "copies_left_in_flight", [np.arange(32, dtype=np.int32)])
    assert r.stats.in_flight_at_exit == left


# ---- run_gemm: staging and grid ------------------------------------------------------------

#: ``C = A`` block by block (B unread) through a GEMM signature of three element
#: types: i32 A and C, f16 B. The 4x8 block of C (not square) sizes the grid.
COPY_A = """
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 1>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 1, 1>, order = array<i64: 1, 0>}>
!t = tensor<4x8xi32, #bl>
module attributes {tile.num_warps = 1 : i32} {
  func.func @copy_a(%a: !tile.ptr<i32>, %b: !tile.ptr<f16>, %c: !tile.ptr<i32>, %M: i32, %N: i32, %K: i32, %lda: i64, %ldb: i64, %ldc: i64) {
    %c4 = arith.constant 4 : i32
    %c8 = arith.constant 8 : i32
    %one = arith.constant 1 : i64
    %pm = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %pn = "tile.program_id"() {axis = 1 : i32} : () -> i32
    %i = arith.muli %pm, %c4 : i32
    %j = arith.muli %pn, %c8 : i32
    %t = "tile.load_block"(%a, %M, %K, %lda, %one, %i, %j) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<i32>, i32, i32, i64, i64, i32, i32) -> !t
    STORE
    return
  }
}
"""
STORE_2D = (
    '"tile.store_block"(%c, %M, %N, %ldc, %one, %i, %j, %t) '
    "{operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} "
    ": (!tile.ptr<i32>, i32, i32, i64, i64, i32, i32, !t) -> ()"
)
#: A 1-D store of one element into C: it does not say how C is tiled.
STORE_1D = (
    '%s = "tile.load_block"(%a, %M, %lda, %i) {operandSegmentSizes = array<i32: 1, 1, 1, 1>} '
    ": (!tile.ptr<i32>, i32, i64, i32) -> tensor<1xi32, #tile.blocked<{size_per_thread = "
    "array<i64: 1>, threads_per_warp = array<i64: 32>, warps_per_cta = array<i64: 1>, "
    "order = array<i64: 0>}>>\n"
    '"tile.store_block"(%c, %M, %ldc, %i, %s) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} '
    ": (!tile.ptr<i32>, i32, i64, i32, tensor<1xi32, #tile.blocked<{size_per_thread = "
    "array<i64: 1>, threads_per_warp = array<i64: 32>, warps_per_cta = array<i64: 1>, "
    "order = array<i64: 0>}>>) -> ()"
)


def test_run_gemm_stages_each_operand_in_its_own_element_type() -> None:
    """Integer A and C (C starts at zero, not NaN), f16 B; the grid walks C in
    4x8 blocks: every row and column of C is written."""
    a = np.arange(64, dtype=np.int64).reshape(8, 8) * 1000 - 30000  # beyond f16's integers
    b = np.ones((8, 8), np.float16)
    c, result = run_gemm(COPY_A.replace("STORE", STORE_2D), a, b, return_result=True)
    assert c.dtype == np.int32
    np.testing.assert_array_equal(c, a)
    assert result.grid == (2, 1, 1)


def test_run_gemm_without_a_2d_store_of_c_cannot_size_the_grid() -> None:
    with pytest.raises(ModelError, match=r"cannot find the 2-D tile\.store_block of C"):
        run_gemm(COPY_A.replace("STORE", STORE_1D), np.ones((8, 8)), np.ones((8, 8)))


@pytest.mark.parametrize(
    ("a", "b"),
    [((8, 8, 1), (8, 8)), ((8, 8), (8,)), ((8, 4), (8, 8))],
    ids=["3-D a", "1-D b", "K mismatch"],
)
def test_run_gemm_checks_the_operand_shapes(a: tuple, b: tuple) -> None:
    with pytest.raises(ModelError, match="cannot multiply"):
        run_gemm(COPY_A.replace("STORE", STORE_2D), np.ones(a), np.ones(b))


def test_run_gemm_leaves_integer_c_zero_where_the_kernel_does_not_store() -> None:
    """Integers have no NaN to mark unwritten elements: C starts at zero."""
    a = np.arange(64).reshape(8, 8) + 1
    c = run_gemm(COPY_A.replace("STORE", STORE_2D), a, np.ones((8, 8)), grid=(1, 1))
    np.testing.assert_array_equal(c[:4], a[:4])
    np.testing.assert_array_equal(c[4:], 0)


#: ``COPY_A`` storing C by TDM: through a descriptor of C moved to the block by
#: ``tile.update_tensor_descriptor`` (what sizes the grid), then again through
#: the same descriptor carried into a loop (a block argument: not followed).
#: First, a TDM store of a 2x8 block of A back into A (not C: no size).
COPY_A_TDM = """
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 1>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 1, 1>, order = array<i64: 1, 0>}>
!t = tensor<4x8xi32, #bl>
!d = !tile.tensor_desc<tensor<4x8xi32, #s>>
!buf = !tile.shared<tensor<4x8xi32, #s>>
!t2 = tensor<2x8xi32, #bl>
!d2 = !tile.tensor_desc<tensor<2x8xi32, #s>>
!buf2 = !tile.shared<tensor<2x8xi32, #s>>
module attributes {tile.num_warps = 1 : i32, tile.target = "gfx1250", tile.threads_per_warp = 32 : i32} {
  func.func @copy_a(%a: !tile.ptr<i32>, %b: !tile.ptr<f16>, %c: !tile.ptr<i32>, %M: i32, %N: i32, %K: i32, %lda: i64, %ldb: i64, %ldc: i64) {
    %c4 = arith.constant 4 : i32
    %c8 = arith.constant 8 : i32
    %one = arith.constant 1 : i64
    %x0 = arith.constant 0 : index
    %x1 = arith.constant 1 : index
    %pm = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %pn = "tile.program_id"() {axis = 1 : i32} : () -> i32
    %i = arith.muli %pm, %c4 : i32
    %j = arith.muli %pn, %c8 : i32
    %t = "tile.load_block"(%a, %M, %K, %lda, %one, %i, %j) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<i32>, i32, i32, i64, i64, i32, i32) -> !t
    %t2 = "tile.load_block"(%a, %M, %K, %lda, %one, %i, %j) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<i32>, i32, i32, i64, i64, i32, i32) -> !t2
    %buf2 = "tile.local_alloc"() : () -> !buf2
    "tile.local_store"(%t2, %buf2) : (!t2, !buf2) -> ()
    %da = "tile.make_tensor_descriptor"(%a, %M, %K, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<i32>, i32, i32, i64, i64) -> !d2
    %da1 = "tile.update_tensor_descriptor"(%da, %i, %j) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!d2, i32, i32) -> !d2
    "tile.async_tdm_copy_local_to_global"(%da1, %buf2) : (!d2, !buf2) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %buf = "tile.local_alloc"() : () -> !buf
    "tile.local_store"(%t, %buf) : (!t, !buf) -> ()
    %d0 = "tile.make_tensor_descriptor"(%c, %M, %N, %ldc, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<i32>, i32, i32, i64, i64) -> !d
    %d1 = "tile.update_tensor_descriptor"(%d0, %i, %j) {operandSegmentSizes = array<i32: 1, 2, 0, 0>} : (!d, i32, i32) -> !d
    "tile.async_tdm_copy_local_to_global"(%d1, %buf) : (!d, !buf) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %r = scf.for %it = %x0 to %x1 step %x1 iter_args(%d = %d1) -> (!d) {
      "tile.async_tdm_copy_local_to_global"(%d, %buf) : (!d, !buf) -> ()
      "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
      scf.yield %d : !d
    }
    return
  }
}
"""


def test_run_gemm_sizes_the_grid_by_a_tdm_store_of_c() -> None:
    a = np.arange(64).reshape(8, 8) - 20
    c, result = run_gemm(COPY_A_TDM, a, np.ones((8, 8)), return_result=True)
    np.testing.assert_array_equal(c, a)
    assert result.grid == (2, 1, 1)
