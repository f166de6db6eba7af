"""A lit test's Output files to one run at a time.

Two lit runs of one suite in one exec root (a second terminal, CI's other lane, memref-update-
checks or memref-reduce beside lit) share every test's `%t` and failure report folder, and one
run's `rm -rf %t` deletes the files the other is about to read: a verdict that depends on the
timing. Whatever runs a test's RUN lines holds the test's lock meanwhile (`Output/<test>.lock`,
an flock, released however its holder ends); another run that comes to the same test waits.
Tests of one run never wait for each other: lit gives each test to one worker. A process that
holds a test's lock takes it again at once (lit --update-tests runs memref-update-checks' updater
on a failed test inside lit's run of it). The standard library only.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator

_held: set[str] = set()  # the tests' locks this process holds (flock is per open file, not process)


@contextlib.contextmanager
def exclusive(tmp_base: str) -> Iterator[str]:
    """Holds the lock of the test whose lit temporary base (`%t` without `.tmp`) is `tmp_base`
    while the block runs. Yields "" or, when another process held it first, a note saying how
    long this one waited and for which process. No lock where the exec root is not writable."""
    import fcntl

    path = os.path.abspath(tmp_base + ".lock")
    if path in _held:
        yield ""
        return
    try:
        os.makedirs(os.path.dirname(tmp_base), exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield ""
        return
    try:
        note = ""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            began = time.monotonic()
            # Now, not only once it is over: a holder that hangs would look like a hang here.
            sys.stderr.write(
                f"memref-runtime: waiting for process {holder}, which runs {os.path.basename(tmp_base)} in the "
                f"same exec root ({os.path.dirname(tmp_base)})\n"
            )
            sys.stderr.flush()
            fcntl.flock(fd, fcntl.LOCK_EX)
            note = (
                f"memref-runtime: this test waited {time.monotonic() - began:.1f} s for another run of it in "
                f"the same exec root (process {holder}, {os.path.dirname(tmp_base)}): two runs at once share "
                "its %t; `-D exec_root=DIR` gives a run a folder of its own"
            )
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        _held.add(path)
        try:
            yield note
        finally:
            _held.discard(path)
    finally:
        os.close(fd)
