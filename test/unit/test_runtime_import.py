"""``gemm_opt.runtime`` runs where the compiler cannot be installed.

Each case runs a fresh interpreter in which the compiler's dependencies
(Triton, the MLIR bindings, numpy) and the compiler's own packages cannot
be imported, as on a GPU test machine with only PyTorch: reading a bundle
and packing arguments need nothing else, and a launch needs only torch.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from gemm_opt.runtime import Arg, Bundle, BundleKernel, GridDim

BLOCKER = """
import importlib.abc, sys
BLOCKED = {blocked!r}
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in BLOCKED):
            raise ModuleNotFoundError(f"blocked: {{name}}")
sys.meta_path.insert(0, Blocker())
"""
COMPILER = [
    "triton",
    "torch_mlir",
    "numpy",
    "gemm_opt.core.ext_compat",
    "gemm_opt.dialect",
    "gemm_opt.passes",
    "gemm_opt.lowering",
    "gemm_opt.runtime.build",
]


def _bundle(tmp_path: Path) -> Path:
    k = BundleKernel(
        name="copy",
        symbol="copy",
        target="cuda:90",
        sm="sm_90a",
        num_warps=4,
        threads_per_warp=32,
        shared_bytes=0,
        args=(Arg("x", "*fp32", 16), Arg("n", "i32")),
        grid=(GridDim(arg="n", block=1024), GridDim(), GridDim()),
        binary=b"\x7fELF" + bytes(60),
    )
    path = tmp_path / "copy.bundle"
    Bundle((k,)).write(path)
    return path


def _run(blocked: list[str], body: str, bundle: Path) -> str:
    code = BLOCKER.format(blocked=blocked) + textwrap.dedent(body)
    proc = subprocess.run(
        [sys.executable, "-c", code, str(bundle)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_reading_and_packing_need_only_the_standard_library(tmp_path: Path) -> None:
    out = _run(
        [*COMPILER, "torch"],
        """
        import struct, sys
        import gemm_opt.runtime as rt
        k = rt.read_bundle(sys.argv[1])["copy"]
        params, _ = rt.pack_arguments(k, (0x1000, 5000))
        assert b"".join(params) == struct.pack("<QiQQ", 0x1000, 5000, 0, 0)
        assert rt.grid_of(k, (0x1000, 5000)) == (5, 1, 1)
        heavy = ("triton", "torch_mlir", "numpy", "torch")
        print(sorted(m for m in sys.modules if m.split(".")[0] in heavy))
        """,
        _bundle(tmp_path),
    )
    assert out.strip() == "[]"


def test_a_launch_needs_only_torch(tmp_path: Path) -> None:
    out = _run(
        COMPILER[:2] + COMPILER[3:],  # torch may import numpy if it is there
        """
        import sys
        import torch
        import gemm_opt.runtime as rt
        kernels = rt.load_bundle(sys.argv[1])
        try:
            kernels["copy"](torch.zeros(8), 8)
        except rt.ArgumentError as e:
            print("refused:", e)
        try:
            kernels["copy"](0x1000, 8)
        except rt.DeviceError as e:
            print("no GPU:", e)
        """,
        _bundle(tmp_path),
    )
    assert "refused: copy: argument 'x' (*fp32): the tensor is on cpu, not on a CUDA device" in out
    assert "no GPU: copy: PyTorch sees no CUDA GPU" in out


def test_triton_hidden_the_way_the_h100_runner_hides_it(tmp_path: Path) -> None:
    out = _run(
        [],
        """
        import sys
        sys.modules["triton"] = None
        import gemm_opt.runtime as rt
        print(len(rt.read_bundle(sys.argv[1])), sys.modules["triton"])
        """,
        _bundle(tmp_path),
    )
    assert out.split() == ["1", "None"]
