"""The pytest plugin changes no verdict of a suite that did not ask for its checks: a Context left
alive or an exception in a ctypes callback fails only tests that use the plugin's fixtures or
markers, or a suite that turned the checks on (ini, command line, conftest.py); elsewhere it is a
warning that `filterwarnings = error` cannot turn into a failure. Also --mlir-runtime, the
torch_mlir.runtime alias, and the warning about a `jit` fixture that --mlir-opt-levels cannot reach."""

from __future__ import annotations

import os
import re

import pytest
from support.engine import HAVE_JIT
from support.paths import RUNTIME_DIR
from support.subprocesses import make_pytest_project, run_pytest

pytestmark = pytest.mark.harness
needs_mlir = pytest.mark.skipif(not HAVE_JIT, reason="no MLIR Python bindings with an ExecutionEngine")

# The issue's minimal form of a third-party test (eudsl-python-extras' suite): a real leak.
LEAKS = """
    from mlir.ir import Context, IndexType

    _keep = []


    def test_leaks_a_context():
        with Context():
            _keep.append(IndexType.get())
    """
LEAKS_WITH_JIT = LEAKS.replace("def test_leaks_a_context():", "def test_leaks_a_context(jit):")
ASKS_IN_CONFTEST = """
    import pytest


    @pytest.fixture(autouse=True)
    def _checked(mlir_checks):
        pass
    """
LEAK_TEXT = "memref-runtime: 1 MLIR Context created by this test is still alive after its teardown"


def summary(stdout: str) -> str:
    return stdout.strip().splitlines()[-1]


@needs_mlir
@pytest.mark.parametrize("ini", ["", "filterwarnings =\n    error\n"])
def test_a_suite_that_did_not_ask_keeps_its_verdict_and_gets_a_warning(tmp_path, ini):
    project = make_pytest_project(tmp_path, {"test_third_party.py": LEAKS})
    (project / "pytest.ini").write_text("[pytest]\n" + ini)
    out = run_pytest(project)
    assert re.search(r"^=+ 1 passed, 1 warning in ", summary(out.stdout)), out.stdout + out.stderr
    assert "MemrefRuntimeCheckWarning: " + LEAK_TEXT in out.stdout
    assert "this test did not ask for memref-runtime's checks; --mlir-checks does" in out.stdout


@needs_mlir
@pytest.mark.parametrize(
    "files, args, ini",
    [
        ({"test_third_party.py": LEAKS_WITH_JIT}, (), ""),  # the test uses the plugin's fixture
        ({"test_third_party.py": LEAKS}, ("--mlir-checks",), ""),
        ({"test_third_party.py": LEAKS}, (), "mlir_checks = 1\n"),
        ({"test_third_party.py": LEAKS, "conftest.py": ASKS_IN_CONFTEST}, (), ""),
    ],
    ids=["jit-fixture", "command-line", "ini", "conftest"],
)
def test_a_test_or_suite_that_asked_fails_with_the_count(tmp_path, files, args, ini):
    project = make_pytest_project(tmp_path, files)
    (project / "pytest.ini").write_text("[pytest]\n" + ini)
    out = run_pytest(project, *args)
    assert re.search(r"^=+ 1 passed, 1 error in ", summary(out.stdout)), out.stdout + out.stderr
    assert "ERROR at teardown of test_leaks_a_context" in out.stdout and LEAK_TEXT in out.stdout


CALLBACK = """
    import ctypes

    from mlir.ir import Context, Module
    from memref_runtime.testing import execution_engine, lower

    RAISES = '''
    func.func private @callback(i32) -> i32 attributes {llvm.emit_c_interface}
    func.func @main(%x: i32) -> i32 attributes {llvm.emit_c_interface} {
      %r = call @callback(%x) : (i32) -> i32
      return %r : i32
    }'''


    def test_a_callback_raises(ASKS):
        @ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32)
        def callback(x):
            raise KeyError(f"no entry {x}")

        with Context():
            engine = execution_engine(lower(Module.parse(RAISES)))
        engine.register_runtime("callback", callback)
        engine.invoke("main", ctypes.pointer(ctypes.c_int32(5)), ctypes.pointer(ctypes.c_int32()))
    """


@needs_mlir
def test_an_exception_in_a_callback_fails_only_a_test_that_asked(tmp_path):
    unasked = make_pytest_project(tmp_path / "unasked", {"test_cb.py": CALLBACK.replace("ASKS", "")})
    out = run_pytest(unasked, "-p", "no:unraisableexception")
    assert "1 passed" in summary(out.stdout), out.stdout + out.stderr
    assert re.search(
        r"MemrefRuntimeCheckWarning: test_cb.py::test_a_callback_raises \(call\): 1 exception raised "
        r"in ctypes callbacks",
        out.stdout,
    ), out.stdout
    asked = make_pytest_project(tmp_path / "asked", {"test_cb.py": CALLBACK.replace("ASKS", "mlir_checks")})
    out = run_pytest(asked)
    assert "1 failed" in summary(out.stdout), out.stdout + out.stderr
    assert "KeyError: 'no entry 5'" in out.stdout


RUNTIME_TEST = """
    import subprocess
    import sys

    import mlir.runtime


    def test_which_runtime():
        import memref_runtime.np_to_memref as ours

        mine = mlir.runtime.get_ranked_memref_descriptor is ours.get_ranked_memref_descriptor
        child = subprocess.run([sys.executable, "-c", "import mlir.runtime, memref_runtime.np_to_memref as o; "
                                "print(mlir.runtime.get_ranked_memref_descriptor is o.get_ranked_memref_descriptor)"],
                               capture_output=True, text=True, check=True).stdout.strip()
        print(f"RUNTIME ours={mine} child={child}")
    """


@needs_mlir
@pytest.mark.parametrize("option, ours", [(None, "False"), ("upstream", "False"), ("memref_runtime", "True")])
def test_mlir_runtime_picks_what_mlir_runtime_is(tmp_path, option, ours):
    project = make_pytest_project(tmp_path, {"test_runtime.py": RUNTIME_TEST})
    out = run_pytest(project, "-s", *([f"--mlir-runtime={option}"] if option else []))
    assert f"RUNTIME ours={ours} child={ours}" in out.stdout, out.stdout + out.stderr


def test_a_bad_runtime_is_refused_by_name(tmp_path):
    out = run_pytest(make_pytest_project(tmp_path, {}), "--mlir-runtime=ours")
    assert "--mlir-runtime: expected one of upstream, memref_runtime, got 'ours'" in out.stderr


PROVIDER_RUNTIME = {
    "fake/torch_mlir/__init__.py": "",
    "fake/torch_mlir/ir.py": """
        class Context:
            @staticmethod
            def _get_live_count():
                return 0
        """,
    "fake/torch_mlir/runtime/__init__.py": "get_ranked_memref_descriptor = 'the provider own'\n",
    "test_refbackend.py": """
        def test_torch_mlir_runtime_is_ours_too():
            import torch_mlir.runtime
            import mlir.runtime
            import memref_runtime.np_to_memref as ours

            assert torch_mlir.runtime.get_ranked_memref_descriptor is ours.get_ranked_memref_descriptor
            assert mlir.runtime.get_ranked_memref_descriptor is ours.get_ranked_memref_descriptor
        """,
}


def test_under_another_provider_its_runtime_module_gets_the_alias_too(tmp_path):
    project = make_pytest_project(tmp_path, PROVIDER_RUNTIME)
    env = {"PYTHONPATH": os.pathsep.join([str(project / "fake"), str(RUNTIME_DIR)])}
    out = run_pytest(project, "--mlir-python=torch_mlir", "--mlir-runtime=memref_runtime", env=env)
    assert "1 passed" in summary(out.stdout), out.stdout + out.stderr
    out = run_pytest(project, "--mlir-python=torch_mlir", env=env)  # upstream's: the provider's own
    assert "1 failed" in summary(out.stdout), out.stdout + out.stderr


SHADOWS = """
    import pytest


    @pytest.fixture(scope="module")
    def jit():
        return "a module of this file's own"


    def test_one(jit):
        pass


    def test_two(jit):
        pass


    def test_reached(jit, mlir_opt_level):
        pass
    """


def test_a_jit_fixture_that_shadows_the_plugins_is_named_under_the_matrix(tmp_path):
    project = make_pytest_project(tmp_path, {"test_shadows.py": SHADOWS})
    out = run_pytest(project, "--mlir-opt-levels=0,3", "-v")
    assert re.search(
        r"test_shadows.py:5: ShadowedFixtureWarning: the fixture `jit` defined here shadows "
        r"memref-runtime's, so --mlir-opt-levels=0,3 does not reach its 2 tests",
        out.stdout,
    ), out.stdout
    assert "test_reached[O0]" in out.stdout and "4 passed, 1 warning" in summary(out.stdout)
    out = run_pytest(project)  # no matrix asked: nothing to say
    assert "3 passed in" in summary(out.stdout) and "ShadowedFixtureWarning" not in out.stdout
