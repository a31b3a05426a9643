"""The target-independent state of the hand-off (``lowering.context``), pinned where
the lit files left it open (found by ``benchmarks/mutation.py``).
"""

from __future__ import annotations

import pytest
from support.ttgir_text import body_lines, definitions

from gemm_opt import dialect
from gemm_opt.core.ext_compat import ir
from gemm_opt.core.targets import TARGETS
from gemm_opt.lowering.compile import TileCompileError, lower_tile_module
from gemm_opt.lowering.context import HandOffContext, LoweringFailure, TargetStrategy

# A barrier only as a parameter: no barrier op for the verifier to refuse, so the
# type itself must be refused where the target has no shared-memory barriers.
BARRIER_PARAMETER = """
module attributes {tile.num_warps = 4 : i32} {
  func.func private @f(%bar: !tile.mbarrier<i64>) {
    return
  }
}
"""


@pytest.mark.parametrize("target", ["gfx950", "gfx942"])
def test_a_barrier_type_needs_tdm_or_tma(target: str) -> None:
    with pytest.raises(TileCompileError, match=r"needs TDM \(gfx1250\) or TMA \(cuda:90\)") as e:
        lower_tile_module(BARRIER_PARAMETER, target, fuse=False)
    assert (e.value.line, e.value.col) == (3, 3)  # the function


@pytest.mark.parametrize("target", ["gfx1250", "cuda:90"])
def test_a_barrier_type_lowers_where_there_are_barriers(target: str) -> None:
    ttgir = lower_tile_module(BARRIER_PARAMETER, target, fuse=False).ttgir
    (header,) = [line for line in ttgir.splitlines() if "tt.func private @f(" in line]
    assert "%arg0: !ttg.memdesc<1xi64, #shared" in header


VALUES = """
module {
  func.func private @f(%x: i32) -> i32 {
    %y = arith.addi %x, %x : i32
    return %y : i32
  }
}
"""


def test_a_value_not_yet_lowered_is_an_error_at_its_definition() -> None:
    """An internal error still names a place: the op defining the value, or the
    module for a block argument."""
    with dialect.make_context():
        module = ir.Module.parse(VALUES)
        ctx = HandOffContext(module.operation, TARGETS["gfx1250"], 4, None, TargetStrategy(), {})
        (fn,) = module.body.operations
        block = fn.regions[0].blocks[0]
        add = block.operations[0]
        with pytest.raises(LoweringFailure, match="value used before it was lowered") as e:
            ctx.v(add.results[0])
        assert e.value.op == add.operation
        with pytest.raises(LoweringFailure, match="value used before it was lowered") as e:
            ctx.v(block.arguments[0])
        assert e.value.op == module.operation


# A ring and a single barrier as parameters: a ring of N is an Nx1 memdesc, one is 1.
BARRIER_RING = """
module attributes {tile.num_warps = 4 : i32} {
  func.func private @f(%ring: !tile.mbarrier_ring<4 : i32>, %bar: !tile.mbarrier<i64>) {
    return
  }
}
"""


def test_barrier_memdescs_are_rings_of_one_barrier_rows() -> None:
    ttgir = lower_tile_module(BARRIER_RING, "gfx1250", fuse=False).ttgir
    (header,) = [line for line in ttgir.splitlines() if "tt.func private @f(" in line]
    ring, single = [piece.split(" loc(")[0] for piece in header.split("%arg")[1:]]
    assert ring.startswith("0: !ttg.memdesc<4x1xi64, #shared"), ring
    assert single.startswith("1: !ttg.memdesc<1xi64, #shared"), single


# Only signless integers of Triton's widths are element types; si32 is not.
SIGNED = """
module attributes {tile.num_warps = 4 : i32} {
  func.func private @f(%x: si32) {
    return
  }
}
"""


def test_a_signed_integer_is_refused_at_its_function() -> None:
    with pytest.raises(TileCompileError, match="element type si32 has no TritonGPU") as e:
        lower_tile_module(SIGNED, "gfx1250", fuse=False)
    assert (e.value.line, e.value.col) == (3, 3)


# An update's pred and the copy's own pred: both guard a copy without TDM.
TWO_PREDS = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<64x64xf16, #s>>
!ba = !tile.shared<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%a: !tile.ptr<f16>, %m: i32 {tile.divisibility = 16 : i32},
               %lda: i64 {tile.divisibility = 16 : i32}, %p: i1, %q: i1) {
    %one = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one)
        {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %d1 = "tile.update_tensor_descriptor"(%d, %c0, %c0, %p)
        {operandSegmentSizes = array<i32: 1, 2, 0, 1>} : (!da, i32, i32, i1) -> !da
    %b = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%d1, %b, %q)
        {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!da, !ba, i1) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
"""


@pytest.mark.parametrize("target", ["gfx950", "gfx942", "cuda:90"])
def test_a_copy_without_tdm_is_guarded_by_both_preds(target: str) -> None:
    lines = body_lines(lower_tile_module(TWO_PREDS, target, fuse=False).ttgir)
    (guard,) = [line for line in lines if line.startswith("scf.if ")]
    cond = guard.split()[1]
    assert definitions(lines)[cond] == ("arith.andi", "%arg3, %arg4 : i1")


# Locations: an op's own file stays; the module's "-" becomes the file named.
LOCATED = """
module attributes {tile.num_warps = 4 : i32} {
  func.func private @f(%x: i32) -> i32 {
    %y = arith.addi %x, %x : i32 loc("kernel.mlir":7:9)
    %z = arith.muli %y, %x : i32
    return %z : i32
  }
}
"""


def test_locations_keep_their_file_or_take_the_one_named() -> None:
    ttgir = lower_tile_module(LOCATED, "gfx1250", fuse=False, filename="given.mlir").ttgir
    lines = [line.strip() for line in ttgir.splitlines()]
    aliases = dict(line.split(" = loc(", 1) for line in lines if line.startswith("#loc"))

    def where(op: str) -> str:
        (line,) = [line for line in lines if f" = {op} " in line]
        return aliases[line.split(" loc(")[1].rstrip(")")].rstrip(")")

    assert where("arith.addi") == '"kernel.mlir":7:9'
    assert where("arith.muli") == '"given.mlir":5:10'


# A descriptor's integer elements: Triton's descriptor type spells a signedness. Those of
# a signless integer are signed, as Triton's descriptors of tl.int8 (int32, ...) tensors
# are; the E8M0 block scale, Triton's uint8 codes, is unsigned.
DESCRIPTOR = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32} {
  func.func private @f(%d: !tile.tensor_desc<tensor<64x64xELEM, #s>>) {
    return
  }
}
"""


@pytest.mark.parametrize(
    ("elem", "triton"),
    [("i8", "si8"), ("i16", "si16"), ("i32", "si32"), ("f8E8M0FNU", "ui8"), ("f16", "f16")],
)
def test_descriptor_integers_are_signed_and_scale_codes_unsigned(elem: str, triton: str) -> None:
    ttgir = lower_tile_module(DESCRIPTOR.replace("ELEM", elem), "gfx1250", fuse=False).ttgir
    (header,) = [line for line in ttgir.splitlines() if "tt.func private @f(" in line]
    assert f"%arg0: !tt.tensordesc<64x64x{triton}, #shared>" in header


# Scalar constants of every kind the hand-off builds: i1 by its low bit, E8M0 block
# scales as Triton's i8 codes (0.0 -> code 0, the byte TDM's zero fill writes; 1.0 ->
# 127; 0.5 -> 126; 4.0 -> 129 = -127 as i8), floats by their own builders, f8 through
# an f32 truncated.
SCALARS = """
module attributes {tile.num_warps = 4 : i32} {
  func.func private @f() -> (i1, i1, f8E8M0FNU, f8E8M0FNU, f8E8M0FNU, f8E8M0FNU, f16, bf16,
                             f32, f64, f8E4M3FN) {
    %t = arith.constant true
    %f = arith.constant false
    %s0 = arith.constant 0.0 : f8E8M0FNU
    %s1 = arith.constant 1.0 : f8E8M0FNU
    %s2 = arith.constant 0.5 : f8E8M0FNU
    %s3 = arith.constant 4.0 : f8E8M0FNU
    %h = arith.constant 1.5 : f16
    %b = arith.constant -2.5 : bf16
    %x = arith.constant 3.25 : f32
    %d = arith.constant 0.1 : f64
    %e = arith.constant -448.0 : f8E4M3FN
    return %t, %f, %s0, %s1, %s2, %s3, %h, %b, %x, %d, %e
        : i1, i1, f8E8M0FNU, f8E8M0FNU, f8E8M0FNU, f8E8M0FNU, f16, bf16, f32, f64, f8E4M3FN
  }
}
"""


def test_scalar_constants_of_every_kind() -> None:
    lines = body_lines(lower_tile_module(SCALARS, "gfx1250", fuse=False).ttgir)
    built = [line.split(" = ", 1)[1] for line in lines if line.startswith("%") and " = " in line]
    assert built == [
        "arith.constant true",
        "arith.constant false",
        "arith.constant 0 : i8",
        "arith.constant 127 : i8",
        "arith.constant 126 : i8",
        "arith.constant -127 : i8",
        "arith.constant 1.500000e+00 : f16",
        "arith.constant -2.500000e+00 : bf16",
        "arith.constant 3.250000e+00 : f32",
        "arith.constant 1.000000e-01 : f64",
        "arith.constant -4.480000e+02 : f32",
        "arith.truncf %cst_3 : f32 to f8E4M3FN",
    ]


# A non-splat i1 constant: its element values come as Python ints (1 for true), built
# as a splat of the first value and one select per run: true, then false, then true.
I1_RUNS = """
#bl = #tile.blocked<{size_per_thread = array<i64: 1>, threads_per_warp = array<i64: 32>,
                     warps_per_cta = array<i64: 4>, order = array<i64: 0>}>
module attributes {tile.num_warps = 4 : i32} {
  func.func private @f() -> tensor<4xi1, #bl> {
    %m = arith.constant dense<[true, false, false, true]> : tensor<4xi1, #bl>
    return %m : tensor<4xi1, #bl>
  }
}
"""


def test_a_non_splat_i1_constant_keeps_its_values() -> None:
    lines = body_lines(lower_tile_module(I1_RUNS, "gfx1250", fuse=False).ttgir)
    scalars = [
        line.split(" = arith.constant ")[1]
        for line in lines
        if " : " not in line and " = arith.constant " in line
    ]
    assert scalars == ["true", "false", "true"]


# A copy through registers (gfx942) loads with a zero fill: for i8 elements, a splat of
# the integer 0 (out-of-bounds elements read as zero, as TDM's fill writes them; Triton
# folds the splat into a dense constant).
I8_COPY = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<64x64xi8, #s>>
!ba = !tile.shared<tensor<64x64xi8, #s>>
module attributes {tile.num_warps = 4 : i32} {
  func.func @f(%a: !tile.ptr<i8>, %m: i32, %lda: i64) {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one)
        {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<i8>, i32, i32, i64, i64) -> !da
    %b = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%d, %b)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (!da, !ba) -> ()
    "tile.async_tdm_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
"""


def test_a_register_copy_of_integers_fills_with_zero() -> None:
    lines = body_lines(lower_tile_module(I8_COPY, "gfx942", fuse=False).ttgir)
    defs = definitions(lines)
    (load,) = [rest for name, rest in defs.values() if name == "tt.load"]
    other = load.split(" : ")[0].split(", ")[2]
    name, value = defs[other]
    assert (name, value.split(" : ")[0]) == ("arith.constant", "dense<0>")
