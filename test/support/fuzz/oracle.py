"""The fuzzing oracle: run ``gemm-opt`` on one input and judge what it did.

A run is acceptable when it exits 0 with a valid artifact, or exits 1 with
an error diagnostic that has a location (``file:line:col: error: ...``).
Everything else is a finding: a signal (abort, segfault), a timeout, a
Python traceback, an "internal error", an error without a location, exit 2
on a valid command line, exit 0 with an error or with an empty or invalid
artifact, or printed IR that does not parse back.

Runs go through the warm fork server of :mod:`worker` (each in its own child
process, so an abort in Triton ends only that child); :func:`confirm` reruns
a finding with the installed ``gemm-opt`` console script.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gemm_opt.core.targets import TARGETS

WORKER = Path(__file__).with_name("worker.py")

#: ``file:line:col: error: message`` with a real (1-based) line.
LOCATED_ERROR = re.compile(r"^(?P<file>\S.*?):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.*)$")

NUM_WARPS = re.compile(r'"ttg\.num-warps" = (\d+)')
THREADS_PER_WARP = re.compile(r'"ttg\.threads-per-warp" = (\d+)')
#: The most threads a workgroup of any target may launch.
MAX_THREADS = max(t.max_threads_per_block for t in TARGETS.values())

#: A command-line misuse diagnostic (exit 2).
MISUSE = re.compile(r"^(<pass-pipeline>:\d+:\d+|gemm-opt): error: ")

#: A Python exception's name in a diagnostic: a bug reported as if it were the user's.
LEAKED_EXCEPTION = re.compile(
    r"\b(IndexError|KeyError|TypeError|ValueError|AttributeError|ZeroDivisionError|"
    r"RecursionError|AssertionError|NameError|UnboundLocalError|OverflowError|"
    r"NotImplementedError|MLIRError|VerifyError)\b(?=:)"
)

#: Emit kinds whose artifact is binary (ELF / cubin).
BINARY = ("hsaco", "cubin")

#: A marker each text artifact must contain when the run exits 0.
ARTIFACT_MARKERS = {
    "ttgir": "tt.func",
    "llir": "define ",
    "amdgcn": "s_endpgm",
    "ptx": ".entry",
}


@dataclass(frozen=True)
class Outcome:
    """What one run did."""

    command: tuple[str, ...]
    rc: int
    stderr: str
    output: bytes | None
    seconds: float


@dataclass(frozen=True)
class Finding:
    """A run the oracle rejects."""

    kind: str
    """traceback, internal-error, signal, timeout, unlocated-error, misuse-exit,
    exit-code, error-on-success, bad-artifact, round-trip, ignored-target,
    leaked-exception (a located error that quotes a Python exception) or
    accepted-bad-program (see :data:`MUST_REFUSE`)."""
    message: str
    command: tuple[str, ...]
    text: str
    stderr: str

    @property
    def signature(self) -> str:
        """What two findings of the same bug share: kind and the message's words."""
        msg = re.sub(r"0x[0-9a-f]+|\d+", "N", self.message)
        msg = re.sub(r"'[^']*'|\"[^\"]*\"", "S", msg)
        return f"{self.kind}: {msg[:90]}"

    def report(self) -> str:
        """The finding as a reproducible note: command, stderr, input."""
        tail = "\n".join(self.stderr.strip().splitlines()[-12:])
        return (
            f"[{self.kind}] {self.message}\n"
            f"$ gemm-opt input.mlir -o out {' '.join(self.command)}\n"
            f"--- stderr (tail)\n{tail}\n--- input\n{self.text}"
        )


def emit_kind(command: Sequence[str]) -> str | None:
    for arg in command:
        if arg.startswith("--emit="):
            return arg.split("=", 1)[1]
    return None


def classify(
    command: Sequence[str], rc: int, stderr: str, output: bytes | None
) -> tuple[str, str] | None:
    """(kind, message) when the run is unacceptable, None when it is fine."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    if rc == -signal.SIGALRM:
        return "timeout", "no result within the time limit"
    if rc < 0:
        where = _innermost_frame(stderr)
        return "signal", f"killed by {signal.Signals(-rc).name}" + (f" in {where}" if where else "")
    if "Traceback (most recent call last)" in stderr:
        last = next((ln for ln in reversed(lines) if not ln.startswith(" ")), "")
        return "traceback", last.strip()
    internal = next((ln for ln in lines if "internal error" in ln.lower()), None)
    if internal is not None:
        return "internal-error", internal.split("internal error", 1)[1].lstrip(": ")
    errors = [ln for ln in lines if "error" in ln]
    if rc == 0:
        if errors:
            return "error-on-success", errors[0]
        return _check_artifact(command, output)
    if rc == 2:
        # The command lines are drawn from the registry: one may still be
        # misuse (an option out of range, a pass after the conversion), but
        # a registered pass is never unknown.
        first = lines[0] if lines else "exit 2 with no message"
        if not MISUSE.match(first) or "does not refer to a registered pass" in first:
            return "misuse-exit", first
        return None
    if rc != 1:
        return "exit-code", f"exit status {rc}"
    if not errors:
        return "unlocated-error", "exit 1 with no error message"
    first = LOCATED_ERROR.match(errors[0])
    if first is None or int(first["line"]) < 1:
        return "unlocated-error", errors[0]
    leaked = LEAKED_EXCEPTION.search(stderr)
    if leaked is not None:
        return "leaked-exception", f"a diagnostic quotes Python's {leaked.group(0)}"
    return None


_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line \d+ in (?P<func>\S+)', re.M)


def _innermost_frame(stderr: str) -> str | None:
    """``module.function`` of the innermost Python frame a fatal-signal dump names."""
    for m in _FRAME.finditer(stderr):
        return f"{Path(m['path']).stem}.{m['func']}"
    return None


def _check_artifact(command: Sequence[str], output: bytes | None) -> tuple[str, str] | None:
    if not output:
        return "bad-artifact", "exit 0 with an empty output"
    kind = emit_kind(command)
    if kind in BINARY:
        if not output.startswith(b"\x7fELF"):
            return "bad-artifact", f"--emit={kind} wrote {output[:8]!r}, not an ELF object"
        if output.count(b"\x7fELF\x02\x01\x01") > 1:
            return "bad-artifact", f"--emit={kind} wrote several ELF objects into one file"
        return None
    text = output.decode("utf-8", "replace")
    marker = ARTIFACT_MARKERS.get(kind or "")
    if marker is not None and marker not in text:
        return "bad-artifact", f"--emit={kind} output lacks {marker!r}"
    warps, lanes = NUM_WARPS.search(text), THREADS_PER_WARP.search(text)
    if kind == "ttgir" and warps and lanes:
        threads = int(warps.group(1)) * int(lanes.group(1))
        if threads > MAX_THREADS:
            return (
                "bad-artifact",
                f"--emit=ttgir wrote a kernel of {threads} threads (at most {MAX_THREADS} launch)",
            )
    return None


def _nested_schedule(module: object) -> str | None:
    found: list[str] = []

    def visit(op: object) -> object:
        from gemm_opt.core.ext_compat import ir

        if op.name == "tile.gemm_schedule":  # type: ignore[attr-defined]
            parent = op.parent  # type: ignore[attr-defined]
            while parent is not None and parent.name != "builtin.module":
                if parent.name == "tile.gemm_schedule":
                    found.append("a tile.gemm_schedule inside another one's body")
                    return ir.WalkResult.INTERRUPT
                parent = parent.parent
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)  # type: ignore[attr-defined]
    return found[0] if found else None


def _kernel_results(module: object) -> str | None:
    from gemm_opt.core.ext_compat import ir
    from gemm_opt.dialect.tile import is_kernel

    for op in module.body.operations:  # type: ignore[attr-defined]
        fn = op.operation
        if fn.name == "func.func" and is_kernel(fn):
            ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
            if ftype.results:
                return "a kernel (a public func.func) with results"
    return None


#: Programs the verifier must refuse, by name: each a predicate on a module
#: that parsed and verified, saying what is wrong with it (None: nothing).
#: Accepting one is a finding even though every run exits cleanly: it is a
#: kernel that compiles to something wrong, or that Triton fails on later.
MUST_REFUSE = {
    "nested-schedule": _nested_schedule,
    "kernel-results": _kernel_results,
}


def accepted_bad_program(text: str, rules: Sequence[str]) -> str | None:
    """What makes ``text`` (accepted by gemm-opt) a program the verifier must
    refuse under ``rules`` (names of :data:`MUST_REFUSE`), or None."""
    from gemm_opt.core.ext_compat import ir
    from gemm_opt.dialect import make_context

    try:
        with make_context(True):
            module = ir.Module.parse(text)
            for name in rules:
                why = MUST_REFUSE[name](module)
                if why is not None:
                    return f"{name}: {why} was accepted"
    except Exception:  # what gemm-opt accepted but this context does not: not judged here
        return None
    return None


def reparses(command: Sequence[str]) -> bool:
    """Whether a successful run's output is tile IR that must parse back."""
    kind = emit_kind(command)
    if kind not in (None, "tile"):
        return False
    return not any("convert-tile-to-triton-gpu" in a or "tile-to-ttgir" in a for a in command)


class Oracle:
    """Runs gemm-opt through a warm worker and judges each run."""

    def __init__(self, timeout: float = 30.0, binary_timeout: float = 120.0) -> None:
        self.timeout = timeout
        self.binary_timeout = binary_timeout
        self._dir = tempfile.TemporaryDirectory(prefix="gemm-opt-fuzz-")
        self.root = Path(self._dir.name)
        self._proc: subprocess.Popen[str] | None = None
        self.runs = 0
        self.last: Outcome | None = None
        """The outcome of the last :meth:`check` (not of its round trip)."""

    def __enter__(self) -> Oracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._proc is not None:
            self._proc.stdin.close()  # type: ignore[union-attr]
            self._proc.wait(timeout=30)
            self._proc = None
        self._dir.cleanup()

    def _worker(self) -> subprocess.Popen[str]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, str(WORKER)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
        return self._proc

    def run(self, text: str, command: Sequence[str], timeout: float | None = None) -> Outcome:
        """Run ``gemm-opt input.mlir -o out COMMAND`` on ``text``."""
        src, out = self.root / "input.mlir", self.root / "out"
        err, log = self.root / "stderr", self.root / "stdout"
        src.write_text(text)
        out.unlink(missing_ok=True)
        if timeout is None:
            slow = emit_kind(command) not in (None, "tile", "ttgir")
            timeout = self.binary_timeout if slow else self.timeout
        argv = [str(src), "-o", str(out), *command]
        req = {"argv": argv, "stdout": str(log), "stderr": str(err), "timeout": timeout}
        proc = self._worker()
        proc.stdin.write(json.dumps(req) + "\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        reply = json.loads(proc.stdout.readline())  # type: ignore[union-attr]
        self.runs += 1
        stderr = err.read_text(errors="replace").replace(str(src), "input.mlir")
        output = out.read_bytes() if out.exists() else None
        return Outcome(tuple(command), reply["rc"], stderr, output, reply["seconds"])

    def check(self, text: str, command: Sequence[str]) -> Finding | None:
        """Run ``command`` on ``text``; a finding if the oracle rejects the run."""
        o = self.last = self.run(text, command)
        bad = classify(command, o.rc, o.stderr, o.output)
        if bad is None and o.rc == 0 and reparses(command):
            split = tuple(a for a in command if a == "--split-input-file")
            back = self.run(o.output.decode("utf-8", "replace"), split)  # type: ignore[union-attr]
            if back.rc != 0:
                first = back.stderr.strip().splitlines()[:1]
                bad = ("round-trip", f"the printed IR does not parse back: {first}")
                return Finding(*bad, tuple(command), text, back.stderr)
        if bad is None:
            return None
        return Finding(bad[0], bad[1], tuple(command), text, o.stderr)


def confirm(finding: Finding, timeout: float = 300.0) -> tuple[int, str]:
    """Rerun a finding with the installed ``gemm-opt`` script: (rc, stderr)."""
    tool = shutil.which("gemm-opt", path=str(Path(sys.executable).parent)) or "gemm-opt"
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "input.mlir"
        src.write_text(finding.text)
        try:
            p = subprocess.run(
                [tool, str(src), "-o", str(Path(d) / "out"), *finding.command],
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return -signal.SIGALRM, "timeout"
        return p.returncode, p.stderr.replace(str(src), "input.mlir")


__all__ = [
    "MUST_REFUSE",
    "Finding",
    "Oracle",
    "Outcome",
    "accepted_bad_program",
    "classify",
    "confirm",
    "emit_kind",
    "reparses",
]
