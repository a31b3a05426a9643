"""The model's memory rules at their edges (found by ``benchmarks/mutation.py``).

Small one-warp kernels move an 8x16 f16 tile between global arrays and a
two-slot shared ring; every index a program computes at run time (the
verifier only sees constants) is checked by the model: in range it moves
exactly the elements numpy says, one past either end it is a ``ModelError``
naming the op, never a wrong answer or a Python error.
"""

from __future__ import annotations

import numpy as np
import pytest

from gemm_opt.model.interpreter import ModelError, run_function

HEAD = """
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 1, 1>, order = array<i64: 1, 0>}>
!t = tensor<8x16xf16, #bl>
!slot = !tile.shared<tensor<8x16xf16, #s>>
!ring = !tile.shared<tensor<2x8x16xf16, #s>>
module attributes {tile.num_warps = 1 : i32} {
  func.func @f(%a: !tile.ptr<f16>, %out: !tile.ptr<f16>, %i: i32, %j: i32) {
    %c8 = arith.constant 8 : i32
    %c16 = arith.constant 16 : i32
    %c0 = arith.constant 0 : i32
    %ld = arith.constant 16 : i64
    %one = arith.constant 1 : i64
"""
TAIL = """
    return
  }
}
"""
#: Loads the 8x16 block of ``a`` at (%i, %j) into the tile ``STORE`` stores.
LOAD_AT = (
    '%out_tile = "tile.load_block"(%a, %c8, %c16, %ld, %one, %i, %j) '
    "{operandSegmentSizes = array<i32: 1, 2, 2, 2>} "
    ": (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32) -> !t\n"
)
#: Loads the 8x16 block of ``a`` at (0, 0) into %v.
LOAD = (
    '%v = "tile.load_block"(%a, %c8, %c16, %ld, %one, %c0, %c0) '
    "{operandSegmentSizes = array<i32: 1, 2, 2, 2>} "
    ": (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32) -> !t\n"
)
#: Stores %out_tile to ``out`` at (0, 0).
STORE = (
    '"tile.store_block"(%out, %c8, %c16, %ld, %one, %c0, %c0, %out_tile) '
    "{operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} "
    ": (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, !t) -> ()\n"
)
A = np.arange(8 * 16, dtype=np.float16).reshape(8, 16)


def _run(body: str, i: int, j: int = 0) -> np.ndarray:
    out = np.full_like(A, np.nan)
    run_function(HEAD + body + TAIL, "f", {"a": A.copy(), "out": out, "i": i, "j": j})
    return out


# ---- tile.memdesc_index ------------------------------------------------------------------

RING = (
    LOAD
    + '%ring = "tile.local_alloc"() : () -> !ring\n'
    + '%slot = "tile.memdesc_index"(%ring, %i) : (!ring, i32) -> !slot\n'
    + '"tile.local_store"(%v, %slot) : (!t, !slot) -> ()\n'
    + '%out_tile = "tile.local_load"(%slot) : (!slot) -> !t\n'
    + STORE
)


@pytest.mark.parametrize("slot", [0, 1])
def test_a_run_time_slot_of_the_ring_holds_the_tile(slot: int) -> None:
    np.testing.assert_array_equal(_run(RING, slot), A)


@pytest.mark.parametrize("slot", [-1, 2])
def test_a_run_time_slot_outside_the_ring_is_reported(slot: int) -> None:
    with pytest.raises(ModelError, match=rf"index \[{slot}\] out of range for 2 buffers$"):
        _run(RING, slot)


#: Two warps index the ring at ``warp_id + %i``: each warp its own slot.
PER_WARP_SLOT = """
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 2 : i32} {
  func.func @f(%i: i32) {
    %ring = "tile.local_alloc"() : () -> !tile.shared<tensor<2x8x16xf16, #s>>
    %w = "tile.warp_id"() : () -> i32
    %idx = arith.addi %w, %i : i32
    %slot = "tile.memdesc_index"(%ring, %idx)
      : (!tile.shared<tensor<2x8x16xf16, #s>>, i32) -> !tile.shared<tensor<8x16xf16, #s>>
    return
  }
}
"""


def test_one_warps_slot_outside_the_ring_is_reported() -> None:
    """Warps 0 and 1 at slots 0 and 1 are in range; at 1 and 2, warp 1 is not."""
    run_function(PER_WARP_SLOT, "f", {"i": 0})
    with pytest.raises(ModelError, match=r"index \[1, 2\] out of range for 2 buffers$"):
        run_function(PER_WARP_SLOT, "f", {"i": 1})


# ---- tensor.extract ------------------------------------------------------------------------

EXTRACT = (
    LOAD
    + "%ri = arith.index_cast %i : i32 to index\n"
    + "%rj = arith.index_cast %j : i32 to index\n"
    + "%x = tensor.extract %v[%ri, %rj] : !t\n"
    + "%out_tile = tensor.splat %x : !t\n"
    + STORE
)


@pytest.mark.parametrize(("i", "j"), [(0, 0), (7, 0), (0, 15), (7, 15), (3, 9)])
def test_an_element_extracted_at_run_time(i: int, j: int) -> None:
    np.testing.assert_array_equal(_run(EXTRACT, i, j), np.full_like(A, A[i, j]))


@pytest.mark.parametrize(("i", "j"), [(8, 0), (0, 16), (-1, 0), (0, -1)])
def test_an_extract_outside_the_tensor_is_reported(i: int, j: int) -> None:
    with pytest.raises(ModelError, match=rf"index \[{i}, {j}\] outside a \[8, 16\] tensor$"):
        _run(EXTRACT, i, j)


# ---- tile.load_block's bounds ----------------------------------------------------------------


@pytest.mark.parametrize(("i", "j"), [(0, 0), (1, 0), (0, 1), (7, 15), (8, 0), (0, 16), (-3, -5)])
def test_a_block_load_reads_the_elements_inside_the_shape_and_zero_outside(i: int, j: int) -> None:
    want = np.zeros((8 + 16, 16 + 32), dtype=np.float16)
    want[8 : 8 + 8, 16 : 16 + 16] = A  # A, padded with zeros on every side
    want = want[8 + i : 16 + i, 16 + j : 32 + j]
    np.testing.assert_array_equal(_run(LOAD_AT + STORE, i, j), want)


#: A splat of a run-time size: the model runs static shapes only.
DYNAMIC_SPLAT = """
module attributes {tile.num_warps = 1 : i32} {
  func.func @f(%x: f16, %n: index) {
    %s = tensor.splat %x[%n] : tensor<?xf16>
    return
  }
}
"""


def test_a_splat_of_a_run_time_size_is_refused() -> None:
    with pytest.raises(ModelError, match=r"only static splats of a scalar are modelled$"):
        run_function(DYNAMIC_SPLAT, "f", {"x": 1.0, "n": 4})


#: An 8x16 block load whose rows step backwards through ``a`` from element 0.
BACKWARDS = """
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 1, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 1 : i32} {
  func.func @f(%a: !tile.ptr<f16>) {
    %c8 = arith.constant 8 : i32
    %c16 = arith.constant 16 : i32
    %c0 = arith.constant 0 : i32
    %back = arith.constant -16 : i64
    %one = arith.constant 1 : i64
    %v = "tile.load_block"(%a, %c8, %c16, %back, %one, %c0, %c0)
      {operandSegmentSizes = array<i32: 1, 2, 2, 2>}
      : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32) -> tensor<8x16xf16, #bl>
    return
  }
}
"""


def test_a_block_access_before_the_arrays_start_is_reported() -> None:
    """Rows 1..7 lie before element 0 of ``a``: an error, not numpy's wrap-around."""
    with pytest.raises(ModelError, match="access to 'a' reaches element"):
        run_function(BACKWARDS, "f", {"a": A.copy()})


#: The 8x16 block at column 1 of ``a``'s 8x16 elements, inside N = ``%n`` columns:
#: with N = 17 its last element is element 128, one past the 128-element array.
ONE_PAST = """
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 1, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 1 : i32} {
  func.func @f(%a: !tile.ptr<f16>, %n: i32) {
    %c8 = arith.constant 8 : i32
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %ld = arith.constant 16 : i64
    %one = arith.constant 1 : i64
    %v = "tile.load_block"(%a, %c8, %n, %ld, %one, %c0, %c1)
      {operandSegmentSizes = array<i32: 1, 2, 2, 2>}
      : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32) -> tensor<8x16xf16, #bl>
    return
  }
}
"""


def test_a_block_access_one_past_the_arrays_end_is_reported() -> None:
    run_function(ONE_PAST, "f", {"a": A.copy(), "n": 16})  # column 16 is outside N
    with pytest.raises(ModelError, match="access to 'a' reaches element 128 of a 128-element"):
        run_function(ONE_PAST, "f", {"a": A.copy(), "n": 17})


#: Warp 0 of 2 alone stores a block: which warp holds which element depends on
#: the register layout, which the model does not follow.
DIVERGENT_STORE = """
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 2, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 2 : i32} {
  func.func @f(%out: !tile.ptr<f16>) {
    %c16 = arith.constant 16 : i32
    %c0 = arith.constant 0 : i32
    %ld = arith.constant 16 : i64
    %one = arith.constant 1 : i64
    %zero = arith.constant 0.0 : f16
    %t = tensor.splat %zero : tensor<16x16xf16, #bl>
    %w = "tile.warp_id"() : () -> i32
    %first = arith.cmpi eq, %w, %c0 : i32
    scf.if %first {
      "tile.store_block"(%out, %c16, %c16, %ld, %one, %c0, %c0, %t)
        {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>}
        : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, tensor<16x16xf16, #bl>) -> ()
    }
    return
  }
}
"""


def test_a_block_store_by_some_warps_only_is_refused() -> None:
    out = np.full((16, 16), np.nan, dtype=np.float16)
    with pytest.raises(ModelError, match="store_block under warp-divergent control flow"):
        run_function(DIVERGENT_STORE, "f", {"out": out})
    assert np.isnan(out.astype(np.float32)).all()  # nothing was written


# ---- tile.local_store into a buffer partly in flight -------------------------------------

#: ``@k(%x, %y)`` of 4 warps: the two-slot ring is filled with zeros, then an
#: asynchronous op uses slot 1 only (one of ``IN_FLIGHT``) and, once its wait
#: retired it or not, ``PARTLY_TAIL`` stores the whole ring again.
PARTLY_HEAD = """
#s = #tile.swizzled_shared<{vec = 1, per_phase = 1, max_phase = 1, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{instr_shape = array<i64: 16, 16, 32>, transposed = true, version = 3 : i64, warps_per_cta = array<i64: 4, 1>}>
!ring = !tile.shared<tensor<2x64x32xf16, #s>>
!slot = !tile.shared<tensor<64x32xf16, #s>>
!bbuf = !tile.shared<tensor<32x64xf16, #s>>
!d = !tile.tensor_desc<tensor<64x32xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250", tile.threads_per_warp = 32 : i32} {
  func.func @k(%x: !tile.ptr<f16>, %y: !tile.ptr<f16>) {
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    %c64 = arith.constant 64 : i32
    %l32 = arith.constant 32 : i64
    %one = arith.constant 1 : i64
    %dx = "tile.make_tensor_descriptor"(%x, %c64, %c32, %l32, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !d
    %dy = "tile.make_tensor_descriptor"(%y, %c64, %c32, %l32, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !d
    %z = arith.constant dense<0.0> : tensor<2x64x32xf16>
    %zb = arith.constant dense<0.0> : tensor<32x64xf16>
    %acc = arith.constant dense<0.0> : !acc
    %ring = "tile.local_alloc"() : () -> !ring
    %b = "tile.local_alloc"() : () -> !bbuf
    "tile.local_store"(%z, %ring) : (tensor<2x64x32xf16>, !ring) -> ()
    "tile.local_store"(%zb, %b) : (tensor<32x64xf16>, !bbuf) -> ()
    %slot = "tile.memdesc_index"(%ring, %c1) : (!ring, i32) -> !slot
"""
PARTLY_TAIL = """
    "tile.local_store"(%z, %ring) : (tensor<2x64x32xf16>, !ring) -> ()
    return
  }
}
"""
TDM_WAIT = '"tile.async_tdm_wait"() {num = 0 : i32} : () -> ()\n'
#: (the op using slot 1, the wait that retires it, the race report).
IN_FLIGHT = {
    "a TDM copy into it": (
        '"tile.async_tdm_copy_global_to_local"(%dx, %slot) '
        "{operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!d, !slot) -> ()\n",
        TDM_WAIT,
        "write of shared memory still being written by an in-flight TDM copy",
    ),
    "a TDM store from it": (
        '"tile.async_tdm_copy_local_to_global"(%dy, %slot) : (!d, !slot) -> ()\n',
        TDM_WAIT,
        "write of shared memory an in-flight TDM store reads",
    ),
    "an MMA reading it": (
        '%r = "tile.async_wmma"(%slot, %b, %acc) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} '
        ": (!slot, !bbuf, !acc) -> !acc\n",
        '%w = "tile.async_wmma_wait"(%r) {num = 0 : i32} : (!acc) -> !acc\n',
        "write of shared memory an in-flight MMA reads",
    ),
}


@pytest.mark.parametrize("what", IN_FLIGHT)
def test_a_store_into_a_ring_with_one_slot_in_flight_is_a_race(what: str) -> None:
    """The store covers both slots; only slot 1 is in flight. Once the wait
    retires the op the same store is fine."""
    op, wait, message = IN_FLIGHT[what]
    x = np.ones((64, 32), np.float16)
    y = np.zeros((64, 32), np.float16)
    run_function(PARTLY_HEAD + op + wait + PARTLY_TAIL, "k", {"x": x, "y": y})
    with pytest.raises(ModelError, match=f"^{message}"):
        run_function(PARTLY_HEAD + op + PARTLY_TAIL, "k", {"x": x, "y": y})


# ---- block loads are interleaving points ---------------------------------------------------

#: ``@k(%data, %count)``, two programs: 0 stores data[0] then data[1] (plain
#: block stores; its relaxed atomic makes the grid run concurrently), 1 loads
#: data[1] then data[0]. Every order of the four accesses is a race; which one
#: is reported says which orders the seeded runs explored.
LOADS_BETWEEN_STORES = """
#bl = #tile.blocked<{size_per_thread = array<i64: 1>, threads_per_warp = array<i64: 32>, warps_per_cta = array<i64: 1>, order = array<i64: 0>}>
!v = tensor<1xi32, #bl>
module attributes {tile.num_warps = 1 : i32} {
  func.func @k(%data: !tile.ptr<i32>, %count: !tile.ptr<i32>) {
    %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %l1 = arith.constant 1 : i64
    %one = arith.constant dense<1> : !v
    %first = arith.cmpi eq, %pid, %c0 : i32
    scf.if %first {
      "tile.store_block"(%data, %c2, %l1, %c0, %one) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (!tile.ptr<i32>, i32, i64, i32, !v) -> () loc("P0":1:1)
      "tile.store_block"(%data, %c2, %l1, %c1, %one) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (!tile.ptr<i32>, i32, i64, i32, !v) -> () loc("P0":2:1)
      %n = "tile.atomic_rmw"(%count, %c0, %c1) {kind = "add", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32 loc("P0":3:1)
    } else {
      %a = "tile.load_block"(%data, %c2, %l1, %c1) {operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!tile.ptr<i32>, i32, i64, i32) -> !v loc("P1":1:1)
      %b = "tile.load_block"(%data, %c2, %l1, %c0) {operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!tile.ptr<i32>, i32, i64, i32) -> !v loc("P1":2:1)
    }
    return
  }
}
"""


def test_a_seeded_run_interleaves_between_two_block_loads() -> None:
    """Program 1 loading data[1], then program 0 storing both words, then
    program 1 loading data[0] needs a hand-over at the second load: only then
    is the first race program 0's store of data[1] after 1's read of it."""
    reports = set()
    for seed in [None, *range(48)]:
        arrays = {"data": np.zeros(2, np.int32), "count": np.zeros(1, np.int32)}
        with pytest.raises(ModelError) as e:
            run_function(LOADS_BETWEEN_STORES, "k", arrays, (2, 1, 1), seed=seed, num_resident=2)
        where, kind, rest = str(e.value).split(": ", 2)
        word = rest.index("'data'[")
        reports.add((where, kind, rest[word : word + 9]))
    read, write = "partial read before its release", "write racing a read of another program"
    assert reports == {
        ("'tile.load_block' at P1:1:1", read, "'data'[1]"),
        ("'tile.load_block' at P1:2:1", read, "'data'[0]"),
        ("'tile.store_block' at P0:1:1", write, "'data'[0]"),
        ("'tile.store_block' at P0:2:1", write, "'data'[1]"),  # the hand-over at P1:2:1
    }
