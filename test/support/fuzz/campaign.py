"""A fuzzing campaign: draw cases, run them through the oracle, shrink and keep findings.

A case is an input text and a command line. Each case is first parsed alone
(the printed module must parse back), then run with its command. A finding
whose signature is new fails the hypothesis property, so hypothesis shrinks
it before it is recorded; known signatures pass, so later rounds look for
new kinds of failure rather than the same one again.

:data:`CI_SPACE` and :data:`CI_COMMANDS` are what the test suite fuzzes: the
full spaces without the values listed in :data:`CI_EXCLUDED`, each a class
of bug that is still open; put a value back when its class is fixed.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from .commands import ALL_COMMANDS, CommandSpace, commands
from .generate import FULL, Space, tile_modules
from .mutate import MUTATIONS, mutated_inputs, seed_inputs
from .oracle import MUST_REFUSE, Finding, Oracle, accepted_bad_program

#: Header lines of a saved finding: the command it ran and what it did.
COMMAND_HEADER = "// fuzz-command:"
FINDING_HEADER = "// fuzz-finding:"

#: Values left out of the CI fuzzing, by field of Space, CommandSpace or
#: Checks: each an open class of bug the long run still finds (see
#: ``test/fuzz/run.py``); put a value back once its class is fixed.
CI_EXCLUDED: dict[str, tuple[object, ...]] = {}


@dataclass(frozen=True)
class Checks:
    """Oracle checks beyond exit status and diagnostics, and input filters."""

    module_target: tuple[bool, ...] = (True,)
    """``--emit=tile`` must equal ``--emit=tile --target=<the module's tile.target>``."""
    implicit_module: tuple[bool, ...] = (True, False)
    """Whether mutated seeds may lack an explicit ``module`` op (True: they may)."""
    mutations: tuple[str, ...] = tuple(m.name for m in MUTATIONS)
    """The mutations applied to seeds."""
    segment_sizes: tuple[bool, ...] = (True, False)
    """Whether mutations may change ``operandSegmentSizes`` (True: they may)."""
    skip_seeds_with: tuple[str, ...] = ()
    """Seed chunks containing any of these strings are not mutated."""
    refusals: tuple[str, ...] = tuple(MUST_REFUSE)
    """The rules of :data:`MUST_REFUSE` an accepted input is judged by."""

    def without(self, **values: Any) -> Checks:
        changes = {k: tuple(x for x in getattr(self, k) if x not in v) for k, v in values.items()}
        return dataclasses.replace(self, **changes)


ALL_CHECKS = Checks()


def _restrict(obj: Any, excluded: dict[str, tuple[object, ...]]) -> Any:
    return obj.without(**{k: v for k, v in excluded.items() if hasattr(obj, k)})


CI_SPACE: Space = _restrict(FULL, CI_EXCLUDED)
CI_COMMANDS: CommandSpace = _restrict(ALL_COMMANDS, CI_EXCLUDED)
#: Seeds the CI does not mutate, by a string they contain.
CI_SKIP_SEEDS_WITH: tuple[str, ...] = ()
CI_CHECKS: Checks = dataclasses.replace(
    _restrict(ALL_CHECKS, CI_EXCLUDED), skip_seeds_with=CI_SKIP_SEEDS_WITH
)


#: How many findings of one signature a campaign keeps, by kind: a signal
#: carries no message (Triton's abort text is lost with the process), so
#: aborts of different causes share a signature; their shrunk inputs differ.
REPEATS = {"signal": 4, "timeout": 2}


class _Found(Exception):
    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.signature)
        self.finding = finding


@dataclass
class Stats:
    """What a campaign did."""

    cases: int = 0
    runs: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0


def run_case(
    oracle: Oracle,
    text: str,
    command: tuple[str, ...],
    stats: Stats | None = None,
    checks: Checks = ALL_CHECKS,
) -> Finding | None:
    """Parse ``text`` alone, then run ``command`` on it; the first finding, if any.

    ``stats.outcomes`` counts how far cases get: a finding, rejected when
    parsed, rejected by the command (by our diagnostics, or with a message
    Triton wrote: a rule our verifiers miss), or accepted.
    """
    split = ("--split-input-file",) if "--split-input-file" in command else ()
    found = oracle.check(text, split)
    outcome = "rejected when parsed"
    if found is None and oracle.last is not None and oracle.last.rc == 0 and checks.refusals:
        why = accepted_bad_program(text, checks.refusals)
        if why is not None:
            found = Finding("accepted-bad-program", why, (), text, oracle.last.stderr)
    if found is None and oracle.last is not None and oracle.last.rc == 0:
        outcome = "accepted"
        if command != split:
            found = oracle.check(text, command)
            last = oracle.last
            if found is None and last is not None and last.rc == 1:
                triton = "Triton rejected" in last.stderr
                outcome = "rejected by the command" + (" (in Triton's words)" if triton else "")
            if found is None and command == ("--emit=tile",) and True in checks.module_target:
                found = _check_module_target(oracle, text)
    if stats is not None:
        stats.cases += 1
        stats.outcomes["finding" if found else outcome] += 1
    return found


EXPLICIT_MODULE = re.compile(r"^module\b", re.M)
MODULE_TARGET = re.compile(r'tile\.target = "([^"]+)"')


def _check_module_target(oracle: Oracle, text: str) -> Finding | None:
    """``--emit=tile`` must do what ``--emit=tile --target=<the module's tile.target>`` does."""
    implicit = oracle.last
    m = MODULE_TARGET.search(text)
    if implicit is None or implicit.rc != 0 or m is None:
        return None
    explicit = oracle.run(text, ("--emit=tile", f"--target={m.group(1)}"))
    if explicit.rc != 0 or explicit.output == implicit.output:
        return None
    return Finding(
        "ignored-target",
        f"--emit=tile differs from --emit=tile --target={m.group(1)} (the module's tile.target)",
        ("--emit=tile",),
        text,
        implicit.stderr,
    )


def cases(
    kind: str,
    space: Space = FULL,
    command_space: CommandSpace = ALL_COMMANDS,
    checks: Checks = ALL_CHECKS,
) -> st.SearchStrategy[tuple[str, tuple[str, ...]]]:
    """(input text, command) pairs from generated modules or mutated seeds."""
    if kind == "modules":
        texts = tile_modules(space)
    else:
        seeds = [
            (n, t) for n, t in seed_inputs() if not any(m in t for m in checks.skip_seeds_with)
        ]
        if True not in checks.implicit_module:
            seeds = [(n, t) for n, t in seeds if EXPLICIT_MODULE.search(t)]
        chosen = tuple(m for m in MUTATIONS if m.name in checks.mutations)
        texts = mutated_inputs(seeds, chosen, keep_segments=True not in checks.segment_sizes)
    return st.tuples(texts, commands(command_space))


def campaign(
    oracle: Oracle,
    strategy: st.SearchStrategy[tuple[str, tuple[str, ...]]],
    *,
    examples: int,
    rounds: int = 1,
    deadline: float | None = None,
    derandomize: bool = False,
    first_seed: int = 0,
    known: Counter[str] | None = None,
    on_finding: Callable[[Finding], None] | None = None,
    shrink: bool = True,
    shrink_seconds: float = 120.0,
    checks: Checks = ALL_CHECKS,
) -> Stats:
    """Run ``rounds`` rounds of ``examples`` cases (or until ``deadline``, a
    ``time.monotonic()`` value); record each new finding, shrunk for at most
    ``shrink_seconds``."""
    stats = Stats()
    known = Counter() if known is None else known
    start = time.monotonic()
    phases = [Phase.generate, *([Phase.shrink] if shrink else [])]
    for r in range(rounds):
        if deadline is not None and time.monotonic() >= deadline:
            break
        prop = _property(oracle, strategy, stats, known, checks, shrink_seconds)
        prop = settings(
            max_examples=examples,
            deadline=None,
            database=None,
            derandomize=derandomize,
            phases=phases,
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
            print_blob=False,
        )(prop)
        if not derandomize:
            prop = seed(first_seed + r)(prop)
        try:
            prop()
        except _Found as e:
            known[e.finding.signature] += 1
            stats.findings.append(e.finding)
            if on_finding is not None:
                on_finding(e.finding)
    stats.runs = oracle.runs
    stats.seconds = time.monotonic() - start
    return stats


def _property(
    oracle: Oracle,
    strategy: st.SearchStrategy[tuple[str, tuple[str, ...]]],
    stats: Stats,
    known: Counter[str],
    checks: Checks,
    shrink_seconds: float,
) -> Callable[[], None]:
    """The hypothesis property of one round: fail on a finding of a new signature.

    Past ``shrink_seconds`` after the first failure, cases not seen failing
    pass untried, so hypothesis ends the shrink with the smallest failing case
    so far (and replays it from the record, not from a new run).
    """
    failed: dict[tuple[str, tuple[str, ...]], Finding] = {}
    since: list[float] = []

    @given(case=strategy)
    def prop(case: tuple[str, tuple[str, ...]]) -> None:
        if since and time.monotonic() - since[0] > shrink_seconds:
            if case in failed:
                raise _Found(failed[case])
            return
        found = run_case(oracle, *case, stats=stats, checks=checks)
        if found is not None and known[found.signature] < REPEATS.get(found.kind, 1):
            since[:] = since or [time.monotonic()]
            failed[case] = found
            raise _Found(found)

    return prop


def reduce_lines(oracle: Oracle, finding: Finding, max_runs: int = 300) -> Finding:
    """Drop chunks of lines, then single lines, while the finding keeps its signature.

    Hypothesis shrinks the draws; this shrinks the text those draws became
    (a module op per line), which makes the saved repro readable.
    """
    lines = finding.text.splitlines(keepends=True)
    best = finding
    runs = 0
    chunk = max(1, len(lines) // 2)
    while chunk >= 1 and runs < max_runs:
        i = len(lines) - chunk
        while i >= 0 and runs < max_runs:
            trial = lines[:i] + lines[i + chunk :]
            runs += 1
            found = run_case(oracle, "".join(trial), finding.command)
            if found is not None and found.signature == finding.signature:
                lines, best = trial, found
            i -= chunk
        chunk //= 2
    return best


def save(finding: Finding, directory: Path, index: int) -> Path:
    """Write a finding as a corpus file: command and signature in its header."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{index:03d}-{finding.kind}.mlir"
    header = [
        f"{COMMAND_HEADER} {shlex.join(finding.command)}",
        f"{FINDING_HEADER} {finding.signature}",
    ]
    path.write_text("\n".join(header) + "\n" + finding.text)
    return path


def load(path: Path) -> tuple[str, tuple[str, ...]]:
    """(text, command) of a corpus file written by :func:`save`."""
    text = path.read_text()
    command: tuple[str, ...] = ()
    for line in text.splitlines():
        if line.startswith(COMMAND_HEADER):
            command = tuple(shlex.split(line[len(COMMAND_HEADER) :]))
            break
    return text, command


def summarize(stats: Stats, findings: Iterable[Finding] | None = None) -> str:
    findings = list(stats.findings if findings is None else findings)
    lines = [
        f"{stats.cases} cases ({stats.runs} gemm-opt runs) in {stats.seconds:.0f} s; "
        f"{len(findings)} distinct findings"
    ]
    lines += [f"  {f.signature}    [{' '.join(f.command) or 'parse'}]" for f in findings]
    return "\n".join(lines)


__all__ = [
    "ALL_CHECKS",
    "CI_CHECKS",
    "CI_COMMANDS",
    "CI_EXCLUDED",
    "CI_SPACE",
    "COMMAND_HEADER",
    "Checks",
    "Stats",
    "campaign",
    "cases",
    "load",
    "reduce_lines",
    "run_case",
    "save",
    "summarize",
]
