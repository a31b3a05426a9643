"""The API's layout checks of CUDA operands at their edges (found by
``benchmarks/mutation.py``).

``_check_cuda_layout`` guards every grouped CUDA operand and every ``out``
before a launch: rows of unit stride, groups back to back, 16-byte aligned
data. The checks read only strides, sizes and the data pointer, so CPU
tensors of the same layouts pin them here.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

import gemm_opt
from gemm_opt.core import schedules as S
from gemm_opt.runtime import autotune
from gemm_opt.runtime import plan as P
from gemm_opt.runtime.plan import (
    MAX_BLOCK,
    MAX_CONFIG_VALUE,
    MAX_WARPS,
    _check_cuda_layout,
    _check_out,
    _ld,
    _schedule,
    check_config,
    resolve_auto,
)


def _ok(x: torch.Tensor) -> None:
    _check_cuda_layout(x, "a")


def _refused(x: torch.Tensor, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        _check_cuda_layout(x, "a")


def test_rows_must_have_unit_stride() -> None:
    _ok(torch.empty(4, 8, dtype=torch.float16))
    # 8 rows of 2 elements read down a column: stride 8 between a row's elements
    _refused(torch.empty(2, 8, dtype=torch.float16).t(), r"^a: the kernel reads rows with unit")


def test_a_single_column_has_no_inner_stride_to_check() -> None:
    column = torch.empty(8, 4, dtype=torch.float16).t()[:, :1]  # strides (1, 4)
    assert column.stride(-1) != 1
    _ok(column)


def test_groups_must_be_back_to_back() -> None:
    _ok(torch.empty(2, 4, 8, dtype=torch.float16))
    gapped = torch.empty(2, 5, 8, dtype=torch.float16)[:, :4]  # a spare row after each group
    _refused(gapped, r"^a: the groups must be stored back to back, 4 rows")


def test_one_group_may_have_a_gap_after_it() -> None:
    _ok(torch.empty(1, 5, 8, dtype=torch.float16)[:, :4])


def test_a_group_of_one_row_is_back_to_back_at_any_row_stride() -> None:
    """A group of one row: its row stride is the dense row length, whatever
    the tensor's row stride says."""
    _ok(torch.empty(2, 1, 8, dtype=torch.float16))
    _refused(
        torch.empty(2, 2, 8, dtype=torch.float16)[:, :1],  # group stride 16, one row of 8
        r"^a: the groups must be stored back to back, 1 rows",
    )


def test_data_must_be_16_byte_aligned() -> None:
    base = torch.empty(64, dtype=torch.float16)
    _ok(base[8:].view(7, 8))  # 16 bytes in
    _refused(base[1:57].view(7, 8), r"^a: data at 0x[0-9a-f]+ is not 16-byte aligned")


@pytest.mark.parametrize(
    ("x", "backend", "ld"),
    [
        (torch.empty(2, 16)[:, :8], "cuda", 16),  # a view keeps its row stride
        (torch.empty(2, 3, 16)[:, :, :8], "cuda", 16),
        (torch.empty(1, 16)[:, :8], "cuda", 8),  # one row: no row stride to keep
        (torch.empty(16)[:8], "cuda", 8),
        (torch.empty(2, 16)[:, :8], "model", 8),  # the model copies to dense storage
    ],
)
def test_the_leading_dimension_of_an_operand(x: torch.Tensor, backend: str, ld: int) -> None:
    assert _ld(x, backend, 8) == ld


# ---- check_config at its limits ------------------------------------------------------------

DEFAULT = S.GemmConfig()


@pytest.mark.parametrize(
    "config",
    [
        {"group_m": 1, "num_stages": 1},  # the least positive values
        {"num_warps": 1},  # 2**0 is a power of two
        {"group_m": MAX_CONFIG_VALUE},  # a 32-bit attribute's largest value
        {"num_warps": MAX_WARPS},
        {"block_m": MAX_BLOCK, "block_n": MAX_BLOCK, "block_k": MAX_BLOCK},
        {"block_m": 16, "block_n": 16, "block_k": 16},
    ],
)
def test_a_config_at_its_limits_is_taken(config: dict) -> None:
    cfg = check_config(config, DEFAULT)
    assert all(getattr(cfg, k) == v for k, v in config.items())


@pytest.mark.parametrize(
    ("config", "match"),
    [
        ({"group_m": 0}, r"^config.group_m must be a positive integer, got 0$"),
        ({"group_m": True}, r"^config.group_m must be a positive integer, got True$"),
        ({"num_stages": 2.0}, r"^config.num_stages must be a positive integer, got 2.0$"),
        ({"num_warps": 2 * MAX_WARPS}, rf"^config.num_warps must be at most {MAX_WARPS} "),
        ({"block_k": 2 * MAX_BLOCK}, rf"^config.block_k must be at most {MAX_BLOCK} "),
        ({"num_warps": 6}, r"^config.num_warps must be a power of two, got 6$"),
        ({"block_n": 8}, r"^config.block_n must be at least 16, got 8$"),
    ],
)
def test_a_config_past_its_limits_is_refused(config: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        check_config(config, DEFAULT)


@pytest.mark.parametrize("schedule", ["bogus", "Stream-K", 5, None])
def test_an_unknown_schedule_is_refused_by_name(schedule: object) -> None:
    with pytest.raises(
        ValueError, match=r"^schedule must be 'auto' or one of 'data-parallel', .*; got "
    ):
        _schedule(schedule, None)


def test_a_cuda_out_is_checked_for_alignment_unless_the_call_is_traced() -> None:
    """A traced call (meta tensors) has no data to check; a real one does."""
    out = torch.empty(65, dtype=torch.float16)[1:].view(8, 8)  # 2 bytes past 16-byte aligned
    _check_out(out, (8, 8), "fp16", "cuda", out.device, True)
    with pytest.raises(ValueError, match=r"^out: data at 0x[0-9a-f]+ is not 16-byte aligned"):
        _check_out(out, (8, 8), "fp16", "cuda", out.device, False)


@pytest.mark.parametrize(
    ("sa", "sb"),
    [((4, 8), (2, 8, 4)), ((2, 4, 8), (8, 4)), ((3, 1, 4, 8), (2, 8, 4))],
)
def test_a_matrix_times_a_batch_broadcasts_like_numpy(sa: tuple, sb: tuple) -> None:
    a = (np.arange(np.prod(sa)) % 7).reshape(sa).astype(np.float16)
    b = (np.arange(np.prod(sb)) % 5).reshape(sb).astype(np.float16)
    c = gemm_opt.matmul(a, b)
    want = a.astype(np.float32) @ b.astype(np.float32)
    assert c.shape == want.shape
    np.testing.assert_array_equal(np.asarray(c, np.float32), want)


@pytest.mark.parametrize("schedule", ["stream-k", "work-stealing", "persistent", "data-parallel"])
def test_a_batch_under_any_schedule_equals_numpy(schedule: str) -> None:
    """Back-to-back batches run as one grouped grid under the grouped schedules
    and data-parallel; under another schedule, batch by batch."""
    a = (np.arange(2 * 16 * 8) % 7).reshape(2, 16, 8).astype(np.float16)
    b = (np.arange(2 * 8 * 16) % 5).reshape(2, 8, 16).astype(np.float16)
    c = gemm_opt.matmul(a, b, schedule=schedule)
    np.testing.assert_array_equal(
        np.asarray(c, np.float32), a.astype(np.float32) @ b.astype(np.float32)
    )


def test_only_work_stealing_needs_a_program_per_chiplet() -> None:
    a = (np.arange(16 * 8) % 7).reshape(16, 8).astype(np.float16)
    b = (np.arange(8 * 16) % 5).reshape(8, 16).astype(np.float16)
    with pytest.raises(ValueError, match="at least one program per chiplet: num_programs=2 <"):
        gemm_opt.matmul(a, b, schedule="work-stealing", num_programs=2, num_xcds=8)
    c = gemm_opt.matmul(a, b, schedule="persistent", num_programs=2, num_xcds=8)
    np.testing.assert_array_equal(
        np.asarray(c, np.float32), a.astype(np.float32) @ b.astype(np.float32)
    )


@pytest.mark.parametrize("schedule", ["stream-k", "persistent"])
def test_a_batch_over_a_shared_b_folds_into_m_under_any_schedule(schedule: str) -> None:
    """Only grouped routes fall back to batch-by-batch launches for a schedule the
    grouped kernels lack: a batch of ``a`` over one ``b`` stays one dense GEMM."""
    a = (np.arange(2 * 16 * 8) % 7).reshape(2, 16, 8).astype(np.float16)
    b = (np.arange(8 * 16) % 5).reshape(8, 16).astype(np.float16)
    kw = dict(reduction=None, num_programs=None, num_xcds=1, config=None, out=None, seed=None)
    plan = P.plan("matmul", a, b, schedule=schedule, **kw)
    assert plan.sub is None
    assert (plan.scalars["M"], plan.scalars["N"], plan.scalars["K"]) == (32, 16, 8)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@pytest.mark.parametrize("schedule", ["data-parallel", "persistent", "auto"])
def test_a_batch_back_to_back_plans_one_grouped_grid(schedule: str) -> None:
    """a's batches along M over a stack of b: the grouped "m" kernels, G groups of
    M rows, each its own row of tiles; and a column-major a with a row-major b,
    both along K (bmm's dB): the grouped "k" kernels, K = every batch's."""
    g, m, k, n = 3, 70, 32, 100
    kw = dict(reduction=None, num_programs=None, num_xcds=1, config=None, out=None, seed=None)
    a = np.ones((g, m, k), np.float16)
    b = np.ones((g, k, n), np.float16)
    plan = P.plan("matmul", a, b, schedule=schedule, **kw)
    bm, bn = plan.spec.block_m, plan.spec.block_n
    assert plan.sub is None and plan.lens == (m,) * g and plan.num_groups == g
    assert (plan.scalars["M"], plan.scalars["K"], plan.scalars["num_groups"]) == (g * m, k, g)
    assert plan.total_tiles == g * _cdiv(m, bm) * _cdiv(n, bn)
    at = np.ones((g, k, m), np.float16).transpose(0, 2, 1)  # (g, m, k), column-major
    plan = P.plan("matmul", at, b, schedule=schedule, **kw)
    bm, bn = plan.spec.block_m, plan.spec.block_n
    assert plan.sub is None and plan.lens == (k,) * g and plan.num_groups == g
    assert (plan.scalars["M"], plan.scalars["K"], plan.scalars["num_groups"]) == (m, g * k, g)
    assert plan.total_tiles == g * _cdiv(m, bm) * _cdiv(n, bn)


@pytest.mark.parametrize("shape", [(64, 64, 64), (512, 256, 128), (2, 128, 64, 256)])
def test_the_model_runs_its_own_config_whatever_the_shape(shape: tuple[int, ...]) -> None:
    """The shape-tuned configs are the GPU's; the model keeps S.MODEL_CONFIG."""
    *batch, m, k, n = shape
    kw = dict(reduction=None, num_programs=None, num_xcds=1, config=None, out=None, seed=None)
    a = np.ones((*batch, m, k), np.float16)
    b = np.ones((*batch, k, n), np.float16)
    spec = P.plan("matmul", a, b, schedule="persistent", **kw).spec
    want = S.MODEL_CONFIG
    assert (spec.block_m, spec.block_n, spec.block_k) == (want.block_m, want.block_n, want.block_k)


# ---- schedule="auto": what the choice is given and what is kept of it -------------------


class _Chooser:
    """Stands in for ``autotune.choose``: returns ``choice``, keeps the kernels it was offered."""

    def __init__(self, choice: autotune.Choice) -> None:
        self.choice = choice
        self.available: list[autotune.Available | None] = []

    def __call__(self, *problem, available=None, **kw) -> autotune.Choice:
        self.available.append(available)
        return self.choice


def _auto(
    monkeypatch: pytest.MonkeyPatch,
    choice: autotune.Choice,
    cfg: S.GemmConfig | None = None,
    num_programs: int | None = None,
    num_xcds: int = 1,
    swap_ok: bool = True,
) -> tuple[tuple, _Chooser]:
    chooser = _Chooser(choice)
    monkeypatch.setattr(autotune, "choose", chooser)
    got = resolve_auto(
        "auto", None, cfg, ("dense", 64, 4096, 4096, 1), "cpu", "fp16", None,
        num_programs, num_xcds, swap_ok=swap_ok,
    )  # fmt: skip
    return got, chooser


TILE = S.GemmConfig(block_m=64, block_n=64)


def _choice(schedule: str = "data-parallel", split_k: int | None = None, swap: bool = False):
    return autotune.Choice(schedule, None, S.GemmConfig(), "model", None, split_k, swap)


def test_auto_offers_the_model_any_kernel_but_swap_ab_where_it_is_ruled_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _auto(monkeypatch, _choice())[1].available == [None]
    (offered,) = _auto(monkeypatch, _choice(), swap_ok=False)[1].available
    assert offered is not None
    assert offered.runs("data-parallel", None, TILE, False)
    assert not offered.runs("data-parallel", None, TILE, True)


def test_an_auto_choice_of_work_stealing_checks_the_programs_per_chiplet(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ValueError, match="at least one program per chiplet: num_programs=2 <"):
        _auto(monkeypatch, _choice("work-stealing"), num_programs=2, num_xcds=8)
    assert _auto(monkeypatch, _choice("work-stealing"), num_xcds=8)[0][0] == "work-stealing"
    assert _auto(monkeypatch, _choice(), num_programs=2, num_xcds=8)[0][0] == "data-parallel"


def test_an_explicit_config_drops_the_choices_split_k_and_swap_ab(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    chosen = _choice("split-k", split_k=4, swap=True)
    assert _auto(monkeypatch, chosen)[0] == ("split-k", None, S.GemmConfig(), 4, True)
    assert _auto(monkeypatch, chosen, cfg=TILE)[0] == ("split-k", None, TILE, None, False)


def _swiglu_plan(monkeypatch: pytest.MonkeyPatch, choice: autotune.Choice) -> P.GemmPlan:
    monkeypatch.setattr(autotune, "choose", _Chooser(choice))
    kw = dict(reduction=None, num_programs=None, num_xcds=1, config=None, out=None, seed=None)
    a, b = np.ones((64, 64), np.float16), np.ones((64, 128), np.float16)
    return P.plan("matmul", a, b, schedule="auto", activation="swiglu", **kw)


WIDE = S.GemmConfig(block_m=128, block_n=256, block_k=64, num_stages=4)


def test_auto_with_swiglu_runs_data_parallel_whatever_the_pick(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SwiGLU's two sums per tile cannot be split along K: a split-K pick runs
    data-parallel, in a tile whose two accumulators fit, as a data-parallel pick does."""
    split = autotune.Choice("split-k", None, WIDE, "model", None, 4)
    picked = _swiglu_plan(monkeypatch, split)
    assert (picked.spec.kind, picked.auto_split_k) == ("data-parallel", None)
    assert picked.spec.block_m * picked.spec.block_n <= P.SWIGLU_TILE
    kept = _swiglu_plan(monkeypatch, autotune.Choice("data-parallel", None, WIDE, "model"))
    assert kept.spec.kind == "data-parallel"
    assert kept.spec.block_m * kept.spec.block_n <= P.SWIGLU_TILE


@pytest.mark.parametrize(
    ("schedule", "programs"),
    [
        ("data-parallel", 1),
        ("persistent", 1),
        ("work-stealing", 4),
        ("stream-k", 1),
        ("split-k", 1),
    ],
)
def test_an_empty_problem_runs_one_program_or_one_per_chiplet(schedule: str, programs: int):
    """N = 0: no tile, yet a launch needs a program (work stealing: one per chiplet)."""
    kw = dict(reduction=None, num_programs=None, num_xcds=4, config=None, out=None, seed=None)
    a, b = np.ones((8, 16), np.float16), np.zeros((16, 0), np.float16)
    plan = P.plan("matmul", a, b, schedule=schedule, **kw)
    assert plan.total_tiles == 0
    assert P.work_programs(plan, 8) == programs
    if schedule == "split-k":  # schedule="auto"'s split-K launches S programs per tile, or S
        assert P.program_count(dataclasses.replace(plan, auto_split_k=3), 8) == 3


def test_grouped_plans_on_the_host_count_each_groups_tiles() -> None:
    """Host lengths (64, 1, 64): 3 row tiles of 64, not the 5 a bound over 129 rows
    and 3 groups allows (the bound is for lengths left on the device)."""
    kw = dict(reduction=None, num_programs=None, num_xcds=1, config=None, out=None, seed=None)
    a, w = np.ones((129, 32), np.float16), np.ones((3, 32, 100), np.float16)
    plan = P.plan("grouped_matmul", a, w, [64, 1, 64], schedule="persistent", **kw)
    assert (plan.spec.block_m, plan.spec.block_n) == (64, 64)
    assert plan.lens == (64, 1, 64) and plan.total_tiles == 3 * 2


@pytest.mark.parametrize(
    ("op", "shapes", "out"),
    [
        ("grouped_matmul", ((180, 32), (3, 32, 100)), (180, 100)),
        ("grouped_matmul_variable_k", ((180, 16), (180, 24)), (3, 16, 24)),
    ],
)
@pytest.mark.parametrize("schedule", ["persistent", "auto"])
def test_a_traced_grouped_call_names_its_kernel_unless_auto(op, shapes, out, schedule) -> None:
    """A traced call reads metadata only: a named schedule's kernel is known, auto's
    pick is not (it depends on the lengths)."""
    kw = dict(reduction=None, num_programs=None, num_xcds=1, config=None, out=None, seed=None)
    a, b = (torch.ones(s, dtype=torch.float16) for s in shapes)
    lens = torch.tensor([70, 10, 100])
    plan = P.plan(op, a, b, lens, schedule=schedule, meta=True, **kw)
    assert plan.out_shape == out
    assert (plan.spec is None) == (schedule == "auto")


def test_auto_with_a_bias_keeps_a_split_k_pick(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only SwiGLU's two sums refuse split-K: a bias epilogue runs the pick as chosen."""
    monkeypatch.setattr(autotune, "choose", _Chooser(_choice("split-k", split_k=2)))
    kw = dict(reduction=None, num_programs=None, num_xcds=1, config=None, out=None, seed=None)
    a, b = np.ones((64, 64), np.float16), np.ones((64, 128), np.float16)
    bias = np.ones(128, np.float16)
    plan = P.plan("matmul", a, b, schedule="auto", bias=bias, **kw)
    assert (plan.spec.kind, plan.auto_split_k) == ("split-k", 2)
