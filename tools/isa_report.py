"""``gemm-opt-isa-report``: compile the GEMM variants and tabulate their ISA.

Compiles ``examples/gemm_gfx1250.mlir`` (or ``--input``) in several variants
through :func:`gemm_opt.lowering.compile.compile_tile_module` and prints one
row per (variant, dtype, target):

* ``fused``: the kernel as written (hinted copies), fused (the default);
* ``unfused``: the same hints, no fusion;
* ``unhinted``: every ``warp_used_hint`` dropped, so all warps copy;
* ``derived``: hints stripped, then re-derived by ``tile-derive-warp-hints``
  and fused;
* ``aligned``: ``fused`` with ``tile.divisibility = 16`` on the integer
  arguments (sizes and leading dimensions): vector stores everywhere, and
  direct-to-LDS copies on gfx950.

gfx950 and gfx942 have no TDM and drop hints, so only ``fused`` (their
default pipeline) and ``aligned`` run there. ``bf16`` is the fp16 kernel with
its element type changed. Each variant is an edit of the parsed module
(:mod:`gemm_opt.dialect.edit`), never of its text.

Columns: TDM instructions and WMMA/MFMA instructions in the innermost loop
(one K iteration), VGPRs, SGPRs, LDS bytes, spills, code bytes and compile
seconds. ``--check`` exits 1 unless the goals hold: no spills anywhere,
TDM and WMMA in the gfx1250 loop, 1 TDM instruction per K iteration fused
against 2 unfused.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from gemm_opt.core.contract import DIVISIBILITY
from gemm_opt.core.ext_compat import ir
from gemm_opt.core.targets import TARGETS as _TARGETS
from gemm_opt.dialect.edit import (
    EditError,
    annotate_arguments,
    drop_warp_hints,
    edited,
    integer_of_width,
    retype_elements,
)

VARIANTS = ("fused", "unfused", "unhinted", "derived", "aligned")
DTYPES = ("f16", "bf16")
#: The AMD targets: the report reads AMDGPU assembly.
TARGETS = tuple(name for name, t in _TARGETS.items() if t.backend == "hip")
DEFAULT_INPUT = Path(__file__).resolve().parents[1] / "examples" / "gemm_gfx1250.mlir"


@dataclass
class Row:
    """One compiled variant (``error`` set when it did not compile)."""

    variant: str
    dtype: str
    target: str
    tdm_per_iter: int = 0
    mma_per_iter: int = 0
    mma_total: int = 0
    vgprs: int = 0
    sgprs: int = 0
    lds_bytes: int = 0
    spills: int = 0
    code_bytes: int = 0
    compile_seconds: float = 0.0
    error: str = ""


#: The report's element types, as the bindings build them.
_ELEMENT_TYPES: dict[str, Callable[[], ir.Type]] = {"f16": ir.F16Type.get, "bf16": ir.BF16Type.get}
#: What ``aligned`` states on the integer arguments (sizes and leading dimensions).
ALIGNMENT = 16


def with_dtype(module: ir.Module, dtype: str) -> None:
    """Make the fp16 kernel a ``dtype`` kernel (every f16 becomes ``dtype``)."""
    if dtype != "f16":
        retype_elements(module, ir.F16Type.get(), _ELEMENT_TYPES[dtype]())


def aligned(module: ir.Module) -> None:
    """State ``tile.divisibility = 16`` on the kernel's i32 and i64 arguments."""
    attr = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), ALIGNMENT)
    annotate_arguments(module, integer_of_width(32, 64), DIVISIBILITY, attr)


def variant_text(source: str, variant: str, dtype: str) -> str:
    """The tile text compiled for one row: ``source`` edited for the variant and dtype."""
    edits: list[Callable[[ir.Module], object]] = [lambda m: with_dtype(m, dtype)]
    if variant == "aligned":
        edits.append(aligned)
    elif variant in ("unhinted", "derived"):
        edits.append(drop_warp_hints)
    return edited(source, *edits)


def plan(variants: Sequence[str], dtypes: Sequence[str], targets: Sequence[str]):
    """(variant, dtype, target) triples to compile, in table order."""
    for dtype in dtypes:
        for target in targets:
            for variant in variants:
                if not _TARGETS[target].tdm and variant not in ("fused", "aligned"):
                    continue
                yield variant, dtype, target


def compile_row(source: str, variant: str, dtype: str, target: str) -> Row:
    from gemm_opt.lowering.compile import TileCompileError, compile_tile_module

    row = Row(variant, dtype, target)
    try:
        text = variant_text(source, variant, dtype)
        k = compile_tile_module(
            text, target, fuse=variant != "unfused", derive_hints=variant == "derived"
        )
    except (EditError, TileCompileError) as e:
        row.error = str(e)
        return row
    m = k.metrics
    row.tdm_per_iter = m.tdm_loads_in_loop
    row.mma_per_iter = m.wmma_in_loop + m.mfma_in_loop
    row.mma_total = m.wmma + m.mfma
    row.vgprs, row.sgprs, row.lds_bytes = m.vgprs, m.sgprs, m.lds_bytes
    row.spills, row.code_bytes = m.spills, m.code_bytes
    row.compile_seconds = k.compile_seconds
    return row


HEADER = (
    "variant",
    "dtype",
    "target",
    "TDM/iter",
    "MMA/iter",
    "VGPR",
    "SGPR",
    "LDS B",
    "spills",
    "code B",
    "compile s",
)


def format_table(rows: Sequence[Row]) -> str:
    """A Markdown table of ``rows``."""
    body = []
    for r in rows:
        if r.error:
            body.append((r.variant, r.dtype, r.target, "error: " + r.error.splitlines()[0]))
            continue
        body.append(
            (
                r.variant,
                r.dtype,
                r.target,
                str(r.tdm_per_iter),
                str(r.mma_per_iter),
                str(r.vgprs),
                str(r.sgprs),
                str(r.lds_bytes),
                str(r.spills),
                str(r.code_bytes),
                f"{r.compile_seconds:.1f}",
            )
        )
    widths = [len(h) for h in HEADER]
    for cells in body:
        if len(cells) == len(HEADER):
            widths = [max(w, len(c)) for w, c in zip(widths, cells, strict=True)]
    lines = [
        "| " + " | ".join(h.ljust(w) for h, w in zip(HEADER, widths, strict=True)) + " |",
        "|" + "|".join("-" * (w + 2) for w in widths) + "|",
    ]
    for cells in body:
        if len(cells) != len(HEADER):
            lines.append("| " + " | ".join(cells) + " |")
            continue
        lines.append(
            "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"
        )
    return "\n".join(lines)


def check(rows: Sequence[Row]) -> list[str]:
    """The goals the report is meant to show; each violated one, as text."""
    problems = []
    by = {(r.variant, r.dtype, r.target): r for r in rows}
    for r in rows:
        tag = f"{r.variant}/{r.dtype}/{r.target}"
        if r.error:
            problems.append(f"{tag}: did not compile")
            continue
        if r.spills:
            problems.append(f"{tag}: {r.spills} spills")
        if _TARGETS[r.target].tdm and (r.tdm_per_iter == 0 or r.mma_per_iter == 0):
            problems.append(f"{tag}: no TDM or no WMMA in the K loop")
        if not _TARGETS[r.target].tdm and r.mma_per_iter == 0:
            problems.append(f"{tag}: no MFMA in the K loop")
    for dtype in DTYPES:
        fused = by.get(("fused", dtype, "gfx1250"))
        unfused = by.get(("unfused", dtype, "gfx1250"))
        if fused and not fused.error and fused.tdm_per_iter != 1:
            problems.append(
                f"fused/{dtype}/gfx1250: {fused.tdm_per_iter} TDM per iteration, want 1"
            )
        if unfused and not unfused.error and unfused.tdm_per_iter != 2:
            problems.append(
                f"unfused/{dtype}/gfx1250: {unfused.tdm_per_iter} TDM per iteration, want 2"
            )
    return problems


def _csv(text: str, allowed: Sequence[str], what: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in allowed]
    if bad:
        raise argparse.ArgumentTypeError(
            f"unknown {what} '{bad[0]}' (choose from {', '.join(allowed)})"
        )
    return items


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``gemm-opt-isa-report``."""
    p = argparse.ArgumentParser(
        prog="gemm-opt-isa-report",
        description="Compile the GEMM variants and tabulate their ISA metrics.",
    )
    p.add_argument("--input", type=Path, default=DEFAULT_INPUT, help="tile GEMM (.mlir)")
    p.add_argument(
        "--variants",
        type=lambda s: _csv(s, VARIANTS, "variant"),
        default=list(VARIANTS),
        help=f"comma list of {', '.join(VARIANTS)}",
    )
    p.add_argument(
        "--dtypes",
        type=lambda s: _csv(s, DTYPES, "dtype"),
        default=list(DTYPES),
        help=f"comma list of {', '.join(DTYPES)}",
    )
    p.add_argument(
        "--targets",
        type=lambda s: _csv(s, TARGETS, "target"),
        default=list(TARGETS),
        help=f"comma list of {', '.join(TARGETS)}",
    )
    p.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    p.add_argument("--check", action="store_true", help="exit 1 unless the goals hold")
    args = p.parse_args(argv)
    try:
        source = args.input.read_text()
    except OSError as e:
        sys.stderr.write(f"gemm-opt-isa-report: error: cannot read {args.input}: {e.strerror}\n")
        return 1
    try:
        edited(source)  # the input parses and verifies before any variant is made
    except EditError as e:
        where = f"{args.input}:{e.line}:{e.col}" if e.line else str(args.input)
        sys.stderr.write(f"{where}: error: {e.message}\n")
        return 1
    rows = [compile_row(source, *t) for t in plan(args.variants, args.dtypes, args.targets)]
    if args.json:
        sys.stdout.write(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
    else:
        sys.stdout.write(format_table(rows) + "\n")
    problems = check(rows) if args.check else []
    for line in problems:
        sys.stderr.write(f"gemm-opt-isa-report: goal not met: {line}\n")
    if any(r.error for r in rows):
        for r in rows:
            if r.error:
                sys.stderr.write(f"{r.variant}/{r.dtype}/{r.target}: {r.error}\n")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
