"""The pre-started interpreter behind `%PYTHON` under `lit -D python_server=1`.

One server per test environment (client.py names it by a hash of the interpreter and
the environment, and starts it on first use). It imports numpy, the MLIR bindings and the
runtime once, before any MLIR Context or Python thread exists, then forks one child per
command. The child takes the command's argv, environment (os.environ and C's environ), working
directory, umask, signal state and standard streams, calls `sitecustomize.setup_process()`,
and runs the script, `-c` code or `-m` module as a fresh interpreter would; its exit status or
the signal that killed it goes back to the client, which ends the same way.

Isolation: each child is its own process group and dies with the server (PR_SET_PDEATHSIG);
when a client's socket closes before its child ended (lit --timeout killed the client), the
server kills the child's process group. The server ends when the process named by
MEMREF_RUNTIME_PYTHON_SERVER_OWNER (the lit run) ends, or on SIGTERM.

What a forked child cannot make as a fresh interpreter would, and so differs (docs/speed.md):
modules the server imported are already in sys.modules, the hash seed (PYTHONHASHSEED) is the
server's, and the child has no controlling terminal.
"""

from __future__ import annotations

import errno
import gc
import io
import os
import selectors
import signal
import socket
import struct
import sys
import types
from typing import Any

from ..process.ending import dies_with
from .client import OWNER_ENV, RECORD, VOLATILE_ENV

# What the tests import, imported once here (a module missing from a provider is skipped).
# Not upstream's mlir.runtime: it imports ml_dtypes, ~0.7 s of CPU at every server start, for
# the few tests that import it (they import it themselves; under -D mlir_runtime=memref_runtime
# it is an alias of memref_runtime.np_to_memref, preloaded below).
PRELOAD = (
    "numpy",
    "ctypes",
    "mlir.ir",
    "mlir.passmanager",
    "mlir.execution_engine",
    "memref_runtime",
    "memref_runtime.np_to_memref",
    "memref_runtime.testing",
    "memref_runtime.jit",
)


class _Shutdown(Exception):
    """SIGTERM or the owner's end: stop serving."""


def _record(tag: bytes, value: int) -> bytes:
    return tag + value.to_bytes(4, "big", signed=True)


def _environment(env: dict) -> dict:
    return {k: v for k, v in env.items() if k not in VOLATILE_ENV}


def _preload() -> None:
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # the test that imports it fails the same way
            pass


class Server:
    """Accepts commands on `folder/key.sock` and forks a child for each (see the module docstring)."""

    def __init__(self, folder: str, key: str):
        self.path = os.path.join(folder, key + ".sock")
        self.pid_path = os.path.join(folder, key + ".pid")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(128)
        with open(self.pid_path, "w") as f:
            f.write(str(os.getpid()))
        self.selector = selectors.DefaultSelector()
        self.children: dict[int, tuple] = {}  # pidfd -> (pid, connection)
        self.connections: dict[int, tuple] = {}  # connection fd -> (pid, pidfd)
        self.pid = os.getpid()
        self.owner_fd: int | None = None

    # --- what a fresh interpreter of this configuration starts with ---------------------------

    def snapshot(self) -> None:
        """Records the state every child starts from: taken after the imports, before serving."""
        self.environment = _environment(dict(os.environb))
        # None: a handler installed by native code (kept in the child as it is).
        self.signals = {s: signal.getsignal(s) for s in signal.valid_signals()}
        self.stdio = {
            name: (getattr(sys, name).encoding, getattr(sys, name).errors) for name in ("stdin", "stdout", "stderr")
        }
        self.buffered = not sys.stdout.write_through  # type: ignore[union-attr]  # a TextIOWrapper here
        self.main = sys.modules.get("__main__")  # the server's own, which a child replaces

    # --- serving --------------------------------------------------------------------------

    def serve(self, owner: int | None) -> dict | None:
        """Serves until shut down (returns None) or, in a forked child, returns its request."""
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        if owner is not None:
            try:
                self.owner_fd = os.pidfd_open(owner)
            except ProcessLookupError:
                return None
            self.selector.register(self.owner_fd, selectors.EVENT_READ, "owner")

        def terminate(signo, frame):
            raise _Shutdown

        signal.signal(signal.SIGTERM, terminate)
        gc.collect()
        gc.freeze()  # the children need not scan or copy what the server holds
        try:
            while True:
                for key, _ in self.selector.select():
                    what = key.data
                    if what == "owner":
                        return None
                    if what == "accept":
                        request = self.accept()
                        if request is not None:
                            return request  # in the child
                    elif what == "child":
                        self.reap(key.fd)
                    else:
                        self.from_client(key.fd)
        except _Shutdown:
            return None
        finally:
            if os.getpid() == self.pid:
                self.shutdown()

    def accept(self) -> dict | None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return None
        try:
            conn.settimeout(30)
            uid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))[1]
            if uid != os.getuid():
                raise OSError(errno.EPERM, "a client of another user")
            request, fds = self.receive(conn)
        except (OSError, ValueError, EOFError):
            conn.close()
            return None
        if _environment(request["env"]) != self.environment:  # a hash collision: never share
            self.refuse(conn, fds)
            return None
        try:
            pid = os.fork()
        except OSError:
            self.refuse(conn, fds)
            return None
        if pid == 0:
            self.become_child(conn)
            request["fds"] = fds
            return request
        for fd in fds:  # the pipes must close when the child's copies do
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        conn.setblocking(False)
        self.selector.register(pidfd, selectors.EVENT_READ, "child")
        self.selector.register(conn, selectors.EVENT_READ, "client")
        self.children[pidfd] = (pid, conn)
        self.connections[conn.fileno()] = (pid, pidfd)
        self.send(conn, _record(b"P", pid))
        return None

    @staticmethod
    def receive(conn: socket.socket) -> tuple[dict, list]:
        import marshal

        fd_space = socket.CMSG_SPACE(4 * struct.calcsize("i"))
        header, ancillary, _, _ = conn.recvmsg(8, fd_space)
        fds: list[int] = []
        for level, kind, data in ancillary:
            if (level, kind) == (socket.SOL_SOCKET, socket.SCM_RIGHTS):
                fds += struct.unpack(f"{len(data) // 4}i", data[: len(data) // 4 * 4])
        try:
            while len(header) < 8:
                chunk = conn.recv(8 - len(header))
                if not chunk:
                    raise EOFError("short header")
                header += chunk
            size = int.from_bytes(header, "big")
            payload = bytearray()
            while len(payload) < size:
                chunk = conn.recv(min(size - len(payload), 1 << 20))
                if not chunk:
                    raise EOFError("short request")
                payload += chunk
            if len(fds) != 4:
                raise ValueError(f"expected 4 file descriptors, got {len(fds)}")
            return marshal.loads(bytes(payload)), fds
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise

    def refuse(self, conn: socket.socket, fds: list[int]) -> None:
        for fd in fds:
            os.close(fd)
        self.send(conn, _record(b"F", 0))
        conn.close()

    @staticmethod
    def send(conn: socket.socket, data: bytes) -> None:
        try:
            conn.setblocking(True)
            conn.sendall(data)
        except OSError:  # the client is gone (killed): nobody to tell
            pass

    def from_client(self, fd: int) -> None:
        pid, pidfd = self.connections[fd]
        conn = self.children[pidfd][1]
        try:
            data = conn.recv(RECORD)
            if 0 < len(data) < RECORD:  # a record split in two: the rest follows at once
                conn.settimeout(5)
                while 0 < len(data) < RECORD:
                    more = conn.recv(RECORD - len(data))
                    data = data + more if more else b""
                conn.setblocking(False)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if len(data) == RECORD and data[:1] == b"K":  # a signal the client received
            try:
                signal.pidfd_send_signal(pidfd, int.from_bytes(data[1:], "big", signed=True))
            except (OSError, ValueError):
                pass
            return
        # The client is gone before its child ended (lit --timeout kills the client's process
        # tree, which the child is not part of): the child and what it started end too.
        self.selector.unregister(conn)
        del self.connections[fd]
        conn.close()
        self.children[pidfd] = (pid, None)
        self.kill_group(pid)

    def reap(self, pidfd: int) -> None:
        pid, conn = self.children.pop(pidfd)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if conn is not None:
            self.selector.unregister(conn)
            del self.connections[conn.fileno()]
            self.send(conn, _record(b"S", -code) if code < 0 else _record(b"E", code))
            conn.close()

    @staticmethod
    def kill_group(pid: int) -> None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass

    def shutdown(self) -> None:
        for pid, _ in self.children.values():
            self.kill_group(pid)
        for path in (self.path, self.pid_path):
            try:
                os.unlink(path)
            except OSError:
                pass

    # --- in the child ---------------------------------------------------------------------

    def become_child(self, conn: socket.socket) -> None:
        """Leaves the server's role: own process group, dies with the server, no server fds."""
        dies_with(self.pid)
        for s, handler in self.signals.items():  # SIGTERM's, first of all
            if handler is not None and signal.getsignal(s) is not handler:
                signal.signal(s, handler)
        signal.set_wakeup_fd(-1)
        for pid_conn in self.children.values():
            if pid_conn[1] is not None:
                pid_conn[1].close()
        for pidfd in self.children:
            os.close(pidfd)
        self.selector.close()  # the epoll fd only: what it watched is closed here
        if self.owner_fd is not None:
            os.close(self.owner_fd)
        conn.close()
        self.listener.close()


def create_stdio(fd: int, write: bool, name: str, encoding: str, errors: str, buffered: bool) -> io.TextIOWrapper:
    """sys.stdin/stdout/stderr as CPython makes them at start-up (pylifecycle.c create_stdio)."""
    buffering = -1 if buffered or not write else 0
    # Any: which io class open() makes depends on the mode and buffering computed here.
    buf: Any = open(fd, "wb" if write else "rb", buffering, closefd=False)
    raw = buf.raw if buffering else buf
    raw.name = name
    line_buffering = buffered and (raw.isatty() or fd == 2)
    stream = io.TextIOWrapper(buf, encoding, errors, "\n", line_buffering, not buffered)
    stream.mode = "w" if write else "r"  # type: ignore[misc]  # an instance attribute, as CPython sets it
    return stream


def _strip_frames(tb):
    """The traceback without the server's own frames (the boot's and this module's)."""
    here = globals()
    while tb is not None and (tb.tb_frame.f_back is None or tb.tb_frame.f_globals is here):
        tb = tb.tb_next
    return tb


def take_request(server: Server, request: dict) -> None:
    """Makes this forked child look like a fresh interpreter started for `request`."""
    os.environb.clear()  # os.environ and C's environ (putenv/unsetenv)
    os.environb.update(request["env"])
    os.umask(request["umask"])
    stdin, stdout, stderr, cwd = request["fds"]
    os.fchdir(cwd)
    os.close(cwd)
    for target, fd in ((0, stdin), (1, stdout), (2, stderr)):
        os.dup2(fd, target)
    for fd in {stdin, stdout, stderr} - {0, 1, 2}:
        os.close(fd)
    for s in request["ignored"]:
        signal.signal(s, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_SETMASK, request["blocked"])
    streams = {}
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        encoding, errors = server.stdio[name]
        streams[name] = create_stdio(fd, fd > 0, f"<{name}>", encoding, errors, server.buffered)
    sys.stdin, sys.stdout, sys.stderr = streams["stdin"], streams["stdout"], streams["stderr"]
    # The test's streams are this child's original ones (typeshed says they never change).
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr  # type: ignore[misc]
    import faulthandler

    if faulthandler.is_enabled():  # PYTHONFAULTHANDLER: onto the test's stderr
        faulthandler.enable(sys.stderr, all_threads=True)
    if "tempfile" in sys.modules:  # gettempdir() caches TMPDIR, which may differ (lit's own)
        import tempfile

        tempfile.tempdir = None
    if "numpy.random" in sys.modules:  # a fresh interpreter seeds NumPy's global generator anew
        sys.modules["numpy.random"].seed()
    timing = sys.modules.get("memref_runtime.process.timing")
    if timing is not None:
        timing.start_process()
    set_command_line(request["argv"], request["executable"])
    site = sys.modules.get("sitecustomize")
    if site is not None and hasattr(site, "setup_process"):
        site.setup_process()


def _new_main(**attrs) -> types.ModuleType:
    import builtins

    main = types.ModuleType("__main__")
    main.__dict__.update(__builtins__=builtins, __annotations__={}, **attrs)
    sys.modules["__main__"] = main
    return main


def set_command_line(argv: list, executable: str) -> None:
    """sys.argv, sys.orig_argv and sys.path[0] as a fresh `python argv...` has them at start-up
    (before site: sys.argv[0] is '-m' for a module until runpy finds it)."""
    sys.orig_argv = [executable] + argv
    if argv[0] in ("-m", "-c"):
        sys.argv = [argv[0]] + argv[2:]
        sys.path[0] = os.getcwd() if argv[0] == "-m" else ""
    else:
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.realpath(argv[0]))


def run_command(argv: list) -> None:
    """Runs `python argv...` here (set_command_line first): a script, `-c CODE` or `-m MODULE`."""
    import importlib.machinery

    if argv[0] == "-m":
        import runpy

        _new_main(__loader__=importlib.machinery.BuiltinImporter)
        runpy._run_module_as_main(argv[1], alter_argv=True)  # type: ignore[attr-defined]  # what `python -m` runs
        return
    if argv[0] == "-c":
        code = compile(argv[1], "<string>", "exec", dont_inherit=True)
        main = _new_main(__loader__=importlib.machinery.BuiltinImporter)
    else:
        path = os.path.abspath(argv[0])
        with open(path, "rb") as f:
            source = f.read()
        code = compile(source, path, "exec", dont_inherit=True)
        main = _new_main(
            __file__=path, __cached__=None, __loader__=importlib.machinery.SourceFileLoader("__main__", path)
        )
    exec(code, main.__dict__)


def exit_status(code: object) -> int:
    """The exit status of `raise SystemExit(code)`, its message printed (CPython's _Py_HandleSystemExit)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(str(code) + "\n")
    except Exception:
        pass
    return 1


def finish(status: int, server: Server, signo: int | None = None) -> None:
    """Ends the child as Py_FinalizeEx would end a fresh interpreter, less the teardown of the
    modules (for the preloaded ones the same for every test, and ~25 ms of copy-on-write).

    Non-daemon threads are joined, atexit functions run, stdout is flushed (120 if that fails),
    then the test's globals (`__main__`) are cleared and collected, so that the destructors of
    what the test left behind run as they would have. Other modules are not torn down: clearing
    them under live gc callbacks and finalizers (hypothesis has one) would fail where CPython's
    ordered teardown does not.
    With `signo`, the process ends by that signal (CPython's end after a KeyboardInterrupt).
    """
    import atexit
    import threading

    threading._shutdown()  # type: ignore[attr-defined]  # what Py_FinalizeEx calls: joins non-daemon threads
    atexit._run_exitfuncs()
    if sys.stdout is not None and not sys.stdout.closed:
        try:
            sys.stdout.flush()
        except Exception as e:  # CPython: PyErr_WriteUnraisable(stdout), then status 120
            import traceback

            sys.stderr.write(
                f"Exception ignored in: {sys.stdout!r}\n" + "".join(traceback.format_exception_only(type(e), e))
            )
            status = 120
    main = sys.modules.get("__main__")
    if main is not server.main and isinstance(main, types.ModuleType):
        main.__dict__.clear()  # the test's globals, as CPython clears __main__ early at shutdown
    del main
    sys.last_type = sys.last_value = sys.last_traceback = None
    gc.collect()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    if signo is not None:
        signal.signal(signo, signal.SIG_DFL)
        os.kill(os.getpid(), signo)
    os._exit(status)


def hide_server_frames(argv: list) -> None:
    """MLIR's locations from Python tracebacks (`loc_tracebacks()`) skip the server's frames, which
    a fresh interpreter does not have: this module's, and the boot's `-c` code unless the test's
    own code is `-c` code too (then its frames keep the same name)."""
    for name, module in list(sys.modules.items()):
        register = getattr(getattr(module, "globals", None), "register_traceback_file_exclusion", None)
        if name.endswith("._mlir_libs._mlir") and register is not None:
            register(__file__)
            if argv[0] != "-c":
                register("<string>")


def run_child(server: Server, request: dict) -> None:
    """The child's whole life: take the request, run it, end as a fresh interpreter would."""
    take_request(server, request)
    hide_server_frames(request["argv"])
    try:
        run_command(request["argv"])
    except SystemExit as e:
        finish(exit_status(e.code), server)
    except BaseException as e:
        tb = _strip_frames(e.__traceback__)
        e = e.with_traceback(tb)
        sys.last_type, sys.last_value, sys.last_traceback = type(e), e, tb
        sys.excepthook(type(e), e, tb)
        signo = signal.SIGINT if isinstance(e, KeyboardInterrupt) else None
        del e, tb
        finish(1, server, signo)
    finish(0, server)


def main(argv: list) -> None:
    """`python -c BOOT FOLDER KEY READY_FD`, run by client.py."""
    folder, key, ready = argv[0], argv[1], int(argv[2])
    os.umask(0o077)
    server = Server(folder, key)
    os.write(ready, b"1")  # listening: clients may connect (they wait in the backlog)
    os.close(ready)
    _preload()
    timing = sys.modules.get("memref_runtime.process.timing")
    if timing is not None:
        timing.stop_process()  # the server's own time is nobody's
    server.snapshot()
    owner = os.environ.get(OWNER_ENV)
    request = server.serve(int(owner) if owner else None)
    if request is None:
        os._exit(0)
    run_child(server, request)
