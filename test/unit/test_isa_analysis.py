"""Tests of gemm_opt.lowering.isa_analysis on synthetic AMDGPU assembly (no Triton).

Register and size fields come from the assembler metadata; "in loop" counts
from the innermost loop, found from LLVM's loop comments or back edges.
"""

from __future__ import annotations

from gemm_opt.lowering import isa_analysis as ia

# ---------------------------------------------------------------------------
# isa_metrics on synthetic text (no Triton)

_ASM_NO_COMMENTS = """\
\t.text
\t.type\tk,@function
k:
\ts_mov_b32 s0, 0
.LBB0_1:
\ttensor_load_to_lds s[8:11], s[0:7]
\tv_wmma_f32_16x16x32_f16 v[0:7], v[8:15], v[16:23], v[0:7]
\ts_wait_tensorcnt 0x1
\ts_cbranch_scc1 .LBB0_1
\ts_cbranch_execz .LBB0_3
.LBB0_2:
\ts_endpgm
.LBB0_3:
\tglobal_store_b16 v[0:1], v2, off
\ts_cbranch_execz .LBB0_2
.Lfunc_end0:
\t.amdgpu_metadata
    .sgpr_count:     20
    .sgpr_spill_count: 1
    .vgpr_count:     24
    .vgpr_spill_count: 2
\t.end_amdgpu_metadata
; codeLenInByte = 64
"""


def test_isa_metrics_back_edges_without_loop_comments() -> None:
    m = ia.isa_metrics(_ASM_NO_COMMENTS, {"shared": 4096})
    assert (m.vgprs, m.sgprs, m.spills, m.code_bytes) == (24, 20, 3, 64)
    assert m.lds_bytes == 4096
    assert m.tdm_loads == m.tdm_loads_in_loop == 1
    assert m.wmma == m.wmma_in_loop == 1
    # the backward branch to the s_endpgm block is not a loop
    assert m.loop_instructions == 4
    assert m.waits == {"s_wait_tensorcnt": 1}
    assert m.instructions == 9
