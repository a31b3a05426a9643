"""A process that fills the on-disk kernel cache (spawned by the cache tests)."""

from __future__ import annotations

import hashlib
from typing import Any

from gemm_opt.core import schedules as S
from gemm_opt.kernels import disk_cache

#: A small kernel that compiles in about a second.
SMALL = S.KernelSpec("data-parallel", None, "none", "fp16", 64, 64, 32, 4, 4, None)


def fill(root: str, barrier: Any, queue: Any) -> None:
    """Wait for the other process, build ``SMALL`` into the cache at ``root``, report its
    binary's SHA-256."""
    barrier.wait()
    kernel = disk_cache.load_or_build(SMALL, "cuda:90", root)
    queue.put(hashlib.sha256(kernel.binary).hexdigest())
