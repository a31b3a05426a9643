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
