"""The model's atomics and scalar loads at the edges the earlier tests left open.

The operand checks of ``tile.atomic_rmw`` and ``tile.atomic_add_block`` are
met by every module that parses (the verifier states them first), but the
model also takes a built module, which nothing verifies: a malformed op there
is a ``ModelError`` naming it, never a Python error or a silent result. A
block add covering one element twice adds twice, each add in f32 rounded to
the element; a scalar load is an interleaving point and a recorded read.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context
from gemm_opt.dialect.edit import ops_named
from gemm_opt.model.interpreter import ModelError, run_function

# ---- operand checks on a module nothing verified -------------------------------------------

ATOMICS = """
#bl = #tile.blocked<{size_per_thread = array<i64: 1>, threads_per_warp = array<i64: 32>, warps_per_cta = array<i64: 1>, order = array<i64: 0>}>
!f = tensor<1xf32, #bl>
module attributes {tile.num_warps = 1 : i32} {
  func.func @k(%count: !tile.ptr<i32>, %sum: !tile.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %l1 = arith.constant 1 : i64
    %x = arith.constant 1.0 : f32
    %ones = arith.constant dense<1.0> : !f
    %iones = arith.constant dense<1> : tensor<1xi32, #bl>
    %n = "tile.atomic_rmw"(%count, %c0, %c1) {kind = "add", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    "tile.atomic_add_block"(%sum, %c1, %l1, %c0, %ones) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>, sem = "relaxed", scope = "gpu"} : (!tile.ptr<f32>, i32, i64, i32, !f) -> ()
    return
  }
}
"""


def _const(module: ir.Module, type_prefix: str) -> ir.Value:
    """The first constant whose type prints starting with ``type_prefix``."""
    for op in ops_named(module, "arith.constant"):
        if str(op.results[0].type).startswith(type_prefix):
            return op.results[0]
    raise AssertionError(type_prefix)


def _replace(op_name: str, rebuild: Callable[[ir.Module, ir.Operation], ir.Operation]) -> ir.Module:
    """``ATOMICS`` with its ``op_name`` replaced by ``rebuild``'s (unverified) op."""
    ctx = make_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(ATOMICS)
        (old,) = ops_named(module, op_name)
        with ir.InsertionPoint(old):
            new = rebuild(module, old)
        for a, b in zip(old.results, new.results, strict=True):
            a.replace_all_uses_with(b)
        old.erase()
    return module


def _attrs(op: ir.Operation) -> dict[str, ir.Attribute]:
    return {name: op.attributes[name] for name in op.attributes}


def _rmw_without_value(module: ir.Module, old: ir.Operation) -> ir.Operation:
    operands = list(old.operands)[:2]
    return ir.Operation.create(
        old.name, results=[r.type for r in old.results], operands=operands, attributes={}
    )


def _rmw_of_f32(module: ir.Module, old: ir.Operation) -> ir.Operation:
    base, index, _ = old.operands
    attrs = _attrs(old)
    f32 = ir.F32Type.get()
    return ir.Operation.create(
        old.name,
        results=[f32],
        operands=[base, index, _const(module, "f32")],
        attributes=attrs,
    )


def _block_add_of_two_values(module: ir.Module, old: ir.Operation) -> ir.Operation:
    attrs = _attrs(old)
    attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([1, 1, 1, 1, 2])
    value = old.operands[4]
    return ir.Operation.create(
        old.name, results=[], operands=[*old.operands, value], attributes=attrs
    )


def _block_add_of_i32(module: ir.Module, old: ir.Operation) -> ir.Operation:
    attrs = _attrs(old)
    operands = list(old.operands)
    operands[4] = _const(module, "tensor<1xi32")
    return ir.Operation.create(old.name, results=[], operands=operands, attributes=attrs)


MALFORMED = {
    "an rmw without its value": (
        "tile.atomic_rmw",
        _rmw_without_value,
        "expected \\(base, index, value\\) -> old value",
    ),
    "an rmw of f32": ("tile.atomic_rmw", _rmw_of_f32, "only scalar integer atomics"),
    "a block add of two values": (
        "tile.atomic_add_block",
        _block_add_of_two_values,
        "expected one base and one value",
    ),
    "a block add of i32": (
        "tile.atomic_add_block",
        _block_add_of_i32,
        "atomic add takes f32, f16 or bf16 blocks",
    ),
}


@pytest.mark.parametrize("what", MALFORMED)
def test_a_malformed_atomic_in_a_built_module_is_a_model_error(what: str) -> None:
    op_name, rebuild, message = MALFORMED[what]
    module = _replace(op_name, rebuild)
    count, total = np.zeros(1, np.int32), np.zeros(1, np.float32)
    with pytest.raises(ModelError, match=f"^'{op_name}' at .*: {message}"):
        run_function(module, "k", {"count": count, "sum": total}, arg_names=["count", "sum"])
    assert count[0] == 0 and total[0] == 0  # nothing ran


def test_the_unchanged_module_runs() -> None:
    """The rebuilt ops above are the only difference from a module that runs."""
    count, total = np.zeros(1, np.int32), np.zeros(1, np.float32)
    run_function(ATOMICS, "k", {"count": count, "sum": total}, (3, 1, 1))
    assert count[0] == 3 and total[0] == 3.0


# ---- tile.load_scalar ----------------------------------------------------------------------

LOAD_SCALAR = """
module attributes {tile.num_warps = 1 : i32} {
  func.func @k(%data: !tile.ptr<i32>, %i: i32) -> i32 {
    %v = "tile.load_scalar"(%data, %i) : (!tile.ptr<i32>, i32) -> i32
    return %v : i32
  }
}
"""


def test_a_scalar_load_of_one_program_reads_its_word() -> None:
    """One program: no other can race it, so no read is recorded."""
    data = np.array([7, -3, 11], np.int32)
    for i, want in enumerate(data.tolist()):
        res = run_function(LOAD_SCALAR, "k", {"data": data, "i": i})
        assert [v.tolist() for v in res.returns[(0, 0, 0)]] == [[want]]  # one warp


#: ``@k(%data, %count)``, two programs: 0 stores data[0] then data[1] (block
#: stores; its relaxed atomic makes the grid run concurrently), 1 loads
#: data[1] then data[0] with scalar loads. Which races are reported says
#: where the seeded runs could hand over.
SCALAR_LOADS_BETWEEN_STORES = """
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
      %a = "tile.load_scalar"(%data, %c1) : (!tile.ptr<i32>, i32) -> i32 loc("P1":1:1)
      %b = "tile.load_scalar"(%data, %c0) : (!tile.ptr<i32>, i32) -> i32 loc("P1":2:1)
    }
    return
  }
}
"""


def test_seeded_runs_interleave_at_scalar_loads() -> None:
    """Program 0 storing data[1] after 1 read it needs a hand-over between
    the two scalar loads; every report names a read the memory model recorded."""
    reports = set()
    for seed in [None, *range(48)]:
        arrays = {"data": np.zeros(2, np.int32), "count": np.zeros(1, np.int32)}
        with pytest.raises(ModelError) as e:
            run_function(
                SCALAR_LOADS_BETWEEN_STORES, "k", arrays, (2, 1, 1), seed=seed, num_resident=2
            )
        where, kind, rest = str(e.value).split(": ", 2)
        word = rest.index("'data'[")
        reports.add((where, kind, rest[word : word + 9]))
    read, write = "partial read before its release", "write racing a read of another program"
    assert reports == {
        ("'tile.load_scalar' at P1:1:1", read, "'data'[1]"),
        ("'tile.load_scalar' at P1:2:1", read, "'data'[0]"),
        ("'tile.store_block' at P0:1:1", write, "'data'[0]"),
        ("'tile.store_block' at P0:2:1", write, "'data'[1]"),  # the hand-over at P1:2:1
    }


# ---- tile.atomic_add_block -----------------------------------------------------------------

#: ``@k(%sum)``: every program adds a 4-element block of ones at stride
#: ``%stride`` (0: all four onto sum[0]).
BLOCK_ADD = """
#bl = #tile.blocked<{size_per_thread = array<i64: 1>, threads_per_warp = array<i64: 32>, warps_per_cta = array<i64: 1>, order = array<i64: 0>}>
!v = tensor<4xELEM, #bl>
module attributes {tile.num_warps = 1 : i32} {
  func.func @k(%sum: !tile.ptr<ELEM>, %stride: i64) {
    %c0 = arith.constant 0 : i32
    %c4 = arith.constant 4 : i32
    %ones = arith.constant dense<1.0> : !v
    "tile.atomic_add_block"(%sum, %c4, %stride, %c0, %ones) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (!tile.ptr<ELEM>, i32, i64, i32, !v) -> ()
    return
  }
}
"""


@pytest.mark.parametrize(
    ("elem", "start", "stride", "want"),
    [
        ("f32", 0.0, 1, [1.0, 1.0, 1.0, 1.0]),
        ("f32", 0.0, 2, [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]),
        ("f32", 0.0, 0, [4.0]),  # one element covered four times
        ("f32", 0.5, 0, [4.5]),
        # f16 above 2048 has a spacing of 2: each add of 1 rounds back (to even)
        ("f16", 2048.0, 0, [2048.0]),
        ("f16", 2048.0, 1, [2048.0] * 4),
        ("bf16", 1.0, 0, [5.0]),
        ("bf16", 256.0, 0, [256.0]),  # bf16 above 256 has a spacing of 2
    ],
)
def test_a_block_add_adds_each_covered_element_once_per_cover(
    elem: str, start: float, stride: int, want: list[float]
) -> None:
    # (the model holds bf16 values in float32 arrays)
    data = np.full(len(want), start, np.float16 if elem == "f16" else np.float32)
    run_function(BLOCK_ADD.replace("ELEM", elem), "k", {"sum": data, "stride": stride})
    np.testing.assert_array_equal(data.astype(np.float32), np.array(want, np.float32))


def test_block_adds_alone_run_the_grid_concurrently() -> None:
    data = np.zeros(4, np.float32)
    res = run_function(
        BLOCK_ADD.replace("ELEM", "f32"), "k", {"sum": data, "stride": 1}, (3, 1, 1), num_resident=2
    )
    assert res.sync is not None
    assert res.sync.concurrent and res.sync.max_resident == 2
    np.testing.assert_array_equal(data, np.full(4, 3.0, np.float32))


DIVERGENT_ADD = """
#bl = #tile.blocked<{size_per_thread = array<i64: 1>, threads_per_warp = array<i64: 32>, warps_per_cta = array<i64: 2>, order = array<i64: 0>}>
!v = tensor<64xf32, #bl>
module attributes {tile.num_warps = 2 : i32} {
  func.func @k(%sum: !tile.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %l1 = arith.constant 1 : i64
    %ones = arith.constant dense<1.0> : !v
    %w = "tile.warp_id"() : () -> i32
    %first = arith.cmpi eq, %w, %c0 : i32
    scf.if %first {
      "tile.atomic_add_block"(%sum, %c64, %l1, %c0, %ones) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (!tile.ptr<f32>, i32, i64, i32, !v) -> ()
    }
    return
  }
}
"""


def test_a_block_add_by_some_warps_only_is_refused() -> None:
    data = np.zeros(64, np.float32)
    with pytest.raises(ModelError, match="atomic_add_block under warp-divergent control flow"):
        run_function(DIVERGENT_ADD, "k", {"sum": data})
    assert not data.any()  # nothing was added
