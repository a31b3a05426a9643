"""Run work that may abort the process somewhere an abort only ends a child.

Triton aborts the process on some bad input (C++ assertions, ``std::bad_cast``,
``LLVM ERROR``). Everything that reaches its C++ therefore runs in another
process, and an abort there comes back as an :class:`Isolated` that says how
the process died, what it printed to file descriptor 2 (where MLIR and LLVM
print) and every progress report the work made before it died (which op it
was building), so the caller can turn it into a located diagnostic.

Two ways, one result type:

* :class:`WorkerPool` keeps long-lived worker processes, each forked once
  from this process and prepared once (Triton imported, its cache key
  hashed), then reused for job after job: a job pays neither a fork nor
  Triton's per-process start. A worker that dies (an abort) is reaped and
  the next job gets a fresh one. Jobs are a module-level function and
  picklable arguments.
* :func:`run_forked` forks a child for one call of any callable (a closure
  too): the general form, for work that is not a module-level function.

A worker is a fork of this process, so it runs the package's code as this
process had it when the worker started (and imports a module first needed
later from its file, as this process does). When that code changes since (a
function of a ``gemm_opt`` module or class replaced, as a test's monkeypatch
does, or a module reloaded), the worker is stale: the next job retires it
and forks a fresh one, so a job runs the code the caller sees.

A pool made with ``scratch`` gives each worker a private directory (made
before the fork, removed by this process when the worker ends, an abort
too), which the worker finds with :func:`scratch_dir`: files a job writes
there cost no temporary directory of their own (on some file systems
removing a directory costs milliseconds).

Lifecycle: workers end with this process (closed at interpreter exit; a
worker also ends when its job pipe reaches end of file, so it cannot outlive
a parent that was killed). A child forked from this process by anyone
(``multiprocessing``, :func:`run_forked`, another worker) closes its copy of
every worker's pipes and starts with an empty pool, so two processes never
share a worker. Each thread that runs a job holds its own worker for the
job: concurrent builders run in parallel, one worker each.
"""

from __future__ import annotations

import atexit
import faulthandler
import os
import pickle
import shutil
import signal
import struct
import sys
import tempfile
import threading
import time
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Isolated", "WorkerPool", "code_state", "run_forked", "scratch_dir"]

#: Jobs a worker runs before it is replaced (bounds whatever Triton's C++ keeps
#: per process, such as uniqued attributes of contexts never freed).
MAX_JOBS = 500
#: Seconds a worker gets to exit on its own at shutdown before it is killed.
EXIT_GRACE_S = 2.0
#: The package whose code a worker must run as its caller has it.
PACKAGE = "gemm_opt"


@dataclass
class Isolated:
    """What came back from isolated work.

    ``result`` is the work's return value when ``ok``; ``exception`` the
    ``Type: message`` of a Python exception it raised; ``died`` says how the
    process ended when it did not end normally (``"aborted (SIGABRT)"``);
    ``progress`` holds every report the work made, in order; ``stderr``
    everything the work wrote to file descriptor 2.
    """

    result: Any = None
    ok: bool = False
    exception: str = ""
    died: str = ""
    progress: list[Any] = field(default_factory=list)
    stderr: str = ""

    def assertions(self) -> list[str]:
        """Assertion and ``terminate`` lines Triton's C++ printed before dying."""
        keep = ("Assertion", "terminate called", "what():", "LLVM ERROR", "UNREACHABLE")
        return [ln.strip() for ln in self.stderr.splitlines() if any(k in ln for k in keep)]

    def add(self, kind: str, value: Any) -> None:
        """Take one frame the work sent."""
        if kind == "at":
            self.progress.append(value)
        elif kind == "result":
            self.result, self.ok = value, True
        else:
            self.exception = value

    def ended(self, status: int) -> None:
        """Record how the process ended (a ``waitpid`` status), if it died."""
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else sig
            self.died = "aborted" if sig == signal.SIGABRT else "crashed"
            self.died += f" ({name})"
            self.ok = False
        elif os.WEXITSTATUS(status) != 0 or not (self.ok or self.exception):
            self.died = f"exited with status {os.WEXITSTATUS(status)} without a result"
            self.ok = False


# ---------------------------------------------------------------------------
# Frames: a 4-byte little-endian length, then a pickle.


def _send(fd: int, item: Any) -> None:
    data = pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(struct.pack("<I", len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _frames(data: bytes) -> tuple[list[Any], int]:
    """The whole frames at the start of ``data`` and how many bytes they take."""
    items, at = [], 0
    # Equivalent mutant: <= -> < and 4->5. A frame's pickle is never empty, so a whole
    # frame needs at + 5 <= len(data): the loop stops at the same frames either way.
    while at + 4 <= len(data):
        (size,) = struct.unpack_from("<I", data, at)
        if at + 4 + size > len(data):
            break
        # Equivalent mutant: 4->5 in the slice's end. pickle.loads stops at the pickle's
        # STOP opcode, so one byte more (the next frame's) reads the same item.
        items.append(pickle.loads(data[at + 4 : at + 4 + size]))
        at += 4 + size
    return items, at


def _report(fd: int) -> Callable[[Any], None]:
    return lambda item: _send(fd, ("at", item))


def _run_job(fd: int, work: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """Run ``work(report, *args)``; send its result or its exception."""
    try:
        result = work(_report(fd), *args)
    except BaseException as e:  # everything goes back to the caller
        _send(fd, ("exception", f"{type(e).__name__}: {e}"))
        return
    try:
        _send(fd, ("result", result))
    except Exception as e:  # an unpicklable result
        _send(fd, ("exception", f"{type(e).__name__}: {e}"))


def _read_stderr(fd: int) -> str:
    size = os.fstat(fd).st_size
    return os.pread(fd, size, 0).decode("utf-8", errors="replace") if size else ""


# ---------------------------------------------------------------------------
# One child per call


def run_forked(work: Callable[[Callable[[Any], None]], Any]) -> Isolated:
    """Run ``work(report)`` in a forked child; never raises for what it does.

    ``report(item)`` sends ``item`` (picklable) to the parent at once, so the
    last report survives an abort. The return value must be picklable.
    """
    read_fd, write_fd = os.pipe()
    with tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: work, send the result, exit at once
            code = 0
            try:
                os.close(read_fd)
                os.dup2(err.fileno(), 2)
                faulthandler.disable()  # an abort is the parent's to report
                _run_job(write_fd, lambda report: work(report), ())
            except BaseException:
                code = 3
            finally:
                sys.stderr.flush()
                os._exit(code)
        os.close(write_fd)
        chunks = []
        try:
            # Equivalent mutant: 1->2, 16->17. The read size; frames are joined from the
            # chunks whatever their size.
            while chunk := os.read(read_fd, 1 << 16):
                chunks.append(chunk)
        finally:
            os.close(read_fd)
        _, status = os.waitpid(pid, 0)
        run = Isolated(stderr=_read_stderr(err.fileno()))
    for kind, value in _frames(b"".join(chunks))[0]:
        run.add(kind, value)
    run.ended(status)
    return run


# ---------------------------------------------------------------------------
# Long-lived workers


#: What counts as code in a namespace (data, such as a cache a module fills, does not).
_CODE = (types.FunctionType, type, staticmethod, classmethod, property)


def code_state(package: str = PACKAGE) -> dict[str, int]:
    """Per loaded module of ``package``, a number that changes when one of its
    functions or classes is replaced (on the module, or on a class defined
    there).

    The identity of every function and class in the module's namespace and
    of every function in the namespace of each class the module defines:
    replacing one (setattr, a reload) gives a different object, hence a
    different number. Data is left out: modules and classes change their
    caches as they run.
    """
    states: dict[str, int] = {}
    prefix = package + "."
    for name, module in list(sys.modules.items()):
        if module is None or not (name == package or name.startswith(prefix)):
            continue
        ids: list[int] = []
        for value in list(vars(module).values()):
            if not isinstance(value, _CODE):
                continue
            ids.append(id(value))
            if isinstance(value, type) and value.__module__ == name:
                ids.extend(id(v) for v in list(vars(value).values()) if isinstance(v, _CODE))
        states[name] = hash(tuple(ids))
    return states


def _current(worker_state: dict[str, int], state: dict[str, int]) -> bool:
    """Whether a worker forked at ``worker_state`` runs the code of ``state``:
    every module it had is unchanged (a module imported since, it imports
    from the same file when a job needs it)."""
    return all(state.get(name) == value for name, value in worker_state.items())


#: In a worker of a pool made with ``scratch``: its private directory.
_SCRATCH: str | None = None


def scratch_dir() -> str | None:
    """This worker's private directory (see :class:`WorkerPool`); None in a
    process that is no such worker."""
    return _SCRATCH


class _Worker:
    """One worker process and this process's ends of its pipes."""

    def __init__(
        self,
        prepare: Callable[[], None] | None,
        state: dict[str, int],
        first: Callable[[Callable[[Any], None]], Any] | None = None,
        scratch: str | None = None,
    ) -> None:
        self.state = state
        self.jobs = 0
        self.scratch = tempfile.mkdtemp(prefix=scratch) if scratch is not None else None
        jobs_read, self.jobs_fd = os.pipe()
        self.results_fd, results_write = os.pipe()
        self.err = tempfile.TemporaryFile()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            # Equivalent mutant: 0->1. A worker ends normally only at end of file on its
            # job pipe, which this process closes in stop() or after a death, and both
            # reap it without reading the status.
            code = 0
            try:
                # (The fork hook closed the pipes of the workers started earlier.)
                for fd in (self.jobs_fd, self.results_fd):
                    os.close(fd)
                os.dup2(self.err.fileno(), 2)
                _serve(jobs_read, results_write, prepare, first, self.scratch)
            except BaseException:
                # To fd 2 itself, which the caller reads after a death (sys.stderr may
                # be another stream: a notebook's, a test runner's capture).
                os.write(2, traceback.format_exc().encode("utf-8", errors="replace"))
                code = 3
            finally:
                os._exit(code)
        self.pid = pid
        os.close(jobs_read)
        os.close(results_write)
        _LIVE.add(self)

    def close_fds(self) -> None:
        """Close this process's ends (in a forked child: it must not hold them)."""
        _LIVE.discard(self)
        for fd in (self.jobs_fd, self.results_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        self.err.close()

    def run(self, work: Callable[..., Any], args: tuple[Any, ...]) -> Isolated:
        """Run one job; the result, or how the worker died doing it."""
        try:
            _send(self.jobs_fd, (work, args))
        except BrokenPipeError:  # it died between jobs: read how below
            pass
        return self.collect()

    def collect(self) -> Isolated:
        """The result of the job the worker is running, or how it died doing it."""
        self.jobs += 1
        run = Isolated()
        buffer = b""
        while not (run.ok or run.exception):
            # Equivalent mutant: 1->2, 16->17. The read size; frames are reassembled.
            chunk = os.read(self.results_fd, 1 << 16)
            if not chunk:  # died mid-job
                self.close_fds_and_reap(run)
                return run
            buffer += chunk
            frames, used = _frames(buffer)
            buffer = buffer[used:]
            for kind, value in frames:
                run.add(kind, value)
        run.stderr = _read_stderr(self.err.fileno())
        return run

    def close_fds_and_reap(self, run: Isolated) -> None:
        run.stderr = _read_stderr(self.err.fileno())
        _, status = os.waitpid(self.pid, 0)
        run.ended(status)
        if not run.died:  # it ended without a result (or an unreadable one)
            run.died = "exited without a result"
        self.close_fds()
        self.remove_scratch()

    def remove_scratch(self) -> None:
        """Remove the worker's directory (once it has ended)."""
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None

    def stop(self, grace: float = EXIT_GRACE_S) -> None:
        """End the worker: end of file on its job pipe, then a kill if it lingers."""
        self.close_fds()
        try:
            self._wait(grace)
        finally:
            self.remove_scratch()

    def _wait(self, grace: float) -> None:
        deadline = time.monotonic() + grace
        while True:
            try:
                pid, _ = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return
            if pid:
                return
            # Equivalent mutant: > -> >=. The clock equals the deadline at one instant
            # only; killing one poll of 5 ms earlier leaves the same state.
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                return
            time.sleep(0.005)


def _serve(
    jobs_fd: int,
    results_fd: int,
    prepare: Callable[[], None] | None,
    first: Callable[[Callable[[Any], None]], Any] | None,
    scratch: str | None,
) -> None:
    """A worker's life: prepare once, run ``first`` (a closure over what this
    fork inherited), then run jobs until end of file."""
    global _SCRATCH
    _SCRATCH = scratch
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt is the caller's to handle
    faulthandler.disable()  # an abort is the caller's to report
    if prepare is not None:
        prepare()
    if first is not None:
        _run_job(results_fd, lambda report: first(report), ())
        sys.stderr.flush()
    buffer = b""
    while True:
        # Equivalent mutant: 1->2, 16->17. The read size; jobs are reassembled from frames.
        chunk = os.read(jobs_fd, 1 << 16)
        if not chunk:
            return
        buffer += chunk
        jobs, used = _frames(buffer)
        buffer = buffer[used:]
        for work, args in jobs:
            os.ftruncate(2, 0)  # each job's fd 2 starts empty
            os.lseek(2, 0, os.SEEK_SET)
            _run_job(results_fd, work, args)
            sys.stderr.flush()


class WorkerPool:
    """Long-lived worker processes, one per concurrent caller (see the module docstring).

    ``prepare`` runs once in each new worker, before its first job (import
    and warm what every job needs). With ``scratch`` (a name prefix), each
    worker gets a private directory (:func:`scratch_dir`).
    """

    def __init__(
        self, prepare: Callable[[], None] | None = None, scratch: str | None = None
    ) -> None:
        self.prepare = prepare
        self.scratch = scratch
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._busy: list[_Worker] = []
        self._owner = os.getpid()
        _POOLS.append(self)

    def run(
        self,
        work: Callable[..., Any],
        *args: Any,
        first: Callable[[Callable[[Any], None]], Any] | None = None,
    ) -> Isolated:
        """Run ``work(report, *args)`` in a worker; never raises for what it does.

        ``work`` must be a module-level function and ``args`` picklable;
        ``report(item)`` sends a picklable ``item`` back at once, so the last
        report survives an abort. A worker that dies doing the job is
        replaced by the next job.

        ``first(report)``, the same work as a closure, is what a worker forked
        for this job runs instead (it inherits what the closure holds: no
        arguments to send and read back); an idle worker runs ``work``.
        """
        worker, forked = self._acquire(first)
        done = False
        try:
            run = worker.collect() if forked else worker.run(work, args)
            done = True
        finally:
            with self._lock:
                self._busy.remove(worker)
                keep = done and not run.died and worker.jobs < MAX_JOBS
                if keep:
                    self._idle.append(worker)
            if not done:  # interrupted mid-job: its state is unknown
                worker.stop(grace=0)
            elif not keep and not run.died:
                worker.stop()
        return run

    def _acquire(
        self, first: Callable[[Callable[[Any], None]], Any] | None = None
    ) -> tuple[_Worker, bool]:
        """An idle, current worker, or a new one (then running ``first``, if
        given: the second value says so)."""
        state = code_state()
        stale: list[_Worker] = []
        with self._lock:
            self._forget_if_forked()
            worker = None
            while self._idle:
                candidate = self._idle.pop()
                if _current(candidate.state, state):
                    worker = candidate
                    break
                stale.append(candidate)
            forked = worker is None
            if worker is None:
                worker = _Worker(self.prepare, state, first, self.scratch)
            self._busy.append(worker)
        for old in stale:
            old.stop()
        return worker, forked and first is not None

    def _forget_if_forked(self) -> None:
        if self._owner != os.getpid():  # a forked child: the workers are the parent's
            self._idle, self._busy, self._owner = [], [], os.getpid()

    def workers(self) -> list[int]:
        """The process ids of this pool's workers (idle and busy)."""
        with self._lock:
            self._forget_if_forked()
            return [w.pid for w in self._idle + self._busy]

    def shutdown(self) -> None:
        """Stop the idle workers (busy ones stop when their job ends)."""
        with self._lock:
            self._forget_if_forked()
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.stop()


#: Every pool of this process (for the fork and exit hooks).
_POOLS: list[WorkerPool] = []
#: Every worker whose pipes this process holds (in a pool, or being retired).
_LIVE: set[_Worker] = set()


def _after_fork_in_child() -> None:
    """A forked child holds copies of every worker's pipes: close them, so a
    worker sees end of file when its parent goes, and start with no workers."""
    for worker in list(_LIVE):
        worker.close_fds()
    for pool in _POOLS:
        pool._lock = threading.Lock()  # a lock held by another thread stays held
        pool._idle, pool._busy, pool._owner = [], [], os.getpid()


def _shutdown_all() -> None:
    for pool in _POOLS:
        if pool._owner == os.getpid():
            pool.shutdown()


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_shutdown_all)
