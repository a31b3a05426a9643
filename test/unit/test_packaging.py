"""Packaging: every source folder lands in the wheel under ``gemm_opt``."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAPPED = {
    "python/gemm_opt": "gemm_opt",
    "dialect": "gemm_opt/dialect",
    "passes": "gemm_opt/passes",
    "lowering": "gemm_opt/lowering",
    "tools": "gemm_opt/tools",
}


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


def test_no_generic_top_level_modules(wheel: zipfile.ZipFile) -> None:
    tops = {n.split("/", 1)[0] for n in wheel.namelist()}
    assert not tops & {"dialect", "passes", "lowering", "tools"}


def test_console_script_declared(wheel: zipfile.ZipFile) -> None:
    ep = next(n for n in wheel.namelist() if n.endswith("entry_points.txt"))
    assert "gemm-opt = gemm_opt.tools.opt:main" in wheel.read(ep).decode()


def test_every_package_folder_is_listed() -> None:
    """A sub-package folder not listed in pyproject would silently vanish."""
    import tomllib

    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    for src, dst in MAPPED.items():
        for init in (ROOT / src).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / src).as_posix()
            pkg = dst.replace("/", ".") + ("" if rel == "." else "." + rel.replace("/", "."))
            assert pkg in listed, f"{pkg} missing from [tool.setuptools] packages"
