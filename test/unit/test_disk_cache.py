"""Kernels built on demand: cache keys, the on-disk cache (atomic, shared by processes),
the runtime's builder hook, and the error for GPUs gemm-opt has no kernels for."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import threading
from collections.abc import Callable
from dataclasses import fields, replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from support import cache_worker
from support.fake_bundles import fake_kernel

from gemm_opt.core import schedules as S
from gemm_opt.kernels import disk_cache as D
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.runtime import Bundle, read_bundle
from gemm_opt.runtime import gemm as rt
from gemm_opt.runtime.bundle import TensorMap

BASE = S.KernelSpec("stream-k", "linear", "none", "fp16", 64, 64, 32, 4, 4, None)
TOOLS = {
    "triton": "3.9.0",
    "gemm_opt": "0.1.0",
    "gemm_opt_source": "0" * 64,
    "bundle_format": "gemm-opt-bundle/1",
}


# ---- keys ------------------------------------------------------------------------------

_FP8 = {"kind": "persistent", "reduction": None, "dtype": "f8e4m3", "block_k": 64, "trans_b": True}
#: One change per KernelSpec field (each a valid spec).
CHANGES = {
    "kind": {"kind": "persistent", "reduction": None},
    "reduction": {"reduction": "tree"},
    "grouped": {"grouped": "m", "kind": "persistent", "reduction": None},
    "dtype": {"dtype": "bf16"},
    "block_m": {"block_m": 128},
    "block_n": {"block_n": 128},
    "block_k": {"block_k": 64},
    "group_m": {"group_m": 8},
    "num_warps": {"num_warps": 8},
    "num_stages": {"num_stages": 2},
    "num_xcds": {"kind": "work-stealing", "reduction": None, "num_xcds": 2},  # its kind's
    "trans_b": {"trans_b": True},
    "trans_a": {"trans_a": True},
    "trans_c": {"trans_c": True},
    "aligned": {"aligned": True},
    "tma": {"aligned": True, "tma": True},
    "vector_bytes": {"aligned": True, "vector_bytes": 8},
    # FP8 kernels only (dense data-parallel/persistent, B stored (N, K), block_k % 64).
    "scale": {**_FP8, "scale": "rowwise"},
    "out_dtype": {**_FP8, "out_dtype": "fp32"},
    "epilogue": {"epilogue": S.EpilogueSpec(activation="silu", bias="fp16")},
    "imprecise_acc": {**_FP8, "imprecise_acc": 128},
}


def test_every_spec_field_changes_the_key() -> None:
    assert set(CHANGES) == {f.name for f in fields(S.KernelSpec)}
    base = D.cache_key(BASE, "cuda:90", TOOLS)
    keys = {base}
    for name, change in CHANGES.items():
        key = D.cache_key(replace(BASE, **change), "cuda:90", TOOLS)
        assert key not in keys, name
        keys.add(key)
    # reduction alone (kind kept) and kind alone (reduction kept) differ too
    assert D.cache_key(replace(BASE, reduction="atomic"), "cuda:90", TOOLS) not in keys
    # an FP8 kernel's scale and C type alone differ too
    fp8 = replace(BASE, **_FP8)
    fp8_keys = {
        D.cache_key(replace(fp8, **change), "cuda:90", TOOLS)
        for change in (
            {}, {"scale": "tensorwise"}, {"scale": "rowwise"}, {"out_dtype": "fp32"},
            {"imprecise_acc": 128}, {"scale": "block128", "block_k": 128},
        )
    }  # fmt: skip
    assert len(fp8_keys) == 6


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_every_tool_version_changes_the_key(tool: str) -> None:
    other = {**TOOLS, tool: TOOLS[tool] + "x"}
    assert D.cache_key(BASE, "cuda:90", TOOLS) != D.cache_key(BASE, "cuda:90", other)


def test_the_target_changes_the_key_and_the_folder(tmp_path: Path) -> None:
    assert D.cache_key(BASE, "cuda:90", TOOLS) != D.cache_key(BASE, "cuda:100", TOOLS)
    path = D.entry_path(BASE, "cuda:90", tmp_path, TOOLS)
    assert path.parent == tmp_path / "cuda90"
    key = D.cache_key(BASE, "cuda:90", TOOLS)
    assert path.name == f"{BASE.name}-{key[: D.KEY_DIGITS]}.bundle"


def test_the_key_is_stable_across_processes() -> None:
    # a hash of canonical JSON, not Python's salted hash()
    key = D.cache_key(BASE, "cuda:90", TOOLS)
    assert key == D.cache_key(S.KernelSpec(**BASE.__dict__), "cuda:90", dict(TOOLS))
    assert len(key) == 64 and int(key, 16) >= 0


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv(D.CACHE_DIR_ENV, str(tmp_path / "c"))
    assert D.cache_dir() == tmp_path / "c"
    monkeypatch.delenv(D.CACHE_DIR_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert D.cache_dir() == tmp_path / "x" / "gemm-opt"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert D.cache_dir() == tmp_path / "h" / ".cache" / "gemm-opt"


# ---- the cache with a synthetic compiler -------------------------------------------------


@pytest.fixture
def builds(monkeypatch):
    """Counts builds; each returns a fake kernel."""
    calls: list[S.KernelSpec] = []

    def build(spec, target):
        calls.append(spec)
        return fake_kernel(spec)

    monkeypatch.setattr(D, "build", build)
    D.clear_memory()
    yield calls
    D.clear_memory()


def test_built_once_then_memory_then_disk(builds, tmp_path: Path) -> None:
    k1 = D.load_or_build(BASE, "cuda:90", tmp_path)
    assert len(builds) == 1
    (entry,) = (tmp_path / "cuda90").iterdir()
    assert read_bundle(entry).kernels[0] == k1
    assert D.load_or_build(BASE, "cuda:90", tmp_path) is k1  # memory
    D.clear_memory()
    assert D.load_or_build(BASE, "cuda:90", tmp_path) == k1  # disk
    assert len(builds) == 1
    D.load_or_build(replace(BASE, block_m=128), "cuda:90", tmp_path)  # another key
    assert len(builds) == 2 and len(list((tmp_path / "cuda90").iterdir())) == 2


@pytest.mark.parametrize(
    "spoil",
    [
        lambda p: p.write_text("{"),  # torn or corrupt
        lambda p: p.write_text(""),
        lambda p: Bundle((fake_kernel(replace(BASE, block_m=128)),)).write(p),  # another spec
        lambda p: Bundle((replace(fake_kernel(BASE), gemm_opt="0.0.1"),)).write(p),
        lambda p: Bundle((fake_kernel(BASE), replace(fake_kernel(BASE), name="x"))).write(p),
    ],
)
def test_a_bad_entry_is_rebuilt_and_replaced(builds, tmp_path: Path, spoil) -> None:
    path = D.entry_path(BASE, "cuda:90", tmp_path)
    path.parent.mkdir(parents=True)
    spoil(path)
    kernel = D.load_or_build(BASE, "cuda:90", tmp_path)
    assert len(builds) == 1
    assert read_bundle(path).kernels == (kernel,)


def _entry_text(edit=None, raw: tuple[str, str] | None = None) -> str:
    """A hand-written entry of BASE (a host descriptor included), after ``edit`` changes its
    kernel's JSON and ``raw`` replaces a piece of its text."""
    kernel = replace(
        fake_kernel(BASE),
        tensormaps=(TensorMap("a", ("M", 64), (64, 1), (64, 64), 3, 2, 6),),
    )
    doc = Bundle((kernel,)).to_json()
    if edit is not None:
        edit(doc["kernels"][0])
    text = json.dumps(doc)
    return text.replace(*raw) if raw else text


def _setting(key: str, value) -> Callable[[dict], None]:
    return lambda k: k.__setitem__(key, value)


#: Malformed entries of every kind the reader once let escape as another exception
#: (RecursionError, TypeError) or took although only a launch could fail on them.
MALFORMED = {
    "deep": _entry_text(_setting("meta", {"x": "@"}), ('"@"', "[" * 50_000 + "]" * 50_000)),
    "list-in-shape": _entry_text(lambda k: k["tensormaps"][0].__setitem__("shape", [["M"], 64])),
    "unicode-digits": _entry_text(_setting("sm", "sm_\u00b2\u00b3a")),
    "bool-version": _entry_text(raw=('"version": 1', '"version": true')),
    "warp-64": _entry_text(_setting("threads_per_warp", 64)),
    "shared-2**70": _entry_text(_setting("shared_bytes", 2**70)),
    "nan-constexpr": _entry_text(
        lambda k: k["args"][1].__setitem__("constexpr", 0), ('"constexpr": 0', '"constexpr": NaN')
    ),
    "big-constexpr": _entry_text(lambda k: k["args"][1].__setitem__("constexpr", 2**31)),
    "grid-negative": _entry_text(_setting("grid", [-1, 1, 1])),
    "grid-huge": _entry_text(_setting("grid", [1, 2**16, 1])),
    "warps-huge": _entry_text(_setting("num_warps", 2**40)),
}


def test_a_hand_written_entry_is_served(builds, tmp_path: Path) -> None:
    """The entry MALFORMED spoils is itself valid: each is rebuilt for its one fault."""
    path = D.entry_path(BASE, "cuda:90", tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(_entry_text())
    assert D.load_or_build(BASE, "cuda:90", tmp_path).tensormaps[0].shape == ("M", 64)
    assert builds == []


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_entry_is_rebuilt_not_raised(builds, tmp_path: Path, name: str) -> None:
    path = D.entry_path(BASE, "cuda:90", tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(MALFORMED[name])
    kernel = D.load_or_build(BASE, "cuda:90", tmp_path)
    assert builds == [BASE]
    assert read_bundle(path).kernels == (kernel,)


def test_bundle_writes_are_atomic(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "k.bundle"
    Bundle((fake_kernel(BASE, b"\x7fELF old"),)).write(path)

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        Bundle((fake_kernel(BASE, b"\x7fELF new"),)).write(path)
    monkeypatch.undo()
    assert (
        read_bundle(path).kernels[0].binary == b"\x7fELF old"
    )  # the reader never sees half a file
    assert [p.name for p in tmp_path.iterdir()] == ["k.bundle"]  # no temporary left


def test_concurrent_writers_leave_one_valid_file(tmp_path: Path) -> None:
    path = tmp_path / "k.bundle"
    payloads = [b"\x7fELF" + bytes([i]) * 4096 for i in range(8)]
    threads = [
        threading.Thread(target=Bundle((fake_kernel(BASE, p),)).write, args=(path,))
        for p in payloads
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert read_bundle(path).kernels[0].binary in payloads
    assert [p.name for p in tmp_path.iterdir()] == ["k.bundle"]


# ---- two processes, the real compiler ----------------------------------------------------


def test_two_processes_fill_the_cache_at_once(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    barrier, queue = ctx.Barrier(2), ctx.Queue()
    procs = [
        ctx.Process(target=cache_worker.fill, args=(str(tmp_path), barrier, queue))
        for _ in range(2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=240)
        assert p.exitcode == 0
    digests = [queue.get(timeout=5) for _ in procs]
    assert digests[0] == digests[1]  # identical bytes
    entries = list((tmp_path / "cuda90").iterdir())
    assert [e.name for e in entries] == [D.entry_path(cache_worker.SMALL, "cuda:90", tmp_path).name]
    (kernel,) = read_bundle(entries[0]).kernels  # one valid entry, no temporaries
    assert hashlib.sha256(kernel.binary).hexdigest() == digests[0]
    assert kernel.sm.startswith("sm_90") and kernel.name == cache_worker.SMALL.name


# ---- the runtime's builder hook ----------------------------------------------------------


@pytest.fixture
def builder():
    built: list[str] = []

    def build(spec, target):
        built.append(spec.name)
        return fake_kernel(spec)

    rt.set_builder(build)
    yield built
    rt.set_builder(None)


def test_store_builds_what_no_bundle_holds(builder, tmp_path: Path) -> None:
    st = rt.KernelStore("cuda:90", tmp_path)
    spec = S.KernelSpec("data-parallel", None, "none", "fp16", **h100.GPU_CONFIG.__dict__)
    assert st.for_spec(spec).name == spec.name
    assert st.for_spec(spec) is st.for_spec(spec) and builder == [spec.name]
    # the pipelined body pairs with TMA and aligned twins, built too, wgrad's
    # included (S.tma_copies), data-parallel's with narrow ones; the blocks body
    # (one warp) has none
    twins = [replace(spec, aligned=True, tma=True), replace(spec, aligned=True)]
    twins += [replace(spec, aligned=True, vector_bytes=v) for v in (8, 4)]
    assert [k.name for _, k in st.twins(spec)] == [t.name for t in twins]
    wgrad = replace(spec, grouped="k", kind="persistent")
    wgrad_twins = [replace(wgrad, aligned=True, tma=True), replace(wgrad, aligned=True)]
    assert [k.name for _, k in st.twins(wgrad)] == [t.name for t in wgrad_twins]
    blocks = replace(spec, num_warps=1)
    assert st.twins(blocks) == []
    assert replace(blocks, aligned=True).name not in builder


def test_without_a_builder_a_missing_kernel_says_how_to_build(tmp_path: Path) -> None:
    rt.set_builder(None)
    st = rt.KernelStore("cuda:90", tmp_path)
    with pytest.raises(rt.KernelMissing, match="build_bundles --target cuda:90"):
        st.for_spec(BASE)


def test_install_needs_the_compiler(monkeypatch) -> None:
    try:
        assert rt.compiler_installed()  # this machine has the MLIR bindings and Triton
        assert D.install() and rt.has_builder()
        rt.set_builder(None)
        monkeypatch.setattr(rt, "compiler_installed", lambda: False)
        assert not D.install() and not rt.has_builder()
    finally:
        rt.set_builder(None)


# ---- unsupported GPUs --------------------------------------------------------------------


def fake_torch(cap: tuple[int, int], name: str) -> SimpleNamespace:
    cuda = SimpleNamespace(
        get_device_capability=lambda device=None: cap,
        get_device_name=lambda device=None: name,
    )
    return SimpleNamespace(cuda=cuda)


def test_device_target_of_an_h100() -> None:
    assert rt.device_target(fake_torch((9, 0), "NVIDIA H100 80GB HBM3"), 0) == "cuda:90"


@pytest.mark.parametrize(
    ("cap", "name"), [((8, 0), "NVIDIA A100-SXM4-80GB"), ((10, 0), "NVIDIA B200"), ((8, 9), "L4")]
)
def test_other_gpus_get_a_clear_error(cap, name) -> None:
    with pytest.raises(RuntimeError) as e:
        rt.device_target(fake_torch(cap, name), 0)
    assert str(e.value) == (
        f"gemm-opt has kernels for sm_90 (H100, H200) only; CUDA device 0 ({name}) is "
        f"sm_{cap[0]}{cap[1]}"
    )


def test_launch_paths_check_the_gpu_first(monkeypatch) -> None:
    import torch

    from gemm_opt.runtime import plan as P

    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (8, 0))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA A100")
    c = SimpleNamespace(device=torch.device("cuda", 0))
    with pytest.raises(RuntimeError, match="is sm_80"):
        rt.launch(BASE, {"c": c}, num_programs=1, total_tiles=1)
    with pytest.raises(RuntimeError, match="is sm_80"):
        rt.resident_programs(BASE, "cuda:0")
    # schedule="auto" on such a GPU fails the same way before resolving
    with pytest.raises(RuntimeError, match="gemm-opt has kernels for sm_90"):
        P.resolve_auto("auto", None, None, ("dense", 64, 64, 64, 1), "cuda", "fp16", c, None, 1)


def test_an_unwritable_cache_warns_and_keeps_the_kernel(builds, tmp_path: Path) -> None:
    root = tmp_path / "ro"
    root.write_text("a file where the cache folder should be")
    with pytest.warns(RuntimeWarning, match="cannot write the kernel cache entry"):
        kernel = D.load_or_build(BASE, "cuda:90", root)
    assert kernel.name == BASE.name and len(builds) == 1
    assert D.load_or_build(BASE, "cuda:90", root) is kernel  # memory


def test_an_edited_compiler_source_changes_every_key(monkeypatch, tmp_path: Path) -> None:
    """The same version string with other sources (a checkout, an edited pass) gives
    other keys: a kernel built by one compiler is never served to another."""
    import gemm_opt

    pkg = tmp_path / "gemm_opt"
    (pkg / "passes").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "passes" / "p.py").write_text("X = 1\n")
    monkeypatch.setattr(gemm_opt, "__file__", str(pkg / "__init__.py"))
    spec = S.KernelSpec("persistent", None, "none", "fp16", 128, 128, 64, 8, 8, None)
    D.source_fingerprint.cache_clear()
    try:
        before = D.source_fingerprint(), D.cache_key(spec, "cuda:90")
        (pkg / "passes" / "p.py").write_text("X = 2\n")
        D.source_fingerprint.cache_clear()
        after = D.source_fingerprint(), D.cache_key(spec, "cuda:90")
        assert before[0] != after[0] and before[1] != after[1]
        assert D.versions()["gemm_opt_source"] == after[0]
    finally:
        D.source_fingerprint.cache_clear()
