"""``benchmarks/h100/stream_k_fixups.py`` where there is no GPU: its cases and failures.

The script runs on the GPU machine with only torch and the bundles; here it
must import, name only kernels the bundles hold (a missing one would stop
the run there), describe each grid from the host partition, and exit 2
without a GPU.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.scripts import load_script

from gemm_opt.kernels import h100_configs as h100
from gemm_opt.kernels.build_bundles import bundle_specs

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "h100" / "stream_k_fixups.py"
H100_SMS = 132


def test_every_case_runs_a_bundled_kernel():
    bench = load_script(SCRIPT, "bench_stream_k_fixups")
    bundled = {(s.kind, s.reduction, s.dtype, s.block_m, s.block_n, s.block_k, s.num_warps)
               for s in bundle_specs(("bf16",))}  # fmt: skip
    cases = bench.cases()
    splits = len(h100.SPLIT_K_CLASSES) * len(bench.SPLIT_K_GRIDS)
    assert len(cases) == len(bench.SHAPES) * (3 * 2 * 2 + splits)
    assert {c.schedule for c in cases} == {"stream-k", "split-k"}
    for case in cases:
        cfg = h100.GPU_CONFIGS[case.config_name(H100_SMS)]
        key = (case.schedule, case.reduction, "bf16", cfg.block_m, cfg.block_n, cfg.block_k)
        assert (*key, cfg.num_warps) in bundled, case


def test_partition_facts_name_contributors_and_the_critical_path():
    bench = load_script(SCRIPT, "bench_stream_k_fixups")
    case = bench.Case(512, 512, 8192, "linear", "resident", "class")
    assert case.config_name(H100_SMS) == "small"
    facts = bench.partition_facts(case, h100.GPU_CONFIGS["small"], 132)
    # 64 tiles of 64 iterations (K blocks of 128) over 132 programs: 31 or 32 each,
    # so a tile's 64 iterations meet 2 to 4 programs
    assert facts.split() == ["tiles", "64", "contributors", "2-4", "path", "34", "of", "work", "32"]


def test_split_k_facts_name_the_slices():
    """512x512x8192 on 2 x 132 programs: 64 tiles of 64 iterations, 4 slices of 16."""
    bench = load_script(SCRIPT, "bench_stream_k_fixups")
    case = bench.Case(512, 512, 8192, None, "2sm", "class", "split-k")
    assert case.config_name(H100_SMS) == "small" and case.num_programs(H100_SMS) == 264
    facts = bench.partition_facts(case, h100.GPU_CONFIGS["small"], 256)
    assert facts.split() == ["tiles", "64", "slices", "4", "iterations", "16-16", "of", "64"]


def test_without_a_gpu_it_exits_2():
    env = {"PYTHONPATH": str(SCRIPT.parents[2] / "python"), "PATH": "/usr/bin:/bin"}
    r = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, check=False, env=env
    )
    assert r.returncode == 2
    assert "stream_k_fixups: error: no CUDA GPU" in r.stderr
