"""The TDM kernels the Triton differentials build (``support.tdm_ttgir``).

They are built with Triton's IR builder and printed by Triton; these tests
read Triton's printing of a few of them, so a builder that made the wrong
op, layout, hint or descriptor would fail here before it skews a
differential.
"""

from __future__ import annotations

import triton  # noqa: F401  (a pinned dependency: missing triton must fail, not skip)
from support.tdm_ttgir import ARGUMENTS, CONSTANT, RUNTIME, CopyKernel, Member, build
from support.triton_lowering import LoweringConfig, lower, make_ttgir

from gemm_opt.core.layouts import PaddedShared, PartitionedShared
from gemm_opt.lowering import triton_bridge as tb


def _printed(*kernels: CopyKernel) -> list[str]:
    """Triton's verified text of each kernel, built in one child process."""

    def work(report):
        tt = tb.triton_ir("gfx1250")
        return [tb.verified_text(build(tt, k)) for k in kernels]

    run = tb.run_isolated(work)
    assert run.ok, run.exception or run.stderr
    return run.result


def test_single_copies_keep_every_32_bit_hint():
    member = (Member((256, 64)),)
    texts = _printed(
        CopyKernel(16, member, (0xF0,)),
        CopyKernel(16, member, None),
        CopyKernel(16, member, (0xFFFF,), descriptors=RUNTIME),
    )
    assert "{warp_used_hint = 240 : i32}" in texts[0]
    assert "warp_used_hint" not in texts[1]
    assert "!tt.tensordesc<256x64xf16, #shared>" in texts[0]
    assert "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>" in texts[0]
    assert '"ttg.num-warps" = 16 : i32' in texts[0]
    assert "amdg.async_tdm_wait" not in texts[0]  # descriptor arguments: no wait
    assert "tt.make_tensor_descriptor %arg0, [%arg1, %arg1], [%0, %c1_i64]" in texts[2]
    assert "amdg.async_tdm_wait  {num = 0 : i32}" in texts[2]


def test_fused_copies_and_layouts():
    members = (
        Member((128, 16), PartitionedShared(2, 2, 0)),
        Member((64, 64), PaddedShared(64, 8, (1, 0))),
    )
    (text,) = _printed(CopyKernel(8, members, (0x0F, 0xF0), fused=True, descriptors=ARGUMENTS))
    assert "warp_used_hints = array<i32: 15, 240>" in text
    assert "#ttg.padded_shared<[64:+8] {order = [1, 0], shape = [64, 64]}>" in text
    assert "numPartitions = 2, numGroups = 2, partitionDim = 0" in text


def test_constant_descriptors_and_the_lowering_cache_agree():
    config = LoweringConfig.single((128, 64), 8, 0xF0, None, (100, 60), (3, 5))
    text = make_ttgir(config)
    assert "add_offsets = [%c3_i32, %c5_i32]" in text and "{clamp_bounds}" in text
    assert "[%c100_i32, %c60_i32], [%c69_i64, %c1_i64]" in text  # pitch max(60, 5 + 64)
    assert lower(config).ttgir == text
    member = Member((128, 64), None, (100, 60), (69, 1), (3, 5))
    (built,) = _printed(CopyKernel(8, (member,), (0xF0,), descriptors=CONSTANT, name="tdm_copy"))
    assert built == text
