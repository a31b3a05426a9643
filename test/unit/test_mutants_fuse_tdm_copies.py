"""The fusion pass's wait analysis at its edges (found by
``benchmarks/mutation.py`` in ``passes/fuse_tdm_copies.py``): a path ends at a
``num = 0`` wait and no other, and a walk's budget is exact."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support import tile_build as tb
from support.tile_build import ops_named

from gemm_opt.core.contract import WARP_LAYOUTS
from gemm_opt.core.ext_compat import ir
from gemm_opt.core.layouts import PaddedShared
from gemm_opt.dialect import make_context, tile
from gemm_opt.passes.common import COPY_OP as COPY
from gemm_opt.passes.common import FUSED_OP as FUSED
from gemm_opt.passes.common import set_copy_layout
from gemm_opt.passes.fuse_tdm_copies import FuseTdmCopiesPass, backward_paths

WAIT = "tile.async_tdm_wait"
LAYOUT = PaddedShared(64, 8, (1, 0))


@pytest.fixture
def ctx() -> Iterator[ir.Context]:
    c = make_context()
    with c, ir.Location.unknown():
        yield c


def _program(ops: list[tuple[str, int | None]], nbufs: int) -> ir.Module:
    """``@f(%d, %b0, ...)``: ``("copy", hint)`` copies ``%d`` into the next
    buffer, ``("wait", num)`` waits."""
    attr = tile.PaddedSharedAttr.build(
        interval=LAYOUT.interval, amount=LAYOUT.amount, order=list(LAYOUT.order)
    )
    b = tb.block_type((128, 64), ir.F16Type.get(), attr)
    k = tb.kernel([tb.desc_type(b)] + [tb.shared_type(b)] * nbufs, num_warps=8, name="f")
    desc, *bufs = k.args
    free = iter(bufs)
    with k.ip:
        for kind, value in ops:
            if kind == "copy":
                tb.copy(desc, next(free), hint=value)
            else:
                assert value is not None
                tb.wait(value)
    return k.module


def _nums(module: ir.Module) -> list[int]:
    return [ir.IntegerAttr(w.attributes["num"]).value for w in ops_named(module, WAIT)]


PAIR: list[tuple[str, int | None]] = [("copy", 0x0F), ("copy", 0xF0)]


@pytest.mark.parametrize(
    ("between", "after"),
    [
        # A num = 0 wait completes A and B: only the pair C, D (one fused
        # instruction now) is in flight at the num = 4 wait.
        (0, [0, 1]),
        # A num = 1 wait leaves B in flight: the path goes on through it, so the
        # pair A, B counts as well. (A num = 1 wait after a fused pair is 0.)
        (1, [0, 2]),
    ],
)
def test_only_a_wait_for_everything_ends_a_path(ctx, between: int, after: list[int]) -> None:
    ops = [*PAIR, ("wait", between), *PAIR, ("wait", 4)]
    module = _program(ops, 4)
    FuseTdmCopiesPass().run(module.operation)
    assert module.operation.verify()
    assert _nums(module) == after


@pytest.mark.parametrize("budget", [1, 2, 3])
def test_a_walk_stops_at_its_budget(ctx, budget: int) -> None:
    module = _program([("copy", None)] * 4 + [("wait", 0)], 4)
    (wait,) = ops_named(module, WAIT)
    (path,) = backward_paths(wait, budget)
    assert (len(path.items), path.end) == (budget, "enough")
    (whole,) = backward_paths(wait, 4)
    assert (len(whole.items), whole.end) == (4, "enough")
    (entry,) = backward_paths(wait, 5)
    assert (len(entry.items), entry.end) == (4, "complete")


@pytest.mark.parametrize("with_layout", [(True, False), (False, True), (True, True)])
def test_the_fused_op_takes_the_layouts_only_when_every_member_has_one(
    ctx, with_layout: tuple[bool, bool]
) -> None:
    module = _program([*PAIR, ("wait", 0)], 2)
    for op, has in zip(ops_named(module, COPY), with_layout, strict=True):
        if has:
            set_copy_layout(op.opview)
    FuseTdmCopiesPass().run(module.operation)
    assert module.operation.verify()
    (fused,) = ops_named(module, FUSED)
    assert (WARP_LAYOUTS in fused.attributes) is all(with_layout)
