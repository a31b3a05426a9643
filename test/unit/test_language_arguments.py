"""The front end tells the user's mistakes from its own.

Every argument a ``tl.*`` call takes is checked where the call is (one helper,
:mod:`gemm_opt.language.arguments`): the wrong type, a list that is not one, a
value past what its 32 bits hold, a function whose signature does not fit,
and an exception the user's own function raises are the user's errors at
their line; none is an "internal error in the front end", and no value wraps
before a verifier sees it. Each case is tagged ``# MARK: <name>``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import gemm_opt.language as tl
from gemm_opt.language import ops

THIS_FILE = Path(__file__).resolve()

SA = tl.SwizzledShared(vec=1, per_phase=1, max_phase=1, order=[1, 0])
ACC = tl.WmmaLayout(version=3, warps_per_cta=[2, 2], instr_shape=[16, 16, 32])


def line_of(marker: str) -> int:
    lines = THIS_FILE.read_text().splitlines()
    hits = [i for i, text in enumerate(lines, 1) if text.rstrip().endswith(marker)]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


def build_error(case: str) -> tl.CompilationError:
    with pytest.raises(tl.CompilationError) as info:
        misuse.build_ir(num_warps=4, CASE=case)
    return info.value


def _worker_raises(p):
    raise KeyError("the user's own bug")  # MARK: worker-raises


def _body_raises(i):
    return 1 // 0  # MARK: body-raises


@tl.kernel
def misuse(a: tl.ptr(tl.float16), m: tl.int32, CASE: tl.constexpr):
    parts = [(lambda: None, ()), (lambda q: None, (a,))]
    ring = tl.allocate_mbarrier(1)
    if CASE == "regs-str":
        tl.warp_specialize(parts, [1], ["24"])  # MARK: regs-str
    elif CASE == "regs-float":
        tl.warp_specialize(parts, [1], [24.5])  # MARK: regs-float
    elif CASE == "regs-not-list":
        tl.warp_specialize(parts, [1], 24)  # MARK: regs-not-list
    elif CASE == "regs-huge":
        tl.warp_specialize(parts, [1], [2**32 + 24])  # MARK: regs-huge
    elif CASE == "warps-not-list":
        tl.warp_specialize(parts, 1)  # MARK: warps-not-list
    elif CASE == "warps-wraps":
        tl.warp_specialize(parts, [2**31])  # MARK: warps-wraps
    elif CASE == "parts-not-list":
        tl.warp_specialize(len, [1])  # MARK: parts-not-list
    elif CASE == "worker-arity":
        tl.warp_specialize([(lambda: None, ()), (lambda: None, (a,))], [1])  # MARK: worker-arity
    elif CASE == "default-arity":
        tl.warp_specialize([(lambda x: None, ()), parts[1]], [1])  # MARK: default-arity
    elif CASE == "worker-raises":
        tl.warp_specialize([(lambda: None, ()), (_worker_raises, (a,))], [1])
    elif CASE == "body-raises":
        tl.for_loop(0, m, 1, body=_body_raises)
    elif CASE == "body-arity":
        tl.for_loop(0, m, 1, body=lambda: None)  # MARK: body-arity
    elif CASE == "then-arity":
        tl.if_(m > 0, lambda flag: None)  # MARK: then-arity
    elif CASE == "mma-wait-wraps":
        tl.async_wmma_wait(tl.zeros([32, 32], tl.float32, ACC), 2**31)  # MARK: mma-wait-wraps
    elif CASE == "expect-wraps":
        tl.mbarrier.expect(ring.index(0), 2**31)  # MARK: expect-wraps
    elif CASE == "init-wraps":
        tl.mbarrier.init(ring.index(0), count=2**32 + 1)  # MARK: init-wraps
    elif CASE == "arrive-float":
        tl.mbarrier.arrive(ring.index(0), count=1.0)  # MARK: arrive-float
    elif CASE == "phase-wraps":
        tl.mbarrier.wait(ring.index(0), 2**31)  # MARK: phase-wraps
    elif CASE == "shape-wraps":
        tl.make_tensor_descriptor(a, [2**31, m], [m, 1], [64, 64], SA)  # MARK: shape-wraps
    elif CASE == "offset-wraps":
        desc = tl.make_tensor_descriptor(a, [m, m], [m, 1], [64, 64], SA)
        desc.update(offsets=[2**32, 0])  # MARK: offset-wraps
    elif CASE == "bound-wraps":
        tl.for_loop(0, 2**31, 1, body=lambda i: None)  # MARK: bound-wraps
    elif CASE == "fill-wide":
        tl.full([32, 32], 2**40, tl.int32, ACC)  # MARK: fill-wide
    elif CASE == "padding-wide":
        wide = tl.PaddedShared(interval=2**63, amount=8)
        tl.allocate_shared(tl.float16, [64, 64], wide)  # MARK: padding-wide
    elif CASE == "block-dim-wide":
        tl.allocate_shared(tl.float16, [2**64, 64], SA)  # MARK: block-dim-wide


CASES = [
    ("regs-str", "worker_num_regs[0] must be a constexpr int in [0, 2147483647], got '24'"),
    ("regs-float", "worker_num_regs[0] must be a constexpr int in [0, 2147483647], got 24.5"),
    ("regs-not-list", "worker_num_regs must be a list or tuple, got 24"),
    ("regs-huge", "worker_num_regs[0] must be a constexpr int in [0, 2147483647], got 4294967320"),
    ("warps-not-list", "worker_num_warps must be a list or tuple, got 1"),
    (
        "warps-wraps",
        "worker_num_warps[0] must be a constexpr int in [1, 2147483647], got 2147483648",
    ),
    ("parts-not-list", "warp_specialize partitions must be a list or tuple"),
    ("worker-arity", "warp_specialize partition 1 <lambda>() cannot be called with 1 argument"),
    ("default-arity", "warp_specialize partition 0 <lambda>(x) cannot be called with 0 arguments"),
    ("worker-raises", 'KeyError: "the user\'s own bug"'),
    ("body-raises", "ZeroDivisionError: integer division or modulo by zero"),
    ("body-arity", "for_loop body <lambda>() cannot be called with 1 argument"),
    ("then-arity", "if_ then <lambda>(flag) cannot be called with 0 arguments"),
    (
        "mma-wait-wraps",
        "async_wmma_wait num must be a constexpr int in [0, 2147483647] (MMAs left in flight), "
        "got 2147483648",
    ),
    (
        "expect-wraps",
        "mbarrier.expect bytes must be a constexpr int in [1, 1048575], got 2147483648",
    ),
    ("init-wraps", "mbarrier.init count must be a constexpr int in [1, 1048575], got 4294967297"),
    ("arrive-float", "mbarrier.arrive count must be a constexpr int in [1, 1048575], got 1.0"),
    ("phase-wraps", "mbarrier.wait phase must be a constexpr int in [-2147483648, 2147483647]"),
    ("shape-wraps", "shape entry must be a constexpr int in [-2147483648, 2147483647] (tl.int32)"),
    ("offset-wraps", "offset must be a constexpr int in [-2147483648, 2147483647] (tl.int32)"),
    ("bound-wraps", "for_loop bound must be a constexpr int in [-2147483648, 2147483647]"),
    ("fill-wide", "fill value 1099511627776 does not fit 32 bits"),
    ("padding-wide", "PaddedShared interval must be a constexpr int in [0, 2147483647]"),
    ("block-dim-wide", "allocate_shared shape[0] must be a constexpr int in [1, 2147483647]"),
]


@pytest.mark.parametrize(("case", "fragment"), CASES, ids=[c for c, _ in CASES])
def test_the_users_mistake_is_reported_at_the_users_line(case, fragment):
    err = build_error(case)
    assert (err.filename, err.lineno) == (str(THIS_FILE), line_of(f"# MARK: {case}")), str(err)
    assert fragment in err.message, (fragment, err.message)
    assert "internal error" not in err.message
    assert "-2147483648" not in err.message.split("got")[-1], "a wrapped value"


def test_every_case_is_tested():
    source = THIS_FILE.read_text()
    body = source[source.index("def misuse(") : source.index("CASES = [")]
    cases = {
        line.split('"')[1]
        for line in body.splitlines()
        if line.strip().startswith(("if CASE ==", "elif CASE =="))
    }
    assert cases == {c for c, _ in CASES}


def test_the_users_exception_stays_chained():
    err = build_error("worker-raises")
    assert isinstance(err.__cause__, KeyError)
    assert err.__cause__.args == ("the user's own bug",)


def _library_failure(*args, **kwargs):
    raise RuntimeError("a failure below the front end")


def test_a_failure_inside_the_front_end_is_still_internal(monkeypatch):
    # A function the front end calls itself (not a user function it traces)
    # raising is the front end's failure, reported as internal at the tl.* call.
    monkeypatch.setattr(ops, "AsyncWmmaWaitOp", _library_failure)
    with pytest.raises(tl.CompilationError) as info:
        _mma_wait_ok.build_ir(num_warps=4)
    err = info.value
    assert "internal error in the front end: RuntimeError" in err.message, err.message
    assert err.lineno == line_of("# MARK: mma-wait-ok")


@tl.kernel
def _mma_wait_ok():
    tl.async_wmma_wait(tl.zeros([32, 32], tl.float32, ACC), 1)  # MARK: mma-wait-ok


def test_in_range_values_still_build():
    text = _mma_wait_ok.build_ir(num_warps=4)
    assert "num = 1 : i32" in text
