"""The warp-specialized Gluon GEMM: compiled by Triton 3.9.0 for sm_90, bundled, launched by name.

Compiles the smallest config (128x128x64, one consumer warpgroup) once for
cuda:90 on the CPU and checks what makes it the reference it is meant to be:
wgmmas fed by TMA copies, a producer partition whose registers ``setmaxnreg``
gives to the consumers, nothing spilled, descriptors built on the device
(global scratch), and the calling convention the bench uses for it.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from support.scripts import load_script

from gemm_opt.runtime import pack_arguments, parameter_sizes
from gemm_opt.runtime.build import ptx_parameter_sizes

H100 = Path(__file__).resolve().parents[2] / "benchmarks" / "h100"


def _script(name: str):
    return load_script(H100 / f"{name}.py")


@pytest.fixture(scope="module")
def gw():
    return _script("gluon_ws_gemm")


@pytest.fixture(scope="module")
def config(gw):
    return gw.Config(128, 128, 64, 4, 4)


@pytest.fixture(scope="module")
def compiled(gw, config):
    return gw.compile_config(config, "fp16")


@pytest.fixture(scope="module")
def kernel(gw, config):
    (k,) = gw.bundle_kernels(["fp16"], (config,), quiet=True)
    return k


def test_the_ptx_is_warp_specialized_tma_and_wgmma(gw, config, compiled) -> None:
    ptx = compiled.asm["ptx"]
    facts = gw.ptx_facts(ptx)
    assert facts["wgmma"] > 0 and "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in ptx
    # A (one 128-byte-swizzled box) and B (two boxes of 64 columns), then the C store
    assert facts["tma_loads"] == 3 and facts["tma_stores"] == 1
    # The producer gives up registers, the consumer warpgroup takes them.
    assert facts["setmaxnreg"] == [f"dec {config.producer_regs}", "inc 256"]
    assert not facts["local"] and ".local" not in ptx
    # One wgmma in flight in the K loop, all of them waited for before the epilogue.
    assert set(re.findall(r"wgmma\.wait_group\.sync\.aligned (\d+);", ptx)) == {"0", "1"}


def test_the_compiled_kernel_has_the_resources_of_its_config(gw, config, compiled) -> None:
    md = compiled.metadata
    # 4 consumer warps, and the producer's warp rounded up to a warpgroup
    assert md.num_warps == config.total_warps == 8
    assert config.maxnreg == 256 and gw.Config(128, 256, 64, 3, 8).maxnreg == 168
    assert config.shared_bytes <= md.shared <= gw.MAX_SHARED_BYTES
    # three TMA descriptors made on the device: 128 bytes of global scratch each
    assert (md.global_scratch_size, md.global_scratch_align) == (3 * 128, 128)


def test_a_config_over_the_shared_memory_limit_is_refused(gw) -> None:
    big = gw.Config(128, 256, 64, 4, 8)  # 4 stages of 48 KiB and a 64 KiB C buffer
    assert big.shared_bytes > gw.MAX_SHARED_BYTES
    with pytest.raises(ValueError, match=r"128x256x64_s4_w8_g8_tmastore_pers: 262144 B"):
        gw.compile_config(big, "fp16")


def test_every_config_fits_one_sm(gw) -> None:
    tags = [c.tag for c in gw.CONFIGS]
    assert len(set(tags)) == len(tags)
    assert {(c.persistent, c.block_n, c.num_warps) for c in gw.CONFIGS} >= {
        (True, 256, 8),
        (True, 128, 4),
        (True, 128, 8),
        (False, 256, 8),
    }
    for c in gw.CONFIGS:
        assert c.shared_bytes <= gw.MAX_SHARED_BYTES, c.tag
        assert c.maxnreg * 32 * c.total_warps <= gw.SM_REGISTERS, c.tag


def test_bundle_records_the_binarys_calling_convention(config, kernel, compiled) -> None:
    assert parameter_sizes(kernel) == ptx_parameter_sizes(compiled.asm["ptx"])
    # a, b, c, M, N, K, stride_am, stride_bk, stride_cm, global and profile scratch
    assert parameter_sizes(kernel) == [8, 8, 8, 4, 4, 4, 4, 4, 4, 8, 8]
    assert kernel.symbol == "gemm_ws_kernel" and kernel.sm == "sm_90a"
    assert kernel.num_warps == 8 and kernel.global_scratch.bytes == 384
    assert [g.to_json() for g in kernel.grid] == [1, 1, 1]  # persistent: launchers widen it
    meta = kernel.meta
    assert meta["kind"] == "gluon-ws" and meta["persistent"] and meta["config"] == config.tag
    assert meta["block"] == {"M": 128, "N": 128, "K": 64}
    consts = {a.name: a.constexpr for a in kernel.args if a.constexpr is not None}
    assert consts == {
        "stride_ak": 1,
        "stride_bn": 1,
        "stride_cn": 1,
        "BLOCK_M": 128,
        "BLOCK_N": 128,
        "BLOCK_K": 64,
        "GROUP_M": 8,
        "NUM_STAGES": 4,
        "PERSISTENT": 1,
        "EPILOGUE_TMA": 1,
        "PRODUCER_REGS": 40,
        "CONSUMER_REGS": 256,
    }


def test_a_non_persistent_config_has_a_program_per_tile(gw) -> None:
    assert gw.Config(128, 256, 64, 3, 8, persistent=False).grid() == [("M", 128), ("N", 256), 1]


def test_register_budgets_of_the_partitions(gw) -> None:
    c = gw.Config(128, 256, 64, 3, 8)
    # 8 consumer warps and the producer's warpgroup: 168 registers a thread at launch,
    # 232 for the consumers once the producer has given its own up (down to 40)
    assert (c.total_warps, c.maxnreg, c.consumer_regs) == (12, 168, 232)
    assert c.shared_bytes == 3 * (128 + 256) * 64 * 2 + 128 * 256 * 2  # ring and C buffer


def test_the_bench_launches_it_by_argument_name(kernel) -> None:
    bench = _script("bench_gemm")
    m, n, k = 256, 384, 512
    a, b, c = torch.empty(m, k), torch.empty(k, n), torch.empty(m, n)
    spec = SimpleNamespace(spec=kernel)
    args = list(bench.Kernels.named_call(spec, a, b, c))
    assert args[:3] == [a, b, c] and len(args) == len(kernel.args)
    args[:3] = [0x10000, 0x20000, 0x30000]  # device addresses instead of CPU tensors
    params, _ = pack_arguments(kernel, args)
    scalars = [struct.unpack("<i", p)[0] for p in params[3:9]]
    assert scalars == [m, n, k, k, n, n]  # M, N, K, stride_am, stride_bk, stride_cm
    assert bench.Kernels.eligible(spec, bench.Kernels.triton_scalars(m, n, k))
    assert not bench.Kernels.eligible(spec, bench.Kernels.triton_scalars(m, n, 100))


def _fake(kind: str, config: str, **meta: object) -> SimpleNamespace:
    return SimpleNamespace(
        spec=SimpleNamespace(meta={"kind": kind, "config": config, "dtype": "float16", **meta})
    )


def test_bench_and_tune_sort_the_bundles_kernels_by_kind() -> None:
    bench = _script("bench_gemm")
    tune = _script("tune")
    loaded = [
        _fake("ours", "128x128x64_w8", variant="aligned"),
        _fake("ours", "128x128x64_w4", variant="aligned"),
        _fake("triton", "128x256x64_s3_w8_g8"),
        _fake("gluon-ws", "128x256x64_s3_w8_g8_tmastore_pers"),
    ]
    kernels = bench.Kernels(loaded, "float16")
    assert list(kernels.gluon_ws) == ["128x256x64_s3_w8_g8_tmastore_pers"]
    assert list(kernels.triton) == ["128x256x64_s3_w8_g8"]
    assert list(kernels.ours) == ["128x128x64_w8", "128x128x64_w4"]
    # the reference kernels are not configs of ours to tune
    assert list(tune.candidates(loaded, "float16")) == ["128x128x64_w8", "128x128x64_w4"]
    assert not bench.Kernels(loaded[:3], "float16").gluon_ws


def test_bench_markdown_has_a_gluon_column_only_when_the_run_had_it() -> None:
    bench = _script("bench_gemm")
    row = {
        "shape": "4096x4096x4096",
        "dtype": "float16",
        "ours_tflops": 600.0,
        "triton_tflops": 580.0,
        "cublas_tflops": 640.0,
        "ours_vs_cublas": 0.938,
        "ours_vs_triton": 1.034,
        "triton_vs_cublas": 0.906,
        "ours_config": "128x256x64_w8",
        "triton_config": "128x256x64_s3_w8_g8",
    }
    env = {
        "gpu": "H100",
        "capability": "sm_90",
        "sms": 132,
        "torch": "t",
        "cuda": "c",
        "date": "d",
        "compiled_with": "triton 3.9.0",
        "bundle": "b",
        "bundle_sha256": "0" * 64,
        "config_table": "none",
        "triton_imported": False,
    }
    result = {"environment": env, "method": "m", "kernels": [], "checks": []}
    plain = bench.markdown({**result, "timings": [row]})
    assert "Gluon" not in plain
    gluon = {
        **row,
        "gluon_ws_config": "128x256x64_s3_w8_g8_tmastore_pers",
        "gluon_ws_tflops": 650.0,
        "gluon_ws_vs_cublas": 1.016,
        "ours_vs_gluon_ws": 0.923,
    }
    text = bench.markdown({**result, "timings": [gluon, row]})
    lines = text.splitlines()
    assert lines[0].endswith("vs warp-specialized Gluon")
    header = next(i for i, line in enumerate(lines) if line.startswith("| shape (MxNxK)"))
    widths = {line.count("|") for line in lines[header : header + 4]}
    assert widths == {15}  # 14 columns in the header, the rule and both rows
    assert "| 650.0 | 1.02 | 0.92 | 128x256x64_s3_w8_g8_tmastore_pers |" in lines[header + 2]
    assert lines[header + 3].endswith("| n/a | n/a | n/a | n/a |")
