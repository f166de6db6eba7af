"""memref-reduce and reduce: a failing module cut down while its check fails the same way, and the
regression test written from it (docs/failures.md, "Find the culprit")."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.providers import needs_wheel_tools

from memref_runtime import JitModule
from memref_runtime.culprit import Against, reduce
from memref_runtime.culprit.bisect import bisect_pipeline
from memref_runtime.culprit.checks import Checker
from memref_runtime.culprit.edits import count_ops
from memref_runtime.culprit.isolation import run_forked
from memref_runtime.culprit.outcome import mask_volatile
from memref_runtime.jit.lowering import DEFAULT_PIPELINE
from memref_runtime.jit.runner_utils import runner_utils_libraries

REPO = Path(__file__).resolve().parent.parent
PLANTED = REPO / "mlir_inputs" / "culprit_planted_subf.mlir"
RUNNER_MAIN = REPO / "mlir_inputs" / "culprit_runner_main.mlir"
BIN = Path(sys.executable).parent


def reference(a, b, c, o0, o1, o2):
    """What @kernel of culprit_planted_subf.mlir is meant to compute."""
    o0[...] = (a * b + c) * np.float32(0.5)
    o1[...] = (a + b) * c
    o2[...] = np.maximum(a, c) * np.float32(2) - b * b


def kernel_inputs(n: int, seed: int = 7) -> list:
    rng = np.random.default_rng(seed)
    return [rng.integers(-9, 10, n).astype(np.float32) for _ in range(3)] + [np.zeros(n, np.float32)] * 3


@pytest.fixture
def suite(tmp_path):
    """A lit suite of its own (memref_runtime.lit.configure), for the regression tests written."""
    (tmp_path / "lit.cfg.py").write_text(
        'import memref_runtime.lit\n\nmemref_runtime.lit.configure(config, lit_config, name="regressions")\n'
    )
    return tmp_path


def lit_passes(path: Path) -> bool:
    log = path.parent / "lit.log"
    with open(log, "w") as out:
        done = subprocess.run([str(BIN / "lit"), "-v", str(path)], stdout=out, stderr=subprocess.STDOUT, timeout=300)
    return done.returncode == 0


def pytest_passes(path: Path) -> bool:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=path.parent,
    )
    return done.returncode == 0


@pytest.mark.harness  # memref-reduce, memref-bisect, lit or pytest in a subprocess
def test_the_planted_subf_reduces_to_ten_ops_and_a_lit_test_that_fails_until_it_is_fixed(suite):
    written = suite / "kernel_argument4.py"
    result = reduce(PLANTED, Against("kernel", reference), write_test=str(written))
    assert (result.ops_before, count_ops(PLANTED.read_text())) == (60, 60)
    assert result.ops_after <= 10 and result.ops_after == count_ops(result.module), result.report()
    assert result.seconds < 60 and "arith.subf" in result.module
    # The same way: argument 4 (o1) alone differs, with the value the input computes there.
    assert result.failure.startswith("argument 4 of @kernel: 1 of 1 elements differ")
    args = [np.array(a, copy=True) for a in result.inputs]
    JitModule(result.module).kernel(*args)
    a, b, c = result.inputs[:3]
    np.testing.assert_array_equal(args[4], (a - b) * c)
    np.testing.assert_array_equal(result.expected["argument 4"], (a + b) * c)
    assert not np.array_equal(args[4], result.expected["argument 4"])
    # The lit test: CHECK lines from memref-update-checks; it fails now, passes once fixed by hand.
    text = written.read_text()
    assert text.startswith("# RUN: %PYTHON %s 2>&1 | FileCheck %s\n")
    assert "# CHECK-LABEL: TEST: testKernelArgument4\n# CHECK-NEXT: argument 4 of @kernel: ok, float32" in text
    assert not lit_passes(written)
    written.write_text(text.replace("arith.subf", "arith.addf"))
    assert lit_passes(written)


@pytest.mark.harness  # memref-reduce, memref-bisect, lit or pytest in a subprocess
def test_inputs_shrink_and_a_pytest_test_is_written(suite):
    inputs = kernel_inputs(7)
    written = suite / "test_kernel_regression.py"
    result = reduce(PLANTED, Against("kernel", reference, inputs=inputs), write_test=str(written))
    assert [a.shape for a in result.inputs] == [(1,)] * 6
    assert result.stages[0].startswith("inputs: shapes ((7,), (7,), (7,), (7,), (7,), (7,)) -> ((1,), (1,)")
    assert result.ops_after <= 10 and "arith.subf" in result.module
    assert inputs[0].shape == (7,)  # the caller's arrays are left alone
    assert not pytest_passes(written)
    written.write_text(written.read_text().replace("arith.subf", "arith.addf"))
    assert pytest_passes(written)


CHECK_SCRIPT = """\
#!/bin/sh
# Still failing while @main prints -3 (2 + 5 computed as 2 - 5).
"{opt}" "$1" --pass-pipeline='{pipeline}' | "{runner}" -e main -entry-point-result=void \\
    -shared-libs="{libs}" | grep -qx -- -3 && exit 1
exit 0
"""


@pytest.mark.harness  # memref-reduce, memref-bisect, lit or pytest in a subprocess
@needs_wheel_tools
def test_memref_reduce_with_a_script_as_mlir_reduce_calls_it(tmp_path):
    from memref_runtime.culprit.tools import tool

    script = tmp_path / "prints_minus_3.sh"
    script.write_text(
        CHECK_SCRIPT.format(
            opt=tool("mlir-opt"),
            runner=os.path.join(os.path.dirname(tool("mlir-opt")), "mlir-runner"),
            pipeline=DEFAULT_PIPELINE,
            libs=",".join(runner_utils_libraries()),
        )
    )
    script.chmod(0o755)
    out, test = tmp_path / "reduced.mlir", tmp_path / "test_main.py"
    done = subprocess.run(
        [str(BIN / "memref-reduce"), str(RUNNER_MAIN), f"--test={script}", "-o", str(out), f"--write-test={test}"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    reduced = out.read_text()
    assert "arith.subf" in reduced and "@mul" not in reduced and "@div" not in reduced
    assert count_ops(reduced) <= 9 < count_ops(RUNNER_MAIN.read_text()) == 19  # @add 3, @main 6
    assert "still failing the same way: exit status 1" in done.stdout
    assert not pytest_passes(test)
    test.write_text(test.read_text().replace("arith.subf", "arith.addf"))
    assert pytest_passes(test)


def test_a_python_check_keeps_its_exception_and_message(tmp_path):
    def check(jit):
        out = [np.zeros(3, np.float32) for _ in range(3)]
        a, b, c = (np.array(v, np.float32) for v in ([1, 2, 3], [4, 5, 6], [7, 8, 9]))
        jit.kernel(a, b, c, *out)
        if np.array_equal(out[1], (a - b) * c):
            raise ArithmeticError(f"o1 = (a - b) * c = {out[1].tolist()}")

    result = reduce(PLANTED, check, write_test=str(tmp_path / "test_local.py"))
    assert result.failure == "ArithmeticError: o1 = (a - b) * c = [-21.0, -24.0, -27.0]"
    assert "arith.subf" in result.module and result.ops_after < 20
    assert result.notes[-1].startswith("no regression test written: the check is not a module-level function")


def test_the_same_way_masks_what_changes_between_candidates():
    assert (
        mask_volatile('error: loc("x.mlir":3:5) %arg0 at 0x7f00 in /tmp/memref_x/y.mlir')
        == "error: loc(?) %? at 0x? in <tmp>"
    )
    assert mask_volatile('"-":4:20: 1 of 3 elements differ') == "<location>: 1 of 3 elements differ"


def test_a_check_that_crashes_or_hangs_ends_its_child_only():
    crashed = run_forked(lambda: os.kill(os.getpid(), signal.SIGSEGV), timeout=30)
    assert (crashed.how, crashed.description) == ("crash", "killed by SIGSEGV (Segmentation fault)")
    hung = run_forked(lambda: __import__("time").sleep(60), timeout=0.5)
    assert (hung.how, hung.description) == ("timeout", "no answer after 0.5 s (killed)")
    assert run_forked(lambda: 41 + 1, timeout=30).value == 42

    def segfault(jit):
        os.kill(os.getpid(), signal.SIGSEGV)

    outcome = Checker(segfault).run(PLANTED.read_text(), opt_level=0)
    assert outcome.failing and outcome.key == "killed by SIGSEGV (Segmentation fault)"


# A `python` earlier on PATH than the venv's, without the packages: what a check run from a shell
# whose venv is not active meets.
BARE_PYTHON = """#!/bin/sh
echo 'Traceback (most recent call last):' >&2
echo '  File "check.py", line 1, in <module>' >&2
echo "ModuleNotFoundError: No module named '$1'" >&2
exit 1
"""


@pytest.fixture
def bare_python(tmp_path, monkeypatch):
    (tmp_path / "python3").write_text(BARE_PYTHON)
    (tmp_path / "python3").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return tmp_path / "python3"


def interpreter_hint(python, module: str) -> str:
    return (
        f"the check's python3 is {python}, which cannot import {module}; {sys.executable}, which runs this tool, "
        "can: name that interpreter in the check's command, or activate its venv"
    )


@pytest.mark.parametrize("module, hinted", [("memref_runtime", True), ("numpy.linalg", True), ("no_such_mod", False)])
def test_a_check_whose_python_lacks_this_tools_modules_says_which_interpreter_ran_it(bare_python, module, hinted):
    checker = Checker(["python3", module])
    for _ in range(2):
        outcome = checker.run("module {}", lowered="module {}")
        assert outcome.failing and outcome.key == "exit status 1 after ModuleNotFoundError"  # as before
        assert outcome.summary == f"exit status 1: ModuleNotFoundError: No module named '{module}'"
    # Said once, whatever the number of runs; only for a module this tool's interpreter has.
    assert checker.hints == ([interpreter_hint(bare_python, module.split(".")[0])] if hinted else [])


def test_reduce_and_bisect_say_so_once(bare_python):
    hint = interpreter_hint(bare_python, "memref_runtime")
    with pytest.raises(ValueError) as raised:
        reduce(PLANTED, ["python3", "memref_runtime"])
    assert str(raised.value) == (
        "reduce: the check fails before it reads the module (exit status 1: ModuleNotFoundError: No module named "
        f"'memref_runtime'): {hint}"
    )
    result = bisect_pipeline(PLANTED, "builtin.module(canonicalize)", ["python3", "memref_runtime"], llvm=False)
    assert result.line.startswith("no culprit: it fails with no step of the pipeline")
    assert result.notes.count(hint) == 1 and f"  {hint}" in result.report().splitlines()[1:3]


def test_bad_inputs_are_named(tmp_path):
    with pytest.raises(ValueError, match="the check passes on the input module"):
        reduce(PLANTED, lambda jit: None)
    runs = tmp_path / "runs"

    def flaky(jit):
        runs.write_text(runs.read_text() + "x" if runs.exists() else "x")
        assert len(runs.read_text()) % 2 == 0, "fails on odd runs"

    with pytest.raises(
        ValueError,
        match="the check is not deterministic: on the input module it failed with "
        "'AssertionError: fails on odd runs', then passed",
    ):
        reduce(PLANTED, flaky)
    with pytest.raises(ValueError, match=r"@kernel\(.*\) takes 6 arguments, got 2"):
        reduce(PLANTED, Against("kernel", reference, inputs=[np.zeros(1), np.zeros(1)]))
    with pytest.raises(ValueError, match="no public function @nope; it has @kernel, @axpy, @norm, @clamp"):
        reduce(PLANTED, Against("nope", reference))
    with pytest.raises(TypeError, match="expected a function name and a callable"):
        Against("kernel", None)
    done = subprocess.run(
        [str(BIN / "memref-reduce"), str(PLANTED), "--function=kernel"], capture_output=True, text=True
    )
    assert done.returncode == 2 and "--function and --reference go together" in done.stderr
