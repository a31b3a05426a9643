"""A warm fork server that runs ``gemm-opt`` once per request.

Importing the bindings and Triton takes most of a ``gemm-opt`` run, so the
worker imports them once and forks a child per request: the child runs the
tool's ``main`` on the request's argument list, with its stdout and stderr in
files, under an alarm. An abort, a segfault or a hang then ends only the
child, and its wait status says which. The worker itself never creates an
MLIR context, so forking it is safe.

Protocol: one JSON object per line on stdin, ``{"argv": [...], "stdout": PATH,
"stderr": PATH, "timeout": SECONDS}``; one JSON object per line on stdout,
``{"rc": N, "seconds": S}``, where a negative ``rc`` is the signal that ended
the child (``-14``, SIGALRM, is the timeout).
"""

from __future__ import annotations

import faulthandler
import json
import math
import os
import signal
import sys
import time
import traceback

#: Exit status of a child whose ``main`` let an exception escape.
ESCAPED = 70


def _preload() -> None:
    """Import everything a run may need, so each child starts warm."""
    import gemm_opt.lowering.compile
    import gemm_opt.lowering.convert_tile_to_triton_gpu
    import gemm_opt.lowering.triton_bridge
    import gemm_opt.tools.opt  # noqa: F401
    from gemm_opt import passes

    for load in passes.PASSES.values():
        load()


def _child(argv: list[str], out: str, err: str, timeout: float) -> None:
    signal.alarm(max(1, math.ceil(timeout)))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
    os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
    # A fatal signal dumps the Python stack to the stderr file even while the
    # tool has fd 2 redirected (it captures Triton's messages that way).
    faulthandler.enable(file=os.dup(2))
    rc = ESCAPED
    try:
        from gemm_opt.tools.opt import main

        rc = main(argv)
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(rc if isinstance(rc, int) else ESCAPED)


def serve() -> None:
    _preload()
    for line in sys.stdin:
        req = json.loads(line)
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            _child(req["argv"], req["stdout"], req["stderr"], req["timeout"])
        _, status = os.waitpid(pid, 0)
        rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        reply = {"rc": rc, "seconds": round(time.monotonic() - start, 3)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
