"""memref_runtime.pytest_plugin: the harness for pytest suites, on with memref-runtime installed.

Registered through the `pytest11` entry point `memref_runtime` (pyproject.toml), so `pytest -p
no:memref_runtime` turns it off. What lit's plugin gives a lit suite, for pytest (docs/pytest-plugin.md):

  options.py    --mlir-opt-level, --mlir-opt-levels, --mlir-runtime-verification, --mlir-python,
                --mlir-runtime, --mlir-checks, --mlir-filecheck, --mlir-isolate, --mlir-timeout,
                --mlir-reduce, --mlir-no-leak-check; ini names too
  fixtures.py   jit, mlir_opt_level, check_close, check_against, filecheck, mlir_checks
  scope.py      which tests the checks may fail (those that asked), the others get a warning
  shadowing.py  a test module's own `jit` fixture that --mlir-opt-levels cannot reach, named
  filecheck.py  which FileCheck, and running it on a string
  isolation.py  a forked child per isolated test: a crash or a hang fails that test alone
  reduce.py     --mlir-reduce: a failing test's culprit pass and reduced module, with the test as the check
  leaks.py      a test that leaves an MLIR Context alive fails
  callbacks.py  an exception raised in a ctypes callback fails its test
  header.py     the session header: MLIR, settings, FileCheck

pytest imports this module in every session of an environment that has memref-runtime, so it
imports neither numpy nor MLIR: the fixtures load the runtime when a test asks for them.
"""

from __future__ import annotations

import pytest

from . import header, options
from .callbacks import CallbackCheck
from .fixtures import (  # noqa: F401 - pytest finds them here
    check_against,
    check_close,
    filecheck,
    jit,
    mlir_checks,
    mlir_opt_level,
)
from .isolation import Isolation
from .leaks import MARKER as LEAK_MARKER
from .leaks import LeakCheck
from .shadowing import warn_about_shadowed_jit

SETTINGS = options.SETTINGS
_PREVIOUS_ENVIRONMENT = pytest.StashKey[dict]()

MARKERS = (
    "isolated(timeout=None): run the test function in a forked child, so that a crash or a hang (after "
    "`timeout` seconds) fails this test alone, with its Python and native stacks (memref-runtime)",
    f"{LEAK_MARKER}(reason=None): this test may leave MLIR Contexts alive (memref-runtime's Context leak check)",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def _settle(config: pytest.Config, namespace) -> options.Settings:
    """Reads the options once and applies them to the environment (and `import mlir`)."""
    if SETTINGS not in config.stash:
        settings = options.read(config, namespace)
        config.stash[_PREVIOUS_ENVIRONMENT] = options.apply(settings)
        config.stash[SETTINGS] = settings
    return config.stash[SETTINGS]


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    # Before any conftest.py is imported: one that imports `mlir` must get --mlir-python's, and
    # module-level JitModules the session's opt level.
    _settle(early_config, early_config.known_args_namespace)


@pytest.hookimpl(trylast=True)  # after pytest's own sys.unraisablehook, which the recorder wraps
def pytest_configure(config: pytest.Config) -> None:
    settings = _settle(config, config.option)
    for marker in MARKERS:
        config.addinivalue_line("markers", marker)
    leak_check = LeakCheck() if settings.leak_check else None
    if leak_check is not None:
        config.pluginmanager.register(leak_check, "memref_runtime.leak_check")
    config.pluginmanager.register(CallbackCheck(), "memref_runtime.callback_check")
    config.pluginmanager.register(
        Isolation(settings.isolate, settings.timeout, settings.origin("timeout") or "--mlir-timeout", leak_check),
        "memref_runtime.isolation",
    )
    if settings.reduce:
        from .reduce import ReduceOnFailure  # the culprit finders: only for a session that asked

        config.pluginmanager.register(ReduceOnFailure(), "memref_runtime.reduce")


def pytest_unconfigure(config: pytest.Config) -> None:
    previous = config.stash.get(_PREVIOUS_ENVIRONMENT, None)
    if previous is not None:
        options.restore(previous)


def pytest_report_header(config: pytest.Config) -> list[str]:
    return header.lines(config.stash[SETTINGS])


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    warn_about_shadowed_jit(config.stash[SETTINGS], items)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    levels = metafunc.config.stash[SETTINGS].opt_levels
    if levels and "mlir_opt_level" in metafunc.fixturenames:
        metafunc.parametrize("mlir_opt_level", levels, indirect=True, ids=[f"O{n}" for n in levels])
