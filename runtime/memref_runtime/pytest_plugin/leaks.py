"""The Context leak check: a test that leaves an MLIR Context alive fails, with the count.

Upstream's Python tests end each case with `assert Context._get_live_count() == 0`; here each
test is measured on its own. A Context created while the test ran (its setup, its call and the
teardown of its function-scoped fixtures) and still alive after its teardown and a garbage
collection fails the test at teardown ("ERROR at teardown", as a fixture's failed teardown does),
if the test asked for memref-runtime's checks; else it is a warning (scope.py).

- Contexts that module-, class-, package- or session-scoped fixtures create while the test sets
  them up are theirs, not the test's (counted in the pytest_fixture_setup wrapper below); those
  fixtures release them at their own teardown.
- An isolated test's call runs in a forked child, which counts what is alive at its end
  (isolation.py) and reports the number here.
- A test whose setup or call failed is not checked: the failure's traceback holds the test's
  frames, and so the Contexts of their variables (pytest keeps it, as sys.last_traceback).
- `@pytest.mark.allow_context_leak(reason=...)` opts a test out; `--mlir-no-leak-check` (ini
  `mlir_leak_check = 0`) turns the check off.

Counting is cheap and needs no import: a process that has not loaded the MLIR bindings has no
Context. The garbage collection runs only when the count is above what the test started with.
Counts, not identities: a Context of an earlier test collected during this one hides one of
this test's, which the earlier test's check has reported already.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Generator
from typing import Any

import pytest

from ..bindings import PROVIDERS
from . import scope

MARKER = "allow_context_leak"


def live_contexts() -> int:
    """MLIR Contexts alive in this process, over every bindings provider loaded (an alias of one
    provider, `mlir` meaning torch_mlir, shares its Context class and is counted once)."""
    classes = {}
    for name in PROVIDERS:
        module = sys.modules.get(f"{name}.ir")
        context = getattr(module, "Context", None)
        if context is not None:
            classes[id(context)] = context
    return sum(c._get_live_count() for c in classes.values())


def collected_count(at_most: int) -> int:
    """live_contexts(), after a garbage collection if it is above `at_most` (a cycle may hold one)."""
    count = live_contexts()
    if count > at_most:
        gc.collect()
        count = live_contexts()
    return count


def opted_out(item: pytest.Item) -> bool:
    return item.get_closest_marker(MARKER) is not None


class LeakCheck:
    """The check's hooks (registered by the plugin when the check is on)."""

    def __init__(self):
        self.before = 0  # live Contexts when the current test's setup began
        self.fixtures = 0  # created by wider-scoped fixtures during the current test
        self.child = 0  # left alive at the end of the current test's isolated call (isolation.py)
        self.failed = False  # its setup or call failed: the traceback holds its frames and their Contexts
        self._in_wide_fixture = 0

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, Any, Any]:
        self.before, self.fixtures, self.child, self.failed = live_contexts(), 0, 0, False
        return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(
        self, fixturedef: pytest.FixtureDef, request: pytest.FixtureRequest
    ) -> Generator[None, Any, Any]:
        if fixturedef.scope == "function" or self._in_wide_fixture:
            return (yield)
        self._in_wide_fixture += 1
        before = live_contexts()
        try:
            return (yield)
        finally:
            self._in_wide_fixture -= 1
            self.fixtures += live_contexts() - before

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Generator[None, Any, Any]:
        report = yield
        if call.when != "teardown":
            self.failed = self.failed or report.failed
            return report
        if self.failed or opted_out(item):
            return report
        # The teardown is over, but item.funcargs holds the fixtures' values until pytest drops it
        # after this report: a Context that a function-scoped fixture yielded would look leaked.
        if getattr(item, "funcargs", None):
            item.funcargs = {}  # type: ignore[attr-defined]  # pytest.Function's, or another item's alike
        allowed = self.before + self.fixtures
        # A wider fixture torn down now may take the count below `allowed`: never a negative leak.
        leaked = max(0, collected_count(allowed) - allowed) + self.child
        if leaked > 0:
            text = self.message(leaked, allowed)
            if not scope.asked(item):
                scope.warn(item, text)
            elif report.passed:
                report.outcome, report.longrepr = "failed", text
            else:  # the teardown failed already: say both
                report.sections.append(("memref-runtime: Context leak", text))
        return report

    def message(self, leaked: int, allowed: int) -> str:
        contexts = f"{leaked} MLIR Context{'s' * (leaked > 1)}"
        if self.child == leaked:
            counted = (
                f"{contexts} made by this isolated test's call {'was' if leaked == 1 else 'were'} still "
                "alive at its end, after a garbage collection, in its child"
            )
        else:
            counted = (
                f"{contexts} created by this test {'is' if leaked == 1 else 'are'} still alive after its "
                "teardown and a garbage collection"
                + (f" ({self.child} in its isolated child)" if self.child else "")
                + ": "
                f"Context._get_live_count() is {live_contexts()}, {self.before} when the test began"
                + (f", {self.fixtures} more made by module- or session-scoped fixtures" if self.fixtures else "")
            )
        return (
            f"memref-runtime: {counted}. Keep Contexts in the test (`with Context():`, JitModule, the `jit` "
            f"fixture) or in a fixture that releases them; @pytest.mark.{MARKER}(reason=...) opts a test out."
        )
