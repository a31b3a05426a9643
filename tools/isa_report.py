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
  direct-to-LDS copies on gfx950;
* ``deep``: the deep pipeline, ``fused`` compiled from
  ``examples/gemm_gfx1250_deep.mlir`` (the Python front end's GEMM with
  ``NUM_BUFFERS=4``: three K tiles in flight while one is read) instead of
  the input (gfx1250 only: the pipeline is TDM's, and gfx942 could not hold
  its 147 KB of buffers).

gfx950 and gfx942 have no TDM and drop hints, so only ``fused`` (their
default pipeline) and ``aligned`` run there. ``bf16`` is the fp16 kernel with
its element type changed.

``--dtypes f8e4m3`` compiles the MXFP8 GEMM of ``examples/gemm_mxfp8_gfx1250.mlir``
instead (e4m3 A and B, e8m0 scale tiles copied by TDM, ``tile.scaled_wmma``): on
gfx1250 ``fused`` (its copies as written: unhinted), ``unfused``, ``derived``
(its four copies, scale tiles included, hinted by ``tile-derive-warp-hints`` and
fused), ``derived-unfused`` (the same hints, not fused: each copy keeps the
per-warp predicate ``tile-emit-warp-predicates`` gives it) and ``aligned``; on
gfx950 ``aligned`` only (the unaligned kernel copies through registers and
spills two SGPRs: an open gap, see ``docs/fp8.md``).
Its rows name the loop's matrix instruction, the hints the scale-tile copies
got and their per-warp predicates; ``--check`` also wants the scaled
instruction, a derived hint on every scale-tile copy, one TDM instruction per K
iteration derived and fused, and a predicate on every hinted copy unfused. Each
variant is an edit of the parsed module (:mod:`gemm_opt.dialect.edit`), never
of its text.

A target whose shared memory cannot hold the kernel's buffers (gfx942: 64 KiB
against the example's 73,680 bytes) compiles it with the K block halved until
they fit (:func:`with_block_k`: every K-block dimension, the padding interval
of a row of K, and the K-step constants); its rows say so (``fused
(BLOCK_K=32)``) and carry ``block_k`` in ``--json``.

Columns: TDM instructions and WMMA/MFMA instructions in the innermost loop
(one K iteration), VGPRs, SGPRs, LDS bytes, spills, code bytes and compile
seconds. ``--check`` exits 1 unless the goals hold: no spills anywhere,
TDM and WMMA in the gfx1250 loop, 1 TDM instruction per K iteration fused
(and deep) against 2 unfused; when they hold it says so on stderr (stdout
keeps only the table or the JSON).

The report reads AMDGPU assembly, so its targets are the AMD ones; a
non-AMD target is refused (exit 2) rather than tabulated as zeros.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from gemm_opt.core.contract import DIVISIBILITY, WARP_LAYOUT, WARP_LAYOUTS, WARP_USED_HINT
from gemm_opt.core.ext_compat import cast, ir
from gemm_opt.core.targets import TARGETS as _TARGETS
from gemm_opt.dialect.edit import (
    EditError,
    annotate_arguments,
    drop_warp_hints,
    edited,
    integer_of_width,
    map_types,
    ops_named,
    retype_elements,
    with_fields,
)
from gemm_opt.dialect.tile import PaddedSharedAttr, SharedType
from gemm_opt.lowering.isa_analysis import loop_mma_mnemonics

VARIANTS = ("fused", "unfused", "unhinted", "derived", "aligned", "deep")
DTYPES = ("f16", "bf16")
#: The 8-bit rows: the MXFP8 kernel, and the variants it has per target.
FP8_DTYPES = ("f8e4m3",)
FP8_VARIANTS: dict[str, tuple[str, ...]] = {
    "gfx1250": ("fused", "unfused", "derived", "derived-unfused", "aligned"),
    "gfx950": ("aligned",),
}
#: Variants only the 8-bit rows have: ``derived`` without the fusion, so each
#: hinted copy keeps its per-warp predicate.
FP8_ONLY_VARIANTS = ("derived-unfused",)
#: The AMD targets: the report reads AMDGPU assembly.
TARGETS = tuple(name for name, t in _TARGETS.items() if t.backend == "hip")
DEFAULT_INPUT = Path(__file__).resolve().parents[1] / "examples" / "gemm_gfx1250.mlir"
#: The ``deep`` variant's kernel: the same GEMM with ``NUM_BUFFERS=4``.
DEEP_INPUT = DEFAULT_INPUT.with_name("gemm_gfx1250_deep.mlir")
#: The 8-bit rows' kernel: MXFP8 (block-scaled e4m3, e8m0 scales per 32 of K).
FP8_INPUT = DEFAULT_INPUT.with_name("gemm_mxfp8_gfx1250.mlir")
#: The element type of block-scale tiles (their copies' hints are reported).
SCALE_TYPE = "f8E8M0FNU"


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
    #: The matrix instructions of the K loop.
    mma_instr: str = ""
    #: The ``warp_used_hint`` s of the scale-tile copies after the tile passes (8-bit rows).
    scale_hints: str = ""
    #: The per-warp predicates emitted on the scale-tile copies (unfused hinted copies).
    scale_predicates: str = ""
    #: The K block the row was compiled with, when not the kernel's own (the
    #: kernel's buffers do not fit the target's shared memory).
    block_k: int | None = None

    @property
    def label(self) -> str:
        """The variant as the table shows it."""
        name = "deep (NUM_BUFFERS=4)" if self.variant == "deep" else self.variant
        return name if self.block_k is None else f"{name} (BLOCK_K={self.block_k})"


#: The report's element types, as the bindings build them.
_ELEMENT_TYPES: dict[str, Callable[[], ir.Type]] = {"f16": ir.F16Type.get, "bf16": ir.BF16Type.get}
#: What ``aligned`` states on the integer arguments (sizes and leading dimensions).
ALIGNMENT = 16


def with_dtype(module: ir.Module, dtype: str) -> None:
    """Make the fp16 kernel a ``dtype`` kernel (every f16 becomes ``dtype``); the
    8-bit kernel is its own."""
    if dtype in _ELEMENT_TYPES and dtype != "f16":
        retype_elements(module, ir.F16Type.get(), _ELEMENT_TYPES[dtype]())


def aligned(module: ir.Module) -> None:
    """State ``tile.divisibility = 16`` on the kernel's i32 and i64 arguments."""
    attr = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), ALIGNMENT)
    annotate_arguments(module, integer_of_width(32, 64), DIVISIBILITY, attr)


def shared_bytes(module: ir.Module | ir.Operation) -> int:
    """Bytes of shared memory the kernel's buffers take (padding included)."""
    return sum(
        cast(op.results[0].type, SharedType).allocation_bytes()
        for op in ops_named(module, "tile.local_alloc")
    )


def block_shape(module: ir.Module | ir.Operation) -> tuple[int, int, int]:
    """``(BLOCK_M, BLOCK_N, BLOCK_K)`` of the GEMM: the shapes of its one ``tile.wmma``
    (or ``tile.scaled_wmma``: A and B are its operands 0 and 2)."""
    mmas = ops_named(module, "tile.wmma")
    scaled = ops_named(module, "tile.scaled_wmma")
    if len(mmas) + len(scaled) != 1:
        raise EditError(f"expected one tile.wmma, found {len(mmas) + len(scaled)}")
    a, b = (mmas[0].operands[0], mmas[0].operands[1]) if mmas else scaled[0].operands[0:3:2]
    bm, bk = ir.RankedTensorType(a.type).shape
    _, bn = ir.RankedTensorType(b.type).shape
    return bm, bn, bk


def with_block_k(module: ir.Module | ir.Operation, block_k: int) -> None:
    """The GEMM with K blocks of ``block_k`` elements instead of its own.

    Every tensor dimension equal to the kernel's K block becomes ``block_k``
    (operand tiles, descriptors, buffers), a padded layout whose interval is
    one row of K pads rows of ``block_k``, and the ``i32`` constants of the K
    loop (the block, and the block minus one that rounds the tile count up)
    follow. The K block must differ from BLOCK_M and BLOCK_N, so that each
    dimension is known by its size; the result is verified.
    """
    bm, bn, bk = block_shape(module)
    if bk in (bm, bn) or block_k in (bm, bn):
        raise EditError(f"the K block ({bk} -> {block_k}) must differ from {bm} and {bn}")

    def shape(t: ir.Type) -> ir.Type:
        tensor = cast(t, ir.RankedTensorType)
        if tensor is None or bk not in tensor.shape:
            return t
        dims = [block_k if d == bk else d for d in tensor.shape]
        return ir.RankedTensorType.get(
            dims, tensor.element_type, tensor.encoding, loc=ir.Location.unknown()
        )

    def layout(a: ir.Attribute) -> ir.Attribute:
        padded = a.maybe_downcast()
        if not isinstance(padded, PaddedSharedAttr) or padded.field_values()["interval"] != bk:
            return a
        return with_fields(padded, interval=block_k)

    map_types(module, shape, layout, verify=False)
    i32 = ir.IntegerType.get_signless(32)
    for op in ops_named(module, "arith.constant"):
        value = op.attributes["value"]
        if value.type != i32:
            continue
        n = ir.IntegerAttr(value).value
        if n in (bk, bk - 1):
            op.attributes["value"] = ir.IntegerAttr.get(i32, n - bk + block_k)
    module.operation.verify()


def fitting_block_k(source: str, target: str) -> int | None:
    """The K block to compile ``source`` with on ``target``: ``None`` when its
    buffers fit the target's shared memory, else the kernel's own K block
    halved until they do (``EditError`` if even one WMMA/MFMA K step cannot)."""
    chosen: list[int | None] = [None]
    cap = _TARGETS[target].shared_memory_bytes

    def choose(module: ir.Module) -> None:
        if shared_bytes(module) <= cap:
            return
        block_k = block_shape(module)[2]
        while block_k > 16:
            block_k //= 2
            trial = module.operation.clone()
            try:
                with_block_k(trial, block_k)
                fits = shared_bytes(trial) <= cap
            finally:
                trial.erase()
            if fits:
                chosen[0] = block_k
                return
        raise EditError(f"the GEMM's buffers do not fit the {cap} bytes of {target}")

    edited(source, choose)
    return chosen[0]


def variant_text(source: str, variant: str, dtype: str, block_k: int | None = None) -> str:
    """The tile text compiled for one row: ``source`` edited for the variant,
    the dtype and (if given) the K block."""
    if variant == "deep":
        source = DEEP_INPUT.read_text()
    edits: list[Callable[[ir.Module], object]] = [lambda m: with_dtype(m, dtype)]
    if block_k is not None:
        edits.append(lambda m: with_block_k(m, block_k))
    if variant == "aligned":
        edits.append(aligned)
    elif variant in ("unhinted", "derived", "derived-unfused"):
        edits.append(drop_warp_hints)
    return edited(source, *edits)


def plan(variants: Sequence[str], dtypes: Sequence[str], targets: Sequence[str]):
    """(variant, dtype, target) triples to compile, in table order."""
    for dtype in dtypes:
        for target in targets:
            for variant in variants:
                if dtype in FP8_DTYPES:
                    if variant in FP8_VARIANTS.get(target, ()):
                        yield variant, dtype, target
                    continue
                if variant in FP8_ONLY_VARIANTS:
                    continue
                if not _TARGETS[target].tdm and variant not in ("fused", "aligned"):
                    continue
                if variant == "deep" and target != "gfx1250":
                    continue
                yield variant, dtype, target


def compile_row(source: str, variant: str, dtype: str, target: str) -> Row:
    from gemm_opt.lowering.compile import TileCompileError, compile_tile_module

    row = Row(variant, dtype, target)
    try:
        if dtype in FP8_DTYPES:
            source = FP8_INPUT.read_text()
        if variant == "deep":
            source = DEEP_INPUT.read_text()
        row.block_k = fitting_block_k(source, target)
        text = variant_text(source, variant, dtype, row.block_k)
        k = compile_tile_module(
            text,
            target,
            fuse=variant not in ("unfused", "derived-unfused"),
            derive_hints=variant in ("derived", "derived-unfused"),
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
    row.mma_instr = ",".join(loop_mma_mnemonics(k.asm["amdgcn"]))
    if dtype in FP8_DTYPES and _TARGETS[target].tdm:
        copies = scale_copies(k.asm["tile"])
        row.scale_hints = ",".join("all" if c.hint is None else f"0x{c.hint:02x}" for c in copies)
        row.scale_predicates = ",".join(c.predicate() for c in copies if c.predicated)
    return row


@dataclass(frozen=True)
class ScaleCopy:
    """One copy of a scale tile in the tile IR after the passes."""

    #: Its ``warp_used_hint`` (None: all warps copy).
    hint: int | None
    #: The warps that copy it, from its ``tile.warp_layout``: warp ``w`` copies iff
    #: ``((w ^ anchor) & free_mask) == 0`` (None: no layout assigned).
    anchor: int | None = None
    free_mask: int | None = None
    #: Whether ``tile-emit-warp-predicates`` made that test its ``pred`` operand (a
    #: fused copy needs none: the instruction itself skips the other warps' members).
    predicated: bool = False

    def predicate(self) -> str:
        """The per-warp predicate, as the emitted ``tile.warp_id`` test reads."""
        if self.free_mask is None:
            return "-"
        return f"((w^{self.anchor})&{self.free_mask})==0"


def scale_copies(tile_text: str) -> list[ScaleCopy]:
    """Every copy of a scale tile in ``tile_text`` (the tile IR after the passes),
    fused members included, in program order."""
    found: list[ScaleCopy] = []

    def layout_of(attr: ir.Attribute) -> tuple[int | None, int | None]:
        fields = attr.maybe_downcast().field_values()
        return fields.get("anchor"), fields.get("free_mask")

    def collect(module: ir.Module) -> None:
        for op in ops_named(module, "tile.async_tdm_copy_global_to_local"):
            if str(op.operands[1].type.element_type) != SCALE_TYPE:
                continue
            attrs, copy = op.attributes, op.opview
            hint = ir.IntegerAttr(attrs[WARP_USED_HINT]).value if WARP_USED_HINT in attrs else None
            anchor, mask = layout_of(attrs[WARP_LAYOUT]) if WARP_LAYOUT in attrs else (None, None)
            found.append(ScaleCopy(hint, anchor, mask, copy.pred is not None))
        for op in ops_named(module, "tile.async_tdm_fused_copy_global_to_local"):
            fused = op.opview
            layouts = (
                list(ir.ArrayAttr(op.attributes[WARP_LAYOUTS]))
                if WARP_LAYOUTS in op.attributes
                else []
            )
            for i, (dest, hint) in enumerate(zip(fused.dests, fused.warp_used_hints, strict=True)):
                if str(dest.type.element_type) == SCALE_TYPE:
                    anchor, mask = layout_of(layouts[i]) if layouts else (None, None)
                    found.append(ScaleCopy(hint, anchor, mask))

    edited(tile_text, collect)
    return found


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
    "MMA instr",
    "scale hints",
    "scale predicates",
)


def format_table(rows: Sequence[Row]) -> str:
    """A Markdown table of ``rows``."""
    body = []
    for r in rows:
        if r.error:
            body.append((r.label, r.dtype, r.target, "error: " + r.error.splitlines()[0]))
            continue
        body.append(
            (
                r.label,
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
                r.mma_instr,
                r.scale_hints or "-",
                r.scale_predicates or "-",
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
        tag = f"{r.label}/{r.dtype}/{r.target}"
        if r.error:
            problems.append(f"{tag}: did not compile")
            continue
        if r.spills:
            problems.append(f"{tag}: {r.spills} spills")
        if _TARGETS[r.target].tdm and (r.tdm_per_iter == 0 or r.mma_per_iter == 0):
            problems.append(f"{tag}: no TDM or no WMMA in the K loop")
        if not _TARGETS[r.target].tdm and r.mma_per_iter == 0:
            problems.append(f"{tag}: no MFMA in the K loop")
    for r in rows:
        if r.dtype not in FP8_DTYPES or r.error:
            continue
        tag = f"{r.label}/{r.dtype}/{r.target}"
        if "scale" not in r.mma_instr:
            problems.append(f"{tag}: no scaled MMA in the K loop ({r.mma_instr or 'none'})")
        if r.variant in ("derived", "derived-unfused"):
            if not r.scale_hints or "all" in r.scale_hints.split(","):
                problems.append(f"{tag}: a scale-tile copy has no derived warp_used_hint")
        if r.variant == "derived" and r.tdm_per_iter != 1:
            problems.append(f"{tag}: {r.tdm_per_iter} TDM per iteration, want 1")
        if r.variant == "derived-unfused":
            # One instruction per copy (A, B and the two scale tiles), each predicated
            # to the warps of its hint.
            if r.tdm_per_iter != 4:
                problems.append(f"{tag}: {r.tdm_per_iter} TDM per iteration, want 4")
            n_hints = len(r.scale_hints.split(",")) if r.scale_hints else 0
            n_preds = len(r.scale_predicates.split(",")) if r.scale_predicates else 0
            if n_preds != n_hints:
                problems.append(f"{tag}: a hinted scale-tile copy has no per-warp predicate")
    for dtype in DTYPES:
        fused = by.get(("fused", dtype, "gfx1250"))
        unfused = by.get(("unfused", dtype, "gfx1250"))
        if fused and not fused.error and fused.tdm_per_iter != 1:
            problems.append(
                f"fused/{dtype}/gfx1250: {fused.tdm_per_iter} TDM per iteration, want 1"
            )
        deep = by.get(("deep", dtype, "gfx1250"))
        if deep and not deep.error and deep.tdm_per_iter != 1:
            problems.append(f"deep/{dtype}/gfx1250: {deep.tdm_per_iter} TDM per iteration, want 1")
        if unfused and not unfused.error and unfused.tdm_per_iter != 2:
            problems.append(
                f"unfused/{dtype}/gfx1250: {unfused.tdm_per_iter} TDM per iteration, want 2"
            )
    return problems


def _csv(text: str, allowed: Sequence[str], what: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in allowed]
    if bad and what == "target" and bad[0] in _TARGETS:
        raise argparse.ArgumentTypeError(
            f"the ISA report reads AMDGPU assembly: {bad[0]} is not an AMD target "
            f"(choose from {', '.join(allowed)})"
        )
    if bad:
        raise argparse.ArgumentTypeError(
            f"unknown {what} '{bad[0]}' (choose from {', '.join(allowed)})"
        )
    if not items:
        raise argparse.ArgumentTypeError(f"no {what} given (choose from {', '.join(allowed)})")
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
        type=lambda s: _csv(s, VARIANTS + FP8_ONLY_VARIANTS, "variant"),
        default=list(VARIANTS + FP8_ONLY_VARIANTS),
        help=f"comma list of {', '.join(VARIANTS + FP8_ONLY_VARIANTS)} (the last: 8-bit only)",
    )
    p.add_argument(
        "--dtypes",
        type=lambda s: _csv(s, DTYPES + FP8_DTYPES, "dtype"),
        default=list(DTYPES),
        help=f"comma list of {', '.join(DTYPES + FP8_DTYPES)} (f8e4m3: the MXFP8 kernel)",
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
    if problems:
        return 1
    if args.check:
        sys.stderr.write(f"gemm-opt-isa-report: check passed: {len(rows)} variants\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
