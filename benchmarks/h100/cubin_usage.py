"""What a compiled cubin uses, read with ``cuobjdump``: registers, stack and
local memory per thread, and how its wgmmas are waited for.

Shared by the bundle builders (``build_bundle.py`` for the tile GEMM,
``gluon_ws_gemm.py`` for the Gluon reference), which print it per kernel.
"""

from __future__ import annotations

import re
import subprocess
import tempfile

from sass_mix import cuobjdump

#: The fields of ``cuobjdump -res-usage`` reported per kernel.
RESOURCES = ("REG", "STACK", "SHARED", "LOCAL")


def _cuobjdump(cubin: bytes, flag: str) -> str:
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run(
            [cuobjdump(), flag, f.name], capture_output=True, text=True, check=True
        ).stdout


def resource_usage(cubin: bytes) -> str:
    """``REG:n STACK:n SHARED:n LOCAL:n`` of a cubin (``cuobjdump -res-usage``):
    registers per thread, and stack/local bytes (nonzero: spills)."""
    out = _cuobjdump(cubin, "-res-usage")
    for line in out.splitlines():
        if "REG:" in line:
            return " ".join(w for w in line.split() if w.split(":")[0] in RESOURCES)
    raise SystemExit(f"error: cuobjdump -res-usage printed no usage:\n{out}")


def wgmma_waits(cubin: bytes) -> str:
    """How the cubin's wgmmas are waited for (``cuobjdump -sass``): the
    ``WARPGROUP.DEPBAR.LE gsb0, N`` waits, e.g. ``wgmma waits 0x1 0x0`` for one
    MMA group in flight in the loop. ptxas serializes a wgmma pipeline it
    cannot prove well formed (warning C7515): then every HGMMA is followed by
    a wait for 0, which shows as ``serialized``."""
    sass = _cuobjdump(cubin, "-sass")
    hgmma = len(re.findall(r"\bHGMMA\.", sass))
    waits = re.findall(r"WARPGROUP\.DEPBAR\.LE gsb0, (0x[0-9a-f]+)", sass)
    if not hgmma:
        return "no wgmma"
    serialized = hgmma > 1 and waits.count("0x0") >= hgmma
    return f"{hgmma} HGMMA, wgmma waits {' '.join(waits)}" + (" (serialized)" if serialized else "")
