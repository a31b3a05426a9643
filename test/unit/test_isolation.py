"""The worker processes Triton runs in: reuse, restart after an abort, stale
code, concurrent callers, and a life that ends with the caller's."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from gemm_opt.lowering import isolation, triton_bridge
from gemm_opt.lowering.isolation import WorkerPool


def _pid(report):
    return os.getpid()


def _abort_after_reports(report):
    report("first")
    report("second")
    os.write(2, b"Assertion `x' failed.\n")
    os.abort()


def _raise(report):
    raise ValueError("bad input")


def _write_stderr(report, text):
    os.write(2, text.encode())
    return os.getpid()


def _sleep_then_pid(report, seconds):
    time.sleep(seconds)
    return os.getpid()


def _target_attr(report):
    return triton_bridge.target_attr("gfx1250")


@pytest.fixture
def pool():
    pool = WorkerPool()
    yield pool
    pool.shutdown()


def _alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_jobs_reuse_one_worker(pool):
    first = pool.run(_pid)
    second = pool.run(_pid)
    assert first.ok and second.ok
    assert first.result == second.result != os.getpid()
    assert pool.workers() == [first.result]


def _imported(report, name):
    return name in sys.modules


def test_a_worker_forked_for_a_job_runs_the_closure_then_serves(pool):
    held = {"value": 41}  # what the closure holds, never pickled

    forked = pool.run(_pid, first=lambda report: (report("fresh"), held["value"] + 1)[1])
    assert forked.ok and forked.result == 42 and forked.progress == ["fresh"]
    (worker,) = pool.workers()
    reused = pool.run(_pid, first=lambda report: "not run: a worker is idle")
    assert reused.result == worker  # the idle worker ran the function


def test_an_abort_in_the_first_job_is_reported(pool):
    run = pool.run(_pid, first=_abort_after_reports)
    assert run.died == "aborted (SIGABRT)" and run.progress == ["first", "second"]
    assert pool.workers() == []
    assert pool.run(_pid).ok


def test_an_abort_is_reported_and_the_next_job_gets_a_fresh_worker(pool):
    before = pool.run(_pid).result
    run = pool.run(_abort_after_reports)
    assert not run.ok and run.died == "aborted (SIGABRT)"
    assert run.progress == ["first", "second"]
    assert run.assertions() == ["Assertion `x' failed."]
    assert not _alive(before)
    after = pool.run(_pid)
    assert after.ok and after.result != before
    assert pool.workers() == [after.result]


def test_an_exception_comes_back_and_the_worker_stays(pool):
    before = pool.run(_pid).result
    failed = pool.run(_raise)
    assert not failed.ok and not failed.died
    assert failed.exception == "ValueError: bad input"
    assert pool.run(_pid).result == before


def test_each_job_reads_only_its_own_stderr(pool):
    first = pool.run(_write_stderr, "the first job\n")
    second = pool.run(_write_stderr, "two\n")
    assert first.result == second.result  # the same worker
    assert (first.stderr, second.stderr) == ("the first job\n", "two\n")


def test_a_replaced_function_makes_the_worker_stale(pool, monkeypatch):
    """A worker runs the package's code as its caller has it (a test's monkeypatch too)."""
    before = pool.run(_pid).result
    assert pool.run(_target_attr).result == "hip:gfx1250"
    monkeypatch.setattr(triton_bridge, "target_attr", lambda target: "patched")
    assert pool.run(_target_attr).result == "patched"
    assert pool.run(_pid).result != before
    assert not _alive(before)


def test_code_state_follows_functions_and_methods_not_data(monkeypatch):
    name = isolation.__name__
    state = isolation.code_state()
    monkeypatch.setattr(isolation, "MAX_JOBS", 7)  # data: a cache or a constant
    assert isolation.code_state() == state
    monkeypatch.setattr(isolation._Worker, "stop", lambda self, grace=0: None)
    changed = isolation.code_state()
    assert [n for n in state if changed[n] != state[n]] == [name]
    assert not isolation._current(state, changed)
    monkeypatch.undo()
    assert isolation.code_state() == state
    # A module imported after a worker started does not make it stale.
    assert isolation._current(state, {**state, f"{name}_imported_later": 1})


def test_concurrent_callers_get_one_worker_each(pool):
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(pool.run(_sleep_then_pid, 0.5)))
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.ok for r in results] == [True, True]
    assert len({r.result for r in results}) == 2
    assert sorted(pool.workers()) == sorted(r.result for r in results)


def test_a_forked_child_starts_its_own_workers(pool):
    parent_worker = pool.run(_pid).result
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read_fd)
            inherited = pool.workers()
            own = pool.run(_pid)
            ok = inherited == [] and own.ok and own.result != parent_worker
            os.write(write_fd, b"ok" if ok else repr((inherited, own)).encode())
            pool.shutdown()
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    answer = os.read(read_fd, 1000)
    os.close(read_fd)
    os.waitpid(pid, 0)
    assert answer == b"ok"
    assert pool.run(_pid).result == parent_worker  # the child left the parent's worker alone


_SCRIPT = """
import os, sys
from gemm_opt.lowering.isolation import WorkerPool

def job(report):
    return os.getpid()

pool = WorkerPool()
print(pool.run(job).result, flush=True)
if sys.argv[1] == "killed":
    child = os.fork()
    if child == 0:  # a child that outlives its parent holds no worker's pipe
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        import time
        time.sleep(30)
        os._exit(0)
    print(child, flush=True)
    os.kill(os.getpid(), 9)
"""


@pytest.mark.parametrize("how", ["exit", "killed"])
def test_workers_end_with_their_process(tmp_path, how):
    """At interpreter exit the pool stops its workers; a killed caller's
    worker sees end of file on its job pipe and ends too (a child the caller
    forked closed its copies of the pipe)."""
    script = tmp_path / "use_pool.py"
    script.write_text(textwrap.dedent(_SCRIPT))
    out = tmp_path / "out.txt"
    with out.open("w") as stdout:  # a file, not a pipe: the run ends with the script
        proc = subprocess.run(
            [sys.executable, str(script), how], stdout=stdout, stderr=stdout, check=False
        )
    assert proc.returncode == (-signal.SIGKILL if how == "killed" else 0), out.read_text()
    worker, *child = (int(word) for word in out.read_text().split())
    try:
        deadline = time.monotonic() + 10
        while _alive(worker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(worker)
    finally:
        for pid in child:
            os.kill(pid, signal.SIGKILL)


def _scratch(report):
    return isolation.scratch_dir()


def _scratch_then_abort(report):
    report(isolation.scratch_dir())
    os.abort()


def test_a_pool_with_scratch_gives_each_worker_a_private_directory():
    """Made before the fork, the same for every job of one worker, removed by
    the caller when the worker ends: after an abort and at shutdown."""
    pool = WorkerPool(scratch="gemm_opt_test_")
    try:
        first, again = pool.run(_scratch), pool.run(_scratch)
        assert first.ok and first.result == again.result
        assert Path(first.result).is_dir() and Path(first.result).name.startswith("gemm_opt_test_")
        died = pool.run(_scratch_then_abort)
        assert died.died.startswith("aborted") and died.progress == [first.result]
        assert not Path(first.result).exists()
        fresh = pool.run(_scratch)
        assert fresh.ok and fresh.result != first.result and Path(fresh.result).is_dir()
    finally:
        pool.shutdown()
    assert not Path(fresh.result).exists()
    assert isolation.scratch_dir() is None  # this process is no worker


def test_a_pool_without_scratch_gives_none(pool):
    assert pool.run(_scratch).result is None
