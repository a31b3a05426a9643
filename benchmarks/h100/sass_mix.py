#!/usr/bin/env python3
"""Static SASS instruction mix of bundle kernels (``cuobjdump -sass``), no GPU needed.

Counts the opcodes that tell a Hopper GEMM's path apart: ``HGMMA`` (wgmma;
its 8-bit form is ``QGMMA``, counted with it)
or ``HMMA`` (mma.sync), ``UTMALDG`` (TMA) or ``LDGSTS`` (cp.async),
``LDSM`` (ldmatrix), barriers, and ``LDL``/``STL`` (local memory: spills).
Counts are static (instructions in the binary, not executed ones)::

    python benchmarks/h100/sass_mix.py bench.bundle [--kernels NAME,...] [-o mix.md]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

#: Opcode families reported, in table order: (column, opcode prefixes).
FAMILIES = (
    ("HGMMA", ("HGMMA", "QGMMA")),
    ("HMMA", ("HMMA",)),
    ("UTMALDG", ("UTMALDG",)),
    ("LDGSTS", ("LDGSTS",)),
    ("LDG", ("LDG",)),
    ("LDSM", ("LDSM",)),
    ("LDS", ("LDS",)),
    ("STS", ("STS",)),
    ("STG", ("STG",)),
    ("BAR", ("BAR",)),
    ("SYNCS", ("SYNCS",)),
    ("LDL/STL", ("LDL", "STL")),
)


def cuobjdump() -> str:
    """``cuobjdump`` from PATH, else the one in Triton's wheel."""
    found = shutil.which("cuobjdump")
    if found:
        return found
    try:
        import triton

        path = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    except ImportError:
        path = None
    if path is None or not path.exists():
        raise SystemExit("sass_mix.py: error: no cuobjdump on PATH or in Triton's wheel")
    return str(path)


def opcodes(sass: str) -> Counter:
    """Opcode counts of a ``cuobjdump -sass`` listing (predicates and modifiers dropped)."""
    counts: Counter = Counter()
    for line in sass.splitlines():
        if "/*" not in line or ";" not in line:
            continue
        body = line.split("*/", 1)[1].split(";", 1)[0].strip()
        if not body:
            continue
        words = body.split()
        if words[0].startswith("@"):
            words = words[1:]
        if words:
            counts[words[0].split(".")[0]] += 1
    return counts


def mix(binary: bytes, tool: str) -> dict[str, int]:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k.cubin")
        Path(path).write_bytes(binary)
        out = subprocess.run([tool, "-sass", path], capture_output=True, text=True, check=True)
    counts = opcodes(out.stdout)
    row = {name: sum(counts[p] for p in prefixes) for name, prefixes in FAMILIES}
    row["total"] = sum(counts.values())
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--kernels", default="", help="comma-separated names (default: all)")
    parser.add_argument("-o", "--output", type=Path, help="also write the table here")
    args = parser.parse_args(argv)
    from gemm_opt.runtime import BundleError, read_bundle

    try:
        bundle = read_bundle(args.bundle)
    except BundleError as e:
        print(f"sass_mix.py: error: {e}", file=sys.stderr)
        return 2
    names = [n for n in args.kernels.split(",") if n] or bundle.names()
    tool = cuobjdump()
    cols = [name for name, _ in FAMILIES] + ["total"]
    lines = ["| kernel | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for name in names:
        try:
            row = mix(bundle[name].binary, tool)
        except KeyError as e:
            print(f"sass_mix.py: error: {e.args[0]}", file=sys.stderr)
            return 2
        lines.append(f"| {name} | " + " | ".join(str(row[c]) for c in cols) + " |")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.output:
        args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
