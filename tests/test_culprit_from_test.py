"""From a failing test to its culprit in one command: `memref-reduce TEST` on a lit test (a `.py`
test's JitModule, a `.mlir` test's `mlir-opt %s ... | mlir-runner | FileCheck` line), `pytest
--mlir-reduce` on a test that used `jit`, and the command a check_against failure prints. Each
names the pass planted in the pipeline, reduces the module with the test as the check, and writes
a regression test that fails now the same way and passes once the planted pass is taken out.
Also the pieces: what a JitModule records under the report, the candidate it takes, which
mlir-opt flags are passes, and the test rewritten with the reduced module."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from support.engine import HAVE_JIT
from support.lit_suites import make_lit_suite
from support.providers import PROVIDER, needs_wheel_tools
from support.subprocesses import make_pytest_project, run_pytest

from memref_runtime.culprit.from_test import with_reduced_module
from memref_runtime.culprit.test_module import FoundModule, spelled_flag
from memref_runtime.jit.lowering import LLVM_LOWERING_PASSES

pytestmark = [
    pytest.mark.jit,
    pytest.mark.skipif(not HAVE_JIT, reason="no MLIR Python bindings with an ExecutionEngine"),
]

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
LIT = shutil.which("lit", path=str(BIN))
REDUCE = shutil.which("memref-reduce", path=str(BIN))

try:
    from memref_runtime.culprit.tools import ToolMissing, tool

    MLIR_OPT = tool("mlir-opt") if PROVIDER == "mlir" else None  # torch-mlir-opt spells passes its own way
except (ImportError, ToolMissing):  # pragma: no cover - depends on the environment
    MLIR_OPT = None
REASSOCIATE = "convert-vector-to-llvm{reassociate-fp-reductions}"
# The default lowering with the reassociating vector lowering planted in it, after three optional passes.
PLANTED = (
    "builtin.module(canonicalize,cse,func.func(loop-invariant-code-motion),"
    + ",".join(REASSOCIATE if p == "convert-vector-to-llvm" else p for p in LLVM_LOWERING_PASSES)
    + ")"
)
FIXED = PLANTED.replace(REASSOCIATE, "convert-vector-to-llvm")

# @vsum adds 16 floats with vector.reduction: 14 in order, 15 as a tree (reassociated); @twice
# and the unused ops are what a reduction removes.
VSUM = """
func.func @vsum(%a: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %a[%c0], %pad : memref<16xf32>, vector<16xf32>
  %s = vector.reduction <add>, %v : vector<16xf32> into f32
  %one = arith.constant 1.0 : f32
  %unused = arith.addf %s, %one : f32
  return %s : f32
}

func.func @twice(%x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %x[%i] : memref<?xf32>
  }
  return
}
"""
X16 = "[1, 1e8, 1, -1e8, 3, 7, -2, 5e7, 1, -5e7, 2, 2, 1e7, -1e7, 1, 1]"

# A .py test whose second case fails: the module is a file of the suite's inputs, named on the
# line that makes the JitModule; the first case uses the same file with the default pipeline.
PY_TEST = f'''# RUN: %PYTHON %s 2>&1 | FileCheck %s
import os

import numpy as np

from memref_runtime import JitModule
from memref_runtime.testing import log, mlir_inputs, run

PIPELINE = "{PLANTED}"


def testTwice():
    x = np.ones(3, np.float32)
    JitModule(os.path.join(mlir_inputs(), "sums.mlir")).twice(x)
    log("twice:", x)


run(testTwice)
# CHECK-LABEL: TEST: testTwice
# CHECK-NEXT: twice: [2. 2. 2.]


def testVsum():
    jit = JitModule(os.path.join(mlir_inputs(), "sums.mlir"), pipeline=PIPELINE)
    log("vsum:", jit.vsum(np.array({X16}, np.float32)))


run(testVsum)
# CHECK-LABEL: TEST: testVsum
# CHECK-NEXT: vsum: 14.0
'''

MLIR_TEST = """// RUN: mlir-opt %s -canonicalize -cse -convert-vector-to-scf -convert-scf-to-cf \\
// RUN:   --convert-vector-to-llvm=reassociate-fp-reductions -finalize-memref-to-llvm \\
// RUN:   -convert-arith-to-llvm -convert-func-to-llvm -convert-cf-to-llvm -reconcile-unrealized-casts \\
// RUN: | mlir-runner -e main -entry-point-result=void -O2 -shared-libs=%mlir_c_runner_utils \\
// RUN: | FileCheck %s
// REQUIRES: host-supports-jit, runner-utils, mlir-tools

func.func @vsum(%a: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %a[%c0], %pad : memref<16xf32>, vector<16xf32>
  %s = vector.reduction <add>, %v : vector<16xf32> into f32
  return %s : f32
}

memref.global "private" constant @x16 : memref<16xf32> = dense<[1.0, 1.0e8, 1.0, -1.0e8, 3.0, 7.0, -2.0, 5.0e7,
                                                               1.0, -5.0e7, 2.0, 2.0, 1.0e7, -1.0e7, 1.0, 1.0]>

func.func @main() {
  %x16 = memref.get_global @x16 : memref<16xf32>
  %s = call @vsum(%x16) : (memref<16xf32>) -> f32
  vector.print %s : f32
  %t = arith.addf %s, %s : f32
  vector.print %t : f32
  return
}
// CHECK: 14
// CHECK-NEXT: 28
"""

OTHER_TESTS = {
    "passes.py": "# RUN: %PYTHON %s 2>&1 | FileCheck %s\nprint('fine')\n# CHECK: fine\n",
    "no_jit.py": "# RUN: %PYTHON %s\nraise AssertionError('no JitModule here')\n",
}


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    """A throw-away suite with its own inputs folder (memref-reduce writes the reduced module beside the original)."""
    root = make_lit_suite(
        tmp_path_factory.mktemp("suite"), {"vsum.py": PY_TEST, "vsum_runner.mlir": MLIR_TEST, **OTHER_TESTS}
    )
    (root / "mlir_inputs").unlink()
    (root / "mlir_inputs").mkdir()
    (root / "mlir_inputs" / "sums.mlir").write_text(VSUM)
    return root


def memref_reduce(suite: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([REDUCE, *args], capture_output=True, text=True, cwd=suite, timeout=900)


def lit_passes(suite: Path, test: str) -> bool:
    return subprocess.run([LIT, "-q", f"lit_tests/{test}"], cwd=suite, capture_output=True, timeout=300).returncode == 0


def ops(text: str) -> int:
    return len(re.findall(r"^\s+(?:%[\w#:, ]+= )?[a-z_]+\.[a-z_.]+", text, re.M))


@pytest.fixture(scope="module")
def py_run(suite):
    return memref_reduce(suite, "lit_tests/vsum.py", "-o", str(suite / "reduced.mlir"))


@needs_wheel_tools  # LLVM's FileCheck's messages and the wheels' mlir-opt
def test_a_py_test_names_the_planted_pass(py_run):
    assert py_run.returncode == 0, py_run.stdout + py_run.stderr
    out = py_run.stdout
    assert out.startswith("the test fails: RUN line 1: <test>:30:15: error: CHECK-NEXT: expected string not found")
    assert f"its module: a JitModule (its @vsum called); pipeline {PLANTED}, -O2" in out
    # Two JitModules of one file: the one with the planted pipeline, whose function was called last.
    assert re.search(
        r"the test made 2 JitModules; this is the one whose @vsum was first called last \(--module=N "
        r"picks another: 0: made at vsum.py:14, functions @vsum, @twice; 1: made at vsum.py:24, its own "
        r"pipeline, functions @vsum, @twice\)",
        out,
    ), out
    assert re.search(rf"^culprit: {re.escape(REASSOCIATE)}$", out, re.M), out
    assert re.search(r"decided by \d+ check runs", out)


def test_a_py_test_is_reduced_and_its_regression_test_fails_the_same_way(suite, py_run):
    out = py_run.stdout
    found = re.search(r"^reduced: 18 -> (\d+) ops", out, re.M)
    assert found and int(found.group(1)) <= 6, out
    reduced = (suite / "reduced.mlir").read_text()
    assert "@twice" not in reduced and "vector.reduction" in reduced  # testTwice's module is another JitModule's
    regression = suite / "lit_tests" / "vsum_reduced.py"
    assert f"regression test: {regression}" in out
    assert "the regression test, run now: fails the same way as the test" in out
    # The test, naming the reduced module written beside the original, on the line that made the JitModule only.
    assert (suite / "mlir_inputs" / "sums_reduced.mlir").read_text() == reduced
    original, rewritten = (suite / "lit_tests" / "vsum.py").read_text(), regression.read_text()
    assert rewritten == original.replace('"sums.mlir"), pipeline=PIPELINE', '"sums_reduced.mlir"), pipeline=PIPELINE')
    assert not lit_passes(suite, "vsum_reduced.py")
    regression.write_text(rewritten.replace(REASSOCIATE, "convert-vector-to-llvm"))  # the bug, fixed
    assert lit_passes(suite, "vsum_reduced.py")


@pytest.fixture(scope="module")
def mlir_run(suite):
    return memref_reduce(suite, "lit_tests/vsum_runner.mlir")


@needs_wheel_tools  # LLVM's FileCheck's messages and the wheels' mlir-opt
def test_a_mlir_test_names_the_planted_flag(mlir_run):
    assert mlir_run.returncode == 0, mlir_run.stdout + mlir_run.stderr
    out = mlir_run.stdout
    # The pass flags as a pipeline: which flags are passes, mlir-opt said.
    assert (
        "its module: the test file, lowered by RUN line 1; pipeline builtin.module(canonicalize,cse,"
        f"convert-vector-to-scf,convert-scf-to-cf,{REASSOCIATE},finalize-memref-to-llvm,convert-arith-to-llvm,"
        "convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts), -O2"
    ) in out
    assert re.search(rf"^culprit: {re.escape(REASSOCIATE)}$", out, re.M), out


@needs_wheel_tools  # LLVM's FileCheck's messages and the wheels' mlir-opt
def test_a_mlir_test_is_reduced_to_what_its_failing_check_needs(suite, mlir_run):
    out = mlir_run.stdout
    assert "the regression test, run now: fails the same way as the test" in out, out
    regression = (suite / "lit_tests" / "vsum_runner_reduced.mlir").read_text()
    assert "// CHECK: 14\n" in regression and "28" not in regression  # the CHECK lines up to the one that failed
    assert "arith.addf" not in regression  # what only the unchecked line printed is gone
    assert regression.count("// RUN:") == 5
    fixed = regression.replace("--convert-vector-to-llvm=reassociate-fp-reductions", "-convert-vector-to-llvm")
    (suite / "lit_tests" / "vsum_runner_fixed.mlir").write_text(fixed)
    assert lit_passes(suite, "vsum_runner_fixed.mlir")
    assert not lit_passes(suite, "vsum_runner_reduced.mlir")


@pytest.mark.parametrize(
    "test, said",
    [
        ("passes.py", "memref-reduce: TEST: lit_tests/passes.py passes: nothing to bisect or reduce"),
        ("no_jit.py", "memref-reduce: the test made no JitModule that memref-reduce could see"),
    ],
)
def test_what_memref_reduce_says_when_it_cannot(suite, test, said):
    done = memref_reduce(suite, f"lit_tests/{test}")
    assert done.returncode == 1
    assert done.stderr.startswith(said), done.stderr


# --- pytest --mlir-reduce --------------------------------------------------------------------------

PYTEST_TEST = f'''
import numpy as np

MODULE = """{VSUM}"""
PIPELINE = "{PLANTED}"


def test_vsum_in_order(jit):
    assert jit(MODULE, pipeline=PIPELINE).vsum(np.array({X16}, np.float32)) == np.float32(14)


def test_twice(jit):
    x = np.ones(2, np.float32)
    jit(MODULE).twice(x)
    assert x.tolist() == [2, 2]
'''


@pytest.mark.parametrize("isolate", [False, True], ids=["in-process", "isolated"])
def test_pytest_mlir_reduce_names_the_pass_and_writes_a_regression_test(tmp_path, isolate):
    project = make_pytest_project(tmp_path / "project", {"test_sums.py": PYTEST_TEST})
    done = run_pytest(project, "--mlir-reduce", "-rA", *(["--mlir-isolate"] if isolate else []), timeout=600)
    assert re.search(r"^FAILED test_sums.py::test_vsum_in_order", done.stdout, re.M), done.stdout
    assert re.search(r"^PASSED test_sums.py::test_twice", done.stdout, re.M)
    section = done.stdout.split("- memref-reduce -", 1)[1]
    assert section.split("\n", 1)[1].startswith("the test fails: AssertionError: assert 15.0 == np.float32(14.0)")
    assert re.search(rf"^culprit: {re.escape(REASSOCIATE)}$", section, re.M), section
    assert re.search(r"^reduced: 18 -> [3-6] ops", section, re.M), section
    regression = project / "test_sums_reduced.py"
    assert "the regression test, run now: fails the same way as the test: pytest " in section
    assert "@twice" not in regression.read_text() and "vector.reduction" in regression.read_text()
    fixed = regression.read_text().replace(REASSOCIATE, "convert-vector-to-llvm")
    regression.write_text(fixed)
    again = run_pytest(project, "test_sums_reduced.py::test_vsum_in_order")
    assert again.returncode == 0, again.stdout


# --- check_against prints the command --------------------------------------------------------------

CHECK_AGAINST = """
import sys
from memref_runtime import JitModule
from memref_runtime.testing import check_against
from kernel_reference import reference

check_against(JitModule(open(sys.argv[1]).read()).kernel, reference)
"""
REFERENCE = """
import numpy as np


def reference(a, b, c, o0, o1, o2):
    o0[...] = (a * b + c) * np.float32(0.5)
    o1[...] = (a + b) * c
    o2[...] = np.maximum(a, c) * np.float32(2) - b * b
"""


def test_a_check_against_failure_prints_the_memref_reduce_command_that_reduces_it(tmp_path):
    (tmp_path / "kernel_reference.py").write_text(REFERENCE)
    (tmp_path / "check.py").write_text(CHECK_AGAINST)
    env = dict(os.environ, PYTHONPATH=str(REPO / "runtime"), PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        [sys.executable, "check.py", str(REPO / "mlir_inputs" / "culprit_planted_subf.mlir")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert "DifferentialError" in done.stderr
    command = re.search(r"^  reduce the module and the inputs: (.*)$", done.stderr, re.M).group(1)
    assert command.startswith(f"PYTHONPATH={tmp_path} memref-reduce ")
    assert "--function=kernel --reference=kernel_reference:reference --inputs=" in command
    reduced = subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd="/", env=env, timeout=600)
    assert reduced.returncode == 0, reduced.stdout + reduced.stderr
    found = re.search(r"^reduced: 60 -> (\d+) ops", reduced.stdout, re.M)
    assert found and int(found.group(1)) <= 10, reduced.stdout
    assert "still failing the same way: argument 4 of @kernel" in reduced.stdout


# --- the pieces ------------------------------------------------------------------------------------


def test_a_jit_module_records_itself_under_the_report_and_takes_a_candidate(tmp_path, monkeypatch):
    from memref_runtime import JitModule
    from memref_runtime.culprit.test_module import from_python_test
    from memref_runtime.jit.recording import encode

    monkeypatch.setenv("MEMREF_RUNTIME_REPORT", str(tmp_path))
    monkeypatch.delenv("MEMREF_RUNTIME_CANDIDATE", raising=False)
    jit = JitModule(VSUM, pipeline=FIXED)
    assert jit.vsum(np.array(eval(X16), np.float32)) == 14
    found = from_python_test(str(tmp_path), None)
    assert (found.pipeline, found.opt_level, found.function) == (FIXED, 2, "vsum")
    assert found.source == jit.source and found.site == (__file__, found.site[1])
    # The candidate: this module (its pipeline too), another text.
    candidate = tmp_path / "candidate.mlir"
    candidate.write_text(VSUM.replace("%s = vector.reduction <add>, %v", "%s = vector.reduction <mul>, %v"))
    monkeypatch.setenv("MEMREF_RUNTIME_CANDIDATE", encode(found.sha, False, 0, str(candidate)))
    product = JitModule(VSUM, pipeline=FIXED)
    assert product.opt_level == 0 and "<mul>" in product.source
    assert JitModule(VSUM).opt_level == 2  # the same text with another pipeline is another module


@pytest.mark.skipif(MLIR_OPT is None, reason="needs mlir-opt")
@pytest.mark.parametrize(
    "flag, step",
    [
        ("-canonicalize", "canonicalize"),
        ("--convert-vector-to-llvm=reassociate-fp-reductions", REASSOCIATE),
        ("-affine-super-vectorize", "func.func(affine-super-vectorize)"),  # mlir-opt nests it itself
        ("--allow-unregistered-dialect", None),
        ("-o", None),
    ],
)
def test_which_mlir_opt_flags_are_passes(flag, step):
    assert spelled_flag(MLIR_OPT, flag) == step


def test_the_test_is_rewritten_with_the_reduced_module(tmp_path):
    test = tmp_path / "t.py"
    original = 'M = """\nfunc.func @f() {\n  return\n}\n"""\nJitModule(M).f()\n'
    module = FoundModule("", "p", 2, origin={"text": "\nfunc.func @f() {\n  return\n}\n"})
    rewritten = with_reduced_module(original, str(test), module, "module {}")
    assert rewritten == 'M = """\nmodule {}\n"""\nJitModule(M).f()\n'
    inputs = tmp_path / "inputs" / "k.mlir"
    inputs.parent.mkdir()
    original = textwrap.dedent("""\
        A = path("k.mlir")
        JitModule(path("k.mlir"), pipeline=P)
    """)
    module = FoundModule("", "p", 2, origin={"file": str(inputs)}, site=(str(test), 2))
    assert with_reduced_module(original, str(test), module, "module {}") == original.replace(
        'JitModule(path("k.mlir")', 'JitModule(path("k_reduced.mlir")'
    )
    assert (tmp_path / "inputs" / "k_reduced.mlir").read_text() == "module {}"
    with pytest.raises(ValueError, match="neither a literal of the test nor a file it names"):
        with_reduced_module("nothing", str(test), FoundModule("", "p", 2, origin={}), "module {}")
