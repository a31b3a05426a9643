"""Lowerings out of the tile dialect and the named pipelines that use them."""

from __future__ import annotations

from collections.abc import Callable

from gemm_opt.pass_base import TilePass

PASSES: dict[str, Callable[[], type[TilePass]]] = {}

__all__ = ["PASSES"]
