"""Read AMDGPU assembly: register counts, LDS, code size, instruction counts.

:func:`isa_metrics` reads an :class:`IsaMetrics` from the assembly Triton
produced; "in loop" counts come from the innermost loop(s), found from
LLVM's loop comments or, without them, from back-edge branches
(:func:`innermost_loops`). It works on text alone (no Triton), so the ISA
report, the tests and :mod:`gemm_opt.lowering.compile` share it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "IsaMetrics",
    "innermost_loop_lines",
    "innermost_loops",
    "isa_metrics",
    "loop_mma_mnemonics",
]


@dataclass
class IsaMetrics:
    """Static facts about one compiled AMDGPU kernel.

    Register, spill and size fields come from the assembler metadata; LDS is
    Triton's ``shared`` metadata when given (Triton allocates LDS dynamically,
    so ``.group_segment_fixed_size`` is 0 in its kernels). Instruction counts
    are over the kernel's text; ``*_in_loop`` counts are over the innermost
    loop(s) only (see :func:`innermost_loops`).
    """

    vgprs: int = 0
    sgprs: int = 0
    lds_bytes: int = 0
    spills: int = 0
    code_bytes: int = 0
    tdm_loads: int = 0
    tdm_loads_in_loop: int = 0
    wmma: int = 0
    mfma: int = 0
    instructions: int = 0
    #: Count per ``s_wait*`` / ``s_waitcnt*`` opcode (whole kernel).
    waits: dict[str, int] = field(default_factory=dict)
    vgpr_spills: int = 0
    sgpr_spills: int = 0
    scratch_bytes: int = 0
    tdm_stores: int = 0
    wmma_in_loop: int = 0
    mfma_in_loop: int = 0
    barriers: int = 0
    loop_instructions: int = 0
    occupancy: int = 0


_LABEL = re.compile(r"^(\.?[A-Za-z_$][\w.$]*):")
_MNEMONIC = re.compile(r"^\s+([a-z][a-z0-9_]*)\b")
_BRANCH = re.compile(r"^\s+(s_cbranch_\w+|s_branch)\s+(\.?[\w.$]+)")


def _kernel_body(amdgcn: str) -> list[str]:
    """The kernel's text lines, from its entry label to ``.Lfunc_end``."""
    lines = amdgcn.splitlines()
    start = 0
    for i, line in enumerate(lines):
        if re.match(r"^\s*\.type\s+[\w.$]+,\s*@function", line):
            start = i
            break
    body: list[str] = []
    for line in lines[start:]:
        if line.startswith(".Lfunc_end"):
            break
        body.append(line)
    return body


def _instructions(lines: list[str]) -> list[str]:
    """Instruction lines (mnemonic first), with comments stripped."""
    out = []
    for line in lines:
        if _MNEMONIC.match(line):
            out.append(line.split(";")[0].strip())
    return out


_BLOCK_START = re.compile(r"^(?:\.(LBB\w+):|; %bb\.\d+:)")
# LLVM indents the marker by loop depth (``=>  This Inner Loop Header`` at depth 2).
_INNER_HEADER = re.compile(r"=>\s*This Inner Loop Header: Depth=\d+")
_IN_LOOP = re.compile(r"in Loop: Header=(BB\w+) Depth=\d+")


def _annotated_loops(body: list[str]) -> list[list[int]]:
    """Innermost loops from LLVM's loop comments, as lists of body line indices.

    LLVM's assembly printer marks each block: ``=>This Inner Loop Header``
    on the header of an innermost loop, and ``in Loop: Header=BBx_y`` on
    every other block, naming the innermost loop that contains it. That also
    handles rotated loops, whose latch block is laid out before the header.
    """
    blocks: list[tuple[str | None, list[int]]] = []  # (loop header, lines)
    inner: set[str] = set()
    label: str | None = None  # the current block's label
    for i, line in enumerate(body):
        start = _BLOCK_START.match(line)
        if start or not blocks:
            blocks.append((None, []))
            label = start.group(1) if start else None
        header, lines = blocks[-1]
        lines.append(i)
        # The comment sits on the block's first line or on comment-only lines
        # right after it (a nested loop's header names its parent loops first).
        # Equivalent mutant: ``header is None or ...`` only differs when a block
        # carries a second loop comment after its first, and LLVM prints one
        # (``in Loop`` or ``Inner Loop Header``) per block.
        if header is None and (start or line.lstrip().startswith(";")):
            if label and _INNER_HEADER.search(line):
                header = label
                inner.add(label)
            elif m := _IN_LOOP.search(line):
                header = "L" + m.group(1)
            blocks[-1] = (header, lines)
    loops: dict[str, list[int]] = {}
    for header, lines in blocks:
        if header in inner:
            loops.setdefault(header, []).extend(lines)
    return [sorted(lines) for lines in loops.values()]


def _back_edge_loops(body: list[str]) -> list[list[int]]:
    """Innermost loops from backward branches (for text without loop comments).

    A branch (``s_cbranch_*`` or ``s_branch``) to a textually earlier label is
    taken as a back edge, and the loop as the lines between that label and the
    last branch back to it (LLVM lays loops out contiguously). A range holding
    ``s_endpgm`` is not a loop (block placement can put an exit block before
    its predecessor). A loop is innermost when no other lies inside it.
    """
    labels: dict[str, int] = {}
    last_branch: dict[int, int] = {}
    for i, line in enumerate(body):
        m = _LABEL.match(line)
        if m:
            labels[m.group(1)] = i
            continue
        b = _BRANCH.match(line)
        if b and b.group(2) in labels:
            last_branch[labels[b.group(2)]] = i
    edges = sorted(
        (lo, hi)
        for lo, hi in last_branch.items()
        if not any(ln.strip().startswith("s_endpgm") for ln in body[lo:hi])
    )
    return [
        list(range(lo, hi + 1))
        for lo, hi in edges
        # Equivalent mutant: ``lo < a`` / ``b < hi`` for ``<=``: two ranges never
        # share a start (one range per label line) nor an end (one branch per line
        # closes one label's range), so equality only holds for the range itself.
        if not any((a, b) != (lo, hi) and lo <= a and b <= hi for a, b in edges)
    ]


def innermost_loops(amdgcn_text: str) -> list[list[str]]:
    """The instructions of each innermost loop of the kernel.

    Uses LLVM's loop comments when the text has them, else back edges: a
    branch to an earlier label closes a loop spanning label..branch (see
    ``_back_edge_loops``).
    """
    return _innermost_loops(_kernel_body(amdgcn_text))


def _innermost_loops(body: list[str]) -> list[list[str]]:
    """:func:`innermost_loops` of the kernel's text lines."""
    if any(_INNER_HEADER.search(line) for line in body):
        loops = _annotated_loops(body)
    else:
        loops = _back_edge_loops(body)
    return [_instructions([body[i] for i in lines]) for lines in loops]


def innermost_loop_lines(amdgcn_text: str) -> list[str]:
    """Instructions of the largest innermost loop (empty if there is none)."""
    return max(innermost_loops(amdgcn_text), key=len, default=[])


def loop_mma_mnemonics(amdgcn_text: str) -> list[str]:
    """The distinct WMMA/MFMA mnemonics of the innermost loops (sorted): which matrix
    instruction a K iteration runs (``v_wmma_scale_f32_16x16x128_f8f6f4``, ...)."""
    names = {
        line.split()[0]
        for line in innermost_loop_lines(amdgcn_text)
        if line.startswith(("v_wmma", "v_mfma"))
    }
    return sorted(names)


def _yaml_int(text: str, key: str) -> int | None:
    m = re.search(rf"^\s*\.{re.escape(key)}:\s*(\d+)", text, re.MULTILINE)
    return int(m.group(1)) if m else None


def _comment_int(text: str, key: str) -> int | None:
    m = re.search(rf"^;\s*{re.escape(key)}\s*[:=]\s*(\d+)", text, re.MULTILINE)
    return int(m.group(1)) if m else None


def isa_metrics(amdgcn_text: str, metadata: dict[str, Any] | None = None) -> IsaMetrics:
    """Parse :class:`IsaMetrics` from AMDGPU assembly text.

    Sources, in order of preference: the ``amdhsa.kernels`` metadata block
    (``.vgpr_count``, ``.sgpr_count``, ``.vgpr_spill_count``,
    ``.sgpr_spill_count``, ``.private_segment_fixed_size``), then the
    ``; NumVgprs:`` style comments; ``code_bytes`` is ``; codeLenInByte``.
    ``metadata`` is Triton's kernel metadata; its ``shared`` field is the LDS
    size Triton allocates at launch.
    """
    meta = metadata or {}
    vgpr_spills = _yaml_int(amdgcn_text, "vgpr_spill_count") or 0
    sgpr_spills = _yaml_int(amdgcn_text, "sgpr_spill_count") or 0
    lds = meta.get("shared")
    if lds is None:
        lds = _yaml_int(amdgcn_text, "group_segment_fixed_size") or 0
    body = _kernel_body(amdgcn_text)
    insts = _instructions(body)
    loop_insts = [ln for loop in _innermost_loops(body) for ln in loop]

    def count(lines: list[str], prefix: str) -> int:
        return sum(1 for ln in lines if ln.startswith(prefix))

    waits: dict[str, int] = {}
    for ln in insts:
        op = ln.split()[0]
        if op.startswith("s_wait"):
            waits[op] = waits.get(op, 0) + 1
    return IsaMetrics(
        vgprs=_yaml_int(amdgcn_text, "vgpr_count") or _comment_int(amdgcn_text, "NumVgprs") or 0,
        sgprs=_yaml_int(amdgcn_text, "sgpr_count")
        or _comment_int(amdgcn_text, "TotalNumSgprs")
        or 0,
        lds_bytes=int(lds),
        spills=vgpr_spills + sgpr_spills,
        code_bytes=_comment_int(amdgcn_text, "codeLenInByte") or 0,
        tdm_loads=count(insts, "tensor_load_to_lds"),
        tdm_loads_in_loop=count(loop_insts, "tensor_load_to_lds"),
        wmma=count(insts, "v_wmma"),
        mfma=count(insts, "v_mfma"),
        instructions=len(insts),
        waits=waits,
        vgpr_spills=vgpr_spills,
        sgpr_spills=sgpr_spills,
        scratch_bytes=_yaml_int(amdgcn_text, "private_segment_fixed_size") or 0,
        tdm_stores=count(insts, "tensor_store_from_lds"),
        wmma_in_loop=count(loop_insts, "v_wmma"),
        mfma_in_loop=count(loop_insts, "v_mfma"),
        barriers=count(insts, "s_barrier"),
        loop_instructions=len(loop_insts),
        occupancy=_comment_int(amdgcn_text, "Occupancy") or 0,
    )
