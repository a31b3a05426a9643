#!/usr/bin/env python3
"""Bar chart of ``bench_gemm.py``'s ``results.csv``: TFLOP/s of ours, plain Triton and cuBLAS
(and the warp-specialized Gluon GEMM, where the run had it).

Needs matplotlib (``bench_gemm.py`` calls it where it is installed)::

    python benchmarks/h100/plot_results.py benchmarks/h100/results/bench.csv -o bench.png

With ``--sweep`` the CSV is ``sweep.py``'s ``sweep.csv`` and the plot its
``sweep.png`` (for a run on a machine without matplotlib)::

    PYTHONPATH=python python benchmarks/h100/plot_results.py --sweep results/sweep/sweep.csv \
        -o results/sweep/sweep.png
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

SERIES = (
    ("ours_tflops", "ours (tile GEMM, cuda:90 portable)"),
    ("triton_tflops", "plain Triton tl.dot (best config)"),
    ("cublas_tflops", "cuBLAS (torch.matmul)"),
)
#: The series of runs whose bundle had the warp-specialized Gluon GEMM.
GLUON_SERIES = ("gluon_ws_tflops", "Gluon warp-specialized (best config)")


def plot(csv_path: Path, png_path: Path) -> None:
    """Grouped bars per (shape, dtype), the ours/cuBLAS ratio written above each group."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with csv_path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"{csv_path}: no rows")
    labels = [f"{r['shape']}\n{'fp16' if r['dtype'] == 'float16' else 'bf16'}" for r in rows]
    series = SERIES
    if all(r.get(GLUON_SERIES[0]) for r in rows):
        series = (*SERIES[:2], GLUON_SERIES, SERIES[2])
    width = 0.81 / len(series)
    fig, ax = plt.subplots(figsize=(max(8.0, 1.1 * len(rows)), 4.8))
    for i, (key, name) in enumerate(series):
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(rows))]
        ax.bar(xs, [float(r[key]) for r in rows], width, label=name)
    for j, r in enumerate(rows):
        top = max(float(r[key]) for key, _ in series)
        ax.text(j, top + 10, f"{float(r['ours_vs_cublas']):.2f}x", ha="center", fontsize=8)
    ax.set_xticks(range(len(rows)), labels, fontsize=7)
    ax.set_ylabel("TFLOP/s (median)")
    ax.set_title("GEMM on H100: ours vs plain Triton vs cuBLAS (label: ours/cuBLAS)")
    peak = max(float(r[key]) for r in rows for key, _ in series)
    ax.set_ylim(0, peak * 1.22)
    ax.legend(fontsize=8, loc="upper center", ncol=len(series))
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(png_path, dpi=120)
    plt.close(fig)


def plot_sweep(csv_path: Path, png_path: Path) -> None:
    """``sweep.png`` from ``sweep.csv``: :func:`sweep.plot` on the rows read back."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    import sweep

    with csv_path.open(newline="") as f:
        rows = [
            {**r, "macs": int(r["macs"]), "ratio": float(r["ratio"]) if r["ratio"] else None}
            for r in csv.DictReader(f)
        ]
    why = sweep.plot(rows, png_path)
    if why:
        raise ValueError(f"no plot: {why}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", type=Path)
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--sweep", action="store_true", help="the CSV is sweep.py's sweep.csv")
    args = parser.parse_args(argv)
    try:
        (plot_sweep if args.sweep else plot)(args.csv, args.output)
    except (OSError, ValueError, KeyError) as e:
        print(f"plot_results.py: error: {args.csv}: {e}", file=sys.stderr)
        return 1
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
