"""No import cycle between modules anywhere in the tree.

In a cycle, whichever module is imported first runs against a half-initialised
other, and the two can no longer be read, tested or layered apart. import-linter
checks the layers between packages; this test checks every module edge, in the
package (as the wheel lays it out: ``pyproject.toml``'s packages and
``package-dir``), the scripts under ``benchmarks/`` (their own folder is on
``sys.path``, as when they run) and ``test/support`` (importable as
``support``). Imports are read with ``ast``, nothing is imported: module-level
and function-level imports count, relative imports are resolved,
``from package import name`` is an edge to the submodule when ``name`` is one,
and imports under ``if TYPE_CHECKING:`` do not count (they never run). Loading
by name (``importlib.import_module``, as the package root's PEP 562 re-export of
the API does) is not an import statement and not an edge, as for import-linter.
"""

from __future__ import annotations

import ast
import itertools
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Module:
    """One source file: ``node`` names it in the graph, ``name`` is its dotted name
    under its ``sys.path`` entry, ``search`` the namespaces its absolute imports
    resolve in, in ``sys.path`` order."""

    node: str
    path: Path
    name: str
    is_package: bool
    search: tuple[str, ...]


def _tree_names(top: Path, prefix: str = "") -> dict[str, Path]:
    """Dotted name -> file for ``top``'s modules and, recursively, its packages."""
    names: dict[str, Path] = {}
    for path in sorted(top.glob("*.py")):
        name = prefix.rstrip(".") if path.stem == "__init__" else prefix + path.stem
        if name:
            names[name] = path
    for sub in sorted(p for p in top.iterdir() if (p / "__init__.py").is_file()):
        names.update(_tree_names(sub, f"{prefix}{sub.name}."))
    return names


def _package_names(root: Path) -> dict[str, Path]:
    """Dotted name -> file for every module the wheel holds (pyproject's packages)."""
    setuptools = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    dirs: dict[str, str] = setuptools.get("package-dir", {})
    names: dict[str, Path] = {}
    for package in setuptools["packages"]:
        parent, _, last = package.rpartition(".")
        if package in dirs:
            folder = root / dirs[package]
        elif parent in dirs:
            folder = root / dirs[parent] / last
        else:
            folder = root.joinpath(*package.split("."))
        for path in sorted(folder.glob("*.py")):
            names[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
    return names


def collect(root: Path) -> tuple[dict[str, Module], dict[str, dict[str, str]]]:
    """The modules of the tree under ``root`` and its namespaces (dotted name -> node)."""
    modules: dict[str, Module] = {}
    spaces: dict[str, dict[str, str]] = {"package": {}, "support": {}}

    def add(space: str, names: dict[str, Path], search: tuple[str, ...], by_path: bool) -> None:
        for name, path in names.items():
            node = path.relative_to(root).as_posix() if by_path else name
            is_package = path.name == "__init__.py"
            modules[node] = Module(node, path, name, is_package, search)
            spaces.setdefault(space, {})[name] = node

    add("package", _package_names(root), ("package",), by_path=False)
    support = root / "test" / "support"
    if support.is_dir():
        add("support", _tree_names(support, "support."), ("support", "package"), by_path=False)
    benchmarks = root / "benchmarks"
    folders = [benchmarks, *sorted(p for p in benchmarks.rglob("*") if p.is_dir())]
    for folder in folders if benchmarks.is_dir() else []:
        space = f"script:{folder.relative_to(root).as_posix()}"
        names = {p.stem: p for p in sorted(folder.glob("*.py"))}
        add(space, names, (space, "support", "package"), by_path=True)
    return modules, spaces


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[tuple[int, str | None, int, list[str]]]:
    """Every import that runs: (line, module, level, names); ``import a.b`` is
    (line, "a.b", 0, []). Bodies of ``if TYPE_CHECKING:`` are skipped."""
    found: list[tuple[int, str | None, int, list[str]]] = []
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            todo.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, 0, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names]
            found.append((node.lineno, node.module, node.level, names))
        todo.extend(ast.iter_child_nodes(node))
    return found


def edges(module: Module, spaces: dict[str, dict[str, str]], relative_space: str) -> dict[str, int]:
    """Node -> first line that imports it, for ``module``'s imports inside the tree."""

    def lookup(dotted: str, search: tuple[str, ...], exact: bool) -> str | None:
        """The node ``dotted`` names (else, unless ``exact``, its longest prefix in the
        tree), in the first namespace that holds its top-level name, as Python does."""
        top = dotted.split(".")[0]
        for space in search:
            names = spaces[space]
            if not any(n == top or n.startswith(top + ".") for n in names):
                continue  # a later sys.path entry (or none in the tree) holds it
            parts = dotted.split(".")
            for end in range(len(parts), 0 if not exact else len(parts) - 1, -1):
                if ".".join(parts[:end]) in names:
                    return names[".".join(parts[:end])]
            return None
        return None

    out: dict[str, int] = {}
    source = module.path.read_text()
    for line, name, level, names in _imports(ast.parse(source, str(module.path))):
        search = module.search
        if level:
            package = module.name if module.is_package else module.name.rpartition(".")[0]
            parts = package.split(".")
            base = ".".join(parts[: len(parts) - level + 1])
            name = f"{base}.{name}" if name else base
            search = (relative_space,)
        assert name is not None
        targets = [lookup(name, search, exact=False)] if not names else []
        for item in names:  # ``from a import b``: the submodule a.b if there is one, else a
            sub = lookup(f"{name}.{item}", search, exact=True) if item != "*" else None
            targets.append(sub if sub is not None else lookup(name, search, exact=False))
        for target in targets:
            if target is not None and target != module.node:
                out[target] = min(line, out.get(target, line))
    return out


def graph(root: Path) -> tuple[dict[str, dict[str, int]], dict[str, Module]]:
    """The import graph of the tree under ``root``: node -> {imported node: line}."""
    modules, spaces = collect(root)
    space_of = {node: space for space, names in spaces.items() for node in names.values()}
    result = {node: edges(m, spaces, space_of[node]) for node, m in modules.items()}
    return result, modules


def cycles(graph: dict[str, dict[str, int]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, succ = work[-1]
            if succ:
                nxt = succ.pop(0)
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.get(nxt, {}))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.add(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def describe(graph: dict[str, dict[str, int]], component: frozenset[str]) -> str:
    """A shortest cycle through ``component``'s first module, one import per line."""
    start = min(component)
    parent: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if start in graph[node]:
            break
        for nxt in sorted(graph[node]):
            if nxt in component and nxt not in parent and nxt != start:
                parent[nxt] = node
                queue.append(nxt)
    path = [node]
    while path[-1] != start:
        path.append(parent[path[-1]])
    path.reverse()
    path.append(start)
    return "\n".join(f"  {a} (line {graph[a][b]}) -> {b}" for a, b in itertools.pairwise(path))


@pytest.fixture(scope="module")
def tree_graph() -> dict[str, dict[str, int]]:
    return graph(ROOT)[0]


def test_the_walk_sees_the_whole_tree(tree_graph: dict[str, dict[str, int]]) -> None:
    # A walk that finds nothing finds no cycle: pin that it reads every part.
    assert "gemm_opt.lowering.convert_tile_to_triton_gpu" in tree_graph
    assert "gemm_opt.dialect.tile" in tree_graph["gemm_opt.passes.common"]
    assert "gemm_opt.tools.opt_main" in tree_graph
    assert "benchmarks/h100/benchlib.py" in tree_graph["benchmarks/h100/run_gemm.py"]
    assert "support.tile_build" in tree_graph
    assert "gemm_opt.core.ext_compat" in tree_graph["gemm_opt.dialect.tile"]


def test_no_import_cycles(tree_graph: dict[str, dict[str, int]]) -> None:
    found = cycles(tree_graph)
    assert not found, "import cycles:\n" + "\n\n".join(describe(tree_graph, c) for c in found)


def _write(root: Path, files: dict[str, str]) -> dict[str, dict[str, int]]:
    packages = sorted({str(Path(f).parent).replace("/", ".") for f in files if "/" in f})
    packages = [p for p in packages if not p.startswith("benchmarks")]
    (root / "pyproject.toml").write_text(f"[tool.setuptools]\npackages = {packages!r}\n")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return graph(root)[0]


def test_a_cycle_through_from_package_import_submodule(tmp_path: Path) -> None:
    g = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg import b\n",
            "pkg/b.py": "def f():\n    from . import a\n",
            "pkg/c.py": "from pkg import VERSION\n",
        },
    )
    assert g["pkg.a"] == {"pkg.b": 1} and g["pkg.b"] == {"pkg.a": 2}
    assert g["pkg.c"] == {"pkg": 1}
    (cycle,) = cycles(g)
    assert cycle == {"pkg.a", "pkg.b"}
    assert describe(g, cycle) == "  pkg.a (line 1) -> pkg.b\n  pkg.b (line 2) -> pkg.a"


def test_relative_imports_resolve_against_the_package(tmp_path: Path) -> None:
    g = _write(
        tmp_path,
        {
            "pkg/__init__.py": "from .sub import x\n",
            "pkg/sub/__init__.py": "from .. import top\nfrom .x import f\n",
            "pkg/sub/x.py": "from ..top import g\n",
            "pkg/top.py": "def f():\n    import pkg.sub.x\n",
        },
    )
    assert g["pkg"] == {"pkg.sub.x": 1}
    assert g["pkg.sub"] == {"pkg.top": 1, "pkg.sub.x": 2}
    assert g["pkg.sub.x"] == {"pkg.top": 1}
    assert cycles(g) == [frozenset({"pkg.sub.x", "pkg.top"})]


def test_type_checking_imports_do_not_run(tmp_path: Path) -> None:
    g = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "import typing\nif typing.TYPE_CHECKING:\n    import pkg.b\nelse:\n"
            "    import pkg.c\n",
            "pkg/b.py": "import pkg.a\n",
            "pkg/c.py": "",
        },
    )
    assert g["pkg.a"] == {"pkg.c": 5}
    assert cycles(g) == []


def test_scripts_import_their_neighbours(tmp_path: Path) -> None:
    g = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "benchmarks/gpu/run.py": "import lib\nimport pkg\n",
            "benchmarks/gpu/lib.py": "def f():\n    from run import main\n",
            "benchmarks/other.py": "import lib\n",  # not beside lib.py: outside the tree
        },
    )
    assert g["benchmarks/gpu/run.py"] == {"benchmarks/gpu/lib.py": 1, "pkg": 2}
    assert g["benchmarks/other.py"] == {}
    assert cycles(g) == [frozenset({"benchmarks/gpu/run.py", "benchmarks/gpu/lib.py"})]
