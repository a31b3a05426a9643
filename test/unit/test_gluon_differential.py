"""Differential test: our GEMM through the tile lowering against the Gluon reference.

``examples/gemm_gfx1250.mlir`` (ours, tile dialect) and
``benchmarks/gluon_gemm_gfx1250.py`` (written directly in Gluon) describe the
same kernel: 128x128x64 blocks, 8 warps, two padded LDS buffers per operand
(A ``[64:+8]``, B ``[128:+16]``), A copied by warps 0-3 (hint 0x0F) and B by
warps 4-7 (hint 0xF0), the copy of K tile k+1 issued before the WMMAs of tile
k, and one predicated loop over all K tiles (Gluon's ``schedule="predicated"``).
Both are compiled for gfx1250 and must agree on what the schedule decides:

* ``tensor_load_to_lds`` count, in the whole kernel and in the K loop;
* ``v_wmma`` count, in the whole kernel and in the K loop;
* the LDS size in bytes (Triton's ``shared`` metadata);
* the ``s_wait_tensorcnt`` immediates in the K loop (the wait counts our
  fusion pass rewrites; a wrong count is a race, not just a slowdown);
* the ``s_barrier`` count: both store C from the WMMA layout, with no round
  trip through LDS (a conversion before the store adds its barriers).

Pairs, for fp16 and bf16 (bf16 retypes every ``f16`` of our module to ``bf16``;
hints are dropped from the module, see :mod:`gemm_opt.dialect.edit`):

======================  =========================  ==================
ours                    options                    Gluon variant
======================  =========================  ==================
hinted                  ``fuse=True`` (default)    ``fused``
hinted                  ``fuse=False``             ``separate``
hints stripped          default                    ``none``
======================  =========================  ==================

Register counts, code size and instruction totals are not compared: the
kernels differ on purpose in index arithmetic (our 2-D grid against Gluon's
1-D one). Gluon's M, N and K are specialised as multiples of 16 only when our
text states divisibility facts (``aligned``), so both store paths see the same
facts. Each kernel is compiled once per module
(12 compiles, about a second each) and only when a test asks for it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import triton  # noqa: F401  (a pinned dependency: missing triton must fail, not skip)
from support.scripts import load_script

from gemm_opt.core.contract import DIVISIBILITY, TRITON_DIVISIBILITY
from gemm_opt.core.ext_compat import ir
from gemm_opt.dialect import make_context
from gemm_opt.dialect.edit import (
    drop_warp_hints,
    edited,
    functions,
    retype_elements,
    warp_hints,
)
from gemm_opt.lowering.compile import compile_tile_module
from gemm_opt.lowering.isa_analysis import innermost_loops, isa_metrics

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "gemm_gfx1250.mlir"
GLUON = ROOT / "benchmarks" / "gluon_gemm_gfx1250.py"

#: The Gluon schedule that matches our example (see the Gluon module docstring):
#: "predicated" while the example runs one loop over all K tiles with the
#: next-tile copy predicated off past the end; "peeled" if it peels the last tile.
GLUON_SCHEDULE = "predicated"
#: WMMAs in the whole kernel: the 16 of one K tile, once more for a peeled tile.
WMMA_TOTAL = {"predicated": 16, "peeled": 32}[GLUON_SCHEDULE]
DTYPES = ("fp16", "bf16")
#: Gluon variant -> (how our text is prepared, compile_tile_module options).
PAIRS: dict[str, tuple[str, dict[str, Any]]] = {
    "fused": ("hinted", {}),
    "separate": ("hinted", {"fuse": False}),
    "none": ("unhinted", {}),
}
COMPARED = (
    "tdm_loads",
    "tdm_loads_in_loop",
    "wmma",
    "wmma_in_loop",
    "lds_bytes",
    "barriers",
    "loop_tensorcnt_waits",
)


def prepare(module: ir.Module, dtype: str, hints: str) -> None:
    """Make our example the ``dtype`` kernel, with or without its warp hints."""
    if dtype == "bf16":
        retype_elements(module, ir.F16Type.get(), ir.BF16Type.get())
    if hints == "unhinted":
        drop_warp_hints(module)


def our_text(dtype: str, hints: str) -> str:
    """Our example's text for ``dtype``, with or without its warp hints."""
    return edited(EXAMPLE.read_text(), lambda m: prepare(m, dtype, hints))


def declares_divisibility(text: str) -> bool:
    """Whether our kernel states divisibility facts on M, N and K (its i32
    arguments): Gluon's ``aligned``. Both take pointers and leading strides as
    16-aligned either way (the example states it of lda, ldb and ldc)."""
    with make_context():
        module = ir.Module.parse(text)
        fn = functions(module)[0]
        if "arg_attrs" not in fn.attributes:
            return False
        return any(
            name in ir.DictAttr(d)
            for arg, d in zip(fn.arguments, fn.arg_attrs, strict=True)
            if str(arg.type) == "i32"
            for name in (DIVISIBILITY, TRITON_DIVISIBILITY)
        )


def _load_gluon() -> Any:
    return load_script(GLUON, "gluon_gemm_gfx1250")


def _loop_tensorcnt_waits(amdgcn: str) -> list[str]:
    """The ``s_wait_tensorcnt`` immediates of the innermost loop(s), in order."""
    return [
        line.split()[1]
        for loop in innermost_loops(amdgcn)
        for line in loop
        if line.startswith("s_wait_tensorcnt")
    ]


def numbers(metrics: Any, amdgcn: str) -> dict[str, Any]:
    """The compared numbers of one compiled kernel."""
    row = {name: getattr(metrics, name) for name in COMPARED[:-1]}
    row["loop_tensorcnt_waits"] = _loop_tensorcnt_waits(amdgcn)
    return row


class _Lazy:
    """Compile on first use, then remember (one compile per key per module)."""

    def __init__(self, make: Callable[..., dict[str, Any]]) -> None:
        self._make = make
        self._done: dict[tuple[str, str], dict[str, Any]] = {}

    def __call__(self, dtype: str, variant: str) -> dict[str, Any]:
        key = (dtype, variant)
        if key not in self._done:
            self._done[key] = self._make(dtype, variant)
        return self._done[key]


@pytest.fixture(scope="module")
def ours() -> _Lazy:
    def make(dtype: str, variant: str) -> dict[str, Any]:
        hints, options = PAIRS[variant]
        kernel = compile_tile_module(our_text(dtype, hints), target="gfx1250", **options)
        return numbers(kernel.metrics, kernel.asm["amdgcn"])

    return _Lazy(make)


@pytest.fixture(scope="module")
def gluon() -> _Lazy:
    module = _load_gluon()

    def make(dtype: str, variant: str) -> dict[str, Any]:
        aligned = declares_divisibility(our_text(dtype, PAIRS[variant][0]))
        kernel = module.compile_gluon_gemm(dtype, variant, schedule=GLUON_SCHEDULE, aligned=aligned)
        amdgcn = kernel.asm["amdgcn"]
        return numbers(isa_metrics(amdgcn, kernel.metadata._asdict()), amdgcn)

    return _Lazy(make)


def _table(mine: dict[str, Any], theirs: dict[str, Any]) -> str:
    lines = [f"{'metric':22} {'ours':>24} {'gluon':>24}"]
    for name in COMPARED:
        mark = "" if mine[name] == theirs[name] else "   <-- differs"
        lines.append(f"{name:22} {mine[name]!s:>24} {theirs[name]!s:>24}{mark}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------


def _element_types(module: ir.Module) -> list[str]:
    """The element type of every pointer, block and tensor value, in program order."""
    found: list[str] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        values = [*op.results]
        for region in op.regions:
            for block in region.blocks:
                values += [*block.arguments]
        found.extend(str(v.type.element_type) for v in values if hasattr(v.type, "element_type"))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def test_example_variants_change_what_they_should() -> None:
    """bf16 retypes every f16 value and nothing else; unhinted drops the 4 hints."""
    with make_context():
        fp16 = ir.Module.parse(our_text("fp16", "hinted"))
        bf16 = ir.Module.parse(our_text("bf16", "hinted"))
        unhinted = ir.Module.parse(our_text("fp16", "unhinted"))
        assert warp_hints(fp16) == [0x0F, 0xF0, 0x0F, 0xF0]
        assert warp_hints(bf16) == [0x0F, 0xF0, 0x0F, 0xF0]
        assert warp_hints(unhinted) == []
        before, after = _element_types(fp16), _element_types(bf16)
        assert before[:3] == ["f16"] * 3 and "bf16" not in before  # a, b, c first
        assert after == ["bf16" if t == "f16" else t for t in before]
        assert _element_types(unhinted) == before


@pytest.mark.parametrize("variant", list(PAIRS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_matches_gluon(ours: _Lazy, gluon: _Lazy, dtype: str, variant: str) -> None:
    mine, theirs = ours(dtype, variant), gluon(dtype, variant)
    assert mine == theirs, (
        f"{dtype}, ours ({PAIRS[variant][0]}, {PAIRS[variant][1] or 'defaults'}) "
        f"against Gluon {variant!r} ({GLUON_SCHEDULE} schedule):\n{_table(mine, theirs)}\n"
        "(if examples/gemm_gfx1250.mlir changed its pipeline schedule, update GLUON_SCHEDULE)"
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_expected_counts(ours: _Lazy, dtype: str) -> None:
    """Pin the design's numbers, so that both sides cannot drift together.

    128x128x64 with 8 warps in a 4x2 grid of 16x16x32 WMMAs: 2x4x2 = 16 WMMAs
    per K tile, in the loop (and again after it when the last tile is peeled). One TDM copy per
    operand per K tile, or one fused copy; the prologue copies tile 0 outside
    the loop. LDS: each operand is one 2-buffer allocation of 2 x 128 x 64
    elements with a pad after every interval but the last, in 2-byte
    elements: A ``[64:+8]`` 16384 + 255 x 8, B ``[128:+16]`` 16384 + 127 x 16,
    73680 B in all. Loop waits: LLVM's ``0xa`` before each TDM instruction,
    then ours: one copy (the fused one) or two may stay in flight.
    """
    lds = 2 * (2 * 128 * 64 + 255 * 8) + 2 * (2 * 64 * 128 + 127 * 16)
    expected = {
        "fused": (2, 1, ["0xa", "0x1"]),
        "separate": (4, 2, ["0xa", "0xa", "0x2"]),
        "none": (4, 2, ["0xa", "0xa", "0x2"]),
    }
    for variant, (tdm, tdm_loop, waits) in expected.items():
        got = ours(dtype, variant)
        assert (got["tdm_loads"], got["tdm_loads_in_loop"]) == (tdm, tdm_loop), variant
        assert (got["wmma"], got["wmma_in_loop"]) == (WMMA_TOTAL, 16), variant
        assert got["lds_bytes"] == lds, variant
        assert got["loop_tensorcnt_waits"] == waits, variant
