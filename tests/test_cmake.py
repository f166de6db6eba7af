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
from support.build_tree import MLIR_CORE
from support.paths import REPO

CMAKE = shutil.which("cmake")
MLIR_DIR = Path(os.environ.get("MEMREF_RUNTIME_TEST_MLIR_DIR", "/usr/lib/llvm-22/lib/cmake/mlir"))

pytestmark = [pytest.mark.harness, pytest.mark.skipif(CMAKE is None, reason="cmake is not installed")]

MODES = [
    pytest.param("standalone", id="standalone"),
    pytest.param(
        "mlir",
        id="find_package-MLIR",
        marks=[
            pytest.mark.skipif(
                not (MLIR_DIR / "MLIRConfig.cmake").is_file(), reason=f"no MLIRConfig.cmake in {MLIR_DIR}"
            ),
            pytest.mark.debian_llvm,
        ],
    ),
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
    out = subprocess.run(
        [CMAKE, "-S", str(src), "-B", str(build), f"-DPython3_EXECUTABLE={sys.executable}", *flags],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def check(build: Path, only: str) -> subprocess.CompletedProcess:
    """Builds check-memref-runtime with lit's LIT_FILTER set to `only`."""
    return subprocess.run(
        [CMAKE, "--build", str(build), "--target", "check-memref-runtime"],
        env=dict(os.environ, LIT_FILTER=only),
        capture_output=True,
        text=True,
        timeout=600,
    )


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
        "cmake_minimum_required(VERSION 3.20)\nproject(parent LANGUAGES NONE)\n"
        + find_mlir
        + f'add_subdirectory("{source}" memref-runtime)\n'
    )
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
    subprocess.run(
        [CMAKE, f"-DMEMREF_RUNTIME_MLIR_PYTHON_PATH={core}", str(tmp_path / "build")], check=True, capture_output=True
    )
    assert f'config.mlir_python_path = "{core}"' in (tmp_path / "build" / "lit.site.cfg.py").read_text()
    # harness_mlir_provider.py checks `mlir.ir` comes from there (its TREE lines).
    passing = check(tmp_path / "build", "harness_mlir_provider")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert re.search(r"Passed *: 1 ", passing.stdout), passing.stdout


# --- no lit ---------------------------------------------------------------------------------

# A PATH with the system's tools (make for CMake's generator) and no lit.
BARE_PATH = os.pathsep.join(d for d in ("/usr/bin", "/bin") if os.path.isdir(d))
DEBIAN_LIT = MLIR_DIR.parent.parent.parent / "bin" / "lit"  # llvm-XX-tools' own lit script


@pytest.fixture
def python_without_lit(tmp_path) -> Path:
    """This interpreter, linked into a folder of its own: no lit next to it."""
    if shutil.which("lit", path=BARE_PATH) or shutil.which("llvm-lit", path=BARE_PATH):
        pytest.skip(f"lit is installed in {BARE_PATH}")
    folder = tmp_path / "bare-python"
    folder.mkdir()
    (folder / "python3").symlink_to(sys.executable)
    return folder / "python3"


def configure_without_lit(src: Path, build: Path, python: Path, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CMAKE, "-S", str(src), "-B", str(build), f"-DPython3_EXECUTABLE={python}", *flags],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PATH=BARE_PATH),
    )


def words(text: str) -> str:
    """`text` with CMake's line wrapping undone."""
    return " ".join(text.split())


def test_configure_without_lit_stops_and_says_how_to_install_it(source, tmp_path, python_without_lit):
    out = configure_without_lit(source, tmp_path / "build", python_without_lit, "-DMEMREF_RUNTIME_USE_MLIR=OFF")
    assert out.returncode != 0
    message = words(out.stderr)
    assert "memref-runtime: no lit to run the suite with." in message, out.stderr
    assert f"next to {python_without_lit} ({python_without_lit.parent}) and on PATH" in message
    assert f'"{python_without_lit}" -m pip install lit' in message
    assert not (tmp_path / "build" / "lit.site.cfg.py").exists()


@pytest.mark.parametrize("mode", MODES)
def test_a_missing_llvm_external_lit_stops_configure(source, tmp_path, python_without_lit, mode):
    flags = [f"-DMLIR_DIR={MLIR_DIR}"] if mode == "mlir" else ["-DMEMREF_RUNTIME_USE_MLIR=OFF"]
    out = configure_without_lit(
        source, tmp_path / "build", python_without_lit, "-DLLVM_EXTERNAL_LIT=/nowhere/llvm-lit", *flags
    )
    assert out.returncode != 0
    assert "memref-runtime: LLVM_EXTERNAL_LIT is /nowhere/llvm-lit, which does not exist." in words(out.stderr)


@pytest.mark.debian_llvm
@pytest.mark.skipif(
    not (MLIR_DIR / "MLIRConfig.cmake").is_file() or not DEBIAN_LIT.is_file(),
    reason=f"no LLVM install with its own lit at {DEBIAN_LIT}",
)
def test_an_llvm_install_without_llvm_lit_lends_its_own_lit(source, tmp_path, python_without_lit):
    """Debian ships bin/lit but not the bin/llvm-lit LLVMConfig names: with no other lit, that one."""
    out = configure_without_lit(source, tmp_path / "build", python_without_lit, f"-DMLIR_DIR={MLIR_DIR}")
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"lit is {DEBIAN_LIT}" in out.stdout
