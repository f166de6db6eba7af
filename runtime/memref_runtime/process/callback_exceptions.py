"""Exceptions raised in ctypes callbacks fail the test instead of vanishing.

ctypes cannot pass an exception raised in a `CFUNCTYPE` callback back through native code: it
prints "Exception ignored on calling ctypes callback function" (through `sys.unraisablehook`),
hands the native caller an undefined result, and the script goes on and may exit 0. Here the hook
still prints the traceback, and also records the exception:

- `memref_runtime.testing.run` raises `CallbackException` at the end of a case whose
  callbacks raised; the pytest plugin fails the test during which they raised;
- under lit (the site hook, lit/_site/sitecustomize.py), a process whose callbacks raised exits with status 1
  at the latest when it ends, for plain upstream-style scripts too.

JitModule's own callbacks never get here: their exceptions are re-raised by the call.
The site hook imports it in every test process: it imports nothing of numpy or MLIR.
"""

from __future__ import annotations

import atexit
import os
import sys

# typing.TYPE_CHECKING without importing typing in every test process.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


class CallbackException(RuntimeError):
    """Exceptions were raised in ctypes callbacks called from native code (tracebacks printed above)."""


class Recorder:
    """The exceptions ctypes reported from callbacks, in order; those not yet reported fail the process.

    One per process, found through `sys.unraisablehook` (so a hook installed before a fork, in
    the pre-started interpreter, is the child's too).
    """

    def __init__(self, previous: Callable[[sys.UnraisableHookArgs], object]) -> None:
        self.previous = previous
        self.errors: list[BaseException | None] = []  # None: what sys.unraisablehook may get, in theory
        self.reported = 0  # errors[:reported] made something fail already
        self.exits_nonzero = False

    def hook(self, unraisable: sys.UnraisableHookArgs) -> None:
        self.previous(unraisable)  # the traceback, printed where it always went
        if "ctypes callback" in (unraisable.err_msg or ""):
            self.errors.append(unraisable.exc_value)

    def take_pending(self) -> list:
        """The errors recorded since the last call, now counted as reported."""
        pending, self.reported = self.errors[self.reported :], len(self.errors)
        return pending

    def exit_if_pending(self) -> None:
        """At exit: status 1 if callbacks raised and nothing reported it yet."""
        pending = len(self.errors) - self.reported
        if not pending:
            return
        sys.stderr.write(
            f"memref-runtime: {pending} exception{'s' * (pending > 1)} raised in ctypes "
            "callbacks (traceback above): exit status 1\n"
        )
        flush_output()
        os._exit(1)  # an atexit handler cannot change the exit status otherwise


def flush_output() -> None:
    """Flushes Python's streams (the current and the original ones) and C's stdio: before an
    os._exit, which flushes neither, and before a fork, whose child would write the buffers again
    (the pytest plugin's isolated children)."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except (AttributeError, OSError, ValueError):  # no flush, or closed
            pass
    try:
        import ctypes  # here: importing it costs every test process ~3 ms at start-up

        ctypes.CDLL(None).fflush(None)  # what native code printed with C's stdio
    except (OSError, AttributeError):
        pass


def callback_error(pending: list, where: str) -> CallbackException:
    """The CallbackException that reports `pending` (exceptions taken from a Recorder) at `where`."""
    first = pending[0]
    return CallbackException(
        f"{where}: {len(pending)} exception{'s' * (len(pending) > 1)} raised in ctypes callbacks "
        f"(traceback above), the first {type(first).__name__}: {first}; the native code went on "
        "with an undefined result"
    )


def raise_pending(recorder: Recorder, where: str) -> None:
    """Raises CallbackException if callbacks raised since the last report."""
    pending = recorder.take_pending()
    if pending:
        raise callback_error(pending, where)


class _Hook:
    """`sys.unraisablehook` once installed: it calls the recorder, found again through it."""

    def __init__(self, recorder: Recorder) -> None:
        self.memref_runtime_recorder = recorder

    def __call__(self, unraisable: sys.UnraisableHookArgs) -> None:
        self.memref_runtime_recorder.hook(unraisable)


def install(*, exit_nonzero: bool = False) -> Recorder:
    """Wraps `sys.unraisablehook` once per process (later calls get the same Recorder).

    `exit_nonzero`: also end the process with status 1 at exit when callbacks raised and no
    `run()` case reported it (lit's test processes; never pytest's own, where the test
    framework owns the exit status).
    """
    recorder = getattr(sys.unraisablehook, "memref_runtime_recorder", None)
    if recorder is None:
        recorder = Recorder(sys.unraisablehook)
        sys.unraisablehook = _Hook(recorder)
    if exit_nonzero and not recorder.exits_nonzero:
        recorder.exits_nonzero = True
        atexit.register(recorder.exit_if_pending)
    return recorder
