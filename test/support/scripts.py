"""The project's scripts (examples, benchmarks) loaded as modules in tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_script(path: Path, name: str | None = None) -> ModuleType:
    """Execute the script at ``path`` as the module ``name`` (its stem by default).

    The module is registered in ``sys.modules`` before it runs (dataclasses
    look their module up there) and the script's folder goes on ``sys.path``,
    so it imports its sibling modules (``benchlib``) as it does when run.
    """
    name = name or path.stem
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


#: The example GEMM (the one dense kernel source) and the H100 bundle builder.
ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_GEMM = ROOT / "examples" / "gemm_gfx1250.py"
BUILD_BUNDLE = ROOT / "benchmarks" / "h100" / "build_bundle.py"


def small_gemm(example: ModuleType, target: str, **constexprs: object) -> object:
    """The example GEMM's tile module at 64x64x32 blocks on 4 warps, each half of the
    warps copying one operand (fast in the model); ``constexprs`` add or override."""
    return example.gemm.build_module(
        num_warps=4,
        target=target,
        **{"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "HINT_A": 0b0011, "HINT_B": 0b1100,
           **constexprs},
    )  # fmt: skip
