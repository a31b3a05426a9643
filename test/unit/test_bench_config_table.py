"""Our GEMM's config table (``benchmarks/h100/configs/cuda90.json``) and its lookup.

The table ``tune.py`` wrote must name configs ``build_bundle.py`` can
build; a shape outside the suite takes the config of the nearest tuned
shape of its dtype; a malformed table is refused with its path.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.scripts import load_script

H100 = Path(__file__).resolve().parents[2] / "benchmarks" / "h100"


def _script(name: str):
    return load_script(H100 / f"{name}.py")


@pytest.fixture(scope="module")
def lib():
    return _script("benchlib")


def test_repository_table_names_buildable_candidates(lib) -> None:
    bb = _script("build_bundle")
    table = lib.read_table(lib.CONFIG_TABLE)
    assert table["target"] == "cuda:90"
    tuned = {(e["dtype"], tuple(e["shape"])) for e in table["entries"]}
    assert tuned == {(d, s) for d in lib.DTYPES for s in lib.BENCH_SHAPES}
    for e in table["entries"]:
        assert bb.OurConfig.parse(e["config"]) in bb.CANDIDATES
        # the winner of the final round, among the first round's close calls
        final = e["final_tflops"]
        assert set(final) == set(lib.finalists(e["candidates_tflops"]))
        assert e["config"] == max(final, key=final.get) and e["tflops"] == final[e["config"]]
    assert bb.read_config_table(lib.CONFIG_TABLE)["configs"]


def test_nearest_tuned_shape_decides(lib) -> None:
    table = {
        "default": "128x128x64_w8",
        "entries": [
            {"dtype": "float16", "shape": [4096, 4096, 4096], "config": "big"},
            {"dtype": "float16", "shape": [512, 512, 8192], "config": "narrow"},
            {"dtype": "bfloat16", "shape": [1024, 1024, 1024], "config": "bf"},
        ],
    }
    assert lib.choose_config(table, "float16", (4096, 4096, 4096)) == "big"
    assert lib.choose_config(table, "float16", (6144, 4096, 3072)) == "big"
    assert lib.choose_config(table, "float16", (256, 768, 16384)) == "narrow"
    assert lib.choose_config(table, "bfloat16", (8192, 8192, 8192)) == "bf"
    assert lib.choose_config(None, "float16", (64, 64, 64)) == "128x128x64_w8"
    assert lib.choose_config({"entries": []}, "bfloat16", (64, 64, 64)) == "128x128x64_w8"


@pytest.mark.parametrize(
    "doc",
    [
        [],
        {"entries": "x"},
        {"entries": [{"dtype": "float32", "shape": [1, 1, 1], "config": "c"}]},
        {"entries": [{"dtype": "float16", "shape": [1, 1], "config": "c"}]},
        {"entries": [{"dtype": "float16", "shape": [1, 0, 1], "config": "c"}]},
        {"entries": [{"dtype": "float16", "shape": [1, 1, 1]}]},
    ],
)
def test_malformed_tables_are_refused(lib, tmp_path: Path, doc) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=str(path) if doc != [] else "not a config table"):
        lib.read_table(path)


def test_shapes_and_config_tags_parse(lib) -> None:
    bb = _script("build_bundle")
    assert lib.parse_shapes("1x2x3,4x5x6") == [(1, 2, 3), (4, 5, 6)]
    for bad in ("1x2", "0x1x1", "axbxc"):
        with pytest.raises(ValueError):
            lib.parse_shapes(bad)
    cfg = bb.OurConfig.parse("64x128x64_w4")
    assert cfg == bb.OurConfig(64, 128, 64, 4) and cfg.tag == "64x128x64_w4"
    assert cfg.hints() == {"HINT_A": 0b0011, "HINT_B": 0b1100}
    assert bb.DEFAULT_CONFIG.hints() == {"HINT_A": 0b00001111, "HINT_B": 0b11110000}
    with pytest.raises(ValueError, match="not a config tag"):
        bb.OurConfig.parse("128x128_w8")


def test_occupancy_estimate(lib) -> None:
    # 250 registers x 128 threads: 8 warps of registers fit, so 2 CTAs of 4 warps.
    attrs = {"registers": 250, "dynamic_shared_bytes": 65536, "static_shared_bytes": 0}
    assert lib.occupancy(attrs, 4) == {"ctas_per_sm": 2, "limited_by": "registers"}
    attrs = {"registers": 96, "dynamic_shared_bytes": 131072, "static_shared_bytes": 0}
    assert lib.occupancy(attrs, 4) == {"ctas_per_sm": 1, "limited_by": "shared"}


def test_build_command_adds_tuned_configs(tmp_path: Path) -> None:
    from gemm_opt.runtime import read_bundle

    bb = _script("build_bundle")
    table = tmp_path / "t.json"
    entry = {"dtype": "float16", "shape": [64, 64, 64], "config": "64x128x64_w4"}
    table.write_text(json.dumps({"default": "128x128x64_w8", "entries": [entry]}))
    out = tmp_path / "b.bundle"
    assert (
        bb.main(["-o", str(out), "--dtypes", "fp16", "--tuned", "--config-table", str(table)]) == 0
    )
    bundle = read_bundle(out)
    assert bundle.names() == [
        "gemm_fp16_aligned",
        "gemm_fp16_any",
        "gemm_fp16_aligned_64x128x64_w4",
    ]
    k = bundle["gemm_fp16_aligned_64x128x64_w4"]
    assert k.num_warps == 4 and k.meta["config"] == "64x128x64_w4"
    assert [g.to_json() for g in k.grid] == [{"cdiv": ["M", 64]}, {"cdiv": ["N", 128]}, 1]
    assert {a.name: a.divisibility for a in k.args if a.name in ("N", "K", "M")} == {
        "M": 1,
        "N": 16,
        "K": 16,
    }


def test_build_command_refuses_a_bad_table(tmp_path: Path) -> None:
    bb = _script("build_bundle")
    table = tmp_path / "t.json"
    table.write_text(json.dumps({"entries": [{"config": "nonsense"}]}))
    with pytest.raises(SystemExit, match="not a config table"):
        bb.main(["-o", str(tmp_path / "b"), "--tuned", "--config-table", str(table)])
    assert not (tmp_path / "b").exists()


def test_committed_results_are_the_scripts_output() -> None:
    """results.md is what bench_gemm.py writes for results.json; the ncu table reads its CSV."""
    bench = _script("bench_gemm")
    results = H100 / "results" / "bench"
    result = json.loads((results / "results.json").read_text())
    assert bench.markdown(result) == (results / "results.md").read_text()
    assert result["all_correct"] and len(result["timings"]) == 12
    for row in result["timings"]:
        assert row["ours_vs_cublas"] == pytest.approx(
            row["ours_tflops"] / row["cublas_tflops"], abs=2e-3
        )
    ncu = _script("ncu_summary")
    for name in ("ncu_4096_fp16", "ncu_8192x8192x1024_fp16"):
        labels = (results / f"{name}.md").read_text().splitlines()[0].split(" | ")[1:]
        labels[-1] = labels[-1].removesuffix(" |")
        text = ncu.table(ncu.read(results / f"{name}.csv"), labels)
        assert text == (results / f"{name}.md").read_text(), name
    with pytest.raises(ValueError, match="no ncu CSV header"):
        ncu.read(results / "results.csv")


def test_close_calls_go_to_the_final_round(lib) -> None:
    """The tuner times again every candidate within 3% of the best, best first."""
    rates = {"64x128x128": 221.0, "128x64x128": 223.0, "128x64x64": 201.0, "64x64x64": 216.4}
    assert lib.finalists(rates) == ["128x64x128", "64x128x128", "64x64x64"]
    assert lib.finalists(rates, within=0.0) == ["128x64x128"]
    assert lib.finalists({"only": 1.0}) == ["only"]
    with pytest.raises(ValueError, match="no candidates"):
        lib.finalists({})
    with pytest.raises(ValueError, match="within must be in"):
        lib.finalists(rates, within=1.5)
