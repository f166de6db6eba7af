"""The plugin's fixtures: `jit`, `mlir_opt_level`, `check_close`, `check_against`, `filecheck`,
`mlir_checks`.

Each imports the runtime when a test asks for it, so a pytest session that never uses them loads
neither numpy nor MLIR.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from .. import settings as suite
from . import filecheck as filecheck_tool
from .options import SETTINGS


class JitFactory:
    """`jit(source, **kw)`: a JitModule at this test's opt level (`kw` as JitModule takes them);
    the modules it made are released after the test."""

    def __init__(self, opt_level: int):
        self.opt_level = opt_level
        self.modules: list = []

    def __call__(self, source: Any, **kw: Any) -> Any:
        from ..jit import JitModule

        kw.setdefault("opt_level", self.opt_level)
        module = JitModule(source, **kw)
        self.modules.append(module)
        return module

    def release(self) -> None:
        """Drops the factory's references to its modules (a test that keeps one elsewhere leaks it)."""
        self.modules.clear()

    def __repr__(self) -> str:
        return f"<jit fixture: opt level {self.opt_level}, {len(self.modules)} modules>"


@pytest.fixture
def mlir_opt_level(request: pytest.FixtureRequest) -> Iterator[int]:
    """The opt level of this test's JitModules and memref_runtime.testing engines.

    Under `--mlir-opt-levels=0,3` each test that uses it (through `jit`, or by name) runs once per
    level, the level in its id (`test_x[O0]`), and every JitModule the test makes sees that level.
    Otherwise the session's default (`--mlir-opt-level`, MEMREF_RUNTIME_OPT_LEVEL, else 2)."""
    level = getattr(request, "param", None)
    if level is None:
        yield suite.default_opt_level()
        return
    previous = os.environ.get(suite.OPT_LEVEL_ENV)
    os.environ[suite.OPT_LEVEL_ENV] = str(level)  # for the JitModules the test makes itself
    try:
        yield level
    finally:
        if previous is None:
            os.environ.pop(suite.OPT_LEVEL_ENV, None)
        else:
            os.environ[suite.OPT_LEVEL_ENV] = previous


@pytest.fixture
def jit(mlir_opt_level: int) -> Iterator[JitFactory]:
    """A factory: `jit(source, **kw)` returns a JitModule (MLIR text, a path or an ir.Module) at
    this test's opt level and the session's runtime verification; its modules are released after
    the test."""
    factory = JitFactory(mlir_opt_level)
    yield factory
    factory.release()


@pytest.fixture
def mlir_checks() -> None:
    """Asks for memref-runtime's checks (Contexts left alive, exceptions in ctypes callbacks fail
    the test) and does nothing else: a conftest.py turns them on for its folder with
    `@pytest.fixture(autouse=True)` `def _checked(mlir_checks): pass` (scope.py)."""


@pytest.fixture
def check_close() -> Callable[..., None]:
    """memref_runtime.testing.check_close: `check_close(label, actual, expected, rtol=, atol=)`."""
    from ..testing import check_close

    return check_close


@pytest.fixture
def check_against() -> Callable[..., Any]:
    """memref_runtime.testing.check_against: a JIT function against a NumPy reference on inputs
    drawn from its MLIR signature (the smallest failing example, with a replay script)."""
    from ..testing import check_against

    return check_against


@pytest.fixture
def filecheck(request: pytest.FixtureRequest) -> Callable[..., None]:
    """`filecheck(text, checks, *args)`: runs FileCheck (LLVM's from the wheels, else the Python
    filecheck) on `text` against `checks` (CHECK lines, or a path); fails with FileCheck's message."""
    found = filecheck_tool.find(request.config.stash[SETTINGS].filecheck)

    def run(text: str, checks: str | os.PathLike, *args: str) -> None:
        __tracebackhide__ = True
        filecheck_tool.run(text, checks, *args, filecheck=found)

    return run
