"""A property test of the public GEMM API on the model (numpy and CPU torch).

Each example is one call of ``matmul``, ``grouped_matmul`` or
``grouped_matmul_variable_k`` over shapes with zeros, both dtypes, every
schedule and reduction, program counts, configs, seeds, ``out=`` and the forms
``group_lens`` comes in (lists, tuples, arrays, tensors), with at most one
argument spoiled (a bad schedule, reduction, ``num_programs``, ``num_xcds``,
config, seed, ``out``, shape, ``trans_b``, or lengths that are bools,
negative, of the wrong sum or count or type). A clean call must return exactly
the float64 product (small-integer inputs: every product, partial sum and
rounding is exact, atomic stream-K's too); a spoiled one must raise
``ValueError``/``TypeError`` naming the argument it spoiled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, event, given, seed, settings
from hypothesis import strategies as st

import gemm_opt

OPS = ("matmul", "grouped_matmul", "grouped_matmul_variable_k")
KINDS = ("data-parallel", "persistent", "work-stealing", "stream-k")
CONFIGS = (
    None,
    {"block_m": 32, "block_n": 32, "block_k": 32, "group_m": 1, "num_warps": 4},
    gemm_opt.GemmConfig(64, 32, 32, 2, 4),
    {"group_m": 3},
)
#: Spoiled values of each argument; the message must name the argument.
BAD = {
    "schedule": ["split-n", None, 3, "Stream-K"],
    "num_programs": [0, -3, 2**31, True, 2.5, "4"],
    "num_xcds": [0, 65, True, 1.0],
    "config": [
        {"group_m": 2**40},
        {"num_warps": 3},
        {"block_m": 48},
        {"block_k": 8},
        {"nope": 1},
        (64, 64),
        {"block_m": 512},
        {"num_stages": 0},
    ],
    "seed": ["x", True, 1.5],
}
FAULTS = (*BAD, "reduction", "group_lens", "out", "b", "trans_b")


@dataclass
class Call:
    op: str
    framework: str
    dtype: str
    a: np.ndarray
    b: np.ndarray
    lens: list[int] | None
    kw: dict[str, Any] = field(default_factory=dict)
    trans_b: bool = False
    lens_form: str = "list"
    fault: str | None = None


def _np_dtype(dtype: str) -> Any:
    return np.float16 if dtype == "fp16" else ml_dtypes.bfloat16


def _partition(draw: Any, total: int, groups: int) -> list[int]:
    cuts = sorted(draw(st.lists(st.integers(0, total), min_size=groups - 1, max_size=groups - 1)))
    edges = [0, *cuts, total]
    return [edges[i + 1] - edges[i] for i in range(groups)]


@st.composite
def calls(draw: Any, fault: str | None, op: str | None = None, schedule: str | None = None):
    """A call of ``op`` (None: any) under ``schedule`` (None: any it runs) spoiled by
    ``fault`` (None: a clean one)."""
    ops = {"group_lens": OPS[1:], "trans_b": OPS[1:2]}.get(fault, OPS)
    op = op or draw(st.sampled_from(ops))
    framework = draw(st.sampled_from(("numpy", "torch")))
    dtype = draw(st.sampled_from(("fp16", "bf16")))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    ints = lambda *shape: rng.integers(-2, 3, shape).astype(np.float64)  # noqa: E731
    m, n, k = draw(st.integers(0, 40)), draw(st.integers(0, 24)), draw(st.integers(0, 40))
    lens = None
    trans_b = False
    if op == "matmul":
        a, b = ints(m, k), ints(k, n)
        schedule = schedule or draw(st.sampled_from((*KINDS, "auto")))
    else:
        groups = draw(st.integers(1, 3))
        lens = _partition(draw, m, groups)
        schedule = schedule or draw(st.sampled_from(("persistent", "persistent", "auto")))
        if op == "grouped_matmul":
            trans_b = draw(st.booleans())
            a, b = ints(m, k), ints(groups, n, k) if trans_b else ints(groups, k, n)
        else:
            a, b = ints(m, k), ints(m, n)  # S = m rows, out (G, k, n)
    reduction = None
    if schedule == "stream-k":
        reduction = draw(st.sampled_from((None, "atomic", "linear", "tree")))
    elif schedule == "auto":  # reduction="atomic": atomic stream-K allowed
        reduction = draw(st.sampled_from((None, "atomic")))
    num_programs = draw(st.sampled_from((None, 1, 2, 3, 5, np.int64(4), 2**31 - 1)))
    kw = {
        "schedule": schedule,
        "reduction": reduction,
        "num_programs": num_programs,
        "num_xcds": 1,
        "config": draw(st.sampled_from(CONFIGS)),
        "seed": draw(st.sampled_from((None, 0, 1, np.int32(2)))),
        "out": None,
    }
    call = Call(op, framework, dtype, a, b, lens, kw, trans_b)
    call.lens_form = draw(st.sampled_from(("list", "tuple", "int32", "int64", "tensor")))
    call.kw["out"] = "fresh" if fault is None and draw(st.booleans()) else None
    if fault in ("group_lens", "trans_b") and op == "matmul":
        fault = None
    if fault == "trans_b" and op != "grouped_matmul":
        fault = None
    call.fault = fault
    if fault in BAD:
        call.kw[fault] = draw(st.sampled_from(BAD[fault]))
    elif fault == "reduction":
        others = ("linear", "tree", 5) if schedule == "auto" else ("linear", "atomic", 5)
        call.kw["reduction"] = "fast" if schedule == "stream-k" else draw(st.sampled_from(others))
    elif fault == "group_lens":
        spoils = ["bools", "negative", "sum", "short", "float", "2d", "str"]
        if op == "grouped_matmul":  # variable K takes any count of groups
            spoils.append("count")
        call.lens = draw(st.sampled_from(spoils))
    elif fault == "out":
        call.kw["out"] = draw(st.sampled_from(("shape", "dtype", "framework")))
    elif fault == "b":
        call.b = np.zeros((*b.shape[:-2], b.shape[-2] + 1, b.shape[-1]))
        if op == "grouped_matmul" and trans_b:
            call.b = np.zeros((*b.shape[:-1], b.shape[-1] + 1))
    elif fault == "trans_b":
        call.trans_b = 1  # an int is not a bool
    return call


def _lens_value(call: Call, rows: int, groups: int) -> Any:
    """``group_lens`` in the call's form, or spoiled as its fault says."""
    lens = call.lens
    if isinstance(lens, str):  # a spoiled form
        base = [rows] + [0] * (groups - 1)
        return {
            "bools": [True] * groups if rows != groups else [True] * (groups - 1) + [2],
            "negative": [rows + 1, -1] + [0] * (groups - 2) if groups > 1 else [-1],
            "sum": [rows + 1] + [0] * (groups - 1),
            "short": [abs(rows - 1)] + [0] * (groups - 1),
            "count": [*base, 0],
            "float": np.array(base, dtype=np.float32),
            "2d": np.array([base]),
            "str": "1" * groups,
        }[lens]
    form = call.lens_form
    if form == "tuple":
        return tuple(lens)
    if form in ("int32", "int64"):
        return np.array(lens, dtype=form)
    if form == "tensor":
        return torch.tensor(lens, dtype=torch.int64)
    return list(lens)


def _operand(x: np.ndarray, call: Call) -> Any:
    arr = x.astype(_np_dtype(call.dtype))
    if call.framework == "numpy":
        return arr
    t = torch.from_numpy(x.astype(np.float32))
    return t.to(torch.float16 if call.dtype == "fp16" else torch.bfloat16)


def _reference(call: Call) -> np.ndarray:
    a, b = call.a, call.b
    if call.op == "matmul":
        return a @ b
    starts = np.cumsum([0, *call.lens])
    if call.op == "grouped_matmul":
        w = np.swapaxes(b, 1, 2) if call.trans_b else b
        return np.concatenate(
            [a[starts[g] : starts[g + 1]] @ w[g] for g in range(len(call.lens))]
        ).reshape(a.shape[0], w.shape[2])
    return np.stack(
        [
            a[starts[g] : starts[g + 1]].T @ b[starts[g] : starts[g + 1]]
            for g in range(len(call.lens))
        ]
    )


def _out(call: Call, shape: tuple[int, ...]) -> Any:
    spoil = call.kw["out"]
    if spoil is None:
        return None
    dtype, framework = call.dtype, call.framework
    if spoil == "shape":
        shape = (*shape[:-1], shape[-1] + 1)
    if spoil == "dtype":  # float32 is an output type (an fp32 C); float64 is none
        dtype = "fp64"
    if spoil == "framework":
        framework = "torch" if framework == "numpy" else "numpy"
    if framework == "numpy":
        return np.zeros(shape, np.float64 if dtype == "fp64" else _np_dtype(dtype))
    tdt = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp64": torch.float64}[dtype]
    return torch.zeros(shape, dtype=tdt)


def _as_float64(x: Any) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.float().numpy().astype(np.float64)
    return np.asarray(x, dtype=np.float64)


#: Examples per spoiled argument, and per operation and schedule of clean calls
#: (about 20 s of CI in all).
SPOILED_EXAMPLES = 12
CLEAN_EXAMPLES = 6
#: The clean calls' operations and schedules.
CLEAN = [("matmul", k) for k in (*KINDS, "auto")] + [
    (op, k) for op in OPS[1:] for k in ("persistent", "auto")
]


def _check(strategy: Any, examples: int) -> None:
    @seed(20261127)  # a fixed draw: the same examples in every run (no example database)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(strategy)
    def check(call: Call) -> None:
        one_call(call)

    check()


@pytest.mark.parametrize(("op", "schedule"), CLEAN)
def test_a_clean_call_equals_numpy_exactly(op: str, schedule: str) -> None:
    _check(calls(None, op, schedule), CLEAN_EXAMPLES)


@pytest.mark.parametrize("fault", FAULTS)
def test_a_spoiled_call_names_the_argument(fault: str) -> None:
    _check(calls(fault), SPOILED_EXAMPLES)


def one_call(call: Call) -> None:
    """Run ``call``: the product exactly, or an error naming the spoiled argument."""
    event(f"{call.op}, spoiled: {call.fault}")
    a, b = _operand(call.a, call), _operand(call.b, call)
    kw = dict(call.kw)
    groups = call.b.shape[0] if call.op == "grouped_matmul" else (
        len(call.lens) if isinstance(call.lens, list) else 2
    )  # fmt: skip
    # out= is given on clean calls and spoiled on its own: every other call has none
    kw["out"] = _out(call, _reference(call).shape) if call.fault in (None, "out") else None
    fn = getattr(gemm_opt, call.op)
    args: tuple = (a, b)
    if call.op != "matmul":
        args += (_lens_value(call, call.a.shape[0], groups),)
    if call.op == "grouped_matmul":
        kw["trans_b"] = call.trans_b
    if call.fault is None:
        result = fn(*args, **kw)
        assert result is kw["out"] or kw["out"] is None
        np.testing.assert_array_equal(_as_float64(result), _reference(call))
        return
    name = {"b": "b:"}.get(call.fault, call.fault)
    try:
        fn(*args, **kw)
    except (ValueError, TypeError) as e:
        assert name in str(e), (call.fault, str(e))
    else:
        raise AssertionError(f"a spoiled {call.fault} was accepted")
