#!/usr/bin/env python3
"""A markdown table of chosen metrics from Nsight Compute's ``--csv`` output, one column a kernel.

    python benchmarks/h100/ncu_summary.py results/bench/ncu_4096_fp16.csv \\
        --label "ours default" --label "cuBLAS" ...
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

METRICS = (
    "Duration",
    "Compute (SM) Throughput",
    "Memory Throughput",
    "DRAM Throughput",
    "L2 Cache Throughput",
    "L1/TEX Cache Throughput",
    "Registers Per Thread",
    "Theoretical Occupancy",
    "Achieved Occupancy",
    "Executed Ipc Active",
    "Issue Slots Busy",
    "Warp Cycles Per Issued Instruction",
)


def read(path: Path) -> list[dict[str, str]]:
    """The metric rows of an ``ncu --csv`` log (lines before its header are ncu's notes)."""
    lines = path.read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise ValueError("no ncu CSV header in the file")
    return list(csv.DictReader(lines[start:]))


def table(rows: list[dict[str, str]], labels: list[str]) -> str:
    kernels: list[tuple[str, str]] = []
    for r in rows:
        key = (r["ID"], r["Kernel Name"])
        if key not in kernels:
            kernels.append(key)
    names = [
        labels[i] if i < len(labels) else f"{name[:40]} (#{id_})"
        for i, (id_, name) in enumerate(kernels)
    ]
    out = ["| metric | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for metric in METRICS:
        cells = []
        for id_, _ in kernels:
            hit = [r for r in rows if r["ID"] == id_ and r["Metric Name"] == metric]
            cells.append(f"{hit[0]['Metric Value']} {hit[0]['Metric Unit']}" if hit else "-")
        out.append(f"| {metric} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", type=Path)
    parser.add_argument("--label", action="append", default=[], help="column names, in order")
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args(argv)
    try:
        text = table(read(args.csv), args.label)
    except (OSError, ValueError, KeyError) as e:
        print(f"ncu_summary.py: error: {args.csv}: {e}", file=sys.stderr)
        return 1
    print(text, end="")
    if args.output:
        args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
