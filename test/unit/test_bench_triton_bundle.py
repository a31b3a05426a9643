"""The plain Triton baseline in a bundle: compiled by Triton 3.9.0, described for the launcher.

``bundle_triton_kernel`` must record the calling convention the binary
really has (checked against the PTX entry), the constexprs and divisibility
the kernel was specialised to (which the launcher then enforces), and the
metadata of the compiled kernel. The bench's argument order for the kernel
must be the one the bundle records.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
import torch
from support.scripts import load_script

from gemm_opt.runtime import ArgumentError, BundleError, pack_arguments, parameter_sizes
from gemm_opt.runtime.build import bundle_triton_kernel, ptx_parameter_sizes, triton_arguments

H100 = Path(__file__).resolve().parents[2] / "benchmarks" / "h100"


def _script(name: str):
    return load_script(H100 / f"{name}.py")


@pytest.fixture(scope="module")
def tg():
    return _script("triton_gemm")


@pytest.fixture(scope="module")
def config(tg):
    return tg.Config(64, 128, 64, 4, 4)


@pytest.fixture(scope="module")
def compiled(tg, config):
    return tg.compile_config(config, "fp16")


@pytest.fixture(scope="module")
def kernel(tg, config, compiled):
    return bundle_triton_kernel(
        compiled,
        tg.ARG_NAMES,
        tg.signature("fp16"),
        constexprs=tg.constexprs(config),
        divisibility={n: 16 for n in tg.DIVISIBLE_16},
        name="triton_fp16_test",
        grid=[("M", config.block_m), ("N", config.block_n), 1],
        meta={"kind": "triton", "config": config.tag, "dtype": "float16"},
    )


def test_triton_kernel_uses_wgmma_and_its_metadata_is_recorded(kernel, compiled, config) -> None:
    ptx = compiled.asm["ptx"]
    assert "wgmma.mma_async" in ptx  # Triton's own Hopper path, the level to beat
    assert kernel.symbol == "matmul_kernel" and kernel.sm == "sm_90a"
    assert kernel.num_warps == config.num_warps and kernel.threads == 128
    assert kernel.shared_bytes == compiled.metadata.shared > 48 * 1024
    assert kernel.binary == compiled.asm["cubin"] and kernel.triton == "3.9.0"
    assert [g.to_json() for g in kernel.grid] == [{"cdiv": ["M", 64]}, {"cdiv": ["N", 128]}, 1]


def test_parameters_match_the_ptx_entry(kernel, compiled) -> None:
    # a, b, c, M, N, K, stride_am, stride_bk, stride_cm, then the two scratch pointers
    assert parameter_sizes(kernel) == ptx_parameter_sizes(compiled.asm["ptx"])
    assert parameter_sizes(kernel) == [8, 8, 8, 4, 4, 4, 4, 4, 4, 8, 8]
    consts = {a.name: a.constexpr for a in kernel.args if a.constexpr is not None}
    assert consts == {
        "stride_ak": 1,
        "stride_bn": 1,
        "stride_cn": 1,
        "BLOCK_M": 64,
        "BLOCK_N": 128,
        "BLOCK_K": 64,
        "GROUP_M": 8,
    }
    divs = {a.name: a.divisibility for a in kernel.args if a.divisibility != 1}
    assert set(divs) == {"a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk"} | {
        "stride_cm"
    }


def test_bench_argument_order_is_the_bundles(tg, kernel) -> None:
    bench = _script("bench_gemm")
    m, n, k = 256, 384, 512
    a, b, c = torch.empty(m, k), torch.empty(k, n), torch.empty(m, n)
    args = list(bench.Kernels.triton_call(type("K", (), {"spec": kernel}), a, b, c))
    args[:3] = [0x10000, 0x20000, 0x30000]  # device addresses instead of CPU tensors
    params, _ = pack_arguments(kernel, args)
    scalars = [struct.unpack("<i", p)[0] for p in params[3:9]]
    assert scalars == [m, n, k, k, n, n]  # M, N, K, stride_am, stride_bk, stride_cm
    assert bench.Kernels.eligible(
        type("K", (), {"spec": kernel}), bench.Kernels.triton_scalars(m, n, k)
    )
    assert not bench.Kernels.eligible(
        type("K", (), {"spec": kernel}), bench.Kernels.triton_scalars(m, 100, k)
    )


def test_launcher_enforces_the_specialisation(kernel) -> None:
    ok = [0x10000, 0x20000, 0x30000, 256, 256, 256, 256, 1, 256, 1, 256, 1, 64, 128, 64, 8]
    pack_arguments(kernel, ok)
    unit = list(ok)
    unit[7] = 2  # stride_ak was compiled as the constant 1
    with pytest.raises(ArgumentError, match=r"'stride_ak' was specialized to 1"):
        pack_arguments(kernel, unit)
    ragged = list(ok)
    ragged[3] = 250  # M is stated a multiple of 16
    with pytest.raises(ArgumentError, match=r"'M'.*not a multiple of 16"):
        pack_arguments(kernel, ragged)


def test_a_signature_that_disagrees_with_the_binary_is_refused(tg, config, compiled) -> None:
    sig = dict(tg.signature("fp16"), M="i64")  # the binary takes a 32-bit M
    with pytest.raises(BundleError, match=r"PTX entry has parameters of sizes"):
        bundle_triton_kernel(
            compiled,
            tg.ARG_NAMES,
            sig,
            constexprs=tg.constexprs(config),
            name="bad",
            grid=[1, 1, 1],
        )


def test_bundling_refuses_non_cuda_targets(tg, config, compiled) -> None:
    with pytest.raises(BundleError, match=r"not one of cuda:90"):
        bundle_triton_kernel(
            compiled,
            tg.ARG_NAMES,
            tg.signature("fp16"),
            constexprs=tg.constexprs(config),
            name="x",
            grid=[1, 1, 1],
            target="gfx1250",
        )


@pytest.mark.parametrize(
    ("signature", "constexprs", "divisibility", "message"),
    [
        ({"x": "constexpr"}, {}, {}, r"constexpr argument 'x' has no value"),
        ({"x": "i32"}, {"x": 1}, {}, r"'x' has a value but is not 'constexpr'"),
        ({"x": "i32"}, {}, {"y": 16}, r"the kernel has no argument 'y'"),
        ({}, {}, {}, r"'x' is missing from the signature"),
        ({"x": "constexpr"}, {"x": "s"}, {}, r"bundles carry numbers only"),
    ],
)
def test_triton_arguments_errors(signature, constexprs, divisibility, message) -> None:
    with pytest.raises(BundleError, match=message):
        triton_arguments(["x"], signature, constexprs=constexprs, divisibility=divisibility)


def test_sass_mix_tells_wgmma_from_mma_sync(kernel) -> None:
    sass = _script("sass_mix")
    row = sass.mix(kernel.binary, sass.cuobjdump())
    assert row["HGMMA"] > 0 and row["HMMA"] == 0 and row["LDL/STL"] == 0
    assert row["total"] > row["HGMMA"]
