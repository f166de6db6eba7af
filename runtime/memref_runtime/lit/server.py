"""The lit side of the harness's speed features (configure()'s last step).

- `-D python_server=1|0`: `%PYTHON` runs each test command in a child forked from a pre-started
  interpreter (python_client.py, python_server.py) instead of a fresh one. The servers of a lit
  run live in a private folder made here, and end with the lit run (at exit here, or when they
  see this process end).
- `-D record_check_input=DIR`: what each test pipes into FileCheck or count is also written to
  DIR/<test>.input (benchmarks/compare_python_server.py diffs it between two runs).
- `-D timing=DIR`: each test process writes where its time went to DIR (memref_runtime.timing;
  benchmarks/suite.py reads it).

Runs in lit's own interpreter: nothing here imports numpy or MLIR.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import sys
import tempfile
import time

from .python_client import DIR_ENV, OWNER_ENV
from .test_format import Before

TIMING_ENV = "MEMREF_RUNTIME_TIMING"
DEFAULT_PYTHON_SERVER = True
CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_client.py")
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


def configure(config, lit_config, params, parse_flag) -> None:
    """The server behind %PYTHON, input recording, timing (configure()'s last step: it rewrites
    %PYTHON and needs the final environment)."""
    wanted = parse_flag(params.get("python_server", str(int(DEFAULT_PYTHON_SERVER))), "-D python_server")
    reason = unsupported_reason()
    if wanted and reason:
        if "python_server" in params:
            lit_config.warning(f"-D python_server=1: {reason}; every test runs in a fresh interpreter")
        wanted = False
    if wanted:
        folder = start_run()
        config.environment[DIR_ENV] = folder
        config.environment[OWNER_ENV] = str(os.getpid())
        config.available_features.add("python-server")
        python = next((_unquoted(v) for k, v in config.substitutions if k == "%PYTHON"), sys.executable)
        config.substitutions[:] = [
            (key, client_command(python) if key == "%PYTHON" else value) for key, value in config.substitutions]
        if not LISTING_OPTIONS.intersection(sys.argv[1:]):  # tests will run
            prestart(python, config.environment)
    if params.get("timing"):
        config.environment[TIMING_ENV] = os.path.abspath(params["timing"])
    if params.get("record_check_input"):
        folder = os.path.abspath(params["record_check_input"])
        os.makedirs(folder, exist_ok=True)
        config.test_format.before_hooks.append(InputRecorder(folder))


# lit options that list and stop before any test runs (--show-all and the other --show-<result>
# options run the tests; --version exits before any configuration is read).
LISTING_OPTIONS = frozenset({"--show-suites", "--show-tests", "--show-used-features"})

_prestarted = []  # the client that starts the server, kept until lit's exit (no zombie warning)


def prestart(python: str, environment: dict) -> None:
    """Starts the server of the suite's configuration now, while lit discovers the tests, so
    the first tests need not wait for its imports (a test whose environment differs gets a
    server of its own on first use)."""
    import subprocess

    try:
        _prestarted.append(subprocess.Popen(
            [python, "-I", "-S", CLIENT, "-c", "pass"], env=dict(environment), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    except OSError:
        pass  # the first test starts it


def _unquoted(value: str) -> str:
    return value[1:-1] if len(value) > 1 and value[0] == value[-1] == '"' else value


def input_name(test_name: str) -> str:
    """The file name under which a test's checked input is recorded."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", test_name.split("::", 1)[-1].strip()) + ".input"


class InputRecorder:
    """Before hook: `| FileCheck` and `| count` become `| tee -a DIR/<test>.input | ...`.

    A plain class (no closure): lit pickles the test format, hooks included, for its workers.
    """

    def __init__(self, folder: str):
        self.folder = folder

    def __call__(self, test, lit_config):
        path = os.path.join(self.folder, input_name(test.getFullName()))
        if os.path.exists(path):
            os.unlink(path)  # a rerun starts afresh
        # lit escapes backslashes in replacements (no group references): a lookahead instead.
        return Before(substitutions=[(r"\|\s*(?=(FileCheck|count)\b)", f"| tee -a {path} | ")])
