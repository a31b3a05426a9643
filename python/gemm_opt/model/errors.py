"""The one error type of the executable model (shared by the interpreter and its scheduler)."""

from __future__ import annotations


class ModelError(Exception):
    """The IR cannot be executed: an unsupported op, a race, a bad access, a deadlock, ..."""


__all__ = ["ModelError"]
