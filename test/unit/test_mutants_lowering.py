"""Lowering rules the lit files left open (found by ``benchmarks/mutation.py``).

Each test pins one rule a mutant of the rule code broke without any other
test failing: the warp test of a copy's pred is found on either side of the
user's ``arith.andi``.
"""

from __future__ import annotations

import pytest

from gemm_opt import dialect
from gemm_opt.core.ext_compat import PassManager, ir
from gemm_opt.dialect.edit import ops_named
from gemm_opt.lowering.compile import hand_off
from gemm_opt.passes.assign_tdm_warp_layout import AssignTdmWarpLayoutPass
from gemm_opt.passes.emit_warp_predicates import EmitWarpPredicatesPass

#: One copy of warps 2 and 3 (hint 0xc) of 8, under the user's pred ``%q``.
HINTED_COPY = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<128x64xf16, #s>>
!ba = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @k(%a: !tile.ptr<f16>, %m: i32 {tile.divisibility = 16 : i32},
               %lda: i64 {tile.divisibility = 16 : i32}, %q: i1) {
    %one = arith.constant 1 : i64
    %d = "tile.make_tensor_descriptor"(%a, %m, %m, %lda, %one)
      {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
    %b = "tile.local_alloc"() : () -> !ba
    "tile.async_tdm_copy_global_to_local"(%d, %b, %q)
      {operandSegmentSizes = array<i32: 1, 1, 1, 0>, warp_used_hint = 12 : i32}
      : (!da, !ba, i1) -> ()
    return
  }
}
"""


@pytest.mark.parametrize("warp_test_first", [False, True])
def test_the_warp_test_is_stripped_from_either_side_of_the_users_pred(
    warp_test_first: bool,
) -> None:
    """``user & warp_test`` and ``warp_test & user`` mean the same pred: the
    lowering strips the warp test from both and keeps exactly ``%q`` as the
    guard of the copy (gfx950 has no TDM: the guard is an ``scf.if``)."""
    with dialect.make_context():
        module = ir.Module.parse(HINTED_COPY)
        pm = PassManager("builtin.module")
        pm.add(AssignTdmWarpLayoutPass(), AssignTdmWarpLayoutPass.name)
        pm.add(EmitWarpPredicatesPass(), EmitWarpPredicatesPass.name)
        pm.run(module.operation)
        (both,) = [op for op in ops_named(module, "arith.andi") if str(op.result.type) == "i1"]
        user, warp_test = both.operands[0], both.operands[1]
        assert isinstance(user, ir.BlockArgument)  # the emit pass puts the user's pred first
        if warp_test_first:
            both.operands[0], both.operands[1] = warp_test, user
        ttgir = hand_off(module, "gfx950").ttgir
    # The one guard is the user's pred itself: no warp test is left around it.
    assert ttgir.count("scf.if ") == 1 and "scf.if %arg3 {" in ttgir
    assert "warp_id" not in ttgir
