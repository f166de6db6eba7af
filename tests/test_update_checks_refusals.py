"""memref-update-checks writes nothing from a run that failed (a non-zero exit, a signal, a Python
traceback, an "Exception ignored" report) or ran out of time: it says why, leaves the file as
it was and exits with 2, under --check too."""

from __future__ import annotations

import re
import textwrap
import time

import psutil
import pytest
from test_update_checks import HEADER, check_lines, needs_lit, passes_both_filechecks, suite, update, write

from memref_runtime import update_checks

pytestmark = pytest.mark.harness

assert suite  # a fixture, used by name

PYTHON = r"`python[0-9.]*`"
# Python's own report of an unraisable exception, whatever hook the suite's set-up installs.
DEFAULT_HOOK = "import sys\nsys.unraisablehook = sys.__unraisablehook__\n"

REFUSALS = {
    # name: (test body, reason pattern, a line of the excerpt)
    "exit status": ("log('last words')\nraise SystemExit(3)\n", PYTHON + " exited with status 3", "last words"),
    "SIGSEGV": (
        "import ctypes\n\nlog('before')\nctypes.string_at(0)\n",
        PYTHON + r" died by SIGSEGV \(exit status -11\)",
        None,
    ),
    "SIGABRT": ("import os\n\nlog('before')\nos.abort()\n", PYTHON + r" died by SIGABRT \(exit status -6\)", None),
    "caught and printed traceback": (
        "import traceback\n\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n    traceback.print_exc()\nlog('after')\n",
        r"a Python traceback \(ZeroDivisionError: division by zero\)",
        "Traceback (most recent call last):",
    ),
    "thread": (
        "import threading\n\nt = threading.Thread(target=lambda: 1 / 0)\nt.start()\nt.join()\nlog('after')\n",
        r"a Python traceback \(ZeroDivisionError: division by zero\)",
        "ZeroDivisionError: division by zero",
    ),
    "ctypes callback": (
        DEFAULT_HOOK + "import ctypes\n\n\n@ctypes.CFUNCTYPE(None, ctypes.c_int)\ndef callback(x):\n"
        "    raise ValueError(f'callback got {x}')\n\n\ncallback(3)\nlog('after the call')\n",
        r"an unraisable-exception report: Exception ignored \S+ calling ctypes callback function.*"
        r"\(ValueError: callback got 3\)",
        "ValueError: callback got 3",
    ),
    "__del__": (
        DEFAULT_HOOK + "class Leaky:\n    def __del__(self):\n        raise RuntimeError('in __del__')\n\n\n"
        "Leaky()\nlog('after')\n",
        r"an unraisable-exception report: Exception ignored .*__del__.*\(RuntimeError: in __del__\)",
        "RuntimeError: in __del__",
    ),
}


def assert_refused(
    capsys,
    path,
    reason: str,
    excerpt: str | None,
    run: str = "%PYTHON %s 2>&1 | FileCheck %s",
    status: str = "failed",
    options: tuple = (),
    line: int = 1,
) -> None:
    """Both ways (update and --check): exit status 2, the reason, the RUN line, the output; the
    file unchanged, byte for byte."""
    before = path.read_bytes()
    for args in ([*options, path], ["--check", *options, path]):
        code, out, err = update(capsys, *args)
        assert code == 2 and path.read_bytes() == before, out + err
        assert re.search(f"^{status}: {re.escape(str(path))}: RUN line {line}: {reason}", err, re.M), err
        assert f"; file left unchanged\n  $ {run}\n  | " in err, err
        if excerpt is not None:
            assert f"\n  | {excerpt}" in err, err
        assert f"memref-update-checks: 1 {status}\n" == out, out


@needs_lit
@pytest.mark.parametrize("kind", REFUSALS)
def test_a_failed_run_is_refused(suite, capsys, kind):
    body, reason, excerpt = REFUSALS[kind]
    assert_refused(capsys, write(suite, "refused.py", HEADER + body), reason, excerpt)


@needs_lit
def test_any_command_of_a_pipeline_counts(suite, capsys):
    """pipefail, as lit: the first command's failure is the RUN line's, though the last succeeds."""
    run = '%PYTHON -c "raise SystemExit(4)" | %PYTHON %s 2>&1 | FileCheck %s'
    path = write(suite, "pipefail.py", f"# RUN: {run}\nprint('fine')\n")
    assert_refused(capsys, path, PYTHON + " exited with status 4", None, run=run)


@needs_lit
@pytest.mark.jit
def test_a_raising_callback_called_from_jit_code_is_refused(suite, capsys):
    """Upstream's way: a CFUNCTYPE callback registered with the ExecutionEngine raises while the
    JIT-compiled kernel calls it; ctypes prints the report, the script goes on and exits with 0."""
    path = write(
        suite,
        "jit_callback.py",
        "# REQUIRES: host-supports-jit\n# RUN: %PYTHON %s 2>&1 | FileCheck %s\n"
        + textwrap.dedent('''
        import ctypes
        import sys

        from mlir.execution_engine import ExecutionEngine
        from mlir.ir import Context, Module

        from memref_runtime.testing import lower

        sys.unraisablehook = sys.__unraisablehook__

        MODULE = """
        func.func @kernel(%x: i32) attributes { llvm.emit_c_interface } {
          call @callback(%x) : (i32) -> ()
          return
        }
        func.func private @callback(i32) attributes { llvm.emit_c_interface }
        """


        @ctypes.CFUNCTYPE(None, ctypes.c_int)
        def callback(x):
            raise ValueError(f"callback got {x}")


        with Context():
            engine = ExecutionEngine(lower(Module.parse(MODULE)))
            engine.register_runtime("callback", callback)
            engine.invoke("kernel", ctypes.pointer(ctypes.c_int(7)))
        print("after the call", flush=True)
    '''),
    )
    assert_refused(
        capsys,
        path,
        r"an unraisable-exception report: Exception ignored \S+ calling ctypes callback "
        r"function.*\(ValueError: callback got 7\)",
        "ValueError: callback got 7",
        line=2,
    )


RAISES_ON_PURPOSE = """\
# RUN: not %PYTHON %s 2>&1 | FileCheck %s
# UPDATE-CHECKS: allow-traceback: the traceback is what this test shows
print("before the error", flush=True)
raise ValueError("on purpose")
"""


@needs_lit
def test_a_test_that_prints_a_traceback_on_purpose(suite, capsys):
    path = write(suite, "on_purpose.py", RAISES_ON_PURPOSE)
    status, out, err = update(capsys, path)
    assert status == 0, err
    assert check_lines(path.read_text())[1:] == [
        "# CHECK: before the error",
        "# CHECK-NEXT: Traceback (most recent call last):",
        '# CHECK-NEXT:   File "{{.*}}/on_purpose.py", line {{[0-9]+}}, in <module>',
        '# CHECK-NEXT:     raise ValueError("on purpose")',
        "# CHECK-NEXT: ValueError: on purpose",
    ]
    assert update(capsys, "--check", path)[0] == 0
    passes_both_filechecks(path)

    # The marker lifts the traceback rule only: without `not`, the exit status still counts.
    without_not = write(suite, "without_not.py", RAISES_ON_PURPOSE.replace("not %PYTHON", "%PYTHON"))
    assert_refused(capsys, without_not, PYTHON + " exited with status 1", "ValueError: on purpose")
    # Without the marker, `not` alone does not make a traceback expected.
    unmarked = write(suite, "unmarked.py", RAISES_ON_PURPOSE.replace("allow-traceback", "a comment"))
    assert_refused(
        capsys,
        unmarked,
        r"a Python traceback \(ValueError: on purpose\)",
        "ValueError: on purpose",
        run="not %PYTHON %s 2>&1 | FileCheck %s",
    )
    bare = write(suite, "bare.py", RAISES_ON_PURPOSE.replace("the traceback is what this test shows", ""))
    status, _, err = update(capsys, bare)
    assert status == 2 and "`UPDATE-CHECKS: allow-traceback:` needs a reason after the colon" in err


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@needs_lit
def test_a_hanging_test_runs_out_of_time(suite, capsys, tmp_path):
    """--timeout 10 on a test that sleeps for 60 s and has a child that sleeps too: both are
    killed, the file is left as it was. (10 s, not less: on a loaded machine the test needs
    seconds to start its child and print; a 3 s limit once cut it off before that.)"""
    pid_file = tmp_path / "child.pid"
    path = write(
        suite,
        "hangs.py",
        "# RUN: %PYTHON %s 2>&1 | FileCheck %s\n"
        + textwrap.dedent(f"""
        import subprocess
        import sys
        import time

        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        with open({str(pid_file)!r}, "w") as f:
            f.write(str(child.pid))
        print("started", flush=True)
        time.sleep(60)
    """),
    )
    start = time.monotonic()
    assert_refused(
        capsys,
        path,
        re.escape("ran out of time: more than 10 s (--timeout 10); its processes were killed"),
        "started",
        status="timed-out",
        options=("--timeout", "10"),
    )
    assert time.monotonic() - start < 50  # two runs (update, --check) of 10 s each, not of 60 s
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child), "the test's child process outlived the time limit"


@pytest.mark.parametrize("value", ["-1", "soon", "nan"])
def test_timeout_must_be_seconds(capsys, value):
    with pytest.raises(SystemExit):
        update_checks.main(["--timeout", value, "x.py"])
    assert f"expected a number of seconds >= 0 (0: no limit), got {value!r}" in capsys.readouterr().err
