"""The derivation's group sizes at their lower edge (found by
``benchmarks/mutation.py`` in ``passes/derive_warp_hints.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support import tile_build as tb
from support.tile_build import ops_named

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context, tile
from gemm_opt.passes.common import COPY_OP
from gemm_opt.passes.derive_warp_hints import DeriveWarpHintsPass


@pytest.fixture
def ctx() -> Iterator[ir.Context]:
    c = make_context()
    with c, ir.Location.unknown():
        yield c


def _copies(n: int, num_warps: int) -> ir.Module:
    """``@f(%d, %b0, ...)``: ``n`` unhinted 128x64 copies of ``%d``, one per buffer."""
    layout = tile.PaddedSharedAttr.build(interval=64, amount=8, order=[1, 0])
    b = tb.block_type((128, 64), ir.F16Type.get(), layout)
    k = tb.kernel([tb.desc_type(b)] + [tb.shared_type(b)] * n, num_warps=num_warps, name="f")
    desc, *bufs = k.args
    with k.ip:
        for buf in bufs:
            tb.copy(desc, buf)
    return k.module


@pytest.mark.parametrize(
    ("n", "min_group", "max_group", "hints"),
    [
        # Fewer copies than the smallest group: none is split, even where a
        # pair would fit.
        (2, 3, 4, [None, None]),
        (5, 3, 3, [0x0F, 0x30, 0xC0, None, None]),
        (5, 4, 4, [0x03, 0x0C, 0x30, 0xC0, None]),
        (5, 2, 4, [0x03, 0x0C, 0x30, 0xC0, None]),
    ],
)
def test_no_group_is_smaller_than_min_group(
    ctx, n: int, min_group: int, max_group: int, hints: list[int | None]
) -> None:
    module = _copies(n, 8)
    DeriveWarpHintsPass(min_group=min_group, max_group=max_group).run(module.operation)
    assert module.operation.verify()
    assert [op.opview.warp_used_hint for op in ops_named(module, COPY_OP)] == hints
