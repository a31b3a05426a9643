"""The hand-off of control flow and arithmetic (``lowering.convert_control_flow``),
pinned where the lit files left it open (found by ``benchmarks/mutation.py``).

A non-splat tensor constant lowers to a splat and one ``select`` per run of equal
values; its values are checked by evaluating the lowered ops with numpy, element by
element, against the constant. Kept ops (casts, ``arith.cmpf``) keep their meaning;
``scf`` ops keep their regions, results and terminators on a target that counts no
copies; a call reaches its function.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.ttgir_text import body_lines

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect.edit import edited, ops_named, set_constant
from gemm_opt.lowering.compile import TileCompileError, lower_tile_module
from gemm_opt.lowering.convert_control_flow import MAX_CONSTANT_RUNS


def _ttgir(text: str, target: str = "gfx1250") -> list[str]:
    return body_lines(lower_tile_module(text, target, fuse=False).ttgir)


def _line_of(text: str, needle: str) -> int:
    (row,) = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    return row


# ---- non-splat constants, evaluated -------------------------------------------------


def _shape_and_dtype(type_text: str) -> tuple[list[int], type]:
    """``tensor<2x4xf32, #blocked>`` -> ([2, 4], float); a scalar type -> ([], ...)."""
    if not type_text.startswith("tensor<"):
        return [], float if type_text.startswith(("f", "bf")) else int
    dims = type_text.removeprefix("tensor<").split(",")[0].split("x")
    return [int(d) for d in dims[:-1]], float if dims[-1].startswith(("f", "bf")) else int


def _literal(text: str) -> float | int | bool:
    if text in ("true", "false"):
        return text == "true"
    return float(text) if any(c in text for c in ".eE") else int(text)


def _evaluate(lines: list[str]) -> np.ndarray:
    """The value ``tt.return`` returns, computing each op the constant lowers to
    (constants, ranges, index arithmetic, compares, selects) with numpy."""
    env: dict[str, np.ndarray] = {}
    for line in lines:
        if line.startswith("tt.return "):
            return env[line.removeprefix("tt.return ").split(" : ")[0]]
        name, sep, rest = line.partition(" = ")
        if not sep or not name.startswith("%"):
            continue
        op, _, tail = rest.partition(" ")
        operands_text, _, type_text = tail.rpartition(" : ")
        shape, kind = _shape_and_dtype(type_text.split(" -> ")[-1])
        args = [env.get(a.strip()) for a in operands_text.split(",")]
        if op == "arith.constant":
            literal = operands_text.removeprefix("dense<").removesuffix(">")
            env[name] = np.full(shape, _literal(literal), dtype=kind)
        elif op == "tt.make_range":
            start = int(operands_text.split("start = ")[1].split(" ")[0])
            end = int(operands_text.split("end = ")[1].split(" ")[0])
            env[name] = np.arange(start, end)
        elif op == "tt.expand_dims":
            axis = int(operands_text.split("axis = ")[1].split(" ")[0])
            env[name] = np.expand_dims(env[operands_text.split(" ")[0]], axis)
        elif op == "tt.broadcast":
            env[name] = np.broadcast_to(env[operands_text], shape)
        elif op in ("arith.addi", "arith.muli", "arith.andi"):
            fn = {"arith.addi": np.add, "arith.muli": np.multiply, "arith.andi": np.logical_and}
            env[name] = fn[op](args[0], args[1])
        elif op == "arith.cmpi":
            predicate, a, b = (x.strip() for x in operands_text.split(","))
            fn = {"sge": np.greater_equal, "slt": np.less}[predicate]
            env[name] = fn(env[a], env[b])
        elif op == "arith.select":
            env[name] = np.where(args[0], args[1], args[2])
        else:
            raise AssertionError(f"unexpected op in a lowered constant: {line}")
    raise AssertionError("no tt.return")


CONSTANT = """
#bl1 = #tile.blocked<{size_per_thread = array<i64: 1>, threads_per_warp = array<i64: 32>,
                      warps_per_cta = array<i64: 4>, order = array<i64: 0>}>
#bl2 = #tile.blocked<{size_per_thread = array<i64: 1, 1>, threads_per_warp = array<i64: 8, 4>,
                      warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32} {
  func.func private @rank1() -> tensor<8xi32, #bl1> {
    %m = arith.constant dense<0> : tensor<8xi32, #bl1>
    return %m : tensor<8xi32, #bl1>
  }
  func.func private @rank2() -> tensor<2x4xf32, #bl2> {
    %m = arith.constant dense<0.0> : tensor<2x4xf32, #bl2>
    return %m : tensor<2x4xf32, #bl2>
  }
  func.func private @long() -> tensor<256xi32, #bl1> {
    %m = arith.constant dense<0> : tensor<256xi32, #bl1>
    return %m : tensor<256xi32, #bl1>
  }
}
"""


def _with_constant(function: int, values: list) -> str:
    """``CONSTANT`` with the table of its ``function``-th function holding ``values``."""
    return edited(
        CONSTANT, lambda m: set_constant(ops_named(m, "arith.constant")[function], values)
    )


def _lowered_constant(function: int, values: list, name: str) -> np.ndarray:
    lines = _ttgir(_with_constant(function, values))
    (start,) = [i for i, line in enumerate(lines) if line.startswith(f"tt.func private @{name}(")]
    return _evaluate(lines[start + 1 :])


@pytest.mark.parametrize(
    "values",
    [
        [4, 5, 5, 6, 6, 6, 7, 4],  # the first two differ: the run at 1 starts a select
        [4, 4, 5, 6, 6, 6, 7, 4],
        [-3, 9, -3, 9, -3, 9, -3, 9],  # every element its own run
        [1, 1, 1, 1, 1, 1, 1, 2],  # one run after the first, at the end
    ],
)
def test_a_rank_1_constant_keeps_every_value(values: list[int]) -> None:
    got = _lowered_constant(0, values, "rank1")
    np.testing.assert_array_equal(got, np.array(values))


def test_a_rank_2_constant_keeps_every_value_in_row_major_order() -> None:
    values = [-1.5, 1.0, 1.0, 2.0, 2.0, 3.0, 0.25, 0.25]
    got = _lowered_constant(1, values, "rank2")
    np.testing.assert_array_equal(got, np.array(values).reshape(2, 4))


def _runs(count: int) -> list[int]:
    """256 values in ``count`` runs of equal values."""
    return [min(i * count // 256, count - 1) for i in range(256)]


def test_a_constant_of_the_most_runs_lowers_with_its_values() -> None:
    values = _runs(MAX_CONSTANT_RUNS + 1)
    assert len(set(values)) == MAX_CONSTANT_RUNS + 1
    got = _lowered_constant(2, values, "long")
    np.testing.assert_array_equal(got, np.array(values))


def test_a_constant_of_one_run_more_is_a_located_error() -> None:
    text = _with_constant(2, _runs(MAX_CONSTANT_RUNS + 2))
    with pytest.raises(TileCompileError) as info:
        lower_tile_module(text, "gfx1250", fuse=False)
    assert info.value.message == (
        "a non-splat constant lowers as one select per run of equal values; this one has "
        f"{MAX_CONSTANT_RUNS + 2} runs (at most {MAX_CONSTANT_RUNS + 1})"
    )
    assert info.value.line == _line_of(CONSTANT, "dense<0> : tensor<256xi32")


RANK3 = """
#bl3 = #tile.blocked<{size_per_thread = array<i64: 1, 1, 1>, threads_per_warp = array<i64: 2, 4, 4>,
                      warps_per_cta = array<i64: 4, 1, 1>, order = array<i64: 2, 1, 0>}>
module attributes {tile.num_warps = 4 : i32} {
  func.func private @rank3() -> tensor<2x2x2xi32, #bl3> {
    %m = arith.constant dense<[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]> : tensor<2x2x2xi32, #bl3>
    return %m : tensor<2x2x2xi32, #bl3>
  }
}
"""


def test_a_rank_3_non_splat_constant_is_a_located_error() -> None:
    with pytest.raises(TileCompileError) as info:
        lower_tile_module(RANK3, "gfx1250", fuse=False)
    assert info.value.message == "only rank-1 and rank-2 tensor constants lower to TritonGPU"
    assert info.value.line == _line_of(RANK3, "arith.constant dense")


# ---- kept ops keep their meaning --------------------------------------------------

CAST = """
module attributes {tile.num_warps = 4 : i32} {
  func.func private @f(%x: i32) -> i32 {
    return %x : i32
  }
}
"""


def _cast_module(name: str, source: str, result: str) -> str:
    def edit(module: ir.Module) -> None:
        (fn,) = ops_named(module, "func.func")
        src, dst = ir.Type.parse(source), ir.Type.parse(result)
        fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([src], [dst]))
        block = fn.regions[0].blocks[0]
        block.arguments[0].set_type(src)
        (ret,) = ops_named(module, "func.return")
        with ir.InsertionPoint(ret), ret.location:
            cast = ir.Operation.create(name, results=[dst], operands=[block.arguments[0]])
        ret.operands[0] = cast.results[0]

    return edited(CAST, edit)


@pytest.mark.parametrize(
    ("name", "source", "result"),
    [
        ("arith.extsi", "i32", "i64"),
        ("arith.extui", "i32", "i64"),
        ("arith.trunci", "i64", "i32"),
        ("arith.sitofp", "i32", "f32"),
        ("arith.uitofp", "i32", "f32"),
        ("arith.fptosi", "f32", "i32"),
        ("arith.fptoui", "f32", "i32"),
        ("arith.extf", "f16", "f32"),
        ("arith.truncf", "f32", "f16"),
        ("arith.bitcast", "i32", "f32"),
    ],
)
def test_a_cast_lowers_to_itself(name: str, source: str, result: str) -> None:
    """Signedness included: ``extui`` zero-extends, ``extsi`` sign-extends."""
    lines = _ttgir(_cast_module(name, source, result))
    casts = [line.split(" = ", 1)[1] for line in lines if line.startswith("%0 = ")]
    if name == "arith.bitcast":  # Triton's own op for it
        assert casts == [f"tt.bitcast %arg0 : {source} -> {result}"]
    else:
        assert casts == [f"{name} %arg0 : {source} to {result}"]


#: ``arith.cmpf`` predicates by code (MLIR's ``CmpFPredicate``).
CMPF = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord")
CMPF += ("ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true")
#: The ones Triton's builder has no ``create_fcmp`` for.
NO_FCMP = {"false", "ord", "uno", "true"}

CMPF_MODULE = """
module attributes {tile.num_warps = 4 : i32} {
  func.func private @f(%x: f32, %y: f32) -> i1 {
    %c = arith.cmpf oeq, %x, %y : f32
    return %c : i1
  }
}
"""


def _cmpf(code: int) -> str:
    def edit(module: ir.Module) -> None:
        (op,) = ops_named(module, "arith.cmpf")
        op.attributes["predicate"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), code)

    return edited(CMPF_MODULE, edit)


@pytest.mark.parametrize("code", range(len(CMPF)), ids=CMPF)
def test_cmpf_keeps_its_predicate_or_is_a_located_error(code: int) -> None:
    text = _cmpf(code)
    if CMPF[code] in NO_FCMP:
        with pytest.raises(TileCompileError) as info:
            lower_tile_module(text, "gfx1250", fuse=False)
        assert info.value.message == (f"'arith.cmpf' predicate {code} has no lowering to TritonGPU")
        assert info.value.line == _line_of(CMPF_MODULE, "arith.cmpf")
        return
    (cmp,) = [line.split(" = ", 1)[1] for line in _ttgir(text) if " = arith.cmpf" in line]
    assert cmp == f"arith.cmpf {CMPF[code]}, %arg0, %arg1 : f32"


# ---- scf ops and calls where no copy is counted ---------------------------------------

SCF = """
module attributes {tile.num_warps = 4 : i32} {
  func.func private @g(%a: i32) -> i32 {
    %c3 = arith.constant 3 : i32
    %r = arith.addi %a, %c3 : i32
    return %r : i32
  }
  func.func private @f(%c: i1, %x: i32, %y: i32, %n: i32) -> (i32, i32, i32, i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %both = scf.if %c -> i32 {
      scf.yield %x : i32
    } else {
      scf.yield %y : i32
    }
    scf.if %c {
      %u = func.call @g(%x) : (i32) -> i32
    }
    scf.for %i = %c0 to %n step %c1 : i32 {
      %v = func.call @g(%i) : (i32) -> i32
    }
    %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> i32 : i32 {
      %next = arith.addi %acc, %i : i32
      scf.yield %next : i32
    }
    %w = scf.while (%j = %y) : (i32) -> i32 {
      %more = arith.cmpi slt, %j, %n : i32
      scf.condition(%more) %j : i32
    } do {
    ^bb0(%k: i32):
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
    scf.while : () -> () {
      scf.condition(%c)
    } do {
      scf.yield
    }
    %called = func.call @g(%w) : (i32) -> i32
    return %both, %sum, %w, %called : i32, i32, i32, i32
  }
}
"""

#: The lowered ``@f`` after its two constants.
SCF_LOWERED = [
    "%0 = scf.if %arg0 -> (i32) {",
    "scf.yield %arg1 : i32",
    "} else {",
    "scf.yield %arg2 : i32",
    "}",
    "scf.if %arg0 {",
    "%4 = tt.call @g(%arg1) : (i32) -> i32",
    "}",
    "scf.for %arg4 = %c0_i32 to %arg3 step %c1_i32  : i32 {",
    "%4 = tt.call @g(%arg4) : (i32) -> i32",
    "}",
    "%1 = scf.for %arg4 = %c0_i32 to %arg3 step %c1_i32 iter_args(%arg5 = %arg1) -> (i32)  : i32 {",
    "%4 = arith.addi %arg5, %arg4 : i32",
    "scf.yield %4 : i32",
    "}",
    "%2 = scf.while (%arg4 = %arg2) : (i32) -> i32 {",
    "%4 = arith.cmpi slt, %arg4, %arg3 : i32",
    "scf.condition(%4) %arg4 : i32",
    "} do {",
    "^bb0(%arg4: i32",  # its location follows
    "%4 = arith.addi %arg4, %c1_i32 : i32",
    "scf.yield %4 : i32",
    "}",
    "scf.while : () -> () {",
    "scf.condition(%arg0)",
    "} do {",
    "scf.yield",
    "}",
    "%3 = tt.call @g(%2) : (i32) -> i32",
    "tt.return %0, %1, %2, %3 : i32, i32, i32, i32",
]


@pytest.mark.parametrize("target", ["gfx1250", "cuda:90"])
def test_scf_ops_and_calls_keep_their_regions_results_and_terminators(target: str) -> None:
    lines = _ttgir(SCF, target)
    (start,) = [i for i, line in enumerate(lines) if line.startswith("tt.func private @f(")]
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("tt.return "))
    assert lines[start + 1 : start + 3] == [
        "%c0_i32 = arith.constant 0 : i32",
        "%c1_i32 = arith.constant 1 : i32",
    ]
    assert lines[start + 3 : end + 1] == SCF_LOWERED
