"""The pytest plugin's crash isolation, in a throw-away pytest project run by a fresh pytest: a
crash, an abort or a hang fails its test alone, with the signal, the test id and both stacks, and
the session goes on; also under pytest-xdist; outcomes other than a crash come back as they were."""

from __future__ import annotations

import importlib.util
import os
import re

import pytest
from support.engine import HAVE_JIT
from support.subprocesses import make_pytest_project, run_pytest
from support.workers import run_once

pytestmark = [
    pytest.mark.jit,
    pytest.mark.skipif(not HAVE_JIT, reason="no MLIR Python bindings with an ExecutionEngine"),
]

# LLVM's handler names the native frames where it finds llvm-symbolizer: the llvm wheel ships one
# (torch-mlir does not, and its frames are addresses).
SYMBOLIZED = (
    importlib.util.find_spec("llvm") is not None and (os.environ.get("MEMREF_RUNTIME_BINDINGS") or "mlir") == "mlir"
)
NATIVE_FRAME = r"^ *#\d+ 0x[0-9a-f]+ "

CRASHES = '''
import ctypes
import time

import numpy as np
import pytest
from mlir.ir import Context, Module

from memref_runtime.testing import execution_engine, lower

ADD = """
func.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %out: memref<?xf32>) {
  linalg.add ins(%a, %b : memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>)
  return
}
"""
NULL_STORE = """
func.func @crash() attributes {llvm.emit_c_interface} {
  %p = llvm.mlir.zero : !llvm.ptr
  %c = arith.constant 42 : i32
  llvm.store %c, %p : i32, !llvm.ptr
  return
}
"""
ASSERTS = """
func.func @check(%x: i32) attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0 : i32
  %ok = arith.cmpi eq, %x, %zero : i32
  cf.assert %ok, "x must be zero"
  return
}
"""
RAISES = """
func.func private @callback(i32) -> i32 attributes {llvm.emit_c_interface}
func.func @main(%x: i32) -> i32 attributes {llvm.emit_c_interface} {
  %r = call @callback(%x) : (i32) -> i32
  return %r : i32
}
"""
KEEP = []
MADE_AT_IMPORT = Context()  # alive at every fork: a hang's report names it


def test_a_segfault():
    print("printed before the crash")
    ctypes.string_at(0)


def test_after_the_crash(jit):
    a = np.arange(4, dtype=np.float32)
    out = np.empty_like(a)
    jit(ADD).add(a, a, out)
    assert out.tolist() == [0, 2, 4, 6]


def test_jit_code_segfaults():
    with Context():
        engine = execution_engine(lower(Module.parse(NULL_STORE)))
    engine.invoke("crash")


def test_a_failed_assert_aborts():
    with Context():
        engine = execution_engine(lower(Module.parse(ASSERTS)))
    engine.invoke("check", ctypes.pointer(ctypes.c_int32(3)))


@pytest.mark.isolated(timeout=1)
def test_hangs():
    time.sleep(60)


def test_fails():
    value = 3
    assert value == 4


def test_skips():
    pytest.skip("skipped in the child")


def test_xfails():
    pytest.xfail("xfailed in the child")


@pytest.mark.xfail(raises=ValueError, strict=True)
def test_raises_what_xfail_expects():
    raise ValueError("expected")


@pytest.mark.xfail(reason="it crashes")
def test_crash_under_xfail():
    ctypes.string_at(0)


def test_a_callback_raises():
    @ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32)
    def callback(x):
        raise ValueError(f"no value for {x}")

    with Context():
        engine = execution_engine(lower(Module.parse(RAISES)))
    engine.register_runtime("callback", callback)
    engine.invoke("main", ctypes.pointer(ctypes.c_int32(7)), ctypes.pointer(ctypes.c_int32()))


def test_leaks_a_context():
    KEEP.append(Context())


def test_last():
    pass
'''


def outcomes(stdout: str) -> dict[str, str]:
    """test name -> PASSED/FAILED/... from `-rA`'s short summary (ERROR lines apart; SKIPPED lines
    name a location, not a test)."""
    found = {}
    for word, name in re.findall(r"^(PASSED|FAILED|SKIPPED|XFAIL|XPASS|ERROR) (?:\[\d+\] )?\S*?::(\w+)", stdout, re.M):
        found.setdefault(name, word) if word != "ERROR" else found.setdefault(name + " (teardown)", word)
    return found


def section(stdout: str, test: str) -> str:
    """The failure report of `test` (from its `____ test ____` line to the next such line)."""
    match = re.search(rf"^_+ {test} _+$\n(.*?)(?=^_{{3,}} |^=+ )", stdout, re.M | re.S)
    assert match, f"no report of {test} in:\n{stdout}"
    return match.group(1)


@pytest.fixture(scope="module")
def isolated_run(request, tmp_path_factory):
    return run_once(
        request,
        tmp_path_factory,
        "isolated-run",
        lambda folder: run_pytest(make_pytest_project(folder, {"test_crashes.py": CRASHES}), "--mlir-isolate", "-rA"),
    )


def test_a_crash_fails_its_test_and_the_session_goes_on(isolated_run):
    found = outcomes(isolated_run.stdout)
    assert found["test_a_segfault"] == "FAILED"
    assert found["test_after_the_crash"] == "PASSED"
    assert found["test_last"] == "PASSED"
    assert isolated_run.returncode == 1
    assert (
        "memref-runtime: opt level 2, runtime verification off, isolation: every test, Context leak check on"
        in isolated_run.stdout
    )  # the header


def test_the_report_has_the_signal_the_test_id_and_both_stacks(isolated_run):
    text = section(isolated_run.stdout, "test_a_segfault")
    assert text.startswith("memref-runtime: test_crashes.py::test_a_segfault crashed: its isolated child (pid ")
    assert "ended: killed by SIGSEGV (Segmentation fault)" in text
    python_stack = text.split("Current thread", 1)[1]
    assert re.search(
        r'File ".*ctypes/__init__.py", line \d+ in string_at\n  File ".*test_crashes.py", '
        r"line \d+ in test_a_segfault\n",
        python_stack,
    )
    assert "_pytest" not in python_stack and "pluggy" not in python_stack  # left out, and counted
    assert re.search(r"\d+ frames of pytest and pluggy left out", text)
    assert re.search(NATIVE_FRAME, text.split("Extension modules:", 1)[1], re.M)  # LLVM's handler: the native stack
    if SYMBOLIZED:
        assert re.search(r"#\d+ 0x[0-9a-f]+ llvm::sys::PrintStackTrace", text)
        assert re.search(r"#\d+ 0x[0-9a-f]+ string_at ", text)  # down to ctypes' C code
        assert "more native frames: the interpreter running the Python stack above" in text
    # What the test printed is pytest's captured output, as for any test.
    assert re.search(r"Captured stdout call -+\nprinted before the crash\n", text)


def test_a_crash_in_jit_code_and_an_abort_from_a_failed_assert(isolated_run):
    text = section(isolated_run.stdout, "test_jit_code_segfaults")
    assert "ended: killed by SIGSEGV (Segmentation fault)" in text
    assert re.search(r'File ".*test_crashes.py", line \d+ in test_jit_code_segfaults', text)
    text = section(isolated_run.stdout, "test_a_failed_assert_aborts")
    assert "ended: killed by SIGABRT (Aborted)" in text
    assert "x must be zero\nFatal Python error: Aborted" in text  # the message cf.assert printed, then the stacks
    assert re.search(NATIVE_FRAME, text, re.M)
    if SYMBOLIZED:
        assert re.search(r"#\d+ 0x[0-9a-f]+ abort ", text)


def test_a_hang_ends_at_its_timeout_with_its_stacks(isolated_run):
    text = section(isolated_run.stdout, "test_hangs")
    assert re.match(
        r"memref-runtime: test_crashes.py::test_hangs timed out after 1 s "
        r"\(@pytest.mark.isolated\(timeout=...\)\): its isolated child \(pid \d+\) was sent SIGABRT "
        r"for its stacks, and ended: killed by SIGABRT \(Aborted\)",
        text,
    )
    assert re.search(r'File ".*test_crashes.py", line \d+ in test_hangs', text)
    assert "\n1 MLIR Context(s) made in the pytest process were alive at the fork: one whose thread pool" in text
    assert re.search(NATIVE_FRAME, text, re.M)
    if SYMBOLIZED:
        assert re.search(r"#\d+ 0x[0-9a-f]+ \S*sleep", text)


def test_other_outcomes_come_back_as_they_were(isolated_run):
    found = outcomes(isolated_run.stdout)
    assert found["test_fails"] == "FAILED"
    skip_line = CRASHES.splitlines().index('    pytest.skip("skipped in the child")') + 1
    assert (
        f"SKIPPED [1] test_crashes.py:{skip_line}: skipped in the child" in isolated_run.stdout
    )  # where, in the child
    assert found["test_xfails"] == "XFAIL" and "test_xfails - xfailed in the child" in isolated_run.stdout
    assert found["test_raises_what_xfail_expects"] == "XFAIL"  # the child's exception, its type kept
    assert found["test_crash_under_xfail"] == "XFAIL"
    # The child's own traceback, with pytest's assertion rewriting.
    text = section(isolated_run.stdout, "test_fails")
    assert ">       assert value == 4\nE       assert 3 == 4\n" in text
    assert "isolation.py" not in text


def test_a_raising_callback_and_a_leaked_context_fail_in_the_child_too(isolated_run):
    found = outcomes(isolated_run.stdout)
    assert found["test_a_callback_raises"] == "FAILED"
    text = section(isolated_run.stdout, "test_a_callback_raises")
    assert 'raise ValueError(f"no value for {x}")\nE       ValueError: no value for 7' in text
    assert (
        "CallbackException: test_crashes.py::test_a_callback_raises (call): 1 exception raised in "
        "ctypes callbacks (traceback above), the first ValueError: no value for 7"
    ) in text
    assert found["test_leaks_a_context (teardown)"] == "ERROR"
    assert (
        "memref-runtime: 1 MLIR Context made by this isolated test's call was still alive at its end"
        in isolated_run.stdout
    )


def test_under_xdist_a_crash_fails_its_test_not_the_worker(tmp_path):
    project = make_pytest_project(tmp_path, {"test_crashes.py": CRASHES})
    out = run_pytest(project, "--mlir-isolate", "-rA", "-n", "2", "-k", "test_a_segfault or after_the_crash or last")
    found = outcomes(out.stdout)
    assert found == {"test_a_segfault": "FAILED", "test_after_the_crash": "PASSED", "test_last": "PASSED"}, out.stdout
    text = section(out.stdout, "test_a_segfault")
    assert "killed by SIGSEGV (Segmentation fault)" in text
    assert re.search(r'File ".*test_crashes.py", line \d+ in test_a_segfault', text)
    # xdist's words for a worker that died: "node down", "worker 'gw0' crashed while running".
    assert "node down" not in out.stdout and "crashed while running" not in out.stdout


def test_a_crash_without_isolation_takes_the_process_down(tmp_path):
    """What the plugin is for: without it the crash is the end of the run (pytest's own
    faulthandler prints the Python stack, no test report follows)."""
    project = make_pytest_project(tmp_path, {"test_crashes.py": CRASHES})
    out = run_pytest(project, "-rA", "-k", "test_a_segfault or after_the_crash")
    assert out.returncode == -11 and "PASSED" not in out.stdout


def test_a_marker_isolates_one_test_and_the_timeout_option_applies(tmp_path):
    project = make_pytest_project(
        tmp_path,
        {
            "test_marked.py": """
        import ctypes, time
        import pytest

        @pytest.mark.isolated
        def test_crashes():
            ctypes.string_at(0)

        @pytest.mark.isolated
        def test_hangs():
            time.sleep(60)

        def test_after():
            pass
        """
        },
    )
    out = run_pytest(project, "-rA", "--mlir-timeout=0.5")
    assert outcomes(out.stdout) == {"test_crashes": "FAILED", "test_hangs": "FAILED", "test_after": "PASSED"}, (
        out.stdout
    )
    assert "test_marked.py::test_hangs timed out after 0.5 s (--mlir-timeout)" in out.stdout
