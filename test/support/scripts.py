"""The project's scripts (examples, benchmarks) loaded as modules in tests."""

from __future__ import annotations

import importlib.util
import subprocess
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


def run_without_gpu(path: Path, *args: str) -> subprocess.CompletedProcess:
    """Run the script at ``path`` with ``args`` in a fresh interpreter that sees no GPU
    (``CUDA_VISIBLE_DEVICES`` empty) and imports the package from the checkout."""
    return subprocess.run(
        [sys.executable, str(path), *args],
        capture_output=True,
        text=True,
        check=False,
        env={
            "PYTHONPATH": str(ROOT / "python"),
            "PATH": "/usr/bin:/bin",
            "CUDA_VISIBLE_DEVICES": "",
        },
    )


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


#: Persistent launches of the example GEMM, (M, N, K) and programs: uneven tiles
#: per program, one tile for three programs, K = 0 (C = 0), a single program for
#: all tiles, a tile smaller than a block.
PERSISTENT_CASES = (
    ((200, 150, 100), 5),
    ((64, 64, 32), 3),
    ((130, 70, 0), 2),
    ((200, 150, 100), 1),
    ((1, 1, 5), 4),
)


def check_persistent_gemm(module: object, cases=PERSISTENT_CASES, seed: int | None = None) -> None:
    """Run ``module`` (an example GEMM) on the model for each case and compare with
    numpy exactly: small integer operands, so every product and fp32 sum is exact;
    C starts as NaN, so a tile no program stores (or stores twice wrongly) shows."""
    import numpy as np

    from gemm_opt.model.interpreter import run_gemm

    for (m, n, k), programs in cases:
        rng = np.random.default_rng(m + n + k + programs)
        a = rng.integers(-3, 4, (m, k)).astype(np.float16)
        b = rng.integers(-3, 4, (k, n)).astype(np.float16)
        ref = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16)
        got = run_gemm(module, a, b, grid=(programs, 1, 1), seed=seed)
        np.testing.assert_array_equal(got, ref)
