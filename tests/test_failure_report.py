"""What `lit -v` shows about a failed test: crashes (signal, case, Python and native stacks),
exceptions in ctypes callbacks, exceptions before FileCheck (MLIR diagnostics included); and
that recording it changes nothing else: output bytes and order, exit status, signals."""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import subprocess
import sys

import pytest
from support.lit_suites import make_lit_suite
from support.paths import LIT, REPO

from memref_runtime.process import failure_report
from memref_runtime.process import report as process_report

RUNTIME = REPO / "runtime"
SITE = RUNTIME / "memref_runtime" / "process" / "_site"
HAVE_MLIR = importlib.util.find_spec(os.environ.get("MEMREF_RUNTIME_BINDINGS") or "mlir") is not None

UPSTREAM_STYLE_CRASH = """# RUN: {run} %s | FileCheck %s
import ctypes
import mlir.ir

def run(f):
    print("\\nTEST:", f.__name__)
    f()

def testFine():
    print("fine")
run(testFine)
# CHECK: fine

def testDereferencesNull():
{before}    ctypes.string_at(0)
run(testDereferencesNull)
"""

# Each test shows one way to fail; `report` below cuts its part out of lit's output.
TESTS = {
    # A memref_runtime.testing test whose second case crashes after FileCheck saw what it wanted:
    # FileCheck passes, the pipeline fails on the crash.
    "crash_in_second_case.py": """# RUN: %PYTHON %s 2>&1 | FileCheck %s
import ctypes
import mlir.ir
from memref_runtime.testing import log, run

def firstCase():
    log("first case is fine")
run(firstCase)
# CHECK: first case is fine

def secondCase():
    ctypes.string_at(0)
run(secondCase)
""",
    # Upstream style: its own run(), TEST labels to stdout, no memref_runtime; stdout made
    # block-buffered again (lit.cfg.py sets PYTHONUNBUFFERED), as outside this suite.
    "upstream_style_crash.py": UPSTREAM_STYLE_CRASH.format(run="env -u PYTHONUNBUFFERED %PYTHON", before=""),
    # The same under the suite's own setting: what it printed before the crash is kept.
    "upstream_style_crash_unbuffered.py": UPSTREAM_STYLE_CRASH.format(
        run="%PYTHON", before='    print("about to read address 0")\n'
    ),
    "callback_raises.py": """# RUN: %PYTHON %s 2>&1 | FileCheck %s
import ctypes
from mlir.execution_engine import ExecutionEngine
from mlir.ir import Context, Module
from memref_runtime.testing import log, lower, run

MODULE = '''
func.func @kernel() -> i32 attributes {llvm.emit_c_interface} {
  %r = call @callback() : () -> i32
  return %r : i32
}
func.func private @callback() -> i32 attributes {llvm.emit_c_interface}
'''

def testRaisingCallback():
    @ctypes.CFUNCTYPE(ctypes.c_int32)
    def callback():
        raise ZeroDivisionError("the callback divided by zero")
    with Context():
        engine = ExecutionEngine(lower(Module.parse(MODULE)))
        engine.register_runtime("callback", callback)
        result = ctypes.c_int32(-1)
        engine.invoke("kernel", ctypes.pointer(result))
        log("kernel returned")
run(testRaisingCallback)
# CHECK: kernel returned

def testNextCase():
    log("the next case never starts")
run(testNextCase)
""",
    # No memref_runtime import at all: the process still fails, at exit.
    "upstream_callback_raises.py": """# RUN: %PYTHON %s | FileCheck %s
import ctypes
libc = ctypes.CDLL(None)
numbers = (ctypes.c_int * 2)(2, 1)
@ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
def compare(a, b):
    raise ValueError("cannot compare")
libc.qsort(numbers, 2, ctypes.sizeof(ctypes.c_int), compare)
print("qsort returned")
# CHECK: qsort returned
""",
    "parse_error.py": """# RUN: %PYTHON %s 2>&1 | FileCheck %s
from mlir.ir import Context, Module
from memref_runtime.testing import run

def testParse():
    with Context():
        Module.parse("func.func @f(%a: memref<?xf32>) {\\n  %x = arith.addf %a, %a : f32\\n  return\\n}")
run(testParse)
# CHECK: never printed
""",
    "lowering_error.py": """# RUN: %PYTHON %s 2>&1 | FileCheck %s
from mlir.ir import Context, Module
from memref_runtime.testing import lower, run

def testLowering():
    with Context():
        # A loop that yields a new tensor each iteration: bufferization refuses it.
        lower(Module.parse('''
func.func @f(%n: index, %x: f32) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = tensor.empty() : tensor<4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %init) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %f = linalg.fill ins(%x : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %f : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}'''), "builtin.module(one-shot-bufferize{bufferize-function-boundaries})")
run(testLowering)
# CHECK: never printed
""",
    "link_error.py": """# RUN: %PYTHON %s 2>&1 | FileCheck %s
from mlir.execution_engine import ExecutionEngine
from mlir.ir import Context, Module
from memref_runtime.testing import lower, run

def testLink():
    with Context():
        engine = ExecutionEngine(lower(Module.parse('''
func.func private @defined_nowhere()
func.func @kernel() attributes {llvm.emit_c_interface} {
  call @defined_nowhere() : () -> ()
  return
}''')))
        engine.invoke("kernel")
run(testLink)
# CHECK: never printed
""",
    "passes.py": "# RUN: %PYTHON %s 2>&1 | FileCheck %s\nprint('fine')\n# CHECK: fine\n",
}

needs_lit = pytest.mark.skipif(LIT is None or not HAVE_MLIR, reason="needs lit and the MLIR bindings")


@pytest.fixture(scope="module")
def lit_run(tmp_path_factory):
    """lit -v on a throw-away copy of the suite holding TESTS: (its output, the exec root)."""
    root = make_lit_suite(tmp_path_factory.mktemp("suite"), TESTS)
    exec_root = root / "build"
    out = subprocess.run(
        [LIT, "-v", "-D", f"exec_root={exec_root}", "lit_tests"], cwd=root, capture_output=True, text=True, timeout=600
    )
    return out.stdout, exec_root


def report(out: str, test: str) -> str:
    """The failure report lit -v printed for `test` (from its banner to the closing stars)."""
    section = out.split(f"TEST 'memref-runtime :: lit_tests/{test}' FAILED", 1)[1]
    section = section.split("\n" + "*" * 20 + "\n", 1)[0]
    assert "memref-runtime failure report" in section, section
    return section.split("memref-runtime failure report", 1)[1]


@needs_lit
def test_a_crash_after_filecheck_passed_shows_signal_case_and_both_stacks(lit_run):
    out, _ = lit_run
    text = report(out, "crash_in_second_case.py")
    assert "# killed by SIGSEGV (Segmentation fault) during `TEST: secondCase`" in text
    # Everything the process printed, though it all went to FileCheck, in order.
    assert "\nTEST: firstCase\nfirst case is fine\n\nTEST: secondCase\nFatal Python error" in text
    python_stack = text.split("Fatal Python error: Segmentation fault", 1)[1]
    assert re.search(r'File ".*crash_in_second_case.py", line 12 in secondCase', python_stack)
    # The native stack, from LLVM's handler, after the Python one: numbered frames.
    assert re.search(r"^ *#0 0x[0-9a-f]+ ", python_stack, re.M), python_stack


@needs_lit
def test_an_upstream_style_crash_names_the_case_from_the_stack(lit_run):
    out, _ = lit_run
    text = report(out, "upstream_style_crash.py")
    # The label went to a block-buffered stdout that died with the process: the case comes
    # from the frame that run() called.
    assert "# killed by SIGSEGV (Segmentation fault) during `TEST: testDereferencesNull`" in text
    assert "TEST: testDereferencesNull\n" not in text
    assert re.search(r"^ *#0 0x[0-9a-f]+ ", text, re.M)


@needs_lit
def test_what_a_test_printed_to_stdout_before_a_crash_is_kept_in_order(lit_run):
    out, _ = lit_run
    text = report(out, "upstream_style_crash_unbuffered.py")
    assert "# killed by SIGSEGV (Segmentation fault) during `TEST: testDereferencesNull`" in text
    assert (
        "\nTEST: testFine\nfine\n\nTEST: testDereferencesNull\nabout to read address 0\n"
        "Fatal Python error: Segmentation fault"
    ) in text


@needs_lit
def test_an_exception_in_a_ctypes_callback_fails_the_case(lit_run):
    out, _ = lit_run
    assert "FAIL: memref-runtime :: lit_tests/callback_raises.py" in out
    text = report(out, "callback_raises.py")
    assert "# exit status 1 during `TEST: testRaisingCallback`" in text
    assert "ZeroDivisionError: the callback divided by zero" in text  # the traceback, where it happened
    assert "CallbackException: TEST: testRaisingCallback: 1 exception raised in ctypes callbacks" in text
    assert "the next case never starts" not in text


@needs_lit
def test_an_exception_in_a_callback_of_a_plain_script_fails_it_at_exit(lit_run):
    out, _ = lit_run
    assert "FAIL: memref-runtime :: lit_tests/upstream_callback_raises.py" in out
    text = report(out, "upstream_callback_raises.py")
    assert "# exit status 1" in text
    assert "ValueError: cannot compare" in text
    assert "exception raised in ctypes callbacks (traceback above): exit status 1" in text


@needs_lit
@pytest.mark.parametrize(
    "test, expected",
    [
        (
            "parse_error.py",
            [
                "MLIRError: Unable to parse module assembly:",
                "error: \"-\":2:19: use of value '%a' expects different type than prior uses",
                'note: "-":1:14: prior use here',
            ],
        ),
        (
            "lowering_error.py",
            [
                "LoweringError: lowering to the LLVM dialect failed",
                'error: "-":9:5: Yield operand #0 is not equivalent to the corresponding iter bbArg',
                "reproduce with: ",
            ],
        ),
        ("link_error.py", ["Symbols not found: [ defined_nowhere ]", "RuntimeError: Unknown function kernel"]),
    ],
)
def test_an_exception_before_filecheck_is_shown_whole(lit_run, test, expected):
    out, _ = lit_run
    text = report(out, test)
    assert "# exit status 1 during `TEST: " in text
    for line in expected:
        assert line in text, text


@needs_lit
def test_a_passing_test_leaves_no_report(lit_run):
    out, exec_root = lit_run
    assert "PASS: memref-runtime :: lit_tests/passes.py" in out
    outputs = exec_root / "lit_tests" / "Output"
    assert not (outputs / "passes.py.report").exists()
    assert (outputs / "crash_in_second_case.py.report").is_dir()  # kept for the reader


# --- the copy changes nothing ---------------------------------------------------------------

# Stdout and stderr interleaved, unflushed and flushed, raw fd writes, then an exit status.
TALKATIVE = """
import os, sys
for i in range(3000):
    print("out", i)
    print("err", i, file=sys.stderr)
    if i % 250 == 0:
        sys.stdout.flush()
os.write(1, b"raw bytes\\n")
sys.exit(3)
"""


def run_script(tmp_path, code: str, report: bool, merged: bool, name="script.py"):
    script = tmp_path / name
    script.write_text(code)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SITE), str(RUNTIME)]))
    for name in ("MEMREF_RUNTIME_REPORT", "PYTHONUNBUFFERED"):  # buffered, as under lit
        env.pop(name, None)
    if report:
        (tmp_path / "report").mkdir(exist_ok=True)
        env["MEMREF_RUNTIME_REPORT"] = str(tmp_path / "report")
    out = tmp_path / "out.txt"
    err = tmp_path / ("out.txt" if merged else "err.txt")
    with open(out, "wb") as o:
        e = o if merged else open(err, "wb")
        proc = subprocess.run([sys.executable, str(script)], stdout=o, stderr=e, env=env, timeout=120)
        if not merged:
            e.close()
    return proc.returncode, out.read_bytes(), err.read_bytes()


@pytest.mark.parametrize("merged", [True, False], ids=["2>&1", "separate"])
def test_the_copy_keeps_bytes_order_and_exit_status(tmp_path, merged):
    plain = run_script(tmp_path, TALKATIVE, report=False, merged=merged)
    copied = run_script(tmp_path, TALKATIVE, report=True, merged=merged)
    assert plain[0] == copied[0] == 3
    assert copied[1:] == plain[1:]
    (log,) = (tmp_path / "report").glob("*.out")
    text = log.read_bytes()
    assert text.count(b"\n") == 2 * 3000 + 1
    if merged:  # one pipe: the report has the same order as the file
        assert text == plain[1]
    record = next((tmp_path / "report").glob("*.record")).read_text()
    assert "'exit_code': 3" in record


def test_a_crash_ends_the_process_lit_waits_for_by_the_same_signal(tmp_path):
    code, out, _ = run_script(
        tmp_path, "import ctypes\nprint('before', flush=True)\nctypes.string_at(0)\n", report=True, merged=True
    )
    assert code == -signal.SIGSEGV
    assert out.startswith(b"before\nFatal Python error: Segmentation fault")
    record = next((tmp_path / "report").glob("*.record")).read_text()
    assert "'signal_name': 'SIGSEGV'" in record


def test_a_test_killed_by_sigkill_ends_so_and_never_runs_again(tmp_path):
    # SIGKILL (the out-of-memory killer, lit --timeout) cannot be handled: the copier once failed
    # to pass it on, and the exception put it back into the test, which ran again and exited 0.
    script = (
        "import os, signal\nprint('runs', flush=True)\nos.kill(os.getpid(), signal.SIGKILL)\nprint('after the kill')\n"
    )
    code, out, _ = run_script(tmp_path, script, report=True, merged=True)
    assert code == -signal.SIGKILL
    assert out == b"runs\n"
    record = next((tmp_path / "report").glob("*.record")).read_text()
    assert "'signal_name': 'SIGKILL'" in record


@pytest.mark.skipif(not HAVE_MLIR, reason="needs the MLIR bindings")
@pytest.mark.parametrize("then, status", [("SIGUSR1", -signal.SIGUSR1), ("crash", -signal.SIGSEGV)])
def test_llvm_handlers_take_only_the_fatal_signals(tmp_path, then, status):
    """SIGUSR1 still ends the process, Ctrl-C still raises KeyboardInterrupt and leaves the
    crash handlers in place: LLVM's handlers would have taken both."""
    # The actions Python starts with in a terminal, whatever this run inherited: a command put in
    # the background by a shell without job control (`cmd &` in a script, as CI's lanes are)
    # starts with SIGINT ignored, and then Python installs no KeyboardInterrupt handler at all.
    code = f"""
import ctypes, os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGUSR1, signal.SIG_DFL)
import mlir.ir
assert sys.modules["memref_runtime.process.native_stack"]._installed_from  # LLVM's handlers are in
if {then!r} == "SIGUSR1":
    os.kill(os.getpid(), signal.SIGUSR1)
    print("SIGUSR1 was ignored", flush=True)
try:
    os.kill(os.getpid(), signal.SIGINT)
    signal.pause()
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
ctypes.string_at(0)
"""
    code_status, out, _ = run_script(tmp_path, code, report=True, merged=True)
    assert code_status == status
    if then == "crash":
        assert out.startswith(b"KeyboardInterrupt\n")
        assert re.search(rb"^ *#0 0x[0-9a-f]+ ", out, re.M), out  # the native stack still comes
    else:
        assert out == b""


def test_without_the_report_variable_nothing_is_set_up(tmp_path):
    code = (
        "import faulthandler, sys\nprint(faulthandler.is_enabled(), 'memref_runtime.process.report' in sys.modules)\n"
    )
    assert run_script(tmp_path, code, report=False, merged=True)[1] == b"False False\n"
    assert run_script(tmp_path, code, report=True, merged=True)[1] == b"True True\n"


# --- pieces ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, orig_argv, copied",
    [
        (["/x/lit_tests/case.py"], ["python", "/x/lit_tests/case.py"], True),
        (["-m"], ["python", "-X", "dev", "-m", "my_tests.case", "-v"], True),
        (["-m"], ["python", "-m", "filecheck", "case.py"], False),
        (["-c", "import x"], ["python", "-c", "import x"], False),  # lit.cfg.py's `not`/`count` stand-ins
        (["/venv/bin/filecheck", "case.py"], ["python", "/venv/bin/filecheck", "case.py"], False),
        ([], ["python"], False),
    ],
)
def test_which_processes_are_tests(argv, orig_argv, copied):
    assert process_report.is_test_process(argv, orig_argv) is copied


CRASH_DUMP = b"""
TEST: first
Fatal Python error: Segmentation fault

Thread 0x00007f0 (most recent call first):
  File "/x/threading.py", line 320 in wait

Current thread 0x00007f1 (most recent call first):
  File "/x/ctypes/__init__.py", line 519 in string_at
  File "/x/case.py", line 14 in second
  File "/x/testing.py", line 35 in run
  File "/x/case.py", line 15 in <module>

Extension modules: numpy (total: 1)
"""


@pytest.mark.skipif(LIT is None, reason="failure_report.py imports lit")
@pytest.mark.parametrize(
    "output, case",
    [
        (CRASH_DUMP, "second"),  # the stack wins over a stale label
        (b'\nTEST: one\nok\n\nTEST: two\nTraceback (most recent call last):\n  File "x", line 1, in run\n', "two"),
        (b"no labels at all\n", None),
    ],
)
def test_the_case_a_process_ended_in(output, case):
    assert failure_report.last_case(output) == case


@pytest.mark.skipif(LIT is None, reason="failure_report.py imports lit")
def test_a_missing_native_handler_is_a_note_in_the_report_not_output(tmp_path):
    """Bindings whose LLVM does not export the handler: the test's output stays as it was."""
    code = """
import ctypes, sys
process_report = sys.modules["memref_runtime.process.report"]
from memref_runtime.process import native_stack as native
native._SYMBOL = "no_such_symbol"
process_report._install_native_stack()
print("output as usual", flush=True)
ctypes.string_at(0)
"""
    status, out, _ = run_script(tmp_path, code, report=True, merged=True)
    assert status == -signal.SIGSEGV
    assert out.startswith(b"output as usual\nFatal Python error: Segmentation fault")
    assert not re.search(rb"^ *#0 0x", out, re.M)
    text = failure_report.format_report(str(tmp_path / "report"))
    assert (
        "# killed by SIGSEGV (Segmentation fault)\n# note: native stack unavailable: no loaded library "
        "exports llvm::sys::PrintStackTraceOnErrorSignal (no_such_symbol)\n" in text
    )
