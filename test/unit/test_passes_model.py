"""The TDM passes checked against the copy model.

* ``tile-emit-warp-predicates``: for every legal hint of 1 to 16 warps, the
  emitted ``arith`` chain, evaluated per warp, selects exactly the warps the
  copy model lets write (the hint's warps; the placed warps without a hint).
* ``tile-derive-warp-hints``: a derived hint never changes what a copy writes.
* ``tile-fuse-tdm-copies``: each fused member writes what its copy wrote, and
  the rewritten waits still wait for every copy the program waited for
  (random straight-line and loop programs, replayed as instruction traces).
* The whole chain on the example GEMM, run by the IR interpreter: same C, half
  the TDM instructions.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from support import tile_build as tb
from support.tile_build import ops_named

from gemm_opt import dialect
from gemm_opt.core.ext_compat import arith, ir
from gemm_opt.core.layouts import PaddedShared
from gemm_opt.core.pipeline import Registry, build_pass_manager
from gemm_opt.core.tdm_layout import tdm_warp_layout
from gemm_opt.core.warp_hint import WarpHintError, check_warp_used_hint, legal_hints
from gemm_opt.dialect import tile
from gemm_opt.dialect.edit import without_hints
from gemm_opt.model.copy import copy_writes, simulate_fused_copy, simulate_tdm_copy, write_counts
from gemm_opt.passes import PASSES

ROOT = Path(__file__).resolve().parents[2]
COPY = "tile.async_tdm_copy_global_to_local"
FUSED = "tile.async_tdm_fused_copy_global_to_local"
WAIT = "tile.async_tdm_wait"

# Row-major padded layouts of any rank (TDM writes rows linearly).
PY_LAYOUT_2D = PaddedShared(64, 8, (1, 0))
PY_LAYOUT_3D = PaddedShared(64, 8, (2, 1, 0))


@pytest.fixture
def ctx():
    c = dialect.make_context()
    with c, ir.Location.unknown():
        yield c


def run_pipeline(ctx: ir.Context, module: ir.Module | str, passes: str) -> ir.Module:
    """``module`` (built, or the text of an example) after ``passes``."""
    if isinstance(module, str):
        module = ir.Module.parse(module, context=ctx)
    pm = build_pass_manager(f"builtin.module({passes})", Registry(passes=PASSES))
    pm.run(module.operation)  # verifies the module after each pass
    return module


def block(shape: tuple[int, ...], layout: PaddedShared = PY_LAYOUT_2D) -> ir.RankedTensorType:
    """An f16 block of ``shape`` in ``layout`` (the model's layout, as the dialect's attribute)."""
    attr = tile.PaddedSharedAttr.build(
        interval=layout.interval, amount=layout.amount, order=list(layout.order)
    )
    return tb.block_type(shape, ir.F16Type.get(), attr)


def copy_module(
    num_warps: int,
    shape: tuple[int, ...],
    layout: PaddedShared,
    copies: list[tuple[int | None, bool]],
) -> ir.Module:
    """``@f(%d, %b, %p: i1)`` with one copy of ``%d`` into ``%b`` per (hint, has-pred) pair."""
    b = block(shape, layout)
    k = tb.kernel(
        [tb.desc_type(b), tb.shared_type(b), ir.IntegerType.get_signless(1)],
        num_warps=num_warps,
        name="f",
    )
    desc, buf, pred = k.args
    with k.ip:
        for hint, with_pred in copies:
            tb.copy(desc, buf, hint=hint, pred=pred if with_pred else None)
    return k.module


# ---- a tiny evaluator for the predicate chain ------------------------------------


def eval_chain(value: ir.Value, num_warps: int, pred_arg: bool) -> np.ndarray:
    """Evaluate the ops ``tile-emit-warp-predicates`` emits, for every warp at once."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return np.full(num_warps, int(pred_arg))  # the function's i1 argument %p
    op = owner.operation
    args = [eval_chain(v, num_warps, pred_arg) for v in op.operands]
    if op.name == "tile.warp_id":
        return np.arange(num_warps)
    if op.name == "arith.constant":
        return np.full(num_warps, ir.IntegerAttr(op.attributes["value"]).value)
    if op.name == "arith.xori":
        return args[0] ^ args[1]
    if op.name == "arith.andi":
        return args[0] & args[1]
    if op.name == "arith.cmpi":
        assert ir.IntegerAttr(op.attributes["predicate"]).value == 0  # eq
        return (args[0] == args[1]).astype(np.int64)
    raise AssertionError(f"unexpected op in the predicate chain: {op.name}")


def selected_warps(copy: ir.Operation, num_warps: int, pred_arg: bool) -> set[int]:
    """Warps for which the copy's predicate holds (all warps when it has none)."""
    pred = copy.opview.pred
    if pred is None:
        return set(range(num_warps))
    return {int(w) for w in np.flatnonzero(eval_chain(pred, num_warps, pred_arg) & 1)}


SWEEP = [
    ((128, 64), PY_LAYOUT_2D),
    ((2, 4, 64), PY_LAYOUT_3D),
    ((4, 4), PY_LAYOUT_2D),
]


@pytest.mark.parametrize("num_warps", [1, 2, 4, 8, 16])
@pytest.mark.parametrize(("shape", "py_layout"), SWEEP)
def test_emit_predicates_select_the_model_warps(ctx, num_warps, shape, py_layout):
    hints: list[int | None] = [None]
    for h in legal_hints(num_warps):
        try:
            check_warp_used_hint(h, num_warps, shape, py_layout)
        except WarpHintError:
            continue  # block too small for K: rejected by the verifier
        hints.append(h)
    # Every hint bare; every third one also with a user predicate.
    copies = [(h, False) for h in hints] + [(h, True) for h in hints[::3]]
    module = copy_module(num_warps, shape, py_layout, copies)
    module = run_pipeline(ctx, module, "tile-assign-tdm-warp-layout,tile-emit-warp-predicates")
    ops = ops_named(module, COPY)
    assert len(ops) == len(copies)
    for op, (hint, with_pred) in zip(ops, copies, strict=True):
        layout_ = tdm_warp_layout(shape, num_warps, hint, py_layout)
        writers = {w for w, c in copy_writes(layout_).items() if len(c)}
        if hint is not None:
            assert writers == {w for w in range(num_warps) if hint >> w & 1}
        assert selected_warps(op, num_warps, pred_arg=True) == writers, hex(hint or 0)
        assert ("tile.warp_predicated" in op.attributes) == (layout_.free_mask != 0)
        if with_pred:
            assert selected_warps(op, num_warps, pred_arg=False) == set()


# ---- derived hints keep the data -------------------------------------------------


def run_module(shapes: list[tuple[int, int]], num_warps: int, hinted: dict[int, int]) -> ir.Module:
    """``@f(%d0, %b0, %d1, %b1, ...)``: copy i of ``%d<i>`` into ``%b<i>``, with
    ``hinted[i]`` if given."""
    types = []
    for shape in shapes:
        b = block(shape)
        types += [tb.desc_type(b), tb.shared_type(b)]
    k = tb.kernel(types, num_warps=num_warps, name="f")
    with k.ip:
        for i in range(len(shapes)):
            tb.copy(k.args[2 * i], k.args[2 * i + 1], hint=hinted.get(i))
    return k.module


def hint_of(op: ir.Operation) -> int | None:
    return op.opview.warp_used_hint


@pytest.mark.parametrize("num_warps", [2, 4, 8, 16])
@pytest.mark.parametrize(
    "shapes",
    [
        [(128, 64), (64, 128)],
        [(128, 64), (64, 128), (32, 64)],
        [(64, 64), (16, 128), (128, 16), (8, 8)],
        [(2, 2), (2, 2)],
    ],
)
def test_derived_hints_keep_the_data(ctx, num_warps, shapes):
    module = run_pipeline(ctx, run_module(shapes, num_warps, {}), "tile-derive-warp-hints")
    copies = ops_named(module, COPY)
    rng = np.random.default_rng(len(shapes) * 100 + num_warps)
    derived = 0
    for op, shape in zip(copies, shapes, strict=True):
        hint = hint_of(op)
        derived += hint is not None
        # A ragged global tensor: the copy reads past its end (zero fill).
        g = rng.standard_normal((shape[0] * 2, shape[1] * 2)).astype(np.float32)
        offsets, bounds = (shape[0] // 2, 3), (shape[0] + 1, shape[1] + 2)
        base = simulate_tdm_copy(g, offsets, shape, num_warps, None, PY_LAYOUT_2D, bounds=bounds)
        new = simulate_tdm_copy(g, offsets, shape, num_warps, hint, PY_LAYOUT_2D, bounds=bounds)
        np.testing.assert_array_equal(new.block, base.block)
        assert (new.write_count == 1).all()
    if shapes[0] != (2, 2):
        assert derived == len(shapes) - (len(shapes) == 3 and num_warps < 4)


def test_derive_leaves_user_hints(ctx):
    module = run_pipeline(ctx, run_module([(128, 64)] * 3, 8, {1: 0x55}), "tile-derive-warp-hints")
    assert [hint_of(op) for op in ops_named(module, COPY)] == [None, 0x55, None]


# ---- fusion keeps the data --------------------------------------------------------


@pytest.mark.parametrize(
    ("shapes", "hints"),
    [
        ([(128, 64), (64, 128)], [0x0F, 0xF0]),
        ([(128, 64), (64, 128), (32, 64)], [0x0F, 0x30, 0xC0]),
        ([(64, 64), (16, 128), (128, 16), (8, 8)], [0x01, 0x08, 0x10, 0x80]),
        ([(64, 64), (64, 64)], [0x55, 0xAA]),
    ],
)
def test_fused_members_write_what_their_copies_wrote(ctx, shapes, hints):
    module = run_module(shapes, 8, dict(enumerate(hints)))
    module = run_pipeline(ctx, module, "tile-assign-tdm-warp-layout,tile-fuse-tdm-copies")
    assert not ops_named(module, COPY)
    (fused,) = ops_named(module, FUSED)
    view = fused.opview
    # Members are the copies, in order: member i copies argument %d<i> into %b<i>.
    n = len(shapes)
    assert [d.arg_number for d in view.descs] == [2 * i for i in range(n)]
    assert [b.arg_number for b in view.dests] == [2 * i + 1 for i in range(n)]
    assert view.warp_used_hints == hints
    assert len(ir.ArrayAttr(fused.attributes["tile.warp_layouts"])) == n
    rng = np.random.default_rng(n)
    globals_ = [rng.standard_normal((s[0] + 8, s[1] + 8)).astype(np.float32) for s in shapes]
    offsets = [(3, 5)] * n
    members = [(o, s, h, PY_LAYOUT_2D) for o, s, h in zip(offsets, shapes, hints, strict=True)]
    result = simulate_fused_copy(globals_, members, 8)
    for i, (g, s, h) in enumerate(zip(globals_, shapes, hints, strict=True)):
        single = simulate_tdm_copy(g, offsets[i], s, 8, h, PY_LAYOUT_2D)
        np.testing.assert_array_equal(result.blocks[i], single.block)
        counts = write_counts(result.member_writes(i), s)
        assert (counts == 1).all()
        assert set(result.member_writes(i)) == {w for w in range(8) if h >> w & 1}


# ---- waits after fusion ------------------------------------------------------------

POOL = [0x0F, 0xF0, 0x03, 0x0C, 0x30, 0xC0, 0x55, 0xAA, None]


def random_ops(rng: random.Random, n: int, first_buf: int) -> tuple[list[tuple], int]:
    """Random copies (into fresh buffers), waits and pure ops."""
    ops: list[tuple] = []
    buf = first_buf
    for _ in range(n):
        r = rng.random()
        if r < 0.6:
            ops.append(("copy", buf, rng.choice(POOL)))
            buf += 1
        elif r < 0.85:
            ops.append(("wait", rng.randint(0, 4)))
        else:
            ops.append(("pure",))
    return ops, buf


def program_module(prologue: list[tuple], body: list[tuple] | None, nbufs: int) -> ir.Module:
    """``@f(%d, %n, %b0, ...)``: ``prologue``'s ops, then ``body``'s in an ``scf.for``
    of ``%n`` trips; copy ``("copy", i, hint)`` copies ``%d`` into ``%b<i>``."""
    b = block((128, 64))
    i32 = ir.IntegerType.get_signless(32)
    k = tb.kernel([tb.desc_type(b), i32] + [tb.shared_type(b)] * nbufs, num_warps=8, name="f")
    desc, n, *bufs = k.args

    def build(ops: list[tuple]) -> None:
        for op in ops:
            if op[0] == "copy":
                tb.copy(desc, bufs[op[1]], hint=op[2])
            elif op[0] == "wait":
                tb.wait(op[1])
            else:
                arith.AddIOp(n, n)

    with k.ip:
        build(prologue)
        if body is not None:
            with tb.for_loop(tb.const(0), n, tb.const(1)):
                build(body)
    return k.module


def read_ops(block: ir.Block) -> list[tuple]:
    """The program's TDM ops as ("copy", {buffers}) / ("wait", num) / ("loop", body)."""
    out: list[tuple] = []
    for view in block.operations:
        op = view.operation
        if op.name == COPY:
            out.append(("copy", frozenset({op.opview.dest.arg_number - 2})))
        elif op.name == FUSED:
            out.append(("copy", frozenset(d.arg_number - 2 for d in op.opview.dests)))
        elif op.name == WAIT:
            out.append(("wait", ir.IntegerAttr(op.attributes["num"]).value))
        elif op.name == "scf.for":
            out.append(("loop", read_ops(op.regions[0].blocks[0])))
    return out


def completed_at_waits(ops: list[tuple], iterations: int) -> list[set[int]]:
    """Replay: at each executed wait, the buffers whose copies have completed."""
    trace: list[frozenset] = []
    done: list[set[int]] = []

    def run(seq: list[tuple]) -> None:
        for op in seq:
            if op[0] == "copy":
                trace.append(op[1])
            elif op[0] == "wait":
                finished = trace[: max(0, len(trace) - op[1])]
                done.append(set().union(*finished) if finished else set())
            else:
                for _ in range(iterations):
                    run(op[1])

    run(ops)
    return done


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("with_loop", [False, True])
def test_fused_waits_still_wait_for_every_awaited_copy(ctx, seed, with_loop):
    rng = random.Random(seed)
    prologue, nbufs = random_ops(rng, rng.randint(2, 9), 0)
    body = None
    if with_loop:
        body, nbufs = random_ops(rng, rng.randint(2, 7), nbufs)
    original = program_module(prologue, body, nbufs)
    before = read_ops(original.body.operations[0].operation.regions[0].blocks[0])
    module = run_pipeline(ctx, program_module(prologue, body, nbufs), "tile-fuse-tdm-copies")
    after = read_ops(module.body.operations[0].operation.regions[0].blocks[0])
    for iterations in (0, 1, 3):
        old = completed_at_waits(before, iterations)
        new = completed_at_waits(after, iterations)
        assert len(old) == len(new)
        for o, n in zip(old, new, strict=True):
            assert o <= n, (str(original), iterations)


def test_fused_wait_counts_are_not_needlessly_low(ctx):
    # A, B fused; C single: wait 3 -> 2 (C, G), wait 1 -> 1 (C).
    prologue = [("copy", 0, 0x0F), ("copy", 1, 0xF0), ("copy", 2, None), ("wait", 3), ("wait", 1)]
    module = run_pipeline(ctx, program_module(prologue, None, 3), "tile-fuse-tdm-copies")
    waits = [ir.IntegerAttr(w.attributes["num"]).value for w in ops_named(module, WAIT)]
    assert waits == [2, 1]


# ---- the whole chain on the example GEMM ----------------------------------------------


def test_derived_fused_gemm_matches_and_halves_tdm_instructions(ctx):
    from gemm_opt.model import interpreter

    source = (ROOT / "examples" / "gemm_gfx1250.mlir").read_text()
    unhinted = without_hints(source)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((160, 200)).astype(np.float16)
    b = rng.standard_normal((200, 130)).astype(np.float16)
    plain = ir.Module.parse(unhinted, context=ctx)
    c0, r0 = interpreter.run_gemm(plain, a, b, return_result=True)
    chain = (
        "tile-derive-warp-hints,tile-assign-tdm-warp-layout,tile-fuse-tdm-copies,"
        "tile-emit-warp-predicates"
    )
    module = run_pipeline(ctx, unhinted, chain)
    assert len(ops_named(module, FUSED)) == 2
    c1, r1 = interpreter.run_gemm(module, a, b, return_result=True)
    np.testing.assert_array_equal(c1, c0)
    assert (2 * r1.stats.instructions() == r0.stats.instructions()).all()


# ---- the derived warp groups ------------------------------------------------------------


def _warps(hint: int) -> set[int]:
    return {w for w in range(32) if hint >> w & 1}


@pytest.mark.parametrize("num_warps", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("size", [1, 2, 3, 4, 5])
def test_contiguous_hints_split_the_warps_in_order(num_warps, size):
    from gemm_opt.passes.derive_warp_hints import contiguous_hints

    hints = contiguous_hints(num_warps, size)
    needs = {2: 2, 3: 4, 4: 4}.get(size)
    if needs is None or num_warps < needs:
        assert hints is None
        return
    groups = [_warps(h) for h in hints]
    # Consecutive, disjoint, ascending warp ranges covering all the warps ...
    assert sorted(w for g in groups for w in g) == list(range(num_warps))
    assert all(max(a) + 1 == min(b) for a, b in itertools.pairwise(groups))
    # ... of a half, then quarters (3: a half and two quarters).
    sizes = [len(g) for g in groups]
    h, q = num_warps // 2, num_warps // 4
    assert sizes == {2: [h, h], 3: [h, q, q], 4: [q, q, q, q]}[size]


@pytest.mark.parametrize(
    ("options", "hints"),
    [
        ("", [0x03, 0x0C, 0x30, 0xC0]),
        ("{min-group=3}", [0x03, 0x0C, 0x30, 0xC0]),
        ("{max-group=2}", [0x0F, 0xF0, 0x0F, 0xF0]),
        ("{max-group=3}", [0x0F, 0x30, 0xC0, None]),
        ("{min-group=3 max-group=3}", [0x0F, 0x30, 0xC0, None]),
    ],
)
def test_derive_group_sizes_follow_the_options(ctx, options, hints):
    module = run_pipeline(
        ctx, run_module([(128, 64)] * 4, 8, {}), "tile-derive-warp-hints" + options
    )
    assert [hint_of(op) for op in ops_named(module, COPY)] == hints


@pytest.mark.parametrize("num_warps", [6, 12, 32])
def test_derive_leaves_modules_it_cannot_split_evenly(ctx, num_warps):
    module = run_pipeline(
        ctx, run_module([(128, 64), (64, 128)], num_warps, {}), "tile-derive-warp-hints"
    )
    assert [hint_of(op) for op in ops_named(module, COPY)] == [None, None]


@pytest.mark.parametrize("options", ["{min-group=1}", "{max-group=5}", "{min-group=4 max-group=3}"])
def test_derive_rejects_bad_group_options(ctx, options):
    """A bad option is refused with the pipeline, before any input is read."""
    from gemm_opt.core.pipeline import PipelineError

    with pytest.raises(PipelineError, match="min-group and max-group must satisfy"):
        run_pipeline(ctx, run_module([(128, 64)] * 2, 8, {}), "tile-derive-warp-hints" + options)


@pytest.mark.parametrize("members", [0, 1, 5])
def test_fuse_rejects_bad_max_members(ctx, members):
    """A bad option is refused with the pipeline, before any input is read."""
    from gemm_opt.core.pipeline import PipelineError

    with pytest.raises(PipelineError, match=f"max-members must be 2, 3 or 4, got {members}"):
        run_pipeline(
            ctx,
            run_module([(128, 64)] * 2, 8, {}),
            f"tile-fuse-tdm-copies{{max-members={members}}}",
        )


def _pairs_module(build: Callable[[ir.Value, ir.Value, list[ir.Value]], None]) -> ir.Module:
    """``@f(%d, %n, %b0, ..., %b5)`` of 8 warps (128x64 blocks), its body made
    by ``build(%d, %n, buffers)``."""
    b = block((128, 64))
    i32 = ir.IntegerType.get_signless(32)
    k = tb.kernel([tb.desc_type(b), i32] + [tb.shared_type(b)] * 6, num_warps=8, name="f")
    desc, n, *bufs = k.args
    with k.ip:
        build(desc, n, bufs)
    return k.module


def test_the_wait_analysis_gives_up_beyond_max_paths(ctx, monkeypatch):
    """Past ``MAX_PATHS`` paths the analysis waits for everything (num = 0);
    at the limit it still computes. A pair opens each of two nested loops and
    the inner body ends with ``wait {num = 2}``: the walk enters its last
    block with 3 paths found, so a limit of 3 still computes (num = 1) and a
    limit of 2 gives up (num = 0)."""
    from gemm_opt.passes import fuse_tdm_copies

    def build(desc: ir.Value, n: ir.Value, bufs: list[ir.Value]) -> None:
        def pair(k: int) -> None:
            tb.copy(desc, bufs[2 * k], hint=0x0F)
            tb.copy(desc, bufs[2 * k + 1], hint=0xF0)

        pair(0)
        c0, c1 = tb.const(0), tb.const(1)
        with tb.for_loop(c0, n, c1):
            pair(1)
            with tb.for_loop(c0, n, c1):
                pair(2)
                tb.wait(2)

    for limit, num in [(3, 1), (2, 0)]:
        monkeypatch.setattr(fuse_tdm_copies, "MAX_PATHS", limit)
        module = run_pipeline(ctx, _pairs_module(build), "tile-fuse-tdm-copies")
        assert [ir.IntegerAttr(w.attributes["num"]).value for w in ops_named(module, WAIT)] == [num]


def test_derive_skips_one_copy_that_fits_no_group(ctx):
    """A 3-D copy cannot join 2-D ones: the pass moves past it alone, and the
    two copies after it still form a pair."""
    b3, b2 = block((2, 4, 64), PY_LAYOUT_3D), block((128, 64))
    types = [tb.desc_type(b3), tb.shared_type(b3), tb.desc_type(b2)] + [tb.shared_type(b2)] * 2
    k = tb.kernel(types, num_warps=8, name="f")
    x, bx, d, b0, b1 = k.args
    with k.ip:
        tb.copy(x, bx)
        tb.copy(d, b0)
        tb.copy(d, b1)
    module = run_pipeline(ctx, k.module, "tile-derive-warp-hints")
    assert [hint_of(op) for op in ops_named(module, COPY)] == [None, 0x0F, 0xF0]


def test_a_path_that_reaches_its_budget_stops_there(ctx, monkeypatch):
    """``wait {num = 2}`` reads at most 2 + 4 instructions back: a loop body of
    three fused pairs fills that budget at the body's start, so the walk
    neither goes round the loop nor leaves it (one path, even with a limit of
    zero extra paths)."""
    from gemm_opt.passes import fuse_tdm_copies

    def build(desc: ir.Value, n: ir.Value, bufs: list[ir.Value]) -> None:
        with tb.for_loop(tb.const(0), n, tb.const(1)):
            for i, buf in enumerate(bufs):
                tb.copy(desc, buf, hint=0x0F if i % 2 == 0 else 0xF0)
            tb.wait(2)

    monkeypatch.setattr(fuse_tdm_copies, "MAX_PATHS", 0)
    module = run_pipeline(ctx, _pairs_module(build), "tile-fuse-tdm-copies")
    assert len(ops_named(module, FUSED)) == 3
    assert [ir.IntegerAttr(w.attributes["num"]).value for w in ops_named(module, WAIT)] == [1]
