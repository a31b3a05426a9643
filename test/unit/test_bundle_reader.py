"""The bundle reader turns every malformed document into BundleError, and refuses the
values a launch could only fail on, against the target table's limits."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from support.bundle_docs import document, full_kernel

from gemm_opt.core.targets import TARGETS
from gemm_opt.runtime import Arg, Bundle, BundleError, loads
from gemm_opt.runtime.bundle import MAX_DEPTH, MAX_GRID, int_range

CUDA90 = TARGETS["cuda:90"]


def mutated(change: Callable[[dict[str, Any]], Any]) -> str:
    """The document's text after ``change`` edits its first kernel."""
    d = copy.deepcopy(document())
    change(d["kernels"][0])
    return json.dumps(d)


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def setter(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda k: k.__setitem__(key, value)


def arg(name: str, **fields: Any) -> Callable[[dict[str, Any]], None]:
    def change(k: dict[str, Any]) -> None:
        (a,) = [a for a in k["args"] if a["name"] == name]
        a.update(fields)

    return change


def tensormap(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda k: k["tensormaps"][0].__setitem__(key, value)


BAD: list[Any] = [
    # malformed JSON that used to escape as another exception
    pytest.param(
        setter("meta", {"deep": nested(MAX_DEPTH)}),
        r"kernels\[0\]\.meta\.deep(\[0\])+: nested deeper than 32 levels",
        id="deep-walk",
    ),
    pytest.param(
        tensormap("shape", [["M"], "K"]),
        r"tensormaps\[0\]\.shape\[0\]: expected a constant 0 to 2147483647 or an integer "
        r"argument whose values fit i32 \(as the entry is passed\), got \['M'\]",
        id="list-in-shape",
    ),
    pytest.param(
        tensormap("strides", [{"lda": 1}, 1]), r"strides\[0\]: expected a constant", id="obj-stride"
    ),
    pytest.param(
        setter("sm", "sm_\u00b2\u00b3a"),
        r"\.sm: expected an SM name like 'sm_90a', got 'sm_²³a'",
        id="unicode-digits",
    ),
    pytest.param(
        setter("sm", "sm_\u0669\u0660a"), r"\.sm: expected an SM name", id="arabic-digits"
    ),
    pytest.param(setter("sm", "sm_90ab"), r"\.sm: expected an SM name", id="two-suffixes"),
    pytest.param(setter("sm", "sm_9a"), r"\.sm: expected an SM name", id="one-digit"),
    pytest.param(
        setter("symbol", "gemm\u00e9"), r"\.symbol: 'gemmé' is not a PTX identifier", id="symbol"
    ),
    pytest.param(setter("symbol", ""), r"\.symbol: '' is not a PTX identifier", id="no-symbol"),
    # values that could only fail at launch
    pytest.param(
        setter("threads_per_warp", 64),
        r"\.threads_per_warp: cuda:90 has warps of 32 threads, got 64",
        id="warp-64",
    ),
    pytest.param(
        setter("shared_bytes", 2**70),
        r"\.shared_bytes: 1180591620717411303424 bytes exceed the 232448 bytes of shared memory "
        "one cuda:90 block may allocate",
        id="shared-2**70",
    ),
    pytest.param(
        arg("BLOCK_M", constexpr=2**31),
        r"args\[9\]\.constexpr: 2147483648 does not fit i32 \(-2147483648 to 2147483647\)",
        id="constexpr-i32-range",
    ),
    pytest.param(
        arg("BLOCK_M", constexpr=-(2**31) - 1), r"does not fit i32", id="constexpr-i32-low"
    ),
    pytest.param(
        arg("BLOCK_M", constexpr=1.5),
        r"\.constexpr: expected an integer for a i32 argument, got 1\.5",
        id="constexpr-float-on-i32",
    ),
    pytest.param(
        arg("BLOCK_M", constexpr=True), r"\.constexpr: expected a number, got a boolean", id="bool"
    ),
    pytest.param(arg("SCALE", type="fp16", constexpr=1e5), r"100000\.0 overflows fp16", id="fp16"),
    pytest.param(arg("SCALE", constexpr=1e300), r"1e\+300 overflows fp32", id="fp32"),
    pytest.param(arg("SCALE", constexpr=10**400), r"overflows fp32", id="big-int-fp32"),
    pytest.param(
        lambda k: k["grid"].__setitem__(0, -1),
        r"grid\[0\]: a constant dimension must be at least 1, got -1",
        id="grid-negative",
    ),
    pytest.param(
        lambda k: k["grid"].__setitem__(0, 2**31),
        r"grid\[0\]: a CUDA launch has at most 2147483647 here, got 2147483648",
        id="grid-x-huge",
    ),
    pytest.param(
        lambda k: k["grid"].__setitem__(1, 65536),
        r"grid\[1\]: a CUDA launch has at most 65535 here, got 65536",
        id="grid-y",
    ),
    pytest.param(
        lambda k: k["grid"].__setitem__(2, 65536), r"grid\[2\]: .* at most 65535", id="grid-z"
    ),
    pytest.param(
        setter("num_warps", -8), r"\.num_warps: must be at least 1, got -8", id="warps-negative"
    ),
    pytest.param(
        setter("num_warps", 2**40),
        "1099511627776 warps of 32 exceed 1024 threads, the most one cuda:90 block launches",
        id="warps-huge",
    ),
    pytest.param(setter("num_warps", 12), r"\.num_warps: must be a power of two", id="warps-12"),
    pytest.param(
        setter("target", "gfx1250"),
        r"\.target: bundles hold CUDA kernels: 'gfx1250' is not one of cuda:90",
        id="amd-target",
    ),
    pytest.param(setter("target", "cuda:80"), r"'cuda:80' is not one of", id="unknown-target"),
    # host descriptors whose entries cannot travel as the launcher packs them
    pytest.param(tensormap("shape", [2**31, "K"]), r"shape\[0\]: expected a constant 0 to", id="s"),
    pytest.param(
        lambda k: (arg("M", type="u32")(k), tensormap("shape", ["M", "K"])(k)),
        r"tensormaps\[0\]\.shape\[0\]: .* got 'M'",
        id="u32-shape",
    ),
    pytest.param(
        lambda k: (arg("lda", type="u64")(k), tensormap("strides", ["lda", 1])(k)),
        r"tensormaps\[0\]\.strides\[0\]: .*fit i64.* got 'lda'",
        id="u64-stride",
    ),
    pytest.param(tensormap("strides", [2**63, 1]), r"strides\[0\]: expected a constant", id="st"),
]


@pytest.mark.parametrize(("change", "message"), BAD)
def test_a_malformed_kernel_is_a_bundle_error(change, message: str) -> None:
    with pytest.raises(BundleError, match=message):
        loads(mutated(change), "x.bundle")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 100_000, r"^x\.bundle: not a bundle: nested deeper than 32 levels$"),
        ('{"format": "gemm-opt-bundle", "version": 1, "version": 1, "kernels": []}', "twice"),
        ('{"format": "gemm-opt-bundle", "version": NaN, "kernels": []}', "NaN is not a JSON"),
        ('{"format": "gemm-opt-bundle", "version": -Infinity}', "-Infinity is not a JSON"),
        ('{"format": "gemm-opt-bundle", "version": 1e999}', r"version: inf is not a finite"),
        ('{"format": "gemm-opt-bundle", "version": ' + "9" * 5000 + "}", "invalid JSON"),
        ('{"format": "gemm-opt-bundle", "x": "\\ud800"}', r"^x\.bundle: x: not valid Unicode"),
        ('{"format": "gemm-opt-bundle", "\\udfff": 1}', r"'\\udfff': a field name is not valid"),
        ('{"format": "gemm-opt-bundle", "version": true, "kernels": []}', "version True;"),
        ('{"format": "gemm-opt-bundle", "version": 1.0, "kernels": []}', "version 1.0;"),
    ],
    ids=[
        "deep",
        "duplicate",
        "nan",
        "infinity",
        "overflow",
        "digits",
        "surrogate",
        "surrogate-key",
        "bool-version",
        "float-version",
    ],
)
def test_a_malformed_document_is_a_bundle_error(text: str, message: str) -> None:
    with pytest.raises(BundleError, match=message):
        loads(text, "x.bundle")


def test_a_document_too_deep_to_parse() -> None:
    """Deeper than the parser's stack (RecursionError inside json) in a kernel's meta."""
    text = mutated(setter("meta", {"deep": "@"})).replace('"@"', "[" * 100_000 + "]" * 100_000)
    with pytest.raises(BundleError, match=r"^x\.bundle: not a bundle: nested deeper than 32"):
        loads(text, "x.bundle")


def test_nan_constexpr_on_an_int_argument() -> None:
    text = mutated(arg("BLOCK_M", constexpr=0)).replace('"constexpr": 0', '"constexpr": NaN')
    assert "NaN" in text
    with pytest.raises(BundleError, match="NaN is not a JSON number"):
        loads(text)
    # A NaN the writer would produce is refused before anything is written.
    nan = full_kernel(args=(*full_kernel().args, Arg("F", "fp32", constexpr=float("nan"))))
    with pytest.raises(BundleError, match="NaN is not a JSON number"):
        loads(Bundle((nan,)).dumps())


def test_every_limit_of_the_target_holds_at_the_byte() -> None:
    """The target table's limits, exactly: the limit passes, one more is refused."""
    warps = CUDA90.max_threads_per_block // CUDA90.warp_size
    loads(mutated(setter("shared_bytes", CUDA90.shared_memory_bytes)))
    with pytest.raises(BundleError, match="232449 bytes exceed the 232448"):
        loads(mutated(setter("shared_bytes", CUDA90.shared_memory_bytes + 1)))
    loads(mutated(setter("num_warps", warps)))
    with pytest.raises(BundleError, match=f"{2 * warps} warps of 32 exceed 1024"):
        loads(mutated(setter("num_warps", 2 * warps)))
    for i, high in enumerate(MAX_GRID):
        loads(mutated(lambda k, i=i, high=high: k["grid"].__setitem__(i, high)))
        with pytest.raises(BundleError, match=rf"grid\[{i}\]: a CUDA launch has at most"):
            loads(mutated(lambda k, i=i, high=high: k["grid"].__setitem__(i, high + 1)))
    low, high = int_range("i32")
    for ok in (low, high):
        assert loads(mutated(arg("BLOCK_M", constexpr=ok))).kernels[0].args[-3].constexpr == ok
    for bad in (low - 1, high + 1):
        with pytest.raises(BundleError, match="does not fit i32"):
            loads(mutated(arg("BLOCK_M", constexpr=bad)))
    loads(mutated(arg("SCALE", type="fp16", constexpr=65504.0)))  # fp16's largest
    with pytest.raises(BundleError, match="overflows fp16"):
        loads(mutated(arg("SCALE", type="fp16", constexpr=65520.0)))  # rounds to infinity
    loads(mutated(setter("meta", {"deep": nested(MAX_DEPTH - 4)})))  # 32 levels in all
    with pytest.raises(BundleError, match="nested deeper than 32"):
        loads(mutated(setter("meta", {"deep": nested(MAX_DEPTH - 3)})))


def test_descriptor_entries_fit_how_they_travel() -> None:
    """A shape entry travels as i32 and a stride as i64: the widest constant and the
    widest argument type of each are taken."""
    i32_max, i64_max = int_range("i32")[1], int_range("i64")[1]
    loads(mutated(tensormap("shape", [i32_max, "K"])))
    loads(mutated(tensormap("strides", [i64_max, 1])))
    loads(mutated(lambda k: (arg("lda", type="i64")(k), tensormap("strides", ["lda", 1])(k))))
    for ty in ("i1", "i8", "i16", "u8", "u16", "i32"):
        loads(mutated(lambda k, ty=ty: arg("K", type=ty)(k)))
    for ty in ("u32", "i64", "u64"):
        with pytest.raises(BundleError, match=r"tensormaps\[0\]\.shape\[1\]: .* got 'K'"):
            loads(mutated(lambda k, ty=ty: arg("K", type=ty)(k)))
    for bad in (-1, True, 1.0, None):
        with pytest.raises(BundleError, match=r"shape\[0\]: expected a constant"):
            loads(mutated(tensormap("shape", [bad, "K"])))


def test_the_full_document_round_trips() -> None:
    bundle = loads(json.dumps(document()))
    assert bundle.to_json() == document()
    assert loads(bundle.dumps()).kernels == bundle.kernels
