"""The bundle format's rules at their edges (found by ``benchmarks/mutation.py``
in ``gemm_opt.runtime.bundle``): integer ranges, grid arithmetic, the written
file's mode and the reader's refusals, each with the path it names."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import numpy as np
import pytest
from support.bundle_docs import document, full_kernel

from gemm_opt.runtime import Bundle, BundleError, GridDim
from gemm_opt.runtime.bundle import SCALAR_TYPES, int_range, is_int_type, loads

INTS = [t for t in SCALAR_TYPES if t[0] in "iu"]


@pytest.mark.parametrize("ty", INTS)
def test_int_range_is_the_types(ty: str) -> None:
    if ty in ("i1", "u1"):
        assert int_range(ty) == (0, 1)
        return
    info = np.iinfo(ty.replace("i", "int").replace("u", "uint"))
    assert int_range(ty) == (int(info.min), int(info.max))
    assert is_int_type(ty)


def test_only_integer_scalars_are_int_types() -> None:
    assert [t for t in SCALAR_TYPES if is_int_type(t)] == INTS
    assert not is_int_type("*i32") and not is_int_type("index")


@pytest.mark.parametrize(
    ("dim", "scalars", "value"),
    [
        (GridDim(constant=3), {"M": 1000}, 3),
        (GridDim(arg="M", block=64), {"M": 128}, 2),
        (GridDim(arg="M", block=64), {"M": 129}, 3),
        (GridDim(arg="M", block=64), {"M": 1}, 1),
        (GridDim(arg="M", block=64), {"M": 0}, 0),
        (GridDim(arg="N", block=1), {"M": 7, "N": 5}, 5),
    ],
)
def test_a_grid_dim_is_a_constant_or_a_ceiling_division(dim, scalars, value) -> None:
    assert dim.evaluate(scalars) == value


def test_a_written_bundle_is_readable_by_everyone(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    Bundle((full_kernel(),)).write(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert loads(path.read_text()).names() == [full_kernel().name]


def _refused(doc: object, message: str) -> None:
    with pytest.raises(BundleError, match=message):
        loads(json.dumps(doc), "b.json")


def test_a_null_kernel_is_named_null() -> None:
    doc = document()
    doc["kernels"][0] = None
    _refused(doc, r"^b\.json: kernels\[0\]: expected an object, got null$")


def _accepted(doc: dict) -> None:
    loads(json.dumps(doc), "b.json")


@pytest.mark.parametrize(("block", "ok"), [(1, True), (0, False), (-1, False)])
def test_a_cdiv_block_is_at_least_1(block: int, ok: bool) -> None:
    doc = document()
    doc["kernels"][0]["grid"][0] = {"cdiv": ["M", block]}
    if ok:
        _accepted(doc)
    else:
        _refused(doc, rf"grid\[0\]\.cdiv: block must be at least 1, got {block}$")


def _descriptor(**fields: object) -> dict:
    doc = document()
    doc["kernels"][0]["tensormaps"][0].update(fields)
    return doc


def test_a_descriptor_base_is_a_pointer_argument() -> None:
    _refused(_descriptor(base="M"), r"tensormaps\[0\]\.base: 'M' is not a pointer argument")


@pytest.mark.parametrize(
    ("shape", "strides", "block"),
    [
        (["K"], [1], [64]),
        ([1, 1, 1, "M", "K"], [0, 0, 0, "lda", 1], [1, 1, 1, 128, 64]),
    ],
)
def test_a_descriptor_has_rank_1_to_5(shape, strides, block) -> None:
    _accepted(_descriptor(shape=shape, strides=strides, block=block))


@pytest.mark.parametrize("key", ["shape", "strides", "block"])
@pytest.mark.parametrize("n", [0, 6])
def test_a_descriptor_list_of_0_or_6_entries_is_refused(key: str, n: int) -> None:
    _refused(
        _descriptor(**{key: [1] * n}),
        rf"tensormaps\[0\]\.{key}: expected 1 to 5 entries, got {n}$",
    )


@pytest.mark.parametrize(("entry", "ok"), [(1, True), (256, True), (0, False), (257, False)])
def test_a_descriptor_block_entry_is_1_to_256(entry: int, ok: bool) -> None:
    doc = _descriptor(block=[entry, 64])
    if ok:
        _accepted(doc)
    else:
        _refused(doc, rf"tensormaps\[0\]\.block\[0\]: expected an integer 1 to 256, got {entry}")


I32_MAX, I64_MAX = 2**31 - 1, 2**63 - 1


@pytest.mark.parametrize(
    ("key", "value", "ok"),
    [
        ("shape", 0, True),
        ("shape", I32_MAX, True),
        ("shape", I32_MAX + 1, False),
        ("shape", -1, False),
        ("strides", 0, True),
        ("strides", I64_MAX, True),
        ("strides", I64_MAX + 1, False),
    ],
)
def test_a_descriptor_constant_fits_how_it_travels(key: str, value: int, ok: bool) -> None:
    entries = {"shape": [value, "K"], "strides": [value, 1]}[key]
    doc = _descriptor(**{key: entries})
    if ok:
        _accepted(doc)
    else:
        _refused(doc, rf"tensormaps\[0\]\.{key}\[0\]: expected a constant 0 to ")


@pytest.mark.parametrize(
    ("field", "value", "ok"),
    [
        ("swizzle", 0, True),
        ("swizzle", 3, True),
        ("swizzle", 4, False),
        ("swizzle", -1, False),
        ("elem_bytes", 1, True),
        ("elem_bytes", 2, True),
        ("elem_bytes", 4, True),
        ("elem_bytes", 8, True),
        ("elem_bytes", 0, False),
        ("elem_bytes", 3, False),
        ("dtype", 0, True),
        ("dtype", 12, True),
        ("dtype", 13, False),
        ("dtype", -1, False),
    ],
)
def test_a_descriptor_code_is_one_the_driver_knows(field: str, value: int, ok: bool) -> None:
    doc = _descriptor(**{field: value})
    if ok:
        _accepted(doc)
    else:
        _refused(doc, rf"tensormaps\[0\]\.{field}: ")


def _kernel_doc(**fields: object) -> dict:
    doc = document()
    kernel = doc["kernels"][0]
    for key, value in fields.items():
        if value is None:
            del kernel[key]
        else:
            kernel[key] = value
    return doc


@pytest.mark.parametrize(
    ("scratch", "read"),
    [
        ({"bytes": 0, "align": 1}, (0, 1)),
        ({}, (0, 1)),
        ({"bytes": 16}, (16, 1)),
        ({"align": 64}, (0, 64)),
    ],
)
def test_scratch_defaults_and_smallest_values(scratch: dict, read: tuple[int, int]) -> None:
    k = loads(json.dumps(_kernel_doc(global_scratch=scratch, profile_scratch=scratch))).kernels[0]
    assert (k.global_scratch.bytes, k.global_scratch.align) == read
    assert (k.profile_scratch.bytes, k.profile_scratch.align) == read


@pytest.mark.parametrize(
    ("scratch", "message"),
    [
        ({"align": 0}, r"global_scratch\.align: must be at least 1, got 0$"),
        ({"align": 3}, r"global_scratch\.align: must be a power of two, got 3$"),
        ({"bytes": -1}, r"global_scratch\.bytes: must be at least 0, got -1$"),
    ],
)
def test_scratch_out_of_range_is_refused(scratch: dict, message: str) -> None:
    _refused(_kernel_doc(global_scratch=scratch), message)


def test_one_warp_and_one_cta_are_kernels() -> None:
    k = loads(json.dumps(_kernel_doc(num_warps=1, num_ctas=1))).kernels[0]
    assert (k.num_warps, k.num_ctas) == (1, 1)
    assert loads(json.dumps(_kernel_doc(num_ctas=None))).kernels[0].num_ctas == 1
    _refused(_kernel_doc(num_ctas=0), r"num_ctas: must be at least 1, got 0$")
    _refused(_kernel_doc(num_warps=0), r"num_warps: must be at least 1, got 0$")
