"""check-memref-runtime through CMake: standalone and with find_package(MLIR), from this
folder or through add_subdirectory(), and a failing test fails the target."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import MLIR_CORE

REPO = Path(__file__).resolve().parent.parent
CMAKE = shutil.which("cmake")
MLIR_DIR = Path(os.environ.get("MEMREF_RUNTIME_TEST_MLIR_DIR", "/usr/lib/llvm-22/lib/cmake/mlir"))

pytestmark = pytest.mark.skipif(CMAKE is None, reason="cmake is not installed")

MODES = [
    pytest.param("standalone", id="standalone"),
    pytest.param("mlir", id="find_package-MLIR", marks=pytest.mark.skipif(
        not (MLIR_DIR / "MLIRConfig.cmake").is_file(), reason=f"no MLIRConfig.cmake in {MLIR_DIR}")),
]
FAILING_TEST = "# RUN: %PYTHON %s | FileCheck %s\nprint('two')\n# CHECK: one\n"


@pytest.fixture
def source(tmp_path) -> Path:
    """This project's CMake and lit files, linked into a scratch source folder whose lit_tests/
    holds one real test and one that fails."""
    src = tmp_path / "memref-runtime"
    (src / "lit_tests").mkdir(parents=True)
    for name in ("CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "runtime", "mlir_inputs"):
        (src / name).symlink_to(REPO / name)
    for name in ("lit.local.cfg", "harness_mlir_provider.py"):
        (src / "lit_tests" / name).symlink_to(REPO / "lit_tests" / name)
    (src / "lit_tests" / "fails_on_purpose.py").write_text(FAILING_TEST)
    return src


def configure(src: Path, build: Path, mode: str) -> None:
    flags = [f"-DMLIR_DIR={MLIR_DIR}"] if mode == "mlir" else ["-DMEMREF_RUNTIME_USE_MLIR=OFF"]
    out = subprocess.run([CMAKE, "-S", str(src), "-B", str(build), f"-DPython3_EXECUTABLE={sys.executable}", *flags],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


def check(build: Path, only: str) -> subprocess.CompletedProcess:
    """Builds check-memref-runtime with lit's LIT_FILTER set to `only`."""
    return subprocess.run([CMAKE, "--build", str(build), "--target", "check-memref-runtime"],
                          env=dict(os.environ, LIT_FILTER=only), capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("mode", MODES)
def test_a_failing_test_fails_the_target(source, tmp_path, mode):
    configure(source, tmp_path / "build", mode)
    passing = check(tmp_path / "build", "harness_mlir_provider")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert re.search(r"Passed *: 1 ", passing.stdout), passing.stdout
    failing = check(tmp_path / "build", "fails_on_purpose")
    assert failing.returncode != 0
    assert "FAIL: memref-runtime :: lit_tests/fails_on_purpose.py" in failing.stdout


@pytest.mark.parametrize("mode", MODES)
def test_add_subdirectory_from_a_larger_project(source, tmp_path, mode):
    parent = tmp_path / "parent"
    parent.mkdir()
    find_mlir = "find_package(MLIR REQUIRED CONFIG)\n" if mode == "mlir" else ""
    (parent / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(parent LANGUAGES NONE)\n" + find_mlir
        + f'add_subdirectory("{source}" memref-runtime)\n')
    configure(parent, tmp_path / "build", mode)
    site_cfg = tmp_path / "build" / "memref-runtime" / "lit.site.cfg.py"
    assert site_cfg.is_file()
    if mode == "mlir":  # the tools of that LLVM install, not the wheels'
        assert f'"{MLIR_DIR.parent.parent.parent / "bin"}"' in site_cfg.read_text()
    passing = check(tmp_path / "build", "harness_mlir_provider")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert re.search(r"Passed *: 1 ", passing.stdout), passing.stdout


def test_the_bindings_of_a_build_tree(source, build_tree, tmp_path):
    """MEMREF_RUNTIME_MLIR_PYTHON_PATH reaches lit as -D mlir_python_path does."""
    core = build_tree / MLIR_CORE
    configure(source, tmp_path / "build", "standalone")
    subprocess.run([CMAKE, f"-DMEMREF_RUNTIME_MLIR_PYTHON_PATH={core}", str(tmp_path / "build")],
                   check=True, capture_output=True)
    assert f'config.mlir_python_path = "{core}"' in (tmp_path / "build" / "lit.site.cfg.py").read_text()
    # harness_mlir_provider.py checks `mlir.ir` comes from there (its TREE lines).
    passing = check(tmp_path / "build", "harness_mlir_provider")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert re.search(r"Passed *: 1 ", passing.stdout), passing.stdout
