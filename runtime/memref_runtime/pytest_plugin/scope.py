"""Which tests memref-runtime's checks apply to: those that asked for them.

The plugin is on in every pytest session of an environment that has memref-runtime installed,
so a check that can turn a passing test into a failure (a Context left alive, an exception
raised in a ctypes callback) applies only where the suite asked for it:

- the test uses one of the plugin's fixtures (`jit`, `mlir_opt_level`, `check_close`,
  `check_against`, `filecheck`, or `mlir_checks`, which does nothing else) or markers
  (`isolated`, `allow_context_leak`);
- or the whole session asked: `--mlir-checks`, or `mlir_checks = 1` in the ini file, or
  `--mlir-isolate` (every test runs through the plugin); a conftest.py asks for its folder with
  an autouse fixture that requests `mlir_checks`.

Elsewhere the check still runs, and what it finds is a warning (MemrefRuntimeCheckWarning, a
PytestWarning) with the same text, which no `filterwarnings = error` turns into a failure: the
verdicts of a suite that did not ask stay its own.
"""

from __future__ import annotations

import warnings

import pytest

from .options import SETTINGS

FIXTURES = frozenset({"jit", "mlir_opt_level", "check_close", "check_against", "filecheck", "mlir_checks"})
MARKERS = ("isolated", "allow_context_leak")
PLUGIN_PACKAGE = __name__.rsplit(".", 1)[0]


class MemrefRuntimeCheckWarning(pytest.PytestWarning):
    """What a check of memref-runtime found in a test that did not ask for the checks."""


def fixture_module(item: pytest.Item, name: str) -> str | None:
    """The module that defines the fixture `name` as `item` sees it (a test module's own `jit`
    shadows the plugin's), or None when `item` does not use it."""
    info = getattr(item, "_fixtureinfo", None)  # pytest's: fixture definitions by name, closest last
    definitions = info.name2fixturedefs.get(name) if info is not None else None
    if not definitions:
        return None
    return getattr(definitions[-1].func, "__module__", None)


def uses_plugin_fixture(item: pytest.Item) -> bool:
    names = FIXTURES.intersection(getattr(item, "fixturenames", ()))
    return any((fixture_module(item, name) or "").startswith(PLUGIN_PACKAGE) for name in names)


def asked(item: pytest.Item) -> bool:
    """Whether memref-runtime's checks may fail `item` (the module docstring's rules)."""
    settings = item.config.stash[SETTINGS]
    if settings.checks or settings.isolate:  # --mlir-isolate: the session runs every test through the plugin
        return True
    return any(item.get_closest_marker(m) is not None for m in MARKERS) or uses_plugin_fixture(item)


def warn(item: pytest.Item, text: str) -> None:
    """`text` as a MemrefRuntimeCheckWarning of `item`, shown in pytest's warnings summary and
    never raised: the suite's warning filters cannot make it an error."""
    path, line, _ = item.location
    with warnings.catch_warnings():
        warnings.simplefilter("always", MemrefRuntimeCheckWarning)
        warnings.warn_explicit(
            MemrefRuntimeCheckWarning(
                f"{text} (a warning, not a failure: this test did not ask "
                "for memref-runtime's checks; --mlir-checks does)"
            ),
            MemrefRuntimeCheckWarning,
            str(item.path),
            (line or 0) + 1,
        )
