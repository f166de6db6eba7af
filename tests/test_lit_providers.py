"""The lit suite against other MLIR sources: a build tree's bindings (-D mlir_python_path),
the parameter names of the LLVM-style routes, and the features naming the provider."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support.build_tree import MLIR_CORE, MLIR_TOOLS
from support.paths import LIT, REPO

pytestmark = pytest.mark.skipif(LIT is None, reason="lit is not installed")

PROVIDER = os.environ.get("MEMREF_RUNTIME_BINDINGS") or "mlir"  # lit.cfg.py's default too


def lit(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    # No performance tests: beside the other pytest workers their timing means nothing (README
    # command 1 and CI's lit routes run them).
    return subprocess.run(
        [LIT, "-a", "-D", f"exec_root={tmp_path}", "-D", "perf_tests=0", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )


# A test of each kind the build tree's parts reach: its bindings (the provider's features), its
# mlir-opt, mlir-runner and runner-utils libraries (named bare and as %mlir_runner), its
# mlir-translate, and JIT tests of the bindings. The settings are the suite's, whatever the
# test: CI's routes run the whole suite.
BUILD_TREE_TESTS = (
    "harness_mlir_provider.py",
    "mlir_runner_linalg_matmul.mlir",
    "mlir_runner_print_memref.mlir",
    "mlir_translate_llvmir.mlir",
    "print_memref_runner_utils.py",
    "typed_calls.py",
    "memref_callbacks.py",
)


def test_the_suite_on_a_build_tree(build_tree, tmp_path):
    """The suite passes with a build tree's bindings, tools and libraries, which come first."""
    tests = [f"lit_tests/{name}" for name in BUILD_TREE_TESTS]
    out = lit(tmp_path, "-D", f"mlir_python_path={build_tree / MLIR_CORE}", "--debug", *tests)
    assert out.returncode == 0, out.stdout + out.stderr
    for test in tests:
        assert f"PASS: memref-runtime :: {test}" in out.stdout
    assert "FAIL" not in out.stdout
    # The .mlir tests ran the build tree's tools with its runner-utils libraries.
    for tool in MLIR_TOOLS:
        assert f"{build_tree}/bin/{tool} " in out.stdout
    assert (
        f"-shared-libs={build_tree}/lib/libmlir_c_runner_utils.so,{build_tree}/lib/libmlir_runner_utils.so"
        in out.stdout
    )
    assert "'mlir-python-path'" in out.stderr and "'bindings-mlir'" in out.stderr


def test_default_provider_features(tmp_path):
    out = lit(tmp_path, "--debug", "lit_tests/harness_mlir_provider.py")
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"'bindings-{PROVIDER}'" in out.stderr and "'mlir-python-path'" not in out.stderr
    major = next(
        word for word in out.stderr.replace(",", " ").split() if word.startswith("'mlir-") and word[6:-1].isdigit()
    )
    assert int(major[6:-1]) >= 17


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["-D", "mlir_python=mlir", "-D", "mlir_python_path=/no/such/folder"],
            "-D mlir_python_path: expected a folder holding the 'mlir' package (an LLVM build's "
            "tools/mlir/python_packages/mlir_core), got '/no/such/folder'",
        ),
        (
            ["-D", "mlir_runtime=memref_runtime", "-D", "runtime=upstream"],
            "-D mlir_runtime and -D runtime name the same setting, got 'memref_runtime' and 'upstream'",
        ),
        (
            ["-D", "mlir_python=mlir", "-D", "mlir_bindings=torch_mlir"],
            "-D mlir_python and -D mlir_bindings name the same setting, got 'mlir' and 'torch_mlir'",
        ),
        (["-D", "mlir_python=no_such_mlir"], "-D mlir_python: expected one of mlir, torch_mlir, got 'no_such_mlir'"),
        (["-D", "mlir_runtime=ours"], "-D mlir_runtime: expected one of upstream, memref_runtime, got 'ours'"),
    ],
)
def test_bad_parameters_stop_lit_with_the_reason(tmp_path, args, message):
    out = lit(tmp_path, *args, "lit_tests/harness_mlir_provider.py")
    assert out.returncode != 0
    assert message in out.stderr


def test_old_parameter_names_still_work(tmp_path):
    out = lit(
        tmp_path,
        "-D",
        f"mlir_bindings={PROVIDER}",
        "-D",
        "runtime=memref_runtime",
        "--debug",
        "lit_tests/upstream_style_runtime.py",
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "'runtime-memref_runtime'" in out.stderr
