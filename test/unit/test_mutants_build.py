"""What a bundle records of a kernel, at the edges no compiled GEMM reaches
(found by ``benchmarks/mutation.py`` in ``gemm_opt.runtime.build``): every
integer width, arguments without attributes, Triton's metadata defaults, host
descriptors naming arguments, and the Triton-kernel path's argument checks."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context, tile
from gemm_opt.runtime import BundleError
from gemm_opt.runtime.build import (
    POINTER_DIVISIBILITY,
    _describe,
    _ptx_target,
    _tensormap,
    _triton_type,
    bundle_triton_kernel,
    ptx_parameter_sizes,
    tile_arguments,
    triton_arguments,
)
from gemm_opt.runtime.bundle import Arg, Scratch


@pytest.mark.parametrize("width", [1, 8, 16, 32, 64])
def test_every_launcher_integer_width(width: int) -> None:
    with make_context():
        assert _triton_type(ir.IntegerType.get_signless(width)) == f"i{width}"
        assert _triton_type(ir.IntegerType.get_unsigned(width)) == f"u{width}"
        ptr = tile.PtrType.get(ir.TypeAttr.get(ir.IntegerType.get_signless(width)))
        assert _triton_type(ptr) == f"*i{width}"


@pytest.mark.parametrize("width", [2, 9, 17, 33, 128])
def test_other_integer_widths_have_no_launcher_type(width: int) -> None:
    with make_context(), pytest.raises(BundleError, match=f"argument type i{width} has no"):
        _triton_type(ir.IntegerType.get_signless(width))


BARE = """
func.func @k(%n: i32, %a: !tile.ptr<f16>) {
  return
}
"""

STATED = """
func.func @k(%a: !tile.ptr<f16> {tt.divisibility = 8 : i32},
             %n: i32 {tile.divisibility = 16 : i32}, %m: i32) {
  return
}
"""


@pytest.mark.parametrize(
    ("text", "divisibility"),
    [
        (BARE, [1, POINTER_DIVISIBILITY]),
        # A pointer's alignment is the lowering's, whatever the function states.
        (STATED, [POINTER_DIVISIBILITY, 16, 1]),
    ],
)
def test_argument_divisibility(text: str, divisibility: list[int]) -> None:
    with make_context():
        module = ir.Module.parse(text)
        args = tile_arguments(module, ["x", "y", "z"][: len(divisibility)])
    assert [a.divisibility for a in args] == divisibility
    assert [a.type for a in args] == (["i32", "*fp16"] if text == BARE else ["*fp16", "i32", "i32"])


def test_a_bare_target_directive_is_no_target() -> None:
    with pytest.raises(BundleError, match=r"no \.target directive"):
        _ptx_target(".version 8.4\n.target\n")
    assert _ptx_target(".version 8.4\n.target sm_90a, debug\n") == "sm_90a"


def test_host_descriptors_name_their_arguments() -> None:
    args = [Arg("a", "*fp16", 16), Arg("M", "i32", 1), Arg("K", "i32", 1)]
    t = {
        "base": 0,
        "shape": [("arg", 1), ("arg", 2)],
        "strides": [("arg", 2), ("const", 1)],
        "block": [64, 32],
        "swizzle": 3,
        "elem_bytes": 2,
        "dtype": 6,
    }
    tm = _tensormap(t, args)
    assert (tm.base, tm.shape, tm.strides, tm.block) == ("a", ("M", "K"), ("K", 1), (64, 32))


#: The entry of a kernel of ``(*fp16 a, i32 n)``: its arguments, then Triton's
#: global and profile scratch pointers.
PTX = """
.version 8.4
.target sm_90a
.address_size 64
.visible .entry k(
\t.param .u64 .ptr .global .align 1 k_param_0,
\t.param .u32 k_param_1,
\t.param .u64 .ptr .global .align 1 k_param_2,
\t.param .u64 .ptr .global .align 1 k_param_3
)
"""


def _kernel(md: dict) -> object:
    return _describe(
        md,
        name="k",
        symbol="k",
        ptx=PTX,
        binary=b"\0",
        args=[Arg("a", "*fp16", 16), Arg("n", "i32", 1)],
        grid=[("n", 64), 1, 1],
        target="cuda:90",
        meta=None,
    )


def test_metadata_defaults_are_tritons() -> None:
    k = _kernel({"num_warps": 4, "shared": 1024})
    assert (k.threads_per_warp, k.num_ctas) == (32, 1)
    assert (k.global_scratch, k.profile_scratch) == (Scratch(0, 1), Scratch(0, 1))
    assert (k.triton, k.triton_hash, k.sm) == ("", "", "sm_90a")


def test_metadata_is_recorded() -> None:
    md = {
        "num_warps": 8,
        "shared": 4096,
        "warp_size": 32,
        "num_ctas": 1,
        "global_scratch_size": 256,
        "global_scratch_align": 16,
        "profile_scratch_size": 64,
        "profile_scratch_align": 8,
    }
    k = _kernel(md)
    assert (k.global_scratch, k.profile_scratch) == (Scratch(256, 16), Scratch(64, 8))


def test_the_entry_may_start_the_ptx() -> None:
    assert ptx_parameter_sizes(".entry k(.param .u32 a, .param .u64 b)") == [4, 8]


@pytest.mark.parametrize(
    ("signature", "constexprs", "divisibility", "unknown"),
    [
        ({"x": "i32", "z": "i32"}, {}, {}, "z"),
        ({"x": "i32"}, {"z": 1}, {}, "z"),
        ({"x": "i32"}, {}, {"z": 16}, "z"),
    ],
)
def test_every_name_given_is_an_argument(signature, constexprs, divisibility, unknown) -> None:
    with pytest.raises(BundleError, match=f"the kernel has no argument '{unknown}'"):
        triton_arguments(["x"], signature, constexprs=constexprs, divisibility=divisibility)


def test_triton_arguments_types_and_facts() -> None:
    names = ["a", "n", "BLOCK", "SCALE"]
    signature = {"a": "*fp16", "n": "i32", "BLOCK": "constexpr", "SCALE": "constexpr"}
    args = triton_arguments(
        names, signature, constexprs={"BLOCK": 64, "SCALE": 0.5}, divisibility={"a": 16}
    )
    assert args == [
        Arg("a", "*fp16", 16),
        Arg("n", "i32", 1),
        Arg("BLOCK", "i32", 1, 64),
        Arg("SCALE", "fp32", 1, 0.5),
    ]
    with pytest.raises(BundleError, match="bundles carry numbers only"):
        triton_arguments(["F"], {"F": "constexpr"}, constexprs={"F": True})


def test_a_triton_kernel_without_a_cubin_is_refused() -> None:
    compiled = SimpleNamespace(
        metadata={"target": SimpleNamespace(backend="cuda"), "num_warps": 4, "shared": 0},
        asm={"ptx": PTX},
        name="k",
    )
    with pytest.raises(BundleError, match="k: not a CUDA kernel"):
        bundle_triton_kernel(
            compiled, ["a", "n"], {"a": "*fp16", "n": "i32"}, name="k", grid=[1, 1, 1]
        )
