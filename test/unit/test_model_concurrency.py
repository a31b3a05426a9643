"""Concurrent programs in the executable model (``gemm_opt.model.concurrency``).

The kernels of ``data/model_concurrency.mlir`` talk to each other through
global memory: a stream-K style linear fix-up (flags with release/acquire),
a reverse chain of flags (needs every program resident), a work-distributing
counter that the last program out resets, and atomic block sums. Each must
give the same result under many interleavings; each broken variant (a
release or acquire made relaxed, a signal or a counter reset removed) must
be reported or must fail a check. Variants are made with the IR bindings.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import support.sync_ops  # noqa: F401  (registers the sync ops before any context)

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context
from gemm_opt.model.interpreter import Interpreter, ModelError, RunResult

DATA = Path(__file__).resolve().parent / "data" / "model_concurrency.mlir"
LINES = DATA.read_text().splitlines()
ARGS = {
    "linear_fixup": ("x", "partials", "flags", "out"),
    "reverse_chain": ("flags",),
    "claim_items": ("sync", "hits", "owner", "items"),
    "atomic_sum_f32": ("x", "out"),
    "atomic_sum_f16": ("x", "out"),
    "unsynchronized": ("x", "out", "res", "stride", "read"),
    "plain_spin": ("flag", "who"),
    "plain_spin_concurrent": ("flag", "who"),
    "plain_spin_rewrite": ("flag", "out"),
    "plain_drain": ("out",),
    "grid_dims": ("out",),
    "bump": ("flags", "at"),
    "copy_scalar": ("flags", "from", "at"),
    "wait_any": ("flags",),
}
SLOT = 64  # i32 elements between two flags or counters
SEEDS = list(range(50))


def _load() -> ir.Module:
    """A fresh parse of the kernels (tests edit their copy)."""
    with make_context():
        return ir.Module.parseFile(str(DATA))


def _lines(fragment: str) -> list[int]:
    """The 1-based lines of the kernel file that hold ``fragment``."""
    return [i + 1 for i, text in enumerate(LINES) if fragment in text]


def _line(fragment: str) -> int:
    """The 1-based line of the kernel file that holds ``fragment`` (once)."""
    hits = _lines(fragment)
    assert len(hits) == 1, (fragment, hits)
    return hits[0]


def _func(module: ir.Module, name: str) -> ir.Operation:
    for op in module.body.operations:
        if ir.StringAttr(op.operation.attributes["sym_name"]).value == name:
            return op.operation
    raise AssertionError(f"no @{name}")


def _walk(op: ir.Operation) -> Iterator[ir.Operation]:
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner.operation
                yield from _walk(inner.operation)


def _str(op: ir.Operation, name: str) -> str:
    return ir.StringAttr(op.attributes[name]).value


def _atomics(module: ir.Module, func: str, **attrs: str) -> list[ir.Operation]:
    """The ``tile.atomic_rmw`` ops of ``func`` whose attributes match ``attrs``."""
    return [
        op
        for op in _walk(_func(module, func))
        if op.name == "tile.atomic_rmw" and all(_str(op, k) == v for k, v in attrs.items())
    ]


def _set_sem(op: ir.Operation, sem: str) -> None:
    with op.context:
        op.attributes["sem"] = ir.StringAttr.get(sem)


def _run(module: ir.Module, func: str, args: list, grid: int, **kw) -> RunResult:
    interp = Interpreter(module, func, arg_names=ARGS[func])
    return interp.run(args, (grid, 1, 1), **kw)


# ---------------------------------------------------------------------------
# Linear fix-up: partials handed over through release/acquire flags
# ---------------------------------------------------------------------------


def _fixup_args(n: int) -> tuple[list, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n * 16, 16)).astype(np.float32)
    out = np.full((16, 16), np.nan, dtype=np.float32)
    args = [x, np.zeros_like(x), np.zeros(n * SLOT, dtype=np.int32), out]
    ref = x[:16].copy()
    for j in range(1, n):  # the owner's order: program 0, then 1, 2, ...
        ref = ref + x[16 * j : 16 * j + 16]
    return args, out, ref


@pytest.mark.parametrize("seed", [None, *SEEDS])
def test_linear_fixup_hands_partials_over_under_many_interleavings(seed):
    n = 6  # more programs than the 4 resident slots
    module = _load()
    args, out, ref = _fixup_args(n)
    r = _run(module, "linear_fixup", args, n, seed=seed)
    np.testing.assert_array_equal(out, ref)  # fixed summation order: bitwise
    assert r.seed == seed and r.sync.seed == seed
    assert r.sync.concurrent and r.sync.num_resident == 4 and r.sync.max_resident == 4
    assert r.sync.atomic_rmw["xchg"] == n - 1
    assert r.sync.atomic_rmw_sem["release"] == n - 1
    assert sorted(r.sync.finish_order) == sorted(r.sync.start_order)


def test_linear_fixup_waits_in_program_order_without_a_seed():
    n = 4
    args, _, _ = _fixup_args(n)
    r = _run(_load(), "linear_fixup", args, n)
    # Program 0 reads flag 1 (unset); its next read would see the same value,
    # so it waits instead; program 1 runs to its end, program 0 reads the set
    # flag, and so on: two reads and one wait per producer.
    assert r.sync.waits == n - 1
    assert r.sync.finish_order == [(1, 0, 0), (2, 0, 0), (3, 0, 0), (0, 0, 0)]
    assert r.sync.atomic_rmw == {"add": 2 * (n - 1), "xchg": n - 1}


@pytest.mark.parametrize("seed", [None, 0, 1, 2, 3])
@pytest.mark.parametrize("kind", ["xchg", "add"], ids=["release-relaxed", "acquire-relaxed"])
def test_a_relaxed_signal_or_wait_is_a_partial_read_before_its_release(kind, seed):
    module = _load()
    (op,) = _atomics(module, "linear_fixup", kind=kind)
    _set_sem(op, "relaxed")
    args, _, _ = _fixup_args(4)
    with pytest.raises(ModelError) as e:
        _run(module, "linear_fixup", args, 4, seed=seed)
    msg = str(e.value)
    load = _line('%p = "tile.load_block"(%partials')
    store = _line('"tile.store_block"(%partials')
    assert "partial read before its release" in msg
    assert msg.startswith(f"'tile.load_block' at {DATA}:{load}:")
    assert f"'tile.store_block' at {DATA}:{store}:" in msg
    assert "program (0, 0, 0) reads 'partials'[" in msg
    assert "that program (1, 0, 0) wrote" in msg


def test_every_ordering_atomic_of_the_fixup_is_needed():
    """Mutation check: make any one release or acquire relaxed and a run fails."""
    ordering = [
        i for i, op in enumerate(_atomics(_load(), "linear_fixup")) if _str(op, "sem") != "relaxed"
    ]
    assert len(ordering) == 2  # the producer's release, the owner's acquire
    for i in ordering:
        module = _load()
        _set_sem(_atomics(module, "linear_fixup")[i], "relaxed")
        for seed in (None, 0, 1):
            args, _, _ = _fixup_args(3)
            with pytest.raises(ModelError, match="partial read before its release"):
                _run(module, "linear_fixup", args, 3, seed=seed)


@pytest.mark.parametrize("seed", [None, 0, 5])
def test_a_flag_nobody_sets_is_a_deadlock_naming_program_and_flag(seed):
    module = _load()
    (signal,) = _atomics(module, "linear_fixup", kind="xchg")
    signal.erase()
    args, _, _ = _fixup_args(3)
    with pytest.raises(ModelError) as e:
        _run(module, "linear_fixup", args, 3, seed=seed)
    msg = str(e.value)
    wait = _line('%old = "tile.atomic_rmw"(%flags, %slot, %c0)')
    assert msg.startswith("deadlock: every resident program waits on a flag")
    assert f"program (0, 0, 0) at 'tile.atomic_rmw' at {DATA}:{wait}:" in msg
    assert f"waits for 'flags'[{SLOT}] (argument 'flags', element {SLOT}) to change from 0" in msg
    assert "; 2 program(s) finished" in msg


@pytest.mark.parametrize("seed", [None, *range(10)])
def test_a_wait_for_either_of_two_flags_ends_when_one_is_set(seed):
    """Program 0 polls flag 1 and flag 2 in turn; only flag 2 is ever set.
    Its wait on flag 1 must end when flag 2 changes (not a deadlock)."""
    flags = np.zeros(3 * SLOT, dtype=np.int32)
    r = _run(_load(), "wait_any", [flags], 3, seed=seed)
    assert r.returns and flags[2 * SLOT] == 1 and flags[SLOT] == 0
    if seed is None:
        assert r.sync.waits == 1 and r.sync.finish_order[-1] == (0, 0, 0)


# ---------------------------------------------------------------------------
# Residency: a wait on a program that is not resident never ends
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [None, 0, 1, 2])
def test_reverse_chain_completes_when_every_program_is_resident(seed):
    flags = np.zeros(6 * SLOT, dtype=np.int32)
    r = _run(_load(), "reverse_chain", [flags], 6, num_resident=6, seed=seed)
    assert r.sync.finish_order == [(i, 0, 0) for i in reversed(range(6))]
    np.testing.assert_array_equal(flags[::SLOT], np.ones(6, dtype=np.int32))


@pytest.mark.parametrize("seed", [None, 0, 1])
def test_reverse_chain_deadlocks_with_fewer_resident_slots(seed):
    flags = np.zeros(6 * SLOT, dtype=np.int32)
    with pytest.raises(ModelError) as e:
        _run(_load(), "reverse_chain", [flags], 6, num_resident=2, seed=seed)
    msg = str(e.value)
    assert "program (0, 0, 0)" in msg and f"'flags'[{SLOT}]" in msg
    assert "program (1, 0, 0)" in msg and f"'flags'[{2 * SLOT}]" in msg
    assert "4 not started: all 2 resident slots are held by waiting programs" in msg


# ---------------------------------------------------------------------------
# Work distribution through an atomic counter, reset by the last program out
# ---------------------------------------------------------------------------


def _claim(module: ir.Module, sync: np.ndarray, items: int, grid: int, **kw):
    hits = np.zeros(items, dtype=np.int32)
    owner = np.full((items, 16), -1, dtype=np.int32)
    r = _run(module, "claim_items", [sync, hits, owner, items], grid, **kw)
    return hits, owner, r


@pytest.mark.parametrize("seed", [None, *range(40)])
def test_counter_claims_cover_every_item_exactly_once(seed):
    items, grid = 37, 5
    sync = np.zeros(2 * SLOT, dtype=np.int32)
    hits, owner, r = _claim(_load(), sync, items, grid, num_resident=3, seed=seed)
    np.testing.assert_array_equal(hits, np.ones(items, dtype=np.int32))
    assert (owner == owner[:, :1]).all() and set(owner[:, 0]) <= set(range(grid))
    # One failing claim per program: nobody grabs once the items are gone.
    assert r.sync.atomic_rmw["add"] == items + (items + grid) + grid
    assert r.sync.atomic_rmw["xchg"] == 2
    np.testing.assert_array_equal(sync, np.zeros_like(sync))  # reset for the next launch
    assert r.sync.max_resident == 3 and len(r.sync.start_order) == grid


def test_more_programs_than_resident_slots_start_as_slots_free():
    items, grid = 23, 10
    sync = np.zeros(2 * SLOT, dtype=np.int32)
    hits, _, r = _claim(_load(), sync, items, grid, num_resident=3, seed=11)
    np.testing.assert_array_equal(hits, np.ones(items, dtype=np.int32))
    assert r.sync.start_order == [(i, 0, 0) for i in range(grid)]
    assert r.sync.max_resident == 3
    # A program starts only after one of the earlier ones has finished.
    for k in range(3, grid):
        started_before = r.sync.start_order[:k]
        finished = r.sync.finish_order[: k - 2]
        assert set(finished) <= set(started_before)


def test_seed_none_runs_programs_in_order_and_repeats_itself():
    items, grid = 19, 4
    runs = []
    for _ in range(2):
        sync = np.zeros(2 * SLOT, dtype=np.int32)
        runs.append(_claim(_load(), sync, items, grid))
    (h0, o0, r0), (h1, o1, r1) = runs
    # Claims never wait, so program 0 runs to its end first and takes all.
    np.testing.assert_array_equal(h0, h1)
    np.testing.assert_array_equal(o0[:, 0], np.zeros(items, dtype=np.int32))
    np.testing.assert_array_equal(o0, o1)
    assert r0.sync == r1.sync and r0.sync.switches == 0
    assert r0.sync.finish_order == [(i, 0, 0) for i in range(grid)]


def test_a_seed_is_one_reproducible_interleaving():
    items, grid = 19, 4
    owners = {}
    for seed in (3, 3, 4):
        sync = np.zeros(2 * SLOT, dtype=np.int32)
        _, owner, r = _claim(_load(), sync, items, grid, seed=seed)
        if seed in owners:
            np.testing.assert_array_equal(owner, owners[seed])
        owners[seed] = owner
        assert r.sync.switches > 0
    assert len(set(owners[3][:, 0])) > 1  # programs really interleave
    assert not np.array_equal(owners[3], owners[4])


def test_the_last_program_resets_the_counters_for_the_next_launch():
    items, grid = 16, 4
    sync = np.zeros(2 * SLOT, dtype=np.int32)
    for seed in (None, 1, 2):  # three launches on one workspace
        hits, _, _ = _claim(_load(), sync, items, grid, seed=seed)
        np.testing.assert_array_equal(hits, np.ones(items, dtype=np.int32))


@pytest.mark.parametrize("slot", [0, SLOT], ids=["tile-counter", "done-counter"])
def test_removing_a_counter_reset_breaks_the_next_launch(slot):
    """Mutation check: without either reset the second launch is wrong."""
    module = _load()
    resets = _atomics(module, "claim_items", kind="xchg")
    assert len(resets) == 2
    (reset,) = [op for op in resets if _reset_slot(op) == slot]
    reset.erase()
    items, grid = 16, 4
    sync = np.zeros(2 * SLOT, dtype=np.int32)
    first, _, _ = _claim(module, sync, items, grid, seed=1)
    np.testing.assert_array_equal(first, np.ones(items, dtype=np.int32))
    second, _, _ = _claim(module, sync, items, grid, seed=1)
    if slot == 0:  # a stale tile counter hands out nothing
        assert not second.any()
    else:  # a stale done counter: nobody is last, the tile counter stays stale
        np.testing.assert_array_equal(second, np.ones(items, dtype=np.int32))
        third, _, _ = _claim(module, sync, items, grid, seed=1)
        assert not third.any()


def _reset_slot(op: ir.Operation) -> int:
    """The constant index of a reset ``atomic_rmw`` (its index operand)."""
    const = op.operands[1].owner
    return ir.IntegerAttr(const.attributes["value"]).value


# ---------------------------------------------------------------------------
# Atomic block adds
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [None, *range(10)])
def test_atomic_add_block_sums_every_program(seed):
    n = 5
    rng = np.random.default_rng(7)
    x = (rng.integers(-64, 65, size=(n * 16, 16)) / 8).astype(np.float32)  # exact sums
    out = np.zeros((16, 16), dtype=np.float32)
    r = _run(_load(), "atomic_sum_f32", [x, out], n, seed=seed)
    np.testing.assert_array_equal(out, x.reshape(n, 16, 16).sum(axis=0))
    assert r.sync.atomic_add_block == n and r.sync.atomics == n


def test_atomic_add_block_rounds_each_add_to_the_element_type():
    n = 4
    x = np.ones((n * 16, 16), dtype=np.float16)
    out = np.full((16, 16), 2048, dtype=np.float16)  # f16 spacing is 2 here
    _run(_load(), "atomic_sum_f16", [x, out], n)
    # 2048 + 1 rounds (to even) back to 2048 at every add; one rounding of
    # the fp32 total would give 2052.
    np.testing.assert_array_equal(out, np.full((16, 16), 2048, dtype=np.float16))


# ---------------------------------------------------------------------------
# Races without any atomic (programs run in order in the caller's thread)
# ---------------------------------------------------------------------------


def _unsync(stride: int, read: int, seed: int | None = None) -> RunResult:
    n = 3
    x = np.arange(n * 256, dtype=np.float32).reshape(n * 16, 16)
    out = np.zeros_like(x)
    res = np.zeros_like(x)
    return _run(_load(), "unsynchronized", [x, out, res, stride, read], n, seed=seed)


def test_disjoint_plain_stores_do_not_race():
    r = _unsync(16, 0)
    assert not r.sync.concurrent and r.sync.atomics == 0


@pytest.mark.parametrize("seed", [None, 4])
def test_plain_stores_to_one_tile_race(seed):
    store = _line('"tile.store_block"(%out, %rows, %c16, %ld, %one, %orow')
    with pytest.raises(ModelError) as e:
        _unsync(0, 0, seed)
    msg = str(e.value)
    assert msg.startswith(f"'tile.store_block' at {DATA}:{store}:")
    assert "write racing a write of another program: program (1, 0, 0) writes 'out'[" in msg
    assert f"that program (0, 0, 0) wrote at 'tile.store_block' at {DATA}:{store}:" in msg


def test_reading_another_programs_tile_without_a_flag_races():
    load = _line('%w = "tile.load_block"(%out')
    with pytest.raises(ModelError) as e:
        _unsync(16, 1)
    msg = str(e.value)
    # Program 0 reads program 1's rows before program 1 writes them.
    assert "write racing a read of another program: program (1, 0, 0)" in msg
    assert f"program (0, 0, 0) read at 'tile.load_block' at {DATA}:{load}:" in msg


# ---------------------------------------------------------------------------
# Misuse
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"num_resident": 0}, "num_resident must be at least 1"),
        ({"num_resident": 2.5}, "num_resident must be an int"),
        ({"seed": "1"}, "seed must be an int or None"),
    ],
)
def test_bad_scheduling_arguments(kw, match):
    args, _, _ = _fixup_args(2)
    with pytest.raises(ModelError, match=match):
        _run(_load(), "linear_fixup", args, 2, **kw)


def test_a_spin_on_a_plain_load_is_a_race_once_the_flag_is_stored():
    """Without atomics programs run in order: program 0 stores the flag with a
    plain store, program 1's plain load of it is not ordered after that."""
    flag = np.zeros(16, dtype=np.int32)
    load = _lines('%f = "tile.load_block"(%flag')[0]
    with pytest.raises(ModelError) as e:
        _run(_load(), "plain_spin", [flag, 0], 2)
    msg = str(e.value)
    assert msg.startswith(f"'tile.load_block' at {DATA}:{load}:")
    assert "partial read before its release: program (1, 0, 0) reads 'flag'[0]" in msg


@pytest.mark.parametrize("grid", [1, 2])
def test_a_spin_that_cannot_end_is_reported_not_hung(grid):
    flag = np.zeros(16, dtype=np.int32)
    loop = _lines("%done = scf.while (%s = %c0)")[0]
    with pytest.raises(ModelError) as e:
        _run(_load(), "plain_spin", [flag, grid], grid)  # nobody sets the flag
    msg = str(e.value)
    assert msg.startswith("deadlock:")
    assert f"program (0, 0, 0) at 'scf.while' at {DATA}:{loop}:" in msg
    assert "repeats a loop iteration with the same values and no atomic or global write" in msg


def test_a_spin_that_rewrites_the_same_values_is_reported_not_hung():
    """A store that leaves memory as it was is no progress: the loop's second
    pass repeats its first with nothing changed, so the spin is reported."""
    flag = np.zeros(16, dtype=np.int32)
    out = np.full(16, 5, dtype=np.int32)  # the first pass's store does change it
    loop = _line("%spin = scf.while (%s = %c0)")
    with pytest.raises(ModelError) as e:
        _run(_load(), "plain_spin_rewrite", [flag, out], 1)
    msg = str(e.value)
    assert msg.startswith("deadlock:")
    assert f"program (0, 0, 0) at 'scf.while' at {DATA}:{loop}:" in msg
    assert not out.any()


def test_a_store_that_changes_memory_is_progress_of_a_spin() -> None:
    """The drain loop's second pass starts as its first did; only the first
    pass's store (5 -> 0) makes it differ, and the loop then ends."""
    out = np.full(16, 5, dtype=np.int32)
    _run(_load(), "plain_drain", [out], 1)
    assert not out.any()


@pytest.mark.parametrize("seed", [None, 0, 1, 2, 3])
def test_a_concurrent_spin_on_a_plain_load_waits_for_a_write_then_races(seed):
    """Program 1 (or 0) may spin before the flag is stored: it waits for any
    write of another program instead of hanging; its read then races."""
    flag = np.zeros(128, dtype=np.int32)
    load = _lines('%f = "tile.load_block"(%flag')[1]
    with pytest.raises(ModelError) as e:
        _run(_load(), "plain_spin_concurrent", [flag, 1], 2, seed=seed)
    msg = str(e.value)
    # Which access comes second decides which one is reported.
    read_second = "partial read before its release: program (0, 0, 0) reads 'flag'[0]"
    write_second = "write racing a read of another program: program (1, 0, 0) writes 'flag'[0]"
    if msg.startswith(f"'tile.load_block' at {DATA}:{load}:"):
        assert read_second in msg
    else:
        assert write_second in msg
        assert f"program (0, 0, 0) read at 'tile.load_block' at {DATA}:{load}:" in msg
    if seed is None:  # program order: 0 spins first, so 1's store comes second
        assert write_second in msg


def test_a_concurrent_spin_nobody_ends_is_a_deadlock():
    flag = np.zeros(128, dtype=np.int32)
    with pytest.raises(ModelError, match=r"^deadlock:") as e:
        _run(_load(), "plain_spin_concurrent", [flag, 7], 2, seed=0)
    assert "program (0, 0, 0) at 'scf.while'" in str(e.value)
    assert "program (1, 0, 0) at 'scf.while'" in str(e.value)


def test_num_programs_reads_each_axis_of_the_grid() -> None:
    out = np.zeros(3, dtype=np.int32)
    interp = Interpreter(_load(), "grid_dims", arg_names=ARGS["grid_dims"])
    interp.run([out], (2, 3, 4))
    assert out.tolist() == [2, 3, 4]


@pytest.mark.parametrize("at", [0, 7])
def test_an_atomic_reaches_both_ends_of_its_array(at: int) -> None:
    flags = np.zeros(8, dtype=np.int32)
    _run(_load(), "bump", [flags, at], 1)
    assert flags.tolist() == [int(i == at) for i in range(8)]


@pytest.mark.parametrize("at", [-1, 8])
def test_an_atomic_past_either_end_is_refused(at: int) -> None:
    bump = _line('%old = "tile.atomic_rmw"(%flags, %at, %c1)')
    with pytest.raises(ModelError) as e:
        _run(_load(), "bump", [np.zeros(8, dtype=np.int32), at], 1)
    msg = str(e.value)
    assert f"'tile.atomic_rmw' at {DATA}:{bump}:" in msg
    assert f"atomic on 'flags'[{at}] outside its 8-element array" in msg


@pytest.mark.parametrize(("src", "dst"), [(0, 7), (7, 0)])
def test_a_scalar_load_reaches_both_ends_of_its_array(src: int, dst: int) -> None:
    flags = np.arange(8, dtype=np.int32) + 1
    _run(_load(), "copy_scalar", [flags, src, dst], 1)
    assert flags[dst] == dst + 1 + src + 1


@pytest.mark.parametrize("src", [-1, 8])
def test_a_scalar_load_past_either_end_is_refused(src: int) -> None:
    with pytest.raises(ModelError, match=rf"load of 'flags'\[{src}\] outside its 8-element array"):
        _run(_load(), "copy_scalar", [np.zeros(8, dtype=np.int32), src, 0], 1)
