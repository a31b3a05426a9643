"""Fuzz gemm-opt for a while and report what broke.

    .venv/bin/python test/fuzz/run.py --minutes 30 --out fuzz-findings

Alternates rounds of generated tile modules and of mutated examples and lit
inputs, runs each through parse, a drawn pass pipeline, named pipeline or
``--emit`` (see ``test/support/fuzz``), shrinks every new kind of failure and
writes it to ``--out`` as a corpus file (its header holds the command).
Prints how many modules it tried and each finding; exits 1 if any.
Confirmed findings go to ``test/fuzz/corpus/`` once fixed, where the test
suite replays them.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.fuzz.campaign import (
    ALL_CHECKS,
    CI_CHECKS,
    CI_COMMANDS,
    CI_SPACE,
    campaign,
    cases,
    reduce_lines,
    save,
)
from support.fuzz.commands import ALL_COMMANDS
from support.fuzz.generate import FULL
from support.fuzz.oracle import Finding, Oracle, confirm


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=10.0, help="time budget (default 10)")
    p.add_argument("--seed", type=int, default=0, help="first hypothesis seed (default 0)")
    p.add_argument("--round", type=int, default=40, help="cases per round (default 40)")
    p.add_argument("--out", type=Path, default=Path("fuzz-findings"), help="where findings go")
    p.add_argument(
        "--inputs",
        choices=("both", "modules", "mutations"),
        default="both",
        help="generated modules, mutated seeds, or both (alternating rounds)",
    )
    p.add_argument("--ci-space", action="store_true", help="fuzz only what CI fuzzes")
    p.add_argument(
        "--ops",
        type=lambda s: tuple(o.strip() for o in s.split(",") if o.strip()),
        default=None,
        help="comma list of the generator's ops to draw (default: all), e.g. "
        "schedule,warp_specialize,async_mma,sync",
    )
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per run (default 30)")
    args = p.parse_args(argv)

    space, commands, checks = (
        (CI_SPACE, CI_COMMANDS, CI_CHECKS) if args.ci_space else (FULL, ALL_COMMANDS, ALL_CHECKS)
    )
    if args.ops:
        unknown = [o for o in args.ops if o not in space.ops]
        if unknown:
            p.error(f"unknown op {unknown[0]!r} (choose from {', '.join(space.ops)})")
        space = dataclasses.replace(space, ops=args.ops)
    kinds = ["modules", "mutations"] if args.inputs == "both" else [args.inputs]
    deadline = time.monotonic() + args.minutes * 60
    known: Counter[str] = Counter()
    found: list[Finding] = []
    tried: dict[str, int] = dict.fromkeys(kinds, 0)
    outcomes: Counter[str] = Counter()
    runs = 0

    def record(f: Finding) -> None:
        f = reduce_lines(oracle, f)
        path = save(f, args.out, len(found))
        found.append(f)
        rc, _ = confirm(f)
        print(f"finding {len(found)}: {f.signature}\n  {path} (gemm-opt exit {rc})", flush=True)

    r = 0
    oracle = Oracle(timeout=args.timeout)
    with oracle:
        while time.monotonic() < deadline:
            kind = kinds[r % len(kinds)]
            stats = campaign(
                oracle,
                cases(kind, space, commands, checks),
                examples=args.round,
                deadline=deadline,
                first_seed=args.seed + r,
                known=known,
                on_finding=record,
                checks=checks,
            )
            tried[kind] += stats.cases
            outcomes.update(stats.outcomes)
            r += 1
            print(
                f"round {r} ({kind}): {stats.cases} cases, {len(found)} findings so far", flush=True
            )
        runs = oracle.runs
    print(
        f"\ntried {sum(tried.values())} modules ({', '.join(f'{n} {k}' for k, n in tried.items())}); {runs} gemm-opt runs"
    )
    for what, n in outcomes.most_common():
        print(f"  {n:6d} {what}")
    print(summarize_findings(found))
    return 1 if found else 0


def summarize_findings(found: list[Finding]) -> str:
    if not found:
        return "no findings"
    return "\n".join(f"  {f.signature}    [{' '.join(f.command) or 'parse'}]" for f in found)


if __name__ == "__main__":
    sys.exit(main())
