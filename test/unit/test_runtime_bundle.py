"""The bundle file format: round trip, and every way a bundle can be bad."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from gemm_opt.runtime import (
    Arg,
    Bundle,
    BundleError,
    BundleKernel,
    GridDim,
    Scratch,
    loads,
    read_bundle,
)

#: An ELF header is all the format checks of the binary itself.
ELF = b"\x7fELF\x02\x01\x01" + bytes(range(57))


def kernel(**changes: Any) -> BundleKernel:
    fields: dict[str, Any] = {
        "name": "k",
        "symbol": "gemm",
        "target": "cuda:90",
        "sm": "sm_90a",
        "num_warps": 8,
        "threads_per_warp": 32,
        "shared_bytes": 65536,
        "args": (
            Arg("a", "*fp16", 16),
            Arg("M", "i32"),
            Arg("N", "i32", 16),
            Arg("BLOCK", "i32", constexpr=128),
            Arg("alpha", "fp32"),
        ),
        "grid": (GridDim(arg="M", block=128), GridDim(arg="N", block=64), GridDim(constant=2)),
        "binary": ELF,
        "global_scratch": Scratch(256, 128),
        "profile_scratch": Scratch(0, 1),
        "triton": "3.9.0",
        "gemm_opt": "0.1.0",
        "triton_hash": "abc",
        "meta": {"dtype": "float16", "block": {"M": 128}},
    }
    fields.update(changes)
    return BundleKernel(**fields)


def doc() -> dict[str, Any]:
    return Bundle((kernel(),)).to_json()


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    original = Bundle((kernel(), kernel(name="k2", sm="sm_80", shared_bytes=0)))
    path = tmp_path / "k.bundle"
    original.write(path)
    back = read_bundle(path)
    assert back.kernels == original.kernels
    assert back.names() == ["k", "k2"]
    assert back["k2"].sm == "sm_80"
    # The file is JSON with a format name and version, and the binary as base64.
    raw = json.loads(path.read_text())
    assert raw["format"] == "gemm-opt-bundle" and raw["version"] == 1
    assert base64.b64decode(raw["kernels"][0]["binary"]) == ELF
    assert raw["kernels"][0]["binary_sha256"] == hashlib.sha256(ELF).hexdigest()


def test_derived_launch_facts() -> None:
    k = kernel()
    assert k.threads == 256
    assert k.capability == (9, 0) and k.arch_specific
    assert [a.name for a in k.params] == ["a", "M", "N", "alpha"]  # BLOCK is specialized
    assert k.runs_on((9, 0)) and not k.runs_on((9, 1)) and not k.runs_on((8, 0))
    portable = kernel(sm="sm_80")
    assert portable.runs_on((8, 0)) and portable.runs_on((8, 9))
    assert not portable.runs_on((9, 0)) and not portable.runs_on((7, 5))
    assert kernel(sm="sm_100a").capability == (10, 0)


def test_unknown_kernel_name_lists_the_kernels() -> None:
    with pytest.raises(KeyError, match=r"has no kernel 'nope' \(it has: k\)"):
        Bundle((kernel(),))["nope"]


def test_writer_refuses_what_the_reader_rejects(tmp_path: Path) -> None:
    path = tmp_path / "bad.bundle"
    with pytest.raises(BundleError, match=r"kernels\[0\] \(k\)\.binary: is not an ELF binary"):
        Bundle((kernel(binary=b"not a cubin"),)).write(path)
    assert not path.exists()
    with pytest.raises(BundleError, match="two kernels are named 'k'"):
        Bundle((kernel(), kernel()))


def test_missing_file() -> None:
    with pytest.raises(BundleError, match=r"nowhere\.bundle: cannot read the bundle"):
        read_bundle("/nonexistent/nowhere.bundle")


def _set(path: str, value: Any):
    """A mutation of the document: set (or with ``...`` delete) a dotted path."""

    def apply(d: dict[str, Any]) -> None:
        keys = path.split(".")
        for key in keys[:-1]:
            d = d[int(key)] if key.isdigit() else d[key]  # type: ignore[index]
        last: Any = int(keys[-1]) if keys[-1].isdigit() else keys[-1]
        if value is ...:
            del d[last]
        else:
            d[last] = value

    return apply


BAD = [
    pytest.param(
        _set("format", "zip"), r'not a bundle: no "format": "gemm-opt-bundle" field', id="format"
    ),
    pytest.param(
        _set("version", 2), "bundle format version 2; this gemm-opt reads version 1", id="version"
    ),
    pytest.param(_set("extra", 1), "bundle: unknown field 'extra'", id="extra"),
    pytest.param(_set("kernels", {}), r"kernels: expected list, got an object", id="kernels"),
    pytest.param(
        _set("kernels.0", []), r"kernels\[0\]: expected an object, got a list", id="kernels.0"
    ),
    pytest.param(
        _set("kernels.0.symbol", ...),
        r"kernels\[0\] \(k\): missing field 'symbol'",
        id="kernels.0.symbol",
    ),
    pytest.param(
        _set("kernels.0.name", ""), r"kernels\[0\]\.name: must not be empty", id="kernels.0.name"
    ),
    pytest.param(
        _set("kernels.0.color", "red"), r"kernels\[0\]: unknown field 'color'", id="kernels.0.color"
    ),
    pytest.param(
        _set("kernels.0.num_warps", 0),
        r"\.num_warps: must be at least 1, got 0",
        id="kernels.0.num_warps",
    ),
    pytest.param(
        _set("kernels.0.num_warps", True),
        r"\.num_warps: expected int, got a boolean",
        id="kernels.0.num_warps",
    ),
    pytest.param(
        _set("kernels.0.num_warps", 64),
        "64 warps of 32 exceed 1024 threads",
        id="kernels.0.num_warps",
    ),
    pytest.param(
        _set("kernels.0.shared_bytes", -1),
        r"\.shared_bytes: must be at least 0",
        id="kernels.0.shared_bytes",
    ),
    pytest.param(
        _set("kernels.0.sm", "gfx1250"),
        r"\.sm: expected an SM name like 'sm_90a', got 'gfx1250'",
        id="kernels.0.sm",
    ),
    pytest.param(
        _set("kernels.0.args.0.type", "*fp17"),
        r"args\[0\]\.type: unknown pointee type 'fp17'",
        id="kernels.0.args.0.type",
    ),
    pytest.param(
        _set("kernels.0.args.1.type", "f32"),
        r"args\[1\]\.type: unknown type 'f32'",
        id="kernels.0.args.1.type",
    ),
    pytest.param(
        _set("kernels.0.args.1.name", "2x"),
        r"args\[1\]\.name: '2x' is not an identifier",
        id="kernels.0.args.1.name",
    ),
    pytest.param(
        _set("kernels.0.args.1.name", "a"),
        r"\.args: two arguments are named 'a'",
        id="kernels.0.args.1.name",
    ),
    pytest.param(
        _set("kernels.0.args.1.divisibility", 0),
        r"args\[1\]\.divisibility: must be at least 1",
        id="kernels.0.args.1.divisibility",
    ),
    pytest.param(
        _set("kernels.0.args.0.constexpr", 1),
        "a pointer argument cannot be specialized",
        id="kernels.0.args.0.constexpr",
    ),
    pytest.param(
        _set("kernels.0.args.1.constexpr", "x"),
        r"\.constexpr: expected a number, got a string",
        id="kernels.0.args.1.constexpr",
    ),
    pytest.param(
        _set("kernels.0.args.1.kind", "x"),
        r"args\[1\]: unknown field 'kind'",
        id="kernels.0.args.1.kind",
    ),
    pytest.param(
        _set("kernels.0.grid", [1, 1]),
        r"\.grid: expected a list of 3 dimensions",
        id="kernels.0.grid",
    ),
    pytest.param(
        _set("kernels.0.grid.0", 0),
        r"grid\[0\]: a constant dimension must be at least 1",
        id="kernels.0.grid.0",
    ),
    pytest.param(
        _set("kernels.0.grid.0", {"cdiv": ["Q", 8]}),
        r"'Q' is not an integer argument",
        id="kernels.0.grid.0",
    ),
    pytest.param(
        _set("kernels.0.grid.0", {"cdiv": ["a", 8]}),
        r"'a' is not an integer argument",
        id="kernels.0.grid.0",
    ),
    pytest.param(
        _set("kernels.0.grid.0", {"cdiv": ["M", 0]}),
        r"block must be at least 1, got 0",
        id="kernels.0.grid.0",
    ),
    pytest.param(
        _set("kernels.0.grid.0", {"cdiv": ["M"]}),
        r'expected an integer or \{"cdiv"',
        id="kernels.0.grid.0",
    ),
    pytest.param(
        _set("kernels.0.global_scratch.align", 3),
        r"global_scratch\.align: must be a power of two",
        id="kernels.0.global_scratch.align",
    ),
    pytest.param(
        _set("kernels.0.binary", "@@@"), r"\.binary: is not valid base64", id="kernels.0.binary"
    ),
    pytest.param(
        _set("kernels.0.binary_sha256", "0" * 64),
        "does not match binary_sha256",
        id="kernels.0.binary_sha256",
    ),
]


@pytest.mark.parametrize(("mutate", "message"), BAD)
def test_bad_bundles_name_the_field(mutate, message: str) -> None:
    d = copy.deepcopy(doc())
    mutate(d)
    with pytest.raises(BundleError, match=message):
        loads(json.dumps(d), "x.bundle")


def test_not_json_and_not_utf8() -> None:
    with pytest.raises(BundleError, match=r"x\.bundle: not a bundle: invalid JSON"):
        loads("{", "x.bundle")
    with pytest.raises(BundleError, match="not a bundle: invalid JSON"):
        loads(b"\xff\xfe\x00", "x.bundle")
    with pytest.raises(BundleError, match="not a bundle"):
        loads("[1, 2]", "x.bundle")


def test_errors_name_the_file(tmp_path: Path) -> None:
    d = doc()
    d["version"] = 0
    path = tmp_path / "old.bundle"
    path.write_text(json.dumps(d))
    with pytest.raises(BundleError, match=rf"^{path}: bundle format version 0"):
        read_bundle(path)
