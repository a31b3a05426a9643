"""Mutation testing of the rule modules, the TDM passes and the interpreter's
wait and race logic.

A test suite that passes tells nothing about the rules it does not pin. This
runner changes one operator, constant or condition at a time in the code under
test (AST-based: ``+``/``-``, ``<``/``<=``, ``==``/``!=``, ``and``/``or``,
``any``/``all``, ``min``/``max``, an integer ``n`` to ``n + 1``, ``True`` to
``False``, an ``if``/``while`` condition negated, a ``not`` dropped), runs the
tests that cover that module with a per-mutant timeout (lit first: it is the
quicker to fail), and reports the mutants no test kills. Each module is
mutated only inside the functions that hold its rules (error-message
formatting is left out: a wrong word in a message is not a wrong answer) and
is judged by its own pytest and lit subset. A full run is about 480 mutants,
each a few seconds (killed) to a minute (survived) of tests; ``--sample N``
runs every Nth mutant, and ``--reuse`` takes the killed mutants of an earlier
report of the same source (the tests only grow) and runs the rest.

Why not mutmut or cosmic-ray: mutmut 3 runs the tests against a copy of the
sources in ``mutants/``, which the tests never import (``gemm_opt.passes`` is
mapped to ``passes/`` by the editable install) and which lit's ``gemm-opt``
never sees; a mutation tool has to change the files the installed package and
the command line actually load, one at a time, as this runner does.

The file under test is rewritten in place and restored after every mutant
(and on interrupt); bytecode writing is disabled so a stale ``.pyc`` can never
stand in for a mutant. Run from the repository root, with the test extra
installed::

    python benchmarks/mutation.py                      # every module
    python benchmarks/mutation.py --module interpreter --report mutation.md

A survivor that no input can distinguish is marked ``equivalent`` in the
report when its line, or the comment block right above it, carries a comment
starting with ``# Equivalent mutant:`` that says why; the score is given with
and without those.

Not part of CI: one run is hundreds of test-suite runs.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT_MARK = "# Equivalent mutant:"


@dataclass(frozen=True)
class Target:
    """One module under test: where to mutate and which tests judge it."""

    path: str
    functions: tuple[str, ...]
    """Qualified names (``f``, ``Class.method``) whose bodies are mutated."""
    pytest: tuple[str, ...]
    lit: tuple[str, ...]


PASS_TESTS = ("test/unit/test_passes_model.py", "test/unit/test_pass_semantics.py")
PASS_LIT = ("test/lit/passes",)

TARGETS: dict[str, Target] = {
    "warp_hint": Target(
        "python/gemm_opt/core/warp_hint.py",
        (
            "_is_pow2",
            "_check_block_shape",
            "_check_partition_fits",
            "warp_distribution",
            "_check_layout",
        ),
        (
            "test/unit/test_warp_hint.py",
            "test/unit/test_tdm_layout.py",
            "test/unit/test_layout_edges.py",
        ),
        ("test/lit/dialect",),
    ),
    "tdm_layout": Target(
        "python/gemm_opt/core/tdm_layout.py",
        (
            "_log2_exact",
            "TdmWarpLayout.start",
            "TdmWarpLayout.active",
            "tdm_warp_layout",
            "select_fused_member",
        ),
        (
            "test/unit/test_tdm_layout.py",
            "test/unit/test_layout_edges.py",
            "test/unit/test_model_copy.py",
            *PASS_TESTS,
        ),
        (),
    ),
    "fusion_runs": Target(
        "passes/common.py",
        (
            "_const_int",
            "buffer_root",
            "may_alias",
            "is_pure",
            "fusable_with",
            "scan_runs",
            "module_runs",
        ),
        PASS_TESTS,
        PASS_LIT,
    ),
    "fuse_tdm_copies": Target(
        "passes/fuse_tdm_copies.py",
        (
            "is_fusion_candidate",
            "split_run",
            "_contains_tdm",
            "backward_paths",
            "_fused_count",
            "adjusted_wait",
            "build_fused",
            "FuseTdmCopiesPass.run",
        ),
        PASS_TESTS,
        PASS_LIT,
    ),
    "derive_warp_hints": Target(
        "passes/derive_warp_hints.py",
        (
            "contiguous_hints",
            "is_derive_candidate",
            "_group_fits",
            "DeriveWarpHintsPass.run",
            "DeriveWarpHintsPass._assign",
            "_set_hint",
        ),
        PASS_TESTS,
        PASS_LIT,
    ),
    "interpreter": Target(
        "python/gemm_opt/model/tdm.py",
        ("_issue_copy", "_b_tdm_wait"),
        ("test/unit/test_interpreter.py", *PASS_TESTS),
        (),
    ),
    "model_state": Target(
        "python/gemm_opt/model/values.py",
        ("InFlight.complete",),
        ("test/unit/test_interpreter.py", *PASS_TESTS),
        (),
    ),
    "model_races": Target(
        "python/gemm_opt/model/races.py",
        ("check_write_race",),
        ("test/unit/test_interpreter.py", *PASS_TESTS),
        (),
    ),
    "model_control_flow": Target(
        "python/gemm_opt/model/control_flow.py",
        ("_b_if",),
        ("test/unit/test_interpreter.py", *PASS_TESTS),
        (),
    ),
    "model_memory": Target(
        "python/gemm_opt/model/memory.py",
        ("_b_local_load",),
        ("test/unit/test_interpreter.py", *PASS_TESTS),
        (),
    ),
}


# ---- mutation points ----------------------------------------------------------------

BINOP_SWAP: dict[type, type] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
    ast.BitAnd: ast.BitOr,
    ast.BitOr: ast.BitAnd,
    ast.BitXor: ast.BitOr,
}
CMP_SWAP: dict[type, type] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
CALL_SWAP = {"any": "all", "all": "any", "min": "max", "max": "min"}


@dataclass(frozen=True)
class Point:
    """One mutation: the ``index``-th point of the module, at ``line``."""

    index: int
    line: int
    kind: str


def _scoped_functions(tree: ast.Module, names: tuple[str, ...]) -> list[ast.AST]:
    found: dict[str, ast.AST] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                found.setdefault(prefix + child.name, child)
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")

    visit(tree, "")
    missing = [n for n in names if n not in found]
    if missing:
        raise SystemExit(f"mutation: no function {', '.join(missing)} in the module")
    return [found[n] for n in names]


def _skipped(node: ast.AST) -> bool:
    """Subtrees never mutated: messages, annotations, nested docstrings."""
    return isinstance(node, ast.JoinedStr | ast.arg) or (
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    )


def _walk(node: ast.AST) -> Iterator[tuple[ast.AST, ast.AST | None]]:
    """(node, parent) in a deterministic pre-order, skipping annotations."""
    stack: list[tuple[ast.AST, ast.AST | None]] = [(node, None)]
    while stack:
        cur, parent = stack.pop()
        if _skipped(cur):
            continue
        yield cur, parent
        children = []
        for name, value in ast.iter_fields(cur):
            if name in ("returns", "annotation", "decorator_list", "type_comment"):
                continue
            if isinstance(value, list):
                children += [v for v in value if isinstance(v, ast.AST)]
            elif isinstance(value, ast.AST):
                children.append(value)
        stack += [(c, cur) for c in reversed(children)]


def _mutations(node: ast.AST, parent: ast.AST | None) -> list[str]:
    """Names of the mutations that apply to ``node``."""
    out: list[str] = []
    if isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in BINOP_SWAP:
        out.append(f"{type(node.op).__name__}->{BINOP_SWAP[type(node.op)].__name__}")
    elif isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            if type(op) in CMP_SWAP:
                out.append(f"cmp{i}:{type(op).__name__}->{CMP_SWAP[type(op)].__name__}")
    elif isinstance(node, ast.BoolOp):
        out.append("and->or" if isinstance(node.op, ast.And) else "or->and")
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        out.append("drop-not")
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        out.append(f"{node.value}->{not node.value}")
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        out.append(f"{node.value}->{node.value + 1}")
    elif isinstance(node, ast.Call):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else None
        name = node.func.id if isinstance(node.func, ast.Name) else name
        if name in CALL_SWAP:
            out.append(f"{name}->{CALL_SWAP[name]}")
    if isinstance(node, ast.If | ast.While | ast.IfExp) or (
        isinstance(node, ast.comprehension) and node.ifs
    ):
        out.append("negate-condition")
    return out


def points(tree: ast.Module, target: Target) -> list[tuple[ast.AST, ast.AST | None, str]]:
    found = []
    for fn in _scoped_functions(tree, target.functions):
        body = fn.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        for stmt in body:
            for node, parent in _walk(stmt):
                found += [(node, parent, m) for m in _mutations(node, parent)]
    return found


def _negate(expr: ast.expr) -> ast.expr:
    return ast.UnaryOp(op=ast.Not(), operand=expr)


def _replace_child(parent: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for name, value in ast.iter_fields(parent):
        if value is old:
            setattr(parent, name, new)
            return
        if isinstance(value, list):
            for i, v in enumerate(value):
                if v is old:
                    value[i] = new
                    return
    raise AssertionError("child not found in its parent")


def apply(node: ast.AST, parent: ast.AST | None, kind: str) -> None:
    """Mutate ``node`` in place."""
    if kind == "negate-condition":
        if isinstance(node, ast.comprehension):
            node.ifs = [_negate(ast.BoolOp(op=ast.And(), values=node.ifs))]
        else:
            node.test = _negate(node.test)  # type: ignore[attr-defined]
    elif "->" in kind and isinstance(node, ast.BinOp | ast.AugAssign):
        node.op = BINOP_SWAP[type(node.op)]()
    elif kind.startswith("cmp") and isinstance(node, ast.Compare):
        i = int(kind[3 : kind.index(":")])
        node.ops[i] = CMP_SWAP[type(node.ops[i])]()
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif kind == "drop-not" and isinstance(node, ast.UnaryOp):
        assert parent is not None
        _replace_child(parent, node, node.operand)
    elif isinstance(node, ast.Constant):
        node.value = (not node.value) if type(node.value) is bool else node.value + 1
    elif isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute):
            node.func.attr = CALL_SWAP[node.func.attr]
        else:
            node.func.id = CALL_SWAP[node.func.id]  # type: ignore[attr-defined]
    else:
        raise AssertionError(f"cannot apply {kind} to {ast.dump(node)[:80]}")


def mutant_source(source: str, target: Target, index: int) -> tuple[str, Point]:
    tree = ast.parse(source)
    node, parent, kind = points(tree, target)[index]
    line = getattr(node, "lineno", getattr(parent, "lineno", 0))
    apply(node, parent, kind)
    return ast.unparse(ast.fix_missing_locations(tree)), Point(index, line, kind)


# ---- running ---------------------------------------------------------------------------


@dataclass
class Result:
    point: Point
    status: str  # killed | survived | timeout
    by: str = ""
    seconds: float = 0.0
    snippet: str = ""
    equivalent: str = ""


@dataclass
class ModuleReport:
    name: str
    path: str
    sha256: str
    baseline_s: float
    results: list[Result] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.results)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONHASHSEED"] = "0"
    return env


def _commands(target: Target) -> list[tuple[str, list[str]]]:
    py = sys.executable
    cmds = []
    if target.lit:
        lit_main = "import sys, lit.main; sys.exit(lit.main.main())"
        cmds.append(("lit", [py, "-c", lit_main, "-q", "--max-failures=1", *target.lit]))
    tests = [t for t in target.pytest if (ROOT / t).exists()]
    if tests:
        cmds.append(
            (
                "pytest",
                [py, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
            )
        )
    return cmds


def _run_tests(target: Target, timeout: float) -> tuple[str, str]:
    """("passed" | "failed" | "timeout", which command decided)."""
    for name, cmd in _commands(target):
        try:
            proc = subprocess.run(
                cmd, cwd=ROOT, env=_env(), capture_output=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            return "timeout", name
        if proc.returncode != 0:
            return "failed", name
    return "passed", ""


def _equivalence_note(lines: list[str], line: int) -> str:
    """The ``# Equivalent mutant:`` comment on ``line`` or in the comment
    block right above it, joined into one line ('' if none)."""
    if EQUIVALENT_MARK in lines[line - 1]:
        return lines[line - 1].split(EQUIVALENT_MARK, 1)[1].strip()
    block: list[str] = []
    i = line - 2
    while i >= 0 and lines[i].strip().startswith("#"):
        block.insert(0, lines[i].strip().lstrip("#").strip())
        i -= 1
    text = " ".join(block)
    marker = EQUIVALENT_MARK.lstrip("#").strip()
    return text.split(marker, 1)[1].strip() if marker in text else ""


def _previous(path: Path | None, name: str, sha: str) -> dict[int, Result] | None:
    """Results of an earlier run of the same source (same mutants), by index."""
    if path is None or not path.exists():
        return None
    for mod in json.loads(path.read_text()):
        if mod["name"] == name and mod["sha256"] == sha:
            return {
                r["point"]["index"]: Result(**{**r, "point": Point(**r["point"])})
                for r in mod["results"]
            }
    return None


def run_module(
    name: str,
    target: Target,
    limit: int | None,
    sample: int,
    previous: Path | None,
    on_result,
) -> ModuleReport:
    """Mutate ``target`` one point at a time. With ``previous`` (a JSON report
    of the same source), its killed mutants are taken as they are and only its
    survivors and the mutants it lacks run: the tests only grow, so a mutant
    killed then is killed now (this also resumes an interrupted run)."""
    path = ROOT / target.path
    original = path.read_text()
    sha = hashlib.sha256(original.encode()).hexdigest()
    lines = original.splitlines()
    earlier = _previous(previous, name, sha)
    start = time.monotonic()
    status, by = _run_tests(target, timeout=1800)
    baseline = time.monotonic() - start
    if status != "passed":
        raise SystemExit(f"mutation: the tests of {name} fail without a mutant ({by})")
    timeout = max(60.0, 4 * baseline)
    report = ModuleReport(name, target.path, sha, round(baseline, 1))
    count = len(points(ast.parse(original), target))
    todo = [i for i in range(count if limit is None else min(limit, count)) if i % sample == 0]
    print(f"{name}: {count} mutants, {len(todo)} to run, baseline {baseline:.1f}s", flush=True)
    try:
        for i in todo:
            if earlier is not None and i in earlier and earlier[i].status != "survived":
                report.results.append(earlier[i])
                continue
            source, point = mutant_source(original, target, i)
            path.write_text(source)
            t0 = time.monotonic()
            status, by = _run_tests(target, timeout)
            outcome = {"failed": "killed", "passed": "survived", "timeout": "timeout"}[status]
            snippet = lines[point.line - 1].strip() if point.line else ""
            result = Result(point, outcome, by, round(time.monotonic() - t0, 1), snippet)
            if outcome == "survived":
                result.equivalent = _equivalence_note(lines, point.line)
            report.results.append(result)
            where = f"{target.path}:{point.line}"
            print(f"  [{i + 1}/{count}] {outcome:8} {where} {point.kind}", flush=True)
            on_result(report)
    finally:
        path.write_text(original)
    return report


def markdown(reports: list[ModuleReport]) -> str:
    out = [
        "# Mutation report",
        "",
        "| module | mutants | killed | timeout | survived | equivalent | score "
        "| score w/o equivalent |",
        "|---|---|---|---|---|---|---|---|",
    ]
    tot = {"n": 0, "k": 0, "t": 0, "s": 0, "e": 0}
    for r in reports:
        n, k, t, s = len(r.results), r.count("killed"), r.count("timeout"), r.count("survived")
        e = sum(x.status == "survived" and bool(x.equivalent) for x in r.results)
        for key, v in zip("nktse", (n, k, t, s, e), strict=True):
            tot[key] += v
        out.append(
            f"| {r.path} | {n} | {k} | {t} | {s} | {e} | {_pct(k + t, n)} | {_pct(k + t, n - e)} |"
        )
    caught = tot["k"] + tot["t"]
    out.append(
        f"| **all** | {tot['n']} | {tot['k']} | {tot['t']} | {tot['s']} | {tot['e']} | "
        f"{_pct(caught, tot['n'])} | {_pct(caught, tot['n'] - tot['e'])} |"
    )
    out += ["", "## Survivors", ""]
    for r in reports:
        for x in r.results:
            if x.status == "survived":
                why = f" — equivalent: {x.equivalent}" if x.equivalent else ""
                out.append(f"- `{r.path}:{x.point.line}` `{x.point.kind}` in `{x.snippet}`{why}")
    return "\n".join(out) + "\n"


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}%" if b else "-"


def _terminate(signum, frame):  # restore the file under test on kill, too
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", action="append", choices=sorted(TARGETS), help="repeatable")
    parser.add_argument("--limit", type=int, help="first N mutants per module (a smoke run)")
    parser.add_argument("--sample", type=int, default=1, help="every Nth mutant only")
    parser.add_argument(
        "--reuse",
        type=Path,
        metavar="JSON",
        help="an earlier report: keep its killed mutants of unchanged modules, run the rest",
    )
    parser.add_argument("--list", action="store_true", help="count the mutants and exit")
    parser.add_argument("--report", type=Path, default=Path("mutation-report.md"))
    args = parser.parse_args(argv)
    names = args.module or sorted(TARGETS)
    if args.list:
        for n in names:
            t = TARGETS[n]
            print(n, len(points(ast.parse((ROOT / t.path).read_text()), t)))
        return 0
    signal.signal(signal.SIGTERM, _terminate)
    reports: list[ModuleReport] = []

    def save(current: ModuleReport | None = None) -> None:
        done = reports + ([current] if current is not None else [])
        args.report.write_text(markdown(done))
        args.report.with_suffix(".json").write_text(
            json.dumps([asdict(r) for r in done], indent=1) + "\n"
        )

    for n in names:
        reports.append(run_module(n, TARGETS[n], args.limit, args.sample, args.reuse, save))
        save()
    print(markdown(reports))
    return 0


if __name__ == "__main__":
    sys.exit(main())
