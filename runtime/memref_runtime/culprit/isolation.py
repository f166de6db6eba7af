"""One job in a child forked from this process: a candidate that crashes, aborts or hangs ends
the child, not the bisection or the reduction.

The child gets this process as it was at the fork (the job is a closure: nothing is pickled on
the way in); it sends back the job's value, pickled, and its stdout and stderr go to a file whose
tail describes a crash, or, for a child that hangs, its Python stack just before it is killed.
A job should make its own MLIR Context: a Context of the parent whose thread pool ran
multithreaded passes hangs in a child (pytest_plugin/isolation.py says why), and so does
destroying one, which is why the child never collects the parent's garbage.
"""

from __future__ import annotations

import contextlib
import faulthandler
import gc
import os
import pickle
import select
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any, NamedTuple

TAIL = 2000  # characters of a crashed child's output kept for its description


class Ended(NamedTuple):
    """How a child ended: `value` when `how` is "ok", else what happened ("crash", "timeout")."""

    how: str  # "ok", "crash", "timeout"
    value: Any
    description: str  # "killed by SIGSEGV (Segmentation fault)", "no answer after 30 s"
    output: str  # the tail of what the child printed


def _signal_name(number: int) -> str:
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
    return f"{name} ({signal.strsignal(number)})"


def _read_all(fd: int, deadline: float) -> bytes | None:
    """Everything written to `fd` until EOF, None when the deadline passes first."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _child(job: Callable[[], Any], write_fd: int, out_fd: int, timeout: float) -> None:
    # What the parent left for its garbage collector stays uncollected here: destroying a Context
    # of the parent joins the threads of its pool, which the child does not have, for ever.
    gc.freeze()
    os.setpgid(0, 0)  # a timeout then ends the child's own children (a check's commands) too
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    if faulthandler.is_enabled():  # pytest's writes to a copy of the old stderr: the crash goes to the file
        faulthandler.enable(file=sys.__stderr__ or sys.stderr, all_threads=True)
    if timeout > 1:  # where a child that hangs is: its Python stack, just before the kill
        faulthandler.dump_traceback_later(timeout - 0.5, file=sys.__stderr__ or sys.stderr)
    try:
        data = pickle.dumps(("ok", job()))
    except BaseException as e:  # noqa: BLE001 - the parent says what went wrong
        data = pickle.dumps(("error", f"{type(e).__name__}: {e}"))
    with os.fdopen(write_fd, "wb") as pipe:
        pipe.write(data)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def run_forked(job: Callable[[], Any], timeout: float) -> Ended:
    """Runs `job()` in a forked child, killed after `timeout` seconds (0: no limit); a job that
    raised raises RuntimeError here (jobs return their failures as values)."""
    read_fd, write_fd = os.pipe()
    with tempfile.TemporaryFile() as out:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(read_fd)
            _child(job, write_fd, out.fileno(), timeout)
        os.close(write_fd)
        try:
            deadline = time.monotonic() + (timeout if timeout > 0 else 1e9)
            data = _read_all(read_fd, deadline)
            if data is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
        finally:
            os.close(read_fd)
            _, status = os.waitpid(pid, 0)
        out.seek(0)
        output = out.read().decode(errors="replace")[-TAIL:]
    if data is None:
        return Ended("timeout", None, f"no answer after {timeout:g} s (killed)", output)
    if data:
        how, value = pickle.loads(data)
        if how == "error":
            raise RuntimeError(f"a job in a forked child failed: {value}\n{output}")
        return Ended("ok", value, "", output)
    if os.WIFSIGNALED(status):
        return Ended("crash", None, f"killed by {_signal_name(os.WTERMSIG(status))}", output)
    return Ended("crash", None, f"exited with status {os.waitstatus_to_exitcode(status)} before answering", output)
