"""The schedule builder's loop-invariant hoisting at its edges (found by
``benchmarks/mutation.py`` in ``passes/schedule_ir.py``)."""

from __future__ import annotations

import pytest

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context
from gemm_opt.passes.schedule_ir import hoist

#: A loop whose ``arith.muli`` depends on the loop through nothing: its
#: operands share one ``arith.addi``, whose operands share one constant (the
#: closure meets each twice), and an ``arith.subi`` that reads the induction
#: variable (it stays).
SHARED = """
func.func @f(%lb: index, %ub: index, %st: index) {
  scf.for %i = %lb to %ub step %st {
    %c = arith.constant 3 : index
    %s = arith.addi %c, %c : index
    %t = arith.muli %s, %s : index
    %v = arith.subi %i, %t : index
  }
  return
}
"""


def _loop_and_body(module: ir.Module) -> tuple[ir.OpView, list[str]]:
    func = module.body.operations[0]
    (loop,) = [op for op in func.regions[0].blocks[0] if op.operation.name == "scf.for"]
    return loop, [op.operation.name for op in loop.body.operations]


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("arith.muli", ["arith.subi", "scf.yield"]),
        ("arith.subi", ["arith.constant", "arith.addi", "arith.muli", "arith.subi", "scf.yield"]),
    ],
)
def test_an_invariant_with_shared_operands_moves_with_its_chain(name: str, body: list[str]) -> None:
    """An op reached twice through the operands is already in the chain: the
    root still moves (with the constant and the add, once each, in order);
    an op that reads the induction variable stays with its chain."""
    with make_context():
        module = ir.Module.parse(SHARED)
        loop, _ = _loop_and_body(module)
        hoist(loop, name)
        assert module.operation.verify()
        loop, names = _loop_and_body(module)
        assert names == body
        before = [op.operation.name for op in module.body.operations[0].regions[0].blocks[0]]
        moved = ["arith.constant", "arith.addi", "arith.muli"] if name == "arith.muli" else []
        assert before == [*moved, "scf.for", "func.return"]
