"""CI route: the pytest plugin from a plain install, in a pytest project of someone else's.

    python3 .ci/pytest_plugin_route.py VENV_PYTHON

VENV_PYTHON is the interpreter of a fresh venv into which memref-runtime was installed with a
plain, non-editable `pip install <checkout>` (and pytest-xdist). In a throw-away project made in
a temporary folder outside the checkout, it runs pytest and checks what it prints:

- under --mlir-isolate a segfaulting test is FAILED with SIGSEGV, its test id and its Python
  stack, and the next test runs and passes; the same with -n 2 (no "worker crashed");
- --mlir-opt-levels=0,3 runs the test that uses `jit` twice, each run at its own level;
- a raising ctypes callback and a leaked Context fail their tests (under --mlir-isolate, which asks
  for the checks), and only warn in a run that did not ask.

Exits non-zero, saying which check failed and showing pytest's output, at the first mismatch.
Uses the standard library only: any python3 runs it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent

PROJECT = textwrap.dedent('''
    import ctypes

    import numpy as np
    import pytest
    from mlir.ir import Context, Module

    from memref_runtime import JitModule
    from memref_runtime.testing import execution_engine, lower

    ADD = """
    func.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %out: memref<?xf32>) {
      linalg.add ins(%a, %b : memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>)
      return
    }
    """
    CALLS_BACK = """
    func.func private @callback(i32) -> i32 attributes {llvm.emit_c_interface}
    func.func @main(%x: i32) -> i32 attributes {llvm.emit_c_interface} {
      %r = call @callback(%x) : (i32) -> i32
      return %r : i32
    }
    """
    KEPT = []


    def test_segfaults():
        ctypes.string_at(0)


    def test_after_the_segfault(jit):
        a = np.arange(4, dtype=np.float32)
        out = np.empty_like(a)
        jit(ADD).add(a, a, out)
        assert out.tolist() == [0.0, 2.0, 4.0, 6.0]


    def test_sees_its_level(jit, request):
        level = int(request.node.callspec.id.lstrip("O")) if hasattr(request.node, "callspec") else 2
        assert jit(ADD).opt_level == JitModule(ADD).opt_level == level
        print(f"LEVEL {request.node.name} {level}")


    def test_callback_raises():
        @ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32)
        def callback(x):
            raise ValueError(f"no value for {x}")

        with Context():
            engine = execution_engine(lower(Module.parse(CALLS_BACK)))
        engine.register_runtime("callback", callback)
        engine.invoke("main", ctypes.pointer(ctypes.c_int32(7)), ctypes.pointer(ctypes.c_int32()))


    def test_leaks_a_context():
        KEPT.append(Context())
''')


def check(condition: bool, what: str, output: str) -> None:
    """Prints the check; at a mismatch, pytest's output too, and exits with status 1."""
    print(("ok:     " if condition else "FAILED: ") + what, flush=True)
    if not condition:
        print(textwrap.indent(output, "    | "), flush=True)
        sys.exit(1)


def run(python: str, project: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "MEMREF_RUNTIME_"))}
    env.pop("PYTHONPATH", None)  # the installed package, nothing from the checkout
    done = subprocess.run(
        [python, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    print(f"$ pytest {' '.join(args)}: exit status {done.returncode}", flush=True)
    return done.stdout + done.stderr


def report_of(output: str, test: str) -> str:
    match = re.search(rf"^_+ {test} _+$\n(.*?)(?=^_{{3,}} |^=+ )", output, re.M | re.S)
    return match.group(1) if match else ""


def check_isolation(output: str, how: str) -> None:
    check(
        re.search(r"^FAILED test_route.py::test_segfaults\b", output, re.M) is not None,
        f"{how}: the segfaulting test is FAILED",
        output,
    )
    crash = report_of(output, "test_segfaults")
    check("killed by SIGSEGV (Segmentation fault)" in crash, f"{how}: its report names SIGSEGV", output)
    check("memref-runtime: test_route.py::test_segfaults crashed" in crash, f"{how}: and its test id", output)
    check(
        re.search(r'File ".*test_route.py", line \d+ in test_segfaults', crash) is not None,
        f"{how}: and its Python stack",
        output,
    )
    check(
        re.search(r"^PASSED test_route.py::test_after_the_segfault\b", output, re.M) is not None,
        f"{how}: the next test runs and passes",
        output,
    )
    check("node down" not in output and "crashed while running" not in output, f"{how}: no worker crashed", output)


def main(python: str) -> int:
    python = os.path.abspath(python)  # the runs are in other folders; not resolved, which would leave the venv
    where = subprocess.run(
        [python, "-c", "import memref_runtime; print(memref_runtime.__file__)"],
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
        check=True,
    ).stdout.strip()
    installed = "site-packages" in Path(where).parts and not Path(where).resolve().is_relative_to(CHECKOUT / "runtime")
    check(installed, f"memref_runtime is an installed copy, not the checkout's runtime/ ({where})", where)
    with tempfile.TemporaryDirectory(prefix="memref-runtime-pytest-route-") as folder:
        project = Path(folder)
        (project / "pytest.ini").write_text("[pytest]\n")
        (project / "test_route.py").write_text(PROJECT)

        output = run(python, project, "-v", "--mlir-isolate")
        check("plugins: " in output and "memref-runtime-" in output, "the plugin is on (pytest11 entry point)", output)
        check_isolation(output, "--mlir-isolate")
        check(
            re.search(r"^FAILED test_route.py::test_callback_raises - memref_runtime.process.callba", output, re.M)
            is not None
            and "ValueError: no value for 7" in report_of(output, "test_callback_raises"),
            "a raising ctypes callback fails its test, with its traceback",
            output,
        )
        check(
            re.search(r"ERROR at teardown of test_leaks_a_context _+\n.*1 MLIR Context", output) is not None,
            "a leaked Context fails its test",
            output,
        )

        check_isolation(run(python, project, "-v", "--mlir-isolate", "-n", "2"), "-n 2 --mlir-isolate")

        # A suite that did not ask for the checks (no --mlir-isolate, fixture, marker or ini):
        # the leak and the callback's exception are warnings, and its verdicts are its own.
        output = run(python, project, "-v", "-k", "leaks_a_context or callback_raises")
        check(
            re.search(r"^PASSED test_route.py::test_leaks_a_context\b", output, re.M) is not None
            and re.search(r"^PASSED test_route.py::test_callback_raises\b", output, re.M) is not None
            and output.count("MemrefRuntimeCheckWarning: ") == 2,
            "a suite that did not ask for the checks: both tests pass, each with a warning",
            output,
        )

        output = run(python, project, "-v", "-s", "--mlir-opt-levels=0,3", "-k", "sees_its_level")
        for level in (0, 3):
            check(
                f"LEVEL test_sees_its_level[O{level}] {level}" in output
                and f"PASSED test_route.py::test_sees_its_level[O{level}]" in output,
                f"--mlir-opt-levels=0,3: the run at O{level} passes and sees level {level}",
                output,
            )
    print("pytest plugin route: every check passed")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} VENV_PYTHON (a venv with a plain `pip install <checkout>` and pytest-xdist)")
    sys.exit(main(sys.argv[1]))
