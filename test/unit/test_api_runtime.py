"""The GPU half of the API runs with only torch installed.

Each case runs a fresh interpreter in which the compiler (Triton, the MLIR
bindings, the dialect, passes, lowering, the kernel builders) and numpy
cannot be imported, as on the GPU machine: the API's checks, the bundle
store, argument binding and grid sizing need nothing else.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.fake_bundles import DeviceTensor, RecordingDriver, write_store

from gemm_opt.core import schedules as S
from gemm_opt.runtime import Arg, Bundle, BundleKernel, GridDim

# A blocked module behaves as if it were not installed: importing it raises
# ModuleNotFoundError, and importlib.util.find_spec finds no file for it (a spec
# without an origin: what torch's lazy probes, e.g. torch._dynamo's, skip).
BLOCKER = """
import importlib.abc, importlib.machinery, sys
BLOCKED = {blocked!r}
class Absent(importlib.abc.Loader):
    def create_module(self, spec):
        raise ModuleNotFoundError(f"blocked: {{spec.name}}", name=spec.name)
    def exec_module(self, module):
        pass
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in BLOCKED):
            return importlib.machinery.ModuleSpec(name, Absent(), origin=None)
        return None
sys.meta_path.insert(0, Blocker())
"""
COMPILER = [
    "triton",
    "torch_mlir",
    "numpy",
    "gemm_opt.core.ext_compat",
    "gemm_opt.dialect",
    "gemm_opt.passes",
    "gemm_opt.lowering",
    "gemm_opt.language",
    "gemm_opt.model",
    # every kernel builder; the H100 tile configurations (plain data the plan reads)
    # and the package, which imports nothing, stay importable
    *sorted(
        f"gemm_opt.kernels.{p.stem}"
        for p in (Path(__file__).resolve().parents[2] / "python/gemm_opt/kernels").glob("*.py")
        if p.stem not in ("__init__", "h100_configs")
    ),
    "gemm_opt.runtime.build",
]
SPEC = S.KernelSpec("stream-k", "linear", "none", "fp16", 128, 128, 64, 8, 4, 2)


def _bundle(root: Path) -> Path:
    names = SPEC.arg_names
    args = tuple(
        Arg(n, "*fp16" if n in "abc" else "*i32" if n == "sync" else "*fp32", 16)
        if n in ("a", "b", "c", "sync", "partials")
        else Arg(n, "i32")
        for n in reversed(names)  # an order other than kernel_args': bound by name
    )
    k = BundleKernel(
        name=SPEC.name,
        symbol="gemm",
        target="cuda:90",
        sm="sm_90a",
        num_warps=4,
        threads_per_warp=32,
        shared_bytes=0,
        args=args,
        grid=(GridDim(), GridDim(), GridDim()),
        binary=b"\x7fELF" + bytes(60),
        meta={},
    )
    folder = root / "cuda90"
    folder.mkdir()
    Bundle((k,)).write(folder / "schedules.bundle")
    return root


def _run(body: str, root: Path) -> str:
    code = BLOCKER.format(blocked=COMPILER) + textwrap.dedent(body)
    env = {"GEMM_OPT_BUNDLE_DIR": str(root), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, env=env
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_api_checks_and_bundle_lookup_need_only_torch(tmp_path: Path) -> None:
    out = _run(
        """
        import sys, torch, gemm_opt
        from gemm_opt.core import schedules as S
        from gemm_opt.runtime import gemm as rt
        spec = S.KernelSpec("stream-k", "linear", "none", "fp16", 128, 128, 64, 8, 4, 2)
        kernel = rt.store().get(spec.name)
        values = dict(a=1, b=2, c=3, sync=4, partials=5, M=6, N=7, K=8, lda=9, ldb=10, ldc=11)
        args = rt.bind_arguments(kernel.spec, spec.name, values)
        assert args == [5, 4, 11, 10, 9, 8, 7, 6, 3, 2, 1], args
        assert rt.launch_grid(spec, 132, 16) == (132, 1, 1)
        try:
            rt.store().get("gemm_nothing")
        except rt.KernelMissing as e:
            assert "python -m gemm_opt.kernels.build_bundles --target cuda:90" in str(e), e
        else:
            raise AssertionError("a missing kernel must fail")
        a = torch.zeros(8, 16, dtype=torch.float16)
        for call, want in [
            (lambda: gemm_opt.matmul(a, torch.zeros(15, 4, dtype=torch.float16)), "K = 16"),
            (lambda: gemm_opt.grouped_matmul(a, torch.zeros(2, 16, 4, dtype=torch.float16),
                                             torch.tensor([3, 4])), "sum to 7"),
            (lambda: gemm_opt.matmul(a, a.T, schedule="stream-k", reduction="x"), "reduction"),
        ]:
            try:
                call()
            except ValueError as e:
                assert want in str(e), e
            else:
                raise AssertionError("expected a ValueError")
        heavy = ("triton", "torch_mlir", "numpy", "gemm_opt.model")
        light = ("gemm_opt.kernels", "gemm_opt.kernels.h100_configs")  # data, no compiler
        print(sorted(
            m for m in sys.modules
            if m.split(".")[0] in heavy or m in heavy
            or (m.startswith("gemm_opt.kernels") and m not in light)
        ))
        """,
        _bundle(tmp_path),
    )
    assert out.strip() == "[]"


def test_a_missing_bundle_folder_is_a_clear_error(tmp_path: Path) -> None:
    out = _run(
        """
        from gemm_opt.runtime import gemm as rt
        try:
            rt.store().get("gemm_dataparallel_fp16_128x128x64_g8_w4")
        except rt.KernelMissing as e:
            print(e)
        """,
        tmp_path,
    )
    assert "(no bundles there)" in out and "build_bundles --target cuda:90" in out


def test_launch_grids_follow_the_schedule() -> None:
    from gemm_opt.runtime import gemm as rt

    dp = S.KernelSpec("data-parallel", None, "none", "fp16", 128, 64, 64, 8, 4, 2)
    assert rt.launch_grid(dp, 132, 9) == (9, 1, 1)
    pers = S.KernelSpec("persistent", None, "none", "fp16", 128, 64, 64, 8, 4, 2)
    assert rt.launch_grid(pers, 132, 9) == (9, 1, 1)
    assert rt.launch_grid(pers, 132, 900) == (132, 1, 1)


def test_each_launch_gets_its_own_workspace_with_zeroed_counters_and_flags() -> None:
    import torch

    from gemm_opt.runtime import gemm as rt

    layout = S.workspace_layout("stream-k", "linear", 132, 1, 128, 64)
    first, sync, partials = rt.allocate_workspace(torch, layout, "cpu")
    first.fill_(0xAB)  # a previous launch's flags and partials
    second, sync2, partials2 = rt.allocate_workspace(torch, layout, "cpu")
    assert first.data_ptr() != second.data_ptr(), "never shared by launches that may overlap"
    assert second.numel() == layout.total_bytes
    assert bool((second[: layout.sync_bytes] == 0).all()), "counters and flags start at 0"
    assert partials2 - sync2 == layout.partials_byte_offset == 768  # 256-byte multiple
    ws = S.workspace_layout("work-stealing", None, 132, 8, 128, 128)
    buf, sync, partials = rt.allocate_workspace(torch, ws, "cpu")
    counters = buf[: ws.sync_bytes].view(torch.int32)
    assert counters.numel() == 8 * S.COUNTER_STRIDE and bool((counters == 0).all())
    assert partials == sync  # no partials: the pointer is unused


def test_the_aligned_twin_runs_only_where_its_facts_hold(tmp_path: Path) -> None:
    """select_kernel checks the twin's facts with the launcher's own checks."""
    from dataclasses import replace

    from gemm_opt.runtime import gemm as rt

    plain = S.KernelSpec("persistent", None, "none", "fp16", 128, 128, 64, 8, 4, None)
    twin = replace(plain, aligned=True)
    st = write_store(tmp_path, (plain, twin))
    ok = dict(a=4096, b=8192, c=12288, M=100, N=256, K=512, lda=512, ldb=256, ldc=256)
    kernel, args = rt.select_kernel(st, plain, ok)
    assert kernel.name == twin.name and args == list(ok.values())
    # 16 bytes are 8 fp16 elements: a multiple of 8 keeps the twin, of 4 does not.
    for good in ({"K": 520, "lda": 520}, {"ldc": 264}, {"N": 248, "ldb": 248, "ldc": 248}):
        assert rt.select_kernel(st, plain, {**ok, **good})[0].name == twin.name, good
    for bad in ({"K": 516, "lda": 516}, {"ldc": 260}, {"N": 250, "ldb": 250, "ldc": 250}):
        kernel, _ = rt.select_kernel(st, plain, {**ok, **bad})
        assert kernel.name == plain.name, bad


def test_the_tma_twin_comes_first_and_needs_every_dimension(tmp_path: Path) -> None:
    """With a TMA twin bundled, select_kernel prefers it, then the aligned
    twin, then the plain kernel: the TMA twin only where its facts hold (K a
    multiple of block_k for grouped m) and M, N and K are at least 1."""
    from dataclasses import replace

    from gemm_opt.runtime import gemm as rt

    plain = S.KernelSpec("persistent", None, "m", "fp16", 128, 128, 64, 8, 4, None)
    aligned = replace(plain, aligned=True)
    tma = replace(plain, aligned=True, tma=True)
    assert rt.twins(plain) == [tma, aligned] and rt.twins(tma) == []
    assert tma.facts["K"] == 64  # what build_gemm_module states for grouped m
    st = write_store(tmp_path, (plain, aligned, tma))
    ok = dict(a=4096, b=8192, c=12288, M=100, N=256, K=512, lda=512, ldb=256, ldc=256)
    ok |= dict(group_lens=16384, num_groups=2)
    assert rt.select_kernel(st, plain, ok)[0].name == tma.name
    for bad, want in (
        ({"K": 520, "lda": 520}, aligned),  # K a multiple of 8, not of block_k
        ({"K": 0}, aligned),  # no TMA descriptor of a zero dimension
        ({"N": 250, "ldb": 250, "ldc": 250}, plain),
    ):
        assert rt.select_kernel(st, plain, {**ok, **bad})[0].name == want.name, bad


def test_wgrad_takes_its_tma_twin_where_aligned(tmp_path: Path) -> None:
    """wgrad (grouped k) has a TMA twin too (per-tile descriptors bound each
    group's K end): it runs where M, N and the strides are multiples of 8 bf16
    elements (16 bytes), whatever K, the routed token count (A (S, M) and B
    (S, N) are copied in whole rows of M and N: K bounds rows, not vectors;
    no K-block fact: a group's K end is bounded by the descriptors), the
    aligned twin where K is 0, the plain kernel where M is not aligned."""
    from dataclasses import replace

    from gemm_opt.runtime import gemm as rt

    plain = S.KernelSpec("persistent", None, "k", "bf16", 128, 128, 64, 8, 8, 3)
    aligned = replace(plain, aligned=True)
    tma = replace(plain, aligned=True, tma=True)
    assert rt.twins(plain) == [tma, aligned]
    assert tma.facts == aligned.facts and "M" in tma.facts
    st = write_store(tmp_path, (plain, aligned, tma))
    ok = dict(a=4096, b=8192, c=12288, M=512, N=256, K=1000, lda=512, ldb=256, ldc=256)
    ok |= dict(group_lens=16384, num_groups=8)
    assert rt.select_kernel(st, plain, ok)[0].name == tma.name
    assert "K" not in tma.facts
    for k in (8182, 8202, 33028, 32508, 1):  # rows two ranks received, and one
        assert rt.select_kernel(st, plain, {**ok, "K": k})[0].name == tma.name, k
    for bad, want in (
        ({"K": 0}, aligned),  # no TMA descriptor of a zero dimension
        ({"M": 504, "lda": 504}, tma),  # 8 bf16 elements are 16 bytes
        ({"M": 500, "lda": 500}, plain),
    ):
        assert rt.select_kernel(st, plain, {**ok, **bad})[0].name == want.name, bad


def _twin_store(tmp_path: Path, plain: S.KernelSpec):
    """A store of ``plain``'s kernel and its twins, with the facts the bundle builder
    states (:attr:`~gemm_opt.core.schedules.KernelSpec.facts`)."""
    from gemm_opt.runtime import gemm as rt

    return write_store(tmp_path, (plain, *rt.twins(plain)))


def test_the_memoized_kernel_choice_follows_every_fact_it_depends_on(tmp_path: Path) -> None:
    """select_kernel memoizes its choice by the facts the twins' checks read: the same
    shape with strides, an address, K or a type that break a twin's facts picks
    the next kernel even after a call that took the twin, and the memo's pick is
    what the checks alone pick (a fresh store, no memo) on every call."""
    from gemm_opt.runtime import gemm as rt

    plain = S.KernelSpec("persistent", None, "m", "fp16", 128, 128, 64, 8, 4, None)
    tma, aligned = rt.twins(plain)
    memo = _twin_store(tmp_path, plain)
    ok = dict(a=4096, b=8192, c=12288, M=100, N=256, K=512, lda=512, ldb=256, ldc=256)
    ok |= dict(group_lens=16384, num_groups=2)
    cases = [
        ({}, tma),
        ({"lda": 516}, plain),  # a row stride that breaks the aligned facts
        ({}, tma),  # and back: not stuck on the plain kernel
        ({"ldb": 260}, plain),
        ({"K": 520, "lda": 520}, aligned),  # K a multiple of 8, not of block_k
        ({"K": 0}, aligned),  # no TMA descriptor of a zero dimension
        ({"a": 4104}, plain),  # an address off the 16-byte facts
        ({"M": 2**31}, plain),  # out of i32: no kernel takes it; the plain one reports
        ({"N": True, "ldb": 8, "ldc": 8}, plain),  # a bool is checked as 1: unaligned
        ({"c": 12288.0}, plain),  # not an address: no kernel takes it; the plain one reports
        ({"N": 250, "ldb": 250, "ldc": 250}, plain),
        ({"M": 7}, tma),  # a fact no twin reads: the memo entry of the first call
    ]
    for change, want in cases:
        values = {**ok, **change}
        kernel, args = rt.select_kernel(memo, plain, values)
        fresh = _twin_store(tmp_path, plain)  # no memo: the checks alone
        assert kernel.name == rt.select_kernel(fresh, plain, values)[0].name == want.name, change
        assert args == [values[a.name] for a in kernel.spec.args]
    assert len(memo._selections) == len(cases) - 2  # hits: the repeated call, M=7


def test_the_store_follows_the_bundle_dir_variable(tmp_path: Path, monkeypatch) -> None:
    """store() is memoized by the variable's value: changing it switches stores,
    changing it back returns the first one (its kernels and memos)."""
    from gemm_opt.runtime import gemm as rt

    monkeypatch.setenv(rt.BUNDLE_DIR_ENV, str(tmp_path / "one"))
    first = rt.store()
    assert rt.store() is first and first.dir == tmp_path / "one" / "cuda90"
    monkeypatch.setenv(rt.BUNDLE_DIR_ENV, str(tmp_path / "two"))
    assert rt.store().dir == tmp_path / "two" / "cuda90"
    monkeypatch.delenv(rt.BUNDLE_DIR_ENV)
    assert rt.store().dir == rt.DEFAULT_BUNDLE_DIR / "cuda90"
    monkeypatch.setenv(rt.BUNDLE_DIR_ENV, str(tmp_path / "one"))
    assert rt.store() is first


def test_a_launch_allocates_a_workspace_only_for_schedules_that_use_one(
    tmp_path: Path, monkeypatch
) -> None:
    """rt.launch end to end on a fake driver: data-parallel and persistent kernels take
    no workspace and get none (no allocation); stream-K with a fix-up gets a fresh one
    per launch with its flags zeroed; the memoized twin choice follows the strides."""
    import torch

    from gemm_opt.runtime import cuda
    from gemm_opt.runtime import gemm as rt
    from gemm_opt.runtime import launch as launcher

    drv = RecordingDriver()
    monkeypatch.setattr(cuda, "driver", lambda: drv)
    monkeypatch.setattr(launcher, "_current_stream", lambda torch, device: 0)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    workspaces: list = []
    allocate = rt.allocate_workspace

    def on_cpu(torch, layout, device):  # the caching allocator's stand-in
        ws = allocate(torch, layout, "cpu")
        workspaces.append(ws[0])
        return ws

    monkeypatch.setattr(rt, "allocate_workspace", on_cpu)
    launched: list[str] = []
    call = launcher.Kernel.launch_values

    def record(self, *args, **kw):
        launched.append(self.name)
        return call(self, *args, **kw)

    monkeypatch.setattr(launcher.Kernel, "launch_values", record)
    dp = S.KernelSpec("data-parallel", None, "none", "fp16", 64, 64, 64, 8, 4, 4)
    sk = S.KernelSpec("stream-k", "linear", "none", "fp16", 64, 64, 64, 8, 4, 4)
    for spec in (dp, sk):
        root = tmp_path / spec.kind
        _twin_store(root, spec)
        monkeypatch.setenv(rt.BUNDLE_DIR_ENV, str(root))
        ok = dict(a=DeviceTensor(4096), b=DeviceTensor(8192), c=DeviceTensor(12288))
        ok |= dict(M=100, N=256, K=512, lda=512, ldb=256, ldc=256)
        # Off 16 bytes: data-parallel's narrow twins (8, 4 bytes), stream-K's plain kernel.
        v8, v4 = ("_aligned_v8", "_aligned_v4") if spec is dp else ("", "")
        for ldb, want in ((256, "_aligned_tma"), (260, v8), (258, v4), (264, "_aligned_tma")):
            values = {**ok, "ldb": ldb, "N": 256}
            rt.launch(spec, values, num_programs=8, total_tiles=8, target="cuda:90")
            assert launched[-1] == spec.name + want, (spec.kind, ldb)
        if spec is dp:
            assert workspaces == [] and drv.grids == [(8, 1, 1)] * 4
        else:
            layout = S.workspace_layout("stream-k", "linear", 8, 1, 64, 64)
            assert len(workspaces) == 4 and len({w.data_ptr() for w in workspaces}) >= 2
            for w in workspaces:
                assert w.numel() == layout.total_bytes
                assert bool((w[: layout.sync_bytes] == 0).all())


@pytest.mark.parametrize(
    ("kind", "reduction"), [("data-parallel", None), ("stream-k", "linear"), ("stream-k", "atomic")]
)
def test_a_prepared_launch_packs_what_the_full_launch_packs(
    tmp_path: Path, monkeypatch, kind, reduction
) -> None:
    """rt.launch(prepare=...) returns a launch that, on other tensors of the same facts,
    passes the parameters the full path passes for them (their addresses, the same
    kernel and grid), with a fresh zeroed workspace per call and C zeroed for atomic
    stream-K, as the host contract says."""
    import torch

    from gemm_opt.runtime import cuda
    from gemm_opt.runtime import gemm as rt
    from gemm_opt.runtime import launch as launcher

    drv = RecordingDriver()
    monkeypatch.setattr(cuda, "driver", lambda: drv)
    monkeypatch.setattr(launcher, "_current_stream", lambda torch, device: 0)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    workspaces: list = []
    allocate = rt.allocate_workspace

    def on_cpu(torch, layout, device):
        ws = allocate(torch, layout, "cpu")
        workspaces.append(ws[0])
        return ws

    monkeypatch.setattr(rt, "allocate_workspace", on_cpu)
    spec = S.KernelSpec(kind, reduction, "none", "fp16", 64, 64, 64, 8, 4, 4)
    _twin_store(tmp_path, spec)
    monkeypatch.setenv(rt.BUNDLE_DIR_ENV, str(tmp_path))
    shape = dict(M=100, N=256, K=512, lda=512, ldb=256, ldc=256)
    first = dict(a=DeviceTensor(4096), b=DeviceTensor(8192), c=DeviceTensor(12288))
    prepared = rt.launch(
        spec,
        {**first, **shape},
        num_programs=8,
        total_tiles=8,
        target="cuda:90",
        prepare=("a", "b", "c"),
    )
    assert isinstance(prepared, rt.Prepared) and prepared.kernel.name.endswith("_aligned_tma")
    for address in (65536, 1 << 40):
        t = [DeviceTensor(address + i * 4096) for i in range(3)]
        prepared(*t)
        via_prepared, ws_prepared = drv.params[-1], workspaces[-1:] if workspaces else []
        full_call = dict(a=t[0], b=t[1], c=t[2], **shape)
        assert rt.launch(spec, full_call, num_programs=8, total_tiles=8, target="cuda:90") is None
        sizes = launcher.parameter_sizes(prepared.kernel.spec)
        via_prepared = [p[:n] for p, n in zip(via_prepared, sizes, strict=True)]
        full = [p[:n] for p, n in zip(drv.params[-1], sizes, strict=True)]
        layout = S.workspace_layout(kind, reduction, 8, 1, 64, 64)
        if layout.total_bytes:  # the sync/partials addresses differ: a fresh workspace each
            workspace = {i for i in prepared.sync_slots if i is not None}
            zeroed = ws_prepared[0][: layout.sync_bytes] == 0
            assert workspace and layout.sync_bytes and bool(zeroed.all())
            keep = [i for i in range(len(full)) if i not in workspace]
            assert [via_prepared[i] for i in keep] == [full[i] for i in keep]
            assert [via_prepared[i] for i in workspace] != [full[i] for i in workspace]
        else:
            assert via_prepared == full
        assert drv.grids[-1] == drv.grids[-2]
        if reduction == "atomic":
            assert t[2].zeroed == 2, "C zeroed by both launches"
    assert len(drv.grids) == 5


def test_auto_stream_k_takes_the_aligned_program_count() -> None:
    """schedule="auto" with a stream-K pick launches the aligned count (one K
    range per program); an explicit stream-K schedule keeps the default and
    an explicit num_programs always wins."""
    from gemm_opt.runtime import plan as P

    spec = S.KernelSpec("stream-k", "atomic", "none", "bf16", 128, 128, 64, 8, 8, 3)
    scalars = {"M": 512, "N": 512, "K": 8192, "lda": 8192, "ldb": 512, "ldc": 512}

    def call(num_programs=None, auto=True):
        return P.GemmPlan(
            "matmul", "cuda", "bf16", (512, 512), spec, scalars,
            num_programs=num_programs, total_tiles=16, auto_stream_k=auto,
        )  # fmt: skip

    assert P.program_count(call(), 132) == 128  # 16 tiles x 128 iterations: 16 each
    assert P.program_count(call(auto=False), 132) == 132
    assert P.program_count(call(num_programs=132), 132) == 132
    assert P.program_count(call(num_programs=40), 132) == 40
