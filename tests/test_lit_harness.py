"""The lit harness itself: discovery, crashes and hangs, in a throw-away copy of the suite."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from support.lit_suites import make_lit_suite
from support.paths import LIT

pytestmark = [pytest.mark.harness, pytest.mark.skipif(LIT is None, reason="lit is not installed")]

TESTS = {
    "passes.py": "# RUN: %PYTHON %s | FileCheck %s\nprint('fine')\n# CHECK: fine\n",
    # A subfolder named like a top-level folder that lit.cfg.py excludes.
    "runtime/nested.py": "# RUN: %PYTHON %s | FileCheck %s\nprint('nested')\n# CHECK: nested\n",
    "segfaults.py": "# RUN: %PYTHON %s\nimport ctypes\nctypes.string_at(0)\n",
    # JIT-compiled code that stores through a memref whose data pointer is NULL.
    "jit_segfaults.py": """# REQUIRES: host-supports-jit
# RUN: %PYTHON %s
import ctypes
from mlir.execution_engine import ExecutionEngine
from mlir.ir import Context, Module
from memref_runtime.np_to_memref import make_nd_memref_descriptor
from memref_runtime.testing import lower, memref_arg
with Context():
    engine = ExecutionEngine(lower(Module.parse('''
func.func @poke(%m: memref<?xf32>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %x = arith.constant 1.0 : f32
  memref.store %x, %m[%c0] : memref<?xf32>
  return
}''')))
null = make_nd_memref_descriptor(1, ctypes.c_float)()
null.shape[0] = null.strides[0] = 1
engine.invoke("poke", ctypes.pointer(ctypes.pointer(null)))
""",
    "hangs.py": "# RUN: %PYTHON %s\nimport time\ntime.sleep(120)\n",
}


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    """lit.cfg.py and runtime/ of this repo, a lit_tests/ of three tests, and decoys around it."""
    root = make_lit_suite(tmp_path_factory.mktemp("suite"), TESTS)
    # Files lit must never collect: tests/, a build folder, a venv.
    for decoy in ("tests/decoy.py", "build/decoy.py", ".venv/lib/decoy.py"):
        (root / decoy).parent.mkdir(parents=True, exist_ok=True)
        (root / decoy).write_text("# RUN: false\n")
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr\n")
    return root


def lit(suite: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([LIT, "-v", *args], cwd=suite, capture_output=True, text=True, timeout=300)


def report(out: str, test: str) -> str:
    """lit -v's report of a failed test: from its banner to the line of stars that ends it."""
    return out.split(f"TEST 'memref-runtime :: lit_tests/{test}' FAILED", 1)[1].split("\n" + "*" * 20 + "\n", 1)[0]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_crash_and_a_hang_fail_alone(suite, workers):
    start = time.monotonic()
    # The tests that end take about a second on an idle machine; beside a parallel pytest run and
    # two other busy processes, jit_segfaults.py (lowering, JIT, the crash report) took over 4 s.
    # 20 s is a wide margin, and the wait for hangs.py is sleep, which costs the machine nothing.
    out = lit(suite, "-j", workers, "--timeout", "20", "lit_tests")
    assert time.monotonic() - start < 100  # hangs.py sleeps for 120 s: it was stopped
    assert "PASS: memref-runtime :: lit_tests/passes.py" in out.stdout
    assert "PASS: memref-runtime :: lit_tests/runtime/nested.py" in out.stdout
    assert "FAIL: memref-runtime :: lit_tests/segfaults.py" in out.stdout
    assert "Exit Code: -11" in report(out.stdout, "segfaults.py")  # SIGSEGV: a real crash
    assert "TIMEOUT: memref-runtime :: lit_tests/hangs.py" in out.stdout
    assert "Reached timeout of 20 seconds" in report(out.stdout, "hangs.py")
    if "UNSUPPORTED: memref-runtime :: lit_tests/jit_segfaults.py" not in out.stdout:  # no JIT here
        assert "FAIL: memref-runtime :: lit_tests/jit_segfaults.py" in out.stdout
        assert "Exit Code: -11" in report(out.stdout, "jit_segfaults.py")
        assert re.search(r"Failed\s*: 2 ", out.stdout), out.stdout
    assert re.search(r"Passed\s*: 2 ", out.stdout) and re.search(r"Timed Out\s*: 1 ", out.stdout), out.stdout
    assert out.returncode == 1


@pytest.mark.parametrize("target", [".", "lit_tests", "lit_tests/passes.py"])
def test_only_lit_tests_are_collected(suite, target):
    out = lit(suite, "--show-tests", target)
    listed = sorted(line.split("::")[1].strip() for line in out.stdout.splitlines() if "::" in line)
    expected = ["lit_tests/passes.py"] if target.endswith(".py") else [f"lit_tests/{n}" for n in sorted(TESTS)]
    assert listed == expected, out.stdout + out.stderr


def test_runner_utils_named_with_d_are_the_ones_the_jit_links_and_upstreams_names_mean(tmp_path):
    from memref_runtime.jit.runner_utils import runner_utils_libraries

    shipped = runner_utils_libraries()
    if len(shipped) != 2:
        pytest.skip("the bindings in use ship no runner-utils libraries")
    # Copies elsewhere: the JIT's default list must name these, not the ones next to the bindings.
    copies = tmp_path / "other"
    copies.mkdir()
    for path in shipped:
        shutil.copy(path, copies)
    c_lib, lib = (str(copies / os.path.basename(p)) for p in shipped)
    root = make_lit_suite(
        tmp_path / "suite",
        {
            "libraries.py": (
                "# RUN: %PYTHON %s | FileCheck %s\n"
                "from memref_runtime.jit.runner_utils import runner_utils_libraries\n"
                "print(*runner_utils_libraries(), sep='\\n')\n"
                "# CHECK: {{.*}}other{{.}}libmlir_c_runner_utils.{{.*}}\n"
                "# CHECK-NEXT: {{.*}}other{{.}}libmlir_runner_utils.{{.*}}\n"
                # Upstream's names for them (Integration/lit.local.cfg) mean the same files.
                "# RUN: echo %native_mlir_c_runner_utils %native_mlir_runner_utils | FileCheck --check-prefix=NATIVE %s\n"
                "# NATIVE: other{{.}}libmlir_c_runner_utils.{{.*}} {{.*}}other{{.}}libmlir_runner_utils.\n"
            )
        },
    )
    given = lit(root, "-D", f"mlir_c_runner_utils={c_lib}", "-D", f"mlir_runner_utils={lib}", "lit_tests")
    assert "PASS: memref-runtime :: lit_tests/libraries.py" in given.stdout, given.stdout + given.stderr
    # Without -D: the bindings' own, which this CHECK rejects.
    default = lit(root, "lit_tests")
    assert "FAIL: memref-runtime :: lit_tests/libraries.py" in default.stdout, default.stdout + default.stderr
