"""The pre-started Python server behind %PYTHON: a command run through it ends, prints and sees
exactly what it would in a fresh interpreter; crashes, timeouts and signals stay isolated; one
server per configuration; nothing is left running."""

import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support.paths import REPO

RUNTIME = REPO / "runtime"
SITE = RUNTIME / "memref_runtime" / "lit" / "_site"


from memref_runtime import environment  # noqa: E402
from memref_runtime.pyserver import lifecycle as server_lit  # noqa: E402

pytestmark = [
    pytest.mark.harness,
    pytest.mark.skipif(server_lit.unsupported_reason() is not None, reason=str(server_lit.unsupported_reason())),
]
CLIENT = shlex.split(server_lit.client_command(sys.executable))


@pytest.fixture
def folder():
    """A lit run's folder of servers, owned by this process; its servers stopped afterwards."""
    path = server_lit.start_run()
    yield path
    server_lit.stop_servers(path)


def server_env(folder, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMREF_RUNTIME_PYTHON_SERVER")}
    env.update(PYTHONPATH=os.pathsep.join([str(SITE), str(RUNTIME)]), **extra)
    env.update({environment.PYTHON_SERVER_DIR: folder, environment.PYTHON_SERVER_OWNER: str(os.getpid())})
    env.pop("PYTEST_CURRENT_TEST", None)  # changes per test: one server for the whole module
    return env


def both(folder, args, *, input=None, cwd=None, **extra):
    """(fresh, through the server): the same command, environment, stdin and cwd."""
    env = server_env(folder, **extra)
    runs = []
    for prefix in ([sys.executable], CLIENT):
        runs.append(subprocess.run(prefix + args, input=input, capture_output=True, env=env, cwd=cwd, timeout=120))
    return runs


def assert_same(fresh, served):
    assert (served.returncode, served.stdout, served.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)


def script(tmp_path, text, name="t.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def server_pid(folder, **extra) -> int:
    """The parent of a command run through the client: the server of that environment."""
    out = subprocess.run(
        CLIENT + ["-c", "import os; print(os.getppid())"],
        capture_output=True,
        text=True,
        env=server_env(folder, **extra),
        check=True,
    )
    return int(out.stdout)


@pytest.mark.parametrize(
    "ending, status",
    [
        ("pass", 0),
        ("import sys; sys.exit(3)", 3),
        ("import sys; sys.exit(256 + 7)", 7),
        ("import sys; sys.exit('a message')", 1),
        ("import sys; sys.exit(None)", 0),
        ("raise ValueError('boom')", 1),
        ("import os; os._exit(42)", 42),
    ],
)
def test_exit_status_and_stderr_are_a_fresh_interpreters(folder, tmp_path, ending, status):
    path = script(tmp_path, f"print('before')\n{ending}\n")
    fresh, served = both(folder, [str(path)])
    assert fresh.returncode == status
    assert_same(fresh, served)


@pytest.mark.parametrize("signo", [signal.SIGSEGV, signal.SIGABRT, signal.SIGTERM, signal.SIGKILL])
def test_death_by_signal_is_reproduced(folder, signo):
    fresh, served = both(folder, ["-c", f"import os; print('x', flush=True); os.kill(os.getpid(), {int(signo)})"])
    assert fresh.returncode == served.returncode == -signo
    assert served.stdout == b"x\n"


def test_keyboard_interrupt_ends_by_sigint_after_the_traceback(folder):
    fresh, served = both(folder, ["-c", "raise KeyboardInterrupt"])
    assert fresh.returncode == -signal.SIGINT
    assert_same(fresh, served)


def test_argv_path_file_and_main_module(folder, tmp_path):
    path = script(
        tmp_path,
        """
        import sys
        print(sys.argv, sys.path[0], __file__, __name__, __spec__, __package__, sys.orig_argv[1:])
        print(sys.flags, type(__loader__).__name__, sorted(k for k in globals() if k.startswith('__')))
    """,
    )
    fresh, served = both(folder, [str(path), "a b", "--x"])
    assert fresh.returncode == 0, fresh.stderr
    assert_same(fresh, served)
    fresh, served = both(folder, ["t.py", "rel"], cwd=tmp_path)  # a relative path, as lit gives %s
    assert_same(fresh, served)


def test_dash_c_and_dash_m(folder, tmp_path):
    code = "import sys; print(sys.argv, repr(sys.path[0]), __name__, sorted(globals()))"
    assert_same(*both(folder, ["-c", code, "arg"], cwd=tmp_path))
    script(tmp_path, "import sys; print(sys.argv[1:], __name__, __file__ == sys.argv[0])\n", "mod.py")
    fresh, served = both(folder, ["-m", "mod", "arg"], cwd=tmp_path)
    assert fresh.stdout == b"['arg'] __main__ True\n"
    assert_same(fresh, served)


def test_traceback_shows_the_tests_frames_only(folder, tmp_path):
    path = script(tmp_path, "def f():\n    raise RuntimeError('deep')\nf()\n")
    fresh, served = both(folder, [str(path)])
    assert b"Traceback" in fresh.stderr and b"python_server" not in served.stderr
    assert_same(fresh, served)
    path = script(tmp_path, "x = (\n", "syntax.py")
    assert_same(*both(folder, [str(path)]))


def test_cwd_environment_and_umask(folder, tmp_path):
    code = (
        "import ctypes, os; libc = ctypes.CDLL(None); libc.getenv.restype = ctypes.c_char_p;"
        "print(os.getcwd(), os.environ['SPEED_X'], libc.getenv(b'SPEED_X'), os.umask(0),"
        " 'PYTEST_CURRENT_TEST' in os.environ)"
    )
    fresh, served = both(folder, ["-c", code], cwd=tmp_path, SPEED_X="value one")
    assert fresh.stdout.split()[:3] == [str(tmp_path).encode(), b"value", b"one"]
    assert_same(fresh, served)


def test_standard_streams(folder):
    code = (
        "import sys; data = sys.stdin.read(); print(repr(data)); print('err', file=sys.stderr);"
        "print([(s.name, s.mode, s.encoding, s.errors, s.line_buffering, s.isatty(), s.fileno())"
        " for s in (sys.stdin, sys.stdout, sys.stderr)], sys.stdin is sys.__stdin__)"
    )
    fresh, served = both(folder, ["-c", code], input=b"line 1\nline 2\n")
    assert b"line 1" in fresh.stdout
    assert_same(fresh, served)


def test_stdout_flush_failure_at_exit_is_status_120(folder):
    code = "import sys; sys.stdout = open('/dev/full', 'w'); print('lost')"
    fresh, served = both(folder, ["-c", code])
    assert fresh.returncode == 120
    assert_same(fresh, served)


def test_open_file_descriptors_are_a_fresh_interpreters(folder):
    code = "import os; print(sorted(int(f) for f in os.listdir('/proc/self/fd')))"
    assert_same(*both(folder, ["-c", code]))


def test_atexit_threads_and_destructors_run_at_the_end(folder):
    code = textwrap.dedent("""
        import atexit, threading, time
        class Noisy:
            def __del__(self):
                print("destructor", flush=True)
        keep = Noisy()
        atexit.register(print, "atexit")
        threading.Thread(target=lambda: (time.sleep(0.2), print("thread"))).start()
    """)
    fresh, served = both(folder, ["-c", code])
    assert fresh.stdout.split() == [b"thread", b"atexit", b"destructor"]
    assert_same(fresh, served)


def test_the_child_has_no_mlir_context_and_one_thread(folder):
    code = (
        "import threading; from mlir.ir import Context; import numpy;"
        "print(Context._get_live_count(), threading.active_count(), numpy.random.rand() != 0.5)"
    )
    fresh, served = both(folder, ["-c", code])
    assert fresh.stdout == b"0 1 True\n"
    assert_same(fresh, served)


def test_the_server_does_not_import_ml_dtypes(folder):
    """Its import costs ~0.7 s of CPU at every server start (upstream's mlir.runtime imports it):
    left to the tests that use it, as in a fresh interpreter."""
    code = "import sys; import memref_runtime.jit; print('ml_dtypes' in sys.modules)"
    fresh, served = both(folder, ["-c", code])
    assert fresh.stdout == b"False\n"
    assert_same(fresh, served)


def test_global_numpy_random_state_differs_between_children(folder):
    code = "import numpy; print(numpy.random.rand())"
    outs = {subprocess.run(CLIENT + ["-c", code], capture_output=True, env=server_env(folder)).stdout for _ in range(3)}
    assert len(outs) == 3


def test_interpreter_options_run_in_a_fresh_interpreter(folder):
    fresh, served = both(folder, ["-u", "-c", "import os, sys; print(sys.stdout.write_through, os.getppid())"])
    assert served.stdout.split()[0] == b"True"
    assert int(served.stdout.split()[1]) != server_pid(folder)


def test_a_command_expected_to_crash_runs_in_a_fresh_interpreter(folder):
    # LLVM's `not --crash` sets LLVM_DISABLE_SYMBOLIZATION for the command it runs.
    code = "import os; print(os.getppid())"
    out = subprocess.run(
        CLIENT + ["-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=server_env(folder, LLVM_DISABLE_SYMBOLIZATION="1"),
    )
    assert int(out.stdout) != server_pid(folder)
    assert int(out.stdout) == os.getpid()  # the client exec'd python: its parent is this process


def test_modules_imported_by_the_test_keep_working_until_the_end(folder, tmp_path):
    script(
        tmp_path,
        textwrap.dedent("""
        import gc, sys
        _write = sys.stderr.write
        def callback(phase, info):
            _write("")  # a module global, used by a gc callback until the very end
        gc.callbacks.append(callback)
    """),
        "helper.py",
    )
    fresh, served = both(folder, ["-c", "import helper, gc; gc.collect(); print('done')"], cwd=tmp_path)
    assert fresh.stdout == b"done\n" and fresh.stderr == b""
    assert_same(fresh, served)


def test_a_changed_temporary_folder_is_seen_by_the_same_server(folder, tmp_path):
    code = "import os, tempfile; print(os.getppid(), tempfile.gettempdir())"
    first = subprocess.run(CLIENT + ["-c", code], capture_output=True, text=True, env=server_env(folder), check=True)
    second = subprocess.run(
        CLIENT + ["-c", code], capture_output=True, text=True, check=True, env=server_env(folder, TMPDIR=str(tmp_path))
    )
    assert first.stdout.split()[0] == second.stdout.split()[0]  # one server
    assert second.stdout.split()[1] == str(tmp_path)


def test_one_server_per_environment(folder):
    first = server_pid(folder)
    assert server_pid(folder) == first
    other = server_pid(folder, MEMREF_RUNTIME_OPT_LEVEL="0")
    assert other != first
    assert len(server_lit.server_pids(folder)) == 2


def test_a_killed_client_takes_its_child_and_grandchildren_along(folder, tmp_path):
    pids = tmp_path / "pids"
    code = textwrap.dedent(f"""
        import os, subprocess, time
        grandchild = subprocess.Popen(["sleep", "60"])
        open({str(pids)!r}, "w").write(f"{{os.getpid()}} {{grandchild.pid}}")
        time.sleep(60)
    """)
    client = subprocess.Popen(CLIENT + ["-c", code], env=server_env(folder))
    deadline = time.monotonic() + 30
    while not (pids.exists() and pids.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    child, grandchild = map(int, pids.read_text().split())
    client.kill()  # as lit --timeout does (SIGKILL to the client's process tree)
    client.wait()
    deadline = time.monotonic() + 10
    while (
        any(Path(f"/proc/{p}").exists() and "Z" not in _state(p) for p in (child, grandchild))
        and time.monotonic() < deadline
    ):
        time.sleep(0.05)
    assert not any(Path(f"/proc/{p}").exists() and "Z" not in _state(p) for p in (child, grandchild))


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_a_signal_to_the_client_reaches_the_child(folder, tmp_path):
    ready = tmp_path / "ready"
    code = (
        f"import signal, time; signal.signal(signal.SIGUSR1, lambda *a: print('got it', flush=True) or exit(5));"
        f"open({str(ready)!r}, 'w').close(); time.sleep(30)"
    )
    client = subprocess.Popen(CLIENT + ["-c", code], env=server_env(folder), stdout=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    client.send_signal(signal.SIGUSR1)
    out, _ = client.communicate(timeout=30)
    assert (client.returncode, out) == (5, b"got it\n")


def _processes_owned_by(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if f"{environment.PYTHON_SERVER_OWNER}={pid}".encode() + b"\0" in environ + b"\0":
                found.append(int(entry.name))
    return found


def test_lit_with_the_server_passes_and_leaves_nothing_running(tmp_path):
    lit = Path(sys.executable).parent / "lit"
    if not lit.exists():
        pytest.skip("lit is not installed next to this interpreter")
    results = tmp_path / "results.json"
    run = subprocess.Popen(
        [
            str(lit),
            "-s",
            "-D",
            "python_server=1",
            "-D",
            f"exec_root={tmp_path / 'out'}",
            "-o",
            str(results),
            "lit_tests/harness_environment.py",
            "lit_tests/typed_errors.py",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    out, _ = run.communicate(timeout=300)
    assert run.returncode == 0, out.decode()
    assert {t["code"] for t in json.loads(results.read_text())["tests"]} == {"PASS"}
    deadline = time.monotonic() + 10
    while _processes_owned_by(run.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_owned_by(run.pid) == []


def test_servers_end_when_their_owner_ends(tmp_path):
    path = server_lit.start_run()
    try:
        owner = subprocess.Popen(["sleep", "60"])
        env = server_env(path)
        env[environment.PYTHON_SERVER_OWNER] = str(owner.pid)
        subprocess.run(CLIENT + ["-c", "pass"], env=env, check=True)
        (pid,) = server_lit.server_pids(path)
        owner.kill()
        owner.wait()
        deadline = time.monotonic() + 10
        while Path(f"/proc/{pid}").exists() and _state(pid) != "Z" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not Path(f"/proc/{pid}").exists() or _state(pid) == "Z"
    finally:
        server_lit.stop_servers(path)
