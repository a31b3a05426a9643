"""The schedule modes are string enums that stand for the strings the IR, the bundle
names and the API use: a member and its string are interchangeable."""

import json

import pytest

from gemm_opt.core import modes
from gemm_opt.core import schedules as S
from gemm_opt.core.modes import Body, Grouped, Kind, Reduction, TileLoop


def test_modes_keep_their_strings() -> None:
    assert modes.KINDS == ("data-parallel", "persistent", "work-stealing", "stream-k", "split-k")
    assert modes.REDUCTIONS == ("atomic", "linear", "tree")
    assert modes.GROUPED == ("none", "m", "k")
    assert modes.BODIES == ("auto", "blocks", "pipelined")
    assert modes.TILE_LOOPS == ("flat", "per-group")
    assert modes.GROUPED_KINDS == ("persistent",)
    assert modes.FIXUP_REDUCTIONS == ("linear", "tree")
    assert modes.DEFAULT_REDUCTION == "linear"


@pytest.mark.parametrize("member", [*Kind, *Reduction, *Grouped, *Body, *TileLoop])
def test_a_member_is_its_string(member: modes.Mode) -> None:
    value = member.value
    assert member == value and hash(member) == hash(value)
    assert str(member) == f"{member}" == value
    assert repr(member) == repr(value)  # messages that list the modes read as before
    assert json.dumps(member) == json.dumps(value)
    assert {value: 1}[member] == 1 and type(member)(value) is member


def test_a_kernel_spec_takes_strings_or_members() -> None:
    """The same spec, the same bundle name; the fields become members."""
    by_str = S.KernelSpec("stream-k", "tree", "none", "bf16", 64, 64, 32, 8, 4, None)
    by_enum = S.KernelSpec(
        Kind.STREAM_K, Reduction.TREE, Grouped.NONE, "bf16", 64, 64, 32, 8, 4, None
    )
    assert by_str == by_enum and hash(by_str) == hash(by_enum)
    assert by_str.name == "gemm_streamk_tree_bf16_64x64x32_g8_w4"
    assert type(by_str.kind) is Kind and type(by_str.reduction) is Reduction
    assert type(by_str.grouped) is Grouped
    linear = S.KernelSpec("stream-k", "linear", "k", "fp16", 64, 64, 32, 8, 4, None)
    assert linear.name == "gemm_streamk_linear_groupedk_fp16_64x64x32_g8_w4"
    with pytest.raises(ValueError, match="grouped must be one of"):
        S.KernelSpec("persistent", None, "x", "fp16", 64, 64, 32, 8, 4, None)
    with pytest.raises(ValueError, match="unknown schedule kind 'split-n'"):
        S.KernelSpec("split-n", None, "none", "fp16", 64, 64, 32, 8, 4, None)


def test_only_work_stealing_kernels_have_chiplets() -> None:
    """num_xcds is work stealing's (the op verifier refuses it on the other kinds):
    another kind's spec takes the machine's count but its binary has none."""
    spec = S.KernelSpec("persistent", None, "none", "fp16", 64, 64, 32, 8, 4, None, num_xcds=4)
    assert spec.num_xcds == 1 and "_x" not in spec.name
    ws = S.KernelSpec("work-stealing", None, "none", "fp16", 64, 64, 32, 8, 4, None, num_xcds=4)
    assert ws.num_xcds == 4 and ws.name.endswith("_x4")
    with pytest.raises(ValueError, match="num_xcds must be a positive integer"):
        S.KernelSpec("persistent", None, "none", "fp16", 64, 64, 32, 8, 4, None, num_xcds=0)


def test_the_schedules_namespace_is_its_two_modules() -> None:
    """gemm_opt.core.schedules defines nothing itself: each name comes from the
    schedule math (partition), the kernel ABI (abi) or the modes; the H100
    tuning is not core."""
    from gemm_opt.core.schedules import abi, partition

    sources = {"abi": set(abi.__all__), "partition": set(partition.__all__)}
    assert not sources["abi"] & sources["partition"]
    mode_names = set(S.__all__) - sources["abi"] - sources["partition"]
    assert mode_names <= set(modes.__all__)
    for name in S.__all__:
        owner = modes if name in mode_names else abi if name in sources["abi"] else partition
        assert getattr(S, name) is getattr(owner, name), name
    assert sources["abi"] | sources["partition"] <= set(S.__all__)
    for name in ("GPU_CONFIGS", "GPU_CONFIG", "gpu_config_name", "config_serves"):
        assert not hasattr(S, name), name
