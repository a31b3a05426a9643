"""The GEMM runtime's own rules (found by ``benchmarks/mutation.py``): which CUDA
devices have kernels, whether kernels can be built here, and the builder slot.
A stand-in of ``torch.cuda`` plays the device (no GPU needed)."""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import pytest
from support.fake_bundles import fake_kernel

from gemm_opt.core import schedules as S
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.runtime import gemm as rt


def _torch(capability: tuple[int, int]) -> SimpleNamespace:
    cuda = SimpleNamespace(
        get_device_capability=lambda _: capability, get_device_name=lambda _: "a GPU"
    )
    return SimpleNamespace(cuda=cuda)


def test_sm90_devices_have_the_cuda90_kernels() -> None:
    assert rt.device_target(_torch((9, 0)), 0) == "cuda:90"


@pytest.mark.parametrize("capability", [(8, 0), (10, 0), (9, 1)])
def test_other_devices_are_refused_naming_what_is_supported(capability) -> None:
    sm = f"sm_{capability[0]}{capability[1]}"
    with pytest.raises(
        RuntimeError,
        match=rf"^gemm-opt has kernels for sm_90 \(H100, H200\) only; CUDA device 0 "
        rf"\(a GPU\) is {sm}$",
    ):
        rt.device_target(_torch(capability), 0)


@pytest.fixture
def fresh_compiler_check():
    rt.compiler_installed.cache_clear()
    yield
    rt.compiler_installed.cache_clear()


def test_kernels_build_where_the_bindings_and_triton_are(fresh_compiler_check) -> None:
    assert rt.compiler_installed() is True  # the development install has both


def test_kernels_do_not_build_without_the_bindings(monkeypatch, fresh_compiler_check) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "torch_mlir" else real(name)
    )
    assert rt.compiler_installed() is False


def test_kernels_do_not_build_without_triton(monkeypatch, fresh_compiler_check) -> None:
    import importlib.metadata

    def version(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    assert rt.compiler_installed() is False


def test_the_builder_slot_holds_one_builder_or_none(monkeypatch) -> None:
    monkeypatch.setattr(rt, "_builder", None)
    assert not rt.has_builder() and rt.builder() is None

    def build(spec, target):
        raise AssertionError("not called")

    rt.set_builder(build)
    assert rt.has_builder() and rt.builder() is build
    rt.set_builder(None)
    assert not rt.has_builder()


def test_a_store_of_an_empty_folder_has_no_kernel_and_says_so(tmp_path) -> None:
    store = rt.KernelStore("cuda:90", tmp_path)
    assert store.kernels() == {} and not store.has("gemm_k")
    with pytest.raises(rt.KernelMissing, match=r"cuda90 \(no bundles there\); build the bundles"):
        store.get("gemm_k")


def test_a_store_builds_a_missing_kernel_only_with_a_builder_and_when_asked(
    monkeypatch, tmp_path
) -> None:
    spec = S.KernelSpec("data-parallel", None, "none", "fp16", **h100.GPU_CONFIG.__dict__)
    monkeypatch.setattr(rt, "_builder", None)
    store = rt.KernelStore("cuda:90", tmp_path)
    assert store.lookup(spec) is None
    with pytest.raises(rt.KernelMissing):
        store.for_spec(spec)
    built: list[tuple[str, str]] = []

    def build(s: S.KernelSpec, target: str):
        built.append((s.name, target))
        return fake_kernel(s)

    rt.set_builder(build)
    assert store.lookup(spec, build=False) is None and built == []
    kernel = store.lookup(spec)
    assert kernel is not None and kernel.name == spec.name
    assert built == [(spec.name, "cuda:90")]
    assert store.for_spec(spec) is kernel and len(built) == 1  # kept for the process
