"""What a process loads once for every compile: the tile dialect's IRDL
module (emitted once, parsed from bytecode in later contexts) and the compile
path's Python (imported before workers fork)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gemm_opt import dialect
from gemm_opt.core.ext_compat import ext, ir
from gemm_opt.dialect.tile import Tile

ROOT = Path(__file__).resolve().parents[2]


def _emitted_afresh() -> str:
    """The IRDL module as the bindings emit it, op by op, in a new context."""
    with ir.Context(), ir.Location.unknown():
        return str(ext.Dialect._emit_module.__func__(Tile))  # type: ignore[attr-defined]


def test_a_later_context_gets_the_same_irdl_module_from_the_cache() -> None:
    dialect.make_context()  # the process's first load fills the cache
    assert Tile._irdl_bytecode is not None
    with ir.Context(), ir.Location.unknown():
        dialect.import_ops()
        cached = str(Tile._emit_module())
    assert cached == _emitted_afresh()


def test_every_later_context_parses_and_verifies_tile_ir() -> None:
    text = (ROOT / "examples" / "gemm_gfx1250.mlir").read_text()
    printed = []
    for _ in range(3):
        with dialect.make_context():
            module = ir.Module.parse(text)
            assert module.operation.verify()
            printed.append(str(module))
    assert printed[0] == printed[1] == printed[2]


def test_a_changed_set_of_definitions_is_emitted_again() -> None:
    dialect.make_context()
    key, blob = Tile._irdl_bytecode  # type: ignore[misc]
    Tile._irdl_bytecode = ((*key, -1), b"not bytecode")  # a cache made for other definitions
    try:
        with ir.Context(), ir.Location.unknown():
            assert str(Tile._emit_module()) == _emitted_afresh()
        assert Tile._irdl_bytecode[0] == key
    finally:
        Tile._irdl_bytecode = (key, blob)


def test_import_compile_path_imports_what_a_worker_would_import_in_its_first_compile() -> None:
    code = (
        "import sys\n"
        "from gemm_opt.lowering import compile as c\n"
        "mods = ('gemm_opt.dialect.schedule', 'gemm_opt.lowering.convert_tile_to_triton_gpu',"
        " 'gemm_opt.passes.lower_gemm_schedule', 'gemm_opt.passes.fuse_tdm_copies',"
        " 'triton.compiler.compiler')\n"
        "assert not any(m in sys.modules for m in mods), [m for m in mods if m in sys.modules]\n"
        "c.import_compile_path()\n"
        "missing = [m for m in mods if m not in sys.modules]\n"
        "assert not missing, missing\n"
        "from gemm_opt.dialect.tile import Tile\n"
        "assert Tile._irdl_bytecode is not None\n"
        "print('ok')\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "ok"


def test_the_triton_context_is_kept_per_target_renewed_and_never_shared_across_a_fork(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os
    import threading

    from gemm_opt.lowering import triton_bridge as tb

    monkeypatch.setattr(tb, "TRITON_CONTEXT_USES", 3)
    monkeypatch.setattr(tb, "_triton_contexts", threading.local())
    first = [tb._triton_context("gfx1250") for _ in range(3)]
    assert first[0] is first[1] is first[2]
    renewed = tb._triton_context("gfx1250")  # the fourth build: a fresh context
    assert renewed is not first[0]
    assert tb._triton_context("cuda:90") is not renewed  # one per target
    assert tb._triton_context("gfx1250") is renewed
    pid = os.getpid()
    monkeypatch.setattr(os, "getpid", lambda: pid + 1)  # as in a forked worker
    assert tb._triton_context("gfx1250") is not renewed
