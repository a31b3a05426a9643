"""``gemm-opt-isa-report --dtypes f8e4m3``: the MXFP8 kernel's rows and goals."""

from __future__ import annotations

import json

import pytest

from gemm_opt.tools import isa_report


def test_fp8_rows_plan_per_target():
    variants = isa_report.VARIANTS + isa_report.FP8_ONLY_VARIANTS
    plan = list(isa_report.plan(variants, ["f8e4m3"], ["gfx1250", "gfx950", "gfx942"]))
    assert plan == [
        ("fused", "f8e4m3", "gfx1250"),
        ("unfused", "f8e4m3", "gfx1250"),
        ("derived", "f8e4m3", "gfx1250"),
        ("aligned", "f8e4m3", "gfx1250"),
        ("derived-unfused", "f8e4m3", "gfx1250"),
        ("aligned", "f8e4m3", "gfx950"),
    ]
    # The 16-bit rows have no derived-unfused variant.
    assert all(
        v != "derived-unfused" for v, _, _ in isa_report.plan(variants, ["f16"], ["gfx1250"])
    )


def test_derived_scale_copies_are_hinted_fused_or_predicated(capsys):
    variants = "derived,derived-unfused,fused"
    code = isa_report.main(
        ["--targets", "gfx1250", "--dtypes", "f8e4m3", "--variants", variants, "--json"]
    )
    assert code == 0
    rows = {r["variant"]: r for r in json.loads(capsys.readouterr().out)}
    derived, fused = rows["derived"], rows["fused"]
    assert derived["mma_instr"] == "v_wmma_scale_f32_16x16x128_f8f6f4"
    assert derived["mma_per_iter"] == 8 and derived["spills"] == 0
    # tile-derive-warp-hints gives the four copies a quarter of the warps each (the
    # scale tiles the upper two), and the fusion issues them as one instruction.
    assert derived["scale_hints"] == "0x30,0xc0,0x30,0xc0"
    assert derived["tdm_per_iter"] == 1
    # As written (no hints): every warp issues all four copies.
    assert derived["scale_predicates"] == ""  # a fused copy needs no predicate
    # Unfused, each scale copy keeps its per-warp predicate: warps 4-5 copy A's
    # scales, warps 6-7 B's (prologue and loop).
    unfused = rows["derived-unfused"]
    assert unfused["scale_hints"] == derived["scale_hints"]
    assert unfused["scale_predicates"] == ",".join(["((w^4)&6)==0", "((w^6)&6)==0"] * 2)
    assert unfused["tdm_per_iter"] == 4 and unfused["spills"] == 0
    # As written (no hints): every warp issues all four copies.
    assert fused["scale_hints"] == "all,all,all,all" and fused["tdm_per_iter"] == 4
    assert isa_report.check([isa_report.Row(**r) for r in rows.values()]) == []


def test_check_wants_the_scaled_instruction_and_the_derived_hints():
    row = isa_report.Row("derived", "f8e4m3", "gfx1250", tdm_per_iter=2, mma_per_iter=8)
    row.mma_instr, row.scale_hints = "v_wmma_f32_16x16x64_fp8_fp8", "0x30,all"
    assert isa_report.check([row]) == [
        "derived/f8e4m3/gfx1250: no scaled MMA in the K loop (v_wmma_f32_16x16x64_fp8_fp8)",
        "derived/f8e4m3/gfx1250: a scale-tile copy has no derived warp_used_hint",
        "derived/f8e4m3/gfx1250: 2 TDM per iteration, want 1",
    ]
    row = isa_report.Row("derived-unfused", "f8e4m3", "gfx1250", tdm_per_iter=4, mma_per_iter=8)
    row.mma_instr, row.scale_hints = "v_wmma_scale_f32_16x16x128_f8f6f4", "0x30,0xc0"
    row.scale_predicates = "((w^4)&6)==0"
    assert isa_report.check([row]) == [
        "derived-unfused/f8e4m3/gfx1250: a hinted scale-tile copy has no per-warp predicate"
    ]


def test_unknown_dtype_is_refused(capsys):
    with pytest.raises(SystemExit):
        isa_report.main(["--dtypes", "f8e5m3"])
    assert "unknown dtype 'f8e5m3'" in capsys.readouterr().err
