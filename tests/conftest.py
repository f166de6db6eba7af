"""This suite's hooks, fixtures and markers; the helpers the tests share are in tests/support/."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings
from support import workers
from support.build_tree import installed_mlir, make_build_tree
from support.engine import HAVE_JIT, MIN_MLIR_FOR_I1_MEMREF, MLIR_MAJOR

from memref_runtime import environment

# Every xdist worker and every Python the tests start (pytest, lit, the culprit's check runs)
# imports NumPy, whose OpenBLAS starts a thread pool that spins a while: one thread, as lit's test
# processes get (docs/speed.md), unless the environment says how many.
os.environ.setdefault(environment.OPENBLAS_NUM_THREADS, "1")

# Property tests (tests/test_properties.py) run under a profile: "ci" by default, a few hundred
# examples in all; `pytest --hypothesis-profile=long tests/test_properties.py` runs 10,000 per
# property. No deadline: the first example of a kernel JIT-compiles it.
settings.register_profile("ci", max_examples=100, deadline=None)
settings.register_profile("long", max_examples=10_000, deadline=None)


def pytest_configure(config):
    if config.getoption("hypothesis_profile", None) is None:
        settings.load_profile("ci")
    workers.run_in_parallel_by_default(config)
    config.addinivalue_line(
        "markers", "serial: runs alone: no other test runs meanwhile, also under pytest -n (RSS, timing)"
    )
    config.addinivalue_line(
        "markers", f"mlir_i1_memref: needs MLIR >= {MIN_MLIR_FOR_I1_MEMREF} to lower memref.load/store of i1"
    )
    config.addinivalue_line("markers", "jit: compiles and runs MLIR with the ExecutionEngine")
    config.addinivalue_line(
        "markers",
        "debian_llvm: needs Debian's LLVM 22 packages (/usr/lib/llvm-22), which the README's commands "
        "do not install: skipped with the reason without them; .ci/run's debian route runs these",
    )
    config.addinivalue_line(
        "markers",
        "harness: tests of the lit harness's machinery (lit, CMake, pytest, the tools run in "
        "subprocesses); the same on every Python and provider, so .ci/run's torch-mlir route "
        "(Python 3.10) deselects them (-m 'not harness') and runs the lit suite itself there instead",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    item.stash[workers.NEXT_ITEM] = nextitem  # serial_tests_run_alone keeps its lock for a serial next test


@pytest.fixture(autouse=True)
def serial_tests_run_alone(request, tmp_path_factory):
    """Under pytest -n, a test marked `serial` runs while no other test does (support.workers)."""
    with workers.alone_if_serial(request, tmp_path_factory):
        yield


def pytest_collection_modifyitems(config, items):
    no_i1 = pytest.mark.skip(
        reason=f"MLIR {MLIR_MAJOR} < {MIN_MLIR_FOR_I1_MEMREF}: lowering memref.load/store of i1 "
        "aborts the process (assertion `integralElementType.getWidth() >= 8`)"
    )
    no_jit = pytest.mark.skip(reason="no MLIR Python bindings with an ExecutionEngine")
    workers.serial_first(items)
    for item in items:
        if "mlir_i1_memref" in item.keywords and (MLIR_MAJOR or 0) < MIN_MLIR_FOR_I1_MEMREF:
            item.add_marker(no_i1)
        if "jit" in item.keywords and not HAVE_JIT:
            item.add_marker(no_jit)


@pytest.fixture(scope="session")
def build_tree(tmp_path_factory) -> Path:
    """An LLVM build tree's layout (bin/, lib/, tools/mlir/python_packages/mlir_core/mlir),
    made of links to the installed wheel: this machine has no LLVM build of its own."""
    mlir = installed_mlir() if (os.environ.get("MEMREF_RUNTIME_BINDINGS") or "mlir") == "mlir" else None
    if mlir is None:
        pytest.skip("the mlir wheel with its tools and runner-utils libraries is not installed")
    return make_build_tree(tmp_path_factory.mktemp("llvm-build"), mlir)
