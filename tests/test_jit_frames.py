"""Frames of JIT-compiled code named in crash reports: a kernel that writes out of bounds crashes,
and the report shows `@kernel + 0x..` (and the private function it called) instead of a bare
address, under lit (JitModule, memref_runtime.testing's engine, upstream's ExecutionEngine),
in a fresh interpreter under the report, and under `pytest --mlir-isolate`; gdb names them too.
Also the pieces: the ELF symbols read from the GDB JIT interface against the addresses the JIT
returns, and the naming of frames in a text."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.engine import HAVE_JIT
from support.lit_suites import make_lit_suite
from support.subprocesses import make_pytest_project, run_pytest

from memref_runtime.process import failure_report
from memref_runtime.process.jit_frames import JitFunctions, describe, name_frames, read_map

REPO = Path(__file__).resolve().parent.parent
RUNTIME = REPO / "runtime"
SITE = RUNTIME / "memref_runtime" / "process" / "_site"
OOB = REPO / "mlir_inputs" / "jit_frames_oob_store.mlir"
LIT = shutil.which("lit", path=os.path.dirname(sys.executable)) or shutil.which("lit")
GDB = shutil.which("gdb")

needs_jit = pytest.mark.skipif(not HAVE_JIT, reason="no MLIR Python bindings with an ExecutionEngine")
# The frame of the store, then the one of the call into it (at -O0 @store_at is not inlined).
STORE_THEN_KERNEL = re.compile(
    r"^ *#\d+ 0x[0-9a-f]+ @store_at \+ 0x[0-9a-f]+ \(JIT\)\n"
    r" *#\d+ 0x[0-9a-f]+ @kernel \+ 0x[0-9a-f]+ \(JIT\)$",
    re.M,
)
# At -O2 both are inlined into the wrapper that a call enters: the frame names @kernel through it.
INLINED = re.compile(
    r"^ *#\d+ 0x[0-9a-f]+ (@kernel|_mlir_(_mlir_)?ciface_kernel) \+ 0x[0-9a-f]+ "
    r"\(JIT(: .* @kernel.*)?\)$",
    re.M,
)
WRAPPER = re.compile(
    r"^ *#\d+ 0x[0-9a-f]+ _mlir_ciface_kernel \+ 0x[0-9a-f]+ \(JIT: the C interface of @kernel\)$", re.M
)


# --- naming frames in a text ------------------------------------------------------------------

FUNCTIONS = JitFunctions(
    [
        (0x1000, 0x10, "helper"),
        (0x1010, 0x20, "kernel"),
        (0x1030, 0x30, "_mlir_ciface_kernel"),
        (0x2000, 0x40, "old"),
        (0x2020, 0x10, "reused"),
    ]
)


@pytest.mark.parametrize(
    "address, found",
    [
        (0x1000, ("helper", 0)),
        (0x100F, ("helper", 0xF)),
        (0x1010, ("kernel", 0)),  # the first byte of the next function is that function's
        (0x1050, ("_mlir_ciface_kernel", 0x20)),
        (0x1060, ("_mlir_ciface_kernel", 0x30)),  # a return address just past the end: a call that ends it
        (0x1061, None),
        (0x0FFF, None),
        (0x2000, None),  # `old` overlaps `reused`, recorded later at the same place: only `reused` is left
        (0x2025, ("reused", 5)),
    ],
)
def test_an_address_is_named_by_the_function_it_lies_in(address, found):
    assert FUNCTIONS.containing(address) == found


@pytest.mark.parametrize(
    "name, offset, text",
    [
        ("kernel", 0x2C, "@kernel + 0x2c (JIT)"),
        ("_mlir_ciface_kernel", 0, "_mlir_ciface_kernel + 0x0 (JIT: the C interface of @kernel)"),
        ("_mlir_kernel", 3, "_mlir_kernel + 0x3 (JIT: the ExecutionEngine's packed wrapper of @kernel)"),
        (
            "_mlir__mlir_ciface_kernel",
            0x1A,
            "_mlir__mlir_ciface_kernel + 0x1a (JIT: the ExecutionEngine's packed wrapper of @kernel's C interface)",
        ),
    ],
)
def test_how_a_function_is_described(name, offset, text):
    assert describe(name, offset) == text


def test_only_frames_inside_jit_code_are_named():
    text = (
        "Extension modules: numpy (total: 1)\n"
        " #5 0x00007f17b285a050 (/lib/x86_64-linux-gnu/libc.so.6+0x3c050)\n"
        " #6 0x0000000000001004\n"
        " #7 0x000000000000101d\n"
        " #8 0x0000000000009000\n"
        "#10 0x0000000000001031 ffi_call\n"
        "the address 0x1004 in a sentence\n"
    )
    assert name_frames(text, FUNCTIONS) == (
        "Extension modules: numpy (total: 1)\n"
        " #5 0x00007f17b285a050 (/lib/x86_64-linux-gnu/libc.so.6+0x3c050)\n"
        " #6 0x0000000000001004 @helper + 0x4 (JIT)\n"
        " #7 0x000000000000101d @kernel + 0xd (JIT)\n"
        " #8 0x0000000000009000\n"
        "#10 0x0000000000001031 _mlir_ciface_kernel + 0x1 (JIT: the C interface of @kernel) ffi_call\n"
        "the address 0x1004 in a sentence\n"
    )


def test_a_function_compiled_to_nothing_is_named_at_its_address():
    """At -O2 LLVM compiles a store to null (undefined behaviour) to no code: its symbols, of size 0,
    all lie where the call lands."""
    functions = JitFunctions([(0x3000, 0, "_mlir__mlir_ciface_f"), (0x3000, 0, "f"), (0x3000, 0, "_mlir_ciface_f")])
    assert functions.containing(0x3000) is None
    assert name_frames("#6 0x0000000000003000\n#7 0x0000000000003001\n", functions) == (
        "#6 0x0000000000003000 @f + 0x0 (JIT: LLVM compiled it to no code at all, as it does a body that is "
        "undefined behaviour, such as a store to null)\n#7 0x0000000000003001\n"
    )


def test_a_map_file_is_read_as_perf_writes_it(tmp_path):
    (tmp_path / "1.jit").write_text("1000 10 helper\nnot a line\n1010 20 kernel with spaces\n")
    functions = read_map(str(tmp_path / "1.jit"))
    assert functions.spans == [(0x1000, 0x10, "helper"), (0x1010, 0x20, "kernel with spaces")]
    assert len(read_map(str(tmp_path / "missing.jit"))) == 0


# --- the recorder, against the JIT's own addresses ---------------------------------------------

RECORD_AND_COMPARE = """
import sys
from memref_runtime.process import jit_symbols
recorder = jit_symbols.record(sys.argv[1])
from memref_runtime.process.jit_frames import read_map
from memref_runtime import JitModule
import numpy as np
jit = JitModule(open(sys.argv[2]).read(), opt_level=0)
jit.kernel(np.zeros(4, np.float32), 1)  # links the module
names = {name: start for start, size, name in read_map(sys.argv[1]).spans}
assert recorder.problem is None, recorder.problem
# raw_lookup gives the JIT's packed wrapper (`_mlir_` + the name), where a typed call jumps.
assert names["_mlir__mlir_ciface_kernel"] == jit.engine.raw_lookup("_mlir_ciface_kernel"), names
assert names["_mlir_kernel"] == jit.engine.raw_lookup("kernel"), names
print(sorted(names))
"""


@needs_jit
def test_the_recorded_functions_lie_where_the_jit_says(tmp_path):
    script = tmp_path / "compare.py"
    script.write_text(RECORD_AND_COMPARE)
    env = dict(os.environ, PYTHONPATH=str(RUNTIME))
    env.pop("MEMREF_RUNTIME_REPORT", None)
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "map"), str(OOB)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(
        sorted(
            ["store_at", "kernel", "_mlir_ciface_kernel", "_mlir_store_at", "_mlir_kernel", "_mlir__mlir_ciface_kernel"]
        )
    )


# --- the crash reports ----------------------------------------------------------------------------

JIT_MODULE_CRASH = """
import numpy as np
from memref_runtime import JitModule

jit = JitModule(open({path!r}).read(), opt_level=0, runtime_verification=False)
jit.kernel(np.zeros(4, np.float32), 1 << 40)
"""

# What upstream's Python tests do: their own ExecutionEngine, called through invoke().
UPSTREAM_CRASH = """
import ctypes
import numpy as np
from mlir.execution_engine import ExecutionEngine
from mlir.ir import Context, Module
from memref_runtime.testing import lower, memref_arg

with Context():
    module = lower(Module.parse(open({path!r}).read()), runtime_verification=False)
    engine = ExecutionEngine(module, opt_level=0)
engine.invoke("kernel", memref_arg(np.zeros(4, np.float32)), ctypes.pointer(ctypes.c_int64(1 << 40)))
"""

TESTING_ENGINE_CRASH = (
    UPSTREAM_CRASH.replace("from mlir.execution_engine import ExecutionEngine\n", "")
    .replace(
        "from memref_runtime.testing import lower, memref_arg",
        "from memref_runtime.testing import execution_engine, lower, memref_arg",
    )
    .replace("ExecutionEngine(module, opt_level=0)", "execution_engine(module, opt_level=0)")
)


@needs_jit
@pytest.mark.parametrize("code", [JIT_MODULE_CRASH, UPSTREAM_CRASH], ids=["JitModule", "ExecutionEngine"])
def test_a_fresh_interpreter_under_the_report_names_its_jit_frames(tmp_path, code):
    """The site hook of a process that imports MLIR after start-up wraps the engine on import."""
    (tmp_path / "report").mkdir()
    (tmp_path / "crash.py").write_text(code.format(path=str(OOB)))
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(SITE), str(RUNTIME)]),
        MEMREF_RUNTIME_REPORT=str(tmp_path / "report"),
    )
    done = subprocess.run(
        [sys.executable, str(tmp_path / "crash.py")], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == -signal.SIGSEGV, done.stderr
    assert not STORE_THEN_KERNEL.search(done.stderr)  # what the test printed is left as it was
    text = failure_report.format_report(str(tmp_path / "report"))
    assert STORE_THEN_KERNEL.search(text), text
    assert WRAPPER.search(text), text
    assert "# note:" not in text


LIT_TESTS = {
    "jit_module_crash.py": "# RUN: %PYTHON %s\n" + JIT_MODULE_CRASH,
    "upstream_engine_crash.py": "# RUN: %PYTHON %s\n" + UPSTREAM_CRASH,
    "testing_engine_crash.py": "# RUN: %PYTHON %s\n" + TESTING_ENGINE_CRASH,
    # At lit's default opt level (2) @store_at and @kernel are inlined into the wrappers.
    "optimized_crash.py": "# RUN: %PYTHON %s\n" + JIT_MODULE_CRASH.replace("opt_level=0, ", ""),
}


@pytest.fixture(scope="module")
def lit_output(tmp_path_factory):
    root = make_lit_suite(
        tmp_path_factory.mktemp("suite"), {name: text.format(path=str(OOB)) for name, text in LIT_TESTS.items()}
    )
    done = subprocess.run(
        [LIT, "-v", "-D", f"exec_root={root / 'build'}", "lit_tests"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done.stdout


def lit_report(out: str, test: str) -> str:
    section = out.split(f"TEST 'memref-runtime :: lit_tests/{test}' FAILED", 1)[1]
    return section.split("\n" + "*" * 20 + "\n", 1)[0].split("memref-runtime failure report", 1)[1]


@needs_jit
@pytest.mark.skipif(LIT is None, reason="needs lit")
@pytest.mark.parametrize("test", ["jit_module_crash.py", "upstream_engine_crash.py", "testing_engine_crash.py"])
def test_under_lit_a_crash_in_a_kernel_names_its_functions(lit_output, test):
    text = lit_report(lit_output, test)
    assert "# killed by SIGSEGV (Segmentation fault)" in text
    assert STORE_THEN_KERNEL.search(text), text
    assert WRAPPER.search(text), text


@needs_jit
@pytest.mark.skipif(LIT is None, reason="needs lit")
def test_under_lit_an_optimized_kernel_is_named_too(lit_output):
    text = lit_report(lit_output, "optimized_crash.py")
    assert INLINED.search(text), text
    assert "@store_at" not in text


PYTEST_CRASH = f"""
import numpy as np

MODULE = open({str(OOB)!r}).read()


def test_kernel_writes_out_of_bounds(jit):
    jit(MODULE, opt_level=0, runtime_verification=False).kernel(np.zeros(4, np.float32), 1 << 40)


def test_after(jit):
    a = np.zeros(4, np.float32)
    jit(MODULE).kernel(a, 3)
    assert a.tolist() == [0, 0, 0, 1]
"""


@needs_jit
def test_under_pytest_isolation_a_crash_in_a_kernel_names_its_functions(tmp_path):
    project = make_pytest_project(tmp_path / "project", {"test_oob.py": PYTEST_CRASH})
    done = run_pytest(project, "--mlir-isolate", "-rA")
    assert re.search(r"^FAILED test_oob.py::test_kernel_writes_out_of_bounds", done.stdout, re.M), done.stdout
    assert re.search(r"^PASSED test_oob.py::test_after", done.stdout, re.M), done.stdout
    text = done.stdout.split("test_kernel_writes_out_of_bounds ___", 1)[1]
    assert "killed by SIGSEGV (Segmentation fault)" in text
    assert STORE_THEN_KERNEL.search(text), text
    assert WRAPPER.search(text), text


# --- gdb, through LLVM's GDB JIT interface ----------------------------------------------------------


@needs_jit
@pytest.mark.skipif(GDB is None, reason="gdb is not installed (Debian: apt-get install gdb)")
def test_gdb_names_the_jit_frames_of_a_crash(tmp_path):
    """docs/failures.md's recipe: the ExecutionEngine registers its code with gdb's JIT interface."""
    (tmp_path / "crash.py").write_text(JIT_MODULE_CRASH.format(path=str(OOB)))
    env = dict(os.environ, PYTHONPATH=str(RUNTIME))
    env.pop("MEMREF_RUNTIME_REPORT", None)
    done = subprocess.run(
        [
            GDB,
            "-q",
            "-batch",
            "-nx",
            "-ex",
            "set debuginfod enabled off",
            "-ex",
            "run",
            "-ex",
            "bt",
            "--args",
            sys.executable,
            str(tmp_path / "crash.py"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert "received signal SIGSEGV" in done.stdout, done.stdout + done.stderr
    assert re.search(
        r"^#0 +0x[0-9a-f]+ in store_at \(\)\n#1 +0x[0-9a-f]+ in kernel \(\)\n"
        r"#2 +0x[0-9a-f]+ in _mlir_ciface_kernel \(\)$",
        done.stdout,
        re.M,
    ), done.stdout
