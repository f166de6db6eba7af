"""The pytest plugin (memref_runtime.pytest_plugin) apart from crash isolation: its options and ini
settings, the opt-level matrix, the Context leak check, callback exceptions, the fixtures, the
header, `-p no:memref_runtime`. Most run a throw-away project in a fresh pytest; the fixtures are
also this suite's own (the plugin is on here too)."""

from __future__ import annotations

import os
import re
import sys

import numpy as np
import pytest
from support.engine import HAVE_JIT
from support.paths import RUNTIME_DIR
from support.subprocesses import make_pytest_project, run_pytest
from support.workers import run_once

needs_jit = pytest.mark.skipif(not HAVE_JIT, reason="no MLIR Python bindings with an ExecutionEngine")

ADD = """
func.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %out: memref<?xf32>) {
  linalg.add ins(%a, %b : memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>)
  return
}
"""

# Each test prints what its JitModules and memref_runtime.testing see, one line per test.
LEVELS = f'''
import os
import pytest
from memref_runtime import JitModule, settings

ADD = """{ADD}"""


def report(request, module):
    print(f"SEEN {{request.node.name}} jit={{module.opt_level}} direct={{JitModule(ADD).opt_level}} "
          f"testing={{settings.resolve_opt_level(None)}} verification={{module.runtime_verification}}", flush=True)


def test_levels(jit, request):
    report(request, jit(ADD))


@pytest.mark.isolated
def test_levels_isolated(jit, request):
    report(request, jit(ADD))


def test_without_jit(request):
    report(request, JitModule(ADD))
'''


def seen(stdout: str) -> dict[str, str]:
    """test -> what it saw, from its SEEN line (after pytest's progress output, under -s)."""
    return dict(re.findall(r"SEEN (\S+) (jit=.*? verification=\w+)", stdout))


@pytest.fixture(scope="module")
def levels_project(tmp_path_factory):
    return make_pytest_project(tmp_path_factory.mktemp("levels"), {"test_levels.py": LEVELS})


@needs_jit
def test_the_opt_level_matrix_runs_jit_tests_once_per_level(levels_project):
    out = run_pytest(levels_project, "-s", "-v", "--mlir-opt-levels=0,3")
    assert seen(out.stdout) == {
        "test_levels[O0]": "jit=0 direct=0 testing=0 verification=False",
        "test_levels[O3]": "jit=3 direct=3 testing=3 verification=False",
        "test_levels_isolated[O0]": "jit=0 direct=0 testing=0 verification=False",
        "test_levels_isolated[O3]": "jit=3 direct=3 testing=3 verification=False",
        "test_without_jit": "jit=2 direct=2 testing=2 verification=False",  # not in the matrix
    }, out.stdout + out.stderr
    assert "5 passed" in out.stdout
    header = [line for line in out.stdout.splitlines() if line.startswith("memref-runtime: ")]
    assert len(header) == 3 and re.match(r"memref-runtime: MLIR \d+\.\d+\.\d+\S* \((mlir|torch_mlir): ", header[0]), (
        header
    )
    assert header[1] == (
        "memref-runtime: opt levels 0, 3 for tests that use `jit` (--mlir-opt-levels), 2 for the "
        "others, runtime verification off, isolation: tests marked isolated, Context leak check on, "
        "checks fail the tests that ask (else they warn)"
    )
    assert re.match(r"memref-runtime: FileCheck .*(FileCheck \(LLVM, |filecheck \(the Python filecheck, )", header[2])


@needs_jit
def test_the_matrix_under_xdist(levels_project):
    out = run_pytest(levels_project, "-n", "2", "-rA", "--mlir-opt-levels=1,3", "--mlir-opt-level=0")
    assert sorted(re.findall(r"^PASSED \S+::(\S+)", out.stdout, re.M)) == [
        "test_levels[O1]",
        "test_levels[O3]",
        "test_levels_isolated[O1]",
        "test_levels_isolated[O3]",
        "test_without_jit",
    ], out.stdout
    # Each run saw its own level (the test's print goes to the PASSES section of -rA).
    assert "SEEN test_levels[O1] jit=1 direct=1 testing=1" in out.stdout
    assert "SEEN test_levels_isolated[O3] jit=3 direct=3 testing=3" in out.stdout
    assert "SEEN test_without_jit jit=0 direct=0 testing=0" in out.stdout


@needs_jit
def test_the_suite_settings_reach_every_jit_module(levels_project):
    out = run_pytest(levels_project, "-s", "--mlir-opt-level=1", "--mlir-runtime-verification")
    assert set(seen(out.stdout).values()) == {"jit=1 direct=1 testing=1 verification=True"}, out.stdout
    assert len(seen(out.stdout)) == 3
    assert "memref-runtime: opt level 1, runtime verification on" in out.stdout  # the header


@needs_jit
def test_the_ini_file_and_the_command_line_wins(tmp_path):
    project = make_pytest_project(tmp_path, {"test_levels.py": LEVELS})
    (project / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nmlir_opt_level = "3"\nmlir_opt_levels = "0"\nmlir_runtime_verification = "true"\n'
    )
    (project / "pytest.ini").unlink()
    out = run_pytest(project, "-s", "-k", "without")
    assert seen(out.stdout) == {"test_without_jit": "jit=3 direct=3 testing=3 verification=True"}, out.stdout
    out = run_pytest(
        project,
        "-s",
        "--mlir-opt-level=1",
        "--mlir-opt-levels=2",
        "-o",
        "mlir_runtime_verification=0",
        "test_levels.py::test_levels",
    )
    assert seen(out.stdout) == {"test_levels[O2]": "jit=2 direct=2 testing=2 verification=False"}, out.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--mlir-opt-level=4"], "--mlir-opt-level: expected an opt level 0, 1, 2 or 3, got '4'"),
        (["-o", "mlir_opt_levels=0,fast"], "mlir_opt_levels (ini): expected an opt level 0, 1, 2 or 3, got 'fast'"),
        (
            ["--mlir-runtime-verification", "-o", "mlir_isolate=maybe"],
            "mlir_isolate (ini): expected 1 or 0 (true/false, on/off), got 'maybe'",
        ),
        (["--mlir-timeout=soon"], "--mlir-timeout: expected a number of seconds (0: no timeout), got 'soon'"),
        (["--mlir-python=jax"], "--mlir-python: expected one of mlir, torch_mlir, got 'jax'"),
        (
            ["--mlir-filecheck=/no/FileCheck"],
            "--mlir-filecheck: expected the path of an executable FileCheck, got '/no/FileCheck', which is not one",
        ),
    ],
)
def test_a_bad_value_stops_pytest_naming_the_option(tmp_path, args, message):
    out = run_pytest(make_pytest_project(tmp_path, {}), *args)
    assert out.returncode == 4 and f"ERROR: {message}" in out.stderr, out.stderr


def test_a_provider_that_is_not_installed_is_refused(tmp_path):
    out = run_pytest(
        make_pytest_project(tmp_path, {}), "--mlir-python=torch_mlir", env={"PYTHONPATH": str(RUNTIME_DIR)}
    )  # whatever the outer run aliased, not here
    if "ERROR" not in out.stderr:
        pytest.skip("torch_mlir is installed here")
    assert (
        f"ERROR: --mlir-python: {sys.executable} cannot import the 'torch_mlir' package (pip install torch-mlir)"
        in out.stderr.replace(os.path.realpath(sys.executable), sys.executable)
    )


# --- --mlir-python: `import mlir` gives another provider, here a stand-in package ---------------------

FAKE_PROVIDER = {
    "fake/torch_mlir/__init__.py": "",
    "fake/torch_mlir/ir.py": """
        MARK = "the stand-in provider"

        class Context:
            @staticmethod
            def _get_live_count():
                return 0
        """,
    "conftest.py": """
        import mlir.ir  # a conftest's import already gets the provider the option names

        CONFTEST_MARK = mlir.ir.MARK
        """,
    "test_provider.py": """
        import os
        import subprocess
        import sys

        import conftest
        import mlir.ir


        def test_mlir_is_the_provider():
            assert mlir.ir.MARK == conftest.CONFTEST_MARK == "the stand-in provider"
            assert os.environ["MEMREF_RUNTIME_BINDINGS"] == "torch_mlir"


        def test_a_python_process_the_test_starts_gets_it_too():
            out = subprocess.run([sys.executable, "-c", "import mlir.ir; print(mlir.ir.MARK)"],
                                 capture_output=True, text=True, check=True)
            assert out.stdout == "the stand-in provider\\n"
        """,
}


def test_mlir_python_aliases_mlir_before_conftests_import_it(tmp_path):
    project = make_pytest_project(tmp_path, FAKE_PROVIDER)
    pythonpath = os.pathsep.join([str(project / "fake"), str(RUNTIME_DIR)])
    out = run_pytest(project, "-v", "--mlir-python=torch_mlir", env={"PYTHONPATH": pythonpath})
    assert "2 passed" in out.stdout, out.stdout + out.stderr
    assert re.search(
        r"memref-runtime: MLIR \(version unknown\) \(torch_mlir: .*, from "
        r".*fake/torch_mlir; `import mlir` gives it\)",
        out.stdout,
    ), out.stdout
    # The environment's MEMREF_RUNTIME_BINDINGS is the default of the option, as for lit.
    out = run_pytest(project, env={"PYTHONPATH": pythonpath, "MEMREF_RUNTIME_BINDINGS": "torch_mlir"})
    assert "2 passed" in out.stdout, out.stdout + out.stderr


# --- Context leaks and callback exceptions, without isolation ---------------------------------------

CHECKS = {
    "conftest.py": """
        import pytest
        from mlir.ir import Context

        from memref_runtime import JitModule

        KEPT = []
        ADD = open(__file__.replace("conftest.py", "add.mlir")).read()


        @pytest.fixture(scope="module")
        def shared_module():
            return JitModule(ADD)


        @pytest.fixture
        def context():
            with Context() as c:
                yield c


        @pytest.fixture
        def keeps_one():
            KEPT.append(Context())
        """,
    "add.mlir": ADD,
    "test_checks.py": """
        import ctypes

        import pytest
        from mlir.ir import Context, Module

        from conftest import ADD, KEPT
        from memref_runtime.testing import execution_engine, lower

        RAISES = '''
        func.func private @callback(i32) -> i32 attributes {llvm.emit_c_interface}
        func.func @main(%x: i32) -> i32 attributes {llvm.emit_c_interface} {
          %r = call @callback(%x) : (i32) -> i32
          return %r : i32
        }'''


        def test_a_module_fixture_holds_its_context(shared_module):
            assert shared_module.functions == ("add",)


        def test_so_does_the_next_test(shared_module):
            pass


        def test_a_function_fixture_releases_its_context(context):
            Module.parse("module {}", context)


        def test_jit_releases_its_modules(jit):
            for _ in range(3):
                jit(ADD)


        def test_leaks_one():
            KEPT.append(Context())


        def test_leaks_two():
            KEPT.extend([Context(), Context()])


        def test_a_fixture_that_leaks(keeps_one):
            pass


        def test_fails_holding_a_context():
            context = Context()
            assert context is None  # its traceback keeps `context`: a failure, not also a leak


        @pytest.mark.allow_context_leak(reason="kept on purpose")
        def test_opted_out():
            KEPT.append(Context())


        def test_a_callback_raises():
            @ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32)
            def callback(x):
                raise KeyError(f"no entry {x}")

            with Context():
                engine = execution_engine(lower(Module.parse(RAISES)))
            engine.register_runtime("callback", callback)
            engine.invoke("main", ctypes.pointer(ctypes.c_int32(5)), ctypes.pointer(ctypes.c_int32()))
        """,
}


@pytest.fixture(scope="module")
def checks_run(request, tmp_path_factory):
    # --mlir-checks: every test of the project is checked (test_pytest_scope.py: the default).
    return run_once(
        request,
        tmp_path_factory,
        "checks-run",
        lambda folder: run_pytest(make_pytest_project(folder, CHECKS), "-rA", "--mlir-checks"),
    )


def errors_at_teardown(stdout: str) -> dict[str, str]:
    return dict(re.findall(r"^_+ ERROR at teardown of (\w+) _+\n(?:\[gw\d+\] .*\n)?(.*)$", stdout, re.M))


@needs_jit
def test_a_test_that_leaves_a_context_alive_fails_with_the_count(checks_run):
    errors = errors_at_teardown(checks_run.stdout)
    assert set(errors) == {"test_leaks_one", "test_leaks_two", "test_a_fixture_that_leaks"}, checks_run.stdout
    assert errors["test_leaks_one"].startswith(
        "memref-runtime: 1 MLIR Context created by this test is still alive after its teardown and a garbage "
        "collection: Context._get_live_count() is 2, 1 when the test began"
    )  # the module fixture's is the 1
    assert errors["test_leaks_two"].startswith("memref-runtime: 2 MLIR Contexts created by this test are still alive")
    assert "@pytest.mark.allow_context_leak(reason=...) opts a test out" in errors["test_leaks_one"]


@needs_jit
def test_fixtures_and_jit_modules_are_not_leaks(checks_run):
    passed = set(re.findall(r"^PASSED \S+::(\w+)", checks_run.stdout, re.M))
    assert {
        "test_a_module_fixture_holds_its_context",
        "test_so_does_the_next_test",
        "test_opted_out",
        "test_a_function_fixture_releases_its_context",
        "test_jit_releases_its_modules",
    } <= passed
    assert re.search(r"^FAILED \S+::test_fails_holding_a_context ", checks_run.stdout, re.M)
    assert not {
        "test_a_module_fixture_holds_its_context",
        "test_jit_releases_its_modules",
        "test_a_function_fixture_releases_its_context",
        "test_fails_holding_a_context",
    } & set(errors_at_teardown(checks_run.stdout))


@needs_jit
def test_an_exception_in_a_ctypes_callback_fails_its_test_with_its_traceback(checks_run):
    assert "FAILED test_checks.py::test_a_callback_raises - memref_runtime.process.callba" in checks_run.stdout
    text = checks_run.stdout.split("_ test_a_callback_raises _", 1)[1]
    assert """raise KeyError(f"no entry {x}")\nE       KeyError: 'no entry 5'""" in text
    assert "The above exception was the direct cause of the following exception:" in text
    assert (
        "CallbackException: test_checks.py::test_a_callback_raises (call): 1 exception raised in ctypes "
        "callbacks (traceback above), the first KeyError: 'no entry 5'"
    ) in text


@needs_jit
def test_the_checks_can_be_turned_off(tmp_path):
    out = run_pytest(make_pytest_project(tmp_path, CHECKS), "--mlir-no-leak-check", "-k", "leaks or fixture_that")
    assert "3 passed" in out.stdout and "ERROR" not in out.stdout, out.stdout


@needs_jit
def test_no_memref_runtime_turns_the_plugin_off(tmp_path):
    project = make_pytest_project(tmp_path, CHECKS)
    out = run_pytest(project, "-p", "no:memref_runtime", "-k", "leaks or callback")
    assert "4 passed" in out.stdout, out.stdout  # no leak check, the callback's exception only a warning
    out = run_pytest(project, "-p", "no:memref_runtime", "--mlir-isolate")
    assert out.returncode == 4 and "unrecognized arguments: --mlir-isolate" in out.stderr


# --- the fixtures, as this suite gets them ------------------------------------------------------------


def test_filecheck_passes_and_fails_with_filechecks_message(filecheck, tmp_path):
    filecheck("first\nsecond\n", "CHECK: first\nCHECK-NEXT: second\n")
    checks = tmp_path / "checks.txt"
    checks.write_text("CHECK: first\nCHECK-NEXT: third\n")
    with pytest.raises(pytest.fail.Exception) as info:
        filecheck("first\nsecond\n", checks)
    message = str(info.value)
    assert message.startswith("FileCheck failed: ")
    # LLVM's FileCheck, or the Python one (torch-mlir's route): each says it its way.
    assert re.search(
        r"checks.txt:2:(\d+: error: CHECK-NEXT: expected string not found in input"
        r"|\d*:? ?error: Couldn't match \"third\")",
        message,
    ), message
    with pytest.raises(
        pytest.fail.Exception,
        match=r"checks:1:(\d+: error: FOO: expected string not found"
        r"|\d*:? ?error: Couldn't match \"nothing\")",
    ):
        filecheck("first\n", "FOO: nothing\n", "--check-prefix=FOO")
    with pytest.raises(TypeError, match=r"checks: expected CHECK lines \(a str\) or a path \(os.PathLike\), got int"):
        filecheck("first\n", 3)


@needs_jit
def test_jit_check_close_and_check_against(jit, check_close, check_against):
    from memref_runtime.testing import check_close as plain

    assert check_close is plain
    module = jit(ADD)
    assert module in jit.modules and module.opt_level == jit.opt_level
    a = np.arange(5, dtype=np.float32)
    out = np.empty_like(a)
    module.add(a, a, out)
    check_close("add", out, 2 * a)

    def reference(a, b, out):
        out[...] = a + b

    assert check_against(module.add, reference, outputs=[2], max_examples=5).examples == 5
