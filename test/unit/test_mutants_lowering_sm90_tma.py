"""cuda:90's TMA copies and stores (``lowering.sm90_tma``), pinned where the lit files
left it open (found by ``benchmarks/mutation.py``).

A TMA block row is at least 16 bytes (the limit is exact), and what feeds each TMA op (its origin, the fence's scope, the waits) is pinned.
"""

from __future__ import annotations

import pytest
from support.ttgir_text import body_lines

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect.edit import annotate_arguments, edited, integer_of_width
from gemm_opt.lowering.compile import TileCompileError, lower_tile_module

TMA = "convert-tile-to-triton-gpu{target=cuda:90 lds-copies=tma}"

#: A barrier-tracked copy of a ``64xW`` block (W columns of ``T``), straight from
#: its descriptor (no origin).
TRACKED = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64xWxT, #s>>
!buf = !tile.shared<tensor<64xWxT, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @tracked(%a: !tile.ptr<T>, %m: i32, %ld: i64) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<T>, i32, i32, i64, i64) -> !desc
    %b = "tile.local_alloc"() : () -> !buf
    %bars = "tile.barrier_alloc"() : () -> !tile.mbarrier_ring<1 : i32>
    %bar = "tile.barrier_index"(%bars, %c0) : (!tile.mbarrier_ring<1 : i32>, i32) -> !tile.mbarrier<i64>
    "tile.barrier_init"(%bar) {count = 1 : i32} : (!tile.mbarrier<i64>) -> ()
    "tile.barrier_expect"(%bar) {operandSegmentSizes = array<i32: 1, 0>, bytes = NBYTES : i32} : (!tile.mbarrier<i64>) -> ()
    "tile.async_tdm_copy_global_to_local"(%d, %b, %bar) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (!desc, !buf, !tile.mbarrier<i64>) -> ()
    "tile.barrier_wait"(%bar, %c0) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.mbarrier<i64>, i32) -> ()
    return
  }
}
"""

_BITS = {"f16": 16, "f32": 32, "i8": 8}


def _tracked(width: int, elt: str) -> str:
    nbytes = 64 * width * _BITS[elt] // 8
    text = TRACKED.replace("xWx", f"x{width}x").replace("NBYTES", str(nbytes))
    return text.replace("xT,", f"x{elt},").replace("<T>", f"<{elt}>")


def _lower(text: str, pipeline: str | None = None) -> list[str]:
    return body_lines(lower_tile_module(text, "cuda:90", fuse=False, pipeline=pipeline).ttgir)


@pytest.mark.parametrize(("width", "elt"), [(8, "f16"), (4, "f32"), (16, "i8"), (64, "f16")])
def test_a_tma_row_of_16_bytes_or_more_is_taken(width: int, elt: str) -> None:
    lines = _lower(_tracked(width, elt))
    (copy,) = [x for x in lines if "ttng.async_tma_copy_global_to_local" in x]
    # No origin: the block at (0, 0).
    assert "[%c0_i32, %c0_i32]" in copy


@pytest.mark.parametrize(("width", "elt", "got"), [(4, "f16", 8), (2, "f32", 8), (8, "i8", 8)])
def test_a_tma_row_under_16_bytes_is_refused_at_the_copy(width: int, elt: str, got: int) -> None:
    text = _tracked(width, elt)
    with pytest.raises(TileCompileError) as info:
        _lower(text)
    message = str(info.value)
    row = next(i + 1 for i, x in enumerate(text.splitlines()) if "async_tdm_copy" in x)
    assert message.startswith(f"{row}:")
    assert f"a TMA block row needs 16 bytes or more, got {got}" in message


#: A TMA store of a 64x64 f16 block straight from its descriptor (``ATTRS``: the
#: store's attributes).
STORE = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @tma_store(%c: !tile.ptr<f16>, %m: i32, %ld: i64, %v: tensor<64x64xf16, #bl>) {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%c, %m, %m, %ld, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    %buf = "tile.local_alloc"() : () -> !buf
    "tile.local_store"(%v, %buf) : (tensor<64x64xf16, #bl>, !buf) -> ()
    "tile.async_tdm_copy_local_to_global"(%d, %buf) ATTRS: (!desc, !buf) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
"""


def test_a_tma_store_is_fenced_in_the_cta_and_stores_the_block_at_the_origin() -> None:
    lines = _lower(STORE.replace("ATTRS", ""))
    (at,) = [i for i, x in enumerate(lines) if "ttng.async_tma_copy_local_to_global" in x]
    assert lines[at - 1].startswith("ttng.fence_async_shared {bCluster = false}")
    assert "[%c0_i32, %c0_i32]" in lines[at]


def test_a_tma_store_refuses_a_cache_modifier() -> None:
    text = STORE.replace("ATTRS", '{cache = ".cs"} ')
    with pytest.raises(TileCompileError) as info:
        _lower(text)
    row = next(i + 1 for i, x in enumerate(text.splitlines()) if "local_to_global" in x)
    assert str(info.value).startswith(f"{row}:")
    assert "a TMA store takes no cache modifier here" in str(info.value)


#: One counted copy under ``lds-copies=tma``, waited for at once.
ONE_COPY = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 4, 1>, instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 8}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32} {
  func.func @one_copy(%a: !tile.ptr<f16>, %m: i32, %lda: i64, %c: !acc) {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %buf = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%d, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    %ta = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opa>
    %tb = "tile.local_load"(%buf) : (!ba) -> tensor<64x64xf16, #opb>
    %r = "tile.wmma"(%ta, %tb, %c) : (tensor<64x64xf16, #opa>, tensor<64x64xf16, #opb>, !acc) -> !acc
    return
  }
}
"""


def test_a_counted_tma_copy_fences_its_ring_and_waits_on_it_alone() -> None:
    lines = _lower(ONE_COPY, pipeline=TMA)
    init = next(i for i, x in enumerate(lines) if x.startswith("ttng.init_barrier"))
    assert lines[init + 1].startswith("ttng.fence_async_shared {bCluster = false}")
    (copy,) = [x for x in lines if "ttng.async_tma_copy_global_to_local" in x]
    # The block at (0, 0), predicated on true, no further flag.
    assert "[%c0_i32, %c0_i32] %2, %3, %true :" in copy
    # The wait is the barrier's; no cp.async wait beside it.
    assert sum(x.startswith("ttng.wait_barrier") for x in lines) == 1
    assert not any("async_wait" in x or "async_commit" in x for x in lines)


def test_a_tracked_copy_issues_with_no_further_flag() -> None:
    (copy,) = [x for x in _lower(_tracked(64, "f16")) if "async_tma_copy_global_to_local" in x]
    assert ", %true :" in copy and "{" not in copy.split(":")[0]


def test_auto_tma_copies_wait_on_their_barriers_not_as_cp_async() -> None:
    # Facts enough for cp.async and for TMA: lds-copies=auto takes TMA, whose
    # wait is the barrier's alone (no cp.async group wait beside it).
    text = edited(
        ONE_COPY,
        lambda m: annotate_arguments(
            m,
            integer_of_width(32, 64),
            "tile.divisibility",
            ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 16),
        ),
    )
    lines = _lower(text)
    assert sum("ttng.async_tma_copy_global_to_local" in x for x in lines) == 1
    assert sum(x.startswith("ttng.wait_barrier") for x in lines) == 1
    assert not any("ttg.async_wait" in x or "ttg.async_commit_group" in x for x in lines)
