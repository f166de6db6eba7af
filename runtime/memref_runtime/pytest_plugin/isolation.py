"""Crash isolation: an isolated test's call runs in a child forked from the pytest process, so a
segfault, an abort or a hang fails that test alone and the session goes on.

Which tests: every one under `--mlir-isolate` (ini `mlir_isolate = 1`), or those marked
`@pytest.mark.isolated`; `--mlir-timeout=S` (ini `mlir_timeout`) or
`@pytest.mark.isolated(timeout=S)` ends one that runs longer.

What runs where: setup and teardown, every fixture of every scope, run in the pytest process as
they always do, once; the child runs only the test function (pytest_pyfunc_call) and the
plugin's checks of it (callback exceptions, Contexts left alive), and sends back its outcome: the
exception, pickled where it can be (so `xfail(raises=...)` and `-x` work as usual), and pytest's
own report of it, with the child's traceback. What the test prints reaches pytest's capture as
usual. A crash becomes the failure of that test with the report lit prints
(lit/failure_report.py's words for how the process ended, lit/process_report.py's crash
handlers: faulthandler's Python stack, then LLVM's native one, lit/native_stack.py, whose frames
in JIT-compiled code are named: the child writes down where its JIT-compiled functions lie,
process/jit_symbols.py).

A timeout sends the child SIGABRT, whose handlers print both stacks, then SIGKILL to its process
group if it is still there 5 s later.

Why a fork of the pytest process, not a fresh interpreter per test: the child has the test as it
was collected and its fixtures as they were set up, at ~10 ms a test. A fresh interpreter costs
0.3-1 s a test (pytest, numpy and MLIR imported, the module collected again) and would set up
module- and session-scoped fixtures once per test, and tear them down there too; lit's
pre-started interpreter saves only the imports (it runs scripts, not pytest items), so it does
not help here. The price of the fork: the child has only the thread that forked. A Context made
in the pytest process (by a module-scoped fixture, or at import) whose thread pool ran
multithreaded passes there hangs in the child the next time it runs them; Contexts made by the
test itself (`with Context():`, JitModule, the `jit` fixture) are the child's own and work. The
timeout report says how many Contexts were alive at the fork. `--pdb` and `breakpoint()` need a
test that is not isolated; warnings raised in the child are not reported.
"""

from __future__ import annotations

import gc
import os
import pickle
import re
import signal
import sys
import tempfile
import time
import warnings
from collections.abc import Generator
from typing import Any, NamedTuple

import pytest

from ..process import jit_symbols
from ..process import report as process_report
from ..process.callback_exceptions import flush_output
from ..process.jit_frames import name_frames, read_map
from . import callbacks, leaks

GRACE = 5.0  # seconds from SIGABRT (print the stacks) to SIGKILL
_LONGREPR: pytest.StashKey[object] = pytest.StashKey()  # the isolated child's report.longrepr
_in_child = False  # set in an isolated child: the test runs there, not in another child


class IsolatedTestError(Exception):
    """The exception an isolated test raised, which could not be passed back from its child."""


class Isolation:
    """The hooks that run isolated tests in forked children."""

    def __init__(
        self, every_test: bool, timeout: float | None, timeout_origin: str, leak_check: leaks.LeakCheck | None
    ):
        self.every_test, self.leak_check = every_test, leak_check
        self.timeout, self.timeout_origin = timeout, timeout_origin
        self.recorder = callbacks.recorder()

    def marker_timeout(self, item: pytest.Item) -> tuple[bool, float | None, str]:
        """(isolated?, timeout in seconds or None, where the timeout was set)."""
        marker = item.get_closest_marker("isolated")
        if marker is None:
            return self.every_test, self.timeout, self.timeout_origin
        timeout = marker.kwargs.get("timeout", marker.args[0] if marker.args else None)
        if timeout is None:
            return True, self.timeout, self.timeout_origin
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout >= 0:
            raise ValueError(
                f"{item.nodeid}: @pytest.mark.isolated(timeout=...): expected a number "
                f"of seconds (0: none), got {timeout!r}"
            )
        return True, (timeout or None), "@pytest.mark.isolated(timeout=...)"

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function) -> bool | None:
        if _in_child:
            return None  # the child: the test function itself, by pytest's own implementation
        isolated, timeout, origin = self.marker_timeout(pyfuncitem)
        if not isolated:
            return None
        if not hasattr(os, "fork"):
            pytest.fail(
                "memref-runtime: an isolated test runs in a forked child, and this platform has no os.fork",
                pytrace=False,
            )
        Child(self, pyfuncitem, timeout, origin).run()
        return True

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Generator[None, Any, Any]:
        report = yield
        longrepr = item.stash.get(_LONGREPR, None)
        if longrepr is not None and call.when == "call":
            del item.stash[_LONGREPR]
            if not report.passed:  # the child's traceback, not the one of re-raising it here
                report.longrepr = longrepr
        return report


class Child:
    """One isolated call: fork, wait (with the timeout), and the outcome or the crash report."""

    def __init__(self, isolation: Isolation, item: pytest.Function, timeout: float | None, origin: str) -> None:
        self.isolation, self.item, self.timeout, self.origin = isolation, item, timeout, origin
        self.capture = capture = item.config.getoption("capture", "no")  # "no" without pytest's capture plugin
        # Under fd capture, fd 2 is pytest's capture file: the child's stderr is held back and
        # written there once the child ends normally (on a crash it is in the report instead).
        # Otherwise it is the terminal, and goes there as it comes.
        self.live = capture != "fd"

    def run(self) -> None:
        # Where the child writes down its JIT-compiled functions: the crash report names its frames with them.
        with (
            tempfile.TemporaryFile() as results,
            tempfile.TemporaryFile() as stderr,
            tempfile.NamedTemporaryFile(prefix="memref-runtime-jit-", suffix=".map") as symbols,
        ):
            self.symbols = symbols.name
            read_end, write_end = os.pipe()
            self.contexts_at_fork = leaks.live_contexts()
            flush_output()  # else what Python or C's stdio holds in a buffer would be written twice
            parent = os.getpid()
            with warnings.catch_warnings():  # Python 3.12+: xdist's threads are never the child's concern
                warnings.filterwarnings("ignore", r".*multi-threaded.*fork", DeprecationWarning)
                self.pid = os.fork()
            if self.pid == 0:
                os.close(read_end)
                self.child(parent, write_end, results.fileno())  # never returns
            os.close(write_end)
            try:
                status, timed_out = self.wait(read_end, stderr.fileno())
            finally:
                os.close(read_end)
            results.seek(0)
            stderr.seek(0)
            data, printed = results.read(), stderr.read()
            if timed_out or os.WIFSIGNALED(status) or not data:
                pytest.fail(self.crash_report(status, printed.decode(errors="replace"), timed_out), pytrace=False)
        if not self.live and printed:
            process_report.write_all(2, printed)
        self.outcome(pickle.loads(data))

    def wait(self, read_end: int, stderr: int) -> tuple[int, bool]:
        """The child's wait status, and whether it timed out; copies its fd 2 meanwhile."""
        sources = {read_end: [2] if self.live else []}
        deadline = time.monotonic() + self.timeout if self.timeout else None
        try:
            status = process_report.copy_pipes(sources, stderr, self.pid, deadline)
            if status is not None:
                return status, False
            _kill(self.pid, signal.SIGABRT)  # its crash handlers print both stacks
            status = process_report.copy_pipes(sources, stderr, self.pid, time.monotonic() + GRACE)
            _kill(-self.pid, signal.SIGKILL)  # the child, if SIGABRT did not end it, and what it started
            if status is None:
                status = os.waitpid(self.pid, 0)[1]
            return status, True
        except BaseException:  # Ctrl-C, or a bug here: the child must not outlive its test
            _kill(-self.pid, signal.SIGKILL)
            _kill(self.pid, signal.SIGKILL)
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            raise

    # --- in the child ------------------------------------------------------------------------

    def child(self, parent: int, stderr: int, results: int) -> None:
        """Runs the test, writes its outcome to `results` and exits; never returns."""
        global _in_child
        _in_child, code = True, 0
        # What the parent left for its garbage collector stays uncollected here: destroying a
        # Context of the parent joins the threads of its pool, which the child does not have.
        gc.freeze()
        try:
            from ..process.ending import dies_with

            dies_with(parent)
            os.dup2(stderr, 2)
            os.close(stderr)
            process_report.install_crash_handlers()
            jit_symbols.record(self.symbols)
            with os.fdopen(os.dup(results), "wb") as out:
                pickle.dump(self.call_in_child(), out)
        except BaseException:  # noqa: BLE001 - reported as the child's exit status, with its traceback
            import traceback

            failed = "memref-runtime: the isolated child failed:\n" + traceback.format_exc()
            process_report.write_all(2, failed.encode())
            code = 3
        finally:
            flush_output()
            os._exit(code)

    def call_in_child(self) -> dict:
        item, isolation = self.item, self.isolation
        isolation.recorder.take_pending()  # the pytest process reports its own
        exit_exceptions = (pytest.exit.Exception, KeyboardInterrupt)

        def body():
            __tracebackhide__ = True
            item.runtest()  # pytest_pyfunc_call again: pytest's own implementation, here
            callbacks.check(isolation.recorder, item, "call")

        try:
            call = pytest.CallInfo.from_call(body, when="call", reraise=exit_exceptions)
        except exit_exceptions as e:
            return {"reraise": _pickled(e)}
        report = pytest.TestReport.from_item_and_call(item, call)
        error = call.excinfo.value if call.excinfo else None
        outcome = {
            "report": item.config.hook.pytest_report_to_serializable(config=item.config, report=report),
            "exception": _pickled(error) if error is not None else None,
            "exception_text": f"{type(error).__qualname__}: {error}" if error is not None else None,
            # A failed call is not checked: its traceback holds the test's frames (leaks.py).
            "leaked": self.leaked_in_child() if error is None else 0,
        }
        if self.capture == "sys":  # the child's sys.stdout and sys.stderr are memory of its own
            capture_manager = item.config.pluginmanager.get_plugin("capturemanager")
            assert capture_manager is not None  # --capture=sys is its option
            outcome["captured"] = capture_manager.read_global_capture()
        return outcome

    def leaked_in_child(self) -> int:
        """Contexts made in the child and alive at the end of its call, after its `jit` modules are
        released (teardown runs in the pytest process, on the pytest process's copies)."""
        from .fixtures import JitFactory

        if self.isolation.leak_check is None or leaks.opted_out(self.item):
            return 0
        for value in (getattr(self.item, "funcargs", None) or {}).values():
            if isinstance(value, JitFactory):
                value.release()
        return max(0, leaks.collected_count(self.contexts_at_fork) - self.contexts_at_fork)

    # --- back in the pytest process ----------------------------------------------------------

    def outcome(self, data: dict) -> None:
        """Ends the call here as it ended in the child: returns, or raises what the test raised."""
        if "reraise" in data:
            raise _unpickled(data["reraise"]) or KeyboardInterrupt()
        if "captured" in data:
            out, err = data["captured"]
            sys.stdout.write(out)
            sys.stderr.write(err)
        if self.isolation.leak_check is not None:
            self.isolation.leak_check.child += data["leaked"]
        config = self.item.config
        report = config.hook.pytest_report_from_serializable(config=config, data=data["report"])
        if report.passed:
            return
        self.item.stash[_LONGREPR] = report.longrepr
        error = _unpickled(data["exception"]) if data["exception"] else None
        raise error if isinstance(error, BaseException) else IsolatedTestError(data["exception_text"])

    def crash_report(self, status: int, printed: str, timed_out: bool) -> str:
        """The failure of a test whose child crashed, timed out or ended early, as lit reports it."""
        from ..process.failure_report import MAX_CHARS, MAX_LINES, how_it_ended, tail

        printed = name_frames(printed, read_map(self.symbols))
        ended = how_it_ended(process_report.describe_status(status))
        child = f"its isolated child (pid {self.pid})"
        if timed_out:
            head = (
                f"memref-runtime: {self.item.nodeid} timed out after {self.timeout:g} s ({self.origin}): "
                f"{child} was sent SIGABRT for its stacks, and ended: {ended}"
            )
        elif os.WIFSIGNALED(status):
            head = f"memref-runtime: {self.item.nodeid} crashed: {child} ended: {ended}"
        else:
            head = f"memref-runtime: {self.item.nodeid}: {child} ended before the test did: {ended}"
        if timed_out and self.contexts_at_fork:
            head += (
                f"\n{self.contexts_at_fork} MLIR Context(s) made in the pytest process were alive at the fork: "
                "one whose thread pool ran there hangs in the child when it runs multithreaded passes "
                "(make it in the test, or with Context().enable_multithreading(False))"
            )
        shown, left_out = _without_harness_frames(printed)
        if not shown.strip():
            return head + "\nit wrote nothing to stderr"
        path = _kept(printed) if len(shown.splitlines()) > MAX_LINES or len(shown) > MAX_CHARS else ""
        native = ", then LLVM's native one" if _NATIVE_FRAME.search(shown) else ""
        return (
            f"{head}\nwhat it wrote to stderr (faulthandler's Python stack{native}"
            + (f"; {left_out} frames of pytest and pluggy left out" if left_out else "")
            + "):\n\n"
            + tail(shown, path)
        )


def _harness_folders() -> tuple[str, ...]:
    import pluggy

    folders = []
    for module in (pytest, sys.modules["_pytest"], pluggy, sys.modules[__package__]):
        assert module.__file__ is not None  # packages installed as files
        folders.append(os.path.dirname(os.path.abspath(module.__file__)) + os.sep)
    return (*folders, "<frozen runpy>")


_NATIVE_FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-fA-F]+ ", re.M)
_EVAL_LOOP = "_PyEval_EvalFrameDefault"  # the interpreter running Python code: below it, the Python stack


def _without_harness_frames(text: str) -> tuple[str, int]:
    """The crash dump without what sits below every test's frames: in faulthandler's Python stack
    the frames of pytest, pluggy and this plugin; in LLVM's native one everything below the first
    frame of the interpreter's eval loop (the Python stack again, as C). Returns the text and how
    many Python frames were left out."""
    folders, python_left_out = _harness_folders(), 0
    kept: list[str] = []
    native_left_out, in_interpreter = 0, False
    note_at: int | None = None  # where the native frames left out were
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith('File "') and stripped[6:].startswith(folders):
            python_left_out += 1
            continue
        if _NATIVE_FRAME.match(line):
            if in_interpreter:
                native_left_out += 1
                note_at = len(kept) if note_at is None else note_at
                continue
            in_interpreter = _EVAL_LOOP in line
        kept.append(line)
    if note_at is not None:  # native_left_out > 0
        kept.insert(
            note_at, f"  ... {native_left_out} more native frames: the interpreter running the Python stack above"
        )
    return "\n".join(kept), python_left_out


def _kept(text: str) -> str:
    """A file holding all of a crashed child's stderr, for a report that shows only its end."""
    fd, path = tempfile.mkstemp(prefix="memref-runtime-crash-", suffix=".stderr")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


# pytest's outcome exceptions say they are builtins (for their display), so pickle cannot find
# them by name: they travel as their kind and attributes. Subclasses before their bases.
_OUTCOMES = (
    ("xfail", pytest.xfail.Exception),
    ("fail", pytest.fail.Exception),
    ("skip", pytest.skip.Exception),
    ("exit", pytest.exit.Exception),
)


class _Outcome(NamedTuple):
    kind: str
    args: tuple
    attributes: dict


def _pickled(value) -> bytes | None:
    kind = next((k for k, cls in _OUTCOMES if type(value) is cls), None)
    try:
        return pickle.dumps(_Outcome(kind, value.args, dict(vars(value))) if kind else value)
    except Exception:  # noqa: BLE001 - an exception of any kind may refuse pickling
        return None


def _unpickled(data: bytes | None):
    try:
        value = pickle.loads(data) if data else None
    except Exception:  # noqa: BLE001 - e.g. an __init__ with required keyword arguments
        return None
    if isinstance(value, _Outcome):
        cls = dict(_OUTCOMES)[value.kind]
        outcome = cls.__new__(cls)
        outcome.args = value.args
        vars(outcome).update(value.attributes)
        return outcome
    return value


def _kill(pid: int, signo: int) -> None:
    try:
        os.kill(pid, signo)
    except (ProcessLookupError, PermissionError):
        pass
