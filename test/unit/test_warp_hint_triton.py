"""Differential test: gemm_opt.core.warp_hint against Triton 3.9.0's own verifier.

Each case is a Triton module with one ``amdg.async_tdm_copy_global_to_local``
carrying ``warp_used_hint`` (or one ``amdg.async_tdm_fused_copy_global_to_local``
carrying ``warp_used_hints``), built with Triton's typed IR builder (Gluon's
op builder and layout classes, :mod:`support.tdm_ttgir`). A worker
subprocess builds every module in one Triton context, runs Triton's
verifier on it and reports, per module, whether it verified and which
diagnostics Triton printed (captured from file descriptor 2, where Triton's
C++ code writes them). We then require, for every case:

* Triton accepts iff ``check_warp_used_hint`` / ``check_fused_warp_hints``
  accepts;
* on rejection, the rule matches (by message substring) and Triton's message
  text appears verbatim inside ours.

A second worker mode compiles the modules to LLVM IR to check the one rule
that goes beyond Triton's verifier (``block-too-small``): Triton accepts such
hints and then fails a lowering assertion.

The fast tests cover every mask of 1, 2, 4 and 8 warps (and bits beyond
them), samples of 16 warps, partitioned layouts and fused copies; the tests
marked ``slow`` (run by default, left out by ``-m "not slow"``) add all 65,536
masks of 16 warps and a full lowering sweep.
"""

from __future__ import annotations

import json
import os
import pickle
import random
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
import triton  # a pinned dependency: a missing triton must fail, not skip
from support.tdm_ttgir import ARGUMENTS, RUNTIME, CopyKernel
from support.tdm_ttgir import Member as TdmMember

from gemm_opt.core.layouts import PartitionedShared
from gemm_opt.core.warp_hint import (
    WarpHintError,
    check_fused_warp_hints,
    check_warp_used_hint,
    legal_hints,
)

TRITON_VERSION = "3.9.0"

# --------------------------------------------------------------------------
# The worker: build (and verify, or compile) many modules in one process
# --------------------------------------------------------------------------

WORKER = r"""
import json, os, pickle, shutil, sys, tempfile

spec = pickle.load(sys.stdin.buffer)
tmp = tempfile.mkdtemp()
log = os.path.join(tmp, "stderr.txt")

from support.tdm_ttgir import build
from gemm_opt.lowering import triton_bridge as tb

tt = tb.triton_ir("gfx1250")
if spec["mode"] == "compile":
    tb.warm_for_compile()


def run(kernel):
    module = build(tt, kernel)
    if not module.verify():
        raise RuntimeError("Triton's verifier rejected the module")
    if spec["mode"] == "compile":
        tb.compile_module(tb.verified_text(module), "gfx1250", None)


# Triton's C++ diagnostics go to fd 2: send fd 2 to a file and read what each
# case appended.
write_fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
read_fd = os.open(log, os.O_RDONLY)
saved = os.dup(2)
if spec.get("capture", True):
    os.dup2(write_fd, 2)
results = []
try:
    for kernel in spec["kernels"]:
        try:
            run(kernel)
            ok = True
        except Exception:
            ok = False
        sys.stderr.flush()
        chunks = []
        while True:
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        results.append([ok, b"".join(chunks).decode("utf-8", "replace")])
finally:
    os.dup2(saved, 2)
    shutil.rmtree(tmp, ignore_errors=True)
json.dump(results, sys.stdout)
"""


#: Modules per worker below which one worker does it all: a worker's start
#: costs about as much as a few thousand builds, or a few dozen compiles.
SHARD_MIN = {"verify": 4096, "compile": 64}

#: The directory that holds ``support`` (the worker imports it).
TEST_DIR = str(Path(__file__).resolve().parents[1])


def run_worker(
    mode: str, kernels: list[CopyKernel], timeout: int = 900, capture: bool = True
) -> list:
    """Run the worker; returns ``[ok, diagnostics]`` per kernel, in order.

    Large runs (the 65,536 masks of 16 warps, the full lowering sweep) are
    split over up to one worker per CPU, run side by side.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [TEST_DIR, env.get("PYTHONPATH")]))
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    count = max(1, min(os.cpu_count() or 1, len(kernels) // SHARD_MIN[mode]))
    size = max(1, -(-len(kernels) // count))
    procs = []
    for start in range(0, len(kernels), size):
        with tempfile.TemporaryFile("w+b") as spec:
            pickle.dump(
                {"mode": mode, "capture": capture, "kernels": kernels[start : start + size]},
                spec,
            )
            spec.seek(0)
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", WORKER],
                    stdin=spec,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    env=env,
                )
            )
    results: list = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=timeout)
            assert proc.returncode == 0, err[-4000:]
            results += json.loads(out)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    assert len(results) == len(kernels)
    return results


# --------------------------------------------------------------------------
# The modules (built with Triton's IR builder in the worker)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Member:
    shape: tuple[int, ...] = (256, 64)
    layout: PartitionedShared | None = None


def single_kernel(
    num_warps: int | None, member: Member, hint: int | None, descriptors: str = ARGUMENTS
) -> CopyKernel:
    """One copy (hinted unless ``hint`` is None) of a descriptor argument, or
    of a descriptor built in the kernel (``RUNTIME``: for compiling)."""
    hints = None if hint is None else (hint,)
    return CopyKernel(
        num_warps, (TdmMember(member.shape, member.layout),), hints, False, descriptors
    )


def fused_kernel(num_warps: int, members: list[Member], hints: Sequence[int]) -> CopyKernel:
    """One fused copy of descriptor arguments."""
    tdm_members = tuple(TdmMember(m.shape, m.layout) for m in members)
    return CopyKernel(num_warps, tdm_members, tuple(hints), True, ARGUMENTS)


# --------------------------------------------------------------------------
# Reading Triton's diagnostics
# --------------------------------------------------------------------------


def verifier_errors(diag: str) -> list[tuple[str, str]]:
    """(op, message) of each ``error: 'amdg.<op>' op <message>`` line Triton printed.

    Triton's Python API hands out no diagnostic objects (its C++ code prints
    them to file descriptor 2), so the printed lines are read by their fixed
    delimiters.
    """
    found = []
    for line in diag.splitlines():
        _, error, rest = line.partition("error: '")
        op, sep, message = rest.partition("' op ")
        if error and sep and op.startswith("amdg."):
            found.append((op, message))
    return found


#: Triton message substring -> our rule id.
TRITON_RULES = [
    ("num_warps must be a power of two when using warp_used_hint", "num-warps-not-pow2"),
    ("num_warps must be less than 32 when using warp_used_hint", "num-warps-too-large"),
    ("warp_used_hint must have at least one bit set", "zero-hint"),
    ("sets bits beyond num_warps", "bits-beyond"),
    ("popcount(warp_used_hint) = ", "popcount-not-pow2"),
    ("is not axis-aligned", "not-axis-aligned"),
    ("with a partitioned shared encoding must select K", "partitioned-pieces"),
    ("requires 2 to 4 members", "fused-member-count"),
    ("requires the same number of descriptors and destinations", "fused-dest-count"),
    ("requires one warp_used_hint per member", "fused-hint-count"),
    ("requires all member descriptors to have the same rank", "fused-rank-mismatch"),
    ("requires pairwise-disjoint warp_used_hint values", "fused-overlap"),
]

_LOWERING_ASSERT = "popcount(*warpUsedHint)) == activeWarps"


def triton_outcome(ok: bool, diag: str) -> tuple[str | None, str | None]:
    """(rule, Triton's message) for a rejection; (None, None) when accepted."""
    errors = verifier_errors(diag)
    if ok:
        assert not errors, diag
        return None, None
    assert len(errors) == 1, f"expected one verifier error, got:\n{diag}"
    _, message = errors[0]
    rules = [r for sub, r in TRITON_RULES if sub in message]
    assert len(rules) == 1, f"unknown Triton diagnostic: {message}"
    return rules[0], message


def model_single(hint: int, nw: int | None, member: Member = Member()):
    try:
        check_warp_used_hint(hint, nw, None, member.layout)
    except WarpHintError as e:
        return e.rule, str(e)
    return None, None


def model_fused(hints: list[int], nw: int, members: list[Member]):
    try:
        check_fused_warp_hints(hints, nw, [m.shape for m in members], [m.layout for m in members])
    except WarpHintError as e:
        return e.rule, str(e)
    return None, None


def compare(cases, results) -> dict[str, int]:
    """Compare model and Triton per case; returns outcome counts."""
    mismatches = []
    counts: dict[str, int] = {}
    for (label, model), (ok, diag) in zip(cases, results, strict=True):
        t_rule, t_msg = triton_outcome(ok, diag)
        m_rule, m_msg = model
        if t_rule != m_rule:
            mismatches.append(f"{label}: triton {t_rule!r} ({t_msg}) vs ours {m_rule!r}")
        elif t_msg is not None and t_msg not in m_msg:
            mismatches.append(f"{label}: Triton text {t_msg!r} not in ours {m_msg!r}")
        key = t_rule or "accepted"
        counts[key] = counts.get(key, 0) + 1
    assert not mismatches, "\n".join(mismatches[:20]) + f"\n({len(mismatches)} total)"
    return counts


def single_job(nw, hints, member=Member()):
    cases = [(f"nw={nw} hint={h:#x} {member}", model_single(h, nw, member)) for h in hints]
    return cases, [single_kernel(nw, member, h) for h in hints]


def fused_job(nw, hint_lists, members):
    cases = [
        (
            f"nw={nw} hints={[hex(h) for h in hs]} {members}",
            model_fused(list(hs), nw, members),
        )
        for hs in hint_lists
    ]
    return cases, [fused_kernel(nw, members, hs) for hs in hint_lists]


def run_and_compare(batches) -> dict[str, int]:
    cases, kernels = [], []
    for c, k in batches:
        cases += c
        kernels += k
    return compare(cases, run_worker("verify", kernels))


SPECIAL_HINTS = [-1, -(1 << 31), (1 << 31), (1 << 32) - 1, 0x201, 0xFFFF, 0x10000]

# --------------------------------------------------------------------------
# Single copy
# --------------------------------------------------------------------------


def test_triton_version():
    assert triton.__version__ == TRITON_VERSION


def test_every_mask_up_to_8_warps():
    batches = []
    total = 0
    for nw in (1, 2, 4, 8):
        hints = sorted(set(range(1 << (nw + 1))) | set(SPECIAL_HINTS))
        total += len(hints)
        batches.append(single_job(nw, hints))
    counts = run_and_compare(batches)
    assert sum(counts.values()) == total
    assert counts["accepted"] == 1 + 3 + 9 + 27
    # Reference table, plus the doubled range's bits-beyond masks.
    assert counts["popcount-not-pow2"] == 4 + 148
    assert counts["not-axis-aligned"] == 2 + 80
    assert counts["zero-hint"] == 4


def test_bad_warp_counts():
    batches = [single_job(nw, [0, 1, 3, 0xF, 0xFF, -1]) for nw in (3, 5, 6, 12, 32, 64)]
    counts = run_and_compare(batches)
    assert counts == {"num-warps-not-pow2": 24, "num-warps-too-large": 12}


def test_16_warps_sample():
    hints = sorted(set(legal_hints(16)) | set(range(0, 1 << 16, 61)) | set(SPECIAL_HINTS))
    counts = run_and_compare([single_job(16, hints)])
    assert counts["accepted"] == 81


@pytest.mark.parametrize(
    "shape",
    [(64,), (4,), (1, 1), (2, 2), (2, 4, 64), (1, 2, 2, 2, 32)],
    ids=lambda s: "x".join(map(str, s)),
)
def test_rank_and_shape_do_not_matter(shape):
    counts = run_and_compare([single_job(8, list(range(512)), Member(shape))])
    assert counts["accepted"] == 27


PARTITIONED = [
    Member((128, 16), PartitionedShared(2, 1, 0)),
    Member((128, 16), PartitionedShared(2, 2, 0)),
    Member((128, 16), PartitionedShared(4, 2, 0)),
    Member((16, 128), PartitionedShared(2, 1, 1)),
    Member((8, 16, 64), PartitionedShared(2, 2, 1)),
]


@pytest.mark.parametrize("member", PARTITIONED, ids=lambda m: str(m.layout))
def test_partitioned_layouts(member):
    batches = [single_job(nw, list(range(1 << nw)), member) for nw in (2, 4, 8)]
    batches.append(single_job(16, list(legal_hints(16)), member))
    counts = run_and_compare(batches)
    pieces = member.layout.num_logical_pieces
    expected = sum(
        1 for nw in (2, 4, 8, 16) for h in legal_hints(nw) if bin(h).count("1") % pieces == 0
    )
    assert counts["accepted"] == expected


def test_missing_num_warps_aborts_in_triton():
    # Triton aborts the process (a fatal error); we report a clean diagnostic.
    env = {**os.environ, "PYTHONPATH": TEST_DIR}
    spec = {"mode": "verify", "capture": False, "kernels": [single_kernel(None, Member(), 240)]}
    proc = subprocess.run(
        [sys.executable, "-c", WORKER],
        input=pickle.dumps(spec),
        capture_output=True,
        timeout=300,
        env=env,
    )
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode != 0
    assert "is not contained within a context that specifies the number of warps" in stderr
    rule, message = model_single(240, None)
    assert rule == "num-warps-missing"
    assert "not contained within a context that specifies the number of warps" in message
    # Without a hint the same module verifies.
    ((ok, diag),) = run_worker("verify", [single_kernel(None, Member(), None)])
    assert ok, diag
    assert check_warp_used_hint(None, None) is None


# --------------------------------------------------------------------------
# Fused copy
# --------------------------------------------------------------------------


def _fused_hint_lists(nw: int, n: int, count: int, rng: random.Random):
    legal = legal_hints(nw)
    out = set()
    for _ in range(20 * count):  # small warp counts have few distinct tuples
        if len(out) == count:
            break
        if rng.random() < 0.7:
            hs = tuple(rng.choice(legal) for _ in range(n))
        else:
            hs = tuple(rng.randrange(1 << nw) for _ in range(n))
        out.add(hs)
    return sorted(out)


def test_fused_pairs_exhaustive_4_warps():
    pairs = [(a, b) for a in range(16) for b in range(16)]
    counts = run_and_compare([fused_job(4, pairs, [Member(), Member()])])
    assert counts["accepted"] == sum(
        1 for a in legal_hints(4) for b in legal_hints(4) if a & b == 0
    )


def test_fused_samples():
    rng = random.Random(2026)
    batches = []
    legal8 = legal_hints(8)
    batches.append(fused_job(8, [(a, b) for a in legal8 for b in legal8], [Member(), Member()]))
    for nw in (2, 8, 16):
        for n in (2, 3, 4):
            members = [Member()] * n
            batches.append(fused_job(nw, _fused_hint_lists(nw, n, 60, rng), members))
    # Heterogeneous members, one partitioned.
    het = [Member((64, 64)), Member((128, 16), PartitionedShared(2, 2, 0))]
    batches.append(fused_job(8, _fused_hint_lists(8, 2, 150, rng), het))
    batches.append(fused_job(8, [(0xF0, 0x03), (0xF0, 0x0F), (0x0F, 0xF0)], het))
    # Member count and hint count.
    batches.append(fused_job(8, [(0x0F,)], [Member()]))
    batches.append(fused_job(8, [(1, 2, 4, 8, 16)], [Member()] * 5))
    batches.append(fused_job(8, [(0x0F, 0x30, 0xC0), (0x0F,)], [Member(), Member()]))
    # Rank mismatch (checked per member, before that member's hint).
    mixed = [Member((64, 64)), Member((64,))]
    batches.append(fused_job(8, [(0x0F, 0xF0), (0x0F, 0x07), (0x07, 0xF0)], mixed))
    # Bad warp counts.
    for nw in (3, 32):
        batches.append(fused_job(nw, [(1, 2), (0, 1)], [Member(), Member()]))
    counts = run_and_compare(batches)
    assert counts["accepted"] > 100
    for rule in (
        "fused-overlap",
        "fused-member-count",
        "fused-hint-count",
        "fused-rank-mismatch",
        "partitioned-pieces",
        "popcount-not-pow2",
        "not-axis-aligned",
        "zero-hint",
    ):
        assert counts.get(rule, 0) > 0, rule


# --------------------------------------------------------------------------
# Lowering: the block-too-small rule (beyond Triton's verifier)
# --------------------------------------------------------------------------

LOWERING_MEMBERS = [
    Member((1, 1)),
    Member((1, 2)),
    Member((2, 2)),
    Member((2, 4)),
    Member((4,)),
    Member((1,)),
    Member((1, 1, 2)),
    Member((2, 128), PartitionedShared(2, 1, 1)),
    Member((1, 128), PartitionedShared(2, 1, 1)),
    Member((4, 128), PartitionedShared(2, 2, 1)),
    Member((2, 64), PartitionedShared(2, 1, 0)),
    Member((8, 16), PartitionedShared(4, 2, 0)),
]


def _lowering_cases(nws, per_k: int):
    cases, kernels = [], []
    for member in LOWERING_MEMBERS:
        for nw in nws:
            pieces = member.layout.num_logical_pieces if member.layout else 1
            chosen, seen = [], {}
            for h in legal_hints(nw):
                k = bin(h).count("1")
                if k % pieces or seen.get(k, 0) >= per_k:
                    continue
                seen[k] = seen.get(k, 0) + 1
                chosen.append(h)
            for h in chosen:
                try:
                    check_warp_used_hint(h, nw, member.shape, member.layout)
                    rule = None
                except WarpHintError as e:
                    rule = e.rule
                assert rule in (None, "block-too-small")
                cases.append((f"nw={nw} hint={h:#x} {member}", rule))
            kernels += [single_kernel(nw, member, h, RUNTIME) for h in chosen]
    return cases, kernels


def _compare_lowering(cases, kernels):
    results = run_worker("compile", kernels)
    mismatches = []
    failures = 0
    for (label, rule), (ok, diag) in zip(cases, results, strict=True):
        if not ok:
            assert _LOWERING_ASSERT in diag, f"{label}: unexpected failure\n{diag[-3000:]}"
            failures += 1
        if ok != (rule is None):
            mismatches.append(f"{label}: triton ok={ok}, ours {rule!r}")
    assert not mismatches, "\n".join(mismatches)
    return failures


def test_block_too_small_matches_lowering():
    cases, kernels = _lowering_cases((2, 8), per_k=1)
    assert _compare_lowering(cases, kernels) > 10


@pytest.mark.slow
def test_block_too_small_matches_lowering_full():
    cases, kernels = _lowering_cases((1, 2, 4, 8, 16), per_k=3)
    assert _compare_lowering(cases, kernels) > 30


# --------------------------------------------------------------------------
# Slow: every mask of 16 warps
# --------------------------------------------------------------------------


@pytest.mark.slow
def test_every_mask_of_16_warps():
    counts = run_and_compare([single_job(16, list(range(1 << 16)))])
    assert counts == {
        "accepted": 81,
        "zero-hint": 1,
        "popcount-not-pow2": 50708,
        "not-axis-aligned": 14746,
    }
