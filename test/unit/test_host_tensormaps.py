"""Which TMA descriptors the host encodes (:mod:`gemm_opt.lowering.host_tensormaps`).

The rule is pure IR reading: a ``tile.make_tensor_descriptor`` at the top
level of the function's entry block whose base is an argument and whose
extents and strides are arguments (possibly extended) or constants, the last
stride 1. Everything else stays a device-side descriptor.
"""

from __future__ import annotations

import pytest

from gemm_opt import dialect
from gemm_opt.core.ext_compat import ir
from gemm_opt.lowering.host_tensormaps import HostTensorMap, host_tensormap

HEAD = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!d = !tile.tensor_desc<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%a: !tile.ptr<f16>, %m: i32, %k: i32, %ld: i64, %ld32: i32, %n: index) {
    %one = arith.constant 1 : i64
    %two = arith.constant 2 : i64
    %c64 = arith.constant 64 : i32
"""
TAIL = """
    return
  }
}
"""


#: The descriptor op with its operands spelled out (segment sizes and types fixed).
SEG = " {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !d\n"
PLAIN = '    %d = "tile.make_tensor_descriptor"(%a, %m, %k, %ld, %one)' + SEG
CONST_EXTENT = '    %d = "tile.make_tensor_descriptor"(%a, %c64, %k, %ld, %one)' + SEG
EXTENDED = (
    "    %w = arith.extsi %ld32 : i32 to i64\n"
    '    %d = "tile.make_tensor_descriptor"(%a, %m, %k, %w, %one)' + SEG
)
COMPUTED = (
    "    %h = arith.divsi %m, %k : i32\n"
    '    %d = "tile.make_tensor_descriptor"(%a, %h, %k, %ld, %one)' + SEG
)
EXTENDED_CONSTANT = (
    "    %w = arith.extsi %c64 : i32 to i64\n"
    '    %d = "tile.make_tensor_descriptor"(%a, %m, %k, %w, %one)' + SEG
)
STRIDE_2 = '    %d = "tile.make_tensor_descriptor"(%a, %m, %k, %ld, %two)' + SEG
STRIDE_ARG = '    %d = "tile.make_tensor_descriptor"(%a, %m, %k, %ld, %ld)' + SEG
IN_LOOP = (
    "    %c0 = arith.constant 0 : index\n"
    "    %c1 = arith.constant 1 : index\n"
    "    scf.for %i = %c0 to %n step %c1 {\n" + PLAIN + "    }\n"
)


def _hosted(body: str) -> list[HostTensorMap | None]:
    with dialect.make_context():
        module = ir.Module.parse(HEAD + body + TAIL)
        fn = module.body.operations[0]
        entry = fn.regions[0].blocks[0]
        found: list = []

        def walk(op):
            if op.name == "tile.make_tensor_descriptor":
                found.append(host_tensormap(op.opview, entry))
            return ir.WalkResult.ADVANCE

        fn.operation.walk(walk)
        return found


def test_arguments_and_constants_are_hosted() -> None:
    (h,) = _hosted(PLAIN)
    assert h == HostTensorMap(0, (("arg", 1), ("arg", 2)), (("arg", 3), ("const", 1)))
    (h,) = _hosted(CONST_EXTENT)
    assert h is not None and h.shape == (("const", 64), ("arg", 2))


def test_an_extended_argument_is_the_argument() -> None:
    (h,) = _hosted(EXTENDED)
    assert h is not None and h.strides == (("arg", 4), ("const", 1))


@pytest.mark.parametrize(
    "body",
    [COMPUTED, EXTENDED_CONSTANT, STRIDE_2, STRIDE_ARG, IN_LOOP],
    ids=["computed-extent", "extended-constant", "stride-2", "stride-argument", "in-a-loop"],
)
def test_what_the_host_cannot_know_stays_on_the_device(body: str) -> None:
    assert _hosted(body) == [None]
