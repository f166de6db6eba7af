"""examples/downstream, another project's suite, copied outside this checkout: lit, the failure
report, the -D switches, memref-update-checks, lit --update-tests, and its LLVM-style CMake build.

CI also runs this file from a plain (non-editable) install in a fresh venv, from a folder
outside the checkout (.ci/run, MEMREF_RUNTIME_PLAIN_INSTALL=1): then nothing here may come
from the source tree but the example's files.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "downstream"
BIN = Path(sys.executable).parent
LIT = shutil.which("lit", path=str(BIN))
UPDATE = shutil.which("memref-update-checks", path=str(BIN))
CMAKE = shutil.which("cmake")
MLIR_DIR = Path(os.environ.get("MEMREF_RUNTIME_TEST_MLIR_DIR", "/usr/lib/llvm-22/lib/cmake/mlir"))
PLAIN_INSTALL = os.environ.get("MEMREF_RUNTIME_PLAIN_INSTALL") == "1"

pytestmark = [
    pytest.mark.harness,
    pytest.mark.skipif(LIT is None or UPDATE is None, reason="lit and memref-update-checks are not installed"),
]

CRASH = """# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
import ctypes

from memref_runtime import JitModule
from memref_runtime.testing import log, run


def testFine():
    log("fine")


def testCrash():
    JitModule("func.func @f() { return }").f()  # LLVM's handlers are in: a native stack too
    ctypes.string_at(0)


run(testFine)
run(testCrash)
# CHECK: the checks of a case that never gets here
"""

NEW_CASE = '''# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""@iota of the shared module, 3 elements: [0, 1, 2]."""
import os

from memref_runtime import JitModule
from memref_runtime.testing import log, mlir_inputs, run


def testIotaThree():
    log(JitModule(os.path.join(mlir_inputs(), "scale.mlir")).iota(3))


run(testIotaThree)
'''


@pytest.fixture
def suite(tmp_path) -> Path:
    """A copy of examples/downstream, outside this checkout."""
    copy = tmp_path / "downstream"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("Output", "__pycache__"))
    return copy


def lit(suite: Path, *args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([LIT, *args, str(suite)], capture_output=True, text=True, timeout=300, cwd=cwd or suite)


@pytest.mark.skipif(not PLAIN_INSTALL, reason="the plain-install route of .ci/run only")
def test_the_runtime_is_the_installed_one(suite):
    import memref_runtime

    location = Path(memref_runtime.__file__).resolve()
    assert location.parent.parent.name == "site-packages", location
    out = lit(suite, "-a", "-D", "python_server=0")
    assert out.returncode == 0, out.stdout + out.stderr
    assert str(EXAMPLE.parent.parent) not in out.stdout.replace(str(suite), "")  # nothing from the checkout


def test_the_suite_passes_through_the_server(suite):
    out = lit(suite, "-sv")
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"Passed *: 3 ", out.stdout), out.stdout
    commands = lit(suite, "-a", "typed_call.py")
    assert "pyserver/client.py" in commands.stdout  # %PYTHON is the pre-started interpreter's client
    assert (suite / "Output").is_dir()  # lit writes into the suite's own Output/


@pytest.mark.parametrize(
    "switch, shows",
    [
        ("opt_level=0", "typed_call.py 0 2>&1"),  # typed_call.py asserts jit.opt_level == its argument
        ("opt_level=3", "typed_call.py 3 2>&1"),
        ("runtime_verification=1", None),
        ("python_server=0", None),
    ],
)
def test_the_switches(suite, switch, shows):
    out = lit(suite, "-a", "-D", switch)
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"Passed *: 3 ", out.stdout), out.stdout
    if shows:
        assert shows in out.stdout
    assert ("pyserver/client.py" in out.stdout) is (switch != "python_server=0")


def test_a_crash_shows_the_failure_report(suite):
    (suite / "crash.py").write_text(CRASH)
    out = lit(suite, "-v", "crash.py")
    assert out.returncode == 1
    text = out.stdout
    assert "memref-runtime failure report" in text
    assert "# killed by SIGSEGV (Segmentation fault) during `TEST: testCrash`" in text
    assert "Fatal Python error: Segmentation fault" in text
    assert re.search(r'File ".*crash\.py", line \d+ in testCrash', text)  # the Python stack
    assert re.search(r"^\s*#?0\s+0x[0-9a-f]+", text, re.M), text  # the native one (LLVM's handler)


def test_memref_update_checks_writes_a_new_test(suite):
    case = suite / "new_case.py"
    case.write_text(NEW_CASE)
    out = subprocess.run([UPDATE, str(case)], capture_output=True, text=True, timeout=300, cwd=suite)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "updated: " in out.stdout and "CHECK lines written (a new test)" in out.stdout
    text = case.read_text()
    assert "# CHECK-LABEL: TEST: testIotaThree" in text and "# CHECK-NEXT: [0. 1. 2.]" in text
    assert lit(suite, "-q", "new_case.py").returncode == 0
    # A pre-commit hook's list: the helpers and configs are skipped with a note, not errors.
    out = subprocess.run(
        [UPDATE, "--check", "new_case.py", "lit.cfg.py", "inputs/scale.mlir"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=suite,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "skipped: lit.cfg.py: not a test of any lit suite" in out.stdout
    assert "memref-update-checks: 1 unchanged, 2 skipped" in out.stdout


def test_lit_update_tests_rewrites_a_stale_check(suite):
    test = suite / "callback.py"
    good = test.read_text()
    test.write_text(good.replace("[[-6.0, -7.0], [-10.0, -11.0]]", "[[-6.0, -7.0], [-10.0, -12.0]]"))
    out = lit(suite, "-v", "--update-tests", "callback.py")
    assert out.returncode == 1  # lit still reports this run as failed
    assert "memref-update-checks: updated: " in out.stdout
    assert test.read_text() == good
    assert lit(suite, "-q", "callback.py").returncode == 0


@pytest.mark.debian_llvm
@pytest.mark.skipif(
    CMAKE is None or not (MLIR_DIR / "MLIRConfig.cmake").is_file(),
    reason=f"needs cmake and an LLVM/MLIR install ({MLIR_DIR})",
)
def test_its_llvm_style_cmake_build(suite, tmp_path):
    build = tmp_path / "build"
    configure = subprocess.run(
        [
            CMAKE,
            "-S",
            str(suite),
            "-B",
            str(build),
            f"-DMLIR_DIR={MLIR_DIR}",
            f"-DPython3_EXECUTABLE={sys.executable}",
            f"-DLLVM_EXTERNAL_LIT={LIT}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert configure.returncode == 0, configure.stdout + configure.stderr
    check = subprocess.run(
        [CMAKE, "--build", str(build), "--target", "check-downstream"],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, LIT_OPTS="-a"),
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert re.search(r"Passed *: 3 ", check.stdout), check.stdout
    tools = MLIR_DIR.parent.parent.parent / "bin"  # <prefix>/lib/cmake/mlir -> <prefix>/bin
    for tool in ("FileCheck", "mlir-opt", "mlir-runner"):  # that LLVM's tools, not the wheels'
        assert f"{tools / tool} " in check.stdout, tool
    assert not (suite / "Output").exists()  # the build folder is the exec root


# A test of the downstream project whose JitModule's pipeline has a wrong pass planted in it: the
# reassociating vector lowering adds @vsum's 16 floats as a tree (15), not in order (14).
PLANTED_PASS = '''# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
import numpy as np

from memref_runtime import JitModule
from memref_runtime.testing import log, run

VSUM = """
func.func @vsum(%a: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %a[%c0], %pad : memref<16xf32>, vector<16xf32>
  %s = vector.reduction <add>, %v : vector<16xf32> into f32
  return %s : f32
}
"""
PIPELINE = ("builtin.module(canonicalize,convert-vector-to-scf,convert-scf-to-cf,"
            "convert-vector-to-llvm{reassociate-fp-reductions},finalize-memref-to-llvm,convert-arith-to-llvm,"
            "convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts)")


def testVsum():
    x = np.array([1, 1e8, 1, -1e8, 3, 7, -2, 5e7, 1, -5e7, 2, 2, 1e7, -1e7, 1, 1], np.float32)
    log("vsum:", JitModule(VSUM, pipeline=PIPELINE).vsum(x))


run(testVsum)
# CHECK: vsum: 14.0
'''


def test_memref_reduce_finds_the_culprit_of_a_failing_test(suite):
    """The installed memref-reduce on a failing test of another project's suite: the pass, the
    reduced module, a regression test that fails now and passes once the pass is fixed."""
    reduce = shutil.which("memref-reduce", path=str(BIN))
    (suite / "vsum.py").write_text(PLANTED_PASS)
    out = subprocess.run([reduce, "vsum.py"], capture_output=True, text=True, timeout=600, cwd=suite)
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"^culprit: convert-vector-to-llvm\{reassociate-fp-reductions\}$", out.stdout, re.M), out.stdout
    assert "the regression test, run now: fails the same way as the test" in out.stdout
    regression = suite / "vsum_reduced.py"

    def passes() -> bool:
        return subprocess.run([LIT, "-q", str(regression)], capture_output=True, timeout=300).returncode == 0

    assert not passes()
    regression.write_text(regression.read_text().replace("{reassociate-fp-reductions}", ""))
    assert passes()
