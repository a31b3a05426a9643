"""Building bundles: the example GEMM compiled for cuda:90 with Triton 3.9.0.

The metadata must describe the binary: the bundle's argument list, packed as
the launcher packs it, has to match the kernel's parameter list in the PTX
(every argument, then Triton's two scratch pointers), and the block size,
shared memory and SM have to be the compiled kernel's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.scripts import load_script

from gemm_opt.core.ext_compat import func, ir
from gemm_opt.lowering.compile import compile_tile_module
from gemm_opt.runtime import BundleError, parameter_sizes, read_bundle
from gemm_opt.runtime.build import build_kernel, ptx_parameter_sizes, tile_arguments

ROOT = Path(__file__).resolve().parents[2]


def _build_bundle_script():
    return load_script(ROOT / "benchmarks" / "h100" / "build_bundle.py")


@pytest.fixture(scope="module")
def variants():
    return {v["name"]: v for v in _build_bundle_script().gemm_variants(["fp16"])}


@pytest.fixture(scope="module")
def aligned(variants):
    # with its own pipeline: cp.async, as the bundle builds it (auto would take TMA)
    return _build_bundle_script().build_variant(variants["gemm_fp16_aligned"])


def test_gemm_metadata_describes_the_binary(aligned, variants) -> None:
    k = aligned
    assert k.symbol == "gemm" and k.target == "cuda:90" and k.sm == "sm_90a"
    assert k.num_warps == 8 and k.threads == 256 and k.num_ctas == 1
    assert k.shared_bytes == 2 * (128 * 64 + 64 * 128) * 2  # two buffers of A and B tiles
    assert k.global_scratch.bytes == 0 and k.profile_scratch.bytes == 0
    assert k.binary.startswith(b"\x7fELF")
    assert k.triton == "3.9.0" and k.gemm_opt
    assert [(a.name, a.type, a.divisibility) for a in k.args] == [
        ("a", "*fp16", 16),
        ("b", "*fp16", 16),
        ("c", "*fp16", 16),
        ("M", "i32", 1),
        ("N", "i32", 16),
        ("K", "i32", 16),
        ("lda", "i64", 16),
        ("ldb", "i64", 16),
        ("ldc", "i64", 16),
    ]
    assert [g.to_json() for g in k.grid] == [{"cdiv": ["M", 128]}, {"cdiv": ["N", 128]}, 1]
    v = variants["gemm_fp16_aligned"]
    ptx = compile_tile_module(v["module"], "cuda:90", pipeline=v["pipeline"]).asm["ptx"]
    assert ptx_parameter_sizes(ptx) == parameter_sizes(k) == [8, 8, 8, 4, 4, 4, 8, 8, 8, 8, 8]
    # Under the default pipeline the copies are TMA copies, whose descriptors
    # the host encodes: a 128-byte map, two i32 extents and two i64 strides each.
    tma = compile_tile_module(v["module"], "cuda:90").asm["ptx"]
    assert ptx_parameter_sizes(tma) == [8, 8, 8, 4, 4, 4, 8, 8, 8] + [128, 4, 4, 8, 8] * 2 + [8, 8]
    assert ".reqntid 256" in ptx


def test_any_variant_states_no_integer_facts(variants) -> None:
    v = variants["gemm_fp16_any"]
    args = tile_arguments(v["module"], v["arg_names"])
    assert [a.divisibility for a in args] == [16, 16, 16, 1, 1, 1, 1, 1, 1]


def test_only_cuda_targets_make_bundles(variants) -> None:
    v = variants["gemm_fp16_any"]
    with pytest.raises(
        BundleError, match="bundles hold CUDA kernels: target 'gfx1250' is not one of cuda:90"
    ):
        build_kernel(v["module"], v["arg_names"], name="x", grid=[1, 1, 1], target="gfx1250")


def test_argument_names_must_cover_the_function(variants) -> None:
    v = variants["gemm_fp16_any"]
    with pytest.raises(BundleError, match="@gemm has 9 arguments; 2 names were given"):
        tile_arguments(v["module"], ["a", "b"])


def test_a_module_without_one_function_is_refused() -> None:
    from gemm_opt import dialect

    with dialect.make_context(False), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            for name in ("f", "g"):
                fn = func.FuncOp(name, ir.FunctionType.get([], []))
                with ir.InsertionPoint(fn.add_entry_block()):
                    func.ReturnOp([])
        with pytest.raises(BundleError, match=r"needs one func\.func, found 2"):
            tile_arguments(module, [])


def test_build_command_writes_a_readable_bundle(tmp_path: Path, capsys) -> None:
    script = _build_bundle_script()
    out = tmp_path / "gemm.bundle"
    assert script.main(["-o", str(out), "--dtypes", "bf16"]) == 0
    bundle = read_bundle(out)
    assert bundle.names() == ["gemm_bf16_aligned", "gemm_bf16_any"]
    assert bundle["gemm_bf16_any"].args[0].type == "*bf16"
    assert bundle["gemm_bf16_aligned"].meta["copies"] == "cp.async"
    assert "wrote" in capsys.readouterr().out


def test_build_command_misuse(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as e:
        _build_bundle_script().main(["-o", str(tmp_path / "x.bundle"), "--dtypes", "fp8"])
    assert e.value.code == 2
    assert not (tmp_path / "x.bundle").exists()
