"""The plan's checks of CUDA operands, without a GPU (found by ``benchmarks/mutation.py``
in ``gemm_opt.runtime.plan``).

These checks read only a tensor's device, shape, strides and element size, so
torch's fake tensors stand in for CUDA ones (a fake tensor has a device, on a
machine without one, and no memory): the two operands' devices of a traced
call, each batch's 16-byte alignment, and a caller's config kept on CUDA by
the grouped and variable-K plans. The shape-tuned config, taken when none is
given, and ``auto`` read the GPU's SM count and target, which a fake device
lacks: the ``h100`` fixture gives them an H100's (132 SMs, cuda:90), for the
reduction a dense call's config is looked up with and variable-K's ``auto``
running its choice's config.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from gemm_opt.core import schedules as S
from gemm_opt.runtime import plan as P

F16 = torch.float16
#: Not the model's default and not a tuned one: a config taken from the caller.
CONFIG = S.GemmConfig(block_m=32, block_n=64, block_k=32, group_m=4, num_warps=4)
KW = dict(reduction=None, num_programs=None, num_xcds=1, out=None, seed=None)


@pytest.fixture
def fake() -> Iterator[None]:
    with FakeTensorMode(), warnings.catch_warnings():
        # the alignment checks read a fake tensor's data pointer (0: aligned)
        warnings.filterwarnings("ignore", "Accessing the data pointer of FakeTensor")
        yield


def _cuda(*shape: int, device: str = "cuda:0") -> torch.Tensor:
    return torch.empty(*shape, dtype=F16, device=device)


@pytest.mark.usefixtures("fake")
def test_a_traced_call_on_two_gpus_is_refused() -> None:
    a, b = _cuda(64, 64), _cuda(64, 64, device="cuda:1")
    with pytest.raises(ValueError, match=r"^b: expected a tensor on cuda:0 like a, got cuda:1"):
        P.plan("matmul", a, b, meta=True, schedule="persistent", config=None, **KW)
    P.plan("matmul", a, _cuda(64, 64), meta=True, schedule="persistent", config=None, **KW)


@pytest.mark.usefixtures("fake")
@pytest.mark.parametrize("which", ["a", "b"])
def test_each_operands_batches_must_start_16_byte_aligned(which: str) -> None:
    """Batch 1 of the strided operand starts 520 bytes after batch 0; the other
    operand's batches are 512 bytes apart."""
    strided = _cuda(2 * 260).as_strided((2, 16, 16), (260, 16, 1))
    dense = _cuda(2, 16, 16)
    a, b = (strided, dense) if which == "a" else (dense, strided)
    with pytest.raises(ValueError, match=rf"^{which}: batch 1 starts 520 bytes past the first"):
        P.plan("matmul", a, b, schedule="persistent", config=CONFIG, **KW)


def _blocks(plan: P.GemmPlan) -> tuple[int, ...]:
    s = plan.spec
    assert s is not None
    return (s.block_m, s.block_n, s.block_k, s.group_m, s.num_warps)


@pytest.mark.usefixtures("fake")
def test_the_grouped_plans_keep_a_callers_config_on_cuda() -> None:
    """The builders themselves (a launch plan also places the grid by the GPU's
    resident programs, which a fake device does not have)."""
    want = (32, 64, 32, 4, 4)
    lens = [32, 32, 32]
    fwd = P._grouped(
        _cuda(96, 32), _cuda(3, 32, 64), lens, meta=False, trans_b=False, validate=False,
        schedule="persistent", config=CONFIG, **KW,
    )  # fmt: skip
    assert fwd.backend == "cuda" and _blocks(fwd) == want
    wgrad = P._variable_k(
        _cuda(96, 32), _cuda(96, 64), lens, meta=False, validate=False,
        schedule="persistent", config=CONFIG, **KW,
    )  # fmt: skip
    assert wgrad.backend == "cuda" and _blocks(wgrad) == want


@pytest.fixture
def h100(monkeypatch) -> None:
    """The device facts a plan reads of a CUDA tensor's GPU (its compute units, its
    target): an H100's, where a fake tensor's device has none."""
    monkeypatch.setattr(P.rt, "sm_count", lambda torch, device: 132)
    monkeypatch.setattr(P.rt, "device_target", lambda torch, device: "cuda:90")


@pytest.mark.usefixtures("fake", "h100")
@pytest.mark.parametrize(("reduction", "blocks"), [("linear", (128, 128)), ("atomic", (128, 256))])
def test_a_dense_calls_shape_tuned_config_serves_its_reduction(reduction, blocks) -> None:
    """4096 x 4096 fills a wave of ``wide`` tiles (128 x 256), which linear stream-K's
    fix-up may not take (those kernels would spill): it gets ``mid``; atomic keeps ``wide``."""
    plan = P._matmul(
        _cuda(4096, 4096), _cuda(4096, 4096), meta=False, schedule="stream-k",
        reduction=reduction, config=None, num_programs=None, num_xcds=1, out=None, seed=None,
    )  # fmt: skip
    assert plan.spec is not None and plan.spec.reduction == reduction
    assert _blocks(plan)[:2] == blocks


@pytest.mark.usefixtures("fake", "h100")
def test_variable_k_auto_takes_the_choice_not_the_shape_tuned_config() -> None:
    """32 groups of 64 rows, M = 128, N = 512: the shape's class is ``narrow`` (64 x 128);
    ``auto`` chooses another config, and the plan must run that one."""
    s, m, n, g = 2048, 128, 512, 32
    a, b = _cuda(s, m), _cuda(s, n)
    plan = P._variable_k(
        a, b, [s // g] * g, meta=False, validate=False, schedule="auto", **{**KW, "config": None}
    )
    kind, _, cfg, _, _ = P.resolve_auto(P.AUTO, None, None, ("wgrad", m, n, s, g), "cuda", plan.dtype,
                                        a, None, 1)  # fmt: skip
    shape = P._shape_config(a, m, n, "k", groups=g)
    assert (cfg.block_m, cfg.block_n) != (shape.block_m, shape.block_n)
    assert plan.spec is not None and plan.spec.kind == kind
    assert _blocks(plan) == (cfg.block_m, cfg.block_n, cfg.block_k, cfg.group_m, cfg.num_warps)
