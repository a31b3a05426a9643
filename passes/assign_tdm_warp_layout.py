"""``tile-assign-tdm-warp-layout``: record which warp copies which tile.

Every TDM copy gets the per-warp layout Triton's gfx1250 lowering will use,
as a ``#tile.tdm_warp_layout`` attribute, so later passes (the warp
predicates, the plan remarks, the lowering) read one decision instead of
recomputing it. The layout comes from :func:`gemm_opt.core.tdm_layout.tdm_warp_layout`;
this module only moves it between Python and IR. The helpers live in
:mod:`gemm_opt.passes.common`, shared with the other TDM passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from gemm_opt.core.ext_compat import ir
from gemm_opt.core.pass_base import TilePass
from gemm_opt.passes.common import COPY_OP, FUSED_OP, LayoutError, collect_ops, set_copy_layout


@dataclass(frozen=True)
class AssignTdmWarpLayoutPass(TilePass):
    """Attach the per-warp TDM layout to every global-to-shared copy.

    For each ``tile.async_tdm_copy_global_to_local`` the pass computes how
    its warps split the block, exactly as Triton 3.9.0's gfx1250 lowering
    does: ``K`` = popcount(``warp_used_hint``) warps (all ``tile.num_warps``
    without a hint) are distributed greedily over the block dims (the
    partition-aware distribution for ``#tile.partitioned_shared``), each
    takes ``block / warps_per_dim`` elements, and warp ``w`` copies iff
    ``((w ^ anchor) & free_mask) == 0``. The result is stored as
    ``tile.warp_layout``; a fused copy gets ``tile.warp_layouts``, one layout
    per member. Running the pass twice gives the same IR.

    Before:

    ```mlir
    "tile.async_tdm_copy_global_to_local"(%d, %b)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>, warp_used_hint = 240 : i32}
      : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>) -> ()
    ```

    After:

    ```mlir
    "tile.async_tdm_copy_global_to_local"(%d, %b)
        {operandSegmentSizes = array<i32: 1, 1, 0, 0>,
         tile.warp_layout = #tile.tdm_warp_layout<{anchor = 4 : i64, free_mask = 4 : i64,
           tile = array<i64: 32, 64>, warp_bases = array<i64: 32, 0, 64, 0, 0, 0>,
           warps_per_dim = array<i64: 4, 1>}>,
         warp_used_hint = 240 : i32}
      : (!tile.tensor_desc<tensor<128x64xf16, #s>>, !tile.shared<tensor<128x64xf16, #s>>) -> ()
    ```

    Diagnostics (the pass fails at the op): no enclosing ``tile.num_warps``;
    a ``tile.num_warps`` that is not a power of two; an unhinted partitioned
    copy that needs several TDM instructions (more logical pieces than
    warps), which the single-instruction layout cannot describe. A hint too
    large for its block is already rejected by the op verifier.
    """

    name: ClassVar[str] = "tile-assign-tdm-warp-layout"

    def run(self, module: ir.Operation) -> None:
        for op in collect_ops(module, (COPY_OP, FUSED_OP)):
            try:
                set_copy_layout(op)
            except LayoutError as e:
                self.fail(op, f"cannot assign a TDM warp layout: {e}")


__all__ = ["AssignTdmWarpLayoutPass"]
