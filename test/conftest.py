"""Test support (``test/support``) is importable as ``support``; it is not installed."""

import sys
from pathlib import Path

_TEST_DIR = str(Path(__file__).resolve().parent)
if _TEST_DIR not in sys.path:
    sys.path.insert(0, _TEST_DIR)
