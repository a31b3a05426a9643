"""The cuda:90 strategy's rules, pinned where the lit files left them open (found by
``benchmarks/mutation.py``): the layouts it gives, read from the TTGIR of small
modules.
"""

from __future__ import annotations

import pytest

from gemm_opt.lowering.compile import lower_tile_module

# A dot-operand layout of each element width, loaded from shared memory: mma v2
# takes 32 bits of K per register (Triton's rule), so kWidth = 32 / bits.
LOADS = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>,
                          instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
!b32 = !tile.shared<tensor<64x32xf32, #s>>
!b16 = !tile.shared<tensor<64x32xf16, #s>>
!b8 = !tile.shared<tensor<64x32xf8E4M3FN, #s>>
!t32 = tensor<64x32xf32, #opa>
!t16 = tensor<64x32xf16, #opa>
!t8 = tensor<64x32xf8E4M3FN, #opa>
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func private @loads() -> (!t32, !t16, !t8) {
    %a = "tile.local_alloc"() : () -> !b32
    %ta = "tile.local_load"(%a) : (!b32) -> !t32
    %b = "tile.local_alloc"() : () -> !b16
    %tb = "tile.local_load"(%b) : (!b16) -> !t16
    %c = "tile.local_alloc"() : () -> !b8
    %tc = "tile.local_load"(%c) : (!b8) -> !t8
    return %ta, %tb, %tc : !t32, !t16, !t8
  }
}
"""


@pytest.fixture(scope="module")
def load_lines() -> list[str]:
    ttgir = lower_tile_module(LOADS, "cuda:90", fuse=False).ttgir
    return [line.split(" loc(")[0].strip() for line in ttgir.splitlines()]


def test_dot_operand_k_width_is_32_bits_of_k(load_lines: list[str]) -> None:
    widths = {}
    for line in load_lines:
        _, arrow, result = line.partition("-> tensor<64x32x")
        if not arrow or "ttg.local_load" not in line or "#ttg.dot_op<{opIdx = 0," not in result:
            continue
        element = result.split(",")[0]
        widths[element] = int(result.split("kWidth = ")[1].split("}")[0])
    assert widths == {"f32": 1, "f16": 2, "f8E4M3FN": 4}


# Hopper's mbarrier ops one for one: an init fenced for the async proxy, an
# arrive without a pred on true, an i1 phase zero-extended (a phase of 1 is
# parity 1, not -1), and in a function that issues TMA stores a wait that also
# waits for the stores to have read their buffer; a function without stores
# waits for nothing more.
BARRIERS = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>,
                     warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<64x64xf16, #s>>
!buf = !tile.shared<tensor<64x64xf16, #s>>
!bar = !tile.mbarrier<i64>
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @bars(%p: i1, %phase: i1, %c: !tile.ptr<f16>, %m: i32, %ld: i64,
                  %v: tensor<64x64xf16, #bl>) {
    %c1 = arith.constant 1 : i32
    %bars = "tile.barrier_alloc"() : () -> !tile.mbarrier_ring<2 : i32>
    %bar = "tile.barrier_index"(%bars, %c1) : (!tile.mbarrier_ring<2 : i32>, i32) -> !bar
    "tile.barrier_init"(%bar) {count = 2 : i32} : (!bar) -> ()
    "tile.barrier_arrive"(%bar) {operandSegmentSizes = array<i32: 1, 0>} : (!bar) -> ()
    "tile.barrier_wait"(%bar, %phase, %p) {operandSegmentSizes = array<i32: 1, 1, 1>}
        : (!bar, i1, i1) -> ()
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%c, %m, %m, %ld, %one)
        {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !desc
    %buf = "tile.local_alloc"() : () -> !buf
    "tile.local_store"(%v, %buf) : (tensor<64x64xf16, #bl>, !buf) -> ()
    "tile.async_tdm_copy_local_to_global"(%d, %buf) : (!desc, !buf) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
  func.func @no_store() {
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
"""


@pytest.fixture(scope="module")
def barrier_lines() -> list[str]:
    ttgir = lower_tile_module(BARRIERS, "cuda:90", fuse=False).ttgir
    return [line.split(" loc(")[0].strip() for line in ttgir.splitlines()]


def test_mbarrier_ops_and_their_operands(barrier_lines: list[str]) -> None:
    body = barrier_lines
    init = next(i for i, line in enumerate(body) if line.startswith("ttng.init_barrier"))
    bar = body[init].split()[1].rstrip(",")
    assert body[init].startswith(f"ttng.init_barrier {bar}, 2 :")
    assert body[init + 1] == "ttng.fence_async_shared {bCluster = false}"
    assert body[init + 2].startswith(f"ttng.arrive_barrier {bar}, 1, %true :")
    assert "%true = arith.constant true" in body
    ext = body[init + 3]
    phase, _, extension = ext.partition(" = ")
    assert phase.startswith("%") and extension == "arith.extui %arg1 : i1 to i32", ext
    assert body[init + 4].startswith(f"ttng.wait_barrier {bar}, {phase}, %arg0 :")


def test_a_wait_waits_for_the_stores_of_its_function_only(barrier_lines: list[str]) -> None:
    start = barrier_lines.index(next(x for x in barrier_lines if "@no_store" in x))
    bars, no_store = barrier_lines[:start], barrier_lines[start:]
    waits = [line for line in bars if "ttng.async_tma_store_wait" in line]
    assert waits == ["ttng.async_tma_store_wait {pendings = 0 : i32, read_only}"]
    assert not any("async_tma_store_wait" in line for line in no_store)


# An i1 tensor (no shared buffer holds one) converted into a dot-operand layout:
# the same rule, 32 one-bit elements of K per register.
I1 = """
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>,
                          instr_shape = array<i64: 16, 16, 32>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 8}>
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 8>, threads_per_warp = array<i64: 4, 8>,
                     warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func private @cv(%x: tensor<64x32xi1, #bl>) -> tensor<64x32xi1, #opa> {
    %t = "tile.convert_layout"(%x) : (tensor<64x32xi1, #bl>) -> tensor<64x32xi1, #opa>
    return %t : tensor<64x32xi1, #opa>
  }
}
"""


def test_an_i1_dot_operand_takes_32_elements_of_k() -> None:
    ttgir = lower_tile_module(I1, "cuda:90", fuse=False).ttgir
    (line,) = [x for x in ttgir.splitlines() if "ttg.convert_layout" in x]
    assert "-> tensor<64x32xi1, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 32}>>" in line
