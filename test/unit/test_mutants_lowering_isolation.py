"""The isolation of work that may abort (``lowering.isolation``), pinned where
test_isolation.py left it open (found by ``benchmarks/mutation.py``).

How a process ended and what it sent (frames, status, stderr), :func:`run_forked`,
the code-state rule, the worker's job budget and its reaping. Whatever forks runs in
a fresh interpreter too: a fork that swapped parent and child would end the process
that runs the test, which only a separate process can see.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import struct
import subprocess
import sys
import textwrap
import time
import types
from pathlib import Path

import pytest

from gemm_opt.lowering import isolation
from gemm_opt.lowering.isolation import Isolated, WorkerPool, run_forked

# ---- in a fresh interpreter (first: with -x, its failure ends the run before a fork
# ---- that swapped parent and child could end this process with status 0)

_FRESH = """
import json, os
from gemm_opt.lowering.isolation import WorkerPool, run_forked
from gemm_opt.lowering import isolation

def job(report):
    report("at")
    return os.getpid(), os.getppid(), isolation.scratch_dir()

forked = run_forked(lambda report: report("x") or (os.getpid(), os.getppid()))
pool = WorkerPool(scratch="gemm_opt_test_")
run = pool.run(job)
print(json.dumps({
    "me": os.getpid(),
    "forked": [forked.ok, forked.result, forked.progress],
    "job": [run.ok, run.result, run.progress],
    "workers": pool.workers(),
}), flush=True)
"""


def test_a_fresh_process_forks_runs_and_cleans_up_at_exit(tmp_path) -> None:
    """The parent stays the parent (it prints once, after both forks), and the
    pool's worker and its scratch directory are gone when the process exits."""
    script = tmp_path / "fresh.py"
    script.write_text(textwrap.dedent(_FRESH))
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    out = json.loads(line)
    assert out["forked"][0] and out["forked"][2] == ["x"]
    # The child is this process's child, and so is the worker.
    child, parent = out["forked"][1]
    assert child != out["me"] == parent
    ok, (worker, parent, scratch), progress = out["job"]
    assert ok and progress == ["at"] and worker != out["me"] == parent
    assert out["workers"] == [worker]
    assert scratch and not Path(scratch).exists()


# ---- what came back ------------------------------------------------------------------


def test_assertions_keeps_only_the_lines_of_a_cxx_death() -> None:
    run = Isolated(
        stderr="loading\n  Assertion `x' failed.\nterminate called after\nplain line\n"
        "  what():  bad_cast\nLLVM ERROR: no\nUNREACHABLE at x\n"
    )
    assert run.assertions() == [
        "Assertion `x' failed.",
        "terminate called after",
        "what():  bad_cast",
        "LLVM ERROR: no",
        "UNREACHABLE at x",
    ]


def _exited(code: int) -> int:
    """A ``waitpid`` status of a process that exited with ``code``."""
    return code << 8


@pytest.mark.parametrize("code", [0, 1, 3])
@pytest.mark.parametrize("sent", ["result", "exception", "nothing"])
def test_ended_says_a_process_died_when_it_failed_or_sent_nothing(code: int, sent: str) -> None:
    # Every exit status against every frame: dead unless it exited 0 with a frame.
    run = Isolated()
    if sent == "result":
        run.add("result", 7)
    elif sent == "exception":
        run.add("exception", "ValueError: no")
    run.ended(_exited(code))
    if code == 0 and sent != "nothing":
        assert run.died == "" and run.ok == (sent == "result")
    else:
        assert run.died == f"exited with status {code} without a result"
        assert not run.ok


def test_ended_names_the_signal() -> None:
    run = Isolated()
    run.add("result", 1)
    run.ended(signal.SIGABRT)
    assert (run.died, run.ok) == ("aborted (SIGABRT)", False)
    run = Isolated()
    run.ended(signal.SIGSEGV)
    assert run.died == "crashed (SIGSEGV)"


# ---- frames --------------------------------------------------------------------------


def _frame(item: object) -> bytes:
    data = pickle.dumps(item)
    return struct.pack("<I", len(data)) + data


def test_frames_takes_the_whole_frames_and_leaves_a_partial_one() -> None:
    one, two, three = _frame(("at", 1)), _frame(("at", [2] * 40)), _frame(("result", "x"))
    data = one + two + three
    assert isolation._frames(data) == ([("at", 1), ("at", [2] * 40), ("result", "x")], len(data))
    # Cut anywhere inside the third frame (its header too): the first two, and no more.
    for cut in range(len(one + two), len(data)):
        assert isolation._frames(data[:cut]) == ([("at", 1), ("at", [2] * 40)], len(one + two))


# ---- one child per call --------------------------------------------------------------


def _reports_then_returns(report):
    report("a")
    report({"b": 2})
    os.write(2, b"to fd 2\n")
    return os.getpid()


def _reports_then_aborts(report):
    report("before")
    os.write(2, b"Assertion `y' failed.\n")
    os.abort()


class _Exits:
    """A result whose pickling exits the child (past the work's own handler)."""

    def __reduce__(self):
        raise SystemExit(5)


def test_run_forked_returns_the_result_reports_and_stderr() -> None:
    run = run_forked(_reports_then_returns)
    assert run.ok and run.died == "" and run.exception == ""
    assert run.result != os.getpid()
    assert run.progress == ["a", {"b": 2}]
    assert run.stderr == "to fd 2\n"


def test_run_forked_reports_an_abort_with_what_came_before_it() -> None:
    for _ in range(5):  # reaped each time, not polled
        run = run_forked(_reports_then_aborts)
        assert (run.ok, run.died, run.progress) == (False, "aborted (SIGABRT)", ["before"])
        assert run.assertions() == ["Assertion `y' failed."]


def test_run_forked_reports_an_exception_and_a_result_it_cannot_send() -> None:
    run = run_forked(lambda report: _fail(report))
    assert (run.ok, run.died, run.exception) == (False, "", "AssertionError: prepare failed")
    run = run_forked(lambda report: _Exits())
    assert (run.ok, run.died) == (False, "exited with status 3 without a result")


# ---- code state ----------------------------------------------------------------------


def test_code_state_covers_the_package_alone() -> None:
    states = isolation.code_state()
    assert "gemm_opt" in states and "gemm_opt.lowering.isolation" in states
    assert all(name == "gemm_opt" or name.startswith("gemm_opt.") for name in states)


def test_code_state_follows_a_class_where_it_is_defined(monkeypatch) -> None:
    # A class defined in one module and imported into another: replacing its
    # method changes the defining module's state alone.
    home, user = types.ModuleType("gemm_opt._home"), types.ModuleType("gemm_opt._user")

    class Thing:
        def method(self) -> int:
            return 1

    Thing.__module__ = home.__name__
    home.Thing = user.Thing = Thing
    monkeypatch.setitem(sys.modules, home.__name__, home)
    monkeypatch.setitem(sys.modules, user.__name__, user)
    before = isolation.code_state()
    monkeypatch.setattr(Thing, "method", lambda self: 2)
    after = isolation.code_state()
    assert after[home.__name__] != before[home.__name__]
    assert after[user.__name__] == before[user.__name__]


# ---- workers -------------------------------------------------------------------------


def _pid(report):
    return os.getpid()


def _sleep(report, seconds):
    time.sleep(seconds)
    return os.getpid()


def _reaped(pid: int) -> bool:
    """Whether ``pid``, a child of this process, is gone and reaped."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_a_worker_serves_max_jobs_then_is_retired_and_reaped(monkeypatch) -> None:
    monkeypatch.setattr(isolation, "MAX_JOBS", 2)
    pool = WorkerPool()
    try:
        pids = [pool.run(_pid).result for _ in range(5)]
        assert pids[0] == pids[1] != pids[2] == pids[3] != pids[4]
        assert _reaped(pids[0]) and _reaped(pids[2])
        assert pool.workers() == [pids[4]]
    finally:
        pool.shutdown()
    assert _reaped(pids[4])


def test_a_worker_forked_for_a_job_runs_first_an_idle_one_the_work() -> None:
    pool = WorkerPool()
    try:
        forked = pool.run(_pid, first=lambda report: "closure")
        idle = pool.run(_pid, first=lambda report: "closure")
        assert forked.result == "closure"
        assert idle.result == pool.workers()[0]
    finally:
        pool.shutdown()


def _write(report, text):
    os.write(2, text.encode())


def test_each_job_starts_with_an_empty_stderr() -> None:
    pool = WorkerPool()
    try:
        assert pool.run(_write, "").stderr == ""
        assert pool.run(_write, "first job\n").stderr == "first job\n"
        assert pool.run(_write, "").stderr == ""
    finally:
        pool.shutdown()


def _remove_scratch(report):
    shutil.rmtree(isolation.scratch_dir())
    return os.getpid()


def test_a_job_may_remove_its_scratch_directory() -> None:
    pool = WorkerPool(scratch="gemm_opt_test_")
    run = pool.run(_remove_scratch)
    pool.shutdown()  # its directory is gone already: not an error
    assert run.ok and _reaped(run.result)


def _fail(report):
    raise AssertionError("prepare failed")


def test_a_worker_whose_prepare_fails_is_reported_with_its_traceback() -> None:
    pool = WorkerPool(prepare=lambda: _fail(None))
    run = pool.run(_pid)
    assert (run.ok, run.died) == (False, "exited with status 3 without a result")
    assert "AssertionError: prepare failed" in run.stderr
    pool.shutdown()


def test_an_interrupted_job_kills_its_worker_at_once(monkeypatch) -> None:
    pool = WorkerPool()
    pid = pool.run(_pid).result

    def interrupted(self):
        raise KeyboardInterrupt

    # A job interrupted while the worker sleeps in it: the worker is killed, not
    # given the grace of a worker that ends on its own.
    monkeypatch.setattr(isolation._Worker, "collect", interrupted)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        pool.run(_sleep, 30)
    assert time.monotonic() - start < 0.8
    assert pool.workers() == [] and _reaped(pid)


def test_stop_reaps_a_worker_that_ends_and_one_that_is_killed() -> None:
    worker = isolation._Worker(None, isolation.code_state())
    worker.stop()
    assert _reaped(worker.pid)
    worker = isolation._Worker(None, isolation.code_state())
    os.write(worker.jobs_fd, _frame((_sleep, (30,))))
    time.sleep(0.2)  # in its job: it does not see end of file
    start = time.monotonic()
    worker.stop(grace=0.3)
    assert 0.3 <= time.monotonic() - start < 5
    assert _reaped(worker.pid)
