"""``tile-fuse-tdm-copies`` checked by running programs before and after it.

Random kernels mix copies (hinted and not, into plain buffers and into
dynamically indexed views of one buffer), copies already fused in the input,
waits of every count, loads, and regions: ``scf.for``, ``scf.if`` on a
warp-uniform value and on ``tile.warp_id``, nested. The interpreter is the
oracle: every load that never races in the original program must still never
race after the pass (its race detector raises otherwise) and must read the
same data, for several trip counts, branch values and index values.

Loads that race in the original are dropped before the comparison (they are
the generator's noise, not the pass's fault): a program is run, a racing
load is removed, and so on until none races.
"""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from support import tile_build as tb

from gemm_opt import dialect
from gemm_opt.core.ext_compat import arith, ir, scf
from gemm_opt.core.pipeline import Registry, build_pass_manager
from gemm_opt.dialect import tile
from gemm_opt.dialect.edit import ops_named
from gemm_opt.lowering.pipelines import tile_passes
from gemm_opt.model.interpreter import ModelError, run_function
from gemm_opt.passes import PASSES

ROOT = Path(__file__).resolve().parents[2]
COPY = "tile.async_tdm_copy_global_to_local"
FUSED = "tile.async_tdm_fused_copy_global_to_local"
WAIT = "tile.async_tdm_wait"
ROWS = 32  # block rows; blocks are 32x16 f32
NUM_DESCS = 4
NUM_BUFS = 4
HINTS = [0x0F, 0xF0, 0x03, 0x0C, 0x30, 0xC0, 0x55, 0xAA, None]
FUSED_HINTS = [(0x0F, 0xF0), (0xF0, 0x0F), (0x03, 0xC0), (0x55, 0xAA)]
# (trip count, uniform flag, index 0, index 1): equal and distinct dynamic indices.
CONFIGS = [(0, 0, 0, 1), (1, 1, 0, 0), (2, 0, 1, 1), (3, 1, 1, 0)]

# ---- programs ----------------------------------------------------------------------


@dataclass
class Program:
    """A random kernel as nested statements; ``dropped`` ops (loads and copies,
    by id) are not built. Load ``k`` stores to rows ``32 k`` of ``y``; a load or
    copy with id ``k`` is located at ``loc("op<k>")``, which race reports name.

    ``@k(%x, %y, %xm, %ym, %ld, %n, %u, %i0, %i1)`` of 8 warps: ``%d<i>`` are
    the 32x16 f32 blocks at rows ``32 i`` of ``%x``, ``%b<i>`` plain buffers,
    ``%v<i>`` the views ``%bb[%i<i>]`` of one double buffer (``[i]`` with
    ``constant_views``), ``%n`` the trip count, ``%u`` a uniform flag.
    """

    body: list[tuple]
    loads: int
    dropped: set[int] = field(default_factory=set)
    constant_views: bool = False

    def module(self) -> ir.Module:
        """The program built through the dialect's op builders (in the current context)."""
        with ir.Location.unknown():
            layout = tile.SwizzledSharedAttr.build(vec=1, per_phase=1, max_phase=1, order=[1, 0])
            f32, i32, i64 = (
                ir.F32Type.get(),
                ir.IntegerType.get_signless(32),
                ir.IntegerType.get_signless(64),
            )
            block = tb.block_type([ROWS, 16], f32, layout)
            desc_t, buf_t = tb.desc_type(block), tb.shared_type(block)
            double_t = tb.shared_type(tb.block_type([2, ROWS, 16], f32, layout))
            ptr = tb.ptr_type(f32)
            k = tb.kernel(
                [ptr, ptr, i32, i32, i64, i32, i32, i32, i32],
                num_warps=8,
                threads_per_warp=32,
                target="gfx1250",
            )
            x, y, xm, ym, ld, n, u, i0, i1 = k.args
            with k.ip:
                c0, c1, c16, one = tb.const(0), tb.const(1), tb.const(16), tb.const(1, 64)
                w = tile.WarpIdOp().result
                d = tile.MakeTensorDescriptorOp(x, [xm, c16], [ld, one], desc_t).result
                v: dict[str, ir.Value] = {"c0": c0, "c1": c1, "n": n, "u": u, "w": w, "y": y}
                v.update(ym=ym, ld=ld, one=one, c16=c16)
                for i in range(NUM_DESCS):
                    row = tb.const(ROWS * i)
                    v[f"d{i}"] = tile.UpdateTensorDescriptorOp(d, [row, c0], [], desc_t).result
                for i in range(NUM_BUFS):
                    v[f"b{i}"] = tile.LocalAllocOp(buf_t).result
                bb = tile.LocalAllocOp(double_t).result
                for i, index in enumerate((c0, c1) if self.constant_views else (i0, i1)):
                    v[f"v{i}"] = tile.MemdescIndexOp(bb, index, buf_t).result
                self._build(self.body, v)
            return k.module

    def text(self) -> str:
        """The program, printed (for failure messages)."""
        return str(self.module())

    def _build(self, stmts: list[tuple], v: dict[str, ir.Value]) -> None:
        f32 = ir.F32Type.get()
        for st in stmts:
            kind = st[0]
            if kind in ("copy", "fused") and st[-1] in self.dropped:
                continue
            if kind == "copy":
                _, desc, dest, hint, k = st
                tb.copy(v[f"d{desc}"], v[dest], hint=hint, loc=_op_loc(k))
            elif kind == "fused":
                _, (da, db), (ba, bb), hints, k = st
                tb.fused_copy([v[f"d{da}"], v[f"d{db}"]], [v[ba], v[bb]], hints, loc=_op_loc(k))
            elif kind == "wait":
                tb.wait(st[1])
            elif kind == "load":
                _, k, src = st
                if k in self.dropped:
                    continue
                t = ir.RankedTensorType.get([ROWS, 16], f32)
                value = tile.LocalLoadOp(v[src], t, loc=_op_loc(k)).result
                row = tb.const(ROWS * k)
                tile.StoreBlockOp(
                    v["y"], [v["ym"], v["c16"]], [v["ld"], v["one"]], [row, v["c0"]], value
                )
            elif kind == "pure":
                arith.AddIOp(v["n"], v["c1"])
            elif kind == "for":
                with tb.for_loop(v["c0"], v["n"], v["c1"]):
                    self._build(st[1], v)
            elif kind in ("if_uniform", "if_warp"):
                _, then, other, bound = st
                slt = arith.CmpIPredicate.slt
                if kind == "if_uniform":
                    cond = arith.CmpIOp(slt, v["c0"], v["u"]).result
                else:
                    cond = arith.CmpIOp(slt, v["w"], tb.const(bound)).result
                op = scf.IfOp(cond, [], has_else=other is not None)
                with tb.region(op.then_block):
                    self._build(then, v)
                if other is not None:
                    with tb.region(op.else_block):
                        self._build(other, v)


def _op_loc(k: int) -> ir.Location:
    return ir.Location.name(f"op{k}")


def random_program(rng: random.Random) -> Program:
    loads = iter(range(10**6))
    copies = iter(range(10**6, 2 * 10**6))
    dests = [f"b{i}" for i in range(NUM_BUFS)] + ["v0", "v1"]

    def copy() -> tuple:
        desc, dest, hint = rng.randrange(NUM_DESCS), rng.choice(dests), rng.choice(HINTS)
        return ("copy", desc, dest, hint, next(copies))

    def block(depth: int, n: int, loads_ok: bool) -> list[tuple]:
        out: list[tuple] = []
        for _ in range(n):
            r = rng.random()
            if r < 0.35:
                # Copies come in runs, so that there is something to fuse.
                out += [copy() for _ in range(rng.randint(1, 4))]
            elif r < 0.42:
                da, db = rng.sample(range(NUM_DESCS), 2)
                ba, bb = rng.sample([f"b{i}" for i in range(NUM_BUFS)], 2)
                out.append(("fused", (da, db), (ba, bb), rng.choice(FUSED_HINTS), next(copies)))
            elif r < 0.62:
                out.append(("wait", rng.randint(0, 3)))
            elif r < 0.74 and loads_ok:
                out.append(("load", next(loads), rng.choice(dests)))
            elif r < 0.78:
                out.append(("pure",))
            elif depth < 2 and r < 0.86:
                out.append(("for", block(depth + 1, rng.randint(1, 4), loads_ok)))
            elif depth < 2 and r < 0.93:
                other = (
                    block(depth + 1, rng.randint(1, 3), loads_ok) if rng.random() < 0.5 else None
                )
                out.append(("if_uniform", block(depth + 1, rng.randint(1, 4), loads_ok), other, 0))
            elif depth < 2:
                # store_block needs every warp: no loads under a warp-dependent branch.
                other = block(depth + 1, rng.randint(1, 3), False) if rng.random() < 0.5 else None
                then = block(depth + 1, rng.randint(1, 4), False)
                out.append(("if_warp", then, other, rng.choice([2, 4, 6])))
        return out

    body = block(0, rng.randint(3, 9), True)
    # Finish with a full wait and a load of every buffer.
    body.append(("wait", 0))
    body += [("load", next(loads), d) for d in dests]
    return Program(body, next(loads))


# ---- running -----------------------------------------------------------------------


def _args(cfg: tuple[int, int, int, int], loads: int) -> list:
    n, u, i0, i1 = cfg
    x = (np.arange(NUM_DESCS * ROWS * 16, dtype=np.float32) + 1).reshape(NUM_DESCS * ROWS, 16)
    y = np.full((loads * ROWS, 16), -1.0, dtype=np.float32)
    return [x, y, NUM_DESCS * ROWS, loads * ROWS, 16, n, u, i0, i1]


RACING_OP = re.compile(r'loc\("op(\d+)"\)')


def _outputs(module: ir.Module, loads: int) -> list[np.ndarray]:
    """``y`` after each configuration; raises ModelError on a race."""
    out = []
    for cfg in CONFIGS:
        args = _args(cfg, loads)
        run_function(module, "k", args, check_uninitialized=False)
        out.append(args[1])
    return out


def race_free(program: Program) -> list[np.ndarray]:
    """Drop the loads (and copies) that race in the original until none does;
    its outputs."""
    while True:
        try:
            return _outputs(program.module(), program.loads)
        except ModelError as e:
            m = RACING_OP.search(str(e))
            assert m and "in-flight TDM copy" in str(e), str(e)
            program.dropped.add(int(m.group(1)))


def fuse(module: ir.Module, options: str = "") -> ir.Module:
    """``module`` after ``tile-fuse-tdm-copies`` (changed in place)."""
    pm = build_pass_manager(
        f"builtin.module(tile-fuse-tdm-copies{options})", Registry(passes=PASSES)
    )
    pm.run(module.operation)
    return module


def count_ops(module: ir.Module, name: str) -> int:
    found = 0

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal found
        found += op.name == name
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def wait_counts(module: ir.Module) -> list[int]:
    """The ``num`` of every wait, in program order."""
    return [ir.IntegerAttr(op.attributes["num"]).value for op in ops_named(module, WAIT)]


@pytest.fixture
def ctx():
    c = dialect.make_context()
    with c:
        yield c


SEEDS = range(30)
CASES = [(seed, 4) for seed in SEEDS] + [(seed, mm) for seed in range(8) for mm in (2, 3)]


@pytest.mark.parametrize(("seed", "max_members"), CASES)
def test_fusion_keeps_every_race_free_load_race_free_and_its_data(ctx, seed, max_members):
    program = random_program(random.Random(seed))
    before = race_free(program)
    text = program.text()
    module = fuse(program.module(), f"{{max-members={max_members}}}")
    try:
        after = _outputs(module, program.loads)
    except ModelError as e:  # a rewritten wait lets a copy still run into a load
        pytest.fail(f"{e}\n\nbefore:\n{text}\nafter:\n{module}")
    for cfg, b, a in zip(CONFIGS, before, after, strict=True):
        np.testing.assert_array_equal(a, b, err_msg=f"config {cfg}\n{text}\n{module}")


def test_the_random_programs_exercise_the_rewrite(ctx):
    """The property above is not vacuous: fusion happens, in every kind of region,
    and waits change."""
    fused = changed = in_regions = 0
    for seed in SEEDS:
        program = random_program(random.Random(seed))
        race_free(program)
        original = program.module()
        module = fuse(program.module())
        fused += count_ops(module, FUSED) - count_ops(original, FUSED)
        changed += sum(
            b != a for b, a in zip(wait_counts(original), wait_counts(module), strict=True)
        )
        regions = count_ops(original, "scf.for") + count_ops(original, "scf.if")
        in_regions += regions > 0 and count_ops(module, FUSED) > count_ops(original, FUSED)
    assert fused >= 20 and changed >= 20 and in_regions >= 8, (fused, changed, in_regions)


# ---- destinations that may be one buffer -------------------------------------------


def _two_copies(dest0: str, dest1: str) -> Program:
    # Warps 4-7, then warps 0-3, copy other data: into one buffer, a write race.
    body = [
        ("copy", 0, dest0, 0xF0, 2),
        ("copy", 1, dest1, 0x0F, 3),
        ("wait", 0),
        ("load", 0, dest0),
        ("load", 1, dest1),
    ]
    return Program(body, 2)


@pytest.mark.parametrize(("dest0", "dest1"), [("v0", "v1"), ("v0", "v0"), ("b0", "b0")])
def test_copies_into_possibly_one_buffer_are_not_fused(ctx, dest0, dest1):
    """One instruction writing one buffer twice has no order between its members
    (and hides the race the model reports between the two copies)."""
    program = _two_copies(dest0, dest1)
    module = fuse(program.module())
    assert count_ops(module, FUSED) == 0 and count_ops(module, COPY) == 2
    with pytest.raises(ModelError, match="another warp's in-flight TDM copy"):
        _outputs(program.module(), 2)  # CONFIGS[1] has %i0 == %i1


def test_copies_into_distinct_constant_views_fuse(ctx):
    program = _two_copies("v0", "v1")
    program.constant_views = True  # %bb[0] and %bb[1]
    module = fuse(program.module())
    assert count_ops(module, FUSED) == 1
    assert _outputs(module, 2)[0].tolist() == _outputs(program.module(), 2)[0].tolist()


# ---- every order of the tile passes ------------------------------------------------

TILE_PASSES = (
    "tile-derive-warp-hints",
    "tile-assign-tdm-warp-layout",
    "tile-fuse-tdm-copies",
    "tile-emit-warp-predicates",
)
# The pipeline's own orders (derive and fuse optional), then every other order.
PIPELINE_ORDERS = [
    tuple(tile_passes("gfx1250", fuse=fuse, derive_hints=derive))
    for fuse in (True, False)
    for derive in (True, False)
]
ORDERS = PIPELINE_ORDERS + [
    o for o in itertools.permutations(TILE_PASSES) if o not in PIPELINE_ORDERS
]


@pytest.fixture(scope="module")
def gemm_case():
    from gemm_opt.dialect.edit import without_hints
    from gemm_opt.model.interpreter import run_gemm

    source = (ROOT / "examples" / "gemm_gfx1250.mlir").read_text()
    rng = np.random.default_rng(1)
    a = (rng.integers(-8, 9, size=(64, 128)) / 8).astype(np.float16)
    b = (rng.integers(-8, 9, size=(128, 64)) / 8).astype(np.float16)
    c = run_gemm(source, a, b)
    return {"hinted": source, "unhinted": without_hints(source)}, a, b, c


@pytest.mark.parametrize("source", ["hinted", "unhinted"])
@pytest.mark.parametrize("order", ORDERS, ids=lambda o: "+".join(p[5:] for p in o))
def test_every_pass_order_keeps_the_gemm_or_is_refused(gemm_case, source, order):
    """Any order of the four tile passes either computes the same C without a
    race, or is refused with a diagnostic (predicates before layouts: a no-op,
    and accepted, when fusion left no single copy to predicate)."""
    from gemm_opt.model.interpreter import run_gemm

    texts, a, b, c = gemm_case
    ctx = dialect.make_context()
    with ctx:
        module = ir.Module.parse(texts[source])
        pm = build_pass_manager(f"builtin.module({','.join(order)})", Registry(passes=PASSES))
        try:
            pm.run(module.operation)
        except ir.MLIRError as e:
            # Only a predicate pass that meets a single copy before any layout.
            assert "run tile-assign-tdm-warp-layout first" in str(e)
            emit = order.index("tile-emit-warp-predicates")
            assert "tile-assign-tdm-warp-layout" not in order[:emit]
            return
        np.testing.assert_array_equal(run_gemm(module, a, b), c)
