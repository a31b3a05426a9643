"""The layering contracts of pyproject's ``[tool.importlinter]``, run by ``lint-imports``.

The package's folders map onto ``gemm_opt.*`` only through setuptools'
``package-dir`` (``dialect/`` is ``gemm_opt.dialect``), which import-linter
cannot follow in the source tree. So the package is first laid out as the
wheel lays it out (setuptools' ``build_py``, about a second), and
``lint-imports`` runs on that copy. A second copy with one violation per
contract proves that each contract can fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
import tomllib

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "pyproject.toml"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
BUILD_PY = ("build_py", "--build-lib")


def _contracts() -> dict[str, dict]:
    cfg = tomllib.loads(CONFIG.read_text())["tool"]["importlinter"]
    return {c["id"]: c for c in cfg["contracts"]}


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the package under ``tree`` (not the editable install)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(CONFIG), "--no-cache"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package as the wheel lays it out (``gemm_opt/dialect/...``)."""
    out = tmp_path_factory.mktemp("layout")
    subprocess.run(
        [sys.executable, "-c", "from setuptools import setup; setup()", "-q", *BUILD_PY, str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    assert (out / "gemm_opt" / "dialect" / "tile.py").is_file()
    return out


def test_the_package_keeps_every_contract(tree: Path) -> None:
    result = _lint(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Contracts: {len(_contracts())} kept, 0 broken." in result.stdout


#: One violating import per contract: (file, line appended, contract name).
VIOLATIONS = [
    ("dialect/edit.py", "from gemm_opt.lowering import compile", "layers"),
    ("passes/derive_warp_hints.py", "import gemm_opt.passes.fuse_tdm_copies", "passes-independent"),
    ("passes/common.py", "from torch_mlir import ir as _ir", "bindings-adapter"),
    ("model/copy.py", "import triton", "triton-bridge"),
    ("runtime/__init__.py", "import gemm_opt.dialect", "runtime"),
    ("model/values.py", "import gemm_opt.model.interpreter", "model-layers"),
    ("torch_ops.py", "import gemm_opt.api", "api-above-operators"),
    ("lowering/convert_mma.py", "import gemm_opt.lowering.convert_copies", "hand-off-layers"),
    ("nn/routing.py", "import gemm_opt.nn.moe", "nn-layers"),
]


def test_every_contract_can_fail(tree: Path, tmp_path: Path) -> None:
    """Each contract reports the import that breaks it, and the run fails."""
    broken = tmp_path / "broken"
    shutil.copytree(tree, broken)
    for rel, line, _ in VIOLATIONS:
        path = broken / "gemm_opt" / rel
        path.parent.mkdir(exist_ok=True)
        with path.open("a") as f:
            f.write(f"\n{line}\n")
    result = _lint(broken)
    assert result.returncode != 0
    contracts = _contracts()
    assert f"Contracts: 0 kept, {len(contracts)} broken." in result.stdout, result.stdout
    assert {cid for _, _, cid in VIOLATIONS} == set(contracts)
    for rel, _, _ in VIOLATIONS:
        module = "gemm_opt." + rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        assert module in result.stdout, f"{module} not reported:\n{result.stdout}"


def test_every_pass_module_is_in_the_independence_contract() -> None:
    """A new pass cannot escape the contract by not being listed."""
    passes = {
        f"gemm_opt.passes.{p.stem}"
        for p in (ROOT / "passes").glob("*.py")
        if p.stem not in ("__init__", "common", "schedule_ir", "schedule_epilogue")  # helpers
    }
    assert set(_contracts()["passes-independent"]["modules"]) == passes


def test_every_subpackage_is_in_a_layer(tree: Path) -> None:
    """A new top-level module or package of gemm_opt must be given a layer."""
    layered = {
        name.strip().strip("()")
        for cid in ("layers", "runtime")
        for layer in _contracts()[cid]["layers"]
        for name in layer.replace("|", ":").split(":")
    }
    top = {
        "gemm_opt." + p.name.removesuffix(".py")
        for p in (tree / "gemm_opt").iterdir()
        if p.name != "__init__.py" and (p.suffix == ".py" or (p / "__init__.py").is_file())
    }
    assert top <= layered, f"not in any layer: {sorted(top - layered)}"
