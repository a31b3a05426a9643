"""``schedule="auto"`` picks only kernels that run where the call runs, and launches
what its estimate assumed: split-K's ``tiles * S``, stream-K no more programs than K
iterations.

On the GPU the kernels are the loaded bundles' own index (:func:`gemm_opt.runtime.plan.available_kernels`);
here a stand-in store holds a chosen set of names, and the model runs the picks.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import gemm_opt
from gemm_opt.core import schedules as S
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.runtime import autotune as A
from gemm_opt.runtime import cost_model as C
from gemm_opt.runtime import gemm as rt
from gemm_opt.runtime import plan as P

SMALL = h100.GPU_CONFIGS["small"]
NAMES = {cfg: name for name, cfg in (*h100.GPU_CONFIGS.items(), *h100.SWAP_AB_CONFIGS.items())}


def _label(c) -> str:
    """A candidate's or choice's label without its split factor (the kernel's)."""
    return C.Candidate(
        c.schedule, c.reduction, c.config, NAMES.get(c.config, ""), swap_ab=c.swap_ab
    ).label


def _without(*labels: str) -> A.Available:
    """Every kernel but the candidates of ``labels`` (any split factor)."""

    def runs(kind: str, red: str | None, cfg, swap_ab: bool = False) -> bool:
        return C.Candidate(kind, red, cfg, NAMES.get(cfg, ""), swap_ab=swap_ab).label not in labels

    return A.Available(("without", labels), runs)


@pytest.mark.parametrize("shape", [(512, 512, 8192), (16, 4096, 7168), (3, 123, 6207)])
def test_a_missing_best_candidate_gives_the_next_one(shape, tmp_path) -> None:
    """The bundle lacks the model's best kernel: auto takes the best one it has, and
    explain names the skipped one and why."""
    problem = A.Problem("dense", *shape)
    ranked = A.rank(problem, "bf16", root=tmp_path)
    best = ranked[0].candidate
    base = _label(best)
    avail = _without(base)
    got = A.resolve(problem, "bf16", root=tmp_path, available=avail)
    want = next(e.candidate for e in ranked if avail(e.candidate))
    assert (got.schedule, got.reduction, got.config, got.split_k) == (
        want.schedule, want.reduction, want.config, want.split_k,
    )  # fmt: skip
    assert _label(got) != base
    ex = A.explain(problem, "bf16", root=tmp_path, available=avail)
    assert ex.choice == got and ex.estimated_us == next(e.us for e in ranked if e.candidate == want)
    assert best in {e.candidate for e in ex.missing}
    assert all(avail(e.candidate) for e in ex.estimates)
    text = str(ex)
    assert f"skipped: {best.label}" in text and "not in the bundles" in text


def test_the_memo_keeps_sets_of_kernels_apart(tmp_path) -> None:
    """The same problem under two sets of kernels resolves twice (the key names the set)."""
    args = ("dense", 512, 512, 8192, 1, "bf16")
    full = A.choose(*args, root=tmp_path)
    cut = A.choose(*args, root=tmp_path, available=_without(_label(full)))
    assert _label(cut) != _label(full)
    assert A.choose(*args, root=tmp_path) == full


def test_an_exact_hit_without_its_kernel_falls_to_the_model() -> None:
    """A tuned choice the bundles lack for this layout is no hit: the model picks among
    what is there."""
    problem, choice, dtype = next(
        e for e in A.load_table("cuda:90", A.DEFAULT_TUNED_DIR) if e[1].reduction != "atomic"
    )
    root = A.DEFAULT_TUNED_DIR
    assert A.resolve(problem, dtype, root=root) == choice and choice.source == "table"
    avail = _without(_label(choice))
    got = A.resolve(problem, dtype, root=root, available=avail)
    assert got.source == "model" and avail(got) and _label(got) != _label(choice)


def test_nothing_available_picks_the_best_so_the_launch_names_the_missing_kernel(
    tmp_path,
) -> None:
    """An empty bundle folder: the pick is the model's best; the launch then raises
    KernelMissing with the build command (never a silent other kernel)."""
    none = A.Available("none", lambda *_: False)
    problem = A.Problem("dense", 512, 512, 8192)
    got = A.resolve(problem, "bf16", root=tmp_path, available=none)
    assert got == A.resolve(problem, "bf16", root=tmp_path)


class _Store:
    def __init__(self, names: set[str]) -> None:
        self.dir = "/bundles/cuda90"
        self._names = {n: None for n in names}

    def kernels(self) -> dict[str, None]:
        return self._names


def test_available_kernels_read_the_bundle_index_for_the_layout(monkeypatch) -> None:
    """The GPU's set is the loaded bundle's kernel names for the call's form, dtype and
    layout; with an on-demand builder every kernel counts."""
    dp = S.KernelSpec("data-parallel", None, "none", "bf16", **SMALL.__dict__, trans_b=True)
    sk = S.KernelSpec("stream-k", "linear", "none", "bf16", **SMALL.__dict__)
    monkeypatch.setattr(rt, "store", lambda target: _Store({dp.name, sk.name}))
    monkeypatch.setattr(rt, "has_builder", lambda: False)
    nt = P.available_kernels("cuda:90", "none", "bf16", 1, True, False)
    nn = P.available_kernels("cuda:90", "none", "bf16", 1, False, False)
    assert nt is not None and nn is not None and nt.key != nn.key
    assert nt.runs("data-parallel", None, SMALL) and not nt.runs("stream-k", "linear", SMALL)
    assert nn.runs("stream-k", "linear", SMALL) and not nn.runs("data-parallel", None, SMALL)
    # a config the kernels cannot take is no kernel (not an error)
    assert not nn.runs("data-parallel", None, S.GemmConfig(48, 48, 32, 8, 4))
    monkeypatch.setattr(rt, "has_builder", lambda: True)
    assert P.available_kernels("cuda:90", "none", "bf16", 1, True, False) is None


def test_auto_on_the_gpu_passes_the_layouts_kernels(monkeypatch) -> None:
    """resolve_auto on a CUDA device: the choice comes from the bundle's kernels of the
    operands' layout (transposed B here), never from a kernel that is not there."""
    torch = pytest.importorskip("torch")
    names = {
        S.KernelSpec(kind, None, "none", "bf16", **cfg.__dict__, trans_b=True).name
        for kind in ("data-parallel", "persistent")
        for cfg in h100.GPU_CONFIGS.values()
    }
    monkeypatch.setattr(rt, "store", lambda target: _Store(names))
    monkeypatch.setattr(rt, "has_builder", lambda: False)
    monkeypatch.setattr(rt, "device_target", lambda torch, device: "cuda:90")
    monkeypatch.setattr(rt, "sm_count", lambda torch, device: 132)
    a = SimpleNamespace(device=torch.device("cuda", 0))
    for shape in ((16, 4096, 7168), (512, 512, 8192), (4096, 4096, 4095)):
        problem = ("dense", *shape, 1)
        kind, red, cfg, split, swap = P.resolve_auto(
            "auto", None, None, problem, "cuda", "bf16", a, None, 1, True, False
        )
        spec = S.KernelSpec(kind, red, "none", "bf16", **cfg.__dict__, trans_b=True)
        assert spec.name in names and split is None and not swap


def _ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def test_auto_split_k_launches_the_slices_the_model_chose() -> None:
    """Where the model picks split-K, the plan runs ``tiles * S`` programs for its ``S``
    (not the resident count's), and the result is the GEMM."""
    m, n, k = 33, 123, 6207  # more rows than swap-AB takes
    choice = A.choose("dense", m, n, k, 1, "fp16")
    assert choice.schedule == "split-k" and choice.split_k in C.SPLIT_K_FACTORS
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    kw = dict(schedule="auto", reduction=None, config=None, num_programs=None)
    plan = P.plan("matmul", a, b, num_xcds=1, out=None, seed=None, **kw)
    rows, cols = (n, m) if choice.swap_ab else (m, n)  # swap-AB tiles C^T
    tiles = S.tile_count(rows, cols, choice.config.block_m, choice.config.block_n)
    assert plan.spec.kind == "split-k" and plan.auto_split_k == choice.split_k
    assert plan.programs == plan.grid == tiles * choice.split_k
    got = gemm_opt.matmul(a, b, schedule="auto")
    np.testing.assert_allclose(got.astype(np.float32), _ref(a, b), rtol=2e-2, atol=2e-1)
    # an explicit num_programs still wins
    plan = P.plan("matmul", a, b, num_xcds=1, out=None, seed=None, **{**kw, "num_programs": 2})
    assert plan.programs == tiles


def test_auto_stream_k_launches_what_its_estimate_assumed() -> None:
    """program_count for an auto stream-K plan is the cost model's count: aligned, and
    at most the K iterations (no fall-back to whole tiles for lack of work)."""
    plan = SimpleNamespace(
        num_programs=None, auto_split_k=None, auto_stream_k=True, total_tiles=2,
        spec=SimpleNamespace(block_k=128), scalars={"K": 6207},
    )  # fmt: skip
    assert P.program_count(plan, 132) == C.stream_k_programs(2, 49, 132) == 98
    plan.total_tiles, plan.scalars = 64, {"K": 8192}
    assert P.program_count(plan, 132) == S.aligned_stream_k_programs(64, 64, 132)
