"""Packaging: every source folder lands in the wheel under ``gemm_opt``, and nothing else does.

The folders and packages are read from pyproject (``package-dir`` and
``packages``), so a package added there is covered here without editing this
file; test support (``test/support``, importable as ``support`` in the tests)
must never ship.
"""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
#: source folder -> its path in the wheel, as pyproject maps them.
MAPPED = {src: pkg.replace(".", "/") for pkg, src in SETUPTOOLS["package-dir"].items()}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
    )
    (whl,) = out.glob("gemm_opt-*.whl")
    return zipfile.ZipFile(whl)


def _modules(wheel: zipfile.ZipFile) -> set[str]:
    """Dotted names of the wheel's Python modules (packages as their ``__init__``)."""
    return {
        n.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        for n in wheel.namelist()
        if n.endswith(".py")
    }


def test_the_mapping_covers_the_source_folders() -> None:
    assert set(MAPPED) == {"python/gemm_opt", "dialect", "passes", "lowering", "tools"}


def test_every_python_file_is_in_the_wheel(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    missing = []
    for src, dst in MAPPED.items():
        for f in (ROOT / src).rglob("*.py"):
            rel = f.relative_to(ROOT / src).as_posix()
            if "__pycache__" in rel:
                continue
            if f"{dst}/{rel}" not in names:
                missing.append(f"{src}/{rel}")
    assert missing == []


def test_every_listed_package_is_in_the_wheel(wheel: zipfile.ZipFile) -> None:
    assert set(SETUPTOOLS["packages"]) <= _modules(wheel)


def test_only_gemm_opt_ships(wheel: zipfile.ZipFile) -> None:
    tops = {n.split("/", 1)[0] for n in wheel.namelist()}
    dist_info = {t for t in tops if t.endswith(".dist-info")}
    assert len(dist_info) == 1
    assert tops - dist_info == {"gemm_opt"}


def test_no_test_support_ships(wheel: zipfile.ZipFile) -> None:
    """Test helpers (``test/support``, ``testing_*`` modules, conftest) stay out."""
    shipped = [
        m
        for m in _modules(wheel)
        if any(
            part in ("support", "test", "tests", "conftest")
            or part.startswith(("testing", "test_"))
            for part in m.split(".")
        )
    ]
    assert shipped == []
    support = {p.stem for p in (ROOT / "test" / "support").glob("*.py") if p.stem != "__init__"}
    assert support, "test/support has no modules: update this test"
    leaked = [m for m in _modules(wheel) if m.rsplit(".", 1)[-1] in support]
    assert leaked == []


def test_console_scripts_declared(wheel: zipfile.ZipFile) -> None:
    ep = next(n for n in wheel.namelist() if n.endswith("entry_points.txt"))
    text = wheel.read(ep).decode()
    scripts = PYPROJECT["project"]["scripts"]
    assert {"gemm-opt", "gemm-opt-isa-report"} <= set(scripts)
    for name, target in scripts.items():
        assert f"{name} = {target}" in text
        module = target.split(":", 1)[0]
        assert module in _modules(wheel), f"{name}: {module} is not in the wheel"


def test_every_package_folder_is_listed() -> None:
    """A sub-package folder not listed in pyproject would silently vanish."""
    listed = set(SETUPTOOLS["packages"])
    for src, dst in MAPPED.items():
        for init in (ROOT / src).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / src).as_posix()
            pkg = dst.replace("/", ".") + ("" if rel == "." else "." + rel.replace("/", "."))
            assert pkg in listed, f"{pkg} missing from [tool.setuptools] packages"


def test_tuned_tables_ship(wheel: zipfile.ZipFile) -> None:
    """schedule="auto" reads ``gemm_opt/kernels/tuned/*.json`` from the installed package."""
    assert "tuned/*.json" in SETUPTOOLS["package-data"]["gemm_opt.kernels"]
    names = set(wheel.namelist())
    tables = sorted((ROOT / "python/gemm_opt/kernels/tuned").glob("*.json"))
    assert [t.name for t in tables if f"gemm_opt/kernels/tuned/{t.name}" not in names] == []
