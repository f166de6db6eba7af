"""--mlir-opt-levels reaches the tests that use the plugin's `jit` (or `mlir_opt_level`) fixture. A
test module that defines a fixture of its own named `jit` shadows the plugin's, and its tests would
run once, at the default level, without a word: the plugin warns, once per fixture, naming it.
"""

from __future__ import annotations

import inspect
import warnings

import pytest

from .options import Settings
from .scope import PLUGIN_PACKAGE, fixture_module


class ShadowedFixtureWarning(pytest.PytestWarning):
    """A test's own fixture hides one of memref-runtime's, so an option of the plugin misses it."""


def _definition(item: pytest.Item, name: str):
    info = getattr(item, "_fixtureinfo", None)
    assert info is not None  # fixture_module found `name` through it
    return info.name2fixturedefs[name][-1]


def warn_about_shadowed_jit(settings: Settings, items: list) -> None:
    """Under --mlir-opt-levels, one warning per `jit` fixture that is not the plugin's and whose
    tests the levels do not reach (tests that also use `mlir_opt_level` are reached)."""
    if not settings.opt_levels:
        return
    shadowed: dict = {}
    for item in items:
        module = fixture_module(item, "jit")
        if module is None or module.startswith(PLUGIN_PACKAGE) or "mlir_opt_level" in item.fixturenames:
            continue
        definition = _definition(item, "jit")
        shadowed.setdefault(definition, []).append(item)
    for definition, tests in shadowed.items():
        function = definition.func
        path = inspect.getsourcefile(function) or "?"
        line = inspect.getsourcelines(function)[1] if path != "?" else 0
        levels = ",".join(map(str, settings.opt_levels))
        warnings.warn_explicit(
            ShadowedFixtureWarning(
                f"the fixture `jit` defined here shadows memref-runtime's, so --mlir-opt-levels={levels} does not "
                f"reach its {len(tests)} test{'s' * (len(tests) != 1)} (they run once, at the default level): "
                "rename it, or use memref-runtime's `jit` fixture (a factory: jit(source) gives a JitModule at "
                "the test's level)"
            ),
            ShadowedFixtureWarning,
            path,
            line,
        )
