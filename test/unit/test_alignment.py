"""The 16-byte rule of the aligned and TMA twins.

An aligned twin states ``tile.divisibility`` of 16 bytes in elements of its dtype
(8 for fp16/bf16) on N, K, the leading dimensions and, where A lies transposed,
M; the runtime runs a twin exactly when the call's values satisfy its facts
(the launcher's own checks), else the plain kernel. Pinned here: the rule
itself, every residue of every fact argument at the boundary, random calls
against the facts stated, the facts the built modules carry, the plan's
rounding of a one-row operand's leading dimension, and the launcher's refusal.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.fake_bundles import launch_kernel, write_store

from gemm_opt.core import schedules as S
from gemm_opt.core.targets import VECTOR_BYTES
from gemm_opt.runtime import Kernel
from gemm_opt.runtime.launch import ArgumentError

#: One plain spec of each form whose twins state different facts: dense NN, a
#: transposed A (M stated too), grouped "m" (its TMA twin states K by block_k),
#: dgrad's transposed B, wgrad (grouped "k": M stated).
PLAIN = (
    S.KernelSpec("data-parallel", None, "none", "fp16", 128, 128, 64, 8, 4, 3),
    S.KernelSpec("data-parallel", None, "none", "bf16", 128, 128, 64, 8, 4, 3, trans_a=True),
    S.KernelSpec("persistent", None, "m", "fp16", 128, 128, 64, 8, 4, None),
    S.KernelSpec("persistent", None, "m", "bf16", 128, 128, 64, 8, 4, None, trans_b=True),
    S.KernelSpec("persistent", None, "k", "bf16", 128, 128, 64, 8, 8, 3),
)
#: Values every twin accepts (multiples of 64, 16-byte aligned addresses).
OK = dict(a=4096, b=8192, c=12288, M=512, N=256, K=512, lda=512, ldb=256, ldc=256)
OK_GROUPED = dict(group_lens=16384, num_groups=2)


def _values(spec: S.KernelSpec, **change: int) -> dict[str, int]:
    values = {**OK, **(OK_GROUPED if spec.grouped != "none" else {}), **change}
    return {n: values[n] for n in spec.arg_names}


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[S.KernelSpec, object]:
    """A store per plain spec holding it and its twins, with the facts the bundle
    builder states (:attr:`~gemm_opt.core.schedules.KernelSpec.facts`)."""
    from gemm_opt.runtime import gemm as rt

    out = {}
    for i, plain in enumerate(PLAIN):
        out[plain] = write_store(tmp_path_factory.mktemp(f"s{i}"), (plain, *rt.twins(plain)))
    return out


def test_the_rule_is_sixteen_bytes_in_elements_of_the_dtype() -> None:
    assert S.ALIGNMENT_BYTES == VECTOR_BYTES == 16
    assert set(S.DTYPE_BYTES) == {*S.DTYPES, *S.FP8_DTYPES}
    assert {d: S.alignment(d) for d in S.DTYPE_BYTES} == {
        "fp16": 8,
        "bf16": 8,
        "f8e4m3": 16,
        "f8e5m2": 16,
    }
    with pytest.raises(
        ValueError, match=r"dtype must be one of \('fp16', 'bf16', 'f8e4m3', 'f8e5m2'\), got 'fp32'"
    ):
        S.alignment("fp32")


@pytest.mark.parametrize("plain", PLAIN, ids=lambda s: s.name)
def test_stated_facts(plain: S.KernelSpec) -> None:
    """The facts of each twin, by argument: 8 elements (16 bytes) on the aligned
    arguments, 4 and 2 on the narrow twins'; the grouped "m" TMA twin's K a
    multiple of block_k (64)."""
    from gemm_opt.runtime import gemm as rt

    names = S.aligned_args(plain.grouped, plain.trans_a, plain.trans_b)
    assert ("M" in names) == (plain.trans_a or plain.grouped == "k")
    assert plain.facts == {}
    for twin in rt.twins(plain):
        want = dict.fromkeys(names, twin.vector_bytes // 2)  # 16-bit elements
        if twin.tma and plain.grouped == "m" and not plain.trans_b:
            want["K"] = 64
        assert twin.facts == want, twin.name


@pytest.mark.parametrize("plain", PLAIN, ids=lambda s: s.name)
def test_every_residue_of_every_fact_argument(plain: S.KernelSpec, stores) -> None:
    """Exhaustive over the residues mod 16 of each fact argument (the others
    aligned): a multiple of 8 runs the TMA twin (the grouped "m" TMA twin's K
    also needs a multiple of 64, else the aligned twin); where the spec has
    narrow twins (dense data-parallel) a multiple of 4 runs the 8-byte one and
    of 2 the 4-byte one; anything else the plain kernel."""
    from gemm_opt.runtime import gemm as rt

    twins = {(t.tma, t.vector_bytes): t for t in rt.twins(plain)}
    narrow = rt.narrow_twins(plain)
    assert set(twins) == {(True, 16), (False, 16), *([(False, 8), (False, 4)] if narrow else [])}
    for name in S.aligned_args(plain.grouped, plain.trans_a, plain.trans_b):
        for r in range(16):
            value = 1024 + r
            got = rt.select_kernel(stores[plain], plain, _values(plain, **{name: value}))[0]
            if r % 8 == 0:
                tma = twins[True, 16]
                k_fact = tma.facts.get("K", 1) if name == "K" else 1
                want = tma if value % k_fact == 0 else twins[False, 16]
            elif narrow and r % 4 == 0:
                want = twins[False, 8]
            elif narrow and r % 2 == 0:
                want = twins[False, 4]
            else:
                want = plain
            assert got.name == want.name, (name, value)


def test_narrow_twins_state_four_and_two_elements() -> None:
    """8- and 4-byte twins: facts of 4 and 2 elements of a 16-bit type, named
    ``_aligned_v8`` / ``_aligned_v4``; never TMA, never plain, no other width."""
    plain = PLAIN[0]
    for v, n in ((8, 4), (4, 2)):
        twin = replace(plain, aligned=True, vector_bytes=v)
        assert twin.name == plain.name + f"_aligned_v{v}"
        assert (
            twin.facts == dict.fromkeys(S.ALIGNED_ARGS, n) == dict.fromkeys(S.ALIGNED_ARGS, v // 2)
        )
    assert S.VECTOR_WIDTHS == (16, 8, 4)
    for bad, why in (
        (dict(aligned=True, tma=True, vector_bytes=8), "for an aligned kernel without TMA"),
        (dict(vector_bytes=4), "for an aligned kernel without TMA"),
        (dict(aligned=True, vector_bytes=2), r"vector_bytes must be one of \(16, 8, 4\)"),
    ):
        with pytest.raises(ValueError, match=why):
            replace(plain, **bad)


def _expected(plain: S.KernelSpec, values: dict[str, int]) -> S.KernelSpec:
    """The first twin whose stated facts the values satisfy (a TMA twin also needs
    M, N and K of at least 1), else the plain spec."""
    from gemm_opt.runtime import gemm as rt

    for twin in rt.twins(plain):
        if twin.tma and min(values["M"], values["N"], values["K"]) < 1:
            continue
        if all(values[n] % f == 0 for n, f in twin.facts.items()):
            return twin
    return plain


#: Sizes near the boundaries: multiples of 2, 4, 8, 16 and 64 elements, and odd ones.
_SIZE = st.one_of(
    st.integers(0, 70_000),
    st.builds(lambda q, m: q * m, st.integers(0, 4096), st.sampled_from((2, 4, 8, 16, 64))),
)


@settings(max_examples=300, deadline=None)
@given(
    which=st.integers(0, len(PLAIN) - 1),
    m=_SIZE,
    n=_SIZE,
    k=_SIZE,
    lds=st.tuples(_SIZE, _SIZE, _SIZE),
)
def test_a_twin_runs_exactly_when_its_facts_hold(stores, which, m, n, k, lds) -> None:
    """Random sizes and leading dimensions: select_kernel runs the first twin (TMA,
    16-byte, then 8- and 4-byte ``cp.async``) whose facts the values satisfy, else
    the plain kernel; the kernel it returns accepts them when it is a twin."""
    from gemm_opt.runtime import gemm as rt

    plain = PLAIN[which]
    lda, ldb, ldc = lds
    values = _values(plain, M=m, N=n, K=k, lda=lda, ldb=ldb, ldc=ldc)
    kernel, args = rt.select_kernel(stores[plain], plain, values)
    want = _expected(plain, values)
    assert kernel.name == want.name, values
    if want != plain:
        size = S.DTYPE_BYTES[plain.dtype]
        assert all(values[n] * size % want.vector_bytes == 0 for n in want.facts)
        assert kernel.accepts(*args)


def test_the_launcher_refuses_what_breaks_the_facts() -> None:
    """Launched directly, the aligned kernel refuses a value off its facts, naming it."""
    twin = replace(PLAIN[0], aligned=True)
    kernel = Kernel(launch_kernel(twin))
    good = list(_values(twin).values())
    assert kernel.accepts(*good)
    for i, name in enumerate(twin.arg_names):
        if name not in twin.facts:
            continue
        assert kernel.accepts(*[1032 if j == i else v for j, v in enumerate(good)])
        bad = [1028 if j == i else v for j, v in enumerate(good)]
        assert not kernel.accepts(*bad)
        with pytest.raises(
            ArgumentError,
            match=rf"argument '{name}' \(i32\): 1028 is not a multiple of 8, which the "
            "kernel was compiled to assume",
        ):
            kernel.pack(bad)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(("cols", "ld"), [(1, 8), (8, 8), (9, 16), (13, 16), (20, 24), (24, 24)])
def test_a_one_row_operand_takes_the_dtypes_alignment(dtype: str, cols: int, ld: int) -> None:
    """A one-row A has no row stride to read: the plan passes its row length rounded
    up to 16 bytes (8 elements), so the twins' fact on lda holds and no row is
    stepped over."""
    from gemm_opt.runtime.plan import matmul_route

    if dtype == "bfloat16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        np_dtype = ml_dtypes.bfloat16
    else:
        np_dtype = np.float16
    a = np.zeros((1, cols), dtype=np_dtype)
    b = np.zeros((cols, 8), dtype=np_dtype)
    route = matmul_route(a, b, ())
    assert (route.how, route.trans_a, route.lda, route.ldb) == ("dense", False, ld, 8)


def test_built_modules_state_the_facts_of_their_specs() -> None:
    """The kernel builder states exactly :attr:`KernelSpec.facts` on the module's
    arguments (the bundle's facts are read from it), for each form above."""
    from gemm_opt.core.contract import DIVISIBILITY
    from gemm_opt.core.ext_compat import func, ir
    from gemm_opt.kernels.cache import module_for
    from gemm_opt.runtime import gemm as rt

    for plain in PLAIN:
        for spec in (plain, *rt.twins(plain)):
            module = module_for(spec, "cuda:90")
            with module.context:
                fn = next(op for op in module.body.operations if isinstance(op, func.FuncOp))
                attrs = list(fn.arg_attrs) if "arg_attrs" in fn.attributes else []
                stated = {
                    name: ir.IntegerAttr(ir.DictAttr(a)[DIVISIBILITY]).value
                    for name, a in zip(spec.arg_names, attrs, strict=False)
                    if DIVISIBILITY in ir.DictAttr(a)
                }
            assert stated == spec.facts, spec.name


@pytest.mark.parametrize(("vector_bytes", "width"), [(16, "0x10"), (8, "0x8"), (4, "0x4")])
def test_narrow_twins_copy_with_narrower_cp_async_on_cuda90(vector_bytes: int, width: str) -> None:
    """Triton 3.9 turns facts of 8, 4 and 2 fp16 elements into ``cp.async`` of 16,
    8 and 4 bytes (``.cg`` at 16, ``.ca`` below) and C stores of the same width,
    where the plain kernel loads and stores single elements."""
    from gemm_opt.kernels.cache import module_for
    from gemm_opt.lowering.compile import compile_tile_module

    spec = replace(PLAIN[0], aligned=True, vector_bytes=vector_bytes)
    module = module_for(spec, "cuda:90")
    with module.context:
        ptx = compile_tile_module(module, "cuda:90").asm["ptx"]
    copies = [ln for ln in ptx.splitlines() if "cp.async.c" in ln and "shared.global" in ln]
    assert copies and {ln.rstrip(" ;").split(",")[2].strip() for ln in copies} == {width}
    store = {16: "st.global.v4.b32", 8: "st.global.v2.b32", 4: "st.global.b32"}[vector_bytes]
    assert store in ptx and "ld.global.b16" not in ptx and "wgmma.mma_async" in ptx
