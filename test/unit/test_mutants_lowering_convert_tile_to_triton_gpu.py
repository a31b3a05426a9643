"""The driver of the hand-off (``lowering.convert_tile_to_triton_gpu``), pinned where
the lit files left it open (found by ``benchmarks/mutation.py``).

The ``tt.divisibility`` Triton gets on a parameter is what the hand-off's own checks
assumed of it (``ir_match.stated_divisibility``): the lcm of the positive facts the
tile function states in ``tile.divisibility`` and ``tt.divisibility``, else 16 for a
pointer (the lowering's alignment contract) and nothing for an integer. Triton must
prove the same vectors the hand-off chose direct copies for.
"""

from __future__ import annotations

import pytest

from gemm_opt import dialect
from gemm_opt.core.ext_compat import ir
from gemm_opt.core.targets import TARGETS
from gemm_opt.dialect.edit import functions, ops_named, set_argument_attr, set_constant
from gemm_opt.lowering.compile import lower_tile_module
from gemm_opt.lowering.convert_tile_to_triton_gpu import (
    LdsCopies,
    LoweringFailure,
    check_hand_off,
    copies_in_flight,
    direct_copies_ok,
    tma_facts_ok,
)

ARGS = """
module attributes {tile.num_warps = 4 : i32, tile.target = "gfx1250"} {
  func.func @args(%p: !tile.ptr<f16>, %p8: !tile.ptr<f16> {tile.divisibility = 8 : i32},
                  %p0: !tile.ptr<f16> {tile.divisibility = 0 : i32},
                  %both: i32 {tile.divisibility = 16 : i32, tt.divisibility = 4 : i32},
                  %zero: i32 {tile.divisibility = 0 : i32}, %tt: i64 {tt.divisibility = 8 : i32},
                  %none: i32) {
    return
  }
}
"""


def _header(ttgir: str) -> str:
    (header,) = [line for line in ttgir.splitlines() if "tt.func public @args(" in line]
    return header


def _parameter_attrs(ttgir: str) -> list[str]:
    """Each parameter's attribute dictionary of ``tt.func @args`` ('' for none)."""
    attrs = []
    for piece in _header(ttgir).split("@args(")[1].split("%arg")[1:]:
        typed = piece.split(" loc(")[0]
        attrs.append(typed.split(" {")[1].rstrip("}") if " {" in typed else "")
    return attrs


def test_parameters_state_the_facts_the_hand_off_assumed() -> None:
    ttgir = lower_tile_module(ARGS, "gfx1250", fuse=False).ttgir
    assert _parameter_attrs(ttgir) == [
        "tt.divisibility = 16 : i32",  # a pointer: 16-byte aligned by contract
        "tt.divisibility = 8 : i32",  # as stated
        "tt.divisibility = 16 : i32",  # a stated 0 is no fact: the contract's 16
        "tt.divisibility = 16 : i32",  # lcm(16, 4): both facts hold
        "",  # an integer with no positive fact
        "tt.divisibility = 8 : i32",
        "",
    ]


def test_functions_stay_inlinable() -> None:
    """A private helper the kernel calls must inline (Triton's inliner skips
    ``noinline = true``: a call per tile would stay in the kernel)."""
    ttgir = lower_tile_module(ARGS, "gfx1250", fuse=False).ttgir
    assert _header(ttgir).split(") attributes ")[1].startswith("{noinline = false}")


# ---- the copy paths, read before anything is built ------------------------------------

# One copy of an f16 block whose extents and outer stride state 16-byte facts.
COPY = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%a: !tile.ptr<f16>, %m: i32 {tile.divisibility = 16 : i32},
               %k: i32 {tile.divisibility = 16 : i32}) {
    %one = arith.constant 1 : i64
    %c64 = arith.constant 64 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %k, %c64, %one)
        {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %b = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%d, %b)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
"""


@pytest.mark.parametrize(
    ("target", "lds_copies", "in_flight"),
    [
        ("gfx1250", LdsCopies.AUTO, True),  # TDM
        ("gfx950", LdsCopies.AUTO, True),  # direct to LDS (the facts hold)
        ("gfx950", LdsCopies.REGISTERS, False),
        ("gfx942", LdsCopies.AUTO, False),  # registers: complete when issued
        ("cuda:90", LdsCopies.AUTO, True),  # TMA where it can (aligned outer stride)
        ("cuda:90", LdsCopies.REGISTERS, False),
    ],
)
def test_copies_stay_in_flight_on_the_paths_that_issue_them(
    target: str, lds_copies: LdsCopies, in_flight: bool
) -> None:
    with dialect.make_context():
        module = ir.Module.parse(COPY)
        assert copies_in_flight(module.operation, TARGETS[target], lds_copies) is in_flight


@pytest.mark.parametrize("target", ["gfx1250", "gfx950", "gfx942"])
def test_tma_copies_are_refused_off_nvidia(target: str) -> None:
    with dialect.make_context():
        module = ir.Module.parse(COPY)
        with pytest.raises(LoweringFailure, match="lds-copies=tma needs cuda:90"):
            check_hand_off(module.operation, target, LdsCopies.TMA)
        check_hand_off(module.operation, "cuda:90", LdsCopies.TMA)  # there it is the option


# The facts direct copies (gfx950's 16-byte vectors) and TMA descriptors (16-byte
# aligned outer strides, a unit inner stride) need, read on the descriptor: an f16
# block whose extents are multiples of 16 elements, its outer stride %lda of the
# divisibility each case states, its inner stride the constant %inner.
STRIDES = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%a: !tile.ptr<f16>, %m: i32 {tile.divisibility = 16 : i32},
               %k: i32 {tile.divisibility = 16 : i32}, %lda: i64) {
    %inner = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %k, %lda, %inner)
        {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %b = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%d, %b)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
"""


@pytest.mark.parametrize(
    ("lda", "inner", "facts"),
    [
        (16, 1, True),
        (8, 1, True),  # 8 f16 elements: 16 bytes
        (4, 1, False),  # 8 bytes
        (None, 1, False),  # nothing stated
        (16, 2, False),  # a strided inner dim: neither a TMA box nor whole vectors
    ],
)
def test_direct_and_tma_facts_of_the_strides(lda: int | None, inner: int, facts: bool) -> None:
    with dialect.make_context():
        module = ir.Module.parse(STRIDES)
        (fn,) = functions(module)
        if lda is not None:
            i32 = ir.IntegerType.get_signless(32)
            set_argument_attr(fn, 3, "tile.divisibility", ir.IntegerAttr.get(i32, lda))
        set_constant(ops_named(module, "arith.constant")[0], inner)
        assert tma_facts_ok(module.operation) is facts
        assert direct_copies_ok(module.operation, TARGETS["gfx950"]) is facts


# Rank 3: every outer stride needs the fact, not one of them (%ldb states none).
RANK3 = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 2, 1, 0>}>
!da = !tile.tensor_desc<tensor<2x64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%a: !tile.ptr<f16>, %m: i32, %lda: i64 {tile.divisibility = 16 : i32},
               %ldb: i64) {
    %inner = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %m, %ldb, %lda, %inner)
        {operandSegmentSizes = array<i32: 1, 3, 3>}
        : (!tile.ptr<f16>, i32, i32, i32, i64, i64, i64) -> !da
    return
  }
}
"""


def test_tma_needs_every_outer_stride_aligned() -> None:
    with dialect.make_context():
        module = ir.Module.parse(RANK3)
        assert tma_facts_ok(module.operation) is False
        (fn,) = functions(module)
        i32 = ir.IntegerType.get_signless(32)
        set_argument_attr(fn, 3, "tile.divisibility", ir.IntegerAttr.get(i32, 8))
        assert tma_facts_ok(module.operation) is True
