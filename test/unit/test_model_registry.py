"""The model's op table (``gemm_opt.model.registry``, ``gemm_opt.model.interpreter.OPS``).

Every op of the tile dialect has exactly one implementation or a stated reason why
the model never sees it; a second implementation is refused where it is registered;
the model's modules import no private name of each other and form no import cycle.
"""

from __future__ import annotations

import ast
import pkgutil
import re
from pathlib import Path

import pytest

import gemm_opt.model
from gemm_opt.dialect import make_context
from gemm_opt.dialect.tile import Tile
from gemm_opt.model import interpreter
from gemm_opt.model.core import TERMINATORS
from gemm_opt.model.registry import OpImpls, Registry

#: Ops of the dialect the model never executes, and why.
NOT_RUN = {
    "tile.gemm_schedule": "tile-lower-gemm-schedule replaces it by its loop nest before the model runs",
    "tile.schedule_yield": "the terminator of tile.gemm_schedule's body",
    "tile.warp_partition": "a region of tile.warp_specialize, which runs it",
    "tile.warp_partitions_end": "the terminator of tile.warp_specialize's partition list",
}

MODEL_DIR = Path(gemm_opt.model.__file__).parent
MODULES = sorted(m.name for m in pkgutil.iter_modules([str(MODEL_DIR)]))


def _noop(c, op):
    return lambda p, mask: None


def test_every_tile_op_has_one_implementation_or_a_reason() -> None:
    make_context()
    defined = {op.OPERATION_NAME for op in Tile.operations}
    implemented = {name for name in interpreter.OPS if name.startswith("tile.")}
    terminators = {name for name in TERMINATORS if name.startswith("tile.")}
    assert sorted(defined - implemented - terminators - NOT_RUN.keys()) == []
    assert sorted((implemented | terminators | NOT_RUN.keys()) - defined) == []
    assert implemented & NOT_RUN.keys() == set()
    assert implemented & terminators == set()


def test_every_implemented_op_is_a_registered_op() -> None:
    ctx = make_context()
    unknown = [name for name in interpreter.OPS if not ctx.is_registered_operation(name)]
    assert unknown == []


def test_families_own_their_ops() -> None:
    assert interpreter.OPS.family_of("tile.barrier_wait") == "barrier"
    assert interpreter.OPS.family_of("tile.async_tdm_copy_global_to_local") == "TDM copy"
    assert interpreter.OPS.family_of("tile.local_store") == "memory"
    assert interpreter.OPS.family_of("tile.warp_specialize") == "warp specialization"
    assert interpreter.OPS.family_of("scf.while") == "control flow"
    assert interpreter.OPS.family_of("arith.addi") == "arith"
    assert interpreter.OPS.family_of("tile.atomic_rmw") == "sync"
    assert interpreter.OPS.family_of("tile.async_wmma") == "MMA"


def test_a_second_implementation_in_a_family_is_refused() -> None:
    fam = OpImpls("test")
    fam.impl("tile.wmma")(_noop)
    with pytest.raises(ValueError, match=re.escape("the test family implements 'tile.wmma' twice")):
        fam.impl("tile.wmma")(_noop)
    with pytest.raises(ValueError, match=re.escape("implements 'arith.addi' twice")):
        fam.impl("arith.addi", "arith.addi")(_noop)


def test_a_second_implementation_in_another_family_is_refused() -> None:
    a, b = OpImpls("first"), OpImpls("second")
    a.impl("tile.wmma")(_noop)
    b.impl("tile.wmma")(_noop)
    with pytest.raises(
        ValueError,
        match=re.escape("'tile.wmma' is implemented by both the first and the second family"),
    ):
        Registry(a, b)


def test_the_table_cannot_be_changed() -> None:
    fam = OpImpls("test")
    fam.impl("tile.wmma")(_noop)
    table = Registry(fam)
    with pytest.raises(TypeError):
        table["tile.wmma"] = _noop  # type: ignore[index]
    with pytest.raises(TypeError):
        fam.builders()["tile.wmma"] = _noop  # type: ignore[index]
    with pytest.raises(ValueError, match=re.escape("op name must be 'dialect.op'")):
        fam.register("wmma", _noop)


def _imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) of every ``from gemm_opt.model.X import name`` and
    ``gemm_opt.model.X`` module imported by the file."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                found.append((node.module, alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found.append((alias.name, ""))
    return found


def test_no_model_module_imports_a_private_name_of_another() -> None:
    private = [
        f"{m}: {mod}.{name}"
        for m in MODULES
        for mod, name in _imports(MODEL_DIR / f"{m}.py")
        if mod.startswith("gemm_opt.model") and name.startswith("_") and name != "__future__"
    ]
    assert private == []


def test_the_model_modules_form_no_import_cycle() -> None:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for m in MODULES:
        for mod, name in _imports(MODEL_DIR / f"{m}.py"):
            if mod == "gemm_opt.model" and name in graph:
                graph[m].add(name)
            elif mod.startswith("gemm_opt.model."):
                graph[m].add(mod.split(".")[2])
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(m: str, path: list[str]) -> bool:
        state[m] = 1
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                cycle.extend([*path, m, n])
                return True
            if n not in state and visit(n, [*path, m]):
                return True
        state[m] = 2
        return False

    assert not any(visit(m, []) for m in MODULES if m not in state), cycle
    assert graph["interpreter"] >= {"arith", "barriers", "tdm", "warp_specialize"}
