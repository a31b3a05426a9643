"""The ISA report's ``deep`` variant: the dense GEMM with ``NUM_BUFFERS=4``.

``examples/gemm_gfx1250_deep.mlir`` must be what the Python front end builds
for ``examples/gemm_gfx1250.py`` with ``NUM_BUFFERS=4`` (the report cannot
import the front end: tools and language are separate layers). Compiled for
gfx1250 it keeps one fused TDM instruction and 16 WMMAs per K iteration with
no spills, takes the four buffers' LDS, and its loop waits until at most
three K tiles are in flight (``s_wait_tensorcnt 0x3``) where the two-buffer
kernel waits for one.
"""

from __future__ import annotations

from pathlib import Path

from support.scripts import load_script

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context
from gemm_opt.lowering.compile import compile_tile_module
from gemm_opt.tools import isa_report

ROOT = Path(__file__).resolve().parents[2]


def _code(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("//")]


def test_deep_example_is_the_front_ends_gemm_with_four_buffers():
    example = load_script(ROOT / "examples" / "gemm_gfx1250.py")
    built = example.gemm.build_ir(num_warps=8, NUM_BUFFERS=4)
    assert _code(isa_report.DEEP_INPUT.read_text()) == _code(built)


def test_deep_row_keeps_one_fused_tdm_per_iteration_with_four_buffers():
    (row,) = [
        isa_report.compile_row(isa_report.DEFAULT_INPUT.read_text(), "deep", "f16", "gfx1250")
    ]
    assert not row.error
    assert row.label == "deep (NUM_BUFFERS=4)"
    assert (row.tdm_per_iter, row.mma_per_iter, row.spills) == (1, 16, 0)
    with make_context():
        deep = ir.Module.parse(isa_report.DEEP_INPUT.read_text())
        shallow = ir.Module.parse(isa_report.DEFAULT_INPUT.read_text())
        assert (
            row.lds_bytes
            == isa_report.shared_bytes(deep)
            > 2 * isa_report.shared_bytes(shallow) - 1024
        )
    assert isa_report.check([row]) == []


def _loop_wait(text: str) -> str:
    asm = compile_tile_module(text, "gfx1250").asm["amdgcn"]
    waits = [line.strip() for line in asm.splitlines() if "s_wait_tensorcnt" in line]
    # The loop's wait: the one before the final wait for everything (0x0).
    return waits[-2]


def test_deep_pipeline_keeps_three_k_tiles_in_flight():
    assert _loop_wait(isa_report.DEFAULT_INPUT.read_text()) == "s_wait_tensorcnt 0x1"
    assert _loop_wait(isa_report.DEEP_INPUT.read_text()) == "s_wait_tensorcnt 0x3"


def test_deep_variant_runs_only_on_gfx1250():
    planned = list(isa_report.plan(["deep"], ["f16"], list(isa_report.TARGETS)))
    assert planned == [("deep", "f16", "gfx1250")]
