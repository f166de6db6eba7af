"""Starting and stopping the pre-started interpreters of one lit run.

`start_run()` makes the run's private folder (mode 0700: only this user connects) and stops
every server in it when lit exits; `prestart()` starts the suite's server while lit discovers
the tests; `client_command()` is what `%PYTHON` becomes. Runs in lit's own interpreter: nothing
here imports numpy or MLIR.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import sys
import tempfile
import time

CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "client.py")
# A Unix socket path holds at most 107 bytes on Linux: the folder plus "/<20 hex>.sock".
MAX_FOLDER_LENGTH = 80
STOP_TIMEOUT = 5.0


def unsupported_reason() -> str | None:
    """Why this machine cannot run the server (None if it can)."""
    if not sys.platform.startswith("linux"):
        return f"needs Linux (fork, SCM_RIGHTS, pidfd), this is {sys.platform}"
    if not hasattr(os, "pidfd_open") or not hasattr(signal, "pidfd_send_signal"):
        return "needs os.pidfd_open (Python >= 3.9 on Linux >= 5.3)"
    return None


def client_command(python: str) -> str:
    """What `%PYTHON` becomes: the client, in an interpreter without site (a few ms)."""
    return " ".join(f'"{p}"' if " " in p else p for p in (python, "-I", "-S", CLIENT))


def start_run() -> str:
    """A private folder for this lit run's servers, removed (servers stopped) at exit."""
    folder = tempfile.mkdtemp(prefix="mr-pyserver-")  # mode 0700: only this user connects
    if len(folder) > MAX_FOLDER_LENGTH:
        shutil.rmtree(folder, ignore_errors=True)
        folder = tempfile.mkdtemp(prefix="mr-pyserver-", dir="/tmp")
    atexit.register(stop_servers, folder)
    return folder


def server_pids(folder: str) -> list[int]:
    """The pids of the servers running for `folder` (each writes <key>.pid while it serves)."""
    pids = []
    for name in os.listdir(folder) if os.path.isdir(folder) else ():
        if name.endswith(".pid"):
            try:
                with open(os.path.join(folder, name)) as f:
                    pids.append(int(f.read()))
            except (OSError, ValueError):
                pass
    return pids


def stop_servers(folder: str) -> None:
    """Ends every server of `folder` (and so their children), then removes the folder."""
    handles = []
    for pid in server_pids(folder):
        try:
            handles.append(os.pidfd_open(pid))
        except OSError:
            pass
    for fd in handles:
        try:
            signal.pidfd_send_signal(fd, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.monotonic() + STOP_TIMEOUT
    import select

    for fd in handles:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        if not poller.poll(max(0.0, deadline - time.monotonic()) * 1000):
            try:
                signal.pidfd_send_signal(fd, signal.SIGKILL)
            except OSError:
                pass
        os.close(fd)
    shutil.rmtree(folder, ignore_errors=True)


_prestarted: list = []  # the clients that start the servers, reaped at lit's exit (no zombie, no warning)


def _reap_prestarted() -> None:
    """At exit: waits for the clients that started servers (a second or two at most), so that
    none is left running or unreaped; one that takes longer is ended."""
    import subprocess

    for client in _prestarted:
        try:
            client.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            client.kill()
            client.wait()


def prestart(python: str, environment: dict) -> None:
    """Starts the server of the suite's configuration now, while lit discovers the tests, so
    the first tests need not wait for its imports (a test whose environment differs gets a
    server of its own on first use)."""
    import subprocess

    try:
        _prestarted.append(
            subprocess.Popen(
                [python, "-I", "-S", CLIENT, "-c", "pass"],
                env=dict(environment),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    except OSError:
        return  # the first test starts it
    if len(_prestarted) == 1:
        atexit.register(_reap_prestarted)
