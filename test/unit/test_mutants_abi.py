"""The schedule kernels' ABI rules at their edges (found by
``benchmarks/mutation.py`` in ``gemm_opt.core.schedules.abi``).

Each FP8 rule is met one argument off a built configuration at a time, and
its message names the argument; the configurations on both sides of each
limit (``block_k`` multiples, ``imprecise_acc`` multiples, the recipes'
own ``block_k``) are built. The epilogue spec's checks, its argument order
and bundle-name suffix are pinned value by value.
"""

from __future__ import annotations

import pytest

from gemm_opt.core.modes import FP8_KINDS
from gemm_opt.core.schedules.abi import (
    EPILOGUE_ARGS,
    MODEL_CONFIG,
    NO_EPILOGUE,
    EpilogueSpec,
    KernelSpec,
    aligned_args,
    alignment,
    check_epilogue,
    check_fp8_config,
    check_kernel_config,
    divisibility_facts,
    kernel_args,
    pipelined,
    tma_copies,
    warp_grid,
)

#: A built FP8 configuration: every case changes one or two of its arguments.
BUILT = dict(
    kind="persistent",
    grouped="none",
    trans_a=False,
    trans_b=True,
    block_k=128,
    scale="tensorwise",
    out_dtype="bf16",
    imprecise_acc=None,
)


@pytest.mark.parametrize(
    "change",
    [
        *({"kind": k} for k in FP8_KINDS),
        {"grouped": "m"},
        {"block_k": 64},
        {"block_k": 192},
        {"scale": "none"},
        {"scale": "rowwise"},
        {"scale": "block128"},
        {"scale": "mx32", "block_k": 256},
        {"imprecise_acc": 32},
        {"imprecise_acc": 96},
        {"out_dtype": "fp32"},
    ],
)
def test_built_fp8_configurations_pass(change: dict) -> None:
    check_fp8_config(**{**BUILT, **change})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": "bogus"}, "kind 'bogus' has no FP8 kernel"),
        ({"grouped": "k"}, "grouped 'k' has no FP8 kernel"),
        ({"grouped": "m", "kind": "data-parallel"}, "has no grouped FP8 kernel"),
        ({"grouped": "m", "kind": "stream-k"}, "has no grouped FP8 kernel"),
        ({"trans_a": True}, r"trans_a=False, trans_b=True; got trans_a=True, trans_b=True"),
        ({"trans_b": False}, r"got trans_a=False, trans_b=False"),
        ({"block_k": 96}, "block_k must be a multiple of 64"),
        ({"block_k": 32}, "block_k must be a multiple of 64"),
        ({"scale": "bogus"}, "scale must be one of"),
        ({"scale": "block128", "block_k": 64}, "block_k must be 128 for scale 'block128'"),
        ({"scale": "block128", "block_k": 256}, "block_k must be 128 for scale 'block128'"),
        ({"imprecise_acc": 0}, "imprecise_acc must be a positive multiple of 32"),
        ({"imprecise_acc": -32}, "imprecise_acc must be a positive multiple of 32"),
        ({"imprecise_acc": 48}, "imprecise_acc must be a positive multiple of 32"),
        ({"imprecise_acc": True}, "imprecise_acc must be a positive multiple of 32"),
        ({"imprecise_acc": 64.0}, "imprecise_acc must be a positive multiple of 32"),
        ({"scale": "mx32", "block_k": 192}, "block_k must be a multiple of 128 for scale 'mx32'"),
        ({"scale": "mx32", "imprecise_acc": 32}, "imprecise_acc is for Hopper's wgmma"),
        ({"scale": "block128", "imprecise_acc": 32}, "imprecise_acc is for the epilogue"),
        ({"out_dtype": "fp16"}, "out_dtype must be one of bf16, fp32 for FP8"),
    ],
)
def test_each_fp8_rule_refuses_one_argument(change: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_fp8_config(**{**BUILT, **change})


def test_epilogue_checks_its_fields() -> None:
    for bias in ("fp16", "bf16", "fp32", None):
        assert EpilogueSpec(bias=bias).bias == bias
    with pytest.raises(ValueError, match="bias must be None or one of"):
        EpilogueSpec(bias="fp8")
    with pytest.raises(ValueError, match="activation must be one of"):
        EpilogueSpec(activation="tanh")
    assert EpilogueSpec(activation="silu").activation == "silu"


def test_an_epilogue_is_empty_only_without_any_part() -> None:
    assert NO_EPILOGUE.empty and EpilogueSpec().empty
    for part in (
        {"activation": "relu"},
        {"bias": "fp16"},
        {"accumulate": True},
        {"row_scale": True},
        {"col_scale": True},
    ):
        assert not EpilogueSpec(**part).empty


@pytest.mark.parametrize("bias", [None, "bf16"])
@pytest.mark.parametrize("row", [False, True])
@pytest.mark.parametrize("col", [False, True])
def test_epilogue_arguments_keep_their_order(bias, row: bool, col: bool) -> None:
    ep = EpilogueSpec(bias=bias, row_scale=row, col_scale=col)
    want = [n for n, on in zip(EPILOGUE_ARGS, (bias is not None, row, col), strict=True) if on]
    assert ep.args == tuple(want)


def test_epilogue_suffixes() -> None:
    assert NO_EPILOGUE.suffix == ""
    assert EpilogueSpec(activation="gelu-tanh").suffix == "_gelutanh"
    full = EpilogueSpec("silu", "fp32", accumulate=True, row_scale=True, col_scale=True)
    assert full.suffix == "_silu_bfp32_acc_rs_cs"


BASE_ARGS = ("a", "b", "c", "M", "N", "K", "lda", "ldb", "ldc")


@pytest.mark.parametrize(
    ("call", "extra"),
    [
        (("persistent", None), ()),
        (("persistent", None, "none", "tensorwise"), ("scale_a", "scale_b")),
        (("stream-k", "atomic"), ()),
        (("split-k", None), ("sync", "partials")),
        (
            ("stream-k", "linear", "m", "rowwise", EpilogueSpec(bias="fp16", col_scale=True)),
            (
                *("group_lens", "num_groups", "sync", "partials", "scale_a", "scale_b"),
                "bias",
                "col_scale",
            ),
        ),
    ],
)
def test_kernel_arguments_in_order(call: tuple, extra: tuple) -> None:
    assert kernel_args(*call) == BASE_ARGS + extra


@pytest.mark.parametrize(
    ("num_warps", "block_m", "block_n", "grid"),
    [
        # As square as the warps allow, the longer side on M.
        *((w, None, None, g) for w, g in [(1, (1, 1)), (2, (2, 1)), (4, (2, 2)), (8, (4, 2))]),
        (16, None, None, (4, 4)),
        (32, None, None, (8, 4)),
        # A narrow block_n folds the warps onto M until its 16-wide columns split.
        (4, None, 16, (4, 1)),
        (4, None, 32, (2, 2)),
        (8, None, 16, (8, 1)),
        (8, None, 32, (4, 2)),
        (8, None, 48, (8, 1)),
        (2, 16, 16, (2, 1)),
        # A short block_m folds them onto N while block_n still splits.
        (4, 16, 64, (1, 4)),
        (4, 16, 32, (2, 2)),
        (4, 16, None, (1, 4)),
        (4, 32, None, (2, 2)),
        (8, 32, 256, (2, 4)),
        (8, 16, 256, (1, 8)),
        (8, 64, 16, (8, 1)),
    ],
)
def test_warp_grid(num_warps: int, block_m, block_n, grid: tuple[int, int]) -> None:
    assert warp_grid(num_warps, block_m=block_m, block_n=block_n) == grid


def _config(**change) -> None:
    cfg = dict(block_m=64, block_n=64, block_k=32, num_warps=4, num_stages=None)
    check_kernel_config(**{**cfg, **change})


@pytest.mark.parametrize(
    "change",
    [
        {},
        {"block_k": 64},
        {"block_m": 16, "block_n": 64},  # the warps fold onto N: 1x4
        {"block_m": 48, "block_n": 64},
        {"block_n": 16},  # onto M: 4x1
        *({"num_stages": s} for s in range(2, 7)),
        {"num_warps": 1, "num_stages": 1},
        {"num_warps": 1, "block_m": 16, "block_n": 16},
    ],
)
def test_built_block_shapes_pass(change: dict) -> None:
    _config(**change)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"block_k": 48}, "block_k must be a multiple of 32"),
        ({"block_k": 16}, "block_k must be a multiple of 32"),
        ({"block_n": 24}, "block_n must be a multiple of 16"),
        ({"block_n": 8, "num_warps": 1}, "block_n must be a multiple of 16"),
        ({"block_m": 24}, "block_m must be a multiple of 16"),
        ({"block_m": 24, "block_n": 128}, "block_m must be a multiple of 16"),
        ({"block_m": 8, "num_warps": 1}, "block_m must be a multiple of 16"),
        ({"block_m": 16, "block_n": 32}, r"block_m must be a multiple of 32 .* 2x2 warp grid"),
        ({"num_stages": 1}, "num_stages must be 2 to 6"),
        ({"num_stages": 7}, "num_stages must be 2 to 6"),
        ({"num_warps": 1, "num_stages": 2}, "num_stages must be 1"),
        ({"num_warps": 1, "num_stages": 0}, "num_stages must be 1"),
    ],
)
def test_each_block_rule_refuses_one_argument(change: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _config(**change)


def test_which_kernels_pipeline_and_take_tma() -> None:
    assert [pipelined(w) for w in (1, 2, 4, 8)] == [False, True, True, True]
    assert tma_copies(4) and tma_copies(2, 64) and tma_copies(4, 128)
    assert not tma_copies(1) and not tma_copies(1, 64)
    assert not tma_copies(4, 16) and not tma_copies(4, 32) and not tma_copies(4, 96)


def test_alignment_is_the_vector_over_the_element() -> None:
    assert [alignment("fp16"), alignment("bf16", 8), alignment("fp16", 4)] == [8, 4, 2]
    assert [alignment("f8e4m3"), alignment("f8e5m2", 4)] == [16, 4]
    with pytest.raises(ValueError, match="dtype must be one of"):
        alignment("fp32")
    for width in (2, 32, 12):
        with pytest.raises(ValueError, match="vector_bytes must be one of"):
            alignment("fp16", width)


FREE = ("N", "K", "lda", "ldb", "ldc")


@pytest.mark.parametrize(
    ("call", "names"),
    [
        (("none",), FREE),
        (("m",), FREE),
        (("k",), ("N", "lda", "ldb", "ldc", "M")),  # A (S, M): rows along M, K bounds rows
        (("none", True), ("N", "lda", "ldb", "ldc", "M")),
        (("none", True, True), (*FREE, "M")),  # B (N, K): rows along K
        (("none", False, False, True), (*FREE, "M")),
        (("none", False, True, True), ("K", "lda", "ldb", "ldc", "M")),  # swap-AB: N free
        (("k", False, True, True), ("K", "lda", "ldb", "ldc", "M")),
    ],
)
def test_aligned_arguments(call: tuple, names: tuple) -> None:
    assert aligned_args(*call) == names


@pytest.mark.parametrize(
    ("call", "kw", "facts"),
    [
        (("none", False, 64, False, False), {"dtype": "fp16"}, {}),
        (("none", False, 64, True, False), {"dtype": "fp16"}, dict.fromkeys(FREE, 8)),
        (("none", False, 64, True, True), {"dtype": "fp16"}, dict.fromkeys(FREE, 8)),
        (("m", True, 64, True, True), {"dtype": "fp16"}, dict.fromkeys(FREE, 8)),
        (("m", False, 64, True, False), {"dtype": "fp16"}, dict.fromkeys(FREE, 8)),
        # TMA, grouped "m", B row-major: K a multiple of block_k too.
        (("m", False, 64, True, True), {"dtype": "fp16"}, {**dict.fromkeys(FREE, 8), "K": 64}),
        (("m", False, 32, True, True), {"dtype": "f8e4m3"}, {**dict.fromkeys(FREE, 16), "K": 32}),
        (
            ("none", False, 64, True, False),
            {"dtype": "bf16", "vector_bytes": 4},
            dict.fromkeys(FREE, 2),
        ),
    ],
)
def test_divisibility_facts(call: tuple, kw: dict, facts: dict) -> None:
    assert divisibility_facts(*call, **kw) == facts


@pytest.mark.parametrize(
    ("epilogue", "kind", "reduction", "grouped", "message"),
    [
        (EpilogueSpec("relu"), "stream-k", "atomic", "none", "atomic stream-K adds partials"),
        (EpilogueSpec("swiglu"), "split-k", None, "none", "activation 'swiglu' needs"),
        (EpilogueSpec("swiglu"), "stream-k", "linear", "none", "activation 'swiglu' needs"),
        (EpilogueSpec("swiglu", col_scale=True), "persistent", None, "none", "no col_scale"),
        (EpilogueSpec("silu"), "persistent", None, "k", "grouped 'k'"),
        (EpilogueSpec(bias="fp16"), "persistent", None, "k", "grouped 'k'"),
        (EpilogueSpec(row_scale=True), "persistent", None, "k", "grouped 'k'"),
    ],
)
def test_each_epilogue_rule(epilogue, kind: str, reduction, grouped: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_epilogue(epilogue, kind, reduction, grouped)


@pytest.mark.parametrize(
    ("epilogue", "kind", "reduction", "grouped"),
    [
        (EpilogueSpec("relu"), "stream-k", "linear", "none"),
        (EpilogueSpec(bias="fp32"), "stream-k", "atomic", "none"),
        (EpilogueSpec("swiglu", row_scale=True), "persistent", None, "none"),
        (EpilogueSpec("swiglu"), "data-parallel", None, "m"),
        (EpilogueSpec(accumulate=True), "persistent", None, "k"),
    ],
)
def test_epilogues_the_schedule_op_takes(epilogue, kind: str, reduction, grouped: str) -> None:
    check_epilogue(epilogue, kind, reduction, grouped)


def test_an_epilogue_is_an_epilogue_spec() -> None:
    with pytest.raises(TypeError, match="epilogue must be an EpilogueSpec, got dict"):
        check_epilogue({}, "persistent", None, "none")


def _spec(**change) -> KernelSpec:
    spec = dict(
        kind="persistent",
        reduction=None,
        grouped="none",
        dtype="fp16",
        block_m=64,
        block_n=64,
        block_k=32,
        group_m=8,
        num_warps=4,
        num_stages=None,
    )
    return KernelSpec(**{**spec, **change})


FP8 = {"dtype": "f8e4m3", "trans_b": True, "block_k": 64}


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({}, "gemm_persistent_fp16_64x64x32_g8_w4"),
        (
            dict(kind="stream-k", reduction="linear", grouped="m", trans_a=True, trans_b=True)
            | dict(num_stages=3, aligned=True, tma=True),
            "gemm_streamk_linear_groupedm_ta_tb_fp16_64x64x32_g8_w4_s3_aligned_tma",
        ),
        (
            dict(kind="work-stealing", num_xcds=4, aligned=True, vector_bytes=8, trans_c=True),
            "gemm_workstealing_tc_fp16_64x64x32_g8_w4_x4_aligned_v8",
        ),
        (
            FP8 | dict(kind="split-k", scale="mx32", block_k=128, out_dtype="fp32"),
            "gemm_splitk_tb_f8e4m3_mx32_of32_64x64x128_g8_w4",
        ),
        (
            FP8 | dict(scale="tensorwise", imprecise_acc=64),
            "gemm_persistent_tb_f8e4m3_tensorwise_ia64_64x64x64_g8_w4",
        ),
        (
            dict(dtype="bf16", out_dtype="fp32", epilogue=EpilogueSpec("relu", bias="bf16")),
            "gemm_persistent_bf16_of32_relu_bbf16_64x64x32_g8_w4",
        ),
    ],
)
def test_kernel_names(change: dict, name: str) -> None:
    assert _spec(**change).name == name


def test_a_spec_normalises_what_does_not_change_its_binary() -> None:
    assert _spec(num_xcds=4).num_xcds == 1
    assert _spec(kind="work-stealing", num_xcds=4).num_xcds == 4
    fp8 = _spec(**FP8)
    assert (fp8.out_dtype, fp8.scale) == ("bf16", "none")
    assert _spec(**FP8, out_dtype="fp32").out_dtype == "fp32"
    assert _spec().epilogue is NO_EPILOGUE and _spec().out_dtype is None
    assert _spec(out_dtype="fp32").out_dtype == "fp32"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": "stream-k"}, "a stream-K kernel names its reduction"),
        ({"grouped": "n"}, "grouped must be one of"),
        ({"num_xcds": 0}, "num_xcds"),
        ({"kind": "work-stealing", "num_xcds": 0}, "num_xcds"),
        ({"dtype": "fp32"}, "dtype must be one of"),
        ({"scale": "tensorwise"}, "scale and imprecise_acc are for FP8 kernels"),
        ({"imprecise_acc": 32}, "scale and imprecise_acc are for FP8 kernels"),
        ({"out_dtype": "bf16"}, "out_dtype must be None"),
        ({**FP8, "epilogue": EpilogueSpec(bias="fp32")}, "FP8 kernels take no fused epilogue"),
        ({**FP8, "trans_b": False}, "FP8 kernels are built for"),
        ({"epilogue": EpilogueSpec("relu"), "kind": "stream-k", "reduction": "atomic"}, "atomic"),
        *(({name: 0}, name) for name in ("block_m", "block_n", "block_k", "group_m")),
        ({"num_warps": 0}, "num_warps"),
        ({"num_stages": 0}, "num_stages"),
        ({"tma": True}, "a TMA kernel is aligned and has the pipelined body"),
        ({"tma": True, "aligned": True, "num_warps": 1}, "a TMA kernel is aligned"),
        ({"aligned": True, "vector_bytes": 2}, "vector_bytes must be one of"),
        ({"vector_bytes": 8}, "vector_bytes=8 is for an aligned kernel without TMA"),
        ({"vector_bytes": 4, "aligned": True, "tma": True}, "vector_bytes=4 is for an aligned"),
        ({"grouped": "k", "trans_a": True}, "trans_a and trans_b are for grouped"),
        ({"grouped": "k", "trans_b": True}, "trans_a and trans_b are for grouped"),
        ({"grouped": "m", "trans_c": True}, "trans_c is for dense 16-bit kernels"),
        ({**FP8, "trans_c": True}, "trans_c is for dense 16-bit kernels"),
        ({"trans_c": True, "epilogue": EpilogueSpec(bias="fp16")}, "trans_c kernels take no"),
    ],
)
def test_each_spec_rule_refuses_one_field(change: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _spec(**change)


def test_a_spec_states_its_arguments_and_facts() -> None:
    spec = _spec(kind="split-k", aligned=True, epilogue=EpilogueSpec(bias="fp16"))
    assert spec.arg_names == (*BASE_ARGS, "sync", "partials", "bias")
    assert spec.facts == dict.fromkeys(FREE, 8)
    tma = _spec(grouped="m", aligned=True, tma=True, block_k=64)
    assert tma.facts == {**dict.fromkeys(FREE, 8), "K": 64}
    assert _spec(trans_c=True, trans_b=True, aligned=True).facts == dict.fromkeys(
        ("K", "lda", "ldb", "ldc", "M"), 8
    )


def test_the_model_configuration_is_a_built_one() -> None:
    """Small blocks (quick to interpret) the kernels are built for."""
    cfg = MODEL_CONFIG
    assert (cfg.block_m, cfg.block_n, cfg.block_k, cfg.group_m, cfg.num_warps) == (64, 64, 32, 4, 4)
    check_kernel_config(
        block_m=cfg.block_m,
        block_n=cfg.block_n,
        block_k=cfg.block_k,
        num_warps=cfg.num_warps,
        num_stages=cfg.num_stages,
    )
