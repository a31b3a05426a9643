"""A fused copy's warp-plan remarks, whole (found by ``benchmarks/mutation.py``
in ``passes/annotate_warp_plan.py``: the lit test's ``expected-remark`` matches
a remark's first line as a substring, so it leaves the tail of each remark free)."""

from __future__ import annotations

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context
from gemm_opt.passes.annotate_warp_plan import copy_remarks

FUSED = """
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
!desc = !tile.tensor_desc<tensor<128x64xf16, #s>>
!buf = !tile.shared<tensor<128x64xf16, #s>>
module attributes {tile.num_warps = 8 : i32} {
  func.func @fused(%d0: !desc, %d1: !desc, %b0: !buf, %b1: !buf) {
    "tile.async_tdm_fused_copy_global_to_local"(%d0, %d1, %b0, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0>, warp_used_hints = array<i32: 3, 12>} : (!desc, !desc, !buf, !buf) -> ()
    return
  }
}
"""


def _remarks(hints: list[int]) -> list[str]:
    with make_context():
        module = ir.Module.parse(FUSED)
        func = module.body.operations[0]
        op = func.regions[0].blocks[0].operations[0]
        op.operation.attributes["warp_used_hints"] = ir.DenseI32ArrayAttr.get(hints)
        return copy_remarks(op)


def test_only_the_last_member_names_the_idle_issuers_and_holds_the_table() -> None:
    first, last = _remarks([3, 12])
    assert first.endswith("hint 0b00000011 (2 of 8 warps, tile 64x64): warp 0 [0:64, 0:64], "
                          "warp 1 [64:128, 0:64]; warps {2..7} inactive; "
                          "warps {0, 1} issue its descriptor")  # fmt: skip
    head, *table = last.split("\n")
    assert head.endswith("warps {2..7} issue its descriptor (warps {4..7} with predicate 0)")
    assert table[0].split() == ["warp", "member", "active", "start", "tile"]
    assert [row.split()[:3] for row in table[1:]] == [
        [str(w), "0" if w < 2 else "1", "yes" if w < 4 else "no"] for w in range(8)
    ]


def test_members_that_cover_every_warp_leave_none_with_predicate_0() -> None:
    first, last = _remarks([15, 240])
    assert first.endswith("warps {0..3} issue its descriptor")
    head, *table = last.split("\n")
    assert head.endswith("warps {4..7} issue its descriptor")
    assert len(table) == 9 and all(row.split()[2] == "yes" for row in table[1:])
