# ruff: noqa: F821  -- lit injects `config` and `lit_config`
"""lit configuration: finds gemm-opt, FileCheck (the PyPI filecheck) and Python
next to the interpreter running lit, so a venv needs no PATH set-up.

Triton is a pinned dependency, not an optional feature: without it (or with
another version) the run fails here, as pytest fails, instead of reporting
the lowering tests as unsupported. No test declares ``REQUIRES``.
"""

import importlib
import importlib.metadata
import os
import shutil
import sys
from pathlib import Path

import lit.formats
import lit.llvm

lit.llvm.initialize(lit_config, config)
from lit.llvm import llvm_config  # noqa: E402  (valid only after initialize)
from lit.llvm.subst import ToolSubst  # noqa: E402

config.name = "gemm-opt"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir", ".py"]
config.excludes = ["Inputs", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, ".lit_out")

bin_dir = str(Path(sys.executable).parent)
llvm_config.with_environment("PATH", bin_dir, append_path=True)
filecheck = lit_config.params.get("FILECHECK") or shutil.which("filecheck", path=bin_dir)
gemm_opt = shutil.which("gemm-opt", path=bin_dir) or shutil.which("gemm-opt")
llvm_config.add_tool_substitutions(
    [
        ToolSubst("gemm-opt", command=gemm_opt, unresolved="fatal"),
        ToolSubst(
            "FileCheck",
            command=filecheck,
            extra_args=["--enable-var-scope"],
            unresolved="fatal",
        ),
        ToolSubst("%PYTHON", command=sys.executable, unresolved="fatal"),
    ],
    [bin_dir],
)
# The pin comes from gemm-opt's own metadata (pyproject's dependencies).
pins = [
    r.split("==", 1)[1] for r in importlib.metadata.requires("gemm-opt") if r.startswith("triton==")
]
pin = pins[0].split(";")[0].strip() if pins else "(unpinned)"
try:
    found = importlib.metadata.version("triton")
    importlib.import_module("triton")
except (importlib.metadata.PackageNotFoundError, ImportError) as e:
    lit_config.fatal(f"Triton {pin} is required (pip install -e '.[test]'): {e}")
if found != pin:
    lit_config.fatal(f"Triton {pin} is required, found {found}")
