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
