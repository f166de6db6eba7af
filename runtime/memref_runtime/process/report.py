"""What a test process under lit records for the failure report that `lit -v` shows.

lit's before hook (lit/failure_report.py) exports MEMREF_RUNTIME_REPORT, a folder of the test's
Output/; `_site/sitecustomize.py` calls `setup_process()` in every Python process of the test.
When that variable is set it

- installs the crash handlers: faulthandler (the Python stack of every thread) and, once the MLIR
  bindings are loaded, LLVM's (the native stack, native_stack.py), both on stderr (or, when no
  loaded library has LLVM's, a note "native stack unavailable: ..." in `<folder>/<pid>.notes`);
- writes down where each JIT-compiled function lies, in `<folder>/<pid>.jit` (jit_symbols.py),
  so that the report names the native frames of a crash in JIT-compiled code (jit_frames.py);
- makes exceptions raised in ctypes callbacks end the process with status 1
  (callback_exceptions.py);
- in a test process (a script or `-m` module, not a tool such as the Python filecheck), copies
  everything written to file descriptors 1 and 2 into `<folder>/<pid>.out`, and the exit status
  into `<folder>/<pid>.record`.

The copy: the process forks; the child returns from `setup_process()` and runs the test, with
fds 1 and 2 on pipes (one pipe when both were the same file, as under `2>&1`, so the report has
the order of events); the parent, the process lit started, copies what comes through to the
original destinations unchanged and to the report, waits for the child and ends as it did
(same exit status, or killed by the same signal). Since the parent outlives the test, nothing
the test printed before a crash is lost, and lit reads the report only once it is complete.

Imported by the site hook in every test process: nothing here imports numpy or MLIR, and what
only a crash or the copier needs (native_stack, select, _signal) is imported when needed.
"""

from __future__ import annotations

import faulthandler
import os
import sys
import time

# select and _signal are imported by the copier only, after the fork: the test process never
# pays for them. _signal, not signal, which imports enum (~3 ms of CPU per process).
from ..environment import REPORT as REPORT_ENV

# "dev:ino" of the pipes a report copier reads: a process started by a test process writes
# through them already and is not copied twice.
from ..environment import REPORT_PIPES as COPIED_ENV
from .ending import end_like

# Python programs that are tools of a RUN line, not tests: their output is lit's to show.
TOOLS = frozenset({"filecheck", "lit", "llvm-lit", "memref-update-checks"})

# --- crash handlers ----------------------------------------------------------------------------

_BINDINGS_CORE = "._mlir_libs._mlir"  # the extension every MLIR Python package loads first


def _enable_faulthandler() -> None:
    faulthandler.enable(file=sys.__stderr__ or sys.stderr, all_threads=True)


def _install_native_stack() -> None:
    """LLVM's handlers under faulthandler's, so a crash prints the Python stack, then the native one."""
    try:
        from . import native_stack as native

        faulthandler.disable()  # re-enabled on top: faulthandler runs first, then chains to LLVM
        try:
            native.install()
        finally:
            _enable_faulthandler()
    except Exception as e:  # noqa: BLE001 - a report without the native stack beats no test
        note(f"native stack unavailable: {e}")


def note(text: str) -> None:
    """Adds a line to this process's part of the failure report (never to its output, which
    FileCheck may be reading)."""
    try:
        with open(os.path.join(os.environ[REPORT_ENV], f"{os.getpid()}.notes"), "a") as f:
            f.write(text + "\n")
    except (KeyError, OSError):
        pass


# Plain classes, not importlib.abc's: importing that costs ~14 ms in every test process.
class _LoadedThen:
    """Loads a module with `loader`, then calls `then()`."""

    def __init__(self, loader, then):
        self.loader, self.then = loader, then

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        self.then()


class _OnBindingsLoaded:
    """Installs the native-stack handlers once the MLIR bindings' library is loaded, so a
    process that never imports MLIR never pays for it."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.endswith(_BINDINGS_CORE):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                # A loader by duck typing: importlib.abc.Loader costs ~14 ms per test process.
                spec.loader = _LoadedThen(spec.loader, self.loaded)  # type: ignore[assignment]
                return spec
        return None

    def loaded(self):
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        _install_native_stack()


def _record_jit_functions(folder: str) -> None:
    """Where each JIT-compiled function lies, in `<folder>/<pid>.jit`: the report names the
    frames of a crash in JIT-compiled code with it (jit_symbols.py, jit_frames.py)."""
    try:
        from . import jit_symbols

        jit_symbols.record(os.path.join(folder, f"{os.getpid()}.jit"), notify=note)
    except Exception as e:  # noqa: BLE001 - a report without names beats no test
        note(f"frames of JIT-compiled code unnamed: {e}")


def install_crash_handlers() -> None:
    """faulthandler now; LLVM's native-stack handlers when the MLIR bindings load (or now, when
    a pre-started interpreter loaded them already)."""
    _enable_faulthandler()
    if any(name.endswith(_BINDINGS_CORE) for name in list(sys.modules)):
        _install_native_stack()
    elif not any(isinstance(f, _OnBindingsLoaded) for f in sys.meta_path):
        sys.meta_path.insert(0, _OnBindingsLoaded())


# --- the copy of fds 1 and 2 -------------------------------------------------------------------


def is_test_process(argv: list[str], orig_argv: list[str] | tuple[str, ...] = ()) -> bool:
    """A script or `-m` module run by a RUN line, not `-c` code (toolchain.py's stand-ins for
    `not`/`count`) nor a Python tool (filecheck) whose output lit shows itself. `argv` is
    `sys.argv` at start-up (`-m` for a module, whose name only `sys.orig_argv` has)."""
    if not argv or argv[0] in ("", "-c", "-"):
        return False
    if argv[0] == "-m":
        name = orig_argv[orig_argv.index("-m") + 1] if "-m" in orig_argv[:-1] else ""
    else:
        name = os.path.splitext(os.path.basename(argv[0]))[0]
    return name.split(".")[0] not in TOOLS


def _identity(fd: int):
    """(st_dev, st_ino) of what fd `fd` is open on; None when it is closed or a terminal."""
    try:
        if os.isatty(fd):
            return None  # a terminal: a pipe would change C stdio's buffering; lit never has one
        st = os.fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def write_all(fd: int, data: bytes) -> bool:
    """Writes all of `data`; False when `fd` no longer takes any (its reader is gone)."""
    import select

    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            select.select([], [fd], [])
        except OSError:
            return False
    return True


def _write_record(path: str, record: dict) -> None:
    """`record` as a Python literal (failure_report.py reads it with ast.literal_eval; the json
    module would cost each test process ~4 ms of imports)."""
    temporary = path + ".tmp"
    with open(temporary, "w") as f:
        f.write(repr(record))
    os.replace(temporary, path)


def copy_pipes(sources: dict, report: int | None, child: int, deadline: float | None = None) -> int | None:
    """Copies each pipe in `sources` (read fd -> destination fds) to its destinations and to
    `report` until every pipe is closed, or the child has ended and its pipes stay quiet
    (a grandchild keeping them open); returns the child's wait status. With a `deadline`
    (time.monotonic()), returns None once it passes with the child still running (the pytest
    plugin's timeout); a later call goes on copying."""
    import select

    poller = select.poll()
    for fd in sources:
        poller.register(fd, select.POLLIN)
    open_pipes, quiet_since = set(sources), None
    status: int | None = None
    while open_pipes:
        if status is None and deadline is not None and time.monotonic() > deadline:
            return None
        events = poller.poll(100)
        for fd, _ in events:
            try:
                data = os.read(fd, 65536)
            except InterruptedError:
                continue
            if not data:
                poller.unregister(fd)
                open_pipes.discard(fd)
                continue
            if report is not None and not write_all(report, data):
                report = None  # a full disk loses the report, never the test's output
            sources[fd] = [d for d in sources[fd] if write_all(d, data)]
        if status is None:
            pid, wait_status = os.waitpid(child, os.WNOHANG)
            status = wait_status if pid else None
        if status is not None and not events:
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since > 0.2:
                break
        elif events:
            quiet_since = None
    while status is None and deadline is not None:  # the pipes closed before the child ended
        pid, status = os.waitpid(child, os.WNOHANG)
        status = status if pid else None
        if status is None:
            if time.monotonic() > deadline:
                return None
            time.sleep(0.01)
    if status is None:
        status = os.waitpid(child, 0)[1]
    return status


def copy_output_to_report(folder: str) -> None:
    """Forks: returns in the child, which runs the test; the parent copies and never returns."""
    identities = {fd: _identity(fd) for fd in (1, 2)}
    if not any(identities.values()):
        return
    copied = set(filter(None, os.environ.get(COPIED_ENV, "").split(",")))
    if any(i and f"{i[0]}:{i[1]}" in copied for i in identities.values()):
        return  # started by a test process: its copier has this output already
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    # fd -> pipe (read end, write end); fds 1 and 2 on the same file share one pipe.
    pipes: dict = {}
    for fd, identity in identities.items():
        if identity is None:
            continue
        shared = next((pipes[other] for other, i in identities.items() if other in pipes and i == identity), None)
        pipes[fd] = shared or os.pipe()
    started = time.time()
    base = os.path.join(folder, str(os.getpid()))
    record = {"argv": list(getattr(sys, "orig_argv", sys.argv)), "cwd": os.getcwd(), "start": started}
    try:
        report = os.open(base + ".out", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        _write_record(base + ".record", record)
    except OSError as e:
        sys.stderr.write(f"memref-runtime: no failure report ({e}); the test runs without one\n")
        return
    child = os.fork()
    if child == 0:
        for fd, (_, write_end) in pipes.items():
            os.dup2(write_end, fd)
        for read_end, write_end in set(pipes.values()):
            os.close(read_end)
            os.close(write_end)
        os.close(report)
        os.environ[COPIED_ENV] = ",".join(sorted(copied | {"{}:{}".format(*_identity(fd)) for fd in pipes}))
        return
    # The copier: the process lit waits for. It never returns: an exception back in
    # sitecustomize would make it run the test a second time.
    try:
        _copy_and_end_like_child(child, pipes, report, base, record)
    finally:
        os._exit(125)


def _copy_and_end_like_child(child: int, pipes: dict, report: int, base: str, record: dict) -> None:
    import _signal as signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the child, which decides
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, lambda n, _frame: os.kill(child, n))
    sources: dict = {}  # read end -> [the fd it replaced]: under 2>&1 one file, written once
    for fd, (read_end, _write_end) in pipes.items():
        sources.setdefault(read_end, [fd])
    for _read_end, write_end in set(pipes.values()):
        os.close(write_end)
    try:
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # stdin is the test's alone
    except OSError:
        pass
    try:
        status = copy_pipes(sources, report, child)
    except BaseException:  # noqa: BLE001 - never lose the child's status to a copier bug
        for read_end in sources:  # nor leave it blocked on a pipe nobody reads
            os.close(read_end)
        status = os.waitpid(child, 0)[1]
    assert status is not None  # copy_pipes returns None only past a deadline, and none is given
    record.update(pid=child, end=time.time(), **describe_status(status))
    try:
        _write_record(base + ".record", record)
    except OSError:
        pass
    end_like(status)


def describe_status(status: int) -> dict:
    """The end of wait status `status` in words: exit code, or signal number, name and text
    (failure_report.how_it_ended reads it; so does the pytest plugin's isolation)."""
    import _signal as signal

    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        names = [
            n for n in dir(signal) if n.startswith("SIG") and not n.startswith("SIG_") and getattr(signal, n) == number
        ]
        name = min(names, key=lambda n: (n in ("SIGIOT", "SIGPOLL", "SIGCLD"), n), default=f"signal {number}")
        return {"signal": number, "signal_name": name, "signal_text": signal.strsignal(number) or ""}
    return {"exit_code": os.WEXITSTATUS(status)}


def setup_process() -> None:
    """Per-process set-up under lit's failure report (nothing when MEMREF_RUNTIME_REPORT is unset)."""
    folder = os.environ.get(REPORT_ENV)
    if not folder or not os.path.isdir(folder):
        return
    if is_test_process(sys.argv, getattr(sys, "orig_argv", [])):
        copy_output_to_report(folder)  # the copier never returns from here
    install_crash_handlers()
    _record_jit_functions(folder)
    from . import callback_exceptions

    callback_exceptions.install(exit_nonzero=True)
