"""`%PYTHON` under `lit -D python_server=1`: runs a test's Python command in a pre-started interpreter.

lit runs `python -I -S client.py ARGS...` where it would run `python ARGS...`. This
client starts in a few milliseconds (no site, only built-in and tiny modules), finds the server
of its configuration (one per test environment, started on first use), hands it the command
line, the environment, the working directory, the umask, the signal state and file descriptors
0, 1 and 2 (SCM_RIGHTS), then waits: the server forks a child that runs the command as a fresh
interpreter would, and the client ends exactly as that child ended, with its exit status or by
the same signal. A signal sent to the client (lit's Ctrl-C, say) is forwarded to the child; a
client killed outright (lit --timeout) closes its socket, and the server kills the child.

Anything the server cannot reproduce exactly (interpreter options such as -u or -X, a script
read from stdin, a closed standard stream, no server folder) runs in a fresh interpreter
instead: the client execs `python ARGS...` in its own process. So does a command run by
`not --crash`: its crash report shows a fresh interpreter's stacks, not the server's frames.

The protocol (one Unix stream socket per command):
  client -> server: 8-byte length, then marshal({argv, env, umask, ignored, blocked}), with
                    SCM_RIGHTS [stdin, stdout, stderr, cwd] on the first byte
  server -> client: 5-byte records: b"P" pid (the child started), b"E" status (it exited),
                    b"S" signal (it was killed), b"F" 0 (run a fresh interpreter instead)
  client -> server: 5-byte records b"K" signal: deliver this signal to the child
"""

import _signal
import _socket
import marshal
import os
import sys

# typing.TYPE_CHECKING without importing typing: this client starts in a few milliseconds. (No
# `from __future__ import annotations` either, for the same reason: annotations of names from
# typing are quoted.)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

# Copies of memref_runtime.environment's names: this script imports nothing of the package
# (tests/test_layout.py checks that they are the same).
DIR_ENV = "MEMREF_RUNTIME_PYTHON_SERVER_DIR"  # the lit run's private folder of servers
OWNER_ENV = "MEMREF_RUNTIME_PYTHON_SERVER_OWNER"  # the pid whose end ends the servers
# The only variables that may differ between two commands that share a server (the child
# takes the command's values anyway): read when used, never at import. lit sets the test's
# name, and its temporary folder after loading the configuration; a shell sets `_`; the failure
# report (lit/failure_report.py) exports a folder per test, which setup_process() reads; memref-reduce
# a candidate per run, which JitModule reads. (The child forgets tempfile's cached folder.)
VOLATILE_ENV = (
    b"LIT_CURRENT_TESTCASE",
    b"TMP",
    b"TMPDIR",
    b"TEMP",
    b"TEMPDIR",
    b"_",
    b"MEMREF_RUNTIME_REPORT",
    b"MEMREF_RUNTIME_REPORT_PIPES",
    b"MEMREF_RUNTIME_CANDIDATE",
)
# LLVM's `not --crash` sets this for the command it runs, which is meant to crash: that runs in
# a fresh interpreter, so that its crash report (Python and native stacks) is a fresh one's.
EXPECTED_CRASH_ENV = "LLVM_DISABLE_SYMBOLIZATION"
# Delivered to the child rather than handled here.
FORWARDED_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM")
# Python ignores these itself at start-up, so what the client inherited cannot be told apart.
PYTHON_IGNORES = ("SIGPIPE", "SIGXFSZ")
RECORD = 5
SERVER_START_TIMEOUT = 120.0


def servable(argv: list) -> bool:
    """Whether the server runs `python argv...` exactly: a script file, -c CODE or -m MODULE."""
    if not argv:
        return False
    if argv[0] in ("-c", "-m"):
        return len(argv) >= 2
    return not argv[0].startswith("-") and os.path.isfile(argv[0])


def server_key(env: dict) -> str:
    """The name of the server for this interpreter and environment."""
    import _sha1  # type: ignore[import-not-found]  # no stub; hashlib would cost this client ~3 ms

    digest = _sha1.sha1(os.fsencode(sys.executable))
    for name in sorted(env):
        if name not in VOLATILE_ENV:
            digest.update(name + b"=" + env[name] + b"\0")
    return digest.hexdigest()[:20]


def exec_python(argv: list) -> "NoReturn":
    """Runs `python argv...` in this process: a fresh interpreter."""
    os.execv(sys.executable, [sys.executable] + argv)


def _connect(path: str) -> _socket.socket:
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        raise
    return sock


def _start_server(folder: str, key: str) -> None:
    """Starts the server of `key`, detached from this process, and waits until it listens."""
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # first child: a new session, then the server's parent exits at once, so
        try:  # the server is no descendant of this test (lit --timeout kills those)
            os.setsid()
            if os.fork():
                os._exit(0)
            _exec_server(folder, key, ready_w)
        finally:
            os._exit(127)
    os.close(ready_w)
    os.waitpid(pid, 0)
    try:
        os.read(ready_r, 1)  # the server writes one byte once it listens (or closes on failure)
    finally:
        os.close(ready_r)


def _exec_server(folder: str, key: str, ready_w: int) -> None:
    log = os.open(os.path.join(folder, key + ".log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.set_inheritable(ready_w, True)
    os.closerange(3, ready_w)
    os.closerange(ready_w + 1, 65536)
    # As a fresh interpreter finds them: Python ignores SIGPIPE and SIGXFSZ in this process.
    for name in PYTHON_IGNORES:
        _signal.signal(getattr(_signal, name), _signal.SIG_DFL)
    _signal.pthread_sigmask(_signal.SIG_SETMASK, [])
    os.chdir(folder)
    # The server runs as `python -c` (no interpreter option), so sys.flags are a fresh test's; it
    # imports memref_runtime as the tests do (installed, or from the tests' PYTHONPATH).
    boot = "import sys; from memref_runtime.pyserver.server import main; main(sys.argv[1:])"
    os.execv(sys.executable, [sys.executable, "-c", boot, folder, key, str(ready_w)])


def connect(folder: str, key: str) -> _socket.socket:
    """A connection to the server of `key` in `folder`, started first if it is not running."""
    path = os.path.join(folder, key + ".sock")
    try:
        return _connect(path)
    except OSError:
        pass
    import fcntl

    lock = os.open(os.path.join(folder, key + ".lock"), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one client starts it; the others wait and connect
        try:
            return _connect(path)
        except OSError:
            pass
        try:
            os.unlink(path)  # a dead server's
        except FileNotFoundError:
            pass
        _start_server(folder, key)
        return _connect(path)
    finally:
        os.close(lock)


def request(argv: list) -> bytes:
    """What the server needs to run `python argv...` as this process would."""
    umask = os.umask(0)
    os.umask(umask)
    names = {getattr(_signal, n) for n in PYTHON_IGNORES}
    ignored = [s for s in _signal.valid_signals() if s not in names and _signal.getsignal(s) == _signal.SIG_IGN]
    blocked = list(_signal.pthread_sigmask(_signal.SIG_BLOCK, []))
    env = dict(os.environb)
    return marshal.dumps(
        {
            "argv": argv,
            "executable": sys.orig_argv[0],
            "env": env,
            "umask": umask,
            "ignored": ignored,
            "blocked": blocked,
        }
    )


def _record(tag: bytes, value: int) -> bytes:
    return tag + value.to_bytes(4, "big", signed=True)


def _receive(sock) -> tuple:
    data = b""
    while len(data) < RECORD:
        chunk = sock.recv(RECORD - len(data))
        if not chunk:
            return b"", 0
        data += chunk
    return data[:1], int.from_bytes(data[1:], "big", signed=True)


def die_like(signo: int) -> "NoReturn":
    """Ends this process by signal `signo`, as the child ended: memref_runtime.process.ending's,
    imported only now (this script starts without the package on its path)."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from memref_runtime.process.ending import die_like as end_by

    end_by(signo)


def main(argv: list) -> "NoReturn":
    folder = os.environ.get(DIR_ENV)
    if not folder or not servable(argv) or EXPECTED_CRASH_ENV in os.environ:
        exec_python(argv)
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:  # a fresh interpreter would make sys.std* None: not reproduced
            exec_python(argv)
    try:
        cwd = os.open(".", getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY)
    except OSError:
        exec_python(argv)
    try:
        sock = connect(folder, server_key(dict(os.environb)))
    except OSError:
        exec_python(argv)  # no server: a fresh interpreter
    payload = request(argv)
    header = len(payload).to_bytes(8, "big")
    fds = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in (0, 1, 2, cwd))
    sock.sendmsg([header], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
    sock.sendall(payload)
    os.close(cwd)

    def forward(signo, frame):
        try:
            sock.sendall(_record(b"K", signo))
        except OSError:
            pass

    started = False
    while True:
        tag, value = _receive(sock)
        if tag == b"P":  # the child runs: from now on signals to this process go to it
            started = True
            for name in FORWARDED_SIGNALS:
                if _signal.getsignal(getattr(_signal, name)) != _signal.SIG_IGN:
                    _signal.signal(getattr(_signal, name), forward)
        elif tag == b"E":
            sys.stdout = sys.stderr = None  # nothing of ours to flush at exit
            os._exit(value)
        elif tag == b"S":
            die_like(value)
        elif tag == b"F":
            sock.close()
            exec_python(argv)
        elif not started:  # the server went away before it started the command
            exec_python(argv)
        else:  # the server went away (killed): the child is gone with it
            sys.stderr.write("memref-runtime python server: connection lost before the test ended\n")
            os._exit(125)


if __name__ == "__main__":
    main(sys.argv[1:])
