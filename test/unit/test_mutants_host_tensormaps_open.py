"""A descriptor base the host cannot find (:mod:`gemm_opt.lowering.host_tensormaps`).

The host passes a TMA descriptor's global address as the kernel argument the
base names; a base that is no argument (here a pointer cast from an integer)
has none to pass, so its descriptor stays on the device.
"""

from __future__ import annotations

from gemm_opt import dialect
from gemm_opt.core.ext_compat import ir
from gemm_opt.lowering.host_tensormaps import HostTensorMap, host_tensormap

CAST_BASE = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!d = !tile.tensor_desc<tensor<64x64xf16, #s>>
module attributes {tile.num_warps = 4 : i32, tile.target = "cuda:90"} {
  func.func @f(%a: !tile.ptr<f16>, %m: i32, %k: i32, %ld: i64, %addr: i64) {
    %one = arith.constant 1 : i64
    %p = builtin.unrealized_conversion_cast %addr : i64 to !tile.ptr<f16>
    %d = "tile.make_tensor_descriptor"(%p, %m, %k, %ld, %one)
        {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !d
    %e = "tile.make_tensor_descriptor"(%a, %m, %k, %ld, %one)
        {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !d
    return
  }
}
"""


def test_a_base_that_is_no_argument_stays_on_the_device() -> None:
    with dialect.make_context():
        module = ir.Module.parse(CAST_BASE)
        fn = module.body.operations[0]
        entry = fn.regions[0].blocks[0]
        ops = [op for op in entry.operations if op.name == "tile.make_tensor_descriptor"]
        # The same extents and strides over the argument base are hosted: only the
        # cast base keeps the first descriptor on the device.
        assert [host_tensormap(op.opview, entry) for op in ops] == [
            None,
            HostTensorMap(0, (("arg", 1), ("arg", 2)), (("arg", 3), ("const", 1))),
        ]
