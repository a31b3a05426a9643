"""triton_bridge's own rules, run in this process (not in a worker).

The kept Triton context and its use count, the private cache and the
worker's scratch folder, the text checks before a compile, what a compile
records, and how Triton's stderr becomes diagnostics.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from triton import knobs

from gemm_opt.lowering import triton_bridge as tb
from gemm_opt.lowering.isolation import Isolated

REFERENCE = Path(__file__).resolve().parents[2] / "examples" / "reference"
GFX950 = (REFERENCE / "min_gemm_gfx950.ttgir").read_text()


def in_fresh_thread(fn: Any) -> Any:
    """``fn()`` on a new thread: its own kept Triton contexts."""
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    assert out, "the thread raised"
    return out[0]


# ---------------------------------------------------------------------------
# CompiledArtifact.metrics without AMDGPU assembly


@pytest.mark.parametrize(("shared", "lds"), [(None, 0), (0, 0), (1024, 1024)])
def test_metrics_without_amdgcn_is_the_lds_size_alone(shared: int | None, lds: int) -> None:
    art = tb.CompiledArtifact({"ptx": "//"}, {"shared": shared}, 0.1)
    assert art.metrics == tb.IsaMetrics(lds_bytes=lds)


# ---------------------------------------------------------------------------
# the kept Triton context


def test_a_kept_context_serves_its_uses_then_a_fresh_one_replaces_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tb, "TRITON_CONTEXT_USES", 3)

    def uses() -> list[int]:
        contexts = [tb._triton_context("gfx950") for _ in range(7)]
        first = [c for c in contexts if c is contexts[0]]
        assert len({id(c) for c in contexts}) == 3
        return [len(first), contexts.index(contexts[3]), contexts.index(contexts[6])]

    # uses 1-3 share one context, 4-6 the next, 7 a third
    assert in_fresh_thread(uses) == [3, 3, 6]


def test_a_context_made_before_a_fork_is_not_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    def pair() -> tuple[Any, Any, Any]:
        a = tb._triton_context("gfx950")
        kept = tb._triton_contexts.by_target["gfx950"]
        assert kept[0] == os.getpid() and kept[2] == 1
        kept[0] = os.getpid() + 1  # as if made in the parent of a fork
        b = tb._triton_context("gfx950")
        return a, b, tb._triton_context("gfx950")

    a, b, c = in_fresh_thread(pair)
    assert b is not a and c is b


# ---------------------------------------------------------------------------
# verified_text and tensordesc_metadata


class _Module:
    """The calls verified_text and tensordesc_metadata make on a module."""

    def __init__(self, ok: bool = True, descs: list[dict[str, Any]] | None = None) -> None:
        self.ok, self.descs, self.walked = ok, descs or [], 0

    def verify(self) -> bool:
        return self.ok

    def walk(self, fn: Any) -> None:
        self.walked += 1

    def str(self) -> str:
        return "module {}"

    def get_tensordesc_metadata(self) -> list[dict[str, Any]]:
        return self.descs


def test_verified_text_prints_a_verified_module_and_rejects_another() -> None:
    assert tb.verified_text(_Module()) == "module {}"
    with pytest.raises(tb.TritonError, match="verifier rejected"):
        tb.verified_text(_Module(ok=False))


def test_verified_text_walks_the_ops_only_with_a_context_and_a_target() -> None:
    for target, context, walks in [("", None, 0), ("gfx950", None, 0), ("", object(), 0)]:
        m = _Module()
        tb.verified_text(m, target, context)
        assert m.walked == walks, (target, context)
    m = _Module()
    tb.verified_text(m, "gfx950", object())
    assert m.walked == 1


_CUDA_HEAD = (
    "#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, "
    "elementBitWidth = 16}>\n"
    'module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, '
    'ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {\n'
    "  tt.func public @k(%a: !tt.ptr<f16>, %m: i32, %k: i32) {\n"
    "    %c1 = arith.constant 1 : i64\n"
)
_CUDA_TAIL = "    tt.return\n  }\n}\n"
_MAKE_DESC = (
    "    %s = arith.extsi %k : i32 to i64\n"
    "    %d = tt.make_tensor_descriptor %a, [%m, %k], [%s, %c1] : !tt.ptr<f16>, "
    "!tt.tensordesc<64x64xf16, #shared>\n"
)


def test_only_a_cuda_module_with_tma_ops_gets_triton_tma_lowering() -> None:
    # The pass lowers the descriptor (here unused, so it goes) and folds the
    # constants; a module without TMA ops prints as built, unused constant kept.
    context = tb._triton_context("cuda:90")
    tma = tb._parse_text(_CUDA_HEAD + _MAKE_DESC + _CUDA_TAIL, "cuda:90")
    text = tb.verified_text(tma, "cuda:90", context)
    assert "tt.make_tensor_descriptor" not in text and "arith.constant" not in text
    plain = tb._parse_text(_CUDA_HEAD + _CUDA_TAIL, "cuda:90")
    assert "arith.constant 1 : i64" in tb.verified_text(plain, "cuda:90", context)


_DESC = {"block_size": [64, 128], "swizzle": 128, "elem_size": 2, "elem_type": 6}


@pytest.mark.parametrize(
    ("flags", "plain"),
    [({}, True), ({"is_im2col": True}, False), ({"fp4_padded": True}, False)],
)
def test_only_plain_tiled_host_descriptors_are_taken(flags: dict[str, bool], plain: bool) -> None:
    module = _Module(descs=[{**_DESC, "is_im2col": False, "fp4_padded": False, **flags}])
    if plain:
        (md,) = tb.tensordesc_metadata(module)
        assert (md["block"], md["swizzle"], md["elem_bytes"]) == ([64, 128], 128, 2)
    else:
        with pytest.raises(tb.TritonError, match="is not a plain tiled one"):
            tb.tensordesc_metadata(module)


# ---------------------------------------------------------------------------
# the work folder and the private cache


def test_a_workers_scratch_folder_is_used_and_emptied_of_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tb, "scratch_dir", lambda: str(tmp_path))
    keep = tmp_path / "kept"
    keep.mkdir()
    with tb._workdir() as work:  # no cache folder yet: nothing to empty there
        assert work == str(tmp_path)
        Path(work, "kernel.ttgir").write_text("x")
    assert sorted(os.listdir(tmp_path)) == ["kept"]
    (tmp_path / "cache").mkdir()
    with tb._workdir() as work:
        Path(work, "cache", "kernel.hsaco").write_bytes(b"\0")
        os.symlink(keep, tmp_path / "link")
        os.symlink(tmp_path / "kept" / "f", tmp_path / "file_link")
        (keep / "f").write_text("x")
    # files go; folders and links (not followed) stay
    assert sorted(os.listdir(tmp_path)) == ["cache", "file_link", "kept", "link"]
    assert os.listdir(tmp_path / "cache") == []


def test_without_a_worker_a_temporary_folder_is_made_and_removed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tb, "scratch_dir", lambda: None)
    with tb._workdir() as work:
        assert Path(work).name.startswith(tb._TMP_PREFIX) and os.path.isdir(work)
    assert not os.path.exists(work)


def test_the_private_cache_writes_in_place_and_finds_nothing(tmp_path: Path) -> None:
    with knobs.cache.scope():
        knobs.cache.dir = str(tmp_path / "cache")
        cls = tb._private_cache()
        cache = cls("key")
        assert cache.private and cache.cache_dir == knobs.cache.dir
        cls("key")  # the folder exists now
        blob = cache.put(b"\0\1", "k.hsaco")
        text = cache.put("ttgir", "k.ttgir")
        assert Path(blob).read_bytes() == b"\0\1" and Path(text).read_text() == "ttgir"
        group = {"child_paths": {"k.ttgir": text}}
        cache.put(json.dumps(group), "__grp__k.json")
        assert cache.get_group("k.json") is None
        assert not cls("key", override=True).private
        assert not cls("key", dump=True).private
        assert not cls("key", False, True).private


# ---------------------------------------------------------------------------
# compile_module and _parse_text


def test_compile_module_keeps_options_fp_fusion_and_times_honestly() -> None:
    t0 = time.perf_counter()
    art = tb.compile_module(GFX950, "gfx950", {"num_warps": 4, "num_stages": 3})
    wall = time.perf_counter() - t0
    assert art.metadata["num_stages"] == 3 and art.metadata["enable_fp_fusion"] is True
    assert art.metadata["target"] == ("hip", "gfx950", 64)
    assert 0 < art.compile_seconds <= wall
    art = tb.compile_module(GFX950, "gfx950", {"enable_fp_fusion": False, "num_warps": 4})
    assert art.metadata["enable_fp_fusion"] is False


def test_parse_text_checks_the_declared_target_and_num_warps() -> None:
    assert tb._parse_text(GFX950, "gfx950") is not None
    undeclared = GFX950.replace('ttg.target = "hip:gfx950", ', "")
    assert undeclared != GFX950
    assert tb._parse_text(undeclared, "gfx950") is not None  # nothing declared: no clash
    with pytest.raises(tb.TritonError, match='requested target is "hip:gfx942"'):
        tb._parse_text(GFX950, "gfx942")
    # (ops with layouts already fail to parse without it: an empty kernel)
    warps = (
        'module attributes {"ttg.num-warps" = 4 : i32} {\n  tt.func @k() {\n    tt.return\n  }\n}\n'
    )
    assert tb._parse_text(warps, "gfx950") is not None
    no_warps = (
        'module attributes {ttg.target = "hip:gfx950"} {\n  tt.func @k() {\n    tt.return\n  }\n}\n'
    )
    with pytest.raises(tb.TritonError, match=r'no "ttg\.num-warps" attribute'):
        tb._parse_text(no_warps, "gfx950")


# ---------------------------------------------------------------------------
# diagnostics


def test_located_diagnostics_hide_the_unlocated_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake(stderr: str) -> None:
        run = Isolated(ok=False, exception="RuntimeError: failed", stderr=stderr)
        monkeypatch.setattr(tb, "run_in_worker", lambda work, *args: run)

    fake("/x/a.ttgir:3:4: error: bad type\n<unknown>:0: error: pass failed\n")
    with pytest.raises(tb.TritonError) as info:
        tb._text_work(print)
    assert str(info.value) == "/x/a.ttgir:3:4: error: bad type"
    fake("<unknown>:0: error: pass failed\n")
    with pytest.raises(tb.TritonError) as info:
        tb._text_work(print)
    assert str(info.value) == "<unknown>: error: pass failed"


def test_only_our_temporary_file_is_shown_as_ttgir() -> None:
    ours = f"/tmp/{tb._TMP_PREFIX}abc/{tb._STEM}.ttgir"
    lines = [
        f"{ours}:1:2: error: a",
        f"/home/u/{tb._STEM}.ttgir:3:4: error: b",
        f"/tmp/{tb._TMP_PREFIX}abc/other.ttgir:5:6: error: c",
        "<unknown>:0: warning: d",
    ]
    diags = tb.parse_diagnostics("\n".join(lines))
    assert [(d.where, d.line, d.col) for d in diags] == [
        ("<ttgir>", 1, 2),
        (f"/home/u/{tb._STEM}.ttgir", 3, 4),
        (f"/tmp/{tb._TMP_PREFIX}abc/other.ttgir", 5, 6),
        ("<unknown>", 0, 0),
    ]


def test_a_cuda_module_gets_no_warp_group_allocation_here() -> None:
    # TTGIR the lowering printed for the first case of
    # test/lit/lowering/convert-warp-specialize-cuda.mlir: NVIDIA's own TTGIR
    # stage allocates the partitions' warps, so the text stays as it was.
    text = (Path(__file__).parent / "data" / "warp_specialize_cuda90.ttgir").read_text()
    assert "ttg.warp_specialize(" in text and "ttg.total-num-warps" not in text
    module = tb._parse_text(text, "cuda:90")
    assert tb.verified_text(module, "cuda:90", tb._triton_context("cuda:90")) == text
