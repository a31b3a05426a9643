"""The model's value layer at its edges (found by ``benchmarks/mutation.py`` in
``gemm_opt.model.values``).

Integer wrapping is checked exhaustively at small widths and at the edges of
the wide ones against Python's integers; bf16 rounding against ``ml_dtypes``
on random and boundary bit patterns; each MLIR element type against its
storage; the statistics of a run against events written by hand.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context
from gemm_opt.model.concurrency import SyncStats
from gemm_opt.model.errors import ModelError
from gemm_opt.model.values import (
    CopyEvent,
    InFlight,
    RunResult,
    SharedBuffer,
    SharedView,
    Stats,
    bf16_round,
    elem_of,
    from_storage,
    round_to,
    to_storage,
    unsigned_bits,
    wrap_bits,
    wrap_int,
)

WIDTHS = (1, 2, 3, 8, 16, 32, 63, 64)


def _signed(v: int, width: int) -> int:
    v %= 1 << width
    return v - (1 << width) if v >= 1 << (width - 1) else v


def _samples(width: int) -> list[int]:
    """Every value of small widths; the edges of the wide ones (in int64)."""
    if width <= 8:
        return list(range(-(1 << width) - 2, (1 << width) + 3))
    edges = [0, 1, 2, (1 << (width - 1)) - 1, 1 << (width - 1), (1 << width) - 1]
    out = {e + d for e in edges for d in (-1, 0, 1)} | {-e for e in edges}
    return sorted(v for v in out if -(1 << 63) <= v < 1 << 63)


@pytest.mark.parametrize("width", WIDTHS)
def test_wrap_bits_sign_extends_the_low_bits(width: int) -> None:
    xs = _samples(width)
    got = wrap_bits(np.array(xs, dtype=np.int64), width)
    assert got.dtype == np.int64
    assert got.tolist() == [_signed(x, width) for x in xs]
    assert [wrap_int(x, width) for x in xs] == [_signed(x, width) for x in xs]


@pytest.mark.parametrize("width", WIDTHS)
def test_unsigned_bits_are_the_low_bits(width: int) -> None:
    xs = _samples(width)
    got = unsigned_bits(np.array(xs, dtype=np.int64), width)
    assert got.dtype == np.uint64
    assert got.tolist() == [x % (1 << width) for x in xs]


def test_wrap_bits_reads_uint64_as_its_bits() -> None:
    u = np.array([2**64 - 1, 2**63, 5], dtype=np.uint64)
    assert wrap_bits(u, 64).tolist() == [-1, -(2**63), 5]
    assert wrap_bits(u, 8).tolist() == [-1, 0, 5]


def _bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def test_bf16_round_is_nearest_even() -> None:
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32)
    # Halfway cases, both parities, and the largest finite values (they round to inf).
    ties = np.array([0x3F808000, 0x3F818000, 0x3F807FFF, 0x3F808001, 0x7F7FFFFF, 0xFF7F8000])
    bits = np.concatenate([bits, ties.astype(np.uint32)])
    x = bits.view(np.float32)
    finite = ~np.isnan(x)
    want = x[finite].astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(_bits(bf16_round(x)[finite]), _bits(want))


def test_bf16_round_keeps_nan_quiet_and_its_sign() -> None:
    x = np.array([0x7F800001, 0xFF800001, 0x7FC00000, 0x7F80FFFF], dtype=np.uint32)
    out = _bits(bf16_round(x.view(np.float32)))
    assert [hex(b) for b in out] == ["0x7fc00000", "0xffc00000", "0x7fc00000", "0x7fc00000"]


def test_bf16_round_keeps_the_shape() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 3
    assert bf16_round(x).shape == (2, 3)


TYPES = [
    ("i1", "i1", True, 1, np.int64, np.bool_),
    ("i8", "i8", True, 8, np.int64, np.int8),
    ("i16", "i16", True, 16, np.int64, np.int16),
    ("i32", "i32", True, 32, np.int64, np.int32),
    ("i64", "i64", True, 64, np.int64, np.int64),
    ("i4", "i4", True, 4, np.int64, np.int64),
    ("index", "index", True, 64, np.int64, np.int64),
    ("f16", "f16", False, 16, np.float16, np.float16),
    ("bf16", "bf16", False, 16, np.float32, np.float32),
    ("f32", "f32", False, 32, np.float32, np.float32),
    ("f64", "f64", False, 64, np.float64, np.float64),
    ("f8E4M3FN", "f8E4M3FN", False, 8, np.float32, np.uint8),
    ("f8E5M2", "f8E5M2", False, 8, np.float32, np.uint8),
]


@pytest.mark.parametrize(("text", "name", "is_int", "width", "dtype", "storage"), TYPES)
def test_element_types(text, name, is_int, width, dtype, storage) -> None:
    with make_context():
        e = elem_of(ir.Type.parse(text))
    assert e is not None
    assert (e.name, e.is_int, e.width) == (name, is_int, width)
    assert (e.dtype, e.storage) == (np.dtype(dtype), np.dtype(storage))
    assert e.bf16 == (text == "bf16")
    assert (e.fp8 is not None) == text.startswith("f8")


def test_a_non_numeric_type_has_no_element() -> None:
    with make_context():
        assert elem_of(ir.Type.parse("tensor<4xf32>")) is None


def _elem(text: str):
    with make_context():
        return elem_of(ir.Type.parse(text))


@pytest.mark.parametrize("width", [8, 16, 32])
def test_integers_round_trip_through_storage(width: int) -> None:
    e = _elem(f"i{width}")
    xs = np.array(_samples(width), dtype=np.int64)
    stored = to_storage(xs, e)
    assert stored.dtype == e.storage
    np.testing.assert_array_equal(from_storage(stored, e), wrap_bits(xs, width))


def test_i1_stores_the_low_bit() -> None:
    e = _elem("i1")
    stored = to_storage(np.array([0, -1, 2, 3]), e)
    assert stored.tolist() == [False, True, False, True]
    assert from_storage(stored, e).tolist() == [0, -1, 0, -1]


def test_floats_and_fp8_through_storage() -> None:
    f16, f8 = _elem("f16"), _elem("f8E4M3FN")
    x = np.array([1.5, -2.25, 65504.0], dtype=np.float32)
    assert to_storage(x, f16).dtype == np.float16
    np.testing.assert_array_equal(from_storage(to_storage(x, f16), f16), x.astype(np.float16))
    codes = to_storage(np.array([1.0, -0.5, 448.0]), f8)
    assert codes.dtype == np.uint8 and codes.tolist() == [0x38, 0xB0, 0x7E]
    assert from_storage(codes, f8).tolist() == [1.0, -0.5, 448.0]


def test_a_new_buffer_is_unwritten() -> None:
    ints = SharedBuffer("a", (2, 3), _elem("i32"))
    floats = SharedBuffer("b", (2, 3), _elem("f16"))
    assert (ints.data == 0).all() and ints.data.dtype == np.int32
    assert np.isnan(floats.data).all() and floats.data.dtype == np.float16
    for buf in (ints, floats):
        for counts in (buf.pending, buf.mma_reading, buf.store_reading):
            assert counts.shape == (2, 3) and not counts.any()
        assert not buf.written.any()


def test_a_view_reads_its_slot_permuted() -> None:
    buf = SharedBuffer("a", (2, 2, 3), _elem("i32"))
    buf.data[:] = np.arange(12).reshape(2, 2, 3)
    plain = SharedView(buf, np.zeros((1, 1), np.int64))
    trans = SharedView(buf, np.zeros((1, 1), np.int64), perm=(1, 0))
    np.testing.assert_array_equal(plain.read((1,)), [[6, 7, 8], [9, 10, 11]])
    np.testing.assert_array_equal(trans.read((1,)), [[6, 9], [7, 10], [8, 11]])
    plain.writable("here")
    with pytest.raises(ModelError, match="here: writes through a transposed view"):
        trans.writable("here")


def test_an_instruction_lands_before_its_completion_runs() -> None:
    buf = SharedBuffer("a", (4,), _elem("i32"))
    index = (slice(1, 3),)
    buf.pending[index] += 1
    seen = []
    rec = InFlight("op", 0, (0, 0, 0), buf, index, np.array([7, 8], np.int32))
    rec.on_complete = lambda: seen.append((buf.data.tolist(), buf.pending.tolist()))
    rec.complete()
    assert seen == [([0, 7, 8, 0], [0, 0, 0, 0])]
    assert buf.written.tolist() == [False, True, True, False]
    assert rec.on_complete is None and rec.data is None
    InFlight("op", 1, (0, 0, 0)).complete()  # an inactive warp's: writes nothing


def _event(program, warp, tensor, buffer, active, elements) -> CopyEvent:
    return CopyEvent("op", program, warp, 0, tensor, buffer, active, (0,), (4,), elements)


def test_statistics_filter_and_sum_per_warp() -> None:
    p0, p1 = (0, 0, 0), (1, 0, 0)
    stats = Stats(3)
    stats.events += [
        _event(p0, 0, "a", "x", True, 8),
        _event(p0, 0, "b", "y", False, 0),
        _event(p0, 2, "a", "y", True, 4),
        _event(p1, 2, "b", "x", True, 2),
    ]
    assert stats.max_in_flight.tolist() == [0, 0, 0]
    assert stats.instructions().tolist() == [2, 0, 2]
    assert stats.instructions(p1).tolist() == [0, 0, 1]
    assert stats.active_instructions().tolist() == [1, 0, 2]
    assert stats.active_instructions(p0).tolist() == [1, 0, 1]
    assert stats.elements_written().tolist() == [8, 0, 6]
    assert stats.elements_written("a").tolist() == [8, 0, 4]
    assert stats.elements_written(buffer="y").tolist() == [0, 0, 4]
    assert stats.elements_written("b", "x", p1).tolist() == [0, 0, 2]
    assert stats.writers("a") == (0, 2) and stats.writers("b") == (2,)


def test_round_to_rounds_to_the_register_type_once() -> None:
    x = np.array([1 + 2**-10, 1 + 2**-9 + 2**-10, 300.0, -7.3], dtype=np.float64)
    np.testing.assert_array_equal(round_to(x, _elem("f32")), x.astype(np.float32))
    np.testing.assert_array_equal(round_to(x, _elem("f16")), x.astype(np.float16))
    bf = round_to(x, _elem("bf16"))
    assert bf.dtype == np.float32
    np.testing.assert_array_equal(bf, x.astype(ml_dtypes.bfloat16).astype(np.float32))
    np.testing.assert_array_equal(
        round_to(x, _elem("f8E4M3FN")), x.astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    )


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8, np.bool_])
def test_wrap_bits_takes_narrow_arrays_by_value(dtype) -> None:
    x = np.array([0, 1, 1, 0, 1, 0, 1, 1], dtype=dtype)
    assert wrap_bits(x, 8).tolist() == x.astype(np.int64).tolist()
    assert wrap_bits(np.array([-128, 127], dtype=np.int8), 4).tolist() == [0, -1]


def test_a_run_result_names_its_seed_and_arguments() -> None:
    args = {"c": np.zeros(2)}
    plain = RunResult(args, Stats(1), {}, (1, 1, 1))
    seeded = RunResult(args, Stats(1), {}, (1, 1, 1), SyncStats(7, 2))
    assert plain.seed is None and seeded.seed == 7
    assert plain["c"] is args["c"]


@pytest.mark.parametrize("width", [1, 2, 8, 32])
def test_wrap_int_at_the_edges(width: int) -> None:
    for v in (-(1 << width), -(1 << (width - 1)) - 1, -1, 0, 1, (1 << width) + 1, 3 << width):
        assert wrap_int(v, width) == _signed(v, width)
