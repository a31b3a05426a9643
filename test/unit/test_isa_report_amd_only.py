"""The ISA report reads AMDGPU assembly, and says so.

A cuda:90 kernel has no ``asm["amdgcn"]`` and its ``metrics`` is a
ValueError naming the AMD targets, not a report of zeros; the report tool
refuses a non-AMD target before compiling anything, and ``--check`` says when
the goals hold (on stderr: stdout keeps the table or the JSON).
"""

from __future__ import annotations

import json

import pytest

from gemm_opt.lowering.compile import compile_tile_module
from gemm_opt.tools import isa_report

KERNEL = """
module attributes {tile.num_warps = 4 : i32} {
  func.func @claim(%s: !tile.ptr<i32>, %i: i32) {
    %n = "tile.num_programs"() {axis = 0 : i32} : () -> i32
    %old = "tile.atomic_rmw"(%s, %i, %n) {kind = "add", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    return
  }
}
"""


def test_a_cuda_kernel_has_no_isa_report():
    compiled = compile_tile_module(KERNEL, "cuda:90")
    assert "ptx" in compiled.asm and "amdgcn" not in compiled.asm
    assert compiled.amd_metrics is None
    with pytest.raises(ValueError, match=r"a cuda:90 kernel has none \(AMD targets: gfx1250"):
        compiled.metrics  # noqa: B018


def test_an_amd_kernel_has_one():
    compiled = compile_tile_module(KERNEL, "gfx942")
    assert "ptx" not in compiled.asm and "global_atomic" in compiled.asm["amdgcn"]
    assert compiled.metrics is compiled.amd_metrics and compiled.metrics.vgprs > 0


def test_the_tool_refuses_a_non_amd_target(capsys):
    with pytest.raises(SystemExit) as info:
        isa_report.main(["--targets", "gfx950,cuda:90"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "the ISA report reads AMDGPU assembly: cuda:90 is not an AMD target" in err


def test_the_tool_refuses_an_empty_target_list(capsys):
    with pytest.raises(SystemExit):
        isa_report.main(["--targets", ","])
    assert "no target given" in capsys.readouterr().err


ONE = ["--variants", "fused", "--dtypes", "f16", "--targets", "gfx950"]


def test_check_says_that_it_passed(capsys):
    assert isa_report.main(["--check", "--json", *ONE]) == 0
    out, err = capsys.readouterr()
    assert [r["variant"] for r in json.loads(out)] == ["fused"]  # stdout stays JSON
    assert "gemm-opt-isa-report: check passed: 1 variants" in err


def test_check_says_nothing_passed_when_a_goal_fails(capsys, monkeypatch):
    monkeypatch.setattr(isa_report, "check", lambda rows: ["fused/f16/gfx950: 3 spills"])
    assert isa_report.main(["--check", *ONE]) == 1
    err = capsys.readouterr().err
    assert "goal not met: fused/f16/gfx950: 3 spills" in err and "passed" not in err


def test_without_check_nothing_is_claimed(capsys):
    assert isa_report.main(ONE) == 0
    assert "passed" not in capsys.readouterr().err
